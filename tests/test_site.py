"""make html (replication/site.py, docs/conf.py): Sphinx with MyST-NB builds the site from the
stored notebooks with -W; every page exists, every figure a notebook shows is on its page, the
math is typeset by a MathJax copied into the site (no network), and the status page counts
what data/results holds. A browser is not needed: the screenshots are a manual check.
"""

import base64
import hashlib
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replication import records, site

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _png_outputs(name: str) -> list[bytes]:
    """The bytes of every image/png output of a stored notebook, in order."""
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    return [base64.b64decode("".join(out["data"]["image/png"]))
            for cell in nb["cells"] if cell["cell_type"] == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]


class _RawTeX(HTMLParser):
    """Text a reader sees, outside code, math and scripts: it should hold no TeX delimiter."""

    SKIP = {"script", "style", "pre", "code", "textarea"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.seen: list[str] = []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        skip = tag in self.SKIP or "math" in classes or "highlight" in " ".join(classes)
        if tag not in ("br", "img", "meta", "link", "input", "hr", "wbr", "col"):
            self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not any(skip for _, skip in self.stack) and ("$" in data or "\\(" in data):
            self.seen.append(" ".join(data.split())[:80])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "html"
    # as make html runs it, in its own process; -W: any Sphinx warning fails the build
    run = subprocess.run([sys.executable, "-m", "replication.site", "--out", str(out),
                          "--work", str(out.parent / "work")],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return out


@pytest.mark.slow
def test_every_page_exists(built):
    for page in ["index", "status", "report", "api", *(f"notebooks/{n}" for n in NOTEBOOKS)]:
        assert (built / f"{page}.html").is_file(), page
    index = (built / "index.html").read_text(encoding="utf-8")
    for name in NOTEBOOKS:
        assert f'href="notebooks/{name}.html"' in index


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebook_shows_its_figures(built, name):
    page = (built / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img\b[^>]*\bsrc="([^"]+)"', page)
    shown = [(built / "notebooks" / src).resolve().read_bytes() for src in sources
             if not src.startswith(("http:", "https:", "data:"))]
    digests = {hashlib.sha256(b).hexdigest() for b in shown}
    outputs = _png_outputs(name)
    assert outputs and len(shown) >= len(outputs)
    assert {hashlib.sha256(b).hexdigest() for b in outputs} <= digests
    # each image says what it is to a reader who cannot see it (not its file name)
    alts = re.findall(r'<img\b[^>]*\balt="([^"]*)"', page)
    assert len(alts) == len(sources) and not [a for a in alts if a.endswith(".png") or not a]
    # every figure saved under figures/<nb>/ is one the notebook shows
    for png in (ROOT / "figures" / name).glob("*.png"):
        assert hashlib.sha256(png.read_bytes()).hexdigest() in digests, png.name


@pytest.mark.slow
@pytest.mark.parametrize("page", ["index", "status", "api", *(f"notebooks/{n}" for n in NOTEBOOKS)])
def test_math_is_typeset_offline(built, page):
    text = (built / f"{page}.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', text)
    assert not [s for s in scripts if "//" in s]                    # nothing from a network
    mathjax = [s for s in scripts if "MathJax.js" in s]
    if page.startswith("notebooks/"):
        assert 'class="math' in text and mathjax                     # equations marked
    if 'class="math' in text:                                        # Sphinx loads MathJax
        (src,) = mathjax                                             # only where math is
        assert (built / page).parent.joinpath(src.split("?")[0]).resolve().is_file()
        assert "processClass" in text                                # MathJax 2 told where
    scan = _RawTeX()
    scan.feed(text)
    assert scan.seen == [], scan.seen                                # no TeX left raw


@pytest.mark.slow
def test_status_page_and_source_links(built):
    status = (built / "status.html").read_text(encoding="utf-8")
    for name in NOTEBOOKS:
        results = ROOT / "data" / "results" / f"{name}.csv"
        # the primer replicates no paper: no results file, every count 0
        counts = records.status_counts(records.read_results(results)) if results.exists() \
            else dict.fromkeys([s.value for s in records.Status], 0)
        row = re.search(rf"{name}</span></a>(?:</p>)?</td>(.*?)</tr>", status, re.S).group(1)
        cells = [re.sub(r"</?p>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        assert cells[1:] == [str(v) for v in counts.values()], name
        assert cells[0] == site._minutes(site.run_time(ROOT / "notebooks" / f"{name}.ipynb"))
    api = (built / "api.html").read_text(encoding="utf-8")
    assert "viewcode-link" in api and (built / "_modules" / "whittle_lib" / "mdp.html").is_file()


def _project(tmp_path) -> Path:
    root = tmp_path / "project"
    for sub in ("notebooks", "data/results", "docs"):
        (root / sub).mkdir(parents=True)
    (root / "data" / "results" / "99_demo.csv").write_text(
        "item,setting,quantity,paper,replicated,tolerance,status,note\n"
        "Table 1,k=1,x,1.0,1.0,0.05,reproduced,printed to 1 decimal\n"
        "Claim,all,y,,,,claim-fails,a counterexample\n")
    nb = {"cells": [], "metadata": {"papermill": {"duration": 156.25}}, "nbformat": 4,
          "nbformat_minor": 5}
    (root / "notebooks" / "99_demo.ipynb").write_text(json.dumps(nb))
    nb["metadata"] = {}
    (root / "notebooks" / "98_old.ipynb").write_text(json.dumps(nb))
    (root / "README.md").write_text(
        "<!-- status-table:end -->\n\n- **reproduced**: equal\n\n# Next")
    return root


def test_status_page_counts_the_results_and_reads_the_run_time(tmp_path):
    page = site.status_page(_project(tmp_path))
    lines = page.splitlines()
    assert "| [99_demo](notebooks/99_demo.ipynb) | 2 min 36 s | 1 | 0 | 0 | 0 | 1 | 0 |" in lines
    assert "| [98_old](notebooks/98_old.ipynb) | not recorded | 0 | 0 | 0 | 0 | 0 | 0 |" in lines
    assert lines[-1] == "- **reproduced**: equal"                 # the README's legend


def test_api_page_documents_every_public_module_once():
    page = site.api_page()
    modules = re.findall(r"^\.\. automodule:: (\S+)$", page, re.M)
    assert "whittle_lib.mdp" in modules and len(set(modules)) == len(modules)
    assert not [m for m in modules if "._" in m]
    assert page.count(":ignore-module-all:") == len(modules)


def test_run_time_table_for_the_readme(tmp_path):
    assert site.run_time_table(_project(tmp_path)).splitlines() == [
        "| notebook | run time |", "|---|---:|",
        "| `98_old` | not recorded |", "| `99_demo` | 2 min 36 s |"]
