"""Each notebook a lesson first (issue 31, items 2 and 3; replication/lesson.py): Part I within
its budgets, and no Markdown cell stating a number that the computation produces.

The paper notebooks are being restructured one by one. A notebook in ``NOT_YET_LESSONS`` is
expected to fail (``xfail(strict=True)``): the helper who restructures it removes it from the
set (and from ``NOT_YET_PROSE_NUMBERS``), and from then on the test guards it; a notebook that
passes while still listed fails the run, so the sets never lag behind the notebooks.

``pytest tests/apparatus/test_lessons.py -s`` (or ``python -m replication.lesson``) prints the table.
"""

from pathlib import Path

import pytest

from replication import lesson

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

# Not yet restructured into Part I (the lesson) and Part II (the record).
NOT_YET_LESSONS: set[str] = set()
# Of those, the ones whose Markdown still states recorded values or counts that drifted.
NOT_YET_PROSE_NUMBERS = set()


def _cases(not_yet: set[str], reason: str):
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason))
            if name in not_yet else name for name in NOTEBOOKS]


def test_the_table_of_lessons(capsys):
    measures = [lesson.measure(ROOT / "notebooks" / f"{name}.ipynb") for name in NOTEBOOKS]
    text = lesson.table(measures)
    with capsys.disabled():
        print("\n" + text)
    assert text.count("\n") == len(NOTEBOOKS) + 1
    assert {m.notebook for m in measures} == set(NOTEBOOKS)


def test_the_sets_name_notebooks_and_lag_no_restructuring():
    assert NOT_YET_LESSONS <= set(NOTEBOOKS)
    # a notebook restructured into a lesson keeps no stale number in its prose either
    assert NOT_YET_PROSE_NUMBERS <= NOT_YET_LESSONS


@pytest.mark.parametrize("name", _cases(NOT_YET_LESSONS, "not yet a lesson (issue 31)"))
def test_part_one_keeps_its_budgets(name):
    measures = lesson.measure(ROOT / "notebooks" / f"{name}.ipynb")
    problems = lesson.over_budget(measures)
    assert problems == [], f"{name}: {'; '.join(problems)}\n{lesson.table([measures])}"
    if not name.startswith("00_"):                     # a paper notebook has its record
        assert measures.has_part_two, f"{name}: no heading 'Part II' or 'The record'"


@pytest.mark.parametrize("name", _cases(NOT_YET_PROSE_NUMBERS,
                                        "prose states computed numbers (issue 31, item 3)"))
def test_prose_states_no_computed_number(name):
    path = ROOT / "notebooks" / f"{name}.ipynb"
    stated = [f"cell {i}: {written} (recorded {value})"
              for i, written, value in lesson.computed_numbers(path)]
    drift = [f"cell {i}: {count!r}, the computation gives {', '.join(counts)}"
             for i, count, counts in lesson.count_drift(path)]
    assert stated == [], f"{name}: print these from the computation: {stated}"
    assert drift == [], f"{name}: counts the computation does not produce: {drift}"


def _notebook(tmp_path, markdown: list[str], outputs: str = "") -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text) for text in markdown]
    code = nbformat.v4.new_code_cell("print(result)")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=outputs)]
    nb.cells.append(code)
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "data" / "results").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "expected").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "results" / "99_demo.csv").write_text(
        "item,setting,quantity,paper,replicated,tolerance,status,note\n"
        "T,a,x,254.66,260.3899,0.005,deviates,d\n"
        "T,b,y,,260.50 ± 0.17,,new,ours\n"
        "T,c,z,,3,,new,ours\n")
    (tmp_path / "data" / "expected" / "99_demo.csv").write_text(
        "item,setting,quantity,paper,tolerance,note\nT,a,x,254.66,0.005,d\n")
    path = tmp_path / "notebooks" / "99_demo.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_recorded_value_in_prose_is_found_and_the_papers_number_is_not(tmp_path):
    path = _notebook(tmp_path, ["The paper prints 254.66; we get 260.39, and about 260.5 "
                                "with noise, in 3 runs of 260.3 s."])
    assert lesson.computed_numbers(path) == [(0, "260.39", "260.3899"), (0, "260.5", "260.50")]


def test_a_count_the_computation_does_not_produce_is_drift(tmp_path):
    path = _notebook(tmp_path, ["Wrong on 69 of 160 states, right on 89 of 160; Theorem 1 "
                                "of 2015."], outputs="wrong on 71 of 160 states\n89/160 right\n")
    assert lesson.count_drift(path) == [(0, "69 of 160", ["71 of 160", "89 of 160"])]


def test_part_one_ends_at_the_record_and_folded_solutions_are_not_prose(tmp_path):
    path = _notebook(tmp_path, [
        "# Title\n\nThe printed value and the recorded reading.\n\nOne two three.",
        "**Exercise.** <details><summary>Solution</summary>many hidden words</details>",
        "## Part II: the record\n\nThe printed value, recorded.", ])
    m = lesson.measure(path)
    assert m.has_part_two and (m.paragraphs, m.bookkeeping) == (3, 1)
    assert m.words == 12            # 1 + 7 + 3 + "Exercise": not the folded words, not Part II
    assert m.code_cells == 0        # the code cell comes after Part II begins
