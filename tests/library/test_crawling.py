"""The crawling model and its Whittle index (Avrachenkov & Borkar 2015).

References of three kinds: numbers printed in the paper (Sec. VII), independent computations
of the index (by its definition with root finding; by the finite-arm engine; by the max-form
derived in the notebook), and invariants (monotonicity, continuity, recursions).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whittle_lib import indices, mdp
from whittle_lib.models import crawling

TABLE_ONE = crawling.table_one()

# Parameters of one source: alpha away from 0 and 1 by a margin so that x_k is well separated
# from u* over the tested k (alpha**k above 1e-10).
alphas = st.floats(0.05, 0.95)
utilities = st.floats(0.1, 1000.0)


def test_utility_rate_matches_the_paper():
    # Sec. VII: "if one greedily crawls only source 1, he obtains the average reward 179.79",
    # which is u_1 (crawled every period, the state is u_1 each time). Printed to 2 decimals.
    assert TABLE_ONE.u[0] == pytest.approx(179.79, abs=0.005)


def test_model_validation_names_the_parameter():
    with pytest.raises(ValueError, match="mu must lie in"):
        crawling.CrawlingModel(xi_mean=[1.0], mu=[-0.1], arrival_rate=[1.0])
    with pytest.raises(ValueError, match="same length"):
        crawling.CrawlingModel(xi_mean=[1.0, 2.0], mu=[0.1, 0.2, 0.3], arrival_rate=[1.0])
    with pytest.raises(ValueError, match="period"):
        crawling.CrawlingModel(xi_mean=[1.0], mu=[0.1], arrival_rate=[1.0], period=0.0)


def test_model_is_frozen_and_read_only():
    with pytest.raises(ValueError):
        TABLE_ONE.mu[0] = 3.0
    assert TABLE_ONE.subset([0, 2]).n_sources == 2


@given(utilities, alphas)
def test_visited_states_follow_the_passive_dynamics(u, alpha):
    x = crawling.visited_states(u, alpha, np.arange(1, 40))
    assert x[0] == pytest.approx(u)
    # eq. (2): x_{k+1} = alpha x_k + u; relative 1e-12 is a few ulps of the closed form
    np.testing.assert_allclose(x[1:], alpha * x[:-1] + u, rtol=1e-12)
    assert np.all(x <= u / (1 - alpha) * (1 + 1e-15))   # x_k rounds to u* for large k


@given(utilities, alphas)
def test_periods_to_reach_is_exact_on_visited_states(u, alpha):
    k = np.arange(1, 60)
    k = k[alpha ** k > 1e-9]     # where eta is exact (crawling._LATTICE_SLACK)
    x = crawling.visited_states(u, alpha, k)
    np.testing.assert_array_equal(crawling.periods_to_reach(x, u, alpha), k)


def test_the_plain_ceiling_is_wrong_on_some_visited_state_of_table_one():
    """The trap the robust ceiling avoids: log_alpha(alpha**k) rounds above k."""
    k = np.arange(1, 31)
    x = crawling.visited_states(TABLE_ONE.u[:, None], TABLE_ONE.alpha[:, None], k)
    arg = (TABLE_ONE.u[:, None] - (1 - TABLE_ONE.alpha[:, None]) * x) / TABLE_ONE.u[:, None]
    naive = np.ceil(np.log(arg) / np.log(TABLE_ONE.alpha[:, None]))
    assert np.any(naive != k)
    np.testing.assert_array_equal(
        crawling.periods_to_reach(x, TABLE_ONE.u[:, None], TABLE_ONE.alpha[:, None]),
        np.broadcast_to(k, x.shape))


@pytest.mark.parametrize("source", range(4))
def test_index_matches_its_definition_on_visited_states(source):
    u, alpha = TABLE_ONE.u[source], TABLE_ONE.alpha[source]
    for k in range(1, 25):
        x = crawling.visited_states(u, alpha, k)
        by_definition = crawling.index_by_definition(k, u, alpha)
        # brentq to xtol 1e-12 u*; the closed form is exact to a few ulps
        assert crawling.whittle_index(x, u, alpha) == pytest.approx(by_definition,
                                                                    abs=1e-9 * u / (1 - alpha))


@pytest.mark.parametrize("source", range(4))
def test_index_matches_the_engine_on_the_finite_arm(source):
    u, alpha = TABLE_ONE.u[source], TABLE_ONE.alpha[source]
    n = 80
    result = indices.whittle_indices(crawling.visited_state_arm(u, alpha, n), discount=None)
    assert result.indexable
    closed = crawling.whittle_index(crawling.visited_states(u, alpha, np.arange(1, n + 1)), u,
                                    alpha)
    # The truncation changes only the indices of states whose optimal cycle reaches x_n;
    # below n - 20 they agree to the engine's accuracy (a few hundred ulps of u*).
    np.testing.assert_allclose(result.indices[: n - 20], closed[: n - 20],
                               atol=1e-9 * u / (1 - alpha))


@given(utilities, alphas, st.floats(0.0, 1.2))
def test_index_is_the_max_over_crawling_periods_below_u_star(u, alpha, fraction):
    """gamma(x) = max_j [x_j + j((1 - alpha) x - u)] for u <= x < u*: the upper envelope of
    the lines lam_j(x) at which the best period passes j (derived in the notebook)."""
    u_star = u / (1 - alpha)
    x = u + fraction * (u_star - u) if fraction < 1 else u_star * fraction
    j = np.arange(1, 2000)
    if x < u_star and alpha ** j[-1] < 1e-12 and (1 - alpha) * x - u < -1e-9 * u:
        envelope = np.max(crawling.visited_states(u, alpha, j) + j * ((1 - alpha) * x - u))
        # within 1e-6 (in log_alpha units) of a visited state eta is taken on the lattice
        # (crawling._LATTICE_SLACK); gamma is continuous there, off by at most ~1e-6 u |log alpha|
        assert crawling.whittle_index(x, u, alpha) == pytest.approx(envelope, rel=1e-9,
                                                                    abs=1e-5 * u)
    elif x >= u_star:
        # at x = u* exactly, rounding may leave the argument of the log a few ulps positive
        assert crawling.whittle_index(x, u, alpha) == pytest.approx(x, rel=1e-12)


@given(utilities, alphas)
def test_index_is_increasing_and_continuous_at_u_star(u, alpha):
    u_star = u / (1 - alpha)
    x = np.linspace(u, 1.5 * u_star, 2001)
    gamma = crawling.whittle_index(x, u, alpha)
    assert np.all(np.diff(gamma) >= -1e-9 * u_star)    # Lemma 4, up to rounding
    below = crawling.whittle_index(u_star * (1 - 1e-9), u, alpha)
    assert below == pytest.approx(u_star, rel=1e-6)     # gamma(x_k) -> u* as k -> inf


def test_index_divides_by_the_crawling_cost():
    u, alpha = 10.0, 0.5
    x = crawling.visited_states(u, alpha, [1, 2, 3])
    np.testing.assert_allclose(crawling.whittle_index(x, u, alpha, C=2.0),
                               crawling.whittle_index(x, u, alpha) / 2)


@given(st.integers(1, 30), st.floats(-100.0, 400.0))
def test_cycle_reward_matches_a_simulated_periodic_crawl(k, lam):
    u, alpha = TABLE_ONE.u[0], TABLE_ONE.alpha[0]
    x, total = u, 0.0
    for t in range(k * 5):
        if (t + 1) % k == 0:
            total, x = total + x, u
        else:
            total, x = total + lam, alpha * x + u
    assert crawling.cycle_reward(k, lam, u, alpha) == pytest.approx(total / (5 * k), rel=1e-12)
    assert crawling.cycle_reward(math.inf, lam, u, alpha) == lam


def test_relaxation_bound_values():
    # Whittle's relaxation of Table I; M = 1 is attained by crawling 1 and 2 in turn:
    # (x_2 of source 1 + x_2 of source 2) / 2
    u, alpha = TABLE_ONE.u, TABLE_ONE.alpha
    expected = (u[0] * (1 + alpha[0]) + u[1] * (1 + alpha[1])) / 2
    assert crawling.crawling_bound(TABLE_ONE, 1).bound == pytest.approx(expected, rel=1e-12)
    bounds = [crawling.crawling_bound(TABLE_ONE, M).bound for M in (1, 2, 3)]
    assert bounds == sorted(bounds)
    with pytest.raises(ValueError, match="M must lie"):
        crawling.crawling_bound(TABLE_ONE, 4)


@pytest.mark.parametrize("M", [1, 2])
def test_optimal_crawling_policy_iteration_agrees_with_relative_value_iteration(M):
    problem, ages, actions = crawling.crawling_mdp(TABLE_ONE, M, 6)
    pi = mdp.policy_iteration(problem)                # the average reward
    # tau = 0.5 makes the deterministic (periodic) chains aperiodic (Prop. 4 of the robots paper)
    rvi = mdp.relative_value_iteration(problem, tau=0.5, tol=1e-11, max_iter=200_000)
    assert rvi.gain == pytest.approx(pi.gain, rel=1e-8)
    optimum = crawling.optimal_crawling(TABLE_ONE, M, 6)
    assert optimum.average_reward == pytest.approx(pi.gain, rel=1e-12)
    assert optimum.average_reward <= crawling.crawling_bound(TABLE_ONE, M).bound + 1e-9


def test_optimal_crawling_is_non_decreasing_in_the_cap_and_validates():
    values = [crawling.optimal_crawling(TABLE_ONE, 2, cap).average_reward for cap in (3, 5, 8)]
    assert values == sorted(values)
    with pytest.raises(ValueError, match="M must be"):
        crawling.optimal_crawling(TABLE_ONE, 0, 5)
    with pytest.raises(ValueError, match="age_cap"):
        crawling.optimal_crawling(TABLE_ONE, 1, 0)


def test_sampled_utility_has_the_compound_poisson_mean_and_variance():
    model = crawling.CrawlingModel(xi_mean=[1.0, 0.2], mu=[0.7, 0.21], arrival_rate=[5.0, 40.0])
    draws = crawling.sample_new_utility(model, 20_000, rng=np.random.default_rng(7))
    # mean u (eq. 1); variance Lambda E[xi^2] (1 - alpha^2) / (2 mu), E[xi^2] = 2 xi_mean^2
    variance = (model.arrival_rate * 2 * model.xi_mean ** 2 * -np.expm1(-2 * model.mu)
                / (2 * model.mu))
    standard_error = np.sqrt(variance / draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - model.u) < 5 * standard_error)   # 5 sigma
    np.testing.assert_allclose(draws.var(axis=0), variance, rtol=0.1)   # 20,000 draws: ~2% s.e.
    deterministic = crawling.sample_new_utility(model, 20_000, rng=1, base_law="deterministic")
    assert np.all(deterministic.var(axis=0) < variance)
    with pytest.raises(ValueError, match="base_law"):
        crawling.sample_new_utility(model, rng=1, base_law="gamma")


def test_steps():
    u, alpha = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    x = np.array([1.5, 2.0])
    crawl = np.array([True, False])
    np.testing.assert_allclose(crawling.deterministic_step(x, crawl, u, alpha), [1.0, 2.5])
    np.testing.assert_allclose(crawling.stochastic_step(x, crawl, np.array([3.0, 4.0]), alpha),
                               [3.0, 4.5])


# Table I with Lambda = 250 (notebook 03's setting) for the stochastic model's index
STOCHASTIC = crawling.table_one(250)


def test_renewal_index_with_deterministic_utilities_is_the_closed_form():
    # U = u: the renewal index at the visited states is the deterministic index gamma*
    # (Theorem 1 of the 2015 paper); thresholds just below x_k crawl at x_k
    i = 0
    u, alpha = STOCHASTIC.u[i], STOCHASTIC.alpha[i]
    xs = crawling.visited_states(u, alpha, np.arange(1, 9)) * (1 - 1e-9)
    got = crawling._renewal_index(np.full(4, u), float(alpha), xs, np.random.default_rng(0), 4, 80,
                           40_000)
    want = crawling.whittle_index(xs / (1 - 1e-9), u, alpha)
    # the subsidy grid has step 1.5 max R / 40000 ~ 0.014: the index is found to one step
    step = 1.5 * got.cycle_reward.max() / 39_999
    np.testing.assert_allclose(got.index[:-1], want[:-1], atol=step + 1e-9)


def test_stochastic_index_validates_input():
    with pytest.raises(ValueError, match="increasing"):
        crawling.stochastic_whittle_index(STOCHASTIC, 0, [2.0, 1.0], rng=0)
    with pytest.raises(ValueError, match="source"):
        crawling.stochastic_whittle_index(STOCHASTIC, 7, [1.0, 2.0], rng=0)


@pytest.mark.parametrize("base_law", ["exponential", "deterministic", "lognormal", "lomax"])
def test_new_utilities_do_not_depend_on_the_block_size(base_law, monkeypatch):
    # sample_new_utility makes and sums the contents a block of cells at a time; blocks
    # smaller than one cell (7 contents), a few cells, and all at once give the same bits
    # and leave the generator in the same state
    model = crawling.table_one(25.0)
    draws = []
    for block in (7, 300, 1 << 40):
        monkeypatch.setattr(crawling, "_SAMPLE_BLOCK", block)
        rng = np.random.default_rng(12)
        draws.append((crawling.sample_new_utility(model, 50, rng=rng, base_law=base_law).tobytes(),
                      rng.random()))
    assert draws[0] == draws[1] == draws[2]


# -- misuses: each public function names the parameter and the value (issue 32) ----------------

_U, _ALPHA = TABLE_ONE.u, TABLE_ONE.alpha


@pytest.mark.parametrize("call, error, message", [
    # the example: alpha = 1.2, u = -1 and x = nan all returned an answer
    (lambda: crawling.whittle_index(1.0, 1.0, 1.2), ValueError,
     r"alpha must lie in \(0, 1\), got 1.2"),
    (lambda: crawling.whittle_index(1.0, -1.0, 0.5), ValueError,
     r"u must lie in \(0, inf\), got -1.0"),
    (lambda: crawling.whittle_index(np.nan, 1.0, 0.5), ValueError, "x must lie in .* got nan"),
    (lambda: crawling.whittle_index(-1.0, 1.0, 0.5), ValueError, "x must lie in"),
    (lambda: crawling.whittle_index("x", 1.0, 0.5), TypeError, "x must be an array of numbers"),
    (lambda: crawling.whittle_index(1.0, 1.0, 0.5, C=0.0), ValueError, "C must lie in"),
    (lambda: crawling.whittle_index([1.0, 2.0, 3.0], [1.0, 2.0], 0.5), ValueError,
     "do not broadcast"),
    (lambda: crawling.whittle_index([True], 1.0, 0.5), TypeError, "x must hold numbers"),
    (lambda: crawling.periods_to_reach(1.0, 1.0, 0.0), ValueError, "alpha must lie in"),
    (lambda: crawling.visited_states(1.0, 0.5, -1), ValueError, "k must lie in"),
    (lambda: crawling.visited_states(None, 0.5, 1), TypeError, "u must be an array of numbers"),
    (lambda: crawling.cycle_reward(0, 1.0, 1.0, 0.5), ValueError, "k must lie in"),
    (lambda: crawling.cycle_reward(1.5, 1.0, 1.0, 0.5), ValueError, "whole numbers"),
    (lambda: crawling.cycle_reward(1, np.nan, 1.0, 0.5), ValueError, "lam must lie in"),
    (lambda: crawling.utility_rate("1", 0.7, 250.0), TypeError, "xi_mean must be an array"),
    (lambda: crawling.utility_rate(1.0, 0.0, 250.0), ValueError, "mu must lie in"),
    (lambda: crawling.utility_rate(1.0, 0.7, 250.0, period=[1.0, 2.0]), ValueError,
     "period must have 0 dimension"),
    (lambda: crawling.table_one(-25.0), ValueError, "arrival_rate must lie in"),
    (lambda: crawling.table_one("250"), TypeError, "arrival_rate must be a number"),
    (lambda: crawling.CrawlingModel([1.0, 1.0], [1.0, 1.0], [1.0, 1.0], cost=[1.0, 1.0, 1.0]),
     ValueError, "cost must be a number or hold one cost per source"),
    (lambda: crawling.CrawlingModel([1.0], [1.0], [1.0], period=0.0), ValueError,
     "period must lie in"),
    (lambda: crawling.index_by_definition(0, 1.0, 0.5), ValueError, "k must be an integer"),
    (lambda: crawling.index_by_definition(1.0, 1.0, 0.5), TypeError, "k must be an integer"),
    (lambda: crawling.index_by_definition(3, 1.0, 0.5, k_max=3), ValueError, "k_max must be"),
    (lambda: crawling.index_by_definition(1, 1.0, 1.2), ValueError, "alpha must lie in"),
    (lambda: crawling.visited_state_arm(1.0, 0.5, 1), ValueError, "n_states must be an integer"),
    (lambda: crawling.visited_state_arm(1.0, 0.5, 2.0), TypeError, "n_states must be an integer"),
    (lambda: crawling.visited_state_arm("1", 0.5, 3), TypeError, "u must be a number"),
    (lambda: crawling.crawling_bound("table one", 1), TypeError, "model must be a CrawlingModel"),
    (lambda: crawling.crawling_bound(TABLE_ONE, 0), ValueError, r"M must lie in \(0, 4\)"),
    (lambda: crawling.crawling_bound(TABLE_ONE, "1"), TypeError, "M must be a number"),
    (lambda: crawling.crawling_bound(TABLE_ONE, 1, k_max=0), ValueError, "k_max must be"),
    (lambda: crawling.crawling_bound(crawling.CrawlingModel([1.0, 1.0], [1.0, 1.0], [1.0, 1.0],
                                                            cost=[1.0, 2.0]), 1),
     ValueError, "unit crawling costs"),
    (lambda: crawling.crawling_mdp(TABLE_ONE, 1.5, 3), TypeError, "M must be an integer"),
    (lambda: crawling.crawling_mdp(TABLE_ONE, 4, 3), ValueError,
     r"M must be an integer in \[1, 3\]"),
    (lambda: crawling.crawling_mdp(TABLE_ONE, 1, 0), ValueError, "age_cap must hold positive"),
    (lambda: crawling.crawling_mdp(TABLE_ONE, 1, 2.5), TypeError, "age_cap must be an integer"),
    (lambda: crawling.crawling_mdp(TABLE_ONE, 1, [3, 3]), ValueError, "one cap per source"),
    (lambda: crawling.deterministic_step(_U, [1, 0, 1, 0], _U, _ALPHA), TypeError,
     "crawl must be a boolean array"),
    (lambda: crawling.stochastic_step(_U, np.ones(4, bool), -_U, _ALPHA), ValueError,
     "new_utility must lie in"),
    (lambda: crawling.check_base_law(3), TypeError, "base_law must be one of"),
    (lambda: crawling.check_base_law("pareto"), ValueError, "base_law must be one of"),
    (lambda: crawling.check_base_law("lomax", "3"), TypeError, "base_shape of the lomax law"),
    (lambda: crawling.sample_new_utility(TABLE_ONE, 2.5, rng=1), TypeError, "size must be an"),
    (lambda: crawling.sample_new_utility(TABLE_ONE, 0, rng=1), ValueError, "size must be an"),
    (lambda: crawling.sample_new_utility(TABLE_ONE, 2, rng="a"), TypeError, "rng must be"),
    (lambda: crawling.sample_new_utility("model", 2, rng=1), TypeError, "model must be a"),
    (lambda: crawling.draw_new_utilities(TABLE_ONE, 0, rng=1), ValueError, "n_periods must be"),
    (lambda: crawling.CrawlingDynamics(TABLE_ONE, stochastic="yes"), TypeError,
     "stochastic must be True or False"),
    (lambda: crawling.CrawlingDynamics(TABLE_ONE, x0=-_U), ValueError, "x0 must lie in"),
    (lambda: crawling.CrawlingDynamics(TABLE_ONE, x0=[1.0, 2.0]), ValueError,
     "x0 must be a state or one state per source"),
    (lambda: crawling.CrawlingDynamics(TABLE_ONE, stochastic=True, utilities="U"), TypeError,
     "utilities must be an array"),
    (lambda: crawling.stochastic_whittle_index(TABLE_ONE, 4, [1.0, 2.0], rng=1), ValueError,
     r"source must be an integer in \[0, 3\]"),
    (lambda: crawling.stochastic_whittle_index(TABLE_ONE, 1.0, [1.0, 2.0], rng=1), TypeError,
     "source must be an integer"),
    (lambda: crawling.stochastic_whittle_index(TABLE_ONE, 0, [2.0, 1.0], rng=1), ValueError,
     "increasing"),
    (lambda: crawling.stochastic_whittle_index(TABLE_ONE, 0, [1.0, 2.0], rng=1, n_subsidies=1),
     ValueError, "n_subsidies must be"),
    (lambda: crawling.ClosedFormIndex([1.0, 2.0], [0.5, 1.0]), ValueError, "alpha must lie in"),
    (lambda: crawling.ClosedFormIndex.of(TABLE_ONE)(np.ones(3)), ValueError,
     r"x must have shape \(..., 4\)"),
    (lambda: crawling.ClosedFormIndex.of("model"), TypeError, "model must be a CrawlingModel"),
])
def test_crawling_functions_name_a_misuse(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_closed_form_index_is_whittle_index():
    # the per-source constants once (portably): the same bits as whittle_index in portable
    # mode, and within an ulp or two of it in native mode
    from whittle_lib import arithmetic
    index = crawling.ClosedFormIndex.of(TABLE_ONE)
    x = crawling.sample_new_utility(TABLE_ONE, 50, rng=3)
    with arithmetic.portable():
        assert index(x).tobytes() == crawling.whittle_index(x, _U, _ALPHA).tobytes()
    np.testing.assert_allclose(index(x), crawling.whittle_index(x, _U, _ALPHA), rtol=1e-13)
    assert index.n_sources == 4 and all(c.shape == (4,) for c in index.constants)


def test_a_model_is_the_same_model_in_both_arithmetic_modes():
    # its constants are computed portably whatever the mode
    from whittle_lib import arithmetic
    with arithmetic.portable(False):
        native = crawling.table_one()
    with arithmetic.portable():
        portable = crawling.table_one()
    for name in ("alpha", "u", "u_star"):
        assert getattr(native, name).tobytes() == getattr(portable, name).tobytes()
