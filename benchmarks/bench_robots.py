"""The 45 robots MDPs of Tables 1 and 2 (Talim, Liu, Nain, Coffman 1999), solved exactly.

Table 1: a pool of ``N_s`` robots (27 MDPs); Table 2: a non-binding pool ``3 N_s`` (18 MDPs);
up to 5,059 states. Ours: the exact optimum as ``models/robots.py`` computes it (multichain
policy iteration with LU evaluations, warm-started by relative value iteration), on the models
built beforehand. References, on the same models: pymdptoolbox's relative value iteration
(``epsilon = 1e-8``; its layout has no disallowed actions, so a disallowed action gets the
allowed action's row and a reward of ``-1e6``), and our policy iteration from the static
policy without the warm start (the path before issue 24). Also the generic call a user makes,
``mdp.policy_iteration(model)`` (no static policy; issue 32), against the same RVI. Agreement:
the largest difference of the optimal average costs, and whether ours are bit for bit the old
path's.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from harness import case, compare, quiet_import, quietly
from whittle_lib import mdp
from whittle_lib.models import robots as Q

MU = 1.0
ROWS = [(lam, K, g) for lam in (0.01, 0.05, 0.1) for K in (5, 10, 15)
        for g in (0.4, Q.critical_gamma(K, MU), 2.4)]          # Table 1: 27 rows
TABLE2 = [(lam, K, g) for lam, K, g in ROWS if lam != 0.01]   # Table 2: 18 rows


def instances():
    """``(lam, K, gamma, N)`` of the 45 MDPs: Table 1's pools ``N_s``, Table 2's ``3 N_s``."""
    return [(lam, K, g, pool * Q.robots_static_optimum(lam, MU, g, K).N)
            for rows, pool in ((ROWS, 1), (TABLE2, 3)) for lam, K, g in rows]


def _toolbox_layout(model: mdp.FiniteMDP):
    P, R = [], []
    for a in range(model.n_actions):
        other = model.transitions[1 - a]
        keep = sparse.diags_array(model.allowed[:, a].astype(float))
        swap = sparse.diags_array((~model.allowed[:, a]).astype(float))
        P.append(sparse.csr_matrix(keep @ model.transitions[a] + swap @ other))
        R.append(np.where(model.allowed[:, a], model.rewards[:, a], -1e6))
    return P, np.array(R).T


@case("robots.tables_1_2.policy_iteration", quick=False)
def robots_tables() -> None:
    built = [Q.robots_mdp(lam, MU, g, K, N) for lam, K, g, N in instances()]

    def ours():
        return [Q._exact_solution(m, space) for m, space in built]

    def before():
        return [mdp.policy_iteration(m, policy0=Q.static_policy(space), evaluation="direct",
                                     warm_start=0) for m, space in built]

    def same_bits(new, old):
        equal = all(a.gain == b.gain and np.array_equal(a.bias, b.bias) for a, b in zip(new, old))
        gap = max(abs(a.gain - b.gain) for a, b in zip(new, old))
        return f"max |cost difference| {gap:.1e}; gains and biases bit for bit: {equal}"

    compare("robots.tables_1_2.policy_iteration", ours, before,
            "ours before (PI from static)", same_bits, repeats=3)

    toolbox = quiet_import("mdptoolbox.mdp")
    if toolbox:
        layouts = [_toolbox_layout(m) for m, _ in built]

        def rvi():
            gains = []
            for P, R in layouts:
                with quietly():
                    run = toolbox.RelativeValueIteration(P, R, epsilon=1e-8, max_iter=10**6)
                    run.run()
                gains.append(float(run.average_reward))
            return gains

        compare("robots.tables_1_2.policy_iteration", ours, rvi, "pymdptoolbox RVI eps 1e-8",
                lambda new, gains: "max |cost difference| "
                f"{max(abs(a.gain - g) for a, g in zip(new, gains)):.1e} (RVI's span rule "
                "bounds its error by 1e-8)", repeats=1)

        # the generic call a user makes, without the model's static policy (issue 32): its
        # default warm start (100 sweeps of relative value iteration) and LU evaluations
        own = ours()

        def generic():
            return [mdp.policy_iteration(m) for m, _ in built]

        def generic_agreement(new, gains):
            same = all(a.gain == b.gain and np.array_equal(a.bias, b.bias)
                       for a, b in zip(new, own))
            return (f"max |cost difference| {max(abs(a.gain - g) for a, g in zip(new, gains)):.1e}"
                    f"; gains and biases bit for bit the model's own path's: {same}; "
                    f"{sum(s.iterations for s in new)} evaluations in all")

        compare("robots.tables_1_2.generic_policy_iteration", generic, rvi,
                "pymdptoolbox RVI eps 1e-8", generic_agreement, repeats=1)
