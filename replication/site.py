"""Build the site: the stored notebooks, a status page and the library's API, with Sphinx.

    python -m replication.site [--out DIR]          (make html: DIR = build/html)

Sphinx with MyST-NB renders the notebooks as stored (``nb_execution_mode = "off"``: nothing is
run) with the configuration in ``docs/conf.py``. The source folder is assembled in
``build/site-src/`` at each build, never committed: ``docs/*.md``, the notebooks, the library's
and the apparatus' sources (a Markdown link from a notebook to ``../whittle_lib/mdp.py`` or
``../replication/papers/robots_1999.py`` opens that module's highlighted source page, which
the site makes for every module of both packages), ``REPLICATION.md`` as ``report.md``, the
index page with its reading order (:func:`index_page`: ``docs/index.md``, whose table of
notebooks gets a column with the time each takes to read, :func:`reading_time`), and two
generated pages:

- ``status.md``: per notebook its run time (``metadata.papermill.duration``, which the runner
  keeps in the stored notebook) and the count of its rows per status, from
  ``data/results/*.csv`` by :func:`replication.records.status_counts` (the counting of
  ``make report``), then the legend of the statuses from the README;
- ``api.md``: one ``automodule`` per public module of ``whittle_lib``, with links to the
  highlighted source (``sphinx.ext.viewcode``).

Sphinx runs with ``-W --keep-going``: any warning fails the build, after listing them all.
The site is written beside ``DIR`` and moved into place when complete.
"""

from __future__ import annotations

import argparse
import json
import pkgutil
import shutil
import sys
from pathlib import Path

from replication import records
from replication.project import replace_dir

ROOT = Path(__file__).resolve().parents[1]
STATUS_TABLE_END = "<!-- status-table:end -->"

__all__ = ["api_page", "assemble", "build", "index_page", "reading_time", "run_time",
           "run_time_table", "status_page"]

READING_BEGIN, READING_END = "<!-- reading-order:begin -->", "<!-- reading-order:end -->"
#: How fast a reader reads prose and code (words a minute), and how long a figure holds them.
WORDS_PER_MINUTE, SECONDS_PER_FIGURE = 200, 20


def _notebooks(root: Path) -> list[Path]:
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def run_time(notebook: Path) -> float | None:
    """Seconds papermill took for the stored run of a notebook, or ``None`` if not recorded."""
    meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    duration = meta.get("papermill", {}).get("duration")
    return float(duration) if duration is not None else None


def _minutes(seconds: float | None) -> str:
    """``"2 min 36 s"``; ``"not recorded"`` for a notebook stored before run times were kept.

    >>> _minutes(156.25), _minutes(42.0), _minutes(None)
    ('2 min 36 s', '42 s', 'not recorded')
    """
    if seconds is None:
        return "not recorded"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def reading_time(notebook: Path) -> tuple[int, int, int]:
    """``(minutes, words, figures)`` to read a notebook's lesson (its Part I,
    :func:`replication.lesson.part_one`; all of it if it has no Part II): its words of prose
    (:func:`replication.lesson.words`) and of code at :data:`WORDS_PER_MINUTE`, plus
    :data:`SECONDS_PER_FIGURE` per figure, rounded up to a whole minute."""
    import math
    import re

    from replication import lesson

    cells = lesson.part_one(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    source = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
              for c in cells]
    words = sum(lesson.words(text) if cell["cell_type"] == "markdown" else
                len(re.findall(r"[A-Za-z0-9_]+", text)) for cell, text in zip(cells, source))
    figures = sum("image/png" in out.get("data", {}) or "image/svg+xml" in out.get("data", {})
                  for cell in cells for out in cell.get("outputs", []))
    seconds = 60 * words / WORDS_PER_MINUTE + SECONDS_PER_FIGURE * figures
    return math.ceil(seconds / 60), words, figures


def index_page(root: Path = ROOT) -> str:
    """``docs/index.md`` with the time to read each notebook added to its reading order.

    The table between ``<!-- reading-order:begin -->`` and ``<!-- reading-order:end -->``
    names one notebook a row (a link ``notebooks/NN_name.ipynb``); each row gets a last
    column, the time :func:`reading_time` computes.

    Raises
    ------
    ValueError
        If a notebook of ``notebooks/`` is not in the table, or the table names one that is
        not there: the reading order lists every notebook.
    """
    import re

    text = (root / "docs" / "index.md").read_text(encoding="utf-8")
    if READING_BEGIN not in text:
        return text
    head, rest = text.split(READING_BEGIN, 1)
    table, tail = rest.split(READING_END, 1)
    lines, listed = [], []
    for line in table.strip().splitlines():
        found = re.search(r"notebooks/(\d\d_\w+)\.ipynb", line)
        if found:
            listed.append(found.group(1))
            minutes, words, figures = reading_time(root / "notebooks" / f"{found.group(1)}.ipynb")
            line += (f" {minutes} min ({words:,} words, {figures} "
                     f"figure{'s' if figures != 1 else ''}) |")
        elif re.match(r"\|\s*-", line):
            line += "---:|"
        elif line.startswith("|"):
            line += " time to read |"
        lines.append(line)
    stored = [nb.stem for nb in _notebooks(root)]
    if sorted(listed) != stored:
        raise ValueError(f"docs/index.md: the reading order lists {listed}, notebooks/ holds "
                         f"{stored}: every notebook once")
    return f"{head}{READING_BEGIN}\n" + "\n".join(lines) + f"\n{READING_END}{tail}"


def run_time_table(root: Path = ROOT) -> str:
    """Markdown table of each notebook's stored run time (the README's, by ``make report``)."""
    lines = ["| notebook | run time |", "|---|---:|"]
    lines += [f"| `{nb.stem}` | {_minutes(run_time(nb))} |" for nb in _notebooks(root)]
    return "\n".join(lines)


def status_page(root: Path = ROOT) -> str:
    """The status page (MyST Markdown): run time and rows per status for each notebook."""
    statuses = [s.value for s in records.Status]
    lines = ["# Run times and results by status", "",
             "Each notebook's last stored run (`make all`, two notebooks side by side on two "
             "cores, or `make NN_name` alone) and the rows of its results file "
             "`data/results/NN_name.csv` by status, recomputed when the site is built "
             "(`make report` writes the same counts into the README and into `REPLICATION.md`, "
             "which lists every deviation and claim with its diagnosis: "
             "[the report](report.md)).", "",
             "| notebook | run time | " + " | ".join(statuses) + " |",
             "|---|---:|" + "---:|" * len(statuses)]
    for nb in _notebooks(root):
        results = root / "data" / "results" / f"{nb.stem}.csv"
        counts = records.status_counts(records.read_results(results)) if results.exists() \
            else dict.fromkeys(statuses, 0)
        lines.append(f"| [{nb.stem}](notebooks/{nb.stem}.ipynb) | {_minutes(run_time(nb))} | "
                     + " | ".join(str(counts[s]) for s in statuses) + " |")
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if STATUS_TABLE_END in text:
        lines += ["", text.split(STATUS_TABLE_END, 1)[1].split("\n#", 1)[0].strip()]
    return "\n".join(lines) + "\n"


def public_modules(package: str = "whittle_lib") -> list[str]:
    """The importable modules of a package whose names have no part starting with ``_``."""
    module = __import__(package)
    found = [package]
    for info in pkgutil.walk_packages(module.__path__, prefix=package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


def api_page(package: str = "whittle_lib") -> str:
    """The API page: each public module documented where it defines its names.

    A package's ``__init__`` re-exports names defined in its modules; ``:ignore-module-all:``
    documents a module's own definitions only, so each object is described once, beside a
    link to its source.
    """
    lines = ["# The library: API", "",
             f"Every public module of `{package}`, from its docstrings (numpydoc); "
             "`[source]` beside each name opens its highlighted source.", ""]
    for name in public_modules(package):
        lines += [f"## `{name}`", "", f"```{{eval-rst}}", f".. automodule:: {name}",
                  "   :members:", "   :ignore-module-all:", "```", ""]
    return "\n".join(lines)


def assemble(src: Path, root: Path = ROOT) -> None:
    """Write the site's source folder ``src``: pages, notebooks, sources, generated pages."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for page in sorted((root / "docs").glob("*.md")):
        shutil.copy2(page, src / page.name)
    (src / "index.md").write_text(index_page(root), encoding="utf-8")
    (src / "notebooks").mkdir()
    for nb in _notebooks(root):
        shutil.copy2(nb, src / "notebooks" / nb.name)
    for package in ("whittle_lib", "replication"):
        if (root / package).is_dir():
            shutil.copytree(root / package, src / package,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (src / "status.md").write_text(status_page(root), encoding="utf-8")
    if (root / "REPLICATION.md").exists():
        shutil.copy2(root / "REPLICATION.md", src / "report.md")
    (src / "api.md").write_text(api_page(), encoding="utf-8")


def build(out: Path, root: Path = ROOT, work: Path | None = None) -> int:
    """Build the site into ``out`` with ``sphinx-build -W --keep-going``; the exit status.

    ``work`` holds the assembled sources and Sphinx's cache (default ``build/``)."""
    from sphinx.cmd.build import build_main

    work = root / "build" if work is None else Path(work)
    src = work / "site-src"
    assemble(src, root)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    status = build_main(["-W", "--keep-going", "-q", "-b", "html", "-c", str(root / "docs"),
                         "-d", str(work / "site-doctrees"), str(src), str(tmp)])
    if status == 0:
        replace_dir(tmp, out)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    parser.add_argument("--work", type=Path, default=ROOT / "build",
                        help="where the assembled sources and Sphinx's cache go")
    args = parser.parse_args(argv)
    status = build(args.out.resolve(), work=args.work.resolve())
    if status == 0:
        print(f"wrote {args.out}/index.html")
    return status


if __name__ == "__main__":
    sys.exit(main())
