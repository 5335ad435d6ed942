"""05_robot_queue as a reader meets it: the exercises' solutions run and print what their text
says (issue 31, item 8), and a run with another buffer for Figs. 6-8 relabels only the rows
that depend on it (item 4).

These run the notebook's code (seconds for the exercises, a minute for the run); the run uses a
copy of the project in a temporary folder, so the stored notebook and results are never touched.
"""

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replication import lesson
from replication.records import split_run_setting

ROOT = Path(__file__).resolve().parents[2]
NB = "05_robot_queue"
KERNEL = "whittle-lib"

pytestmark = pytest.mark.slow


def _cells():
    return json.loads((ROOT / "notebooks" / f"{NB}.ipynb").read_text(encoding="utf-8"))["cells"]


def _source(cell) -> str:
    return "".join(cell["source"])


def _solutions():
    """``(exercise, code, printed text)`` of each folded solution: its ```python block and the
    ```text block that says what the code prints."""
    found = []
    for cell in lesson.part_one(_cells()):
        if cell["cell_type"] != "markdown":
            continue
        for i, block in enumerate(re.findall(r"<details>.*?</details>", _source(cell), re.S)):
            code = re.findall(r"```python\n(.*?)```", block, re.S)
            text = re.findall(r"```text\n(.*?)```", block, re.S)
            found.append((i + 1, "\n".join(code), "".join(text)))
    return found


def test_every_exercise_has_a_solution_with_code_and_its_output():
    solutions = _solutions()
    assert len(solutions) == 3
    assert all(code and text for _, code, text in solutions)


@pytest.fixture(scope="module")
def part_one_state(tmp_path_factory):
    """The namespace of Part I's code cells, run in order until every name the solutions use
    is defined (the model of Fig. 7, the operator T, the exact gain...): the state a reader's
    kernel has when they reach the exercises."""
    import matplotlib
    import pandas as pd

    import whittle_lib as wl

    matplotlib.use("agg")
    needed = {"np", "robots", "params", "space", "K", "c", "P0", "P1", "ok0", "ok1", "T", "x_hat",
              "optimal_gain"}
    namespace: dict = {}
    out = tmp_path_factory.mktemp("out")
    old = os.environ.get("WHITTLE_OUTPUT_ROOT")
    os.environ["WHITTLE_OUTPUT_ROOT"] = str(out)      # figures saved on the way go here
    # the cells switch on portable arithmetic, set matplotlib's style and pandas' options for
    # the whole process: this worker's other tests get the process back as it was
    portable, rows = wl.is_portable(), pd.get_option("display.max_rows")
    try:
        with matplotlib.rc_context():
            for cell in lesson.part_one(_cells()):
                if cell["cell_type"] == "code":
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(_source(cell), "<cell>", "exec"), namespace)
                if needed <= namespace.keys():
                    break
    finally:
        wl.set_portable(portable)
        pd.set_option("display.max_rows", rows)
        if old is None:
            os.environ.pop("WHITTLE_OUTPUT_ROOT")
        else:
            os.environ["WHITTLE_OUTPUT_ROOT"] = old
    assert needed <= namespace.keys(), needed - namespace.keys()
    return namespace


@pytest.mark.parametrize("number", [1, 2, 3])
def test_a_solution_prints_what_its_text_says(part_one_state, number):
    _, code, text = _solutions()[number - 1]
    import whittle_lib as wl

    namespace = dict(part_one_state)       # each solution from the state of Part I
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), wl.portable():   # as the notebook's arithmetic
        exec(compile(code, f"<exercise {number}>", "exec"), namespace)
    assert printed.getvalue() == text


def _rows(path: Path) -> dict:
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["item"], r["setting"], r["quantity"]): r for r in csv.DictReader(f)}


def test_a_run_with_another_buffer_keeps_table_1_and_labels_what_moved(tmp_path):
    # K_policy is the buffer of Figs. 6-8. Table 1 finds x_hat* on the captions' own instance,
    # so its rows keep the paper's setting, their values and their verdicts; the rows that use
    # the figures' MDP say so in their setting.
    project = tmp_path / "project"
    for sub in ("notebooks", "data/expected", "data/results"):
        (project / sub).mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / f"{NB}.ipynb", project / "notebooks")
    shutil.copy(ROOT / "data" / "expected" / f"{NB}.csv", project / "data" / "expected")
    shutil.copy(ROOT / "data" / "results" / f"{NB}.csv", project / "data" / "results")
    env = dict(os.environ, WHITTLE_PROJECT_ROOT=str(project), MPLBACKEND="agg")
    env.pop("WHITTLE_OUTPUT_ROOT", None)
    run = subprocess.run([sys.executable, "-m", "replication.run", NB, "--kernel", KERNEL,
                          "-p", "K_policy", "10"], capture_output=True, text=True, env=env,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    reference = _rows(ROOT / "data" / "results" / f"{NB}.csv")
    fresh = _rows(project / "build" / "runs" / NB / "K_policy=10" / "data" / "results"
                  / f"{NB}.csv")
    table1 = {key: row for key, row in fresh.items() if key[0] == "Table 1"}
    assert len(table1) == 162
    assert all(row == reference[key] for key, row in table1.items())   # setting, value, verdict
    labelled = {key[0] for key in fresh if split_run_setting(key[1])[1] == "K_policy=10"}
    assert labelled == {"Fig. 6", "Fig. 7", "Fig. 8", "Proposition 4", "Eq. (20)", "Eq. (21)",
                        "Eq. (25)", "Lemma 4", "Proposition 3", "Sec. 3 text", "Sec. 4 text"}
    assert "Table 1" not in labelled and "Table 2" not in labelled
    # the rerun says first what the figures' MDP computed differently, and no Table 1 verdict
    assert "What the model computed differently under K_policy=10" in run.stdout
    assert "unchanged: Table 1 (162 rows)" in run.stdout
    assert "Table 1, N_iter" not in run.stdout
