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

ROOT = Path(__file__).resolve().parents[2]
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


class _Links(HTMLParser):
    """Every ``href`` and ``src`` of a page, and the ids its fragments can point to."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.links += [attrs[k] for k in ("href", "src") if attrs.get(k) is not None]
        self.ids |= {attrs[k] for k in ("id", "name") if attrs.get(k)}


@pytest.mark.slow
def test_every_local_link_resolves(built):
    """Every local href and src of every page names a file of the site, and a fragment an id
    of the page it points to (a notebook's link to the code it calls, 03's to _portable, 04's
    to models/caching, the figures, the scripts)."""
    from urllib.parse import unquote, urlsplit

    pages = {}
    for path in built.rglob("*.html"):
        if "_static" in path.relative_to(built).parts:
            continue              # the theme's assets (a Jinja macro file, not a page)
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = parser
    missing, checked = [], 0
    for path, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            checked += 1
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if parts.path.endswith("/"):
                target = target / "index.html"
            where = f"{path.relative_to(built.resolve())}: {link}"
            if not target.is_file():
                missing.append(where)
            elif parts.fragment and target in pages and \
                    unquote(parts.fragment) not in pages[target].ids:
                missing.append(f"{where} (no such anchor)")
    assert checked > 1000 and missing == [], missing[:20]


@pytest.mark.slow
def test_every_module_has_its_source_page_and_notebooks_link_to_it(built):
    for module in ["whittle_lib/_portable", "whittle_lib/models/caching",
                   "whittle_lib/models/caching/single", "replication/papers/robots_1999",
                   "replication/records", "replication/run"]:
        assert (built / "_modules" / f"{module}.html").is_file(), module
    page = (built / "notebooks" / "04_caching_rmab.html").read_text(encoding="utf-8")
    assert 'href="../_modules/replication/papers/caching_2023.html"' in page
    assert "_downloads" not in page                         # no source link downloads a file
    index = (built / "_modules" / "index.html").read_text(encoding="utf-8")
    assert "replication.papers.robots_1999" in index and "whittle_lib._portable" in index


@pytest.mark.slow
def test_the_index_gives_the_reading_order_and_the_time_to_read(built):
    index = (built / "index.html").read_text(encoding="utf-8")
    assert "Before you start" in index and "least squares" in index
    order = [index.index(f'href="notebooks/{name}.html"') for name in NOTEBOOKS]
    assert order == sorted(order) and NOTEBOOKS[0] == "00_whittle_primer"   # primer first
    for name in NOTEBOOKS:
        minutes, words, figures = site.reading_time(ROOT / "notebooks" / f"{name}.ipynb")
        assert f"{minutes} min ({words:,} words" in index, name


@pytest.mark.slow
def test_wide_tables_scroll_inside_their_box(built):
    css = (built / "_static" / "whittle.css").read_text(encoding="utf-8")
    assert "overflow-x: auto" in css and "div.whittle-scroll" in css
    assert "div.cell_output div.output.text_html" in css          # a DataFrame's output
    for page in ["report", "status", "index"]:
        text = (built / f"{page}.html").read_text(encoding="utf-8")
        assert "_static/whittle.css" in text
        tables = len(re.findall(r"<table\b", text))
        assert tables and len(re.findall(r'class="whittle-scroll', text)) == tables, page


def _notebook_json(markdown: list[str], images: int = 0) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": text} for text in markdown]
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}] * images
    cells.append({"cell_type": "code", "metadata": {}, "execution_count": 1,
                  "source": "x = 1", "outputs": outputs})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_reading_time_counts_the_lesson_words_and_figures(tmp_path):
    path = tmp_path / "99_demo.ipynb"
    lesson_words = " ".join(["word"] * 398)
    path.write_text(_notebook_json([f"# Demo\n\n{lesson_words}",
                                    "## Part II: the record\n\n" + "more " * 1000], images=0))
    # 399 words of the lesson (the title's one too), none of Part II; the code is after it
    assert site.reading_time(path) == (2, 399, 0)
    path.write_text(_notebook_json([f"# Demo\n\n{lesson_words}"], images=3))
    # 401 words (x and 1 of the code too): 2.005 min, and 3 figures of 20 s: 4 min, rounded up
    assert site.reading_time(path) == (4, 401, 3)


def test_index_page_adds_the_time_to_read_and_lists_every_notebook(tmp_path):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "docs").mkdir()
    for name in ("00_primer", "01_paper"):
        (root / "notebooks" / f"{name}.ipynb").write_text(_notebook_json(["# T\n\none two"]))
    table = ("| | notebook | what it teaches |\n|---|---|---|\n"
             "| 1 | [Primer](notebooks/00_primer.ipynb) | terms |\n")
    (root / "docs" / "index.md").write_text(
        f"# Site\n\n{site.READING_BEGIN}\n{table}{site.READING_END}\n\nmore\n")
    with pytest.raises(ValueError, match="every notebook once"):
        site.index_page(root)                              # 01_paper is not in the order
    table += "| 2 | [Paper](notebooks/01_paper.ipynb) | a paper |\n"
    (root / "docs" / "index.md").write_text(
        f"# Site\n\n{site.READING_BEGIN}\n{table}{site.READING_END}\n\nmore\n")
    lines = site.index_page(root).splitlines()
    assert lines[3:7] == ["| | notebook | what it teaches | time to read |",
                          "|---|---|---|---:|",
                          "| 1 | [Primer](notebooks/00_primer.ipynb) | terms | 1 min (5 words, "
                          "0 figures) |",
                          "| 2 | [Paper](notebooks/01_paper.ipynb) | a paper | 1 min (5 words, "
                          "0 figures) |"]
