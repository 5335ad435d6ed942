"""The stored notebooks as a reader sees them: every saved figure shown inline, no internal
reprs, lines that fit, only the reference run stored.

These read the stored ``.ipynb`` files; they run nothing.
"""

import base64
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDTH = 100          # a line wider than this wraps in a browser's notebook view


def _cells(name):
    return json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]


def _outputs(name):
    for cell in _cells(name):
        yield from cell.get("outputs", [])


def _text(out):
    if out.get("output_type") == "stream":
        return "".join(out["text"])
    return "".join(out.get("data", {}).get("text/plain", ""))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_saved_figure_is_shown_inline_byte_for_byte(name):
    shown = [base64.b64decode("".join(out["data"]["image/png"]))
             for out in _outputs(name) if "image/png" in out.get("data", {})]
    saved = {p.name: p.read_bytes() for p in sorted((ROOT / "figures" / name).glob("*.png"))}
    assert saved, f"figures/{name}/ holds no figure"
    missing = [file for file, data in saved.items() if data not in shown]
    assert not missing, f"{name}: saved but not shown in the notebook: {missing}"
    unsaved = [i for i, data in enumerate(shown) if data not in saved.values()]
    assert not unsaved, f"{name}: image outputs {unsaved} are not figures under figures/{name}/"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_outputs_show_no_internal_reprs_and_fit_the_page(name):
    for out in _outputs(name):
        text = _text(out)
        assert "Row(" not in text, f"{name}: a Row repr in an output: {text[:120]!r}"
        assert "Report(" not in text, f"{name}: a result repr in an output: {text[:120]!r}"
        long = [line for line in text.splitlines() if len(line) > WIDTH]
        assert not long, f"{name}: {len(long)} output lines over {WIDTH} columns: {long[0]!r}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stored_notebook_is_the_reference_run(name):
    cells = _cells(name)
    tags = [t for c in cells for t in c.get("metadata", {}).get("tags", [])]
    assert "injected-parameters" not in tags, f"{name} keeps a parameter run's injected cell"
    checked = tags.count("nbval-check-output")
    # a paper notebook's one summary cell; the primer, which records no results, checks each
    # cell whose sentences or tables its computation writes (issue 31, item 3)
    assert tags.count("parameters") == 1 and (checked >= 1 if name.startswith("00_") else
                                              checked == 1)
    errors = [o for o in _outputs(name) if o.get("output_type") == "error"]
    assert not errors, f"{name} was stored with an error output"
