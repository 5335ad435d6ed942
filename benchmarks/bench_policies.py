"""The rules for any arms and the exact optimum (issue 33, item 4): arm-periods per second, the
relaxation's solution at scale, the counts MDP.

Arms: 10 types of random dense 10-state arms (``random_arm(10, rng=k)``), each of the N arms
of a type drawn at random, M = N / 10, ``activation="exactly"``, average reward. The rules are
built before the timing (from the relaxation's solution of the 10 types). The case names carry
the throughput: ``arm-periods/s = N * periods / ours``.

- ``policies.step.<rule>.n1e6``: each rule's step on 10^6 arms, 10 periods, per arm
  (``simulate``). LP-priority against a plain vectorised NumPy step of its priority table
  (``bench_simulation``'s: gathers, ``argpartition`` for the top M, one uniform per arm); FTVA
  and LP-update (horizon 10) against the LP-priority run of the same arms (what their extra
  work costs: virtual states and their coupled moves; one linear program per period and the
  per-arm ranks). Agreement: each run's reward per arm in the last period against the
  relaxation's bound per arm (a rule with a global attractor is close to it).
- ``policies.python_loop.<rule>.n1e4``: the same rules on 10^4 arms, 10 periods, against a
  simulator written as the research code does it (Hong et al.'s ``discrete_RB.py``: one Python
  loop over the arms for the actions and one for the moves, ``rng.choice`` per arm); the same
  algorithm (for LP-update the same linear program, ``rule.plan``), so the agreement is the
  mean reward per arm within sampling error.
- ``policies.counts.<rule>.n1e6``: identical arms in count mode (``simulate_counts``), 200
  periods, at N = 10^6 against N = 10^3: the run's cost does not grow with N (building the
  rule does, about 2 s per 10^6 arms: it is untimed here, and is why the row stops at 10^6
  where the index rule's goes to 10^9). LP-update solves one program per period at 10^6 (the
  counts never recur) and reuses plans at 10^3 (they do): its ratio is a solve against a
  look-up.
- ``policies.relaxation.distinct10.n1e3``: :func:`whittle_lib.relaxation_solution` of 1,000
  distinct 10-state arms against the linear program over occupation measures solved by HiGHS
  (``scipy.optimize.linprog``, sparse, one block per arm: the research codes' cvxpy LP hands
  HiGHS or another solver the same program). ``.n1e4``: 10,000 arms against the decomposition
  at 1,000 (it is linear in the arms; HiGHS at 10,000 takes minutes).
- ``policies.exact.counts.n30``: ``exact_optimum`` of 30 copies of a 3-state arm (496 count
  states), M = 9 exactly, by operator policy iteration against ``mdp.policy_iteration`` on the
  counts MDP held as matrices (``method="policy_iteration"``). ``.n50``: 50 copies (1,326
  states), M = 15, at most and exactly, against the operator at N = 30; agreement: the optimum
  against the relaxation bound.
"""

from __future__ import annotations

import numpy as np

from bench_simulation import _NumpyFinite
from harness import case, compare
from whittle_lib import policies, rmab
from whittle_lib.bounds import relaxation_bound, relaxation_solution
from whittle_lib.builders import random_arm

TYPES, N_STATES = 10, 10


def _system(N: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    kinds = [random_arm(N_STATES, rng=seed + k) for k in range(TYPES)]
    which = rng.integers(0, TYPES, N)
    return kinds, which, [kinds[k] for k in which]


def _rules(arms, M):
    return {"lp_priority": policies.lp_priority(arms, M, activation="exactly"),
            "ftva": policies.ftva(arms, M, activation="exactly"),
            "lp_update": policies.lp_update(arms, M, 10, activation="exactly")}


def _cold(rule):
    """The rule with an empty plan cache (LP-update reuses the plan of counts it has seen: a
    repeat of the same run would only look plans up)."""
    program = getattr(rule, "_program", None)
    if program is not None:
        program.cache.clear()
    return rule


def _per_arm(last, N, bound):
    return f"reward/N at T {last / N:.4f}, bound/N {bound / N:.4f}"


@case("policies.step.n1e6", quick=False)
def step_million():
    N, periods = 1_000_000, 10
    M = N // 10
    kinds, which, arms = _system(N)
    system = rmab.FiniteArms(arms)
    rules = _rules(arms, M)
    bound = relaxation_bound(arms, M, activation="exactly").bound
    tables = np.stack([rules["lp_priority"].indices[i] for i in
                       [int(np.flatnonzero(which == k)[0]) for k in range(TYPES)]])
    reference = _NumpyFinite(kinds, which, tables[which])

    def run(rule):
        return rmab.simulate(system, rule, M, periods, replications=None,
                             activation="exactly", rng=1).rewards

    compare("policies.step.lp_priority.n1e6 (N*T/ours = arm-periods/s)",
            lambda: run(rules["lp_priority"]), lambda: reference.run(M, periods, 1),
            "NumPy step (argpartition)",
            lambda a, b: f"|mean reward/N diff| {abs(a.mean() - b.mean()) / N:.1e}, "
                         + _per_arm(a[-1], N, bound), repeats=2)
    for name in ("ftva", "lp_update"):
        compare(f"policies.step.{name}.n1e6 (N*T/ours = arm-periods/s)",
                run, lambda: run(rules["lp_priority"]),
                "LP-priority's run, same arms",
                lambda a, b: _per_arm(a[-1], N, bound), repeats=2,
                ours_setup=lambda name=name: _cold(rules[name]))


# --- the research code's approach: Python loops over the arms -------------------------------

class _PythonLoop:
    """N arms simulated as the research code does: lists of per-arm objects, one Python loop
    for the actions and one for the moves (``rng.choice`` on the arm's row)."""

    def __init__(self, arms, M):
        self.arms, self.M = arms, M

    def run(self, rule, periods, seed):
        rng = np.random.default_rng(seed)
        arms, M, N = self.arms, self.M, len(self.arms)
        states = [0] * N
        if isinstance(rule, policies.FTVARule):
            if rule.virtual_start == "real":
                virtual = list(states)
            elif rule.virtual_start == "uniform":
                virtual = [int(rng.integers(a.n_states)) for a in arms]
            else:
                virtual = [int(rng.choice(a.n_states, p=rule.solution.occupation[i].sum(1)))
                           for i, a in enumerate(arms)]
        total = np.empty(periods)
        for t in range(periods):
            if isinstance(rule, policies.LPPriorityRule):
                order = sorted(range(N), key=lambda i: -rule.indices[i][states[i]])
                active = [False] * N
                for i in order[:M]:
                    active[i] = True
            elif isinstance(rule, policies.FTVARule):
                asks = [bool(rng.random() < rule.policies[i][virtual[i]]) for i in range(N)]
                good = [states[i] == virtual[i] for i in range(N)]
                level = [(3 if good[i] else 2) if asks[i] else (-3 if good[i] else -2)
                         for i in range(N)]
                tie = rng.random(N)
                order = sorted(range(N), key=lambda i: -(level[i] + tie[i]))
                active = [False] * N
                for i in order[:M]:
                    active[i] = True
            else:                                               # LP-update: the same program
                plan = rule._program
                counts = np.zeros((plan.n_types, plan.width))
                for i in range(N):
                    counts[rule._built.code[i], states[i]] += 1
                take = rule.plan(counts).copy()
                active = [False] * N
                for i in range(N):
                    k = rule._built.code[i]
                    if take[k, states[i]] > 0:
                        take[k, states[i]] -= 1
                        active[i] = True
            reward = 0.0
            nxt = [0] * N
            for i in range(N):
                arm = arms[i]
                row = arm.P1[states[i]] if active[i] else arm.P0[states[i]]
                reward += arm.R1[states[i]] if active[i] else arm.R0[states[i]]
                nxt[i] = int(rng.choice(arm.n_states, p=row))
                if isinstance(rule, policies.FTVARule):
                    if good[i] and active[i] == asks[i]:
                        virtual[i] = nxt[i]
                    else:
                        vrow = arm.P1[virtual[i]] if asks[i] else arm.P0[virtual[i]]
                        virtual[i] = int(rng.choice(arm.n_states, p=vrow))
            states = nxt
            total[t] = reward
        return total


@case("policies.python_loop.n1e4")
def python_loop():
    N, periods = 10_000, 10
    M = N // 10
    _, _, arms = _system(N)
    system = rmab.FiniteArms(arms)
    rules = _rules(arms, M)
    reference = _PythonLoop(arms, M)
    for name, rule in rules.items():
        compare(f"policies.python_loop.{name}.n1e4 (N*T/ours = arm-periods/s)",
                lambda rule: rmab.simulate(system, rule, M, periods, replications=None,
                                           activation="exactly", rng=1).rewards,
                lambda rule: reference.run(rule, periods, 2),
                "Python loop over the arms",
                lambda a, b: f"mean reward/N {a.mean() / N:.4f} vs {b.mean() / N:.4f}",
                repeats=1, ours_setup=lambda rule=rule: _cold(rule),
                reference_setup=lambda rule=rule: _cold(rule))


# --- count mode: the cost does not grow with N ------------------------------------------------

@case("policies.counts.n1e6")
def counts_million():
    periods = 200
    arm = random_arm(N_STATES, rng=7)
    builders = {"lp_priority": lambda N: policies.lp_priority([arm] * N, N // 10,
                                                              activation="exactly"),
                "ftva": lambda N: policies.ftva([arm] * N, N // 10, activation="exactly"),
                "lp_update": lambda N: policies.lp_update([arm] * N, N // 10, 10,
                                                          activation="exactly")}
    for name, build in builders.items():
        rules = {N: build(N) for N in (10**6, 10**3)}          # built untimed

        def run(rule):
            N = len(rule._built.code)
            counts = np.zeros(N_STATES, dtype=np.int64)
            counts[0] = N
            return rmab.simulate_counts(arm, counts, rule, N // 10, periods,
                                        replications=None, activation="exactly",
                                        rng=1).rewards / N

        compare(f"policies.counts.{name}.n1e6", run, run, "count mode at N = 10^3",
                lambda a, b: f"reward/N over T {a.mean():.4f} vs {b.mean():.4f}", repeats=2,
                ours_setup=lambda rules=rules: _cold(rules[10**6]),
                reference_setup=lambda rules=rules: _cold(rules[10**3]))


# --- the relaxation's solution: decomposition against HiGHS ----------------------------------

def highs_relaxation(arms, M):
    """The average-reward relaxation over occupation measures, one block per arm, exactly M
    active, by HiGHS (sparse)."""
    from scipy import optimize, sparse

    blocks, cost, budget = [], [], []
    for arm in arms:
        n = arm.n_states
        A = sparse.hstack([sparse.eye(n) - sparse.csr_array(arm.P0.T),
                           sparse.eye(n) - sparse.csr_array(arm.P1.T)])
        blocks.append(sparse.vstack([A, np.ones((1, 2 * n))]))
        cost.append(-np.concatenate([arm.R0, arm.R1]))
        budget.append(np.concatenate([np.zeros(n), np.ones(n)]))
    A = sparse.vstack([sparse.block_diag(blocks), sparse.csr_array(np.concatenate(budget))],
                      format="csr")
    b = np.concatenate([np.append(np.zeros(a.n_states), 1.0) for a in arms] + [[M]])
    res = optimize.linprog(np.concatenate(cost), A_eq=A, b_eq=b, method="highs")
    assert res.status == 0, res.message
    return -res.fun


def _distinct(N):
    return [random_arm(N_STATES, rng=10_000 + i) for i in range(N)]


@case("policies.relaxation.distinct10")
def relaxation_distinct():
    small, large = _distinct(1_000), _distinct(10_000)
    compare("policies.relaxation.distinct10.n1e3",
            lambda: relaxation_solution(small, 250, activation="exactly"),
            lambda: highs_relaxation(small, 250), "HiGHS on the LP (linprog)",
            lambda ours, ref: f"|bound - LP| {abs(ours.bound - ref):.1e}", repeats=2)
    compare("policies.relaxation.distinct10.n1e4",
            lambda: relaxation_solution(large, 2_500, activation="exactly"),
            lambda: relaxation_solution(small, 250, activation="exactly"),
            "decomposition at 1,000 arms",
            lambda ours, ref: f"bound/N {ours.bound / 10_000:.4f} vs {ref.bound / 1_000:.4f}",
            repeats=2)


# --- the exact optimum: the counts MDP ------------------------------------------------------

@case("policies.exact.counts")
def exact_counts():
    arm = random_arm(3, rng=70, concentration=0.3)
    compare("policies.exact.counts.n30",
            lambda: policies.exact_optimum([arm] * 30, 9, activation="exactly",
                                           method="operator"),
            lambda: policies.exact_optimum([arm] * 30, 9, activation="exactly",
                                           method="policy_iteration"),
            "policy_iteration on matrices",
            lambda a, b: f"|value diff| {abs(a.value - b.value):.1e}, {a.n_states} states",
            repeats=2)
    for activation in ("exactly", "at_most"):
        bound = relaxation_bound([arm] * 50, 15, activation=activation).bound
        compare(f"policies.exact.counts.n50.{activation}",
                lambda activation=activation: policies.exact_optimum(
                    [arm] * 50, 15, activation=activation),
                lambda: policies.exact_optimum([arm] * 30, 9, activation="exactly",
                                               method="operator"),
                "operator at N = 30, exactly",
                lambda a, b, bound=bound: (f"optimum {a.value:.4f} <= bound {bound:.4f}, "
                                           f"{a.n_states} states, {a.method}"),
                repeats=2)
