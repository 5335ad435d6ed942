"""Assumptions 1-3 of Sec. 3 and Theorem 5.1's bound; Sec. 4's repair of the missing costs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..._validation import check_discount, check_integer, check_real, real_array
from .content import CachingContent

#: Tolerance of :func:`check_assumptions` on the inequalities of Assumptions 1-3, relative to
#: the cost scale ``max(1, max |C|, r_K - r_1)`` (absolute on the probabilities of
#: Assumption 1 and the monotone chains): the checks compare sums of a few products of
#: probabilities and costs, exact to about 1e-15, so a violation smaller than this is taken to
#: be rounding. A content whose inequalities fail by more than this is rejected.
ASSUMPTION_TOL = 1e-12

__all__ = ["ASSUMPTION_TOL", "AssumptionReport", "check_assumptions", "is_concave_on",
           "popularity_perturbation", "theorem51_bound", "MissingCostRepair",
           "repair_missing_costs"]

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
    finite = dict(low=-np.inf, high=np.inf, low_open=True, high_open=True)
    levels = real_array("levels", levels, ndim=1, **finite)
    values = real_array("values", values, **finite)
    if levels.size < 2 or np.any(np.diff(levels) <= 0):
        raise ValueError(f"levels must be increasing, at least 2 of them, got {levels.tolist()}")
    if values.shape[-1:] != levels.shape:
        raise ValueError(f"values must have shape (..., {levels.size}) like levels, got "
                         f"{values.shape}")
    tol = check_real("tol", tol, 0.0, np.inf, high_open=True)
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
        Lemma 2 needs, ``(P1 - P0) V`` non-increasing in ``r``, is checked separately."""
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
    _check_content(content)
    r, C = content.levels, content.missing_cost
    scale = max(1.0, float(np.abs(C).max()), float(np.ptp(r)))
    tol = ASSUMPTION_TOL * scale
    a1 = _stochastically_dominates(content.P1, content.P0, ASSUMPTION_TOL)
    mono = (_stochastically_monotone(content.P0, ASSUMPTION_TOL)
            and _stochastically_monotone(content.P1, ASSUMPTION_TOL))
    a2 = bool(np.all(np.diff(C) >= -tol)) and is_concave_on(r, C, tol=tol)
    a3 = all(is_concave_on(r, P @ C, tol=tol) for P in (content.P0, content.P1))
    gens = np.minimum.outer(r, r[1:])  # column j-1: min(r, r_j)
    strong = all(is_concave_on(r, (P @ gens).T, tol=tol) for P in (content.P0, content.P1))
    return AssumptionReport(a1, mono, a2, a3, strong)


def popularity_perturbation(content: CachingContent) -> float:
    r"""How much caching changes popularity: :math:`\varepsilon = \max_k \mathrm{TV}(P_1(k,\cdot),
    P_0(k,\cdot))`, the largest total-variation distance between the rows (our reading of the
    :math:`\varepsilon` of Theorem 5.1, whose definition was lost)."""
    _check_content(content)
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

    The caching problem is discounted (eq. 4): ``discount`` in (0, 1); ``None`` (the average
    reward) is refused.
    """
    discount = check_discount(discount, average=False)
    return (1.0 - discount) / discount


def _check_content(content, name: str = "content") -> CachingContent:
    if not isinstance(content, CachingContent):
        raise TypeError(f"{name} must be a CachingContent, got {type(content).__name__}")
    return content


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
    _check_content(content)
    K = content.n_levels
    m = check_integer("n_changed", n_changed, 1, K)
    if not isinstance(nonnegative, (bool, np.bool_)):
        raise TypeError(f"nonnegative must be True or False, got {nonnegative!r}")
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
