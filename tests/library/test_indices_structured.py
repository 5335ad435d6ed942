"""Rested arms (P0 = I) and reset arms (every row of P0 the same): the state-elimination path of
whittle_lib.indices against the general recursion and against bisection on the subsidy.

``whittle_indices`` recognises both kinds from ``P0`` and computes their indices by Sonin's
state elimination on ``beta P1`` (about one LU factorisation of work, ``indices._eliminate``);
every other arm takes Gast, Gaujal & Khun's recursion (``indices._ggk``). The two share no
arithmetic, so agreement checks both; bisection (``whittle_indices_bisection``, policy
iteration at every probe) checks them against the definition of the index.
"""

import warnings

import numpy as np
import pytest

from whittle_lib import indices
from whittle_lib.arms import RestlessArm
from whittle_lib.indices import (IndexStatus, is_indexable, is_indexable_many, whittle_indices,
                                 whittle_indices_bisection)


def _beta(discount):
    return 1.0 if discount is None else discount


def structured_arm(rng, n, kind, sparse=False):
    """A rested (``P0 = I``) or reset (``P0 = 1 q^T``) arm with a random active chain: dense
    (every transition positive) or sparse (about half the transitions zero)."""
    P = rng.exponential(size=(2, n, n))
    if sparse:
        P *= rng.random((2, n, n)) < 0.5
        P[:, np.arange(n), rng.integers(0, n, size=n)] += 0.01
    P /= P.sum(axis=-1, keepdims=True)
    R0, R1 = rng.normal(size=(2, n))
    P0 = np.eye(n) if kind == "rested" else np.tile(P[0][0], (n, 1))
    return RestlessArm(P0=P0, P1=P[1], R0=R0, R1=R1)


def general(arm, discount):
    """The general recursion on the same arm (no structure used)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore",
                                                over="ignore"):
        warnings.simplefilter("ignore")
        return indices._ggk(arm, _beta(discount), discount)[0]


# The two exact algorithms round differently: indices are O(scale) (rested: O(scale / (1 -
# beta)) through r'), computed with an error of a few hundred ulps times the conditioning of
# the policy systems, at most ~1/(1 - beta) = 100 here.
AGREEMENT = 1e-9

CASES = [("rested", 0.5), ("rested", 0.9), ("rested", 0.99),
         ("reset", 0.5), ("reset", 0.9), ("reset", 0.99), ("reset", None)]


@pytest.mark.parametrize("kind, discount", CASES)
@pytest.mark.parametrize("n", [2, 3, 7, 31, 32, 33, 100, 150])
def test_elimination_agrees_with_the_general_recursion(kind, discount, n):
    # sizes around the block of 32 delayed eliminations and across several blocks
    for seed, sparse in ((n, False), (1000 + n, True)):
        arm = structured_arm(np.random.default_rng(seed), n, kind, sparse)
        assert indices._structure(arm, _beta(discount)) == kind
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            fast = whittle_indices(arm, discount=discount)
        slow = general(arm, discount)
        # the same verdict; discounted, rested and reset arms are indexable (whittle_indices,
        # Notes); average reward, a sparse active chain can make a policy multichain (then the
        # elimination hands the arm to the general recursion)
        assert fast.status is slow.status
        if discount is not None or not sparse:
            assert fast.status is IndexStatus.INDEXABLE
        if fast.status is not IndexStatus.INDEXABLE:
            continue
        assert fast.discount == discount and fast.fingerprint == arm.fingerprint
        scale = 1.0 + np.abs(slow.indices).max()
        np.testing.assert_allclose(fast.indices, slow.indices, rtol=0, atol=AGREEMENT * scale)
        # every state once, in non-decreasing order of index
        assert sorted(fast.passive_order.tolist()) == list(range(n))
        assert np.all(np.diff(fast.indices[fast.passive_order]) >= 0)


@pytest.mark.parametrize("kind, discount", CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_elimination_matches_bisection(kind, discount, seed):
    # the definition: bisection to 1e-10 on the subsidy, each probe solved by policy iteration
    rng = np.random.default_rng(seed)
    arm = structured_arm(rng, int(rng.integers(2, 13)), kind)
    fast = whittle_indices(arm, discount=discount)
    reference = whittle_indices_bisection(arm, discount=discount, tol=1e-10)
    # bisection's midpoint is within 5e-11 of the index; the indices are exact to rounding
    np.testing.assert_allclose(fast.indices, reference, rtol=0, atol=1e-8)


def test_the_path_is_taken_from_p0_and_only_there(monkeypatch):
    calls = []
    real = indices._eliminate
    monkeypatch.setattr(indices, "_eliminate",
                        lambda *a, **k: calls.append(k["reset"]) or real(*a, **k))
    rng = np.random.default_rng(5)
    rested, reset = structured_arm(rng, 6, "rested"), structured_arm(rng, 6, "reset")
    whittle_indices(rested, discount=0.9)
    whittle_indices(reset, discount=0.9)
    whittle_indices(reset)
    assert calls == [False, True, True]
    # average reward, a rested arm's frozen states are absorbing: the general recursion
    assert indices._structure(rested, 1.0) is None
    assert whittle_indices(rested).indices.tobytes() == general(rested, None).indices.tobytes()
    # a general arm, and arms a little off the structure (beyond rounding), do not take it
    P = rng.dirichlet(np.ones(6), size=6)
    off_rested = RestlessArm(np.eye(6) * (1 - 1e-9) + 1e-9 / 6, rested.P1, rested.R0,
                             rested.R1)
    q = reset.P0[0]
    rows = np.tile(q, (6, 1))
    rows[3] = q + 1e-9 * (np.arange(6) - 2.5)
    off_reset = RestlessArm(rows, reset.P1, reset.R0, reset.R1)
    for arm in (RestlessArm(P, rested.P1, rested.R0, rested.R1), off_rested, off_reset):
        assert indices._structure(arm, 0.9) is None
        whittle_indices(arm, discount=0.9)
    assert calls == [False, True, True]


def test_the_structure_is_recognised_within_rounding():
    # rows normalised in floating point from weights that are equal up to an ulp
    rng = np.random.default_rng(8)
    weights = rng.random(50)
    rows = np.array([weights * (1 + 2e-16 * (i % 3)) for i in range(50)])
    rows /= rows.sum(axis=1, keepdims=True)
    assert not (rows == rows[0]).all()
    arm = RestlessArm(rows, rng.dirichlet(np.ones(50), size=50), rng.random(50),
                      rng.random(50))
    assert indices._structure(arm, 0.9) == "reset"
    fast = whittle_indices(arm, discount=0.9)
    np.testing.assert_allclose(fast.indices, general(arm, 0.9).indices, rtol=0, atol=1e-10)


def test_a_multichain_reset_arm_goes_to_the_general_recursion():
    # P1 = I: every state absorbing when active; average reward, the all-active policy is
    # multichain. The elimination meets a vanishing pivot and hands over: same verdict.
    rng = np.random.default_rng(9)
    q = rng.dirichlet(np.ones(4))
    arm = RestlessArm(np.tile(q, (4, 1)), np.eye(4), rng.random(4), rng.random(4))
    assert indices._eliminate(arm, 1.0, None, reset=True) is None
    with pytest.warns(UserWarning, match="multichain"):
        result = whittle_indices(arm)
    assert result.status is general(arm, None).status is IndexStatus.MULTICHAIN
    # discounted, the same arm is fine and takes the elimination
    assert indices._eliminate(arm, 0.9, 0.9, reset=True) is not None
    assert is_indexable(arm, discount=0.9)


def test_gittins_indices_of_a_rested_arm_by_elimination():
    # Whittle (1980): a rested arm that pays nothing at rest has the Gittins index as its
    # Whittle index. State 0 pays 1 forever (index 1); state 1 pays 0 once, then moves to 0:
    # its best stopping time plays on, rate beta.
    beta = 0.7
    result = indices.gittins_indices([[1.0, 0.0], [1.0, 0.0]], [1.0, 0.0], discount=beta)
    np.testing.assert_allclose(result, [1.0, beta], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="discounted criterion"):
        indices.gittins_indices([[1.0, 0.0], [1.0, 0.0]], [1.0, 0.0], discount=None)


def test_the_block_product_without_scipys_cython_blas(monkeypatch):
    # the elimination writes its block updates in place through scipy.linalg.cython_blas's
    # dgemm; without it, NumPy forms the product: same indices up to rounding
    arm = structured_arm(np.random.default_rng(10), 120, "reset")
    with_blas = whittle_indices(arm, discount=0.9)
    fallback = indices._Gemm()
    fallback.function = None
    monkeypatch.setattr(indices, "_gemm", fallback)
    without = whittle_indices(arm, discount=0.9)
    np.testing.assert_allclose(without.indices, with_blas.indices, rtol=0, atol=1e-12)
    # and the product itself, on blocks of larger arrays (both operand layouts)
    rng = np.random.default_rng(11)
    big = rng.random((9, 7))
    A, B = rng.random((5, 3)), rng.random((4, 3)).T
    expected = big[:5, :4] + A @ B
    indices._Gemm()(np.asfortranarray(big)[:5, :4], A, B)    # a copy: not in place here
    C = np.asfortranarray(big)
    indices._Gemm()(C[:5, :4], np.asfortranarray(A), B)
    np.testing.assert_allclose(C[:5, :4], expected, rtol=1e-15)
    np.testing.assert_array_equal(C[5:], big[5:])


@pytest.mark.parametrize("kind, discount", [("rested", 0.9), ("reset", 0.9)])
def test_is_indexable_many_on_structured_arms(kind, discount):
    # the batched test (general recursion, vectorised) against the verdicts here: all indexable
    rng = np.random.default_rng(12)
    arms = [structured_arm(rng, 5, kind, sparse=bool(i % 2)) for i in range(40)]
    stacked = [np.stack([getattr(a, f) for a in arms]) for f in ("P0", "P1", "R0", "R1")]
    assert is_indexable_many(*stacked, discount=discount).all()
    assert all(is_indexable(a, discount=discount) for a in arms)
