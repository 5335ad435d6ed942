"""What Avrachenkov & Borkar (2019) printed in Section V, and the checks of its claims
(``replication/papers/lspe_2019/``); and the exercises of the notebook ``02_lspe_learning``.

References: the paper's own numbers (Table I, Sec. V text), the 2015 paper's eq. (1), and
invariants (the Whittle policy never beats the relaxation bound).
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from whittle_lib.models import crawling
from whittle_lib.learning import LSPESettings
from replication.papers import lspe_2019 as paper


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
    # the recorded verdict needs the share's 95% Wilson interval clear of 1/2
    assert v.verdict is None and v.verdict_text == "undetermined"
    assert paper.judge_single_runs([1.0] * 6, 0.5, 1.5).verdict_text == "holds"
    assert paper.judge_single_runs([1.0] * 3, 0.5, 1.5).verdict_text == "undetermined"
    assert paper.judge_single_runs([2.0] * 8, 0.5, 1.5).verdict_text == "fails"
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


# --- the notebook's experiments, moved here: small inputs, or the values the notebook prints ---


def test_the_printed_sherman_morrison_factors_fit_the_step_1_over_n_only():
    chk = paper.sherman_morrison_check(0.5)
    err = {r.name: r for r in chk.readings}
    # the notebook prints 1.3e-02 (as printed) and 2.2e+00 (b(n), c = 0.5); the errors are far
    # from rounding, so two significant digits are machine-independent
    assert f"{err['as printed (both lines)'].error:.1e}" == "1.3e-02"
    example = err["the Sec. IV example's step, printed factors"]
    assert f"{example.error:.1e}" == "2.2e+00"
    # invariant: the printed factors with the step 1/n, and the factors (n+1)/n, n with the
    # printed step, both invert B(n) up to rounding (49 rank-one updates of a 5x5: ~1e-14)
    for name in ("the step line off by one (B(n) the mean of n outer products)",
                 "the factor line off by one", "the Sec. IV example's step, its exact factors"):
        assert err[name].error < 1e-12 and err[name].error_text == "below 1e-12 (rounding)"
    # the claim is judged under the readings that keep the printed factors: one holds
    assert [r.inverts for r in chk.readings if r.printed_factors] == [False, True, False]
    assert len(chk.rows()) == 5 and set(chk.rows()[0]) >= {"reading", "step", "factors"}
    with pytest.raises(ValueError, match="step_constant"):
        paper.sherman_morrison_check(1.0)


def test_the_sherman_morrison_readings_against_a_direct_inverse():
    # independent check of the bookkeeping: the reading "step 1/n" is the inverse of the mean
    # of the identity and n - 1 outer products, computed by a dense solve
    rng = np.random.default_rng(0)
    vs = rng.normal(size=(49, 5))
    B = (np.eye(5) + sum(np.outer(v, v) for v in vs)) / 50
    P = np.eye(5)
    for n, v in enumerate(vs, start=2):
        Pv = P @ v
        P = n / (n - 1) * (P - np.outer(Pv, Pv) / (n - 1 + v @ Pv))
    # 49 rank-one updates of a well-conditioned 5x5: rounding only
    np.testing.assert_allclose(P, np.linalg.inv(B), rtol=0, atol=1e-10)


def test_the_printed_a_term_subtracts_a_row_from_a_matrix():
    assert paper.printed_a_term_shapes(3) == ((3, 3), (1, 3))
    readings = paper.printed_a_term_readings(3)
    assert [r.well_formed for r in readings] == [False, False, True]
    assert readings[2].lspe          # the moved parenthesis gives LSPE(0)'s increment


def test_section_iv_evidence_names_the_typos_and_the_search():
    sm, a_terms = paper.sherman_morrison_check(0.5), paper.printed_a_term_readings()
    for note in (paper.sherman_morrison_evidence(sm), paper.a_term_evidence(a_terms)):
        assert note.startswith("typo:") and "Searched:" in note
    # some reading keeping the printed factors inverts, some does not: claim-depends
    kept = [r.inverts for r in sm.readings if r.printed_factors]
    assert any(kept) and not all(kept)
    assert [paper.a_term_shapes_text(r) for r in a_terms][0] == "14x14 - 1x14"


def test_simulate_whittle_is_the_policy_simulation_and_its_notes_name_the_runs():
    model = crawling.table_one()
    ws = paper.simulate_whittle(model, 200, 3, rng=7)
    # the same stream through the policy simulator directly: the same mean
    from whittle_lib.models import crawling_policies as policies
    direct = policies.simulate_crawling(model, policies.WhittleRule(model), 1, 200, stochastic=True,
                               replications=3, rng=np.random.default_rng(7))
    assert ws.mean == pytest.approx(float(np.mean(direct.average_reward)), rel=1e-12)
    assert (ws.replications, ws.n_steps) == (3, 200) and "±" in str(ws)
    ref = paper.reference_rewards(model)
    assert ref.period == 2        # the Whittle policy alternates sources 1 and 2
    # the notebook hands over Part I's orbit and bound: the same rewards, not recomputed
    orbit = policies.crawling_orbit(model, policies.WhittleRule(model), 1)
    given = paper.reference_rewards(model, orbit=orbit, bound=crawling.crawling_bound(model, 1))
    assert (given.whittle, given.bound, given.period) == (ref.whittle, ref.bound, ref.period)
    assert f"{ws.replications} replications of {ws.n_steps} periods" in (
        paper.whittle_stochastic_note(ws))
    assert f"earns {ref.whittle:.2f} with the 2015 xi-bar" in paper.whittle_283_evidence(ref, ref)
    assert f"earns {ws} with the 2015 xi-bar" in paper.whittle_283_stochastic_evidence(ws, ws)


def _short(**kw):
    return LSPESettings(n_steps=80, record_every=10, **kw)


def test_record_runs_name_and_split_the_groups_and_judge_readings_counts_them():
    model = crawling.table_one()
    with pytest.warns(RuntimeWarning, match="stopped early in: literal, arrivals, "
                                            "feature_scale=1, 40 steps"):
        extra = paper.record_runs(model, _short(), mean_dynamics=[3, 4],
                                  sweep=[("feature_scale", 1.0, [5, 6]),
                                         ("step_constant", 0.9, [7, 8])],
                                  fixes_seed=1, max_workers=1)
    names = list(extra.groups)
    assert names == [paper.LITERAL_READINGS[1].name,
                     "literal, arrivals, feature_scale=1, 40 steps",
                     "literal, arrivals, step_constant=0.9, 40 steps"]
    assert [len(g) for g in extra.groups.values()] == [2, 2, 2]
    assert extra.groups[names[0]][0].settings.dynamics == "deterministic"
    assert extra.groups[names[2]][0].settings.n_steps == 40
    assert extra.groups[names[2]][0].settings.step_constant == 0.9
    # the same runs as one by one on their seeds: a pool and its stacks change no bit
    alone = paper.run_jobs(model, [(extra.groups[names[2]][1].settings, 8)], max_workers=1)[0]
    np.testing.assert_array_equal(alone.rewards, extra.groups[names[2]][1].rewards)
    # feature_scale=1 breaks down at once (the literal unit): listed, not judged
    first = paper.run_jobs(model, [(paper.reading_settings(_short(), r), s)
                                   for r in paper.LEARNING_READINGS[:3] for s in (1, 2)],
                           max_workers=1)
    groups = {**{r.name: first[2 * k:2 * k + 2]
                 for k, r in enumerate(paper.LEARNING_READINGS[:3])}, **extra.groups}
    judged = paper.judge_readings(groups, band=(100.0, 200.0))
    assert names[1] in judged.broken and names[1] not in judged.one_arm
    assert set(judged.one_arm) == set(groups) - {names[1]}
    rows = judged.rows()
    assert [row["#"] for row in rows] == ["1", "2", "3", "4", "-", "5"]
    assert rows[4]["active arms"].startswith("every run broke down")
    for row, name in zip([r for r in rows if r["#"] != "-"], judged.one_arm):
        one_arm, in_band = judged.one_arm[name], judged.in_band[name]
        assert row["one arm"] == f"{one_arm.satisfied}/2 {one_arm.verdict_text}"
        assert row["reward in band"] == f"{in_band.satisfied}/2 {in_band.verdict_text}"


def test_summarise_runs_and_the_evidence_of_the_single_run_claims():
    model = crawling.table_one()
    runs = paper.run_jobs(model, [(_short(), s) for s in (1, 2, 3)], max_workers=1)
    summary = paper.summarise_runs(runs)
    assert len(summary) == 3
    assert summary.active[0] == pytest.approx(np.mean([r.average_active() for r in runs]))
    assert paper.sampled_runs_note(summary).endswith("3 runs, mean and 95% CI")
    lit = paper.LEARNING_READINGS[2].name
    judged = paper.judge_readings({paper.LEARNING_READINGS[0].name: runs, lit: runs},
                                  band=(0.0, 1e9))
    assert [f"{v.satisfied}/{v.runs}" for v in judged.in_band.values()] == ["3/3", "3/3"]
    for note in (paper.one_arm_evidence(judged, summary), paper.in_band_evidence(judged, summary)):
        assert "by reading: " in note and "Searched: 2 readings x 3 to 3 single runs" in note
    with pytest.warns(RuntimeWarning, match="stopped early"):
        broken = paper.run_jobs(model, [(_short(feature_scale=1.0), 1)], max_workers=1)
    with pytest.raises(ValueError, match="stopped early"):
        paper.summarise_runs(broken)


def test_the_kappa_study_separates_only_beyond_the_intervals():
    # separated: means 1 and 3 with half-widths 0.5 each; not: half-widths 1.5
    apart = np.array([[1.0, 0.5], [3.0, 0.5]])
    close = np.array([[1.0, 1.5], [3.0, 1.5]])
    assert paper.KappaStudy((1.0, 2.0), 2, apart, apart, apart).controls
    assert not paper.KappaStudy((1.0, 2.0), 2, apart, close, apart).controls
    study = paper.KappaStudy([0.5, 2], 4, apart, close, apart)
    assert study.kappas == (0.5, 2.0)
    assert paper.kappa_evidence(study).startswith("Over kappa = 0.5, 2 (4 runs each)")
    assert paper.kappa_evidence(study).endswith("with no trend in kappa.")
    with pytest.raises(ValueError, match=r"reward must have shape \(2, 2\)"):
        paper.KappaStudy((1.0, 2.0), 2, apart, apart, apart[:1])


def test_numerical_fixes_switch_off_one_fix_each_on_the_same_seed():
    model = crawling.table_one()
    settings = _short()
    base = paper.run_jobs(model, [(settings, 1)], max_workers=1)[0]
    extra = paper.record_runs(model, settings, mean_dynamics=[], sweep=[], fixes_seed=1,
                              max_workers=1)
    fixes = paper.numerical_fixes(model, settings, base, extra.fixes)
    assert list(fixes.runs) == ["both fixes", "no projection", "no Tikhonov"]
    assert not fixes.runs["no projection"].settings.project
    assert not fixes.runs["no Tikhonov"].settings.regularise
    # the literal unit breaks down at its first step (the stated criterion), silently: a field
    assert fixes.literal_scale.broke_down and fixes.literal_scale.breakdown_at == 0
    assert fixes.recorded_steps == len(fixes.runs["no projection"].steps)
    assert 0 <= fixes.overflow_steps <= fixes.recorded_steps and 0.0 <= fixes.outside <= 1.0
    assert set(fixes.rows()) == set(fixes.runs) and "max|r|" in fixes.rows()["no Tikhonov"]
    assert f"overflows on {fixes.overflow_steps} of {fixes.recorded_steps}" in (
        paper.projection_evidence(fixes))
    assert "breaks down at step 0" in paper.tikhonov_evidence(fixes)
    with pytest.raises(ValueError, match="base"):
        paper.numerical_fixes(model, _short(kappa=4.0), base, extra.fixes)
    swapped = {**extra.fixes, "no projection": extra.fixes["no Tikhonov"]}
    with pytest.raises(ValueError, match="must be run with project=False"):
        paper.numerical_fixes(model, settings, base, swapped)


# --- the notebook's exercises ----------------------------------------------------------------


@pytest.mark.slow
def test_each_exercise_solution_runs_and_prints_what_its_text_shows():
    """Each folded solution of 02's exercises, run after Part I's cells up to its Section 3
    (tests/apparatus/lspe_exercises.py, in its own process), prints the text block the solution
    shows under its code, to the character (portable arithmetic: the same on every CPU)."""
    script = Path(__file__).with_name("lspe_exercises.py")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    pairs = json.loads(run.stdout)
    assert len(pairs) == 4                       # four exercises, each with its solution
    for k, (printed, claimed) in enumerate(pairs, start=1):
        assert claimed, f"exercise {k}: the solution shows no output"
        assert printed == claimed, f"exercise {k}: prints {printed!r}, the text says {claimed!r}"
