"""The exact joint chain of an index policy on a few small arms: the tests' independent oracle
for the simulator and the bounds (every joint state enumerated, no sampling)."""

import itertools

import numpy as np

from whittle_lib import rmab


def index_policy_chain(arm_list, priorities, M, threshold=None):
    """Joint states, transition matrix ``P``, reward ``r`` and the largest number of arms
    activated, under ``rmab.top_m`` of the per-arm priority tables (ties to the lowest arm)."""
    sizes = [a.n_states for a in arm_list]
    states = list(itertools.product(*[range(k) for k in sizes]))
    pos = {s: i for i, s in enumerate(states)}
    P = np.zeros((len(states), len(states)))
    r = np.zeros(len(states))
    most_active = 0
    for s in states:
        act = rmab.top_m([priorities[i][x] for i, x in enumerate(s)], M, threshold=threshold)
        most_active = max(most_active, int(act.sum()))
        rows = [(a.P1 if act[i] else a.P0)[s[i]] for i, a in enumerate(arm_list)]
        r[pos[s]] = sum((a.R1 if act[i] else a.R0)[s[i]] for i, a in enumerate(arm_list))
        for t in states:
            P[pos[s], pos[t]] = np.prod([rows[i][t[i]] for i in range(len(arm_list))])
    return states, P, r, most_active
