r"""What the test of Theorem 5.1 of [PS23]_ can detect: non-indexable arms searched on
purpose, moved toward "caching changes nothing" until they turn indexable, and set against the
bound; a non-indexable arm shown so by direct solves.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from whittle_lib import arithmetic
from whittle_lib.arms import RestlessArm
from whittle_lib.indices import is_indexable, is_indexable_many
from whittle_lib.models.caching import (CachingContent, popularity_perturbation, solve_content,
                                       theorem51_bound)

from .instances import _arm_arrays, quiet_whittle_indices, quietly_indexable, quietly_indexable_many

__all__ = ["random_sparse_content", "shrunk_content", "SegmentBoundary", "segment_boundary",
           "BoundSearch", "CLIMB_SCALES", "theorem51_power_search", "PassiveViolation",
           "passive_set_violation"]


def random_sparse_content(n_levels: int, *, rng, support: int = 2) -> CachingContent:
    """A random content with sparse popularity chains (Sec. 5 allows any chain): each row of
    ``P0`` and of ``P1`` puts Dirichlet(1) weights on 1 to ``support`` levels drawn uniformly;
    missing costs and fetch cost uniform in [0, 10) (Sec. 5 needs no assumption).

    Non-indexable arms are rare among dense chains (none in the draws of
    :func:`theorem51_check`); they exist among small sparse chains at a discount near one.

    Examples
    --------
    >>> c = random_sparse_content(3, rng=0)
    >>> int((c.P0 > 0).sum(axis=1).max()) <= 2
    True
    """
    K, s = int(n_levels), int(support)
    if K != n_levels or K < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}")
    if s != support or not 1 <= s <= K:
        raise ValueError(f"support must be an integer in 1..{K}, got {support!r}")
    rng = np.random.default_rng(rng)

    def chain():
        P = np.zeros((K, K))
        for k in range(K):
            m = int(rng.integers(1, s + 1))
            P[k, rng.choice(K, size=m, replace=False)] = rng.dirichlet(np.ones(m))
        return P

    P0, P1 = chain(), chain()
    return CachingContent(np.arange(K, dtype=float), 10.0 * rng.random(K), P0, P1,
                          10.0 * rng.random())


def shrunk_content(content: CachingContent, t: float) -> CachingContent:
    r"""The content with ``P1`` moved toward ``P0``: :math:`P_0 + t (P_1 - P_0)`, ``t`` in
    [0, 1]. Its :func:`~whittle_lib.models.caching.popularity_perturbation` is ``t`` times
    that of ``content``."""
    t = float(t)
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"t must lie in [0, 1], got {t!r}")
    return CachingContent(content.levels, content.missing_cost, content.P0,
                          content.P0 + t * (content.P1 - content.P0), content.fetch_cost,
                          content.holding_cost)


@dataclass(frozen=True, eq=False)
class SegmentBoundary:
    r"""Indexability along the segment :math:`P_0 + t (P_1 - P_0)`, ``t`` in [0, 1], of a
    non-indexable content (:func:`segment_boundary`).

    Attributes
    ----------
    content : CachingContent
        The content at ``t = 1`` (non-indexable).
    discount, eps, bound : float
        beta, the content's :math:`\varepsilon` and :math:`(1-\beta)/\beta`.
    t_first : float
        The smallest ``t`` found non-indexable: a grid point, or the upper end of a
        bisection from the last indexable grid point below it. The arm there is
        non-indexable.
    t_last : float
        The largest ``t < 1`` found indexable (grid, then bisection up to the first
        non-indexable grid point above it): moving ``P1`` by :math:`(1 - t)\varepsilon` makes
        the arm indexable.
    within : tuple of (int, int)
        ``(indexable, tested)`` over the grid points with :math:`t\varepsilon` at most the
        bound (Theorem 5.1 covers them).
    """

    content: CachingContent
    discount: float
    eps: float
    bound: float
    t_first: float
    t_last: float
    within: tuple

    @property
    def eps_first(self) -> float:
        """The smallest :math:`\\varepsilon` of a non-indexable arm found on the segment."""
        return self.t_first * self.eps

    @property
    def ratio(self) -> float:
        """``eps_first / bound``: at least 1 if the bound is right."""
        return self.eps_first / self.bound

    @property
    def distance(self) -> float:
        """:math:`(1 - t_{last})\\varepsilon`: an upper bound on how far (largest row TV
        distance of ``P1``) the content is from an indexable one."""
        return (1.0 - self.t_last) * self.eps


def segment_boundary(content: CachingContent, discount: float, *, n_grid: int = 20,
                     rtol: float = 1e-3) -> SegmentBoundary:
    """Where indexability begins and ends on the segment from ``P1 = P0`` (``t = 0``,
    indexable by Remark 5) to ``content`` (``t = 1``, non-indexable), by the engine's exact
    test on ``n_grid + 1`` equally spaced ``t``, then bisection to ``rtol`` relative on the
    first and on the last change of verdict.

    Raises
    ------
    ValueError
        If ``content`` is indexable at ``discount``.
    """
    if quietly_indexable(content, discount):
        raise ValueError("content must be non-indexable at the discount, got an indexable one")
    ts = np.linspace(0.0, 1.0, int(n_grid) + 1)
    # the grid's arms at once: P1 of shrunk_content(content, t) for every t < 1, the same
    # element-wise operations; P0, the costs and so the rewards do not depend on t
    m = ts.size - 1
    P1 = content.P0 + ts[:-1, None, None] * (content.P1 - content.P0)
    arrays = _arm_arrays(np.broadcast_to(content.P0, P1.shape), P1,
                         np.broadcast_to(content.expected_missing_cost, (m, content.n_levels)),
                         np.full(m, content.fetch_cost), np.full(m, content.holding_cost))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ok = np.append(is_indexable_many(*arrays, discount=discount), False)  # t = 1: content
    eps, bound = popularity_perturbation(content), theorem51_bound(discount)

    def shrunk_indexable(t):
        # quietly_indexable(shrunk_content(content, t), discount) on the same arm: P1 as
        # shrunk_content makes it, P0 and the rewards (which do not depend on t) from the grid's
        K = content.n_levels
        A1 = np.zeros((2 * K, 2 * K))
        A1[:K, K:] = A1[K:, K:] = content.P0 + float(t) * (content.P1 - content.P0)
        arm = RestlessArm(arrays[0][0], A1, arrays[2][0], arrays[3][0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return bool(is_indexable(arm, discount=discount))

    def bisect(lo, hi, want_low_ok):
        # lo indexable and hi not (want_low_ok) or the reverse; returns the pair narrowed
        while hi - lo > rtol * hi:
            mid = 0.5 * (lo + hi)
            if shrunk_indexable(mid) == want_low_ok:
                lo = mid
            else:
                hi = mid
        return lo, hi

    i = int(np.argmax(~ok))                         # first non-indexable grid point (> 0)
    t_first = bisect(ts[i - 1], ts[i], True)[1] if i > 0 else ts[0]
    j = int(np.flatnonzero(ok)[-1])                 # last indexable grid point (< 1)
    t_last = bisect(ts[j], ts[j + 1], True)[0]
    inside = ts * eps <= bound
    return SegmentBoundary(content, float(discount), eps, bound, float(t_first), float(t_last),
                           (int(ok[inside].sum()), int(inside.sum())))


def _perturbed(content: CachingContent, scale: float, rng) -> CachingContent:
    """``content`` with every non-zero probability, the missing costs and the fetch cost
    multiplied by ``exp(scale N(0, 1))`` (rows renormalised): the support is kept. The
    exponential is :func:`whittle_lib.arithmetic.exp` (in the notebooks' portable mode the same
    bits on every CPU), so the local search takes the same path everywhere."""
    def chain(P):
        Q = P * arithmetic.exp(scale * rng.standard_normal(P.shape))
        return Q / Q.sum(axis=1, keepdims=True)
    K = content.n_levels
    return CachingContent(content.levels,
                          content.missing_cost * arithmetic.exp(scale * rng.standard_normal(K)),
                          chain(content.P0), chain(content.P1),
                          content.fetch_cost * float(arithmetic.exp(scale * rng.standard_normal())))


@dataclass(frozen=True, eq=False)
class BoundSearch:
    r"""Non-indexable arms searched on purpose, set against the bound of Theorem 5.1
    (:func:`theorem51_power_search`).

    Attributes
    ----------
    n_levels, discounts : tuple
    n_draws : int
        Random sparse contents drawn per number of levels and discount.
    boundaries : dict
        ``{(K, beta): tuple of SegmentBoundary}``, one per non-indexable content drawn.
    closest : dict
        ``{beta: SegmentBoundary}``: the closest to the bound after the local search from
        the closest drawn one.
    n_steps, n_starts : int
        Steps of each local search, and local searches per discount.
    certificates : dict
        ``{beta: PassiveViolation or None}``: the arm of ``closest[beta]`` at its ``t_first``
        shown non-indexable by direct solves (:func:`passive_set_violation`).
    """

    n_levels: tuple
    discounts: tuple
    n_draws: int
    boundaries: dict
    closest: dict
    n_steps: int
    n_starts: int
    certificates: dict

    def counterexamples(self) -> int:
        """Non-indexable arms found with :math:`\\varepsilon` at most the bound (on the
        segments, or drawn)."""
        segs = [s for v in self.boundaries.values() for s in v] + list(self.closest.values())
        return sum(s.within[1] - s.within[0] for s in segs) + sum(s.ratio <= 1.0 for s in segs)

    def within(self) -> tuple:
        """``(indexable, tested)`` over every segment arm with :math:`\\varepsilon` at most
        the bound."""
        segs = [s for v in self.boundaries.values() for s in v] + list(self.closest.values())
        return (sum(s.within[0] for s in segs), sum(s.within[1] for s in segs))

    def drawn_closest(self, discount: float) -> float:
        """The smallest ``eps_first / bound`` among the drawn contents at ``discount``."""
        return min(s.ratio for (K, b), v in self.boundaries.items() if b == discount for s in v)

    def table(self) -> str:
        r"""Per (K, beta): arms drawn and the non-indexable ones; their smallest
        :math:`\varepsilon` as a multiple of the bound, as drawn (*eps/bound, drawn*) and
        after moving ``P1`` toward ``P0`` (*eps/bound, moved*, :attr:`SegmentBoundary.ratio`);
        and the median of how far ``P1`` had to move before the arm turned indexable
        (*median move*, :attr:`SegmentBoundary.distance`)."""
        heads = ("eps/bound, drawn", "eps/bound, moved", "median move")
        lines = [f"{'K':>2s}  {'beta':>5s}  {'bound':>7s}  {'non-indexable':>13s}  "
                 + "  ".join(f"{h:>16s}" for h in heads)]
        for (K, b), segs in self.boundaries.items():
            n = f"{len(segs)} of {self.n_draws}"
            if segs:
                r = min(s.eps / s.bound for s in segs)
                rest = (f"{r:16.1f}  {min(s.ratio for s in segs):16.2f}  "
                        f"{float(np.median([s.distance for s in segs])):16.3f}")
            else:
                rest = "  ".join(f"{'-':>16s}" for _ in heads)
            lines.append(f"{K:2d}  {b:5g}  {theorem51_bound(b):7.4f}  {n:>13s}  {rest}")
        return "\n".join(lines)

    def n_non_indexable(self) -> int:
        """Non-indexable contents among those drawn."""
        return sum(len(v) for v in self.boundaries.values())

    def closest_report(self) -> str:
        r"""Per discount, the non-indexable arm closest to the bound after the local search:
        ``K``, its :math:`\varepsilon` against the bound, the state that leaves the passive
        set and the direct solves that show it (:func:`passive_set_violation`)."""
        lines = [f"closest non-indexable arm per beta ({self.n_starts} local searches of "
                 f"{self.n_steps} steps from the closest drawn):"]
        for b, seg in self.closest.items():
            v = self.certificates[b]
            K = seg.content.n_levels
            lines.append(f"  beta = {b:g}: K = {K}, eps = {seg.eps_first:.5f} = {seg.ratio:.3f} x "
                         f"the bound {seg.bound:.5f}")
            if v is None:
                lines.append("    not confirmed by direct solves")
                continue
            err = "below 1e-08" if v.error < 1e-8 else f"{v.error:.0e}"
            lines += [f"    state (k, c) = ({v.state % K}, {v.state // K}): not caching optimal at "
                      f"lambda = {v.lam_passive:.3f}, caching at {v.lam_active:.3f}",
                      f"    (advantages {v.advantage_passive:.1e} and {v.advantage_active:.1e}, "
                      f"error bound {err}): " + ("certified" if v.certified else "NOT certified")]
        return "\n".join(lines)


#: Scales of the multiplicative perturbations of the local search of
#: :func:`theorem51_power_search`, used in turn: large steps first, then finer ones.
CLIMB_SCALES = (0.3, 0.1, 0.03)


def theorem51_power_search(n_levels, discounts, n_draws: int, n_steps: int, *, rng,
                           n_starts: int = 3) -> BoundSearch:
    r"""Search non-indexable arms on purpose and measure how close they come to the bound
    :math:`\varepsilon \le (1-\beta)/\beta` of Theorem 5.1 (our reconstruction).

    For every ``K`` of ``n_levels`` and discount: draw ``n_draws`` sparse contents
    (:func:`random_sparse_content`), test each with the engine, and shrink every
    non-indexable one toward ``P1 = P0`` (:func:`segment_boundary`): the smallest
    :math:`\varepsilon` of a non-indexable arm on its segment against the bound, and the
    distance to an indexable arm. Then, per discount, a local search from each of the
    ``n_starts`` drawn contents closest to the bound: ``n_steps`` multiplicative perturbations
    (:func:`_perturbed`, scales :data:`CLIMB_SCALES` in turn), keeping one when it is
    non-indexable and comes closer. A non-indexable arm with :math:`\varepsilon` at most the
    bound would refute the reconstruction; the smallest ratio found says which larger bounds
    the test could have refuted.

    Returns
    -------
    BoundSearch
    """
    rng = np.random.default_rng(rng)
    n_levels, discounts = tuple(int(k) for k in n_levels), tuple(float(b) for b in discounts)
    boundaries = {}
    for K in n_levels:
        for b in discounts:
            drawn = [random_sparse_content(K, rng=rng) for _ in range(int(n_draws))]
            ok = quietly_indexable_many(drawn, b)
            boundaries[K, b] = tuple(segment_boundary(c, b) for c, o in zip(drawn, ok) if not o)
    closest = {}
    for b in discounts:
        segs = sorted((s for (K, bb), v in boundaries.items() if bb == b for s in v),
                      key=lambda s: s.ratio)
        for start in segs[:int(n_starts)]:
            best = start
            for step in range(int(n_steps)):
                cand = _perturbed(best.content, CLIMB_SCALES[step % len(CLIMB_SCALES)], rng)
                if quietly_indexable(cand, b):
                    continue
                seg = segment_boundary(cand, b)
                if seg.ratio < best.ratio:
                    best = seg
            if b not in closest or best.ratio < closest[b].ratio:
                closest[b] = best
    certificates = {b: passive_set_violation(shrunk_content(seg.content, seg.t_first), b)
                    for b, seg in closest.items()}
    return BoundSearch(n_levels, discounts, int(n_draws), boundaries, closest, int(n_steps),
                       int(n_starts), certificates)


@dataclass(frozen=True, eq=False)
class PassiveViolation:
    r"""A state that leaves the passive set as the penalty grows, shown by direct solves
    (:func:`passive_set_violation`).

    Attributes
    ----------
    state : int
        ``x = k + K c``.
    lam_passive, lam_active : float
        Penalties, ``lam_passive < lam_active``.
    advantage_passive, advantage_active : float
        Cost of not caching minus cost of caching in ``state`` at each: negative (not
        caching optimal) at the smaller penalty, positive (caching optimal) at the larger.
    error : float
        A bound on the error of either advantage, from the Bellman residual of each solution
        (:math:`2\beta\rho/(1-\beta)` for residual :math:`\rho`).
    """

    state: int
    lam_passive: float
    lam_active: float
    advantage_passive: float
    advantage_active: float
    error: float

    @property
    def certified(self) -> bool:
        """Both advantages are farther from 0 than their error bound: the passive set
        shrinks, so the arm is not indexable (Definition 2)."""
        return -self.advantage_passive > self.error and self.advantage_active > self.error


def _solved_advantage(content: CachingContent, lam: float, discount: float):
    """``(advantage, error)``: :func:`whittle_lib.models.caching.solve_content` at ``lam``, and
    a bound on the error of its advantages from the Bellman residual of its cost."""
    sol = solve_content(content, lam, discount=discount)
    arm = content.arm()
    q = np.stack([-arm.R0 + discount * arm.P0 @ sol.cost,
                  -arm.R1 + lam + discount * arm.P1 @ sol.cost])
    rho = float(np.abs(q.min(axis=0) - sol.cost).max())
    return sol.advantage, 2.0 * discount * rho / (1.0 - discount)


def passive_set_violation(content: CachingContent, discount: float, *,
                          n_probe: int = 25) -> PassiveViolation | None:
    r"""Show by direct solves that a state leaves the passive set as the penalty grows.

    The engine (:func:`whittle_lib.indices.whittle_indices`) names the state ``x`` and the
    penalty :math:`\lambda_v` where it leaves; it only says where to look. With
    :math:`\mu` the index of ``x`` (where it joined the passive set) and
    :math:`w = \lambda_v - \mu`, the single-content problem is solved by policy iteration
    (:func:`whittle_lib.models.caching.solve_content`, independent of the engine) at
    :math:`\lambda_v \mp h w` for ``n_probe`` values of ``h`` from 1e-4 to 1; the pair where
    ``x`` is passive below and active above with the largest margin is returned, ``None``
    if there is none (or the engine finds the arm indexable).
    """
    res = quiet_whittle_indices(content, discount)
    if res.indexable:
        return None
    x, lam_v = int(res.violating_state), float(res.violation_subsidy)
    width = lam_v - float(res.indices[x])
    best = None
    for h in np.geomspace(1e-4, 1.0, int(n_probe)):
        (a1, e1), (a2, e2) = (_solved_advantage(content, lam_v + s * h * width, discount)
                              for s in (-1.0, 1.0))
        margin = min(-a1[x], a2[x])
        if margin > 0 and (best is None or margin > best[0]):
            best = (margin, PassiveViolation(x, lam_v - h * width, lam_v + h * width,
                                             float(a1[x]), float(a2[x]), max(e1, e2)))
    return None if best is None else best[1]
