"""make html (tools/make_html.py): every page exists, shows every figure its notebook displays,
leaves no ``$$`` raw, and loads MathJax from the site itself, so it reads without network.

What "no raw ``$$``" means is defined by ``make_html.math_problems``: outside scripts, styles,
code cell inputs and ``code`` elements (code is meant to be shown as typed), no ``$$`` inside
``pre``/``textarea``/``noscript`` (MathJax skips those: an output that prints TeX) and an even
number of ``$$`` in every run of text between two tags other than ``<br>`` (MathJax pairs
delimiters only within such a run: an odd count is a formula left open or broken by a tag).
The browser itself is not needed: the screenshots of the pages are a manual check.
"""

import base64
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_html  # noqa: E402

# The smallest valid PNG: one transparent pixel.
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082")).decode()


def _image_payloads(nb_path: Path) -> list[str]:
    """The base64 text of every image/png output of a notebook, in order."""
    nb = nbformat.read(nb_path, as_version=4)
    return ["".join(out["data"]["image/png"]).replace("\n", "")
            for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
            if "image/png" in out.get("data", {})]


def _page_images(page: str) -> list[str]:
    return [m.replace("\n", "") for m in
            re.findall(r'<img\b[^>]*\bsrc="data:image/png;base64,([^"]+)"', page)]


def _mathjax_src(page: str) -> str:
    (src,) = re.findall(r'<script\b[^>]*\bsrc="([^"]*MathJax\.js[^"]*)"', page)
    return src


def _check_site(out: Path, root: Path, names: list[str]) -> None:
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in ["index", *names]:
        page = (out / f"{name}.html").read_text(encoding="utf-8")
        assert make_html.math_problems(page) == [], name
        src = _mathjax_src(page)
        # a relative path inside the site, to a file that is there: no network needed
        assert "://" not in src and not src.startswith("/")
        assert (out / src.split("?")[0]).is_file()
        assert not re.findall(r'<script\b[^>]*\bsrc="(?:https?:)?//', page), name
        if name == "index":
            continue
        payloads = _image_payloads(root / "notebooks" / f"{name}.ipynb")
        assert _page_images(page) == payloads, name     # every image output, in order
        assert "No description has been provided" not in page   # each image has an alt text
        assert f'href="{name}.html"' in index
        for png in (root / "figures" / name).glob("*.png"):
            assert f'src="figures/{name}/{png.name}"' in index
            assert (out / "figures" / name / png.name).read_bytes() == png.read_bytes()


def _project(tmp_path) -> Path:
    """A project with one notebook: math, an image output, a figure file, results."""
    root = tmp_path / "project"
    for sub in ("notebooks", "figures/99_demo", "data/results"):
        (root / sub).mkdir(parents=True)
    (root / "data" / "results" / "99_demo.csv").write_text(
        "item,setting,quantity,paper,replicated,tolerance,status,note\n"
        "Table 1,k=1,x,1.0,1.0,0.05,reproduced,printed to 1 decimal\n")
    (root / "figures" / "99_demo" / "line.png").write_bytes(base64.b64decode(PIXEL))
    nb = nbformat.v4.new_notebook()
    code, md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    nb.cells = [
        md("# A demo\n\nThe cost is $C = \\gamma P_0$ and\n\n$$C(\\rho) = \\frac{1-\\rho}"
           "{1-\\rho^{K+1}}, \\qquad (4)$$"),
        md("## 1. Figure 1: a line"),
        code('save_figure(fig, NOTEBOOK, "line")\nlabel = "$$x$$"', outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": PIXEL,
                                                          "text/plain": "<Figure>"})]),
        md("## 2. Table 1"),
    ]
    nbformat.write(nb, root / "notebooks" / "99_demo.ipynb")
    return root


def test_a_page_shows_its_image_outputs_and_its_math_offline(tmp_path):
    root = _project(tmp_path)
    out = tmp_path / "html"
    assert make_html.build(out, ["99_demo"], root=root) == []
    _check_site(out, root, ["99_demo"])
    index = (out / "index.html").read_text(encoding="utf-8")
    cell_id = nbformat.read(root / "notebooks" / "99_demo.ipynb", as_version=4).cells[2].id
    assert f'href="99_demo.html#cell-id={cell_id}"' in index   # the figure links to its cell
    assert 'href="99_demo.html#2.-Table-1"' in index            # a section links to its heading
    assert '<a href="#99_demo"><code>99_demo</code></a>' in index  # the status table's row
    assert re.search(r"<td[^>]*>1</td>", index)                # one row reproduced


def test_the_check_finds_raw_tex_that_mathjax_would_not_typeset(tmp_path):
    root = _project(tmp_path)
    path = root / "notebooks" / "99_demo.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells += [nbformat.v4.new_markdown_cell("A formula left open: $$x^2$ here."),
                 nbformat.v4.new_markdown_cell("Split in a sentence: $$a = b\n\nc$$"),
                 nbformat.v4.new_markdown_cell("$$a = b\n\nc$$"),   # a display block: kept whole
                 nbformat.v4.new_markdown_cell("Fine as inline code: `$$`.")]
    nb.cells[2].outputs.append(nbformat.v4.new_output("stream", text="$$x$$\n"))  # TeX printed
    nbformat.write(nb, path)
    warnings = make_html.build(tmp_path / "html", ["99_demo"], root=root)
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "$$ inside <pre>, shown raw: '$$x$$'",
        "unpaired $$ in text: 'A formula left open: $$x^2$ here.'",
        "unpaired $$ in text: 'Split in a sentence: $$a = b'",     # two paragraphs, each odd
        "unpaired $$ in text: 'c$$'"]
    # nothing else: not the $$ of the code cell's input, the display block or the inline code


def test_the_stored_notebooks_render_with_their_figures_and_math(tmp_path):
    names = make_html.notebooks(ROOT)
    assert len(names) == 6                 # the primer 00_ and the five papers
    out = tmp_path / "html"
    assert make_html.build(out, root=ROOT) == []
    _check_site(out, ROOT, names)
