"""Tests of whittle_lib.mdp: solvers against each other, against pymdptoolbox, and invariants."""

import numpy as np
import pytest
from scipy import sparse

from whittle_lib import mdp


def random_mdp(n, A, seed, density=1.0):
    """A random MDP with dense or sparse rows (every state keeps a self-loop so rows are valid)."""
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(A):
        P = rng.random((n, n)) * (rng.random((n, n)) < density)
        P[np.arange(n), rng.integers(0, n, n)] += 0.1
        mats.append(P / P.sum(axis=1, keepdims=True))
    return mdp.FiniteMDP(tuple(mats), rng.normal(size=(A, n)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("density", [1.0, 0.2])
def test_rvi_matches_policy_iteration(seed, density):
    model = random_mdp(30, 3, seed, density)
    exact = mdp.policy_iteration(model)
    rvi = mdp.relative_value_iteration(model, stopping="span", tol=1e-11, tau=0.9)
    # gain to 1e-8: the span rule bounds the gain error by tol = 1e-11 ([P94] Thm 8.5.5)
    assert rvi.gain == pytest.approx(exact.gain, abs=1e-8)
    lo, hi = rvi.gain_bounds
    assert lo - 1e-12 <= exact.gain <= hi + 1e-12
    # Bellman residual of the exact solution: g + h = T h, up to sparse-solve rounding
    Th = model.q_values(exact.bias).max(axis=0)
    np.testing.assert_allclose(Th - exact.bias, exact.gain, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_discounted_value_iteration_matches_policy_iteration(seed):
    model = random_mdp(25, 3, seed, 0.3)
    pi = mdp.policy_iteration(model, discount=0.9)
    vi = mdp.value_iteration(model, discount=0.9, epsilon=1e-9)
    np.testing.assert_allclose(vi.value, pi.value, atol=1e-9)  # VI guarantee: epsilon/2
    np.testing.assert_array_equal(vi.policy, pi.policy)


def _pymdptoolbox():
    """Import pymdptoolbox with NumPy's error state restored (it is a test-only oracle)."""
    state = np.geterr()
    import mdptoolbox.mdp as toolbox

    np.seterr(**state)
    return toolbox


@pytest.mark.parametrize("seed", range(4))
def test_against_pymdptoolbox(seed):
    toolbox = _pymdptoolbox()
    model = random_mdp(12, 3, seed)
    P = np.array([m.toarray() for m in model.transitions])  # (A, S, S), as pymdptoolbox wants
    R = model.rewards.T.copy()                               # (S, A); both maximise reward
    # discounted: policy iteration, identical policy and value
    ref = toolbox.PolicyIteration(P, R, 0.95)
    ref.run()
    ours = mdp.policy_iteration(model, discount=0.95)
    np.testing.assert_array_equal(ours.policy, np.array(ref.policy))
    np.testing.assert_allclose(ours.value, np.array(ref.V), atol=1e-8)
    # average reward: pymdptoolbox's relative value iteration (stops at span < epsilon)
    rvi = toolbox.RelativeValueIteration(P, R, epsilon=1e-10, max_iter=100_000)
    rvi.run()
    avg = mdp.policy_iteration(model)
    assert avg.gain == pytest.approx(rvi.average_reward, abs=1e-8)
    np.testing.assert_array_equal(avg.policy, np.array(rvi.policy))


def test_multichain_policy_evaluation():
    # Two absorbing classes {0} and {1}, and a transient state 2 that goes to each w.p. 1/2:
    # gains 1, 3 and (1 + 3)/2 = 2 ([P94] Sec. 8.2).
    P = np.array([[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]])
    model = mdp.FiniteMDP((P,), np.array([[1.0, 3.0, 0.0]]))
    ev = mdp.evaluate_policy(model, np.zeros(3, dtype=int))
    np.testing.assert_allclose(ev.gain, [1, 3, 2])
    assert [c.tolist() for c in ev.classes] == [[0], [1]]
    # bias on the transient state: h2 = r2 - g2 + (h0 + h1)/2 = 0 - 2 + 0 = -2
    assert ev.bias[2] == pytest.approx(-2.0)


def test_multichain_policy_iteration_finds_best_class():
    # From state 0, action 1 moves to the better absorbing state 1; unichain PI would need the
    # gain-improvement step to see it.
    P0 = np.array([[1, 0], [0, 1.0]])
    P1 = np.array([[0, 1.0], [0, 1]])
    model = mdp.FiniteMDP((P0, P1), np.array([[1.0, 2.0], [1.0, 2.0]]))
    sol = mdp.policy_iteration(model, policy0=np.array([0, 0]))
    assert sol.gain == pytest.approx(2.0)
    assert sol.policy[0] == 1


def test_stationary_distribution_against_eigenvector():
    rng = np.random.default_rng(7)
    P = rng.random((8, 8))
    P /= P.sum(axis=1, keepdims=True)
    w, v = np.linalg.eig(P.T)
    ref = np.real(v[:, np.argmin(np.abs(w - 1))])
    ref /= ref.sum()
    np.testing.assert_allclose(mdp.stationary_distribution(sparse.csr_array(P)), ref, atol=1e-12)


def test_stationary_distribution_rejects_multichain():
    with pytest.raises(ValueError, match="unichain"):
        mdp.stationary_distribution(np.eye(2))


def test_paper_relative_rule_handles_zero_bias():
    # h_0 = 0 makes the paper's ratio 0/0 or x/0 at the first step: it must not stop there.
    model = random_mdp(10, 2, 3)
    sol = mdp.relative_value_iteration(model, tau=0.99999, tol=1e-5)
    assert sol.iterations > 1 and sol.converged


def test_nonconvergence_warns():
    model = random_mdp(10, 2, 1)
    with pytest.warns(RuntimeWarning, match="did not meet its stopping rule"):
        sol = mdp.relative_value_iteration(model, tol=1e-15, max_iter=3, stopping="span")
    assert not sol.converged and sol.iterations == 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(transitions=(np.array([[0.5, 0.4], [0, 1]]),), rewards=np.zeros((1, 2))),
     r"transitions\[0\] row 0 must sum to 1"),
    (dict(transitions=(np.array([[1.5, -0.5], [0, 1]]),), rewards=np.zeros((1, 2))),
     "non-negative"),
    (dict(transitions=(np.eye(2),), rewards=np.zeros((1, 3))), "rewards must have shape"),
    (dict(transitions=(np.eye(2),), rewards=np.array([[0.0, np.inf]])), "rewards must be finite"),
    (dict(transitions=(np.eye(2),), rewards=np.zeros((1, 2)), allowed=np.array([[True, False]])),
     "state 1 has none"),
])
def test_finite_mdp_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mdp.FiniteMDP(**kwargs)


def test_disallowed_rows_may_be_anything():
    P1 = np.zeros((2, 2))  # never allowed, so its empty rows are not an error
    model = mdp.FiniteMDP((np.eye(2), P1), np.zeros((2, 2)),
                          allowed=np.array([[True, True], [False, False]]))
    with pytest.raises(ValueError, match="not allowed"):
        mdp.evaluate_policy(model, np.array([1, 0]))


@pytest.mark.parametrize("call,match", [
    (lambda m: mdp.value_iteration(m, discount=1.0), "discount must lie in"),
    (lambda m: mdp.relative_value_iteration(m, tau=0.0), "tau must lie in"),
    (lambda m: mdp.relative_value_iteration(m, stopping="abs"), "stopping must be"),
    (lambda m: mdp.relative_value_iteration(m, reference_state=99), "reference_state"),
])
def test_solver_arguments_validated(call, match):
    with pytest.raises(ValueError, match=match):
        call(random_mdp(4, 2, 0))


# --- finite horizon, every stationary distribution, argument checks (issue 14) --------------


def _random_mdp(n, A, seed):
    rng = np.random.default_rng(seed)
    return mdp.FiniteMDP(transitions=list(rng.dirichlet(np.ones(n), size=(A, n))),
                         rewards=rng.normal(size=(A, n)))


def test_backward_induction_against_enumerating_every_policy():
    import itertools

    m = _random_mdp(3, 2, 4)
    T, beta = 3, 0.9
    sol = mdp.backward_induction(m, horizon=T, discount=beta, terminal=[1.0, 0.0, -1.0])
    P = [p.toarray() for p in m.transitions]
    best = np.full(3, -np.inf)
    # every Markov policy: an action per (time, state), 2^(3*3) = 512 of them
    for flat in itertools.product((0, 1), repeat=T * 3):
        acts = np.array(flat).reshape(T, 3)
        v = np.array([1.0, 0.0, -1.0])
        for t in range(T - 1, -1, -1):
            v = np.array([m.rewards[acts[t, x], x] + beta * P[acts[t, x]][x] @ v
                          for x in range(3)])
        best = np.maximum(best, v)
    np.testing.assert_allclose(sol.values[0], best, atol=1e-12)  # same sums, other order


def test_backward_induction_tends_to_the_discounted_value():
    m = _random_mdp(5, 3, 1)
    long = mdp.backward_induction(m, horizon=400, discount=0.9)
    # 0.9^400 * max|r| / (1 - 0.9) < 1e-16: the horizon's truncation is below rounding
    np.testing.assert_allclose(long.values[0], mdp.policy_iteration(m, discount=0.9).value,
                               atol=1e-9)


def test_every_stationary_distribution_of_a_multichain_chain():
    P = np.array([[0.5, 0.5, 0.0, 0.0, 0.0],
                  [0.2, 0.8, 0.0, 0.0, 0.0],
                  [0.1, 0.0, 0.4, 0.5, 0.0],   # transient
                  [0.0, 0.0, 0.0, 0.0, 1.0],
                  [0.0, 0.0, 0.0, 1.0, 0.0]])
    pis = mdp.stationary_distributions(P)
    assert pis.shape == (2, 5)
    np.testing.assert_allclose(pis @ P, pis, atol=1e-15)
    np.testing.assert_allclose(pis.sum(axis=1), 1.0)
    # by hand: {0, 1} has pi = (2/7, 5/7) (balance 0.5 pi_0 = 0.2 pi_1); {3, 4} alternates
    np.testing.assert_allclose(pis[np.argsort(pis[:, 0])],
                               [[0, 0, 0, 0.5, 0.5], [2 / 7, 5 / 7, 0, 0, 0]], atol=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda m: mdp.value_iteration(m, discount=0.9, max_iter=0), "max_iter must be an integer >= 1"),
    (lambda m: mdp.value_iteration(m, discount=0.9, epsilon=-1), "epsilon must be"),
    (lambda m: mdp.value_iteration(m, discount=0.9, v0=[0.0]), r"v0 must be a finite array"),
    (lambda m: mdp.policy_iteration(m, max_iter=0.5), "max_iter must be an integer"),
    (lambda m: mdp.policy_iteration(m, reference_state=7), "reference_state must be a state"),
    (lambda m: mdp.relative_value_iteration(m, max_iter=-3), "max_iter must be an integer"),
    (lambda m: mdp.relative_value_iteration(m, tol=0.0), "tol must be"),
    (lambda m: mdp.backward_induction(m, horizon=0), "horizon must be an integer >= 1"),
    (lambda m: mdp.backward_induction(m, horizon=2, discount=1.5), "discount must lie"),
])
def test_bad_arguments_raise_value_errors_that_name_them(call, message):
    with pytest.raises(ValueError, match=message):
        call(_random_mdp(3, 2, 0))


def test_communicating_classes_are_the_classes_of_mutual_reachability():
    from whittle_lib.models import robots
    for K, N in ((2, 1), (3, 2), (4, 3)):
        model, _ = robots.robots_mdp(0.1, 1.0, 1.4, K, N)
        classes = mdp.communicating_classes(model)
        # by definition: x and y communicate iff each reaches the other
        reach = sum(P.toarray() * model.allowed[a][:, None]
                    for a, P in enumerate(model.transitions)) > 0
        closure = reach | np.eye(model.n_states, dtype=bool)
        for _ in range(model.n_states):
            closure = closure | ((closure.astype(int) @ closure.astype(int)) > 0)
        label = np.empty(model.n_states, int)
        for i, c in enumerate(classes):
            label[c] = i
        np.testing.assert_array_equal(closure & closure.T, label[:, None] == label[None, :])
        assert mdp.is_communicating(model) == (len(classes) == 1)


@pytest.mark.parametrize("discount", [0.5, 0.95, 1.0])
def test_dense_policy_iteration_agrees_with_the_sparse_solvers(discount):
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, A = int(rng.integers(2, 9)), int(rng.integers(2, 4))
        P = rng.random((A, n, n)) + 0.05          # positive rows: every policy unichain
        P /= P.sum(axis=2, keepdims=True)
        r = rng.normal(size=(A, n))
        dense = mdp.dense_policy_iteration(P, r, discount=discount)
        model = mdp.FiniteMDP(list(P), r)
        sparse_sol = mdp.policy_iteration(model, discount=discount)
        if discount < 1:
            np.testing.assert_allclose(dense.value, sparse_sol.value, rtol=1e-10, atol=1e-10)
            assert dense.gain is None
        else:
            assert dense.gain == pytest.approx(sparse_sol.gain, rel=1e-10, abs=1e-12)
        np.testing.assert_array_equal(dense.policy, sparse_sol.policy)


def test_dense_policy_iteration_refuses_bad_arguments():
    P, r = np.eye(2)[None].repeat(2, 0), np.zeros((2, 2))
    with pytest.raises(ValueError, match="^P must have shape"):
        mdp.dense_policy_iteration(P[0], r, discount=0.5)
    with pytest.raises(ValueError, match="^discount must lie"):
        mdp.dense_policy_iteration(P, r, discount=0.0)
    with pytest.raises(ValueError, match="^tol must be"):
        mdp.dense_policy_iteration(P, r, discount=0.5, tol=-1.0)
    with pytest.raises(ValueError, match="^policy must hold"):
        mdp.dense_policy_iteration(P, r, discount=0.5, policy=[0, 2])
    with pytest.raises(ValueError, match="^max_iter must be"):
        mdp.dense_policy_iteration(P, r, discount=0.5, max_iter=0)


@pytest.mark.parametrize("objective", ["max", "min"])
def test_operator_policy_iteration_is_policy_iteration_on_matrices(objective):
    rng = np.random.default_rng(3)
    n, A, beta = 12, 3, 0.9
    P = rng.random((A, n, n))
    P /= P.sum(axis=2, keepdims=True)
    r = rng.normal(size=(A, n))
    sign = 1.0 if objective == "max" else -1.0
    q = lambda v: (r + beta * P @ v).T                                   # noqa: E731
    ev = lambda pol: np.linalg.solve(np.eye(n) - beta * P[pol, np.arange(n)],  # noqa: E731
                                     r[pol, np.arange(n)])
    sol = mdp.operator_policy_iteration(q, ev, n, objective=objective, vi_tol=1e-3)
    ref = mdp.policy_iteration(mdp.FiniteMDP(list(P), sign * r), discount=beta)
    np.testing.assert_allclose(sol.value, sign * ref.value, rtol=1e-10)
    np.testing.assert_array_equal(sol.policy, ref.policy)
    assert sol.residual < 1e-9
    with pytest.raises(ValueError, match="^objective must be"):
        mdp.operator_policy_iteration(q, ev, n, objective="maximise")
    with pytest.raises(ValueError, match="^vi_tol must be"):
        mdp.operator_policy_iteration(q, ev, n, vi_tol=0)
