"""Whittle indices by whittle_lib against markovianbandit-pkg and against one dense LU.

For n = 50, 200, 500, 1000, 2000 states and the discounted (0.9) and average-reward criteria, both
libraries compute every index (and the indexability verdict) of the same random dense arm
(``whittle_lib.builders.random_arm``: Dirichlet rows, normal rewards; every policy unichain and,
for these seeds, the arm indexable). Agreement: the largest index difference. For n >= 500 a second
row times one dense LU factorisation of an ``n x n`` matrix (LAPACK ``dgetrf``): the ratio is the
cost of all the indices in LUs (issue 24 asked for 2; the LU and the two triangular solves with n
right-hand sides that build the recursion's first matrix cost about 4 by themselves, see
``whittle_lib.indices.whittle_indices``, Notes).

markovianbandit is imported with NumPy's error state saved and restored (it calls
``np.seterr`` on import) and its prints silenced; its numba functions are compiled on a small
arm before any timing.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from harness import case, compare, quiet_import, quietly
from whittle_lib.arms import RestlessArm
from whittle_lib.builders import random_arm
from whittle_lib.indices import whittle_indices

SIZES = (50, 200, 500, 1000, 2000)
CRITERIA = ((0.9, "discounted"), (1.0, "average"))
REPEATS = {50: 20, 200: 10, 500: 5, 1000: 3, 2000: 2}


def load_peer():
    module = quiet_import("markovianbandit.whittle_computation")
    if module is None:
        return None

    def compute(arm: RestlessArm, discount: float) -> np.ndarray:
        # markovianbandit charges lam for the active action where we pay it for the passive
        # one: the rewards differ by lam per period, the indices are the same.
        with quietly():
            np.seterr(divide="raise", invalid="raise")
            verdict, indices = module.compute_whittle_indices(arm.P0, arm.P1, arm.R0, arm.R1,
                                                              beta=discount)
        if verdict is False or verdict == -1:
            raise RuntimeError(f"markovianbandit verdict {verdict!r} on a benchmark arm")
        return indices

    return compute


def _indexable(result) -> None:
    if not result.indexable:
        raise RuntimeError(f"benchmark arm reported {result.status}")


@case("indices.random_dense")
def random_dense() -> None:
    peer = load_peer()
    warm = random_arm(8, rng=0)
    for discount, _ in CRITERIA:  # numba compilation, not timed
        whittle_indices(warm, discount=discount)
        if peer:
            peer(warm, discount)
    for n in SIZES:
        arm = random_arm(n, rng=n)
        for discount, label in CRITERIA:
            name = f"indices.random_dense.n{n}.{label}"
            ours = lambda: whittle_indices(arm, discount=discount)  # noqa: E731
            _indexable(ours())
            if peer:
                compare(name, ours, lambda: peer(arm, discount), "markovianbandit",
                        lambda a, b: f"max |index difference| "
                                     f"{float(np.max(np.abs(a.indices - b))):.1e}",
                        repeats=REPEATS[n])
            if n >= 500:
                matrix = np.eye(n) - discount * arm.P1
                compare(name, ours, lambda: linalg.lu_factor(matrix, check_finite=False),
                        "one dense LU, same n", lambda a, _: f"indexable: {a.indexable}",
                        repeats=REPEATS[n])
