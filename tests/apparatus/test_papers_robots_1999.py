"""Tests of replication.papers.robots_1999: the robots draft's readings and the sweeps."""
from fractions import Fraction

import numpy as np
import pytest

from whittle_lib import mdp
from whittle_lib.models import robots as Q
from replication.papers import robots_1999 as P
from replication.papers.robots_1999 import dynamic, paper
from replication.records import Comparison, load_expected


def _rvi(model, refs, h0=None, stopping="relative"):
    # Proposition 4 as the paper ran it, from each of refs: the library's batched RVI
    return mdp.relative_value_iteration_many(model, refs, tau=0.99999, tol=1e-5,
                                             stopping=stopping, h0=h0)


def _table1(settings, refs, mu=1.0):
    # What the notebook's Part I computes for each row of Table 1 (static and dynamic optimum,
    # RVI as the paper ran it from h_0 = 0 from each x_hat of refs), completed by the package
    rows = {}
    for s in settings:
        lam, K, g = P.table_row_parameters(s)
        static = Q.robots_static_optimum(lam, mu, g, K)
        model, space = Q.robots_mdp(lam, mu, g, K, static.N)
        run = _rvi(model, [space.state(*x) for x in refs])
        rows[s] = (static, Q.robots_dynamic_optimum(lam, mu, g, K, static.N),
                   {x: (int(n), float(-e)) for x, n, e in zip(refs, run.iterations, run.gain)})
    return P.table1_results(rows, mu, refs, tau=0.99999, tol=1e-5)


def test_readings_are_the_library_runs_with_each_rule():
    # The two readings of the stopping rule watched in one pass are, bit for bit, the library's
    # runs with each rule alone, from h_0 = 0 and from h_0 = c (the one-step cost).
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 3, 4)
    refs = [space.state(0, 1, 2), space.state(1, 1, 1), space.state(2, 0, 0)]
    for h0, start in (("zero", None), ("cost", -model.rewards.max(axis=1))):
        runs = P.rvi_readings(model, refs, tau=0.99999, tol=1e-5, h0=h0)
        assert list(runs) == list(P.STOPPING_READINGS) == ["pointwise", "norm"]
        for reading, rule in P.STOPPING_READINGS.items():
            alone = _rvi(model, refs, start, rule)
            np.testing.assert_array_equal(runs[reading].iterations, alone.iterations)
            np.testing.assert_array_equal(runs[reading].gain, alone.gain)
            np.testing.assert_array_equal(runs[reading].bias, alone.bias)
            np.testing.assert_array_equal(runs[reading].residual, alone.residual)


def _rvi_loop_before_1_0(model, H, refs, tau, tol, rules, max_iter):
    """whittle_lib.mdp._rvi_loop before issue 32, when the library watched several rules in one
    pass itself (the (n, m) form of issue 24, verbatim but for the names; ``damping="update"``):
    the reference for the bits of ReadingsRule."""
    m, n_rules = refs.size, len(rules)
    iterations = np.full((n_rules, m), max_iter, dtype=np.int64)
    statistic = np.full((n_rules, m), np.inf)
    stopped = np.zeros((n_rules, m), dtype=bool)
    frozen = [None] * n_rules
    active = np.arange(m)
    A, n = model.n_actions, model.n_states
    for k in range(1, max_iter + 1):
        Hs = H[:, active] if active.size < m else H
        ref = refs[active]
        product = model._stacked @ Hs[:, 0] if Hs.shape[1] == 1 else model._stacked @ Hs
        Th = (model._masked_rewards[:, :, None] + product.reshape(A, n, -1)).max(axis=0)
        Hn = (1 - tau) * Hs + tau * (Th - Th[ref, np.arange(active.size)])
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
                if frozen[i] is None:
                    frozen[i] = np.zeros_like(H)
                frozen[i][:, active[done]] = Hn[:, done]
        active = active[~stopped[:, active].all(axis=0)]
        if active.size == 0:
            break
    for i in range(n_rules):
        if not stopped[i].all():
            if frozen[i] is None:
                frozen[i] = np.zeros_like(H)
            frozen[i][:, ~stopped[i]] = H[:, ~stopped[i]]
    return [(frozen[i], iterations[i], statistic[i]) for i in range(n_rules)]


def _watched(model, H0, refs, tau, tol, names, max_iter):
    rules = [mdp.STOPPING_RULES[name] for name in names]
    watch = P.ReadingsRule(rules, tol, model.n_states, refs.size, max_iter)
    batch = mdp.relative_value_iteration_many(model, refs, tau=tau, tol=tol, stopping=watch,
                                              h0=H0, max_iter=max_iter)
    return watch.runs(model, batch)


@pytest.mark.parametrize("refs", [[3], [0, 7, 24], [5, 5, 1, 0], list(range(0, 24, 2))])
@pytest.mark.parametrize("names", [("relative", "norm"), ("norm", "span", "relative")])
def test_readings_rule_keeps_the_library_s_old_bits(refs, names):
    # The several-rules-in-one-pass mode moved from the library to ReadingsRule (a callable
    # stopping rule of relative_value_iteration_many): every reading's iterates, counts and
    # statistics are those of the library's own mode before 1.0, bit for bit, from a random
    # h0, with columns and rules that stop apart
    model = Q.robots_mdp(0.1, 1.0, 1.4, 5, 9)[0]
    refs = np.array(refs, dtype=np.int64)
    H0 = np.random.default_rng(refs.size).standard_normal((model.n_states, refs.size))
    H0[refs, np.arange(refs.size)] = 0.0
    old = _rvi_loop_before_1_0(model, H0.copy(), refs, 0.9, 1e-7,
                               [mdp.STOPPING_RULES[n] for n in names], 5_000)
    new = _watched(model, H0, refs, 0.9, 1e-7, names, 5_000)
    for (h_old, k_old, s_old), run in zip(old, new):
        assert np.array_equal(h_old, run.bias)
        assert np.array_equal(k_old, run.iterations) and np.array_equal(s_old, run.residual)
    assert len({tuple(run.iterations) for run in new}) > 1   # the rules do stop apart


def test_readings_rule_keeps_table1_bit_for_bit():
    # Table 1's largest pool (lambda = 0.01, K = 5, gamma = 1.4, N = 100; 1,710 states) from
    # h_0 = 0 and h_0 = c, at the paper's tau and rule, to its ~2,000 iterations
    model, space = Q.robots_mdp(0.01, 1.0, 1.4, 5, 100)
    refs = np.array([space.state(0, 1, 2), space.state(1, 1, 1)] * 2, dtype=np.int64)
    H0 = np.zeros((model.n_states, 4))
    H0[:, 2:] = -model.rewards.max(axis=1)[:, None]
    H0[refs, np.arange(4)] = 0.0
    names = ("relative", "norm")
    old = _rvi_loop_before_1_0(model, H0.copy(), refs, 0.99999, 1e-5,
                               [mdp.STOPPING_RULES[n] for n in names], 100_000)
    new = _watched(model, H0, refs, 0.99999, 1e-5, names, 100_000)
    for (h_old, k_old, s_old), run in zip(old, new):
        assert np.array_equal(h_old, run.bias)
        assert np.array_equal(k_old, run.iterations) and np.array_equal(s_old, run.residual)
    assert new[0].iterations.min() > 1000


def test_readings_estimate_brackets_optimum():
    # Invariant: every estimate lies within the RVI gain bracket, close to the exact optimum
    # (the relative rule stops while the estimate is ~1e-4 off at most on this small instance).
    model, space = Q.robots_mdp(0.1, 1.0, 1.0, 3, 4)
    exact = Q.robots_dynamic_optimum(0.1, 1.0, 1.0, 3, 4).cost
    runs = P.rvi_readings(model, np.arange(space.n_states), tau=0.99999, tol=1e-5, h0="cost")
    for reading in P.STOPPING_READINGS:
        assert np.all(np.abs(-runs[reading].gain - exact) < 1e-3)
        assert np.all(runs[reading].iterations > 0)


def test_readings_reject_an_unknown_h0():
    model, _ = Q.robots_mdp(0.1, 1.0, 1.0, 2, 1)
    with pytest.raises(ValueError, match="h0"):
        P.rvi_readings(model, [0], tau=0.99999, tol=1e-5, h0="random")


@pytest.mark.parametrize("K,N", [(2, 1), (3, 2), (5, 16)])
def test_lemma4_fails_only_at_unreachable_states(K, N):
    # The states (q, N, 2), q >= 1, cannot be entered (fictitious probability
    # lam (N - r) + mu 1(q = 0) = 0 there); without them the MDP is communicating.
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, K, N)
    comps = mdp.communicating_classes(model)
    assert not mdp.is_communicating(model)
    assert len(comps) == 1 + K
    singles = sorted((int(space.q[c[0]]), int(space.r[c[0]]), int(space.s[c[0]]))
                     for c in comps[1:])
    assert singles == [(q, N, 2) for q in range(1, K + 1)]


def test_multichain_example_has_two_classes():
    # Sec. 3: two recurrent classes, at levels r = 1 and r = 2.
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 5, 2)
    classes = dynamic.paper_multichain_example_classes(0.1, 1.0, 1.4, 5)
    assert sorted(set(space.r[c].tolist()) == {1} or set(space.r[c].tolist()) == {2}
                  for c in classes) == [True, True]


def test_gain_is_constant():
    # Proposition 3 on the Fig. 7 instance; 1e-10 is far above the solver's rounding.
    assert dynamic.gain_spread(0.1, 1.0, 1.4, 5, 16) < 1e-10


def test_eq16_exact_ties_take_the_ceiling():
    # gamma = mu and mu/lambda = n + 1/2 is an exact tie; the printed rule takes the ceiling.
    for n in range(1, 30):
        assert P.eq16_exact(Fraction(2 * n + 1, 2), Fraction(1)) == n + 1
    assert P.eq16_exact(Fraction(57, 10), Fraction(2, 5)) == 5   # Fig. 2's mu/lambda
    with pytest.raises(ValueError, match="positive"):
        P.eq16_exact(Fraction(0), Fraction(1))


def test_loss_probability_cost_differs():
    # Sec. 6 wording: gamma P(X=0) + P(X=K) equals eq. (1)/mu only at rho = 1 (mu = 1).
    rho = np.array([0.5, 1.0, 1.5])
    a = P.static_cost_loss_probability(rho, 0.4, 5)
    b = Q.robots_cost(rho, 0.4, 5, 1.0)
    assert a[1] == pytest.approx(b[1], rel=1e-12)
    assert abs(a[0] - b[0]) > 1e-3 and abs(a[2] - b[2]) > 1e-3


@pytest.mark.parametrize("case_id,lam,gamma,K,N,paper_cost,paper_iter,extra", [
    # the Fig. 7 caption prints the updates k; Table 1 prints k + 1 (two conventions)
    ("robots.fig7", 0.1, 1.4, 5, 16, 0.25924, 255, 0),
    ("robots.table1.row19", 0.1, 0.4, 5, 7, 0.15239, 167, 1),
    ("robots.table1.row25", 0.1, 0.4, 15, 9, 0.05326, 312, 1),
])
def test_paper_reference_state_reproduces_printed_rvi(case_id, lam, gamma, K, N, paper_cost,
                                                      paper_iter, extra):
    # Values printed in the paper: from x_hat = (1, 1, 1) with h_0 = 0, RVI as printed stops
    # with an estimate that prints the paper's cost (row 25: exact optimum 0.053246 does not).
    model, space = Q.robots_mdp(lam, 1.0, gamma, K, N)
    runs = _rvi(model, [space.state(1, 1, 1), space.state(0, 1, 2)])
    assert round(-runs.gain[0], 5) == paper_cost, case_id
    assert runs.iterations[0] + extra == paper_iter, case_id
    assert runs.iterations[1] + extra != paper_iter, case_id   # our default x_hat


# ---- The notebook's sweeps, moved into the module (issue 14). Small grids keep them quick;
# the notebook runs the full ones.

def test_printed_values_are_the_expected_table():
    # Table 1 row 19, Table 2 row 11 and the Fig. 7 caption, as printed (text), and every row
    printed = P.printed_values()
    assert printed["Table 1"].loc[(0.1, 5, "0.4")].tolist() == ["0.17600", "7", "0.15239", "1",
                                                                "6.5", "167"]
    assert printed["Table 2"].loc[(0.1, 5, "1.4"), "N_max"] == "16"
    fig7 = printed["Figs. 6-8"].loc["Fig. 7"]
    assert (fig7.N, fig7.K, fig7.lam, fig7.gamma, fig7.cost, fig7.iterations) == (
        16, 5, 0.1, 1.4, "0.25924", "255")
    assert (len(printed["Table 1"]), len(printed["Table 2"]), len(printed["Figs. 6-8"])) == (
        27, 18, 3)
    assert P.figure_setting(16, 5, 0.1, 1.0, 1.4) == "N=16;K=5;lambda=0.1;mu=1.0;gamma=1.4"
    assert P.figure_of(1.4) == "Fig. 7" and P.figure_of(0.7) == "Figs. 6-8"


def test_table_row_parameters_reads_1_13_as_critical_gamma():
    # Table 1 rows printed gamma = 1.13 are gamma(15) = 17/15 (C_s = 0.13333 = (17/15 + 1)/16).
    assert P.table_row_parameters("lambda=0.01;K=5;gamma=0.4") == (0.01, 5, 0.4)
    lam, K, g = P.table_row_parameters("lambda=0.05;K=15;gamma=1.13")
    assert (lam, K) == (0.05, 15) and g == Q.critical_gamma(15, 1.0)


def test_prints_as_uses_the_row_tolerance():
    class Row:   # the two attributes of a replication.Row that prints_as reads
        paper, tolerance = "0.17541", 5e-6
    assert P.prints_as(Row, 0.175414)
    assert not P.prints_as(Row, 0.175416)


def test_lemma1_and_proposition1_hold_on_small_grids():
    # Lemma 1 on three K; the root of R is within one grid step (1e-4) of the brute force.
    check = P.check_lemma1(1.0, buffers=(2, 5, 20), gammas=np.linspace(0.1, 4.0, 8))
    assert check.holds and 0 <= check.worst_distance <= 1e-4
    assert P.check_proposition1(1.0, buffers=(2, 5), gammas=(0.4, 2.4),
                                mu_over_lambda=np.arange(1.0, 8.5, 0.5))
    assert P.lemma1_evidence(check).endswith(f"within {check.worst_distance:.0e}.")


def test_proposition2_and_lemmas_2_3():
    assert P.check_proposition2(1.0, buffers=range(2, 8), gammas=np.geomspace(0.05, 20, 30))
    check = P.check_lemmas_2_3(1.0, buffers=np.arange(2, 120), gamma_over_mu=[0.5, 1.0, 2.0])
    assert check.lemma2_holds
    assert set(check.K0) == {2.0}           # K_0 exists only for gamma > mu
    assert 2 < check.K0[2.0] < 119
    assert check.lemma3_gap < 0.2           # Lemma 3: rho -> 1, slowly (K = 119 here)
    assert "K_0 from " in P.lemma2_evidence(check)
    assert P.lemma3_evidence(check).startswith(f"max |rho(gamma,400) - 1| = {check.lemma3_gap:.3f}")


def test_eq16_check_finds_the_half_integer_ties():
    # gamma = mu: ties exactly at half-integer mu/lambda; (16) takes the ceiling there and every
    # finite K the floor (rho- rho+ < 1).
    ratios = np.round(np.arange(1.0, 6.01, 0.25), 2)
    check = P.check_eq16(1.0, gammas=(1.0,), mu_over_lambda=ratios)
    assert [m for _, m, _ in check.ties] == [Fraction(3, 2), Fraction(5, 2), Fraction(7, 2),
                                             Fraction(9, 2), Fraction(11, 2)]
    assert check.ties_ceil == 5 and check.floor_at_finite_K
    assert check.agree == check.total == ratios.size - 5
    verdicts, evidence = P.eq16_readings(check)
    assert list(verdicts.values()) == [True, False]   # asymptotically yes, at the 5 ties no
    assert "At the 5 exact ties" in evidence and "(16) takes the ceiling (5 of 5)" in evidence


def test_proof_slips_of_proposition2():
    # Between mu(K+1)/K and gamma(K) the minimiser is below 1 (Lemma 1), and (11) is (10).
    assert all(r < 1 for r in P.rho_at_cited_threshold(1.0, range(2, 30)).values())
    assert P.check_eq11(1.0) and P.check_eq11(0.5, 1.3)
    below = P.rho_at_cited_threshold(1.0, range(2, 30))
    assert f"(e.g. {below[5]:.4f} at K = 5)" in P.cited_threshold_evidence(below)
    assert "K = 2..60: True)" in P.eq14_evidence(True)


def test_eq19_row_sums_as_printed():
    # The sign error: 1 + 2 lam r / nu, exactly as the notebook says.
    sums = dynamic.eq19_printed_row_sums(0.1, 1.0, 16)
    nu = 0.1 * 16 + 1.0
    np.testing.assert_allclose(sums, 1 + 2 * 0.1 * np.arange(1, 17) / nu, rtol=1e-14)


def test_rvi_iterations_by_tau_match_one_run():
    it = P.rvi_iterations_by_tau(0.1, 1.0, 1.4, 3, 4, (0.9, 1.0), tol=1e-5,
                                 reference_state=(0, 1, 2))
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 3, 4)
    one = mdp.relative_value_iteration(model, tau=0.9, tol=1e-5,
                                       reference_state=space.state(0, 1, 2))
    assert it[0.9] == one.iterations and it[1.0] > 0


def test_lemma4_check_grid():
    check = dynamic.check_lemma4(0.1, 1.0, 1.4, [(2, 1), (3, 2)])
    assert not check.communicating and check.communicating_without_entry_free
    assert check.outside[(3, 2)] == [(1, 2, 2), (2, 2, 2), (3, 2, 2)]
    assert check.n_classes[(2, 1)] == 3


def test_multichain_example_levels():
    ex = dynamic.multichain_example(0.1, 1.0, 1.4, 5)
    assert ex.n_classes == 2 and ex.levels == [[1], [2]]
    assert all(r == 2 for _, r, _ in ex.transient_at_level_2)


def test_eq21_is_the_model():
    check = dynamic.check_eq21(0.1, 1.0, 1.4, 3, 4)
    assert check.rows_sum_to_one and check.max_deviation < 1e-12
    assert check.n_rows == Q.robots_state_space(3, 4).s.tolist().count(2)


def test_eq25_gaps_are_rounding():
    gaps = dynamic.eq25_gaps(0.1, 1.0, [1.4], 3, 4)
    assert len(gaps) == 2 and max(gaps) < 1e-10    # optimal and static policy


def test_static_costs_matched_table1_rows():
    # Table 1 rows 1-3 (lambda = 0.01, K = 5): C_s 0.17541, 0.40000, 0.53834 with mu = 1.
    printed = {"lambda=0.01;K=5;gamma=0.4": "0.17541", "lambda=0.01;K=5;gamma=1.4": "0.40000",
               "lambda=0.01;K=5;gamma=2.4": "0.53834"}
    assert P.static_costs_matched(printed, 1.0) == 3
    assert P.brute_static_costs_matched(printed, 1.0, loss="rate") == 3
    # rho = 1 and mu = 1: the loss rate is the loss probability at the printed N_s = 100 (row 2)
    assert P.brute_static_costs_matched({"lambda=0.01;K=5;gamma=1.4": "0.40000"}, 1.0,
                                        loss="probability",
                                        printed_N={"lambda=0.01;K=5;gamma=1.4": "100"}) == 1
    with pytest.raises(ValueError, match="loss"):
        P.brute_static_costs_matched(printed, 1.0, loss="count")


def test_table1_row_19():
    # Table 1 row 19 (lambda = 0.1, K = 5, gamma = 0.4): N_s = 7, C_d printed 0.15239 as RVI's
    # estimate from x_hat* = (1, 1, 1), N_iter 167 = updates + 1 from h_0 = 0, = updates from
    # h_0 = c (which prints the same C_d).
    row = _table1(["lambda=0.1;K=5;gamma=0.4"], [(1, 1, 1)]).rows["lambda=0.1;K=5;gamma=0.4"]
    assert row.static.N == 7
    it, est = row.rvi[(1, 1, 1)]
    assert it + 1 == 167 and round(est, 5) == 0.15239
    it_c, est_c = row.rvi_cost[(1, 1, 1)]
    assert it_c == 167 and round(est_c, 5) == 0.15239
    assert row.dynamic.cost <= row.static.cost


def test_pool_search_monotone_bisection():
    # Linear scan as the reference: the pools whose C_d prints as the target.
    lam, g, K = 0.1, 1.4, 5
    pools = range(6, 17)
    costs = {n: round(Q.robots_dynamic_optimum(lam, 1.0, g, K, n).cost, 5) for n in pools}
    target = costs[12]
    found = P.pool_search(lam, 1.0, g, K, pools, C_d=target, N_bar=-1.0, N_max=-1)
    assert found.at_pools == [n for n in pools if costs[n] == target]
    assert found.both == [] and round(found.cost_at_smallest, 5) == costs[6]


def test_n_max_readings_fig7_instance():
    # Table 2, lambda = 0.1, K = 5, gamma = 1.4 prints N_max = 16, the pool of Fig. 7's run.
    opt = Q.robots_unconstrained_optimum(0.1, 1.0, 1.4, 5)
    nm = P.n_max_readings(0.1, 1.0, 1.4, 5, opt, 16)
    assert nm.pool_of_run and not nm.stationary_max and opt.N_max == 15
    assert nm.queues_activating   # the optimum would activate robot 16 at some departures


@pytest.mark.parametrize("bad,match", [
    ({"gammas_policy": [1.0, 1.0]}, "gammas_policy"),
    ({"K_policy": 1}, "K"),
    ({"reference_state": (9, 1, 2)}, "not a state"),     # q > K
    ({"K_policy": 10, "reference_state": (6, 1, 2)},     # a state at K = 10, not at K = 5
     r"reference_state: .* K=5, N=73 .*Table 1"),        # of Table 1's first row
    ({"reference_state": (1, 8, 1)}, r"reference_state: .* K=5, N=7 .*Table 1"),  # N_s = 7
])
def test_check_notebook_parameters_rejects(bad, match):
    good = dict(mu=1.0, lambda_policy=0.1, gammas_policy=[1.0, 1.4], K_policy=5, N_policy=16,
                reference_state=(0, 1, 2), buffer_sizes_fig2=[5, 20])
    P.check_notebook_parameters(**good)
    with pytest.raises(ValueError, match=match):
        P.check_notebook_parameters(**{**good, **bad})


def _captions(gammas=(1.0, 1.4, 2.0), mu=1.0):
    # Part I's sweep: RVI as the paper ran it from every state on the captions' instances
    printed = P.printed_values()["Figs. 6-8"]
    printed = printed[printed.gamma.isin(gammas)]
    counts = {}
    for name, cap in printed.iterrows():
        model, space = Q.robots_mdp(cap.lam, mu, cap.gamma, int(cap.K), int(cap.N))
        counts[name] = _rvi(model, np.arange(space.n_states)).iterations
    return P.CaptionCounts.from_sweep(printed, counts, mu=mu, tau=0.99999, tol=1e-5)


def test_caption_counts_find_x_hat_star():
    # The captions of Figs. 6-8 print 254, 255, 256 iterations; from every reference state of
    # their instance (282 states), three give all three counts, the smallest (1, 1, 1).
    found = _captions()
    assert found.printed == {1.0: 254, 1.4: 255, 2.0: 256}
    assert sorted(found.common) == [(1, 1, 1), (2, 1, 2), (3, 0, 0)] and found.star == (1, 1, 1)
    assert all(found.count_from(g, found.star) == n for g, n in found.printed.items())
    assert found.key(1.4) == ("Fig. 7", "N=16;K=5;lambda=0.1;mu=1.0;gamma=1.4", "iterations")
    assert found.instances[1] == (0.1, 1.0, 1.4, 5, 16, 255)
    assert "we use x_hat* = (1, 1, 1)" in found.report()
    assert P.CaptionCounts(0.1, 1.0, 5, 16, 0.99999, 1e-5, {1.4: 1}, found.counts).star is None


# ---- The notebook's recordings (issue 14: notebooks narrate). The pure functions behind them on
# small inputs; the records against rows of the expected table, whose paper values are cited.

def _comparison(*keys):
    # The rows of data/expected/05_robot_queue.csv whose (item, setting) is among ``keys``.
    rows = [r for r in load_expected("05_robot_queue") if (r.item, r.setting) in keys]
    assert rows
    return Comparison("05_robot_queue", expected=rows)


def test_eq4_at_rho_one_and_fig2_evidence():
    assert P.check_eq4_at_rho_one(1.0) and P.check_eq4_at_rho_one(0.5, gammas=(2.0,), buffers=(3,))
    gammas = np.linspace(0.1, 5.0, 12)
    curves = {K: [Q.robots_static_optimum(1 / 5.7, 1.0, g, K).N for g in gammas] for K in (5, 20)}
    assert P.fig2_evidence(gammas, curves) == ("N(gamma,K) is nondecreasing on 12 values of "
                                               "gamma in [0.1, 5] for K in [5, 20].")


def test_transition_law_as_printed():
    # (20) as printed leaves X from q = K when N > K, and not when N <= K; (19)'s rows sum to
    # 1 + 2 lam r / nu.
    law = P.check_transition_law(0.1, 1.0, 3, 4)
    assert law.queue_after_arrival_printed == 4 > law.K
    assert P.check_transition_law(0.1, 1.0, 5, 3).queue_after_arrival_printed == 3
    assert "row sums of (19)" in law.report()
    assert "(= 1.5714 for r = N = 4)" in P.eq19_evidence(law)   # 1 + 2 (0.1)(4)/1.4
    assert "gives q = 4 > K, outside X" in P.eq20_evidence(law)


def test_theta_is_T_h_not_tau_T_h():
    # Proposition 4 at tau = 0.5: T(h)(x_hat) is the optimum (policy iteration, an independent
    # algorithm), tau T(h)(x_hat) half of it; 1e-6 relative is far above the 1e-10 span rule.
    th = P.check_theta(0.1, 1.0, 1.4, 3, 4, (0, 1, 2))
    assert th.T_h == pytest.approx(th.exact_cost, rel=1e-6)
    cmp = Comparison("demo", expected=[], paper_settings=False)   # not the paper's: new rows
    iterations = {0.5: 30, 1.0: 20}
    assert P.tau_remark_holds(iterations)                          # 30 >= 20 iterations
    cmp.claim("Sec. 4 text", "Table 1;N=4",
              P.TAU_REMARK, P.tau_remark_holds(iterations), P.tau_remark_evidence(iterations))
    notes = {r.item: r.note for r in cmp.rows}
    assert "the claim holds here" in notes["Sec. 4 text"] and "0.5: 30, 1.0: 20" in notes[
        "Sec. 4 text"]
    assert "Proposition 4" not in P.format_proposition4(cmp, {0.5: 30, 1.0: 20})


def test_proposition4_three_readings():
    # The referee's three readings of theta = tau T(h)(x_hat), at fixed points far from
    # tau = 1 against policy iteration (an independent algorithm) on the original and on the
    # transformed model (tau c, (1 - tau) I + tau P). 1e-6 relative: far above the span rule
    # 1e-10, far below the factor tau.
    i, ii, iii = P.PROPOSITION4_READINGS
    pr = P.proposition4_readings(0.1, 1.0, (1.0, 1.4), 3, 4, taus=(0.5, 0.1))
    assert pr.cost[(1.0, (1, 1, 1))] == 0.0 and pr.cost[(1.4, (0, 1, 2))] == 1.4
    assert not pr.holds(i) and pr.holds(i, formula="T(h)(x_hat)")       # off by the factor tau
    assert pr.holds(ii, (1, 1, 1)) and not pr.holds(ii, (0, 1, 2))      # exact iff c(x_hat) = 0
    assert pr.holds(iii)                                                 # the transformed gain
    for t in pr.taus:
        for g in pr.gammas:
            theta = pr.optimum[g]
            assert pr.transformed[(t, g)] == pytest.approx(t * theta, rel=1e-9)
            # (ii): tau T(h)(x_hat) = theta - (1 - tau) c(x_hat) from a state with a cost
            got = t * pr.T_h[("expectation", t, g, (0, 1, 2))]
            assert got == pytest.approx(theta - (1 - t) * g, rel=1e-6)
    frame = pr.to_frame()
    assert len(frame) == 12 and list(frame[("= optimum", "")]).count("yes") == 6
    demo = Comparison("demo", expected=[], paper_settings=False)
    assert pr.setting == "N=4;K=3;lambda=0.1;mu=1.0;gamma=1.4"   # the middle gamma
    demo.claim_by_reading("Proposition 4", pr.setting, "theta = tau T(h)(x_hat)",
                          *P.proposition4_verdicts(pr, None))   # off the paper's setting
    row = demo.rows[0]
    assert "holds under 2 of 4 readings" in row.note and "Searched: 3 readings" in row.note


def test_damping_on_the_expectation_is_relative_value_iteration_on_the_transformed_model():
    # Independent algorithm: reading (ii) is undamped RVI on the model (c, (1-tau) I + tau P),
    # whose iterate is the same h (the transformed operator is (1 - tau) h + T_tau h).
    from scipy import sparse
    model, space = Q.robots_mdp(0.1, 1.0, 1.4, 3, 4)
    x, tau = space.state(1, 1, 1), 0.7
    eye = sparse.identity(space.n_states, format="csr")
    damped = mdp.FiniteMDP(tuple((1 - tau) * eye + tau * P_ for P_ in model.transitions),
                           model.rewards, model.allowed)       # rewards[s, a], allowed[s, a]
    a = mdp.relative_value_iteration(model, tau=tau, tol=1e-5, reference_state=x,
                                     damping="expectation")
    b = mdp.relative_value_iteration(damped, tau=1.0, tol=1e-5, reference_state=x)
    assert a.iterations == b.iterations
    # the same arithmetic up to the order of two additions: rounding
    assert np.allclose(a.bias, b.bias, rtol=0, atol=1e-12) and a.gain == pytest.approx(b.gain)
    with pytest.raises(ValueError, match="damping"):
        mdp.relative_value_iteration(model, damping="cost")


def test_mdp_structure_small_grids():
    check = P.check_mdp_structure(0.1, 1.0, (1.4, 2.0), 3, 4, lemma4_grid=[(2, 1)],
                                  proposition3_grid=[(0.5, 2, 0.4, 2)])
    assert check.lemma4_instances == ((2, 1), (3, 4))
    assert not check.lemma4.communicating and check.lemma4.communicating_without_entry_free
    assert check.example.levels == [[1], [2]]
    assert check.proposition3_instances == 3 and check.proposition3_spread < 1e-9
    assert len(check.eq25_gaps) == 4 and max(check.eq25_gaps) < 1e-10   # rounding
    assert check.eq21.max_deviation < 1e-12
    verdicts, evidence = P.lemma4_readings(check)
    assert list(verdicts.values()) == [False, True] and "on 2 instances" in evidence
    assert "at levels [[1], [2]]" in P.multichain_example_evidence(check)
    assert "on 3 instances" in P.proposition3_evidence(check)
    assert f"the {check.eq21.n_rows} rows of (21)" in P.eq21_evidence(check)


def test_conjecture_check_counts():
    check = P.check_conjecture(1.0, [(0.1, 2, 1.4, 2), (0.5, 3, 0.4, 5)])
    assert check.n_instances == 2 and check.n_monotone <= check.n_switching <= 2
    assert check.f00_min >= 1
    assert f"of {check.n_instances} instances" in P.conjecture_evidence(check)
    assert "at least 1 on all 2 instances" in P.f00_evidence(check)


def test_cost_readings_count_printed_rows():
    # Table 1 rows 19 and 8: mu = 1 reproduces both printed C_s (row 8 with gamma(15) = 17/15).
    cmp = _comparison(("Table 1", "lambda=0.1;K=5;gamma=0.4"),
                      ("Table 1", "lambda=0.01;K=15;gamma=1.13"))
    readings = P.check_cost_readings(cmp, 1.0)
    assert readings.n_rows == 2 and readings.rate[1.0] == 2 and readings.rate_brute == 2
    assert f"{readings.cost_gamma_15:.5f}" == readings.printed_gamma_113 == "0.13333"
    assert f"{readings.cost_gamma_113:.5f}" == "0.13312"
    verdicts, evidence = P.mu_readings(readings)
    assert list(verdicts.values()) == [False, False] and "with mu = 1.0 (the captions), all" \
        in evidence
    verdicts, evidence = P.loss_probability_readings(readings)
    assert len(verdicts) == 4 and "Searched: 4 readings" in evidence


def test_table1_row_19_recorded():
    # Table 1 row 19 (lambda = 0.1, K = 5, gamma = 0.4): C_s 0.17600, N_s 7, C_d 0.15239 (RVI's
    # estimate from x_hat*, not the exact optimum 0.152394), N_iter 167 = updates + 1.
    s = "lambda=0.1;K=5;gamma=0.4"
    cmp = _comparison(("Table 1", s))
    t1 = _table1([s], [(0, 1, 2), (1, 1, 1)])
    assert t1.default == (0, 1, 2) and t1.star == (1, 1, 1)
    t = t1.rows[s]
    for quantity, value in (("C_s", t.static.cost), ("N_s", t.static.N),
                            ("N_min", t.dynamic.N_min), ("N_bar", t.dynamic.N_mean)):
        cmp.number("Table 1", s, quantity, value)
        assert cmp.row("Table 1", s, quantity).status == "reproduced"
    expected = cmp.paper("Table 1", s, "C_d")
    assert P.prints_as(expected, t.dynamic.cost)   # recorded as a number: no readings needed
    # the readings the notebook would weigh if it did not (the exact optimum's always False)
    verdicts, evidence = P.table1_cd_readings(expected, t1, s)
    assert len(verdicts) == 5 and not next(iter(verdicts.values()))
    assert verdicts["C_d = RVI's estimate T(h)(x_hat), x_hat = (1, 1, 1) (x_hat* of Figs. 6-8), "
                    "h_0 = 0"]
    assert "Searched: 5 readings" in evidence and f"{t.dynamic.cost:.6f}" in evidence
    readings = P.table1_readings(cmp, t1)
    assert (readings.n_rows, readings.rvi, readings.iterations) == (1, 1, 1)
    spread = P.iteration_spread(t1, s, 1.0)
    assert spread.counts.size == Q.robots_state_space(5, 7).n_states
    assert spread.ours == {x: t1.rows[s].rvi[x][0] for x in t1.reference_states}
    assert spread.counts.min() <= spread.ours[(1, 1, 1)] <= spread.counts.max()
    assert _table1([s], [(1, 1, 1)]).reference_states == ((1, 1, 1),)


def test_table2_row_11_recorded():
    # Table 2 row 11 (lambda = 0.1, K = 5, gamma = 1.4): C_d 0.25924 with an unconstrained pool;
    # the printed N_max 16 is the pool of the Fig. 7 run (the stationary maximum is 15).
    s = "lambda=0.1;K=5;gamma=1.4"
    cmp = _comparison(("Table 2", s), ("Sec. 5 text", "Tables 1-2"))
    t2 = P.table2_results(cmp, 1.0, {s: Q.robots_unconstrained_optimum(0.1, 1.0, 1.4, 5)},
                          {s: Q.robots_static_optimum(0.1, 1.0, 1.4, 5)})
    row = t2[s]
    assert row.pools == (16, 20, 30) and row.pool_sweep is None
    assert row.unconstrained.N_max == 15 and row.n_max.pool_of_run
    cmp.number("Table 2", s, "C_d", row.unconstrained.cost,
               diagnosis=P.table2_cd_diagnosis(s, row))
    assert cmp.row("Table 2", s, "C_d").status == "reproduced"
    assert P.table2_cd_diagnosis(s, row) == "unexplained"
    shifted = P.table2_cd_diagnosis("lambda=0.05;K=10;gamma=2.4", row)
    assert shifted.startswith("the paper prints 0.20541") and "Searched" not in shifted  # no search
    printed = int(cmp.paper("Table 2", s, "N_max").paper)
    assert printed == 16 != row.unconstrained.N_max
    verdicts, evidence = P.table2_n_max_readings(printed, s, row)
    assert list(verdicts.values()) == [False, True] and "Fig. 7 caption" in evidence
    cmp.claim_by_reading("Table 2", s, "N_max", verdicts, evidence, value="15")
    assert cmp.row("Table 2", s, "N_max").status == "claim-depends"
    t1 = _table1([s], [(0, 1, 2)])
    assert P.dynamic_cheaper(t1, t2)
    cmp.claim("Sec. 5 text", "Tables 1-2", "dynamic control costs less than static control",
              P.dynamic_cheaper(t1, t2), P.DYNAMIC_CHEAPER_EVIDENCE)
    assert cmp.row("Sec. 5 text", "Tables 1-2",
                   "dynamic control costs less than static control").status == "claim-holds"


def test_format_verdicts_reads_the_recorded_status():
    cmp = Comparison("demo", expected=[], paper_settings=False)
    assert P.format_verdicts(cmp, ("Eq. (4)", "x")) == "not recorded  Eq. (4): x"
    cmp.new("Eq. (4)", "rho=1", "x", "", "a note")
    assert P.format_verdicts(cmp, ("Eq. (4)", "x")).startswith("new ")


def test_tau_remark_and_cost_readings_reports():
    assert P.tau_remark_holds({0.5: 515, 0.99: 276, 1.0: 274})
    assert not P.tau_remark_holds({0.5: 515, 0.99: 270, 1.0: 274})
    cmp = _comparison(("Table 1", "lambda=0.1;K=5;gamma=0.4"),
                      ("Table 1", "lambda=0.01;K=15;gamma=1.13"))
    report = P.check_cost_readings(cmp, 1.0).report()
    assert "by the loss-rate cost (1): 2 (mu = 1; 2 by exhaustive search over N), 0 (mu = 0.5)" \
        in report


def _brute_force_readings(instances, tau, tol):
    # Independent of the search's pruning: run every instance from every candidate state with
    # both h_0 and keep the readings whose offset is the same on all of them.
    first = Q.robots_state_space(instances[0][3], instances[0][4])
    states = [paper.state_tuple(first, i) for i in range(first.n_states)]
    found = set()
    for h0 in P.H0_READINGS:
        ks = []
        for lam, mu, g, K, N, printed in instances:
            model, space = Q.robots_mdp(lam, mu, g, K, N)
            inside = [x for x in states if paper.has_state(space, x)]
            start = None if h0 == "zero" else -model.rewards.max(axis=1)
            counts = {reading: mdp.relative_value_iteration_many(
                model, [space.state(*x) for x in inside], tau=tau, tol=tol,
                stopping=rule, h0=start).iterations   # one rule per run: not the one-pass pair
                for reading, rule in P.STOPPING_READINGS.items()}
            ks.append({reading: {x: printed - int(k[j]) for j, x in enumerate(inside)}
                       for reading, k in counts.items()})
        for rule in P.STOPPING_READINGS:
            for x in states:
                ds = [k[rule].get(x) for k in ks]
                if None not in ds and len(set(ds)) == 1:
                    found.add((h0, rule, x, ds[0]))
    return found


def test_single_reading_search_is_the_brute_force():
    # Counts made up from x_hat = (1, 1, 1), h_0 = 0, pointwise rule, plus one: the search must
    # find that reading, and exactly the readings an unpruned run of every state finds.
    tau, tol = 0.99999, 1e-5
    shape = [(0.1, 1.0, 1.0, 3, 4), (0.1, 1.0, 2.0, 3, 4), (0.2, 1.0, 0.4, 2, 3)]
    printed = []
    for lam, mu, g, K, N in shape:
        model, space = Q.robots_mdp(lam, mu, g, K, N)
        printed.append(int(_rvi(model, [space.state(1, 1, 1)]).iterations[0]) + 1)
    instances = [(*i, n) for i, n in zip(shape, printed)]
    found = P.single_reading_search(instances, tau=tau, tol=tol, n_full=2)
    assert ("zero", "pointwise", (1, 1, 1), 1) in found.survivors
    assert set(found.survivors) == _brute_force_readings(instances, tau, tol)
    assert found.alive[0] == found.n_readings == 4 * Q.robots_state_space(3, 4).n_states
    assert list(found.alive) == sorted(found.alive, reverse=True)   # a reading never comes back
    assert found.alive[-1] == len(found.survivors)
    with pytest.raises(ValueError, match="n_full"):
        P.single_reading_search(instances, tau=tau, tol=tol, n_full=4)
    with pytest.raises(ValueError, match="share K and N"):
        P.single_reading_search(instances, tau=tau, tol=tol, n_full=3)


def test_iteration_counts_fig7_and_table1_row19():
    # Fig. 7 prints 255 = k from x_hat* = (1, 1, 1) with h_0 = 0; Table 1 row 19 prints
    # 167 = k + 1 from there, or k from h_0 = c: two conventions, each count claim-depends.
    s, setting = "lambda=0.1;K=5;gamma=0.4", "N=16;K=5;lambda=0.1;mu=1.0;gamma=1.4"
    cmp = _comparison(("Table 1", s), ("Fig. 7", setting))
    t1 = _table1([s], [(0, 1, 2), (1, 1, 1)])
    counts = P.iteration_counts(cmp, _captions((1.4,)), t1)
    fig7, row19 = counts.keys
    assert counts.printed == {fig7: 255, row19: 167}
    star = (1, 1, 1)
    assert counts.fits(fig7, (star, "zero", 0)) and not counts.fits(fig7, (star, "zero", 1))
    assert counts.fits(row19, (star, "zero", 1)) and counts.fits(row19, (star, "cost", 0))
    assert not counts.fits(row19, (star, "zero", 0))
    assert counts.offsets("Fig.") == {0: 1} and counts.offsets("Table 1") == {1: 1}
    assert (1, 1, 1) in counts.figure_states[fig7][("zero", 0)]
    assert counts.search.alive[0] == counts.search.n_readings == 4 * 282
    text = counts.table()
    assert "3 of 3" not in text and "1 of 1" in text and all(len(x) <= 100 for x in
                                                             text.splitlines())
    for key in counts.keys:
        cmp.claim_by_reading(*key, counts.verdicts(key), counts.evidence(key),
                             value=counts.ours(key))
    for key in counts.keys:
        row = cmp.row(*key)
        assert row.status == "claim-depends" and "Searched: 1128 readings" in row.note
    assert cmp.row(*row19).replicated == str(t1.rows[s].rvi[(0, 1, 2)][0])   # our x_hat's k
    assert P.iteration_counts(Comparison("demo", expected=[], paper_settings=False),
                              None, t1) is None


def test_theta_at_paper_tau_separating_row():
    # Table 1 rows 10 and 19 at tau = 0.99999: T(h)(x_hat*) prints both C_d; tau T(h)(x_hat*)
    # prints row 19 but not row 10 (0.1512650 against the printed 0.15127): row 10 separates
    # the forms, and in it the paper printed T(h).
    rows = ["lambda=0.05;K=5;gamma=0.4", "lambda=0.1;K=5;gamma=0.4"]
    cmp = _comparison(*[("Table 1", s) for s in rows])
    t1 = _table1(rows, [(0, 1, 2), (1, 1, 1)])
    fixed = P.check_theta(0.1, 1.0, 1.4, 3, 4, (0, 1, 2), tau=0.99999)
    pt = P.theta_at_paper_tau(cmp, {}, t1, fixed)
    assert pt.n_prints("T") == 2 and pt.n_prints("tau T") == 1
    assert pt.separating == [rows[0]] and pt.holds("tau T") is False
    # reading (ii), tau on the expectation only, from the same x_hat*: the same counts
    # (N_iter = k + 1) and tau T(h)(x_hat*) prints both C_d (the referee's 27 of 27, here 2)
    frame = pt.counts_frame().set_index("reading")
    i, ii = P.PROPOSITION4_READINGS[:2]
    assert frame.loc[ii, "Table 1: N_iter = k + 1 (of 2)"] == 2
    assert frame.loc[ii, "Table 1: C_d = tau T(h)(x_hat) (of 2)"] == 2
    assert frame.loc[i, "Table 1: C_d = tau T(h)(x_hat) (of 2)"] == 1
    assert all(pt.expectation[s][0] == pt.counts[s][1] for s in rows)
    # (1 - tau) T(h) is 1.5e-6 and 1.5e-6 here: a last unit of 1e-6 is below both, 1e-5 not
    assert pt.gaps.min() == pytest.approx(1.5e-6, abs=1e-7) and pt.decimals_needed == 6
    assert P.theta_at_paper_tau(cmp, {"tau": 0.9}, t1, fixed) is None
    only19 = P.theta_at_paper_tau(_comparison(("Table 1", rows[1])), {},
                                  _table1(rows[1:], [(0, 1, 2), (1, 1, 1)]), fixed)
    assert only19.separating == [] and only19.holds("tau T") is None   # digits cannot tell
    assert all(len(x) <= 100 for x in pt.report().splitlines())


def test_every_verdict_note_says_what_was_searched():
    # Issue 21: each verdict against the paper says how many readings or instances were tried
    # and what the search could detect.
    from replication.records import read_results, project_root
    rows = read_results(project_root() / "data" / "results" / "05_robot_queue.csv")
    against = [r for r in rows if r.status in ("deviates", "claim-fails", "claim-depends")]
    assert len(against) == 53
    assert [r.key for r in against if "Searched:" not in r.note] == []


def test_loss_probability_cost_is_the_old_row_by_row_path():
    # static_cost_loss_probability takes every load at once; the old path called
    # mm1k_distribution once per load: the same bits, on both sides of rho = 1 and at it
    def one_at_a_time(rho, gamma, K):
        out = np.empty_like(rho)
        for i, x in enumerate(rho):
            p = Q.mm1k_distribution(float(x), K)
            out[i] = gamma * p[0] + p[K]
        return out

    for K, lam in ((2, 0.1), (5, 0.01), (15, 0.05), (400, 0.7)):
        rho = np.concatenate([np.arange(1, int(4 / lam) + 20) * lam, [1.0, 1 - 1e-15, 300.0]])
        for gamma in (0.4, 17 / 15, 2.4):
            assert (P.static_cost_loss_probability(rho, gamma, K).tobytes()
                    == one_at_a_time(rho, gamma, K).tobytes())
    for bad in ([1.0, 0.0], [np.inf]):
        with pytest.raises(ValueError, match="rho"):
            P.static_cost_loss_probability(bad, 1.0, 5)
    with pytest.raises(ValueError, match="K"):
        P.static_cost_loss_probability([1.0], 1.0, 1)
