r"""Rules for any arms beside the index rule, and the exact optimum of small problems.

Whittle's index rule (:class:`~whittle_lib.rmab.IndexRule` of
:func:`~whittle_lib.indices.whittle_indices`) needs indexable arms, and is asymptotically
optimal only under a global attractor condition. The rules here are built from the
relaxation's linear program (:func:`~whittle_lib.bounds.relaxation_solution`), for any arms,
heterogeneous or identical, under the average reward (``discount=None``) or a discount:

:func:`lp_priority`
    Verloop's LP-priority [V16]_: a fixed priority per arm and state, from the relaxation's
    optimal subsidy and relative values.
:func:`ftva`
    follow-the-virtual-advice [HXCW23]_: each arm has a virtual copy that follows the
    relaxation's optimal single-arm policy; real arms follow their virtual actions where the
    budget allows, and real and virtual states move together while they agree.
:func:`lp_update`
    model predictive control [GGY23]_ [GN25]_: the finite-horizon linear program re-solved
    from the current state each period, its first decision applied.
:func:`exact_optimum`
    the optimal policy of N arms for small N: on the counts of arms per state (identical arms,
    ``C(N + n - 1, n - 1)`` states) or the product of a few arms' states, through
    :mod:`whittle_lib.mdp`'s solvers.

Each rule runs in :func:`~whittle_lib.rmab.simulate` like an index rule, with
``activation="at_most"`` (the ``M`` highest priorities among those above 0) or ``"exactly"``
(the ``M`` highest), and for identical arms in :func:`~whittle_lib.rmab.simulate_counts`
at a cost that does not grow with ``N``. A rule is built for given arms, budget and activation
(those of its linear program) and refuses to run on others (:class:`~whittle_lib.rmab.Rule`'s
``check_run``). Every value is a total over the ``N`` arms, as the simulator's rewards and
:func:`~whittle_lib.bounds.relaxation_bound`.

References
----------
.. [V16] I. M. Verloop, "Asymptotically optimal priority policies for indexable and
   nonindexable restless bandits", *Ann. Appl. Probab.* 26(4), 1947-1995, 2016.
.. [HXCW23] Y. Hong, Q. Xie, Y. Chen, W. Wang, "Restless bandits with average reward:
   breaking the uniform global attractor assumption", *NeurIPS* 36, 2023 (Algorithm 1,
   Follow-the-Virtual-Advice, discrete time).
.. [GGY23] N. Gast, B. Gaujal, C. Yan, "Linear program-based policies for restless bandits:
   necessary and sufficient conditions for (exponentially fast) asymptotic optimality",
   *Math. Oper. Res.* 49(4), 2468-2491, 2024 (LP-update).
.. [GN25] N. Gast, D. Narasimha, "Model predictive control is almost optimal for restless
   bandits", *COLT* 2025, PMLR 291 (the LP-update policy as model predictive control).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._results import ShortRepr, pandas as _pandas
from ._validation import (as_numeric, check_activation, check_budget, check_choice,
                          check_discount, check_integer, distinct_objects)
from .arms import RestlessArm
from .bounds import RelaxationSolution, _check_arms, _check_x0, relaxation_solution
from .rmab import FiniteArms, IndexRule

__all__ = [
    "LPPriorityRule",
    "lp_priority",
    "FTVARule",
    "ftva",
    "LPUpdateRule",
    "lp_update",
    "ExactOptimum",
    "exact_optimum",
]

_STARTS = ("stationary", "real", "uniform")


# --- what every LP-based rule checks before a run --------------------------------------------

class _Prints:
    """The arms a rule was built for, as codes of their distinct fingerprints (a million
    copies of a few arms compare as a few)."""

    def __init__(self, arms):
        codes: dict[str, int] = {}
        objects, kind, _ = distinct_objects(arms)
        of_object = np.array([codes.setdefault(arm.fingerprint, len(codes))
                              for arm in objects], dtype=np.intp)
        self.code = of_object[kind]
        self.prints = list(codes)

    def check(self, rule_name: str, dynamics) -> None:
        n = self.code.size
        if isinstance(dynamics, RestlessArm):                      # simulate_counts
            if len(self.prints) != 1 or self.prints[0] != dynamics.fingerprint:
                raise ValueError(f"{rule_name} was built for other arms than copies of this "
                                 f"arm (fingerprint {dynamics.fingerprint[:12]}...): build it "
                                 "from [arm] * N")
            return
        if getattr(dynamics, "n_arms", n) != n:
            raise ValueError(f"{rule_name} was built for {n} arms, the dynamics have "
                             f"{dynamics.n_arms}")
        if isinstance(dynamics, FiniteArms):
            theirs = np.array([self.prints.index(a.fingerprint) if a.fingerprint in self.prints
                               else -1 for a in dynamics._types])[dynamics._kind]
            bad = np.flatnonzero(theirs != self.code)
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"{rule_name} was built for another arm than arms[{i}] "
                                 f"(fingerprint {dynamics.arms[i].fingerprint[:12]}...): build "
                                 "the rule from the arms it runs on, in their order")


def _check_budget_rule(name: str, built_M: int, built_activation: str, M: int,
                       activation: str) -> None:
    if M != built_M:
        raise ValueError(f"{name} was built for M={built_M} (its linear program's budget), "
                         f"the run has M={M}: build it with M={M}")
    if activation != built_activation:
        raise ValueError(f"{name} was built for activation={built_activation!r} (its linear "
                         f"program's relaxation), the run has activation={activation!r}: "
                         f"build it with activation={activation!r}")


def _own_stream(rng: np.random.Generator) -> np.random.Generator:
    """A child stream of the run's generator; the run's own draws are unchanged."""
    try:
        return rng.spawn(1)[0]
    except (TypeError, ValueError, AttributeError):      # a generator without a seed sequence
        return np.random.default_rng(rng.integers(0, 2**63 - 1, size=4))


# --- LP-priority --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class LPPriorityRule(IndexRule):
    """Verloop's LP-priority rule: an :class:`~whittle_lib.rmab.IndexRule` whose table of arm
    ``i`` is :func:`lp_priority`'s priority of each state.

    Attributes
    ----------
    indices : tuple of ndarray
        Per arm, the priority of each state (see :func:`lp_priority` for what it is).
    n_arms : int
    M : int
        The budget of the linear program it was built from.
    activation : {"at_most", "exactly"}
    discount : float or None
    subsidy : float
        The optimal subsidy the relative values are taken at.
    subsidy_range : tuple of float
        Every optimal subsidy (the order may change across it).
    solution : RelaxationSolution
        The relaxation's solution it was built from.
    """

    M: int = 0
    activation: str = "at_most"
    discount: float | None = None
    subsidy: float = 0.0
    subsidy_range: tuple = (0.0, 0.0)
    solution: RelaxationSolution | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        prints = _Prints(_arms_of(self.solution))
        object.__setattr__(self, "_built", prints)
        # the results' fingerprints of IndexRule: the arm each table was computed for
        object.__setattr__(self, "_prints", [prints.prints[prints.code[i]] for i in
                                             _first_of_tables(self._kind)])

    def check_arms(self, arms) -> None:
        """Raise ``ValueError`` unless ``arms`` (a :class:`~whittle_lib.rmab.FiniteArms` or a
        list of :class:`RestlessArm`, as :func:`~whittle_lib.rmab.simulate` takes them) are
        the arms the rule was built for."""
        if not isinstance(arms, FiniteArms):
            if not isinstance(arms, (list, tuple)):
                raise TypeError("arms must be a FiniteArms or a list of RestlessArm, got "
                                f"{type(arms).__name__}")
            arms = FiniteArms(list(arms))
        self.check(arms.n_arms, arms.n_states)
        self._built.check("the LP-priority rule", arms)

    def check_run(self, dynamics, M: int, activation: str) -> None:
        """Raise ``ValueError`` for a budget or activation rule other than the rule's."""
        _check_budget_rule("the LP-priority rule", self.M, self.activation, M, activation)
        if isinstance(dynamics, RestlessArm):
            self._built.check("the LP-priority rule", dynamics)


def _first_of_tables(kind: np.ndarray) -> list[int]:
    """The first arm of each table (tables numbered by first occurrence)."""
    return np.unique(kind, return_index=True)[1].tolist()


def _arms_of(solution) -> list:
    return solution._arms


def _solve(arms, M, activation, discount, x0, subsidy):
    arms = _check_arms(arms)
    M = check_budget(M, len(arms))
    activation = check_activation(activation)
    discount = check_discount(discount)
    sol = relaxation_solution(arms, M, activation=activation, discount=discount, x0=x0,
                              subsidy=subsidy)
    object.__setattr__(sol, "_arms", arms)
    return arms, M, activation, discount, sol


def lp_priority(arms, M: int, *, activation: str = "at_most", discount: float | None = None,
                x0=None, subsidy: float | None = None) -> LPPriorityRule:
    r"""Verloop's LP-priority rule for any arms [V16]_.

    The relaxation's optimal subsidy :math:`\lambda^*` and each arm's relative values
    :math:`h_i` at it (:func:`~whittle_lib.bounds.relaxation_solution`) give each state the
    priority

    .. math::
        p_i(x) = R^1_i(x) - R^0_i(x) + \beta \sum_y \bigl(P^1_i(x, y) - P^0_i(x, y)\bigr)
        h_i(y)

    (:math:`\beta = 1` for the average reward; discounted, :math:`h_i` is the value function
    at :math:`\lambda^*`): the subsidy at which state ``x`` is indifferent between the two
    actions for one period, the future judged by the relaxation's relative values. It is the
    advantage of activity :math:`Q_i(x, 1) - Q_i(x, 0)` at :math:`\lambda^*` that [V16]_ ranks
    states by (the order Hong et al.'s and Gast's codes compute, ``np.argsort`` of the
    "action gap"), shifted by :math:`\lambda^*` for every arm alike, so the order is the same
    and the sign is that of the advantage at no subsidy, which is what
    ``activation="at_most"`` needs: a state of priority :math:`\le 0` would rather rest.
    States the relaxation's solution activates have priority :math:`\ge \lambda^*`, those it
    rests :math:`\le \lambda^*`, a partly active state exactly :math:`\lambda^*`; for an
    indexable arm the order agrees with Whittle's index at the neutral state. Each period the
    ``M`` arms of highest priority are active (among those above 0 with "at_most"), as
    [V16]_'s priority policies.

    Parameters
    ----------
    arms : sequence of RestlessArm
        Any arms (identical copies are solved once).
    M : int
        The budget the rule is run with.
    activation : {"at_most", "exactly"}
        The relaxation it is built from, and the activation rule it must be run with.
    discount : float or None
        ``None`` (default): the average-reward relaxation; a number in (0, 1): the discounted
        one from ``x0``.
    x0 : array_like of int, optional
        Discounted only: the initial states the relaxation is solved from.
    subsidy : float, optional
        The optimal subsidy to take the relative values at (default: the optimal one closest
        to 0). **The dual is not unique** when the relaxation's dual function is flat at its
        minimum (``rule.subsidy_range`` is then an interval): the relative values, so the
        order, change across it. On Hong et al.'s eight-state arm the order is
        ``[0, 1, 2, 3, 4, 7, 6, 5]`` at -0.025 and ``[1, 2, 3, 0, 5, 6, 7, 4]`` at 0.025;
        ``subsidy=0.0`` (the default there) gives their published ``[1, 2, 3, 0, 7, 6, 5, 4]``
        up to ties. A subsidy outside the range is refused.

    Returns
    -------
    LPPriorityRule
        An :class:`~whittle_lib.rmab.IndexRule` (its ``indices`` the priorities) that knows
        its arms, budget, activation and subsidy.

    Notes
    -----
    **Ties in the linear program's sense.** States of equal priority are in the same place of
    the order; the linear program says nothing about which of them to activate first (all its
    optimal solutions are consistent with any order among them). In particular every partly
    active (neutral) state of every arm has priority exactly :math:`\lambda^*`. The simulator
    breaks such ties (``ties="lowest"``: the lowest arm number; ``"random"``), and
    :func:`~whittle_lib.rmab.simulate_counts` by state number; Hong et al.'s code breaks them
    toward the higher state number. Priorities computed in floating point may differ in the
    last bits where they are equal in exact arithmetic.

    States the relaxation's solution never visits get a priority all the same, from the
    relative values (which solve the optimality equation at every state), not from the
    occupation measures; they matter in the transient and for small ``N``.

    Examples
    --------
    A random 3-state arm that is not indexable, 10 copies, at most 3 active: state 2 first,
    then the neutral state 1 (its priority is the subsidy), never state 0:

    >>> from whittle_lib.builders import random_arm
    >>> from whittle_lib.rmab import simulate
    >>> arm = random_arm(3, rng=70, concentration=0.3)
    >>> rule = lp_priority([arm] * 10, 3)
    >>> rule.indices[0].round(3).tolist(), round(rule.subsidy, 3), rule.subsidy_range[0] == \
    ...     rule.subsidy_range[1]
    ([-4.517, 0.135, 5.008], 0.135, True)
    >>> run = simulate([arm] * 10, rule, 3, 1_000, replications=4, rng=1)
    """
    arms, M, activation, discount, sol = _solve(arms, M, activation, discount, x0, subsidy)
    beta = 1.0 if discount is None else discount
    of = sol._class_of                       # per arm, its class (distinct arm and x0)
    classes, first = np.unique(of, return_index=True)
    tables = {}
    for c, i in zip(classes.tolist(), first.tolist()):
        arm, h = arms[i], sol.values[i]
        t = arm.R1 - arm.R0 + beta * ((arm.P1 - arm.P0) @ h)
        # equal in exact arithmetic, apart by rounding: 0 (the sign "at_most" reads) and
        # the subsidy (every neutral state) are snapped to exactly
        tol = 1e-10 * (1.0 + np.abs(arm.R0).max() + np.abs(arm.R1).max()
                       + np.abs(h).max() + abs(sol.subsidy))
        t = np.where(np.abs(t - sol.subsidy) <= tol, sol.subsidy, t)
        t = np.where(np.abs(t) <= tol, 0.0, t)
        t.setflags(write=False)
        tables[c] = t
    per_arm = [tables[c] for c in of.tolist()]
    return LPPriorityRule(per_arm, M=M, activation=activation, discount=discount,
                          subsidy=sol.subsidy, subsidy_range=sol.subsidy_range, solution=sol)


# --- FTVA ---------------------------------------------------------------------------------

# priority levels of FTVA's budget rule (Hong et al.'s "goodness" tie-break), each level
# spread over [base, base + 1) by a uniform draw so that ties within a level are random:
# asking and good, asking and bad (above 0: "at_most" activates only these), not asking and
# bad, not asking and good
_ASK_GOOD, _ASK_BAD, _REST_BAD, _REST_GOOD = 3.0, 2.0, -2.0, -3.0


@dataclass(frozen=True, eq=False, repr=False)
class FTVARule(ShortRepr):
    """Follow-the-virtual-advice [HXCW23]_, built by :func:`ftva`: a stateful rule.

    Attributes
    ----------
    n_arms, M : int
    activation : {"at_most", "exactly"}
    discount : float or None
    virtual_start : {"stationary", "real", "uniform"}
    policies : tuple of ndarray
        Per arm, the probability that its virtual arm asks to be active in each state (the
        relaxation's optimal single-arm policy, :meth:`RelaxationSolution.policy`).
    solution : RelaxationSolution
    """

    n_arms: int
    M: int
    activation: str
    discount: float | None
    virtual_start: str
    policies: tuple = field(repr=False)
    solution: RelaxationSolution = field(repr=False)

    def check_run(self, dynamics, M: int, activation: str) -> None:
        """Refuse other arms, budget or activation than the rule was built for."""
        _check_budget_rule("the FTVA rule", self.M, self.activation, M, activation)
        self._built.check("the FTVA rule", dynamics)
        if not isinstance(dynamics, (FiniteArms, RestlessArm)):
            raise TypeError("the FTVA rule runs finite arms (a list of RestlessArm or "
                            f"FiniteArms), got {type(dynamics).__name__}")

    def start(self, states, rng) -> _FTVARun:
        """The rule's state for one run of :func:`~whittle_lib.rmab.simulate`."""
        return _FTVARun(self, np.asarray(states), rng)

    def start_counts(self, arm, counts, rng) -> _FTVACounts:
        """The rule's state for one run of :func:`~whittle_lib.rmab.simulate_counts`."""
        return _FTVACounts(self, arm, np.asarray(counts), rng)


class _FTVARun:
    """Virtual states and the virtual actions of the current period, one run (per arm)."""

    def __init__(self, rule: FTVARule, states: np.ndarray, rng):
        self.rule = rule
        self.rng = _own_stream(rng)
        self.dynamics = rule._virtual
        self.prob = rule._prob
        self.row0 = rule._row0
        sizes = self.dynamics.n_states
        if rule.virtual_start == "real":
            self.virtual = states.copy()
        elif rule.virtual_start == "uniform":
            self.virtual = np.floor(self.rng.random(states.shape) * sizes).astype(np.intp)
        else:
            cdf = rule._start_cdf[rule._cls]                       # (N, n) per arm
            u = self.rng.random(states.shape)
            self.virtual = np.minimum((u[..., None] >= cdf).sum(-1), sizes - 1)
        self.asks = None

    def __call__(self, states, t):
        asks = self.rng.random(self.virtual.shape) < np.take(self.prob,
                                                             self.virtual + self.row0)
        good = states == self.virtual
        base = np.where(asks, np.where(good, _ASK_GOOD, _ASK_BAD),
                        np.where(good, _REST_GOOD, _REST_BAD))
        self.asks = asks
        return base + self.rng.random(base.shape)

    def update(self, states, active, next_states, rng):
        # an arm whose real state and action agree with its virtual ones moves with it (the
        # coupling); every other virtual arm moves by its own draw
        coupled = (states == self.virtual) & (active == self.asks)
        moved, _ = self.dynamics.step(self.virtual, self.asks, self.rng)
        self.virtual = np.where(coupled, next_states, moved)


class _FTVACounts:
    """FTVA on identical arms as the joint counts of (real state, virtual state)."""

    def __init__(self, rule: FTVARule, arm, counts: np.ndarray, rng):
        self.rng = _own_stream(rng)
        n = arm.n_states
        self.n = n
        self.p = np.asarray(rule.policies[0], dtype=float)
        self.M = rule.M
        self.at_most = rule.activation == "at_most"
        J = np.zeros((*counts.shape, n), dtype=np.int64)
        if rule.virtual_start == "real":
            J[..., np.arange(n), np.arange(n)] = counts
        else:
            if rule.virtual_start == "uniform":
                law = np.full(n, 1.0 / n)
            else:
                law = rule._start_law[0][:n]
            J[:] = self.rng.multinomial(counts, law)
        self.J = J
        P = np.stack([arm.P0, arm.P1])                              # (a, x, y)
        # law of (real next, virtual next) for each group (a, virtual a) and cell (x, xv):
        # independent moves, except a good arm that follows its advice (coupled: y = yv)
        law = np.einsum("axy,bzw->abxzyw", P, P).reshape(2, 2, n, n, n * n)
        eye = np.arange(n)
        for a in (0, 1):
            coupled = np.zeros((n, n * n))
            coupled[:, eye * n + eye] = P[a]
            law[a, a, eye, eye] = coupled
        self.law = np.clip(law, 0.0, None)
        self.law /= self.law.sum(axis=-1, keepdims=True)
        self.groups = None

    def allocate(self, c, t):
        J, n = self.J, self.n
        asks = self.rng.binomial(J, self.p)                          # per cell (x, xv)
        eye = np.eye(n, dtype=bool)
        levels = np.stack([np.where(eye, asks, 0), np.where(eye, 0, asks),
                           np.where(eye, 0, J - asks), np.where(eye, J - asks, 0)], axis=-3)
        totals = levels.sum(axis=(-2, -1))                           # (..., 4)
        eligible = np.array([1, 1, 0, 0] if self.at_most else [1, 1, 1, 1])
        before = np.cumsum(totals, axis=-1) - totals
        take = np.clip(self.M - before, 0, totals) * eligible        # arms taken per level
        chosen = np.where((take == totals)[..., None, None], levels, 0)
        split = np.argwhere((take > 0) & (take < totals))
        for idx in split:                                            # at most one per row
            idx = tuple(idx)
            colors = levels[idx].ravel()
            chosen[idx] = self.rng.multivariate_hypergeometric(colors, int(take[idx])
                                                               ).reshape(n, n)
        # groups (a, virtual a): the real actions of each level and their advice
        act_ask = chosen[..., 0, :, :] + chosen[..., 1, :, :]
        act_rest = chosen[..., 2, :, :] + chosen[..., 3, :, :]
        self.groups = np.stack([np.stack([J - asks - act_rest, asks - act_ask], axis=-3),
                                np.stack([act_rest, act_ask], axis=-3)], axis=-4)
        return (act_ask + act_rest).sum(axis=-1)

    def transition(self, c, active, rng):
        n = self.n
        moved = self.rng.multinomial(self.groups, self.law)          # (..., 2, 2, n, n, n*n)
        self.J = moved.sum(axis=(-5, -4, -3, -2)).reshape(*moved.shape[:-5], n, n)
        return self.J.sum(axis=-1)


def ftva(arms, M: int, *, activation: str = "at_most", discount: float | None = None,
         x0=None, virtual_start: str | None = None) -> FTVARule:
    r"""Follow-the-virtual-advice (FTVA), Hong, Xie, Chen & Wang [HXCW23]_, Algorithm 1.

    Each arm ``i`` has a virtual copy in state :math:`\hat X_i` that follows the relaxation's
    optimal single-arm policy :math:`\bar\pi_i(1 \mid x) = y_i(x, 1) / (y_i(x, 0) + y_i(x,
    1))` (the occupation measures of :func:`~whittle_lib.bounds.relaxation_solution`;
    where the solution never visits ``x``, the action optimal at its subsidy) without any
    budget: each period it draws its virtual action :math:`\hat A_i`. The real arms follow the
    virtual actions where the budget allows, in Hong et al.'s priority levels ("goodness"
    tie-break: an arm is *good* when its real state equals its virtual state): asking and
    good, asking and bad, then (``activation="exactly"`` only) not asking and bad, not asking
    and good; within a level at random. Then every virtual arm moves by its own action, except
    that a good arm whose real action is its virtual action moves with the real arm (real and
    virtual next states coupled, equal). With ``activation="at_most"`` an arm whose virtual
    arm rests is never activated.

    A stateful rule (:class:`~whittle_lib.rmab.Rule`): :func:`~whittle_lib.rmab.simulate`
    starts it per run (virtual states, and its own random stream spawned from the run's
    generator: the run's own draws are those it would make under any rule) and passes it each
    real transition. For identical arms :func:`~whittle_lib.rmab.simulate_counts` runs it on
    the joint counts of (real state, virtual state), ``n**2`` numbers whatever ``N``: the
    requests by binomial draws per cell, the split level by a multivariate hypergeometric draw,
    the coupled moves by multinomial draws.

    Parameters
    ----------
    arms : sequence of RestlessArm
    M : int
    activation : {"at_most", "exactly"}
        The relaxation the single-arm policies come from, and the rule's budget rule.
    discount : float or None
        ``None`` (default): the average-reward relaxation; a number: the discounted one from
        ``x0`` (the virtual arms then start in the real states: ``virtual_start="real"``).
    x0 : array_like of int, optional
        Discounted only: the initial states of the relaxation (those of the run).
    virtual_start : {"stationary", "real", "uniform"}, optional
        Where the virtual arms start: drawn from the relaxation's stationary distribution
        :math:`\mu^*_i(x) = \sum_a y_i(x, a)` (the default for the average reward, as Hong et
        al. 2024's code and Gast's), in the real states (the default when discounted, where
        the single-arm policy is optimal from ``x0`` only; ``"stationary"`` is refused there),
        or uniformly at random over the states (Hong et al. 2023's code, behind its figures).

    Returns
    -------
    FTVARule

    Examples
    --------
    Hong et al.'s eight-state arm (reward only in the passive action of state 7), 100 copies,
    exactly half active: FTVA earns close to the relaxation's 0.0125 per arm, where
    LP-priority earns almost nothing ([HXCW23]_, Fig. 2):

    >>> import numpy as np
    >>> from whittle_lib.arms import RestlessArm
    >>> from whittle_lib.rmab import simulate_counts
    >>> right, left = 0.1, [0, 1.0, 0.48, 0.47, 0.46, 0.45, 0.44, 0.43]
    >>> P = np.zeros((2, 8, 8))
    >>> for x in range(8):
    ...     good, bad = (1, 0) if x < 4 else (0, 1)
    ...     P[good, x, (x + 1) % 8], P[good, x, x] = right, 1 - right
    ...     P[bad, x, max(x - 1, 0) if x else 1], P[bad, x, x] = left[x], 1 - left[x]
    >>> arm = RestlessArm(P[0], P[1], R0=[0] * 7 + [0.1], R1=[0] * 8)
    >>> rule = ftva([arm] * 100, 50, activation="exactly")
    >>> run = simulate_counts(arm, [0, 33, 67] + [0] * 5, rule, 50, 2_000, warmup=500,
    ...                       activation="exactly", rng=1)
    >>> bool(0.010 < run.average_reward / 100 < 0.0125)
    True
    """
    arms = _check_arms(arms)
    discount_checked = check_discount(discount)
    if virtual_start is None:
        virtual_start = "stationary" if discount_checked is None else "real"
    virtual_start = check_choice("virtual_start", virtual_start, _STARTS)
    if discount_checked is not None and virtual_start == "stationary":
        raise ValueError("virtual_start='stationary' is for the average reward: a discounted "
                         "relaxation's single-arm policy is optimal from x0, so the virtual "
                         "arms start in the real states (virtual_start='real')")
    arms, M, activation, discount, sol = _solve(arms, M, activation, discount, x0, None)
    # per distinct class: its policy and stationary law, padded, looked up by arm
    of = sol._class_of
    classes, first = np.unique(of, return_index=True)
    width = max(arms[first[c]].n_states for c in classes.tolist())
    prob = np.zeros((classes.size, width))
    start_law = np.zeros((classes.size, width))
    start_cdf = np.full((classes.size, width), np.inf)
    for c in classes.tolist():
        i = first[c]
        n = arms[i].n_states
        prob[c, :n] = sol.policy(i)
        mass = sol.occupation[i].sum(axis=1)
        # rounded as the policies are (RelaxationSolution.policy): the same draws everywhere
        start_law[c, :n] = np.round(mass / mass.sum(), 12) + 0.0
        start_cdf[c, :n - 1] = np.cumsum(start_law[c, :n])[:n - 1]
    rule = FTVARule(n_arms=len(arms), M=M, activation=activation, discount=discount,
                    virtual_start=virtual_start,
                    policies=sol._policies, solution=sol)
    object.__setattr__(rule, "_built", _Prints(arms))
    object.__setattr__(rule, "_virtual", FiniteArms(arms))
    object.__setattr__(rule, "_prob", prob.ravel())
    object.__setattr__(rule, "_row0", of * width)
    object.__setattr__(rule, "_cls", of)
    object.__setattr__(rule, "_start_cdf", start_cdf)
    object.__setattr__(rule, "_start_law", start_law)
    return rule


# --- LP-update (model predictive control) ---------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class LPUpdateRule(ShortRepr):
    """The LP-update rule of :func:`lp_update` (model predictive control).

    Attributes
    ----------
    n_arms, M, horizon : int
    activation : {"at_most", "exactly"}
    discount : float or None
    n_types : int
        Distinct arms: the linear program has one block of variables per type and period.
    """

    n_arms: int
    M: int
    horizon: int
    activation: str
    discount: float | None
    n_types: int

    def check_run(self, dynamics, M: int, activation: str) -> None:
        """Refuse other arms, budget or activation than the rule was built for."""
        _check_budget_rule("the LP-update rule", self.M, self.activation, M, activation)
        self._built.check("the LP-update rule", dynamics)

    def plan(self, counts) -> np.ndarray:
        """The linear program from ``counts[k, x]`` (arms of type ``k`` in state ``x``):
        the number of arms to activate in each (type, state), rounded to integers that keep
        the budget (largest remainders).

        ``counts`` has shape ``(n_types, n_states)`` (types in the order of their first arm;
        padded with zeros for smaller arms), non-negative integers, each type's row summing to
        its number of arms.
        """
        program = self._program
        raw = as_numeric("counts", counts)
        shape = (program.n_types, program.width)
        if raw.shape != shape:
            raise ValueError(f"counts must have shape {shape} (types, states), got shape "
                             f"{raw.shape}: for copies of one arm, pass [counts]")
        if not np.isfinite(raw).all() or (raw < 0).any() or (raw != np.round(raw)).any():
            raise ValueError("counts must be non-negative integers (arms per type and state), "
                             f"got {raw.tolist()}")
        per_type = np.bincount(self._built.code, minlength=program.n_types)
        padding = np.arange(program.width)[None, :] >= program.sizes[:, None]
        if (raw.sum(axis=1) != per_type).any() or (raw[padding] != 0).any():
            raise ValueError(f"counts must place every arm of each type in one of its states "
                             f"(row totals {per_type.tolist()}), got row totals "
                             f"{raw.sum(axis=1).astype(int).tolist()}")
        return program.plan(raw.astype(float))

    def __call__(self, states, t):
        states = np.asarray(states)
        program = self._program
        cell = self._cell_base + states                              # (type, state) cell
        out = np.empty(states.shape)
        for row, flat in zip(out.reshape(-1, states.shape[-1]),
                             cell.reshape(-1, states.shape[-1])):
            counts = np.bincount(flat, minlength=program.cells)
            take = program.plan(counts.reshape(program.n_types, program.width)).ravel()
            # the first take[cell] arms of each cell (arms of one type in one state are
            # exchangeable: which ones does not change the law of the system)
            order = np.argsort(flat.astype(program.key_dtype), kind="stable")
            starts = np.cumsum(counts) - counts
            rank = np.empty(flat.size, dtype=np.intp)
            rank[order] = np.arange(flat.size) - np.repeat(starts, counts)
            # in (1, 2] for the planned arms, in [-2, -1) for the others, decreasing in the
            # arm number: the same arms are chosen as with two values, and the budget's cut
            # (a partition) runs 20 times faster on distinct values than on a million ties
            row[:] = np.where(rank < take[flat], 2.0, -1.0) - np.arange(flat.size) / flat.size
        return out

    def start_counts(self, arm, counts, rng):
        """Count mode (identical arms): the plan from the counts each period."""
        if self.n_types != 1:
            raise ValueError("simulate_counts runs copies of one arm: this rule was built for "
                             f"{self.n_types} distinct arms")
        return _LPUpdateCounts(self._program)


class _LPUpdateCounts:
    def __init__(self, program):
        self.program = program

    def allocate(self, c, t):
        c = np.asarray(c)
        flat = c.reshape(-1, c.shape[-1])
        out = np.stack([self.program.plan(row[None, :].astype(float))[0] for row in flat])
        return out.reshape(c.shape).astype(np.int64)


class _FiniteHorizonLP:
    """The finite-horizon program of LP-update on types of arms, built once: each period only
    the initial counts (the right-hand side) change.

    Variables ``y[t, k, x, a]``, ``t < horizon``: arms of type ``k`` in state ``x`` under
    action ``a`` at ``t`` (expected numbers). ``sum_a y[0, k, x, a] = m[k, x]``; ``sum_a
    y[t, k, y, a] = sum_{x, a} y[t-1, k, x, a] P^k_a(x, y)``; ``sum_{k, x} y[t, k, x, 1]`` equal
    to (at most) ``M`` each period; maximise ``sum_t beta**t sum y r``.
    """

    def __init__(self, types, M, horizon, activation, discount, cache: int = 4096):
        from scipy import sparse

        self.n_types = len(types)
        self.width = max(a.n_states for a in types)
        self.cells = self.n_types * self.width
        self.key_dtype = np.uint16 if self.cells < 2**16 else np.uint32
        beta = 1.0 if discount is None else discount
        W, K, H = self.width, self.n_types, horizon
        nv = H * K * W * 2

        def var(t, k, x, a):
            return ((t * K + k) * W + x) * 2 + a

        rows, cols, vals = [], [], []
        b_rows = 0
        cost = np.zeros(nv)
        upper = np.full(nv, np.inf)
        for t in range(H):
            for k, arm in enumerate(types):
                n = arm.n_states
                R = (arm.R0, arm.R1)
                P = (arm.P0, arm.P1)
                for y in range(W):
                    for a in (0, 1):
                        if y >= n:
                            upper[var(t, k, y, a)] = 0.0       # padding: no arm there
                        else:
                            cost[var(t, k, y, a)] = -(beta ** t) * R[a][y]
                    if y >= n:
                        continue
                    r = b_rows + k * W + y
                    rows += [r, r]
                    cols += [var(t, k, y, 0), var(t, k, y, 1)]
                    vals += [1.0, 1.0]
                    if t:
                        for x in range(n):
                            for a in (0, 1):
                                if P[a][x, y]:
                                    rows.append(r)
                                    cols.append(var(t - 1, k, x, a))
                                    vals.append(-P[a][x, y])
            b_rows += K * W
        self.A_eq = sparse.csr_array((vals, (rows, cols)), shape=(b_rows, nv))
        budget = sparse.lil_array((H, nv))
        for t in range(H):
            for k in range(K):
                for x in range(types[k].n_states):
                    budget[t, var(t, k, x, 1)] = 1.0
        self.budget = sparse.csr_array(budget)
        self.exactly = activation == "exactly"
        self.M = M
        self.cost = cost
        self.bounds = np.stack([np.zeros(nv), upper], axis=1)
        self.first = np.array([[var(0, k, x, 1) for x in range(W)] for k in range(K)])
        self.sizes = np.array([a.n_states for a in types])
        self.cache: dict[bytes, np.ndarray] = {}
        self.cache_size = cache

    def plan(self, counts: np.ndarray) -> np.ndarray:
        from scipy import optimize, sparse

        counts = np.asarray(counts, dtype=float).reshape(self.n_types, self.width)
        key = counts.tobytes()
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        b_eq = np.zeros(self.A_eq.shape[0])
        b_eq[:self.n_types * self.width] = counts.ravel()
        H = self.budget.shape[0]
        budget = np.full(H, float(self.M))
        if self.exactly:
            A = sparse.vstack([self.A_eq, self.budget], format="csr")
            res = optimize.linprog(self.cost, A_eq=A, b_eq=np.concatenate([b_eq, budget]),
                                   bounds=self.bounds, method="highs")
        else:
            res = optimize.linprog(self.cost, A_ub=self.budget, b_ub=budget, A_eq=self.A_eq,
                                   b_eq=b_eq, bounds=self.bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"LP-update's linear program failed: {res.message}")
        active = np.clip(res.x[self.first], 0.0, None)
        take = _round_keeping_total(np.minimum(active, counts), counts,
                                    self.M if self.exactly else None)
        take.setflags(write=False)
        if len(self.cache) >= self.cache_size:
            self.cache.clear()
        self.cache[key] = take
        return take


def _round_keeping_total(active: np.ndarray, counts: np.ndarray, exact) -> np.ndarray:
    """Integers per cell: the floors, then one more in the cells of largest remainder until
    the total is the rounded total (``exact`` when given), never above the cell's count."""
    base = np.floor(active + 1e-9)
    base = np.minimum(base, counts)
    total = int(round(float(active.sum()))) if exact is None else int(exact)
    total = min(total, int(counts.sum()))
    need = total - int(base.sum())
    flat = base.ravel()
    if need > 0:
        rest = (active - base).ravel()
        room = (counts.ravel() - flat) > 0
        order = np.argsort(-np.where(room, rest, -np.inf), kind="stable")
        for i in order[:need]:
            if room[i]:
                flat[i] += 1
    return flat.reshape(active.shape).astype(np.int64)


def lp_update(arms, M: int, horizon: int, *, activation: str = "at_most",
              discount: float | None = None) -> LPUpdateRule:
    r"""LP-update: the finite-horizon linear program re-solved from the current state every
    period (model predictive control), [GGY23]_ [GN25]_.

    Each period, from the current number :math:`m_k(x)` of arms of each type ``k`` (distinct
    arm) in each state, solve the fluid program over ``horizon`` periods

    .. math::
        \max \sum_{t < \tau} \beta^t \sum_{k, x, a} y_t^k(x, a) R^a_k(x) \quad
        \text{s.t.}\ \sum_a y_0^k(x, a) = m_k(x),\
        \sum_a y_{t}^k(y, a) = \sum_{x, a} y_{t-1}^k(x, a) P^a_k(x, y),\
        \sum_{k, x} y_t^k(x, 1) = M \ (\le M \text{ for "at_most"}),\ y \ge 0

    (:math:`\beta = 1` for the average reward: the plain total over the horizon, without a
    terminal value, as Gast's reference code), and activate in each (type, state) the first
    period's :math:`y_0^k(x, 1)`, rounded to integers that keep the budget (floors, then the
    largest remainders). The program's size does not depend on ``N``: types times states times
    ``2 horizon`` variables. HiGHS through :func:`scipy.optimize.linprog`; **no warm start**:
    SciPy's HiGHS interface takes no starting basis or point (``linprog``'s ``x0`` was used
    only by the removed revised simplex method), so the constraint matrix is built once and
    each period changes only its right-hand side, and a state already planned from (counts
    recur, especially for small ``N``) reuses its plan.

    Parameters
    ----------
    arms : sequence of RestlessArm
    M : int
    horizon : int
        Periods of the program, ``>= 1``. Without a terminal value the program sees an
        activation's payoff only within the horizon: with ``activation="at_most"`` a short
        horizon leaves unused a budget whose use pays back slowly (on the README's
        non-indexable arm, 10,000 copies at most 3,000 active: horizon 20 activates 2,418
        arms from the relaxation's stationary counts and earns about 6 % below the bound,
        horizon 50 activates 3,000 as the relaxation does).
    activation : {"at_most", "exactly"}
    discount : float or None
        ``None``: the undiscounted total over the horizon (average reward); a number in
        (0, 1): its discounted total.

    Returns
    -------
    LPUpdateRule
        A stateless rule (priorities in (1, 2] for the arms the plan activates, the first arms
        of each type and state in arm order, in [-2, -1) otherwise), with a count mode for
        identical arms.

    Examples
    --------
    >>> from whittle_lib.builders import random_arm
    >>> from whittle_lib.rmab import simulate
    >>> arm = random_arm(3, rng=2)
    >>> rule = lp_update([arm] * 20, 6, horizon=5)
    >>> rule.plan([[10, 6, 4]]).tolist()            # active arms per state, from these counts
    [[0, 6, 0]]
    >>> run = simulate([arm] * 20, rule, 6, 50, rng=1)
    >>> run.rewards.shape
    (50, 1)
    """
    arms = _check_arms(arms)
    M = check_budget(M, len(arms))
    horizon = check_integer("horizon", horizon, 1)
    activation = check_activation(activation)
    discount = check_discount(discount)
    prints = _Prints(arms)
    types = [None] * len(prints.prints)
    for arm, k in zip(arms, prints.code.tolist()):
        if types[k] is None:
            types[k] = arm
    program = _FiniteHorizonLP(types, M, horizon, activation, discount)
    rule = LPUpdateRule(n_arms=len(arms), M=M, horizon=horizon, activation=activation,
                        discount=discount, n_types=len(types))
    object.__setattr__(rule, "_built", prints)
    object.__setattr__(rule, "_program", program)
    object.__setattr__(rule, "_cell_base", prints.code * program.width)
    return rule


# --- the exact optimum of small problems -----------------------------------------------------

def _compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` non-negative integers summing to ``total``, shape
    (C(total + parts - 1, parts - 1), parts), in lexicographic order."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    out = []
    for first in range(total, -1, -1):
        rest = _compositions(total - first, parts - 1)
        out.append(np.column_stack([np.full(len(rest), first), rest]))
    return np.concatenate(out)


class _Space:
    """Compositions of each total ``0..N`` into ``n`` parts, with a vectorised rank."""

    def __init__(self, N: int, n: int):
        self.N, self.n = N, n
        self.base = (N + 1) ** np.arange(n, dtype=np.int64)
        self.comps = [_compositions(m, n) for m in range(N + 1)]
        self.keys = []
        self.order = []
        self._spectra: dict = {}
        for c in self.comps:
            key = c @ self.base
            order = np.argsort(key)
            self.keys.append(key[order])
            self.order.append(order)

    def spectra(self, laws) -> np.ndarray:
        """The Fourier transforms of ``laws[x][k]`` on the grid of the first ``n - 1``
        coordinates, computed once per list of laws."""
        key = id(laws)
        cached = self._spectra.get(key)
        if cached is None:
            n, N = self.n, self.N
            grid = (N + 1,) * (n - 1)
            dense = np.zeros((n, N + 1, *grid))
            for x in range(n):
                for k in range(N + 1):
                    dense[(x, k, *self.comps[k][:, :n - 1].T)] = laws[x][k]
            cached = np.fft.rfftn(dense, axes=tuple(range(2, n + 1)))
            self._spectra[key] = (laws, cached)            # keep laws alive: id stays unique
        else:
            cached = cached[1]
        return cached

    def rank(self, vectors: np.ndarray, total: int) -> np.ndarray:
        key = vectors @ self.base
        pos = np.searchsorted(self.keys[total], key)
        return self.order[total][pos]


def _multinomial_laws(space: _Space, P: np.ndarray) -> list:
    """``laws[x][k]``: the law of where ``k`` arms in state ``x`` go under ``P`` (one move
    each), over the compositions of ``k``."""
    from scipy.special import gammaln

    laws = []
    with np.errstate(divide="ignore", invalid="ignore"):
        logP = np.log(P)
        for x in range(space.n):
            row = []
            for k in range(space.N + 1):
                comps = space.comps[k]
                terms = np.where(comps > 0, comps * logP[x], 0.0).sum(axis=1)
                log = gammaln(k + 1) - gammaln(comps + 1).sum(axis=1) + terms
                row.append(np.exp(log))
            laws.append(row)
    return laws


def _convolve(space: _Space, law_a, total_a: int, law_b, total_b: int):
    """The law of the sum of two independent compositions."""
    if total_a == 0:
        return law_b
    if total_b == 0:
        return law_a
    sums = (space.comps[total_a][:, None, :] + space.comps[total_b][None, :, :])
    idx = space.rank(sums.reshape(-1, space.n), total_a + total_b)
    out = np.bincount(idx, weights=np.outer(law_a, law_b).ravel(),
                      minlength=len(space.comps[total_a + total_b]))
    return out


def _group_laws(space: _Space, laws, total: int) -> np.ndarray:
    """For every composition ``a`` of ``total``: the law of where its arms go (arms in state
    ``x`` moving by ``laws[x]``), a matrix (compositions of ``total``)^2.

    The law of a sum of independent moves is the product of their generating functions: on
    the grid of the first ``n - 1`` coordinates (the last is implied), a product of discrete
    Fourier transforms, one inverse transform per composition (exact to rounding, which is
    clipped); without the grid (too large) by direct convolutions.
    """
    comps = space.comps[total]
    n = space.n
    if n == 1:
        return np.ones((1, 1))
    grid = (space.N + 1,) * (n - 1)
    if math.prod(grid) <= 1 << 18:
        spectra = space.spectra(laws)                     # (n, N + 1, *rfft grid)
        product = np.ones((len(comps), *spectra.shape[2:]), dtype=complex)
        for x in range(n):
            product *= spectra[x][comps[:, x]]
        dense = np.fft.irfftn(product, s=grid, axes=tuple(range(1, n)))
        out = dense[(slice(None), *comps[:, :n - 1].T)] if len(comps) else dense
        out = np.clip(out, 0.0, None)
        return out / out.sum(axis=1, keepdims=True)
    out = np.empty((len(comps), len(comps)))
    for i, a in enumerate(comps):
        law, mass = np.array([1.0]), 0
        for x in range(n):
            law = _convolve(space, law, mass, laws[x][a[x]], int(a[x]))
            mass += int(a[x])
        out[i] = law
    return out


@dataclass(frozen=True, eq=False, repr=False)
class ExactOptimum(ShortRepr):
    """The optimal value of N arms with budget M, from :func:`exact_optimum`.

    Attributes
    ----------
    value : float
        The optimum from the initial states: the optimal long-run average reward per period
        (``discount=None``) or the optimal expected discounted reward, a total over the arms.
    discount : float or None
    activation : {"at_most", "exactly"}
    M : int
    n_states : int
        States of the MDP solved (count vectors or joint states).
    model : {"counts", "product"}
        The MDP: counts of identical arms per (type, state); ``"product"`` when every arm is
        of its own type.
    method : str
        The solver: ``"policy_iteration"`` (:func:`whittle_lib.mdp.policy_iteration` on the
        MDP held as matrices) or ``"operator"`` (:func:`whittle_lib.mdp.operator_policy_iteration`
        on the counts MDP given by its operators).
    states : ndarray of int, shape (n_states, cells)
        Each MDP state as the number of arms of each type in each state (cells: the types'
        states side by side).
    actions : ndarray of int, shape (n_states, cells)
        The optimal number of active arms in each cell, in each MDP state.
    values : ndarray, shape (n_states,)
        Discounted: the optimal value of each state; average: the optimal gain from each
        state.
    iterations : int
        Policy-iteration steps.
    """

    value: float
    discount: float | None
    activation: str
    M: int
    n_states: int
    model: str
    method: str
    states: np.ndarray
    actions: np.ndarray
    values: np.ndarray
    iterations: int

    def to_frame(self):
        """One row per MDP state: its counts, the optimal activations and value; needs
        pandas."""
        pd = _pandas()
        data = {f"c{j}": self.states[:, j] for j in range(self.states.shape[1])}
        data.update({f"a{j}": self.actions[:, j] for j in range(self.actions.shape[1])})
        data["value"] = self.values
        return pd.DataFrame(data)


def exact_optimum(arms, M: int, *, activation: str = "at_most", discount: float | None = None,
                  x0=None, max_states: int = 20_000, method: str = "auto") -> ExactOptimum:
    r"""The optimal value of N arms with budget ``M``: the optimum any policy can reach.

    Identical arms are exchangeable, so the optimal policy needs only the number of arms in
    each state: the **counts MDP**, with :math:`\binom{N + n - 1}{n - 1}` states (1,326 for
    ``n = 3`` and ``N = 50``) whose actions are the numbers of active arms in each state
    (``M`` in all, or at most ``M``) and whose transitions are the law of the sum of
    independent multinomial moves ([P94]_'s MDP on an aggregated state, exact by symmetry).
    Arms of several types give the product of their types' counts; distinct arms the product
    of their states (the **product MDP**). Solved exactly by policy iteration
    (:func:`whittle_lib.mdp.policy_iteration`, multichain-safe for the average reward); a
    counts MDP too large to hold as matrices by
    :func:`whittle_lib.mdp.operator_policy_iteration` on its operators: the expected next
    value of every (state, action) is ``D1 V D0^T``, ``D1`` and ``D0`` the laws of the active
    and the passive arms' moves, ``V[u, w]`` the value of the counts ``u + w``.

    Parameters
    ----------
    arms : sequence of RestlessArm
    M : int
    activation : {"at_most", "exactly"}
        At most (or exactly) ``M`` active arms in every period.
    discount : float or None
        ``None`` (default): the optimal long-run average reward; a number: the optimal
        discounted value from ``x0``.
    x0 : array_like of int, optional
        Each arm's initial state (0 by default). The average optimum from it (the optimal gain
        of a multichain problem depends on the initial state).
    max_states : int
        Refuse (``ValueError`` naming the size) a model with more states; raise it knowingly:
        time and memory grow with the states times the actions.
    method : {"auto", "policy_iteration", "operator"}
        ``"auto"``: the matrices when they fit (about ``2**24`` transition entries), else the
        operators (one type of arm only; average reward: every policy met must be unichain).

    Returns
    -------
    ExactOptimum

    Raises
    ------
    ValueError
        For a model beyond ``max_states`` (the message says its size), or arguments out of
        range.

    Examples
    --------
    Three copies of a 2-state arm, at most one active per period: the optimum is below the
    relaxation bound (1, each arm active a third of the time):

    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> opt = exact_optimum([arm] * 3, 1)
    >>> round(opt.value, 6), opt.n_states, opt.model
    (0.864407, 4, 'counts')
    """
    arms = _check_arms(arms)
    N = len(arms)
    M = check_budget(M, N)
    activation = check_activation(activation)
    discount = check_discount(discount)
    max_states = check_integer("max_states", max_states, 1)
    method = check_choice("method", method, ("auto", "policy_iteration", "operator"))
    start = _check_x0(x0, arms, 0.5) if x0 is not None else np.zeros(N, dtype=int)
    prints = _Prints(arms)
    K = len(prints.prints)
    types = [arms[int(np.flatnonzero(prints.code == k)[0])] for k in range(K)]
    sizes = [t.n_states for t in types]
    copies = np.bincount(prints.code, minlength=K)
    n_states = math.prod(math.comb(int(c) + n - 1, n - 1) for c, n in zip(copies, sizes))
    if n_states > max_states:
        raise ValueError(f"exact_optimum: the model has {n_states:,} states (counts of "
                         f"{N} arms of {K} type(s) over {sizes} states), more than "
                         f"max_states={max_states:,}; pass a larger max_states to solve it "
                         "anyway (time and memory grow with states times actions)")
    initial = np.zeros(sum(sizes), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    np.add.at(initial, offsets[prints.code] + start, 1)
    model = "product" if K == N and N > 1 else "counts"
    if method == "auto":
        method = "policy_iteration" if K > 1 or _explicit_fits(copies[0], sizes[0], M,
                                                               activation) else "operator"
    if method == "operator":
        if K != 1:
            raise ValueError("method='operator' solves the counts MDP of identical arms; these "
                             f"arms are of {K} types: use method='policy_iteration'")
        return _operator_optimum(types[0], N, M, activation, discount, initial, model)
    return _explicit_optimum(types, copies, M, activation, discount, initial, model)


def _explicit_fits(N: int, n: int, M: int, activation: str) -> bool:
    states = math.comb(N + n - 1, n - 1)
    totals = [M] if activation == "exactly" else range(M + 1)
    actions = sum(math.comb(m + n - 1, n - 1) for m in totals)
    return states * states * actions <= 2**24


def _type_rows(arm: RestlessArm, N: int):
    """For one type of ``N`` arms: the states (compositions of N), and for every (state,
    activation) pair its reward and law of next states."""
    n = arm.n_states
    space = _Space(N, n)
    states = space.comps[N]
    laws = (_multinomial_laws(space, arm.P0), _multinomial_laws(space, arm.P1))
    return space, states, laws


def _explicit_optimum(types, copies, M, activation, discount, initial, model) -> ExactOptimum:
    from scipy import sparse

    from . import mdp

    spaces, laws = [], []
    for arm, N in zip(types, copies.tolist()):
        space, _, law = _type_rows(arm, N)
        spaces.append(space)
        laws.append(law)
    # joint states: the product of the types' compositions
    grids = [sp.comps[sp.N] for sp in spaces]
    idx = np.stack(np.meshgrid(*[np.arange(len(g)) for g in grids], indexing="ij"),
                   axis=-1).reshape(-1, len(grids))
    states = np.concatenate([g[idx[:, k]] for k, g in enumerate(grids)], axis=1)
    S = len(states)
    cells = states.shape[1]
    totals = [M] if activation == "exactly" else list(range(M + 1))
    actions = np.concatenate([_compositions(m, cells) for m in totals])
    allowed = (actions[None, :, :] <= states[:, None, :]).all(axis=2)       # (S, A)
    sizes = [sp.n for sp in spaces]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    R0 = np.concatenate([t.R0 for t in types])
    R1 = np.concatenate([t.R1 for t in types])
    rewards = np.where(allowed, (states @ R0)[:, None] + actions @ (R1 - R0), 0.0)
    groups: dict = {}

    def group(k, m, active):
        """Type k's group laws of m arms (active or passive), and the joint index."""
        key = (k, m, active)
        if key not in groups:
            sp, law = spaces[k], laws[k][1 if active else 0]
            groups[key] = _group_laws(sp, law, m)
        return groups[key]

    joints: dict = {}

    def type_law(k, c, a):
        sp = spaces[k]
        m = int(a.sum())
        D1, D0 = group(k, m, True), group(k, sp.N - m, False)
        i = int(sp.rank(a[None, :], m)[0])
        j = int(sp.rank((c - a)[None, :], sp.N - m)[0])
        if (k, m) not in joints:
            A, B = sp.comps[m], sp.comps[sp.N - m]
            joints[(k, m)] = sp.rank((A[:, None, :] + B[None, :, :]).reshape(-1, sp.n),
                                     sp.N).reshape(len(A), len(B))
        return np.bincount(joints[(k, m)].ravel(), weights=np.outer(D1[i], D0[j]).ravel(),
                           minlength=len(sp.comps[sp.N]))

    matrices = []
    for j, a in enumerate(actions):
        rows, cols, vals = [], [], []
        for s in np.flatnonzero(allowed[:, j]).tolist():
            joint = np.array([1.0])
            for k in range(len(types)):
                c = states[s, bounds[k]:bounds[k + 1]]
                joint = np.outer(joint, type_law(k, c, a[bounds[k]:bounds[k + 1]])).ravel()
            nz = np.flatnonzero(joint > 0)
            rows.append(np.full(nz.size, s))
            cols.append(nz)
            vals.append(joint[nz])
        if rows:
            r, c_, v = (np.concatenate(x) for x in (rows, cols, vals))
        else:
            r = c_ = np.array([], dtype=np.intp)
            v = np.array([])
        matrices.append(sparse.csr_array((v, (r, c_)), shape=(S, S)))
    finite = mdp.FiniteMDP(matrices, rewards, allowed)
    sol = mdp.policy_iteration(finite, discount=discount, evaluation="direct")
    start = int(np.flatnonzero((states == initial).all(axis=1))[0])
    if discount is None:
        values = np.asarray(sol.gain_by_state, dtype=float)
    else:
        values = np.asarray(sol.value, dtype=float)
    return ExactOptimum(value=float(values[start]), discount=discount, activation=activation,
                        M=M, n_states=S, model=model, method="policy_iteration",
                        states=states, actions=actions[sol.policy], values=values,
                        iterations=int(sol.iterations))


def _operator_optimum(arm, N, M, activation, discount, initial, model) -> ExactOptimum:
    from . import mdp

    space, states, (law0, law1) = _type_rows(arm, N)
    n = arm.n_states
    S = len(states)
    totals = [M] if activation == "exactly" else list(range(M + 1))
    # per total m of active arms: D1 (laws of the active arms), D0 (of the passive ones),
    # the joint index of u + w, and for every state the (a, b) pair of each of its actions
    blocks = []
    for m in totals:
        D1 = _group_laws(space, law1, m)
        D0 = _group_laws(space, law0, N - m)
        A, B = space.comps[m], space.comps[N - m]
        joint = space.rank((A[:, None, :] + B[None, :, :]).reshape(-1, n), N).reshape(
            len(A), len(B))
        blocks.append((m, A, D1, D0, joint))
    # the action list: (block, a) pairs; allowed where a <= c
    action_vectors = np.concatenate([b[1] for b in blocks])
    A_total = len(action_vectors)
    allowed = (action_vectors[None, :, :] <= states[:, None, :]).all(axis=2)
    b_index = np.full((S, A_total), -1, dtype=np.intp)
    offset = 0
    for m, A, D1, D0, joint in blocks:
        for j, a in enumerate(A):
            ok = allowed[:, offset + j]
            b_index[ok, offset + j] = space.rank(states[ok] - a, N - m)
        offset += len(A)
    rewards = np.where(allowed, (states @ arm.R0)[:, None]
                       + action_vectors @ (arm.R1 - arm.R0), -np.inf)
    beta = 1.0 if discount is None else discount
    ref = int(np.flatnonzero((states == initial).all(axis=1))[0])
    tau = 0.5 if discount is None else 1.0          # aperiodicity transform (average reward)

    def expected(v):
        E = np.empty((S, A_total))
        offset = 0
        for m, A, D1, D0, joint in blocks:
            table = D1 @ v[joint] @ D0.T                     # (a, b)
            cols = slice(offset, offset + len(A))
            E[:, cols] = np.where(allowed[:, cols],
                                  table[np.arange(len(A))[None, :],
                                        np.maximum(b_index[:, cols], 0)], 0.0)
            offset += len(A)
        return E

    def q_values(v):
        q = rewards + beta * expected(v)
        if discount is None:                   # relative values: T v - v[ref], then damped
            q = (1.0 - tau) * v[:, None] + tau * (q - v[ref])
        return q

    grid = (N + 1,) * (n - 1)
    use_fft = n > 1 and math.prod(grid) <= 1 << 18
    if use_fft:
        spectra = (space.spectra(law0), space.spectra(law1))
        at = (slice(None), *states[:, :n - 1].T)

    def transition(policy):
        """The policy's transition matrix: each row the law of the sum of its arms' moves, by
        the product of their transforms (or by convolving the active and passive laws)."""
        vectors = action_vectors[policy]
        if use_fft:
            P = np.empty((S, S))
            for start in range(0, S, 256):
                rows = slice(start, min(start + 256, S))
                a, b = vectors[rows], states[rows] - vectors[rows]
                product = np.ones((a.shape[0], *spectra[0].shape[2:]), dtype=complex)
                for x in range(n):
                    product *= spectra[1][x][a[:, x]] * spectra[0][x][b[:, x]]
                dense = np.fft.irfftn(product, s=grid, axes=tuple(range(1, n)))
                P[rows] = np.clip(dense[at], 0.0, None)
            return P / P.sum(axis=1, keepdims=True)
        P = np.zeros((S, S))
        offset = 0
        for m, A, D1, D0, joint in blocks:
            mine = np.flatnonzero((policy >= offset) & (policy < offset + len(A)))
            for s in mine.tolist():
                law = np.outer(D1[policy[s] - offset], D0[b_index[s, policy[s]]])
                P[s] = np.bincount(joint.ravel(), weights=law.ravel(), minlength=S)
            offset += len(A)
        return P

    def evaluate(policy):
        P = transition(policy)
        r = rewards[np.arange(S), policy]
        if discount is not None:
            return np.linalg.solve(np.eye(S) - beta * P, r)
        A = np.eye(S) - P
        A[:, ref] += 1.0                       # (I - P) v + v[ref] 1 = r: v[ref] is the gain
        try:
            return np.linalg.solve(A, r)
        except np.linalg.LinAlgError:
            raise ValueError("exact_optimum: a policy of the counts MDP is multichain, which "
                             "the operator method cannot evaluate; use "
                             "method='policy_iteration' (raise max_states if needed)") from None

    scale = float(N * (np.abs(arm.R0).max() + np.abs(arm.R1).max()) + 1.0)
    # value iteration only gives policy iteration a start: a few sweeps, a rough tolerance
    sol = mdp.operator_policy_iteration(q_values, evaluate, S, vi_tol=0.05 * scale)
    v = np.asarray(sol.value, dtype=float)
    values = np.full(S, v[ref]) if discount is None else v
    return ExactOptimum(value=float(values[ref]), discount=discount, activation=activation,
                        M=M, n_states=S, model=model, method="operator", states=states,
                        actions=action_vectors[sol.policy], values=values,
                        iterations=int(sol.pi_iterations))
