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
