r"""Theorem 3.1 of [PS23]_ searched for counterexamples under both readings of Assumption 1's
lost quantifier (chain probabilities constant in the level, or level-dependent), and a
counterexample verified by solvers independent of the index engine.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib import mdp
from whittle_lib.models.caching import (ASSUMPTION_TOL, CachingContent, check_assumptions,
                                       check_structure, solve_content, theorem51_bound)

from .instances import TIE_RTOL, quiet_whittle_indices
from .readings import assumption_readings, lemma2_condition
from .theorem3 import Theorem3Checks, index_drops

__all__ = ["random_grid_content", "ThresholdFailure", "ThresholdSearch", "threshold_search",
           "ThresholdCounterexample", "verify_threshold_failure", "Theorem31Search",
           "theorem31_search", "theorem31_readings"]


def random_grid_content(n_levels: int, *, rng, level_dependent: bool) -> CachingContent:
    r"""A random birth-death content (Fig. 1) on a decimal grid, Assumptions 1 and 2 built in.

    Assumption 1's quantifier was lost in extraction ("For all ..."): it may range over the
    levels (the chain's probabilities may depend on the level, Assumption 1 holding at each)
    or the chain may have one up and one down probability, as in every example of Sec. 6.
    ``level_dependent`` picks the family. Per level (or once for all levels): ``up0`` and
    ``down0`` uniform on {0, 0.01, ..., 0.49}, ``up1`` uniform on {up0, ..., 0.5} and ``down1``
    on {0, ..., down0} (Assumption 1). Missing cost :math:`C(r_1) = 0` with slopes uniform on
    {0.1, 0.2, ..., 3}, sorted non-increasing (Assumption 2); fetch cost uniform on
    {0, 0.1, ..., 9.9}. Every number lies on its grid (hundredths, tenths), so an instance
    printed with two decimals *is* the instance. Assumption 3 and stochastic monotonicity are
    not built in: filter with :func:`whittle_lib.models.caching.check_assumptions`.

    Parameters
    ----------
    n_levels : int
        ``K >= 2``; the levels are ``0, ..., K-1``.
    rng : numpy.random.Generator or seed
        Keyword-only.
    level_dependent : bool
        Keyword-only: one draw per level, or one for the whole chain.

    Returns
    -------
    CachingContent

    Examples
    --------
    >>> c = random_grid_content(4, rng=1, level_dependent=False)
    >>> bool(np.all(np.diff(np.diag(c.P0, 1)) == 0)), check_assumptions(c).assumption1
    (True, True)
    """
    K = int(n_levels)
    if K != n_levels or K < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}")
    return _grid_content(K, _grid_numbers(K, np.random.default_rng(rng), level_dependent))


def _grid_numbers(K: int, rng, level_dependent: bool) -> tuple:
    """The draws of :func:`random_grid_content`, in its order: ``(up0, down0, up1, down1)``
    in hundredths (arrays of ``K`` or 1 levels), the missing costs and the fetch cost."""
    n = K if level_dependent else 1
    up0, down0 = rng.integers(0, 50, n), rng.integers(0, 50, n)     # hundredths
    up1 = up0 + rng.integers(0, 51 - up0)
    down1 = down0 - rng.integers(0, down0 + 1)
    slopes = np.sort(rng.integers(1, 31, K - 1))[::-1]               # tenths
    cost = np.concatenate([[0], np.cumsum(slopes)]) / 10.0
    d = rng.integers(0, 100) / 10.0
    return up0, down0, up1, down1, cost, d


def _grid_content(K: int, numbers: tuple) -> CachingContent:
    """The content of :func:`random_grid_content` from its draws (:func:`_grid_numbers`)."""
    up0, down0, up1, down1, cost, d = numbers
    per_level = lambda a: np.broadcast_to(a / 100.0, (K,))
    return CachingContent.birth_death(np.arange(K, dtype=float), cost, up0=per_level(up0),
                                      down0=per_level(down0), up1=per_level(up1),
                                      down1=per_level(down1), fetch_cost=d)


def _clearly_not_assumption3(K: int, numbers: list) -> np.ndarray:
    """For draws of :func:`_grid_numbers`: where ``P0 C`` or ``P1 C`` is so far from concave
    that :func:`whittle_lib.models.caching.check_assumptions` must reject the content.

    Vectorised over the draws: ``(P C)(k) = (1 - p_k - q_k) C_k + p_k C_{k+1} + q_k C_{k-1}``
    for the birth-death chain (``p_{K-1} = q_0 = 0``) and the second differences of it on the
    unit-spaced levels. This sum rounds differently from the check's product ``P @ C`` (by
    ~1e-15 times the costs), so a content is rejected here only where a second difference
    exceeds twice the check's tolerance; the others are built and checked exactly.
    """
    C = np.array([nb[4] for nb in numbers])
    scale = np.maximum(1.0, np.maximum(np.abs(C).max(axis=1), K - 1.0))
    up_next = np.concatenate([C[:, 1:], C[:, -1:]], axis=1)
    down_next = np.concatenate([C[:, :1], C[:, :-1]], axis=1)
    bad = np.zeros(len(numbers), dtype=bool)
    for i_up, i_down in ((0, 1), (2, 3)):
        p = np.array([np.broadcast_to(nb[i_up] / 100.0, (K,)) for nb in numbers])
        q = np.array([np.broadcast_to(nb[i_down] / 100.0, (K,)) for nb in numbers])
        p[:, -1] = 0.0
        q[:, 0] = 0.0
        PC = (1.0 - p - q) * C + p * up_next + q * down_next
        bad |= np.diff(PC, n=2, axis=1).max(axis=1) > 2.0 * ASSUMPTION_TOL * scale
    return bad


def _accepted_grid_contents(K: int, n: int, *, rng, level_dependent: bool, batch: int = 64):
    """:func:`accepted_contents` of :func:`random_grid_content`: the same contents, the same
    number drawn and the same state of ``rng`` at the end, faster.

    The draws are made one content at a time as there (the same calls on ``rng``), ``batch``
    at once; those that :func:`_clearly_not_assumption3` rejects are not built, the others
    are built and checked as there. When the ``n``-th content is accepted inside a batch,
    ``rng`` is put back in the state it had just after drawing it.
    """
    out, tried = [], 0
    while len(out) < n:
        numbers, states = [], []
        for _ in range(batch):
            numbers.append(_grid_numbers(K, rng, level_dependent))
            states.append(rng.bit_generator.state)
        clearly_bad = _clearly_not_assumption3(K, numbers)
        for nb, state, bad in zip(numbers, states, clearly_bad):
            tried += 1
            if bad:
                continue
            c = _grid_content(K, nb)
            if check_assumptions(c).assumptions_1_to_3:
                out.append(c)
                if len(out) == n:
                    rng.bit_generator.state = state
                    break
    return out, tried


def _upper_set(cache_row) -> bool:
    """Whether the levels where caching is chosen are ``{k >= tau}`` for some ``tau``."""
    row = np.asarray(cache_row, dtype=bool)
    return bool(np.all(np.diff(row.astype(int)) >= 0))


@dataclass(frozen=True, eq=False)
class ThresholdFailure:
    """One content and discount at which, for some penalty, no optimal policy is a threshold
    policy (:func:`threshold_search`).

    Attributes
    ----------
    content : CachingContent
    discount : float
    indices : numpy.ndarray, shape (2, K)
        The exact Whittle indices ``W(k, c)`` (the arm is indexable).
    drops : tuple of (int, int)
        ``(c, k)`` where ``W(k + 1, c) < W(k, c)`` (:func:`index_drops`).
    penalty : float
        The midpoint of the largest drop: at this penalty caching is strictly optimal in
        ``(k, c)`` and strictly not in ``(k + 1, c)``.
    confirmed : bool
        A direct solve at ``penalty`` (:func:`whittle_lib.models.caching.solve_content`,
        policy iteration) finds no optimal threshold policy either.
    lemma2 : bool
        :func:`lemma2_condition` of the content.
    """

    content: CachingContent
    discount: float
    indices: np.ndarray
    drops: tuple
    penalty: float
    confirmed: bool
    lemma2: bool

    @property
    def drop(self) -> float:
        """The largest fall ``W(k, c) - W(k + 1, c)``."""
        return max(self.indices[c, k] - self.indices[c, k + 1] for c, k in self.drops)


def _threshold_failure(content: CachingContent, discount: float):
    """``(indexable, failure or None)`` for one content at one discount."""
    res = quiet_whittle_indices(content, discount)
    if not res.indexable:
        return False, None
    W = res.indices.reshape(2, -1).copy()
    drops = tuple(index_drops(W, tol=TIE_RTOL * max(1.0, float(np.abs(W).max()))))
    if not drops:
        return True, None
    c, k = max(drops, key=lambda ck: W[ck[0], ck[1]] - W[ck[0], ck[1] + 1])
    penalty = 0.5 * float(W[c, k] + W[c, k + 1])
    confirmed = solve_content(content, penalty, discount=discount).thresholds is None
    W.setflags(write=False)
    return True, ThresholdFailure(content, float(discount), W, drops, penalty, bool(confirmed),
                                  lemma2_condition(content))


@dataclass(frozen=True, eq=False)
class ThresholdSearch:
    r"""Theorem 3.1 searched for counterexamples on random contents of one family
    (:func:`threshold_search`).

    A *threshold policy* (Definition 4, Theorem 3.1) caches in state :math:`(r, c)` iff
    :math:`r \ge \tau_c`: one threshold on the level per previous cache status ``c``. An
    indexable arm has an optimal threshold policy at every penalty iff ``W(k, c)`` is
    non-decreasing in ``k`` for each ``c``: where the index falls from level ``k`` to
    ``k + 1``, a penalty between the two values makes caching strictly optimal in ``(k, c)``
    and strictly not in ``(k + 1, c)``.

    Attributes
    ----------
    level_dependent : bool
        The family (:func:`random_grid_content`).
    n_levels : int
    discounts : tuple of float
    n_accepted, n_drawn : int
        Contents meeting Assumptions 1-3 and stochastic monotonicity, and contents drawn.
    n_lemma2 : int
        Accepted contents that also meet :func:`lemma2_condition`.
    failures : tuple of ThresholdFailure
    non_indexable : tuple of (CachingContent, float, bool)
        Checks the engine found non-indexable, with their discount and whether every
        optimal policy met by :func:`whittle_lib.models.caching.check_structure` (direct
        solves on a grid of penalties) is threshold.
    """

    level_dependent: bool
    n_levels: int
    discounts: tuple
    n_accepted: int
    n_drawn: int
    n_lemma2: int
    failures: tuple
    non_indexable: tuple

    @property
    def n_checks(self) -> int:
        """Contents times discounts."""
        return self.n_accepted * len(self.discounts)

    def n_failures(self, discount: float | None = None) -> int:
        """Checks with no optimal threshold policy at some penalty, at ``discount`` (all if
        ``None``): the failures, and the non-indexable checks that are not threshold."""
        keep = lambda b: discount is None or b == discount
        return (sum(keep(f.discount) for f in self.failures)
                + sum(keep(b) and not ok for _, b, ok in self.non_indexable))

    @property
    def confirmed(self) -> bool:
        """Every failure found by the indices is confirmed by a direct solve."""
        return all(f.confirmed for f in self.failures)

    @property
    def label(self) -> str:
        """``"level-dependent"`` or ``"constant"``."""
        return "level-dependent" if self.level_dependent else "constant"

    def clearest(self) -> ThresholdFailure | None:
        """The failure with the largest fall of the index relative to the largest ``|W|``
        (the counterexample farthest from a tie), or ``None``."""
        if not self.failures:
            return None
        return max(self.failures, key=lambda f: f.drop / max(1.0, float(np.abs(f.indices).max())))


def threshold_search(n_levels: int, n_accepted: int, discounts, *, rng,
                     level_dependent: bool) -> ThresholdSearch:
    """Search Theorem 3.1 for counterexamples: draw contents
    (:func:`random_grid_content`) until ``n_accepted`` meet Assumptions 1-3 and stochastic
    monotonicity (our readings, :func:`whittle_lib.models.caching.check_assumptions`), then
    at each discount test whether an optimal threshold policy exists at every penalty.

    The test is exact: the engine's indices and indexability test, then, where an index falls
    in ``k``, a direct solve at the penalty between the two values
    (:attr:`ThresholdFailure.confirmed`). Non-indexable arms, for which the indices do not
    decide, are judged by :func:`whittle_lib.models.caching.check_structure`.

    Returns
    -------
    ThresholdSearch
    """
    discounts = tuple(float(b) for b in discounts)
    for b in discounts:
        theorem51_bound(b)                              # validates the discount
    if int(n_levels) != n_levels or n_levels < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}")
    if int(n_accepted) != n_accepted or n_accepted < 1:
        raise ValueError(f"n_accepted must be an integer >= 1, got {n_accepted!r}")
    # accepted_contents(random_grid_content, ...), without building the clear rejections
    contents, drawn = _accepted_grid_contents(int(n_levels), int(n_accepted),
                                              rng=np.random.default_rng(rng),
                                              level_dependent=level_dependent)
    failures, non_indexable = [], []
    for content in contents:
        for b in discounts:
            indexable, failure = _threshold_failure(content, b)
            if not indexable:
                non_indexable.append((content, b, check_structure(content, discount=b).threshold))
            elif failure is not None:
                failures.append(failure)
    return ThresholdSearch(bool(level_dependent), int(n_levels), discounts, len(contents), drawn,
                           sum(lemma2_condition(c) for c in contents), tuple(failures),
                           tuple(non_indexable))


@dataclass(frozen=True, eq=False)
class ThresholdCounterexample:
    """A failure of Theorem 3.1 verified by solvers independent of the index engine
    (:func:`verify_threshold_failure`).

    Attributes
    ----------
    failure : ThresholdFailure
    cache : numpy.ndarray of bool, shape (2, K)
        The optimal action per state ``(c, k)`` at the failure's penalty, by policy iteration
        (:func:`whittle_lib.models.caching.solve_content`).
    advantage : numpy.ndarray, shape (2, K)
        Cost of not caching minus cost of caching there (caching optimal where > 0).
    vi_cache : numpy.ndarray of bool, shape (2, K)
        The greedy action of value iteration (:func:`whittle_lib.mdp.value_iteration`).
    vi_gap : float
        ``max |V_VI - V_PI|`` over the states.
    vi_iterations : int
    threshold_excess : numpy.ndarray, shape (K + 1, K + 1)
        For every threshold policy ``(tau_0, tau_1)``: its largest excess cost over the
        optimum, ``max_x V_tau(x) - V*(x)``, each ``V_tau`` by one dense LU solve.
    assumptions : dict
        ``{label: holds}``, :func:`assumption_readings` of the content.
    """

    failure: ThresholdFailure
    cache: np.ndarray
    advantage: np.ndarray
    vi_cache: np.ndarray
    vi_gap: float
    vi_iterations: int
    threshold_excess: np.ndarray
    assumptions: dict

    @property
    def best_threshold(self) -> tuple:
        """``(tau_0, tau_1)`` of the threshold policy closest to optimal."""
        t0, t1 = np.unravel_index(np.argmin(self.threshold_excess), self.threshold_excess.shape)
        return int(t0), int(t1)

    @property
    def rows_not_threshold(self) -> tuple:
        """The cache statuses ``c`` whose optimal caching levels are not ``{k >= tau}``."""
        return tuple(c for c in (0, 1) if not _upper_set(self.cache[c]))

    def chain_table(self) -> str:
        """Per level ``k``: ``C(k)``, the rows ``P0[k]`` and ``P1[k]``, the indices and the
        optimal action ``a*(k, c)`` after each cache status at the failure's penalty."""
        f = self.failure
        c, K = f.content, f.content.n_levels
        row = lambda P, k: " ".join(f"{v:4.2f}" for v in P[k])
        w = 5 * K - 1
        num = lambda v: f"{v:8.4f}".replace("-0.0000", " 0.0000")    # no sign on a rounded 0
        act = lambda a: "cache" if a else "no"
        lines = [f"{'k':>2s}  {'C(k)':>4s}  {'P0[k, :]':<{w}s}  {'P1[k, :]':<{w}s}  "
                 f"{'W(k, 0)':>8s}  {'W(k, 1)':>8s}  {'a*(k, 0)':>8s}  {'a*(k, 1)':>8s}"]
        lines += [f"{k:2d}  {c.missing_cost[k]:4.1f}  {row(c.P0, k)}  {row(c.P1, k)}  "
                  f"{num(f.indices[0, k])}  {num(f.indices[1, k])}  {act(self.cache[0, k]):>8s}  "
                  f"{act(self.cache[1, k]):>8s}" for k in range(K)]
        return "\n".join(lines)

    def report(self) -> str:
        """The instance, its optimal actions (:meth:`chain_table`), and the checks: value
        iteration, every threshold policy, the assumptions."""
        f = self.failure
        K = f.content.n_levels
        yes = lambda b: "holds" if b else "fails"
        rows = self.rows_not_threshold
        t0, t1 = self.best_threshold
        cached = "; ".join(f"{{{', '.join(str(k) for k in np.flatnonzero(self.cache[c]))}}}"
                           for c in rows)
        same = "yes" if np.array_equal(self.vi_cache, self.cache) else "no"
        gap = "1e-06" if self.vi_gap < 1e-6 else f"{self.vi_gap:.0e}"
        lines = [f"beta = {f.discount}, fetch cost d = {f.content.fetch_cost:g}, penalty for "
                 f"caching lambda = {f.penalty:.4f} (our subsidy);",
                 "a*(k, c): the optimal action at lambda (policy iteration), W: Whittle indices",
                 self.chain_table(),
                 f"row(s) c = {', '.join(map(str, rows))}: cached at levels {cached}, not of the "
                 "form {k >= tau}: no threshold policy",
                 f"value iteration ({self.vi_iterations} sweeps): same actions: {same}; values "
                 f"within {gap} of policy iteration's",
                 f"all {(K + 1) ** 2} threshold policies (tau_0, tau_1), each by an exact LU "
                 f"solve: the best, ({t0}, {t1}),",
                 f"  costs {self.threshold_excess[t0, t1]:.4f} more than optimal from some state; "
                 "smallest |advantage| of an optimal action: "
                 f"{np.abs(self.advantage).min():.4f}",
                 "the assumptions, as we read them:"]
        lines += [f"  {label.strip():44s} {yes(ok)}" for label, ok in self.assumptions.items()]
        return "\n".join(lines)


def verify_threshold_failure(failure: ThresholdFailure, *, vi_epsilon: float = 1e-10
                             ) -> ThresholdCounterexample:
    r"""Check a failure of Theorem 3.1 with solvers independent of the index engine.

    At the failure's penalty: the optimal policy by policy iteration
    (:func:`whittle_lib.models.caching.solve_content`), the greedy policy of value iteration
    (:func:`whittle_lib.mdp.value_iteration`, [P94]_ Algorithm 6.3.1, to ``vi_epsilon``
    times the cost scale), and the exact cost of every threshold policy
    :math:`(\tau_0, \tau_1)` (one dense LU solve of :math:`(I - \beta P_\tau) V = c_\tau`
    each): if every one costs more than the optimum from some state, no threshold policy is
    optimal. The assumptions are printed as we read them (:func:`assumption_readings`).

    Returns
    -------
    ThresholdCounterexample
    """
    c, beta, lam = failure.content, failure.discount, failure.penalty
    K = c.n_levels
    sol = solve_content(c, lam, discount=beta)
    arm = c.arm()
    cost0, cost1 = -arm.R0, -arm.R1 + lam                   # costs, as solve_content
    scale = max(1.0, float(np.abs(np.concatenate([cost0, cost1])).max()))
    model = mdp.FiniteMDP((arm.P0, arm.P1), np.stack([-cost0, -cost1], axis=1))   # r[s, a]
    vi = mdp.value_iteration(model, discount=beta, epsilon=vi_epsilon * scale / (1.0 - beta))
    excess = np.empty((K + 1, K + 1))
    levels = np.tile(np.arange(K), 2)
    status = np.repeat([0, 1], K)
    for t0, t1 in np.ndindex(K + 1, K + 1):
        act = levels >= np.where(status == 0, t0, t1)
        P = np.where(act[:, None], arm.P1, arm.P0)
        V = np.linalg.solve(np.eye(2 * K) - beta * P, np.where(act, cost1, cost0))
        excess[t0, t1] = float((V - sol.cost).max())
    vi_cache = vi.policy.reshape(2, K).astype(bool)
    for arr in (excess, vi_cache):
        arr.setflags(write=False)
    return ThresholdCounterexample(
        failure, sol.cache.reshape(2, K), sol.advantage.reshape(2, K), vi_cache,
        float(np.abs(-vi.value - sol.cost).max()), int(vi.iterations), excess,
        assumption_readings(c))


@dataclass(frozen=True, eq=False)
class Theorem31Search:
    """Theorem 3.1 searched under both readings of Assumption 1's quantifier
    (:func:`theorem31_search`).

    Attributes
    ----------
    searches : tuple of ThresholdSearch
        For each number of levels, the constant family then the level-dependent one.
    counterexample : ThresholdCounterexample or None
        The clearest failure (:meth:`ThresholdSearch.clearest`) of the level-dependent
        search with the fewest levels that has one, verified
        (:func:`verify_threshold_failure`).
    """

    searches: tuple
    counterexample: ThresholdCounterexample | None

    def family(self, level_dependent: bool) -> tuple:
        """The searches of one family."""
        return tuple(s for s in self.searches if s.level_dependent == level_dependent)

    def counts(self, level_dependent: bool, *, lemma2: bool = False) -> tuple:
        """``(not threshold, checks)`` over the searches of one family; with ``lemma2``, only
        the contents that meet :func:`lemma2_condition`."""
        fam = self.family(level_dependent)
        if lemma2:
            return (sum(f.lemma2 for s in fam for f in s.failures),
                    sum(s.n_lemma2 * len(s.discounts) for s in fam))
        return sum(s.n_failures() for s in fam), sum(s.n_checks for s in fam)

    def table(self) -> str:
        """Per family and ``K``: contents drawn and accepted, those meeting Lemma 2's
        condition, the checks that are not threshold at each discount, and whether every
        failure is confirmed by a direct solve."""
        bs = self.searches[0].discounts
        lines = [f"{'family':15s}  {'K':>2s}  {'drawn':>6s}  {'accepted':>8s}  {'Lemma 2':>7s}  "
                 + "  ".join(f"{f'beta = {b:g}':>11s}" for b in bs) + "  confirmed"]
        for s in self.searches:
            lines.append(f"{s.label:15s}  {s.n_levels:2d}  {s.n_drawn:6d}  {s.n_accepted:8d}  "
                         f"{s.n_lemma2:7d}  " + "  ".join(
                             f"{f'{s.n_failures(b)} of {s.n_accepted}':>11s}" for b in bs)
                         + f"  {('yes' if s.confirmed else 'NO') if s.failures else '-':>9s}")
        return "\n".join(lines)


def theorem31_search(n_levels, n_accepted: int, discounts, *, rng) -> Theorem31Search:
    """:func:`threshold_search` for each ``K`` of ``n_levels``, on the constant family and then
    the level-dependent one, all drawing from ``rng`` in that order; the clearest failure of
    the fewest levels verified (:func:`verify_threshold_failure`)."""
    rng = np.random.default_rng(rng)
    searches = tuple(threshold_search(K, n_accepted, discounts, rng=rng, level_dependent=ld)
                     for K in n_levels for ld in (False, True))
    found = [s for s in sorted(searches, key=lambda s: s.n_levels)
             if s.level_dependent and s.failures]
    counterexample = verify_threshold_failure(found[0].clearest()) if found else None
    return Theorem31Search(searches, counterexample)


def _instance_text(ce: ThresholdCounterexample) -> str:
    """The counterexample in one line, for the results note."""
    f = ce.failure
    c = f.content
    rows = lambda P: "; ".join(" ".join(f"{v:.2f}" for v in r) for r in P)
    cached = "; ".join(f"c = {cc}: {{{', '.join(str(k) for k in np.flatnonzero(ce.cache[cc]))}}}"
                       for cc in (0, 1))
    return (f"K = {c.n_levels}, beta = {f.discount}, d = {c.fetch_cost:g}, C = "
            f"({', '.join(f'{v:g}' for v in c.missing_cost)}), P0 rows ({rows(c.P0)}), P1 rows "
            f"({rows(c.P1)}): at penalty {f.penalty:.4f} caching is optimal at levels {cached}; "
            f"each of the {ce.threshold_excess.size} threshold policies costs at least "
            f"{ce.threshold_excess.min():.4f} more than optimal from some state (exact LU), and "
            "value iteration gives the same actions")


def theorem31_readings(checks: Theorem3Checks, search: Theorem31Search) -> tuple[dict, str]:
    """``(verdicts, evidence)`` of Theorem 3.1 of [PS23] (a threshold policy is optimal,
    :math:`\\tau_1 \\le \\tau_0`) judged under both readings of Assumption 1's lost quantifier,
    each with and without the condition the proof of Lemma 2 needs: constant chains (our grid,
    ``checks.a``, and the constant searches) and level-dependent chains (the level-dependent
    searches, and family (c) of ``checks``): the arguments after the key of
    ``Comparison.claim_by_reading``."""
    a, a2, c = checks.a, checks.a2, checks.c
    const, const2 = search.counts(False), search.counts(False, lemma2=True)
    lev, lev2 = search.counts(True), search.counts(True, lemma2=True)
    c_bad = c.n - c.threshold
    sizes = "; ".join(f"K = {s.n_levels}: {s.n_failures()} of {s.n_checks}"
                      for s in search.family(True))
    Ks = " and ".join(str(s.n_levels) for s in search.family(True))
    bs = ", ".join(f"{b:g}" for b in search.searches[0].discounts)
    n_acc = search.searches[0].n_accepted
    readings = {
        f"constant chains (one up and one down probability, as in Sec. 6): threshold in "
        f"{a.threshold}/{a.n} grid checks and {const[1] - const[0]}/{const[1]} random checks":
            a.threshold == a.n and const[0] == 0,
        f"constant chains with Lemma 2's condition (no down-boost): {a2.threshold}/{a2.n} grid, "
        f"{const2[1] - const2[0]}/{const2[1]} random": a2.threshold == a2.n and const2[0] == 0,
        f"level-dependent chains (Assumption 1 at every level): not threshold in {lev[0]} of "
        f"{lev[1]} random checks ({sizes})": lev[0] == 0,
        f"level-dependent chains with Lemma 2's condition: not threshold in {lev2[0] + c_bad} "
        f"of {lev2[1] + c.n} ({lev2[0]} of {lev2[1]} in the searches, {c_bad} of {c.n} in "
        "family (c))": lev2[0] + c_bad == 0}
    ce = search.counterexample
    a_ = checks.cost_scale
    power = (f"a failure rate above 3/{const[1]} = {300 / const[1]:.3f} % would have shown with "
             "95 % probability" if const[0] == 0 else "failures exist")
    evidence = (
        "Threshold policy (Def. 4): for each previous cache status c, cache iff the level "
        "r >= tau_c. tau_1 <= tau_0 is not counted: in this model the caching advantage in (k,1) "
        "is that in (k,0) plus d, so it holds whenever both rows are threshold. Grid (constant "
        f"chains): {len(checks.grid)} instances, up0, down0 in {{0.1,0.2,0.3}}, boosts in "
        f"{{0,0.1}}, C in {{{a_:g}sqrt(r), {a_:g}log(1+r)}}, d in {{1,3}}, K = {checks.n_levels}; "
        f"beta in {list(checks.grid_discounts)}; every distinct optimal policy solved directly. "
        f"Searches: random birth-death chains on a 0.01 grid, {n_acc} contents per family and "
        f"K = {Ks} meeting Assumption 1 (at every level), 2 (C concave non-decreasing), 3 (P0 C, "
        f"P1 C concave) and stochastic monotonicity, at beta in {{{bs}}}; exact indices, each "
        "failure confirmed by a direct solve. Constant chains: "
        f"{const[0]} failures in {const[1]} checks, so {power}; level-dependent chains: "
        f"{lev[0]} of {lev[1]}. Each failure is an index falling from a level to the next, so "
        "at a penalty between the two values caching is optimal at the lower level only: the "
        "cached levels of a row are not {r >= tau_c} (tau_1 <= tau_0 is not what fails)."
        + (f" Counterexample: {_instance_text(ce)}." if ce is not None else ""))
    return readings, evidence
