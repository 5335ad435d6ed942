"""N restless arms under a budget: top-M, index rules, a simulator, exact periodic averages, the
relaxation bound.

This is the core a reader uses on their own arms. It knows no paper: it takes finite
:class:`~whittle_lib.arms.RestlessArm` objects (or any dynamics with the same two methods, see
:class:`Dynamics`) and a priority rule, and activates each period the ``M`` arms of highest
priority.

Reward maximisation throughout; the subsidy ``lam`` of the relaxation is paid for the passive
action (Whittle 1988).

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world", *J. Appl.
   Probab.* 25A, 287-298, 1988 (the relaxation and its bound, Sec. 3-4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from . import mdp
from .arms import RestlessArm
from .indices import whittle_indices

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
    "RelaxationBound",
    "relaxation_bound",
]

_TIES = ("lowest", "random")


def top_m(priority, M: int, *, ties: str = "lowest", threshold: float | None = None,
          rng=None) -> np.ndarray:
    """Boolean mask of the ``M`` largest priorities along the last axis.

    Parameters
    ----------
    priority : array_like, shape (..., N)
    M : int
        Number selected in each row, ``0 <= M <= N``.
    ties : {"lowest", "random"}
        Among arms tied at the ``M``-th largest priority, take those of lowest number
        (deterministic), or a uniformly random subset (``rng``).
    threshold : float, optional
        Only priorities strictly above it are eligible, so a row may select fewer than ``M``
        (for example an index policy that never activates an arm whose index is not
        positive).
    rng : numpy.random.Generator or seed, optional
        Needed for ``ties="random"``.

    Examples
    --------
    >>> top_m([3.0, 5.0, 5.0, 1.0], 1)
    array([False,  True, False, False])
    >>> top_m([3.0, 5.0, 5.0, -1.0], 3, threshold=0.0)
    array([ True,  True,  True, False])
    """
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    priority = np.asarray(priority, dtype=float)
    n = priority.shape[-1]
    if isinstance(M, bool) or int(M) != M or not 0 <= M <= n:
        raise ValueError(f"M must be an integer in [0, N={n}], got {M!r}")
    M = int(M)
    _check_no_nan(priority)
    if threshold is not None and np.isnan(threshold):
        raise ValueError("threshold is nan")
    if ties == "lowest":
        chosen = _top_m_lowest(priority, M)
    else:
        chosen = _top_m_random(priority, M, np.random.default_rng(rng))
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
    cut = np.partition(priority, n - M, axis=-1)[..., n - M:n - M + 1]   # the M-th largest
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
    :class:`whittle_lib.models.crawling.CrawlingDynamics` for the crawling model's continuous states.
    """

    n_arms: int

    def initial(self, replications: int | None): ...

    def step(self, states, active: np.ndarray, rng: np.random.Generator): ...

    def observe(self, states) -> np.ndarray: ...


@dataclass(frozen=True, eq=False)
class FiniteArms:
    """N finite arms, possibly of different sizes, as one vectorised system.

    Parameters
    ----------
    arms : sequence of RestlessArm
    x0 : array_like of int, shape (N,), optional
        Initial state of each arm, 0 by default.
    """

    arms: tuple
    x0: np.ndarray = None  # type: ignore[assignment]
    _cdf: np.ndarray = field(init=False, repr=False)
    _rewards: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        arms = tuple(self.arms)
        if not arms or not all(isinstance(a, RestlessArm) for a in arms):
            raise ValueError("arms must be a non-empty sequence of RestlessArm")
        sizes = np.array([a.n_states for a in arms])
        x0 = (np.zeros(len(arms), dtype=int) if self.x0 is None
              else np.asarray(self.x0))
        if x0.shape != (len(arms),) or not np.issubdtype(x0.dtype, np.integer) \
                or np.any((x0 < 0) | (x0 >= sizes)):
            raise ValueError(f"x0 must hold one state per arm, each in 0..n_i - 1, got {x0!r}")
        n = int(sizes.max())
        # padded cumulative rows cdf[i, a, x, :] and rewards r[i, a, x]; padding is never
        # reached (a state of arm i is below n_i)
        cdf = np.ones((len(arms), 2, n, n))
        rewards = np.zeros((len(arms), 2, n))
        for i, arm in enumerate(arms):
            k = arm.n_states
            for a, (P, r) in enumerate(((arm.P0, arm.R0), (arm.P1, arm.R1))):
                cdf[i, a, :k, :k] = np.cumsum(P, axis=1)
                rewards[i, a, :k] = r
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "x0", x0.astype(int))
        object.__setattr__(self, "_cdf", cdf)
        object.__setattr__(self, "_rewards", rewards)

    @property
    def n_arms(self) -> int:
        return len(self.arms)

    def initial(self, replications: int | None) -> np.ndarray:
        return self.x0.copy() if replications is None else np.tile(self.x0, (replications, 1))

    def step(self, states, active, rng):
        arm = np.arange(self.n_arms)
        action = active.astype(int)
        rewards = self._rewards[arm, action, states]
        u = rng.random(states.shape)
        return sample_next(self._cdf[arm, action, states], u), rewards.sum(axis=-1)

    def observe(self, states) -> np.ndarray:
        return np.array(states, copy=True)


@dataclass(frozen=True)
class IndexRule:
    """Priority ``index_i(x_i)``: a table of indices per arm, as from :func:`whittle_indices`.

    Parameters
    ----------
    indices : sequence of array_like
        ``indices[i][x]`` for arm ``i`` in state ``x``.
    """

    indices: tuple

    def __post_init__(self) -> None:
        tables = tuple(np.asarray(t, dtype=float) for t in self.indices)
        if not tables or any(t.ndim != 1 for t in tables):
            raise ValueError("indices must be one 1-d array per arm")
        n = max(t.size for t in tables)
        padded = np.full((len(tables), n), -np.inf)
        for i, t in enumerate(tables):
            padded[i, :t.size] = t
        object.__setattr__(self, "indices", tables)
        object.__setattr__(self, "_table", padded)

    def __call__(self, states: np.ndarray, t: int) -> np.ndarray:
        return self._table[np.arange(self._table.shape[0])[None, :], states]


@dataclass(frozen=True)
class RmabSimulation:
    """A simulated run of N arms under a priority rule.

    Attributes
    ----------
    rewards : ndarray, shape (n_periods, replications) or (n_periods,)
        Total reward of the N arms in each period.
    states : ndarray or None
        The states before each decision (``dynamics.observe``), if recorded.
    active : ndarray of bool, shape (n_periods, [replications,] N), or None
        The activations, if recorded.
    """

    rewards: np.ndarray
    states: np.ndarray | None = None
    active: np.ndarray | None = None

    @property
    def average_reward(self) -> np.ndarray:
        """Time-average reward per period, one per replication."""
        return self.rewards.mean(axis=0)


def simulate(dynamics: Dynamics, rule, M: int, n_periods: int, *, replications: int | None = 1,
             ties: str = "lowest", threshold: float | None = None, record: bool = False,
             rng=None) -> RmabSimulation:
    """Run a priority rule with budget ``M`` for ``n_periods`` periods.

    Each period: priorities ``rule(states, t)`` (shape ``(replications, N)``), the ``M``
    highest are active (:func:`top_m`), the arms earn their rewards and move
    (``dynamics.step``). Vectorised over arms and replications; the loop runs over periods.
    This is the library's one simulator: finite arms (:class:`FiniteArms`) and the crawling
    model (:class:`whittle_lib.models.crawling.CrawlingDynamics`) both run through it.

    Parameters
    ----------
    dynamics : FiniteArms or any :class:`Dynamics`
    rule : callable
        ``rule(states, t) -> priority`` of shape ``(replications, N)``, e.g. :class:`IndexRule`.
    M : int
        Arms activated per period.
    n_periods : int
    replications : int or None
        Independent copies run at once; ``None`` for one run without the replication axis.
    ties, threshold
        As in :func:`top_m`.
    record : bool
        Keep the states (``dynamics.observe``) and the activations.
    rng : numpy.random.Generator or seed
        Drawn from in this order each period: ``top_m`` (random ties only), then
        ``dynamics.step``.

    Returns
    -------
    RmabSimulation
    """
    if isinstance(n_periods, bool) or int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    if replications is not None and (isinstance(replications, bool)
                                     or int(replications) != replications or replications < 1):
        raise ValueError(f"replications must be a positive integer or None, got {replications!r}")
    rng = np.random.default_rng(rng)
    n_periods = int(n_periods)
    states = dynamics.initial(None if replications is None else int(replications))
    lead = () if replications is None else (int(replications),)
    rewards = np.empty((n_periods, *lead))
    state_log, active_log = [], []
    for t in range(n_periods):
        active = top_m(rule(states, t), M, ties=ties, threshold=threshold, rng=rng)
        if record:
            state_log.append(dynamics.observe(states))
            active_log.append(active)
        states, rewards[t] = dynamics.step(states, active, rng)
    if not record:
        return RmabSimulation(rewards)
    return RmabSimulation(rewards, np.stack(state_log), np.stack(active_log))


@dataclass(frozen=True)
class PeriodicOrbit:
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
    """

    transient: int
    period: int
    average_reward: float
    rewards: np.ndarray
    active: np.ndarray


def periodic_orbit(dynamics: Dynamics, rule, M: int, *, time_period: int = 1,
                   max_periods: int = 100_000) -> PeriodicOrbit:
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
    rule : callable
        ``rule(states, t) -> priority`` of shape ``(N,)``.
    M : int
        Arms activated per period.
    time_period : int
        Period of the rule in ``t`` (1 for a stationary rule).
    max_periods : int
        Give up after this many periods.

    Raises
    ------
    RuntimeError
        If no state repeats within ``max_periods``.
    """
    for name, value in (("time_period", time_period), ("max_periods", max_periods)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    states = dynamics.initial(None)
    seen: dict[bytes, int] = {}
    rewards, actives = [], []
    for t in range(int(max_periods)):
        key = dynamics.observe(states).tobytes() + np.int64(t % time_period).tobytes()
        if key in seen:
            start = seen[key]
            cycle = np.asarray(rewards[start:])
            return PeriodicOrbit(transient=start, period=t - start,
                                 average_reward=float(cycle.mean()),
                                 rewards=np.asarray(rewards), active=np.asarray(actives))
        seen[key] = t
        active = top_m(rule(states, t), M)
        states, reward = dynamics.step(states, active, None)
        rewards.append(float(reward))
        actives.append(active)
    raise RuntimeError(f"no repeated state within {max_periods} periods")


@dataclass(frozen=True)
class RelaxationBound:
    """Whittle's relaxation: an upper bound on the average reward of any policy with budget M.

    Attributes
    ----------
    bound : float
        ``min_lam  sum_i g_i(lam) - lam (N - M)``, where ``g_i(lam)`` is the optimal gain of
        arm ``i`` alone with subsidy ``lam`` for passivity.
    subsidy : float
        A minimising ``lam``.
    """

    bound: float
    subsidy: float


def relaxation_bound(arms: Sequence[RestlessArm], M: int) -> RelaxationBound:
    """Whittle's bound on the long-run average reward of N arms with M active per period.

    The relaxed problem asks for exactly ``M`` active arms on average over time instead of in
    every period; its Lagrangian dual is
    ``D(lam) = sum_i g_i(lam) - lam (N - M)``, convex and piecewise linear in ``lam`` [W88]_.
    For indexable arms its kinks are the arms' Whittle indices, so the minimum over those
    values is exact; each ``g_i(lam)`` is solved by :func:`mdp.policy_iteration`.

    Parameters
    ----------
    arms : sequence of RestlessArm
        Indexable arms (average-reward criterion); a non-indexable arm raises ``ValueError``.
    M : int
        ``0 <= M <= N``.

    Examples
    --------
    Two copies of an arm that, when active, pays 1 in state 1 and moves to state 0, and that
    otherwise drifts to state 1 with probability 1/2. With one activation per period the
    relaxation earns 1/2: the two arms take turns.

    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> round(relaxation_bound([arm, arm], 1).bound, 12)
    0.5
    """
    arms = list(arms)
    N = len(arms)
    if isinstance(M, bool) or int(M) != M or not 0 <= M <= N:
        raise ValueError(f"M must be an integer in [0, N={N}], got {M!r}")
    kinks = []
    for i, arm in enumerate(arms):
        result = whittle_indices(arm, discount=1.0)
        if result.status.name != "INDEXABLE":
            raise ValueError(f"arms[{i}] is not indexable ({result.status.name}): the "
                             "relaxation bound here needs indexable arms")
        kinks.append(result.indices)
    candidates = np.unique(np.concatenate(kinks))

    def dual(lam: float) -> float:
        total = 0.0
        for arm in arms:
            m = mdp.FiniteMDP(transitions=[arm.P0, arm.P1], rewards=[arm.R0 + lam, arm.R1])
            total += float(np.max(mdp.policy_iteration(m).gain_by_state))
        return total - lam * (N - M)

    values = np.array([dual(float(lam)) for lam in candidates])
    k = int(np.argmin(values))
    return RelaxationBound(float(values[k]), float(candidates[k]))
