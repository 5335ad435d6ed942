"""The Whittle index by its definition, checked with the independent solvers of whittle_lib.mdp.

At subsidy W(x) for passivity, both actions are optimal in state x (Whittle 1988). The index
engine (GGK Algorithm 2) and whittle_lib.mdp share no code, so agreement checks both.
"""

import numpy as np
import pytest

from whittle_lib import indices, mdp
from whittle_lib.arms import RestlessArm


def _random_arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.random((n, n)), rng.random((n, n))
    return RestlessArm(P0 / P0.sum(1, keepdims=True), P1 / P1.sum(1, keepdims=True),
                       rng.random(n), rng.random(n))


def _subsidised(arm, lam):
    # action 0 passive (reward R0 + lam), action 1 active (reward R1)
    return mdp.FiniteMDP((arm.P0, arm.P1), np.column_stack([arm.R0 + lam, arm.R1]))  # r[s, a]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("discount", [0.9, 1.0])
def test_both_actions_optimal_at_the_index(seed, discount):
    arm = _random_arm(8, seed)
    res = indices.whittle_indices(arm, discount=None if discount == 1.0 else discount)
    if not res.indexable:
        pytest.skip("this random arm is not indexable")
    for x in range(8):
        model = _subsidised(arm, res.indices[x])
        criterion = None if discount == 1.0 else discount    # mdp: None is the average reward
        sol = mdp.policy_iteration(model, discount=criterion)
        values = sol.value if discount < 1 else sol.bias
        q = model.q_values(values, criterion)[x]
        # 1e-8: the two Q-values are equal at the index; the solves are exact up to rounding
        # amplified by the conditioning, 1/(1-discount) at most here.
        assert q[0] == pytest.approx(q[1], abs=1e-8)
