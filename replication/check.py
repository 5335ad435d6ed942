"""Check that results computed elsewhere equal the stored ones, byte for byte.

    python -m replication.check DIR [NOTEBOOK ...]
        compare DIR/data/results/<nb>.csv with data/results/<nb>.csv
    python -m replication.check --machine NAME [NOTEBOOK ...]
        first run the notebooks under an emulated machine (replication.machines) into
        build/portable/NAME/, two at a time, then compare

The stored results (``data/results``) are what the computation determines on any machine
(README, "What is guaranteed across machines"); a difference is a failure, printed row by row.
The exit status is 1 if any file differs or is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from replication import machines


def notebooks() -> list[str]:
    """The notebooks that replicate a paper: those with ``data/expected/<nb>.csv`` (the primer,
    ``00_whittle_primer``, has none and writes no results, so there is nothing to compare)."""
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
                  if (ROOT / "data" / "expected" / f"{p.stem}.csv").exists())


def differences(stored: Path, fresh: Path) -> list[str]:
    """Human-readable differences between two results files (empty if byte-identical)."""
    from replication.records import read_results, result_changes

    if not fresh.exists():
        return [f"{fresh} was not written"]
    if stored.read_bytes() == fresh.read_bytes():
        return []
    changes = result_changes(read_results(stored), read_results(fresh),
                             columns=("replicated", "note", "paper", "tolerance"))
    return changes or ["the files differ in order or formatting"]


def compare(directory: Path, names: list[str], label: str) -> int:
    failed = 0
    for name in names:
        diff = differences(ROOT / "data" / "results" / f"{name}.csv",
                           directory / "data" / "results" / f"{name}.csv")
        print(f"{label}: {name}: {'identical' if not diff else f'{len(diff)} differences'}")
        for line in diff[:20]:
            print(f"    {line}")
        failed += bool(diff)
    return 1 if failed else 0


def _run(machine: str, name: str, out: Path) -> tuple[str, int, float, str]:
    start = time.monotonic()
    cmd = [sys.executable, "-m", "replication.machines", "run", machine, "--",
           sys.executable, "-m", "replication.run", name,
           "--output-root", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return name, proc.returncode, time.monotonic() - start, proc.stdout + proc.stderr


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path,
                        help="folder holding data/results/ (omit with --machine)")
    parser.add_argument("--machine", choices=sorted(machines.MACHINES),
                        help="run the notebooks under this emulated machine first")
    parser.add_argument("--notebook", action="append", default=[],
                        help="only this notebook (repeatable; default: every notebook "
                             "with data/expected/<nb>.csv)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    names = args.notebook or notebooks()
    if args.machine:
        out = ROOT / "build" / "portable" / args.machine
        if out.exists():
            shutil.rmtree(out)                       # no stale results from an earlier run
        env = " ".join(f"{k}={v}" for k, v in machines.environment(args.machine).items())
        print(f"running {len(names)} notebooks as machine {args.machine} ({env}) into "
              f"{out.relative_to(ROOT)}/", flush=True)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for name, code, seconds, log in pool.map(lambda n: _run(args.machine, n, out),
                                                     names):
                print(f"  {name}: {'ok' if code == 0 else 'FAILED'} ({seconds:.0f} s)",
                      flush=True)
                if code != 0:
                    print(log[-3000:])
                    return 1
        return compare(out, names, args.machine)
    if args.directory is None:
        parser.error("give a directory or --machine")
    return compare(args.directory, names, str(args.directory))


if __name__ == "__main__":
    sys.exit(main())
