"""Render the stored notebooks to static HTML, with an index page, readable without network.

    python tools/make_html.py [--out DIR] [NOTEBOOK ...]      (make html: DIR = build/html)

The notebooks are rendered as stored (not executed) with nbconvert's ``lab`` template into
``DIR/<notebook>.html``; their image outputs are embedded in the pages. ``DIR/index.html`` holds
the replication status table (recomputed from ``data/results/``, as ``make report`` does for
the README), the README's legend of the statuses, and one section per notebook listing its
sections (the paper's tables and figures) and its figures under ``figures/<notebook>/``, each
linked to where the notebook shows it.

Equations are typeset by MathJax 2.7 copied from the Python package ``jupyter-server-mathjax``
into ``DIR/mathjax/``; the pages load it by a relative path, so they read the same from a file
system without network. The scripts nbconvert would fetch from a CDN for widgets (require.js)
and Mermaid diagrams, which these notebooks do not use, are left out.

A page whose text holds a ``$$`` that MathJax will not typeset (see :func:`math_problems`) is
listed as a warning; the pages are written all the same. The folder is built beside ``DIR``
and moved into place when complete.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from replication.run import last_heading, replace_dir

ROOT = Path(__file__).resolve().parents[1]
MATHJAX_DIR = "mathjax"
# The configurations jupyter-server-mathjax ships (it has no TeX-AMS_CHTML-full, nbconvert's
# default); "Safe" keeps MathJax from acting on links or styles written in TeX.
MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# The package ships the STIX-Web fonts only, not MathJax's default TeX fonts: without this
# MathJax falls back to the reader's local fonts (no italics, uneven glyphs).
MATHJAX_FONTS = ('<script type="text/x-mathjax-config">MathJax.Hub.Config({"HTML-CSS": '
                 '{webFont: "STIX-Web", availableFonts: [], preferredFont: null, '
                 'imageFont: null} });</script>')
# nbconvert's lab template without the CDN scripts for widgets and Mermaid, with MathJax's
# fonts, and with the alternative text of a PNG output taken from its metadata (the lab
# template has none).
TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_mathjax -%}""" + MATHJAX_FONTS + """
{{ super() }}
{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block data_png scoped -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
{%- for key in ('width', 'height') %}{% set value = output | get_metadata(key, 'image/png') %}
{%- if value is not none %} {{ key }}="{{ value | escape_html }}"{% endif %}{% endfor %}
 alt="{{ output | get_metadata('alt', 'image/png') | escape_html }}">
</div>
{%- endblock data_png -%}
"""
STATUS_TABLE_END = "<!-- status-table:end -->"


@dataclass(frozen=True)
class Heading:
    level: int
    anchor: str
    html: str                      # the heading's inner HTML, anchor link removed


@dataclass(frozen=True)
class Figure:
    file: str                      # relative to the output folder
    link: str                      # where the notebook page shows or saves it


@dataclass(frozen=True)
class Page:
    name: str
    headings: tuple[Heading, ...]
    figures: tuple[Figure, ...]

    @property
    def title(self) -> str:
        first = next((h for h in self.headings if h.level == 1), None)
        return first.html if first else self.name


def notebooks(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def mathjax_source() -> Path:
    """The MathJax 2.7 files of the package ``jupyter-server-mathjax``."""
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


# ---- what a reader would see as raw TeX ------------------------------------------------------

class _MathScan(HTMLParser):
    """Collects the ``$$`` that MathJax's tex2jax, as nbconvert configures it, leaves as text.

    tex2jax looks for delimiters in text nodes only, lets a formula run across ``<br>`` but
    across no other tag, and skips ``script``, ``noscript``, ``style``, ``textarea``, ``pre``
    and ``code``. So a ``$$`` is typeset only if it lies outside those elements and pairs with
    another ``$$`` in the same run of text between two tags (``<br>`` aside). Inside ``code``
    (Markdown's inline and fenced code) it is shown raw on purpose.
    """

    SKIP = {"noscript", "textarea", "pre", "code"}   # script and style are removed before

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skipping: list[str] = []
        self.run: list[str] = []
        self.problems: list[str] = []

    def flush(self):
        text = "".join(self.run)
        self.run = []
        if text.count("$$") % 2:
            self.problems.append(f"unpaired $$ in text: {_snippet(text)}")

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "wbr"):
            self.flush()
            if tag in self.SKIP:
                self.skipping.append(tag)

    def handle_endtag(self, tag):
        if tag not in ("br", "wbr"):
            self.flush()
            if self.skipping and self.skipping[-1] == tag:
                self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.run.append(data)
        elif "$$" in data and "code" not in self.skipping:
            self.problems.append(f"$$ inside <{self.skipping[-1]}>, shown raw: {_snippet(data)}")


def _snippet(text: str) -> str:
    at = text.find("$$")
    return repr(" ".join(text[max(0, at - 40):at + 60].split()))


# Not shown to a reader as text (scripts, styles), or shown as code, where TeX is rightly raw
# (a code cell's input: nbconvert puts it in <div class="highlight ..."><pre>, no nested div).
_NOT_TEXT = re.compile(r'<(script|style)\b.*?</\1\s*>|<div class="highlight[^"]*">.*?</div>',
                       re.S | re.I)


def math_problems(page: str) -> list[str]:
    """Every ``$$`` of an HTML page that a reader would see raw instead of typeset.

    Checked: the text outside ``script`` and ``style`` elements, code cell inputs and
    ``code`` elements (code that holds ``$$`` is shown as code, rightly). There a ``$$`` is a
    problem if it sits in a ``pre``, ``textarea`` or ``noscript`` element (an output printing
    TeX, which tex2jax never typesets), or if the run of text holding it has an odd number of
    ``$$`` (a formula left open, or one that Markdown broke with a tag).

    Examples
    --------
    >>> math_problems("<p>$$x^2$$ and<br>$$y$$ <code>$$</code></p><script>a = '$$'</script>")
    []
    >>> for problem in math_problems("<p>$$x</p><p>y$$</p><pre>$$z$$</pre>"):
    ...     print(problem)
    unpaired $$ in text: '$$x'
    unpaired $$ in text: 'y$$'
    $$ inside <pre>, shown raw: '$$z$$'
    """
    scan = _MathScan()
    scan.feed(_NOT_TEXT.sub("", page))
    scan.close()
    scan.flush()
    return scan.problems


# ---- pages -----------------------------------------------------------------------------------

def _exporter():
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab", template_file="whittle_html.j2",
                        extra_loaders=[DictLoader({"whittle_html.j2": TEMPLATE})],
                        mathjax_url=MATHJAX_URL)


_HEADING = re.compile(r'<h([1-6]) id="([^"]+)"[^>]*>(.*?)</h\1>', re.S)
_ANCHOR = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>', re.S)


def _figures(name: str, nb, root: Path) -> tuple[Figure, ...]:
    """The PNGs of ``figures/<name>/``, each linked to the first code cell that names it."""
    out = []
    for png in sorted((root / "figures" / name).glob("*.png")):
        quoted = re.compile(rf"""["']{re.escape(png.stem)}(\.png)?["']""")
        cell = next((c for c in nb.cells if c.cell_type == "code" and quoted.search(c.source)),
                    None)
        link = f"{name}.html" + (f"#cell-id={cell.id}" if cell is not None and "id" in cell
                                 else "")
        out.append(Figure(f"figures/{name}/{png.name}", link))
    return tuple(out)


def _add_alt_text(nb) -> None:
    """Give every image output without one an alternative text, in place: the section it is
    in (the last Markdown heading before it)."""
    heading = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = last_heading(cell.source, heading)
            continue
        for out in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg", "image/svg+xml"):
                if mime in out.get("data", {}):
                    meta = out.setdefault("metadata", {}).setdefault(mime, {})
                    meta.setdefault("alt", f"Figure of the section {heading}" if heading
                                    else "Figure")


def render_notebook(name: str, root: Path, out: Path, exporter) -> Page:
    """Write ``out/<name>.html`` and copy the notebook's figures; return what the index needs."""
    import nbformat

    nb = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4)
    _add_alt_text(nb)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": name}})
    (out / f"{name}.html").write_text(body, encoding="utf-8")
    headings = tuple(Heading(int(m.group(1)), m.group(2), _ANCHOR.sub("", m.group(3)).strip())
                     for m in _HEADING.finditer(body))
    figures = _figures(name, nb, root)
    if figures:
        shutil.copytree(root / "figures" / name, out / "figures" / name)
    return Page(name, headings, figures)


def _status_html(root: Path) -> str:
    """The status table from ``data/results/`` and the README's legend, as HTML."""
    from nbconvert.filters.markdown import markdown2html

    from replication import records as replication

    files = sorted((root / "data" / "results").glob("*.csv"))
    table = replication.render_status_table({f.stem: replication.read_results(f)
                                             for f in files})
    legend = ""
    readme = root / "README.md"
    if readme.exists() and STATUS_TABLE_END in (text := readme.read_text(encoding="utf-8")):
        after = text.split(STATUS_TABLE_END, 1)[1]
        legend = after.split("\n#", 1)[0]          # up to the next heading
    out = markdown2html(table + "\n\n" + legend)
    # each notebook's name links to its section of the index
    return re.sub(r"<code>(\d\d_[A-Za-z0-9_]+)</code>", r'<a href="#\1"><code>\1</code></a>', out)


CSS = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em;
       line-height: 1.45; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td:not(:first-child), th:not(:first-child) { text-align: right; }
section { border-top: 1px solid #ddd; margin-top: 2em; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
.figures a { display: block; width: 14em; font-size: 0.85em; text-decoration: none; }
.figures img { width: 100%; border: 1px solid #ddd; }
"""


def render_index(pages: list[Page], root: Path) -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8" />',
        "<title>Whittle index policies: five papers, replicated</title>",
        f"<style>{CSS}</style>",
        '<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: {inlineMath: '
        "[['$','$'], ['\\\\(','\\\\)']], processEscapes: true}, messageStyle: 'none'});"
        "</script>",
        MATHJAX_FONTS, f'<script src="{html.escape(MATHJAX_URL)}"></script>', "</head>",
        "<body>",
        "<h1>Whittle index policies: five papers, replicated</h1>",
        "<p>The notebooks as stored in the repository, rendered without running them "
        "(<code>make html</code>). Each section below lists a notebook's sections, one per "
        "table or figure of the paper, and the figures it saves.</p>",
        "<h2>Replication status</h2>", _status_html(root)]
    for page in pages:
        parts += [f'<section id="{page.name}">',
                  f'<h2><a href="{page.name}.html">{page.title}</a></h2>',
                  f"<p><code>notebooks/{page.name}.ipynb</code></p>", "<ul>"]
        parts += [f'<li><a href="{page.name}.html#{h.anchor}">{h.html}</a></li>'
                  for h in page.headings if h.level == 2]
        parts.append("</ul>")
        if page.figures:
            parts.append('<div class="figures">')
            parts += [f'<a href="{f.link}"><img src="{f.file}" alt="{Path(f.file).stem}" '
                      f'loading="lazy" />{Path(f.file).name}</a>' for f in page.figures]
            parts.append("</div>")
        parts.append("</section>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def build(out: Path, names: list[str] | None = None, root: Path = ROOT) -> list[str]:
    """Build the site in ``out``; returns the warnings (raw ``$$`` per page)."""
    names = names or notebooks(root)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    shutil.copytree(mathjax_source(), tmp / MATHJAX_DIR)
    exporter = _exporter()
    pages = [render_notebook(name, root, tmp, exporter) for name in names]
    (tmp / "index.html").write_text(render_index(pages, root), encoding="utf-8")
    warnings = [f"{page}: {problem}"
                for page in ["index", *names]
                for problem in math_problems((tmp / f"{page}.html").read_text(encoding="utf-8"))]
    replace_dir(tmp, out)
    return warnings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NOTEBOOK",
                        help="notebook names (default: every notebook)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    args = parser.parse_args(argv)
    warnings = build(args.out.resolve(), args.names)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    try:
        shown = args.out.resolve().relative_to(ROOT)
    except ValueError:
        shown = args.out.resolve()
    print(f"wrote {shown}/index.html and {len(args.names or notebooks(ROOT))} notebook pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
