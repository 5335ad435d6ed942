"""Whittle's relaxation bound of N arms against the arms' index computations (issue 25).

N = 10, 100, 1000 random dense arms of 20 states (``whittle_lib.builders.random_arm``, fixed
seeds, the non-indexable ones skipped so that the dual path runs), M = N / 4, average reward,
at most M active. ``ours``: :func:`whittle_lib.relaxation_bound` from the arms alone, its index
computations included. ``reference``: those index computations alone (``whittle_indices`` on
every arm). The design's budget is a ratio of at most 3. Agreement: the dual's bound against
the linear program over occupation measures (HiGHS, untimed), and the budget of the shares.

One more row, N = 10: the bound before issue 25 (policy iteration at every candidate subsidy
for every arm, the exactly-M relaxation) against the new dual on the same arms.
"""

from __future__ import annotations

import warnings

import numpy as np

from harness import case, compare
from whittle_lib import mdp
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
            if whittle_indices(arm, discount=1.0).indexable:
                out.append(arm)
    return out


def all_indices(arms):
    return [whittle_indices(arm, discount=1.0) for arm in arms]


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
    kinks = np.unique(np.concatenate([whittle_indices(a, discount=1.0).indices
                                      for a in arms]))
    N = len(arms)

    def dual(lam):
        total = 0.0
        for arm in arms:
            m = mdp.FiniteMDP(transitions=[arm.P0, arm.P1], rewards=[arm.R0 + lam, arm.R1])
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
