r"""Caching contents with varying popularity as a restless bandit (Pavamana & Singh 2023).

The model, rebuilt from the prose of the paper (its inline mathematics was lost; every choice
below is ours where the paper's symbol did not survive):

* Content ``n`` has ``K`` request levels :math:`r_1 < \dots < r_K` (the numbers of requests in
  a slot, Fig. 1). Given the cache status :math:`a \in \{0, 1\}` of the content in the coming
  slot, the level of the coming slot is drawn from row ``k`` of ``P0`` (not cached) or ``P1``
  (cached); Fig. 1 is a birth-death chain (:func:`birth_death_matrix`), Sec. 5 allows any chain.
* Costs (Sec. 2.1.2): a *missing cost* :math:`C(r)` when the content is not cached and is
  requested :math:`r` times in the slot; a *fetch (caching) cost* ``d`` when a content that was
  not cached is cached; optionally a *holding cost* ``h`` per slot in the cache (Sec. 3.4).
  The expected one-slot cost of content ``n`` in state :math:`(k, c)` under action ``a`` is
  :math:`(1-a)\,(P_0 C)(k) + a\,(1-c)\,d + a\,h`, eq. (3)/(6).
* The state of one content is :math:`(k, c)`: the request level of the previous slot and the
  previous cache status. It is flattened as ``x = k + K * c``: states ``0..K-1`` are "not cached
  before", ``K..2K-1`` "cached before". The next state is :math:`(k', a)`.
* The joint problem: ``N`` contents, a cache of ``M`` contents (:math:`\sum_n a_n \le M`),
  discounted total cost (eq. 4), minimised.

Sign convention (``DESIGN.md``). The library maximises rewards and pays the Whittle subsidy for
the *passive* action. The paper minimises costs and charges a penalty :math:`\lambda` per slot
for *caching* (eq. 6; its "holding cost" reading, Sec. 3.4). A cost is a negative reward, so the
arm of :meth:`CachingContent.arm` has ``R0 = -(P0 C)`` and ``R1 = -((1-c) d + h)``; charging
:math:`\lambda` for the active action or paying it for the passive one differs by the constant
:math:`\lambda/(1-\beta)` in every value, so the decisions, and hence the indices, are the same
numbers: our subsidy *is* the paper's penalty. The Whittle index policy caches the ``M``
contents of largest index among those of *positive* index: at penalty 0 (the real problem,
no holding cost) a content with :math:`W(x) > 0` is worth caching on its own.

Functions working on the joint problem report *costs* (positive numbers, minimised), as the
paper does.

References
----------
.. [PS23] K. J. Pavamana, C. Singh, "Caching Contents with Varying Popularity using Restless
   Bandits", VALUETOOLS 2023, arXiv:2304.12227.
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse
from scipy.sparse import linalg as sparse_linalg

from ..arms import ROW_SUM_TOL, RestlessArm, _as_matrix
from ..indices import WhittleIndexResult, whittle_indices
from ..rmab import sample_next, top_m
from ..stats import ConfidenceInterval, mean_interval

__all__ = [
    "birth_death_matrix",
    "CachingContent",
    "AssumptionReport",
    "check_assumptions",
    "is_concave_on",
    "popularity_perturbation",
    "theorem51_bound",
    "ContentSolution",
    "solve_content",
    "StructureCheck",
    "check_structure",
    "random_content",
    "MissingCostRepair",
    "repair_missing_costs",
    "CachingProblem",
    "JointSolution",
    "solve_joint",
    "joint_transition_matrix",
    "joint_costs",
    "evaluate_joint_policy",
    "whittle_priorities",
    "greedy_priorities",
    "index_policy",
    "MonteCarloEstimate",
    "simulate_policy",
]

#: Tolerance (cost units, relative to the cost scale) for the inequalities of Assumptions 1-3:
#: the checks compare sums of a few products of probabilities and costs, exact to ~1e-15.
_ASSUMPTION_TOL = 1e-12


# --------------------------------------------------------------------------------------------
# One content
# --------------------------------------------------------------------------------------------


def birth_death_matrix(n_levels: int, up, down) -> np.ndarray:
    """The popularity chain of Fig. 1: one level up, one level down, or stay.

    Parameters
    ----------
    n_levels : int
        Number of request levels ``K`` (at least 2).
    up, down : float or array_like, shape (K,)
        Probability of moving one level up (down) from each level. At the top level there is
        no level above, and at the bottom none below: ``up[K-1]`` and ``down[0]`` are ignored
        and that probability mass stays put (a self-loop, which Fig. 1 does not draw).

    Returns
    -------
    numpy.ndarray, shape (K, K)
        Row-stochastic matrix.

    Raises
    ------
    ValueError
        On ``K < 2``, a probability outside [0, 1] or ``up + down > 1`` at some level.

    Examples
    --------
    >>> birth_death_matrix(3, 0.5, 0.25).tolist()
    [[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.0, 0.25, 0.75]]
    """
    K = int(n_levels)
    if K != n_levels or K < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}")
    p = np.broadcast_to(np.asarray(up, dtype=float), (K,)).copy()
    q = np.broadcast_to(np.asarray(down, dtype=float), (K,)).copy()
    for name, v in (("up", p), ("down", q)):
        if not np.all(np.isfinite(v)) or v.min() < 0 or v.max() > 1:
            raise ValueError(f"{name} must hold probabilities in [0, 1], got {v.tolist()}")
    p[-1] = 0.0
    q[0] = 0.0
    if np.any(p + q > 1 + ROW_SUM_TOL):
        k = int(np.argmax(p + q > 1 + ROW_SUM_TOL))
        raise ValueError(f"up + down must be <= 1 at every level, got {p[k] + q[k]!r} at level {k}")
    P = np.diag(1.0 - p - q)
    P[np.arange(K - 1), np.arange(1, K)] = p[:-1]
    P[np.arange(1, K), np.arange(K - 1)] = q[1:]
    return P


@dataclass(frozen=True, eq=False)
class CachingContent:
    r"""One content of the caching problem: its request levels, costs and popularity chains.

    Parameters
    ----------
    levels : array_like, shape (K,)
        Request levels :math:`r_1 < \dots < r_K` (numbers of requests in a slot), increasing.
    missing_cost : array_like, shape (K,)
        :math:`C(r_k)`, paid when the content is not cached and requested :math:`r_k` times.
    P0, P1 : array_like, shape (K, K)
        Popularity chain when the content is not cached (``P0``) and when it is (``P1``):
        ``Pa[k, j]`` is the probability that the coming slot has level ``j`` after level ``k``.
    fetch_cost : float
        ``d >= 0``: paid when a content that was not cached is cached (the paper's "caching
        cost", a switching cost).
    holding_cost : float, default 0
        ``h``: paid per slot in the cache (Sec. 3.4). It shifts every index by ``-h``.

    Raises
    ------
    ValueError
        On a bad shape, non-increasing levels, non-finite or negative costs, a non-stochastic
        matrix; the message names the parameter.

    Notes
    -----
    :meth:`arm` is the single-content problem of Sec. 3.1 as a :class:`RestlessArm` with the
    state ``x = k + K c`` (see the module docstring).

    Examples
    --------
    >>> P = birth_death_matrix(3, 0.3, 0.3)
    >>> content = CachingContent(levels=[0, 1, 2], missing_cost=[0, 1, 2], P0=P, P1=P,
    ...                          fetch_cost=1.0)
    >>> content.arm().n_states
    6
    """

    levels: np.ndarray
    missing_cost: np.ndarray
    P0: np.ndarray
    P1: np.ndarray
    fetch_cost: float
    holding_cost: float = 0.0

    def __post_init__(self) -> None:
        levels = np.array(self.levels, dtype=float)
        if levels.ndim != 1 or levels.size < 2:
            raise ValueError(f"levels must be a 1-d array of at least 2 levels, got shape "
                             f"{levels.shape}")
        if not np.all(np.isfinite(levels)) or np.any(np.diff(levels) <= 0):
            raise ValueError(f"levels must be finite and increasing, got {levels.tolist()}")
        K = levels.size
        cost = np.array(self.missing_cost, dtype=float)
        if cost.shape != (K,):
            raise ValueError(f"missing_cost must have shape ({K},) like levels, got {cost.shape}")
        if not np.all(np.isfinite(cost)) or cost.min() < 0:
            raise ValueError(f"missing_cost must be finite and >= 0, got {cost.tolist()}")
        P0 = _as_matrix("P0", self.P0, K)
        P1 = _as_matrix("P1", self.P1, K)
        for name in ("fetch_cost", "holding_cost"):
            v = float(getattr(self, name))
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        for arr in (levels, cost):
            arr.setflags(write=False)
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "missing_cost", cost)
        object.__setattr__(self, "P0", P0)
        object.__setattr__(self, "P1", P1)

    @classmethod
    def birth_death(cls, levels, missing_cost, *, up0, down0, up1, down1, fetch_cost,
                    holding_cost=0.0) -> "CachingContent":
        """A content with the birth-death popularity chains of Fig. 1.

        ``up0, down0`` (``up1, down1``) are the probabilities of one level up / down when the
        content is not cached (cached), as in :func:`birth_death_matrix`.
        """
        K = len(np.atleast_1d(levels))
        return cls(levels=levels, missing_cost=missing_cost,
                   P0=birth_death_matrix(K, up0, down0), P1=birth_death_matrix(K, up1, down1),
                   fetch_cost=fetch_cost, holding_cost=holding_cost)

    @property
    def n_levels(self) -> int:
        """Number of request levels ``K``."""
        return self.levels.size

    @property
    def expected_missing_cost(self) -> np.ndarray:
        r""":math:`(P_0 C)(k)`: expected missing cost of the coming slot if not cached."""
        return self.P0 @ self.missing_cost

    def arm(self) -> RestlessArm:
        r"""The single-content caching problem (Sec. 3.1) as a restless arm.

        State ``x = k + K c`` (level ``k`` of the previous slot, previous cache status ``c``);
        action 1 caches the content for the coming slot. Rewards are negative costs:
        ``R0[x] = -(P0 C)(k)``, ``R1[x] = -((1 - c) d + h)``. The subsidy for passivity of
        :mod:`whittle_lib.indices` equals the paper's penalty :math:`\lambda` for caching.
        """
        K = self.n_levels
        Z = np.zeros((K, K))
        P0 = np.block([[self.P0, Z], [self.P0, Z]])
        P1 = np.block([[Z, self.P1], [Z, self.P1]])
        R0 = -np.tile(self.expected_missing_cost, 2)
        R1 = -np.concatenate([np.full(K, self.fetch_cost), np.zeros(K)]) - self.holding_cost
        return RestlessArm(P0=P0, P1=P1, R0=R0, R1=R1)

    def with_missing_cost(self, missing_cost) -> "CachingContent":
        """The same content with other missing costs (Sec. 4)."""
        return CachingContent(self.levels, missing_cost, self.P0, self.P1, self.fetch_cost,
                              self.holding_cost)


# --------------------------------------------------------------------------------------------
# Assumptions 1-3 and the perturbation of Theorem 5.1
# --------------------------------------------------------------------------------------------


def is_concave_on(levels, values, *, tol: float = 0.0) -> bool:
    r"""Whether ``values`` is concave as a function of the points ``levels``.

    The slopes :math:`(f_{k+1} - f_k)/(r_{k+1} - r_k)` must be non-increasing, within ``tol``
    (the paper's eq. (1), with unequal spacing allowed).

    Examples
    --------
    >>> is_concave_on([0, 1, 3], [0, 2, 4]), is_concave_on([0, 1, 2], [0, 1, 3])
    (True, False)
    """
    levels = np.asarray(levels, dtype=float)
    values = np.asarray(values, dtype=float)
    slopes = np.diff(values, axis=-1) / np.diff(levels)
    return bool(np.all(np.diff(slopes, axis=-1) <= tol))


def _stochastically_dominates(A, B, tol) -> bool:
    """Row-wise first-order stochastic dominance: every upper tail of A[k] >= that of B[k]."""
    tails_A = np.cumsum(A[:, ::-1], axis=1)
    tails_B = np.cumsum(B[:, ::-1], axis=1)
    return bool(np.all(tails_A >= tails_B - tol))


def _stochastically_monotone(P, tol) -> bool:
    """Rows increase in k in first-order stochastic dominance ([P94], Sec. 4.7.2)."""
    tails = np.cumsum(P[:, ::-1], axis=1)
    return bool(np.all(np.diff(tails, axis=0) >= -tol))


@dataclass(frozen=True)
class AssumptionReport:
    """Which of the paper's assumptions a content satisfies (our readings, see Notes).

    Attributes
    ----------
    assumption1 : bool
        ``P1[k]`` stochastically dominates ``P0[k]`` for every ``k`` ("popularity grows more
        if cached"; for a birth-death chain: up1 >= up0 and down1 <= down0).
    monotone_chains : bool
        ``P0`` and ``P1`` are stochastically monotone (rows increase with ``k``), which the
        proof of Lemma 2 uses through [P94], Lemma 4.7.2.
    assumption2 : bool
        ``C`` non-decreasing and concave in ``r`` (eq. 1).
    assumption3 : bool
        ``P0 C`` and ``P1 C`` concave in ``r``: the only use of Assumption 3 the prose names
        (Remark 2, App. A); it involves ``C``, which is why Sec. 4 can restore it by changing
        ``C(r_1)``, ``C(r_2)``.
    preserves_concavity : bool
        The strong form the induction of Remark 2 needs: ``P0`` and ``P1`` map every concave
        non-decreasing function of ``r`` to a concave one.
    """

    assumption1: bool
    monotone_chains: bool
    assumption2: bool
    assumption3: bool
    preserves_concavity: bool

    @property
    def assumptions_1_to_3(self) -> bool:
        """Assumptions 1-3 as we test the theorems on them: ``assumption1``,
        ``monotone_chains``, ``assumption2`` and ``assumption3``. The stronger reading
        (``preserves_concavity``) is reported but not required: no birth-death chain of
        Fig. 1 that can move down satisfies it (see the notebook). The condition the proof of
        Lemma 2 needs, ``(P1 - P0) V`` non-increasing in ``r``, is
        :func:`whittle_lib.papers.caching_2023.lemma2_condition`."""
        return (self.assumption1 and self.monotone_chains and self.assumption2
                and self.assumption3)


def check_assumptions(content: CachingContent) -> AssumptionReport:
    r"""Check Assumptions 1-3 of [PS23]_ in the forms of :class:`AssumptionReport`.

    Notes
    -----
    The strong form of Assumption 3 is checked on the generators of the cone of concave
    non-decreasing functions on the levels, :math:`f_j(r) = \min(r, r_j)`, ``j = 2..K``, and
    the constants: a concave non-decreasing function is a constant plus a non-negative
    combination of them, and concavity of :math:`P f` is a set of linear inequalities.
    """
    r, C = content.levels, content.missing_cost
    scale = max(1.0, float(np.abs(C).max()), float(np.ptp(r)))
    tol = _ASSUMPTION_TOL * scale
    a1 = _stochastically_dominates(content.P1, content.P0, _ASSUMPTION_TOL)
    mono = (_stochastically_monotone(content.P0, _ASSUMPTION_TOL)
            and _stochastically_monotone(content.P1, _ASSUMPTION_TOL))
    a2 = bool(np.all(np.diff(C) >= -tol)) and is_concave_on(r, C, tol=tol)
    a3 = all(is_concave_on(r, P @ C, tol=tol) for P in (content.P0, content.P1))
    gens = np.minimum.outer(r, r[1:])  # column j-1: min(r, r_j)
    strong = all(is_concave_on(r, (P @ gens).T, tol=tol) for P in (content.P0, content.P1))
    return AssumptionReport(a1, mono, a2, a3, strong)


def popularity_perturbation(content: CachingContent) -> float:
    r"""How much caching changes popularity: :math:`\varepsilon = \max_k \mathrm{TV}(P_1(k,\cdot),
    P_0(k,\cdot))`, the largest total-variation distance between the rows (our reading of the
    :math:`\varepsilon` of Theorem 5.1, whose definition was lost)."""
    return float(0.5 * np.abs(content.P1 - content.P0).sum(axis=1).max())


def theorem51_bound(discount: float) -> float:
    r"""Our reconstruction of the bound of Theorem 5.1: indexable if
    :math:`\varepsilon \le (1-\beta)/\beta`.

    Notes
    -----
    With penalty :math:`\lambda` for caching, let :math:`G(k,c) = Q(k,c,1) - Q(k,c,0)` (cost of
    caching minus cost of not caching). Because the next cache status is the action,
    :math:`V(j,1) - V(j,0) = \min(0, G(j,0) - d) - \min(0, G(j,0))`, non-decreasing in
    :math:`G(j,0)`. Then :math:`\partial_\lambda G = 1 + \beta P_1 \partial_\lambda(V_1 - V_0)
    + \beta (P_1 - P_0)\partial_\lambda V_0 \ge 1 - \beta\varepsilon/(1-\beta)`, since
    :math:`\partial_\lambda V_0` (the discounted time in the cache) lies in
    :math:`[0, 1/(1-\beta)]`. By induction over value iteration :math:`G` is non-decreasing in
    :math:`\lambda` - the arm is indexable - whenever :math:`\varepsilon \le (1-\beta)/\beta`;
    in particular for every chain when :math:`\beta \le 1/2`, and for :math:`P_0 = P_1`
    (Sec. 5, Remark 5). This matches every statement of Sec. 5 that survived extraction.
    """
    discount = float(discount)
    if not 0.0 < discount < 1.0:
        raise ValueError(f"discount must lie in (0, 1), got {discount!r}")
    return (1.0 - discount) / discount


# --------------------------------------------------------------------------------------------
# The single-content problem with a penalty (Sec. 3)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ContentSolution:
    """Optimal solution of the single-content problem with penalty ``lam`` for caching.

    Attributes
    ----------
    lam : float
        The penalty per slot in the cache.
    cost : numpy.ndarray, shape (2K,)
        Optimal discounted cost :math:`V_\\lambda(x)`, state ``x = k + K c``.
    advantage : numpy.ndarray, shape (2K,)
        Cost of not caching minus cost of caching, :math:`Q(x,0) - Q(x,1)`: caching is
        optimal where it is >= 0.
    cache : numpy.ndarray of bool, shape (2K,)
        The optimal action chosen (``advantage > tol``; ties go to not caching).
    thresholds : tuple of int or None
        ``(tau_0, tau_1)``: level indices from which caching is optimal after "not cached" and
        "cached" (``K`` if never), when some optimal policy is a threshold policy
        (Definition 4) in both rows; ``None`` otherwise.
    iterations : int
        Policy-iteration steps.
    """

    lam: float
    cost: np.ndarray
    advantage: np.ndarray
    cache: np.ndarray
    thresholds: tuple | None
    iterations: int


def _threshold(adv_row, tol):
    """Smallest tau such that caching at levels >= tau and not below is optimal, or None."""
    K = adv_row.size
    for tau in range(K + 1):
        if np.all(adv_row[:tau] <= tol) and np.all(adv_row[tau:] >= -tol):
            return tau
    return None


def solve_content(content: CachingContent, lam: float, *, discount: float) -> ContentSolution:
    r"""Solve the single-content problem (6)-(8) with penalty ``lam`` exactly.

    Policy iteration on the ``2K`` states (dense linear solves; exact for a finite discounted
    MDP, [P94]_ Sec. 6.4), in costs. The threshold check allows ties within
    ``1e-10`` times the cost scale: a state where both actions are optimal may be put on
    either side of the threshold.

    Parameters
    ----------
    content : CachingContent
    lam : float
        Penalty per slot in the cache (the paper's :math:`\lambda`; our subsidy for passivity).
    discount : float
        In (0, 1).

    Returns
    -------
    ContentSolution
    """
    theorem51_bound(discount)  # validates the discount
    beta = float(discount)
    arm = content.arm()
    n = arm.n_states
    c0 = -arm.R0  # cost of not caching
    c1 = -arm.R1 + float(lam)  # cost of caching
    scale = max(1.0, float(np.abs(np.concatenate([c0, c1])).max()))
    tol = 1e-10 * scale / (1.0 - beta)
    cache = np.zeros(n, dtype=bool)
    for it in range(1, 10 * n + 100):
        P = np.where(cache[:, None], arm.P1, arm.P0)
        V = np.linalg.solve(np.eye(n) - beta * P, np.where(cache, c1, c0))
        q0 = c0 + beta * arm.P0 @ V
        q1 = c1 + beta * arm.P1 @ V
        adv = q0 - q1
        better = np.where(cache, adv < -tol, adv > tol)
        if not better.any():
            break
        cache = cache ^ better
    K = content.n_levels
    t0, t1 = _threshold(adv[:K], tol), _threshold(adv[K:], tol)
    thresholds = None if t0 is None or t1 is None else (t0, t1)
    adv.setflags(write=False)
    V.setflags(write=False)
    cache.setflags(write=False)
    return ContentSolution(float(lam), V, adv, cache, thresholds, it)


@dataclass(frozen=True, eq=False)
class StructureCheck:
    """Theorems 3.1 and 3.2 checked on one content (:func:`check_structure`).

    Attributes
    ----------
    index : WhittleIndexResult
        The exact indices and indexability verdict of the engine ([GGK23] algorithm).
    lams : numpy.ndarray
        Penalties at which the single-content problem was solved directly.
    threshold : bool
        At every penalty in ``lams`` some optimal policy is a threshold policy in both rows
        (Theorem 3.1, Definition 4).
    tau_order : bool
        At every penalty, ``tau_1 <= tau_0`` (Theorem 3.1, "Also, ...": a cached content is
        kept from a lower level on than an uncached one is fetched).
    passive_monotone : bool
        The passive sets of the direct solutions grow with the penalty (indexability,
        Definition 2, checked independently of the engine on ``lams``).
    """

    index: WhittleIndexResult
    lams: np.ndarray
    threshold: bool
    tau_order: bool
    passive_monotone: bool


def check_structure(content: CachingContent, *, discount: float,
                    n_grid: int = 21) -> StructureCheck:
    """Check Theorem 3.1 (threshold policy) and Theorem 3.2 (indexability) on one content.

    The optimal policy can change only where the penalty crosses a Whittle index, so the
    single-content problem is solved (:func:`solve_content`) at the midpoints between
    consecutive distinct indices, one below the smallest and one above the largest, plus
    ``n_grid`` equally spaced penalties over the same range: every distinct optimal policy of
    an indexable content is met. For a non-indexable content the range is that of the
    one-slot costs scaled by ``1 / (1 - discount)``.

    Returns
    -------
    StructureCheck
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        index = whittle_indices(content.arm(), discount=discount)
    w = np.unique(index.indices[np.isfinite(index.indices)])
    if index.indexable and w.size:
        lo, hi = w[0] - 1.0, w[-1] + 1.0
        lams = np.concatenate([[lo], 0.5 * (w[1:] + w[:-1]), [hi], np.linspace(lo, hi, n_grid)])
    else:
        arm = content.arm()
        span = float(np.abs(np.concatenate([arm.R0, arm.R1])).max()) / (1.0 - discount) + 1.0
        lams = np.linspace(-span, span, 10 * n_grid)
    lams = np.unique(lams)
    threshold = tau_order = passive_monotone = True
    prev_passive = None
    for lam in lams:
        sol = solve_content(content, float(lam), discount=discount)
        if sol.thresholds is None:
            threshold = False
        elif sol.thresholds[1] > sol.thresholds[0]:
            tau_order = False
        scale = max(1.0, float(np.abs(sol.cost).max()))
        passive = sol.advantage <= 1e-9 * scale
        if prev_passive is not None and np.any(prev_passive & ~passive):
            passive_monotone = False
        prev_passive = passive
    lams.setflags(write=False)
    return StructureCheck(index, lams, threshold, tau_order, passive_monotone)


def random_content(n_levels: int, *, rng, chain: str = "birth-death",
                   closeness: float | None = None) -> CachingContent:
    """A random content, for checking the theorems over many instances (our generator).

    Parameters
    ----------
    n_levels : int
        ``K``; the levels are ``0, 1, ..., K-1``.
    rng : numpy.random.Generator or seed
        Keyword-only.
    chain : {"birth-death", "dense"}
        ``"birth-death"``: Fig. 1 chains with level-dependent up/down probabilities and
        Assumption 1 built in (``up1 >= up0``, ``down1 <= down0``), and a non-decreasing
        concave missing cost (Assumption 2). ``"dense"``: Sec. 5's arbitrary chains, rows
        drawn uniformly from the simplex, and missing costs uniform in [0, 10) (no assumption).
    closeness : float in [0, 1], optional
        Only for ``"dense"``: ``P1 = (1 - closeness) P0 + closeness Q`` with ``Q`` another random
        chain, so the :func:`popularity_perturbation` is at most ``closeness``.

    Returns
    -------
    CachingContent
        With a fetch cost uniform in [0, 10).
    """
    rng = np.random.default_rng(rng)
    K = int(n_levels)
    levels = np.arange(K, dtype=float)
    d = 10.0 * rng.random()
    if chain == "birth-death":
        if closeness is not None:
            raise ValueError("closeness applies to chain='dense' only")
        up0 = 0.5 * rng.random(K)
        down0 = 0.5 * rng.random(K)
        up1 = up0 + (0.5 - up0) * rng.random(K)
        down1 = down0 * rng.random(K)
        slopes = np.sort(rng.random(K - 1))[::-1] * 3.0
        cost = np.concatenate([[0.0], np.cumsum(slopes)])
        return CachingContent.birth_death(levels, cost, up0=up0, down0=down0, up1=up1,
                                          down1=down1, fetch_cost=d)
    if chain != "dense":
        raise ValueError(f"chain must be 'birth-death' or 'dense', got {chain!r}")
    P0 = rng.dirichlet(np.ones(K), size=K)
    if closeness is None:
        P1 = rng.dirichlet(np.ones(K), size=K)
    else:
        eta = float(closeness)
        if not 0.0 <= eta <= 1.0:
            raise ValueError(f"closeness must lie in [0, 1], got {closeness!r}")
        P1 = (1.0 - eta) * P0 + eta * rng.dirichlet(np.ones(K), size=K)
        P1 /= P1.sum(axis=1, keepdims=True)
    return CachingContent(levels, 10.0 * rng.random(K), P0, P1, d)


# --------------------------------------------------------------------------------------------
# Section 4: change C(r_1), C(r_2) to restore Assumptions 2 and 3
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MissingCostRepair:
    """Result of :func:`repair_missing_costs`.

    Attributes
    ----------
    feasible : bool
        Whether missing costs satisfying Assumptions 2 and 3 exist with only the first
        ``n_changed`` levels changed.
    content : CachingContent or None
        The modified content (``None`` when infeasible, or when a modified cost is negative,
        which only ``nonnegative=False`` allows and :class:`CachingContent` does not hold).
    original, modified : numpy.ndarray
        The first ``n_changed`` missing costs before and after (``modified`` is ``nan`` when
        infeasible).
    change : float
        :math:`\\sum_i |C'(r_i) - C(r_i)|` (``nan`` when infeasible).
    """

    feasible: bool
    content: CachingContent | None
    original: np.ndarray
    modified: np.ndarray
    change: float


def _concavity_rows(levels):
    """Matrix ``S`` with ``S f >= 0`` iff ``f`` is concave on ``levels``; and ``D1`` (slopes)."""
    g = np.diff(levels)
    K = levels.size
    D1 = np.zeros((K - 1, K))
    D1[np.arange(K - 1), np.arange(K - 1)] = -1.0 / g
    D1[np.arange(K - 1), np.arange(1, K)] = 1.0 / g
    S = np.zeros((K - 2, K - 1))
    S[np.arange(K - 2), np.arange(K - 2)] = 1.0
    S[np.arange(K - 2), np.arange(1, K - 1)] = -1.0
    return S @ D1, D1


def repair_missing_costs(content: CachingContent, *, n_changed: int = 2,
                         nonnegative: bool = True) -> MissingCostRepair:
    r"""Sec. 4, Lemma 4 and Table 1: change only :math:`C(r_1), \dots, C(r_m)` (``m = n_changed``,
    the paper uses two) so that Assumptions 2 and 3 hold, as little as possible.

    A linear programme: minimise :math:`\sum_{i \le m} |C'(r_i) - C(r_i)|` subject to
    :math:`C'` non-decreasing and concave (Assumption 2), :math:`P_0 C'`, :math:`P_1 C'`
    concave (Assumption 3 as read in :class:`AssumptionReport`), :math:`C'(r_i) = C(r_i)` for
    :math:`i > m`, and, if ``nonnegative``, :math:`C' \ge 0`. Lemma 4's three properties do
    not include non-negativity; with :math:`C(r_1) = 0` it forbids lowering :math:`C(r_1)`.
    Lemma 4's case analysis (which cases admit a modification) is replaced by the LP's
    feasibility; the closed forms of Table 1 were lost.

    Returns
    -------
    MissingCostRepair
    """
    m = int(n_changed)
    K = content.n_levels
    if m != n_changed or not 1 <= m <= K:
        raise ValueError(f"n_changed must be an integer in 1..{K}, got {n_changed!r}")
    r, C = content.levels, content.missing_cost
    conc, D1 = _concavity_rows(r)
    G = np.vstack([D1, conc, conc @ content.P0, conc @ content.P1])  # G f >= 0
    free, fixed = slice(0, m), slice(m, K)
    # variables x = (f_free, t): minimise sum t with |f_i - C_i| <= t_i
    c = np.concatenate([np.zeros(m), np.ones(m)])
    A_ub = [np.hstack([-G[:, free], np.zeros((G.shape[0], m))])]
    b_ub = [G[:, fixed] @ C[fixed]]
    eye = np.eye(m)
    A_ub += [np.hstack([eye, -eye]), np.hstack([-eye, -eye])]
    b_ub += [C[free], -C[free]]
    res = optimize.linprog(c, A_ub=np.vstack(A_ub), b_ub=np.concatenate(b_ub),
                           bounds=[(0 if nonnegative else None, None)] * m + [(0, None)] * m,
                           method="highs")
    original = C[free].copy()
    if res.status != 0:
        return MissingCostRepair(False, None, original, np.full(m, np.nan), math.nan)
    new = C.copy()
    new[free] = res.x[:m] + 0.0  # + 0.0: no -0.0
    change = float(np.abs(new[free] - original).sum())
    if new.min() < 0:  # only without ``nonnegative``: the costs leave the model
        return MissingCostRepair(True, None, original, new[free].copy(), change)
    return MissingCostRepair(True, content.with_missing_cost(new), original, new[free].copy(),
                             change)


# --------------------------------------------------------------------------------------------
# The joint problem of N contents and a cache of M (Sec. 2.2)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CachingProblem:
    """``N`` contents and a cache of capacity ``M`` (Sec. 2), discounted cost.

    Parameters
    ----------
    contents : sequence of CachingContent
    capacity : int
        ``M``, ``1 <= M <= N``.
    discount : float
        In (0, 1).

    Notes
    -----
    Joint states: request levels :math:`(k_1, \\dots, k_N)` and the previous cache vector
    :math:`c` with :math:`\\sum c_n \\le M`. The feasible cache vectors are listed in
    :attr:`configs` (row ``i`` is configuration ``i``, ordered by number cached then
    lexicographically); a joint state is ``s = i * L + ravel_multi_index(k, shape)`` with
    ``L = prod(K_n)``; actions are configuration numbers, and the next configuration is the
    action.
    """

    contents: tuple
    capacity: int
    discount: float

    def __post_init__(self) -> None:
        contents = tuple(self.contents)
        if not contents or not all(isinstance(c, CachingContent) for c in contents):
            raise ValueError("contents must be a non-empty sequence of CachingContent")
        M = int(self.capacity)
        if M != self.capacity or not 1 <= M <= len(contents):
            raise ValueError(f"capacity must be an integer in 1..{len(contents)}, "
                             f"got {self.capacity!r}")
        theorem51_bound(self.discount)
        object.__setattr__(self, "contents", contents)
        object.__setattr__(self, "capacity", M)
        object.__setattr__(self, "discount", float(self.discount))
        N = len(contents)
        configs = [np.array(v) for m in range(M + 1)
                   for v in itertools.product((0, 1), repeat=N) if sum(v) == m]
        configs = np.array(configs, dtype=np.int8).reshape(-1, N)
        configs.setflags(write=False)
        object.__setattr__(self, "configs", configs)
        code = np.full(2 ** N, -1, dtype=np.intp)
        code[configs.astype(np.int64) @ (1 << np.arange(N))] = np.arange(len(configs))
        code.setflags(write=False)
        object.__setattr__(self, "_config_of_code", code)

    @property
    def n_contents(self) -> int:
        return len(self.contents)

    @property
    def shape(self) -> tuple:
        """Numbers of levels ``(K_1, ..., K_N)``."""
        return tuple(c.n_levels for c in self.contents)

    @property
    def n_states(self) -> int:
        return len(self.configs) * math.prod(self.shape)

    def config_index(self, cached) -> np.ndarray:
        """Configuration numbers of cache vectors ``cached`` (shape (..., N), 0/1); -1 if
        more than ``M`` are cached."""
        cached = np.asarray(cached, dtype=np.int64)
        return self._config_of_code[cached @ (1 << np.arange(self.n_contents))]

    def state_index(self, levels, cached) -> np.ndarray:
        """Joint state numbers of level vectors and cache vectors (shape (..., N))."""
        levels = np.asarray(levels)
        flat = np.ravel_multi_index(tuple(np.moveaxis(levels, -1, 0)), self.shape)
        return self.config_index(cached) * math.prod(self.shape) + flat

    def decode(self, states) -> tuple[np.ndarray, np.ndarray]:
        """Level vectors and cache vectors of joint state numbers (inverse of
        :meth:`state_index`)."""
        states = np.asarray(states)
        L = math.prod(self.shape)
        levels = np.stack(np.unravel_index(states % L, self.shape), axis=-1)
        return levels, np.asarray(self.configs)[states // L]


def joint_costs(problem: CachingProblem) -> np.ndarray:
    """Expected one-slot cost (3) of every joint state and action, shape (n_states, n_configs).

    ``cost[s, a] = sum_n (1 - a_n) (P0 C)_n(k_n) + a_n (1 - c_n) d_n + a_n h_n``.
    """
    cfg = np.asarray(problem.configs, dtype=float)
    L = math.prod(problem.shape)
    # missing part: depends on the levels and the action
    miss = np.zeros((L, len(cfg)))
    grids = np.meshgrid(*[np.arange(K) for K in problem.shape], indexing="ij")
    for n, content in enumerate(problem.contents):  # once per content, not per time step
        m = content.expected_missing_cost[grids[n].ravel()]
        miss += m[:, None] * (1.0 - cfg[:, n])[None, :]
    d = np.array([c.fetch_cost for c in problem.contents])
    h = np.array([c.holding_cost for c in problem.contents])
    switch = (cfg * (1.0 - cfg[:, None, :]) * d).sum(-1) + (cfg * h).sum(-1)[None, :]
    # state s = (config c, levels): cost[c, levels, a] = miss[levels, a] + switch[c, a]
    return (miss[None, :, :] + switch[:, None, :]).reshape(-1, len(cfg))


def _kron_chain(problem: CachingProblem, config) -> sparse.csr_array:
    """Level transition matrix (L x L) of the joint chain when the cache vector is ``config``."""
    out = sparse.csr_array(np.ones((1, 1)))
    for content, a in zip(problem.contents, config):
        out = sparse.kron(out, sparse.csr_array(content.P1 if a else content.P0), format="csr")
    return out


def _apply_chain(problem, V, config):
    """E[V(k') | k] for the level tensor V (shape ``problem.shape``) under cache vector ``config``:
    the product chain applied one axis at a time (no joint matrix is formed)."""
    for n, (content, a) in enumerate(zip(problem.contents, config)):
        P = content.P1 if a else content.P0
        V = np.moveaxis(np.tensordot(P, V, axes=([1], [n])), 0, n)
    return V


def joint_transition_matrix(problem: CachingProblem, policy) -> sparse.csr_array:
    """Transition matrix of the joint chain under a stationary policy (configuration per state).

    Raises
    ------
    ValueError
        If the policy has the wrong shape or uses a configuration number out of range.
    """
    policy = _check_joint_policy(problem, policy)
    L = math.prod(problem.shape)
    n_cfg = len(problem.configs)
    blocks = [[None] * n_cfg for _ in range(n_cfg)]
    for a in range(n_cfg):
        chain = _kron_chain(problem, problem.configs[a])
        for c in range(n_cfg):
            mask = (policy[c * L:(c + 1) * L] == a).astype(float)
            if mask.any():
                blocks[c][a] = sparse.diags_array(mask) @ chain
    for c in range(n_cfg):  # bmat needs a block in every block-row and block-column
        if blocks[c][c] is None:
            blocks[c][c] = sparse.csr_array((L, L))
    for a in range(n_cfg):
        if all(blocks[c][a] is None for c in range(n_cfg)):
            blocks[a][a] = sparse.csr_array((L, L))
    return sparse.csr_array(sparse.bmat(blocks, format="csr"))


def _check_joint_policy(problem, policy):
    policy = np.asarray(policy)
    if policy.shape != (problem.n_states,) or not np.issubdtype(policy.dtype, np.integer):
        raise ValueError(f"policy must be an integer array of shape ({problem.n_states},), "
                         f"got {policy.dtype} array of shape {policy.shape}")
    if policy.min() < 0 or policy.max() >= len(problem.configs):
        raise ValueError(f"policy must use configuration numbers in 0..{len(problem.configs) - 1}")
    return policy


def evaluate_joint_policy(problem: CachingProblem, policy) -> np.ndarray:
    """Exact discounted cost of a stationary policy from every joint state.

    Solves :math:`(I - \\beta P_\\pi) v = c_\\pi` with a sparse LU factorisation.

    Returns
    -------
    numpy.ndarray, shape (n_states,)
    """
    policy = _check_joint_policy(problem, policy)
    P = joint_transition_matrix(problem, policy)
    cost = joint_costs(problem)[np.arange(problem.n_states), policy]
    A = sparse.identity(problem.n_states, format="csc") - problem.discount * P.tocsc()
    return sparse_linalg.spsolve(sparse.csc_array(A), cost)


@dataclass(frozen=True, eq=False)
class JointSolution:
    """Exact optimum of the joint caching problem.

    Attributes
    ----------
    cost : numpy.ndarray, shape (n_states,)
        Optimal discounted cost from every joint state (exact evaluation of ``policy``).
    policy : numpy.ndarray of int, shape (n_states,)
        An optimal cache configuration in every joint state.
    vi_iterations : int
        Value-iteration sweeps before the policy-iteration polish.
    pi_iterations : int
        Policy-iteration steps (exact evaluations) until the policy was stable.
    residual : float
        Sup norm of the Bellman residual ``T v - v`` of the returned cost.
    """

    cost: np.ndarray
    policy: np.ndarray
    vi_iterations: int
    pi_iterations: int
    residual: float


def _bellman(problem, V, costs):
    """Q-values of every joint state and configuration (shape (n_states, n_configs))."""
    L = math.prod(problem.shape)
    n_cfg = len(problem.configs)
    cont = np.empty((L, n_cfg))
    V = V.reshape(n_cfg, *problem.shape)
    for a in range(n_cfg):  # next configuration = a
        cont[:, a] = _apply_chain(problem, V[a], problem.configs[a]).ravel()
    return costs + problem.discount * np.tile(cont, (n_cfg, 1))


def solve_joint(problem: CachingProblem, *, vi_tol: float = 1e-6,
                max_iter: int = 100) -> JointSolution:
    r"""The optimal caching policy of the joint problem (Sec. 2.2), exactly.

    Value iteration (the paper's method, Sec. 6) on the joint state with the product
    structure of the chain (each content's matrix applied along its axis), stopped when the
    sup-norm change falls below ``vi_tol``; then policy iteration from its greedy policy, each
    step an exact sparse solve, until the policy is stable ([P94]_ Sec. 6.4), which makes the
    result exactly optimal whatever ``vi_tol`` is.

    Returns
    -------
    JointSolution
    """
    beta = problem.discount
    costs = joint_costs(problem)
    V = np.zeros(problem.n_states)
    vi = 0
    for vi in range(1, 100_000):
        V_new = _bellman(problem, V, costs).min(axis=1)
        change = float(np.abs(V_new - V).max())
        V = V_new
        if change < vi_tol:
            break
    Q = _bellman(problem, V, costs)
    policy = np.argmin(Q, axis=1)
    for pi in range(1, max_iter + 1):
        V = evaluate_joint_policy(problem, policy)
        Q = _bellman(problem, V, costs)
        tol = 1e-12 * (1.0 + np.abs(V).max())
        best = np.argmin(Q, axis=1)
        keep = Q[np.arange(problem.n_states), policy] <= Q[np.arange(problem.n_states), best] + tol
        new = np.where(keep, policy, best)
        if np.array_equal(new, policy):
            break
        policy = new
    else:
        warnings.warn(f"solve_joint: policy iteration did not converge in {max_iter} steps",
                      RuntimeWarning, stacklevel=2)
    residual = float(np.abs(Q.min(axis=1) - V).max())
    for arr in (V, policy):
        arr.setflags(write=False)
    return JointSolution(V, policy, vi, pi, residual)


# --------------------------------------------------------------------------------------------
# Index policies: Whittle (Sec. 3.4) and greedy (Sec. 6)
# --------------------------------------------------------------------------------------------


def whittle_priorities(problem: CachingProblem) -> tuple[np.ndarray, ...]:
    """Whittle indices of every content, as priorities for :func:`index_policy`.

    Returns
    -------
    tuple of numpy.ndarray, one of shape (2K_n,) per content
        ``W_n[k + K_n c]``, from :func:`whittle_lib.indices.whittle_indices`.

    Raises
    ------
    ValueError
        If some content is not indexable (the Whittle index policy is then undefined; Sec. 4
        suggests changing its missing costs first, :func:`repair_missing_costs`).
    """
    out = []
    for n, content in enumerate(problem.contents):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res: WhittleIndexResult = whittle_indices(content.arm(), discount=problem.discount)
        if not res.indexable:
            raise ValueError(f"content {n} is not indexable ({res.status.value}); "
                             "its Whittle index is undefined")
        out.append(res.indices)
    return tuple(out)


def greedy_priorities(problem: CachingProblem) -> tuple[np.ndarray, ...]:
    """One-slot saving of caching each content, the priorities of the greedy policy (Sec. 6).

    ``g_n(k, c) = (P0 C)_n(k) - (1 - c) d_n - h_n``: the cost (3) of one slot is separable, so
    minimising it under the capacity constraint caches the (at most ``M``) contents of largest
    positive saving, exactly what :func:`index_policy` does with these priorities.
    """
    out = []
    for content in problem.contents:
        K = content.n_levels
        m = np.tile(content.expected_missing_cost, 2)
        fetch = np.concatenate([np.full(K, content.fetch_cost), np.zeros(K)])
        out.append(m - fetch - content.holding_cost)
    return tuple(out)


def _select(priority, capacity):
    """Cache vectors (0/1, shape (..., N)) choosing the ``capacity`` largest positive priorities
    (ties to the lower content number): the core's :func:`~whittle_lib.rmab.top_m`."""
    return top_m(priority, capacity, threshold=0.0).astype(np.int8)


def _priorities_at(problem, priorities, levels, cached):
    """Priority of every content at level vectors / cache vectors of shape (R, N)."""
    out = np.empty(levels.shape)
    for n, (content, pr) in enumerate(zip(problem.contents, priorities)):
        out[:, n] = pr[levels[:, n] + content.n_levels * cached[:, n]]
    return out


def _check_priorities(problem, priorities):
    priorities = tuple(np.asarray(p, dtype=float) for p in priorities)
    if len(priorities) != problem.n_contents or any(
            p.shape != (2 * c.n_levels,) for p, c in zip(priorities, problem.contents)):
        raise ValueError("priorities must hold one array of shape (2K_n,) per content")
    return priorities


def index_policy(problem: CachingProblem, priorities) -> np.ndarray:
    """The joint policy that caches the ``M`` contents of largest positive priority.

    With :func:`whittle_priorities` this is the Whittle index policy of Sec. 3.4 ("chooses
    those arms whose current states have the largest Whittle indices and, among these, caches
    those with positive Whittle indices"); with :func:`greedy_priorities` the greedy policy.
    Ties go to the lower content number; a priority of exactly 0 is not cached.

    Returns
    -------
    numpy.ndarray of int, shape (n_states,)
        Configuration number in every joint state (for :func:`evaluate_joint_policy`).
    """
    priorities = _check_priorities(problem, priorities)
    levels, cached = problem.decode(np.arange(problem.n_states))
    chosen = _select(_priorities_at(problem, priorities, levels, cached), problem.capacity)
    return problem.config_index(chosen)


@dataclass(frozen=True, eq=False)
class MonteCarloEstimate:
    """Monte Carlo estimate of a discounted cost.

    Attributes
    ----------
    mean, std_error : float
        Sample mean of the discounted costs of the runs and its standard error.
    interval : whittle_lib.stats.ConfidenceInterval
        The 95 % Student-t interval of the mean (:func:`whittle_lib.stats.mean_interval`);
        ``None`` for a single run.
    n_runs, horizon : int
    truncation : float
        Upper bound on the cost ignored by stopping at ``horizon``:
        ``beta^horizon * max one-slot cost / (1 - beta)``.
    """

    mean: float
    std_error: float
    interval: ConfidenceInterval | None
    n_runs: int
    horizon: int
    truncation: float


def simulate_policy(problem: CachingProblem, policy, *, initial_levels, initial_cached,
                    horizon: int, rng) -> MonteCarloEstimate:
    """Simulate a caching policy and estimate its discounted cost.

    Each run starts from its own initial state and pays the *realised* costs: the missing cost
    :math:`C(r)` of the level actually drawn for every uncached content, and the fetch and
    holding costs. Runs are simulated together (vectorised over runs and contents; a loop over
    time only).

    Parameters
    ----------
    problem : CachingProblem
    policy : tuple of arrays or numpy.ndarray of int
        Either per-content priorities (applied online as in :func:`index_policy`) or a joint
        policy (configuration per joint state, e.g. :attr:`JointSolution.policy`).
    initial_levels, initial_cached : array_like of int, shape (n_runs, N)
        Initial level indices and cache vectors, one row per run.
    horizon : int
        Number of slots simulated.
    rng : numpy.random.Generator or seed
        Keyword-only; passed to :func:`numpy.random.default_rng`.

    Returns
    -------
    MonteCarloEstimate
    """
    rng = np.random.default_rng(rng)
    levels = np.array(initial_levels, dtype=np.intp)
    cached = np.array(initial_cached, dtype=np.int8)
    N = problem.n_contents
    if levels.ndim != 2 or levels.shape[1] != N or cached.shape != levels.shape:
        raise ValueError(f"initial_levels and initial_cached must have shape (n_runs, {N}), "
                         f"got {levels.shape} and {cached.shape}")
    if np.any(levels < 0) or np.any(levels >= np.array(problem.shape)):
        raise ValueError("initial_levels out of range")
    if np.any(cached.sum(1) > problem.capacity) or np.any((cached != 0) & (cached != 1)):
        raise ValueError(f"initial_cached must be 0/1 with at most {problem.capacity} ones per run")
    horizon = int(horizon)
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    joint = not isinstance(policy, tuple)
    if joint:
        policy = _check_joint_policy(problem, policy)
        configs = np.asarray(problem.configs)
    else:
        policy = _check_priorities(problem, policy)
    R = levels.shape[0]
    Kmax = max(problem.shape)
    # cumulative transition rows, padded: cdf[n, a, k, j]
    cdf = np.ones((N, 2, Kmax, Kmax))
    Cpad = np.zeros((N, Kmax))
    for n, c in enumerate(problem.contents):
        K = c.n_levels
        for a, P in enumerate((c.P0, c.P1)):
            cdf[n, a, :K, :K] = np.cumsum(P, axis=1)
        Cpad[n, :K] = c.missing_cost
    d = np.array([c.fetch_cost for c in problem.contents])
    h = np.array([c.holding_cost for c in problem.contents])
    beta = problem.discount
    total = np.zeros(R)
    discount_t = 1.0
    nidx = np.arange(N)[None, :]
    for _ in range(horizon):
        if joint:
            action = configs[policy[problem.state_index(levels, cached)]]
        else:
            action = _select(_priorities_at(problem, policy, levels, cached), problem.capacity)
        u = rng.random((R, N))
        rows = cdf[nidx, action, levels]  # (R, N, Kmax)
        new_levels = np.minimum(sample_next(rows, u), np.array(problem.shape) - 1)
        slot = ((1 - action) * Cpad[nidx, new_levels] + action * (1 - cached) * d
                + action * h).sum(1)
        total += discount_t * slot
        discount_t *= beta
        levels, cached = new_levels, action
    max_slot = float(sum(c.missing_cost.max() + c.fetch_cost + c.holding_cost
                         for c in problem.contents))
    mean = float(total.mean())
    se = float(total.std(ddof=1) / math.sqrt(R)) if R > 1 else math.nan
    interval = mean_interval(total) if R > 1 else None
    return MonteCarloEstimate(mean, se, interval, R, horizon,
                              beta ** horizon * max_slot / (1 - beta))
