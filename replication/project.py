"""What the runner (``run``), the sweep (``sweep``) and the site (``site``) share: where the
collection lives, a notebook's parameters, the folder of a run, the exit statuses and the
console messages.

A module of its own so that ``run`` and ``sweep`` need not import each other: ``run`` hands a
``--sweep`` to ``sweep``, and both read the layout from here.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from pathlib import Path

__all__ = ["FAILED", "INTERRUPTED", "ROOT", "USAGE", "read_specs", "replace_dir",
           "replicates_paper", "run_folder_name", "say", "show"]

# The collection the runner acts on: this checkout, or the folder named by
# WHITTLE_PROJECT_ROOT (a scratch project in the runner's own tests).
ROOT = Path(os.environ.get("WHITTLE_PROJECT_ROOT")
            or Path(__file__).resolve().parents[1]).resolve()

# Exit statuses: a usage error (bad parameter, unknown notebook), a failed run, Ctrl-C.
USAGE, FAILED, INTERRUPTED = 2, 1, 130


def show(path: Path) -> str:
    """A path relative to the project if it lies inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def say(*lines: str) -> None:
    """Lines for the user on standard error (failures, refusals)."""
    print(*lines, sep="\n", file=sys.stderr, flush=True)


def replicates_paper(name: str) -> bool:
    """Whether the notebook replicates a paper's numbers: it has ``data/expected/<nb>.csv``
    and must write ``data/results/<nb>.csv``. The primer (``00_*``) has neither."""
    return (ROOT / "data" / "expected" / f"{name}.csv").exists()


def read_specs(name: str):
    """The parameter specs of ``notebooks/<name>.ipynb``; raises ValueError if the cell is not
    in the grammar of ``replication.params``."""
    from replication.params import read_parameter_specs
    return read_parameter_specs(ROOT / "notebooks" / f"{name}.ipynb")


def run_folder_name(parameters: dict) -> str:
    """``name1=v1,name2=v2`` (a list's elements joined by ``_``). Characters unsafe in a file
    name become ``_``, and a long name is cut; either way a hash of the full text is appended,
    so that two different runs never share a folder.

    >>> run_folder_name({"mu": 0.5, "sizes": (5, 20)})
    'mu=0.5,sizes=5_20'
    """
    def text(value):
        if isinstance(value, (list, tuple)):
            return "_".join(text(v) for v in value)
        return repr(value) if isinstance(value, float) else str(value)

    full = ",".join(f"{k}={text(v)}" for k, v in parameters.items())
    safe = re.sub(r"[^A-Za-z0-9._+=,-]", "_", full)
    if safe != full or len(safe) > 120:
        safe = f"{safe[:100]}-{hashlib.sha256(full.encode()).hexdigest()[:12]}"
    return safe


def replace_dir(src: Path, dst: Path) -> None:
    """Move the folder ``src`` to ``dst``, replacing what was there (kept aside until then)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    old = dst.with_name(dst.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if dst.exists():
        os.replace(dst, old)
    os.replace(src, dst)
    if old.exists():
        shutil.rmtree(old)
