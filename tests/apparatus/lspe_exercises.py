"""Run the exercises of ``notebooks/02_lspe_learning.ipynb`` against the notebook's own state.

    python tests/apparatus/lspe_exercises.py

executes, in one namespace, the code cells of Part I that come before its Section 3 (the
imports, the parameters at their defaults, the model, ``lspe_by_hand`` and its check: all that
the solutions use), then the code of each folded solution (``<details>``), and prints as JSON
one ``[printed, claimed]`` pair per solution: what the code printed, and the text block the
solution shows under it. A script, run in its own process by
``tests/apparatus/test_papers_lspe_2019.py``, because the notebook switches the library's
arithmetic to portable mode and matplotlib to the collection's style for the whole process.
"""

import contextlib
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "02_lspe_learning.ipynb"
SOLUTION = re.compile(r"<details><summary>Solution</summary>(.*?)</details>", re.S)
BLOCK = re.compile(r"^```(python|text)\n(.*?)^```", re.S | re.M)


def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def solutions(cells) -> list[tuple[str, str]]:
    """``(code, claimed output)`` of each folded solution, in the order of the notebook."""
    found = []
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for body in SOLUTION.findall(_source(cell)):
                blocks = dict.fromkeys(("python", "text"), "")
                for kind, text in BLOCK.findall(body):
                    blocks[kind] += text
                found.append((blocks["python"], blocks["text"]))
    return found


def main() -> int:
    import matplotlib

    matplotlib.use("agg")
    sys.path.insert(0, str(ROOT))
    from replication.lesson import part_one

    cells = part_one(json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"])
    setup = []
    for cell in cells:
        if cell["cell_type"] == "markdown" and re.match(r"## 3\.", _source(cell)):
            break
        if cell["cell_type"] == "code":
            setup.append(_source(cell))
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for source in setup:
            exec(compile(source, str(NOTEBOOK), "exec"), namespace)
    pairs = []
    for code, claimed in solutions(cells):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(NOTEBOOK), "exec"), namespace)
        pairs.append([out.getvalue(), claimed])
    print(json.dumps(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
