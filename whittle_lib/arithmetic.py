"""Portable or native arithmetic: the same bits on every machine, or NumPy's speed.

The library evaluates six elementary functions on its models' paths: ``exp``, ``log``,
``expm1``, ``log1p``, ``cos`` and ``power`` (the crawling model's closed-form index and its
arrival sampler, the learning schemes' step sizes and features, the robots' queue). It does
so in one of two modes:

**native** (the default)
    NumPy's own loops. NumPy picks them by CPU (AVX-512, AVX2 or baseline builds of
    ``np.exp`` differ in the last bit), so a result may differ in its last bits from one
    machine to another, and a long stochastic run amplifies such a difference into another
    trajectory: another sample of the same law, not the same numbers.
**portable**
    fdlibm's algorithms written in IEEE element-wise operations (``whittle_lib._portable``):
    the same bits on every CPU and platform, within 1 ulp of the exact value, at about 10
    times NumPy's time for ``exp`` on 10^6 doubles (8.3 ms against 0.83 ms here, ``log`` 13 ms
    against 4.7 ms) and 27 microseconds a call on one element (against 0.7).

Native is the default because a user's simulation or index computation needs NumPy's speed,
not the same last bit as another machine. Measured in one run (``make bench
BENCH_ARGS="-k arithmetic"``, one core, best of 3): the crawling index of 10^6 sources takes
19 ms native against 97 ms portable; the Whittle policy on 10^6 sources of the deterministic
model 0.32 s against 0.45 s for 10 periods when every index is computed (crawling ``N/4``;
0.24 s against 0.27 s at ``N/100``, where ``WhittleRule`` computes few indices); Table I's
stochastic model with 1,000 replications (10^6 arrivals a period) 0.14 s against 0.20 s for
10 periods; an LSPE run, dominated by small arrays, the same 1.5 s in both. Both modes are
within an ulp or two of the exact functions (the index's formula, which cancels, turns that
into a relative 6e-12 at worst), far below any Monte Carlo error; what native mode gives up is
the guarantee that another machine computes the same bits, which a long stochastic run needs
for its *trajectory* to be the same. The portable mode is for results that are stored and
compared across machines (a replication's record): ``set_portable(True)`` before the
computation, and every stored number keeps its bits on every machine.

Switching::

    import whittle_lib as wl
    with wl.portable():             # this block: the same bits on every machine
        run = simulate_crawling(model, rule, 1, 1_000, stochastic=True, rng=1)
    wl.set_portable(True)           # the default of the whole process (a record's first line)
    wl.is_portable()                # the mode in effect here

What the mode does not change:

* the small linear algebra of the learning loops (:func:`dot`, :func:`matvec`,
  :func:`solve_spd`, :func:`cholesky`, :func:`solve_cholesky`) runs without BLAS or LAPACK in
  both modes (element-wise products and sums along one axis, whose order does not depend on
  the CPU): it is cheap at the tens of unknowns it is meant for;
* the constants of an object built from a model (a ``CrawlingModel``'s ``alpha``, ``u`` and
  ``u*``; the per-source constants of ``ClosedFormIndex``, ``WhittleRule`` and
  ``CrawlerIndexProblem``; the age table of ``ExpectedValueRule``) are computed portably
  whatever the mode, once: a model is the same model on every machine, and an object built
  outside ``portable()`` and used inside it gives the portable bits. The mode governs the
  work done on each call;
* NumPy's other operations (``+ - * /``, ``sqrt``, comparisons) are correctly rounded by
  IEEE 754 and its sums run in a fixed order: they are the same in both modes.

Threads and processes. The mode is a :mod:`contextvars` variable over a process-wide default:
``portable()`` sets it for the current thread (and asyncio task) until the block ends;
:func:`set_portable` sets the default that every thread without a ``portable()`` block of its
own sees. A thread the library starts for you (the draws of
:func:`whittle_lib.learning.learn_whittle_index`) runs in the caller's context, and
:func:`whittle_lib.stats.run_tasks` (hence ``replicate`` and ``sweep``) runs each task in
the mode current when it was called, in whatever worker process or executor runs it. A
thread or process you start yourself starts in the default mode (a new thread has an empty
context; a new process the library's default, native): wrap its work with
:func:`in_current_mode`, or call :func:`set_portable` in it.

References
----------
Sun Microsystems, fdlibm 5.3 (1993-2004): ``e_exp.c``, ``e_log.c``, ``s_expm1.c``,
``s_log1p.c``, ``k_cos.c``, ``e_pow.c``.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _portable
from ._portable import cholesky, dot, matvec, solve_cholesky, solve_spd

__all__ = ["portable", "set_portable", "is_portable", "in_current_mode", "exp", "expm1", "log",
           "log1p", "cos", "power", "dot", "matvec", "solve_spd", "cholesky", "solve_cholesky"]

#: The process-wide default mode (``set_portable``): native.
_default = False
#: The mode of this context (``portable()``); ``None``: the process-wide default.
_MODE: contextvars.ContextVar[bool | None] = contextvars.ContextVar("whittle_lib_portable",
                                                                    default=None)


def _flag(enabled) -> bool:
    if not isinstance(enabled, (bool, np.bool_)):
        raise TypeError(f"enabled must be True (portable) or False (native), got "
                        f"{type(enabled).__name__} {enabled!r}")
    return bool(enabled)


def is_portable() -> bool:
    """Whether the elementary functions run in portable mode here (see the module docstring).

    Examples
    --------
    >>> is_portable()
    False
    >>> with portable():
    ...     is_portable()
    True
    """
    mode = _MODE.get()
    return _default if mode is None else mode


def set_portable(enabled: bool = True) -> None:
    """Set the process-wide default mode: portable (``True``) or native (``False``).

    Every thread that is not inside a :func:`portable` block of its own sees it. A
    computation whose results are stored and compared across machines calls
    ``set_portable(True)`` first, so that every number it stores has the same bits on every
    machine.

    Parameters
    ----------
    enabled : bool

    Raises
    ------
    TypeError
        For anything but a bool.
    """
    global _default
    _default = _flag(enabled)


@contextlib.contextmanager
def portable(enabled: bool = True):
    """Run a block (or, as a decorator, a function) in portable mode, or native with ``False``.

    The mode holds in the current thread until the block ends, whatever the process-wide
    default (:func:`set_portable`), and in the threads and worker processes the library
    starts for the block. Blocks nest.

    Parameters
    ----------
    enabled : bool
        ``True``: the same bits on every machine; ``False``: NumPy's loops.

    Examples
    --------
    >>> import numpy as np
    >>> from whittle_lib.models import crawling
    >>> model = crawling.table_one()
    >>> with portable():
    ...     gamma = crawling.whittle_index(model.u_star / 2, model.u, model.alpha)
    >>> bool(np.allclose(gamma, crawling.whittle_index(model.u_star / 2, model.u, model.alpha),
    ...                  rtol=1e-14))
    True
    """
    token = _MODE.set(_flag(enabled))
    try:
        yield
    finally:
        _MODE.reset(token)


@dataclass(frozen=True)
class _InMode:
    """``func`` run in a given mode (picklable when ``func`` is)."""

    func: Callable
    portable: bool

    def __call__(self, *args, **kwargs) -> Any:
        with portable(self.portable):
            return self.func(*args, **kwargs)


def in_current_mode(func: Callable) -> Callable:
    """``func`` wrapped to run in the mode current now, in whatever thread or process calls it.

    For work handed to a thread or a process of your own (an executor of your own):
    :func:`whittle_lib.stats.run_tasks` wraps its tasks so. The wrapper pickles when ``func``
    does.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with portable(), ThreadPoolExecutor(1) as pool:
    ...     plain, wrapped = pool.submit(is_portable), pool.submit(in_current_mode(is_portable))
    ...     plain.result(), wrapped.result()
    (False, True)
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__} {func!r}")
    return _InMode(func, is_portable())


# -- the elementary functions, in the mode of the caller -----------------------------------------
# NumPy's loops warn where fdlibm's quietly return inf, nan or -inf: log and log1p of 0 and of
# negatives, power of negatives, cos of infinities. Those four run under errstate so that both
# modes return the same special values without a warning; exp and expm1 warn only on an overflow
# (an argument above 709), which NumPy reports as it would anyway.

def exp(x):
    """``e**x``: NumPy's ``exp`` (native mode) or fdlibm's (portable mode, same bits everywhere).

    >>> float(exp(0.0))
    1.0
    """
    if is_portable():
        return _portable.exp(x)
    return np.exp(np.asarray(x, dtype=np.float64))


def expm1(x):
    """``e**x - 1``, accurate near 0: NumPy's or fdlibm's (see :func:`exp`).

    >>> float(expm1(1e-20))
    1e-20
    """
    if is_portable():
        return _portable.expm1(x)
    return np.expm1(np.asarray(x, dtype=np.float64))


def log(x):
    """Natural logarithm (``-inf`` at 0, ``nan`` below, without a warning): NumPy's or
    fdlibm's (see :func:`exp`).

    >>> float(log(1.0)), float(log(0.0))
    (0.0, -inf)
    """
    if is_portable():
        return _portable.log(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.asarray(x, dtype=np.float64))


def log1p(x):
    """``log(1 + x)``, accurate near 0 (``-inf`` at -1, ``nan`` below): NumPy's or fdlibm's.

    >>> float(log1p(1e-20))
    1e-20
    """
    if is_portable():
        return _portable.log1p(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log1p(np.asarray(x, dtype=np.float64))


def cos(x):
    """Cosine (``nan`` at infinities): NumPy's or fdlibm's (see :func:`exp`).

    >>> float(cos(0.0))
    1.0
    """
    if is_portable():
        return _portable.cos(x)
    with np.errstate(invalid="ignore"):
        return np.cos(np.asarray(x, dtype=np.float64))


def power(x, y):
    """``x**y`` with C99's special values, broadcast: NumPy's or fdlibm's (see :func:`exp`).

    >>> float(power(2.0, 10.0)), float(power(8.0, 1 / 3))
    (1024.0, 2.0)
    """
    if is_portable():
        return _portable.power(x, y)
    with np.errstate(all="ignore"):
        return np.power(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
