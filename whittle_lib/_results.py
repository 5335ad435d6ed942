"""What every result type of the library shares: a short repr, and a fingerprint of its input.

A result prints as its class and fields, arrays summarised by shape and range (a 5,000-state
arm's indices do not flood a notebook); ``numpy.set_printoptions`` and the fields themselves
still give the whole arrays.

A result computed for an arm carries the arm's :func:`fingerprint` (and its discount), so that
a function handed the result of *another* arm refuses it instead of returning a wrong answer.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

__all__: list[str] = []


def fingerprint(*arrays) -> str:
    """A short digest (32 hex digits of SHA-256) of the shapes and bytes of ``arrays``.

    Two arms with the same matrices and rewards, bit for bit, share it; any other pair differs
    (with the probability of a 128-bit hash collision). The arrays are hashed in place, without
    a copy, and SHA-256 runs in the CPU's own instructions on most machines: about a third of one
    dense LU of the same arm (0.3 LU at 1,000 states), once per arm (``RestlessArm.fingerprint``
    is cached).
    """
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=float)
        digest.update(repr(a.shape).encode())
        digest.update(memoryview(a).cast("B"))
    return digest.hexdigest()[:32]


def summarise(value) -> str:
    """A one-line summary of a field's value for a repr."""
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return f"array(shape={value.shape}, dtype={value.dtype})"
        if value.size <= 6 and value.ndim <= 1:
            return np.array2string(value, precision=6, separator=", ")
        if value.dtype.kind in "biuf":
            finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
            span = (f", min={finite.min():.6g}, max={finite.max():.6g}" if finite.size
                    else ", no finite entry")
            return f"array(shape={value.shape}, dtype={value.dtype}{span})"
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, (list, tuple)):
        if len(value) > 6:
            return f"{type(value).__name__} of {len(value)}"
        if any(isinstance(v, np.ndarray) for v in value):      # index tables, say
            return f"{type(value).__name__} of {len(value)} arrays"
    if isinstance(value, str) and len(value) > 40:
        return repr(value[:12] + "...")
    if isinstance(value, float):
        return f"{value:.10g}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def pandas():
    """The ``pandas`` module, imported on first use by a result's ``to_frame()``.

    The library needs no pandas otherwise; without it, ``ImportError`` says how to install it.
    """
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame() needs pandas, which is not installed: pip install pandas") \
            from None
    return pandas


class ShortRepr:
    """Mixin for result dataclasses: ``ClassName(field=summary, ...)`` on one line per field."""

    def __repr__(self) -> str:
        fields = [f for f in dataclasses.fields(self) if f.repr]
        parts = [f"{f.name}={summarise(getattr(self, f.name))}" for f in fields]
        one_line = f"{type(self).__name__}({', '.join(parts)})"
        if len(one_line) <= 100:
            return one_line
        inner = ",\n    ".join(parts)
        return f"{type(self).__name__}(\n    {inner},\n)"
