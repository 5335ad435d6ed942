"""The readings and sweeps that judge Pavamana & Singh (2023): references and invariants."""

import dataclasses
import itertools
import warnings

import numpy as np
import pytest

from whittle_lib.models import caching as C
from whittle_lib import indices
from replication.papers import caching_2023 as P
from replication.papers.caching_2023.theorem31 import _threshold_failure


def _content(chain=(0.2, 0.2, 0.3, 0.1), K=6, d=1.0, cost=None):
    r = np.arange(K, dtype=float)
    up0, down0, up1, down1 = chain
    return C.CachingContent.birth_death(r, 2 * np.sqrt(r) if cost is None else cost, up0=up0,
                                        down0=down0, up1=up1, down1=down1, fetch_cost=d)


def _table(content, discount):
    res = indices.whittle_indices(content.arm(), discount=discount)
    return res.indices.reshape(2, -1), res.indexable


def _figures(chains, lv, cost_scale=2.0, fetch_costs_fig2=(1.0, 3.0), discounts_fig3=(0.5, 0.9),
             fetch_cost_fig3=1.0, discount=0.9):
    """The index curves of Figs. 2-4 as the notebook computes them (Part I, Section 5)."""
    cost = cost_scale * np.sqrt(lv)
    pair = lambda items: tuple(_table(P.chain_content(ch, d, lv, cost), b) for ch, d, b in items)
    return P.IndexFigures(
        pair([(chains["base"], d, discount) for d in fetch_costs_fig2]),
        pair([(chains["base"], fetch_cost_fig3, b) for b in discounts_fig3]),
        pair([(chains[n], fetch_cost_fig3, discount) for n in ("rising", "falling")]),
        fetch_costs_fig2, discounts_fig3, fetch_cost_fig3, discount, cost_scale, len(lv))


def _exact_run(contents, index_contents, capacity, discount):
    """The exact comparison of Figs. 5-6 as the notebook computes it (Part I, Section 6)."""
    prob = C.CachingProblem(contents, capacity, discount)
    opt = C.solve_joint(prob)
    raw = C.whittle_priorities(C.CachingProblem(index_contents, capacity, discount))
    rules = {"Whittle": P.snap_ties(raw), "greedy": P.snap_ties(C.greedy_priorities(prob))}
    tables = {"optimal": opt.policy, **{n: C.index_policy(prob, r) for n, r in rules.items()}}
    L = contents[0].n_levels ** len(contents)
    exact = {n: C.evaluate_joint_policy(prob, t)[:L].mean() for n, t in tables.items()}
    return dict(problem=prob, optimum=opt, raw=raw, rules=rules, exact=exact)


def _sharp_arm(factor, discount=0.9, high=100.0, margin=0.5):
    """The arm of Part II that shows the bound of Theorem 5.1 sharp."""
    eps = factor * C.theorem51_bound(discount)
    P0 = [[1, 0, 0], [0, 1 - eps, eps], [0, 0, 1]]
    P1 = [[1, 0, 0], [eps, 1 - eps, 0], [0, 0, 1]]
    return C.CachingContent([0, 1, 2], [0, 0, high], P0, P1, eps * high / (1 - discount) + margin)


# --- Lemma 2's condition ---------------------------------------------------------------------

def test_lemma2_condition_matches_the_birth_death_boost_sums_under_assumption1():
    # independent reference: the closed form (s_k non-increasing) against the cone check
    rng = np.random.default_rng(7)
    for _ in range(300):
        c = C.random_content(5, rng=rng)                 # Assumption 1 built in
        s = P.boost_sums(c)
        assert P.lemma2_condition(c) == bool(np.all(np.diff(s) <= 1e-12))


def test_lemma2_condition_against_random_concave_value_functions():
    # the definition: (P1 - P0) V non-increasing for concave non-decreasing V
    rng = np.random.default_rng(3)
    for _ in range(50):
        c = P.random_lemma2_content(6, rng=rng)
        for _ in range(20):
            V = np.concatenate([[0.0], np.cumsum(np.sort(rng.random(5))[::-1])])
            f = (c.P1 - c.P0) @ V
            assert np.all(np.diff(f) <= 1e-12)         # sums of a few products: exact to 1e-15


def test_constant_chains_meet_lemma2_iff_there_is_no_down_boost():
    assert P.lemma2_condition(_content((0.2, 0.2, 0.3, 0.2)))
    assert not P.lemma2_condition(_content((0.2, 0.2, 0.3, 0.1)))
    np.testing.assert_allclose(P.boost_sums(_content((0.2, 0.2, 0.3, 0.1))),
                               [0.1, 0.2, 0.2, 0.2, 0.2, 0.1], atol=1e-15)


def test_random_lemma2_content_satisfies_assumption1_and_the_condition():
    rng = np.random.default_rng(11)
    for _ in range(100):
        c = P.random_lemma2_content(6, rng=rng)
        assert C.check_assumptions(c).assumption1 and P.lemma2_condition(c)


def test_boost_sums_refuse_a_dense_chain():
    c = C.random_content(4, rng=0, chain="dense")
    with pytest.raises(ValueError, match="birth-death"):
        P.boost_sums(c)


# --- Figs. 2-3 sweep -------------------------------------------------------------------------

def test_sweep_tables_are_the_engine_indices_and_claims_read_them():
    chains = {"base": (0.2, 0.2, 0.3, 0.1)}
    lv = np.arange(5.0)
    sw = P.index_sweep(chains, lv, cost_scales=[2.0], fetch_costs=[1.0, 3.0],
                       discounts=[0.5, 0.9])
    ref = indices.whittle_indices(_content(K=5, d=3.0).arm(), discount=0.9).indices
    np.testing.assert_array_equal(sw.tables[0, 0, 1, 1].ravel(), ref)
    v2 = P.fig2_verdicts(sw)
    pt = ("base", 2.0, 0.9, 1.0, 3.0)
    shift = sw.shift(0, 0, 0, 1, 1, 1)
    assert v2["W(r,0) decreases"][pt] == bool(np.all(shift.change[0] < 0))
    assert v2["half"][pt] == (shift.largest_change[1] <= 0.5 * shift.largest_change[0])
    assert len(P.fig3_verdicts(sw)["W(r,0) increases"]) == 2   # 2 fetch costs x 1 pair of beta


def test_sweep_margin_is_the_distance_of_the_closest_verdict_from_its_threshold():
    sw = P.index_sweep({"base": (0.2, 0.2, 0.3, 0.1)}, np.arange(5.0), cost_scales=[2.0],
                       fetch_costs=[1.0, 3.0], discounts=[0.9])
    s = sw.shift(0, 0, 0, 1, 0, 0)
    ch0, ch1 = s.largest_change
    ref = min(np.abs(s.change[0]).min(), abs(ch1 - 0.5 * ch0),
              abs(ch1 - 0.1 * np.abs(s.before[1]).max()))
    assert P.sweep_margin(sw) == pytest.approx(ref, rel=1e-12)   # the same arithmetic


def test_varies_little_refuses_an_unknown_criterion():
    s = P.IndexShift(np.zeros((2, 2)), np.ones((2, 2)), True)
    with pytest.raises(ValueError, match="criterion"):
        P.varies_little(s, "small")


def test_grouped_verdicts_keep_the_status_of_the_full_sweep():
    pts = {("a", i): i % 2 == 0 for i in range(4)} | {("b", i): True for i in range(3)}
    g = P.grouped_verdicts(pts, lambda p: p[0])
    assert any(g.values()) and not all(g.values())
    assert all(P.grouped_verdicts({("b", i): True for i in range(3)}, lambda p: p[0]).values())
    assert not any(P.grouped_verdicts({("a", 1): False}, lambda p: p[0]).values())


# --- ties --------------------------------------------------------------------------------------

def test_snap_ties_makes_engine_level_differences_exact_and_keeps_real_ones():
    a, b = P.snap_ties([np.array([4.4e-16, 1.0, 2.0]), np.array([0.0, 1.0 + 1e-12, 2.5])])
    assert a[0] == 0.0 and b[0] == 0.0 and a[1] == b[1]
    assert a[2] == 2.0 and b[2] == 2.5
    assert P.snap_ties([np.array([-1e-3, 1e-3])])[0].tolist() == [-1e-3, 1e-3]


def test_snap_ties_is_the_identity_with_rtol_zero():
    x = np.array([0.1, 0.3, 4.4e-16])
    np.testing.assert_array_equal(P.snap_ties([x], rtol=0.0)[0], x)


# --- Sec. 4 without non-negativity -----------------------------------------------------------

def test_repair_without_nonnegativity_lowers_c_r1_and_its_arm_matches_a_shifted_content():
    c = _content(K=5, cost=np.arange(5.0))                # linear cost: infeasible with C' >= 0
    assert not C.repair_missing_costs(c).feasible
    rp = C.repair_missing_costs(c, nonnegative=False)
    assert rp.feasible and rp.content is None and rp.modified[0] < 0
    new = np.concatenate([rp.modified, c.missing_cost[2:]])
    shifted = c.with_missing_cost(new - new.min())
    assert C.check_assumptions(shifted).assumption3
    # an index is a subsidy: shifting C by a moves every passive reward by -a, the index by -a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        w = indices.whittle_indices(P.arm_with_missing_cost(c, new), discount=0.9).indices
        w_shift = indices.whittle_indices(shifted.arm(), discount=0.9).indices
    np.testing.assert_allclose(w, w_shift + new.min(), atol=1e-9)  # the engine's accuracy


def test_arm_with_missing_cost_validates_the_cost():
    with pytest.raises(ValueError, match="missing_cost"):
        P.arm_with_missing_cost(_content(), [0.0, 1.0])


# --- the notebook's instances and sweeps (moved out of 04_caching_rmab) ------------------------

def test_chain_content_is_the_birth_death_content_of_its_chain():
    lv = np.arange(6.0)
    c = P.chain_content((0.2, 0.2, 0.3, 0.1), 1.0, lv, 2 * np.sqrt(lv))
    ref = _content()
    np.testing.assert_array_equal(c.P0, ref.P0)
    np.testing.assert_array_equal(c.P1, ref.P1)
    # chain_probabilities reads the chain back: up0, down0, up1, down1 per level
    np.testing.assert_array_equal(P.chain_probabilities(c)[:, 2], [0.2, 0.2, 0.3, 0.1])
    assert P.chain_probabilities(c)[0, -1] == 0.0 and P.chain_probabilities(c)[1, 0] == 0.0


def test_joint_contents_weight_the_costs_and_check_lengths():
    lv = np.arange(4.0)
    cs = P.joint_contents([2.0, 3.0], [(0.2, 0.2, 0.3, 0.1)] * 2, lv, fetch_cost=1.0)
    np.testing.assert_array_equal(cs[1].missing_cost, 3.0 * np.sqrt(lv))
    cs = P.joint_contents([2.0], [(0.2, 0.2, 0.3, 0.1)], lv, fetch_cost=1.0, exponent=0.8)
    np.testing.assert_array_equal(cs[0].missing_cost, 2.0 * lv ** 0.8)
    with pytest.raises(ValueError, match="weights and chains"):
        P.joint_contents([1.0, 2.0], [(0.2, 0.2, 0.3, 0.1)], lv, fetch_cost=1.0)


def test_a_profile_names_a_setting_the_model_refuses():
    default = P.PROFILES["default"]
    with pytest.raises(ValueError, match="fetch_costs_fig2"):
        dataclasses.replace(default, fetch_costs_fig2=(1.0,))
    with pytest.raises(ValueError, match="weights and chains"):
        dataclasses.replace(default, joint_weights=(1.0,))
    with pytest.raises(ValueError, match="rise_chain"):
        dataclasses.replace(default, rise_chain=(0.6, 0.6, 0.7, 0.1))   # up + down > 1
    with pytest.raises(ValueError, match="discount"):
        dataclasses.replace(default, sweep_discounts=(0.5, 1.0))


def test_every_profile_is_frozen_and_valid_at_the_notebook_defaults():
    for profile in P.PROFILES.values():
        assert dataclasses.replace(profile) == profile          # checked again, and valid
        with pytest.raises(dataclasses.FrozenInstanceError):
            profile.discounts_fig3 = (0.1, 0.2)


def test_assumption_readings_match_the_report_and_lemma2():
    c = _content()
    r = P.assumption_readings(c)
    rep = C.check_assumptions(c)
    assert len(r) == len(P.ASSUMPTION_READINGS)
    assert r["Assumption 1: P1(k, .) dominates P0(k, .)"] == rep.assumption1
    assert r["Lemma 2's step: (P1 - P0)V non-increasing"] == P.lemma2_condition(c)


def test_constant_chain_grid_keeps_only_points_meeting_assumptions_1_to_3():
    grid = P.constant_chain_grid(np.arange(5.0), 2.0)
    assert 0 < len(grid) <= 144                          # the grid has 3*3*2*2*2*2 points
    assert all(C.check_assumptions(c).assumptions_1_to_3 for c in grid)


def test_accepted_contents_draw_the_same_stream_as_a_loop():
    got, tried = P.accepted_contents(C.random_content, 4, 3, rng=np.random.default_rng(5))
    rng, ref, n = np.random.default_rng(5), [], 0
    while len(ref) < 3:
        n += 1
        c = C.random_content(4, rng=rng)
        if C.check_assumptions(c).assumptions_1_to_3:
            ref.append(c)
    assert tried == n
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a.P1, b.P1)
    with pytest.raises(ValueError, match="n must"):
        P.accepted_contents(C.random_content, 4, 0, rng=0)


def test_structure_checks_count_and_filter():
    contents = [_content(K=4), _content((0.2, 0.2, 0.3, 0.2), K=4)]
    s = P.check_structures(contents, (0.5, 0.9))
    assert s.n == 4 and s.lemma2.tolist() == [False, False, True, True]
    assert s.threshold == 4 and s.indexable == 4       # constant chains under A1-A3 (Thm 3.1-3.2)
    assert s.where(s.lemma2).n == 2 and s.failures().n == 0


def test_index_drops_find_a_decrease():
    assert P.index_drops(np.array([[0.0, 1.0, 0.5], [0.0, 1.0, 2.0]])) == [(0, 1)]
    assert P.index_drops(np.array([[0.0, 1.0 - 1e-12]])) == []   # within the engine's accuracy


def test_lemma1_concave_is_none_when_every_policy_is_threshold():
    c = _content(K=4)
    assert P.lemma1_concave_at_failure(c, C.check_structure(c, discount=0.9)) is None


def test_repair_reading_rows_and_verdicts():
    lv = np.arange(4.0)
    rows = P.repair_reading([2.0], [(0.2, 0.2, 0.3, 0.1)], lv, [1.0], fetch_cost=1.0,
                            discount=0.9, nonnegative=False)
    assert len(rows) == 1 and rows[0].content_no == 0 and rows[0].repair.feasible
    restores, idx = P.repair_verdicts({"R2": rows})
    assert restores == {"R2: fixable 1 of 1": rows[0].assumptions_after}
    assert list(idx) == ["R2: 1 of 1"]


def test_r2_repair_keeps_the_indices_of_a_content_meeting_assumption3():
    c = _content()
    assert C.check_assumptions(c).assumption3
    np.testing.assert_array_equal(P.r2_repair_indices(c, 0.9),
                                  indices.whittle_indices(c.arm(), discount=0.9).indices)


def test_theorem51_check_counts_every_draw():
    t = P.theorem51_check((0.9,), 5, rng=np.random.default_rng(2), n_levels=4)
    counts = t.counts[0.9]
    assert counts["P0 = P1"][1] == 5 and counts["eps <= bound"][1] == 5
    assert counts["eps > bound"][1] <= 15
    assert t.all_indexable("P0 = P1")                   # P0 = P1: indexable whatever the chain
    idx, n = t.beyond()
    assert n - idx == len(t.non_indexable)


def test_counts_shares_and_notes_over_a_verdict_map():
    pts = {("a", 1.0, 0.9, 1.0, 3.0): True, ("a", 1.0, 0.5, 1.0, 3.0): False,
           ("b", 1.0, 0.9, 1.0, 3.0): True}
    assert P.counts_by_chain(pts, ("a", "b")) == [(1, 2), (1, 1)]
    assert P.verdict_at(pts, ("c",)) == "not in the sweep"
    assert P.sweep_note(pts, ("a", 1.0, 0.9, 1.0, 3.0), "x") == (
        "2 of 3 sweep points; at our default instance (x): holds.")


def test_policy_comparison_optimum_is_cheapest_and_monte_carlo_draws_nothing_without_runs():
    lv = np.arange(3.0)
    cs = P.joint_contents([2.0, 3.0, 1.0], [(0.2, 0.2, 0.3, 0.1)] * 3, lv, fetch_cost=1.0)
    rng = np.random.default_rng(4)
    state = rng.bit_generator.state
    res = P.policy_comparison(_exact_run(cs, cs, 1, 0.9), n_runs=50, horizon=30, rng=rng,
                              monte_carlo=False)
    assert rng.bit_generator.state == state
    o = res.costs["optimal"][0]
    # the optimum of the exact evaluation: no index rule does better (value-iteration tolerance)
    assert all(v[0] >= o - 1e-6 for v in res.costs.values())
    assert list(res.costs) == ["optimal", "Whittle", "greedy", "Whittle, raw"]
    assert res.costs["Whittle"][1] is None
    w, g = res.costs["Whittle"][0], res.costs["greedy"][0]
    assert P.close_to_optimal(res.costs) == ((w - o) / o <= 0.02 and w < g)
    assert P.format_gaps(res.costs, ["optimal"]).endswith("(+0.00 %)")


def test_passive_set_grows_from_empty_to_everything_for_an_indexable_content():
    c = _content(K=4)
    lams = np.linspace(-20, 40, 61)
    sizes = [(C.solve_content(c, lam, discount=0.9).advantage <= 1e-9).sum() for lam in lams]
    assert sizes[0] == 0 and sizes[-1] == 8 and np.all(np.diff(sizes) >= 0)
    assert P.quietly_indexable(c, 0.9) and P.quiet_whittle_indices(c, 0.9).indexable
    note = P.fig7_evidence(c, 0.9, lams, sizes, True)
    assert "over 61 penalties in [-20, 40] without shrinking" in note


def test_report_and_evidence_texts_of_a_policy_comparison():
    lv = np.arange(3.0)
    cs = P.joint_contents([2.0, 3.0], [(0.2, 0.2, 0.3, 0.1)] * 2, lv, fetch_cost=1.0)
    res = P.policy_comparison(_exact_run(cs, cs, 1, 0.9), n_runs=20, horizon=20,
                              rng=np.random.default_rng(1))
    text = res.report("X")
    assert text.startswith("X: expected discounted cost    exact    Monte Carlo (20 runs, 95 %)")
    assert text.count("\n") == 5 and "Bellman residual" in text
    assert res.evidence().startswith(
        f"exact discounted costs: optimal {res.costs['optimal'][0]:.4f}")


def test_tables_have_one_line_per_row():
    c = _content(K=4)
    assert P.counterexample_table(c, C.check_structure(c, discount=0.9)).count("\n") == 4
    rows = P.repair_reading([2.0], [(0.2, 0.2, 0.3, 0.1)], np.arange(4.0), [1.0], fetch_cost=1.0,
                            discount=0.9, nonnegative=True)
    assert P.repair_table(rows).count("\n") == len(rows)
    t = P.theorem51_check((0.9,), 2, rng=0, n_levels=3)
    assert t.table().count("\n") == 1 + len(t.counts[0.9])   # header, bound, one per category


def test_sweep_settings_readings_and_shapes():
    sw = P.index_sweep({"rising": (0.3, 0.1, 0.4, 0.05), "falling": (0.1, 0.3, 0.15, 0.25)},
                       np.arange(4.0), cost_scales=[2.0], fetch_costs=[1.0, 3.0],
                       discounts=[0.9])
    assert P.sweep_setting(sw, "Fig. 2", 4) == ("K=4;sweep: 2 chains, 1 cost scales, 1 beta, "
                                                "1 pairs of d")
    with pytest.raises(ValueError, match="figure"):
        P.sweep_setting(sw, "Fig. 9", 4)
    assert P.sweep_increasing(sw).shape == (2, 1, 2, 1)
    assert P.sweep_higher(sw, "rising", "falling").shape == (1, 2, 1)
    r = P.steady_readings(P.fig2_verdicts(sw), lambda p: p[0], unit="points")
    assert all(k.split(" rule")[0] in P.STEADY_CRITERIA for k in r)


def test_failure_notes_are_empty_without_failures_and_name_the_drop_otherwise():
    empty = P.check_structures([], (0.9,))
    assert P.failure_notes(empty, empty, []) == ("", "")
    # a content that is not threshold (our extension, Theorem 3.1): the first found by search
    rng = np.random.default_rng(0)
    for _ in range(400):
        c = C.random_content(6, rng=rng)
        s = P.check_structures([c], (0.99,))
        if s.failures().n:
            break
    else:
        pytest.skip("no non-threshold content in 400 draws")
    bad = s.failures()
    note_b, note_c = P.failure_notes(bad, empty, [])
    cc, k = P.index_drops(bad.checks[0].index.indices.reshape(2, -1))[0]
    assert note_c == "" and (f"from level {k} to {k + 1}" in note_b or "satisfy" in note_b)


def test_chain_label_groups_by_the_first_field():
    assert P.chain_label(("base", 1.0)) == "chain base"


# --- the notebook's computations and the evidence of its rows -----------------------------

def test_assumption_readings_and_rows_match_the_notebook_at_its_defaults():
    # the values the notebook prints and records (K = 10, C = 2 sqrt(r), base chain, d = 1)
    lv = np.arange(10.0)
    base = P.chain_content((0.2, 0.2, 0.3, 0.1), 1.0, lv, 2.0 * np.sqrt(lv))
    linear = P.chain_content((0.2, 0.2, 0.3, 0.1), 1.0, lv, lv)
    np.testing.assert_allclose(base.arm().R0[:4], [-0.4, -1.766, -2.790, -3.444], atol=5e-4)
    readings = [P.assumption_readings(c) for c in (base, linear)]
    assert [r["Assumption 3: P0 C and P1 C concave"] for r in readings] == [True, False]
    assert not any(r["Lemma 2's step: (P1 - P0)V non-increasing"] for r in readings)
    assert C.check_assumptions(base).assumptions_1_to_3
    assert not C.check_assumptions(linear).assumption3
    assert P.model_note(2.0).startswith("ours: levels r = 0..K-1, C(r) = 2 sqrt(r)")
    assert "violates Assumption 3" in P.LINEAR_COST_NOTE


def test_tau_identity_gap_is_zero_to_rounding():
    # A(k, 1) = A(k, 0) + d in this model: sums of a few terms, exact to ~1e-12
    assert P.tau_identity_gap(_content(K=5, d=2.0), 0.5, 0.9) < 1e-9


def test_theorem3_checks_draw_each_family_from_its_own_stream():
    lv = np.arange(4.0)
    th = P.theorem3_checks(lv, 2.0, (0.9,), 2, rng=np.random.default_rng(1),
                           rng_lemma2=np.random.default_rng(2), n_levels_random=4)
    assert th.a.n == len(th.grid) and th.b.n == 4 and th.c.n == 4   # 2 contents x 2 discounts
    ref_b, tried_b = P.accepted_contents(C.random_content, 4, 2, rng=np.random.default_rng(1))
    ref_c, tried_c = P.accepted_contents(P.random_lemma2_content, 4, 2,
                                         rng=np.random.default_rng(2))
    assert (th.tried_b, th.tried_c) == (tried_b, tried_c)
    np.testing.assert_array_equal(th.b.contents[0].P1, ref_b[0].P1)
    np.testing.assert_array_equal(th.c.contents[0].P1, ref_c[0].P1)
    assert th.a2.n == int(th.a.lemma2.sum()) and len(th.concave_c) == th.c.failures().n
    assert th.report().count("\n") == 6
    verdicts, evidence = P.theorem32_readings(th)
    assert list(verdicts.values()) == [th.a.indexable == th.a.n, th.a2.indexable == th.a2.n]
    assert evidence.startswith("The engine's exact test")
    ours = P.extension_rows(th)
    assert list(ours) == ["Theorem 3.1", "Theorem 3.2"]
    assert ours["Theorem 3.1"][0] == (f"{th.b.threshold}/4 (A1-A3); {th.c.threshold}/4 "
                                      "(A1-A3 and Lemma 2)")


def test_repair_readings_are_repair_reading_under_each_reading():
    lv = np.arange(4.0)
    rr = P.repair_readings([2.0], [(0.2, 0.2, 0.3, 0.1)], lv, [1.0], first_level=1.0,
                           fetch_cost=1.0, discount=0.9)
    assert list(rr.readings) == [P.R1_READING, "R2 (r_1 = 0, no C' >= 0)", "R3 (r_1 = 1, C' >= 0)"]
    ref = P.repair_reading([2.0], [(0.2, 0.2, 0.3, 0.1)], lv + 1.0, [1.0], fetch_cost=1.0,
                           discount=0.9, nonnegative=True)
    got = rr.readings["R3 (r_1 = 1, C' >= 0)"]
    pairs = lambda rows: [(x.content_no, x.repair.feasible) for x in rows]
    assert pairs(got) == pairs(ref)
    n_rows = sum(len(r) for r in rr.readings.values())
    # the note, then per reading its name, the header and a line a row
    assert rr.table().count("\n") == 2 * len(rr.readings) + n_rows
    assert rr.table().startswith("only contents violating Assumption 3 are listed")
    sec4 = P.sec4_readings(rr)
    assert list(sec4) == ["restores", "indexable"]
    assert [k.split(":")[0] for k in sec4["restores"][0]] == list(rr.readings)   # one per reading
    assert sec4["restores"][1].startswith("Contents violating Assumption 3, of 1: R1 ")


def test_index_figures_at_the_notebook_defaults():
    # the numbers the notebook prints today (K = 10, C = 2 sqrt(r), base chain (0.2, 0.2, 0.3, 0.1))
    figs = _figures({"base": (0.2, 0.2, 0.3, 0.1), "rising": (0.3, 0.1, 0.4, 0.05),
                     "falling": (0.1, 0.3, 0.15, 0.25)}, np.arange(10.0))
    assert figs.increasing
    assert figs.changes().splitlines()[1:] == [
        "  Fig. 2, d = 1 vs 3                      0.316    0.356                  0.577",
        "  Fig. 3, beta = 0.5 vs 0.9               0.400    0.365                  0.591",
        "W(r, 0) lower at every r for the larger d: yes; higher for the larger beta: no (r = 2)"]


def test_sweep_report_and_rows_of_figs_2_to_4():
    lv = np.arange(4.0)
    chains = {"base": (0.2, 0.2, 0.3, 0.1), "rising": (0.3, 0.1, 0.4, 0.05),
              "falling": (0.1, 0.3, 0.15, 0.25)}
    sw = P.index_sweep(chains, lv, cost_scales=[2.0], fetch_costs=[1.0, 3.0], discounts=[0.5, 0.9])
    v = P.sweep_verdicts(sw)
    text = P.sweep_report(sw, v)
    # two lines of size, a header, a claim a line
    assert text.count("\n") == 2 + len(P.SWEEP_CLAIMS)
    claims = P.figs2_4_readings(_figures(chains, lv), sw, v)
    assert [f for f, _ in claims] == ["Fig. 2", "Fig. 3", "Fig. 2", "Fig. 3", "Fig. 2-4", "Fig. 4"]
    assert ("Fig. 4", "indices higher when requests tend to rise") in claims


def test_figs5_6_draw_the_initial_levels_first_then_each_policy_in_turn():
    lv = np.arange(3.0)
    w, ch = [2.0, 3.0], [(0.2, 0.2, 0.3, 0.1), (0.1, 0.3, 0.2, 0.2)]
    cs = P.joint_contents(w, ch, lv, fetch_cost=1.0)
    run = _exact_run(cs, cs, 1, 0.9)
    res = P.policy_comparison(run, n_runs=10, horizon=10, rng=np.random.default_rng(3))
    rng = np.random.default_rng(3)                   # the same draws, by hand
    lv0 = rng.integers(0, 3, size=(10, 2))
    for name, pol in (("optimal", run["optimum"].policy), ("Whittle", run["rules"]["Whittle"]),
                      ("greedy", run["rules"]["greedy"])):
        est = C.simulate_policy(run["problem"], pol, initial_levels=lv0,
                                initial_cached=np.zeros_like(lv0), horizon=10, rng=rng)
        assert res.costs[name][1].mean == est.mean and res.costs[name][0] == run["exact"][name]
    nc = P.joint_contents(w, ch, lv, fetch_cost=1.0, exponent=0.8)
    r2 = {"Whittle, R2 repair": tuple(P.r2_repair_indices(c, 0.9) for c in nc)}
    f = P.Figs56({"Fig. 5": res, "Fig. 6 (R1)": P.policy_comparison(
                      _exact_run(nc, nc, 1, 0.9), n_runs=10, horizon=10, rng=rng, extra=r2),
                  "Fig. 6, R3 instance (levels from 1)": P.policy_comparison(
                      _exact_run(nc, nc, 1, 0.9), n_runs=10, horizon=10, rng=rng,
                      monte_carlo=False)}, 2, 1, 3, 0.8, 1.0)
    assert "Whittle, R2 repair" in f.fig6.costs and f.fig6_r3.costs["optimal"][1] is None
    assert f.report().count("Bellman residual") == 3
    verdicts, evidence = P.fig6_readings(f)
    assert len(verdicts) == 3 and evidence.startswith(f.fig6.evidence())


def test_fig7_chain_beyond_the_bound_and_its_row():
    lv = np.arange(5.0)
    c = P.chain_content((0.1, 0.3, 0.3, 0.1), 1.0, lv, 2.0 * np.sqrt(lv))
    eps, bound = C.popularity_perturbation(c), C.theorem51_bound(0.9)
    assert eps == pytest.approx(0.2) and eps > bound           # TV distance of the rows
    lams = np.linspace(-5, 15, 41)
    sizes = [(C.solve_content(c, lam, discount=0.9).advantage <= 1e-9).sum() for lam in lams]
    assert sizes[0] == 0 and sizes[-1] == 10 and np.all(np.diff(sizes) >= 0)
    assert P.fig7_evidence(c, 0.9, lams, sizes, True) == (
        "eps = 0.20 > (1-beta)/beta = 0.1111; the passive set grows from 0 to 10 states over 41 "
        "penalties in [-5, 15] without shrinking; engine verdict indexable = True.")


def test_theorem51_evidence_and_the_printed_example():
    t = P.theorem51_check((0.9,), 3, rng=np.random.default_rng(2), n_levels=4)
    power = P.theorem51_power_search((3,), (0.99,), 150, 2, rng=np.random.default_rng(5))
    assert P.remark5_evidence(t)[1].startswith(f"beta=0.9: {t.counts[0.9]['P0 = P1'][0]}/3")
    sharp = {f: (_sharp_arm(f), P.quiet_whittle_indices(_sharp_arm(f), 0.9), None)
             for f in (1.0, 1.001)}
    holds, note = P.theorem51_evidence(t, power, sharp)
    assert holds and note.startswith("No counterexample found. Within the bound")
    assert note.endswith("is not indexable at eps = 1.001 times the bound at beta = 0.9 (at "
                         "1.001: state (k, c) = (1, 0) leaves the passive set at penalty 50) "
                         "and indexable at eps = 1 times the bound (exact test of "
                         "whittle_lib.whittle_indices), so no larger bound holds for every chain.")
    value, _ = P.beyond_bound_row(t)
    assert value == t.beyond()[1] - t.beyond()[0]
    assert f"eps = {power.closest[0.99].ratio:.3f} times the bound at beta = 0.99" in note
    assert (P.non_indexable_example(t, 4) == "") == (not t.non_indexable)


# --- Theorem 3.1 under both readings of Assumption 1: the search and its counterexample ----------

def test_random_grid_content_is_on_its_grid_with_assumptions_1_and_2_built_in():
    rng = np.random.default_rng(4)
    for level_dependent in (False, True):
        for _ in range(50):
            c = P.random_grid_content(5, rng=rng, level_dependent=level_dependent)
            rep = C.check_assumptions(c)
            assert rep.assumption1 and rep.assumption2
            # hundredths and tenths: exact to the rounding of one division
            np.testing.assert_allclose(c.P1 * 100, np.round(c.P1 * 100), atol=1e-9)
            np.testing.assert_allclose(c.missing_cost * 10, np.round(c.missing_cost * 10),
                                       atol=1e-9)
            up = P.chain_probabilities(c)[:, 1:-1]          # inner levels: no boundary rule
            assert level_dependent or np.all(up == up[:, :1])
    with pytest.raises(ValueError, match="n_levels"):
        P.random_grid_content(1, rng=0, level_dependent=True)


def test_threshold_search_agrees_with_direct_solves_on_every_content():
    # independent reference: check_structure solves every distinct optimal policy directly
    # seed 11: a draw of 40 that holds a failure, so both outcomes are compared
    s = P.threshold_search(3, 40, (0.99,), rng=np.random.default_rng(11), level_dependent=True)
    ref_contents, drawn = P.accepted_contents(
        lambda K, rng: P.random_grid_content(K, rng=rng, level_dependent=True), 3, 40,
        rng=np.random.default_rng(11))
    assert s.n_drawn == drawn and s.n_checks == 40 and not s.non_indexable
    failing = {id(f.content) for f in s.failures}
    assert len(failing) == s.n_failures()
    direct = [not C.check_structure(c, discount=0.99).threshold for c in ref_contents]
    assert sum(direct) == s.n_failures() >= 1 and s.confirmed
    assert s.n_lemma2 == sum(P.lemma2_condition(c) for c in ref_contents)


def _printed_counterexample():
    """The counterexample the notebook prints (Section 2b), as printed: every number is exact."""
    P0 = [[0.96, 0.04, 0.0], [0.21, 0.41, 0.38], [0.0, 0.41, 0.59]]
    P1 = [[0.81, 0.19, 0.0], [0.18, 0.39, 0.43], [0.0, 0.03, 0.97]]
    return C.CachingContent([0.0, 1.0, 2.0], [0.0, 1.7, 3.3], P0, P1, 6.8)


def test_the_printed_counterexample_by_brute_force_over_all_policies():
    # independent of every solver of the library: all 2^6 stationary policies evaluated by LU
    c, beta, lam = _printed_counterexample(), 0.99, 1.1346      # the penalty as printed
    arm, K = c.arm(), 3
    values = {}
    for pol in itertools.product((0, 1), repeat=2 * K):
        act = np.array(pol, dtype=bool)
        P_pol = np.where(act[:, None], arm.P1, arm.P0)
        cost = np.where(act, -arm.R1 + lam, -arm.R0)
        values[pol] = np.linalg.solve(np.eye(2 * K) - beta * P_pol, cost)
    V = np.min(list(values.values()), axis=0)
    # values of order 10^2 from 6x6 solves: 1e-9 separates optimal from not
    optimal = [pol for pol, v in values.items() if np.all(v <= V + 1e-9)]
    assert optimal == [(0, 0, 0, 0, 1, 0)]                  # cache only in (k, c) = (1, 1)
    thresholds = [tuple([int(k >= t0) for k in range(K)] + [int(k >= t1) for k in range(K)])
                  for t0 in range(K + 1) for t1 in range(K + 1)]
    assert min((values[t] - V).max() for t in thresholds) > 0.29
    rep = C.check_assumptions(c)
    assert rep.assumptions_1_to_3 and rep.preserves_concavity and not P.lemma2_condition(c)


def test_verify_threshold_failure_on_the_printed_counterexample():
    c = _printed_counterexample()
    ok, f = _threshold_failure(c, 0.99)
    assert ok and f.confirmed and f.drops == ((1, 1),)
    assert f.penalty == pytest.approx(1.1346, abs=5e-5)
    ce = P.verify_threshold_failure(f)
    assert ce.cache.tolist() == [[False, False, False], [False, True, False]]
    assert np.array_equal(ce.vi_cache, ce.cache) and ce.vi_gap < 1e-6
    assert ce.rows_not_threshold == (1,) and ce.best_threshold == (3, 3)
    assert ce.threshold_excess.min() == pytest.approx(0.2903, abs=1e-4)   # the brute force's
    text = ce.report()
    assert "row(s) c = 1: cached at levels {1}, not of the form {k >= tau}" in text
    assert all(len(line) <= 100 for line in text.splitlines()) and text.count("\n") < 20


def test_theorem31_search_and_its_row():
    lv = np.arange(4.0)
    th = P.theorem3_checks(lv, 2.0, (0.9,), 2, rng=np.random.default_rng(1),
                           rng_lemma2=np.random.default_rng(2), n_levels_random=4)
    t = P.theorem31_search((3,), 150, (0.99,), rng=np.random.default_rng(3))
    assert [(s.n_levels, s.level_dependent) for s in t.searches] == [(3, False), (3, True)]
    assert t.counts(False)[0] == 0 and t.counts(True)[0] > 0   # the two readings differ here
    assert t.counterexample.failure in t.family(True)[0].failures
    assert t.table().count("\n") == 2
    readings, evidence = P.theorem31_readings(th, t)
    assert list(readings.values())[:3] == [True, True, False]
    assert "Counterexample: K = 3, beta = 0.99" in evidence


# --- Theorem 5.1: what its test can detect -----------------------------------------------------

def test_shrunk_content_scales_the_perturbation():
    c = P.random_sparse_content(4, rng=1)
    assert int((c.P1 > 0).sum(axis=1).max()) <= 2
    assert C.popularity_perturbation(P.shrunk_content(c, 0.25)) == pytest.approx(
        0.25 * C.popularity_perturbation(c), rel=1e-12)     # exact up to rounding
    np.testing.assert_array_equal(P.shrunk_content(c, 0.0).P1, c.P0)
    with pytest.raises(ValueError, match="t must"):
        P.shrunk_content(c, 1.5)
    with pytest.raises(ValueError, match="support"):
        P.random_sparse_content(3, rng=0, support=4)


def _non_indexable(beta=0.99, K=3, seed=6):
    rng = np.random.default_rng(seed)
    while True:
        c = P.random_sparse_content(K, rng=rng)
        if not P.quietly_indexable(c, beta):
            return c


def test_segment_boundary_brackets_where_indexability_ends():
    c, beta = _non_indexable(), 0.99
    seg = P.segment_boundary(c, beta)
    assert not P.quietly_indexable(P.shrunk_content(c, seg.t_first), beta)
    assert P.quietly_indexable(P.shrunk_content(c, seg.t_last), beta)
    assert seg.ratio > 1.0 and seg.within[0] == seg.within[1] > 0    # the bound holds
    assert seg.distance == pytest.approx((1 - seg.t_last) * seg.eps)
    with pytest.raises(ValueError, match="non-indexable"):
        P.segment_boundary(P.shrunk_content(c, 0.0), beta)


def test_passive_set_violation_agrees_with_the_engine_and_direct_scans():
    c, beta = _non_indexable(), 0.99
    v = P.passive_set_violation(c, beta)
    assert v is not None and v.certified and v.lam_passive < v.lam_active
    # the same state, solved again at the two penalties: not cached, then cached
    K = c.n_levels
    for lam, sign in ((v.lam_passive, -1), (v.lam_active, 1)):
        adv = C.solve_content(c, lam, discount=beta).advantage[v.state]
        assert sign * adv > 0
    assert P.passive_set_violation(P.shrunk_content(c, 0.0), beta) is None   # Remark 5: indexable
    assert 0 <= v.state < 2 * K


def test_theorem51_power_search_finds_no_arm_inside_the_bound():
    s = P.theorem51_power_search((3, 4), (0.99,), 150, 5, rng=np.random.default_rng(5))
    assert s.counterexamples() == 0 and s.within()[0] == s.within()[1]
    assert s.n_non_indexable() == sum(len(v) for v in s.boundaries.values()) > 0
    seg = s.closest[0.99]
    assert 1.0 < seg.ratio <= s.drawn_closest(0.99)          # the local search only improves
    assert s.certificates[0.99].certified
    assert s.table().count("\n") == 2 and s.closest_report().count("\n") == 3
    assert all(len(line) <= 100 for line in (s.table() + "\n" + s.closest_report()).splitlines())


def test_figs2_4_readings_state_the_power_only_for_verdicts_against_the_paper():
    lv = np.arange(4.0)
    chains = {"base": (0.2, 0.2, 0.3, 0.1), "rising": (0.3, 0.1, 0.4, 0.05),
              "falling": (0.1, 0.3, 0.15, 0.25)}
    sw = P.index_sweep(chains, lv, cost_scales=[2.0], fetch_costs=[1.0, 3.0], discounts=[0.5, 0.9])
    figs = _figures(chains, lv)
    for readings, evidence in list(P.figs2_4_readings(figs, sw, P.sweep_verdicts(sw)).values())[:4]:
        mixed = not all(readings.values())
        assert ("judged on exact indices" in evidence) == mixed


# --- Theorem 5.1: the bound is sharp -----------------------------------------------------------

@pytest.mark.parametrize("discount", [0.9, 0.99])
def test_the_sharp_arm_is_indexable_at_the_bound_and_not_just_beyond(discount):
    at = P.quiet_whittle_indices(_sharp_arm(1.0, discount), discount)
    beyond = P.quiet_whittle_indices(_sharp_arm(1.001, discount), discount)
    assert at.indexable and not beyond.indexable
    assert beyond.violating_state == 1                      # (k, c) = (1, 0)
    # where (1, 0) leaves: lambda* = (1-beta) margin / (beta eps/(1-beta) - 1), margin 0.5
    assert beyond.violation_subsidy == pytest.approx((1 - discount) * 0.5 / 0.001, rel=1e-6)
    v = P.passive_set_violation(_sharp_arm(1.001, discount), discount)
    assert v.certified and v.state == 1
    assert C.popularity_perturbation(_sharp_arm(1.001, discount)) == pytest.approx(
        1.001 * C.theorem51_bound(discount), rel=1e-12)


def test_the_sharp_arm_by_hand_policy_evaluation():
    # independent of the engine: both stationary policies of state (1, 0) near lambda*, by LU,
    # the other states at their regime (0 never cached, 2 always), (1, 1) cached
    arm, beta = _sharp_arm(1.001), 0.9
    A = arm.arm()
    def cost(lam, cache_10):
        act = np.array([0, cache_10, 1, 0, 1, 1], dtype=bool)
        P_pol = np.where(act[:, None], A.P1, A.P0)
        c = np.where(act, -A.R1 + lam, -A.R0)
        return np.linalg.solve(np.eye(6) - beta * P_pol, c)[1]
    # not caching (1, 0) is better below lambda* = 50 and worse above: the passive set shrinks
    assert cost(45.0, 0) < cost(45.0, 1) and cost(55.0, 0) > cost(55.0, 1)


def test_sharp_arm_text_names_the_arm_and_the_factors():
    sharp = {f: (_sharp_arm(f), P.quiet_whittle_indices(_sharp_arm(f), 0.9), None)
             for f in (1.0, 1.001, 1.01)}
    text = P.sharp_arm_text(sharp)
    assert text.startswith("a 3-level arm (levels 0 and 2 absorbing;")
    assert "C = (0, 0, 100), d = eps C(2)/(1-beta) + 0.5)" in text
    assert "not indexable at eps = 1.001, 1.01 times the bound at beta = 0.9" in text
