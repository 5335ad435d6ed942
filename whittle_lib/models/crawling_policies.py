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
from .crawling import CrawlingModel
from .. import rmab
from ..rmab import PeriodicOrbit, top_m  # the core's, re-exported: crawling code calls them here

__all__ = [
    "top_m",
    "WhittleRule",
    "CurrentValueRule",
    "ExpectedValueRule",
    "RoundRobinRule",
    "simulate",
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

    def __call__(self, x, age, t):
        m = self.model
        return crawling.visited_states(m.u, m.alpha, np.asarray(age, dtype=float))


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
                         ties=ties, record=record, rng=rng)


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
                               time_period=getattr(rule, "time_period", None) or 1,
                               max_periods=max_periods)
