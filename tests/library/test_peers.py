"""Converters to and from the peer libraries' layouts, each solved by both sides.

References: markovianbandit-pkg 0.4 (``RestlessBandit(T[s, a, s'], R[s, a])``), pymdptoolbox
4.0b3 (``P[a, s, s']``, ``R[s, a]`` or ``R[a, s, s']``), QuantEcon 0.11
(``DiscreteDP(R[s, a], Q[s, a, s'], beta)``).
"""

import warnings

import numpy as np
import pytest

from whittle_lib import arms, indices, mdp


def _random_arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.dirichlet(np.ones(n), size=(2, n))
    R0, R1 = rng.normal(size=(2, n))
    return arms.RestlessArm(P0, P1, R0, R1)


def _arm_mdp(arm):
    return mdp.FiniteMDP(transitions=[arm.P0, arm.P1], rewards=np.column_stack([arm.R0, arm.R1]))


def _same_arm(a, b):
    for name in ("P0", "P1", "R0", "R1"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("seed", range(5))
def test_round_trips_are_exact(seed):
    arm = _random_arm(6, seed)
    _same_arm(arm, arms.from_markovianbandit(*arms.to_markovianbandit(arm)))
    _same_arm(arm, arms.from_mdptoolbox(*arms.to_mdptoolbox(arm)))
    _same_arm(arm, arms.from_quantecon(*arms.to_quantecon(arm)))


def test_markovianbandit_computes_our_whittle_and_gittins_indices():
    RestlessBandit = pytest.importorskip(
        "markovianbandit", reason="markovianbandit-pkg (the [crosscheck] extra) is not "
        "installed").RestlessBandit

    for seed in range(5):
        arm = _random_arm(7, seed)
        theirs = RestlessBandit(*arms.to_markovianbandit(arm))
        ours = indices.whittle_indices(arm, discount=0.9)
        # both are exact algorithms; 1e-9 is far above their rounding (1e-13 seen)
        np.testing.assert_allclose(theirs.whittle_indices(discount=0.9), ours.indices,
                                   atol=1e-9)
        rested = arms.RestlessArm.rested(arm.P1, arm.R1)
        np.testing.assert_allclose(
            RestlessBandit(*arms.to_markovianbandit(rested)).gittins_indices(discount=0.9),
            indices.gittins_indices(arm.P1, arm.R1, discount=0.9), atol=1e-9)


def test_pymdptoolbox_solves_the_converted_arm_as_we_do():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pymdptoolbox 4.0b3 imports with deprecated NumPy
        PolicyIteration = pytest.importorskip(
            "mdptoolbox.mdp", reason="pymdptoolbox (the [crosscheck] extra) is not "
            "installed").PolicyIteration
    for seed in range(5):
        arm = _random_arm(6, seed)
        P, R = arms.to_mdptoolbox(arm)
        theirs = PolicyIteration(P, R, 0.9)
        theirs.run()
        ours = mdp.policy_iteration(_arm_mdp(arm), discount=0.9)
        np.testing.assert_array_equal(np.asarray(theirs.policy), ours.policy)
        # both solve the same linear system exactly; 1e-10 covers rounding
        np.testing.assert_allclose(np.asarray(theirs.V), ours.value, atol=1e-10)


def test_pymdptoolbox_transition_rewards_become_expected_rewards():
    arm = _random_arm(4, 9)
    P, _ = arms.to_mdptoolbox(arm)
    # a reward on each transition whose expectation is R[s, a]: R[a, s, s'] = R[s, a] + noise
    # with zero mean under P[a, s, .]
    rng = np.random.default_rng(1)
    noise = rng.normal(size=P.shape)
    noise -= np.einsum("ast,ast->as", P, noise)[:, :, None]
    R3 = np.stack([arm.R0, arm.R1])[:, :, None] + noise
    back = arms.from_mdptoolbox(P, R3)
    np.testing.assert_allclose(back.R0, arm.R0, atol=1e-12)
    np.testing.assert_allclose(back.R1, arm.R1, atol=1e-12)


def test_quantecon_solves_the_converted_arm_as_we_do():
    DiscreteDP = pytest.importorskip(
        "quantecon.markov", reason="quantecon is not installed").DiscreteDP

    for seed in range(5):
        arm = _random_arm(6, seed)
        R, Q = arms.to_quantecon(arm)
        theirs = DiscreteDP(R, Q, 0.9).solve(method="policy_iteration")
        ours = mdp.policy_iteration(_arm_mdp(arm), discount=0.9)
        np.testing.assert_array_equal(theirs.sigma, ours.policy)
        np.testing.assert_allclose(theirs.v, ours.value, atol=1e-10)


@pytest.mark.parametrize("convert, args, message", [
    (arms.from_markovianbandit, (np.ones((3, 3, 3)) / 3, np.zeros((3, 2))),
     r"transitions has shape \(3, 3, 3\) and rewards has shape \(3, 2\), which is neither "
     r"layout: markovianbandit's layout is transitions\[s, a, s'\] of shape \(n, 2, n\)"),
    (arms.from_mdptoolbox, (np.ones((2, 3, 3)) / 3, np.zeros((2, 3, 2))),
     r"R has shape \(2, 3, 2\), which is neither layout: .*R\[a, s, s'\] of shape"),
    (arms.from_quantecon, (np.array([[0.0, -np.inf]] * 2), np.ones((2, 2, 2)) / 2),
     "R must be finite"),
])
def test_converters_name_the_bad_argument(convert, args, message):
    with pytest.raises(ValueError, match=message):
        convert(*args)


def _gittins_by_largest_remaining_index(P, R, beta):
    """Varaiya, Walrand & Buyukkoc (1985): states in decreasing order of their index.

    An independent oracle: the state of largest index is the one of largest reward; then,
    with ``S`` the states found so far (played until the arm leaves ``S``), the next index is
    the largest ratio of discounted reward to discounted time over the continuation set.
    """
    n = len(R)
    order, G = [], np.empty(n)
    for _ in range(n):
        best, best_ratio = None, -np.inf
        for x in set(range(n)) - set(order):
            S = order + [x]
            inside = np.isin(np.arange(n), S)
            A = np.eye(n) - beta * np.where(inside[None, :], P, 0.0)  # continue while in S
            # play x once, then go on while in S; discounted time is the reward 1
            num = R[x] + beta * P[x, S] @ np.linalg.solve(A, np.where(inside, R, 0.0))[S]
            den = 1.0 + beta * P[x, S] @ np.linalg.solve(A, inside.astype(float))[S]
            if num / den > best_ratio:
                best, best_ratio = x, num / den
        order.append(best)
        G[best] = best_ratio
    return G


@pytest.mark.parametrize("seed", range(4))
def test_gittins_indices_against_largest_remaining_index(seed):
    arm = _random_arm(6, seed)
    expected = _gittins_by_largest_remaining_index(arm.P1, arm.R1, 0.8)
    # two exact algorithms; 1e-10 covers the rounding of 6 x 6 solves
    np.testing.assert_allclose(indices.gittins_indices(arm.P1, arm.R1, discount=0.8),
                               expected, atol=1e-10)


def test_mdpsolver_finds_our_policy_on_a_random_sparse_mdp():
    # mdpsolver (C++, the [bench] extra) is an independent epsilon-optimal solver
    mdpsolver = pytest.importorskip("mdpsolver")
    rng = np.random.default_rng(5)
    n = 1500
    mats = []
    for _ in range(2):
        cols = np.array([rng.choice(n, 8, replace=False) for _ in range(n)])
        vals = rng.random((n, 8))
        vals /= vals.sum(axis=1, keepdims=True)
        mats.append(np.zeros((n, n)))
        np.put_along_axis(mats[-1], cols, vals, axis=1)
    model = mdp.FiniteMDP([m for m in mats], rng.random((2, n)).T)     # rewards[s, a]
    ours = mdp.policy_iteration(model, discount=0.99)  # iterative evaluation: a random pattern
    assert ours.method == "iterative"
    probs = [[m[x, m[x] > 0].tolist() for m in mats] for x in range(n)]
    columns = [[np.flatnonzero(m[x]).tolist() for m in mats] for x in range(n)]
    peer = mdpsolver.model()
    peer.mdp(discount=0.99, rewards=model.rewards.tolist(), tranMatProbs=probs,
             tranMatColumns=columns)
    peer.solve(algorithm="mpi", tolerance=1e-9, parallel=False)
    np.testing.assert_array_equal(np.array(peer.getPolicy()), ours.policy)
    # its span rule makes its value 1e-9-optimal; ours has a Bellman residual below 1e-9
    np.testing.assert_allclose(np.array(peer.getValueVector()), ours.value, atol=2e-9)
