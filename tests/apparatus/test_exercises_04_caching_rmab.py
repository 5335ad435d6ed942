"""The exercises of 04_caching_rmab, solved (issue 31, item 8): each folded solution's code runs
after the notebook's Part I, as a reader would run it, and prints what its text claims."""

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from replication import lesson

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "04_caching_rmab.ipynb"


def _source(cell) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Part I's code cells run at the defaults, then every solution: ``(namespace, outputs)``."""
    pytest.importorskip("matplotlib").use("agg")
    cells = lesson.part_one(json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"])
    solutions = [block for cell in cells if cell["cell_type"] == "markdown"
                 for details in re.findall(r"<details>.*?</details>", _source(cell), re.S)
                 for block in re.findall(r"```python\n(.*?)```", details, re.S)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path_factory.mktemp("out")))  # figures there
        namespace = {"__name__": "__main__"}
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in cells:
                if cell["cell_type"] == "code":
                    exec(compile(_source(cell), str(NOTEBOOK), "exec"), namespace)
        outputs = []
        for code in solutions:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "solution", "exec"), namespace)
            outputs.append(out.getvalue())
    return namespace, outputs


@pytest.mark.slow
def test_there_are_four_exercises_each_with_code(solved):
    _, outputs = solved
    assert len(outputs) == 4 and all(outputs)


@pytest.mark.slow
def test_exercise_1_w0_falls_but_w1_moves_more_and_the_engine_agrees(solved):
    ns, outputs = solved
    assert "W(., 0) lower at every level: True" in outputs[0]
    assert "agrees with the engine to 1e-8: True" in outputs[0]
    moved = ns["moved"]
    assert moved[1] > moved[0]                    # "W(., 1) moves more, not less"
    assert ns["d"] == ns["base"].fetch_cost       # the global set back


@pytest.mark.slow
def test_exercise_2_a_holding_cost_shifts_every_index_by_itself(solved):
    _, outputs = solved
    gap = float(outputs[1].split("largest |W_h - (W - h)|:")[1])
    assert gap < 1e-12                            # exact pivots on shifted rewards: rounding only


@pytest.mark.slow
def test_exercise_3_the_indices_predict_the_thresholds(solved):
    ns, _ = solved
    assert ns["by_hand"] == ns["predicted"]


@pytest.mark.slow
def test_exercise_4_only_the_top_index_ignores_the_fetch_cost(solved):
    ns, outputs = solved
    assert ns["flat"] == [ns["K"] - 1]
    assert f"top level: {ns['K'] - 1}" in outputs[3]
