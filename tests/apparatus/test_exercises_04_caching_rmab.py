"""The exercises of 04_caching_rmab, solved (issue 31, item 8): each folded solution's code runs
after the notebook's Part I, as a reader would run it, and prints exactly the block that follows
"prints" in its text, and what its prose claims.

Part I switches the process to portable arithmetic and sets matplotlib's and pandas' options, so
it runs in a process of its own, which reports what each solution printed and the values its
text speaks of."""

import re
from pathlib import Path

import pytest

from replication import lesson

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "04_caching_rmab.ipynb"

# The values the solutions' texts speak of, read in the notebook's namespace afterwards.
VALUES = {"moved": "[float(v) for v in moved]", "K": "K",
          "d_restored": "bool(d == base.fetch_cost)", "by_hand": "list(by_hand)",
          "predicted": "list(predicted)", "flat": "[int(r) for r in flat]"}
# a solution's code, and the block its text says it prints
_SHOWN = re.compile(r"```python\n(.*?)```\s*(?:prints\s*```text\n(.*?)```)?", re.S)


def _solve(out: Path) -> tuple[dict, list[str], list[str]]:
    """What every solution printed, what its text says it prints, and the values its text
    speaks of."""
    solved = lesson.solve_exercises(NOTEBOOK, values=VALUES, output_root=out, timeout=600)
    shown = [printed for text in solved["solutions"] for _, printed in _SHOWN.findall(text)]
    return solved["values"], solved["outputs"], shown


@pytest.mark.slow
def test_each_solution_runs_after_part_one_and_prints_what_its_text_says(tmp_path):
    # one test, so that the tests' workers run Part I once
    values, outputs, shown = _solve(tmp_path)
    assert len(outputs) == 4 and all(outputs)                       # four exercises, with code
    # each prints exactly the block its text shows after "prints"
    assert all(shown) and outputs == shown
    # 1: W(., 0) falls with d, as Fig. 2 says, but W(., 1) moves more, not less
    assert "W(., 0) lower at every level: True" in outputs[0]
    assert "agrees with the engine to 1e-8: True" in outputs[0]
    assert values["moved"][1] > values["moved"][0] and values["d_restored"]
    # 2: a holding cost shifts every index by itself (exact pivots on shifted rewards)
    assert outputs[1] == "W_h = W - h to 1e-12: True\n"
    # 3: the indices predict the thresholds that value iteration finds
    assert values["by_hand"] == values["predicted"] and "value iteration:" in outputs[2]
    # 4: only the top index ignores the fetch cost
    assert values["flat"] == [values["K"] - 1] and f"top level: {values['K'] - 1}" in outputs[3]
