"""The benchmark suite's harness: named cases, paired timings, one table.

A *case* is a function registered with :func:`case`. It builds its inputs (not timed) and
calls :func:`compare` once per row it wants printed: our function, a reference (a peer
library, or a reference computation such as one dense LU of the same size), both timed in the
same run, interleaved, best of ``repeats``, and an agreement check that turns the two outputs
into a short text (same policy, largest index difference, gain difference, residuals).
``benchmarks/run.py`` imports every ``benchmarks/bench_*.py``, runs the selected cases and
prints one line per row as it is measured::

    case                        ours (s)  reference                     ref (s)  ratio  agreement

``ratio`` is ours / reference: below 1 we are faster. How to add a case:
``benchmarks/README.md``.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Row", "case", "compare", "registry", "quiet_import", "quietly", "print_header"]


@dataclass(frozen=True)
class Row:
    """One measured pair."""

    case: str
    ours: float
    reference_name: str
    reference: float
    agreement: str

    @property
    def ratio(self) -> float:
        return self.ours / self.reference

    def format(self) -> str:
        return (f"{self.case:<56s} {self.ours:>9.4f}  {self.reference_name:<30s} "
                f"{self.reference:>9.4f} {self.ratio:>7.3f}  {self.agreement}")


#: Registered cases, in registration order: name -> (function, quick).
registry: dict[str, tuple[Callable, bool]] = {}
#: Rows measured in this run (``run.py`` prints them as they come and sums up at the end).
rows: list[Row] = []


def case(name: str, *, quick: bool = True):
    """Register a case under ``name`` (dotted: ``area.model.size.criterion``).

    ``quick=False`` marks a case that takes more than ~30 s (``run.py --quick`` skips it).
    The function takes no argument and calls :func:`compare` for each row.
    """
    def register(function):
        if name in registry:
            raise ValueError(f"benchmark case {name!r} is registered twice")
        registry[name] = (function, quick)
        return function
    return register


def print_header() -> None:
    header = (f"{'case':<56s} {'ours (s)':>9s}  {'reference':<30s} {'ref (s)':>9s} "
              f"{'ratio':>7s}  agreement")
    print(header)
    print("-" * (len(header) + 30), flush=True)


def compare(name: str, ours: Callable, reference: Callable, reference_name: str,
            agreement: Callable[[object, object], str], *, repeats: int = 3,
            ours_setup: Callable | None = None, reference_setup: Callable | None = None) -> Row:
    """Time ``ours()`` and ``reference()`` interleaved, best of ``repeats`` each, print the row.

    Interleaving puts a burst of load on a shared machine on both sides alike. The outputs of
    the last round go to ``agreement(ours_out, reference_out)``. A ``*_setup`` function runs
    untimed before each timed call and its result is passed to the call (a fresh peer model
    that would otherwise start from its previous solution, a cache to clear).
    """
    best = [np.inf, np.inf]
    out = [None, None]
    for _ in range(repeats):
        for i, (function, setup) in enumerate(((ours, ours_setup),
                                              (reference, reference_setup))):
            args = () if setup is None else (setup(),)
            start = time.perf_counter()
            out[i] = function(*args)
            best[i] = min(best[i], time.perf_counter() - start)
    row = Row(name, best[0], reference_name, best[1], agreement(out[0], out[1]))
    rows.append(row)
    print(row.format(), flush=True)
    return row


@contextlib.contextmanager
def quietly():
    """Silence a peer's prints and warnings and restore NumPy's error state after it (some
    peers call ``np.seterr`` or print progress)."""
    saved = np.geterr()
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        np.seterr(**saved)


def quiet_import(module: str):
    """Import a peer module inside :func:`quietly`; ``None`` with a note if it is missing (the
    peers are the ``[bench]`` extra: ``pip install -e '.[bench]'``)."""
    import importlib

    try:
        with quietly():
            return importlib.import_module(module)
    except ImportError as error:
        print(f"(peer {module} not installed: {error}; its rows are skipped)", flush=True)
        return None
