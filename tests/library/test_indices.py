"""Tests of whittle_lib.indices: the exact engine against three kinds of reference.

1. An independent algorithm: bisection on the subsidy, each probe solved exactly by policy
   iteration (``whittle_indices_bisection``), and for rested arms the Gittins index computed by
   the largest-remaining-index algorithm.
2. Published values: the example of the markovianbandit-pkg README.
3. Invariants derived below (relabelling, reward shifts, rested arms).

Cross-checks against markovianbandit-pkg itself are in ``test_indices_peer.py``.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whittle_lib.arms import RestlessArm
from whittle_lib.indices import (
    IndexStatus,
    WhittleIndexResult,
    is_indexable,
    is_indexable_many,
    whittle_indices,
    whittle_indices_bisection,
)


def dense_arm(rng, n):
    """All transition probabilities positive (every policy unichain), rewards in [0, 1)."""
    P = rng.exponential(size=(2, n, n))
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((2, n))
    return RestlessArm(P0=P[0], P1=P[1], R0=R[0], R1=R[1])


def sparse_arm(rng, n):
    """About half the transitions are zero: structured arms, often non-indexable."""
    P = rng.exponential(size=(2, n, n)) * (rng.random((2, n, n)) < 0.5)
    P[:, np.arange(n), rng.integers(0, n, size=n)] += 0.01
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((2, n))
    return RestlessArm(P0=P[0], P1=P[1], R0=R[0], R1=R[1])


def _beta(discount):
    """The discount as whittle_lib.mdp's dense solver takes it (1.0: the average reward)."""
    return 1.0 if discount is None else discount


def quiet_indices(arm, discount):
    """whittle_indices with its non-indexability warning silenced (callers check status)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return whittle_indices(arm, discount=discount)


# --- 1. against the bisection reference ----------------------------------------------------

# The bisection stops at an interval of 1e-10 and returns its midpoint, so it is within
# 5e-11 of the exact index; the fast engine is exact up to rounding (~1e-13 here). 1e-8 is the
# issue's tolerance and leaves a wide margin for both.
BISECTION_TOL = 1e-8


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99, None])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_matches_bisection_on_random_dense_arms(seed, discount):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 41))  # 2 to 40 states
    arm = dense_arm(rng, n)
    result = whittle_indices(arm, discount=discount)
    assert result.status is IndexStatus.INDEXABLE  # these seeds give indexable arms
    reference = whittle_indices_bisection(arm, discount=discount, tol=1e-10)
    np.testing.assert_allclose(result.indices, reference, rtol=0, atol=BISECTION_TOL)
    # the passive order lists every state once, in non-decreasing order of index
    assert sorted(result.passive_order.tolist()) == list(range(n))
    assert np.all(np.diff(result.indices[result.passive_order]) >= 0)


@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15, 16])
def test_matches_bisection_on_random_sparse_indexable_arms(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 41))
    arm = sparse_arm(rng, n)
    result = whittle_indices(arm, discount=0.9)
    assert result.indexable
    reference = whittle_indices_bisection(arm, discount=0.9, tol=1e-10)
    np.testing.assert_allclose(result.indices, reference, rtol=0, atol=BISECTION_TOL)


# --- 2. published values ---------------------------------------------------------------------

def markovianbandit_readme_arm(seed):
    """The arm of ``markovianbandit.random_restless(dim=4, seed=seed)``, rebuilt locally.

    markovianbandit-pkg 0.4 draws it with the legacy global generator: ``np.random.seed(seed)``,
    then ``exponential(size=(dim, 2, dim))`` normalised over the last axis (axis 1 is the
    action), then ``rand(dim, 2)`` for the rewards (column 0 passive). A local RandomState
    with the same seed gives the same stream without touching the global state.
    """
    rs = np.random.RandomState(seed)
    T = rs.exponential(size=(4, 2, 4))
    T /= T.sum(axis=-1, keepdims=True)
    R = rs.rand(4, 2)
    return RestlessArm(P0=T[:, 0], P1=T[:, 1], R0=R[:, 0], R1=R[:, 1])


def test_published_example_markovianbandit_readme_indexable():
    # markovianbandit-pkg README (github.com/markovianbandit/markovianbandit-pkg), "Example":
    # random_restless(dim=4, seed=42).whittle_indices() "should print (True, array([
    # 0.87536099, -0.08765819, -0.15279431, -0.51905682]))" (default discount=1: average
    # reward). Both libraries pay the subsidy as a charge for activity, which differs from our
    # subsidy for passivity by a constant per period and so gives the same indices.
    arm = markovianbandit_readme_arm(42)
    result = whittle_indices(arm, discount=None)
    assert result.indexable
    published = [0.87536099, -0.08765819, -0.15279431, -0.51905682]
    # printed with 8 decimals: half a unit of the last digit
    np.testing.assert_allclose(result.indices, published, rtol=0, atol=5e-9)


def test_published_example_markovianbandit_readme_not_indexable():
    # same README: random_restless(4, seed=2791).is_indexable() "should print False"
    arm = markovianbandit_readme_arm(2791)
    with pytest.warns(UserWarning, match="not indexable"):
        result = whittle_indices(arm, discount=None)
    assert result.status is IndexStatus.NOT_INDEXABLE and not result.indexable
    assert_violation_is_real(arm, result)


def assert_violation_is_real(arm, result):
    """Check the certificate of non-indexability by exact policy iteration.

    The violating state joined the passive set at its index and leaves it at
    ``violation_subsidy``: it must be passive-optimal between the two and active-optimal just
    after, so the passive set is not monotone.
    """
    from whittle_lib.indices import _optimal_advantage

    x, leave = result.violating_state, result.violation_subsidy
    enter = result.indices[x]
    assert np.isfinite(enter) and enter < leave
    start = np.ones(arm.n_states, dtype=bool)
    beta = _beta(result.discount)
    adv_inside, _ = _optimal_advantage(arm, beta, 0.5 * (enter + leave), start, 1e-13)
    eps = 1e-6 * (1 + abs(leave))  # far above rounding, far below the gap to the next event
    adv_after, _ = _optimal_advantage(arm, beta, leave + eps, start, 1e-13)
    assert adv_inside[x] <= 0 < adv_after[x]


# --- ties, infinite indices, multichain ------------------------------------------------------

def test_ties_between_identical_states():
    # states 0 and 3 have the same rows and rewards, so the same Q-differences at every
    # subsidy, hence the same index; the engine takes them one after the other at one mu.
    rng = np.random.default_rng(20)
    arm = dense_arm(rng, 6)
    P0, P1 = arm.P0.copy(), arm.P1.copy()
    R0, R1 = arm.R0.copy(), arm.R1.copy()
    for M in (P0, P1, R0, R1):
        M[3] = M[0]
    tied = RestlessArm(P0, P1, R0, R1)
    for discount in (0.9, None):
        result = whittle_indices(tied, discount=discount)
        assert result.indexable
        # the two are computed along different paths: a few ulps apart at most
        assert result.indices[0] == pytest.approx(result.indices[3], abs=1e-12)
        reference = whittle_indices_bisection(tied, discount=discount, tol=1e-10)
        np.testing.assert_allclose(result.indices, reference, rtol=0, atol=BISECTION_TOL)


def test_all_states_tied():
    # P0 = P1: the action does not move the state, so the advantage is R1 - R0 - lam in every
    # state and the index is R1 - R0; with R1 - R0 constant every state ties at that value.
    rng = np.random.default_rng(21)
    P = dense_arm(rng, 5).P0
    arm = RestlessArm(P0=P, P1=P, R0=np.arange(5.0), R1=np.arange(5.0) + 0.25)
    for discount in (0.5, None):
        result = whittle_indices(arm, discount=discount)
        assert result.indexable
        np.testing.assert_allclose(result.indices, 0.25, rtol=0, atol=1e-12)  # rounding only


def absorbing_pair(r1_s=0.5, r0_t=1.0, r1_t=0.2):
    """State 0 (``s``): passive stays, active moves to 1. State 1 (``t``): absorbing.

    ``R0 = [0, r0_t]``, ``R1 = [r1_s, r1_t]``.
    """
    return RestlessArm(P0=[[1.0, 0.0], [0.0, 1.0]], P1=[[0.0, 1.0], [0.0, 1.0]],
                       R0=[0.0, r0_t], R1=[r1_s, r1_t])


def test_infinite_index_average_reward():
    # Derivation. t is absorbing under both actions, so its advantage is R1(t) - R0(t) - lam
    # and W(t) = 0.2 - 1 = -0.8. For lam > -0.8, t is passive and has gain lam + 1; in s,
    # staying passive forever earns lam + 0 per period, moving to t earns lam + 1: active wins
    # whatever lam. For lam < -0.8, the gain at t is R1(t) = 0.2 > lam, active wins again.
    # So s is active at every subsidy: W(s) = +inf, and the arm is indexable.
    result = whittle_indices(absorbing_pair(), discount=None)
    assert result.status is IndexStatus.INDEXABLE
    assert result.indices[0] == np.inf
    assert result.indices[1] == pytest.approx(-0.8, abs=1e-14)  # one subtraction
    assert result.passive_order.tolist() == [1, 0]


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99])
def test_discounted_counterpart_of_infinite_index_is_finite(discount):
    # Same arm, discounted. For lam > W(t) = -0.8, V(t) = (lam + 1) / (1 - b). In s, active
    # gives R1(s) + b V(t), passive forever gives (lam + R0(s)) / (1 - b). Equal when
    # lam = R1(s) + (b R0(t) - R0(s)) / (1 - b) = 0.5 + b / (1 - b), which tends to +inf as
    # b -> 1, the average-reward answer.
    result = whittle_indices(absorbing_pair(), discount=discount)
    assert result.indexable
    expected = 0.5 + discount / (1 - discount)
    assert result.indices[0] == pytest.approx(expected, rel=1e-12)  # a few ulps of 1/(1-b)
    assert result.indices[1] == pytest.approx(-0.8, abs=1e-14)


def test_multichain_all_active_policy_is_reported_not_raised():
    # P1 = I: under the all-active policy every state is its own recurrent class, the gain
    # depends on the initial state and the unichain equations are singular.
    arm = RestlessArm(P0=np.full((3, 3), 1 / 3), P1=np.eye(3), R0=np.zeros(3), R1=[1, 2, 3])
    with pytest.warns(UserWarning, match="multichain"):
        result = whittle_indices(arm, discount=None)
    assert result.status is IndexStatus.MULTICHAIN and not result.indexable
    assert np.isnan(result.indices).all()
    # discounted, the same arm is fine
    assert whittle_indices(arm, discount=0.9).indexable


def test_multichain_on_the_way_keeps_the_indices_computed_before():
    # A rested arm (P0 = I) in average reward: with two passive (frozen) states the policy
    # has two recurrent classes; the first two indices come from unichain policies.
    rng = np.random.default_rng(22)
    arm = RestlessArm.rested(dense_arm(rng, 4).P1, rng.random(4))
    with pytest.warns(UserWarning, match="multichain"):
        result = whittle_indices(arm, discount=None)
    assert result.status is IndexStatus.MULTICHAIN
    assert np.isfinite(result.indices).sum() == 2
    assert len(result.passive_order) == 2


# --- 3. invariants -------------------------------------------------------------------------

# Invariants compare two runs of the same exact algorithm on transformed inputs; they differ
# by rounding only, a few hundred ulps of the index magnitude (indices reach 1/(1 - 0.99)).
INVARIANT_RTOL = 1e-9


def assert_same_indices(a, b):
    assert a.status is b.status
    np.testing.assert_allclose(a.indices, b.indices, rtol=INVARIANT_RTOL,
                               atol=INVARIANT_RTOL)


arm_cases = st.tuples(st.integers(0, 2**32 - 1), st.integers(2, 12),
                      st.sampled_from([0.5, 0.9, 0.99, None]))


@settings(max_examples=40, deadline=None)
@given(case=arm_cases, data=st.data())
def test_relabelling_states_permutes_the_indices(case, data):
    seed, n, discount = case
    arm = dense_arm(np.random.default_rng(seed), n)
    perm = np.array(data.draw(st.permutations(range(n))))
    # state i of the new arm is state perm[i] of the old one
    relabelled = RestlessArm(arm.P0[np.ix_(perm, perm)], arm.P1[np.ix_(perm, perm)],
                             arm.R0[perm], arm.R1[perm])
    a, b = quiet_indices(arm, discount), quiet_indices(relabelled, discount)
    assert a.status is b.status
    np.testing.assert_allclose(b.indices, a.indices[perm], rtol=INVARIANT_RTOL,
                               atol=INVARIANT_RTOL)


@settings(max_examples=40, deadline=None)
@given(case=arm_cases, c=st.floats(-10, 10))
def test_adding_c_to_active_reward_shifts_every_index_by_c(case, c):
    # Derivation. With R1' = R1 + c and subsidy lam' = lam + c, the active action pays
    # R1 + c and the passive R0 + lam + c: every one-step reward of the lam-problem plus the
    # same constant c. A constant added to every reward adds c / (1 - discount) to every
    # discounted value (c to every gain, nothing to biases) and changes no comparison, so the
    # optimal actions at lam' for the new arm are those at lam for the old: the passive sets
    # satisfy Pi'(lam + c) = Pi(lam), hence W' = W + c (discounted and average reward alike),
    # and indexability is unchanged.
    seed, n, discount = case
    arm = dense_arm(np.random.default_rng(seed), n)
    shifted = RestlessArm(arm.P0, arm.P1, arm.R0, arm.R1 + c)
    a, b = quiet_indices(arm, discount), quiet_indices(shifted, discount)
    assert a.status is b.status
    np.testing.assert_allclose(b.indices, a.indices + c, rtol=INVARIANT_RTOL,
                               atol=INVARIANT_RTOL * (1 + abs(c)))


@settings(max_examples=40, deadline=None)
@given(case=arm_cases, c=st.floats(-10, 10))
def test_adding_c_to_both_rewards_leaves_the_indices_unchanged(case, c):
    # Derivation. R0 + c and R1 + c at the same subsidy lam add c to every one-step reward:
    # same optimal actions at every lam, same passive sets, same indices.
    seed, n, discount = case
    arm = dense_arm(np.random.default_rng(seed), n)
    shifted = RestlessArm(arm.P0, arm.P1, arm.R0 + c, arm.R1 + c)
    assert_same_indices(quiet_indices(arm, discount), quiet_indices(shifted, discount))


def gittins_largest_remaining_index(P, r, beta):
    """Gittins index, ratio form, by the largest-remaining-index algorithm.

    Varaiya, Walrand & Buyukkoc (1985), "Extensions of the multiarmed bandit problem: the
    discounted case", IEEE TAC 30(5): the states are ranked from the largest index down;
    with ``C`` the states already ranked, the next is the ``s`` maximising
    ``E[sum_{t<tau} beta^t r(x_t)] / E[sum_{t<tau} beta^t]`` from ``s``, where ``tau`` is the
    first exit from ``C + {s}``; that maximum is its index.
    """
    n = len(r)
    index = np.empty(n)
    ranked = []
    for _ in range(n):
        best, best_value = None, -np.inf
        for s in set(range(n)) - set(ranked):
            D = ranked + [s]
            N = np.linalg.solve(np.eye(len(D)) - beta * P[np.ix_(D, D)],
                                np.column_stack([r[D], np.ones(len(D))]))
            value = N[-1, 0] / N[-1, 1]
            if value > best_value:
                best, best_value = s, value
        index[best] = best_value
        ranked.append(best)
    return index


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("seed", [30, 31, 32])
def test_rested_arm_whittle_index_is_the_gittins_index(seed, discount):
    # Derivation. On a rested arm (P0 = I, R0 = 0) a passive period leaves the state where it
    # is, so once passive is optimal it stays optimal: with subsidy lam the problem is optimal
    # stopping with retirement reward lam / (1 - b) (lam every period forever). Continuing for
    # a stopping time tau then retiring beats retiring now by
    #   E[sum_{t<tau} b^t r(x_t)] + E[b^tau] lam / (1 - b) - lam / (1 - b)
    #   = E[sum_{t<tau} b^t r(x_t)] - lam E[sum_{t<tau} b^t],
    # so x is indifferent exactly when lam = sup_tau E[sum b^t r] / E[sum b^t] = G(x), the
    # Gittins index in its "reward per unit of discounted time" form. Hence W(x) = G(x) with
    # no factor; in Whittle's (1980) retirement form M(x), the lump sum at which one is
    # indifferent, W(x) = (1 - b) M(x).
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 15))
    P1, R1 = dense_arm(rng, n).P1, rng.normal(size=n)
    arm = RestlessArm.rested(P1, R1)
    result = whittle_indices(arm, discount=discount)
    assert result.indexable  # rested arms are always indexable
    gittins = gittins_largest_remaining_index(np.asarray(P1), np.asarray(R1), discount)
    # two exact algorithms, rounding only; values are O(1) (a weighted average of rewards)
    np.testing.assert_allclose(result.indices, gittins, rtol=0, atol=1e-10)
    # Whittle's retirement form, computed independently as the value of the restart-in-x
    # problem (Katehakis & Veinott 1987): W(x) = (1 - b) M(x).
    lump_sum = restart_in_state_index(np.asarray(P1), np.asarray(R1), discount)
    # M is O(1 / (1 - b)) and exact up to rounding: 1e-10 after the factor (1 - b)
    np.testing.assert_allclose(result.indices, (1 - discount) * lump_sum, rtol=0, atol=1e-10)


def restart_in_state_index(P, r, beta):
    """Retirement-form Gittins index M(x), by the restart-in-state formulation.

    Katehakis & Veinott (1987), "The multi-armed bandit problem: decomposition and
    computation", Math. Oper. Res. 12(2): M(x) is the optimal value at x of the MDP where in
    every state y one may continue (reward r(y), move by P[y]) or restart from x (reward r(x),
    move by P[x]). Solved here by Howard's policy iteration.
    """
    n = len(r)
    M = np.empty(n)
    for x in range(n):
        restart = np.zeros(n, dtype=bool)
        while True:
            Ppol = np.where(restart[:, None], P[x], P)
            rpol = np.where(restart, r[x], r)
            V = np.linalg.solve(np.eye(n) - beta * Ppol, rpol)
            q_continue, q_restart = r + beta * P @ V, r[x] + beta * P[x] @ V
            better = np.where(restart, q_continue > q_restart + 1e-12,
                              q_restart > q_continue + 1e-12)
            if not better.any():
                break
            restart ^= better
        M[x] = V[x]
    return M


# --- non-indexable arms and the API --------------------------------------------------------

@pytest.mark.parametrize("discount", [0.9, None])
def test_non_indexable_arms_have_a_real_certificate(discount):
    # Sparse 3-state arms are non-indexable a few percent of the time; check every
    # certificate among the first 300 seeds with exact policy iteration.
    found = 0
    for seed in range(300):
        arm = sparse_arm(np.random.default_rng(seed), 3)
        result = quiet_indices(arm, discount)
        if result.status is IndexStatus.NOT_INDEXABLE:
            found += 1
            assert not is_indexable_quietly(arm, discount)
            assert_violation_is_real(arm, result)
            # indices are those computed before the violation, nan after
            assert np.isfinite(result.indices[result.passive_order]).all()
            assert np.isnan(result.indices).sum() == 3 - len(result.passive_order)
    assert found >= 3  # the scan did meet non-indexable arms


def is_indexable_quietly(arm, discount):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return is_indexable(arm, discount=discount)


def test_is_indexable_agrees_with_whittle_indices():
    arm = markovianbandit_readme_arm(42)
    assert is_indexable(arm, discount=None) is True
    with pytest.warns(UserWarning, match="multichain"):
        assert is_indexable(RestlessArm(np.full((2, 2), 0.5), np.eye(2), [0, 0], [1, 2]),
                            discount=None) is False


def _stack(arms):
    return [np.stack([getattr(a, f) for a in arms]) for f in ("P0", "P1", "R0", "R1")]


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99, 0.999])
@pytest.mark.parametrize("n", [2, 3, 6])
def test_is_indexable_many_agrees_with_one_at_a_time(n, discount):
    # The batched test must give is_indexable's verdict on every arm (its Notes: rounding can
    # differ, decisions near a tolerance are re-tested one at a time). Sparse arms with many
    # non-indexable ones and many exact ties (rows repeated), dense arms for the common case.
    rng = np.random.default_rng(n * 1000 + int(discount * 1000))
    arms = [sparse_arm(rng, n) for _ in range(300)] + [dense_arm(rng, n) for _ in range(100)]
    one = np.array([is_indexable_quietly(a, discount) for a in arms])
    many = is_indexable_many(*_stack(arms), discount=discount)
    assert many.dtype == bool and many.shape == (400,)
    np.testing.assert_array_equal(many, one)
    if n > 2 and discount >= 0.9:   # the scan met non-indexable arms (rare at small discounts)
        assert (~one).sum() >= 1


def test_is_indexable_many_average_reward_and_empty():
    arms = [sparse_arm(np.random.default_rng(s), 3) for s in range(40)]
    one = np.array([is_indexable_quietly(a, None) for a in arms])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # multichain arms warn, as is_indexable
        many = is_indexable_many(*_stack(arms), discount=None)
    np.testing.assert_array_equal(many, one)
    empty = is_indexable_many(np.zeros((0, 3, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                              np.zeros((0, 3)), discount=0.9)
    assert empty.shape == (0,)


def test_is_indexable_many_rejects_bad_input():
    P = np.full((2, 3, 3), 1 / 3)
    R = np.zeros((2, 3))
    with pytest.raises(ValueError, match="P0 must have shape"):
        is_indexable_many(P[0], P, R, R, discount=0.9)
    with pytest.raises(ValueError, match="R1 must have shape"):
        is_indexable_many(P, P, R, R[:1], discount=0.9)
    with pytest.raises(ValueError, match=r"P1\[0\] row of state 0 sums to 2.0"):
        is_indexable_many(P, 2 * P, R, R, discount=0.9)
    with pytest.raises(ValueError, match=r"P0\[1\] has a negative probability in the row of"):
        is_indexable_many(P - np.eye(3) * [[[0]], [[1]]], P, R, R, discount=0.9)
    with pytest.raises(ValueError, match=r"R0 must be finite, got nan for arm 1, state 2"):
        is_indexable_many(P, P, np.where([[0, 0, 0], [0, 0, 1]], np.nan, R), R, discount=0.9)
    with pytest.raises(TypeError, match="P1 must be an array of numbers"):
        is_indexable_many(P, [[["a"]]], R, R, discount=0.9)
    with pytest.raises(ValueError, match="discount"):
        is_indexable_many(P, P, R, R, discount=1.5)
    with pytest.raises(ValueError, match="pass discount=None"):
        is_indexable_many(P, P, R, R, discount=1.0)


@pytest.mark.parametrize("discount", [0.0, -0.5, 1.5, float("nan")])
def test_invalid_discount_is_rejected(discount):
    arm = markovianbandit_readme_arm(42)
    with pytest.raises(ValueError, match="discount must lie in"):
        whittle_indices(arm, discount=discount)
    with pytest.raises(ValueError, match="discount must lie in"):
        whittle_indices_bisection(arm, discount=discount)


def test_the_average_reward_is_none_and_the_default():
    # one spelling of the criterion (issue 32): None, the default; 1.0 refused with the fix
    arm = markovianbandit_readme_arm(42)
    default = whittle_indices(arm)
    assert default.discount is None
    assert default.indices.tobytes() == whittle_indices(arm, discount=None).indices.tobytes()
    for function in (whittle_indices, is_indexable, whittle_indices_bisection):
        with pytest.raises(ValueError, match=r"discount=1.0 is not a discount: pass "
                                             r"discount=None"):
            function(arm, discount=1.0)
    with pytest.raises(TypeError, match="discount must be a number"):
        whittle_indices(arm, discount="0.9")
    with pytest.raises(TypeError, match="arm must be a RestlessArm, got list"):
        whittle_indices([arm], discount=0.9)
    with pytest.raises(TypeError, match="tol must be a number"):
        whittle_indices_bisection(arm, tol="1e-10")
    with pytest.raises(ValueError, match=r"tol must lie in \(0, inf\)"):
        whittle_indices_bisection(arm, tol=0.0)


def test_result_is_frozen_and_validated():
    result = whittle_indices(markovianbandit_readme_arm(42), discount=0.9)
    assert not result.indices.flags.writeable
    with pytest.raises(AttributeError):
        result.indexable = False
    with pytest.raises(ValueError, match="contradicts"):
        WhittleIndexResult(indices=[0.0], status=IndexStatus.INDEXABLE, indexable=False,
                           discount=0.9, passive_order=[0], fingerprint="0" * 32)
    with pytest.raises(TypeError, match="fingerprint must be the arm's fingerprint"):
        WhittleIndexResult(indices=[0.0], status=IndexStatus.INDEXABLE, indexable=True,
                           discount=0.9, passive_order=[0], fingerprint=None)
    with pytest.raises(ValueError, match="pass discount=None"):
        WhittleIndexResult(indices=[0.0], status=IndexStatus.INDEXABLE, indexable=True,
                           discount=1.0, passive_order=[0], fingerprint="0" * 32)


def test_result_carries_its_arm_a_short_repr_and_a_table():
    arm = markovianbandit_readme_arm(42)
    result = whittle_indices(arm, discount=0.9)
    assert result.fingerprint == arm.fingerprint
    other = whittle_indices(markovianbandit_readme_arm(43), discount=0.9)
    assert other.fingerprint != result.fingerprint
    # the repr summarises the arrays (a 500-state arm does not flood a notebook)
    big = whittle_indices(dense_arm(np.random.default_rng(3), 500), discount=0.9)
    text = repr(big)
    assert "array(shape=(500,)" in text and len(text) < 600 and "0." not in text[:20]
    frame = result.to_frame()
    assert frame.index.name == "state" and list(frame.columns) == ["index", "order"]
    np.testing.assert_array_equal(frame["index"].to_numpy(), result.indices)
    # order: the position of each state in passive_order
    np.testing.assert_array_equal(frame["order"].to_numpy()[result.passive_order],
                                  np.arange(arm.n_states))
    # a state the computation did not reach has no order
    with pytest.warns(UserWarning, match="not indexable"):
        stopped = whittle_indices(markovianbandit_readme_arm(2791), discount=None)
    frame = stopped.to_frame()
    assert frame["order"].isna().sum() == np.isnan(stopped.indices).sum() > 0


def test_numpy_error_state_is_respected():
    # markovianbandit sets np.seterr(divide='raise', invalid='raise') on import; the engine
    # divides by zero slopes on purpose and must not depend on the global error state.
    old = np.seterr(all="raise")
    try:
        result = whittle_indices(absorbing_pair(), discount=None)
    finally:
        np.seterr(**old)
    assert result.indices[0] == np.inf


# --- 4. arms larger than one block of delayed updates, by the definition -------------------
# The engine applies its rank-one updates 64 pivots at a time (indices._BLOCK); the arms above
# have at most 60 states. These have 150 to 200, so two or three blocks are applied and the
# active columns are moved between blocks. Bisection would take minutes at this size; the
# definition is checked directly with exact policy iteration (whittle_lib.mdp, no code in
# common with the engine): between two consecutive indices the optimal passive set is the set
# of states whose index is below, and at its index a state is indifferent between actions.

def assert_indices_by_definition(arm, discount, result, states=None):
    from whittle_lib.indices import _optimal_advantage

    n = arm.n_states
    scale = float(np.ptp(np.concatenate([arm.R0, arm.R1])))
    # values are O(scale / (1 - discount)) or biases O(n scale): PI's switching tolerance
    discount = _beta(discount)
    pi_tol = 1e-12 * scale * (1.0 / (1.0 - discount) if discount < 1.0 else n)
    order, w = result.passive_order, result.indices
    assert sorted(order.tolist()) == list(range(n))
    mu = w[order]
    assert np.all(np.diff(mu) >= 0)
    policy = np.ones(n, dtype=bool)
    checked = 0
    for k in range(n - 1):
        gap = mu[k + 1] - mu[k]
        if not gap > 1e-9 * (scale + abs(mu[k])):  # ties: no subsidy strictly between
            continue
        adv, policy = _optimal_advantage(arm, discount, 0.5 * (mu[k] + mu[k + 1]), policy,
                                         pi_tol)
        passive = np.zeros(n, dtype=bool)
        passive[order[:k + 1]] = True
        # strictly between two indices no state is indifferent: the signs are the definition
        assert np.array_equal(adv <= 0, passive), f"passive set between indices {k}, {k + 1}"
        checked += 1
    assert checked >= n // 4  # ties (the duplicated arm) leave fewer gaps
    # at W(x), both actions are optimal in x: Q1 - Q0 = 0 up to rounding of the values,
    # O(1e-13 / (1 - discount)) here, amplified by the policy systems' conditioning
    for x in order[::7] if states is None else states:
        adv, _ = _optimal_advantage(arm, discount, w[x], policy, pi_tol)
        assert abs(adv[x]) <= 1e-9 * scale, f"state {x}"


@pytest.mark.parametrize("n, discount", [(150, 0.9), (150, None), (200, 0.99)])
def test_arms_larger_than_a_block_match_the_definition(n, discount):
    arm = dense_arm(np.random.default_rng(100 + n), n)
    result = whittle_indices(arm, discount=discount)
    assert result.status is IndexStatus.INDEXABLE  # these seeds give indexable arms
    assert_indices_by_definition(arm, discount, result)


def duplicated_arm(base: RestlessArm, copies: int) -> RestlessArm:
    """Every state of ``base`` ``copies`` times (state ``i`` is a copy of ``i % m``).

    From a copy, the chain moves to each copy of a base state with ``1 / copies`` of the base
    probability, so the copies of one state are interchangeable: the same values at every
    subsidy, the same index, and that index is the base arm's.
    """
    P0, P1 = (np.tile(P, (copies, copies)) / copies for P in (base.P0, base.P1))
    return RestlessArm(P0=P0, P1=P1, R0=np.tile(base.R0, copies), R1=np.tile(base.R1, copies))


@pytest.mark.parametrize("discount", [0.9, None])
def test_ties_across_blocks_on_a_duplicated_arm(discount):
    # 3 copies of 50 states: 150 states in 50 groups of three tied indices, the members of a
    # group met at one mu in arbitrary order, often in different blocks.
    base = dense_arm(np.random.default_rng(30), 50)
    arm = duplicated_arm(base, 3)
    expected = whittle_indices(base, discount=discount)
    assert expected.indexable
    result = whittle_indices(arm, discount=discount)
    assert result.indexable
    # each copy along its own path of rank-one updates: rounding apart, not more
    np.testing.assert_allclose(result.indices, np.tile(expected.indices, 3), rtol=0,
                               atol=1e-11)
    assert_indices_by_definition(arm, discount, result)


@pytest.mark.parametrize("discount", [0.9, None])
def test_states_where_the_action_does_not_move_the_chain(discount):
    # Degenerate states: where P0[x] = P1[x] the action changes only the reward, so the
    # advantage of x is R1(x) - R0(x) - lam whatever the policy elsewhere and its index is
    # R1(x) - R0(x) exactly (its slope stays 1: X[x] = Delta[x] A^{-1} = 0). A third of the
    # 180 states, spread over every block; they are also tied in pairs.
    rng = np.random.default_rng(40)
    arm = dense_arm(rng, 180)
    P1, R0, R1 = arm.P1.copy(), arm.R0.copy(), arm.R1.copy()
    flat = np.arange(0, 180, 3)
    P1[flat] = arm.P0[flat]
    R1[flat] = R0[flat] + np.repeat(rng.random(30), 2)
    arm = RestlessArm(P0=arm.P0, P1=P1, R0=R0, R1=R1)
    result = whittle_indices(arm, discount=discount)
    assert result.indexable
    # R1 - R0 up to the rounding of the recursion's sums, O(n eps) of the index scale
    np.testing.assert_allclose(result.indices[flat], (R1 - R0)[flat], rtol=0, atol=1e-12)
    assert_indices_by_definition(arm, discount, result)
