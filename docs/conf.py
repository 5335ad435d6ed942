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

# sphinx-book-theme (the theme of Jupyter Book and of QuantEcon's lectures, on the PyData theme):
# the notebooks in the left panel, the page's own headings ("Contents") in the right one, so
# that a notebook's Part II, the record, is one click away from its lesson; each page offers its
# .ipynb for download. No network: the theme's fonts and icons ship in the package.
html_theme = "sphinx_book_theme"
html_title = project
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,                 # sections and their subsections in "Contents"
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
}
# docs/_static/whittle.css: wide tables scroll inside their box instead of running off the page.
html_static_path = ["_static"]
html_css_files = ["whittle.css"]
# the highlighted source of every module numbers its lines
viewcode_line_numbers = True


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


SOURCE_PACKAGES = ("whittle_lib", "replication")


def _source_links(app, doctree, docname):
    """A Markdown link from a page to a source file of the library or the apparatus
    (``../whittle_lib/mdp.py``, ``../replication/papers/robots_1999.py``, which MyST makes a
    download) opens the module's highlighted source page instead (``_every_module``)."""
    from docutils import nodes
    from sphinx import addnodes

    packages = "|".join(SOURCE_PACKAGES)
    for node in list(doctree.findall(addnodes.download_reference)):
        found = re.search(rf"(?:^|/)((?:{packages})/[\w/]+)\.py$", node.get("reftarget", ""))
        if found and app.builder.format == "html":
            module = found.group(1).removesuffix("/__init__")
            uri = app.builder.get_relative_uri(docname, "_modules/" + module)
            node.replace_self(nodes.reference("", "", *node.children, refuri=uri,
                                              internal=True))


def _modules(package):
    """Every module of a package of this checkout, private ones and ``__init__`` included."""
    import pkgutil

    module = __import__(package)
    return [package] + [info.name for info in pkgutil.walk_packages(module.__path__,
                                                                    prefix=package + ".")]


def _every_module(app):
    """viewcode makes a source page for the modules whose objects a page documents (the API
    page's public ones); a notebook links to any module it calls, private (``_portable``),
    a package's ``__init__`` or the apparatus (``replication.papers.robots_1999``). Before
    viewcode writes its pages, every module of both packages is added to its list, so that
    each gets its page (``_modules/<dotted/path>.html``) and a line in ``_modules/index``."""
    from sphinx.pycode import ModuleAnalyzer

    found = getattr(app.env, "_viewcode_modules", None)
    if found is None:
        found = app.env._viewcode_modules = {}
    for package in SOURCE_PACKAGES:
        for name in _modules(package):
            if found.get(name):
                continue
            analyzer = ModuleAnalyzer.for_module(name)
            analyzer.find_tags()
            found[name] = (analyzer.code, analyzer.tags, {}, name)
    return []


def _scrolling_tables(app, doctree, docname):
    """Each Markdown table in a box of its own (class ``whittle-scroll``, docs/_static/
    whittle.css) that scrolls sideways when the table is wider than the text column, as the
    report's tables of notes and the status page's can be."""
    from docutils import nodes

    for table in list(doctree.findall(nodes.table)):
        if "whittle-scroll" not in table.parent.get("classes", []):
            box = nodes.container(classes=["whittle-scroll"])
            table.replace_self(box)
            box += table


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
    app.connect("html-collect-pages", _every_module, priority=400)   # before viewcode's (500)
    app.connect("autodoc-process-docstring", _summary_only)
    app.connect("doctree-resolved", _source_links)
    app.connect("doctree-resolved", _figure_alt_text)
    app.connect("doctree-resolved", _scrolling_tables)
