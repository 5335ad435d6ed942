"""Tests of whittle_lib.mdp: solvers against each other, against pymdptoolbox, and invariants."""

import warnings

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
    return mdp.FiniteMDP(tuple(mats), rng.normal(size=(A, n)).T)     # rewards[s, a]


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
    Th = model.q_values(exact.bias).max(axis=1)
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
    R = model.rewards.copy()                                 # (S, A); both maximise reward
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
    model = mdp.FiniteMDP((P,), np.array([[1.0], [3.0], [0.0]]))
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
    model = mdp.FiniteMDP((P0, P1), np.array([[1.0, 1.0], [2.0, 2.0]]))   # rewards[s, a]
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
    (dict(transitions=(np.array([[0.5, 0.4], [0, 1]]),), rewards=np.zeros((2, 1))),
     r"transitions\[0\] row of state 0 sums to 0.9"),
    (dict(transitions=(np.array([[1.5, -0.5], [0, 1]]),), rewards=np.zeros((2, 1))),
     "negative probability in the row of state 0"),
    (dict(transitions=(np.eye(2),), rewards=np.zeros((3, 1))),
     r"rewards must be rewards\[s, a\], shape \(n_states, n_actions\) = \(2, 1\)"),
    (dict(transitions=(np.eye(2), np.eye(2)), rewards=np.zeros((2, 3))),
     r"rewards must be rewards\[s, a\]"),
    (dict(transitions=(np.eye(3), np.eye(3)), rewards=np.zeros((2, 3))),
     r"it is the transpose, pass rewards.T"),
    (dict(transitions=(np.eye(2),), rewards=np.array([[0.0], [np.inf]])),
     "rewards must be finite"),
    (dict(transitions=(np.eye(2),), rewards=np.zeros((2, 1)), allowed=np.array([[True], [False]])),
     "state 1 has none"),
    (dict(transitions=(np.eye(3), np.eye(3)), rewards=np.zeros((3, 2)),
          allowed=np.ones((2, 3), dtype=bool)), r"pass allowed.T"),
    (dict(transitions=np.eye(2), rewards=np.zeros((2, 1))), r"for one action pass \[P\]"),
])
def test_finite_mdp_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mdp.FiniteMDP(**kwargs)


def test_disallowed_rows_may_be_anything():
    P1 = np.zeros((2, 2))  # never allowed, so its empty rows are not an error
    model = mdp.FiniteMDP((np.eye(2), P1), np.zeros((2, 2)),
                          allowed=np.array([[True, False], [True, False]]))   # allowed[s, a]
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
                         rewards=rng.normal(size=(A, n)).T)


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
            v = np.array([m.rewards[x, acts[t, x]] + beta * P[acts[t, x]][x] @ v
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
    (lambda m: mdp.value_iteration(m, discount=0.9, max_iter=0),
     "max_iter must be an integer >= 1"),
    (lambda m: mdp.value_iteration(m, discount=0.9, epsilon=-1), r"epsilon must lie in \(0, inf\)"),
    (lambda m: mdp.value_iteration(m, discount=0.9, v0=[0.0]), r"v0 must have shape \(3,\)"),
    (lambda m: mdp.value_iteration(m, discount=0.9, v0=[0.0, np.nan, 1.0]), r"v0 is not finite"),
    (lambda m: mdp.policy_iteration(m, reference_state=7),
     r"reference_state must be an integer in \[0, 2\]"),
    (lambda m: mdp.relative_value_iteration(m, max_iter=-3), "max_iter must be an integer"),
    (lambda m: mdp.relative_value_iteration(m, tol=0.0), r"tol must lie in \(0, inf\)"),
    (lambda m: mdp.backward_induction(m, horizon=0), "horizon must be an integer >= 1"),
    (lambda m: mdp.backward_induction(m, 2, discount=1.5), r"discount must lie in \(0, 1\]"),
    (lambda m: mdp.backward_induction(m, 2, discount=None), "discount must be a number"),
    (lambda m: mdp.policy_iteration(m, discount=1.0), "pass discount=None for the average"),
    (lambda m: mdp.policy_iteration(m, policy0=[0, 2, 0]), "policy0 must hold actions in 0..1"),
    (lambda m: m.q_values([0.0, 1.0]), r"values must have shape \(3,\)"),
])
def test_bad_arguments_raise_value_errors_that_name_them(call, message):
    with pytest.raises(ValueError, match=message):
        call(_random_mdp(3, 2, 0))


@pytest.mark.parametrize("call, message", [
    (lambda m: mdp.policy_iteration(m, max_iter=0.5), "max_iter must be an integer, got float"),
    (lambda m: mdp.policy_iteration(m, discount="0.9"), "discount must be a number"),
    (lambda m: mdp.policy_iteration(m, policy0=[0.0, 1.0, 0.0]), "policy0 must be an array of int"),
    (lambda m: mdp.policy_iteration(m, evaluation=None), "evaluation must be one of"),
    (lambda m: mdp.relative_value_iteration(m, reference_state=[0, 1]),
     "use relative_value_iteration_many"),
    (lambda m: mdp.relative_value_iteration(m, stopping=("relative", "span")),
     "pass a callable rule"),
    (lambda m: mdp.relative_value_iteration_many(m, [0.5, 1.0]), "reference_states must be"),
    (lambda m: mdp.value_iteration(np.eye(2), discount=0.9), "mdp must be a FiniteMDP"),
    (lambda m: mdp.backward_induction(m, 2.0), "horizon must be an integer"),
])
def test_arguments_of_the_wrong_type_raise_type_errors_that_name_them(call, message):
    with pytest.raises(TypeError, match=message):
        call(_random_mdp(3, 2, 0))


def test_communicating_classes_are_the_classes_of_mutual_reachability():
    from whittle_lib.models import robots
    for K, N in ((2, 1), (3, 2), (4, 3)):
        model, _ = robots.robots_mdp(0.1, 1.0, 1.4, K, N)
        classes = mdp.communicating_classes(model)
        # by definition: x and y communicate iff each reaches the other
        reach = sum(P.toarray() * model.allowed[:, a][:, None]
                    for a, P in enumerate(model.transitions)) > 0
        closure = reach | np.eye(model.n_states, dtype=bool)
        for _ in range(model.n_states):
            closure = closure | ((closure.astype(int) @ closure.astype(int)) > 0)
        label = np.empty(model.n_states, int)
        for i, c in enumerate(classes):
            label[c] = i
        np.testing.assert_array_equal(closure & closure.T, label[:, None] == label[None, :])
        assert mdp.is_communicating(model) == (len(classes) == 1)


@pytest.mark.parametrize("discount", [0.5, 0.95, None])
def test_dense_policy_iteration_agrees_with_the_sparse_solvers(discount):
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, A = int(rng.integers(2, 9)), int(rng.integers(2, 4))
        P = rng.random((A, n, n)) + 0.05          # positive rows: every policy unichain
        P /= P.sum(axis=2, keepdims=True)
        r = rng.normal(size=(A, n)).T             # r[s, a]
        dense = mdp.dense_policy_iteration(P, r, discount=discount)
        model = mdp.FiniteMDP(P, r)               # a 3-d array P[a, s, s']
        sparse_sol = mdp.policy_iteration(model, discount=discount, evaluation="direct")
        auto = mdp.policy_iteration(model, discount=discount)
        assert auto.method == "dense"             # positive rows: the dense path
        np.testing.assert_array_equal(auto.policy, sparse_sol.policy)
        if discount is not None:
            np.testing.assert_allclose(dense.value, sparse_sol.value, rtol=1e-10, atol=1e-10)
            assert dense.gain is None
        else:
            assert dense.gain == pytest.approx(sparse_sol.gain, rel=1e-10, abs=1e-12)
        np.testing.assert_array_equal(dense.policy, sparse_sol.policy)


def test_dense_policy_iteration_refuses_bad_arguments():
    P, r = np.eye(2)[None].repeat(2, 0), np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"^P must be P\[a, s, s'\]"):
        mdp.dense_policy_iteration(P[0], r, discount=0.5)
    with pytest.raises(ValueError, match=r"^r must be r\[s, a\], shape \(n_states, n_actions\)"):
        mdp.dense_policy_iteration(P, np.zeros((2, 3)), discount=0.5)
    with pytest.raises(ValueError, match="^discount must lie"):
        mdp.dense_policy_iteration(P, r, discount=0.0)
    with pytest.raises(ValueError, match="^discount=1.0 is not a discount"):
        mdp.dense_policy_iteration(P, r, discount=1.0)
    with pytest.raises(ValueError, match="^tol must lie"):
        mdp.dense_policy_iteration(P, r, discount=0.5, tol=-1.0)
    # the one validator of stochastic matrices: a negative probability is refused (issue 32)
    bad = np.array([[[1.5, -0.5], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    with pytest.raises(ValueError, match=r"^P\[0\] has a negative probability"):
        mdp.dense_policy_iteration(bad, r, discount=0.5)
    with pytest.raises(ValueError, match=r"^P\[1\] row of state 0 sums to"):
        mdp.dense_policy_iteration_many(np.stack([P[0], 0.5 * P[1]]), r[None], discount=0.5)
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
    ref = mdp.policy_iteration(mdp.FiniteMDP(list(P), sign * r.T), discount=beta)
    np.testing.assert_allclose(sol.value, sign * ref.value, rtol=1e-10)
    np.testing.assert_array_equal(sol.policy, ref.policy)
    assert sol.residual < 1e-9
    with pytest.raises(ValueError, match="^objective must be"):
        mdp.operator_policy_iteration(q, ev, n, objective="maximise")
    with pytest.raises(ValueError, match="^vi_tol must lie"):
        mdp.operator_policy_iteration(q, ev, n, vi_tol=0)


# --- evaluation by structure, Krylov against LU, batched RVI (issue 24) ----------------------


def sparse_random_mdp(n, seed, nnz=6, A=2):
    """Random columns and weights: a pattern whose LU fills in (``evaluation="auto"`` iterates)."""
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(A):
        rows = np.repeat(np.arange(n), nnz)
        P = sparse.csr_array((rng.random(n * nnz), (rows, rng.integers(0, n, n * nnz))),
                             shape=(n, n))
        P = sparse.diags_array(1.0 / P.sum(axis=1)) @ P
        mats.append(sparse.csr_array(P))
    return mdp.FiniteMDP(tuple(mats), rng.random((A, n)).T)


def birth_death_mdp(n):
    x = np.arange(n)
    mats = []
    for service in (0.35, 0.6):
        up, down = np.where(x < n - 1, 0.4, 0.0), np.where(x > 0, service, 0.0)
        mats.append(sparse.diags_array([down[1:], 1.0 - up - down, up[:-1]], offsets=[-1, 0, 1],
                                       format="csr"))
    return mdp.FiniteMDP(tuple(mats), np.stack([-0.01 * x, -0.01 * x - 0.5], axis=1))


def test_auto_evaluation_follows_the_structure():
    from whittle_lib.models import robots
    assert not sparse_random_mdp(1500, 0)._direct_preferred       # expander: LU fills in
    assert birth_death_mdp(5000)._direct_preferred                  # tridiagonal
    assert robots.robots_mdp(0.05, 1.0, 2.4, 15, 69)[0]._direct_preferred  # a grid of 16 rows
    assert random_mdp(40, 2, 0, 0.2)._direct_preferred             # small: always direct
    n = 3000  # deterministic: every row has one non-zero, no fill-in
    shift = sparse.csr_array((np.ones(n), (np.arange(n), (np.arange(n) * 7 + 1) % n)))
    assert mdp.FiniteMDP((shift, sparse.identity(n, format="csr")),
                         np.zeros((n, 2)))._direct_preferred


def test_policy_matrix_is_the_fancy_indexed_rows():
    # the index arithmetic must give the very arrays of SciPy's row indexing (bits downstream)
    model = sparse_random_mdp(300, 1, A=3)
    policy = np.random.default_rng(2).integers(0, 3, 300)
    fast = mdp.policy_transition_matrix(model, policy)
    slow = sparse.csr_array(model._stacked[300 * policy + np.arange(300)])
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))


@pytest.mark.parametrize("seed", range(3))
def test_krylov_evaluation_against_lu_within_its_residual_bound(seed):
    model = sparse_random_mdp(1200, seed)
    policy = np.random.default_rng(seed).integers(0, 2, 1200)
    P, r = mdp._policy_matrix(model, policy), model.rewards[np.arange(1200), policy]
    beta = 0.99
    v_it, iterations = mdp._evaluate_discounted(P, r, beta, "iterative", np.zeros(1200), 1e-12)
    v_lu, _ = mdp._evaluate_discounted(P, r, beta, "direct", np.zeros(1200), 1e-12)
    residual = np.abs(v_it - beta * (P @ v_it) - r).max()
    assert 0 < iterations < 200 and residual <= 1e-12 * (1 + np.abs(v_it).max())
    # ||(I - beta P)^{-1}||_inf = 1 / (1 - beta): the error is at most residual / (1 - beta),
    # plus the LU's own rounding (a few ulps of |v| ~ 100)
    assert np.abs(v_it - v_lu).max() <= residual / (1 - beta) + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_iterative_policy_iteration_against_direct_and_value_iteration(seed):
    model = sparse_random_mdp(1500, seed)
    it = mdp.policy_iteration(model, discount=0.95)
    direct = mdp.policy_iteration(model, discount=0.95, evaluation="direct")
    vi = mdp.value_iteration(model, discount=0.95, epsilon=1e-9)
    mpi = mdp.modified_policy_iteration(model, discount=0.95, epsilon=1e-9)
    assert it.method == "iterative" and direct.method == "direct"
    np.testing.assert_array_equal(it.policy, direct.policy)
    np.testing.assert_array_equal(vi.policy, direct.policy)
    np.testing.assert_array_equal(mpi.policy, direct.policy)
    # the reported Bellman residual bounds the value error by residual / (1 - beta)
    assert it.residual < 1e-9
    np.testing.assert_allclose(it.value, direct.value, atol=it.residual / 0.05 + 1e-11)
    # value iteration and MPI with the span rule: within epsilon / 2 of the optimum
    np.testing.assert_allclose(vi.value, direct.value, atol=0.5e-9)
    np.testing.assert_allclose(mpi.value, direct.value, atol=0.5e-9)
    # a warm start changes the path, not the optimum
    warm = mdp.policy_iteration(model, discount=0.95, evaluation="direct", warm_start=30)
    np.testing.assert_array_equal(warm.policy, direct.policy)


@pytest.mark.parametrize("seed", range(3))
def test_iterative_average_policy_iteration_against_direct_and_rvi(seed):
    model = sparse_random_mdp(1500, seed)
    it = mdp.policy_iteration(model)
    direct = mdp.policy_iteration(model, evaluation="direct")
    rvi = mdp.relative_value_iteration(model, stopping="span", tol=1e-11)
    assert it.method == "iterative" and it.converged
    np.testing.assert_array_equal(it.policy, direct.policy)
    # gains: the bias equations are solved to a 1e-12 relative residual on both sides
    assert it.gain == pytest.approx(direct.gain, abs=1e-11)
    assert rvi.gain == pytest.approx(direct.gain, abs=1e-11)  # span rule: error <= tol
    np.testing.assert_allclose(it.bias, direct.bias, atol=1e-9)
    assert it.residual < 1e-10


def test_iterative_evaluation_factorises_a_multichain_policy():
    # the first policy (action 0 everywhere) has two absorbing states: no unichain equations
    P0 = np.array([[1, 0], [0, 1.0]])
    P1 = np.array([[0, 1.0], [0, 1]])
    model = mdp.FiniteMDP((P0, P1), np.array([[1.0, 1.0], [2.0, 2.0]]))
    sol = mdp.policy_iteration(model, policy0=np.array([0, 0]), evaluation="iterative")
    assert sol.gain == pytest.approx(2.0) and sol.policy[0] == 1


@pytest.mark.parametrize("discount", [0.9, None])
def test_iterative_policy_iteration_against_a_dense_solve(discount):
    rng = np.random.default_rng(11)
    P = rng.random((3, 30, 30)) + 0.01  # positive: every policy unichain
    P /= P.sum(axis=2, keepdims=True)
    r = rng.normal(size=(3, 30)).T
    dense = mdp.dense_policy_iteration(P, r, discount=discount)
    sol = mdp.policy_iteration(mdp.FiniteMDP(list(P), r), discount=discount,
                               evaluation="iterative")
    np.testing.assert_array_equal(sol.policy, dense.policy)
    if discount is not None:  # residual 1e-12 relative: values ~10, errors below 1e-10
        np.testing.assert_allclose(sol.value, dense.value, atol=1e-10)
    else:
        assert sol.gain == pytest.approx(dense.gain, abs=1e-11)


def test_banded_chain_takes_the_direct_path_and_is_exact():
    model = birth_death_mdp(3000)
    sol = mdp.policy_iteration(model)
    assert sol.method == "direct" and sol.converged
    # optimality: T h = h + g everywhere, up to LU rounding of biases of size ~1e3
    assert sol.residual < 1e-8
    threshold = np.flatnonzero(sol.policy[:200] == 1)
    assert threshold.size and np.all(sol.policy[threshold[0]:200] == 1)  # serve fast from x*


def _old_rvi(mdp_, tau, reference_state, tol, stopping, max_iter):
    """The loop of relative_value_iteration before issue 24, verbatim: the reference for bits."""
    h = np.zeros(mdp_.n_states)
    others = np.ones(mdp_.n_states, dtype=bool)
    others[reference_state] = False
    for k in range(1, max_iter + 1):
        Th = mdp_.q_values(h).max(axis=1)
        h_new = (1 - tau) * h + tau * (Th - Th[reference_state])
        if stopping == "relative":
            delta = np.abs(h_new[others] - h[others])
            base = np.abs(h[others])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(base > 0, delta / base, np.where(delta > 0, np.inf, 0.0))
            statistic = float(ratio.max()) if ratio.size else 0.0
        else:
            diff = Th - h
            statistic = float(diff.max() - diff.min())
        h = h_new
        if statistic < tol:
            break
    return h, k, statistic


@pytest.mark.parametrize("stopping,tau,tol", [("relative", 0.99999, 1e-5), ("span", 0.5, 1e-9)])
def test_one_reference_state_keeps_the_old_iterates_bit_for_bit(stopping, tau, tol):
    from whittle_lib.models import robots
    model, space = robots.robots_mdp(0.1, 1.0, 1.4, 5, 9)
    ref = space.state(0, 1, 2)
    h, k, statistic = _old_rvi(model, tau, ref, tol, stopping, 100_000)
    sol = mdp.relative_value_iteration(model, tau=tau, reference_state=ref, tol=tol,
                                       stopping=stopping)
    assert sol.iterations == k and sol.residual == statistic
    np.testing.assert_array_equal(sol.bias, h)
    assert sol.gain == model.q_values(h).max(axis=1)[ref]


@pytest.mark.parametrize("refs", [[0, 7, 24], list(range(0, 24, 2))])   # below, above 8
@pytest.mark.parametrize("stopping", ["relative", "span", "norm"])
def test_batched_rvi_follows_each_single_run(stopping, refs):
    model = random_mdp(25, 3, 4, 0.3)
    batch = mdp.relative_value_iteration_many(model, refs, tau=0.7, tol=1e-9, stopping=stopping)
    assert isinstance(batch, mdp.RelativeValueBatch) and batch.converged.all()
    for j, x in enumerate(refs):
        one = mdp.relative_value_iteration(model, tau=0.7, reference_state=x, tol=1e-9,
                                           stopping=stopping)
        assert batch.iterations[j] == one.iterations
        # the loop makes one sparse matrix-vector product per column, as a single run does:
        # the same bits
        np.testing.assert_array_equal(batch.bias[:, j], one.bias)
        assert batch.gain[j] == one.gain
        np.testing.assert_array_equal(batch.policy[:, j], one.policy)


def test_batched_rvi_stops_each_column_on_its_own():
    # Each rule alone, on the same columns: each column stops at its own iteration, and the
    # columns do stop apart (the batch is the single runs side by side, not one run).
    model = random_mdp(25, 3, 4, 0.3)
    start = np.random.default_rng(2).standard_normal((25, 3))
    counts = {}
    for rule in ("relative", "norm", "span"):
        batch = mdp.relative_value_iteration_many(model, [0, 7, 24], tau=0.7, tol=1e-7,
                                                  stopping=rule, h0=start)
        assert batch.converged.all() and (batch.residual < 1e-7).all()
        counts[rule] = tuple(batch.iterations)
    assert len(set(counts.values())) > 1


def test_each_stopping_rule_finds_the_policy_iteration_gain():
    # Independent algorithm: multichain policy iteration's exact gain. The span rule bounds the
    # gain's error by tol ([P94] Thm. 8.5.5), so 1e-9 plus rounding; the relative and norm rules
    # bound only the change of h, and on this mixing chain stop within 1e-6 of it.
    model = random_mdp(30, 2, 11, 0.4)
    exact = mdp.policy_iteration(model).gain
    for rule, atol in (("span", 1e-8), ("relative", 1e-6), ("norm", 1e-6)):
        runs = mdp.relative_value_iteration_many(model, [0, 29], tau=0.9, tol=1e-9,
                                                 stopping=rule)
        np.testing.assert_allclose(runs.gain, exact, rtol=0, atol=atol)
        assert runs.converged.all()


def test_several_stopping_rules_at_once_are_no_mode_of_the_library():
    # the "several rules in one pass" mode moved to the apparatus (a callable rule): a tuple
    # is refused with a message that says what to pass
    model = random_mdp(5, 2, 1)
    for bad in (("relative", "span"), ["relative"]):
        with pytest.raises(TypeError, match="pass a callable rule"):
            mdp.relative_value_iteration(model, stopping=bad)
        with pytest.raises(TypeError, match="pass a callable rule"):
            mdp.relative_value_iteration_many(model, [0], stopping=bad)
    with pytest.raises(ValueError, match="stopping must be one of"):
        mdp.relative_value_iteration(model, stopping="sup")


def test_the_single_run_is_the_batch_of_one_bit_for_bit():
    # relative_value_iteration calls relative_value_iteration_many's core with one reference
    # state: every field of the single result is the batch's column, bit for bit, with both
    # dampings (the gain bounds of damping="expectation" from the original model's bias tau h)
    model = random_mdp(20, 3, 9, 0.5)
    start = np.random.default_rng(4).standard_normal(20)
    for damping in ("update", "expectation"):
        one = mdp.relative_value_iteration(model, tau=0.6, reference_state=5, tol=1e-9,
                                           stopping="span", h0=start, damping=damping)
        batch = mdp.relative_value_iteration_many(model, [5, 5], tau=0.6, tol=1e-9,
                                                  stopping="span", h0=start, damping=damping)
        assert isinstance(one, mdp.AverageSolution)
        assert isinstance(batch, mdp.RelativeValueBatch)
        for j in (0, 1):
            assert one.bias.tobytes() == batch.bias[:, j].tobytes()
            assert one.gain == batch.gain[j] and one.iterations == batch.iterations[j]
            assert one.gain_bounds == tuple(batch.gain_bounds[j])
            assert one.policy.tolist() == batch.policy[:, j].tolist()
            assert one.residual == batch.residual[j]
        lo, hi = one.gain_bounds
        assert lo - 1e-12 <= mdp.policy_iteration(model).gain <= hi + 1e-12


def test_a_batch_is_a_table():
    pd = pytest.importorskip("pandas")
    model = random_mdp(12, 2, 1)
    batch = mdp.relative_value_iteration_many(model, [3, 1, 7], stopping="span", tol=1e-10)
    frame = batch.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.index.tolist() == [3, 1, 7]
    np.testing.assert_array_equal(frame["gain"], batch.gain)
    assert list(frame.columns) == ["gain", "gain_lower", "gain_upper", "iterations", "residual",
                                   "converged"]


def test_column_max_is_max():
    # The transposed reduction of the stopping rules gives NumPy's maxima (a maximum is exact),
    # on both sides of its switch at 16 columns.
    rng = np.random.default_rng(5)
    for m in (1, 2, 15, 16, 40):
        a = rng.standard_normal((50, m))
        assert np.array_equal(mdp._column_max(a), a.max(axis=0))


@pytest.mark.parametrize("m", [1, 3, 16, 40])
def test_relative_rule_is_the_ratio_rule_as_written(m):
    # The rule's fmax over a plain ratio against its definition written out: the ratio where
    # h != 0, infinite where h = 0 and h_new != 0, 0 where both are 0 and at x_hat; the same
    # bits (a maximum of the same quotients is exact).
    rng = np.random.default_rng(m)
    h = rng.standard_normal((60, m))
    h[::5] = 0.0
    h_new = h + 1e-3 * rng.standard_normal((60, m))
    h_new[::10] = 0.0
    refs = rng.integers(0, 60, m)
    delta, base = np.abs(h_new - h), np.abs(h)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(base > 0, delta / base, np.where(delta > 0, np.inf, 0.0))
    ratio[refs, np.arange(m)] = 0.0
    np.testing.assert_array_equal(mdp._relative_rule(h_new, h, None, refs), ratio.max(axis=0))
    h_new[:, 0] = h[:, 0] = 0.0   # nothing moves: the statistic is 0, not nan
    assert mdp._relative_rule(h_new, h, None, refs)[0] == 0.0
    h_new[1::5, 0] = 1.0          # h = 0 and h_new != 0: infinite
    assert mdp._relative_rule(h_new, h, None, refs)[0] == np.inf


def test_a_callable_stopping_rule_is_applied_per_column():
    model = random_mdp(12, 2, 1)
    calls = []

    def fixed_count(h_new, h, Th, refs):
        calls.append(h.shape)
        return np.where(np.full(refs.size, len(calls) >= 7), 0.0, 1.0)

    batch = mdp.relative_value_iteration_many(model, [1, 2], stopping=fixed_count, tol=0.5)
    assert batch.iterations.tolist() == [7, 7] and calls[0] == (12, 2)
    one = mdp.relative_value_iteration(model, reference_state=3, stopping="span", tol=1e-10)
    lo, hi = one.gain_bounds
    assert lo <= one.gain <= hi and hi - lo < 1e-9  # the span rule's bracket


def test_a_callable_rule_sees_the_running_columns_in_their_order():
    # The public hook's contract (relative_value_iteration_many): the rule is called with the
    # columns still running, in their order; a column whose statistic is below tol leaves.
    model = random_mdp(12, 2, 1)
    seen = []
    stop_at = np.array([3, 1, 4, 1, 5])

    def rule(h_new, h, Th, refs):
        k = len(seen) + 1
        seen.append(refs.tolist())
        alive = [j for j in range(5) if stop_at[j] >= k]
        assert refs.tolist() == [int(x) for x in np.array([0, 1, 2, 3, 4])[alive]]
        return np.where(stop_at[alive] == k, 0.0, 1.0)

    batch = mdp.relative_value_iteration_many(model, [0, 1, 2, 3, 4], stopping=rule, tol=0.5)
    assert batch.iterations.tolist() == stop_at.tolist()
    assert seen == [[0, 1, 2, 3, 4], [0, 2, 4], [0, 2, 4], [2, 4], [4]]


@pytest.mark.parametrize("call, message", [
    (lambda m: mdp.policy_iteration(m, evaluation="lu"), "evaluation must be"),
    (lambda m: mdp.policy_iteration(m, warm_start=-1), "warm_start must be"),
    (lambda m: mdp.policy_iteration(m, tol=0.0), "tol must lie"),
    (lambda m: mdp.value_iteration(m, discount=0.9, stopping="norm"), "stopping must be"),
    (lambda m: mdp.modified_policy_iteration(m, discount=0.9, sweeps=-2), "sweeps must be"),
    (lambda m: mdp.relative_value_iteration_many(m, [0, 9]), "reference_states"),
    (lambda m: mdp.relative_value_iteration_many(m, []), "at least one"),
    (lambda m: mdp.relative_value_iteration(m, h0=np.zeros((3, 4))), "h0 must"),
    (lambda m: mdp.relative_value_iteration(m, damping="cost"), "damping must be"),
])
def test_new_arguments_are_validated(call, message):
    with pytest.raises(ValueError, match=message):
        call(_random_mdp(3, 2, 0))


def test_robots_warm_start_keeps_the_optimum_bit_for_bit():
    # the exact optimum of models/robots.py warm-starts policy iteration; the result must be
    # the old path's to the bit (a Table 2 pool, where the old path took 30+ evaluations); so
    # must the generic call, whose default warm start (100 sweeps) is new in 1.0
    from whittle_lib.models import robots
    model, space = robots.robots_mdp(0.05, 1.0, 2.4, 5, 69)
    new = robots._exact_solution(model, space)
    old = mdp.policy_iteration(model, policy0=robots.static_policy(space), evaluation="direct",
                               warm_start=0)
    generic = mdp.policy_iteration(model)
    assert new.iterations < old.iterations and generic.iterations < old.iterations
    same_row = (space.s == robots.DEPARTURE) & (space.r == space.N)  # both actions one row
    for sol in (new, generic):
        assert sol.gain == old.gain
        np.testing.assert_array_equal(sol.bias, old.bias)
        np.testing.assert_array_equal(sol.policy[~same_row], old.policy[~same_row])


def _dense_policy_iteration_before_1_0(P, r, *, discount, policy=None, tol=0.0,
                                       max_iter=None):
    """mdp.dense_policy_iteration before issue 32 (its own loop, r[a, s], discount 1.0 for the
    average reward), verbatim but for the checks: the reference for bits."""
    P = np.asarray(P, dtype=float)
    r = np.asarray(r, dtype=float)
    n_actions, n = r.shape
    policy = np.zeros(n, dtype=int) if policy is None else np.asarray(policy, dtype=int).copy()
    max_iter = 10 * n + 100 if max_iter is None else max_iter
    states = np.arange(n)
    scaled = discount * P
    for iteration in range(1, max_iter + 1):
        P_pi, r_pi = P[policy, states], r[policy, states]
        if discount < 1.0:
            value = np.linalg.solve(np.eye(n) - discount * P_pi, r_pi)
            gain = None
        else:
            A = np.eye(n) - P_pi
            A[:, 0] = 1.0
            value = np.linalg.solve(A, r_pi)
            gain = float(value[0])
            value[0] = 0.0
        q = np.stack([r[a] + scaled[a] @ value for a in range(n_actions)])
        best = np.argmax(q, axis=0)
        switch = q[best, states] - q[policy, states] > tol
        if not switch.any():
            return value, gain, q, policy, iteration
        policy = np.where(switch, best, policy)
    raise RuntimeError


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99, None])
def test_dense_policy_iteration_keeps_its_bits(discount):
    # dense_policy_iteration now runs the batched core with one problem: the same numbers as
    # its own loop before 1.0, bit for bit, in both criteria, from a given start and tolerance
    rng = np.random.default_rng(23)
    for _ in range(25):
        n, A = int(rng.integers(2, 30)), int(rng.integers(2, 4))
        P = rng.exponential(size=(A, n, n)) + 0.01
        P /= P.sum(axis=-1, keepdims=True)
        r = rng.normal(size=(A, n)) * rng.choice([0.1, 1.0, 10.0])
        start = rng.integers(0, A, n)
        tol = float(rng.choice([0.0, 1e-9]))
        old = _dense_policy_iteration_before_1_0(P, r, discount=1.0 if discount is None
                                                 else discount, policy=start, tol=tol)
        new = mdp.dense_policy_iteration(P, r.T, discount=discount, policy=start, tol=tol)
        assert new.value.tobytes() == old[0].tobytes() and new.gain == old[1]
        assert new.q.tobytes() == np.ascontiguousarray(old[2].T).tobytes()
        assert new.policy.tolist() == old[3].tolist() and new.iterations == old[4]
        assert new.discount == discount


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99, None])
def test_dense_policy_iteration_many_is_the_single_version_bit_for_bit(discount):
    # Many reward tables on one chain (a sweep over a subsidy): each solution must be the
    # single version's, bit for bit (the same LAPACK solve and BLAS products per problem).
    rng = np.random.default_rng(17)
    n, A, k = 7, 3, 40
    P = rng.exponential(size=(A, n, n)) * (rng.random((A, n, n)) < 0.6)
    P[:, np.arange(n), np.arange(n)] += 0.05
    P /= P.sum(axis=-1, keepdims=True)
    r = rng.normal(size=(k, n, A)) * rng.choice([0.1, 1.0, 10.0], size=(k, 1, 1))
    tol = rng.choice([0.0, 1e-9], size=k)
    many = mdp.dense_policy_iteration_many(P, r, discount=discount, tol=tol)
    assert len(many) == k
    for i, s in enumerate(many):
        one = mdp.dense_policy_iteration(P, r[i], discount=discount, tol=tol[i])
        assert s.value.tobytes() == one.value.tobytes()
        assert s.q.tobytes() == one.q.tobytes()
        assert s.policy.tolist() == one.policy.tolist()
        assert s.iterations == one.iterations and s.gain == one.gain
    assert max(s.iterations for s in many) > 1      # policies that had to improve


def test_dense_policy_iteration_many_refuses_bad_arguments():
    P = np.full((2, 3, 3), 1 / 3)
    r = np.zeros((4, 3, 2))
    with pytest.raises(ValueError, match="P must"):
        mdp.dense_policy_iteration_many(P[0], r, discount=0.5)
    with pytest.raises(ValueError, match=r"r must be r\[i, s, a\]"):
        mdp.dense_policy_iteration_many(P, r[0], discount=0.5)
    with pytest.raises(ValueError, match="discount"):
        mdp.dense_policy_iteration_many(P, r, discount=1.0)
    with pytest.raises(ValueError, match="tol"):
        mdp.dense_policy_iteration_many(P, r, discount=0.5, tol=-1.0)
    with pytest.raises(RuntimeError, match="still improve"):
        mdp.dense_policy_iteration_many(P, r + np.array([0.0, 1.0]), discount=0.5, max_iter=1)


def _q_batch_before_1_0(mdp_, H, scale=None):
    """mdp._q_batch before issue 32: ``q[a, x, j] = r[a, x] + scale (P[a] H[:, j])[x]``."""
    A, n, m = mdp_.n_actions, mdp_.n_states, H.shape[1]
    product = mdp_._stacked @ H[:, 0] if m == 1 else mdp_._stacked @ H
    if scale is not None:
        product = scale * product
    return mdp_._masked_rewards[:, :, None] + product.reshape(A, n, m)


def _rvi_loop_before_rows(mdp_, H, refs, tau, tol, rules, max_iter, scale=None):
    """mdp._rvi_loop before its iterates became rows (issue 24 goal 5), verbatim but for the
    names: the reference for bits (several rules: the apparatus' ReadingsRule, tested in
    tests/apparatus/test_papers_robots_1999.py)."""
    m, n_rules = refs.size, len(rules)
    iterations = np.full((n_rules, m), max_iter, dtype=np.int64)
    statistic = np.full((n_rules, m), np.inf)
    stopped = np.zeros((n_rules, m), dtype=bool)
    frozen = [H] if n_rules == 1 else [None] * n_rules
    active = np.arange(m)
    for k in range(1, max_iter + 1):
        Hs = H[:, active] if active.size < m else H
        ref = refs[active]
        if scale is None:
            Th = _q_batch_before_1_0(mdp_, Hs).max(axis=0)
            Hn = (1 - tau) * Hs + tau * (Th - Th[ref, np.arange(active.size)])
        else:
            Tt = _q_batch_before_1_0(mdp_, Hs, scale).max(axis=0)
            Hn = (1 - tau) * Hs + (Tt - Tt[ref, np.arange(active.size)])
            Th = (1 - tau) * Hs + Tt
        stats = [np.asarray(rule(Hn, Hs, Th, ref), dtype=float).reshape(active.size)
                 for rule in rules]
        H[:, active] = Hn
        for i, stat in enumerate(stats):
            watching = ~stopped[i, active]
            statistic[i, active[watching]] = stat[watching]
            done = watching & (stat < tol)
            if done.any():
                iterations[i, active[done]] = k
                stopped[i, active[done]] = True
                if n_rules > 1:
                    if frozen[i] is None:
                        frozen[i] = np.zeros_like(H)
                    frozen[i][:, active[done]] = Hn[:, done]
        active = active[~stopped[:, active].all(axis=0)]
        if active.size == 0:
            break
    for i in range(n_rules):
        if n_rules > 1 and not stopped[i].all():
            if frozen[i] is None:
                frozen[i] = np.zeros_like(H)
            frozen[i][:, ~stopped[i]] = H[:, ~stopped[i]]
    return [(frozen[i], iterations[i], statistic[i]) for i in range(n_rules)]


def _robots_model():
    from whittle_lib.models import robots
    return robots.robots_mdp(0.1, 1.0, 1.4, 5, 9)[0]


@pytest.mark.parametrize("model_of", [_robots_model, lambda: random_mdp(25, 3, 4, 0.3),
                                      lambda: random_mdp(40, 2, 7, 1.0)])
@pytest.mark.parametrize("refs", [[3], [0, 7, 24], [5, 5, 1, 0], list(range(0, 24, 2))])
@pytest.mark.parametrize("rule", ["relative", "span", "norm"])
@pytest.mark.parametrize("scale", [None, "tau"])
def test_rvi_loop_by_rows_keeps_the_old_iterates_bit_for_bit(model_of, refs, rule, scale):
    # The loop keeps its iterates as rows (one contiguous row per reference state); every
    # result must be the old (n, m) loop's to the bit: iterates, counts and statistics, with
    # each damping, from a random h0 and with columns that stop apart.
    model = model_of()
    refs = np.array(refs, dtype=np.int64)
    tau = 0.9
    H0 = np.random.default_rng(refs.size).standard_normal((model.n_states, refs.size))
    H0[refs, np.arange(refs.size)] = 0.0
    named = mdp.STOPPING_RULES[rule]
    args = (refs, tau, 1e-7)
    rest = (5_000, None if scale is None else tau)
    (h_old, k_old, s_old), = _rvi_loop_before_rows(model, H0.copy(), *args, [named], *rest)
    h_new, k_new, s_new = mdp._rvi_loop(model, H0.copy(), *args, named, *rest)
    assert np.array_equal(h_old, h_new) and h_new.flags.c_contiguous
    assert np.array_equal(k_old, k_new) and np.array_equal(s_old, s_new)


# --- finite horizon against the peers' own test cases, capped value iteration (issue 32) -----

def _forest(p=0.1, r1=4.0, r2=2.0):
    """pymdptoolbox's ``example.forest()`` (S = 3): action 0 waits, 1 cuts; rewards[s, a]."""
    wait = np.array([[p, 1 - p, 0.0], [p, 0.0, 1 - p], [p, 0.0, 1 - p]])
    cut = np.array([[1.0, 0.0, 0.0]] * 3)
    return mdp.FiniteMDP([wait, cut], rewards=[[0.0, 0.0], [0.0, 1.0], [r1, r2]])


def test_backward_induction_reproduces_pymdptoolbox_finite_horizon_example():
    # pymdptoolbox's own test of FiniteHorizon: the doctest of mdptoolbox.mdp.FiniteHorizon
    # (its tests/test_FiniteHorizon.py holds no case), forest(), discount 0.9, N = 3, printed
    # to 4 decimals as V[s, t] and policy[s, t]; ours are values[t, s] and policy[t, s].
    printed_V = [[2.6973, 0.81, 0.0, 0.0],
                 [5.9373, 3.24, 1.0, 0.0],
                 [9.9373, 7.24, 4.0, 0.0]]
    printed_policy = [[0, 0, 0], [0, 0, 1], [0, 0, 0]]
    sol = mdp.backward_induction(_forest(), 3, discount=0.9)
    np.testing.assert_allclose(sol.values.T, printed_V, rtol=0, atol=0.5e-4)  # the last digit
    np.testing.assert_array_equal(sol.policy.T, printed_policy)
    assert sol.horizon == 3 and sol.discount == 0.9


def _inventory():
    """QuantEcon's TestFiniteHorizon model (Puterman 2005, Secs. 3.2 and 4.6.1, single-product
    stochastic inventory control), from its state-action pairs to rewards[s, a] and
    allowed[s, a]: in state s (the stock) the orders a = 0 .. 3 - s are allowed."""
    s_indices = [0, 0, 0, 0, 1, 1, 1, 2, 2, 3]
    a_indices = [0, 1, 2, 3, 0, 1, 2, 0, 1, 0]
    R = [0., -1., -2., -5., 5., 0., -3., 6., -1., 5.]
    Q = [[1., 0., 0., 0.], [0.75, 0.25, 0., 0.], [0.25, 0.5, 0.25, 0.], [0., 0.25, 0.5, 0.25],
         [0.75, 0.25, 0., 0.], [0.25, 0.5, 0.25, 0.], [0., 0.25, 0.5, 0.25],
         [0.25, 0.5, 0.25, 0.], [0., 0.25, 0.5, 0.25], [0., 0.25, 0.5, 0.25]]
    P = np.zeros((4, 4, 4))           # rows of disallowed pairs stay zero: never used
    rewards = np.zeros((4, 4))
    allowed = np.zeros((4, 4), dtype=bool)
    for s, a, r, q in zip(s_indices, a_indices, R, Q):
        P[a, s], rewards[s, a], allowed[s, a] = q, r, True
    return mdp.FiniteMDP(P, rewards, allowed), (R, Q, s_indices, a_indices)


def test_backward_induction_reproduces_quantecon_finite_horizon_test():
    # QuantEcon's own test (quantecon/markov/tests/test_ddp.py, TestFiniteHorizon): T = 3,
    # beta = 1 (the total reward, which backward_induction takes as discount=1.0), v_T = 0;
    # exact fractions, so the tolerance is rounding
    vs_expected = [[67 / 16, 129 / 16, 194 / 16, 227 / 16],
                   [2, 25 / 4, 10, 21 / 2],
                   [0, 5, 6, 5],
                   [0, 0, 0, 0]]
    sigmas_expected = [[3, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0]]
    model, _ = _inventory()
    sol = mdp.backward_induction(model, 3)
    np.testing.assert_allclose(sol.values, vs_expected, rtol=1e-15)
    np.testing.assert_array_equal(sol.policy, sigmas_expected)
    assert sol.discount == 1.0


def test_backward_induction_against_quantecon_on_its_model():
    markov = pytest.importorskip("quantecon.markov", reason="QuantEcon is the peer here")
    model, (R, Q, s_indices, a_indices) = _inventory()
    with warnings.catch_warnings():   # beta = 1: QuantEcon warns its infinite-horizon solvers off
        warnings.simplefilter("ignore", UserWarning)
        ddp = markov.DiscreteDP(R, Q, 1, s_indices, a_indices)
    terminal = np.array([0.5, -1.0, 2.0, 0.0])
    vs, sigmas = markov.backward_induction(ddp, 5, v_term=terminal)
    sol = mdp.backward_induction(model, 5, terminal=terminal)
    np.testing.assert_allclose(sol.values, vs, rtol=0, atol=1e-12)   # sums in another order
    np.testing.assert_array_equal(sol.policy, sigmas)


@pytest.mark.parametrize("discount", [0.9, 1.0])
def test_backward_induction_against_both_peers_on_random_mdps(discount):
    markov = pytest.importorskip("quantecon.markov", reason="QuantEcon is a peer here")
    toolbox = _pymdptoolbox() if _has("mdptoolbox") else pytest.skip("pymdptoolbox is absent")
    rng = np.random.default_rng(31)
    for _ in range(5):
        n, A, T = int(rng.integers(2, 12)), int(rng.integers(2, 4)), int(rng.integers(1, 8))
        P = rng.dirichlet(np.ones(n), size=(A, n))
        R = rng.normal(size=(n, A))
        h = rng.normal(size=n)
        sol = mdp.backward_induction(mdp.FiniteMDP(P, R), T, terminal=h, discount=discount)
        with warnings.catch_warnings():   # beta = 1: QuantEcon warns its infinite-horizon off
            warnings.simplefilter("ignore", UserWarning)
            ddp = markov.DiscreteDP(R, P.transpose(1, 0, 2), discount)
        vs, sigmas = markov.backward_induction(ddp, T, v_term=h)
        np.testing.assert_allclose(sol.values, vs, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(sol.policy, sigmas)       # random rewards: no ties
        fh = toolbox.FiniteHorizon(P, R, discount, T, h=h)
        fh.run()
        np.testing.assert_allclose(sol.values, fh.V.T, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(sol.policy, fh.policy.T)


def _has(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


def test_capped_value_iteration_is_backward_induction():
    # The peers' finite-horizon cases "as capped value iteration": value_iteration stopped at
    # max_iter returns its last iterate, the max_iter-stage value from v0, bit for bit the
    # backward induction's (the same Bellman sums); no span shift, whose discount / (1 -
    # discount) factor would add 4.5e12 at discount 1 - 1e-12 (issue 32)
    for model, discount in ((_forest(), 0.9), (_forest(), 1 - 1e-12)):
        fh = mdp.backward_induction(model, 3, discount=discount)
        with pytest.warns(RuntimeWarning, match="the value returned is the last iterate"):
            vi = mdp.value_iteration(model, discount=discount, max_iter=3, epsilon=1e-300)
        assert not vi.converged and vi.iterations == 3
        assert vi.value.tobytes() == fh.values[0].tobytes()
        np.testing.assert_array_equal(vi.policy, fh.policy[0])
        with pytest.warns(RuntimeWarning, match="the value returned is the last iterate"):
            mpi = mdp.modified_policy_iteration(model, discount=discount, max_iter=1,
                                                sweeps=0, epsilon=1e-300)
        assert mpi.value.tobytes() == fh.values[2].tobytes()    # one greedy sweep: one stage


def _value_iteration_before_1_0(model, discount, epsilon, stopping):
    """The loop of mdp.value_iteration before issue 32, verbatim but for the layout: the
    reference for the bits of converged runs."""
    v = np.zeros(model.n_states)
    threshold = (epsilon * (1 - discount) / discount if stopping == "span"
                 else epsilon * (1 - discount) / (2 * discount))
    rewards, A = model._masked_rewards, model.n_actions
    for k in range(1, 100_001):
        v_new = (rewards + discount * (model._stacked @ v).reshape(A, -1)).max(axis=0)
        diff = v_new - v
        residual = float(diff.max() - diff.min()) if stopping == "span" \
            else float(np.abs(diff).max())
        v = v_new
        if residual < threshold:
            break
    if stopping == "span":
        v = v + discount / (1 - discount) * 0.5 * (float(diff.max()) + float(diff.min()))
    return v, k


@pytest.mark.parametrize("stopping", ["span", "sup"])
def test_converged_value_iteration_keeps_its_bits(stopping):
    for seed in range(4):
        model = random_mdp(20, 3, seed, 0.4)
        for discount in (0.5, 0.95):
            v, k = _value_iteration_before_1_0(model, discount, 1e-9, stopping)
            sol = mdp.value_iteration(model, discount=discount, epsilon=1e-9, stopping=stopping)
            assert sol.converged and sol.iterations == k and sol.value.tobytes() == v.tobytes()


def test_reprs_are_short():
    # every result prints its fields summarised, never a whole array (issue 32)
    from whittle_lib.models import robots
    model, space = robots.robots_mdp(0.01, 1.0, 1.4, 5, 100)    # 1,710 states
    results = [model, mdp.policy_iteration(model),
               mdp.relative_value_iteration(model, stopping="span", tol=1e-6, tau=0.5),
               mdp.relative_value_iteration_many(model, [0, 1], stopping="span", tol=1e-6,
                                                 tau=0.5),
               mdp.backward_induction(model, 4),
               mdp.evaluate_policy(model, robots.static_policy(space)),
               mdp.dense_policy_iteration(np.full((2, 40, 40), 1 / 40), np.zeros((40, 2)),
                                          discount=0.9)]
    with pytest.warns(RuntimeWarning):
        results.append(mdp.value_iteration(model, discount=0.99, max_iter=2))
    for result in results:
        text = repr(result)
        assert len(text) < 1200
        assert text.startswith(type(result).__name__ + "(")
        assert "array(shape=" in text


# --- the dense path of policy_iteration (issue 32) -------------------------------------------

@pytest.mark.parametrize("discount", [0.5, 0.95, 0.999, None])
def test_dense_path_against_sparse_lu(discount):
    # Independent evaluation: SuperLU on the same chains. The dense path's Krylov evaluations
    # stop at a relative residual of 1e-12, so values agree to 1e-12 (1 + |v|) / (1 - discount)
    rng = np.random.default_rng(5)
    for density in (1.0, 0.5):
        n, A = 60, 4
        P = rng.random((A, n, n)) * (rng.random((A, n, n)) < density)
        P[:, np.arange(n), rng.integers(0, n, n)] += 0.1
        P /= P.sum(axis=-1, keepdims=True)
        if discount is None:
            P = 0.9 * P + 0.1 / n                 # positive rows: every policy unichain
        R = rng.normal(size=(n, A))
        model = mdp.FiniteMDP(P, R)
        dense = mdp.policy_iteration(model, discount=discount)
        lu = mdp.policy_iteration(model, discount=discount, evaluation="direct", warm_start=0)
        assert dense.method == "dense" and dense.converged
        np.testing.assert_array_equal(dense.policy, lu.policy)
        if discount is None:
            assert dense.gain == pytest.approx(lu.gain, abs=1e-11)
            np.testing.assert_allclose(dense.bias, lu.bias, atol=1e-9)
            assert dense.residual < 1e-9 and lu.gain_bounds[0] - 1e-11 <= dense.gain
        else:
            scale = (1 + np.abs(lu.value).max()) / (1 - discount)
            np.testing.assert_allclose(dense.value, lu.value, rtol=0, atol=1e-11 * scale)
            assert dense.residual <= 1e-11 * scale


def test_dense_path_falls_back_to_lapack_on_a_slow_chain(monkeypatch):
    # a chain that barely moves (P = 0.999 I + 0.001 / n) at discount 0.999: BiCGSTAB cannot
    # meet 1e-12 within max(10, n / 20) iterations from the start, and a LAPACK solve takes over
    n = 40
    rng = np.random.default_rng(8)
    slow = 0.999 * np.eye(n) + 0.001 * rng.dirichlet(np.ones(n), size=n)
    P = np.stack([slow, np.roll(slow, 1, axis=1)])
    model = mdp.FiniteMDP(P, rng.normal(size=(n, 2)))
    solves = []
    solve = np.linalg.solve
    monkeypatch.setattr(np.linalg, "solve", lambda *a: solves.append(1) or solve(*a))
    dense = mdp.policy_iteration(model, discount=0.999, evaluation="dense", warm_start=0)
    monkeypatch.undo()
    assert solves                                            # LAPACK took over
    lu = mdp.policy_iteration(model, discount=0.999, evaluation="direct")
    np.testing.assert_array_equal(dense.policy, lu.policy)
    np.testing.assert_allclose(dense.value, lu.value, rtol=1e-10)


def test_dense_path_respects_the_allowed_actions_and_refuses_multichain_average():
    rng = np.random.default_rng(9)
    n, A = 30, 3
    P = rng.dirichlet(np.ones(n), size=(A, n))
    allowed = rng.random((n, A)) < 0.6
    allowed[np.arange(n), rng.integers(0, A, n)] = True
    R = rng.normal(size=(n, A)) + 5.0 * ~allowed            # tempting, but not allowed
    model = mdp.FiniteMDP(P, R, allowed)
    for discount in (0.9, None):
        sol = mdp.policy_iteration(model, discount=discount, evaluation="dense")
        assert allowed[np.arange(n), sol.policy].all()
        ref = mdp.policy_iteration(model, discount=discount, evaluation="direct")
        np.testing.assert_array_equal(sol.policy, ref.policy)
    P[0, 0] = np.eye(n)[0]                                    # a zero in an allowed row
    sparse_rows = mdp.FiniteMDP(P, R, allowed)
    assert mdp._resolve_evaluation(sparse_rows, "auto", average=True) == "direct"
    assert mdp._resolve_evaluation(sparse_rows, "auto", average=False) == "dense"
    with pytest.raises(ValueError, match="every policy unichain"):
        mdp.policy_iteration(sparse_rows, evaluation="dense")


def test_auto_takes_the_dense_path_only_for_dense_rows():
    from whittle_lib.models import robots
    robots_model = robots.robots_mdp(0.1, 1.0, 1.4, 5, 16)[0]            # 3 non-zeros a row
    assert mdp._resolve_evaluation(robots_model, "auto", average=False) == "direct"
    assert mdp._resolve_evaluation(birth_death_mdp(3000), "auto", average=False) == "direct"
    assert mdp._resolve_evaluation(sparse_random_mdp(1500, 0), "auto", False) == "iterative"
    dense = random_mdp(50, 3, 0)
    assert mdp._resolve_evaluation(dense, "auto", average=True) == "dense"
    # the dense matrices are the ones given (no copy back from the sparse ones) or, for sparse
    # input, the sparse ones densified: the same numbers
    P = np.random.default_rng(1).dirichlet(np.ones(7), size=(2, 7))
    given = mdp.FiniteMDP(P, np.zeros((7, 2)))
    assert given._P is not None and np.array_equal(given._dense, P)
    from_sparse = mdp.FiniteMDP([sparse.csr_array(p) for p in P], np.zeros((7, 2)))
    assert from_sparse._P is None and np.array_equal(from_sparse._dense, P)


@pytest.mark.parametrize("solver", [mdp.value_iteration, mdp.modified_policy_iteration])
@pytest.mark.parametrize("discount", [None, 1.0])
def test_discounted_solvers_name_the_average_reward_solvers(solver, discount):
    m = mdp.FiniteMDP([np.eye(2)], rewards=[[1.0], [0.0]])
    with pytest.raises(ValueError, match="relative_value_iteration"):
        solver(m, discount=discount)
