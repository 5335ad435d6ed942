"""Whittle index policies: restless arms, their indices, index policies and their bounds.

The core a user applies to their own arms is re-exported here (each loads on first use)::

    import whittle_lib as wl
    arm = wl.wear_repair_arm(5, wear=0.3, repair_cost=0.5)      # or wl.RestlessArm(P0, P1, R0, R1)
    result = wl.whittle_indices(arm)              # the average reward (discount=0.9: discounted)
    run = wl.simulate([arm] * 10, [result] * 10, M=3, n_periods=1_000, replications=8, rng=1)
    run.interval(), wl.relaxation_bound([arm] * 10, M=3).bound   # both "at most M" by default

The criterion is one keyword everywhere: ``discount=0.9`` (any number in (0, 1)) for the
discounted reward, ``discount=None`` for the average reward per period. The activation rule
of N arms under a budget M is ``activation="at_most"`` (the default: the M highest positive
priorities) or ``activation="exactly"`` (the M highest), with the same meaning in the
simulator and in the bound.

The package is organised as one module per concern:

``arms``, ``builders``
    finite restless arms (and converters to the peers' layouts); builders of common arms
    (wear/repair machines, birth-death chains, random arms).
``indices``
    Whittle and Gittins indices, with an exact indexability test.
``mdp``
    finite MDPs on sparse matrices: value, relative value and policy iteration, backward
    induction, stationary distributions.
``rmab``
    N arms with a budget: top-M, index rules, a simulator (per arm, or as counts of identical
    arms), exact periodic averages.
``bounds``
    Whittle's relaxation bounds (at most / exactly M active, average or discounted), by the
    dual over the indices or the linear program over occupation measures; the relaxation's
    solution for any arms (occupation measures, optimal subsidies, relative values).
``policies``
    rules for any arms, indexable or not: LP-priority, follow-the-virtual-advice (FTVA),
    LP-update (model predictive control); the exact optimum of small N.
``models``
    one module per paper's system, on the core: ``crawling`` (ephemeral content, its closed-form
    Whittle index, Avrachenkov & Borkar) with ``crawling_policies`` (its priority rules and
    their simulator), ``caching`` (contents with varying popularity as restless arms, Pavamana
    & Singh) and ``robots`` (the M/M/1/K model of web-robot control, Talim, Liu, Nain, Coffman).
``learning``
    learning the crawling policy: LSPE(0) on parametrised thresholds (Avrachenkov & Borkar
    2019) and two-timescale learning of the Whittle index (Borkar & Chadha 2018), of the
    crawler or of a finite arm of your own.
``stats``
    named random streams, independent replications and sweeps over any executor, confidence
    intervals.
``arithmetic``
    the elementary functions in native mode (NumPy's loops, the default) or portable mode (the
    same bits on every machine): ``wl.portable()``, ``wl.set_portable``, ``wl.is_portable``.

Submodules and the names below load on first use (``wl.models.robots.<name>`` works without an
import), so ``import whittle_lib`` itself loads no SciPy solver and no matplotlib. Each module
lists its public names in its ``__all__``.
"""

from ._lazy import lazy_submodules

_SUBMODULES = ("arithmetic", "arms", "bounds", "builders", "indices", "learning", "mdp", "models",
               "policies", "rmab", "stats")

#: The core names, re-exported from the module that defines them.
_EXPORTS = {
    **dict.fromkeys(["RestlessArm", "from_markovianbandit", "to_markovianbandit",
                     "from_mdptoolbox", "to_mdptoolbox", "from_quantecon", "to_quantecon"],
                    "arms"),
    **dict.fromkeys(["wear_repair_arm", "birth_death_arm", "random_arm"], "builders"),
    **dict.fromkeys(["IndexStatus", "WhittleIndexResult", "whittle_indices", "is_indexable",
                     "is_indexable_many", "gittins_indices"], "indices"),
    **dict.fromkeys(["RelaxationBound", "relaxation_bound", "RelaxationSolution",
                     "relaxation_solution"], "bounds"),
    # rules for any arms beside the index rule, and the exact optimum of small N
    **dict.fromkeys(["lp_priority", "ftva", "lp_update", "exact_optimum", "LPPriorityRule",
                     "FTVARule", "LPUpdateRule", "ExactOptimum"], "policies"),
    **dict.fromkeys(["Dynamics", "Rule", "FiniteArms", "IndexRule", "RmabSimulation", "simulate",
                     "simulate_counts", "PeriodicOrbit", "periodic_orbit", "top_m"], "rmab"),
    **dict.fromkeys(["FiniteMDP", "policy_iteration", "dense_policy_iteration",
                     "value_iteration", "relative_value_iteration", "backward_induction",
                     "evaluate_policy", "stationary_distribution"], "mdp"),
    **dict.fromkeys(["ConfidenceInterval", "mean_interval", "share_interval", "spawn_seeds",
                     "named_seeds", "replicate", "sweep"], "stats"),
    # the arithmetic mode: native NumPy (default) or the same bits on every machine
    **dict.fromkeys(["portable", "set_portable", "is_portable"], "arithmetic"),
}

__all__ = [*_SUBMODULES, *_EXPORTS]
__version__ = "1.0.0"


# PEP 562: ``wl.mdp`` and ``wl.policy_iteration`` import SciPy only when first used.
__getattr__, __dir__ = lazy_submodules(__name__, _SUBMODULES, globals, _EXPORTS)
