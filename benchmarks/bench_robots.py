"""Time to solve the 45 robots MDPs of Tables 1 and 2 (Talim, Liu, Nain, Coffman 1999).

    .venv/bin/python benchmarks/bench_robots.py

Table 1: pool N_s; Table 2: a non-binding pool (3 N_s). Each MDP is solved exactly by
multichain policy iteration and by relative value iteration as the paper ran it
(tau = 0.99999, relative stopping rule 1e-5). Prints one line per table and method: the
number of MDPs, the states of the largest, the total wall time (best of 3 repetitions).
"""

import time

from whittle_lib.models import robots as Q

MU = 1.0
ROWS = [(lam, K, g) for lam in (0.01, 0.05, 0.1) for K in (5, 10, 15)
        for g in (0.4, Q.critical_gamma(K, MU), 2.4)]          # Table 1: 27 rows
TABLE2 = [(lam, K, g) for lam, K, g in ROWS if lam != 0.01]   # Table 2: 18 rows


def instances():
    for table, rows, pool in (("Table 1", ROWS, 1), ("Table 2", TABLE2, 3)):
        yield table, [(lam, K, g, pool * Q.robots_static_optimum(lam, MU, g, K).N)
                      for lam, K, g in rows]


def main():
    print(f"{'table':8s} {'method':26s} {'MDPs':>4s} {'max states':>10s} {'best of 3 (s)':>13s}")
    total = {}
    for table, inst in instances():
        largest = max(Q.robots_state_space(K, N).n_states for _, K, _, N in inst)
        for method in ("policy_iteration", "relative_value_iteration"):
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                for lam, K, g, N in inst:
                    Q.robots_dynamic_optimum(lam, MU, g, K, N, method=method)
                times.append(time.perf_counter() - t0)
            total[method] = total.get(method, 0.0) + min(times)
            print(f"{table:8s} {method:26s} {len(inst):4d} {largest:10d} {min(times):13.2f}")
    for method, t in total.items():
        print(f"{'all 45':8s} {method:26s} {45:4d} {'':10s} {t:13.2f}")


if __name__ == "__main__":
    main()
