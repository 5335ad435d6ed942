"""Scale of the crawling simulator: the Whittle index policy on up to 1,000,000 sources.

    .venv/bin/python benchmarks/bench_crawling.py [--quick]

Sources with random parameters (xi-bar in [0.05, 1], mu in [0.1, 1], Lambda in [10, 300],
seed 0), budget M = N / 100, deterministic dynamics (eqs. 2-3), all sources starting just
crawled. Each period: the index of every source (Theorem 1), the top M by partial sort, the
reward and the in-place state update. Prints, for N = 10^4, 10^5, 10^6, the wall time of
1,000 periods (best of 3 for the smaller N, one run at 10^6) and the throughput in
source-periods per second; writes ``benchmarks/crawling_scale.png`` (not part of ``make all``:
timings depend on the machine).

The issue's target: N = 10^6 for 1,000 periods in under 30 s on a 2-core machine.
"""

import sys
import time
from pathlib import Path

import numpy as np

from whittle_lib.models import crawling, crawling_policies as policies

PERIODS = 1_000


def random_model(n, seed=0):
    rng = np.random.default_rng(seed)
    return crawling.CrawlingModel(xi_mean=rng.uniform(0.05, 1.0, n), mu=rng.uniform(0.1, 1.0, n),
                                  arrival_rate=rng.uniform(10.0, 300.0, n))


def time_run(n, periods, repeats):
    model = random_model(n)
    rule = policies.WhittleRule(model)
    policies.simulate_crawling(model, rule, n // 100, 5)                 # warm up allocations
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = policies.simulate_crawling(model, rule, n // 100, periods)
        best = min(best, time.perf_counter() - t0)
    return best, float(result.average_reward)


def main(quick=False):
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    print(f"{'N':>10s} {'periods':>8s} {'seconds':>9s} {'source-periods/s':>17s} {'reward/period':>14s}")
    rows = []
    for n in sizes:
        seconds, reward = time_run(n, PERIODS, 1 if n >= 1_000_000 else 3)
        rows.append((n, seconds))
        print(f"{n:>10d} {PERIODS:>8d} {seconds:>9.2f} {n * PERIODS / seconds:>17.3e} {reward:>14.1f}")
    if not quick:
        import matplotlib
        matplotlib.use("agg")
        import matplotlib.pyplot as plt
        from replication import figures   # the collection's figure style
        figures.use_style()
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        n, s = np.array(rows).T
        ax.loglog(n, s, "o-", label="Whittle index policy, 1,000 periods")
        ax.axhline(30, color="C3", ls="--", lw=0.8, label="target: 30 s at N = 10^6")
        ax.set(xlabel="sources N (budget M = N/100)", ylabel="wall time (s)",
               title="Crawling simulator scale")
        ax.legend(fontsize=8)
        out = Path(__file__).with_name("crawling_scale.png")
        fig.savefig(out, dpi=120, metadata={"Software": None})
        print(f"figure: {out}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
