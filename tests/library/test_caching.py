"""The caching model (Pavamana & Singh 2023) against independent references and invariants."""

import itertools

import numpy as np
import pytest

from whittle_lib.models import caching as C
from whittle_lib import indices, mdp


def _content(cost="sqrt", d=1.0, chain=(0.2, 0.2, 0.3, 0.1), K=5, h=0.0):
    r = np.arange(K, dtype=float)
    C_r = 2 * np.sqrt(r) if cost == "sqrt" else r
    up0, down0, up1, down1 = chain
    return C.CachingContent.birth_death(r, C_r, up0=up0, down0=down0, up1=up1, down1=down1,
                                        fetch_cost=d, holding_cost=h)


def _problem(K=3, N=2, M=1, beta=0.8):
    chains = [(0.2, 0.2, 0.3, 0.1), (0.1, 0.3, 0.2, 0.2), (0.3, 0.1, 0.35, 0.05)]
    contents = [_content(d=1.5 + n, chain=chains[n], K=K) for n in range(N)]
    return C.CachingProblem(contents, M, beta)


# --- validation ------------------------------------------------------------------------------

def test_birth_death_rows_sum_to_one_and_boundaries_self_loop():
    P = C.birth_death_matrix(4, 0.3, 0.2)
    np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-15)  # a few ulps of three additions
    assert P[0, 0] == pytest.approx(0.7) and P[3, 3] == pytest.approx(0.8)


@pytest.mark.parametrize("kwargs, match", [
    (dict(levels=[0, 0, 1]), "levels must be finite and increasing"),
    (dict(missing_cost=[0, -1, 2]), "missing_cost must be finite and >= 0"),
    (dict(fetch_cost=-1.0), "fetch_cost must be finite and >= 0"),
    (dict(P0=[[1, 0, 0], [0, 1, 0], [0, 0, 0.5]]), "P0 row of state 2"),
])
def test_content_rejects_bad_input(kwargs, match):
    good = dict(levels=[0, 1, 2], missing_cost=[0, 1, 2], P0=np.eye(3), P1=np.eye(3),
                fetch_cost=1.0)
    with pytest.raises(ValueError, match=match):
        C.CachingContent(**{**good, **kwargs})


def test_problem_and_bound_reject_bad_input():
    c = _content()
    with pytest.raises(ValueError, match="capacity"):
        C.CachingProblem([c, c], 3, 0.9)
    with pytest.raises(ValueError, match="discount"):
        C.CachingProblem([c, c], 1, 1.0)
    with pytest.raises(ValueError, match="discount"):
        C.theorem51_bound(0.0)
    with pytest.raises(ValueError, match="up \\+ down"):
        C.birth_death_matrix(3, 0.7, 0.6)


# --- the single-content arm ------------------------------------------------------------------

def test_arm_index_matches_bisection():
    arm = _content().arm()
    fast = indices.whittle_indices(arm, discount=0.9)
    slow = indices.whittle_indices_bisection(arm, discount=0.9, tol=1e-10)
    assert fast.indexable
    # bisection is within tol/2 = 5e-11 of the index; the exact algorithm within rounding
    np.testing.assert_allclose(fast.indices, slow, atol=1e-8)


def test_holding_cost_shifts_every_index():
    base = indices.whittle_indices(_content().arm(), discount=0.9).indices
    held = indices.whittle_indices(_content(h=0.7).arm(), discount=0.9).indices
    # Sec. 3.4: a holding cost h is the penalty itself, so W_h = W - h (rounding only)
    np.testing.assert_allclose(held, base - 0.7, atol=1e-10)


def test_solve_content_matches_policy_iteration_of_mdp_module():
    content, lam, beta = _content(d=2.0), 1.3, 0.9
    arm = content.arm()
    model = mdp.FiniteMDP(transitions=(arm.P0, arm.P1),
                          rewards=np.column_stack([arm.R0 + lam, arm.R1]))
    ref = mdp.policy_iteration(model, discount=beta)
    sol = C.solve_content(content, lam, discount=beta)
    # reward = -cost, and the subsidy lam for passivity = the penalty lam for caching up to the
    # constant lam / (1 - beta); both are exact linear solves (errors ~1e-13)
    np.testing.assert_allclose(-sol.cost + lam / (1 - beta), ref.value, atol=1e-9)
    assert sol.thresholds is not None and sol.thresholds[1] <= sol.thresholds[0]


def test_assumption_readings():
    assert C.check_assumptions(_content("sqrt")).assumptions_1_to_3
    rep = C.check_assumptions(_content("linear"))
    assert rep.assumption1 and rep.assumption2 and not rep.assumption3
    assert C.popularity_perturbation(_content()) == pytest.approx(0.1)


def test_repair_restores_assumption3_or_reports_infeasible():
    r = np.arange(5.0)
    c = C.CachingContent.birth_death(r, 2 * r ** 0.8, up0=0.2, down0=0.2, up1=0.3, down1=0.1,
                                     fetch_cost=4.0)
    rep = C.repair_missing_costs(c)
    assert rep.feasible and C.check_assumptions(rep.content).assumptions_1_to_3
    np.testing.assert_array_equal(rep.content.missing_cost[2:], c.missing_cost[2:])
    assert not C.repair_missing_costs(_content("linear")).feasible


def test_equal_chains_are_indexable_for_random_instances():
    rng = np.random.default_rng(7)
    for _ in range(20):  # Sec. 5, Remark 5: P0 = P1 gives an indexable arm whatever the chain
        c = C.random_content(5, rng=rng, chain="dense", closeness=0.0)
        assert indices.is_indexable(c.arm(), discount=0.99)


# --- the joint problem -----------------------------------------------------------------------

def _explicit_joint_mdp(problem):
    """The joint MDP written state by state with np.kron, independent of caching's helpers."""
    L = int(np.prod(problem.shape))
    cfgs = np.asarray(problem.configs)
    n = len(cfgs) * L
    trans, rewards = [], []
    for a, cfg_a in enumerate(cfgs):
        chain = np.ones((1, 1))
        for content, bit in zip(problem.contents, cfg_a):
            chain = np.kron(chain, content.P1 if bit else content.P0)
        P = np.zeros((n, n))
        r = np.zeros(n)
        for s in range(n):
            c, flat = divmod(s, L)
            levels = np.unravel_index(flat, problem.shape)
            P[s, a * L:(a + 1) * L] = chain[flat]
            cost = 0.0
            for content, k, was, now in zip(problem.contents, levels, cfgs[c], cfg_a):
                cost += content.expected_missing_cost[k] if not now else 0.0
                cost += content.fetch_cost if now and not was else 0.0
            r[s] = -cost
        trans.append(P)
        rewards.append(r)
    return mdp.FiniteMDP(transitions=tuple(trans), rewards=np.array(rewards).T)   # r[s, a]


def test_solve_joint_matches_policy_iteration_on_explicit_mdp():
    problem = _problem(K=3, N=2, M=1)
    ref = mdp.policy_iteration(_explicit_joint_mdp(problem), discount=problem.discount)
    sol = C.solve_joint(problem)
    # both exact (policy iteration with LU solves): agreement to rounding of values ~10
    np.testing.assert_allclose(sol.cost, -ref.value, atol=1e-9)
    assert sol.residual < 1e-9


def test_index_policies_respect_capacity_and_greedy_is_one_step_optimal():
    problem = _problem(K=3, N=3, M=2)
    costs = C.joint_costs(problem)
    greedy = C.index_policy(problem, C.greedy_priorities(problem))
    # greedy minimises the one-slot cost over every feasible configuration (ties within 1e-12)
    np.testing.assert_allclose(costs[np.arange(problem.n_states), greedy], costs.min(1), atol=1e-12)
    whittle = C.index_policy(problem, C.whittle_priorities(problem))
    assert np.asarray(problem.configs)[whittle].sum(1).max() <= problem.capacity


def test_whittle_exact_cost_matches_monte_carlo():
    problem = _problem(K=3, N=3, M=1, beta=0.8)
    pri = C.whittle_priorities(problem)
    exact = C.evaluate_joint_policy(problem, C.index_policy(problem, pri))
    R = 4000
    levels0 = np.zeros((R, 3), dtype=int)
    cached0 = np.zeros((R, 3), dtype=int)
    est = C.simulate_policy(problem, pri, initial_levels=levels0, initial_cached=cached0,
                            horizon=120, rng=12345)
    x0 = problem.state_index(levels0[0], cached0[0])
    # 4 standard errors: a false alarm has probability ~6e-5; the truncation bias is ~1e-10
    assert est.truncation < 1e-6
    assert abs(est.mean - exact[x0]) <= 4 * est.std_error


def test_state_index_roundtrip():
    problem = _problem(K=3, N=3, M=2)
    s = np.arange(problem.n_states)
    levels, cached = problem.decode(s)
    np.testing.assert_array_equal(problem.state_index(levels, cached), s)


def test_simulate_rejects_bad_initial_state():
    problem = _problem()
    with pytest.raises(ValueError, match="at most 1 ones"):
        C.simulate_policy(problem, C.greedy_priorities(problem), initial_levels=[[0, 0]],
                          initial_cached=[[1, 1]], horizon=5, rng=0)


def test_threshold_structure_on_a_paper_like_instance():
    check = C.check_structure(_content(K=6), discount=0.9)
    assert check.index.indexable and check.threshold and check.tau_order and check.passive_monotone


def test_all_configs_feasible():
    problem = _problem(K=2, N=3, M=2)
    expected = [v for v in itertools.product((0, 1), repeat=3) if sum(v) <= 2]
    assert len(problem.configs) == len(expected)


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99])
def test_solve_content_many_is_solve_content_bit_for_bit(discount):
    # Random birth-death and dense contents over a wide range of penalties, ties included
    # (penalties at the indices themselves): every field equal to the single solve's.
    rng = np.random.default_rng(5)
    for _ in range(6):
        c = C.random_content(5, rng=rng)
        W = indices.whittle_indices(c.arm(), discount=discount).indices
        lams = np.concatenate([np.linspace(-20.0, 40.0, 15), W[np.isfinite(W)]])
        many = C.solve_content_many(c, lams, discount=discount)
        for lam, s in zip(lams, many):
            one = C.solve_content(c, float(lam), discount=discount)
            assert s.lam == one.lam and s.thresholds == one.thresholds
            assert s.iterations == one.iterations
            for f in ("cost", "advantage", "cache"):
                assert getattr(s, f).tobytes() == getattr(one, f).tobytes()
    assert C.solve_content_many(c, [], discount=discount) == ()
    with pytest.raises(ValueError, match="lams"):
        C.solve_content_many(c, [np.nan], discount=discount)


def _former_solve_content(content, lam, *, discount):
    """solve_content as written for one penalty before it became solve_content_many of one
    (issue 32): dense_policy_iteration on the two actions, the thresholds row by row."""
    from whittle_lib.models.caching.single import _threshold
    beta = float(discount)
    arm = content.arm()
    c0, c1 = -arm.R0, -arm.R1 + float(lam)
    scale = max(1.0, float(np.abs(np.concatenate([c0, c1])).max()))
    tol = 1e-10 * scale / (1.0 - beta)
    sol = mdp.dense_policy_iteration(np.stack([arm.P0, arm.P1]), np.stack([-c0, -c1], axis=1),
                                     discount=beta, tol=tol)        # r[s, a], q[s, a] (1.0)
    adv = sol.q[:, 1] - sol.q[:, 0]
    K = content.n_levels
    t0, t1 = _threshold(adv[:K], tol), _threshold(adv[K:], tol)
    return (-sol.value + 0.0, adv, sol.policy.astype(bool),
            None if t0 is None or t1 is None else (t0, t1), sol.iterations)


def test_solve_content_keeps_the_bits_of_the_former_single_solve():
    rng = np.random.default_rng(8)
    for _ in range(4):
        c = C.random_content(5, rng=rng)
        for lam in (-10.0, 0.0, 0.7, 25.0):
            got = C.solve_content(c, lam, discount=0.9)
            cost, adv, cache, thresholds, iterations = _former_solve_content(c, lam, discount=0.9)
            assert got.cost.tobytes() == cost.tobytes()
            assert got.advantage.tobytes() == adv.tobytes()
            assert got.cache.tobytes() == cache.tobytes()
            assert (got.thresholds, got.iterations) == (thresholds, iterations)


def _contents():
    return [_content(), _content(d=2.0)]


@pytest.mark.parametrize("call, error, message", [
    (lambda: C.birth_death_matrix(3.0, 0.3, 0.2), TypeError, "n_levels must be an integer"),
    (lambda: C.birth_death_matrix(1, 0.3, 0.2), ValueError, "n_levels must be an integer"),
    (lambda: C.birth_death_matrix(3, "0.3", 0.2), TypeError, "up must be an array of numbers"),
    (lambda: C.birth_death_matrix(3, [0.3, 0.2], 0.2), ValueError, "one per level"),
    (lambda: C.birth_death_matrix(3, 0.3, 1.5), ValueError, r"down must lie in \[0, 1\]"),
    (lambda: C.CachingContent([0, 1], [0, 1], np.eye(2), np.eye(2), fetch_cost="1"), TypeError,
     "fetch_cost must be a number"),
    (lambda: C.CachingContent(["a", "b"], [0, 1], np.eye(2), np.eye(2), 1.0), TypeError,
     "levels must be an array of numbers"),
    (lambda: C.CachingContent([0, 1], [0, 1], np.eye(2), np.eye(2), 1.0, holding_cost=-1.0),
     ValueError, "holding_cost must be finite and >= 0"),
    (lambda: C.random_content(3.5, rng=1), TypeError, "n_levels must be an integer"),
    (lambda: C.random_content(3, rng=1, chain="sparse"), ValueError, "chain must be one of"),
    (lambda: C.random_content(3, rng=1, chain="dense", closeness=2.0), ValueError,
     r"closeness must lie in \[0, 1\]"),
    (lambda: C.random_content(3, rng="seed"), TypeError, "rng must be"),
    (lambda: C.check_assumptions("content"), TypeError, "content must be a CachingContent"),
    (lambda: C.popularity_perturbation(None), TypeError, "content must be a CachingContent"),
    (lambda: C.is_concave_on([0, 1, 1], [0, 1, 2]), ValueError, "levels must be increasing"),
    (lambda: C.is_concave_on([0, 1, 2], [0, 1]), ValueError, "values must have shape"),
    (lambda: C.is_concave_on([0, 1, 2], [0, 1, 2], tol=-1.0), ValueError, "tol must lie in"),
    (lambda: C.theorem51_bound(None), ValueError, "a discounted criterion"),
    (lambda: C.theorem51_bound(1.0), ValueError, r"discount must lie in \(0, 1\)"),
    (lambda: C.theorem51_bound("0.9"), TypeError, "discount must be a number"),
    (lambda: C.repair_missing_costs(_content(), n_changed=0), ValueError, "n_changed must be"),
    (lambda: C.repair_missing_costs(_content(), n_changed=2.0), TypeError, "n_changed must be"),
    (lambda: C.repair_missing_costs(_content(), nonnegative="yes"), TypeError, "nonnegative"),
    (lambda: C.solve_content(_content(), np.nan, discount=0.9), ValueError, "lam must lie in"),
    (lambda: C.solve_content(_content(), "1", discount=0.9), TypeError, "lam must be a number"),
    (lambda: C.solve_content("content", 1.0, discount=0.9), TypeError, "content must be a"),
    (lambda: C.solve_content(_content(), 1.0, discount=1.0), ValueError, "discount must lie in"),
    (lambda: C.solve_content_many(_content(), [[1.0]], discount=0.9), ValueError, "lams must be"),
    (lambda: C.check_structure(_content(), discount=0.9, n_grid=1), ValueError, "n_grid must be"),
    (lambda: C.CachingProblem(_content(), 1, 0.9), TypeError, "contents must be a list"),
    (lambda: C.CachingProblem([_content(), "c"], 1, 0.9), TypeError,
     r"contents\[1\] must be a CachingContent"),
    (lambda: C.CachingProblem(_contents(), 1.0, 0.9), TypeError, "capacity must be an integer"),
    (lambda: C.CachingProblem(_contents(), 3, 0.9), ValueError,
     r"capacity must be an integer in \[1, 2\]"),
    (lambda: C.CachingProblem([], 1, 0.9), ValueError, "at least one"),
    (lambda: C.solve_joint("problem"), TypeError, "problem must be a CachingProblem"),
    (lambda: C.solve_joint(_problem(), vi_tol=0.0), ValueError, "vi_tol must lie in"),
    (lambda: C.solve_joint(_problem(), max_iter=0), ValueError, "max_iter must be"),
    (lambda: C.joint_costs([1, 2]), TypeError, "problem must be a CachingProblem"),
    (lambda: C.evaluate_joint_policy(_problem(), np.zeros(_problem().n_states)), TypeError,
     "policy must be an integer array"),
    (lambda: C.joint_transition_matrix(_problem(), np.zeros(3, dtype=int)), ValueError,
     "policy must be an integer array of shape"),
    (lambda: C.whittle_priorities("problem"), TypeError, "problem must be a CachingProblem"),
    (lambda: C.greedy_priorities(None), TypeError, "problem must be a CachingProblem"),
    (lambda: C.index_policy(_problem(), np.zeros(3)), TypeError, "priorities must be a tuple"),
    (lambda: C.index_policy(_problem(), (np.zeros(6), np.zeros(5))), ValueError,
     "one array of shape"),
    (lambda: C.CachingDynamics(_problem(), [[0.5, 0]], [[0, 0]]), TypeError,
     "initial_levels must hold integers"),
    (lambda: C.simulate_policy(_problem(), C.greedy_priorities(_problem()), initial_levels=[[0, 0]],
                               initial_cached=[[0, 0]], horizon=0, rng=0), ValueError,
     "horizon must be an integer"),
    (lambda: C.simulate_policy(_problem(), C.greedy_priorities(_problem()), initial_levels=[[0, 0]],
                               initial_cached=[[0, 0]], horizon=5.0, rng=0), TypeError,
     "horizon must be an integer"),
    (lambda: C.simulate_policy(_problem(), C.greedy_priorities(_problem()), initial_levels=[[0, 9]],
                               initial_cached=[[0, 0]], horizon=5, rng=0), ValueError,
     "initial_levels must lie in"),
])
def test_caching_functions_name_a_misuse(call, error, message):
    with pytest.raises(error, match=message):
        call()
