"""The readings and sweeps that judge Pavamana & Singh (2023): references and invariants."""

import warnings

import numpy as np
import pytest

from whittle_lib import caching as C
from whittle_lib import indices
from whittle_lib.papers import caching_2023 as P


def _content(chain=(0.2, 0.2, 0.3, 0.1), K=6, d=1.0, cost=None):
    r = np.arange(K, dtype=float)
    up0, down0, up1, down1 = chain
    return C.CachingContent.birth_death(r, 2 * np.sqrt(r) if cost is None else cost, up0=up0,
                                        down0=down0, up1=up1, down1=down1, fetch_cost=d)


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
