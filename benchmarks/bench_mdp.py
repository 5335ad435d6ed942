"""MDP solvers against mdpsolver (C++), pymdptoolbox and one LU, same models, same run.

Models (fixed seeds):

* ``random_sparse``: ``n`` states, 2 actions, 10 non-zeros per row at uniformly drawn columns
  with uniform weights normalised, rewards uniform on [0, 1); the pattern of QuantEcon.py
  issue #858, where a sparse LU of ``I - beta P_pi`` fills in.
* ``birth_death``: a queue of ``n`` places (10^5, and 10^4 against mdpsolver); a customer
  arrives with probability 0.4 and leaves with probability 0.35 (slow service, action 0) or 0.6
  (fast, action 1); reward ``-0.1 x`` minus 0.5 for fast service. A tridiagonal chain: its LU
  has no fill-in.
* ``dense`` (n = 500 and 1,000, 10 actions): the peers' own random dense MDPs, QuantEcon's
  ``random_discrete_dp`` and pymdptoolbox's ``example.rand``, against their policy iteration
  and a plain NumPy one (see the section below).

Peers: mdpsolver's best of its three algorithms (``pi``, ``mpi``, ``vi``, each at tolerance
``1e-8``, one thread: ``parallel=False``), and at its default tolerance ``1e-3`` for
information; pymdptoolbox's modified policy iteration (``epsilon=1e-8``) on the smaller model.
A peer's model is loaded afresh (untimed) before each timed solve, since mdpsolver starts from
its previous solution. Our side is timed with its structure test (cached on the model) cleared.

Agreement: the number of states where the policies differ, our final residual (the sup norm
of the Bellman residual ``T v - v`` discounted, the span of ``T h - h - g`` for the average
reward) and the peer's, computed by us on the value it returns (discounted) or the gain of
its policy (average).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from harness import case, compare, quiet_import, quietly
from whittle_lib import mdp

BETA = 0.99
PEER_TOL = 1e-8


def random_sparse(n: int, *, seed: int = 0, nnz: int = 10) -> mdp.FiniteMDP:
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(2):
        cols = rng.integers(0, n, size=(n, nnz))
        cols.sort(axis=1)
        for x in np.flatnonzero((np.diff(cols, axis=1) == 0).any(axis=1)):
            cols[x] = np.sort(rng.choice(n, nnz, replace=False))  # no repeated column
        vals = rng.random((n, nnz))
        vals /= vals.sum(axis=1, keepdims=True)
        indptr = np.arange(0, n * nnz + 1, nnz)
        mats.append(sparse.csr_array((vals.ravel(), cols.ravel(), indptr), shape=(n, n)))
    return mdp.FiniteMDP(tuple(mats), rng.random((2, n)).T)         # rewards[s, a]


def birth_death(n: int) -> mdp.FiniteMDP:
    x = np.arange(n)
    mats = []
    for service in (0.35, 0.6):
        up = np.where(x < n - 1, 0.4, 0.0)
        down = np.where(x > 0, service, 0.0)
        mats.append(sparse.diags_array([down[1:], 1.0 - up - down, up[:-1]], offsets=[-1, 0, 1],
                                       format="csr"))
    rewards = np.stack([-0.1 * x, -0.1 * x - 0.5], axis=1)          # rewards[s, a]
    return mdp.FiniteMDP(tuple(mats), rewards)


def _values(solution) -> np.ndarray:
    return solution.value if solution.value is not None else solution.bias


def _fresh(model: mdp.FiniteMDP) -> mdp.FiniteMDP:
    """Clear the model's cached structure tests, masked rewards and dense matrices (unless the
    model was given dense ones), so a timing includes them."""
    for name in ("_direct_preferred", "_masked_rewards", "_density", "_all_positive", "_dense"):
        model.__dict__.pop(name, None)
    return model


# --- mdpsolver ------------------------------------------------------------------------------

def _mdpsolver_lists(model: mdp.FiniteMDP):
    probs, cols = [], []
    for x in range(model.n_states):
        p_x, c_x = [], []
        for P in model.transitions:
            lo, hi = P.indptr[x], P.indptr[x + 1]
            p_x.append(P.data[lo:hi].tolist())
            c_x.append(P.indices[lo:hi].tolist())
        probs.append(p_x)
        cols.append(c_x)
    return model.rewards.tolist(), probs, cols


def _mdpsolver_best(peer, lists, criterion: str, tol: float, algorithms=("pi", "mpi", "vi")):
    """mdpsolver's fastest algorithm on this model (one untimed trial of each), as a
    ``(setup, run, label)`` triple for :func:`harness.compare`."""
    import time

    rewards, probs, cols = lists

    def setup():
        model = peer.model()
        model.mdp(discount=BETA, rewards=rewards, tranMatProbs=probs, tranMatColumns=cols)
        return model

    def run_with(algorithm):
        def run(model):
            with quietly():
                model.solve(algorithm=algorithm, tolerance=tol, criterion=criterion,
                            parallel=False)
            return np.array(model.getPolicy()), np.array(model.getValueVector())
        return run

    times = {}
    for algorithm in algorithms:
        model = setup()
        start = time.perf_counter()
        run_with(algorithm)(model)
        times[algorithm] = time.perf_counter() - start
    algorithm = min(times, key=times.get)
    return setup, run_with(algorithm), f"mdpsolver {algorithm} tol {tol:g}"


def _bellman_residual(model, value) -> float:
    return float(np.abs(model.q_values(value, BETA).max(axis=1) - value).max())


def _discounted_agreement(model):
    def agree(ours, theirs):
        policy, value = theirs
        differ = int(np.sum(ours.policy != policy))
        return (f"policies differ in {differ} states; |Tv - v| ours "
                f"{_bellman_residual(model, ours.value):.1e}, peer "
                f"{_bellman_residual(model, value):.1e}")
    return agree


def _gain_of(model, policy) -> float:
    """The gain of a policy (unichain: Krylov on the bias equations, else LU)."""
    P = mdp._policy_matrix(model, np.asarray(policy))
    r = model.rewards[np.arange(model.n_states), policy]
    out = mdp._unichain_evaluation(P, r, 0, np.zeros(model.n_states), 1e-12)
    if out is None:
        return float(mdp._evaluate_chain(P, r).gain.max())
    return float(out[0].gain[0])


def _average_agreement(model):
    def agree(ours, theirs):
        policy = theirs[0]
        differ = int(np.sum(ours.policy != policy))
        gap = abs(ours.gain - _gain_of(model, policy)) if differ else 0.0
        return (f"policies differ in {differ} states; |gain - peer policy's gain| {gap:.1e}; "
                f"residual ours {ours.residual:.1e}")
    return agree


def _random_cases(n: int) -> None:
    model = random_sparse(n)
    peer = quiet_import("mdpsolver")
    lists = _mdpsolver_lists(model) if peer else None
    prefix = f"mdp.random_sparse.n{n}"
    discounted = [
        ("policy_iteration", lambda m: mdp.policy_iteration(m, discount=BETA)),
        ("value_iteration", lambda m: mdp.value_iteration(m, discount=BETA, epsilon=PEER_TOL)),
        ("modified_policy_iteration",
         lambda m: mdp.modified_policy_iteration(m, discount=BETA, epsilon=PEER_TOL)),
    ]
    average = [
        ("policy_iteration", lambda m: mdp.policy_iteration(m)),
        ("relative_value_iteration",
         lambda m: mdp.relative_value_iteration(m, stopping="span", tol=PEER_TOL)),
    ]
    if peer:
        for tol in (PEER_TOL, 1e-3):
            setup, run, label = _mdpsolver_best(peer, lists, "discounted", tol)
            for solver, solve in (discounted if tol == PEER_TOL else discounted[:1]):
                compare(f"{prefix}.discounted.{solver}", solve, run, label,
                        _discounted_agreement(model), ours_setup=lambda: _fresh(model),
                        reference_setup=setup)
        for tol in (PEER_TOL, 1e-3):
            setup, run, label = _mdpsolver_best(peer, lists, "average", tol)
            for solver, solve in (average if tol == PEER_TOL else average[:1]):
                compare(f"{prefix}.average.{solver}", solve, run, label,
                        _average_agreement(model), ours_setup=lambda: _fresh(model),
                        reference_setup=setup)
    if n <= 5000:
        toolbox = quiet_import("mdptoolbox.mdp")
        if toolbox:
            P = [sparse.csr_matrix(T) for T in model.transitions]
            R = model.rewards.copy()

            def mpi():
                with quietly():
                    run = toolbox.PolicyIterationModified(P, R, BETA, epsilon=PEER_TOL)
                    run.run()
                return np.array(run.policy), np.array(run.V)

            compare(f"{prefix}.discounted.policy_iteration",
                    lambda m: mdp.policy_iteration(m, discount=BETA), mpi,
                    "pymdptoolbox MPI eps 1e-8", _discounted_agreement(model), repeats=1,
                    ours_setup=lambda: _fresh(model))


@case("mdp.random_sparse.n5000")
def random_5000() -> None:
    _random_cases(5000)


@case("mdp.random_sparse.n20000")
def random_20000() -> None:
    _random_cases(20000)


@case("mdp.birth_death.n100000", quick=False)
def birth_death_100000() -> None:
    """A banded chain: policy iteration with direct evaluations, against one sparse LU solve
    of the chain of its optimal policy (the ratio counts LUs), and against mdpsolver."""
    n = 100_000
    model = birth_death(n)
    for discount, label in ((BETA, "discounted"), (None, "average")):
        sol = mdp.policy_iteration(model, discount=discount)
        P = mdp.policy_transition_matrix(model, sol.policy)
        r = model.rewards[np.arange(n), sol.policy]
        A = sparse.csc_array(sparse.identity(n, format="csc") - BETA * P)

        def one_lu():
            return sparse_linalg.spsolve(A, r)

        compare(f"mdp.birth_death.n{n}.{label}.policy_iteration",
                lambda m: mdp.policy_iteration(m, discount=discount), one_lu,
                "one sparse LU solve, same n",
                lambda ours, _: (f"{ours.iterations} evaluations ({ours.method}), residual "
                                 f"{ours.residual:.1e} (values up to "
                                 f"{np.abs(_values(ours)).max():.1e})"),
                ours_setup=lambda: _fresh(model))
    # mdpsolver's value-based algorithms need thousands of sweeps on a chain this slow (about
    # a minute at n = 10^5): compare with it at n = 10^4.
    peer = quiet_import("mdpsolver")
    if peer:
        small = birth_death(10_000)
        setup, run, label = _mdpsolver_best(peer, _mdpsolver_lists(small), "discounted",
                                            PEER_TOL, algorithms=("mpi", "vi"))
        compare("mdp.birth_death.n10000.discounted.policy_iteration",
                lambda m: mdp.policy_iteration(m, discount=BETA), run, label,
                _discounted_agreement(small), repeats=1, ours_setup=lambda: _fresh(small),
                reference_setup=setup)


# --- dense MDPs: the peers' own random models (issue 32) ------------------------------------
#
# QuantEcon's ``random_discrete_dp(n, 10, beta=0.95)`` (every row dense) against its
# ``DiscreteDP.solve(method="policy_iteration")``; pymdptoolbox's ``example.rand(n, 10)``
# (random masks: about half the entries of a row are zero; its transition rewards R[a, s, s']
# become the expected rewards R[s, a]) against its ``PolicyIteration``; and, at n = 500, a
# plain NumPy policy iteration (solve, greedy step, repeat) from the same start as ours and
# QuantEcon's (the greedy policy of one value-iteration step from zero). Each side's model is
# built untimed (our FiniteMDP, their DiscreteDP / PolicyIteration objects); ours is timed with
# its caches cleared. ``mdp.policy_iteration(model, discount=0.95)``, the generic call, takes
# the dense path (LAPACK) by itself.

DENSE_BETA = 0.95
DENSE_ACTIONS = 10
#: Each solve takes milliseconds: many interleaved repeats, so that the best of each side is not
#: a burst of another process's load
REPEATS = 15


def numpy_policy_iteration(P: np.ndarray, R: np.ndarray, beta: float):
    """Policy iteration in plain NumPy: ``P[a, s, s']``, ``R[s, a]``; solve, greedy, repeat."""
    n_actions, n = P.shape[:2]
    states = np.arange(n)
    stacked = P.reshape(n_actions * n, n)
    v = R.max(axis=1)
    policy = np.argmax(R + beta * (stacked @ v).reshape(n_actions, n).T, axis=1)
    while True:
        v = np.linalg.solve(np.eye(n) - beta * P[policy, states], R[states, policy])
        new = np.argmax(R + beta * (stacked @ v).reshape(n_actions, n).T, axis=1)
        if np.array_equal(new, policy):
            return policy, v
        policy = new


def _dense_agreement(ours, theirs):
    policy, value = np.asarray(theirs[0]), np.asarray(theirs[1])
    return (f"policies differ in {int(np.sum(ours.policy != policy))} states; "
            f"max |v - v_peer| {np.abs(ours.value - value).max():.1e}; "
            f"{ours.iterations} evaluations ({ours.method})")


def _toolbox_rand(n: int, seed: int = 0):
    """``mdptoolbox.example.rand(n, 10)`` under a fixed seed of NumPy's global generator (the
    peer draws from it), restoring that generator's state afterwards."""
    from mdptoolbox import example

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        P, R = example.rand(n, DENSE_ACTIONS)
    finally:
        np.random.set_state(state)
    return P, (P * R).sum(axis=2).T.copy()          # expected rewards R[s, a]


def _dense_cases(n: int) -> None:
    quantecon = quiet_import("quantecon")
    if quantecon:
        ddp = quantecon.markov.random_discrete_dp(n, DENSE_ACTIONS, beta=DENSE_BETA,
                                                  random_state=1234)
        P, R = np.ascontiguousarray(ddp.Q.transpose(1, 0, 2)), ddp.R
        model = mdp.FiniteMDP(P, R)
        compare(f"mdp.dense.quantecon.n{n}.policy_iteration",
                lambda m: mdp.policy_iteration(m, discount=DENSE_BETA),
                lambda d: (lambda s: (s.sigma, s.v))(d.solve(method="policy_iteration")),
                "QuantEcon DiscreteDP PI", _dense_agreement, repeats=REPEATS,
                ours_setup=lambda: _fresh(model),
                reference_setup=lambda: quantecon.markov.DiscreteDP(R, ddp.Q, DENSE_BETA))
        if n <= 500:
            compare(f"mdp.dense.quantecon.n{n}.policy_iteration",
                    lambda m: mdp.policy_iteration(m, discount=DENSE_BETA),
                    lambda: numpy_policy_iteration(P, R, DENSE_BETA),
                    "plain NumPy PI", _dense_agreement, repeats=REPEATS,
                    ours_setup=lambda: _fresh(model))
    toolbox = quiet_import("mdptoolbox.mdp")
    if toolbox:
        P, R = _toolbox_rand(n)
        model = mdp.FiniteMDP(P, R)

        def run(pi):
            with quietly():
                pi.run()
            return np.array(pi.policy), np.array(pi.V)

        def setup():
            with quietly():
                return toolbox.PolicyIteration(P, R, DENSE_BETA)

        compare(f"mdp.dense.mdptoolbox.n{n}.policy_iteration",
                lambda m: mdp.policy_iteration(m, discount=DENSE_BETA), run,
                "pymdptoolbox PolicyIteration", _dense_agreement, repeats=REPEATS,
                ours_setup=lambda: _fresh(model), reference_setup=setup)
        if n <= 500:
            compare(f"mdp.dense.mdptoolbox.n{n}.policy_iteration",
                    lambda m: mdp.policy_iteration(m, discount=DENSE_BETA),
                    lambda: numpy_policy_iteration(P, R, DENSE_BETA),
                    "plain NumPy PI", _dense_agreement, repeats=REPEATS,
                    ours_setup=lambda: _fresh(model))


@case("mdp.dense.n500")
def dense_500() -> None:
    _dense_cases(500)


@case("mdp.dense.n1000")
def dense_1000() -> None:
    _dense_cases(1000)
