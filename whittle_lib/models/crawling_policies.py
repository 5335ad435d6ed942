"""Priority (index) policies over N crawling sources with a budget of M per period, and a
vectorised simulator.

A policy here is a *priority rule*: a callable ``rule(x, age, t) -> priority`` returning one
number per source, from the states ``x``, the periods since each source was last crawled
``age`` (1 just after a crawl) and the period ``t``. Each period the simulator crawls the ``M``
sources of highest priority (:func:`top_m`, ties broken by a stated rule): exactly ``M``, the
per-period constraint of the crawling papers (eq. (5) of the 2015 paper), whatever the sign of
the priorities. The Whittle index policy is the rule ``x -> gamma_i(x_i)`` (Theorem 1 of
Avrachenkov & Borkar 2015); the others are the baselines of the crawling papers.

:func:`simulate_crawling` runs one rule; :func:`simulate_crawling_many` runs several in
lock-step on common arrivals (one loop, the same numbers per rule); :func:`crawling_orbit`
gives the exact long-run average of a deterministic rule on the deterministic model.
Everything is vectorised over sources: a Python loop runs over periods only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import crawling
from .. import arithmetic as fp
from .._validation import check_budget, check_choice, check_integer, check_rng
from .crawling import CrawlingModel, _check_model
from .. import rmab
from ..rmab import PeriodicOrbit, top_m  # the core's, re-exported: crawling code calls them here

__all__ = [
    "top_m",
    "WhittleRule",
    "CurrentValueRule",
    "ExpectedValueRule",
    "RoundRobinRule",
    "SlotRules",
    "simulate_crawling",
    "simulate_crawling_many",
    "PeriodicOrbit",
    "crawling_orbit",
]

# -- priority rules ------------------------------------------------------------------------------

# sources per block of the index: its work arrays (256 KiB each) stay in cache
_BLOCK = 1 << 15

@dataclass(frozen=True)
class WhittleRule:
    """The Whittle index policy: priority ``gamma_i(x_i) / C_i`` (:func:`crawling.whittle_index`).

    The per-source constants of the index are computed once (portably, as
    :class:`~whittle_lib.models.crawling.ClosedFormIndex` computes them), so a period costs a
    logarithm, an exponential and a few products per source.

    Parameters
    ----------
    model : CrawlingModel
    """

    model: CrawlingModel
    time_period: int | None = field(default=None, init=False)
    _constants: tuple = field(default=(), init=False, repr=False, compare=False)
    _stacked: np.ndarray = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        _check_model(self.model)
        object.__setattr__(self, "_constants", crawling.ClosedFormIndex.of(self.model).constants)
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

    Parameters
    ----------
    model : CrawlingModel
    """

    model: CrawlingModel
    time_period: int | None = field(default=None, init=False)
    _log_alpha: np.ndarray = field(default=None, init=False, repr=False, compare=False)
    _scale: np.ndarray = field(default=None, init=False, repr=False, compare=False)
    _table: np.ndarray = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        _check_model(self.model)
        # crawling.visited_states' per-source constants, once and portably (the same
        # operations on them)
        with fp.portable():
            log_alpha = np.asarray(fp.log(np.asarray(self.model.alpha, dtype=float)))
            object.__setattr__(self, "_log_alpha", log_alpha)
            object.__setattr__(self, "_scale", -fp.expm1(log_alpha))
            # the states of the ages 0.._AGES - 1 of every source, when the table is small: the
            # simulator's ages are whole numbers of periods, looked up instead of computed
            n = self.model.n_sources
            ages = max(min(_AGES, _AGE_TABLE // n), 0)
            if ages > 1:
                object.__setattr__(self, "_table",
                                   self._state(np.arange(ages, dtype=float)[:, None]))

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

    Parameters
    ----------
    n_sources, stride : int
        Positive integers.
    """

    n_sources: int
    stride: int

    def __post_init__(self):
        object.__setattr__(self, "n_sources", check_integer("n_sources", self.n_sources, 1))
        object.__setattr__(self, "stride", check_integer("stride", self.stride, 1))

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
    """Several priority rules as the slots of one stacked rule, for
    :func:`simulate_crawling_many`.

    ``SlotRules(rules)(x, age, t)`` with ``x`` and ``age`` of shape ``([R,] S, N)`` gives
    ``rules[s](x[..., s, :], age[..., s, :], t)`` in slot ``s``: each rule sees its own slot
    as :func:`simulate_crawling` would show it the whole state, so the priorities are its own,
    bit for bit. A rule that can compute many slots at once (one call over the stack instead
    of ``S``) is faster; this one is the general adapter.

    Parameters
    ----------
    rules : sequence of callables
        ``rule(x, age, t) -> priority``, one per slot.
    """

    rules: tuple

    def __post_init__(self):
        if callable(self.rules) or not isinstance(self.rules, (list, tuple)):
            raise TypeError(f"rules must be a list of callables rule(x, age, t), got "
                            f"{type(self.rules).__name__}")
        rules = tuple(self.rules)
        if not rules:
            raise ValueError("rules must hold at least one rule, got an empty sequence")
        for i, r in enumerate(rules):
            if not callable(r):
                raise TypeError(f"rules[{i}] must be a callable rule(x, age, t), got "
                                f"{type(r).__name__}")
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

_TIES = ("lowest", "random")


def simulate_crawling(model: CrawlingModel, rule, M: int, n_periods: int, *, x0=None,
                      stochastic: bool = False, replications: int | None = None,
                      base_law: str = "exponential", base_shape: float | None = None,
                      ties: str = "lowest", record: bool = False, rng=None,
                      utilities=None) -> rmab.RmabSimulation:
    """Run a priority policy on the crawling model for ``n_periods`` periods.

    Each period ``t``: compute the priorities from ``(x(t), age(t), t)``, crawl the top ``M``
    (:func:`top_m`: exactly ``M``, the crawling papers' per-period constraint, whatever the
    sign of the priorities), collect ``x_i(t)`` from each crawled source, and move to
    ``x(t+1)`` by eqs. (2)-(3) (deterministic) or eq. (17) (stochastic, new utility drawn by
    :func:`crawling.sample_new_utility`). This is :func:`simulate_crawling_many` with one
    policy and no slot axis: the same loop.

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        ``rule(x, age, t) -> priority``, e.g. :class:`WhittleRule`; ``x`` and ``age`` of shape
        ``([R,] N)``, the priority of that shape (or broadcasting to it).
    M : int
        Sources crawled per period, in ``[0, N]``.
    n_periods : int
        At least 1.
    x0 : array_like, optional
        Initial states (default ``u``, the state just after a crawl, age 1).
    stochastic : bool
        Eq. (17) instead of eqs. (2)-(3).
    replications : int, optional
        Run ``R`` independent copies at once (arrays gain an axis of length ``R`` before the
        sources). For the stochastic model.
    base_law, base_shape
        See :func:`crawling.sample_new_utility`.
    ties : {"lowest", "random"}
        Among sources tied at the ``M``-th largest priority, those of lowest number, or a
        uniformly random subset (which needs ``rng``: a run that differs at each call without
        saying so is refused).
    record : bool
        Keep the states and decisions (memory ``O(n_periods N)``).
    rng : numpy.random.Generator or seed, optional
        Drawn from in this order each period: the random ties (``ties="random"``), then the
        stochastic model's new utility. ``None``: a stream seeded by the operating system.
    utilities : array_like, shape (n_periods, [R,] N), optional
        Stochastic model: the new utilities to replay instead of drawing them from ``rng``
        (:func:`crawling.draw_new_utilities` with the same ``rng`` draws exactly these, so
        several policies can share one draw of their common arrivals).

    Returns
    -------
    whittle_lib.rmab.RmabSimulation
        ``rewards`` per period (and replication), and if ``record`` the states ``x(t)`` before
        each decision (``states``) and the crawl decisions (``active``).

    Raises
    ------
    TypeError
        For a model that is not a ``CrawlingModel``, a rule that is not callable, or counts,
        flags and seeds of the wrong type.
    ValueError
        For a budget, horizon or replication count out of range, a priority of the wrong shape
        or with nan (naming the source, its state and the period), too few utilities.

    Examples
    --------
    >>> from whittle_lib.models import crawling
    >>> model = crawling.table_one()
    >>> run = simulate_crawling(model, WhittleRule(model), 1, 100, stochastic=True,
    ...                         replications=4, rng=1)
    >>> run.rewards.shape
    (100, 4)
    """
    return _simulate(model, rule, M, n_periods, None, x0, stochastic, replications, base_law,
                     base_shape, ties, record, rng, utilities)[0]


def simulate_crawling_many(model: CrawlingModel, rule, M, n_periods: int, *, slots: int,
                           x0=None, stochastic: bool = False, replications: int | None = None,
                           base_law: str = "exponential", base_shape: float | None = None,
                           record: bool = False, rng=None, utilities=None) -> list:
    """Run ``slots`` priority policies in lock-step on common arrivals: :func:`simulate_crawling`
    for each, at the cost of one loop.

    The state carries an axis of ``S = slots`` policies before the sources, ``x`` of shape
    ``([R,] S, N)``; each period makes one call ``rule(x, age, t)`` for all of them, crawls the
    ``M[s]`` sources of highest priority in slot ``s`` (ties to the lowest number), and moves
    every slot by eqs. (2)-(3) or (17) with the *same* new utility (drawn once per period as
    :func:`simulate_crawling` draws it, or replayed from ``utilities``). Slot ``s`` therefore
    earns, period by period and bit for bit, what ``simulate_crawling(model, rule_s, M[s],
    n_periods, ...)`` earns with the same generator or the same ``utilities``, ``rule_s``
    being the rule on slot ``s`` alone (every operation is element-wise or a sum over the ``N``
    sources of one row, and the selection is :func:`top_m`'s). Used to compare many policies
    on common random numbers, where the per-period cost of one run is Python overhead on small
    arrays: one rule that computes the priorities of all slots in one call (for example a
    :class:`~whittle_lib.learning.LearnedIndexRule` with weights of shape ``([R,] S, N, K)``)
    pays that overhead once; :class:`SlotRules` stacks any rules.

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        ``rule(x, age, t) -> priority`` with ``x``, ``age`` and the priority of shape
        ``([R,] S, N)``.
    M : int or sequence of int
        Sources crawled per period, one for all slots or one per slot, each in ``[0, N]``.
    n_periods : int
    slots : int
        ``S``, the number of policies, at least 1.
    x0, stochastic, replications, base_law, base_shape, record, rng, utilities
        As in :func:`simulate_crawling` (``x0`` and ``utilities`` shared by every slot); ``rng``
        is drawn from only for the stochastic model's new utilities, as
        :func:`simulate_crawling` draws. Ties go to the lowest number (random ties would draw
        for every slot at once, unlike one run).

    Returns
    -------
    list of whittle_lib.rmab.RmabSimulation
        One per slot, ``rewards`` of shape ``(n_periods, [R])``, as :func:`simulate_crawling`
        returns (so ``average_reward`` is computed as there).

    Raises
    ------
    TypeError, ValueError
        As :func:`simulate_crawling`; for a slot count out of range, or a budget list whose
        length is not ``slots``.

    Examples
    --------
    >>> from whittle_lib.models import crawling
    >>> model = crawling.table_one()
    >>> runs = simulate_crawling_many(model, SlotRules([WhittleRule(model), RoundRobinRule(4, 1)]),
    ...                               1, 200, slots=2, stochastic=True, rng=3)
    >>> alone = simulate_crawling(model, WhittleRule(model), 1, 200, stochastic=True, rng=3)
    >>> bool(runs[0].average_reward == alone.average_reward)
    True
    """
    slots = check_integer("slots", slots, 1)
    return _simulate(model, rule, M, n_periods, slots, x0, stochastic, replications, base_law,
                     base_shape, "lowest", record, rng, utilities)


def _budgets(M, n: int, slots: int | None) -> np.ndarray:
    """The budget of each slot (one number without slots), checked."""
    if slots is None or np.ndim(M) == 0:
        if isinstance(M, np.ndarray):
            M = M.item() if M.dtype.kind in "iu" else M
        return np.full(slots or 1, check_budget(M, n), dtype=np.intp)
    if not isinstance(M, (list, tuple, np.ndarray)):
        raise TypeError(f"M must be an integer or a list of one integer per slot, got "
                        f"{type(M).__name__}")
    if len(M) != slots:
        raise ValueError(f"M must be an integer or one integer per slot ({slots}), got {M!r}")
    return np.array([check_budget(m, n) for m in M], dtype=np.intp)


def _simulate(model, rule, M, n_periods, slots, x0, stochastic, replications, base_law,
              base_shape, ties, record, rng, utilities) -> list:
    """The one loop of :func:`simulate_crawling` (``slots=None``: no slot axis) and
    :func:`simulate_crawling_many`; a list of one result per slot."""
    _check_model(model)
    if not callable(rule):
        raise TypeError(f"rule must be a callable rule(x, age, t) -> priority, got "
                        f"{type(rule).__name__}")
    n = model.n_sources
    budget = _budgets(M, n, slots)
    T = check_integer("n_periods", n_periods, 1)
    R = None if replications is None else check_integer("replications", replications, 1)
    check_choice("ties", ties, _TIES)
    if not isinstance(record, (bool, np.bool_)):
        raise TypeError(f"record must be True or False, got {type(record).__name__} {record!r}")
    rng = check_rng(rng, required=ties == "random", why="with ties='random'")
    dynamics = crawling.CrawlingDynamics(model, x0, stochastic, base_law, base_shape, utilities)
    start = dynamics.initial(R)                   # checks x0 and the utilities' shape
    if dynamics.utilities is not None and dynamics.utilities.shape[0] < T:
        raise ValueError(f"utilities hold {dynamics.utilities.shape[0]} periods, the run is "
                         f"longer ({T})")
    lead = () if R is None else (R,)
    if slots is None:
        shape = (*lead, n)
        x, age = start.x, start.age               # fresh arrays of their own
    else:
        shape = (*lead, slots, n)
        x = np.broadcast_to(start.x[..., None, :], shape).copy()
        age = np.broadcast_to(start.age[..., None, :], shape).copy()
    alpha = model.alpha
    one_budget = int(budget[0]) if np.all(budget == budget[0]) else None
    # the same selection with few indices computed (WhittleRule.screened)
    screen = type(rule) is WhittleRule and one_budget is not None
    rewards = np.empty((T, *shape[:-1]))
    state_log, active_log = [], []
    for t in range(T):
        if screen:
            priority = rule.screened(x, one_budget)
        else:
            priority = np.asarray(rule(x, age, t), dtype=float)
            if priority.shape != shape:
                if not _broadcasts_to(priority.shape, shape):
                    raise ValueError(f"the rule must give priorities of shape {shape} (one per "
                                     f"source), got {priority.shape}")
                priority = np.broadcast_to(priority, shape)
        if np.isnan(priority).any():
            raise _nan_priority(priority, x, t, slots)
        # top_m in each slot with its budget
        if ties == "random":
            crawl = rmab._top_m_random(priority, one_budget, rng)
        elif one_budget is not None:
            crawl = rmab._top_m_lowest(priority, one_budget)
        else:
            crawl = rmab._top_m_rows(priority, budget)
        if record:
            state_log.append(x.copy())
            active_log.append(crawl)
        rewards[t] = np.sum(x, axis=-1, where=crawl)
        new = np.asarray(dynamics.new_utility(t, R, rng))
        if slots is not None:
            new = np.broadcast_to(new[..., None, :], shape)
        # eqs. (2)-(3) or (17), as CrawlingDynamics.step: x <- alpha x + U, then U where crawled
        x *= alpha
        x += new
        np.copyto(x, new, where=crawl)
        age += 1.0
        age[crawl] = 1.0
    states = np.stack(state_log) if record else None
    active = np.stack(active_log) if record else None
    if slots is None:
        return [rmab.RmabSimulation(rewards, states, active)]
    return [rmab.RmabSimulation(np.ascontiguousarray(rewards[..., s]),
                                None if states is None else np.ascontiguousarray(states[..., s, :]),
                                None if active is None else np.ascontiguousarray(active[..., s, :]))
            for s in range(slots)]


def _broadcasts_to(small: tuple, shape: tuple) -> bool:
    try:
        return np.broadcast_shapes(small, shape) == shape
    except ValueError:
        return False


def _nan_priority(priority, x, t: int, slots) -> ValueError:
    where = tuple(int(i) for i in np.argwhere(np.isnan(priority))[0])
    lead = where[:-1]
    slot = f", slot {lead[-1]}" if slots is not None else ""
    replication = f", replication {lead[0]}" if len(lead) > (slots is not None) else ""
    return ValueError(f"the rule's priority of source {where[-1]} in state {float(x[where])!r} "
                      f"is nan (period {t}{replication}{slot}): give every source a number")


def crawling_orbit(model: CrawlingModel, rule, M: int, *, x0=None, ties: str = "lowest",
                   max_periods: int = 100_000) -> rmab.PeriodicOrbit:
    """The exact long-run average reward of a deterministic policy on the deterministic model.

    The deterministic dynamics (eqs. 2-3) computed in floating point from ``u`` revisit
    bit-identical states, so the joint state (with the phase ``t mod time_period`` of a
    time-dependent rule) repeats; the average over the first repeated cycle is the long-run
    average (4) exactly. The crawling form of :func:`whittle_lib.rmab.periodic_orbit` on
    :class:`~whittle_lib.models.crawling.CrawlingDynamics`: ``rule(x, age, t)`` as in
    :func:`simulate_crawling`, exactly ``M`` sources crawled per period (ties to the lowest
    number), the crawl decisions as ``orbit.active``.

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        ``rule(x, age, t) -> priority`` of shape ``(N,)``, deterministic; a rule with a
        ``time_period`` attribute (:class:`RoundRobinRule`) is periodic in ``t``.
    M : int
        In ``[0, N]``.
    x0 : array_like, optional
        Initial states (default ``u``).
    ties : {"lowest"}
        The only deterministic tie rule.
    max_periods : int
        Give up (``RuntimeError``) after this many periods.

    Examples
    --------
    >>> from whittle_lib.models import crawling
    >>> model = crawling.table_one()
    >>> crawling_orbit(model, WhittleRule(model), 1).period     # sources 1 and 2 in turn
    2
    """
    _check_model(model)
    if not callable(rule):
        raise TypeError(f"rule must be a callable rule(x, age, t) -> priority, got "
                        f"{type(rule).__name__}")
    M = check_budget(M, model.n_sources)
    check_choice("ties", ties, _TIES)
    if ties != "lowest":
        raise ValueError("crawling_orbit needs a deterministic tie rule, ties='lowest', got "
                         f"ties={ties!r}")
    max_periods = check_integer("max_periods", max_periods, 1)
    dynamics = crawling.CrawlingDynamics(model, x0)
    return rmab.periodic_orbit(dynamics, lambda state, t: rule(state.x, state.age, t), M,
                               activation="exactly",
                               time_period=getattr(rule, "time_period", None) or 1,
                               max_periods=max_periods)
