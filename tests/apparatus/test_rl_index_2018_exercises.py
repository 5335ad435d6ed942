"""The exercises of notebook 03 (issue 31, item 8): each folded solution runs against the
notebook's own state, and prints what its text says it prints.

The state is the notebook's: its setup and parameters cells and the cells of its Sections 1
and 2 (the crawler, the scheme written out, the check against the library, the known arm),
executed as they are stored, except the cell that starts the long runs of Sections 4 and 5 on
worker processes (no solution uses them). Each solution is the ```python block of a ``<details>``
block of Part I; what it prints must equal the block that follows "It prints:".
"""

import contextlib
import io
import json
import re
from pathlib import Path

import matplotlib
import pytest

import whittle_lib as wl

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "03_rl_index_learning.ipynb"
SECTION_THREE = re.compile(r"^## 3\.", re.M)


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _lesson_cells() -> list[str]:
    """The code cells before Section 3, but the one that starts the worker processes."""
    out = []
    for cell in _cells():
        text = _source(cell)
        if cell["cell_type"] == "markdown" and SECTION_THREE.search(text):
            return out
        if cell["cell_type"] == "code" and "ProcessPoolExecutor(" not in text:
            out.append(text)
    raise AssertionError("no Section 3 heading in the notebook")


def _solutions() -> list[tuple[str, str]]:
    """``(code, what it prints)`` of every folded solution."""
    found = []
    for cell in _cells():
        if cell["cell_type"] != "markdown":
            continue
        for block in re.findall(r"<details>(.*?)</details>", _source(cell), re.S):
            code = re.search(r"```python\n(.*?)```", block, re.S)
            printed = re.search(r"It prints:\s*```\n(.*?)```", block, re.S)
            assert code and printed, f"a solution without code or output: {block[:80]!r}"
            found.append((code.group(1), printed.group(1)))
    return found


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """The notebook's namespace after its Sections 1 and 2."""
    mp = pytest.MonkeyPatch()
    mp.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path_factory.mktemp("nb03")))
    mp.chdir(NOTEBOOK.parent)
    portable = wl.is_portable()
    namespace = {"__name__": "nb03"}
    try:
        with matplotlib.rc_context(), contextlib.redirect_stdout(io.StringIO()):
            matplotlib.use("agg")
            for source in _lesson_cells():
                exec(compile(source, str(NOTEBOOK), "exec"), namespace)
        yield namespace
    finally:
        wl.set_portable(portable)            # the setup cell switches the process's default
        mp.undo()


def test_the_notebook_has_its_exercises():
    assert len(_solutions()) == 4


@pytest.mark.slow
@pytest.mark.parametrize("number", range(4))
def test_a_solution_prints_what_its_text_says(state, number):
    code, printed = _solutions()[number]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"exercise {number + 1}", "exec"), dict(state))
    assert out.getvalue() == printed
