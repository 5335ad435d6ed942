"""Tests of replication.papers.crawling_2015 and of the base-utility laws it sweeps, and of the
exercises of the notebook 01_ephemeral_crawling."""

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import whittle_lib as wl
from whittle_lib.models import crawling, crawling_policies as policies
from replication.papers.crawling_2015 import beyond, figures, forms, laws, rewards
from whittle_lib.stats import named_seeds, share_interval
from replication.records import format_estimate


# -- the laws of the base utility (crawling.sample_new_utility) ---------------------------------

@pytest.mark.parametrize("reading", laws.BASE_LAW_READINGS, ids=lambda r: r.label)
def test_every_law_keeps_the_mean_utility_of_eq1(reading):
    # E[U_i] = u_i (eq. 1) whatever the law, since each has mean xi-bar_i. 4000 periods of
    # Lambda = 250: the sample mean's standard error is sd(U)/sqrt(4000); we allow 5 of them
    # (estimated from the sample; for lomax a = 1.5 the variance is infinite, so that law is
    # checked against a wider 5 % band: its sample mean converges like n**(-1/3)).
    model = crawling.table_one()
    U = crawling.sample_new_utility(model, 4000, rng=12, **reading.kwargs)
    assert U.shape == (4000, 4) and np.all(U >= 0)
    if reading.shape == 1.5:
        assert np.all(np.abs(U.mean(axis=0) / model.u - 1) < 0.05)
    else:
        se = U.std(axis=0, ddof=1) / np.sqrt(U.shape[0])
        assert np.all(np.abs(U.mean(axis=0) - model.u) <= 5 * se + 1e-12)


def test_heavier_laws_are_noisier_than_the_exponential():
    # coefficient of variation of xi: 1 (exponential) < 1.31 (lognormal s=1) < 1.73 (lomax a=3);
    # one content per period (Lambda small) so U is close to a single xi
    model = crawling.CrawlingModel([1.0], [0.01], [1.0])
    sd = {}
    for law, shape in (("exponential", None), ("lognormal", 1.0), ("lomax", 3.0)):
        U = crawling.sample_new_utility(model, 40000, rng=3, base_law=law, base_shape=shape)
        sd[law] = U.std()
    assert sd["exponential"] < sd["lognormal"] < sd["lomax"]


def test_deterministic_law_has_only_arrival_noise():
    # with xi = xi-bar and mu -> 0 each content is worth ~xi-bar: U / xi-bar is a Poisson count
    model = crawling.CrawlingModel([2.0], [1e-9], [7.0])
    U = crawling.sample_new_utility(model, 500, rng=5, base_law="deterministic")
    assert np.allclose(U / 2.0, np.round(U / 2.0), atol=1e-6)


def test_exponential_stream_is_unchanged_by_the_new_laws():
    # the default law draws the same numbers as before the option existed (same rng calls)
    model = crawling.table_one()
    a = crawling.sample_new_utility(model, 50, rng=9)
    b = crawling.sample_new_utility(model, 50, rng=9, base_law="exponential", base_shape=None)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("law, shape, message", [
    ("pareto", None, "law must be one of"),
    ("lomax", 1.0, "base_shape of the lomax law must lie in \\(1, inf\\), got 1.0"),
    ("lognormal", -1.0, "base_shape of the lognormal law must lie in \\(0, inf\\), got -1.0"),
    ("exponential", 2.0, "base_shape must be None"),
])
def test_bad_law_or_shape_raises_naming_it(law, shape, message):
    with pytest.raises(ValueError, match=message):
        crawling.sample_new_utility(crawling.table_one(), 2, rng=0, base_law=law, base_shape=shape)
    with pytest.raises(ValueError, match=message):
        laws.BaseLawReading("x", law, shape)


# -- the Fig. 4 sweep --------------------------------------------------------------------------

def test_skip_sweep_counts_and_is_reproducible():
    kw = dict(window=10, runs=20, periods=60, replications=2, burn_in=10)
    a = figures.skip_sweep([25.0], laws.BASE_LAW_READINGS[:2], rng=4, **kw)
    b = figures.skip_sweep([25.0], laws.BASE_LAW_READINGS[:2], rng=4, **kw)
    assert a == b
    assert [s.law.label for s in a] == ["deterministic xi", "exponential xi"]
    for s in a:
        assert 0 <= s.runs_with_skip <= s.runs == 20
        assert s.share_low <= s.share <= s.share_high
        assert s.periods == 2 * 50 and 0 <= s.long_run_skip <= 1
        low, high = share_interval(s.runs_with_skip, s.runs).low, share_interval(s.runs_with_skip, s.runs).high
        assert s.holds == (True if low > 0.5 else False if high < 0.5 else None)


def test_skip_sweep_with_every_source_crawled_never_skips():
    # M = N: every source crawled every period (invariant of top-M)
    (s,) = figures.skip_sweep([25.0], laws.BASE_LAW_READINGS[1:2], M=4, window=5, runs=10, periods=20,
                          replications=2, burn_in=0, rng=1)
    assert s.runs_with_skip == 0 and s.long_run_skip == 0.0 and not s.holds


def test_skip_sweep_validates():
    with pytest.raises(ValueError, match="burn_in"):
        figures.skip_sweep([25.0], rng=0, periods=10, burn_in=10)
    with pytest.raises(ValueError, match="window"):
        figures.skip_sweep([25.0], rng=0, window=0)


# -- one run's spread --------------------------------------------------------------------------

def test_one_run_spread_when_every_source_is_crawled():
    # M = N: the reward of a period is the total new utility U (i.i.d. over periods), of mean
    # sum(u) (eq. 1); our mean over 4 x 400 periods is within 5 of its standard errors of it,
    # and the batch-means sd of one run of 400 periods is that of 400 i.i.d. U within 30 %
    model = crawling.table_one()
    (sp,) = rewards.one_run_spread(model, policies.CurrentValueRule(), 4,
                               laws=laws.BASE_LAW_READINGS[1:2], periods=401, replications=4,
                               burn_in=1, run_length=400, batch=20, rng=2)
    total = model.u.sum()
    U = crawling.sample_new_utility(model, 4000, rng=3).sum(axis=1)
    assert sp.low < sp.mean < sp.high and sp.run_length == 400
    assert abs(sp.mean - total) < 5 * sp.sd_one_run / 2     # mean of 4 runs: sd / sqrt(4)
    assert abs(sp.sd_one_run / (U.std() / np.sqrt(400)) - 1) < 0.3
    assert sp.contains(sp.mean) and not sp.contains(sp.high + 1.0)
    assert sp.contains(sp.high + 1.0, tolerance=1.0)


# -- horizons and the printed 2018 form --------------------------------------------------------

def test_one_run_spread_validates():
    model = crawling.table_one()
    with pytest.raises(ValueError, match="batch"):
        rewards.one_run_spread(model, policies.CurrentValueRule(), 1, periods=20, replications=1,
                           burn_in=0, batch=20, rng=0)


def test_horizons_matching():
    r = np.array([0.0, 2.0, 4.0])             # running averages 0, 1, 2
    assert rewards.horizons_matching(r, 1.0, 0.0).tolist() == [2]
    assert rewards.horizons_matching(r, 1.0, 1.0).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="tolerance"):
        rewards.horizons_matching(r, 1.0, -1.0)


def test_index_2018_exceeds_the_index_by_u_alpha_zeta_on_visited_states():
    # the 2018 bracket is Theorem 1 plus u alpha^zeta: with the exact zeta = k on x_k
    model = crawling.table_one()
    k = np.arange(1, 15)
    u, alpha = model.u[:, None], model.alpha[:, None]
    x = crawling.visited_states(u, alpha, k)
    extra = forms.index_2018_with(k, x, u, alpha) - crawling.whittle_index(x, u, alpha)
    np.testing.assert_allclose(extra, u * alpha ** k, rtol=1e-9, atol=1e-9 * model.u_star.max())
    # with the printed floating ceiling it is forms.index_2018
    zeta = forms._eta_printed(x, u, alpha)
    np.testing.assert_allclose(forms.index_2018_with(zeta, x, u, alpha), forms.index_2018(x, u, alpha),
                               rtol=1e-12)


# -- Table I and the policies of Sec. VII ------------------------------------------------------

def test_crawling_only_source_1_earns_u1_as_printed():
    # Sec. VII: "crawls only source 1 ... average reward 179.79", i.e. u_1 every period
    model = crawling.table_one()
    rule = rewards.OnlySourceRule(0, model.n_sources)
    assert rule(None, None, 0).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert abs(policies.crawling_orbit(model, rule, 1).average_reward - 179.79) < 0.005
    with pytest.raises(ValueError, match="source"):
        rewards.OnlySourceRule(4, 4)


def test_printed_2018_rule_is_the_printed_form():
    model = crawling.table_one()
    x = model.u_star * 0.6
    assert np.array_equal(rewards.Printed2018Rule(model)(x, None, 0),
                          forms.index_2018(x, model.u, model.alpha))


def test_starts_and_running_average():
    model = crawling.table_one()
    s = rewards.starts(model)
    assert s["x(0) = u (just crawled)"] is None
    assert np.array_equal(s["x(0) = u* (full)"], model.u_star)
    r = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(rewards.running_average(r), [3.0, 2.0, 2.0])
    # the same running average horizons_matching reads
    assert rewards.horizons_matching(r, 2.0, 0.0).tolist() == [2, 3]
    with pytest.raises(ValueError, match="rewards"):
        rewards.running_average([])


# -- Theorem 1 and its printed forms -----------------------------------------------------------

def test_check_index_forms_on_few_states():
    # independent references: the index by definition (root of eq. 15) and the engine's
    # indices of the finite arm. Theorem 1 and 2019's form agree; 2018's exceeds the index by
    # u alpha^zeta > 0 everywhere, so it is wrong on every visited state
    check = forms.check_index_forms(crawling.table_one(), 6, extra_states=20)
    assert check.states.shape == check.by_definition.shape == (4, 6)
    assert check.indexable and check.engine_states == 26
    assert check.engine_error <= check.tolerance
    assert tuple(check.forms) == forms.INDEX_FORMS
    assert check.holds("Theorem 1 (2015)") and check.holds("eqs. (4)-(5) (2019)")
    assert check.holds("whittle_lib (robust ceiling)")
    assert not check.holds("Sec. IV-A (2018)") and check.wrong("Sec. IV-A (2018)").all()
    assert check.exact_eta_error <= check.tolerance
    # at 1.5 u* the printed Theorem 1 gives 0 (log+ = 0) and the index is x itself
    assert np.all(check.printed_above == 0)
    np.testing.assert_allclose(check.robust_above, check.above, rtol=1e-12)
    # the Remark with the plain floating ceiling: wrong where rounding overshoots k (here on
    # some of the 24 states), right with the exact ceiling (exact_eta_error above)
    assert 0 < int(check.wrong("Remark after Theorem 1 (2015)").sum()) < check.states.size
    # the 2018 form fails under every reading of zeta (it adds u alpha^zeta > 0)
    readings = check.readings_2018()
    assert len(readings) == 3 and not any(readings.values())


def test_check_index_forms_validates():
    with pytest.raises(ValueError, match="index_states"):
        forms.check_index_forms(crawling.table_one(), 1)


# -- Sec. VII's 254.66 and the quoted values ---------------------------------------------------

def test_readings_254_none_gives_both_numbers():
    # Sec. VII prints 254.66 (index) and 179.79 (source 1 only) in one sentence; the long-run
    # average is 260.39 from every start (the relaxation bound, exact orbit); from empty sources
    # the running average passes 254.66 at t = 61 (seen in the notebook) without 179.79
    r = rewards.readings_254(crawling.table_one(), 254.66, 0.005, 179.79, 0.005, horizon=80)
    assert set(r.long_run) == set(rewards.starts(crawling.table_one()))
    assert all(abs(v - 260.3899) < 1e-4 for v in r.long_run.values())
    assert r.t_hit == [61] and not any(r.readings.values())
    assert r.hits_179["x(0) = u (just crawled)"].size == 80     # u_1 every period
    assert all(len(v) == 80 for v in r.running.values())
    assert "254.66" in r.diagnosis(260.39, 260.39, 179.79)
    # the report labels each reading and names the counter-reading that gives both numbers
    report = r.report()
    assert "  x(0) = 0 (empty)         260.3899; t = 61" in report
    assert "80 of 80 horizons; horizons giving both numbers: none" in report
    assert "both numbers at t = 27" in report
    # from x(0) = u the running average steps over the band without landing in it
    assert "(steps over it from 254.01 at t = 14 to 255.02 at t = 15)" in report
    assert report.splitlines()[-1] == "readings of the 2015 index giving both numbers: none"
    assert max(len(line) for line in report.splitlines()) <= 100
    with pytest.raises(ValueError, match="horizon"):
        rewards.readings_254(crawling.table_one(), 254.66, 0.005, 179.79, 0.005, horizon=0)


def test_deterministic_readings_keep_the_decay_rates():
    model = crawling.table_one()
    det = rewards.deterministic_readings(model)
    assert len(det) == 4
    for m in det.values():
        assert np.array_equal(m.mu, model.mu)
    assert np.all(det["2019 Table I literally (xi-bar = 1)"].xi_mean == 1.0)


def test_quoted_readings_small_run():
    # 283 exceeds the relaxation bound 260.39 for M = 1; the budget that reaches it lies in
    # (1, 2) and gives 283 to brentq's tolerance (2e-12 relative, far below 1e-6)
    model = crawling.table_one()
    q = rewards.quoted_readings(model, 283.0, 0.5, 259.61, 0.005, periods=300, replications=2,
                            burn_in=100, horizon=50, rng=7)
    assert 1 < q.budget_283 < 2
    assert abs(crawling.crawling_bound(model, q.budget_283).bound - 283.0) < 1e-6
    assert abs(q.bound - 260.3899) < 1e-4
    assert len(q.spreads) == len(laws.BASE_LAW_READINGS)
    assert q.spread_printed.label == "exponential xi"
    assert not q.readings_283["deterministic, long run (any policy: relaxation bound)"]
    assert set(q.det_283) <= set(q.det_value) and len(q.det_283) == 2
    assert "283 exceeds the relaxation bound" in q.diagnosis_283()
    again = rewards.quoted_readings(model, 283.0, 0.5, 259.61, 0.005, periods=300, replications=2,
                                burn_in=100, horizon=50, rng=7)
    assert again.spreads == q.spreads          # seeded: reproducible


# -- Fig. 3, Fig. 4 text, ties, the optimality gap ---------------------------------------------

def test_skip_evidence_names_the_rule_the_sweep_and_the_figure_run():
    s = figures.SkipReading(25.0, laws.BASE_LAW_READINGS[0], 30, 200, 53, 0.21, 0.33, 0.01305,
                            1000)
    at_250 = figures.SkipReading(250.0, laws.BASE_LAW_READINGS[0], 30, 200, 2, 0.0, 0.03,
                                 0.0001, 1000)
    text = figures.skip_evidence([at_250, s], 0)
    assert "runs of 30 periods (x(0) = u, 200 per reading)" in text
    assert "(at most 1% of runs" in text and "skipped in 0 of 30 periods" in text
    assert "Our figure's run (exponential, Lambda = 250)" in text
    assert "Our figure's run (lomax, Lambda = 250)" in figures.skip_evidence([at_250, s], 0,
                                                                             law="lomax")


def test_boundary_ties_and_tie_orders():
    # from x(0) = u no index ties at the top-M boundary; from empty sources every tie order
    # gives the same long-run average (the relaxation bound for M = 1, exact orbit)
    model = crawling.table_one()
    assert beyond.boundary_ties(model, 1, 100) == 0
    (value,) = beyond.tie_order_averages(model, 1)
    assert abs(value - crawling.crawling_bound(model, 1).bound) < 1e-6
    with pytest.raises(ValueError, match="M"):
        beyond.boundary_ties(model, 4, 10)


def test_stochastic_comparison_is_seeded_and_keeps_known_values():
    model = crawling.table_one()
    seeds = named_seeds(3, **{f"M=1;policy={name}": 1 for name in beyond.COMPARED_POLICIES})
    kw = dict(periods=60, replications=3, burn_in=10, base_law="exponential", seeds=seeds)
    a = beyond.stochastic_comparison(model, [1], known={("index", 1): (1.0, 0.5)}, **kw)
    b = beyond.stochastic_comparison(model, [1], known={("index", 1): (1.0, 0.5)}, **kw)
    assert a == b and a.estimates["index", 1] == (1.0, 0.5)
    assert a.names == tuple(beyond.comparison_rules(model, 1))
    with pytest.raises(ValueError, match="burn_in"):
        beyond.stochastic_comparison(model, [1], periods=10, replications=2, burn_in=10,
                                  base_law="exponential", seeds=seeds)


# -- the notebook's helpers: estimates, ties, printed values, recording ------------------------

def test_reward_estimate_is_the_interval_over_replications():
    # the same runs through policies.simulate_crawling and confidence_interval give the same numbers
    model = crawling.table_one()
    rule = policies.WhittleRule(model)
    est = laws.reward_estimate(model, rule, 1, periods=80, replications=4, burn_in=20,
                              base_law="exponential", rng=np.random.default_rng(11))
    run = policies.simulate_crawling(model, rule, 1, 80, stochastic=True, replications=4,
                            rng=np.random.default_rng(11))
    per_run = run.rewards[20:].mean(axis=0)
    assert est.mean == per_run.mean() and est.half_width > 0
    assert (est.replications, est.periods) == (4, 60)
    assert est.text == format_estimate(est.mean, est.half_width)
    with pytest.raises(ValueError, match="burn_in"):
        laws.reward_estimate(model, rule, 1, periods=10, replications=2, burn_in=10,
                            base_law="exponential", rng=0)


def test_stochastic_comparison_keeps_its_run_lengths():
    model = crawling.table_one()
    seeds = named_seeds(5, **{f"M=1;policy={name}": 1 for name in beyond.COMPARED_POLICIES})
    s = beyond.stochastic_comparison(model, [1], periods=40, replications=2, burn_in=10,
                                  base_law="deterministic", seeds=seeds)
    assert (s.periods, s.replications, s.burn_in, s.base_law) == (40, 2, 10, "deterministic")
    # each estimate is reward_estimate on the stream named after its row's setting
    est = laws.reward_estimate(model, policies.CurrentValueRule(), 1, periods=40, replications=2,
                              burn_in=10, base_law="deterministic",
                              rng=np.random.default_rng(seeds["M=1;policy=greedy (current value)"][0]))
    assert s.estimates["greedy (current value)", 1] == (est.mean, est.half_width)


def test_tie_orders_small():
    # no ties from x(0) = u; every tie order from empty sources gives the same long-run
    # average, the relaxation bound for M = 1 (as boundary_ties and tie_order_averages)
    model = crawling.table_one()
    t = beyond.tie_orders(model, [1, 1], periods=50)
    assert t.boundary_ties == {1: 0} and len(t.averages[1]) == 1
    assert abs(t.averages[1][0] - crawling.crawling_bound(model, 1).bound) < 1e-6
    assert t.report().splitlines()[0] == "M = 1, x(0) = u: ties at the top-M boundary in 0 of 50 periods"
    assert t.report().splitlines()[1] == (
        "M = 1, x(0) = 0: long-run average under all 24 tie orders equal: 260.38993")


def test_printed_rewards():
    # the values of Sec. VII, 2019 Sec. V and 2018 Table II, as transcribed in data/expected
    p = rewards.printed_rewards()
    assert (p.only_source_1, p.index, p.quoted_2019, p.quoted_2018) == (179.79, 254.66, 283.0, 259.61)
    assert p.index_tolerance == 0.005


def test_fig3_nontrivial_on_the_exact_cycles():
    # M = 2: a cycle of 7 periods in which sources 2 and 3 are crawled unequally often at
    # irregular gaps (the sentence holds); M = 1: sources 1 and 2 every other period (it fails)
    model = crawling.table_one()
    whittle = policies.WhittleRule(model)
    o2 = policies.crawling_orbit(model, whittle, 2)
    assert o2.period == 7 and figures.fig3_nontrivial(o2.active[o2.transient:])
    o1 = policies.crawling_orbit(model, whittle, 1)
    assert not figures.fig3_nontrivial(o1.active[o1.transient:])


def test_index_forms_notes_and_sec7():
    # the notes the notebook passes for the index forms: every row's, each with its evidence;
    # no reading of 254.66 gives both printed numbers (the notebook records it as deviating)
    model = crawling.table_one()
    check = forms.check_index_forms(model, 6, extra_states=20)
    notes = forms.index_forms_notes(model, check)
    assert set(notes) == {"Theorem 1", "Theorem 1 Remark", "2019 paper eqs. (4)-(5)",
                          "2018 paper Sec. IV-A", "Lemma 4", "Theorem 1 above u*"}
    assert notes["Theorem 1"].startswith("max |form - definition| = ")
    assert f"of {check.states.size} states" in notes["Theorem 1 Remark"]
    # the count is worded as what it is (issue 31, item 9): a count of roundings, not a finding
    assert "a count of last-bit roundings of the logarithm" in notes["Theorem 1 Remark"]
    assert "Searched: " in notes["2018 paper Sec. IV-A"] and check.holds("Theorem 1 (2015)")
    assert not any(check.readings_2018().values())    # the 2018 form fails under every reading
    assert float(forms.index_theorem1(check.above[0], model.u[0], model.alpha[0])) == 0.0
    r = rewards.readings_254(model, 254.66, 0.005, 179.79, 0.005, horizon=80)
    assert not any(r.readings.values())


def test_printed_forms_against_the_index():
    TABLE_ONE = crawling.table_one()
    k = np.arange(1, 31)
    u, alpha = TABLE_ONE.u[:, None], TABLE_ONE.alpha[:, None]
    x = crawling.visited_states(u, alpha, k)
    exact = crawling.whittle_index(x, u, alpha)
    # Theorem 1: right on every visited state (at x_k the ceilings k and k+1 give the same value)
    np.testing.assert_allclose(forms.index_theorem1(x, u, alpha), exact, rtol=1e-12)
    # ... but 0 above u*, where the index is x
    assert forms.index_theorem1(2 * TABLE_ONE.u_star[0], TABLE_ONE.u[0], TABLE_ONE.alpha[0]) == 0
    # The Remark: wrong wherever the plain ceiling overshoots, by exactly u alpha**k
    remark = forms.index_remark(x, u, alpha)
    wrong = ~np.isclose(remark, exact, rtol=1e-12)
    assert wrong.any()
    # (a difference of numbers of size u*: absolute error a few ulps of u*)
    np.testing.assert_allclose((exact - remark)[wrong], np.broadcast_to(u * alpha ** k, x.shape)[wrong],
                               atol=1e-9 * TABLE_ONE.u_star.max())
    # The 2018 form: always off by u alpha**eta (eta from the plain ceiling it prints)
    eta = forms._eta_printed(x, u, alpha)
    np.testing.assert_allclose(forms.index_2018(x, u, alpha) - forms.index_theorem1(x, u, alpha),
                               u * alpha ** eta, atol=1e-9 * TABLE_ONE.u_star.max())


# -- the notebook's exercises (issue 31, item 8) -----------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = re.compile(r"<details><summary>Solution</summary>(.*?)</details>", re.S)
CODE = re.compile(r"```python\n(.*?)```", re.S)
PRINTS = re.compile(r"\nprints\s*\n+```text\n(.*?)```", re.S)


@pytest.mark.slow
def test_the_exercises_solutions_print_what_their_text_says(tmp_path, monkeypatch):
    # each folded solution of 01's exercises runs after the code cells of Part I (the lesson),
    # as a reader would run it, and prints exactly the block its text shows; the figures
    # Part I saves go to a temporary folder, never over the stored ones
    import matplotlib.pyplot as plt

    from replication import lesson

    plt.switch_backend("agg")
    monkeypatch.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path))
    cells = json.loads((ROOT / "notebooks" / "01_ephemeral_crawling.ipynb")
                       .read_text(encoding="utf-8"))["cells"]
    part_one = lesson.part_one(cells)
    markdown = "\n".join("".join(c["source"]) for c in part_one if c["cell_type"] == "markdown")
    solutions = SOLUTION.findall(markdown)
    assert len(solutions) == 4
    namespace: dict = {}
    native = not wl.is_portable()     # the notebook switches this process to portable arithmetic
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in part_one:
                if cell["cell_type"] == "code":
                    exec("".join(cell["source"]), namespace)
        for number, solution in enumerate(solutions, 1):
            (code,), (claimed,) = CODE.findall(solution), PRINTS.findall(solution)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(code, namespace)
            assert printed.getvalue() == claimed, f"exercise {number}"
    finally:
        plt.close("all")
        wl.set_portable(not native)   # the other tests of this worker run as they would alone
