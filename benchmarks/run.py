"""Run the benchmark suite: every case of ``benchmarks/bench_*.py``, one table.

    .venv/bin/python benchmarks/run.py                 # everything (make bench)
    .venv/bin/python benchmarks/run.py -k robots       # cases whose name contains "robots"
    .venv/bin/python benchmarks/run.py --quick         # skip the cases marked slow
    .venv/bin/python benchmarks/run.py --list          # names only

One BLAS and OpenMP thread throughout (set before NumPy loads, and held by threadpoolctl), so
that a ratio compares algorithms, not core counts. Modules that register no case and define
``main()`` are run as scripts after the cases (``-k`` matches their file name).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                  "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", default="", help="substring of the case names")
    parser.add_argument("--quick", action="store_true", help="skip the slow cases")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)

    scripts = []
    for path in sorted(HERE.glob("bench_*.py")):
        before = len(harness.registry)
        module = importlib.import_module(path.stem)
        if len(harness.registry) == before and hasattr(module, "main"):
            scripts.append((path.stem, module))
    selected = [(name, function) for name, (function, quick) in harness.registry.items()
                if args.pattern in name and (quick or not args.quick)]
    scripts = [(name, module) for name, module in scripts
               if args.pattern in name and not args.quick]
    if args.list:
        for name, _ in selected:
            print(name)
        for name, _ in scripts:
            print(f"{name} (script)")
        return 0

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        if selected:
            print("ratio = ours / reference, same run, best of the repeats (below 1: faster)")
            harness.print_header()
        for _, function in selected:
            function()
        for name, module in scripts:
            print(f"\n== {name}.py (script)", flush=True)
            module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
