"""Priority (index) policies over N crawling sources with a budget of M per period, and a
vectorised simulator.

A policy here is a *priority rule*: a callable ``rule(x, age, t) -> priority`` returning one
number per source, from the states ``x``, the periods since each source was last crawled
``age`` (1 just after a crawl) and the period ``t``. Each period the simulator crawls the ``M``
sources of highest priority (:func:`top_m`, ties broken by a stated rule). The Whittle index
policy is the rule ``x -> gamma_i(x_i)`` (Theorem 1 of Avrachenkov & Borkar 2015); the
others are the baselines of the crawling papers.

Everything is vectorised over sources: a Python loop runs over periods only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import crawling
from .. import _portable as fp
from .crawling import CrawlingModel
from .. import rmab
from ..rmab import PeriodicOrbit, top_m  # the core's, re-exported: crawling code calls them here

__all__ = [
    "top_m",
    "WhittleRule",
    "CurrentValueRule",
    "ExpectedValueRule",
    "RoundRobinRule",
    "SlotRules",
    "simulate",
    "simulate_many",
    "PeriodicOrbit",
    "periodic_orbit",
]

# -- priority rules ------------------------------------------------------------------------------

# sources per block of the index: its work arrays (256 KiB each) stay in cache
_BLOCK = 1 << 15

@dataclass(frozen=True)
class WhittleRule:
    """The Whittle index policy: priority ``gamma_i(x_i)`` (:func:`crawling.whittle_index`).

    The per-source constants of the index are computed once, so a period costs a logarithm,
    an exponential and a few products per source.
    """

    model: CrawlingModel
    time_period: int | None = field(default=None, init=False)
    _constants: tuple = field(default=(), init=False, repr=False, compare=False)
    _stacked: np.ndarray = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_constants",
                           crawling._index_constants(self.model.u, self.model.alpha))
        # the same constants side by side: one gather per period in screened()
        object.__setattr__(self, "_stacked", np.stack(self._constants, axis=-1))

    def __call__(self, x, age, t):
        x = np.asarray(x, dtype=float)
        n = x.shape[-1] if x.ndim else 1
        if x.ndim == 0 or n <= _BLOCK:
            gamma = crawling._whittle_index(x, *self._constants)
        else:
            # element-wise, so the same bits in blocks of sources that stay in cache (at a
            # million sources the whole-array passes were bound by memory)
            gamma = np.empty(np.broadcast_shapes(x.shape, (n,)))
            for start in range(0, n, _BLOCK):
                block = slice(start, start + _BLOCK)
                gamma[..., block] = crawling._whittle_index(
                    x[..., block], *(c[block] for c in self._constants))
        if np.any(self.model.cost != 1.0):
            gamma /= self.model.cost
        return gamma

    def screened(self, x, M: int) -> np.ndarray:
        """Priorities that select the same ``M`` sources as the index, computing few indices.

        The index never exceeds the state: ``gamma(x) <= x`` (with ``eta = ceil`` of
        ``log_alpha`` of ``arg = 1 - (1 - alpha) x / u``, ``x - gamma(x) = u [eta arg -
        (arg - alpha**eta) / (1 - alpha)] >= u arg (eta - 1) >= 0``; ``gamma = x`` for
        ``x >= u*``), and its rounding errs by far less than ``1e-12 u*``. So with a level
        ``t``, the bound ``b = x + 1e-12 u*`` and the candidates ``b >= t``: once ``M``
        candidates have an index ``>= t``, every other source lies strictly below the ``M``-th
        largest index. The candidates get their index (the same bits as :meth:`__call__`),
        the others ``-inf``, and :func:`top_m` selects the same sources, ties and random ties
        included. ``t`` is first the ``2 M``-th largest index estimated from a strided sample
        of the sources, and is lowered (to the ``8 M``-th, ...) until it holds. For unit costs
        and long rows (``N >= 65,536``, ``M <= N / 16``); otherwise the plain index.
        """
        x = np.asarray(x, dtype=float)
        n = x.shape[-1] if x.ndim else 1
        if x.ndim == 0 or n < _SCREEN_MIN or 16 * M > n or M < 1 \
                or np.any(self.model.cost != 1.0):
            return self(x, None, None)
        margin = self.model.u_star * 1e-12
        out = np.full(x.shape, -np.inf)
        stride = max(n // _SCREEN_SAMPLE, 1)
        sampled = np.take(self._stacked, np.arange(0, n, stride), axis=0)
        for row, priority in zip(x.reshape(-1, n), out.reshape(-1, n)):
            # the index of a strided sample places the level t near the (2 M)-th largest index
            levels = np.sort(crawling._whittle_index(row[::stride], *sampled.T))[::-1]
            bound = row + margin
            multiple = 2
            while multiple * M <= n // 2:
                t = float(levels[min(multiple * M // stride, levels.size - 1)])
                candidates = np.flatnonzero(bound >= t)
                gamma = crawling._whittle_index(row[candidates],
                                                *np.take(self._stacked, candidates, axis=0).T)
                if np.count_nonzero(gamma >= t) >= M:     # any t that passes is exact
                    priority[candidates] = gamma
                    break
                multiple *= 4
            else:
                priority[:] = self(row, None, None)
        return out


_SCREEN_MIN = 1 << 16   # sources from which WhittleRule.screened computes few indices
_SCREEN_SAMPLE = 4096   # bounds sampled to place its level t


@dataclass(frozen=True)
class CurrentValueRule:
    """Greedy by the current value: crawl the sources holding the most utility ``x_i``."""

    time_period: int | None = field(default=None, init=False)

    def __call__(self, x, age, t):
        return np.asarray(x, dtype=float)


@dataclass(frozen=True)
class ExpectedValueRule:
    """The greedy rule of the 2018 paper (Sec. IV-B): priority
    ``Lambda_i xi_i / mu_i (1 - exp(-mu_i t_i))``, ``t_i`` the time since the last crawl.

    It is the deterministic state ``x_{age}`` (:func:`crawling.visited_states`): greedy by the
    *expected* value, blind to the realised arrivals.
    """

    model: CrawlingModel
    time_period: int | None = field(default=None, init=False)
    _log_alpha: np.ndarray = field(default=None, init=False, repr=False, compare=False)
    _scale: np.ndarray = field(default=None, init=False, repr=False, compare=False)
    _table: np.ndarray = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        # crawling.visited_states' per-source constants, once (the same operations on them)
        log_alpha = np.asarray(fp.log(np.asarray(self.model.alpha, dtype=float)))
        object.__setattr__(self, "_log_alpha", log_alpha)
        object.__setattr__(self, "_scale", -fp.expm1(log_alpha))
        # the states of the ages 0.._AGES - 1 of every source, when the table is small: the
        # simulator's ages are whole numbers of periods, looked up instead of computed
        n = self.model.n_sources
        ages = max(min(_AGES, _AGE_TABLE // n), 0)
        if ages > 1:
            object.__setattr__(self, "_table", self._state(np.arange(ages, dtype=float)[:, None]))

    def _state(self, age):
        # visited_states(u, alpha, age): u (1 - alpha**age) / (1 - alpha), as it computes it
        return self.model.u * -fp.expm1(age * self._log_alpha) / self._scale

    def __call__(self, x, age, t):
        age = np.asarray(age, dtype=float)
        table = self._table
        if table is not None and age.size and age.max() < table.shape[0] and age.min() >= 0:
            whole = age.astype(np.intp)
            if np.array_equal(whole, age):       # element-wise: the table's entry, same bits
                return table[whole, np.arange(table.shape[1])]
        return self._state(age)


_AGES = 1024              # ages tabulated by ExpectedValueRule (fewer for many sources)
_AGE_TABLE = 1 << 16      # entries of its table at most


@dataclass(frozen=True)
class RoundRobinRule:
    """Round robin: at period ``t`` crawl sources ``(t * stride + j) mod N``, ``j < M``.

    ``stride = M`` visits disjoint blocks (each source once every ``N / M`` periods when ``M``
    divides ``N``); ``stride = 1`` slides a window of ``M`` sources by one each period.
    """

    n_sources: int
    stride: int

    def __post_init__(self):
        if int(self.n_sources) != self.n_sources or self.n_sources < 1:
            raise ValueError(f"n_sources must be a positive integer, got {self.n_sources!r}")
        if int(self.stride) != self.stride or self.stride < 1:
            raise ValueError(f"stride must be a positive integer, got {self.stride!r}")

    @property
    def time_period(self) -> int:
        return int(self.n_sources)

    def __call__(self, x, age, t):
        n = self.n_sources
        # priority n - ((j - t*stride) mod n): the source at the pointer is first, then the next
        offset = (np.arange(n) - t * self.stride) % n
        return np.broadcast_to((n - offset).astype(float), np.shape(x))


@dataclass(frozen=True)
class SlotRules:
    """Several priority rules as the slots of one stacked rule, for :func:`simulate_many`.

    ``SlotRules(rules)(x, age, t)`` with ``x`` and ``age`` of shape ``([R,] S, N)`` gives
    ``rules[s](x[..., s, :], age[..., s, :], t)`` in slot ``s``: each rule sees its own slot
    as :func:`simulate` would show it the whole state, so the priorities are its own, bit for
    bit. A rule that can compute many slots at once (one call over the stack instead of ``S``)
    is faster; this one is the general adapter.

    Parameters
    ----------
    rules : sequence of callables
        ``rule(x, age, t) -> priority``, one per slot.
    """

    rules: tuple

    def __post_init__(self):
        rules = tuple(self.rules) if not callable(self.rules) else ()
        if not rules or not all(callable(r) for r in rules):
            raise ValueError(f"rules must be a non-empty sequence of callables, got {self.rules!r}")
        object.__setattr__(self, "rules", rules)

    @property
    def slots(self) -> int:
        return len(self.rules)

    def __call__(self, x, age, t):
        x = np.asarray(x, dtype=float)
        if x.ndim < 2 or x.shape[-2] != len(self.rules):
            raise ValueError(f"x must have shape ([R,] {len(self.rules)}, N), got {x.shape}")
        out = np.empty(x.shape)
        for s, rule in enumerate(self.rules):
            out[..., s, :] = rule(x[..., s, :], age[..., s, :], t)
        return out


# -- simulation ----------------------------------------------------------------------------------

def simulate(model: CrawlingModel, rule, M: int, n_periods: int, *, x0=None,
             stochastic: bool = False, replications: int | None = None,
             base_law: str = "exponential", base_shape: float | None = None,
             ties: str = "lowest", record: bool = False, rng=None,
             utilities=None) -> rmab.RmabSimulation:
    """Run a priority policy on the crawling model for ``n_periods`` periods.

    Each period ``t``: compute the priorities from ``(x(t), age(t), t)``, crawl the top ``M``
    (:func:`top_m`), collect ``x_i(t)`` from each crawled source, and move to ``x(t+1)`` by
    eqs. (2)-(3) (deterministic) or eq. (17) (stochastic, new utility drawn by
    :func:`crawling.sample_new_utility`).

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        ``rule(x, age, t) -> priority``, e.g. :class:`WhittleRule`.
    M : int
        Sources crawled per period.
    n_periods : int
    x0 : array_like, optional
        Initial states (default ``u``, the state just after a crawl, age 1).
    stochastic : bool
        Eq. (17) instead of eqs. (2)-(3).
    replications : int, optional
        Run ``R`` independent copies at once (arrays gain an axis of length ``R`` before the
        sources). For the stochastic model.
    base_law, base_shape, ties, rng
        See :func:`crawling.sample_new_utility` and :func:`top_m`.
    record : bool
        Keep the states and decisions (memory ``O(n_periods N)``).
    utilities : array_like, shape (n_periods, [R,] N), optional
        Stochastic model: the new utilities to replay instead of drawing them from ``rng``
        (:func:`crawling.draw_new_utilities` with the same ``rng`` draws exactly these, so
        several policies can share one draw of their common arrivals).

    Returns
    -------
    whittle_lib.rmab.RmabSimulation
        ``rewards`` per period (and replication), and if ``record`` the states ``x(t)`` before
        each decision (``states``) and the crawl decisions (``active``).
    """
    n = model.n_sources
    if int(M) != M or not 0 <= M <= n:
        raise ValueError(f"M must be an integer in [0, N={n}], got {M!r}")
    dynamics = crawling.CrawlingDynamics(model, x0, stochastic, base_law, base_shape, utilities)
    if type(rule) is WhittleRule:
        # the same selection with few indices computed (WhittleRule.screened)
        def priority(state, t):
            return rule.screened(state.x, M)
    else:
        def priority(state, t):
            return rule(state.x, state.age, t)
    return rmab.simulate(dynamics, priority, M, n_periods, replications=replications,
                         activation="exactly", ties=ties, record=record, rng=rng)


def simulate_many(model: CrawlingModel, rule, M, n_periods: int, *, slots: int, x0=None,
                  stochastic: bool = False, replications: int | None = None,
                  base_law: str = "exponential", base_shape: float | None = None, rng=None,
                  utilities=None) -> list:
    """Run ``slots`` priority policies in lock-step on common arrivals: :func:`simulate` for
    each, at the cost of one loop.

    The state carries an axis of ``S = slots`` policies before the sources, ``x`` of shape
    ``([R,] S, N)``; each period makes one call ``rule(x, age, t)`` for all of them, crawls the
    ``M[s]`` sources of highest priority in slot ``s`` (ties to the lowest number), and moves
    every slot by eqs. (2)-(3) or (17) with the *same* new utility (drawn once per period as
    :func:`simulate` draws it, or replayed from ``utilities``). Slot ``s`` therefore earns,
    period by period and bit for bit, what ``simulate(model, rule_s, M[s], n_periods, ...)``
    earns with the same generator or the same ``utilities``, ``rule_s`` being the rule on slot
    ``s`` alone (every operation is element-wise or a sum over the ``N`` sources of one row,
    and the selection is :func:`top_m`'s). Used to compare many policies on common random
    numbers, where the per-period cost of :func:`simulate` is Python overhead on small arrays:
    one rule that computes the priorities of all slots in one call (for example a
    :class:`~whittle_lib.learning.LearnedIndexRule` with weights of shape ``([R,] S, N, K)``)
    pays that overhead once; :class:`SlotRules` stacks any rules.

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        ``rule(x, age, t) -> priority`` with ``x``, ``age`` and the priority of shape
        ``([R,] S, N)``.
    M : int or sequence of int
        Sources crawled per period, one for all slots or one per slot.
    n_periods : int
    slots : int
        ``S``, the number of policies.
    x0, stochastic, replications, base_law, base_shape, rng, utilities
        As in :func:`simulate` (``x0`` and ``utilities`` shared by every slot); ``rng`` is
        drawn from only for the stochastic model's new utilities, as :func:`simulate` draws.

    Returns
    -------
    list of whittle_lib.rmab.RmabSimulation
        One per slot, ``rewards`` of shape ``(n_periods, [R])``, as :func:`simulate` returns
        (so ``average_reward`` is computed as there).

    Raises
    ------
    ValueError
        For a budget, horizon or slot count out of range, a priority of the wrong shape or
        with nan.

    Examples
    --------
    >>> from whittle_lib.models import crawling
    >>> model = crawling.table_one()
    >>> runs = simulate_many(model, SlotRules([WhittleRule(model), RoundRobinRule(4, 1)]),
    ...                      1, 200, slots=2, stochastic=True, rng=3)
    >>> bool(runs[0].average_reward == simulate(model, WhittleRule(model), 1, 200,
    ...                                         stochastic=True, rng=3).average_reward)
    True
    """
    n = model.n_sources
    if isinstance(slots, bool) or int(slots) != slots or slots < 1:
        raise ValueError(f"slots must be a positive integer, got {slots!r}")
    S = int(slots)
    budget = np.array(np.broadcast_to(M, (S,)) if np.ndim(M) == 0 else M, dtype=object)
    if budget.shape != (S,):
        raise ValueError(f"M must be an integer or one integer per slot ({S}), got {M!r}")
    for m in budget:
        if isinstance(m, bool) or not isinstance(m, (int, np.integer, float)) or int(m) != m \
                or not 0 <= m <= n:
            raise ValueError(f"M must hold integers in [0, N={n}], got {M!r}")
    budget = budget.astype(np.intp)
    if isinstance(n_periods, bool) or int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    if replications is not None and (isinstance(replications, bool)
                                     or int(replications) != replications or replications < 1):
        raise ValueError(f"replications must be a positive integer or None, got {replications!r}")
    T = int(n_periods)
    R = None if replications is None else int(replications)
    dynamics = crawling.CrawlingDynamics(model, x0, stochastic, base_law, base_shape, utilities)
    start = dynamics.initial(R)                   # checks x0 and the utilities' shape
    if dynamics.utilities is not None and dynamics.utilities.shape[0] < T:
        raise ValueError(f"utilities hold {dynamics.utilities.shape[0]} periods, the run is "
                         "longer")
    rng = np.random.default_rng(rng)
    lead = () if R is None else (R,)
    shape = (*lead, S, n)
    x = np.broadcast_to(start.x[..., None, :], shape).copy()
    age = np.broadcast_to(start.age[..., None, :], shape).copy()
    alpha = model.alpha
    one_budget = int(budget[0]) if np.all(budget == budget[0]) else None
    rewards = np.empty((T, *lead, S))
    for t in range(T):
        priority = np.asarray(rule(x, age, t), dtype=float)
        if priority.shape != shape:
            raise ValueError(f"the rule must give priorities of shape {shape}, got "
                             f"{priority.shape}")
        # top_m in each slot with its budget (ties to the lowest number)
        crawl = top_m(priority, one_budget) if one_budget is not None \
            else rmab._top_m_rows(priority, budget)
        rewards[t] = np.sum(x, axis=-1, where=crawl)
        new = np.broadcast_to(np.asarray(dynamics.new_utility(t, R, rng))[..., None, :], shape)
        # eqs. (2)-(3) or (17) as CrawlingDynamics.step: x <- alpha x + U, then U where crawled
        x *= alpha
        x += new
        np.copyto(x, new, where=crawl)
        age += 1.0
        age[crawl] = 1.0
    return [rmab.RmabSimulation(np.ascontiguousarray(rewards[..., s])) for s in range(S)]


def periodic_orbit(model: CrawlingModel, rule, M: int, *, x0=None, ties: str = "lowest",
                   max_periods: int = 100_000) -> rmab.PeriodicOrbit:
    """The exact long-run average reward of a deterministic policy on the deterministic model.

    The deterministic dynamics (eqs. 2-3) computed in floating point from ``u`` revisit
    bit-identical states, so the joint state (with the phase ``t mod time_period`` of a
    time-dependent rule) repeats; the average over the first repeated cycle is the long-run
    average (4) exactly. The crawling form of :func:`whittle_lib.rmab.periodic_orbit`:
    ``rule(x, age, t)`` as in :func:`simulate`, the crawl decisions as ``orbit.active``.
    """
    if ties != "lowest":
        raise ValueError("periodic_orbit needs a deterministic tie rule, ties='lowest'")
    dynamics = crawling.CrawlingDynamics(model, x0)
    return rmab.periodic_orbit(dynamics, lambda state, t: rule(state.x, state.age, t), M,
                               activation="exactly",
                               time_period=getattr(rule, "time_period", None) or 1,
                               max_periods=max_periods)
