"""Run one notebook with papermill so that a failed run overwrites nothing.

    python tools/run_notebook.py 05_robot_queue [--kernel NAME] [--cell-timeout S] [-p name value]...

The notebook runs with ``notebooks/`` as working directory into ``build/stage/<name>/``; the
environment variable ``WHITTLE_OUTPUT_ROOT`` points the library's writers
(``whittle_lib.replication.write_results``, ``whittle_lib.plotting.save_figure``) to the same
staging folder. Only when every cell has run and the results file exists are the notebook
(stripped of volatile metadata), its figures folder and its results file moved into place. On
failure the staging folder is kept for inspection and the exit status is 1.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Metadata that changes from run to run without the notebook changing.
VOLATILE_NOTEBOOK_METADATA = ("papermill", "widgets")
VOLATILE_CELL_METADATA = ("papermill", "execution", "ExecuteTime", "collapsed", "scrolled")


def coalesce_streams(outputs: list) -> list:
    """Merge adjacent stdout (or stderr) outputs: how the kernel chunks a stream depends on
    when it flushes, which would make the stored notebook change from run to run."""
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(out["text"])
        else:
            merged.append(out)
    return merged


def strip_volatile(nb) -> None:
    """Remove papermill's run record, timings and widget state, and coalesce streams, in place."""
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        # papermill adds an empty tags list to every cell; keep real tags only
        if cell.metadata.get("tags") == []:
            del cell.metadata["tags"]


def _literal(text: str):
    """A parameter value as a Python literal; tuples become lists (papermill renders only
    lists, it would pass a tuple as its string)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return list(value) if isinstance(value, tuple) else value


def _replace_dir(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    old = dst.with_name(dst.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if dst.exists():
        os.replace(dst, old)
    os.replace(src, dst)
    if old.exists():
        shutil.rmtree(old)


def _show(path: Path) -> str:
    """A path relative to the project if it lies inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def run(name: str, kernel: str, cell_timeout: int, parameters: dict,
        output_root: Path | None = None) -> int:
    """Run one notebook; its outputs replace the reference, or go under ``output_root``."""
    import nbformat
    import papermill

    source = ROOT / "notebooks" / f"{name}.ipynb"
    if not source.exists():
        print(f"no notebook {source.relative_to(ROOT)}", file=sys.stderr)
        return 2
    target = ROOT if output_root is None else Path(output_root).resolve()
    stage = (ROOT / "build" if output_root is None else target) / "stage" / name
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "notebooks").mkdir(parents=True)
    staged_nb = stage / "notebooks" / f"{name}.ipynb"
    os.environ["WHITTLE_OUTPUT_ROOT"] = str(stage)
    os.environ["WHITTLE_PROJECT_ROOT"] = str(ROOT)
    os.environ.setdefault("MPLBACKEND", "agg")
    print(f"running {source.relative_to(ROOT)} (kernel {kernel}, cell limit {cell_timeout} s)")
    try:
        papermill.execute_notebook(
            str(source), str(staged_nb), parameters=parameters or None, kernel_name=kernel,
            cwd=str(ROOT / "notebooks"), execution_timeout=cell_timeout, progress_bar=False,
            log_output=False, request_save_on_cell_execute=False)
    except Exception as exc:  # papermill raises its own error types, and kernel errors
        print(f"FAILED: {name}: {exc}", file=sys.stderr)
        print(f"the stored notebook, figures and results are unchanged; the partial run is in "
              f"{_show(stage)}", file=sys.stderr)
        return 1
    results = stage / "data" / "results" / f"{name}.csv"
    if not results.exists():
        print(f"FAILED: {name} ran but wrote no data/results/{name}.csv", file=sys.stderr)
        return 1
    nb = nbformat.read(staged_nb, as_version=4)
    strip_volatile(nb)
    nbformat.write(nb, staged_nb)
    # Everything is complete: move into place, results and figures first, notebook last.
    (target / "data" / "results").mkdir(parents=True, exist_ok=True)
    os.replace(results, target / "data" / "results" / f"{name}.csv")
    figures = stage / "figures" / name
    if figures.exists():
        _replace_dir(figures, target / "figures" / name)
    (target / "notebooks").mkdir(parents=True, exist_ok=True)
    os.replace(staged_nb, target / "notebooks" / f"{name}.ipynb")
    shutil.rmtree(stage)
    where = "" if output_root is None else f"{target}/"
    print(f"ok: {where}notebooks/{name}.ipynb, {where}data/results/{name}.csv, "
          f"{where}figures/{name}/")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="notebook name without .ipynb, e.g. 05_robot_queue")
    parser.add_argument("--kernel", default="whittle-lib")
    parser.add_argument("--cell-timeout", type=int, default=600)
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"),
                        help="papermill parameter (VALUE read as a Python literal)")
    parser.add_argument("--output-root", type=Path, default=None,
                        help="write the notebook, figures and results under this folder "
                             "instead of replacing the reference")
    args = parser.parse_args(argv)
    params = {k: _literal(v) for k, v in args.parameter}
    return run(args.name, args.kernel, args.cell_timeout, params, args.output_root)


if __name__ == "__main__":
    sys.exit(main())
