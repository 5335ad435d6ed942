"""N restless arms under a budget: top-M, index rules, a simulator, exact periodic averages.

This is the core a reader uses on their own arms. It knows no paper: it takes finite
:class:`~whittle_lib.arms.RestlessArm` objects (or any dynamics with the same two methods, see
:class:`Dynamics`) and a priority rule, and activates each period the ``M`` arms of highest
priority. :func:`simulate` runs them (a list of arms and a list of index results will do),
with a warm-up, a discounted mode and a confidence interval over replications;
:func:`simulate_counts` runs many copies of one arm as the number of arms in each state, at a
cost that does not grow with their number; :func:`periodic_orbit` gives the exact long-run
average of a deterministic rule on deterministic dynamics.

The **activation rule** is the relaxation bound's (:func:`whittle_lib.bounds.relaxation_bound`),
with the same default: ``activation="at_most"`` activates the ``M`` highest priorities among
those strictly above 0 (an index is the subsidy at which an arm is indifferent: with no
subsidy, an arm of index ``<= 0`` would rather rest), so a period may activate fewer than ``M``;
``activation="exactly"`` activates the ``M`` highest whatever their sign. The at-most bound
bounds the first, the exactly bound the second.

Reward maximisation throughout; the subsidy ``lam`` of the relaxation is paid for the passive
action (Whittle 1988).

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world", *J. Appl.
   Probab.* 25A, 287-298, 1988 (the relaxation and its bound, Sec. 3-4; the index policy,
   Sec. 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ._results import ShortRepr, pandas as _pandas
from ._validation import (as_numeric, check_activation, check_budget, check_choice,
                          check_discount, check_integer, check_real, check_rng)
from .arms import RestlessArm
from .indices import WhittleIndexResult
from .stats import ConfidenceInterval, mean_interval

__all__ = [
    "PeriodicOrbit",
    "periodic_orbit",
    "top_m",
    "sample_next",
    "Dynamics",
    "FiniteArms",
    "IndexRule",
    "RmabSimulation",
    "simulate",
    "simulate_counts",
    "RelaxationBound",
    "relaxation_bound",
]

_TIES = ("lowest", "random")


def top_m(priority, M: int, *, ties: str = "lowest", threshold: float | None = None,
          rng=None) -> np.ndarray:
    """Boolean mask of the ``M`` largest priorities along the last axis.

    The low-level selection under :func:`simulate`'s activation rules: ``threshold=0.0`` is
    ``activation="at_most"``, no threshold is ``activation="exactly"``.

    Parameters
    ----------
    priority : array_like, shape (..., N)
    M : int
        Number selected in each row, ``0 <= M <= N``.
    ties : {"lowest", "random"}
        Among arms tied at the ``M``-th largest priority, take those of lowest number
        (deterministic), or a uniformly random subset (drawn from ``rng``, then required).
    threshold : float, optional
        Only priorities strictly above it are eligible, so a row may select fewer than ``M``
        (for example an index policy that never activates an arm whose index is not
        positive).
    rng : numpy.random.Generator or seed, optional
        Required with ``ties="random"`` (a result that changes at each call without saying so
        is refused); unused otherwise.

    Raises
    ------
    TypeError
        For priorities that are not numbers, ``M``, ``threshold``, ``ties`` or ``rng`` of the
        wrong type.
    ValueError
        For ``M`` outside ``[0, N]``, a nan priority or threshold, an unknown ``ties``, or
        ``ties="random"`` without ``rng``.

    Examples
    --------
    >>> top_m([3.0, 5.0, 5.0, 1.0], 1)
    array([False,  True, False, False])
    >>> top_m([3.0, 5.0, 5.0, -1.0], 3, threshold=0.0)
    array([ True,  True,  True, False])
    """
    ties = check_choice("ties", ties, _TIES)
    priority = np.asarray(as_numeric("priority", priority), dtype=float)
    if priority.ndim == 0:
        raise ValueError("priority must have one entry per arm (shape (..., N)), got a scalar")
    M = check_budget(M, priority.shape[-1])
    _check_no_nan(priority)
    if threshold is not None:
        threshold = check_real("threshold", threshold)
    if rng is not None or ties == "random":
        rng = check_rng(rng, required=ties == "random", why="with ties='random'")
    return _select(priority, M, ties, threshold, rng)


def _threshold(activation) -> float | None:
    """The selection threshold of an activation rule: 0 for at most ``M``, none for exactly."""
    return 0.0 if check_activation(activation) == "at_most" else None


def _select(priority: np.ndarray, M: int, ties: str, threshold, rng) -> np.ndarray:
    """:func:`top_m` on checked arguments."""
    if ties == "lowest":
        chosen = _top_m_lowest(priority, M)
    else:
        chosen = _top_m_random(priority, M, rng)
    if threshold is not None:
        chosen &= priority > threshold
    return chosen


def _check_no_nan(priority: np.ndarray) -> None:
    if np.isnan(priority).any():
        where = np.argwhere(np.isnan(priority))[0]
        arm = int(where[-1])
        row = "" if priority.ndim == 1 else f" (row {tuple(int(i) for i in where[:-1])})"
        raise ValueError(f"priority contains nan: arm {arm}{row}")


def _top_m_lowest(priority: np.ndarray, M: int) -> np.ndarray:
    """The ``M`` largest of each row, ties at the cut to the lowest numbers, in linear time.

    The same set as ranking by a stable sort of ``-priority`` and keeping ranks below ``M``
    (the set is unique: every arm above the ``M``-th largest value, then the tied arms of
    lowest number), found by one ``numpy.partition`` (introselect) instead of two sorts.
    """
    n = priority.shape[-1]
    if M == 0 or M == n:
        return np.full(priority.shape, M == n)
    if n < _SORT_BELOW:                          # short rows: two sorts cost less than a call
        return _ranks(priority) < M
    cut = _cut(priority, M)                      # the M-th largest value of each row
    chosen = priority >= cut
    count = np.count_nonzero(chosen, axis=-1)
    if np.all(count == M):                       # no tie straddles the cut
        return chosen
    # drop the surplus tied arms, those of highest number: keep the first `need` ties
    tied = priority == cut
    need = M - np.count_nonzero(priority > cut, axis=-1)
    surplus = tied & (np.cumsum(tied, axis=-1) > np.expand_dims(need, -1))
    chosen &= ~surplus
    return chosen


_SORT_BELOW = 256   # rows shorter than this are ranked by sorting (same set, less overhead)


def _ranks(priority: np.ndarray) -> np.ndarray:
    """Each arm's rank in its row by decreasing priority, ties to the lowest number (two stable
    sorts): the top ``M`` are the ranks below ``M``."""
    order = np.argsort(-priority, axis=-1, kind="stable")
    return np.argsort(order, axis=-1, kind="stable")


def _top_m_rows(priority: np.ndarray, M: np.ndarray) -> np.ndarray:
    """:func:`top_m` (ties to the lowest numbers) with a budget per row: ``M`` an integer
    array of ``priority.shape[:-1]`` (or broadcastable to it), each in ``0..n``. The same set in
    each row as ``top_m(row, M_row)``: short rows are ranked once by the same two stable sorts
    and cut at each row's budget; longer rows go through :func:`_top_m_lowest` once per
    distinct budget."""
    _check_no_nan(priority)
    n = priority.shape[-1]
    M = np.broadcast_to(M, priority.shape[:-1])
    if n < _SORT_BELOW:
        return _ranks(priority) < M[..., None]
    chosen = np.empty(priority.shape, dtype=bool)
    for m in np.unique(M):
        rows = M == m
        chosen[rows] = _top_m_lowest(priority[rows], int(m))
    return chosen


_SAMPLE = 4096      # priorities sampled to guess a lower bound of the cut on a long row


def _cut(priority: np.ndarray, M: int) -> np.ndarray:
    """The ``M``-th largest value of each row (``0 < M < n``), shape ``(..., 1)``.

    A long row with a small ``M`` first keeps the candidates at or above a guess (a quantile of
    an evenly strided sample of about ``_SAMPLE`` entries, set a little below the cut): when at
    least ``M`` remain, the ``M``-th largest of the candidates is that of the row, exactly;
    otherwise the whole row is partitioned. Either way the value is the same.
    """
    n = priority.shape[-1]
    if n < 16 * _SAMPLE or 8 * M > n:
        return np.partition(priority, n - M, axis=-1)[..., n - M:n - M + 1]
    flat = priority.reshape(-1, n)
    cuts = np.empty(flat.shape[0])
    for r, row in enumerate(flat):
        sample = row[::n // _SAMPLE]
        m = sample.size
        k = min(m, 2 * M * m // n + 32)         # twice the expected count above the cut
        low = np.partition(sample, m - k)[m - k]
        # a guess of -inf keeps only the finite entries (the M-th largest is one of them when
        # there are M: rows where most entries are -inf, as WhittleRule.screened gives)
        candidates = row[row > low] if low == -np.inf else row[row >= low]
        c = candidates.size
        if c < M:
            cuts[r] = np.partition(row, n - M)[n - M]
        else:
            cuts[r] = np.partition(candidates, c - M)[c - M]
    return cuts.reshape(*priority.shape[:-1], 1)


def _top_m_random(priority: np.ndarray, M: int, rng: np.random.Generator) -> np.ndarray:
    n = priority.shape[-1]
    if M == 0 or M == n:
        return np.full(priority.shape, M == n)
    flat = priority.reshape(-1, n)
    out = np.empty(flat.shape, dtype=bool)
    for row, p in enumerate(flat):
        cut = np.partition(p, n - M)[n - M]         # the M-th largest value
        above = p > cut
        need = M - int(np.count_nonzero(above))
        tied = np.flatnonzero(p == cut)
        if need < tied.size:
            tied = rng.permutation(tied)
        above[tied[:need]] = True
        out[row] = above
    return out.reshape(priority.shape)


def sample_next(cdf_rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling of the next states: the first ``j`` with ``u < cdf_rows[..., j]``.

    Parameters
    ----------
    cdf_rows : ndarray, shape (..., n)
        Cumulative transition rows, ``cdf_rows[..., -1]`` = 1 up to rounding.
    u : ndarray, shape (...)
        Uniform draws in [0, 1).

    Returns
    -------
    ndarray of int, shape (...)
        Clipped to ``n - 1``: a row whose rounded total is below ``u`` (by an ulp) still
        yields a state.

    Examples
    --------
    >>> sample_next(np.array([[0.2, 1.0], [0.2, 1.0]]), np.array([0.1, 0.5])).tolist()
    [0, 1]
    """
    n = cdf_rows.shape[-1]
    return np.minimum((u[..., None] >= cdf_rows).sum(-1), n - 1)


class Dynamics(Protocol):
    """What the simulator needs from N arms: a start, a step and what to record.

    ``initial(replications)`` returns the states (an array of shape ``(replications, N)``, or
    ``(N,)`` when ``replications`` is ``None``, or any object the rule and ``step`` understand);
    ``step(states, active, rng)`` returns ``(next_states, reward)``, ``reward`` the total of
    the N arms this period, one per replication; ``observe(states)`` returns a copy of what a
    recorded run keeps. :class:`FiniteArms` implements it for finite arms;
    :class:`whittle_lib.models.crawling.CrawlingDynamics` for the crawling model's continuous
    states.
    """

    n_arms: int

    def initial(self, replications: int | None): ...

    def step(self, states, active: np.ndarray, rng: np.random.Generator): ...

    def observe(self, states) -> np.ndarray: ...


def _arm_type_error(name: str, value) -> TypeError:
    """A TypeError that says what to pass instead of ``value``."""
    got = type(value).__name__
    hint = ""
    if isinstance(value, WhittleIndexResult):
        hint = (": a WhittleIndexResult holds an arm's indices; pass the arms themselves here "
                "and the results as the rule (IndexRule(results))")
    return TypeError(f"{name} must be a RestlessArm, got {got}{hint}")


def _distinct(items) -> tuple[list, np.ndarray, list[int]]:
    """The distinct objects of ``items`` (by identity), each item's number among them, and the
    position of each one's first occurrence: a million copies of a few arms are a few arms."""
    position: dict[int, int] = {}
    distinct, first = [], []
    kind = np.empty(len(items), dtype=np.intp)
    for i, item in enumerate(items):
        k = position.setdefault(id(item), len(distinct))
        if k == len(distinct):
            distinct.append(item)
            first.append(i)
        kind[i] = k
    return distinct, kind, first


@dataclass(frozen=True, eq=False, repr=False)
class FiniteArms(ShortRepr):
    """N finite arms, possibly of different sizes, as one vectorised system.

    Arms that are the same object share their tables, so ten thousand copies of a few arm
    types cost the memory of the types (``O(n**2)`` each), not of the copies (and
    :func:`simulate` checks an index result against each type once).

    Parameters
    ----------
    arms : sequence of RestlessArm
    x0 : array_like of int, shape (N,), optional
        Initial state of each arm, 0 by default.

    Notes
    -----
    Next states are drawn by inversion, one uniform ``u`` per arm and period: the next state
    is the first ``y`` with ``u < F(y)``, ``F`` the cumulative row (:func:`sample_next`), and
    the arm's last state when rounding leaves ``F(n - 1)`` below ``u``. The search starts from
    a guide table (the first candidate of each of ``G`` equal slices of [0, 1), ``G`` a power
    of two, so that the slice of ``u`` is exact), which makes a step cost a few passes over
    the N arms whatever ``n``, and gives the same state as scanning the whole row.
    """

    arms: tuple
    x0: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if isinstance(self.arms, RestlessArm):
            raise TypeError("arms must be a sequence of RestlessArm (one per arm), got one "
                            "RestlessArm: pass [arm] * N for N copies")
        try:
            arms = tuple(self.arms)
        except TypeError:
            raise TypeError("arms must be a sequence of RestlessArm, got "
                            f"{type(self.arms).__name__}") from None
        if not arms:
            raise ValueError("arms must be a non-empty sequence of RestlessArm, got none")
        for i, arm in enumerate(arms):
            if not isinstance(arm, RestlessArm):
                raise _arm_type_error(f"arms[{i}]", arm)
        # the distinct arm objects ("types"), and each arm's type
        types, kind, _ = _distinct(arms)
        type_sizes = np.array([a.n_states for a in types])
        sizes = type_sizes[kind]
        if self.x0 is None:
            x0 = np.zeros(len(arms), dtype=np.intp)
        else:
            x0 = as_numeric("x0", self.x0)
            if x0.dtype.kind not in "iu":
                raise TypeError(f"x0 must hold integer states, got dtype {x0.dtype}")
            if x0.shape != (len(arms),) or np.any((x0 < 0) | (x0 >= sizes)):
                raise ValueError("x0 must hold one integer state per arm, each in 0..n_i - 1, "
                                 f"got {self.x0!r}")
        n = int(type_sizes.max())
        # G slices per row, a power of two >= 8 n: a slice then rarely holds a jump of F, and
        # the guide's first candidate is the answer for most draws (G smaller when the guide
        # would pass 2**22 entries; any power of two gives the same states)
        G = 1 << max(8 * n - 1, 0).bit_length()
        while G > 1 and len(types) * 2 * n * G > 1 << 22:
            G //= 2
        # cumulative rows cdf[t, a, x, y] with the last column of each row set to +inf (the
        # last state takes whatever rounding leaves above F(n - 2)); padding is never reached
        cdf = np.full((len(types), 2, n, n), np.inf)
        rewards = np.zeros((len(types), 2, n))
        guide = np.zeros((len(types), 2, n, G), dtype=np.intp)
        edges = np.arange(G) / G                            # exact: G is a power of two
        for t, arm in enumerate(types):
            k = arm.n_states
            for a, (P, r) in enumerate(((arm.P0, arm.R0), (arm.P1, arm.R1))):
                cdf[t, a, :k, :k - 1] = np.cumsum(P, axis=1)[:, :k - 1]
                rewards[t, a, :k] = r
                for x in range(k):
                    # guide[m] = number of y with F(y) <= m / G: no larger than the state of
                    # any u in [m/G, (m+1)/G)
                    guide[t, a, x] = np.searchsorted(cdf[t, a, x], edges, side="right")
        # F at the guide's candidate: u below it means the candidate is the next state
        guide_cdf = np.take_along_axis(cdf, guide, axis=-1)
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "x0", x0.astype(np.intp))
        object.__setattr__(self, "_sizes", sizes)
        object.__setattr__(self, "_n", n)
        object.__setattr__(self, "_G", G)
        object.__setattr__(self, "_cdf", cdf.ravel())
        object.__setattr__(self, "_guide", guide.ravel())
        object.__setattr__(self, "_guide_cdf", guide_cdf.ravel())
        object.__setattr__(self, "_rewards", rewards.ravel())
        object.__setattr__(self, "_row0", kind * (2 * n))    # row (type, passive, state 0)
        object.__setattr__(self, "_types", tuple(types))
        object.__setattr__(self, "_kind", kind)

    @property
    def n_arms(self) -> int:
        return len(self.arms)

    @property
    def n_states(self) -> np.ndarray:
        """The number of states of each arm, shape (N,)."""
        return self._sizes

    def initial(self, replications: int | None) -> np.ndarray:
        return self.x0.copy() if replications is None else np.tile(self.x0, (replications, 1))

    def _rows(self, states, active) -> np.ndarray:
        """Flat row number ``(type, action, state)`` of every arm."""
        row = np.multiply(active, self._n, dtype=np.intp)
        row += states
        row += self._row0
        return row

    def step(self, states, active, rng):
        """Rewards of this period and the next states (one uniform per arm, in arm order)."""
        row = self._rows(states, active)
        rewards = np.take(self._rewards, row)
        u = rng.random(np.shape(states))
        return self._inverse_cdf(row, u), rewards.sum(axis=-1)

    def _inverse_cdf(self, row: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The first ``y`` with ``u < F_row(y)``: a guide-table start, then a short scan."""
        n, G = self._n, self._G
        start = np.multiply(u, G).astype(np.intp)           # floor(u G), exact, in 0..G-1
        start += row * G
        y = np.take(self._guide, start)
        more = np.flatnonzero(np.take(self._guide_cdf, start) <= u)
        if more.size:                                       # scan up from the guide
            flat_y = y.reshape(-1)
            u_more = u.reshape(-1)[more]
            y_more = flat_y[more] + 1                       # F(guide) <= u: one further
            pos = row.reshape(-1)[more] * n + y_more
            while True:
                go_on = np.take(self._cdf, pos) <= u_more
                if not go_on.any():
                    break
                y_more += go_on
                pos += go_on
            flat_y[more] = y_more
        return y

    def observe(self, states) -> np.ndarray:
        return np.array(states, copy=True)


def _index_table(name: str, table) -> np.ndarray:
    """An arm's index table: a 1-d non-empty array, or a WhittleIndexResult's ``indices``."""
    if isinstance(table, WhittleIndexResult):
        return table.indices
    try:
        table = np.asarray(as_numeric(name, table), dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers (an arm's index table) or a "
                        f"WhittleIndexResult, got {type(table).__name__}") from None
    if table.ndim != 1 or table.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d table (one entry per state), "
                         f"got shape {table.shape}")
    return table


def _result_fingerprint(table) -> str | None:
    """The fingerprint of the arm an index result was computed for (None for a raw table, or
    a result that carries none)."""
    return getattr(table, "fingerprint", None) if isinstance(table, WhittleIndexResult) \
        else None


def _mismatch_error(name: str, position: int, theirs: str, arm: RestlessArm) -> ValueError:
    return ValueError(
        f"{name} is a WhittleIndexResult computed for another arm (fingerprint "
        f"{theirs[:12]}...) than arms[{position}] (fingerprint {arm.fingerprint[:12]}...): "
        f"pass one result per arm, in the order of the arms, each from "
        f"whittle_indices(arms[i]); a raw table (result.indices) is not checked")


@dataclass(frozen=True, eq=False, repr=False)
class IndexRule(ShortRepr):
    """Priority ``index_i(x_i)``: a table of indices per arm, as from :func:`whittle_indices`.

    Parameters
    ----------
    indices : sequence of array_like or of WhittleIndexResult
        ``indices[i][x]`` for arm ``i`` in state ``x``; a
        :class:`~whittle_lib.indices.WhittleIndexResult` stands for its ``indices``. A 2-d
        array is one row per arm.

    Attributes
    ----------
    indices : tuple of ndarray
        One table per arm (tables passed as one object are stored once).
    fingerprints : tuple of (str or None)
        For each arm, the fingerprint of the arm its :class:`WhittleIndexResult` was computed
        for (``None`` for a raw table): :func:`simulate` refuses a rule whose result for arm
        ``i`` belongs to another arm than the ``i``-th.

    Raises
    ------
    TypeError
        For a table that is not numbers, or a single table or result where one per arm is
        needed.
    ValueError
        For a table that is not 1-d or is empty.

    Examples
    --------
    >>> rule = IndexRule([[0.0, 2.0], [1.0, 1.5, 3.0]])
    >>> rule(np.array([1, 2]), 0).tolist()
    [2.0, 3.0]
    >>> rule
    IndexRule(indices=tuple of 2 arrays, n_arms=2)
    """

    indices: tuple
    n_arms: int = field(init=False)

    def __post_init__(self) -> None:
        raw = self.indices
        if isinstance(raw, WhittleIndexResult):
            raise TypeError("indices must hold one table per arm, got one WhittleIndexResult: "
                            "pass [result] (a list, one per arm)")
        if isinstance(raw, np.ndarray) and raw.ndim == 1 and raw.dtype != object:
            raise TypeError("indices must hold one table per arm, got one 1-d array: pass "
                            "[table] (a list, one per arm)")
        if isinstance(raw, (str, bytes)):
            raise TypeError(f"indices must be a sequence of index tables, one per arm, got "
                            f"{type(raw).__name__}")
        try:
            raw = list(raw)
        except TypeError:
            raise TypeError("indices must be a sequence of index tables, one per arm, got "
                            f"{type(raw).__name__}") from None
        if not raw:
            raise ValueError("indices must hold one table per arm, got none")
        # a table passed for many arms (the same object) is stored once: the lookup of a
        # million copies of a few arms then reads a small table that stays in cache
        given, kind, first = _distinct(raw)
        distinct = [_index_table(f"indices[{i}]", t) for i, t in zip(first, given)]
        prints = [_result_fingerprint(t) for t in given]
        n = max(t.size for t in distinct)
        padded = np.full((len(distinct), n), -np.inf)
        for k, t in enumerate(distinct):
            padded[k, :t.size] = t
        object.__setattr__(self, "indices", tuple(distinct[k] for k in kind))
        object.__setattr__(self, "n_arms", len(raw))
        object.__setattr__(self, "_table", padded.ravel())
        object.__setattr__(self, "_width", n)
        object.__setattr__(self, "_sizes", np.array([t.size for t in distinct])[kind])
        object.__setattr__(self, "_row0", kind * n)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_prints", prints)

    @property
    def fingerprints(self) -> tuple:
        """For each arm, the fingerprint its result carries (``None`` for a raw table)."""
        return tuple(self._prints[k] for k in self._kind.tolist())

    def check(self, n_arms: int, n_states=None) -> None:
        """Raise ``ValueError`` unless the rule has one table per arm, each long enough."""
        if len(self.indices) != n_arms:
            raise ValueError(f"IndexRule has {len(self.indices)} index tables for {n_arms} "
                             "arms: pass one table per arm")
        if n_states is not None:
            short = np.flatnonzero(self._sizes < np.asarray(n_states))
            if short.size:
                i = int(short[0])
                raise ValueError(f"indices[{i}] has {self._sizes[i]} entries but arm {i} has "
                                 f"{int(np.asarray(n_states)[i])} states: one index per state")

    def check_arms(self, arms) -> None:
        """Raise ``ValueError`` unless the rule fits ``arms``: one table per arm, each long
        enough, and each :class:`WhittleIndexResult` computed for its arm (same fingerprint).

        ``arms`` is a :class:`FiniteArms` or a list of :class:`RestlessArm`, as :func:`simulate`
        takes them. An arm type (arms that are one object) and a result passed for many arms
        (one object) are compared once, so a million copies of a few arms cost a few comparisons.
        """
        if not isinstance(arms, FiniteArms):
            if not isinstance(arms, (list, tuple)):
                raise TypeError("arms must be a FiniteArms or a list of RestlessArm, got "
                                f"{type(arms).__name__}")
            arms = FiniteArms(list(arms))
        self.check(arms.n_arms, arms.n_states)
        if all(fp is None for fp in self._prints):
            return
        n_results = len(self._prints)
        pair = arms._kind * n_results + self._kind           # (arm type, result) of each arm
        size = len(arms._types) * n_results
        present = (np.flatnonzero(np.bincount(pair, minlength=size)) if size <= 4 * pair.size
                   else np.unique(pair))                     # a linear pass for few types
        for p in present.tolist():
            arm, theirs = arms._types[p // n_results], self._prints[p % n_results]
            if theirs is not None and theirs != arm.fingerprint:
                i = int(np.flatnonzero(pair == p)[0])
                raise _mismatch_error(f"the rule's indices[{i}]", i, theirs, arm)

    def __call__(self, states: np.ndarray, t: int) -> np.ndarray:
        states = np.asarray(states)
        if states.shape[-1] != len(self.indices):
            raise ValueError(f"IndexRule has {len(self.indices)} index tables, got states of "
                             f"{states.shape[-1]} arms")
        if states.size and (states.min() < 0 or states.max() >= self._width):
            raise ValueError(f"states must lie in 0..{self._width - 1} (the longest index "
                             f"table), got {int(states.min())}..{int(states.max())}")
        return self._lookup(states)

    def _lookup(self, states: np.ndarray) -> np.ndarray:
        """The priorities of states already known to lie within each arm's table."""
        return np.take(self._table, states + self._row0)


@dataclass(frozen=True, eq=False, repr=False)
class RmabSimulation(ShortRepr):
    """A simulated run of N arms under a priority rule.

    Attributes
    ----------
    rewards : ndarray, shape (n_periods, replications) or (n_periods,)
        Total reward of the N arms in each period after the warm-up.
    states : ndarray or None
        The states before each decision (``dynamics.observe``), if recorded.
    active : ndarray of bool, shape (n_periods, [replications,] N), or None
        The activations, if recorded (for :func:`simulate_counts`: the number of active arms
        in each state).
    warmup : int
        Periods simulated before the first recorded one.
    discount : float or None
        The discount factor of a discounted run, ``None`` for the average reward.
    activation : {"at_most", "exactly"} or None
        The activation rule of the run (``None`` when built by other code than
        :func:`simulate` and :func:`simulate_counts`).
    """

    rewards: np.ndarray
    states: np.ndarray | None = None
    active: np.ndarray | None = None
    warmup: int = 0
    discount: float | None = None
    activation: str | None = None

    @property
    def average_reward(self) -> np.ndarray:
        """Time-average reward per period, one per replication."""
        return self.rewards.mean(axis=0)

    @property
    def discounted_reward(self) -> np.ndarray:
        """``sum_t discount**t r_t`` over the simulated periods, one per replication.

        An estimate of the policy's discounted value from the initial states, short of the
        tail beyond the horizon ``T``: at most ``discount**T max|r| / (1 - discount)``.
        """
        if self.discount is None:
            raise ValueError("discounted_reward needs a run with discount=...; this one "
                             "measured the average reward")
        weights = self.discount ** np.arange(self.rewards.shape[0], dtype=float)
        return np.tensordot(weights, self.rewards, axes=1)

    @property
    def value(self) -> np.ndarray:
        """What the run estimates, one per replication: ``discounted_reward`` for a
        discounted run, ``average_reward`` otherwise."""
        return self.average_reward if self.discount is None else self.discounted_reward

    def interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Student-t confidence interval of :attr:`value` over the independent replications
        (:func:`whittle_lib.stats.mean_interval`); needs at least 2 replications.

        One long run has no interval here: its periods are correlated. Run ``replications=R``
        copies, each after a ``warmup``.
        """
        value = np.asarray(self.value)
        if value.ndim == 0 or value.size < 2:
            raise ValueError("an interval needs at least 2 independent replications: simulate "
                             f"with replications >= 2, got {1 if value.ndim == 0 else value.size}")
        return mean_interval(value, level=level)

    def to_frame(self):
        """One row per replication: ``average_reward`` (and ``discounted_reward`` for a
        discounted run), indexed by ``replication``; needs pandas.

        Examples
        --------
        >>> run = RmabSimulation(np.array([[1.0, 2.0], [3.0, 2.0]]))
        >>> run.to_frame()  # doctest: +NORMALIZE_WHITESPACE
                     average_reward
        replication
        0                       2.0
        1                       2.0
        """
        pd = _pandas()
        columns = {"average_reward": np.atleast_1d(self.average_reward)}
        if self.discount is not None:
            columns["discounted_reward"] = np.atleast_1d(self.discounted_reward)
        size = columns["average_reward"].size
        return pd.DataFrame(columns, index=pd.RangeIndex(size, name="replication"))


@dataclass(frozen=True)
class _Lookup:
    """An IndexRule checked against FiniteArms: states need no range check each period."""

    rule: IndexRule

    def __call__(self, states, t):
        return self.rule._lookup(states)


def _as_dynamics(dynamics):
    """The simulator's dynamics from what a user passes: a Dynamics, or a list of arms."""
    if isinstance(dynamics, RestlessArm):
        raise TypeError("dynamics must be N arms, got one RestlessArm: pass a list of arms "
                        "([arm] * N for N copies) or FiniteArms(arms, x0)")
    if all(hasattr(dynamics, name) for name in ("initial", "step", "n_arms")):
        return dynamics
    if isinstance(dynamics, (list, tuple)):
        for i, arm in enumerate(dynamics):
            if not isinstance(arm, RestlessArm):
                raise _arm_type_error(f"dynamics[{i}]", arm)
        return FiniteArms(dynamics)
    raise TypeError("dynamics must be a list of RestlessArm, a FiniteArms or an object with "
                    "n_arms, initial, step and observe (see Dynamics), got "
                    f"{type(dynamics).__name__}")


def _as_rule(rule):
    """The priority rule from what a user passes: a callable, or index tables or results."""
    if isinstance(rule, WhittleIndexResult):
        raise TypeError("rule must give one priority per arm, got one WhittleIndexResult: "
                        "pass a list of them, one per arm, or IndexRule(results)")
    if callable(rule):
        return rule
    if isinstance(rule, (list, tuple, np.ndarray)):
        return IndexRule(rule)
    raise TypeError("rule must be a callable rule(states, t) -> priorities, an IndexRule, or a "
                    f"list of index tables or WhittleIndexResult (one per arm), got "
                    f"{type(rule).__name__}")


def _check_run(n_periods, warmup, discount, replications, M, n_arms: int, ties, rng):
    """The checks :func:`simulate` and :func:`simulate_counts` share: the counts as ints, the
    criterion, the budget and the random stream (required with random ties)."""
    n_periods = check_integer("n_periods", n_periods, 1)
    warmup = check_integer("warmup", warmup, 0)
    discount = check_discount(discount)
    if discount is not None and warmup:
        raise ValueError("a discounted run counts from the initial states: warmup must be 0 "
                         f"with discount={discount!r}, got warmup={warmup!r}")
    if replications is not None:
        replications = check_integer("replications", replications, 1)
    M = check_budget(M, n_arms)
    ties = check_choice("ties", ties, _TIES)
    rng = check_rng(rng, required=ties == "random", why="with ties='random'")
    return n_periods, warmup, discount, replications, M, ties, rng


def _simulation(rewards, state_log, active_log, record: bool, warmup: int, discount,
                activation: str) -> RmabSimulation:
    """The result of :func:`simulate` or :func:`simulate_counts`, with the logs if recorded."""
    if not record:
        return RmabSimulation(rewards, warmup=warmup, discount=discount, activation=activation)
    return RmabSimulation(rewards, np.stack(state_log), np.stack(active_log), warmup=warmup,
                          discount=discount, activation=activation)


def _nan_priority_error(priority, states, dynamics, t: int) -> ValueError:
    where = np.argwhere(np.isnan(priority))[0]
    arm = int(where[-1])
    observed = np.asarray(dynamics.observe(states))
    try:
        state = observed[tuple(where)]
        state = state.tolist() if hasattr(state, "tolist") else state
    except IndexError:
        state = "?"
    replication = "" if priority.ndim == 1 else f", replication {int(where[0])}"
    return ValueError(f"the rule's priority of arm {arm} in state {state} is nan (period {t}"
                      f"{replication}); a non-indexable arm's WhittleIndexResult has nan "
                      "indices where its computation stopped: give every state of every arm a "
                      "number")


def simulate(dynamics: Dynamics, rule, M: int, n_periods: int, *, replications: int | None = 1,
             activation: str = "at_most", ties: str = "lowest", record: bool = False,
             warmup: int = 0, discount: float | None = None, rng=None) -> RmabSimulation:
    """Run a priority rule with budget ``M`` for ``n_periods`` periods.

    Each period: priorities ``rule(states, t)`` (shape ``(replications, N)``), the ``M``
    highest are active (among the positive ones with ``activation="at_most"``; :func:`top_m`),
    the arms earn their rewards and move (``dynamics.step``). Vectorised over arms and
    replications; the loop runs over periods. This is the library's one simulator: finite arms
    (:class:`FiniteArms`) and the crawling model
    (:class:`whittle_lib.models.crawling.CrawlingDynamics`) both run through it. For many
    copies of one arm, :func:`simulate_counts` follows only the number of arms in each state.

    Parameters
    ----------
    dynamics : FiniteArms, list of RestlessArm, or any :class:`Dynamics`
        A list of arms is ``FiniteArms(arms)`` (all starting in state 0).
    rule : callable, or list of index tables or of WhittleIndexResult
        ``rule(states, t) -> priority`` of shape ``(replications, N)``, e.g. :class:`IndexRule`;
        a list (one table or result per arm) is ``IndexRule(list)``. With finite arms, a
        :class:`WhittleIndexResult` computed for another arm than its position's is refused.
    M : int
        The budget: arms activated per period, ``0 <= M <= N``.
    n_periods : int
        Periods recorded (after the warm-up).
    replications : int or None
        Independent copies run at once; ``None`` for one run without the replication axis.
    activation : {"at_most", "exactly"}
        ``"at_most"`` (default, as :func:`~whittle_lib.bounds.relaxation_bound`): the ``M``
        highest priorities among those strictly above 0, so fewer than ``M`` arms are active
        when fewer have a positive index (an arm of index ``<= 0`` would rather rest without a
        subsidy); the at-most relaxation bounds this policy. ``"exactly"``: the ``M`` highest,
        whatever their sign; the exactly relaxation bounds it.
    ties : {"lowest", "random"}
        Among arms tied at the ``M``-th priority, those of lowest number, or a random subset
        (then ``rng`` is required).
    record : bool
        Keep the states (``dynamics.observe``) and the activations of the recorded periods.
    warmup : int
        Periods run first and not recorded, so that ``average_reward`` estimates the long-run
        average with less of the initial transient (the generator is drawn from as in a run
        of ``warmup + n_periods`` periods).
    discount : float in (0, 1) or None
        ``None`` (default): the average reward per period. A number: measure the discounted
        reward ``sum_t discount**t r_t`` from the initial states
        (``RmabSimulation.discounted_reward``); no warm-up then. ``1.0`` is refused: pass
        ``None`` for the average.
    rng : numpy.random.Generator or seed
        Drawn from in this order each period: ``top_m`` (random ties only), then
        ``dynamics.step``. Required with ``ties="random"``.

    Returns
    -------
    RmabSimulation
        ``interval()`` is the confidence interval over the replications; ``to_frame()`` one
        row per replication.

    Raises
    ------
    TypeError
        For dynamics or a rule of a kind it cannot use (the message says what to pass), and
        for an argument of the wrong type (``M=2.0``, ``rng=1.5``).
    ValueError
        For a budget, a horizon or a discount out of range, an :class:`IndexRule` with a table
        count or a table length that does not fit the arms or an index result of another arm
        (the message names the arm's position), ``ties="random"`` without ``rng``, or a nan
        priority (the message names the arm and its state).

    Examples
    --------
    Two copies of an arm that pays 1 when activated in state 1; the Whittle rule earns 1/2:

    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> run = simulate([arm, arm], [[0.0, 1.0], [0.0, 1.0]], 1, 2_000, replications=4,
    ...                warmup=100, activation="exactly", rng=1)
    >>> ci = run.interval()
    >>> bool(ci.low < 0.5 < ci.high)
    True

    With at most one activation (the default), an arm in state 0 (index 0) is left alone
    instead of being held there: the policy earns more, close to the at-most bound 2/3
    (:func:`~whittle_lib.bounds.relaxation_bound`'s example):

    >>> at_most = simulate([arm, arm], [[0.0, 1.0], [0.0, 1.0]], 1, 2_000, replications=4,
    ...                    warmup=100, rng=1)
    >>> bool(at_most.interval().low > 0.6)
    True
    """
    dynamics = _as_dynamics(dynamics)
    rule = _as_rule(rule)
    n = dynamics.n_arms
    n_periods, warmup, discount, replications, M, ties, rng = _check_run(
        n_periods, warmup, discount, replications, M, n, ties, rng)
    threshold = _threshold(activation)
    if isinstance(rule, IndexRule):
        if isinstance(dynamics, FiniteArms):
            rule.check_arms(dynamics)
            rule = _Lookup(rule)             # every state within its arm's table: no check
        else:
            rule.check(n)
    states = dynamics.initial(replications)
    lead = () if replications is None else (replications,)
    rewards = np.empty((n_periods, *lead))
    state_log, active_log = [], []
    for t in range(warmup + n_periods):
        priority = np.asarray(rule(states, t), dtype=float)
        if priority.shape[-1:] != (n,):
            raise ValueError(f"the rule must give one priority per arm ({n}), got shape "
                             f"{priority.shape}")
        if np.isnan(priority).any():
            raise _nan_priority_error(priority, states, dynamics, t)
        active = _select(priority, M, ties, threshold, rng)
        if record and t >= warmup:
            state_log.append(dynamics.observe(states))
            active_log.append(active)
        states, reward = dynamics.step(states, active, rng)
        if t >= warmup:
            rewards[t - warmup] = reward
    return _simulation(rewards, state_log, active_log, record, warmup, discount, activation)


def simulate_counts(arm: RestlessArm, counts, indices, M: int, n_periods: int, *,
                    replications: int | None = 1, activation: str = "at_most",
                    record: bool = False, warmup: int = 0, discount: float | None = None,
                    rng=None) -> RmabSimulation:
    """Many copies of one arm under an index rule, as the number of arms in each state.

    Copies of one arm are exchangeable, so under a rule whose priority depends only on the
    state the counts ``c(x)`` (arms in state ``x``) are a Markov chain, and a period costs
    ``O(n**2)`` whatever the number of arms: the ``M`` active arms are taken from the states
    of highest index (:func:`top_m` on the arms, with ties between states of equal index to
    the lower state; with ``activation="at_most"`` only states of index above 0), then the
    ``a(x)`` active and ``c(x) - a(x)`` passive arms of state ``x`` move by multinomial draws
    with the rows ``P1[x]`` and ``P0[x]``. The law of the counts is that of :func:`simulate` on
    ``N`` copies when no two states share an index; with shared indices the per-arm run breaks
    ties by arm number, this one by state.

    Parameters
    ----------
    arm : RestlessArm
    counts : array_like of int, shape (n,)
        Initial number of arms in each state; ``N = sum(counts)``.
    indices : array_like, shape (n,), or WhittleIndexResult
        The priority of each state; a result must have been computed for ``arm``.
    M : int
        Arms activated per period, ``0 <= M <= N``.
    n_periods, replications, activation, record, warmup, discount, rng
        As in :func:`simulate`. The generator gives one multinomial draw per action and state
        each period.

    Returns
    -------
    RmabSimulation
        ``states`` (if recorded) are the counts before each decision, shape
        ``(n_periods, [replications,] n)``, and ``active`` the active counts per state.

    Examples
    --------
    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> run = simulate_counts(arm, [500_000, 500_000], [0.0, 1.0], 250_000, 50,
    ...                       activation="exactly", rng=1)
    >>> bool(abs(run.rewards[-1] - 250_000) < 3_000)     # a quarter of the arms pay 1
    True
    """
    if not isinstance(arm, RestlessArm):
        raise _arm_type_error("arm", arm)
    n = arm.n_states
    raw = as_numeric("counts", counts)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"counts must hold integer counts, got dtype {raw.dtype}")
    if raw.shape != (n,) or np.any(raw < 0):
        raise ValueError(f"counts must hold a non-negative integer count for each of the {n} "
                         f"states, got {counts!r}")
    counts = raw.astype(np.int64)
    table = np.array(_index_table("indices", indices), dtype=float)
    theirs = _result_fingerprint(indices)
    if theirs is not None and theirs != arm.fingerprint:
        raise ValueError(f"indices is a WhittleIndexResult computed for another arm "
                         f"(fingerprint {theirs[:12]}...) than arm (fingerprint "
                         f"{arm.fingerprint[:12]}...): pass whittle_indices(arm)")
    if table.shape != (n,):
        raise ValueError(f"indices must hold one index per state ({n}), got shape {table.shape}")
    if np.isnan(table).any():
        x = int(np.flatnonzero(np.isnan(table))[0])
        raise ValueError(f"the index of state {x} is nan; a non-indexable arm's "
                         "WhittleIndexResult has nan indices where its computation stopped")
    N = int(counts.sum())
    n_periods, warmup, discount, replications, M, _, rng = _check_run(
        n_periods, warmup, discount, replications, M, N, "lowest", rng)
    threshold = _threshold(activation)
    order = np.argsort(-table, kind="stable")               # states by decreasing index
    eligible = np.ones(n, dtype=bool) if threshold is None else table[order] > threshold
    P = np.stack([arm.P0, arm.P1])                           # (2, n, n)
    R = np.stack([arm.R0, arm.R1])
    lead = () if replications is None else (replications,)
    c = np.broadcast_to(counts, (*lead, n)).copy()
    rewards = np.empty((n_periods, *lead))
    state_log, active_log = [], []
    for t in range(warmup + n_periods):
        ranked = c[..., order]
        before = np.cumsum(ranked, axis=-1) - ranked         # arms in better states
        take = np.clip(M - before, 0, ranked) * eligible
        active = np.empty_like(c)
        active[..., order] = take
        passive = c - active
        if record and t >= warmup:
            state_log.append(c.copy())
            active_log.append(active)
        reward = passive @ R[0] + active @ R[1]
        moved = rng.multinomial(np.stack([passive, active], axis=-2), P)   # (..., 2, n, n)
        c = moved.sum(axis=(-3, -2))
        if t >= warmup:
            rewards[t - warmup] = reward
    return _simulation(rewards, state_log, active_log, record, warmup, discount, activation)


@dataclass(frozen=True, eq=False, repr=False)
class PeriodicOrbit(ShortRepr):
    """The eventually periodic trajectory of a deterministic rule on deterministic dynamics.

    Attributes
    ----------
    transient : int
        Periods before the orbit first enters its cycle.
    period : int
        Length of the cycle.
    average_reward : float
        Exact long-run average reward: the mean reward over one cycle.
    rewards : ndarray
        Rewards of the first ``transient + period`` periods.
    active : ndarray of bool, shape (transient + period, N)
        Decisions over the same periods.
    activation : {"at_most", "exactly"}
        The activation rule of the orbit.
    """

    transient: int
    period: int
    average_reward: float
    rewards: np.ndarray
    active: np.ndarray
    activation: str = "at_most"

    def to_frame(self):
        """One row per period of the transient and the first cycle: ``reward``, ``n_active``
        (arms active) and ``in_cycle``, indexed by ``period``; needs pandas."""
        pd = _pandas()
        t = np.arange(self.rewards.size)
        return pd.DataFrame({"reward": self.rewards,
                             "n_active": np.count_nonzero(self.active, axis=-1),
                             "in_cycle": t >= self.transient},
                            index=pd.RangeIndex(t.size, name="period"))


def periodic_orbit(dynamics: Dynamics, rule, M: int, *, activation: str = "at_most",
                   time_period: int = 1, max_periods: int = 100_000) -> PeriodicOrbit:
    """The exact long-run average reward of a deterministic rule on deterministic dynamics.

    Runs one copy (no replication axis) with the lowest-index tie rule. When the observed
    state (``dynamics.observe``, compared bit for bit) and the phase ``t mod time_period`` of a
    time-dependent rule repeat, the trajectory is periodic from there on, so the mean reward
    over that cycle is the long-run average exactly, with no truncation error. The crawling
    model's deterministic dynamics (:class:`whittle_lib.models.crawling.CrawlingDynamics`),
    computed in floating point, revisit bit-identical states and so always repeat.

    Parameters
    ----------
    dynamics : Dynamics
        Deterministic: ``step`` must not draw from its generator (it is passed ``None``).
    rule : callable, or list of index tables or of WhittleIndexResult
        ``rule(states, t) -> priority`` of shape ``(N,)``; a list is ``IndexRule(list)``.
    M : int
        The budget: arms activated per period, ``0 <= M <= N``.
    activation : {"at_most", "exactly"}
        As in :func:`simulate` (the default is the relaxation bound's, ``"at_most"``).
    time_period : int
        Period of the rule in ``t`` (1 for a stationary rule).
    max_periods : int
        Give up after this many periods.

    Raises
    ------
    TypeError
        For dynamics or a rule of a kind it cannot use, or an argument of the wrong type.
    ValueError
        For a budget out of range, or ``time_period`` or ``max_periods`` below 1.
    RuntimeError
        If no state repeats within ``max_periods``.
    """
    if not all(hasattr(dynamics, name) for name in ("initial", "step", "observe", "n_arms")):
        raise TypeError("dynamics must be deterministic dynamics with n_arms, initial, step and "
                        f"observe (see Dynamics), got {type(dynamics).__name__}")
    rule = _as_rule(rule)
    M = check_budget(M, dynamics.n_arms)
    threshold = _threshold(activation)
    time_period = check_integer("time_period", time_period, 1)
    max_periods = check_integer("max_periods", max_periods, 1)
    states = dynamics.initial(None)
    seen: dict[bytes, int] = {}
    rewards, actives = [], []
    for t in range(max_periods):
        key = dynamics.observe(states).tobytes() + np.int64(t % time_period).tobytes()
        if key in seen:
            start = seen[key]
            cycle = np.asarray(rewards[start:])
            return PeriodicOrbit(transient=start, period=t - start,
                                 average_reward=float(cycle.mean()),
                                 rewards=np.asarray(rewards), active=np.asarray(actives),
                                 activation=activation)
        seen[key] = t
        active = top_m(rule(states, t), M, threshold=threshold)
        states, reward = dynamics.step(states, active, None)
        rewards.append(float(reward))
        actives.append(active)
    raise RuntimeError(f"no repeated state within {max_periods} periods")


# The relaxation bounds live in their own module (one idea per module); they stay
# importable from here, where users of the simulator look for them.
from .bounds import RelaxationBound, relaxation_bound  # noqa: E402
