"""Tests of whittle_lib.papers.robots_1999: the robots draft's readings and the sweeps."""
from fractions import Fraction

import numpy as np
import pytest

from whittle_lib import mdp
from whittle_lib import queueing as Q
from whittle_lib.papers import robots_1999 as P


def test_sweep_column_is_relative_value_iteration():
    # Independent algorithm: each column of the vectorised sweep follows the library's
    # one-state RVI exactly, so the counts are equal and the estimates equal to rounding.
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 3, 4)
    refs = [space.state(0, 1, 2), space.state(1, 1, 1), space.state(2, 0, 0)]
    sweep = P.rvi_reference_sweep(model, refs, tau=0.99999, tol=1e-5)
    for j, x in enumerate(refs):
        one = mdp.relative_value_iteration(model, tau=0.99999, tol=1e-5, reference_state=x)
        assert sweep.iterations["pointwise"][j] == one.iterations
        # same arithmetic on a column of a matrix: equal up to summation order
        assert sweep.estimate["pointwise"][j] == pytest.approx(-one.gain, abs=1e-12)


def test_sweep_estimate_brackets_optimum():
    # Invariant: every estimate lies within the RVI gain bracket, close to the exact optimum
    # (the relative rule stops while the estimate is ~1e-4 off at most on this small instance).
    model, space = Q.robots_mdp(0.1, 1.0, 1.0, 3, 4)
    exact = Q.robots_dynamic_optimum(0.1, 1.0, 1.0, 3, 4).cost
    sweep = P.rvi_reference_sweep(model, np.arange(space.n_states), h0="cost")
    for reading in P.STOPPING_READINGS:
        assert np.all(np.abs(sweep.estimate[reading] - exact) < 1e-3)
        assert np.all(sweep.iterations[reading] > 0)


def test_sweep_rejects_bad_input():
    model, _ = Q.robots_mdp(0.1, 1.0, 1.0, 2, 1)
    with pytest.raises(ValueError, match="h0"):
        P.rvi_reference_sweep(model, [0], h0="random")
    with pytest.raises(ValueError, match="reference_states"):
        P.rvi_reference_sweep(model, [model.n_states])
    with pytest.raises(ValueError, match="tau"):
        P.rvi_reference_sweep(model, [0], tau=0.0)


@pytest.mark.parametrize("K,N", [(2, 1), (3, 2), (5, 16)])
def test_lemma4_fails_only_at_unreachable_states(K, N):
    # The states (q, N, 2), q >= 1, cannot be entered (fictitious probability
    # lam (N - r) + mu 1(q = 0) = 0 there); without them the MDP is communicating.
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, K, N)
    comps = P.strong_components(model)
    assert not P.is_communicating(model)
    assert len(comps) == 1 + K
    singles = sorted((int(space.q[c[0]]), int(space.r[c[0]]), int(space.s[c[0]]))
                     for c in comps[1:])
    assert singles == [(q, N, 2) for q in range(1, K + 1)]


def test_multichain_example_has_two_classes():
    # Sec. 3: two recurrent classes, at levels r = 1 and r = 2.
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 5, 2)
    classes = P.paper_multichain_example_classes(0.1, 1.0, 1.4, 5)
    assert sorted(set(space.r[c].tolist()) == {1} or set(space.r[c].tolist()) == {2}
                  for c in classes) == [True, True]


def test_gain_is_constant():
    # Proposition 3 on the Fig. 7 instance; 1e-10 is far above the solver's rounding.
    assert P.gain_spread(0.1, 1.0, 1.4, 5, 16) < 1e-10


def test_eq25_rates_agree():
    # Eq. (25) and PASTA: per-epoch averages equal the continuous-time averages.
    opt = Q.robots_dynamic_optimum(0.1, 1.0, 1.4, 5, 16)
    rates = P.time_average_rates(0.1, 1.0, 1.4, 5, 16, opt.policy)
    assert rates.starvation_epochs == pytest.approx(rates.starvation_time, abs=1e-12)
    assert rates.loss_epochs == pytest.approx(rates.loss_time, abs=1e-12)
    # Fig. 7 caption: cost 0.25924 = gamma S + L
    assert round(1.4 * rates.starvation_time + rates.loss_time, 5) == 0.25924


def test_eq16_exact_ties_take_the_ceiling():
    # gamma = mu and mu/lambda = n + 1/2 is an exact tie; the printed rule takes the ceiling.
    for n in range(1, 30):
        assert P.eq16_exact(Fraction(2 * n + 1, 2), Fraction(1)) == n + 1
    assert P.eq16_exact(Fraction(57, 10), Fraction(2, 5)) == 5   # Fig. 2's mu/lambda
    with pytest.raises(ValueError, match="positive"):
        P.eq16_exact(Fraction(0), Fraction(1))


def test_static_cost_exact_matches_eq4():
    # Table 1 row 1: C_s = 0.17541 with N_s = 73, lambda = 0.01, mu = 1, K = 5, gamma = 0.4.
    c = P.static_cost_exact(73, Fraction(100), Fraction(2, 5), 5)
    assert float(c) == pytest.approx(Q.robots_cost(0.73, 0.4, 5, 1.0), rel=1e-13)
    assert round(float(c), 5) == 0.17541


def test_loss_probability_cost_differs():
    # Sec. 6 wording: gamma P(X=0) + P(X=K) equals eq. (1)/mu only at rho = 1 (mu = 1).
    rho = np.array([0.5, 1.0, 1.5])
    a = P.static_cost_loss_probability(rho, 0.4, 5)
    b = Q.robots_cost(rho, 0.4, 5, 1.0)
    assert a[1] == pytest.approx(b[1], rel=1e-12)
    assert abs(a[0] - b[0]) > 1e-3 and abs(a[2] - b[2]) > 1e-3


@pytest.mark.parametrize("case_id,lam,gamma,K,N,paper_cost,paper_iter,extra", [
    # the Fig. 7 caption counts updates; Table 1 counts one more (the last T gives theta)
    ("robots.fig7", 0.1, 1.4, 5, 16, 0.25924, 255, 0),
    ("robots.table1.row19", 0.1, 0.4, 5, 7, 0.15239, 167, 1),
    ("robots.table1.row25", 0.1, 0.4, 15, 9, 0.05326, 312, 1),
])
def test_paper_reference_state_reproduces_printed_rvi(case_id, lam, gamma, K, N, paper_cost,
                                                      paper_iter, extra):
    # Values printed in the paper: from x_hat = (1, 1, 1) with h_0 = 0, RVI as printed stops
    # with an estimate that prints the paper's cost (row 25: exact optimum 0.053246 does not).
    model, space = Q.robots_mdp(lam, 1.0, gamma, K, N)
    sweep = P.rvi_reference_sweep(model, [space.state(1, 1, 1), space.state(0, 1, 2)])
    assert round(sweep.estimate["pointwise"][0], 5) == paper_cost, case_id
    assert sweep.iterations["pointwise"][0] + extra == paper_iter, case_id
    assert sweep.iterations["pointwise"][1] + extra != paper_iter, case_id   # our default x_hat
