"""Tests of whittle_lib.papers.rl_index_2018: the greedy readings, the spread of one run of a
fixed schedule, the renewal index of the stochastic model and the common-arrivals evaluator."""

import csv
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from whittle_lib.models import crawling as C
from whittle_lib.models import crawling_policies as P
from whittle_lib.papers import rl_index_2018 as B

ROOT = Path(__file__).resolve().parents[1]
MODEL = C.table_one(250)


def test_printed_greedy_reading_is_the_library_greedy_rule():
    # the printed rule equals ExpectedValueRule up to the common factor Lambda/(1-alpha)... :
    # both are increasing functions of the age with the same per-source ordering, so the
    # exact orbits coincide (an independent implementation of the same priority)
    rule = B.greedy_readings(MODEL)[0].rule
    for M in (1, 2):
        a = P.periodic_orbit(MODEL, rule, M).average_reward
        b = P.periodic_orbit(MODEL, P.ExpectedValueRule(MODEL), M).average_reward
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
    orbit = P.periodic_orbit(MODEL, P.RoundRobinRule(4, 1), 1)
    n, R = 200, 300
    sim = P.simulate(MODEL, P.RoundRobinRule(4, 1), 1, n, stochastic=True, replications=R, rng=5)
    sd = B.schedule_run_sd(MODEL, orbit, n)
    # sd of R = 300 runs: relative se ~ 1/sqrt(2R) = 4 %; the start at u adds O(1/n); 15 % is
    # over 3 se
    assert sim.average_reward.std(ddof=1) == pytest.approx(sd, rel=0.15)
    # and the mean of a fixed schedule is the deterministic orbit's (linearity): compare with
    # the deterministic run over the same 200 periods from u (the start is not the orbit), 4 se
    det = P.simulate(MODEL, P.RoundRobinRule(4, 1), 1, n).average_reward
    assert abs(sim.average_reward.mean() - det) < 4 * sd / np.sqrt(R)


def test_one_run_tolerance_is_the_rule_written_in_the_expected_table():
    with open(ROOT / "data" / "expected" / "03_rl_index_learning.csv", newline="") as f:
        rows = {r["setting"]: r for r in csv.DictReader(f) if r["item"] == "Table II"}
    for M in (1, 2):
        for name, rule in (("Round Robin", P.RoundRobinRule(4, 1)),
                           ("Greedy", P.ExpectedValueRule(MODEL))):
            orbit = P.periodic_orbit(MODEL, rule, M)
            tol = B.one_run_tolerance(B.schedule_run_sd(MODEL, orbit, 10_000), 8)
            assert float(rows[f"policy={name};M={M}"]["tolerance"]) == float(f"{tol:.3g}")


def test_one_run_tolerance_rejects_bad_input():
    with pytest.raises(ValueError, match="run_sd"):
        B.one_run_tolerance(-1.0, 8)
    with pytest.raises(ValueError, match="replications"):
        B.one_run_tolerance(0.1, 0)


def test_renewal_index_with_deterministic_utilities_is_the_closed_form():
    # U = u: the renewal index at the visited states is the deterministic index gamma*
    # (Theorem 1 of the 2015 paper); thresholds just below x_k crawl at x_k
    i = 0
    u, alpha = MODEL.u[i], MODEL.alpha[i]
    xs = C.visited_states(u, alpha, np.arange(1, 9)) * (1 - 1e-9)
    got = B._renewal_index(np.full(4, u), float(alpha), xs, np.random.default_rng(0), 4, 80,
                           40_000)
    want = C.whittle_index(xs / (1 - 1e-9), u, alpha)
    # the subsidy grid has step 1.5 max R / 40000 ~ 0.014: the index is found to one step
    step = 1.5 * got.cycle_reward.max() / 39_999
    np.testing.assert_allclose(got.index[:-1], want[:-1], atol=step + 1e-9)


def test_stochastic_index_validates_input():
    with pytest.raises(ValueError, match="increasing"):
        B.stochastic_whittle_index(MODEL, 0, [2.0, 1.0], rng=0)
    with pytest.raises(ValueError, match="source"):
        B.stochastic_whittle_index(MODEL, 7, [1.0, 2.0], rng=0)


def test_evaluation_on_common_arrivals_is_simulate_for_one_slot():
    want = P.simulate(MODEL, P.WhittleRule(MODEL), 2, 150, stochastic=True, rng=9).average_reward
    got = B.evaluate_on_common_arrivals(MODEL, P.WhittleRule(MODEL), 2, 150, slots=1, rng=9)
    assert got.shape == (1,) and got[0] == want          # the same draws, the same operations
    two = B.evaluate_on_common_arrivals(MODEL, B.StatePriorityRule(np.ones((2, 4))), 1, 50,
                                        slots=2, rng=1)
    assert two[0] == two[1]                               # identical policies, same arrivals


def test_run_calls_gives_the_same_results_in_process_and_in_a_pool():
    calls = [partial(C.sample_new_utility, MODEL, 3, rng=s) for s in (1, 2, 3)]
    here = B.run_calls(calls, max_workers=1)
    pool = B.run_calls(calls, max_workers=2)
    for a, b in zip(here, pool):
        np.testing.assert_array_equal(a, b)


def test_sweep_config_validates():
    with pytest.raises(ValueError, match="a0s"):
        B.SweepConfig(MODEL, a0s=(0.0,))
    with pytest.raises(ValueError, match="subsidy_at"):
        B.SweepConfig(MODEL, subsidy_at=("x",))


def test_learning_sweep_replication_shapes_and_common_arrivals():
    cfg = B.SweepConfig(MODEL, a0s=(0.05,), ps=(0.1, None), subsidy_at=("threshold",),
                        n_steps=30, eval_periods=20)
    rep = B.learning_sweep_replication(cfg, rng=3)
    assert rep.reward.shape == (1, 1, 2, 2) and rep.deterministic.shape == (2,)
    assert rep.projections.shape == (1, 1, 2, 4)
    assert np.all(rep.projections[0, 0, 1] == 0)        # p = None never projects
    again = B.learning_sweep_replication(cfg, rng=3)
    np.testing.assert_array_equal(rep.reward, again.reward)
