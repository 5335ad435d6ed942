"""Rules for any arms (LP-priority, FTVA, LP-update), the relaxation's solution they share, and
the exact optimum of small N (issue 33).

References of three kinds: an independent computation (HiGHS on the relaxation's linear program
and on its dual; the counts chain and the product MDP built here arm by arm, by enumerating
every arm's move; brute force over deterministic policies), the published behaviour of the
literature's examples (Hong et al. 2023's eight-state arm and their stored LP-priority order),
and invariants (balance of the occupation measures, the optimality equation, the budget).
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import optimize

import whittle_lib as wl
from whittle_lib import bounds, mdp, policies, rmab
from whittle_lib.arms import RestlessArm
from whittle_lib.builders import random_arm

# --- the literature's examples (transcribed in the research notes of issue 33) ---------------

LEFT = [0.0, 1.0, 0.48, 0.47, 0.46, 0.45, 0.44, 0.43]


def eight_state(reward_active_0: float = 0.0) -> RestlessArm:
    """Hong et al. (2023)'s conveyor (their Fig. 2, 'eight-state'): the right action moves one
    state to the right w.p. 0.1 (active in 0-3, passive in 4-7), the wrong one to the left
    w.p. LEFT; 0.1 for leaving state 7 passive."""
    P = np.zeros((2, 8, 8))
    for x in range(8):
        right, wrong = (1, 0) if x < 4 else (0, 1)
        P[right, x, (x + 1) % 8] += 0.1
        P[right, x, x] += 0.9
        P[wrong, x, max(x - 1, 0)] += LEFT[x]
        P[wrong, x, x] += 1.0 - LEFT[x]
    R1 = np.zeros(8)
    R1[0] = reward_active_0
    return RestlessArm(P[0], P[1], R0=[0] * 7 + [0.1], R1=R1)


def ggy20_example2() -> RestlessArm:
    """Gast, Gaujal & Yan's 3-state example 2 (Hong et al. 2023 Fig. 1), rows renormalised."""
    P0 = np.array([[0.02232142, 0.10229283, 0.87538575], [0.03426605, 0.17175704, 0.79397691],
                   [0.52324756, 0.45523298, 0.02151947]])
    P1 = np.array([[0.14874601, 0.30435809, 0.54689589], [0.56845754, 0.41117331, 0.02036915],
                   [0.25265570, 0.27310439, 0.4742399]])
    return RestlessArm(P0 / P0.sum(1, keepdims=True), P1 / P1.sum(1, keepdims=True),
                       R0=[0, 0, 0], R1=[0.37401552, 0.11740814, 0.07866135])


def non_indexable() -> RestlessArm:
    """A random 3-state arm that is not indexable (the README's)."""
    return random_arm(3, rng=70, concentration=0.3)


# --- independent references -------------------------------------------------------------------

def lp_reference(arms, M, activation, discount=None, x0=None):
    """The relaxation's linear program, one block per arm (no grouping), by HiGHS."""
    N = len(arms)
    beta = 1.0 if discount is None else discount
    x0 = np.zeros(N, dtype=int) if x0 is None else np.asarray(x0)
    blocks, rhs, cost, budget = [], [], [], []
    for i, arm in enumerate(arms):
        n = arm.n_states
        A = np.hstack([np.eye(n) - beta * arm.P0.T, np.eye(n) - beta * arm.P1.T])
        b = np.zeros(n)
        if discount is None:
            A = np.vstack([A, np.ones(2 * n)])
            b = np.append(b, 1.0)
        else:
            b[x0[i]] = 1.0
        blocks.append(A)
        rhs.append(b)
        cost.append(-np.concatenate([arm.R0, arm.R1]))
        budget.append(np.concatenate([np.zeros(n), np.ones(n)]))
    from scipy.linalg import block_diag

    A = block_diag(*blocks)
    scale = 1.0 if discount is None else 1.0 / (1.0 - beta)
    row = np.concatenate(budget)[None, :]
    if activation == "exactly":
        res = optimize.linprog(np.concatenate(cost), A_eq=np.vstack([A, row]),
                               b_eq=np.append(np.concatenate(rhs), M * scale), method="highs")
    else:
        res = optimize.linprog(np.concatenate(cost), A_ub=row, b_ub=[M * scale], A_eq=A,
                               b_eq=np.concatenate(rhs), method="highs")
    assert res.status == 0
    return -res.fun


def subsidy_interval(arm, alpha):
    """The range of optimal duals of the budget row of one arm's relaxation (fraction alpha
    active, exactly): the dual LP minimised and maximised over lambda at the optimal value
    (the research notes' arms.py)."""
    n = arm.n_states
    P = np.stack([arm.P0, arm.P1], axis=1)
    A = np.zeros((n + 2, 2 * n))
    for s in range(n):
        A[s, 2 * s] += 1.0
        A[s, 2 * s + 1] += 1.0
        A[s, :] -= P[:, :, s].ravel()
    A[n, :] = 1.0
    A[n + 1, 1::2] = 1.0
    b = np.zeros(n + 2)
    b[n], b[n + 1] = 1.0, alpha
    r = np.stack([arm.R0, arm.R1], axis=1).ravel()
    primal = optimize.linprog(-r, A_eq=A, b_eq=b, method="highs")
    ends = []
    for sign in (1.0, -1.0):
        c = np.zeros(n + 2)
        c[n + 1] = sign
        res = optimize.linprog(c, A_ub=-A.T, b_ub=-r, A_eq=b[None, :], b_eq=[-primal.fun],
                               bounds=[(None, None)] * (n + 2), method="highs")
        # the budget row's dual is a charge on activity, which is the same as a subsidy of
        # the passive action (subtract it from both actions' rewards)
        ends.append(res.x[n + 1])
    return min(ends), max(ends)


def compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def counts_chain(arm, N, decide):
    """The counts chain of N copies under ``decide(counts) -> active counts``, built arm by
    arm: every arm's next state enumerated (n**N outcomes), independent of the library."""
    n = arm.n_states
    states = list(compositions(N, n))
    index = {s: i for i, s in enumerate(states)}
    P = np.zeros((len(states), len(states)))
    r = np.zeros(len(states))
    for i, c in enumerate(states):
        a = decide(np.array(c))
        arms = [(x, 1) for x in range(n) for _ in range(a[x])] + \
               [(x, 0) for x in range(n) for _ in range(c[x] - a[x])]
        r[i] = sum(arm.R1[x] if act else arm.R0[x] for x, act in arms)
        rows = [arm.P1[x] if act else arm.P0[x] for x, act in arms]
        for outcome in itertools.product(range(n), repeat=N):
            p = math.prod(row[y] for row, y in zip(rows, outcome))
            if p:
                P[i, index[tuple(np.bincount(outcome, minlength=n))]] += p
    return states, P, r


def chain_gain(P, r):
    """Long-run average reward of a unichain chain."""
    pi = mdp.stationary_distribution(P)
    return float(pi @ r)


def table_decision(table, M, activation):
    """simulate_counts' allocation of an index table: states by decreasing priority (ties to
    the lower state), only positive ones with at_most."""
    order = np.argsort(-np.asarray(table), kind="stable")

    def decide(c):
        a = np.zeros_like(c)
        left = M
        for x in order:
            if activation == "at_most" and table[x] <= 0:
                break
            a[x] = min(c[x], left)
            left -= a[x]
        return a
    return decide


# --- the relaxation's solution ------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.9])
def test_solution_has_the_linear_programs_value(activation, discount):
    # distinct random arms of three sizes, solved one by one by HiGHS (no grouping)
    arms = [random_arm(n, rng=10 + k) for k, n in enumerate([3, 4, 5, 3, 4, 6, 2, 5])]
    x0 = np.array([0, 1, 2, 0, 3, 5, 1, 4]) if discount else None
    sol = wl.relaxation_solution(arms, 3, activation=activation, discount=discount, x0=x0)
    ref = lp_reference(arms, 3, activation, discount, x0)
    # HiGHS's optimality tolerance (1e-7 relative on its duals) bounds the agreement
    assert sol.bound == pytest.approx(ref, rel=1e-8, abs=1e-9)
    assert wl.relaxation_bound(arms, 3, activation=activation, discount=discount, x0=x0,
                               method="decomposition").bound == sol.bound


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.8])
def test_occupation_measures_are_feasible_and_optimal(activation, discount):
    arms = [random_arm(4, rng=3), random_arm(3, rng=4), random_arm(4, rng=3)]
    M = 1
    sol = wl.relaxation_solution(arms, M, activation=activation, discount=discount)
    beta = 1.0 if discount is None else discount
    total, active = 0.0, 0.0
    for i, (arm, y) in enumerate(zip(arms, sol.occupation)):
        assert (y >= 0).all()
        inflow = beta * (y[:, 0] @ arm.P0 + y[:, 1] @ arm.P1)
        start = np.zeros(arm.n_states)
        if discount is None:
            assert y.sum() == pytest.approx(1.0, abs=1e-12)
        else:
            start[0] = 1.0
        # balance: what enters each state is what leaves it (discounted: plus the start)
        np.testing.assert_allclose(y.sum(axis=1), inflow + start, atol=1e-10)
        total += y[:, 0] @ arm.R0 + y[:, 1] @ arm.R1
        active += y[:, 1].sum()
        assert sol.shares[i] == pytest.approx(y[:, 1].sum() * (1 - beta if discount else 1))
    scale = 1.0 if discount is None else 1.0 / (1.0 - beta)
    if activation == "exactly":
        assert active == pytest.approx(M * scale, abs=1e-10)
    else:
        assert active <= M * scale + 1e-10
    assert total == pytest.approx(sol.bound, abs=1e-10)       # the solution attains the bound
    # identical arms (0 and 2) share their solution
    assert sol.occupation[0] is sol.occupation[2]


def test_relative_values_solve_the_optimality_equation_at_the_subsidy():
    arm = non_indexable()
    sol = wl.relaxation_solution([arm] * 10, 3)
    h, g, lam = sol.values[0], sol.gains[0], sol.subsidy
    q0 = arm.R0 + lam + arm.P0 @ h
    q1 = arm.R1 + arm.P1 @ h
    np.testing.assert_allclose(g + h, np.maximum(q0, q1), atol=1e-10)


@pytest.mark.parametrize("arm, alpha", [(eight_state(), 0.5), (eight_state(0.1 / 30), 0.5)],
                         ids=["eight-state", "new2-eight-state"])
def test_the_range_of_optimal_subsidies_is_the_duals(arm, alpha):
    # the dual of the budget row is not unique on these arms (research notes: [-0.025, 0.025]
    # and [-0.0241667, 0.0258333]); the solution reports the whole range, where the dual
    # function sum_i max_pi (g_i(lambda)) - lambda (N - M) is flat at the bound
    N = 100
    sol = wl.relaxation_solution([arm] * N, int(alpha * N), activation="exactly")
    low, high = subsidy_interval(arm, alpha)
    assert sol.subsidy_range == pytest.approx((low, high), abs=1e-9)
    assert sol.subsidy == 0.0                       # the optimal subsidy closest to 0
    with pytest.raises(ValueError, match=r"optimal subsidy of this relaxation, in \[-0.0"):
        wl.relaxation_solution([arm] * N, 50, activation="exactly", subsidy=0.03)


# --- LP-priority ------------------------------------------------------------------------------

def test_lp_priority_gives_hong_et_al_s_order_on_the_eight_state_arm():
    arm = eight_state()
    rule = wl.lp_priority([arm] * 100, 50, activation="exactly")
    order = np.argsort(-rule.indices[0], kind="stable").tolist()
    assert order == [1, 2, 3, 0, 7, 6, 5, 4]        # H23's stored priority_list (dual 0)
    # at either end of the range of duals, the orders the research notes printed
    low = wl.lp_priority([arm] * 100, 50, activation="exactly", subsidy=-0.025)
    assert np.argsort(-low.indices[0], kind="stable").tolist() == [0, 1, 2, 3, 4, 7, 6, 5]
    high = wl.lp_priority([arm] * 100, 50, activation="exactly", subsidy=0.025)
    p = high.indices[0]
    assert np.argsort(-p, kind="stable").tolist()[:4] == [1, 2, 3, 0]
    # 5, 6 and 7 rest at this subsidy (advantage -0.025, priority 0): tied among themselves,
    # exactly (snapped), above state 4
    assert p[5] == p[6] == p[7] == 0.0 > p[4]


def test_lp_priority_on_an_indexable_arm_agrees_with_whittle():
    arm = ggy20_example2()
    rule = wl.lp_priority([arm] * 10, 4, activation="exactly")
    whittle = wl.whittle_indices(arm).indices
    assert np.argsort(-rule.indices[0]).tolist() == np.argsort(-whittle).tolist() == [0, 1, 2]
    # the neutral state's priority is the optimal subsidy, its Whittle index
    assert rule.subsidy == pytest.approx(whittle[1], abs=1e-9)
    assert rule.indices[0][1] == rule.subsidy


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
def test_lp_priority_is_below_the_optimum_exactly_for_small_n(activation):
    # the rule's exact gain on the counts chain built arm by arm <= the counts MDP's optimum
    # <= the relaxation bound
    arm = non_indexable()
    N, M = 5, 2
    rule = wl.lp_priority([arm] * N, M, activation=activation)
    _, P, r = counts_chain(arm, N, table_decision(rule.indices[0], M, activation))
    gain = chain_gain(P, r)
    opt = wl.exact_optimum([arm] * N, M, activation=activation).value
    bound = wl.relaxation_bound([arm] * N, M, activation=activation).bound
    assert gain <= opt + 1e-10 and opt <= bound + 1e-10
    # and the simulator agrees with the exact gain (8 replications, 95 % interval)
    run = wl.simulate_counts(arm, [N, 0, 0], rule, M, 3_000, warmup=100, replications=8,
                             activation=activation, rng=1)
    ci = run.interval()
    assert ci.low - 0.02 <= gain <= ci.high + 0.02      # 0.02: the interval's slack


def test_lp_priority_runs_per_arm_and_in_count_mode_alike():
    arm = non_indexable()
    rule = wl.lp_priority([arm] * 30, 9)
    per_arm = wl.simulate([arm] * 30, rule, 9, 2_000, warmup=200, replications=6, rng=2)
    counts = wl.simulate_counts(arm, [30, 0, 0], rule, 9, 2_000, warmup=200, replications=6,
                                rng=3)
    a, b = per_arm.interval(), counts.interval()
    assert abs(a.estimate - b.estimate) <= 2 * (a.half_width + b.half_width)


def test_lp_priority_checks_arms_given_as_a_list_or_as_finite_arms():
    arm, other = non_indexable(), random_arm(3, rng=1)
    rule = wl.lp_priority([arm] * 6, 2)
    rule.check_arms([arm] * 6)
    rule.check_arms(wl.FiniteArms([arm] * 6))
    with pytest.raises(ValueError, match=r"another arm than arms\[5\]"):
        rule.check_arms([arm] * 5 + [other])
    with pytest.raises(TypeError, match="arms must be a FiniteArms or a list"):
        rule.check_arms(arm)


def test_rules_refuse_a_run_they_were_not_built_for():
    arm, other = non_indexable(), random_arm(3, rng=1)
    for rule in (wl.lp_priority([arm] * 6, 2), wl.ftva([arm] * 6, 2),
                 wl.lp_update([arm] * 6, 2, horizon=3)):
        with pytest.raises(ValueError, match="built for M=2"):
            wl.simulate([arm] * 6, rule, 3, 5, rng=1)
        with pytest.raises(ValueError, match="activation='at_most'"):
            wl.simulate([arm] * 6, rule, 2, 5, activation="exactly", rng=1)
        with pytest.raises(ValueError, match=r"another arm than arms\[5\]"):
            wl.simulate([arm] * 5 + [other], rule, 2, 5, rng=1)
        with pytest.raises(ValueError, match="copies of this arm"):
            wl.simulate_counts(other, [6, 0, 0], rule, 2, 5, rng=1)


# --- FTVA -------------------------------------------------------------------------------------

def test_ftva_approaches_the_bound_on_the_eight_state_arm_where_lp_priority_does_not():
    # Hong et al. 2023, Fig. 2: N = 1000, exactly half active, N/3 arms in state 1 and the
    # rest in state 2, T = 1000 from there; published FTVA 0.011400 +- 2.7e-5 and LP-priority
    # (order [1, 2, 3, 0, 7, 6, 5, 4]) 0.000372 +- 6.3e-5 per arm, bound 0.0125
    arm = eight_state()
    N, M = 1000, 500
    start = np.zeros(8, dtype=np.int64)
    start[1], start[2] = N // 3, N - N // 3
    runs = {}
    for name, rule in (("ftva", wl.ftva([arm] * N, M, activation="exactly",
                                        virtual_start="uniform")),
                       ("lp_priority", wl.lp_priority([arm] * N, M, activation="exactly"))):
        run = wl.simulate_counts(arm, start, rule, M, 1_000, replications=10,
                                 activation="exactly", rng=7)
        runs[name] = run.interval()
    # tolerance: the published half-width plus ours (10 replications), each about 3e-5 / 1e-4
    assert abs(runs["ftva"].estimate / N - 0.011400) < 2e-4
    assert abs(runs["lp_priority"].estimate / N - 0.000372) < 3e-4
    assert runs["ftva"].estimate / N > 0.9 * 0.0125 > 20 * runs["lp_priority"].estimate / N


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
def test_ftva_activates_as_the_relaxation_on_large_n(activation):
    # long-run fraction of arms active in each state: the relaxation's y(x, 1) on 10^5 arms
    arm = non_indexable()
    N, M = 100_000, 30_000
    rule = wl.ftva([arm] * N, M, activation=activation)
    run = wl.simulate_counts(arm, [N, 0, 0], rule, M, 400, warmup=200, record=True,
                             activation=activation, rng=5)
    frequency = run.active.mean(axis=0).reshape(-1) / N
    y = rule.solution.occupation[0]
    # O(1/sqrt(N)) fluctuations and the residual transient: 5e-3
    np.testing.assert_allclose(frequency, y[:, 1], atol=5e-3)
    assert run.average_reward.item() / N == pytest.approx(
        wl.relaxation_bound([arm] * N, M, activation=activation).bound / N, abs=5e-3)


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
def test_lp_priority_approaches_the_bound_on_large_n(activation):
    # the arm has a global attractor under LP-priority (Verloop's condition): per arm, the
    # long-run reward of 10^5 arms is the relaxation's to O(1/sqrt(N)) and the transient
    arm = non_indexable()
    N, M = 100_000, 30_000
    rule = wl.lp_priority([arm] * N, M, activation=activation)
    run = wl.simulate_counts(arm, [N, 0, 0], rule, M, 400, warmup=200, activation=activation,
                             rng=5)
    bound = wl.relaxation_bound([arm] * N, M, activation=activation).bound
    assert run.average_reward.item() / N == pytest.approx(bound / N, abs=2e-3)


def test_lp_update_approaches_the_bound_on_large_n():
    # exactly M active, horizon 10: per arm within 5e-3 of the bound on 10^4 arms (the run
    # starts with every arm in state 0; 100 periods after a warm-up of 50)
    arm = non_indexable()
    N, M = 10_000, 3_000
    rule = wl.lp_update([arm] * N, M, horizon=10, activation="exactly")
    run = wl.simulate_counts(arm, [N, 0, 0], rule, M, 150, warmup=50, activation="exactly",
                             rng=5)
    bound = wl.relaxation_bound([arm] * N, M, activation="exactly").bound
    assert run.average_reward.item() / N == pytest.approx(bound / N, abs=5e-3)


def test_lp_update_needs_a_horizon_that_sees_the_payoff():
    # at most M active and no terminal value: from the relaxation's stationary counts a short
    # program leaves the neutral state 1 passive (its activation pays back slowly), a long one
    # fills the budget there, as the relaxation does
    arm = non_indexable()
    N, M = 10_000, 3_000
    y = wl.relaxation_solution([arm] * N, M).occupation[0]
    counts = np.round(y.sum(axis=1) * N).astype(int)
    counts[-1] = N - counts[:-1].sum()
    assert y[1, 1] > 0.05 and y[0, 1] == 0                    # state 1 neutral, 0 passive
    short = wl.lp_update([arm] * N, M, horizon=20).plan([counts])[0]
    assert short.tolist() == [0, 0, counts[2]]
    long = wl.lp_update([arm] * N, M, horizon=50).plan([counts])[0]
    assert long.tolist() == [0, M - counts[2], counts[2]]


def test_ftva_per_arm_and_in_count_mode_have_one_law():
    arm = non_indexable()
    rule = wl.ftva([arm] * 20, 6)
    per_arm = wl.simulate([arm] * 20, rule, 6, 1_500, warmup=200, replications=8, rng=11)
    counts = wl.simulate_counts(arm, [20, 0, 0], rule, 6, 1_500, warmup=200, replications=8,
                                rng=12)
    a, b = per_arm.interval(), counts.interval()
    assert abs(a.estimate - b.estimate) <= 2 * (a.half_width + b.half_width)
    opt = wl.exact_optimum([arm] * 20, 6).value
    assert a.low <= opt + 1e-9 and b.low <= opt + 1e-9   # no policy beats the optimum


def test_ftva_is_reusable_and_reproducible():
    arm = non_indexable()
    rule = wl.ftva([arm] * 10, 3)
    one = wl.simulate([arm] * 10, rule, 3, 200, replications=2, rng=4)
    two = wl.simulate([arm] * 10, rule, 3, 200, replications=2, rng=4)
    np.testing.assert_array_equal(one.rewards, two.rewards)   # no state kept between runs
    with pytest.raises(ValueError, match="virtual_start='stationary' is for the average"):
        wl.ftva([arm] * 10, 3, discount=0.9, virtual_start="stationary")
    with pytest.raises(ValueError, match="virtual_start must be one of"):
        wl.ftva([arm] * 10, 3, virtual_start="zero")


def test_the_stateful_hooks_are_called_as_documented():
    arm = random_arm(3, rng=2)

    class Counter:
        def __init__(self):
            self.started = 0

        def __call__(self, states, t):          # never called: the runner is
            raise AssertionError

        def start(self, states, rng):
            self.started += 1
            outer = self

            class Runner:
                seen = []

                def __call__(self, states, t):
                    return np.ones(states.shape)

                def update(self, states, active, next_states, rng):
                    self.seen.append((states.copy(), active.copy(), next_states.copy()))
            outer.runner = Runner()
            return outer.runner

    rule = Counter()
    run = wl.simulate([arm] * 4, rule, 2, 5, record=True, activation="exactly", rng=3)
    assert rule.started == 1 and len(rule.runner.seen) == 5
    for t, (states, active, after) in enumerate(rule.runner.seen):
        np.testing.assert_array_equal(states, run.states[t])
        np.testing.assert_array_equal(active, run.active[t])
        if t + 1 < 5:
            np.testing.assert_array_equal(after, run.states[t + 1])
    # the dynamics' draws are those of a stateless rule with the same priorities
    plain = wl.simulate([arm] * 4, lambda s, t: np.ones(s.shape), 2, 5, record=True,
                        activation="exactly", rng=3)
    np.testing.assert_array_equal(plain.states, run.states)


# --- LP-update --------------------------------------------------------------------------------

def test_lp_update_plans_within_the_budget_and_the_counts():
    arm = non_indexable()
    rule = wl.lp_update([arm] * 20, 6, horizon=8, activation="exactly")
    rng = np.random.default_rng(0)
    for _ in range(20):
        counts = rng.multinomial(20, [0.3, 0.3, 0.4])
        take = rule.plan(counts[None, :])[0]
        assert take.sum() == 6 and (take <= counts).all() and (take >= 0).all()
    at_most = wl.lp_update([arm] * 20, 6, horizon=8)
    take = at_most.plan([[20, 0, 0]])[0]
    # without a terminal value, 8 periods make pulling state 0 worth it (its priority in the
    # long run is -4.5): 70.08 against 66.94 for resting it, by the reference below
    assert take.tolist() == [6, 0, 0]


def finite_horizon_reference(arm, counts, horizon, M, activation, discount=None, first=None):
    """LP-update's program written out densely, period by period; ``first`` fixes the first
    period's active arms per state. Returns the optimal total and the first period's active
    arms."""
    n, H = arm.n_states, horizon
    beta = 1.0 if discount is None else discount
    nv = H * n * 2

    def v(t, x, a):
        return (t * n + x) * 2 + a

    A_eq, b_eq, A_b = [], [], []
    for t in range(H):
        for y in range(n):
            row = np.zeros(nv)
            row[v(t, y, 0)] = row[v(t, y, 1)] = 1.0
            for x in range(n):
                if t:
                    row[v(t - 1, x, 0)] -= arm.P0[x, y]
                    row[v(t - 1, x, 1)] -= arm.P1[x, y]
            A_eq.append(row)
            b_eq.append(counts[y] if t == 0 else 0.0)
        row = np.zeros(nv)
        row[[v(t, x, 1) for x in range(n)]] = 1.0
        A_b.append(row)
    cost = np.zeros(nv)
    for t in range(H):
        for x in range(n):
            cost[v(t, x, 0)] = -beta**t * arm.R0[x]
            cost[v(t, x, 1)] = -beta**t * arm.R1[x]
    bounds = [(0, None)] * nv
    if first is not None:
        for x in range(n):
            bounds[v(0, x, 1)] = (first[x], first[x])
    if activation == "exactly":
        res = optimize.linprog(cost, A_eq=np.vstack(A_eq + A_b), b_eq=b_eq + [M] * H,
                               bounds=bounds, method="highs")
    else:
        res = optimize.linprog(cost, A_ub=np.array(A_b), b_ub=[M] * H, A_eq=np.array(A_eq),
                               b_eq=b_eq, bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun, res.x[[v(0, x, 1) for x in range(n)]]


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.9])
def test_lp_update_plans_an_optimal_first_period(activation, discount):
    # the plan, fixed as the first period of the reference program, loses nothing against it
    # wherever the reference's own first period is integral (no rounding to account for)
    arm = non_indexable()
    N, M, H = 20, 6, 8
    rule = wl.lp_update([arm] * N, M, horizon=H, activation=activation, discount=discount)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(15):
        counts = rng.multinomial(N, [0.3, 0.3, 0.4])
        best, first = finite_horizon_reference(arm, counts, H, M, activation, discount)
        take = rule.plan(counts[None, :])[0]
        if np.allclose(first, np.round(first), atol=1e-7):
            fixed, _ = finite_horizon_reference(arm, counts, H, M, activation, discount,
                                                first=take)
            assert fixed == pytest.approx(best, rel=1e-9, abs=1e-9)
            checked += 1
    assert checked >= 5


def test_lp_update_per_arm_follows_its_plan():
    arm = non_indexable()
    rule = wl.lp_update([arm] * 12, 4, horizon=5)
    run = wl.simulate([arm] * 12, rule, 4, 30, record=True, rng=1)
    for states, active in zip(run.states[:, 0], run.active[:, 0]):
        counts = np.bincount(states, minlength=3)
        planned = rule.plan(counts[None, :])[0]
        np.testing.assert_array_equal(np.bincount(states[active], minlength=3), planned)


def test_lp_update_per_arm_and_in_count_mode_have_one_law():
    arm = non_indexable()
    rule = wl.lp_update([arm] * 12, 4, horizon=5)
    per_arm = wl.simulate([arm] * 12, rule, 4, 2_000, warmup=200, replications=6, rng=2)
    counts = wl.simulate_counts(arm, [12, 0, 0], rule, 4, 2_000, warmup=200, replications=6,
                                rng=3)
    a, b = per_arm.interval(), counts.interval()
    assert abs(a.estimate - b.estimate) <= 2 * (a.half_width + b.half_width)


def test_lp_update_plans_for_distinct_arms():
    # two types: the plan has one row per type, and the per-arm run follows it
    a, b = non_indexable(), random_arm(2, rng=5)
    arms = [a, b, a, b, a]
    rule = wl.lp_update(arms, 2, horizon=4, activation="exactly")
    assert rule.n_types == 2
    take = rule.plan([[2, 1, 0], [1, 1, 0]])
    assert take.shape == (2, 3) and take.sum() == 2 and take[1, 2] == 0
    run = wl.simulate(arms, rule, 2, 20, record=True, activation="exactly", rng=4)
    assert (run.active.sum(axis=-1) == 2).all()
    with pytest.raises(ValueError, match="copies of this arm"):
        wl.simulate_counts(a, [5, 0, 0], rule, 2, 5, activation="exactly", rng=1)
    with pytest.raises(ValueError, match="runs copies of one arm"):
        rule.start_counts(a, np.array([5, 0, 0]), None)


def test_lp_update_is_between_lp_priority_and_the_optimum_on_small_n():
    arm = non_indexable()
    N, M = 10, 3
    rule = wl.lp_update([arm] * N, M, horizon=10)
    run = wl.simulate_counts(arm, [N, 0, 0], rule, M, 3_000, warmup=200, replications=8,
                             rng=9)
    ci = run.interval()
    opt = wl.exact_optimum([arm] * N, M).value
    assert ci.low <= opt + 1e-9
    assert ci.high >= 0.97 * opt                      # within 3 % of the optimum here


def test_lp_update_checks_its_horizon():
    arm = non_indexable()
    with pytest.raises(TypeError, match="horizon must be an integer"):
        wl.lp_update([arm] * 4, 1, horizon=2.0)
    with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
        wl.lp_update([arm] * 4, 1, horizon=0)


# --- the exact optimum -----------------------------------------------------------------------

def brute_force(arms, M, activation, discount=None):
    """Every deterministic stationary policy of the product MDP, evaluated exactly: the
    transition row and reward of each (joint state, set of active arms) enumerated once, then
    every policy's chain solved (all at once, a batch of small linear systems)."""
    sizes = [a.n_states for a in arms]
    states = list(itertools.product(*[range(n) for n in sizes]))
    index = {s: i for i, s in enumerate(states)}
    N = len(arms)
    choices = [c for k in ([M] if activation == "exactly" else range(M + 1))
               for c in itertools.combinations(range(N), k)]
    S, C = len(states), len(choices)
    rows = np.zeros((S, C, S))
    rewards = np.zeros((S, C))
    for i, s in enumerate(states):
        for k, chosen in enumerate(choices):
            act = [j in chosen for j in range(N)]
            law = [arms[j].P1[s[j]] if act[j] else arms[j].P0[s[j]] for j in range(N)]
            rewards[i, k] = sum(arms[j].R1[s[j]] if act[j] else arms[j].R0[s[j]]
                                for j in range(N))
            for nxt in states:
                rows[i, k, index[nxt]] = math.prod(row[y] for row, y in zip(law, nxt))
    policies = np.array(list(itertools.product(range(C), repeat=S)))      # (C**S, S)
    P = rows[np.arange(S), policies]                                       # (C**S, S, S)
    r = rewards[np.arange(S), policies]
    if discount is None:          # positive rows: every policy's chain is irreducible
        A = np.swapaxes(np.eye(S) - P, 1, 2)          # pi (I - P) = 0, sum(pi) = 1
        A[:, -1, :] = 1.0
        b = np.zeros(S)
        b[-1] = 1.0
        pi = np.linalg.solve(A, np.broadcast_to(b, (len(P), S))[..., None])[..., 0]
        values = (pi * r).sum(axis=1)
    else:
        values = np.linalg.solve(np.eye(S) - discount * P, r[..., None])[:, 0, 0]
    return float(values.max())


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.7])
def test_exact_optimum_against_brute_force(activation, discount):
    # two distinct random 2-state arms and a third: 8 states, every policy enumerated
    arms = [random_arm(2, rng=1), random_arm(2, rng=2), random_arm(2, rng=3)]
    opt = wl.exact_optimum(arms, 1, activation=activation, discount=discount)
    assert opt.model == "product" and opt.n_states == 8
    assert opt.value == pytest.approx(brute_force(arms, 1, activation, discount), abs=1e-10)


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.9])
def test_counts_mdp_by_matrices_and_by_operators_agree(activation, discount):
    arm = non_indexable()
    a = wl.exact_optimum([arm] * 8, 3, activation=activation, discount=discount,
                         method="policy_iteration")
    b = wl.exact_optimum([arm] * 8, 3, activation=activation, discount=discount,
                         method="operator")
    assert a.n_states == b.n_states == math.comb(10, 2)
    assert b.value == pytest.approx(a.value, abs=1e-9)
    bound = wl.relaxation_bound([arm] * 8, 3, activation=activation, discount=discount).bound
    assert a.value <= bound + 1e-9


def test_counts_mdp_against_the_product_mdp_built_arm_by_arm():
    # identical arms as counts, against every arm's state kept (the product MDP, solved by
    # policy iteration on matrices built here)
    arm = random_arm(3, rng=8)
    N, M = 3, 1
    states = list(itertools.product(range(3), repeat=N))
    index = {s: i for i, s in enumerate(states)}
    actions = [c for c in itertools.combinations(range(N), M)]
    P = np.zeros((len(actions), len(states), len(states)))
    R = np.zeros((len(states), len(actions)))
    for i, s in enumerate(states):
        for k, c in enumerate(actions):
            rows = [arm.P1[s[j]] if j in c else arm.P0[s[j]] for j in range(N)]
            R[i, k] = sum(arm.R1[s[j]] if j in c else arm.R0[s[j]] for j in range(N))
            for nxt in states:
                P[k, i, index[nxt]] = math.prod(row[y] for row, y in zip(rows, nxt))
    product = mdp.policy_iteration(mdp.FiniteMDP(P, R)).gain
    assert wl.exact_optimum([arm] * N, M, activation="exactly").value == \
        pytest.approx(product, abs=1e-10)


def test_exact_optimum_refuses_a_model_beyond_its_limit():
    arm = non_indexable()
    with pytest.raises(ValueError, match=r"has 1,326 states .* max_states=1,000"):
        wl.exact_optimum([arm] * 50, 15, max_states=1_000)
    opt = wl.exact_optimum([arm] * 4, 1, max_states=15)      # C(6, 2) = 15 states: allowed
    assert opt.n_states == 15


def test_every_policy_is_below_the_optimum_below_the_bound():
    arm = ggy20_example2()
    N, M = 5, 2
    opt = wl.exact_optimum([arm] * N, M, activation="exactly").value
    bound = wl.relaxation_bound([arm] * N, M, activation="exactly").bound
    whittle = wl.whittle_indices(arm).indices
    gains = {}
    for name, table in (("whittle", whittle),
                        ("lp_priority", wl.lp_priority([arm] * N, M,
                                                       activation="exactly").indices[0])):
        _, P, r = counts_chain(arm, N, table_decision(table, M, "exactly"))
        gains[name] = chain_gain(P, r)
    assert max(gains.values()) <= opt + 1e-10 <= bound + 2e-10
    assert gains["whittle"] == pytest.approx(gains["lp_priority"], abs=1e-12)   # one order


@pytest.mark.parametrize("discount", [None, 0.8])
def test_counts_of_several_types_against_brute_force(discount):
    # two copies of one arm and one of another: the counts of each type (3 x 2 = 6 states)
    # against the product MDP (8 states) by brute force
    a, b = random_arm(2, rng=4), random_arm(2, rng=6)
    opt = wl.exact_optimum([a, b, a], 1, activation="exactly", discount=discount)
    assert opt.model == "counts" and opt.n_states == 6
    assert opt.value == pytest.approx(brute_force([a, b, a], 1, "exactly", discount),
                                      abs=1e-10)


def test_exact_optimum_reports_its_policy():
    arm = non_indexable()
    opt = wl.exact_optimum([arm] * 6, 2, activation="exactly")
    assert opt.states.shape == opt.actions.shape == (math.comb(8, 2), 3)
    assert (opt.actions.sum(axis=1) == 2).all() and (opt.actions <= opt.states).all()
    # the policy's own chain, built arm by arm, earns the optimum
    lookup = {tuple(c): a for c, a in zip(opt.states.tolist(), opt.actions)}
    _, P, r = counts_chain(arm, 6, lambda c: lookup[tuple(c.tolist())])
    assert chain_gain(P, r) == pytest.approx(opt.value, abs=1e-10)


ARM = non_indexable()

MISUSE = [
    # (call, error, message): every policy, the parameter named and what to pass
    (lambda: wl.lp_priority([ARM] * 6, 2.0), TypeError, "M must be an integer"),
    (lambda: wl.lp_priority([ARM] * 6, 7), ValueError, r"M must be an integer in \[0, N=6\]"),
    (lambda: wl.lp_priority(ARM, 1), TypeError, r"got a single RestlessArm: pass \[arm\]"),
    (lambda: wl.lp_priority([1, 2], 1), TypeError, r"arms\[0\] must be a RestlessArm"),
    (lambda: wl.ftva([ARM, ARM, "x", ARM, 3], 1), TypeError, r"arms\[2\] must be a Restless"),
    (lambda: wl.lp_priority([ARM] * 6, 2, activation="all"), ValueError,
     "activation must be one of"),
    (lambda: wl.lp_priority([ARM] * 6, 2, discount=1.0), ValueError, "pass discount=None"),
    (lambda: wl.lp_priority([ARM] * 6, 2, discount="0.9"), TypeError, "discount must be"),
    (lambda: wl.lp_priority([ARM] * 6, 2, subsidy="a"), TypeError, "subsidy must be a number"),
    (lambda: wl.lp_priority([ARM] * 6, 2, subsidy=100.0), ValueError,
     "subsidy must be an optimal subsidy"),
    (lambda: wl.lp_priority([ARM] * 6, 2, subsidy=float("nan")), ValueError, "subsidy must"),
    (lambda: wl.lp_priority([ARM] * 6, 2, x0=[0] * 6), ValueError, "x0 applies to the disc"),
    (lambda: wl.lp_priority([ARM] * 6, 2, discount=0.9, x0=[5] * 6), ValueError,
     r"x0\[0\] must be a state"),
    (lambda: wl.ftva([ARM] * 6, "2"), TypeError, "M must be an integer"),
    (lambda: wl.ftva([ARM] * 6, 2, activation=None), TypeError, "activation must be one of"),
    (lambda: wl.ftva([ARM] * 6, 2, virtual_start=3), TypeError, "virtual_start must be one of"),
    (lambda: wl.ftva([ARM] * 6, 2, discount=0.0), ValueError, "discount must lie in"),
    (lambda: wl.lp_update([ARM] * 6, 2, horizon=True), TypeError, "horizon must be an integer"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3, activation="some"), ValueError, "activation must"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3).plan([[1, 2]]), ValueError,
     r"counts must have shape \(1, 3\)"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3).plan([[7, -1, 0]]), ValueError,
     "counts must be non-negative integers"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3).plan([[5.5, 0.5, 0]]), ValueError,
     "counts must be non-negative integers"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3).plan([[7, 1, 0]]), ValueError,
     r"row totals \[6\]"),
    (lambda: wl.lp_update([ARM] * 6, 2, 3).plan("abc"), TypeError, "counts must be an array"),
    (lambda: wl.exact_optimum([ARM] * 6, 2, max_states=10.5), TypeError,
     "max_states must be an integer"),
    (lambda: wl.exact_optimum([ARM] * 6, 2, max_states=0), ValueError,
     "max_states must be an integer >= 1"),
    (lambda: wl.exact_optimum([ARM] * 6, 2, method="lp"), ValueError, "method must be one of"),
    (lambda: wl.exact_optimum([ARM, ARM, random_arm(2, rng=1)], 1, method="operator"),
     ValueError, "use method='policy_iteration'"),
    (lambda: wl.exact_optimum([ARM] * 6, 2, x0=[3] * 6), ValueError, r"x0\[0\] must be"),
    (lambda: wl.exact_optimum([ARM] * 6, 2, x0="abc"), TypeError, "x0 must be an array"),
    (lambda: wl.relaxation_solution([ARM] * 6, 2.5), TypeError, "M must be an integer"),
    (lambda: wl.simulate([ARM] * 7, wl.ftva([ARM] * 6, 2), 2, 5, rng=1), ValueError,
     "built for 6 arms"),
]


@pytest.mark.parametrize("call, error, message", MISUSE, ids=range(len(MISUSE)))
def test_misuse_is_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_reprs_are_short():
    arm = non_indexable()
    for value in (wl.relaxation_solution([arm] * 1000, 300), wl.lp_priority([arm] * 1000, 300),
                  wl.ftva([arm] * 1000, 300), wl.lp_update([arm] * 1000, 300, 4),
                  wl.exact_optimum([arm] * 5, 2)):
        assert len(repr(value)) < 600
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "subsidy_range" in repr(wl.relaxation_solution([arm] * 10, 3))
