"""Sphinx configuration of the site (make html; replication/site.py assembles the sources).

The notebooks are rendered from their stored outputs by MyST-NB, never executed. Equations are
typeset by MathJax 2.7 from the Python package jupyter-server-mathjax, copied into the site, so
the pages read the same without network. Any warning fails the build (sphinx-build -W).
"""

import re
import shutil
import sys
from pathlib import Path

import jupyter_server_mathjax

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))        # whittle_lib for autodoc, from this checkout

project = "Whittle index policies: five papers, replicated"
author = "the whittle_lib authors"
copyright = "the whittle_lib authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",          # the highlighted source of every documented name
    "sphinx.ext.mathjax",
]
exclude_patterns = ["whittle_lib/**", "replication/**", "**.ipynb_checkpoints"]

# MyST-NB: the stored outputs as they are; $...$, $$...$$ and amsmath environments as math.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# MathJax 2.7 as shipped by jupyter-server-mathjax (copied into _static/mathjax/ below). MyST
# marks its math with the class "math" and wraps each page in "tex2jax_ignore": MathJax 2 is
# told to typeset those elements (and notebook outputs) only. The package ships the STIX-Web
# fonts, not MathJax's default TeX fonts.
MATHJAX_SOURCE = Path(jupyter_server_mathjax.__file__).parent / "static"
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
mathjax2_config = {
    "tex2jax": {"processClass": "math|output_area", "processEscapes": True,
                "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
    "HTML-CSS": {"webFont": "STIX-Web", "availableFonts": [], "preferredFont": None,
                 "imageFont": None},
    "messageStyle": "none",
}
myst_update_mathjax = False

autodoc_default_options = {"members": True}
autodoc_typehints = "description"

html_theme = "alabaster"
html_title = project
# Code cells hold lines of up to 100 characters: a page wide enough, and code a little smaller
# than the prose, show them whole at 1280 pixels instead of cutting them at the right edge.
html_theme_options = {"page_width": "min(1500px, 98%)", "sidebar_width": "220px",
                      "body_max_width": "none", "fixed_sidebar": True,
                      "code_font_size": "0.78em"}
html_static_path = []
html_css_files = []


def _copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        shutil.copytree(MATHJAX_SOURCE, Path(app.outdir) / "_static" / "mathjax",
                        dirs_exist_ok=True)




def _summary_only(app, what, name, obj, options, lines):
    """The API page shows each name's first paragraph; the full numpydoc docstring, with its
    references (whose labels repeat across modules), is read beside the code ([source])."""
    if "" in lines:
        del lines[lines.index(""):]
    lines[:] = [re.sub(r"\s*\[[A-Za-z0-9]+\]_", "", line) for line in lines]


def _source_links(app, doctree, docname):
    """A Markdown link from a page to a library source file (``../whittle_lib/mdp.py``, which
    MyST makes a download) opens the highlighted source of viewcode instead."""
    from docutils import nodes
    from sphinx import addnodes

    for node in list(doctree.findall(addnodes.download_reference)):
        found = re.search(r"(?:^|/)(whittle_lib/[\w/]+)\.py$", node.get("reftarget", ""))
        if found and app.builder.format == "html":
            module = found.group(1).removesuffix("/__init__")
            uri = app.builder.get_relative_uri(docname, "_modules/" + module)
            node.replace_self(nodes.reference("", "", *node.children, refuri=uri,
                                              internal=True))


def _figure_alt_text(app, doctree, docname):
    """An image output has no description of its own (MyST-NB writes its file name): it gets
    the title of the section it is in, as a reader without the image would need."""
    from docutils import nodes

    for image in doctree.findall(nodes.image):
        if image.get("alt") and not image["alt"].endswith(image.get("uri", "\0")):
            continue
        section = image.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        title = section.next_node(nodes.title).astext() if section is not None else ""
        image["alt"] = f"Figure of the section: {title}" if title else "Figure"


def setup(app):
    app.connect("build-finished", _copy_mathjax)
    app.connect("autodoc-process-docstring", _summary_only)
    app.connect("doctree-resolved", _source_links)
    app.connect("doctree-resolved", _figure_alt_text)
