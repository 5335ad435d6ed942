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
    arm_list = (_indexable(discount, True, 4, 100 * seed, 3)
                + _indexable(discount, True, 3, 100 * seed + 50, 2))   # mixed sizes
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
    arm_list = [_random_arm(3, s) for s in pair] + _indexable(None, True, 3, seed, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not indices.whittle_indices(arm_list[0], discount=None).indexable
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
    arm_list = _indexable(None, True, 4, 7, 4)
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
    arm_list = _indexable(None, True, 3, 37 * seed, 3)
    idx = [indices.whittle_indices(a, discount=None).indices for a in arm_list]
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
    idx = [indices.whittle_indices(a, discount=None).indices for a in arm_list]
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
    arm_list = _indexable(None, True, 5, 0, 200)
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
    (dict(M=0.5), TypeError, "M must be an integer .*got float 0.5"),
    (dict(M=1.0), TypeError, "M must be an integer .*got float 1.0"),
    (dict(M=float("nan")), TypeError, "got float nan"),
    (dict(M="1"), TypeError, "M must be an integer"),
    (dict(M=True), TypeError, "M must be an integer"),
    (dict(M=1, activation="at least"), ValueError, "activation must be one of"),
    (dict(M=1, activation=None), TypeError, "activation must be one of"),
    (dict(M=1, method="simplex"), ValueError, "method must be one of"),
    (dict(M=1, method=2), TypeError, "method must be one of"),
    (dict(M=1, discount=1.0), ValueError, "discount=1.0 is not a discount: pass discount=None"),
    (dict(M=1, progress="yes"), TypeError, "progress must be True, False or None"),
    (dict(M=1, discount=1.5), ValueError, "discount must lie in .*got 1.5"),
    (dict(M=1, discount=0.0), ValueError, "got 0.0"),
    (dict(M=1, discount=float("nan")), ValueError, "got nan"),
    (dict(M=1, discount="0.9"), TypeError, "discount must be a number"),
    (dict(M=1, x0=[0, 0]), ValueError, "x0 applies to the discounted bound only"),
    (dict(M=1, discount=0.9, x0=[0]), ValueError, r"x0 must hold one integer state per arm"),
    (dict(M=1, discount=0.9, x0=[0, 2]), ValueError, r"x0\[1\] must be a state of arms\[1\]"),
    (dict(M=1, discount=0.9, x0=[0.0, 1.0]), TypeError, "x0 must hold one integer"),
    (dict(M=1, discount=0.9, x0="01"), TypeError, "x0 must be an array of numbers"),
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
    # by policy evaluation at the probed kinks, and from the recursion: rounding apart
    assert given.bound == pytest.approx(wl.relaxation_bound(arm_list, 1, discount=0.9).bound,
                                        abs=1e-12)
    with pytest.raises(ValueError, match=r"indices\[0\] is for discount=0.9, but the bound is "
                                         r"for the average reward"):
        wl.relaxation_bound(arm_list, 1, indices=results)
    with pytest.raises(TypeError, match=r"indices\[0\] must be a WhittleIndexResult"):
        wl.relaxation_bound(arm_list, 1, discount=0.9, indices=[r.indices for r in results])
    with pytest.raises(ValueError, match="one WhittleIndexResult per arm"):
        wl.relaxation_bound(arm_list, 1, discount=0.9, indices=results[:2])


def test_builders_build_what_they_say():
    arm = wl.wear_repair_arm(5, wear=0.3, repair_cost=0.5)
    # running wears one level at a time; a repair returns to level 0
    assert arm.P0[2, 3] == 0.3 and arm.P0[4, 4] == 1.0 and (arm.P1[:, 0] == 1.0).all()
    result = wl.whittle_indices(arm, discount=None)
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
    arm_list = _indexable(None, True, 3, 0, 3)
    wl.relaxation_bound(arm_list, 1)                 # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    wl.relaxation_bound(arm_list, 1, progress=True)
    assert "Whittle indices" in capsys.readouterr().err


# --- issue 32: results tied to their arms, identical arms grouped, bounds that scale -----------

def test_indices_of_other_arms_are_refused_naming_the_position():
    # the silent wrong answer: index results of other arms gave another bound without
    # a word; now the first result whose arm is not the one at its position is named
    arm_list = _indexable(None, True, 4, 11, 4)
    results = [indices.whittle_indices(a) for a in arm_list]
    right = wl.relaxation_bound(arm_list, 2, indices=results)
    assert right.bound == pytest.approx(wl.relaxation_bound(arm_list, 2).bound, abs=1e-12)
    swapped = [results[0], results[2], results[1], results[3]]
    with pytest.raises(ValueError, match=r"indices\[1\] was computed for another arm "
                                         r"\(fingerprint [0-9a-f]{12}\.\.\.\) than arms\[1\]"):
        wl.relaxation_bound(arm_list, 2, indices=swapped)
    # an equal arm (another object, the same matrices) has the same fingerprint: accepted
    copies = [arms.RestlessArm(a.P0, a.P1, a.R0, a.R1) for a in arm_list]
    assert wl.relaxation_bound(copies, 2, indices=results).bound == right.bound
    with pytest.raises(TypeError, match=r"indices must be a sequence of WhittleIndexResult"):
        wl.relaxation_bound(arm_list, 2, indices=results[0])


def _perturbed_copies(arm, count, eps=1e-13):
    """``count`` arms equal to ``arm`` but for ``R1 + i eps``: distinct fingerprints, so the
    bound solves each one; the bound moves by at most ``count**2 eps``."""
    return [arms.RestlessArm(arm.P0, arm.P1, arm.R0, arm.R1 + i * eps) for i in range(count)]


@pytest.mark.parametrize("activation", ["at_most", "exactly"])
@pytest.mark.parametrize("discount", [None, 0.8])
def test_identical_arms_solved_once_give_what_every_copy_gives(activation, discount,
                                                               monkeypatch):
    # three kinds of arm, several copies of each (the same object, and equal objects), against
    # the same population with every copy made distinct (solved one by one); dual and LP
    kinds = _indexable(discount, True, 5, 40, 3)
    population = ([kinds[0]] * 4 + [arms.RestlessArm(kinds[1].P0, kinds[1].P1, kinds[1].R0,
                                                     kinds[1].R1) for _ in range(3)]
                  + [kinds[2]] * 2)
    one_by_one = (_perturbed_copies(kinds[0], 4) + _perturbed_copies(kinds[1], 3)
                  + _perturbed_copies(kinds[2], 2))
    N = len(population)
    x0 = None if discount is None else np.array([0, 1, 0, 2, 3, 3, 1, 4, 0])
    calls = []
    real = indices._ggk
    monkeypatch.setattr(indices, "_ggk", lambda arm, *a: calls.append(arm) or real(arm, *a))
    for M in (1, 3, 6):
        grouped = wl.relaxation_bound(population, M, activation=activation, discount=discount,
                                      x0=x0)
        assert len(calls) == 3                          # each kind solved once
        calls.clear()
        each = wl.relaxation_bound(one_by_one, M, activation=activation, discount=discount,
                                   x0=x0)
        calls.clear()
        lp = wl.relaxation_bound(population, M, activation=activation, discount=discount,
                                 x0=x0, method="lp")
        lp_each = wl.relaxation_bound(one_by_one, M, activation=activation, discount=discount,
                                      x0=x0, method="lp")
        scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
        assert grouped.method == each.method == "dual"
        # the perturbation moves the bound by N^2 1e-13 at most; exact arithmetic otherwise
        assert grouped.bound == pytest.approx(each.bound, abs=1e-10 * scale)
        assert grouped.subsidy == pytest.approx(each.subsidy, abs=1e-10)
        # HiGHS's tolerance (1e-7 relative) on both linear programs
        assert lp.bound == pytest.approx(grouped.bound, abs=1e-6 * scale)
        assert lp_each.bound == pytest.approx(grouped.bound, abs=1e-6 * scale)
        # copies with the same initial state get the same share; the shares meet the budget
        for result in (grouped, lp):
            assert result.shares[0] == result.shares[1] == result.shares[2] or discount
            assert result.shares.sum() <= M + 1e-6
            if activation == "exactly":
                assert result.shares.sum() == pytest.approx(M, abs=1e-6)
        assert grouped.shares.shape == (N,)


@pytest.mark.parametrize("discount", [None, 0.9, 0.99])
def test_the_dual_from_the_recursion_equals_policy_evaluation_and_the_lp(discount):
    # arms larger than one block of delayed updates (150 states), mixed with small ones: the
    # gains the index recursion follows against batched policy evaluation (indices=) and the
    # linear program
    rng = np.random.default_rng(7)
    arm_list = [_random_arm(n, int(rng.integers(1 << 30))) for n in (150, 40, 40, 7, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [indices.whittle_indices(a, discount=discount) for a in arm_list]
    assert all(r.indexable for r in results)        # these seeds give indexable arms
    x0 = None if discount is None else np.array([17, 3, 39, 0, 2])
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    for activation in ("at_most", "exactly"):
        for M in range(6):
            curve = wl.relaxation_bound(arm_list, M, activation=activation, discount=discount,
                                        x0=x0)
            given = wl.relaxation_bound(arm_list, M, activation=activation, discount=discount,
                                        x0=x0, indices=results)
            lp = wl.relaxation_bound(arm_list, M, activation=activation, discount=discount,
                                     x0=x0, method="lp")
            # two exact computations of the same piecewise-linear dual: rounding of values
            # O(scale), amplified by the policy systems' conditioning
            assert curve.bound == pytest.approx(given.bound, abs=1e-9 * scale)
            assert curve.subsidy == pytest.approx(given.subsidy, abs=1e-9)
            np.testing.assert_allclose(curve.shares, given.shares, atol=1e-9)
            assert lp.bound == pytest.approx(curve.bound, rel=1e-6, abs=1e-6 * scale)


def test_chunked_policy_evaluation_gives_the_same_bound(monkeypatch):
    # with indices= the gains come from batched solves, in chunks of bounded memory; a chunk of
    # one arm uses the arm's own matrices (no stacked copy)
    arm_list = _indexable(None, True, 6, 90, 5)
    results = [indices.whittle_indices(a) for a in arm_list]
    whole = wl.relaxation_bound(arm_list, 2, indices=results)
    for limit in (1, 2 * 8 * 36 * 2):                   # one class per chunk, two per chunk
        monkeypatch.setattr(bounds, "_CHUNK_BYTES", limit)
        chunked = wl.relaxation_bound(arm_list, 2, indices=results)
        assert chunked.bound == pytest.approx(whole.bound, abs=1e-13)
        np.testing.assert_allclose(chunked.shares, whole.shares, atol=1e-13)


def test_twenty_copies_of_a_large_arm_take_one_index_computation():
    # the scale case, smaller: 20 copies of one 200-state arm are one index computation
    # (plus O(n) per index) and one block of the linear program; against the 20 copies solved
    # one by one (made distinct by 1e-13 in R1) and the linear program
    arm = _random_arm(200, 5)
    for M in (5, 15):
        bound = wl.relaxation_bound([arm] * 20, M, progress=False)
        each = wl.relaxation_bound(_perturbed_copies(arm, 20), M, progress=False)
        lp = wl.relaxation_bound([arm] * 20, M, method="lp")
        assert bound.method == each.method == "dual"
        # 20^2 1e-13 of perturbation, rounding otherwise
        assert bound.bound == pytest.approx(each.bound, abs=1e-9)
        # one copy by one, the relaxation mixes the policies of one copy at the optimal
        # subsidy; grouped, of all alike: other optimal shares, the same total
        assert bound.shares.sum() == pytest.approx(each.shares.sum(), abs=1e-9)
        assert lp.bound == pytest.approx(bound.bound, rel=1e-7)    # HiGHS's tolerance
        assert np.ptp(bound.shares) == 0.0 and bound.shares.sum() <= M + 1e-9


def test_the_bound_has_a_short_repr_and_a_table():
    arm_list = _indexable(None, True, 4, 3, 3) * 40
    result = wl.relaxation_bound(arm_list, 30)
    text = repr(result)
    assert "shares=array(shape=(120,)" in text and len(text) < 400
    frame = result.to_frame()
    assert frame.index.name == "arm" and list(frame.columns) == ["share"]
    np.testing.assert_array_equal(frame["share"].to_numpy(), result.shares)
