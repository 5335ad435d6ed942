"""Tests of replication.papers.rl_index_2018: the greedy readings, the spread of one run of a
fixed schedule, Table II's runs (the notebook's layout against each policy simulated alone),
the readings and notes of the record, and the Deterministic row's search."""

import csv
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from whittle_lib.learning import LearnedIndexRule, StepSizes
from whittle_lib.models import crawling as C
from whittle_lib.models import crawling_policies as P
from replication.papers import rl_index_2018 as B
from replication.papers.crawling_2015 import index_2018
from replication.records import format_estimate

ROOT = Path(__file__).resolve().parents[2]
MODEL = C.table_one(250)

# The keys the notebook records in its cells, with the module's notes (as 03 writes them).
TABLE_ONE = ("Table I", "Lambda_i",
             "Table II was computed with Lambda_i = 25 and theta_i the rate of an exponential law")
PRINTED_INDEX = ("Sec. IV-A", "index",
                 "the printed lambda^i(x) is the Whittle index of the deterministic model")
WEIGHTS = ("Figs. 1-2", "weights", "the index weights converge with and without projection")
FIG_ONE = ("Fig. 1", "projection", "the projection acts of the order of 10^2 times in 10^5 iterations")


def _record_table_one(cmp, setting):
    cmp.claim(*TABLE_ONE, list(setting.matches) == [B.TABLE_ONE_AS_PRINTED], B.table_one_evidence(setting))


def _record_printed_index(cmp, printed):
    cmp.claim(*PRINTED_INDEX, printed.printed_is_exact, B.printed_index_evidence(printed))


def _record_convergence(cmp, conv):
    cmp.claim(*WEIGHTS, conv.converged, B.convergence_evidence(conv))


def _record_projection_order(cmp, fig1):
    cmp.claim_by_reading(*FIG_ONE, fig1.verdicts, B.projection_order_evidence(fig1))


def _record_stochastic_index(cmp, indices):
    cmp.new("Sec. IV-B", "index;x in [u, u*]", "median of gamma_stochastic / gamma* - 1, largest over sources",
            f"{np.median(indices.relative_stochastic, axis=0).max():+.3f}", B.stochastic_index_note(indices))
    for lab, gap in indices.gap_learned.items():
        cmp.new("Sec. IV-B", f"index {lab};x in [u, u*]", "largest |gamma_learned / gamma_stochastic - 1|",
                f"{gap.max():.3f}", B.LEARNED_INDEX_NOTE)


def _record_table_two(cmp, table, diagnoses):
    for (name, M), (diagnosis, verdicts) in diagnoses.items():
        mean, half, _ = table.ci(name, M)
        note = B.table_two_note(table, name, M, diagnosis, verdicts)
        key = ("Table II", f"policy={name};M={M}", "average reward")
        if B.one_verdict(verdicts):
            cmp.number(*key, mean, diagnosis=note, half_width=half)
        else:
            cmp.claim_by_reading(*key, verdicts, note, value=format_estimate(mean, half))
    for M in (1, 2):
        cmp.new("Table II", f"policy={B.PRINTED};M={M}", "average reward",
                format_estimate(*table.ci(B.PRINTED, M)[:2]), B.PRINTED_FORM_NOTE, decimals=2)


def _record_claims(cmp, claims):
    notes = B.table_two_claim_evidence(claims)
    cmp.claim_by_reading("Sec. IV-B text", "M=1", "the deterministic index is best and the stochastic index "
                         "with projection very close", claims.best.verdicts, notes["best"])
    cmp.claim_by_reading("Sec. IV-B text", "M=2", "the stochastic index with projection is better than the "
                         "deterministic index", claims.better.verdicts, notes["better"])
    cmp.claim_by_reading("Sec. IV-B text", "M=1 and M=2", "projection matters: a significant difference between "
                         "the stochastic index with and without projection", claims.projection.verdicts,
                         notes["projection"])


def _record_state(cmp, state):
    for M, name, _, (dm, dh), _ in state.rows:
        cmp.new("Table II", f"policy={name}, subsidy at the state;M={M}", "average reward minus deterministic",
                format_estimate(dm, dh), B.STATE_SUBSIDY_NOTE, decimals=2)


def test_printed_greedy_reading_is_the_library_greedy_rule():
    # the printed rule equals ExpectedValueRule up to the common factor Lambda/(1-alpha)... :
    # both are increasing functions of the age with the same per-source ordering, so the
    # exact orbits coincide (an independent implementation of the same priority)
    rule = B.greedy_readings(MODEL)[0].rule
    for M in (1, 2):
        a = P.crawling_orbit(MODEL, rule, M).average_reward
        b = P.crawling_orbit(MODEL, P.ExpectedValueRule(MODEL), M).average_reward
        assert a == pytest.approx(b, rel=1e-12)   # same schedule: equal up to summation order


def test_greedy_readings_include_the_permutations_and_flag_state_rules():
    readings = B.greedy_readings(MODEL)
    names = [r.name for r in readings]
    assert len(names) == len(set(names))
    assert sum("mu of sources" in n for n in names) == 23     # 4! - identity
    assert {r.name for r in readings if not r.fixed_schedule} == {"current state x", "x / mu"}


def test_utility_variance_matches_monte_carlo():
    draws = C.sample_new_utility(MODEL, 40_000, rng=11)
    var = B.utility_variance(MODEL)
    # sample variance of 40000 draws: relative se sqrt(2/n) ~ 0.7 %, plus kurtosis; 4 % is > 4 se
    np.testing.assert_allclose(draws.var(axis=0, ddof=1), var, rtol=0.04)
    det = C.sample_new_utility(MODEL, 40_000, rng=12, base_law="deterministic")
    np.testing.assert_allclose(det.var(axis=0, ddof=1), B.utility_variance(MODEL, "deterministic"),
                               rtol=0.04)


def test_schedule_run_sd_matches_simulation_of_round_robin():
    orbit = P.crawling_orbit(MODEL, P.RoundRobinRule(4, 1), 1)
    n, R = 200, 300
    sim = P.simulate_crawling(MODEL, P.RoundRobinRule(4, 1), 1, n, stochastic=True, replications=R, rng=5)
    sd = B.schedule_run_sd(MODEL, orbit, n)
    # sd of R = 300 runs: relative se ~ 1/sqrt(2R) = 4 %; the start at u adds O(1/n); 15 % is
    # over 3 se
    assert sim.average_reward.std(ddof=1) == pytest.approx(sd, rel=0.15)
    # and the mean of a fixed schedule is the deterministic orbit's (linearity): compare with
    # the deterministic run over the same 200 periods from u (the start is not the orbit), 4 se
    det = P.simulate_crawling(MODEL, P.RoundRobinRule(4, 1), 1, n).average_reward
    assert abs(sim.average_reward.mean() - det) < 4 * sd / np.sqrt(R)


def test_one_run_tolerance_is_the_rule_written_in_the_expected_table():
    with open(ROOT / "data" / "expected" / "03_rl_index_learning.csv", newline="") as f:
        rows = {r["setting"]: r for r in csv.DictReader(f) if r["item"] == "Table II"}
    for M in (1, 2):
        for name, rule in (("Round Robin", P.RoundRobinRule(4, 1)),
                           ("Greedy", P.ExpectedValueRule(MODEL))):
            orbit = P.crawling_orbit(MODEL, rule, M)
            tol = B.one_run_tolerance(B.schedule_run_sd(MODEL, orbit, 10_000), 8)
            assert float(rows[f"policy={name};M={M}"]["tolerance"]) == float(f"{tol:.3g}")


def test_one_run_tolerance_rejects_bad_input():
    with pytest.raises(ValueError, match="run_sd"):
        B.one_run_tolerance(-1.0, 8)
    with pytest.raises(ValueError, match="replications"):
        B.one_run_tolerance(0.1, 0)


def test_the_state_readings_are_each_simulated_alone():
    seed = np.random.SeedSequence(9)
    got = B.state_reading_runs(MODEL, 150, seed=seed)
    for M in (1, 2):
        for k, w in enumerate((np.ones(4), 1 / MODEL.mu)):
            rewards = P.simulate_crawling(MODEL, B.StatePriorityRule(w), M, 150, stochastic=True,
                                          rng=np.random.default_rng(seed)).rewards
            # one run, averaged over the periods as the stacked run does (a column of a mean)
            want = np.stack([rewards, rewards], axis=-1).mean(axis=0)[0]
            assert got["greedy on x and on x/mu", M][k] == want, (M, k)


def test_sweep_config_validates():
    with pytest.raises(ValueError, match="a0s"):
        B.SweepConfig(a0s=(0.0,))
    with pytest.raises(ValueError, match="subsidy_at"):
        B.SweepConfig(subsidy_at=("x",))
    with pytest.raises(ValueError, match="end with None"):
        B.SweepConfig(ps=(None, 0.1))


# -- the notebook's computations and recordings -------------------------------------------------

from whittle_lib.learning import CrawlerIndexProblem, learn_whittle_index  # noqa: E402
from replication.records import Comparison  # noqa: E402

NB = "03_rl_index_learning"
MAIN = B.MainRun("default", "threshold", 0.05, 0.1, 8, 10_000)


def _paper():
    return B.paper_table_two()


def test_main_run_lengths_and_labels():
    assert (MAIN.learn_steps, MAIN.burn_in) == (30_000, 10_000)
    assert B.MainRun("full", "state", 0.5, 0.2, 2, 100).learn_steps == 134_000   # 34,000 + 1e5
    # the labels the notebook's readings were recorded under
    assert MAIN.label() == "main run (subsidy threshold, a0=0.05, p=0.1, 30000 iterations)"
    assert MAIN.label(iterations=False) == "main run (subsidy threshold, a0=0.05, p=0.1)"
    with pytest.raises(ValueError, match="profile"):
        B.MainRun("quick", "threshold", 0.05, 0.1, 8, 10_000)
    with pytest.raises(ValueError, match="subsidy_at"):
        B.MainRun("default", "x", 0.05, 0.1, 8, 10_000)


def test_default_profile_is_the_library_step_sizes():
    # the notebook's default run uses StepSizes' defaults (the constants its text quotes)
    sizes, steps = B.PROFILES["default"], StepSizes()
    assert (sizes.c0, sizes.c_power, sizes.a_power, sizes.n0) == (steps.c0, steps.c_power, steps.a_power,
                                                                  steps.n0)
    assert set(B.PROFILES) == set(B.RUN_LENGTHS)


def test_paper_table_two_reads_the_expected_table():
    paper = _paper()
    # Table II, rows 1 and 5, as printed
    assert paper.text["Round Robin", 1] == "208.13"
    assert paper.value["Stochastic with Projection", 2] == 333.36
    assert len(paper.value) == 10
    assert paper.best_tolerance == 1.19          # 259.61 - 258.42, the paper's "very close"
    cmp = Comparison(NB)                         # what the comparison reads: the same table
    assert paper.tolerance["Greedy", 2] == cmp.paper("Table II", "policy=Greedy;M=2",
                                                     "average reward").tolerance


def test_round_robin_settles_the_setting_of_table_one():
    paper = _paper()
    check = B.table_one_settings(MODEL, paper)
    # the values the notebook prints (exact, deterministic model), to their printed digits
    np.testing.assert_allclose(check.reward("Lambda=250, mean theta"), [208.33, 281.77, 303.63], atol=0.005)
    np.testing.assert_allclose(check.reward("Lambda=25, mean theta"), [20.83, 28.18, 30.36], atol=0.005)
    assert check.matches == ("Lambda=250, mean theta",)
    cmp = Comparison(NB)
    _record_table_one(cmp, check)
    row = cmp.row(*TABLE_ONE)
    assert row.status == "claim-fails" and "only for: ['Lambda=250, mean theta']" in row.note
    frame = check.to_frame()        # the paper's one run first, then each reading, to 2 decimals
    assert frame.index[0] == "paper (one run)" and frame.loc["Lambda=250, mean theta", "M=1"] == 208.33


def test_printed_index_check_reproduces_the_notebook():
    check = B.printed_index_check(MODEL)
    assert check.by_definition_gap < 1e-9             # exact index = index by definition (4.5e-12)
    np.testing.assert_allclose(check.gap[0, :5], [89.282, 22.017, 22.017, 5.429, 2.696], atol=5e-4)
    np.testing.assert_allclose(check.orbit[1], [260.390, 257.965, 260.390], atol=5e-4)
    np.testing.assert_allclose(check.orbit[2], [337.775, 327.447, 327.447], atol=5e-4)
    assert not check.printed_is_exact
    # the table shows the whole range x_1..x_14 the note quotes ("up to" the largest gap)
    np.testing.assert_array_equal(check.to_frame()["largest on x_1..x_14"], check.gap.max(axis=1).round(3))
    assert check.orbit_frame().loc["printed 2018 form", "M=1"] == 257.965
    assert check.gap.min() > 0                        # above the exact index on every visited state
    cmp = Comparison(NB)
    _record_printed_index(cmp, check)
    row = cmp.row(*PRINTED_INDEX)
    assert row.status == "claim-fails" and "earns 257.965 (M=1) and 327.447 (M=2)" in row.note


@pytest.fixture(scope="module")
def small_learning():
    """A short main run: batch (2, R=2, N=4), with and without projection."""
    problem = CrawlerIndexProblem(MODEL, p=(0.1, None))
    learned = learn_whittle_index(problem, 400, rng=np.random.default_rng(1), burn_in=200,
                                  batch_shape=(2, 2, 4), record_every=10)
    return problem, learned


def test_projection_counts_and_convergence_of_a_short_run(small_learning):
    problem, learned = small_learning
    counts = B.projection_counts(learned, problem, 0.1)
    np.testing.assert_array_equal(counts.per_learner, learned.projections[0] * 1e5 / 200)
    assert counts.burn_in_per_replication == learned.projections_burn_in[0].sum() / 2
    assert counts.largest_free.shape == (4,) and np.all(counts.largest_free >= 0)
    # the notebook measures the spread and the change; the record judges them at 0.02
    conv = B.WeightConvergence(np.array([0.01, 0.019]), np.array([0.005, 0.001]), 2, 400, 200)
    assert conv.converged
    assert not B.WeightConvergence(np.array([0.01, 0.02]), np.zeros(2), 2, 400, 200).converged
    cmp = Comparison(NB)
    _record_convergence(cmp, conv)
    row = cmp.row(*WEIGHTS)
    assert row.status == "claim-holds" and "(400 iterations, 200 burn-in)" in row.note
    assert "sd 0.0190, change 0.0050" in row.note


def test_learned_indices_with_zero_weights_are_gamma_star():
    problem = CrawlerIndexProblem(MODEL, p=(0.1, None))
    zero = np.zeros((2, 4, problem.n_index_features))
    # a "stochastic index" equal to gamma* on the grid: every gap vanishes
    x = np.linspace(MODEL.u, MODEL.u_star, 6)             # the notebook's grid, 6 states
    np.testing.assert_allclose(x[0], MODEL.u)
    np.testing.assert_allclose(x[-1], MODEL.u_star)
    g = C.whittle_index(x, MODEL.u, MODEL.alpha)
    stoch = [C.StochasticIndex(x[:, i], g[:, i], g[:, i], g[:, i], 10) for i in range(4)]
    comp = B.compare_indices(problem, x, stoch, {"zero": zero})
    np.testing.assert_allclose(comp.relative_stochastic, 0.0, atol=1e-12)
    np.testing.assert_allclose(comp.gap_learned["zero"], 0.0, atol=1e-12)
    cmp = Comparison(NB)
    _record_stochastic_index(cmp, comp)
    assert [r.replicated for r in cmp.rows] == ["+0.000", "0.000"]


def _sweep(diff, proj=None, a0s=(0.05, 0.5), ps=(0.1, 0.2, None)):
    """A SweepSummary of given paired differences, shape (R, S=2, A, V, 2), and projection
    counts per learner (R, S, A, V, N) in a run of the config's 3000 steps."""
    cfg = B.SweepConfig(a0s=a0s, ps=ps)
    counts = np.zeros(diff.shape[:4] + (4,), dtype=np.int64) if proj is None else proj
    return B.SweepSummary(cfg, diff, counts * 1e5 / cfg.n_steps)


def test_the_sweep_summary_of_paired_differences():
    rng = np.random.default_rng(0)
    diff = rng.normal(size=(2, 2, 2, 3, 2))
    sweep = _sweep(diff)
    np.testing.assert_allclose(sweep.diff, diff, atol=1e-12)
    assert sweep.p_values == (0.1, 0.2)
    assert [r[1:] for r in sweep.readings()] == [("threshold", 0, 0.05), ("threshold", 1, 0.5),
                                                  ("state", 0, 0.05), ("state", 1, 0.5)]
    # the frames: rows (subsidy, a0), columns p and none, means of the paired differences
    frame = sweep.diff_frame(1)
    assert list(frame.columns) == ["p=0.1", "p=0.2", "none"] and frame.index[1] == "threshold, 0.5"
    np.testing.assert_allclose(frame.to_numpy()[2], diff[:, 1, 0, :, 0].mean(axis=0).round(2))
    assert sweep.projection_frame().shape == (4, 2)
    assert (sweep.projection_frame() == 0).all().all()


def test_projection_order_counts_per_learner():
    proj = np.zeros((2, 2, 2, 3, 4), dtype=np.int64)
    proj[:, 0, 1, 0, 2] = 30            # threshold, a0=0.5, p=0.1: 30 in n_steps=3000 -> 1000 per 1e5
    sweep = _sweep(np.zeros((2, 2, 2, 3, 2)), proj)
    counts = B.ProjectionCounts(np.array([[5000.0, 100.0, 0, 0], [6000.0, 300.0, 0, 0]]), 0.0,
                                np.full(4, 0.2), 0.1)
    r = B.projection_order(counts, sweep, MAIN)
    assert r.verdicts[MAIN.label()] is True               # source 2: median 200 per 1e5
    assert r.verdicts["threshold, a0=0.5, p=0.1"] is True  # 1000 per 1e5: the upper end
    assert sum(r.verdicts.values()) == 2 and len(r.verdicts) == 1 + 2 * 2 * 2
    assert r.summary == "holds under 2 of 9 readings"
    frame = r.to_frame()            # every verdict: the main run on its own row, the sweep by p
    assert frame.loc[MAIN.label(), "verdict"] == "holds"
    assert frame.loc["threshold, a0=0.5", "p=0.1"] == "holds" and frame.shape == (5, 3)
    cmp = Comparison(NB)
    _record_projection_order(cmp, r)
    row = cmp.row(*FIG_ONE)
    assert row.status == "claim-depends" and "per source 5500, 200, 0, 0 per 1e5" in row.note


def _table(levels, R=4, seed=0):
    """A TableTwo whose policies earn ``levels[name, M]`` plus common noise (paired)."""
    noise = np.random.default_rng(seed).normal(scale=0.1, size=(2, R))
    names = B.TABLE_TWO_POLICIES + ("Deterministic, printed 2018 form",
                                    "Stochastic without Projection, subsidy at the state",
                                    "Stochastic with Projection, subsidy at the state")
    runs = {(n, M): levels.get((n, M), 100.0 * M) + noise[M - 1] for n in names for M in (1, 2)}
    runs.update({("greedy on x and on x/mu", M): np.array([250.0, 233.0]) for M in (1, 2)})
    return B.TableTwo(runs, R, 1000)


def test_learned_rows_are_reached_by_a_reading_of_the_sweep():
    paper = _paper()
    det = {1: 259.61, 2: 328.44}
    table = _table({("Deterministic", M): det[M] for M in (1, 2)})
    diff = np.zeros((2, 2, 2, 3, 2))
    # state, a0=0.5, no projection: 0.2 below the paper's M=1 value, within its tolerance (0.365)
    diff[:, 1, 1, 2, 0] = 241.77 - det[1] - 0.2
    rows = B.learned_row_readings(table, _sweep(diff), paper, MAIN)
    free1 = rows["Stochastic without Projection", 1].verdicts
    assert free1["state, a0=0.5"] is True and free1["threshold, a0=0.05"] is False
    assert free1[MAIN.label()] is False
    assert any(k.startswith("state: between the swept extremes") and v for k, v in free1.items())
    # with projection: one reading per (subsidy, a0, p) and one bracket per subsidy, plus the main run
    assert len(rows["Stochastic with Projection", 1].verdicts) == 1 + 2 * 2 * 2 + 2
    np.testing.assert_allclose(rows["Stochastic without Projection", 1].evidence["reached"].min(), 241.57, atol=0.15)


def test_claims_after_table_two_under_their_readings():
    paper = _paper()
    levels = {("Deterministic", 1): 260.0, ("Stochastic with Projection", 1): 259.5,
              ("Stochastic without Projection", 1): 250.0, ("Greedy", 1): 255.0,
              ("Deterministic, printed 2018 form", 1): 258.0,
              ("Deterministic", 2): 330.0, ("Stochastic with Projection", 2): 333.0,
              ("Stochastic without Projection", 2): 320.0, ("Deterministic, printed 2018 form", 2): 327.0}
    table = _table(levels)
    diff = np.zeros((2, 2, 2, 3, 2))
    diff[..., 2, :] = -5.0                      # without projection loses 5 everywhere in the sweep
    claims = B.table_two_claims(table, _sweep(diff), paper, MAIN)
    # paired differences are exact here (common noise): the deterministic index is best strictly
    assert claims.best.verdicts["exact index, best strictly"] is True
    assert claims.best.verdicts["printed form, best strictly"] is False    # 259.5 > 258
    assert claims.better.verdicts["sweep: every a0, p, subsidy against the exact index"] is False  # 0 > 0 fails
    assert all(claims.projection.verdicts.values())                     # +9.5, +13, and 5 > 1 in the sweep
    np.testing.assert_allclose(claims.gaps["exact index"]["Greedy"], (-5.0, 0.0), atol=1e-9)
    assert claims.projection.summary == "holds under 9 of 9 readings"
    # every verdict the cell records is shown in the claim's table
    assert claims.better.summary == "holds under 2 of 3 readings"
    assert claims.better.to_frame().loc["against the exact index (+3.00 ± 0.00)", "verdict"] == "holds"
    assert claims.projection.to_frame().shape == (5, 3)       # the main run, then 4 rows by 2 p
    np.testing.assert_allclose([claims.projection.evidence["main"][M][0] for M in (1, 2)], [9.5, 13.0])
    assert claims.gaps_frame().loc["Greedy", "minus the exact index"] == "-5.00 ± 0.00"


def test_greedy_comparison_and_subsidy_rows():
    paper = _paper()
    table = _table({})
    readings = B.greedy_reading_rewards(MODEL, n_periods=10_000)
    greedy = B.greedy_comparison(readings, table, paper)
    j = readings.names.index("x / mu")
    np.testing.assert_array_equal(greedy.values[j], [233.0, 233.0])    # the state reading's one run
    # 233.0 is within twice the tolerance (0.365) of 232.47 for M=1 only
    assert greedy.within[j].tolist() == [True, False]
    assert greedy.permutation.sum() == 46
    # the paper's values sit in their own row, not over the sd column
    assert greedy.to_frame().loc["paper (one run)", ["M=1", "M=2"]].tolist() == [232.47, 322.72]
    assert len(greedy.to_frame()) == 1 + (~greedy.permutation).sum() + 3
    state = B.subsidy_at_state(table, paper)
    assert [r[:2] for r in state.rows] == [(1, "Stochastic without Projection"), (1, "Stochastic with Projection"),
                                           (2, "Stochastic without Projection"), (2, "Stochastic with Projection")]
    np.testing.assert_allclose(state.rows[0][4], 241.77 - 259.61)


def _table_two_runs(problem, learned, state, T, R, seed):
    """Table II's runs as notebook 03 computes them in its Part I: the arrivals drawn once, the
    three fixed rules (round robin, greedy, the printed form) as the slots of one simulation for
    both M, and every index (gamma* as y = 0, the four learned ones) as one rule of another."""
    arrivals = C.draw_new_utilities(MODEL, T, R, rng=np.random.default_rng(seed))
    fixed = {"Round Robin": P.RoundRobinRule(4, 1), "Greedy": P.ExpectedValueRule(MODEL),
             B.PRINTED: B.PrintedIndexRule(MODEL)}
    indices = {"Deterministic": np.zeros_like(learned.y[1]),
               "Stochastic without Projection": learned.y[1],
               "Stochastic with Projection": learned.y[0],
               "Stochastic without Projection, subsidy at the state": state.y[1],
               "Stochastic with Projection, subsidy at the state": state.y[0]}
    weights = np.stack(list(indices.values()), axis=1)
    same = dict(stochastic=True, replications=R, utilities=arrivals)
    sims = {tuple(fixed): P.simulate_crawling_many(MODEL, P.SlotRules(list(fixed.values()) * 2),
                                                   [1] * 3 + [2] * 3, T, slots=6, **same),
            tuple(indices): P.simulate_crawling_many(
                MODEL, LearnedIndexRule(problem, np.concatenate([weights] * 2, axis=1)),
                [1] * 5 + [2] * 5, T, slots=10, **same)}
    runs = {(name, M): sim.average_reward for names, out in sims.items()
            for (M, name), sim in zip([(M, n) for M in (1, 2) for n in names], out)}
    return runs, arrivals


def test_the_notebooks_table_two_is_each_policy_simulated_alone(small_learning):
    # the notebook's layout (two simulations, the policies as slots; gamma* as the learned
    # index with y = 0) against each policy simulated alone from a generator started at the
    # seed, with the library's own rules: the same bits
    problem, learned = small_learning
    state = SimpleNamespace(y=learned.y[::-1])            # another set of weights
    seed, T, R = np.random.SeedSequence(4), 40, 2
    runs, arrivals = _table_two_runs(problem, learned, state, T, R, seed)
    rules = {"Round Robin": P.RoundRobinRule(4, 1), "Greedy": P.ExpectedValueRule(MODEL),
             "Deterministic": P.WhittleRule(MODEL),
             "Stochastic without Projection": LearnedIndexRule(problem, learned.y[1]),
             "Stochastic with Projection": LearnedIndexRule(problem, learned.y[0]),
             B.PRINTED: B.PrintedIndexRule(MODEL),
             "Stochastic without Projection, subsidy at the state":
                 LearnedIndexRule(problem, state.y[1]),
             "Stochastic with Projection, subsidy at the state":
                 LearnedIndexRule(problem, state.y[0])}
    for M in (1, 2):
        for name, rule in rules.items():
            want = P.simulate_crawling(MODEL, rule, M, T, stochastic=True, replications=R,
                                       rng=np.random.default_rng(seed)).average_reward
            assert runs[name, M].tobytes() == want.tobytes(), (name, M)
    assert len(runs) == 2 * len(rules)
    table = B.TableTwo.from_runs(MODEL, runs | B.state_reading_runs(MODEL, T, seed=seed),
                                 arrivals, seed=seed)
    assert (table.n_replications, table.eval_periods) == (R, T)
    assert table.arrivals_key == B.draw_key(MODEL, T, R, seed, "exponential")
    # every policy sees the same arrivals: paired differences of a policy with itself vanish
    assert table.paired("Greedy", "Greedy", 1) == (0.0, 0.0)
    with pytest.raises(ValueError, match="one average per replication"):
        B.TableTwo.from_runs(MODEL, {("Greedy", 1): np.zeros(3)}, arrivals, seed=seed)
    with pytest.raises(ValueError, match="arrivals must have shape"):
        B.TableTwo.from_runs(MODEL, runs, arrivals[:, :, :2], seed=seed)


def test_extension_sweep_replays_the_arrivals_of_table_two(small_learning, monkeypatch):
    # Table II's law, seed and runs: given Table II (table_two=), the sweep's first law replays
    # its arrivals instead of drawing them again; the same numbers either way
    problem, learned = small_learning
    seed, kw = np.random.SeedSequence(8), dict(n_periods=30, replications=2, max_workers=1)
    laws, paper = B.UTILITY_LAWS[:1], _paper()
    fresh = B.extension_sweep(laws, paper, seed=seed, **kw)
    runs, arrivals = _table_two_runs(problem, learned, learned, 30, 2, seed)
    table = B.TableTwo.from_runs(MODEL, runs, arrivals, seed=seed)

    def no_draw(*args, **kwargs):
        raise LookupError("drawn again")

    monkeypatch.setattr(C, "draw_new_utilities", no_draw)
    replayed = B.extension_sweep(laws, paper, seed=seed, table_two=table, **kw)
    assert replayed.rewards[0].tobytes() == fresh.rewards[0].tobytes()
    with pytest.raises(LookupError):         # another seed is not Table II's: drawn afresh
        B.extension_sweep(laws, paper, seed=np.random.SeedSequence(9), table_two=table, **kw)
    with pytest.raises(LookupError):         # without Table II: drawn
        B.extension_sweep(laws, paper, seed=seed, **kw)
    with pytest.raises(ValueError, match="table_two must be a TableTwo"):
        B.extension_sweep(laws, paper, seed=seed, table_two=table.runs, **kw)


def test_the_recording_lines_fill_every_expected_row(small_learning):
    # the notebook's recording lines on small inputs: every row of data/expected is recorded once
    problem, learned = small_learning
    paper = _paper()
    table = _table({})
    sweep = _sweep(np.zeros((2, 2, 2, 3, 2)))
    cmp = Comparison(NB)
    setting = B.table_one_settings(MODEL, paper)
    _record_table_one(cmp, setting)
    _record_printed_index(cmp, B.printed_index_check(MODEL))
    counts = B.projection_counts(learned, problem, 0.1)
    _record_projection_order(cmp, B.projection_order(counts, sweep, MAIN))
    _record_convergence(cmp, B.WeightConvergence(np.full(2, 0.01), np.full(2, 0.01), 2, 400, 200))
    greedy = B.greedy_comparison(B.greedy_reading_rewards(MODEL), table, paper)
    ext = B.extension_sweep(B.UTILITY_LAWS[:1] + B.UTILITY_LAWS[-1:], paper, n_periods=20,
                            replications=2, seed=3, max_workers=1)
    _record_table_two(cmp, table, B.table_two_diagnoses(
        table, paper, setting, greedy, B.learned_row_readings(table, sweep, paper, MAIN), sweep, ext))
    _record_claims(cmp, B.table_two_claims(table, sweep, paper, MAIN))
    _record_state(cmp, B.subsidy_at_state(table, paper))
    missing = cmp.missing()
    assert missing == []
    # every verdict against the paper says what was searched and what it could detect
    against = [r for r in cmp.rows if r.status in ("deviates", "claim-fails", "claim-depends")]
    assert against and all("Searched:" in r.note for r in against)
    assert sum(r.status == "new" for r in cmp.rows) == 6   # printed form (2) and subsidy at the state (4)


# --- Table II's Deterministic row: continuations of the index and laws of U ---------------------


def test_index_extensions_cover_both_indices_and_every_side():
    ext = B.index_extensions()
    assert len(ext) == 55 and len(set(ext)) == 55
    assert B.IndexExtension("exact index", "its formula", "x") not in ext   # = its formula there
    with pytest.raises(ValueError, match="below"):
        B.IndexExtension("exact index", "clip", "x")


def test_extended_index_rule_against_the_library_forms():
    # inside [u, u*) every continuation is the index itself; outside, each rule as documented
    ext = B.index_extensions()
    rule = B.ExtendedIndexRule(MODEL, ext)
    u, us = MODEL.u, MODEL.u_star
    for x, side in ((0.5 * (u + us), None), (0.5 * u, "below"), (1.5 * us, "above")):
        got = rule(np.broadcast_to(x, (len(ext), 4)), None, 0)
        for k, e in enumerate(ext):
            base = (C.whittle_index(x, u, MODEL.alpha) if e.form == "exact index"
                    else index_2018(x, u, MODEL.alpha))
            mode = None if side is None else (e.below if side == "below" else e.above)
            want = {None: base, "its formula": base, "x": x, "u*": us, "0": 0.0, "+inf": np.inf,
                    "-inf": -np.inf,
                    "its value at u": (C.whittle_index(u, u, MODEL.alpha) if e.form == "exact index"
                                       else index_2018(u, u, MODEL.alpha))}[mode]
            # the printed form through a table of powers: the same bits as index_2018
            np.testing.assert_array_equal(got[k], np.broadcast_to(want, (4,)))


def test_printed_index_rule_is_index_2018_bit_for_bit():
    # log(alpha) once and alpha**zeta from a table of fp.power: the same element-wise numbers
    u, us = MODEL.u, MODEL.u_star
    visited = C.visited_states(u, MODEL.alpha, np.arange(1, 60)[:, None])
    x = np.concatenate([visited, np.random.default_rng(2).uniform(0, 1.5, (200, 4)) * us,
                        [0.0 * u, u, us, 2 * us]])
    got = B.PrintedIndexRule(MODEL)(x, None, 0)
    assert got.tobytes() == index_2018(x, u, MODEL.alpha).tobytes()


def test_extension_rewards_are_simulate_for_the_formula_continuations():
    # the exact index and the printed form continued by their formulas are WhittleRule and
    # PrintedIndexRule: with the same seed, the same draws and the same rewards
    law = B.UTILITY_LAWS[0]
    ext = (B.IndexExtension("exact index", "its formula", "its formula"),
           B.IndexExtension("printed 2018 form", "its formula", "its formula"),
           B.IndexExtension("exact index", "+inf", "+inf"))
    got = B.extension_rewards(law, ext, n_periods=200, replications=3, rng=7)
    assert got.shape == (2, 3, 3)
    for k, rule in enumerate((P.WhittleRule(MODEL), B.PrintedIndexRule(MODEL))):
        for c, M in enumerate((1, 2)):
            want = P.simulate_crawling(MODEL, rule, M, 200, stochastic=True, replications=3, rng=7).average_reward
            # sums of the same rewards in another order: rounding only
            np.testing.assert_allclose(got[c, k], want, rtol=1e-13)
    # always crawling a restarted source below u wastes crawls: it earns less
    assert np.all(got[:, 2].mean(-1) < got[:, 0].mean(-1))


def _extension_rewards_loop(law, extensions, n_periods, replications, rng):
    """extension_rewards as it was written before the lock-step simulator: its own loop, the
    extensions for both budgets on an axis of their own, the arrivals drawn each period."""
    model = law.model()
    rule = B.ExtendedIndexRule(model, tuple(extensions))
    rng = np.random.default_rng(rng)
    R, S, N = replications, len(rule.extensions), model.n_sources
    x = np.broadcast_to(model.u, (R, 2, S, N)).copy()
    total = np.zeros((R, 2, S))
    crawl = np.empty(x.shape, dtype=bool)
    for t in range(n_periods):
        gamma = rule(x, None, t)
        crawl[:, 0] = P.top_m(gamma[:, 0], 1)
        crawl[:, 1] = P.top_m(gamma[:, 1], 2)
        total += np.sum(x, axis=-1, where=crawl)
        new = (np.broadcast_to(model.u, (R, N)) if law.base_law is None else
               C.sample_new_utility(model, R, rng=rng, base_law=law.base_law,
                                    base_shape=law.base_shape))
        new = np.broadcast_to(new[:, None, None, :], x.shape)
        x *= model.alpha
        x += new
        np.copyto(x, new, where=crawl)
    return np.moveaxis(total / n_periods, 0, -1)


def test_extension_rewards_and_the_stacked_sweep_are_each_law_alone():
    # extension_rewards (one lock-step simulation, the extensions as slots for both budgets)
    # against the loop it replaced, and extension_sweep (the laws of one model and run length
    # stacked as replications of one simulation) against extension_rewards of each law alone:
    # the same bits
    exts = B.index_extensions()[::6]
    for law, R in ((B.UTILITY_LAWS[0], 2), (B.UTILITY_LAWS[5], 1), (B.UTILITY_LAWS[-1], 1)):
        got = B.extension_rewards(law, exts, n_periods=60, replications=R, rng=3)
        assert got.tobytes() == _extension_rewards_loop(law, exts, 60, R, 3).tobytes(), law.label
    laws = B.UTILITY_LAWS
    paper = _paper()
    sweep = B.extension_sweep(laws, paper, n_periods=40, replications=2, seed=5, other=(2, 30),
                              max_workers=1)
    for law, rewards, (R, T) in zip(laws, sweep.rewards, sweep.runs):
        alone = B.extension_rewards(law, B.index_extensions(), n_periods=T, replications=R,
                                    rng=np.random.default_rng(5))
        assert rewards.shape == (2, 55, R) and rewards.tobytes() == alone.tobytes(), law.label


def test_utility_laws_read_table_one():
    rate = [law for law in B.UTILITY_LAWS if law.theta == "rate"][0].model()
    np.testing.assert_allclose(rate.xi_mean, 1 / np.array(B.TABLE_ONE_THETA))
    assert B.UTILITY_LAWS[0].model().u == pytest.approx(MODEL.u)
    with pytest.raises(ValueError, match="theta"):
        B.UtilityLaw("bad", 250.0, theta="median")
    # the deterministic model: no randomness, one run equals any other
    det = B.extension_rewards(B.UTILITY_LAWS[-1], B.index_extensions()[:2], n_periods=50,
                              replications=2, rng=1)
    np.testing.assert_array_equal(det[..., 0], det[..., 1])


def test_extension_sweep_finds_a_pair_when_the_paper_prints_ours():
    # a paper that printed our own pair is found (the search can detect a match)
    law = B.UTILITY_LAWS[-1:]          # the deterministic model: exact, cheap
    paper = _paper()
    ext = B.extension_sweep(law, paper, n_periods=300, replications=1, seed=0, max_workers=1)
    assert not ext.within.any()        # 259.61, 328.44 are not the deterministic model's
    m = ext.mean[0, :, 0]
    fake = B.TableTwoPaper(paper.text, dict(paper.value) | {("Deterministic", 1): m[0],
                                                            ("Deterministic", 2): m[1]},
                           paper.tolerance, paper.best_tolerance)
    again = B.extension_sweep(law, fake, n_periods=300, replications=1, seed=0, max_workers=1)
    assert again.within[0, 0] and "Searched:" in again.evidence()
    assert len(again.law_rows()) == 1 and len(again.extension_rows()) == 10


def test_extension_sweep_submitted_without_waiting_gives_the_same_sweep():
    # the notebook submits the sweep to its workers with Part II and collects it later
    from concurrent.futures import ThreadPoolExecutor
    law, paper = B.UTILITY_LAWS[-1:], _paper()
    kw = dict(n_periods=200, replications=1, seed=0)
    now = B.extension_sweep(law, paper, max_workers=1, **kw)
    with ThreadPoolExecutor(1) as pool:
        pending = B.extension_sweep(law, paper, executor=pool, wait=False, **kw)
        later = pending.result()
    assert later.rewards[0].tobytes() == now.rewards[0].tobytes()
    assert later.law_rows() == now.law_rows()
    with pytest.raises(ValueError, match="executor"):
        B.extension_sweep(law, paper, wait=False, **kw)
