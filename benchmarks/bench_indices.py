"""Benchmark: Whittle indices by whittle_lib against markovianbandit-pkg, same arms, one run.

For n = 50, 200, 1000, 2000 states and the discounted (0.9) and average-reward criteria, both
libraries compute the indices of the same random dense arm (exponential rows normalised,
uniform rewards; every policy unichain and, for these seeds, the arm indexable). The table
gives the best wall time of a few interleaved repetitions for each, their ratio (markovianbandit / ours,
above 1 when we are faster) and the largest index difference.

markovianbandit is imported with NumPy's error state saved and restored (it calls
``np.seterr`` on import) and with its prints captured; its numba functions are compiled on a
small arm before any timing. Both use the same BLAS threads.

Run: ``.venv/bin/python benchmarks/bench_indices.py`` (or ``make bench``).
"""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np

from whittle_lib.arms import RestlessArm
from whittle_lib.indices import whittle_indices

SIZES = (50, 200, 1000, 2000)
CRITERIA = ((0.9, "discounted 0.9"), (1.0, "average"))
REPEATS = {50: 50, 200: 20, 1000: 3, 2000: 2}


def random_arm(seed: int, n: int) -> RestlessArm:
    rng = np.random.default_rng(seed)
    P = rng.exponential(size=(2, n, n))
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((2, n))
    return RestlessArm(P0=P[0], P1=P[1], R0=R[0], R1=R[1])


def load_peer():
    saved = np.geterr()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from markovianbandit import whittle_computation
    finally:
        np.seterr(**saved)

    def compute(arm: RestlessArm, discount: float) -> np.ndarray:
        # markovianbandit charges lam for the active action where we pay it for the passive
        # one: the rewards differ by lam per period, the indices are the same.
        saved = np.geterr()
        try:
            np.seterr(divide="raise", invalid="raise")
            with contextlib.redirect_stdout(io.StringIO()):
                verdict, indices = whittle_computation.compute_whittle_indices(
                    arm.P0, arm.P1, arm.R0, arm.R1, beta=discount)
        finally:
            np.seterr(**saved)
        if verdict is False or verdict == -1:
            raise RuntimeError(f"markovianbandit verdict {verdict!r} on a benchmark arm")
        return indices

    return compute


def best_times(functions, repeats: int):
    """Best wall time of each function over ``repeats`` rounds, the functions interleaved
    within each round so that a burst of load on a shared machine hits both alike."""
    best = [np.inf] * len(functions)
    values = [None] * len(functions)
    for _ in range(repeats):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            values[i] = function()
            best[i] = min(best[i], time.perf_counter() - start)
    return best, values


def main() -> None:
    peer = load_peer()
    warm = random_arm(0, 8)
    for discount, _ in CRITERIA:  # numba compilation, not timed
        peer(warm, discount)
        whittle_indices(warm, discount=discount)

    header = (f"{'n':>5}  {'criterion':<15} {'ours (s)':>10} {'markovianbandit (s)':>20} "
              f"{'ratio':>7} {'max |diff|':>11}")
    print(header)
    print("-" * len(header))
    for n in SIZES:
        arm = random_arm(n, n)
        for discount, label in CRITERIA:
            (ours_time, peer_time), (ours, theirs) = best_times(
                [lambda: whittle_indices(arm, discount=discount), lambda: peer(arm, discount)],
                REPEATS[n])
            if not ours.indexable:
                raise RuntimeError(f"benchmark arm n={n} reported {ours.status}")
            diff = float(np.max(np.abs(ours.indices - theirs)))
            print(f"{n:>5}  {label:<15} {ours_time:>10.4f} {peer_time:>20.4f} "
                  f"{peer_time / ours_time:>7.2f} {diff:>11.2e}", flush=True)


if __name__ == "__main__":
    main()
