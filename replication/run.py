"""Run one notebook with papermill so that a failed run overwrites nothing.

    python -m replication.run 05_robot_queue [--kernel K] [--cell-timeout S] [-p NAME VALUE]...
    python -m replication.run 05_robot_queue --help     # lists the notebook's parameters
    python -m replication.run 05_robot_queue --sweep NAME=V1,V2 [--jobs N | --scheduler ADDR]

The notebook runs with ``notebooks/`` as working directory into a staging folder; the
environment variable ``WHITTLE_OUTPUT_ROOT`` points the library's writers
(``replication.records.write_results``, ``replication.figures.save_figure``) to the same
folder. Only when every cell has run and the results file exists (for a notebook that
replicates a paper, i.e. has ``data/expected/<nb>.csv``; a notebook without one, such as the
primer ``00_whittle_primer``, must write none) are the notebook (stripped of volatile
metadata), its figures folder and its results file moved into place:

- a run at the defaults (no ``-p``, or every value equal to its default) replaces the reference:
  ``notebooks/<nb>.ipynb``, ``figures/<nb>/`` and ``data/results/<nb>.csv``, staged in
  ``build/stage/<nb>/``;
- a run with other parameters writes its own folder ``build/runs/<nb>/<name>=<value>,.../``
  (the same three things, the notebook with its ``injected-parameters`` cell) and prints what
  it changed against the reference (``replication.rerun``): first the computed values that
  moved (old -> new), then the verdicts that changed, then how many rows carry the run's
  parameters in their setting (``replication.records``, "Rows computed under other
  parameters"); the kernel learns those parameters from ``WHITTLE_RUN_PARAMETERS``;
- ``--output-root DIR`` writes under ``DIR`` instead (``replication.check``).

Parameters are checked against the notebook's ``parameters`` cell (papermill's grammar, read by
``replication.params``) before a kernel starts: an unknown name, a value that is not a Python
literal or a value out of range stops the run with exit status 2. As cells run, their
number and section heading are printed. On failure the staging folder keeps the partial run
(the notebook with the cells executed so far) and the exit status is 1; on Ctrl-C it is 130.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

from replication.project import (FAILED, INTERRUPTED, ROOT, USAGE, read_specs, replace_dir,
                                 replicates_paper, run_folder_name, say, show)

# What the stored notebook keeps of its metadata: the kernel, the language and papermill's run
# time (the status page and the README show it); cells keep their tags.
KEPT_NOTEBOOK_METADATA = {"kernelspec", "language_info", ("papermill", "duration")}
INJECTED_TAG = "injected-parameters"


def strip_volatile(nb) -> None:
    """Drop papermill's run record but its duration, the cells' timings and widget state, and
    merge adjacent stream outputs (how the kernel chunks a stream depends on when it flushes),
    in place: nbconvert's ``CoalesceStreamsPreprocessor`` and ``ClearMetadataPreprocessor``."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CoalesceStreamsPreprocessor

    CoalesceStreamsPreprocessor().preprocess(nb, {})
    ClearMetadataPreprocessor(preserve_nb_metadata_mask=KEPT_NOTEBOOK_METADATA,
                              preserve_cell_metadata_mask={"tags"}).preprocess(nb, {})
    for cell in nb.cells:
        # ClearMetadataPreprocessor leaves Markdown cells alone, where papermill writes too;
        # and papermill gives every cell a tags list, kept only if it holds a tag
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags" and v}


def drop_injected_parameters(nb) -> None:
    """Remove papermill's ``injected-parameters`` cells in place: a notebook that kept one
    would run its next default run with the old values."""
    nb.cells = [c for c in nb.cells if INJECTED_TAG not in c.metadata.get("tags", [])]


# ---- parameters ------------------------------------------------------------------------------

def parameters_help(name: str) -> str:
    """The notebook's parameters, one block each: name, rule, default, then the meaning."""
    try:
        specs = read_specs(name)
    except (OSError, ValueError) as exc:
        return f"parameters of {name}: cannot be listed ({exc})"
    width = max(len(s.name) for s in specs)
    out = [f"parameters of {name} (-p NAME VALUE; VALUE a Python literal, a str may go "
           f"unquoted, a list as [1, 2]):"]
    for spec in specs:
        out += textwrap.wrap(spec.describe(), width=100, initial_indent=
                             f"  {spec.name.ljust(width)}  ", subsequent_indent=" " * (width + 4))
    return "\n".join(out)


def check_parameters(name: str, given: list[tuple[str, str]]) -> dict:
    """The ``-p`` values checked against the notebook's specs, those equal to their default
    dropped, in the order of the parameters cell; raises ValueError naming the parameter."""
    if not given:
        return {}
    try:
        specs = {s.name: s for s in read_specs(name)}
    except ValueError as exc:
        raise ValueError(f"cannot check -p: {exc}") from None
    values = {}
    for key, text in given:
        if key not in specs:
            raise ValueError(f"unknown parameter {key!r} for {name}; its parameters are "
                             f"{', '.join(specs)} (see --help)")
        values[key] = specs[key].parse(text)
    return {k: values[k] for k in specs if k in values and values[k] != specs[k].default}


# ---- comparison with the reference -----------------------------------------------------------

def report_changes(name: str, target: Path, parameters: dict, limit: int = 40) -> None:
    """Print what this run changed against the reference (``replication.rerun``): the model's
    outputs that moved, then the verdicts, then the labels; at most ``limit`` lines, all of
    them, and every row's change, in ``<target>/changes.txt``."""
    from replication import rerun
    from replication.records import read_results, result_changes, status_counts

    reference = ROOT / "data" / "results" / f"{name}.csv"
    fresh = target / "data" / "results" / f"{name}.csv"
    if not reference.exists():
        say(f"no reference data/results/{name}.csv to compare with")
        return
    old, new = read_results(reference), read_results(fresh)
    changes = rerun.compare(old, new, parameters)

    def counts(rows):
        return ", ".join(f"{v} {k}" for k, v in status_counts(rows).items() if v)

    head = [f"against the reference data/results/{name}.csv (the defaults):",
            f"  reference: {counts(old)}", f"  this run:  {counts(new)}", ""]
    rows = result_changes(old, new)
    full = head + rerun.describe(changes, parameters, per_group=10 ** 9) + [
        "", f"Every row that changed status or value ({len(rows)}):", *rows]
    (target / "changes.txt").write_text("\n".join(full) + "\n", encoding="utf-8")
    shown = rerun.describe(changes, parameters, limit=limit - len(head) - 1)
    print("\n".join(head + shown + [f"(all of it, and every changed row: "
                                     f"{show(target / 'changes.txt')})"]), flush=True)


# ---- running ---------------------------------------------------------------------------------

def _jsonable(value):
    """A parameter's value for JSON: a tuple (a list parameter) as a list."""
    return list(value) if isinstance(value, tuple) else value


def last_heading(markdown: str, current: str = "") -> str:
    """The text of the last Markdown heading in ``markdown``, or ``current`` if it has none."""
    found = [line.lstrip("#").strip() for line in markdown.splitlines()
             if re.match(r"#{1,6}\s", line)]
    return found[-1] if found else current


class Progress:
    """papermill/nbclient hook: prints ``name [i/n] heading`` as each code cell starts, where the
    heading is the last Markdown heading seen before the cell (the name tells the lines of
    notebooks run side by side apart, as ``make all`` does)."""

    def __init__(self, total: int, stream=None, name: str = ""):
        self.total = total
        self.prefix = f"{name} " if name else ""
        self.heading = ""
        self.stream = stream or sys.stdout

    def __call__(self, cell, cell_index, **_):
        if cell.cell_type == "markdown":
            self.heading = last_heading(cell.source, self.heading)
        elif cell.cell_type == "code" and cell.source.strip():
            print(f"{self.prefix}[{cell_index + 1}/{self.total}] {self.heading}", file=self.stream,
                  flush=True)


def _kernel_config():
    """Kernel-manager settings: CurveZMQ encryption of the kernel's sockets where pyzmq and the
    kernelspec support it. Without it ipykernel warns at every start that the kernel "is
    running over TCP without encryption"; this is the remedy the warning names, and it leaves
    every other message of the kernel as it is."""
    import zmq
    from traitlets.config import Config

    return Config({"KernelManager": {"transport_encryption": "auto"}}) if zmq.has("curve") \
        else Config()


def run(name: str, kernel: str, cell_timeout: int, parameters: dict,
        output_root: Path | None = None) -> int:
    """Run one notebook; its outputs replace the reference only at the default parameters.

    ``parameters`` are checked values (:func:`check_parameters`) that differ from the defaults.
    """
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from replication.params import format_value
    from replication.records import RUN_PARAMETERS_ENV

    source = ROOT / "notebooks" / f"{name}.ipynb"
    if output_root is not None:
        target = Path(output_root).resolve()
    elif parameters:
        target = ROOT / "build" / "runs" / name / run_folder_name(parameters)
    else:
        target = ROOT
    stage = (ROOT / "build" if target == ROOT else target) / "stage" / name
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "notebooks").mkdir(parents=True)
    staged_nb = stage / "notebooks" / f"{name}.ipynb"
    os.environ["WHITTLE_OUTPUT_ROOT"] = str(stage)
    os.environ["WHITTLE_PROJECT_ROOT"] = str(ROOT)
    # The kernel's Comparison learns the run's parameters from here when the notebook does not
    # hand it its own (replication.records: every row under them says so in its setting).
    os.environ.pop(RUN_PARAMETERS_ENV, None)
    if parameters:
        defaults = {s.name: s.default for s in read_specs(name)}
        os.environ[RUN_PARAMETERS_ENV] = json.dumps(
            {"values": {k: _jsonable(v) for k, v in parameters.items()},
             "defaults": {k: _jsonable(defaults[k]) for k in parameters}})
    # Figures reach the notebook through replication.figures.save_figure, which displays the
    # very PNG it saved; the Agg backend keeps the kernel from drawing a second, differently
    # styled copy (the inline backend's own rcParams would change the saved bytes between
    # runners).
    os.environ["MPLBACKEND"] = "agg"

    nb = nbformat.read(source, as_version=4)
    drop_injected_parameters(nb)
    progress = Progress(len(nb.cells) + bool(parameters), name=name)
    what = ", ".join(f"{k}={format_value(v)}" for k, v in parameters.items()) or "defaults"
    print(f"running {source.relative_to(ROOT)} ({what}; kernel {kernel}, cell limit "
          f"{cell_timeout} s) into {show(stage)}", flush=True)
    # papermill renders lists, not tuples, as literals
    injected = {k: list(v) if isinstance(v, tuple) else v for k, v in parameters.items()}
    try:
        papermill.execute_notebook(
            nb, str(staged_nb), parameters=injected or None, kernel_name=kernel,
            cwd=str(ROOT / "notebooks"), execution_timeout=cell_timeout, progress_bar=False,
            log_output=False, request_save_on_cell_execute=True,
            on_cell_start=progress, config=_kernel_config(),
            # On Ctrl-C nbclient interrupts the kernel and then shuts it down; a graceful
            # shutdown lets the interrupted kernel print a traceback about its closed sockets.
            # The kernel holds nothing to save once the notebook is written.
            shutdown_kernel="immediate")
    except KeyboardInterrupt:
        say(f"interrupted: the reference is unchanged; the partial run is in "
            f"{show(staged_nb)}")
        return INTERRUPTED
    except Exception as exc:  # papermill raises its own error types, and kernel errors
        text = str(exc).strip() if isinstance(exc, PapermillExecutionError) else repr(exc)
        say(f"FAILED: {name}: {text}",
            f"the reference is unchanged; the partial run is in {show(staged_nb)}")
        return FAILED
    results = stage / "data" / "results" / f"{name}.csv"
    if replicates_paper(name) and not results.exists():
        say(f"FAILED: {name} ran but wrote no data/results/{name}.csv")
        return FAILED
    if not replicates_paper(name) and results.exists():
        say(f"FAILED: {name} has no data/expected/{name}.csv but wrote "
            f"data/results/{name}.csv")
        return FAILED
    nb = nbformat.read(staged_nb, as_version=4)
    strip_volatile(nb)
    nbformat.write(nb, staged_nb)
    # Everything is complete: move into place, results and figures first, notebook last.
    if results.exists():
        (target / "data" / "results").mkdir(parents=True, exist_ok=True)
        os.replace(results, target / "data" / "results" / f"{name}.csv")
    figures = stage / "figures" / name
    if figures.exists():
        replace_dir(figures, target / "figures" / name)
    (target / "notebooks").mkdir(parents=True, exist_ok=True)
    os.replace(staged_nb, target / "notebooks" / f"{name}.ipynb")
    shutil.rmtree(stage)
    if target != ROOT and not any(stage.parent.iterdir()):
        stage.parent.rmdir()
    where = "" if target == ROOT else f"{show(target)}/"
    written = f", {where}data/results/{name}.csv" if replicates_paper(name) else ""
    print(f"ok: {where}notebooks/{name}.ipynb{written}, {where}figures/{name}/", flush=True)
    if target != ROOT and replicates_paper(name):
        report_changes(name, target, parameters)
    elif target != ROOT and parameters:
        # no results file (the primer): what moved is in the outputs its checked cells show
        from replication import rerun
        print("\n".join(rerun.output_changes(source, target / "notebooks" / f"{name}.ipynb",
                                             parameters)), flush=True)
    return 0


def _parser(name: str | None = None, add_help: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], add_help=add_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=parameters_help(name) if name else
        "give a notebook name before --help to list its parameters")
    parser.add_argument("name", nargs="?" if not add_help else None,
                        help="notebook name without .ipynb, e.g. 05_robot_queue")
    parser.add_argument("--kernel", default="whittle-lib")
    parser.add_argument("--cell-timeout", type=int, default=600)
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"),
                        help="a parameter of the notebook (listed below), checked before "
                             "the run; a run with values other than the defaults writes "
                             "build/runs/<nb>/<name>=<value>,.../ and leaves the reference "
                             "alone")
    parser.add_argument("--output-root", type=Path, default=None,
                        help="write the notebook, figures and results under this folder "
                             "instead of replacing the reference")
    sweep = parser.add_argument_group("sweep (replication.sweep)")
    sweep.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                       help="run once per point of the product of the sweeps, each into "
                            "build/sweep/<nb>/<point>/, and print the results rows that differ "
                            "from the reference")
    sweep.add_argument("--executor", choices=["process"], default="process",
                       help="run the points in a process pool of --jobs workers (default)")
    sweep.add_argument("--jobs", type=int, default=None,
                       help="workers of the process pool (default: the number of CPUs)")
    sweep.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run the points on this dask.distributed scheduler instead")
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The name comes first so that --help can list that notebook's parameters.
    known, _ = _parser(add_help=False).parse_known_args(argv)
    name = known.name
    if name and not (ROOT / "notebooks" / f"{name}.ipynb").exists():
        say(f"no notebook notebooks/{name}.ipynb")
        return USAGE
    args = _parser(name).parse_args(argv)
    if args.sweep:
        if args.output_root is not None:
            say("--output-root and --sweep exclude each other (a sweep writes build/sweep/)")
            return USAGE
        from replication import sweep
        return sweep.main(args)
    try:
        parameters = check_parameters(args.name, args.parameter)
    except ValueError as exc:
        say(f"bad parameter: {exc}", "nothing was run; the reference is unchanged")
        return USAGE
    return run(args.name, args.kernel, args.cell_timeout, parameters, args.output_root)


if __name__ == "__main__":
    sys.exit(main())
