"""The simulator of N arms (issue 24, goal 4; issue 25, item 3): the fast paths against the
former code bit for bit, the simulated averages against the exact ones of the joint chain, the
count mode against the per-arm mode in distribution, the discounted mode against the exact
discounted value, and every error message.

References: the former FiniteArms step (the padded cumulative rows and ``sample_next``, kept
here as an oracle), the stationary law and the discounted value of the joint Markov chain of
2-3 small arms under the index policy (exact), and the law of the state counts after a few
periods, computed exactly on the same chain.
"""


import numpy as np
import pytest

from whittle_lib import arms, builders, indices, mdp, rmab, stats

from joint_chain import index_policy_chain


def _random_arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.dirichlet(np.ones(n), size=(2, n))
    R0, R1 = rng.normal(size=(2, n))
    return arms.RestlessArm(P0, P1, R0, R1)


class _FormerFiniteArms:
    """The step of FiniteArms before issue 24: padded (N, 2, n, n) cumulative rows gathered per
    arm and ``sample_next`` (count of ``F(y) <= u``, clipped to ``n - 1``)."""

    def __init__(self, arm_list, x0):
        n = max(a.n_states for a in arm_list)
        self.cdf = np.ones((len(arm_list), 2, n, n))
        self.rewards = np.zeros((len(arm_list), 2, n))
        for i, arm in enumerate(arm_list):
            k = arm.n_states
            for a, (P, r) in enumerate(((arm.P0, arm.R0), (arm.P1, arm.R1))):
                self.cdf[i, a, :k, :k] = np.cumsum(P, axis=1)
                self.rewards[i, a, :k] = r
        self.x0 = np.asarray(x0)

    def step(self, states, active, rng):
        arm = np.arange(self.cdf.shape[0])
        action = active.astype(int)
        rewards = self.rewards[arm, action, states]
        u = rng.random(states.shape)
        return rmab.sample_next(self.cdf[arm, action, states], u), rewards.sum(axis=-1)


@pytest.mark.parametrize("seed", range(6))
def test_finite_arms_step_gives_the_former_bits(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    types = [_random_arm(n, 100 * seed + k) for k in range(3)]
    # sparse rows too: zeros make equal cumulative values, where a scan must not stop early
    P = np.where(rng.random((n, n)) < 0.6, 0.0, rng.random((n, n)))
    P[:, 0] += 1e-3
    P /= P.sum(1, keepdims=True)
    types.append(arms.RestlessArm(P, P[::-1], rng.normal(size=n), rng.normal(size=n)))
    arm_list = [types[k] for k in rng.integers(0, len(types), 300)]
    x0 = rng.integers(0, n, 300)
    new, old = rmab.FiniteArms(arm_list, x0), _FormerFiniteArms(arm_list, x0)
    s_new = np.tile(x0, (3, 1))
    s_old = s_new.copy()
    g_new, g_old = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(40):
        active = rng.random(s_new.shape) < 0.3
        s_new, r_new = new.step(s_new, active, g_new)
        s_old, r_old = old.step(s_old, active, g_old)
        np.testing.assert_array_equal(s_new, s_old)
        np.testing.assert_array_equal(r_new, r_old)    # same rewards, same order of the sum


def test_inverse_cdf_on_the_cumulative_values_themselves():
    # u exactly at a cumulative value F(y) must go to y + 1 (u < F(y + 1)), as sample_next does
    arm = _random_arm(7, 3)
    system = rmab.FiniteArms([arm] * 7 * 2)
    F = np.cumsum(np.concatenate([arm.P0, arm.P1]), axis=1)       # (14, 7): row (a, x)
    for col in range(6):
        u = F[:, col].copy()
        u = np.where(u < 1.0, u, np.nextafter(1.0, 0.0))
        row = system._row0 + np.arange(14)                         # type 0: rows 0..13
        want = rmab.sample_next(F, u)
        np.testing.assert_array_equal(system._inverse_cdf(row, u), want)


def test_a_short_arm_never_leaves_its_states():
    # ten rows of 0.1 sum to 1 - 2**-53 in floating point: the largest u lies above the total.
    # The former padded sampler sent such a draw of a 10-state arm beside a 12-state one to
    # state 10, beyond the arm; now it is the arm's last state, 9
    short = arms.RestlessArm(np.full((10, 10), 0.1), np.full((10, 10), 0.1), np.zeros(10),
                             np.zeros(10))
    assert np.cumsum(short.P0[0])[-1] == np.nextafter(1.0, 0.0)
    system = rmab.FiniteArms([short, _random_arm(12, 1)])
    u = np.full(2, np.nextafter(1.0, 0.0))
    nxt = system._inverse_cdf(system._rows(np.array([0, 0]), np.array([False, False])), u)
    assert nxt.tolist() == [9, 11]
    former = _FormerFiniteArms([short, _random_arm(12, 1)], [0, 0])
    assert rmab.sample_next(former.cdf[0, 0, 0], u[:1]).tolist() == [10]


def _joint_chain(arm_list, tables, M):
    """The joint chain of the index policy (ties to the lowest arm): states, P, r."""
    return index_policy_chain(arm_list, tables, M)[:3]


def test_simulated_average_with_warmup_is_the_exact_average_within_its_interval():
    arm_list = [_random_arm(3, 21), _random_arm(2, 22), _random_arm(3, 23)]
    results = [indices.whittle_indices(a, discount=None) for a in arm_list]
    _, P, r = _joint_chain(arm_list, [res.indices for res in results], 1)
    exact = float(mdp.stationary_distribution(P) @ r)
    # the user's natural call: a list of arms, a list of WhittleIndexResult
    run = rmab.simulate(arm_list, results, 1, 5_000, replications=8, warmup=200,
                        activation="exactly", rng=3)          # as the chain: exactly M
    ci = run.interval()
    assert isinstance(ci, stats.ConfidenceInterval) and ci.n == 8
    # a 95 % interval misses with probability 5 %: widen to 2.5 half-widths (t quantile 2.4
    # -> about 3.7 standard errors, a 1e-3 chance for this fixed seed to be a false alarm)
    assert abs(ci.estimate - exact) < 2.5 * ci.half_width
    assert ci.half_width < 0.02                 # and the interval is informative


def test_warmup_drops_the_first_periods_of_the_same_stream():
    arm_list = [_random_arm(4, s) for s in range(5)]
    rule = rmab.IndexRule([indices.whittle_indices(a, discount=None) for a in arm_list])
    full = rmab.simulate(arm_list, rule, 2, 130, replications=3, record=True, rng=9)
    late = rmab.simulate(arm_list, rule, 2, 100, replications=3, record=True, warmup=30,
                         rng=9)
    np.testing.assert_array_equal(late.rewards, full.rewards[30:])
    np.testing.assert_array_equal(late.states, full.states[30:])
    np.testing.assert_array_equal(late.active, full.active[30:])
    assert late.warmup == 30


def test_discounted_mode_is_the_exact_discounted_value():
    arm_list = [_random_arm(2, 31), _random_arm(3, 32)]
    beta = 0.8
    tables = [indices.whittle_indices(a, discount=beta).indices for a in arm_list]
    states, P, r = _joint_chain(arm_list, tables, 1)
    value = np.linalg.solve(np.eye(len(states)) - beta * P, r)
    exact = value[states.index((0, 0))]
    T = 120                                      # beta**120 * max|r| / (1 - beta) < 1e-10
    run = rmab.simulate(arm_list, tables, 1, T, replications=4_000, discount=beta,
                        activation="exactly", rng=4)
    ci = run.interval()
    assert run.discount == beta and np.array_equal(run.value, run.discounted_reward)
    # 4,000 replications: the 95 % interval, widened to 2.5 half-widths (about 5 standard
    # errors), contains the exact value, and the truncation (< 1e-10) is negligible
    assert abs(ci.estimate - exact) < 2.5 * ci.half_width
    assert ci.half_width < 0.05


def _count_law(arm, table, N, M, t, x0):
    """Exact law of the state counts after t periods of N copies under the index rule."""
    arm_list = [arm] * N
    states, P, _ = _joint_chain(arm_list, [table] * N, M)
    p = np.zeros(len(states))
    p[states.index(tuple(x0))] = 1.0
    for _ in range(t):
        p = p @ P
    law: dict[tuple, float] = {}
    for s, q in zip(states, p):
        key = tuple(np.bincount(s, minlength=arm.n_states))
        law[key] = law.get(key, 0.0) + q
    return law


def test_count_mode_has_the_law_of_the_per_arm_mode():
    arm = _random_arm(3, 41)
    table = indices.whittle_indices(arm, discount=None).indices
    assert len(set(table.tolist())) == 3         # distinct indices: the two modes agree in law
    N, M, t, R = 5, 2, 4, 40_000
    x0 = [0, 0, 1, 2, 2]
    law = _count_law(arm, table, N, M, t, x0)
    per_arm = rmab.simulate(rmab.FiniteArms([arm] * N, x0), [table] * N, M, t + 1,
                            replications=R, record=True, activation="exactly", rng=5)
    counts_per_arm = np.stack([np.bincount(s, minlength=3) for s in per_arm.states[t]])
    run = rmab.simulate_counts(arm, np.bincount(x0, minlength=3), table, M, t + 1,
                               replications=R, record=True, activation="exactly", rng=6)
    for sample in (run.states[t], counts_per_arm):
        keys, observed = np.unique(sample, axis=0, return_counts=True)
        expected = np.array([law.get(tuple(k), 0.0) for k in keys]) * R
        assert set(map(tuple, keys)) <= set(law)
        # Pearson's chi-square over the cells of expected count >= 5 against the 0.999
        # quantile of its law (df < 21: 46.8); a wrong transition law gives thousands
        big = expected >= 5
        chi2 = float((((observed - expected) ** 2)[big] / expected[big]).sum())
        assert chi2 < 46.8, chi2
    # the budget: exactly M active arms, and rewards of the same mean
    assert (run.active.sum(-1) == M).all()


def test_count_mode_average_is_the_exact_average():
    arm = _random_arm(3, 42)
    table = indices.whittle_indices(arm, discount=None).indices
    _, P, r = _joint_chain([arm] * 3, [table] * 3, 1)
    exact = float(mdp.stationary_distribution(P) @ r)
    run = rmab.simulate_counts(arm, [3, 0, 0], table, 1, 5_000, replications=8, warmup=100,
                               activation="exactly", rng=7)
    ci = run.interval()
    assert abs(ci.estimate - exact) < 2.5 * ci.half_width   # as above: ~3.7 standard errors


def test_count_mode_cost_does_not_depend_on_n_arms():
    arm = _random_arm(4, 43)
    table = indices.whittle_indices(arm, discount=None).indices
    big = rmab.simulate_counts(arm, [10**12, 0, 0, 0], table, 10**11, 20, rng=1)
    assert big.rewards.shape == (20, 1)
    # the law of large numbers: the reward per arm is close to the fluid limit's
    per_arm = big.rewards[-1, 0] / 10**12
    small = rmab.simulate_counts(arm, [10**6, 0, 0, 0], table, 10**5, 20, replications=4,
                                 rng=2).rewards[-1] / 10**6
    # at 10**6 arms the reward per arm fluctuates by about 1e-3 (central limit theorem)
    assert np.all(np.abs(small - per_arm) < 1e-2)


def test_nan_priority_names_the_arm_and_the_state():
    arm_list = [_random_arm(3, 51), _random_arm(3, 52)]
    tables = [np.array([0.0, 1.0, 2.0]), np.array([0.5, np.nan, 1.0])]
    with pytest.raises(ValueError, match=r"priority of arm 1 in state 1 is nan"):
        rmab.simulate(rmab.FiniteArms(arm_list, [0, 1]), tables, 1, 10, rng=1)
    with pytest.raises(ValueError, match=r"priority contains nan: arm 1"):
        rmab.top_m([1.0, np.nan], 1)
    with pytest.raises(ValueError, match="index of state 1 is nan"):
        rmab.simulate_counts(arm_list[1], [2, 0, 0], tables[1], 1, 5)


def test_simulate_refuses_what_it_cannot_use_and_says_what_to_pass():
    arm_list = [_random_arm(3, 61), _random_arm(3, 62), _random_arm(3, 63)]
    results = [indices.whittle_indices(a, discount=None) for a in arm_list]
    with pytest.raises(TypeError, match="got one RestlessArm: pass a list of arms"):
        rmab.simulate(arm_list[0], results, 1, 5)
    with pytest.raises(TypeError, match="a WhittleIndexResult holds an arm's indices"):
        rmab.simulate(results, results, 1, 5)
    with pytest.raises(TypeError, match="dynamics must be a list of RestlessArm"):
        rmab.simulate({"a": 1}, results, 1, 5)
    with pytest.raises(TypeError, match="rule must give one priority per arm, got one "
                                        "WhittleIndexResult"):
        rmab.simulate(arm_list, results[0], 1, 5)
    with pytest.raises(TypeError, match="rule must be a callable"):
        rmab.simulate(arm_list, 3.0, 1, 5)
    with pytest.raises(ValueError, match="IndexRule has 2 index tables for 3 arms"):
        rmab.simulate(arm_list, results[:2], 1, 5)
    with pytest.raises(ValueError, match=r"indices\[1\] has 2 entries but arm 1 has 3 states"):
        rmab.simulate(arm_list, [[0, 1, 2], [0, 1], [0, 1, 2]], 1, 5)
    with pytest.raises(ValueError, match="warmup must be an integer >= 0, got -1"):
        rmab.simulate(arm_list, results, 1, 5, warmup=-1)
    with pytest.raises(ValueError, match=r"discount=1.0 is not a discount: pass discount=None"):
        rmab.simulate(arm_list, results, 1, 5, discount=1.0)
    with pytest.raises(ValueError, match="warmup must be 0 with discount"):
        rmab.simulate(arm_list, results, 1, 5, discount=0.9, warmup=3)
    with pytest.raises(ValueError, match=r"M must be an integer in \[0, N=3\]"):
        rmab.simulate(arm_list, results, 4, 5)
    with pytest.raises(ValueError, match="n_periods must be an integer >= 1, got 0"):
        rmab.simulate(arm_list, results, 1, 0)
    with pytest.raises(ValueError, match="one priority per arm"):
        rmab.simulate(arm_list, lambda s, t: np.zeros(2), 1, 5)
    run = rmab.simulate(arm_list, results, 1, 5, rng=1)
    with pytest.raises(ValueError, match="at least 2 independent replications"):
        run.interval()
    with pytest.raises(ValueError, match="discounted_reward needs a run with discount"):
        run.discounted_reward


def test_index_rule_says_what_a_table_must_be():
    with pytest.raises(TypeError, match=r"indices\[1\] must be an array of numbers"):
        rmab.IndexRule([[0.0, 1.0], object()])
    with pytest.raises(TypeError, match=r"indices\[0\] must be an array of numbers"):
        rmab.IndexRule([["a", "b"]])
    with pytest.raises(ValueError, match=r"indices\[0\] must be a non-empty 1-d table"):
        rmab.IndexRule([[]])
    with pytest.raises(TypeError, match="got one 1-d array: pass \\[table\\]"):
        rmab.IndexRule(np.array([0.0, 1.0]))
    result = indices.whittle_indices(_random_arm(3, 71), discount=None)
    with pytest.raises(TypeError, match=r"got one WhittleIndexResult: pass \[result\]"):
        rmab.IndexRule(result)
    rule = rmab.IndexRule([result, [5.0, 6.0]])
    np.testing.assert_array_equal(rule(np.array([[2, 1]]), 0), [[result.indices[2], 6.0]])
    with pytest.raises(ValueError, match=r"states must lie in 0..2"):
        rule(np.array([3, 0]), 0)
    with pytest.raises(TypeError, match="arms must be a sequence of RestlessArm"):
        rmab.FiniteArms(_random_arm(2, 1))
    with pytest.raises(TypeError, match=r"arms\[1\] must be a RestlessArm, got "
                                        "WhittleIndexResult"):
        rmab.FiniteArms([_random_arm(3, 71), result])


def _top_m_by_sorting(priority, M):
    """The former top_m: rank by a stable sort of -priority, keep ranks below M."""
    order = np.argsort(-priority, axis=-1, kind="stable")
    return np.argsort(order, axis=-1, kind="stable") < M


@pytest.mark.parametrize("layout", ["normal", "few values", "sorted", "sample sees the top"])
def test_top_m_on_long_rows_is_the_sorted_selection(layout):
    # rows long enough for the sampled lower bound of the cut; layouts where the strided
    # sample misleads the guess (sorted rows, the sampled entries all high) fall back
    rng = np.random.default_rng(len(layout))
    n = 150_001
    if layout == "normal":
        p = rng.normal(size=(2, n))
    elif layout == "few values":
        p = rng.integers(0, 5, size=(2, n)).astype(float)
    elif layout == "sorted":
        p = np.sort(rng.normal(size=(1, n)))
    else:
        p = rng.normal(size=(1, n))
        p[:, ::n // 4096] = 100.0
    for M in (1, 37, 1_000, n // 8, n // 2):
        np.testing.assert_array_equal(rmab.top_m(p, M), _top_m_by_sorting(p, M))
        np.testing.assert_array_equal(rmab.top_m(p[0], M), _top_m_by_sorting(p[0], M))


@pytest.mark.parametrize("n", [25, 300])          # below and above rmab._SORT_BELOW
@pytest.mark.parametrize("seed", range(6))
def test_top_m_with_ties_and_infinities_is_the_sorted_selection(seed, n):
    rng = np.random.default_rng(seed)
    p = rng.integers(-3, 3, size=(3, n)).astype(float)
    p[rng.random(p.shape) < 0.1] = np.inf
    p[rng.random(p.shape) < 0.1] = -np.inf
    p[p == 0] = -0.0 if seed % 2 else 0.0          # -0.0 ties with 0.0
    for M in range(n + 1):
        np.testing.assert_array_equal(rmab.top_m(p, M), _top_m_by_sorting(p, M))
        np.testing.assert_array_equal(rmab.top_m(p[1], M), _top_m_by_sorting(p[1], M))


@pytest.mark.parametrize("layout", ["lattice", "uniform", "near u*", "ties"])
def test_screened_crawling_priorities_select_what_the_index_selects(layout):
    # WhittleRule.screened computes the index of the candidates only (gamma(x) <= x); top_m on
    # its priorities must select exactly the sources top_m selects on the full index
    from whittle_lib.models import crawling, crawling_policies as policies

    rng = np.random.default_rng(len(layout))
    n = 70_000
    model = crawling.CrawlingModel(xi_mean=rng.uniform(0.05, 1.0, n),
                                   mu=rng.uniform(0.01, 3.0, n),
                                   arrival_rate=rng.uniform(10.0, 300.0, n))
    if layout == "lattice":
        x = crawling.visited_states(model.u, model.alpha, rng.integers(1, 60, (2, n)))
    elif layout == "uniform":
        x = rng.uniform(0.0, 1.3, (2, n)) * model.u_star
    elif layout == "near u*":
        x = model.u_star * (1 - rng.uniform(0, 1e-9, (2, n)))
        x[:, ::7] = model.u_star[::7]
    else:                                                   # many sources in one state
        x = np.broadcast_to(crawling.visited_states(model.u, model.alpha, 3), (2, n)).copy()
        x[:, ::3] = 0.0
    rule = policies.WhittleRule(model)
    full = rule(x, None, 0)
    for M in (1, 600, n // 16):
        screened = rule.screened(x, M)
        np.testing.assert_array_equal(rmab.top_m(screened, M), rmab.top_m(full, M))
        kept = np.isfinite(screened)
        np.testing.assert_array_equal(screened[kept], full[kept])     # the same bits
        a = rmab.top_m(screened, M, ties="random", rng=3)
        b = rmab.top_m(full, M, ties="random", rng=3)
        np.testing.assert_array_equal(a, b)


def test_crawling_simulation_at_scale_is_the_former_one_bit_for_bit():
    # the simulate of before issue 24: the full index and top M by two stable sorts
    from whittle_lib.models import crawling, crawling_policies as policies

    rng = np.random.default_rng(8)
    n, M, T = 70_000, 700, 8
    # few arrivals per period (Lambda <= 3): the stochastic run draws each one
    model = crawling.CrawlingModel(xi_mean=rng.uniform(0.05, 1.0, n), mu=rng.uniform(0.1, 1.0, n),
                                   arrival_rate=rng.uniform(0.5, 3.0, n))
    rule = policies.WhittleRule(model)
    for stochastic in (False, True):
        run = policies.simulate_crawling(model, rule, M, T, stochastic=stochastic, record=True, rng=4)
        dynamics = crawling.CrawlingDynamics(model, stochastic=stochastic)
        state, g = dynamics.initial(None), np.random.default_rng(4)
        for t in range(T):
            active = _top_m_by_sorting(crawling._whittle_index(state.x, *rule._constants), M)
            np.testing.assert_array_equal(run.active[t], active)
            state, reward = dynamics.step(state, active, g)
            assert run.rewards[t] == reward


# --- issue 32: the activation rule, fingerprints, random streams, reprs --------------------------

import sys  # noqa: E402

import whittle_lib as wl  # noqa: E402

def _results(arm_list):
    return [indices.whittle_indices(a) for a in arm_list]       # the average reward


def test_a_slack_budget_gives_the_bound_under_both_defaults():
    # The user's session of issue 32: 50 wear/repair machines of three kinds, 6 repairs per
    # period. Left alone at subsidy 0 they ask for about 3.5 repairs a period, so the budget
    # is slack: the at-most bound's subsidy is 0 and the index policy that repairs only
    # machines of positive index earns the bound. The old default (exactly 6 repairs, even of
    # machines that would rather run) showed a gap of 9 % that is not there.
    kinds = [wl.wear_repair_arm(6, wear=w, repair_cost=c)
             for w, c in ((0.05, 0.5), (0.1, 1.0), (0.15, 2.0))]
    machines = [kinds[i % 3] for i in range(50)]
    results = _results(kinds)
    table = [results[i % 3] for i in range(50)]
    bound = wl.relaxation_bound(machines, 6)
    assert bound.subsidy == 0.0 and bound.shares.sum() < 4       # slack
    run = wl.simulate(machines, table, 6, 4_000, replications=8, warmup=400, rng=1)
    ci = run.interval()
    assert run.activation == "at_most"
    # the bound within the 95 % interval, widened to 2.5 half-widths (about 3.7 standard
    # errors; the budget binds in a small share of periods, below what 8 x 4,000 periods see)
    assert abs(ci.estimate - bound.bound) < 2.5 * ci.half_width
    assert ci.half_width < 0.1                                   # and it is informative
    exactly = wl.simulate(machines, table, 6, 4_000, replications=8, warmup=400,
                          activation="exactly", rng=1).interval()
    exact_bound = wl.relaxation_bound(machines, 6, activation="exactly")
    assert exactly.high < 0.95 * bound.bound                     # the gap the defaults showed
    assert exactly.estimate < exact_bound.bound + 2.5 * exactly.half_width


def test_at_most_simulation_is_the_exact_average_of_the_at_most_chain():
    arm_list = [_random_arm(3, 81), _random_arm(2, 82), _random_arm(3, 83)]
    results = _results(arm_list)
    tables = [r.indices for r in results]
    assert min(t.min() for t in tables) < 0 < max(t.max() for t in tables)   # both signs
    _, P, r, _ = index_policy_chain(arm_list, tables, 2, threshold=0.0)
    exact = float(mdp.stationary_distribution(P) @ r)
    ci = rmab.simulate(arm_list, results, 2, 5_000, replications=8, warmup=200,
                       rng=3).interval()
    assert abs(ci.estimate - exact) < 2.5 * ci.half_width      # as above: ~3.7 standard errors
    _, P, r, _ = index_policy_chain(arm_list, tables, 2)
    exactly = float(mdp.stationary_distribution(P) @ r)
    assert abs(exactly - exact) > 5 * ci.half_width             # the two rules differ here


@pytest.mark.parametrize("ties", ["lowest", "random"])
def test_the_activation_rules_select_what_top_m_selects(ties):
    arm_list = [_random_arm(3, 90 + k) for k in range(6)]
    tables = [np.array([-1.0, 0.0, 2.0]) + k % 2 for k in range(6)]    # ties, signs, zeros
    for activation, threshold in (("at_most", 0.0), ("exactly", None)):
        run = rmab.simulate(arm_list, tables, 3, 60, replications=4, activation=activation,
                            ties=ties, record=True, rng=5)
        priority = np.stack([tables[i][run.states[..., i]] for i in range(6)], axis=-1)
        # the same draws: top_m with the generator at the same point (ties, then the step)
        g = np.random.default_rng(5)
        for t in range(60):
            want = rmab.top_m(priority[t], 3, ties=ties, threshold=threshold,
                              rng=g if ties == "random" else None)
            np.testing.assert_array_equal(run.active[t], want)
            g.random(priority[t].shape)                         # FiniteArms.step's uniforms
        if activation == "at_most":
            assert not (run.active & (priority <= 0)).any()
            assert (run.active.sum(-1) < 3).any()              # a period that idled
        else:
            assert (run.active.sum(-1) == 3).all()


def test_count_mode_at_most_activates_only_states_of_positive_index():
    arm = _random_arm(4, 44)
    table = np.array([-0.5, 0.0, 1.0, 2.0])
    run = rmab.simulate_counts(arm, [20, 20, 20, 20], table, 50, 30, replications=3,
                               record=True, rng=8)
    assert run.activation == "at_most"
    assert not run.active[..., :2].any()                        # index <= 0: never active
    assert (run.active.sum(-1) <= 50).all() and (run.active.sum(-1) < 50).any()
    exactly = rmab.simulate_counts(arm, [20, 20, 20, 20], table, 50, 30, replications=3,
                                   record=True, activation="exactly", rng=8)
    assert (exactly.active.sum(-1) == 50).all()


def test_periodic_orbit_takes_the_activation_rule():
    class Rotation:                       # as in test_rmab: active resets, passive counts up
        n_arms = 3

        def initial(self, replications):
            return np.array([0, 2, 4])

        def step(self, states, active, rng):
            return np.where(active, 0, (states + 1) % 5), float(states[active].sum())

        def observe(self, states):
            return np.array(states, copy=True)

    rule = lambda states, t: states - 1.0            # noqa: E731  (state 0: priority -1)
    at_most = rmab.periodic_orbit(Rotation(), rule, 2)
    exactly = rmab.periodic_orbit(Rotation(), rule, 2, activation="exactly")
    assert at_most.activation == "at_most" and exactly.activation == "exactly"
    assert (exactly.active.sum(-1) == 2).all() and (at_most.active.sum(-1) < 2).any()
    with pytest.raises(ValueError, match="activation must be one of"):
        rmab.periodic_orbit(Rotation(), rule, 2, activation="at most")
    with pytest.raises(TypeError, match="dynamics must be deterministic dynamics"):
        rmab.periodic_orbit([_random_arm(2, 1)], rule, 1)


def test_index_rule_keeps_the_fingerprints_of_its_results():
    arm_list = [_random_arm(3, 101), _random_arm(2, 102)]
    results = _results(arm_list)
    rule = rmab.IndexRule([results[0], results[1], results[0].indices])
    assert rule.fingerprints == (arm_list[0].fingerprint, arm_list[1].fingerprint, None)
    assert rule.n_arms == 3


def test_simulate_refuses_a_result_of_another_arm_and_names_its_position():
    arm_list = [_random_arm(3, 111), _random_arm(3, 112), _random_arm(3, 113)]
    results = _results(arm_list)
    swapped = [results[0], results[2], results[1]]
    with pytest.raises(ValueError, match=r"indices\[1\] is a WhittleIndexResult computed for "
                                         r"another arm .* than arms\[1\] .*whittle_indices"):
        rmab.simulate(arm_list, swapped, 1, 5, rng=1)
    with pytest.raises(ValueError, match=r"arms\[1\]"):
        rmab.simulate(rmab.FiniteArms(arm_list), rmab.IndexRule(swapped), 1, 5, rng=1)
    # raw tables carry no fingerprint and are not checked; the arm's own results pass
    rmab.simulate(arm_list, [r.indices for r in swapped], 1, 5, rng=1)
    rmab.simulate(arm_list, results, 1, 5, rng=1)
    # a discounted index on an average run is a legitimate heuristic: not refused
    discounted = [indices.whittle_indices(a, discount=0.9) for a in arm_list]
    rmab.simulate(arm_list, discounted, 1, 5, rng=1)
    # the count mode likewise
    with pytest.raises(ValueError, match="computed for another arm"):
        rmab.simulate_counts(arm_list[0], [2, 0, 0], results[1], 1, 5, rng=1)
    rmab.simulate_counts(arm_list[0], [2, 0, 0], results[0], 1, 5, rng=1)


def test_many_copies_of_few_arms_hash_each_arm_once(monkeypatch):
    from whittle_lib import arms as arms_module

    calls = []
    real = arms_module._fingerprint
    monkeypatch.setattr(arms_module, "_fingerprint",
                        lambda *a: calls.append(1) or real(*a))
    kinds = [_random_arm(3, 121 + k) for k in range(3)]          # new objects: nothing cached
    results = _results(kinds)
    N = 300_000
    which = np.random.default_rng(1).integers(0, 3, N)
    arm_list = [kinds[k] for k in which]
    rule = rmab.IndexRule([results[k] for k in which])
    run = rmab.simulate(arm_list, rule, N // 10, 2, replications=None, rng=1)
    assert run.rewards.shape == (2,) and len(calls) == 3
    # one misplaced result among them is found, at its position
    i = int(np.flatnonzero(which == 0)[-1])
    bad = [results[k] for k in which]
    bad[i] = results[1]
    with pytest.raises(ValueError, match=rf"indices\[{i}\] .* arms\[{i}\]"):
        rmab.simulate(arm_list, bad, N // 10, 1, replications=None, rng=1)
    assert len(calls) == 3


def test_random_ties_need_a_stream_and_a_stream_must_be_one():
    arm_list = [_random_arm(2, 131)] * 4
    tables = [[0.0, 1.0]] * 4
    with pytest.raises(ValueError, match="rng is required with ties='random'"):
        rmab.simulate(arm_list, tables, 1, 5, ties="random")
    with pytest.raises(ValueError, match="rng is required with ties='random'"):
        rmab.top_m([1.0, 1.0, 0.0], 1, ties="random")
    for bad in (1.5, "seed", True):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator or a seed"):
            rmab.simulate(arm_list, tables, 1, 5, rng=bad)
        with pytest.raises(TypeError, match="rng must be"):
            rmab.simulate_counts(arm_list[0], [2, 2], tables[0], 1, 5, rng=bad)
        with pytest.raises(TypeError, match="rng must be"):
            rmab.top_m([1.0, 1.0], 1, ties="random", rng=bad)
        with pytest.raises(TypeError, match="rng must be"):
            wl.random_arm(3, rng=bad)
    a = rmab.simulate(arm_list, tables, 1, 20, ties="random", rng=4, record=True)
    b = rmab.simulate(arm_list, tables, 1, 20, ties="random", rng=4, record=True)
    np.testing.assert_array_equal(a.active, b.active)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(M=2.0), TypeError, r"M must be an integer in \[0, N=4\], got float"),
    (dict(M=True), TypeError, "M must be an integer"),
    (dict(n_periods=10.0), TypeError, "n_periods must be an integer, got float"),
    (dict(replications="2"), TypeError, "replications must be an integer"),
    (dict(activation=None), TypeError, "activation must be one of"),
    (dict(activation="at most"), ValueError, r"activation must be one of \('at_most', "),
    (dict(threshold=0.0), TypeError, "unexpected keyword argument 'threshold'"),
    (dict(discount="0.9"), TypeError, "discount must be a number in"),
    (dict(discount=1.0), ValueError, "pass discount=None for the average-reward criterion"),
    (dict(ties=None), TypeError, "ties must be one of"),
])
def test_simulate_says_type_errors_from_value_errors(kwargs, error, match):
    arm_list = [_random_arm(2, 141)] * 4
    args = dict(M=1, n_periods=5) | kwargs
    M, n_periods = args.pop("M"), args.pop("n_periods")
    with pytest.raises(error, match=match):
        rmab.simulate(arm_list, [[0.0, 1.0]] * 4, M, n_periods, rng=1, **args)
    if "threshold" not in args and "ties" not in args:
        with pytest.raises(error, match=match.replace("N=4", "N=8")):
            rmab.simulate_counts(arm_list[0], [4, 4], [0.0, 1.0], M, n_periods, rng=1, **args)


def test_simulate_counts_says_what_counts_must_be():
    arm = _random_arm(2, 151)
    with pytest.raises(TypeError, match="counts must hold integer counts, got dtype float64"):
        rmab.simulate_counts(arm, [1.0, 2.0], [0.0, 1.0], 1, 5)
    with pytest.raises(ValueError, match="non-negative integer count for each of the 2 states"):
        rmab.simulate_counts(arm, [1, -2], [0.0, 1.0], 1, 5)
    with pytest.raises(TypeError, match="arm must be a RestlessArm"):
        rmab.simulate_counts([arm], [1, 2], [0.0, 1.0], 1, 5)


def test_results_print_short_and_tabulate():
    kinds = [_random_arm(3, 161 + k) for k in range(3)]
    arm_list = [kinds[k % 3] for k in range(2_000)]
    tables = [np.array([0.0, 1.0, 2.0])] * 2_000
    run = rmab.simulate(arm_list, tables, 100, 500, replications=4, record=True, rng=1)
    for value in (run, run.interval(), rmab.FiniteArms(arm_list), rmab.IndexRule(tables),
                  rmab.periodic_orbit(_Counter(), lambda s, t: s.astype(float), 1)):
        text = repr(value)
        # one line per field at most, arrays and long tuples summarised
        assert text.startswith(type(value).__name__ + "(") and len(text) < 600, text
        assert "[[" not in text and "0., 1., 2." not in text, text
    assert "shape=(500, 4)" in repr(run) and "activation='at_most'" in repr(run)
    pytest.importorskip("pandas", reason="to_frame needs pandas (the [notebooks] extra)")
    frame = run.to_frame()
    assert list(frame.columns) == ["average_reward"] and frame.index.name == "replication"
    np.testing.assert_array_equal(frame["average_reward"], run.average_reward)
    discounted = rmab.simulate(arm_list[:20], tables[:20], 2, 50, replications=3,
                               discount=0.9, rng=1).to_frame()
    assert list(discounted.columns) == ["average_reward", "discounted_reward"]
    one = rmab.simulate(arm_list[:20], tables[:20], 2, 50, replications=None, rng=1).to_frame()
    assert one.shape == (1, 1)
    orbit = rmab.periodic_orbit(_Counter(), lambda s, t: s.astype(float), 1).to_frame()
    assert list(orbit.columns) == ["reward", "n_active", "in_cycle"] and orbit["in_cycle"].any()


def test_to_frame_without_pandas_says_how_to_install_it(monkeypatch):
    run = rmab.RmabSimulation(np.zeros((3, 2)))
    monkeypatch.setitem(sys.modules, "pandas", None)            # import pandas fails
    with pytest.raises(ImportError, match="pip install pandas"):
        run.to_frame()


class _Counter:
    """Deterministic dynamics of two counters mod 3: the active one resets, and pays its count."""

    n_arms = 2

    def initial(self, replications):
        return np.array([0, 1])

    def step(self, states, active, rng):
        return np.where(active, 0, (states + 1) % 3), float(states[active].sum())

    def observe(self, states):
        return np.array(states, copy=True)


def test_index_rule_checks_a_list_of_arms_as_simulate_takes_it():
    arms = [builders.wear_repair_arm(4, wear=0.3, repair_cost=0.2),
            builders.wear_repair_arm(5, wear=0.2, repair_cost=0.1)]
    results = [indices.whittle_indices(arm) for arm in arms]
    rule = rmab.IndexRule(results)
    rule.check_arms(arms)                                   # a list, as simulate takes it
    rule.check_arms(rmab.FiniteArms(arms))
    with pytest.raises(ValueError, match=r"indices\[0\]"):
        rule.check_arms(arms[::-1])
    with pytest.raises(TypeError, match="FiniteArms or a list"):
        rule.check_arms(arms[0])
