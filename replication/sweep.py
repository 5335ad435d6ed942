"""A sweep of one notebook's parameters: one run per point of a grid, on any executor.

    python -m replication.run 05_robot_queue --sweep K=5,10 [--sweep mu=0.5,1.0] [-p NAME VALUE]
        [--jobs N | --scheduler ADDRESS]

Each ``--sweep NAME=V1,V2,...`` gives the values of one parameter (commas inside brackets or
quotes belong to the value, so ``--sweep rates=[1, 2],[3, 4]`` has two points); the grid is the
product of the sweeps, the ``-p`` values held fixed. Every name and value is checked against the
notebook's ``parameters`` cell (``replication.params``) before any run starts.

Each point runs as its own ``python -m replication.run NN_name --output-root
build/sweep/NN_name/<point>/`` (the one runner, in a subprocess, so that points share no
environment variables or kernel), with its console output in ``<point>/run.log``; the
reference is never touched. The runs go to any ``concurrent.futures.Executor`` through
``whittle_lib.stats.run_tasks``: a process pool of ``--jobs`` workers by default, or
``client.get_executor()`` of the ``dask.distributed`` scheduler at ``--scheduler`` (its workers
must see this project's folder and have its environment). At the end one pandas table lists the
rows of ``data/results/NN_name.csv`` whose value or status differs from the reference at some
point: item, setting, quantity, the reference, then one column per point (the first 40 rows on
the console, all of them in ``build/sweep/NN_name/changes.csv``).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

from replication.project import FAILED, ROOT, USAGE, read_specs, replicates_paper, \
    run_folder_name, say, show

__all__ = ["split_values", "sweep_points", "run_point", "run_sweep", "changes_table"]


def split_values(text: str) -> list[str]:
    """The comma-separated values of ``text``; commas inside brackets or quotes stay.

    >>> split_values('0.5,1.0'), split_values('[1, 2],[3]'), split_values('"a,b",c')
    (['0.5', '1.0'], ['[1, 2]', '[3]'], ['"a,b"', 'c'])
    """
    values, current, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            values.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    values.append("".join(current).strip())
    return values


def sweep_points(name: str, sweeps: list[str], fixed: list[tuple[str, str]]) -> list[dict]:
    """The grid's points, each ``{parameter: value}`` (swept values first, then ``-p`` values),
    parsed with the notebook's own parameter types; raises ValueError naming a bad parameter
    or value before anything runs."""
    try:
        specs = {s.name: s for s in read_specs(name)}
    except ValueError as exc:
        raise ValueError(f"cannot check --sweep: {exc}") from None

    def spec(key):
        if key not in specs:
            raise ValueError(f"unknown parameter {key!r} for {name}; its parameters are "
                             f"{', '.join(specs)} (see --help)")
        return specs[key]

    axes = {}
    for item in sweeps:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise ValueError(f"--sweep takes NAME=V1,V2,..., got {item!r}")
        if key in axes:
            raise ValueError(f"parameter {key!r} is swept twice")
        values = [spec(key).parse(v) for v in split_values(text)]
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"--sweep {key} repeats a value: {text!r}")
        axes[key] = values
    held = {}
    for key, text in fixed:
        if key in axes:
            raise ValueError(f"parameter {key!r} is both swept and given with -p")
        held[key] = spec(key).parse(text)
    return [dict(zip(axes, combo), **held) for combo in itertools.product(*axes.values())]


def run_point(name: str, point: dict, folder: str, project: str, kernel: str,
              cell_timeout: int) -> int:
    """Run the notebook at ``point`` into ``folder`` with ``python -m replication.run``; its
    console output goes to ``folder/run.log``. Returns the runner's exit status. A module-level
    function, so that a process pool or a dask worker can unpickle it."""
    from replication.params import format_value

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "replication.run", name, "--kernel", kernel,
               "--cell-timeout", str(cell_timeout), "--output-root", str(folder)]
    for key, value in point.items():
        command += ["-p", key, format_value(value)]
    env = dict(os.environ, WHITTLE_PROJECT_ROOT=project)
    env.pop("WHITTLE_OUTPUT_ROOT", None)
    with open(folder / "run.log", "w", encoding="utf-8") as log:
        return subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                              cwd=project).returncode


def _cell(row) -> str:
    return f"{row.replicated} ({row.status})" if row.replicated else row.status


def changes_table(reference: Path, results: dict[str, Path | None]):
    """A DataFrame of the rows that differ from ``reference`` at some point: columns item,
    setting, quantity, reference, then one per point (``results`` maps a point's label to its
    results file, or None for a failed run). A cell reads ``value (status)``, ``-`` for a row a
    file lacks, ``failed`` for a failed run. A point's rows meet the reference's by
    ``records.paper_key`` (their settings carry the point's parameters, which the column's
    label names)."""
    import pandas as pd

    from replication.records import paper_key, read_results

    ref = {paper_key(r): r for r in read_results(reference)} if reference.exists() else {}
    runs = {label: ({paper_key(r): r for r in read_results(path)} if path is not None
                    else None)
            for label, path in results.items()}
    keys = list(ref)
    for rows in runs.values():
        keys += [k for k in (rows or {}) if k not in ref and k not in keys]

    def differs(key, rows):
        if rows is None:
            return False
        a, b = ref.get(key), rows.get(key)
        return a is None or b is None or (a.status, a.replicated) != (b.status, b.replicated)

    records = []
    for key in keys:
        if not any(differs(key, rows) for rows in runs.values()):
            continue
        record = dict(zip(("item", "setting", "quantity"), key))
        record["reference"] = _cell(ref[key]) if key in ref else "-"
        for label, rows in runs.items():
            record[label] = ("failed" if rows is None else
                             _cell(rows[key]) if key in rows else "-")
        records.append(record)
    return pd.DataFrame(records, columns=["item", "setting", "quantity", "reference",
                                          *results])


def run_sweep(name: str, points: list[dict], *, kernel: str = "whittle-lib",
              cell_timeout: int = 600, executor=None, jobs: int | None = None):
    """Run every point (:func:`sweep_points`) on ``executor`` (default: a process pool of
    ``jobs`` workers) into ``build/sweep/<name>/<point>/``; returns ``(table, statuses)``,
    the :func:`changes_table` and ``{label: exit status}``."""
    from whittle_lib.stats import run_tasks

    base = ROOT / "build" / "sweep" / name
    labels = [run_folder_name(point) for point in points]
    tasks = [partial(run_point, name, point, str(base / label), str(ROOT), kernel, cell_timeout)
             for point, label in zip(points, labels)]
    statuses = dict(zip(labels, run_tasks(tasks, executor=executor, max_workers=jobs)))
    results = {label: (base / label / "data" / "results" / f"{name}.csv"
                       if code == 0 else None) for label, code in statuses.items()}
    table = changes_table(ROOT / "data" / "results" / f"{name}.csv", results)
    return table, statuses


def main(args, limit: int = 40) -> int:
    """``python -m replication.run NN_name --sweep ...`` (the arguments parsed by
    ``replication.run``); prints the first ``limit`` rows of the table and writes all of them
    to ``build/sweep/NN_name/changes.csv``."""
    import pandas as pd

    try:
        points = sweep_points(args.name, args.sweep, args.parameter)
        if args.jobs is not None and args.jobs < 1:
            raise ValueError(f"--jobs must be a positive integer, got {args.jobs}")
    except ValueError as exc:
        say(f"bad parameter: {exc}", "nothing was run; the reference is unchanged")
        return USAGE
    client = executor = None
    if args.scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            say("--scheduler needs dask.distributed (the [dask] extra); nothing was run")
            return USAGE
        try:
            client = Client(args.scheduler, timeout="30s")
        except OSError as exc:  # includes a connection timeout
            say(f"cannot reach the dask scheduler {args.scheduler}: {exc}; nothing was run")
            return USAGE
        executor = client.get_executor()
        where = f"on the dask scheduler {args.scheduler}"
    else:
        workers = min(len(points), args.jobs or os.cpu_count() or 1)
        where = (f"on a process pool of {workers} workers" if workers > 1 else
                 "one after the other in this process")
    print(f"sweeping {args.name} over {len(points)} point(s), {where}, into "
          f"build/sweep/{args.name}/", flush=True)
    try:
        table, statuses = run_sweep(args.name, points, kernel=args.kernel,
                                    cell_timeout=args.cell_timeout, executor=executor,
                                    jobs=args.jobs)
    finally:
        if client is not None:
            client.close()
    base = ROOT / "build" / "sweep" / args.name
    for label, code in statuses.items():
        moved = int((table[label] != table["reference"]).sum()) if label in table else 0
        state = f"ok, {moved} rows differ" if code == 0 else f"FAILED (exit {code})"
        print(f"  {label}: {state}, log {show(base / label / 'run.log')}", flush=True)
    if replicates_paper(args.name):
        if table.empty:
            print("no results row differs from the reference at any point", flush=True)
        else:
            table.to_csv(base / "changes.csv", index=False)
            print(f"{len(table)} results rows differ from data/results/{args.name}.csv "
                  f"at some point (value (status); all in {show(base / 'changes.csv')}):",
                  flush=True)
            with pd.option_context("display.width", 250):
                print(table.head(limit).to_string(index=False, max_colwidth=40), flush=True)
            if len(table) > limit:
                print(f"... {len(table) - limit} more rows in {show(base / 'changes.csv')}",
                      flush=True)
    return 0 if all(code == 0 for code in statuses.values()) else FAILED
