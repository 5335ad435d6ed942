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
    np.testing.assert_array_equal(policies.top_m([2.0, 1.0, 2.0, 2.0], 2),
                                  [True, False, True, False])
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
    run = policies.simulate_crawling(TABLE_ONE, rule, M, 400, record=True)
    np.testing.assert_allclose(run.rewards, _reference_run(TABLE_ONE, rule, M, 400), rtol=1e-12)
    assert np.all(run.active.sum(axis=1) == M)
    orbit = policies.crawling_orbit(TABLE_ONE, rule, M)
    np.testing.assert_allclose(run.rewards[: orbit.rewards.size], orbit.rewards, rtol=1e-12)
    # the long-run average is the cycle mean; the time average over whole cycles equals it
    start = orbit.transient
    whole = start + ((400 - start) // orbit.period) * orbit.period
    assert run.rewards[start:whole].mean() == pytest.approx(orbit.average_reward, rel=1e-12)


def test_index_policy_on_table_one_attains_the_relaxation_bound_for_m_1():
    # Sec. VII: with M = 1 the index policy crawls sources 1 and 2 alternately
    orbit = policies.crawling_orbit(TABLE_ONE, policies.WhittleRule(TABLE_ONE), 1)
    assert orbit.period == 2
    np.testing.assert_array_equal(orbit.active[orbit.transient:].sum(axis=0), [1, 1, 0, 0])
    bound = crawling.crawling_bound(TABLE_ONE, 1).bound
    assert orbit.average_reward == pytest.approx(bound, rel=1e-12)


def test_round_robin_in_the_stochastic_model_earns_its_deterministic_value():
    """Round robin's decisions ignore the arrivals and the reward is linear in them, so its
    expected average equals the deterministic one: an exact reference for the stochastic
    simulator."""
    rule = policies.RoundRobinRule(4, 2)
    exact = policies.crawling_orbit(TABLE_ONE, rule, 2).average_reward
    run = policies.simulate_crawling(TABLE_ONE, rule, 2, 2_000, stochastic=True, replications=6,
                            rng=np.random.default_rng(11))
    averages = run.rewards[4:].mean(axis=0)          # skip the first cycle (start at u)
    standard_error = averages.std(ddof=1) / np.sqrt(averages.size)
    assert abs(averages.mean() - exact) < 5 * standard_error + 1e-9   # 5 s.e.


def test_simulator_is_reproducible_and_validates():
    rule = policies.WhittleRule(TABLE_ONE)
    a = policies.simulate_crawling(TABLE_ONE, rule, 2, 50, stochastic=True, rng=5).rewards
    b = policies.simulate_crawling(TABLE_ONE, rule, 2, 50, stochastic=True, rng=5).rewards
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_periods"):
        policies.simulate_crawling(TABLE_ONE, rule, 2, 0)
    with pytest.raises(ValueError, match="M must be"):
        policies.simulate_crawling(TABLE_ONE, rule, 5, 10)
    with pytest.raises(ValueError, match="stride"):
        policies.RoundRobinRule(4, 0)
    with pytest.raises(ValueError, match="deterministic tie"):
        policies.crawling_orbit(TABLE_ONE, rule, 1, ties="random")


def test_whittle_rule_uses_the_crawling_costs():
    model = crawling.CrawlingModel(xi_mean=[1.0, 1.0], mu=[0.5, 0.5], arrival_rate=[1.0, 1.0],
                                   cost=[1.0, 4.0])
    x = model.u
    priority = policies.WhittleRule(model)(x, np.ones(2), 0)
    np.testing.assert_allclose(priority,
                               crawling.whittle_index(x, model.u, model.alpha, model.cost))
    assert priority[0] == pytest.approx(4 * priority[1])


def test_round_robin_strides():
    blocks = policies.simulate_crawling(TABLE_ONE, policies.RoundRobinRule(4, 2), 2, 4,
                                        record=True).active
    np.testing.assert_array_equal(blocks, [[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
    sliding = policies.simulate_crawling(TABLE_ONE, policies.RoundRobinRule(4, 1), 2, 4,
                                         record=True).active
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
            drawn = policies.simulate_crawling(model, rule, M, 300, stochastic=True,
                                      replications=replications, rng=np.random.default_rng(9))
            replayed = policies.simulate_crawling(model, rule, M, 300, stochastic=True,
                                         replications=replications, utilities=U)
            assert replayed.rewards.tobytes() == drawn.rewards.tobytes()
    with pytest.raises(ValueError, match="longer"):
        policies.simulate_crawling(model, rule, 1, 301, stochastic=True, replications=replications,
                          utilities=U)
    with pytest.raises(ValueError, match="stochastic"):
        policies.simulate_crawling(model, rule, 1, 10, replications=replications, utilities=U)
    with pytest.raises(ValueError, match="utilities must have shape"):
        policies.simulate_crawling(model, rule, 1, 10, stochastic=True, replications=5, utilities=U)


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
    runs = policies.simulate_crawling_many(model, policies.SlotRules(rules), Ms, 120, slots=6,
                                  stochastic=stochastic, replications=replications, rng=4)
    assert len(runs) == 6
    for run, rule, M in zip(runs, rules, Ms):
        want = policies.simulate_crawling(model, rule, M, 120, stochastic=stochastic,
                                 replications=replications, rng=4)
        assert run.rewards.shape == want.rewards.shape
        assert run.rewards.tobytes() == want.rewards.tobytes()
        assert run.average_reward.tobytes() == want.average_reward.tobytes()
    assert np.all(runs[-1].rewards == 0)                  # M = 0 crawls nothing


def test_simulate_many_replays_utilities_and_validates():
    model = TABLE_ONE
    U = crawling.draw_new_utilities(model, 60, 2, rng=np.random.default_rng(3))
    rule = policies.SlotRules([policies.WhittleRule(model), policies.ExpectedValueRule(model)])
    replayed = policies.simulate_crawling_many(model, rule, 2, 60, slots=2, stochastic=True,
                                      replications=2, utilities=U)
    drawn = policies.simulate_crawling_many(model, rule, 2, 60, slots=2, stochastic=True,
                                   replications=2, rng=3)
    for a, b in zip(replayed, drawn):
        assert a.rewards.tobytes() == b.rewards.tobytes()
    with pytest.raises(ValueError, match="slots"):
        policies.simulate_crawling_many(model, rule, 1, 10, slots=0)
    with pytest.raises(ValueError, match="M must"):
        policies.simulate_crawling_many(model, rule, [1, 2, 1], 10, slots=2)
    with pytest.raises(ValueError, match="M must"):
        policies.simulate_crawling_many(model, rule, [1, 5], 10, slots=2)
    with pytest.raises(ValueError, match="n_periods"):
        policies.simulate_crawling_many(model, rule, 1, 0, slots=2)
    with pytest.raises(ValueError, match="shape"):
        policies.simulate_crawling_many(model, rule, 1, 10, slots=3)
    with pytest.raises(ValueError, match="longer"):
        policies.simulate_crawling_many(model, rule, 1, 61, slots=2, stochastic=True,
                                        replications=2,
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


# -- one loop: the single run keeps the bits of the core's simulator it used to go through ------

def _former_simulate(model, rule, M, n_periods, *, stochastic=False, replications=None,
                     ties="lowest", record=False, rng=None, x0=None):
    """The single run as it was before issue 32: the core's simulator on CrawlingDynamics."""
    from whittle_lib import rmab
    dynamics = crawling.CrawlingDynamics(model, x0, stochastic)
    return rmab.simulate(dynamics, lambda state, t: rule(state.x, state.age, t), M, n_periods,
                         replications=replications, activation="exactly", ties=ties,
                         record=record, rng=rng)


@pytest.mark.parametrize("replications", [None, 3])
@pytest.mark.parametrize("stochastic", [False, True])
@pytest.mark.parametrize("ties", ["lowest", "random"])
def test_the_single_run_keeps_the_bits_of_the_core_simulator(replications, stochastic, ties):
    # simulate_crawling is simulate_crawling_many's loop without a slot axis; every reward,
    # state and decision is what rmab.simulate gave on the crawling dynamics, generator
    # draws included (random ties first, then the arrivals)
    model = crawling.CrawlingModel(xi_mean=[1.0, 0.7, 0.2, 0.08, 0.5],
                                   mu=[0.7, 0.6, 0.5, 0.4, 0.9], arrival_rate=[25.0] * 5)
    for rule in (policies.WhittleRule(model), policies.ExpectedValueRule(model),
                 policies.RoundRobinRule(5, 2), policies.CurrentValueRule(),
                 lambda x, age, t: np.floor(np.asarray(x) / 10.0)):       # many ties
        for M in (0, 2, 5):
            got = policies.simulate_crawling(model, rule, M, 80, stochastic=stochastic,
                                             replications=replications, ties=ties, record=True,
                                             rng=np.random.default_rng(6))
            want = _former_simulate(model, rule, M, 80, stochastic=stochastic,
                                    replications=replications, ties=ties, record=True,
                                    rng=np.random.default_rng(6))
            for field in ("rewards", "states", "active"):
                a, b = getattr(got, field), getattr(want, field)
                assert a.shape == b.shape and a.tobytes() == b.tobytes(), (rule, M, field)


def test_the_crawling_simulators_crawl_exactly_m_sources():
    # the crawling model's constraint (eq. 5): M sources every period, whatever the sign of
    # the priorities (a priority of 0 is crawled when it is among the M highest)
    only_first = lambda x, age, t: np.array([1.0, 0.0, 0.0, 0.0])          # noqa: E731
    run = policies.simulate_crawling(TABLE_ONE, only_first, 2, 20, record=True)
    assert np.all(run.active.sum(axis=1) == 2)
    orbit = policies.crawling_orbit(TABLE_ONE, only_first, 2)
    assert np.all(orbit.active.sum(axis=1) == 2)
    # and a rule's priority of one row serves every replication
    run = policies.simulate_crawling(TABLE_ONE, only_first, 1, 20, stochastic=True,
                                     replications=3, record=True, rng=1)
    assert np.all(run.active[..., 0])


@pytest.mark.parametrize("call, error, message", [
    (lambda: policies.simulate_crawling("model", policies.CurrentValueRule(), 1, 10), TypeError,
     "model must be a CrawlingModel"),
    (lambda: policies.simulate_crawling(TABLE_ONE, [1.0, 2.0], 1, 10), TypeError,
     "rule must be a callable"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1.0, 10),
     TypeError, "M must be an integer"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 5, 10),
     ValueError, r"M must be an integer in \[0, N=4\], got 5"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 0),
     ValueError, "n_periods must be an integer"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 10,
                                        replications=0), ValueError, "replications must be"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 10,
                                        ties="highest"), ValueError, "ties must be one of"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 10,
                                        ties="random"), ValueError,
     "rng is required with ties='random'"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 10,
                                        record="yes"), TypeError, "record must be True or False"),
    (lambda: policies.simulate_crawling(TABLE_ONE, policies.CurrentValueRule(), 1, 10, rng=1.5),
     TypeError, "rng must be a numpy.random.Generator"),
    (lambda: policies.simulate_crawling(TABLE_ONE, lambda x, a, t: np.ones(3), 1, 10),
     ValueError, r"priorities of shape \(4,\)"),
    (lambda: policies.simulate_crawling(TABLE_ONE, lambda x, a, t: np.where(t == 3, np.nan, x), 1,
                                        10), ValueError, "source 0 in state .* is nan \\(period 3"),
    (lambda: policies.simulate_crawling_many(TABLE_ONE, policies.CurrentValueRule(), 1, 10,
                                             slots=1.5), TypeError, "slots must be an integer"),
    (lambda: policies.simulate_crawling_many(TABLE_ONE, policies.CurrentValueRule(), "12", 10,
                                             slots=2), TypeError, "M must be an integer"),
    (lambda: policies.crawling_orbit(TABLE_ONE, policies.CurrentValueRule(), 1, ties="random"),
     ValueError, "deterministic tie rule"),
    (lambda: policies.crawling_orbit(TABLE_ONE, policies.CurrentValueRule(), 1, max_periods=0),
     ValueError, "max_periods must be"),
    (lambda: policies.crawling_orbit(TABLE_ONE, "whittle", 1), TypeError,
     "rule must be a callable"),
    (lambda: policies.RoundRobinRule(4.0, 1), TypeError, "n_sources must be an integer"),
    (lambda: policies.RoundRobinRule(4, 0), ValueError, "stride must be an integer"),
    (lambda: policies.SlotRules("rules"), TypeError, "rules must be a list of callables"),
    (lambda: policies.SlotRules([policies.CurrentValueRule(), 1.0]), TypeError,
     r"rules\[1\] must be a callable"),
    (lambda: policies.WhittleRule("model"), TypeError, "model must be a CrawlingModel"),
    (lambda: policies.ExpectedValueRule(None), TypeError, "model must be a CrawlingModel"),
])
def test_crawling_policies_name_a_misuse(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_rule_built_outside_portable_mode_gives_the_portable_bits_inside():
    # rules compute their constants portably when built: only the work of each call follows
    # the mode (whittle_lib.arithmetic)
    from whittle_lib import arithmetic
    rule = policies.WhittleRule(TABLE_ONE)
    x = crawling.sample_new_utility(TABLE_ONE, 30, rng=2)
    with arithmetic.portable():
        inside = policies.WhittleRule(TABLE_ONE)(x, None, 0)
        assert rule(x, None, 0).tobytes() == inside.tobytes()
        expected = policies.ExpectedValueRule(TABLE_ONE)(None, np.array([1.0, 2.5, 3.0, 2e3]), 0)
    late = policies.ExpectedValueRule(TABLE_ONE)
    with arithmetic.portable():
        assert late(None, np.array([1.0, 2.5, 3.0, 2e3]), 0).tobytes() == expected.tobytes()
