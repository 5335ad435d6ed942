"""What Avrachenkov & Borkar (2019) printed in Section V, and the checks of its claims.

References: the paper's own numbers (Table I, Sec. V text), the 2015 paper's eq. (1), and
invariants (the Whittle policy never beats the relaxation bound).
"""

import math

import numpy as np
import pytest

from whittle_lib.models import crawling
from whittle_lib.learning import LSPESettings
from whittle_lib.papers import lspe_2019 as paper


def test_the_2019_u_formula_is_the_2015_eq1_with_unit_base_utility():
    # u_i = (1 - alpha_i) lambda_i / c_i (M_i = inf) against Lambda xi-bar (1 - alpha)/mu, xi-bar=1
    models = paper.xi_readings()
    u19 = paper.u_printed(250.0, paper.PRINTED.decay)
    # same formula, evaluated with expm1 in one and exp in the other: rounding only
    np.testing.assert_allclose(models["2019 u-formula (no xi-bar)"].u, u19, rtol=1e-13)
    # source 1 has xi-bar = 1 in the 2015 Table I: both readings give the printed 179.79
    assert round(float(u19[0]), 2) == 179.79
    assert round(float(models["xi-bar of the 2015 Table I"].u[0]), 2) == 179.79


def test_a_finite_horizon_lowers_u():
    assert paper.u_printed(250.0, 0.7, horizon=3) < paper.u_printed(250.0, 0.7)


def test_160_between_best_and_second_best_is_impossible_without_xi_bar():
    # Sec. V: "reward around 160, a value between ... the best or the second best arm"
    ref = paper.reference_rewards(paper.xi_readings()["2019 u-formula (no xi-bar)"])
    assert ref.second > paper.PRINTED.reward_around          # 210.94 > 160
    ref15 = paper.reference_rewards(paper.xi_readings()["xi-bar of the 2015 Table I"])
    assert ref15.second < paper.PRINTED.reward_around < ref15.best   # 147.66 < 160 < 179.79


@pytest.mark.parametrize("reading, whittle", [("xi-bar of the 2015 Table I", 260.39),
                                              ("2019 u-formula (no xi-bar)", 471.38)])
def test_the_whittle_policy_with_one_arm_does_not_earn_283(reading, whittle):
    ref = paper.reference_rewards(paper.xi_readings()[reading])
    # exact orbit averages, printed to 2 decimals in the notebook
    assert round(ref.whittle, 2) == whittle
    # invariant: no policy beats the relaxation bound; here the Whittle policy attains it
    assert ref.whittle <= ref.bound + 1e-9
    assert math.isclose(ref.whittle, ref.bound, rel_tol=1e-12)
    assert not paper.printed_value_within(paper.PRINTED.whittle_one_arm, ref.whittle)


def test_printed_value_within_uses_the_last_digit_and_the_half_width():
    assert paper.printed_value_within(283, 283.49)
    assert not paper.printed_value_within(283, 283.51)
    assert paper.printed_value_within(283, 280.0, half_width=2.6)
    assert paper.printed_value_within(254.66, 254.664, digits=2)
    with pytest.raises(ValueError, match="half_width"):
        paper.printed_value_within(283, 280.0, half_width=-1.0)


def test_judge_single_runs_counts_the_share_and_needs_a_majority():
    v = paper.judge_single_runs([0.4, 0.5, 1.5, 1.6], 0.5, 1.5)
    assert (v.satisfied, v.runs, v.holds) == (2, 4, False)     # half is not a majority
    assert 0.0 <= v.share_low < 0.5 < v.share_high <= 1.0
    assert paper.judge_single_runs([1.0, 1.0, np.nan], 0.5, 1.5).holds   # nan never satisfies
    assert "2/4 runs" in str(v)
    with pytest.raises(ValueError, match="low"):
        paper.judge_single_runs([1.0], 2.0, 1.0)
    with pytest.raises(ValueError, match="values"):
        paper.judge_single_runs([], 0.0, 1.0)


def test_readings_set_only_the_fields_they_name():
    base = LSPESettings(feature_scale=100.0, n_steps=500)
    names = [r.name for r in paper.LEARNING_READINGS]
    assert len(set(names)) == len(names)
    literal = [r for r in paper.LEARNING_READINGS if r.name.startswith("literal")]
    assert {paper.reading_settings(base, r).dynamics for r in literal} == {"stochastic",
                                                                          "deterministic"}
    for r in literal:
        s = paper.reading_settings(base, r, feature_scale=10.0)
        assert (s.action, s.reward, s.feature_scale, s.n_steps) == ("sample", "state", 10.0, 500)
    assert paper.reading_settings(base, paper.LEARNING_READINGS[0]) == base
    with pytest.raises(ValueError, match="overrides"):
        paper.LearningReading("bad", {"kappa": 3.0})
    with pytest.raises(ValueError, match="settings"):
        paper.reading_settings({}, paper.LEARNING_READINGS[0])


def test_printed_constants_are_section_v():
    p = paper.PRINTED
    assert (p.kappa, p.gamma, p.n_steps, p.whittle_one_arm) == (2.0, 0.05, 10_000, 283.0)
    assert crawling.table_one().mu.tolist() == list(p.decay)


def test_run_jobs_gives_the_same_runs_in_a_pool_and_in_process():
    model = crawling.table_one()
    short = LSPESettings(n_steps=60, record_every=10)
    jobs = [(short, 1), (paper.reading_settings(short, paper.LEARNING_READINGS[3]), 2)]
    pooled = paper.run_jobs(model, jobs, max_workers=2)
    serial = paper.run_jobs(model, jobs, max_workers=1)
    for a, b in zip(pooled, serial):
        # one seed, one trajectory: bit for bit, whichever process ran it
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.q, b.q)
    assert pooled[1].settings.dynamics == "deterministic"
    with pytest.raises(ValueError, match="jobs"):
        paper.run_jobs(model, [({}, 1)])


def test_run_jobs_warns_once_in_the_caller_about_runs_that_stopped():
    # feature_scale=1: the regularised solve breaks down at step 0 (the literal unit)
    broken = LSPESettings(n_steps=50, feature_scale=1.0)
    with pytest.warns(RuntimeWarning, match="1 of 2 LSPE runs stopped early"):
        out = paper.run_jobs(crawling.table_one(), [(broken, 1), (LSPESettings(n_steps=50), 1)],
                             max_workers=1)
    assert out[0].broke_down and not out[1].broke_down
