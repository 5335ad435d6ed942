"""Whittle's relaxation bounds (whittle_lib.bounds): at most / exactly M, average / discounted.

References: the linear program over occupation measures (HiGHS) against the dual over the
Whittle indices; the Lagrangian dual minimised by Brent's method with every g_i(lam) solved by
policy iteration (non-indexable arms); the joint MDP of 2-3 small arms solved exactly (the
bound must lie above it); exact long-run averages of index policies on the joint chain.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy import optimize

import whittle_lib as wl
from whittle_lib import arms, bounds, indices, mdp, rmab

from joint_chain import index_policy_chain


def _random_arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.dirichlet(np.ones(n), size=(2, n))
    R0, R1 = rng.normal(size=(2, n))
    return arms.RestlessArm(P0, P1, R0, R1)


def _indexable(criterion_discount, want, n, start, count):
    """``count`` random arms of ``n`` states that are (``want=True``) or are not indexable."""
    out, seed = [], start
    while len(out) < count:
        arm = _random_arm(n, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = indices.whittle_indices(arm, discount=criterion_discount)
        if result.indexable == want:
            out.append(arm)
        seed += 1
    return out


# --- the dual's structure against the linear program ----------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.9])
def test_dual_equals_the_linear_program_on_indexable_arms(seed, activation, discount):
    beta = 1.0 if discount is None else discount
    arm_list = (_indexable(beta, True, 4, 100 * seed, 3)
                + _indexable(beta, True, 3, 100 * seed + 50, 2))       # mixed sizes
    N = len(arm_list)
    x0 = None if discount is None else np.arange(N) % 3
    for M in range(N + 1):
        dual = bounds.relaxation_bound(arm_list, M, activation=activation, discount=discount,
                                       x0=x0, method="dual")
        lp = bounds.relaxation_bound(arm_list, M, activation=activation, discount=discount,
                                     x0=x0, method="lp")
        # HiGHS's primal-dual tolerance is 1e-7 relative; the dual's kinks are exact
        scale = 1.0 if discount is None else 1 / (1 - discount)
        assert dual.bound == pytest.approx(lp.bound, abs=1e-6 * scale)
        assert dual.method == "dual" and lp.method == "lp"
        for result in (dual, lp):
            total = result.shares.sum()
            # shares are occupation sums, exact to the solver's tolerance
            if activation == "exactly":
                assert total == pytest.approx(M, abs=1e-6)
            else:
                assert total <= M + 1e-6 and result.subsidy >= -1e-9
            assert ((result.shares > -1e-9) & (result.shares < 1 + 1e-9)).all()


def _dual_by_policy_iteration(arm_list, M, activation):
    """min over lam of sum_i g_i(lam) - lam (N - M), each g_i(lam) by policy iteration (the
    best gain over initial states) and the convex minimum by Brent's bounded method."""
    N = len(arm_list)

    def D(lam):
        total = 0.0
        for arm in arm_list:
            m = mdp.FiniteMDP(transitions=[arm.P0, arm.P1],
                             rewards=np.column_stack([arm.R0 + lam, arm.R1]))
            total += float(np.max(mdp.policy_iteration(m).gain_by_state))
        return total - lam * (N - M)

    spread = 4 * max(float(np.abs(np.concatenate([a.R0, a.R1])).max()) for a in arm_list)
    lo = 0.0 if activation == "at_most" else -spread
    res = optimize.minimize_scalar(D, bounds=(lo, spread), method="bounded",
                                   options={"xatol": 1e-10})
    return min(res.fun, D(lo), D(spread))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("activation", ["at_most", "exactly"])
def test_linear_program_equals_the_lagrangian_dual_on_non_indexable_arms(seed, activation):
    # non-indexable 3-state arms are rare (7 in the first 5,000 seeds of _random_arm): these
    # seeds were found by whittle_indices, and the test checks they still are
    pair = [(961, 1104), (1832, 2078), (3427, 4128)][seed]
    arm_list = [_random_arm(3, s) for s in pair] + _indexable(1.0, True, 3, seed, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not indices.whittle_indices(arm_list[0], discount=1.0).indexable
    for M in range(len(arm_list) + 1):
        result = wl.relaxation_bound(arm_list, M, activation=activation)
        assert result.method == "lp"                     # auto: not every arm is indexable
        # Brent's method on a convex piecewise-linear function to xatol 1e-10, times slopes
        # of order N: the dual's minimum is known to 1e-8; HiGHS to 1e-7
        assert result.bound == pytest.approx(
            _dual_by_policy_iteration(arm_list, M, activation), abs=1e-6)
    with pytest.raises(ValueError, match=r"arms\[0\] is not indexable.*method='lp'"):
        wl.relaxation_bound(arm_list, 1, method="dual")


def test_the_lp_subsidy_is_the_dual_subsidy():
    arm_list = _indexable(1.0, True, 4, 7, 4)
    for M in range(5):
        dual = wl.relaxation_bound(arm_list, M, activation="exactly", method="dual")
        lp = wl.relaxation_bound(arm_list, M, activation="exactly", method="lp")
        # D(lam) is minimal at the LP's shadow price too (the minimiser may be an interval)
        value = sum(_gain(a, lp.subsidy) for a in arm_list) - lp.subsidy * (4 - M)
        assert value == pytest.approx(dual.bound, abs=1e-6)


def _gain(arm, lam):
    m = mdp.FiniteMDP(transitions=[arm.P0, arm.P1],
                      rewards=np.column_stack([arm.R0 + lam, arm.R1]))
    return float(np.max(mdp.policy_iteration(m).gain_by_state))


# --- what each bound bounds ------------------------------------------------------------------

def _joint_average(arm_list, priorities, M, threshold=None):
    """Exact long-run average reward of an index policy: the joint chain's stationary law
    (best over its recurrent classes, so an upper estimate if the chain is multichain)."""
    _, P, r, most_active = index_policy_chain(arm_list, priorities, M, threshold)
    assert most_active <= M
    return float(np.max(mdp.stationary_distributions(P) @ r))


@pytest.mark.parametrize("seed", range(8))
def test_no_index_policy_beats_its_bound(seed):
    arm_list = _indexable(1.0, True, 3, 37 * seed, 3)
    idx = [indices.whittle_indices(a, discount=1.0).indices for a in arm_list]
    for M in range(4):
        at_most = wl.relaxation_bound(arm_list, M).bound
        exactly = wl.relaxation_bound(arm_list, M, activation="exactly").bound
        # a bound of the larger class is at least the bound of the smaller
        assert at_most >= exactly - 1e-12
        # exact averages (joint stationary law) against exact bounds: rounding only
        assert _joint_average(arm_list, idx, M) <= exactly + 1e-9
        for threshold in (0.0, float(np.median(np.concatenate(idx)))):
            assert _joint_average(arm_list, idx, M, threshold) <= at_most + 1e-9


def test_the_exactly_bound_is_beaten_by_idling_when_arms_would_rather_rest():
    # the case: arms that pay more when passive; a threshold policy activates fewer
    # than M and beats the exactly-M bound, never the at-most-M bound
    arm = arms.RestlessArm(P0=[[0.7, 0.3], [0.2, 0.8]], P1=[[0.9, 0.1], [0.6, 0.4]],
                           R0=[1.0, 0.5], R1=[0.2, 0.1])
    arm_list = [arm, arm, arm]
    idx = [indices.whittle_indices(a, discount=1.0).indices for a in arm_list]
    exactly = wl.relaxation_bound(arm_list, 2, activation="exactly")
    at_most = wl.relaxation_bound(arm_list, 2)
    assert exactly.subsidy < 0 and at_most.subsidy == 0.0
    idle = _joint_average(arm_list, idx, 2, threshold=0.0)
    assert exactly.bound < idle <= at_most.bound + 1e-12
    # state 1's index is 0 (up to rounding): working there is optional, so shares vary
    assert at_most.shares.sum() <= 2 + 1e-9


def _joint_discounted(arm_list, M, beta, x0, activation):
    """Optimal expected discounted reward of the joint MDP from x0 (value iteration to
    1e-12), actions: every set of at most / exactly M arms."""
    N = len(arm_list)
    sizes = [a.n_states for a in arm_list]
    states = list(itertools.product(*[range(k) for k in sizes]))
    pos = {s: i for i, s in enumerate(states)}
    sets = [c for k in range(N + 1) for c in itertools.combinations(range(N), k)
            if (k == M if activation == "exactly" else k <= M)]
    S = len(states)
    P = np.zeros((len(sets), S, S))
    r = np.zeros((len(sets), S))
    for a, chosen in enumerate(sets):
        for s in states:
            rows = [(arm.P1 if i in chosen else arm.P0)[s[i]] for i, arm in enumerate(arm_list)]
            r[a, pos[s]] = sum((arm.R1 if i in chosen else arm.R0)[s[i]]
                               for i, arm in enumerate(arm_list))
            for t in states:
                P[a, pos[s], pos[t]] = np.prod([rows[i][t[i]] for i in range(N)])
    v = np.zeros(S)
    for _ in range(10_000):
        new = np.max(r + beta * P @ v, axis=0)
        if np.max(np.abs(new - v)) < 1e-13:
            break
        v = new
    return float(v[pos[tuple(x0)]])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("activation", ["at_most", "exactly"])
def test_discounted_bound_lies_above_the_joint_optimum(seed, activation):
    beta = 0.8
    N = 2 + seed % 2
    arm_list = [_random_arm(2 + (i + seed) % 2, 300 * seed + i) for i in range(N)]
    x0 = np.array([(i + seed) % 2 for i in range(N)])
    for M in range(N + 1):
        bound = wl.relaxation_bound(arm_list, M, activation=activation, discount=beta, x0=x0)
        optimum = _joint_discounted(arm_list, M, beta, x0, activation)
        # value iteration stops at a sup-norm step of 1e-13: its error is below 1e-12
        assert optimum <= bound.bound + 1e-9
        if M in (0, N) and activation == "exactly":
            # nothing to relax: all passive or all active
            assert bound.bound == pytest.approx(optimum, abs=1e-9)


def test_discounted_bound_depends_on_the_initial_states():
    arm = arms.RestlessArm(P0=[[1, 0], [0, 1]], P1=[[0, 1], [0, 1]], R0=[0, 1], R1=[0, 1])
    # state 1 pays 1 forever; state 0 pays nothing until activated
    low = wl.relaxation_bound([arm], 0, discount=0.5, x0=[0]).bound
    high = wl.relaxation_bound([arm], 0, discount=0.5, x0=[1]).bound
    assert low == pytest.approx(0.0) and high == pytest.approx(2.0)


# --- scale, surface, errors -------------------------------------------------------------------

def test_a_thousand_arms_are_solved_by_the_dual():
    arm_list = _indexable(1.0, True, 5, 0, 200)
    result = wl.relaxation_bound(arm_list, 50, progress=False)
    assert result.method == "dual" and result.shares.sum() <= 50 + 1e-9


def test_rmab_re_exports_the_bound():
    assert rmab.relaxation_bound is bounds.relaxation_bound is wl.relaxation_bound
    assert rmab.RelaxationBound is bounds.RelaxationBound


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(arms=[], M=0), ValueError, "arms must hold at least one"),
    (dict(arms="abc", M=0), TypeError, r"arms\[0\] must be a RestlessArm"),
    (dict(arms=None, M=0), TypeError, "arms must be a sequence"),
    (dict(M=3), ValueError, r"M must be an integer in \[0, N=2\], got 3"),
    (dict(M=-1), ValueError, "got -1"),
    (dict(M=0.5), ValueError, "got 0.5"),
    (dict(M=float("nan")), ValueError, "got nan"),
    (dict(M="1"), TypeError, "M must be an integer"),
    (dict(M=True), TypeError, "M must be an integer"),
    (dict(M=1, activation="at least"), ValueError, "activation must be one of"),
    (dict(M=1, method="simplex"), ValueError, "method must be one of"),
    (dict(M=1, discount=1.5), ValueError, "discount must lie in .*got 1.5"),
    (dict(M=1, discount=0.0), ValueError, "got 0.0"),
    (dict(M=1, discount=float("nan")), ValueError, "got nan"),
    (dict(M=1, discount="0.9"), TypeError, "discount must be a number"),
    (dict(M=1, x0=[0, 0]), ValueError, "x0 applies to the discounted bound only"),
    (dict(M=1, discount=0.9, x0=[0]), ValueError, r"x0 must hold one integer state per arm"),
    (dict(M=1, discount=0.9, x0=[0, 2]), ValueError, r"x0\[1\] must be a state of arms\[1\]"),
    (dict(M=1, discount=0.9, x0=[0.0, 1.0]), ValueError, "x0 must hold one integer"),
])
def test_bad_arguments_are_named(kwargs, error, match):
    arm = arms.RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    kwargs = {"arms": [arm, arm], **kwargs}
    with pytest.raises(error, match=match):
        wl.relaxation_bound(kwargs.pop("arms"), kwargs.pop("M"), **kwargs)


def test_a_single_arm_is_refused_with_a_hint():
    arm = arms.RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    with pytest.raises(TypeError, match=r"pass \[arm\]"):
        wl.relaxation_bound(arm, 1)


def test_indices_computed_once_are_reused():
    arm_list = _indexable(0.9, True, 4, 3, 3)
    results = [indices.whittle_indices(a, discount=0.9) for a in arm_list]
    given = wl.relaxation_bound(arm_list, 1, discount=0.9, indices=results)
    assert given.bound == wl.relaxation_bound(arm_list, 1, discount=0.9).bound
    with pytest.raises(ValueError, match=r"indices\[0\] is for discount=0.9"):
        wl.relaxation_bound(arm_list, 1, indices=results)
    with pytest.raises(TypeError, match=r"indices\[0\] must be a WhittleIndexResult"):
        wl.relaxation_bound(arm_list, 1, discount=0.9, indices=[r.indices for r in results])
    with pytest.raises(ValueError, match="one WhittleIndexResult per arm"):
        wl.relaxation_bound(arm_list, 1, discount=0.9, indices=results[:2])


def test_builders_build_what_they_say():
    arm = wl.wear_repair_arm(5, wear=0.3, repair_cost=0.5)
    # running wears one level at a time; a repair returns to level 0
    assert arm.P0[2, 3] == 0.3 and arm.P0[4, 4] == 1.0 and (arm.P1[:, 0] == 1.0).all()
    result = wl.whittle_indices(arm, discount=1.0)
    # the worse the wear, the more a repair is worth: indices increase with the level
    assert result.indexable and (np.diff(result.indices) > 0).all()
    queue = wl.birth_death_arm(6, up=(0.3, 0.3), down=(0.0, 0.6), R0=-np.arange(6.0),
                               R1=-np.arange(6.0))
    # independent oracle: the birth-death chain's stationary law solves detailed balance
    pi = mdp.stationary_distribution(queue.P1)
    np.testing.assert_allclose(pi[1:] / pi[:-1], 0.3 / 0.6 * np.ones(5), rtol=1e-10)
    a, b = wl.random_arm(4, rng=3), wl.random_arm(4, rng=3)
    np.testing.assert_array_equal(a.P0, b.P0)
    assert not np.array_equal(a.P0, wl.random_arm(4, rng=4).P0)


@pytest.mark.parametrize("call, error, match", [
    (lambda: wl.wear_repair_arm(1, wear=0.3), ValueError,
     "n_levels must be an integer >= 2, got 1"),
    (lambda: wl.wear_repair_arm(3.0, wear=0.3), TypeError, "n_levels must be an integer"),
    (lambda: wl.wear_repair_arm(3, wear=1.5), ValueError, r"wear must lie in \[0, 1\], got 1.5"),
    (lambda: wl.wear_repair_arm(3, wear=float("nan")), ValueError, "wear .* got nan"),
    (lambda: wl.wear_repair_arm(3, wear=0.3, repair_cost=-1), ValueError,
     "repair_cost .* got -1"),
    (lambda: wl.wear_repair_arm(3, wear=0.3, repair_success=0), ValueError, "repair_success"),
    (lambda: wl.birth_death_arm(3, up=0.3, down=(0, 0), R0=0, R1=0), TypeError,
     "up must be a pair"),
    (lambda: wl.birth_death_arm(3, up=(0.6, 0.3), down=(0.5, 0), R0=0, R1=0), ValueError,
     r"up\[0\] \+ down\[0\] must be at most 1"),
    (lambda: wl.birth_death_arm(3, up=(0.1, 0.3), down=(0, 0), R0=[0, 1], R1=0), ValueError,
     "R0 must be a number or 3 numbers"),
    (lambda: wl.birth_death_arm(3, up=(0.1, 0.3), down=(0, 0), R0=0, R1=np.inf), ValueError,
     "R1 must lie in .* got inf in state 0"),
    (lambda: wl.random_arm(0), ValueError, "n_states must be an integer >= 1, got 0"),
    (lambda: wl.random_arm(2, concentration=0), ValueError,
     r"concentration must lie in \(0, inf\), got 0"),
])
def test_builders_name_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_progress_bar_is_off_unless_interactive_or_asked(capsys):
    arm_list = _indexable(1.0, True, 3, 0, 3)
    wl.relaxation_bound(arm_list, 1)                 # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    wl.relaxation_bound(arm_list, 1, progress=True)
    assert "Whittle indices" in capsys.readouterr().err
