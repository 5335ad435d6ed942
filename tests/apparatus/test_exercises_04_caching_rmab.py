"""The exercises of 04_caching_rmab, solved (issue 31, item 8): each folded solution's code runs
after the notebook's Part I, as a reader would run it, and prints exactly the block that follows
"prints" in its text, and what its prose claims.

Part I switches the process to portable arithmetic and sets matplotlib's and pandas' options, so
it runs in a process of its own, which reports what each solution printed and the values its
text speaks of."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "04_caching_rmab.ipynb"

# Run in a fresh process: Part I's code cells, then every folded solution, each solution's
# output captured; last, the namespace's values the solutions' texts speak of, as JSON.
_RUNNER = r"""
import contextlib, io, json, re, sys
import matplotlib
matplotlib.use("agg")
from replication import lesson

path = sys.argv[1]
cells = lesson.part_one(json.load(open(path, encoding="utf-8"))["cells"])
source = lambda c: c["source"] if isinstance(c["source"], str) else "".join(c["source"])
solutions, shown = [], []       # each solution's code, and the block its text says it prints
for c in (c for c in cells if c["cell_type"] == "markdown"):
    for details in re.findall(r"<details>.*?</details>", source(c), re.S):
        for code, printed in re.findall(r"```python\n(.*?)```\s*(?:prints\s*```text\n(.*?)```)?",
                                        details, re.S):
            solutions.append(code)
            shown.append(printed)
ns = {"__name__": "__main__"}
with contextlib.redirect_stdout(io.StringIO()):
    for c in cells:
        if c["cell_type"] == "code":
            exec(compile(source(c), path, "exec"), ns)
outputs = []
for code in solutions:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "solution", "exec"), ns)
    outputs.append(out.getvalue())
values = {"moved": [float(v) for v in ns["moved"]], "K": ns["K"],
          "d_restored": bool(ns["d"] == ns["base"].fetch_cost),
          "by_hand": list(ns["by_hand"]), "predicted": list(ns["predicted"]),
          "flat": [int(r) for r in ns["flat"]]}
print(json.dumps({"outputs": outputs, "shown": shown, "values": values}))
"""


def _solve(out: Path) -> tuple[dict, list[str], list[str]]:
    """What every solution printed, what its text says it prints, and the values its text
    speaks of."""
    env = dict(os.environ, WHITTLE_OUTPUT_ROOT=str(out), MPLBACKEND="agg")
    run = subprocess.run([sys.executable, "-c", _RUNNER, str(NOTEBOOK)], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=600)   # Part I's figures: tmp
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.splitlines()[-1])
    return result["values"], result["outputs"], result["shown"]


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
