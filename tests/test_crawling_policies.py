"""Priority policies, the top-M selection and the simulator (whittle_lib.models.crawling_policies).

The simulator updates states in place for speed; it is checked against a plain loop over the
pure step functions, against the exact periodic average, and (stochastic model) against the
exact expectation of round robin, which is linear in the arrivals.
"""

import numpy as np
import pytest

from whittle_lib.models import crawling, crawling_policies as policies

TABLE_ONE = crawling.table_one()


def test_top_m_picks_the_largest_and_breaks_ties_by_lowest_number():
    np.testing.assert_array_equal(policies.top_m([1.0, 3.0, 2.0], 2), [False, True, True])
    np.testing.assert_array_equal(policies.top_m([2.0, 1.0, 2.0, 2.0], 2), [True, False, True, False])
    rows = policies.top_m([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], 1)
    np.testing.assert_array_equal(rows, [[False, False, True], [True, False, False]])
    assert policies.top_m([1.0, 2.0], 0).sum() == 0
    assert policies.top_m([1.0, 2.0], 2).all()


def test_top_m_random_ties_are_uniform():
    rng = np.random.default_rng(3)
    picks = np.array([policies.top_m([5.0, 5.0, 5.0, 0.0], 1, ties="random", rng=rng)
                      for _ in range(3000)])
    assert picks.sum(axis=1).tolist() == [1] * 3000
    share = picks[:, :3].mean(axis=0)
    # each tied source with probability 1/3; 3000 draws give s.e. 0.0086, 5 s.e. = 0.043
    np.testing.assert_allclose(share, 1 / 3, atol=0.043)
    assert picks[:, 3].sum() == 0


def test_top_m_validates():
    with pytest.raises(ValueError, match="M must be"):
        policies.top_m([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="ties"):
        policies.top_m([1.0, 2.0], 1, ties="highest")
    with pytest.raises(ValueError, match="nan"):
        policies.top_m([np.nan, 2.0], 1)


def _reference_run(model, rule, M, n_periods):
    """The simulator written plainly with the pure step functions."""
    x, age, rewards = model.u.copy(), np.ones(model.n_sources), []
    for t in range(n_periods):
        crawl = policies.top_m(rule(x, age, t), M)
        rewards.append(x[crawl].sum())
        x = crawling.deterministic_step(x, crawl, model.u, model.alpha)
        age = np.where(crawl, 1.0, age + 1.0)
    return np.array(rewards)


@pytest.mark.parametrize("M", [1, 2, 3])
@pytest.mark.parametrize("rule", [policies.WhittleRule(TABLE_ONE), policies.CurrentValueRule(),
                                  policies.ExpectedValueRule(TABLE_ONE),
                                  policies.RoundRobinRule(4, 1)], ids=repr)
def test_simulator_matches_the_plain_loop_and_the_periodic_average(rule, M):
    run = policies.simulate(TABLE_ONE, rule, M, 400, record=True)
    np.testing.assert_allclose(run.rewards, _reference_run(TABLE_ONE, rule, M, 400), rtol=1e-12)
    assert np.all(run.active.sum(axis=1) == M)
    orbit = policies.periodic_orbit(TABLE_ONE, rule, M)
    np.testing.assert_allclose(run.rewards[: orbit.rewards.size], orbit.rewards, rtol=1e-12)
    # the long-run average is the cycle mean; the time average over whole cycles equals it
    start = orbit.transient
    whole = start + ((400 - start) // orbit.period) * orbit.period
    assert run.rewards[start:whole].mean() == pytest.approx(orbit.average_reward, rel=1e-12)


def test_index_policy_on_table_one_attains_the_relaxation_bound_for_m_1():
    # Sec. VII: with M = 1 the index policy crawls sources 1 and 2 alternately
    orbit = policies.periodic_orbit(TABLE_ONE, policies.WhittleRule(TABLE_ONE), 1)
    assert orbit.period == 2
    np.testing.assert_array_equal(orbit.active[orbit.transient:].sum(axis=0), [1, 1, 0, 0])
    bound = crawling.relaxation_bound(TABLE_ONE, 1).bound
    assert orbit.average_reward == pytest.approx(bound, rel=1e-12)


def test_round_robin_in_the_stochastic_model_earns_its_deterministic_value():
    """Round robin's decisions ignore the arrivals and the reward is linear in them, so its
    expected average equals the deterministic one: an exact reference for the stochastic
    simulator."""
    rule = policies.RoundRobinRule(4, 2)
    exact = policies.periodic_orbit(TABLE_ONE, rule, 2).average_reward
    run = policies.simulate(TABLE_ONE, rule, 2, 2_000, stochastic=True, replications=6,
                            rng=np.random.default_rng(11))
    averages = run.rewards[4:].mean(axis=0)          # skip the first cycle (start at u)
    standard_error = averages.std(ddof=1) / np.sqrt(averages.size)
    assert abs(averages.mean() - exact) < 5 * standard_error + 1e-9   # 5 s.e.


def test_simulator_is_reproducible_and_validates():
    rule = policies.WhittleRule(TABLE_ONE)
    a = policies.simulate(TABLE_ONE, rule, 2, 50, stochastic=True, rng=5).rewards
    b = policies.simulate(TABLE_ONE, rule, 2, 50, stochastic=True, rng=5).rewards
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_periods"):
        policies.simulate(TABLE_ONE, rule, 2, 0)
    with pytest.raises(ValueError, match="M must be"):
        policies.simulate(TABLE_ONE, rule, 5, 10)
    with pytest.raises(ValueError, match="stride"):
        policies.RoundRobinRule(4, 0)
    with pytest.raises(ValueError, match="deterministic tie"):
        policies.periodic_orbit(TABLE_ONE, rule, 1, ties="random")


def test_whittle_rule_uses_the_crawling_costs():
    model = crawling.CrawlingModel(xi_mean=[1.0, 1.0], mu=[0.5, 0.5], arrival_rate=[1.0, 1.0],
                                   cost=[1.0, 4.0])
    x = model.u
    priority = policies.WhittleRule(model)(x, np.ones(2), 0)
    np.testing.assert_allclose(priority, crawling.whittle_index(x, model.u, model.alpha, model.cost))
    assert priority[0] == pytest.approx(4 * priority[1])


def test_round_robin_strides():
    blocks = policies.simulate(TABLE_ONE, policies.RoundRobinRule(4, 2), 2, 4, record=True).active
    np.testing.assert_array_equal(blocks, [[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
    sliding = policies.simulate(TABLE_ONE, policies.RoundRobinRule(4, 1), 2, 4, record=True).active
    np.testing.assert_array_equal(sliding, [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]])


@pytest.mark.parametrize("replications", [None, 3])
def test_replayed_utilities_give_the_run_that_draws_them(replications):
    # draw_new_utilities draws what the stochastic dynamics draws from the same generator, so
    # a run that replays them is the run that draws them, bit for bit, for every policy.
    model = crawling.table_one(250.0)
    U = crawling.draw_new_utilities(model, 300, replications, rng=np.random.default_rng(9))
    assert U.shape == (300,) + ((replications,) if replications else ()) + (4,)
    for rule in (policies.WhittleRule(model), policies.ExpectedValueRule(model),
                 policies.RoundRobinRule(4, 1)):
        for M in (1, 2):
            drawn = policies.simulate(model, rule, M, 300, stochastic=True,
                                      replications=replications, rng=np.random.default_rng(9))
            replayed = policies.simulate(model, rule, M, 300, stochastic=True,
                                         replications=replications, utilities=U)
            assert replayed.rewards.tobytes() == drawn.rewards.tobytes()
    with pytest.raises(ValueError, match="longer"):
        policies.simulate(model, rule, 1, 301, stochastic=True, replications=replications,
                          utilities=U)
    with pytest.raises(ValueError, match="stochastic"):
        policies.simulate(model, rule, 1, 10, replications=replications, utilities=U)
    with pytest.raises(ValueError, match="utilities must have shape"):
        policies.simulate(model, rule, 1, 10, stochastic=True, replications=5, utilities=U)


@pytest.mark.parametrize("replications", [None, 1, 3])
@pytest.mark.parametrize("stochastic", [True, False])
def test_simulate_many_is_simulate_for_each_slot(replications, stochastic):
    # lock-step slots on common arrivals: each slot earns, period by period and bit for bit,
    # what simulate earns with its rule alone from the same generator (the same draws and the
    # same element-wise operations; top_m per slot with the slot's budget)
    model = crawling.CrawlingModel(xi_mean=[1.0, 0.7, 0.2, 0.08, 0.5],
                                   mu=[0.7, 0.6, 0.5, 0.4, 0.9], arrival_rate=[25.0] * 5,
                                   cost=[1.0, 2.0, 1.0, 1.0, 0.5])
    rules = [policies.WhittleRule(model), policies.ExpectedValueRule(model),
             policies.RoundRobinRule(5, 1), policies.CurrentValueRule(),
             policies.RoundRobinRule(5, 2),
             policies.WhittleRule(model)]
    Ms = [1, 2, 1, 3, 2, 0]
    runs = policies.simulate_many(model, policies.SlotRules(rules), Ms, 120, slots=6,
                                  stochastic=stochastic, replications=replications, rng=4)
    assert len(runs) == 6
    for run, rule, M in zip(runs, rules, Ms):
        want = policies.simulate(model, rule, M, 120, stochastic=stochastic,
                                 replications=replications, rng=4)
        assert run.rewards.shape == want.rewards.shape
        assert run.rewards.tobytes() == want.rewards.tobytes()
        assert run.average_reward.tobytes() == want.average_reward.tobytes()
    assert np.all(runs[-1].rewards == 0)                  # M = 0 crawls nothing


def test_simulate_many_replays_utilities_and_validates():
    model = TABLE_ONE
    U = crawling.draw_new_utilities(model, 60, 2, rng=np.random.default_rng(3))
    rule = policies.SlotRules([policies.WhittleRule(model), policies.ExpectedValueRule(model)])
    replayed = policies.simulate_many(model, rule, 2, 60, slots=2, stochastic=True,
                                      replications=2, utilities=U)
    drawn = policies.simulate_many(model, rule, 2, 60, slots=2, stochastic=True,
                                   replications=2, rng=3)
    for a, b in zip(replayed, drawn):
        assert a.rewards.tobytes() == b.rewards.tobytes()
    with pytest.raises(ValueError, match="slots"):
        policies.simulate_many(model, rule, 1, 10, slots=0)
    with pytest.raises(ValueError, match="M must"):
        policies.simulate_many(model, rule, [1, 2, 1], 10, slots=2)
    with pytest.raises(ValueError, match="M must"):
        policies.simulate_many(model, rule, [1, 5], 10, slots=2)
    with pytest.raises(ValueError, match="n_periods"):
        policies.simulate_many(model, rule, 1, 0, slots=2)
    with pytest.raises(ValueError, match="shape"):
        policies.simulate_many(model, rule, 1, 10, slots=3)
    with pytest.raises(ValueError, match="longer"):
        policies.simulate_many(model, rule, 1, 61, slots=2, stochastic=True, replications=2,
                               utilities=U)
    with pytest.raises(ValueError, match="rules"):
        policies.SlotRules([])


def test_expected_value_rule_is_the_visited_state_of_its_age():
    # its constants are computed once; the priority keeps visited_states' bits
    # (whole ages from a table of them, others computed): visited_states' bits either way
    rule = policies.ExpectedValueRule(TABLE_ONE)
    for age in ([[1.0, 2.0, 3.0, 40.0], [5.0, 1.0, 7.0, 2.0]], [0.0, 1.0, 1023.0, 1024.0],
                [1.0, 2.5, 3.0, 4.0], [1.0, np.inf, 3.0, 4.0]):
        got = rule(None, np.array(age), 0)
        want = crawling.visited_states(TABLE_ONE.u, TABLE_ONE.alpha, np.array(age))
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [4, 300])
def test_top_m_with_a_budget_per_row_is_top_m_of_each_row(n):
    # simulate_many's selection: ranked once for short rows, by budget for long ones
    from whittle_lib import rmab
    rng = np.random.default_rng(n)
    priority = rng.integers(0, 5, size=(3, 6, n)).astype(float)      # many ties
    M = np.array([0, 1, 2, n // 2, n - 1, n])
    got = rmab._top_m_rows(priority, M)
    want = [[policies.top_m(priority[r, s], int(M[s])) for s in range(6)] for r in range(3)]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="nan"):
        rmab._top_m_rows(np.full((2, n), np.nan), np.array([1, 1]))
