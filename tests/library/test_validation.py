"""Every public function and model constructor refuses bad input with a named error (issue 25).

A property test: hypothesis draws NaN, infinities, wrong shapes, wrong types, empty inputs and
values outside each parameter's documented range, and each call must raise ``ValueError`` or
``TypeError`` (never another exception, never a result), quickly. Then the cases of the issue,
one by one, with the message they now give.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import whittle_lib as wl
from whittle_lib import arms, bounds, builders, indices, mdp, rmab, stats
from whittle_lib.models import crawling, robots
from whittle_lib.models.caching import content as caching_content, joint as caching_joint

NAN, INF = float("nan"), float("inf")
P2 = np.array([[0.5, 0.5], [0.2, 0.8]])
ARM = arms.RestlessArm(P2, P2[::-1], [0.0, 1.0], [1.0, 0.0])
MDP = mdp.FiniteMDP(transitions=[P2, P2[::-1]], rewards=[[0.0, 1.0], [1.0, 0.0]])
CONTENT = caching_content.CachingContent([0, 1], [0, 1], P2, P2, 1.0)

# --- strategies of bad values ------------------------------------------------------------------
NOT_A_NUMBER = st.sampled_from([NAN, INF, -INF, "0.5", None, [], [0.5, 0.5], object()])
BAD_DISCOUNT = st.one_of(NOT_A_NUMBER, st.floats(min_value=1.0, exclude_min=True,
                                                 allow_nan=False),
                         st.floats(max_value=0.0, allow_nan=False), st.just(True))
BAD_STRICT_DISCOUNT = st.one_of(BAD_DISCOUNT, st.just(1.0))     # discounted only
BAD_POSITIVE = st.one_of(NOT_A_NUMBER, st.floats(max_value=0.0, allow_nan=False))
BAD_PROBABILITY = st.one_of(NOT_A_NUMBER, st.floats(min_value=1.0, exclude_min=True,
                                                    allow_nan=False),
                            st.floats(max_value=0.0, exclude_max=True, allow_nan=False))
BAD_COUNT = st.one_of(st.sampled_from([NAN, INF, "3", None, 2.5, True]),
                      st.integers(max_value=-1))


@st.composite
def bad_matrices(draw, n=2):
    """Not an n x n stochastic matrix: a NaN, an infinity, a negative entry, a row off by more
    than rounding, a wrong shape, an empty array, strings, None."""
    kind = draw(st.sampled_from(["nan", "inf", "negative", "row", "shape", "empty", "type"]))
    P = np.full((n, n), 1.0 / n)
    i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
    if kind == "nan":
        P[i, j] = NAN
    elif kind == "inf":
        P[i, j] = INF
    elif kind == "negative":
        P[i, j] = -draw(st.floats(min_value=1e-6, max_value=1e6))
    elif kind == "row":
        # off by more than float64's tolerance (1e-9): a transcription error, not rounding
        P[i] *= 1.0 + draw(st.sampled_from([-1.0, 1.0])) * draw(
            st.floats(min_value=1e-6, max_value=10.0))
    elif kind == "shape":
        P = np.full(draw(st.sampled_from([(n, n + 1), (n,), (n, n, 3), ()])), 0.5)
    elif kind == "empty":
        P = np.zeros((0, 0))
    else:
        P = draw(st.sampled_from([None, "P", [["a", "b"], ["c", "d"]], {"P": 1}]))
    return P


@st.composite
def bad_vectors(draw, n=2):
    kind = draw(st.sampled_from(["nan", "inf", "shape", "type"]))
    if kind in ("nan", "inf"):
        v = np.zeros(n)
        v[draw(st.integers(0, n - 1))] = NAN if kind == "nan" else -INF
        return v
    if kind == "shape":
        return np.zeros(draw(st.sampled_from([(n + 1,), (n, 1), (0,)])))
    return draw(st.sampled_from([None, "R", ["a", "b"]]))


def _call(function):
    """Run ``function``; it must raise ValueError or TypeError whose message is not empty."""
    with pytest.raises((ValueError, TypeError)) as info:
        function()
    assert str(info.value)


SETTINGS = settings(max_examples=40, deadline=5000,      # "within seconds"
                    suppress_health_check=[HealthCheck.too_slow])


# --- arms, builders ---------------------------------------------------------------------------

@SETTINGS
@given(P=bad_matrices(), position=st.integers(0, 1))
def test_restless_arm_refuses_bad_matrices(P, position):
    matrices = [P2, P2]
    matrices[position] = P
    _call(lambda: arms.RestlessArm(matrices[0], matrices[1], [0, 1], [1, 0]))
    _call(lambda: arms.RestlessArm.rested(P, [0, 1]))
    _call(lambda: mdp.FiniteMDP(transitions=matrices, rewards=[[0, 1], [1, 0]]))
    _call(lambda: caching_content.CachingContent([0, 1], [0, 1], matrices[0], matrices[1], 1.0))


@SETTINGS
@given(R=bad_vectors(), position=st.integers(0, 1))
def test_restless_arm_refuses_bad_rewards(R, position):
    rewards = [[0.0, 1.0], [1.0, 0.0]]
    rewards[position] = R
    _call(lambda: arms.RestlessArm(P2, P2, rewards[0], rewards[1]))
    _call(lambda: mdp.FiniteMDP(transitions=[P2, P2], rewards=rewards))


@SETTINGS
@given(T=st.one_of(bad_matrices(), st.just(np.full((2, 3, 2), 0.5))))
def test_converters_refuse_bad_layouts(T):
    _call(lambda: arms.from_markovianbandit(T, np.zeros((2, 2))))
    _call(lambda: arms.from_mdptoolbox(T, np.zeros((2, 2))))
    _call(lambda: arms.from_quantecon(np.zeros((2, 2)), T))


@pytest.mark.parametrize("value", [None, [ARM], "arm", P2])
def test_to_converters_refuse_what_is_not_an_arm(value):
    for function in (arms.to_markovianbandit, arms.to_mdptoolbox, arms.to_quantecon):
        _call(lambda: function(value))


@SETTINGS
@given(n=BAD_COUNT, p=BAD_PROBABILITY, cost=st.one_of(NOT_A_NUMBER, st.floats(max_value=-1e-9)))
def test_builders_refuse_bad_parameters(n, p, cost):
    _call(lambda: builders.wear_repair_arm(n, wear=0.3))
    _call(lambda: builders.wear_repair_arm(4, wear=p))
    _call(lambda: builders.wear_repair_arm(4, wear=0.3, repair_cost=cost))
    _call(lambda: builders.birth_death_arm(n, up=(0.1, 0.1), down=(0.1, 0.1), R0=0, R1=0))
    _call(lambda: builders.birth_death_arm(4, up=(p, 0.1), down=(0.1, 0.1), R0=0, R1=0))
    _call(lambda: builders.random_arm(n, rng=0))


# --- indices, bounds --------------------------------------------------------------------------

@SETTINGS
@given(discount=BAD_DISCOUNT, strict=BAD_STRICT_DISCOUNT)
def test_index_functions_refuse_bad_discounts(discount, strict):
    _call(lambda: indices.gittins_indices(P2, [0.0, 1.0], discount=strict))   # None refused too
    # None is the average reward for the rest; 1.0 is refused ("pass None")
    discount = 1.0 if discount is None else discount
    _call(lambda: indices.whittle_indices(ARM, discount=discount))
    _call(lambda: indices.is_indexable(ARM, discount=discount))
    _call(lambda: indices.whittle_indices_bisection(ARM, discount=discount))
    _call(lambda: indices.is_indexable_many(P2[None], P2[None], [[0.0, 1.0]], [[1.0, 0.0]],
                                            discount=discount))
    _call(lambda: bounds.relaxation_bound([ARM, ARM], 1, discount=discount))


@pytest.mark.parametrize("arm", [None, [ARM], "arm", P2, MDP])
def test_index_functions_refuse_what_is_not_an_arm(arm):
    _call(lambda: indices.whittle_indices(arm, discount=0.9))
    _call(lambda: indices.is_indexable(arm, discount=0.9))
    _call(lambda: bounds.relaxation_bound([arm], 0))


@SETTINGS
@given(P=bad_matrices(), R=bad_vectors())
def test_gittins_indices_refuse_bad_arms(P, R):
    _call(lambda: indices.gittins_indices(P, [0.0, 1.0], discount=0.9))
    _call(lambda: indices.gittins_indices(P2, R, discount=0.9))


@SETTINGS
@given(M=st.one_of(BAD_COUNT, st.integers(min_value=3)),
       activation=st.one_of(st.text(max_size=8), st.none()), x0=st.one_of(
           st.just([0]), st.just([0, 2]), st.just([0.0, 1.0]), st.just([-1, 0]), st.just("0")))
def test_relaxation_bound_refuses_bad_arguments(M, activation, x0):
    _call(lambda: bounds.relaxation_bound([ARM, ARM], M))
    if activation not in ("at_most", "exactly"):
        _call(lambda: bounds.relaxation_bound([ARM, ARM], 1, activation=activation))
    _call(lambda: bounds.relaxation_bound([ARM, ARM], 1, discount=0.9, x0=x0))
    _call(lambda: bounds.relaxation_bound([], 0))


# --- mdp --------------------------------------------------------------------------------------

@SETTINGS
@given(P=bad_matrices(n=3))
def test_chain_functions_refuse_bad_matrices(P):
    _call(lambda: mdp.stationary_distribution(P))
    _call(lambda: mdp.stationary_distributions(P))
    _call(lambda: mdp.recurrent_classes(P))


@SETTINGS
@given(discount=BAD_STRICT_DISCOUNT, positive=BAD_POSITIVE, count=BAD_COUNT)
def test_solvers_refuse_bad_parameters(discount, positive, count):
    _call(lambda: mdp.value_iteration(MDP, discount=discount))
    _call(lambda: mdp.modified_policy_iteration(MDP, discount=discount))
    _call(lambda: mdp.value_iteration(MDP, discount=0.9, epsilon=positive))
    _call(lambda: mdp.relative_value_iteration(MDP, tol=positive))
    _call(lambda: mdp.backward_induction(MDP, horizon=count))
    if discount is not None:             # None is the average reward, 1.0 refused (issue 32)
        _call(lambda: mdp.policy_iteration(MDP, discount=discount))


@pytest.mark.parametrize("model", [None, "mdp", ARM, P2])
def test_solvers_refuse_what_is_not_an_mdp(model):
    for function in (mdp.policy_iteration, mdp.relative_value_iteration,
                     mdp.communicating_classes, mdp.is_communicating):
        _call(lambda: function(model))
    _call(lambda: mdp.value_iteration(model, discount=0.9))
    _call(lambda: mdp.evaluate_policy(model, [0, 0]))


# --- rmab -------------------------------------------------------------------------------------

BAD_RNG = st.sampled_from([1.5, "seed", True, -1, object(), [1.5], {"seed": 1}])
BAD_RUN_DISCOUNT = st.one_of(BAD_DISCOUNT, st.just(1.0)).filter(lambda d: d is not None)
BAD_ACTIVATION = st.one_of(st.text(max_size=8).filter(lambda a: a not in ("at_most", "exactly")),
                           st.sampled_from([None, 0, True, ["at_most"]]))
TABLES = [[0.0, 1.0], [0.0, 1.0]]


@SETTINGS
@given(M=st.one_of(BAD_COUNT, st.integers(min_value=3)), count=BAD_COUNT,
       discount=BAD_RUN_DISCOUNT, activation=BAD_ACTIVATION, rng=BAD_RNG)
def test_the_simulators_refuse_bad_arguments(M, count, discount, activation, rng):
    for run in (lambda **k: rmab.simulate([ARM, ARM], TABLES, **k),
                lambda **k: rmab.simulate_counts(ARM, [1, 1], [0.0, 1.0], **k)):
        _call(lambda: run(M=M, n_periods=3))
        _call(lambda: run(M=1, n_periods=count))
        _call(lambda: run(M=1, n_periods=3, warmup=count))
        if count is not None:                  # replications=None: one run, no replication axis
            _call(lambda: run(M=1, n_periods=3, replications=count))
        _call(lambda: run(M=1, n_periods=3, discount=discount))
        _call(lambda: run(M=1, n_periods=3, activation=activation))
        _call(lambda: run(M=1, n_periods=3, rng=rng))
    _call(lambda: rmab.simulate([ARM, ARM], TABLES, 1, 3, ties="random"))     # no rng
    _call(lambda: rmab.top_m([1.0, 2.0], M))
    _call(lambda: rmab.top_m([1.0, 2.0], 1, ties="random", rng=rng))
    _call(lambda: rmab.periodic_orbit(_Still(), lambda s, t: s, 1, time_period=count))
    _call(lambda: rmab.periodic_orbit(_Still(), lambda s, t: s, 1, max_periods=count))
    _call(lambda: rmab.periodic_orbit(_Still(), lambda s, t: s, M))
    _call(lambda: rmab.periodic_orbit(_Still(), lambda s, t: s, 1, activation=activation))


@SETTINGS
@given(priority=st.sampled_from([[NAN, 1.0], ["a", "b"], None, [[1.0], [1.0, 2.0]], 1.0]),
       threshold=st.sampled_from([NAN, "0", [0.0]]),
       table=st.sampled_from([[], [[0.0, 1.0]], ["a", "b"], None, object()]),
       counts=st.sampled_from([[1.0, 1.0], [1, -1], [1], [True, False], "11", None]),
       x0=st.sampled_from([[0], [0, 2], [0.0, 1.0], [-1, 0], "0", [True, False]]))
def test_selections_tables_and_states_are_checked(priority, threshold, table, counts, x0):
    _call(lambda: rmab.top_m(priority, 1))
    _call(lambda: rmab.top_m([1.0, 2.0], 1, threshold=threshold))
    _call(lambda: rmab.IndexRule([table, [0.0, 1.0]]))
    _call(lambda: rmab.simulate([ARM, ARM], [table, [0.0, 1.0]], 1, 3))
    _call(lambda: rmab.simulate_counts(ARM, counts, [0.0, 1.0], 1, 3))
    _call(lambda: rmab.simulate_counts(ARM, [1, 1], table, 1, 3))
    _call(lambda: rmab.FiniteArms([ARM, ARM], x0))


class _Still:
    """Deterministic dynamics of two arms that never move."""

    n_arms = 2

    def initial(self, replications):
        return np.array([0.0, 1.0])

    def step(self, states, active, rng):
        return states, 0.0

    def observe(self, states):
        return np.array(states, copy=True)


# --- stats ------------------------------------------------------------------------------------

@SETTINGS
@given(values=st.one_of(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=1),
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1).map(
        lambda v: [*v, NAN]),
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1).map(
        lambda v: [*v, -INF]),
    st.sampled_from(["ab", None, [["a"], ["b"]]])),
    level=st.one_of(NOT_A_NUMBER, st.floats(min_value=1.0, allow_nan=False),
                    st.floats(max_value=0.0, allow_nan=False)))
def test_intervals_refuse_bad_input(values, level):
    _call(lambda: stats.mean_interval(values))
    _call(lambda: stats.mean_interval([1.0, 2.0], level=level))


@SETTINGS
@given(trials=st.one_of(BAD_COUNT, st.just(0)), z=BAD_POSITIVE)
def test_share_interval_refuses_bad_input(trials, z):
    _call(lambda: stats.share_interval(1, trials))
    _call(lambda: stats.share_interval(1, 3, z=z))
    _call(lambda: stats.share_interval(4, 3))


# --- models' constructors ---------------------------------------------------------------------

@SETTINGS
@given(bad=BAD_POSITIVE, discount=BAD_STRICT_DISCOUNT, count=BAD_COUNT)
def test_model_constructors_refuse_values_outside_their_domain(bad, discount, count):
    _call(lambda: crawling.CrawlingModel(xi_mean=[bad], mu=[1.0], arrival_rate=[1.0]))
    _call(lambda: crawling.CrawlingModel(xi_mean=[1.0], mu=[bad], arrival_rate=[1.0]))
    _call(lambda: crawling.CrawlingModel(xi_mean=[1.0], mu=[1.0], arrival_rate=[1.0],
                                         period=bad))
    _call(lambda: caching_joint.CachingProblem([CONTENT], 1, discount))
    _call(lambda: caching_joint.CachingProblem([CONTENT], count, 0.9))
    _call(lambda: robots.robots_cost(0.5, bad, 3))
    _call(lambda: robots.robots_mdp(bad, 1.0, 1.0, 3, 2))
    _call(lambda: robots.robots_mdp(1.0, 1.0, 1.0, count, 2))


@pytest.mark.parametrize("kwargs", [dict(fetch_cost=NAN), dict(fetch_cost=-1.0),
                                    dict(holding_cost=INF), dict(missing_cost=[0.0, -1.0]),
                                    dict(levels=[1.0, 0.0]), dict(levels=[0.0, NAN])])
def test_caching_content_refuses_values_outside_its_domain(kwargs):
    base = dict(levels=[0, 1], missing_cost=[0, 1], P0=P2, P1=P2, fetch_cost=1.0)
    _call(lambda: caching_content.CachingContent(**{**base, **kwargs}))


def test_an_empty_crawling_model_is_refused():
    with pytest.raises(ValueError, match="at least one source"):
        crawling.CrawlingModel(xi_mean=[], mu=[], arrival_rate=[])


# --- the cases, with their messages ---------------------------------------------------

def test_float32_matrices_are_accepted_within_their_precision_and_renormalised():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(20), size=20).astype(np.float32)
    assert np.abs(P.astype(float).sum(axis=1) - 1).max() > 1e-9      # what used to fail
    arm = arms.RestlessArm(P, P, np.zeros(20, np.float32), np.ones(20, np.float32))
    # renormalised in float64: rows sum to one within float64 rounding
    assert np.abs(arm.P0.sum(axis=1) - 1).max() < 1e-15 * 20
    assert arm.P0.dtype == np.float64
    model = mdp.FiniteMDP(transitions=[P, P], rewards=np.zeros((20, 2)))
    assert np.abs(model.transitions[0].sum(axis=1) - 1).max() < 1e-15 * 20
    pi = mdp.stationary_distribution(P)
    assert math.isclose(pi.sum(), 1.0, rel_tol=1e-12)
    # a float64 matrix off by the same amount is an error that says how to renormalise
    with pytest.raises(ValueError, match=r"renormalise them: P0 / P0.sum\(axis=1, keepdims"):
        arms.RestlessArm(P.astype(float), P.astype(float), np.zeros(20), np.zeros(20))
    # and a float32 row off by far more than float32 rounding is still an error
    bad = P.copy()
    bad[3] *= np.float32(1.01)
    with pytest.raises(ValueError, match="P0 row of state 3 sums to"):
        arms.RestlessArm(bad, P, np.zeros(20), np.zeros(20))


@pytest.mark.parametrize("P, match", [
    ([[0.5, 0.7], [0.2, 0.8]], "P row of state 0 sums to 1.2, not 1"),
    ([[NAN, 0.5], [0.2, 0.8]], "P has a non-finite entry in the row of state 0: nan"),
    ([[1.5, -0.5], [0.2, 0.8]], "P has a negative probability in the row of state 0: -0.5"),
    (np.zeros((0, 0)), r"P must have at least one state, got shape \(0, 0\)"),
    ([[0.5, 0.5]], r"P must be a square matrix, got shape \(1, 2\)"),
])
def test_stationary_distributions_of_bad_matrices_are_errors(P, match):
    for function in (mdp.stationary_distribution, mdp.stationary_distributions,
                     mdp.recurrent_classes):
        with pytest.raises(ValueError, match=match):
            function(P)


def test_the_messages_name_the_parameter_and_the_value():
    with pytest.raises(TypeError, match="P0 must be an array of numbers, got str"):
        arms.RestlessArm("ab", P2, [0, 1], [0, 1])
    with pytest.raises(TypeError, match="discount must be a number in .* got str 'a'"):
        wl.whittle_indices(ARM, discount="a")
    with pytest.raises(TypeError, match="mdp must be a FiniteMDP, got str"):
        wl.policy_iteration("m")
    with pytest.raises(TypeError, match="arm must be a RestlessArm, got list"):
        arms.to_markovianbandit([ARM])
    with pytest.raises(ValueError, match="values must be finite, got nan at position 1"):
        wl.mean_interval([1.0, NAN, 2.0])
    with pytest.raises(ValueError, match=r"z must lie in \(0, inf\), got nan"):
        stats.share_interval(1, 3, z=NAN)
    with pytest.raises(ValueError, match="discount must lie in .* got 1.5"):
        caching_joint.CachingProblem([CONTENT], 1, 1.5)
    with pytest.raises(ValueError, match=r"xi_mean must lie in \(0, inf\), got .*-1.0"):
        crawling.CrawlingModel(xi_mean=[-1.0], mu=[1.0], arrival_rate=[1.0])
