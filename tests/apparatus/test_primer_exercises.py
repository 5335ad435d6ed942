"""The primer's exercises are checked (issue 31, item 8): each folded solution runs against the
notebook's state and prints what the solution shows.

The stored primer's code cells run, in order, in one fresh interpreter (a subprocess: the
notebook's portable arithmetic and figure style stay there, and its figures go to a temporary
folder, never over ``figures/``); then each solution's ```` ```python ```` blocks run in the
same namespace, and what each block prints must equal the ```` ```text ```` block that follows
it in the solution. Warnings are errors there, as in the rest of the suite: a solution that
warns (a non-indexable arm, a solver that did not converge) must say why and silence it.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRIMER = ROOT / "notebooks" / "00_whittle_primer.ipynb"

_EXERCISE = re.compile(r"^\*\*(\d+)\. ", re.M)
_SOLUTION = re.compile(r"<details><summary>Solution</summary>(.*?)</details>", re.S)
_BLOCK = re.compile(r"^```(python|text)\n(.*?)^```", re.S | re.M)

# Runs in the subprocess: argv[1] the notebook, argv[2] the solutions (JSON), argv[3] where to
# write what each block printed.
_RUNNER = r"""
import contextlib, io, json, sys, warnings
warnings.simplefilter("error")
import matplotlib
matplotlib.use("agg")
with open(sys.argv[1], encoding="utf-8") as f:
    cells = json.load(f)["cells"]
namespace = {"__name__": "__main__"}
with contextlib.redirect_stdout(io.StringIO()):      # the notebook's own outputs: not checked
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.strip():
            exec(compile(source, "<primer cell>", "exec"), namespace)
printed = []
with open(sys.argv[2], encoding="utf-8") as f:
    solutions = json.load(f)
for solution in solutions:
    printed.append([])
    for code in solution:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<solution>", "exec"), namespace)
        printed[-1].append(out.getvalue())
with open(sys.argv[3], "w", encoding="utf-8") as f:
    json.dump(printed, f)
"""


def _markdown() -> str:
    cells = json.loads(PRIMER.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def solutions() -> list[list[tuple[str, str]]]:
    """Per exercise, the ``(code, shown output)`` pairs of its solution, in order."""
    out = []
    for solution in _SOLUTION.findall(_markdown()):
        blocks = _BLOCK.findall(solution)
        pairs = []
        for (kind, code), (next_kind, shown) in zip(blocks, blocks[1:]):
            if kind == "python":
                assert next_kind == "text", f"a solution's code shows no output: {code[:60]!r}"
                pairs.append((code, shown))
        out.append(pairs)
    return out


SOLUTIONS = solutions()


def test_every_exercise_has_a_solution_with_code_and_its_output():
    numbers = [int(n) for n in _EXERCISE.findall(_markdown())]
    assert numbers == list(range(1, len(numbers) + 1)) and numbers, numbers
    assert len(SOLUTIONS) == len(numbers)
    assert all(SOLUTIONS), "a solution without a ```python block and its ```text output"
    lines = [line for pairs in SOLUTIONS for code, _ in pairs for line in code.splitlines()]
    assert max(map(len, lines)) <= 100                   # the notebook's code width


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("primer")
    (tmp / "solutions.json").write_text(
        json.dumps([[code for code, _ in pairs] for pairs in SOLUTIONS]), encoding="utf-8")
    env = dict(os.environ, WHITTLE_PROJECT_ROOT=str(ROOT), WHITTLE_OUTPUT_ROOT=str(tmp / "out"),
               MPLBACKEND="agg")
    run = subprocess.run([sys.executable, "-c", _RUNNER, str(PRIMER), str(tmp / "solutions.json"),
                          str(tmp / "printed.json")], capture_output=True, text=True, env=env,
                         cwd=tmp, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((tmp / "printed.json").read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("exercise", range(1, len(SOLUTIONS) + 1))
def test_the_solution_runs_and_prints_what_it_shows(printed, exercise):
    for (code, shown), out in zip(SOLUTIONS[exercise - 1], printed[exercise - 1]):
        assert out == shown, f"exercise {exercise}: the solution shows\n{shown}\nit prints\n{out}"
