"""Benchmark: what the same bits on every CPU cost (whittle_lib._portable against NumPy).

Times, best of a few repetitions on one core:

* ``exp``, ``log``, ``expm1``, ``cos`` and ``power`` of 10^6 doubles: NumPy's loops against
  fdlibm written in element-wise operations (``_portable``);
* one 14 x 14 symmetric positive definite solve (the LSPE learner's Tikhonov system) by
  LAPACK against ``_portable.solve_spd``;
* the arrival sampler for 1000 periods of Table I (about 10^6 arrivals);
* one LSPE run of the paper's 10,000 periods.

Run: ``.venv/bin/python benchmarks/bench_portable.py`` (or ``make bench``).
"""

from __future__ import annotations

import time

import numpy as np

from whittle_lib import _portable as fp
from whittle_lib.models import crawling
from whittle_lib.learning import LSPESettings, run_lspe


def best(func, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.7, 0.0, 1_000_000)
    y = -x + 1e-3
    rows = [
        ("exp, 1e6 doubles", best(lambda: np.exp(x), 10), best(lambda: fp.exp(x), 5)),
        ("log, 1e6 doubles", best(lambda: np.log(y), 10), best(lambda: fp.log(y), 5)),
        ("expm1, 1e6 doubles", best(lambda: np.expm1(x), 10), best(lambda: fp.expm1(x), 3)),
        ("cos, 1e6 doubles", best(lambda: np.cos(20 * x), 10), best(lambda: fp.cos(20 * x), 3)),
        ("power(., 0.6), 1e6 doubles", best(lambda: np.power(y, 0.6), 10),
         best(lambda: fp.power(y, 0.6), 3)),
    ]
    A = rng.normal(size=(14, 14))
    M = (A[:, None, :] * A[None, :, :]).sum(axis=-1) + 1e-3 * np.eye(14)
    v = rng.normal(size=14)
    rows.append(("14 x 14 SPD solve", best(lambda: np.linalg.solve(M, v), 2000),
                 best(lambda: fp.solve_spd(M, v), 2000)))
    model = crawling.table_one()
    sampler = best(lambda: crawling.sample_new_utility(model, 1000, rng=1), 5)
    lspe = best(lambda: run_lspe(model, LSPESettings(), rng=1), 2)
    print(f"{'operation':34s} {'NumPy/LAPACK':>14s} {'portable':>12s} {'ratio':>7s}")
    for name, ref, ours in rows:
        print(f"{name:34s} {ref * 1e3:11.3f} ms {ours * 1e3:9.3f} ms {ours / ref:7.1f}")
    print(f"arrival sampler, 1000 periods of Table I: {sampler * 1e3:.0f} ms")
    print(f"one LSPE run, 10,000 periods:             {lspe:.2f} s")


if __name__ == "__main__":
    main()
