"""The simulator of N arms at scale (issue 24, goal 4; issue 25, item 3): arm-periods per second.

Each row times ``whittle_lib.rmab.simulate`` (or ``simulate_counts``) for a few periods and, in
the same run, a **reference**: a plain vectorised NumPy step of the same computation, as one
would write it without the library (fancy-indexed gathers, ``numpy.argpartition`` for the top
M, the padded cumulative rows gathered per arm and compared with one uniform per arm, the
crawling index with NumPy's ``log`` and ``exp``), or the library's code before issue 24 (two
stable sorts for the top M). The agreement column checks that the two computed the same thing.
The case names carry the throughput: ``arm-periods/s = N * periods / ours``.

- ``simulation.finite.n1e6``: 10^6 finite arms (10 arm types of 10 states, random dense rows,
  random Whittle-like index tables without ties), M = 10^4, 10 periods. The reference draws
  the same uniforms, so with no ties its states and rewards are the same.
- ``simulation.finite.n1e6.shared``: the same arms with one index table per arm type (the
  realistic case: ties between copies, broken by arm number here, arbitrarily by
  ``argpartition``); agreement within sampling error.
- ``simulation.crawling.n1e6``: the crawling model (eqs. 2-3) with 10^6 random sources, the
  Whittle index rule (Theorem 1), M = 10^4, 10 periods, against the same step with NumPy's
  ``log``/``exp`` (not portable across CPUs) and ``argpartition``.
- ``simulation.crawling.n1e5.former``: the same at 10^5 sources against the simulator of
  before issue 24 (its top M by two stable sorts), bit for bit the same rewards.
- ``simulation.counts.n1e6``: 10^6 copies of one 10-state arm as state counts
  (``simulate_counts``) against the per-arm simulator, 20 periods; agreement: the mean reward
  per arm of the last period (two independent runs, so within sampling error, ~1e-3).
- ``simulation.counts.n1e9``: the count mode at 10^9 arms against itself at 10^3: the cost does
  not grow with N.
"""

from __future__ import annotations

import numpy as np

from harness import case, compare
from whittle_lib import rmab
from whittle_lib.builders import random_arm
from whittle_lib.models import crawling, crawling_policies as policies

M_SHARE = 100            # M = N / 100


def _finite_system(N: int, types: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    kinds = [random_arm(n, rng=seed + k) for k in range(types)]
    which = rng.integers(0, types, N)
    arm_list = [kinds[k] for k in which]
    tables = rng.random((N, n))                     # one table per arm: no ties
    return kinds, which, arm_list, tables


class _NumpyFinite:
    """The reference: one period of N finite arms written directly in NumPy."""

    def __init__(self, kinds, which, tables):
        n = kinds[0].n_states
        cdf = np.stack([np.stack([np.cumsum(a.P0, 1), np.cumsum(a.P1, 1)]) for a in kinds])
        self.cdf = cdf[which]                          # (N, 2, n, n), per arm
        self.R = np.stack([np.stack([a.R0, a.R1]) for a in kinds])[which]
        self.tables, self.n = tables, n

    def run(self, M, periods, seed):
        rng = np.random.default_rng(seed)
        N = self.tables.shape[0]
        arm = np.arange(N)
        x = np.zeros(N, dtype=np.intp)
        total = np.empty(periods)
        for t in range(periods):
            p = self.tables[arm, x]
            active = np.zeros(N, dtype=bool)
            active[np.argpartition(p, N - M)[N - M:]] = True
            a = active.astype(np.intp)
            total[t] = self.R[arm, a, x].sum()
            u = rng.random(N)
            x = np.minimum((u[:, None] >= self.cdf[arm, a, x]).sum(-1), self.n - 1)
        return total


@case("simulation.finite.n1e6", quick=False)
def finite_million():
    N, periods = 1_000_000, 10
    M = N // M_SHARE
    kinds, which, arm_list, tables = _finite_system(N, 10, 10)
    system = rmab.FiniteArms(arm_list)
    rule = rmab.IndexRule(tables)
    reference = _NumpyFinite(kinds, which, tables)
    compare("simulation.finite.n1e6 (N*T/ours = arm-periods/s)",
            lambda: rmab.simulate(system, rule, M, periods, replications=None,
                                  activation="exactly", rng=1).rewards,
            lambda: reference.run(M, periods, 1),
            "NumPy step (argpartition)",
            lambda a, b: f"max |reward diff| {np.max(np.abs(a - b)):.1e}", repeats=2)


@case("simulation.finite.n1e6.shared")
def finite_million_shared():
    N, periods, n = 1_000_000, 10, 10
    M = N // M_SHARE
    kinds, which, arm_list, _ = _finite_system(N, 10, n)
    type_tables = [np.random.default_rng(k).random(n) for k in range(10)]
    tables = [type_tables[k] for k in which]          # one table object per arm type
    system = rmab.FiniteArms(arm_list)
    rule = rmab.IndexRule(tables)
    reference = _NumpyFinite(kinds, which, np.stack(type_tables)[which])
    compare("simulation.finite.n1e6.shared (N*T/ours = arm-periods/s)",
            lambda: rmab.simulate(system, rule, M, periods, replications=None,
                                  activation="exactly", rng=1).rewards,
            lambda: reference.run(M, periods, 1),
            "NumPy step (argpartition)",
            # ties between copies of a type go to the lowest number here, anywhere in the
            # reference: the same policy up to ties, so rewards agree to sampling error
            lambda a, b: f"|mean reward/N diff| {abs(a.mean() - b.mean()) / N:.1e}",
            repeats=2)


def _crawling_model(N: int, seed: int = 0) -> crawling.CrawlingModel:
    rng = np.random.default_rng(seed)
    return crawling.CrawlingModel(xi_mean=rng.uniform(0.05, 1.0, N), mu=rng.uniform(0.1, 1.0, N),
                                  arrival_rate=rng.uniform(10.0, 300.0, N))


def _numpy_crawling(model, M, periods):
    """The reference: the crawling Whittle policy in plain NumPy (np.log, np.exp, argpartition)."""
    u, alpha = model.u, model.alpha
    log_alpha = np.log(alpha)
    slope, u_star = (1 - alpha) / u, u / (1 - alpha)
    N = u.size
    x = u.copy()
    total = np.empty(periods)
    for t in range(periods):
        arg = 1.0 - slope * x
        eta = np.ceil(np.log(np.maximum(arg, 1e-300)) / log_alpha - 1e-6)
        gamma = u_star * (1.0 - np.exp(eta * log_alpha)) - eta * u * arg
        gamma = np.where(arg <= 0, x, gamma)
        crawl = np.zeros(N, dtype=bool)
        crawl[np.argpartition(gamma, N - M)[N - M:]] = True
        total[t] = x[crawl].sum()
        x = np.where(crawl, u, alpha * x + u)
    return total


@case("simulation.crawling.n1e6", quick=False)
def crawling_million():
    N, periods = 1_000_000, 10
    model = _crawling_model(N)
    rule = policies.WhittleRule(model)
    compare("simulation.crawling.n1e6 (N*T/ours = arm-periods/s)",
            lambda: policies.simulate_crawling(model, rule, N // M_SHARE, periods).rewards,
            lambda: _numpy_crawling(model, N // M_SHARE, periods),
            "NumPy step (np.log/exp)",
            lambda a, b: f"max rel reward diff {np.max(np.abs(a - b) / np.abs(b)):.1e}",
            repeats=2)


def _former_top_m(priority, M, **_):
    order = np.argsort(-priority, axis=-1, kind="stable")
    rank = np.argsort(order, axis=-1, kind="stable")
    return rank < M


@case("simulation.crawling.n1e5.former")
def crawling_former():
    N, periods = 100_000, 20
    model = _crawling_model(N)
    rule = policies.WhittleRule(model)
    dynamics = crawling.CrawlingDynamics(model)
    index = crawling.ClosedFormIndex.of(model)            # WhittleRule's index

    def former():                     # the simulate loop of before issue 24
        states = dynamics.initial(None)
        rewards = np.empty(periods)
        for t in range(periods):
            active = _former_top_m(index(states.x), N // M_SHARE)
            states, rewards[t] = dynamics.step(states, active, None)
        return rewards

    compare("simulation.crawling.n1e5.former",
            lambda: policies.simulate_crawling(model, rule, N // M_SHARE, periods).rewards,
            former, "before issue 24 (two sorts)",
            lambda a, b: "identical rewards" if np.array_equal(a, b) else "REWARDS DIFFER",
            repeats=2)


@case("simulation.counts.n1e6")
def counts_million():
    N, periods, n = 1_000_000, 20, 10
    arm = random_arm(n, rng=7)
    table = np.random.default_rng(7).random(n)
    counts = np.zeros(n, dtype=np.int64)
    counts[0] = N
    compare("simulation.counts.n1e6",
            lambda: rmab.simulate_counts(arm, counts, table, N // M_SHARE, periods,
                                         replications=None, activation="exactly",
                                         rng=1).rewards,
            lambda: rmab.simulate([arm] * N, [table] * N, N // M_SHARE, periods,
                                  replications=None, activation="exactly", rng=2).rewards,
            "per-arm simulate (same law)",
            lambda a, b: f"|reward/N diff| at T {abs(a[-1] - b[-1]) / N:.1e}", repeats=2)


@case("simulation.counts.n1e9")
def counts_billion():
    periods, n = 200, 10
    arm = random_arm(n, rng=7)
    table = np.random.default_rng(7).random(n)

    def run(N):
        counts = np.zeros(n, dtype=np.int64)
        counts[0] = N
        return rmab.simulate_counts(arm, counts, table, N // M_SHARE, periods,
                                    replications=None, activation="exactly",
                                    rng=1).rewards / N

    compare("simulation.counts.n1e9", lambda: run(10**9), lambda: run(10**3),
            "count mode at N = 10^3",
            lambda a, b: f"reward/N at T {a[-1]:.4f} vs {b[-1]:.4f}", repeats=3)
