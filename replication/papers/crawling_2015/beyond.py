"""Beyond the paper: ties in the index, and the policies compared on the stochastic model.

The index policy meets ties only when sources start in the same state (:func:`tie_orders`); the
greedy and round-robin rules it is compared with (:func:`comparison_rules`) run on the
stochastic model over independent replications (:func:`stochastic_comparison`). The exact
comparison on the deterministic model, with the optimum, is computed in the notebook itself.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from whittle_lib.models import crawling, crawling_policies as policies
from ...records import format_estimate
from .laws import reward_estimate

__all__ = ["COMPARED_POLICIES", "TIE_ORDERS_NOTE", "boundary_ties", "comparison_rules",
           "stochastic_comparison", "stochastic_comparison_note", "tie_order_averages",
           "tie_orders"]


# -- ties in the index ---------------------------------------------------------------------------

def boundary_ties(model: crawling.CrawlingModel, M: int, n_periods: int) -> int:
    """Periods in which the ``M``-th and ``(M+1)``-th largest indices are equal, on the
    deterministic model from just-crawled sources under the index policy."""
    if int(M) != M or not 1 <= M < model.n_sources:
        raise ValueError(f"M must be an integer in [1, {model.n_sources}), got {M!r}")
    whittle = policies.WhittleRule(model)
    run = policies.simulate_crawling(model, whittle, M, n_periods, record=True)
    ranked = -np.sort(-whittle(run.states, None, 0), axis=1)
    return int(np.sum(ranked[:, M - 1] == ranked[:, M]))


def tie_order_averages(model: crawling.CrawlingModel, M: int, *, decimals: int = 9) -> list:
    """The long-run averages of the index policy from empty sources under every tie order.

    A tie order is a relabelling of the sources, since our rule breaks ties in favour of the
    lowest label; at ``x(0) = 0`` every index is 0, so the first crawl is an ``N``-way tie.

    Returns
    -------
    list of float
        The distinct averages (rounded to ``decimals``), sorted.
    """
    values = set()
    for order in itertools.permutations(range(model.n_sources)):
        relabelled = model.subset(list(order))
        orbit = policies.crawling_orbit(relabelled, policies.WhittleRule(relabelled), M,
                                        x0=np.zeros(model.n_sources))
        values.add(round(orbit.average_reward, decimals))
    return sorted(values)


@dataclass(frozen=True)
class TieOrders:
    """Where the index policy meets ties, and whether the tie order matters (beyond the paper).

    Attributes
    ----------
    periods : int
        Periods of the run from just-crawled sources in which ties are counted.
    boundary_ties : dict of int to int
        Per ``M``: periods of that run in which the ``M``-th and ``(M+1)``-th largest indices
        are equal (:func:`boundary_ties`).
    averages : dict of int to list of float
        Per ``M``: the distinct long-run averages from empty sources over every tie order
        (:func:`tie_order_averages`).
    """

    periods: int
    boundary_ties: dict
    averages: dict

    def report(self) -> str:
        """The ties from ``x(0) = u`` and the averages over the tie orders, per ``M``."""
        lines = [f"M = {M}, x(0) = u: ties at the top-M boundary in {n} of {self.periods} periods"
                 for M, n in self.boundary_ties.items()]
        for M, values in self.averages.items():
            if len(values) == 1:
                lines.append(f"M = {M}, x(0) = 0: long-run average under all 24 tie orders "
                             f"equal: {values[0]:.5f}")
            else:
                lines.append(f"M = {M}, x(0) = 0: long-run average over the 24 tie orders: "
                             f"{min(values):.5f}..{max(values):.5f} ({len(values)} values)")
        return "\n".join(lines)


def tie_orders(model: crawling.CrawlingModel, M_values, *, periods: int = 500) -> TieOrders:
    """Count ties of the index policy and run it under every tie order, for each budget.

    Ties at the top-``M`` boundary from just-crawled sources (:func:`boundary_ties`) and the
    long-run averages from empty sources under all ``N!`` relabellings
    (:func:`tie_order_averages`), for each distinct ``M`` in increasing order.

    Examples
    --------
    >>> t = tie_orders(crawling.table_one(), [1], periods=20)
    >>> t.boundary_ties, [round(v, 4) for v in t.averages[1]]
    ({1: 0}, [260.3899])
    """
    Ms = sorted(set(M_values))
    return TieOrders(int(periods), {M: boundary_ties(model, M, periods) for M in Ms},
                     {M: tie_order_averages(model, M) for M in Ms})


#: The note of the rows on the 24 tie orders at ``x(0) = 0``.
TIE_ORDERS_NOTE = ("ties at t = 0 (all indices 0); the tie order changes the transient, not the "
                   "long-run average")


# -- the policies compared on the stochastic model ---------------------------------------------

#: The names of :func:`comparison_rules`, in its order (a notebook names a stream after each).
COMPARED_POLICIES = ("index", "greedy (current value)", "greedy (2018)", "round robin (blocks)")


def comparison_rules(model: crawling.CrawlingModel, M: int) -> dict:
    """The policies we compare with the index policy, by name (the optimality-gap section),
    named and ordered as :data:`COMPARED_POLICIES`.

    The 2018 greedy rule (Borkar & Chadha) equals the current-value greedy rule on the
    deterministic model; round robin crawls disjoint blocks of ``M`` sources in turn.
    """
    n = model.n_sources
    rules = (policies.WhittleRule(model), policies.CurrentValueRule(),
             policies.ExpectedValueRule(model), policies.RoundRobinRule(n, M))
    return dict(zip(COMPARED_POLICIES, rules))


@dataclass(frozen=True)
class StochasticComparison:
    """Mean rewards, with 95 % confidence intervals, of the policies on the stochastic model.

    Attributes
    ----------
    M_values : tuple of int
    names : tuple of str
    estimates : dict of (str, int) to (float, float)
        ``(mean, half-width)`` over the replications, by ``(name, M)``.
    periods, replications, burn_in : int
        The runs behind each estimate.
    base_law : str
        The law of ``xi``.
    """

    M_values: tuple
    names: tuple
    estimates: dict
    periods: int
    replications: int
    burn_in: int
    base_law: str

    def formatted(self, name: str, M: int) -> str:
        """``"mean ± half-width"`` of one policy and budget."""
        return format_estimate(*self.estimates[name, M])


def stochastic_comparison(model: crawling.CrawlingModel, M_values, *, periods: int,
                          replications: int, burn_in: int, base_law: str, seeds,
                          known=None) -> StochasticComparison:
    """The policies of :func:`comparison_rules` on the stochastic model (eq. 17).

    Parameters
    ----------
    model : CrawlingModel
    M_values : sequence of int
    periods, replications, burn_in : int
        ``replications`` runs of ``periods`` periods, the first ``burn_in`` dropped.
    base_law : str
        The law of ``xi``.
    seeds : mapping of str to sequence of numpy.random.SeedSequence
        Streams by name (:func:`~whittle_lib.stats.named_seeds`): the first seed of
        ``seeds[f"M={M};policy={name}"]`` runs the rule ``name`` of :data:`COMPARED_POLICIES`
        with budget ``M``.
    known : dict of (str, int) to (float, float), optional
        Estimates already made (their runs are skipped and their seeds unused).
    """
    known = dict(known or {})
    if int(burn_in) != burn_in or not 0 <= burn_in < periods:
        raise ValueError(f"burn_in must be an integer in [0, periods), got {burn_in!r}")
    estimates = {}
    names = ()
    for M in M_values:
        rules = comparison_rules(model, M)
        names = tuple(rules)
        for name, rule in rules.items():
            if (name, M) in known:
                estimates[name, M] = known[name, M]
                continue
            est = reward_estimate(model, rule, M, periods=periods, replications=replications,
                                  burn_in=burn_in, base_law=base_law,
                                  rng=np.random.default_rng(seeds[f"M={M};policy={name}"][0]))
            estimates[name, M] = (est.mean, est.half_width)
    return StochasticComparison(tuple(M_values), names, estimates, int(periods),
                                int(replications), int(burn_in), base_law)


def stochastic_comparison_note(comparison: StochasticComparison) -> str:
    """The note of every row of :func:`stochastic_comparison`: the runs behind its estimate."""
    return (f"{comparison.replications} replications x "
            f"{comparison.periods - comparison.burn_in} periods, "
            f"{comparison.base_law} base utilities")
