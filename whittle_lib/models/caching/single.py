"""One content under a penalty: the optimal threshold policy, its Whittle index and structure
(Sec. 3)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ... import mdp
from ..._validation import check_integer, check_real, real_array
from ...indices import WhittleIndexResult, whittle_indices
from .assumptions import _check_content, theorem51_bound
from .content import CachingContent

__all__ = ["ContentSolution", "solve_content", "solve_content_many", "StructureCheck",
           "check_structure"]

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

    Policy iteration on the ``2K`` states (:func:`whittle_lib.mdp.dense_policy_iteration`:
    dense linear solves, exact for a finite discounted MDP, [P94]_ Sec. 6.4), in costs. The
    threshold check allows ties within ``1e-10`` times the cost scale: a state where both actions
    are optimal may be put on either side of the threshold. This is
    ``solve_content_many(content, [lam], discount=discount)[0]``: one implementation.

    Parameters
    ----------
    content : CachingContent
    lam : float
        Penalty per slot in the cache (the paper's :math:`\lambda`; our subsidy for passivity),
        finite.
    discount : float
        In (0, 1).

    Returns
    -------
    ContentSolution

    Examples
    --------
    >>> c = CachingContent.birth_death([0.0, 1.0, 2.0], [0.0, 1.0, 1.5], up0=0.2, down0=0.2,
    ...                                up1=0.3, down1=0.1, fetch_cost=1.0)
    >>> solve_content(c, 0.5, discount=0.9).thresholds
    (1, 1)
    """
    lam = check_real("lam", lam, -np.inf, np.inf, low_open=True, high_open=True)
    return solve_content_many(content, [lam], discount=discount)[0]


def _thresholds_many(adv, tol):
    """:func:`_threshold` of every row of ``adv`` (shape (m, K)) with its ``tol`` (m,): the
    same comparisons, on arrays."""
    m, K = adv.shape
    below = adv <= tol[:, None]                     # not caching allowed at that level
    above = adv >= -tol[:, None]                    # caching allowed
    # tau works iff below[:tau].all() and above[tau:].all()
    pre = np.concatenate([np.ones((m, 1), bool), np.logical_and.accumulate(below, axis=1)], 1)
    suf = np.concatenate([np.logical_and.accumulate(above[:, ::-1], axis=1)[:, ::-1],
                          np.ones((m, 1), bool)], 1)
    ok = pre & suf
    first = np.argmax(ok, axis=1)
    return [int(t) if o else None for t, o in zip(first, ok.any(axis=1))]


def solve_content_many(content: CachingContent, lams, *, discount: float) -> tuple:
    """:func:`solve_content` at every penalty of ``lams``, the same numbers bit for bit.

    Parameters
    ----------
    content : CachingContent
    lams : array_like of float, shape (m,)
        Penalties per slot in the cache, finite.
    discount : float
        In (0, 1).

    Returns
    -------
    tuple of ContentSolution
        ``solve_content(content, lam, discount=discount)`` for each ``lam``.

    Notes
    -----
    One :func:`whittle_lib.mdp.dense_policy_iteration_many` over the penalties (the chain does
    not depend on the penalty, only the cost of caching does) and the threshold test on
    arrays: the arithmetic of :func:`solve_content`, without its per-call overhead.

    Examples
    --------
    >>> c = CachingContent.birth_death([0.0, 1.0, 2.0], [0.0, 1.0, 1.5], up0=0.2, down0=0.2,
    ...                                up1=0.3, down1=0.1, fetch_cost=1.0)
    >>> [s.thresholds for s in solve_content_many(c, [-5.0, 0.5, 50.0], discount=0.9)]
    [(0, 0), (1, 1), (3, 3)]
    """
    _check_content(content)
    theorem51_bound(discount)  # validates the discount
    beta = float(discount)
    lams = real_array("lams", lams, low=-np.inf, high=np.inf, low_open=True, high_open=True)
    if lams.ndim != 1:
        raise ValueError(f"lams must be a 1-d array of finite penalties, got {lams!r}")
    m = lams.size
    if m == 0:
        return ()
    arm = content.arm()
    c0 = -arm.R0
    c1 = -arm.R1[None, :] + lams[:, None]                 # each row: -arm.R1 + float(lam)
    top = np.maximum(np.abs(c0).max(), np.abs(c1).max(axis=1))
    scale = np.maximum(1.0, top)
    tol = 1e-10 * scale / (1.0 - beta)
    rewards = np.stack([np.broadcast_to(-c0, c1.shape), -c1], axis=2)     # r[i, s, a]
    sols = mdp.dense_policy_iteration_many(np.stack([arm.P0, arm.P1]), rewards, discount=beta,
                                           tol=tol)
    K = content.n_levels
    adv = np.array([s.q[:, 1] - s.q[:, 0] for s in sols])
    t0, t1 = _thresholds_many(adv[:, :K], tol), _thresholds_many(adv[:, K:], tol)
    out = []
    for lam, s, a, u, v in zip(lams.tolist(), sols, adv, t0, t1):
        V = -s.value + 0.0
        cache = s.policy.astype(bool)
        for arr in (a, V, cache):
            arr.setflags(write=False)
        out.append(ContentSolution(float(lam), V, a, cache,
                                   None if u is None or v is None else (u, v), s.iterations))
    return tuple(out)


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
    _check_content(content)
    theorem51_bound(discount)  # validates the discount
    n_grid = check_integer("n_grid", n_grid, 2)
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
    for sol in solve_content_many(content, lams, discount=discount):
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
