r"""Borkar & Chadha (ICC 2018): the readings of its Table II and the sweeps that judge its claims.

The model (the crawler of Avrachenkov & Borkar) lives in :mod:`whittle_lib.models.crawling`, the
learning scheme in :mod:`whittle_lib.learning.index_learning`. This module holds what the paper
left open and the computations that decide whether a verdict against it survives every reading:

* **Greedy.** Sec. IV-B prints the greedy priority
  :math:`\frac{\Lambda_i\bar\xi_i}{\mu_i}(1 - e^{-\mu_i t_i})`, a function of the time
  :math:`t_i` since the last crawl only. The ages move deterministically given the decisions,
  so the policy is a *fixed* (eventually periodic) schedule, whatever the arrivals. The reward
  of a crawl is :math:`X_i(n) = \sum_{d < g} \alpha_i^d U_i(n - d)` (``g`` periods since the
  previous crawl), linear in the utilities, so the expected reward of the schedule equals its
  reward on the deterministic model (:math:`U \equiv u`) whatever the law of the utilities,
  and the spread of one run is exact too (:func:`schedule_run_sd`). :func:`greedy_readings`
  lists every reading of the printed rule we can name; :func:`greedy_reading_rewards`
  computes each exactly (:func:`whittle_lib.models.crawling_policies.periodic_orbit`).
* **The index of the stochastic model.** :func:`stochastic_whittle_index` computes it
  independently of the learning code, by renewal Monte Carlo over threshold policies.
* **The learned indices.** :func:`learning_sweep_replication` runs the learning scheme and
  Table II's evaluation for a grid of index steps ``a0`` and projection fractions ``p`` (one
  independent replication per call, for :func:`whittle_lib.stats.replicate`).

References
----------
V. Borkar, K. Chadha, "A Reinforcement Learning Algorithm for Restless Bandits", Indian
Control Conference 2018, Sec. III (eqs. (7)-(11)) and Sec. IV-B (Table II, the greedy rule).
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC
2015 (eqs. (1)-(3), (17)).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..models import crawling, crawling_policies as policies
from ..models.crawling import CrawlingModel
from .crawling_2015 import index_2018
from ..learning.index_learning import (CrawlerIndexProblem, LearnedIndexRule, StepSizes,
                                       learn_whittle_index)

__all__ = [
    "index_2018",  # the printed form, kept with the 2015 forms in crawling_2015
    "AgePriorityRule",
    "StatePriorityRule",
    "StaticPriorityRule",
    "PrintedIndexRule",
    "GreedyReading",
    "greedy_readings",
    "GreedyRewards",
    "greedy_reading_rewards",
    "utility_variance",
    "schedule_run_sd",
    "one_run_tolerance",
    "StochasticIndex",
    "stochastic_whittle_index",
    "run_calls",
    "SweepConfig",
    "evaluate_on_common_arrivals",
    "SweepReplication",
    "learning_sweep_replication",
]


# -- readings of the greedy rule -------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class AgePriorityRule:
    r"""Priority ``scale_i (1 - exp(-rate_i (t_i + shift)))``, divided by ``t_i + shift`` if
    ``per_period``; ``t_i`` the periods since the last crawl (1 just after it).

    With ``scale = Lambda xi / mu`` and ``rate = mu`` this is the greedy rule of Sec. IV-B as
    printed. ``rate = 0`` gives the age itself (least recently crawled first).
    """

    scale: np.ndarray
    rate: np.ndarray
    shift: float = 0.0
    per_period: bool = False
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for name in ("scale", "rate"):
            arr = np.array(getattr(self, name), dtype=float)
            if np.any(~np.isfinite(arr)) or np.any(arr < 0):
                raise ValueError(f"{name} must be finite and >= 0, got {arr.tolist()}")
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if not math.isfinite(self.shift):
            raise ValueError(f"shift must be finite, got {self.shift!r}")

    def __call__(self, x, age, t):
        a = np.asarray(age, dtype=float) + self.shift
        gain = np.where(self.rate > 0, -np.expm1(-self.rate * a), a)
        value = self.scale * gain
        return value / np.maximum(a, 1e-300) if self.per_period else value


@dataclass(frozen=True, eq=False)
class StatePriorityRule:
    """Priority ``weight_i x_i``: greedy on the current state (``weight = 1``), or ``x / mu``."""

    weight: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        arr = np.array(self.weight, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"weight must be finite and > 0, got {arr.tolist()}")
        arr.setflags(write=False)
        object.__setattr__(self, "weight", arr)

    def __call__(self, x, age, t):
        return self.weight * np.asarray(x, dtype=float)


@dataclass(frozen=True, eq=False)
class StaticPriorityRule:
    """A constant priority per source: always crawl the same ``M`` sources."""

    value: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        arr = np.array(self.value, dtype=float)
        arr.setflags(write=False)
        object.__setattr__(self, "value", arr)

    def __call__(self, x, age, t):
        return np.broadcast_to(self.value, np.shape(x))


@dataclass(frozen=True, eq=False)
class PrintedIndexRule:
    """Priority by the index *as printed* in Sec. IV-A (:func:`whittle_lib.papers.crawling_2015.index_2018`,
    an extra ``u alpha^zeta`` over Theorem 1 of the 2015 paper); picklable."""

    model: CrawlingModel
    time_period: int | None = field(default=None, init=False)

    def __call__(self, x, age, t):
        return index_2018(np.asarray(x, dtype=float), self.model.u, self.model.alpha)


@dataclass(frozen=True, eq=False)
class GreedyReading:
    """One reading of the greedy rule of Sec. IV-B.

    Attributes
    ----------
    name : str
    rule : callable
        ``rule(x, age, t) -> priority``.
    fixed_schedule : bool
        The priority depends on the ages only: the decisions do not depend on the arrivals and
        the expected reward on the stochastic model equals the reward on the deterministic one.
    """

    name: str
    rule: object
    fixed_schedule: bool


def greedy_readings(model: CrawlingModel) -> list[GreedyReading]:
    r"""Every reading of the printed greedy rule we can name (Sec. IV-B).

    The printed rule is :math:`\frac{\Lambda_i\bar\xi_i}{\mu_i}(1 - e^{-\mu_i t_i})`,
    :math:`\bar\xi_i = E\xi^i_n`, :math:`t_i` the time since the last crawl. The readings:
    the rule as printed; the age shifted by -1 or +1; without the :math:`1/\mu`; as a rate
    (divided by :math:`t`); :math:`\bar\xi_i = 1/\theta_i` (``theta`` a rate); ``theta`` and
    ``mu`` exchanged; least recently crawled; greedy on the state :math:`x` and on
    :math:`x/\mu`; always the sources of highest :math:`u` (the 2015 paper's "greedily crawls
    only source 1"); and every permutation of the sources' :math:`\mu` or :math:`\bar\xi` in
    the rule (a mix-up of the table's columns). ``Lambda_i`` is common to all sources in
    Table I, so its value (25 or 250) does not change any schedule.
    """
    lam, xi, mu = model.arrival_rate, model.xi_mean, model.mu
    out = [
        GreedyReading("as printed (t = 1 just after a crawl)", AgePriorityRule(lam * xi / mu, mu),
                      True),
        GreedyReading("t - 1 (t = 0 just after a crawl)", AgePriorityRule(lam * xi / mu, mu, -1.0),
                      True),
        GreedyReading("t + 1 (value at the next period)", AgePriorityRule(lam * xi / mu, mu, 1.0),
                      True),
        GreedyReading("without the 1/mu", AgePriorityRule(lam * xi, mu), True),
        GreedyReading("reward rate: divided by t", AgePriorityRule(lam * xi / mu, mu,
                                                                    per_period=True), True),
        GreedyReading("xi-bar = 1/theta (theta a rate)", AgePriorityRule(lam / xi / mu, mu), True),
        GreedyReading("theta and mu columns exchanged", AgePriorityRule(lam * mu / xi, xi), True),
        GreedyReading("Lambda = 25 in the rule", AgePriorityRule(25.0 * xi / mu, mu), True),
        GreedyReading("least recently crawled (priority t)",
                      AgePriorityRule(np.ones_like(mu), np.zeros_like(mu)), True),
        GreedyReading("static: highest u", StaticPriorityRule(model.u), True),
        GreedyReading("current state x", StatePriorityRule(np.ones_like(mu)), False),
        GreedyReading("x / mu", StatePriorityRule(1.0 / mu), False),
    ]
    n = model.n_sources
    for perm in itertools.permutations(range(n)):
        if perm == tuple(range(n)):
            continue
        p = list(perm)
        out.append(GreedyReading(f"mu of sources {[q + 1 for q in p]}",
                                 AgePriorityRule(lam * xi / mu[p], mu[p]), True))
        out.append(GreedyReading(f"xi-bar of sources {[q + 1 for q in p]}",
                                 AgePriorityRule(lam * xi[p] / mu, mu), True))
    return out


@dataclass(frozen=True)
class GreedyRewards:
    """Exact long-run average rewards of the greedy readings on the deterministic model.

    Attributes
    ----------
    names : tuple of str
    fixed_schedule : ndarray of bool, shape (n,)
    M : tuple of int
    rewards : ndarray, shape (n, len(M))
        Exact on the deterministic model; for a fixed schedule also the expected reward on the
        stochastic model.
    run_sd : ndarray, shape (n, len(M))
        Exact standard deviation of the average over ``n_periods`` periods of one run on the
        stochastic model (:func:`schedule_run_sd`); ``nan`` where the schedule is not fixed.
    """

    names: tuple
    fixed_schedule: np.ndarray
    M: tuple
    rewards: np.ndarray
    run_sd: np.ndarray


def greedy_reading_rewards(model: CrawlingModel, M=(1, 2), *, n_periods: int = 10_000,
                           base_law: str = "exponential") -> GreedyRewards:
    """Exact rewards (periodic orbit) of every :func:`greedy_readings` for each ``M``."""
    readings = greedy_readings(model)
    Ms = tuple(int(m) for m in M)
    rewards = np.empty((len(readings), len(Ms)))
    sd = np.full((len(readings), len(Ms)), np.nan)
    for j, reading in enumerate(readings):
        for c, m in enumerate(Ms):
            orbit = policies.periodic_orbit(model, reading.rule, m)
            rewards[j, c] = orbit.average_reward
            if reading.fixed_schedule:
                sd[j, c] = schedule_run_sd(model, orbit, n_periods, base_law=base_law)
    return GreedyRewards(tuple(r.name for r in readings),
                         np.array([r.fixed_schedule for r in readings]), Ms, rewards, sd)


# -- the spread of one run of a fixed schedule ----------------------------------------------------

def utility_variance(model: CrawlingModel, base_law: str = "exponential") -> np.ndarray:
    r"""``Var U_i`` of the utility arriving in one period (eq. 17 of the 2015 paper).

    :math:`U = \sum_k \xi_k e^{-\mu a_k}` over a Poisson(:math:`\Lambda T`) number of contents
    with ages :math:`a_k` uniform on :math:`[0, T]`: a compound Poisson sum, so
    :math:`\operatorname{Var} U = \Lambda T\, E\xi^2\, E e^{-2\mu a}
    = \Lambda E\xi^2 (1 - e^{-2\mu T}) / (2\mu)`, with :math:`E\xi^2 = 2\bar\xi^2`
    (exponential) or :math:`\bar\xi^2` (deterministic).
    """
    if base_law not in ("exponential", "deterministic"):
        raise ValueError(f"base_law must be 'exponential' or 'deterministic', got {base_law!r}")
    second = (2.0 if base_law == "exponential" else 1.0) * model.xi_mean ** 2
    return model.arrival_rate * second * -np.expm1(-2 * model.mu * model.period) / (2 * model.mu)


def schedule_run_sd(model: CrawlingModel, orbit, n_periods: int, *,
                    base_law: str = "exponential") -> float:
    r"""Standard deviation of the average reward of one run of a fixed schedule.

    A fixed schedule (one whose decisions do not depend on the arrivals, e.g. round robin or
    an age-based priority) collects at a crawl of source ``i`` after a gap of ``g`` periods
    :math:`\sum_{d<g}\alpha_i^d U_i(n-d)`: every utility enters the total once, with weight
    :math:`\alpha_i^d`. Over the cycle of ``orbit`` (length ``L``) the weights' squares sum to
    :math:`S_i = \sum_{\text{gaps}} (1-\alpha_i^{2g})/(1-\alpha_i^2)`, so the average over
    ``n_periods`` periods has variance :math:`\sum_i \operatorname{Var}U_i\,S_i/(L\,n)` (the
    transient and the end effects are :math:`O(1/n^2)`).

    Parameters
    ----------
    model : CrawlingModel
    orbit : PeriodicOrbit
        From :func:`whittle_lib.models.crawling_policies.periodic_orbit` with a fixed-schedule rule.
    n_periods : int
    """
    if int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    cycle = np.asarray(orbit.crawled[orbit.transient:], dtype=bool)     # (L, N)
    L = cycle.shape[0]
    alpha2 = model.alpha ** 2
    s = np.zeros(model.n_sources)
    for i in range(model.n_sources):
        when = np.flatnonzero(cycle[:, i])
        if when.size == 0:
            continue
        gaps = np.diff(np.concatenate([when, [when[0] + L]]))
        s[i] = np.sum(-np.expm1(gaps * np.log(alpha2[i])) / (1 - alpha2[i]))
    var = np.sum(utility_variance(model, base_law) * s) / (L * n_periods)
    return float(math.sqrt(var))


def one_run_tolerance(run_sd: float, replications: int, *, half_digit: float = 0.005) -> float:
    r"""Tolerance for comparing a number the paper printed from *one* run with our mean of
    ``R`` runs: ``half_digit + 1.96 sd sqrt(1 + 1/R)``, half a unit of the printed digit plus
    the 95 % range of the difference between one run and a mean of ``R`` independent ones.
    """
    if not (math.isfinite(run_sd) and run_sd >= 0):
        raise ValueError(f"run_sd must be finite and >= 0, got {run_sd!r}")
    if int(replications) != replications or replications < 1:
        raise ValueError(f"replications must be a positive integer, got {replications!r}")
    return half_digit + 1.96 * run_sd * math.sqrt(1 + 1 / replications)


# -- the Whittle index of the stochastic model, by renewal Monte Carlo ----------------------------

@dataclass(frozen=True)
class StochasticIndex:
    """The Whittle index of one source of the stochastic model on a grid of states.

    Attributes
    ----------
    x : ndarray, shape (J,)
        Thresholds ``h_j`` (states).
    index : ndarray, shape (J,)
        ``gamma(h_j)``: the smallest subsidy at which a threshold above ``h_j`` is optimal
        (nan where no grid subsidy moves the optimum past ``h_j``).
    cycle_reward, cycle_length : ndarray, shape (J,)
        Renewal estimates of ``E[X_tau]`` and ``E[tau]`` for the threshold policy ``h_j``.
    n_cycles : int
    """

    x: np.ndarray
    index: np.ndarray
    cycle_reward: np.ndarray
    cycle_length: np.ndarray
    n_cycles: int


def stochastic_whittle_index(model: CrawlingModel, source: int, x, *, rng, n_cycles: int = 4000,
                             pool: int = 20_000, max_periods: int = 200,
                             base_law: str = "exponential", n_subsidies: int = 4000):
    r"""The Whittle index of the stochastic crawler, by renewal Monte Carlo over thresholds.

    Under the threshold policy "crawl iff :math:`X \ge h`" the chain regenerates at each crawl
    (:math:`X = U` after it, eq. 17). A cycle lasts :math:`\tau` periods, :math:`\tau - 1`
    passive (each paid the subsidy :math:`\lambda`) and one crawl collecting :math:`X_\tau`, so
    the average reward is :math:`\beta(h, \lambda) = \lambda + (E X_\tau - \lambda)/E\tau`
    (renewal-reward). Whittle's index at :math:`x` is the subsidy at which the optimal threshold
    passes :math:`x` (eq. (5) with threshold policies, Sec. II-B): the smallest grid
    :math:`\lambda` whose maximiser over the grid :math:`\{h_j\}` lies above :math:`x`.

    The cycles of all thresholds use the same utilities (common random numbers), resampled
    from ``pool`` exact draws of :func:`whittle_lib.models.crawling.sample_new_utility`. This uses
    nothing of the learning code: it is the independent reference for the learned index.
    With ``U = u`` (``base_law`` irrelevant, a degenerate pool) it gives the deterministic
    index at the visited states (a test).

    Parameters
    ----------
    model : CrawlingModel
    source : int
    x : array_like, shape (J,)
        Increasing thresholds/states.
    rng : numpy.random.Generator or seed
        Keyword-only.
    n_cycles, pool, max_periods, n_subsidies : int
        Cycles per threshold, utilities drawn exactly, cap on a cycle's length (a cycle still
        running is crawled then), points of the subsidy grid.
    """
    rng = np.random.default_rng(rng)
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2 or np.any(np.diff(x) <= 0):
        raise ValueError("x must be an increasing 1-d array of at least 2 states")
    if not 0 <= int(source) < model.n_sources:
        raise ValueError(f"source must lie in [0, {model.n_sources}), got {source!r}")
    draws = crawling.sample_new_utility(model, pool, rng=rng, base_law=base_law)[:, source]
    return _renewal_index(draws, float(model.alpha[source]), x, rng, n_cycles, max_periods,
                          n_subsidies)


def _renewal_index(draws, alpha, x, rng, n_cycles, max_periods, n_subsidies):
    idx = rng.integers(0, draws.size, size=(max_periods, n_cycles))
    J = x.size
    state = np.broadcast_to(draws[idx[0]], (J, n_cycles)).copy()
    running = np.ones((J, n_cycles), dtype=bool)
    length = np.ones((J, n_cycles))
    reward = np.zeros((J, n_cycles))
    for n in range(max_periods):
        crawl = running & ((state >= x[:, None]) | (n == max_periods - 1))
        reward[crawl] = state[crawl]
        running &= ~crawl
        if not running.any():
            break
        state = alpha * state + draws[idx[min(n + 1, max_periods - 1)]]
        length += running
    R, T = reward.mean(axis=1), length.mean(axis=1)
    lam = np.linspace(0.0, 1.5 * R.max(), n_subsidies)
    best = np.argmax(R[None, :] / T[None, :] - lam[:, None] / T[None, :], axis=1)  # (L,)
    # running maximum: the optimal threshold is monotone in lambda (indexability, Sec. II-B)
    best = np.maximum.accumulate(best)
    index = np.full(J, np.nan)
    for j in range(J):
        above = np.flatnonzero(best > j)
        if above.size:
            index[j] = lam[above[0]]
    return StochasticIndex(x=x, index=index, cycle_reward=R, cycle_length=T,
                           n_cycles=int(n_cycles))


# -- the learned indices under other index steps and projection fractions ------------------------

@dataclass(frozen=True)
class SweepConfig:
    """A sweep over the index step ``a0`` (of :class:`StepSizes`) and the projection fraction
    ``p`` (``None``: no projection), for one ``subsidy_at``, at a short run length.

    Every ``p`` runs on the same thresholds and utilities (common random numbers); the
    evaluation runs every learned index and the exact deterministic index on the same arrivals.
    """

    model: CrawlingModel
    a0s: tuple = (0.05, 0.5, 5.0)
    ps: tuple = (0.05, 0.1, 0.2, 0.4, None)
    subsidy_at: tuple = ("threshold", "state")
    n_steps: int = 3_000
    eval_periods: int = 1_500
    Ms: tuple = (1, 2)
    base_law: str = "exponential"
    steps: StepSizes = StepSizes()

    def __post_init__(self) -> None:
        if not self.a0s or any(not (a > 0 and math.isfinite(a)) for a in self.a0s):
            raise ValueError(f"a0s must be positive and finite, got {self.a0s!r}")
        if not self.ps:
            raise ValueError("ps must not be empty")
        for s in self.subsidy_at:
            if s not in ("threshold", "state"):
                raise ValueError(f"subsidy_at must hold 'threshold' or 'state', got {s!r}")
        if int(self.n_steps) != self.n_steps or self.n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer, got {self.n_steps!r}")
        if int(self.eval_periods) != self.eval_periods or self.eval_periods < 1:
            raise ValueError(f"eval_periods must be a positive integer, got {self.eval_periods!r}")


def evaluate_on_common_arrivals(model: CrawlingModel, rule, M: int, n_periods: int, *, slots: int,
                                rng, base_law: str = "exponential") -> np.ndarray:
    """Average reward of ``slots`` priority policies that all see the *same* arrivals.

    The loop of :func:`whittle_lib.models.crawling_policies.simulate` (stochastic model, eq. 17, ties to the
    lowest number, start at ``u``), with the state carrying a leading axis of ``slots``
    policies and one new utility per source and period broadcast to all of them. With one
    slot it draws exactly what ``simulate`` draws and returns the same average (a test).
    Used to compare many learned indices on common random numbers at the cost of one run.

    Parameters
    ----------
    rule : callable
        ``rule(x, age, t)`` with ``x`` of shape ``(slots, N)``, e.g. a
        :class:`~whittle_lib.learning.LearnedIndexRule` with weights ``(slots, N, K)``.

    Returns
    -------
    ndarray, shape (slots,)
    """
    if int(slots) != slots or slots < 1:
        raise ValueError(f"slots must be a positive integer, got {slots!r}")
    if int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    rng = np.random.default_rng(rng)
    shape = (int(slots), model.n_sources)
    x = np.broadcast_to(model.u, shape).copy()
    age = np.ones(shape)
    rewards = np.empty((int(n_periods), shape[0]))
    alpha = model.alpha
    for t in range(int(n_periods)):
        crawl = policies.top_m(rule(x, age, t), M)
        rewards[t] = np.sum(x, axis=-1, where=crawl)
        new = crawling.sample_new_utility(model, None, rng=rng, base_law=base_law)
        x *= alpha
        x += new
        np.copyto(x, np.broadcast_to(new, shape), where=crawl)
        age += 1.0
        age[crawl] = 1.0
    return rewards.mean(axis=0)


@dataclass(frozen=True)
class SweepReplication:
    """One replication of :func:`learning_sweep_replication`.

    Attributes
    ----------
    reward : ndarray, shape (len(subsidy_at), len(a0s), len(ps), len(Ms))
        Average reward of each learned index over ``eval_periods``.
    deterministic : ndarray, shape (len(Ms),)
        The exact deterministic index on the same arrivals.
    projections : ndarray, shape (len(subsidy_at), len(a0s), len(ps), N)
        Steps at which the projection acted, per learner.
    """

    reward: np.ndarray
    deterministic: np.ndarray
    projections: np.ndarray


def learning_sweep_replication(config: SweepConfig, *, rng) -> SweepReplication:
    """One independent replication of the sweep: learn every ``(subsidy_at, a0)`` with all
    ``p`` side by side, then evaluate all learned indices and the deterministic index on
    common arrivals (:func:`evaluate_on_common_arrivals`) for each ``M``.

    Picklable as ``functools.partial(learning_sweep_replication, config)``, for
    :func:`whittle_lib.stats.replicate` (one task per replication).
    """
    rng = np.random.default_rng(rng)
    learn_seed, eval_seed = (int(v) for v in rng.integers(0, 2**63, size=2))
    model = config.model
    N, V = model.n_sources, len(config.ps)
    S, A, Mn = len(config.subsidy_at), len(config.a0s), len(config.Ms)
    projections = np.empty((S, A, V, N), dtype=np.int64)
    problem = CrawlerIndexProblem(model, p=tuple(config.ps), base_law=config.base_law)
    ys = np.zeros((S * A * V + 1, N, problem.n_index_features))    # last slot: y = 0, gamma*
    for s, subsidy in enumerate(config.subsidy_at):
        for a, a0 in enumerate(config.a0s):
            steps = StepSizes(c0=config.steps.c0, c_power=config.steps.c_power, a0=float(a0),
                              a_power=config.steps.a_power, n0=config.steps.n0)
            learned = learn_whittle_index(problem, config.n_steps,
                                          rng=np.random.default_rng(learn_seed),
                                          batch_shape=(V, N), steps=steps, subsidy_at=subsidy,
                                          record_every=config.n_steps)
            k = (s * A + a) * V
            ys[k:k + V] = learned.y
            projections[s, a] = learned.projections
    rule = LearnedIndexRule(problem, ys)
    reward = np.empty((S, A, V, Mn))
    deterministic = np.empty(Mn)
    for c, M in enumerate(config.Ms):
        avg = evaluate_on_common_arrivals(model, rule, M, config.eval_periods, slots=len(ys),
                                          rng=np.random.default_rng(eval_seed),
                                          base_law=config.base_law)
        reward[..., c] = avg[:-1].reshape(S, A, V)
        deterministic[c] = avg[-1]
    return SweepReplication(reward=reward, deterministic=deterministic, projections=projections)


# -- independent computations on both cores ---------------------------------------------------------

def _run(call):
    return call()


def run_calls(calls, *, max_workers: int | None = None) -> list:
    """Run independent zero-argument calls (``functools.partial`` objects that carry their
    own seeds) on a local process pool and return their results in order.

    Each call owns its random stream, so the results are those of ``[c() for c in calls]``
    whatever the number of workers (the contract of :func:`whittle_lib.stats.replicate`, for
    calls that differ in more than their seed: the two learning variants, the policies of
    Table II). ``max_workers=1`` runs them in this process.
    """
    calls = list(calls)
    if max_workers is not None and (isinstance(max_workers, bool) or int(max_workers) != max_workers
                                    or max_workers < 1):
        raise ValueError(f"max_workers must be a positive integer, got {max_workers!r}")
    workers = min(len(calls), max_workers or os.cpu_count() or 1)
    if workers <= 1:
        return [c() for c in calls]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_run, calls))
