"""Tests of replication.records: statuses, the results file, the report."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication import records as R


def _expected():
    return [
        R.Row("Table 1", "K=5", "C_s", "0.40000", tolerance=5e-6, note="5 decimals"),
        R.Row("Table 1", "K=5", "N_s", "10", tolerance=0.0, note="integer"),
        R.Row("Lemma 2", "grid", "monotone", "", note="claim"),
    ]


def test_statuses():
    cmp = R.Comparison("demo", expected=_expected())
    # recording returns nothing (a notebook cell shows no repr); rows are read back by key
    assert cmp.number("Table 1", "K=5", "C_s", 0.400004) is None
    assert cmp.row("Table 1", "K=5", "C_s").status == "reproduced"
    cmp.number("Table 1", "K=5", "N_s", 11, diagnosis="off by one because ...")
    row = cmp.row("Table 1", "K=5", "N_s")
    assert row.status == "deviates" and "off by one" in row.note
    cmp.claim("Lemma 2", "grid", "monotone", False, "counterexample K=7")
    assert cmp.row("Lemma 2", "grid", "monotone").status == "claim-fails"
    cmp.new("Extra", "", "x", 1.23456789, "ours")
    assert cmp.row("Extra", "", "x").replicated == "1.23457"
    assert [r.quantity for r in cmp.rows] == ["C_s", "N_s", "monotone", "x"]


@pytest.mark.parametrize("verdicts, status", [
    ({"d=1": True, "d=3": True}, "claim-holds"),
    ({"d=1": False, "d=3": False}, "claim-fails"),
    ({"d=1": True, "d=3": False}, "claim-depends"),
])
def test_claim_by_reading_names_the_readings(verdicts, status):
    cmp = R.Comparison("demo", expected=_expected())
    cmp.claim_by_reading("Lemma 2", "grid", "monotone", verdicts, "swept d")
    row = cmp.row("Lemma 2", "grid", "monotone")
    assert row.status == status
    assert row.note.startswith("claim swept d Verdict:")
    for reading in verdicts:
        assert reading in row.note
    if status == "claim-depends":
        assert "holds under 1 of 2 readings (d=1), fails under 1 (d=3)" in row.note
    with pytest.raises(ValueError, match="verdicts is empty"):
        R.Comparison("demo", expected=_expected()).claim_by_reading(
            "Lemma 2", "grid", "monotone", {}, "nothing")


def test_tolerance_is_half_a_unit_not_more():
    cmp = R.Comparison("demo", expected=_expected())
    with pytest.raises(ValueError, match="needs a diagnosis"):
        cmp.number("Table 1", "K=5", "C_s", 0.400006)


def test_unknown_row_and_double_recording_raise():
    cmp = R.Comparison("demo", expected=_expected())
    with pytest.raises(KeyError):
        cmp.number("Table 9", "K=5", "C_s", 0.4)
    cmp.number("Table 1", "K=5", "C_s", 0.4)
    with pytest.raises(ValueError, match="recorded twice"):
        cmp.number("Table 1", "K=5", "C_s", 0.4)


def test_write_requires_every_expected_row(tmp_path, monkeypatch):
    monkeypatch.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path))
    cmp = R.Comparison("demo", expected=_expected())
    cmp.number("Table 1", "K=5", "C_s", 0.4)
    with pytest.raises(ValueError, match="2 expected rows not recorded"):
        cmp.write()
    cmp.number("Table 1", "K=5", "N_s", 10)
    cmp.claim("Lemma 2", "grid", "monotone", True, "checked on a grid")
    path = cmp.write()
    assert path == tmp_path / "data" / "results" / "demo.csv"
    back = R.read_results(path)
    assert [r.status for r in back] == ["reproduced", "reproduced", "claim-holds"]
    assert back[0].tolerance == 5e-6 and math.isnan(back[2].tolerance)


def test_summary_and_report_are_deterministic():
    cmp = R.Comparison("demo", expected=_expected())
    cmp.number("Table 1", "K=5", "C_s", 0.4)
    cmp.number("Table 1", "K=5", "N_s", 12, diagnosis="why")
    cmp.claim("Lemma 2", "grid", "monotone", True, "grid")
    table = R.summary_table(cmp.rows)
    assert table == R.summary_table(cmp.rows)
    assert "1 reproduced, 1 deviates, 1 claim-holds" in table
    report = R.render_report({"demo": cmp.rows})
    assert "| `demo` | 1 | 1 | 0 | 1 | 0 | 0 |" in report
    assert "1 of 2 printed numbers reproduced" in report


@given(st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
                       st.one_of(st.integers(-10**6, 10**6),
                                 st.floats(allow_nan=False, allow_infinity=False),
                                 st.from_regex(r"[A-Za-z0-9.,{} ]{1,8}", fullmatch=True)),
                       max_size=5))
def test_setting_round_trip(params):
    text = R.setting(**params)
    parsed = R.parse_setting(text)
    assert list(parsed) == list(params)
    for k, v in params.items():
        if isinstance(v, float):
            assert float(parsed[k]) == v
        else:
            assert parsed[k] == str(v).strip()


def test_bad_expected_file(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("item,setting,quantity,paper,tolerance,note\nT,s,q,1,-1,n\n")
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        R.read_results(bad)


def test_confidence_interval_is_the_student_t_interval_of_the_mean():
    values = [3.0, 5.0, 4.0, 8.0]
    mean, half = R.confidence_interval(values)
    assert mean == pytest.approx(5.0)
    # sample sd (ddof=1) of the four values is sqrt(14/3); t(0.975, 3) = 3.182446 (tables)
    assert half == pytest.approx(3.182446 * math.sqrt(14 / 3) / 2, rel=1e-6)
    # SciPy's interval of the mean agrees
    from scipy import stats
    lo, hi = stats.t.interval(0.95, 3, loc=5.0, scale=stats.sem(values))
    assert (mean - half, mean + half) == pytest.approx((lo, hi))
    with pytest.raises(ValueError, match="at least 2"):
        R.confidence_interval([1.0])


def test_summary_table_wraps_a_long_item_name_within_the_width():
    cmp = R.Comparison("demo", expected=[])
    cmp.new("2019 paper Sec. V text, quoted by the 2018 paper", "M=1", "reward", 1.0, "ours")
    table = R.summary_table(cmp.rows)
    assert max(len(line) for line in table.splitlines()) <= 100
    assert "2019 paper Sec. V text," in table.splitlines()[2]


def test_a_notebook_reads_the_papers_values_through_the_comparison():
    cmp = R.Comparison("demo", expected=_expected())
    row = cmp.paper("Table 1", "K=5", "C_s")
    assert row.paper == "0.40000" and row.paper_value == 0.4 and row.tolerance == 5e-6
    assert cmp.has("Table 1", "K=5", "N_s") and not cmp.has("Table 9", "K=5", "N_s")
    assert cmp.keys(quantity="C_s") == [("Table 1", "K=5", "C_s")]
    assert len(cmp.keys()) == 3 and cmp.keys("Lemma 2") == [("Lemma 2", "grid", "monotone")]
    with pytest.raises(KeyError, match="not in data/expected/demo.csv"):
        cmp.paper("Table 9", "K=5", "C_s")
    with pytest.raises(ValueError, match="is a claim"):
        cmp.paper("Lemma 2", "grid", "monotone").paper_value


def test_an_undetermined_reading_makes_the_claim_depend():
    cmp = R.Comparison("demo", expected=_expected())
    cmp.claim_by_reading("Lemma 2", "grid", "monotone", {"8 runs": False, "4 runs": None},
                         "shares of runs")
    row = cmp.row("Lemma 2", "grid", "monotone")
    assert row.status == "claim-depends"
    assert "fails under 1 (8 runs), undetermined under 1 (4 runs)." in row.note
    # no reading holds: said in words, not as "0 of 2 readings ()" (issue 31, item 9)
    assert "Verdict: holds under none of 2 readings, fails under 1" in row.note
    assert "()" not in row.note


# ---- rows computed under other parameters carry them (issue 31, item 4) ----------------------

PARAMETERS_CELL = """\
mu: float = 1.0             # > 0: the rate
K_policy: int = 5           # in [2, inf): buffer of the policy figures
sizes: list[int] = [5, 20]  # in [2, inf): buffers
"""


def _params(tmp_path, monkeypatch, **values):
    """The checked parameters of a scratch notebook ``99_demo`` with these values."""
    import nbformat

    from replication.params import check_parameters

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PARAMETERS_CELL, metadata={"tags": ["parameters"]})]
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "data" / "expected").mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, tmp_path / "notebooks" / "99_demo.ipynb")
    monkeypatch.setenv("WHITTLE_PROJECT_ROOT", str(tmp_path))
    return check_parameters("99_demo", {"mu": 1.0, "K_policy": 5, "sizes": [5, 20], **values})


def test_rows_under_changed_parameters_carry_them_in_their_setting(tmp_path, monkeypatch):
    params = _params(tmp_path, monkeypatch, K_policy=10, sizes=[5, 10])
    cmp = R.Comparison("99_demo", expected=_expected(), params=params,
                       depends={"Table 1": ["K_policy"], "Lemma 2": ()})
    assert not cmp.paper_settings                   # a run with other parameters
    cmp.number("Table 1", "K=5", "C_s", 0.41)       # no diagnosis needed under K_policy=10
    cmp.claim("Lemma 2", "grid", "monotone", True, "no counterexample")
    cmp.new("Extra", "", "x", 1.5, "ours")           # not declared: every changed parameter
    row = cmp.row("Table 1", "K=5", "C_s")           # read back by the key it was recorded under
    assert (row.setting, row.status) == ("K=5;params=K_policy=10", "deviates")
    assert row.note == ("5 decimals DEVIATES: computed with other parameters than the paper's. "
                        "Computed with K_policy=10 (default 5): not the paper's setting.")
    assert [r.setting for r in cmp.rows] == ["K=5;params=K_policy=10", "grid",
                                             "params=K_policy=10,sizes=[5,10]"]
    assert cmp.row("Lemma 2", "grid", "monotone").note == "claim no counterexample"
    # the reference row of the same computation is found again
    assert R.paper_key(cmp.rows[0]) == ("Table 1", "K=5", "C_s")
    assert R.split_run_setting(cmp.rows[2].setting) == ("", "K_policy=10,sizes=[5,10]")


def test_a_row_that_already_names_a_parameter_is_not_labelled_twice(tmp_path, monkeypatch):
    params = _params(tmp_path, monkeypatch, mu=0.5, K_policy=10)
    cmp = R.Comparison("99_demo", expected=[], params=params, depends={"*": ["mu"]})
    cmp.new("Table 1", "lambda=0.1;mu=0.5", "C", 1.0, "ours")   # the notebook wrote mu itself
    cmp.new("Table 1", "lambda=0.1", "C", 1.0, "ours")
    assert [r.setting for r in cmp.rows] == ["lambda=0.1;mu=0.5", "lambda=0.1;params=mu=0.5"]


def test_at_the_defaults_nothing_is_relabelled(tmp_path, monkeypatch):
    params = _params(tmp_path, monkeypatch)
    cmp = R.Comparison("99_demo", expected=_expected(), params=params)
    assert cmp.paper_settings
    cmp.number("Table 1", "K=5", "C_s", 0.4)
    assert cmp.rows[0].setting == "K=5" and cmp.rows[0].note == "5 decimals"
    with pytest.raises(ValueError, match="needs a diagnosis"):   # the paper's setting: diagnose
        cmp.number("Table 1", "K=5", "N_s", 11)


def test_depends_names_only_parameters(tmp_path, monkeypatch):
    params = _params(tmp_path, monkeypatch)
    with pytest.raises(ValueError, match=r"depends\['Table 1'\] names \['K'\], which are not "
                                         r"parameters of 99_demo \(mu, K_policy, sizes\)"):
        R.Comparison("99_demo", expected=[], params=params, depends={"Table 1": ["K"]})


def test_without_params_the_runners_parameters_label_the_rows(monkeypatch):
    # what python -m replication.run sets for the kernel of a run with -p K_policy 10
    monkeypatch.setenv(R.RUN_PARAMETERS_ENV, '{"values": {"K_policy": 10}, '
                                             '"defaults": {"K_policy": 5}}')
    cmp = R.Comparison("demo", expected=_expected(), paper_settings=False)
    cmp.number("Table 1", "K=5", "C_s", 0.4)
    assert cmp.rows[0].setting == "K=5;params=K_policy=10"
    assert cmp.rows[0].status == "reproduced"        # still within the paper's tolerance
    monkeypatch.delenv(R.RUN_PARAMETERS_ENV)
    assert R.Comparison("demo", expected=_expected()).changed == {}


def test_a_rerun_report_names_rows_that_moved_under_the_papers_setting():
    from replication import rerun

    ref = [R.Row("Table 1", "K=5", "C", "0.4", "0.400", status="reproduced"),
           R.Row("Fig. 2", "all", "y", "", "3", status="new")]
    run = [R.Row("Table 1", "K=5;params=mu=2.0", "C", "0.4", "0.400", status="reproduced"),
           R.Row("Fig. 2", "all", "y", "", "4", status="new")]    # moved, label kept
    lines = rerun.describe(rerun.compare(ref, run, {"mu": 2.0}), {"mu": 2.0})
    assert "  Fig. 2, y: 1 of 1 row moved, by +33.3 %" in lines
    assert lines[-2] == ('Labels: 1 of 2 rows name the changed parameters in their setting '
                         '(";params=mu=2.0"); 1 kept the paper\'s setting (their items are '
                         "declared not to use them: Comparison(depends=...)).")
    assert lines[-1] == ("  but 1 row kept the paper's setting although the value or verdict "
                         "moved (Fig. 2): the notebook's Comparison(depends=...) misses a "
                         "parameter they use.")


def test_a_rerun_pairs_rows_that_a_parameter_moved_to_another_setting():
    from replication import rerun

    ref = [R.Row("Fig. 6", "N=16;K=5", "cost", "0.21", "0.2090741", status="reproduced"),
           R.Row("Lemma 4", "all", "communicating", "", "", status="claim-holds")]
    run = [R.Row("Fig. 6", "N=16;K=10;params=K_policy=10", "cost", "0.21", "0.03805",
                 status="deviates"),
           R.Row("Lemma 4", "all;K_policy=10", "communicating", "", "", status="new")]
    changes = rerun.compare(ref, run, {"K_policy": 10})
    assert not changes.only_reference and not changes.only_run
    lines = rerun.describe(changes, {"K_policy": 10})
    assert "      N=16;K=5 (K=5 -> K=10)  0.2090741 -> 0.03805  (-81.8 %)" in lines
    assert "  Lemma 4, communicating: 1 row claim-holds -> new, its value unchanged" in lines
    assert lines[-1].startswith("Labels: all 2 rows computed under K_policy=10 say so")


def test_the_summary_shows_every_note_in_full_and_prints_the_summary_table():
    note = "DEVIATES: " + " ".join(f"reading {i} <x & y>" for i in range(40))   # 700 chars
    rows = [R.Row("Table 1", "K=5", "C_s", "0.4", "0.40000", status="reproduced"),
            R.Row("Table 1", "K=5", "N_iter", "12", "13", status="deviates", note=note)]
    summary = R.Summary(rows)
    html = summary._repr_html_()
    from html import escape
    assert escape(note) in html and "..." not in html and "…" not in html
    assert html.count('class="whittle-note"') == 1          # the reproduced row is counted only
    assert repr(summary) == R.summary_table(rows)            # what nbval compares as text


@pytest.mark.parametrize("mean, half, text", [
    (260.4994, 0.1712, "260.50 ± 0.17"),
    (0.68, 0.3049, "0.68 ± 0.30"),
    (197.04, 46.31, "197 ± 46"),
    (5.0, 0.0, "5 ± 0"),
    (61.283, 0.997, "61.3 ± 1.0"),     # the rounding carries into a new digit
    (0.1234, 0.0996, "0.12 ± 0.10"),
])
def test_format_estimate_keeps_the_digits_the_interval_supports(mean, half, text):
    assert R.format_estimate(mean, half) == text


def test_format_estimate_rejects_a_negative_half_width():
    with pytest.raises(ValueError, match="half-width"):
        R.format_estimate(1.0, -0.1)
