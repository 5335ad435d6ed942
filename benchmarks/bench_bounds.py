"""Whittle's relaxation bound of N arms against the arms' index computations (issues 25, 32).

N = 10, 100, 1000 random dense arms of 20 states (``whittle_lib.builders.random_arm``, fixed
seeds, the non-indexable ones skipped so that the dual path runs), M = N / 4, average reward,
at most M active. ``ours``: :func:`whittle_lib.relaxation_bound` from the arms alone, its index
computations included. ``reference``: those index computations alone (``whittle_indices`` on
every arm). Issue 32 asks for at most 1.3 (each arm's recursion also follows its gain, O(n) per
index, and the dual is then read off). Agreement: the dual's bound against the linear program
over occupation measures (HiGHS, untimed), and the budget of the shares.

``bounds.relaxation.copies20``: 20 copies of one random arm of 2,000 and 5,000 states, M = 5.
The copies are one problem weighted by 20 (issue 32: within 2 times that arm's indices, under
2 GB; before, each copy was solved again: about 615 s and 16.5 GB at 5,000 states). The
agreement column gives each computation's peak memory, measured in a fresh process that builds
the arm and then runs it (the peak resident set during the call, Linux's high-water mark reset
after the arm is built: Python, NumPy and the arm's matrices included, the arm's construction
not), and, at 2,000 states, the bound of the 20 copies made
distinct by 1e-13 in their rewards (solved one by one).

One more row, N = 10: the bound before issue 25 (policy iteration at every candidate subsidy
for every arm, the exactly-M relaxation) against the new dual on the same arms.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np

from harness import case, compare
from whittle_lib import mdp
from whittle_lib.arms import RestlessArm
from whittle_lib.bounds import relaxation_bound
from whittle_lib.builders import random_arm
from whittle_lib.indices import whittle_indices

N_STATES = 20


def indexable_arms(N: int) -> list:
    out, seed = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(out) < N:
            arm = random_arm(N_STATES, rng=seed)
            seed += 1
            if whittle_indices(arm, discount=None).indexable:
                out.append(arm)
    return out


def all_indices(arms):
    return [whittle_indices(arm, discount=None) for arm in arms]


def _agreement(arms, M):
    lp = relaxation_bound(arms, M, method="lp")

    def agreement(ours, _):
        return (f"|dual - LP| {abs(ours.bound - lp.bound):.1e}, "
                f"shares {ours.shares.sum():.3f} <= M={M}, {ours.method}")
    return agreement


def _bound_case(N: int, repeats: int):
    def run():
        arms = indexable_arms(N)
        M = N // 4
        compare(f"bounds.relaxation.random20.n{N}.average",
                lambda: relaxation_bound(arms, M, progress=False),
                lambda: all_indices(arms),
                "whittle_indices of the N arms", _agreement(arms, M), repeats=repeats)
    return run


case("bounds.relaxation.random20.n10.average")(_bound_case(10, 5))
case("bounds.relaxation.random20.n100.average")(_bound_case(100, 3))
case("bounds.relaxation.random20.n1000.average", quick=False)(_bound_case(1000, 2))


def pre_issue_25_bound(arms, M):
    """The bound as it was before issue 25 (exactly M): the dual at every index, each arm's
    gain by policy iteration."""
    kinks = np.unique(np.concatenate([whittle_indices(a, discount=None).indices
                                      for a in arms]))
    N = len(arms)

    def dual(lam):
        total = 0.0
        for arm in arms:
            m = mdp.FiniteMDP(transitions=[arm.P0, arm.P1],
                              rewards=np.column_stack([arm.R0 + lam, arm.R1]))  # r[s, a]
            total += float(np.max(mdp.policy_iteration(m).gain_by_state))
        return total - lam * (N - M)

    return min(dual(float(lam)) for lam in kinks)


@case("bounds.relaxation.random20.n10.vs_pre_issue25", quick=False)
def relaxation_vs_before():
    arms = indexable_arms(10)
    M = 2
    compare("bounds.relaxation.random20.n10.vs_pre_issue25",
            lambda: relaxation_bound(arms, M, activation="exactly", progress=False),
            lambda: pre_issue_25_bound(arms, M),
            "the bound before issue 25",
            lambda ours, ref: f"|bound difference| {abs(ours.bound - ref):.1e}", repeats=1)


# --- 20 copies of one large arm ---------------------------------------------------------------

PEAK = """
import gc
import whittle_lib as wl
from whittle_lib.builders import random_arm


def high_water():
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


arm = random_arm({n}, rng={n})
arm.fingerprint
gc.collect()
open("/proc/self/clear_refs", "w").write("5")       # reset the peak to what is held now
held = high_water()
{call}
print(held, high_water())
"""


def peak_bytes(n: int, call: str) -> tuple[float, float]:
    """In a fresh process that builds the arm: the resident memory held before ``call`` (Python,
    NumPy, the arm's matrices) and the peak during it (Linux: the high-water mark reset through
    ``/proc/self/clear_refs`` once the arm is built, so that building it does not count)."""
    out = subprocess.run([sys.executable, "-c", PEAK.format(n=n, call=call)], check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    held, peak = out.stdout.split()[-2:]
    return float(held), float(peak)


def _copies_case(n: int, repeats: int):
    def run():
        arm = random_arm(n, rng=n)
        arm.fingerprint                               # once, as for a user's arm
        population = [arm] * 20
        held, bound_memory = peak_bytes(n, "wl.relaxation_bound([arm] * 20, 5, progress=False)")
        _, index_memory = peak_bytes(n, "wl.whittle_indices(arm)")
        extra = ""
        if n <= 2000:
            copies = [RestlessArm(arm.P0, arm.P1, arm.R0, arm.R1 + i * 1e-13) for i in range(20)]
            one_by_one = relaxation_bound(copies, 5, progress=False).bound
            extra = f", one by one {one_by_one:.10f}"

        def agreement(ours, indices):
            return (f"bound {ours.bound:.10f} ({ours.method}){extra}; peak memory "
                    f"{bound_memory / 1e9:.2f} GB (indices {index_memory / 1e9:.2f} GB; "
                    f"{held / 1e9:.2f} GB held before, the arm included)")
        compare(f"bounds.relaxation.copies20.n{n}.average",
                lambda: relaxation_bound(population, 5, progress=False),
                lambda: whittle_indices(arm), "whittle_indices of the one arm", agreement,
                repeats=repeats)
    return run


case("bounds.relaxation.copies20.n2000.average")(_copies_case(2000, 3))
case("bounds.relaxation.copies20.n5000.average", quick=False)(_copies_case(5000, 2))
