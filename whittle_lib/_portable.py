"""Floating point that gives the same bits on every x86-64 CPU.

NumPy picks its loops for ``exp``, ``log``, ``expm1`` and ``power`` by the CPU it runs on (AVX-512
and AVX2 builds of ``np.exp`` differ in the last bit), and OpenBLAS picks its kernels by CPU (the
order of the sums in ``A @ x`` and ``np.linalg.solve`` differs between Haswell, SkylakeX and Zen
kernels). A learning run or a long simulation amplifies such last-bit differences into different
trajectories, so the numbers a notebook stores would depend on the machine that computed them.

The functions here avoid both sources:

* the elementary functions are evaluated in the x87 extended precision of ``numpy.longdouble``,
  whose loops call the C library's ``expl``/``logl``/... (no SIMD dispatch), and rounded once to
  double; where ``longdouble`` is plain double (MSVC, macOS on arm64) they fall back to NumPy's
  double loops;
* the linear algebra uses only element-wise products and NumPy's pairwise sums along one axis,
  whose order does not depend on the CPU, never BLAS or LAPACK. It is meant for the small
  systems (tens of unknowns) solved once per step of a learning loop.

``tests/test_portable.py`` checks the results bit for bit under other NumPy dispatch targets and
OpenBLAS kernels (``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["exp", "expm1", "log", "log1p", "power", "cos", "dot", "matvec", "solve_spd"]

# x87 extended precision (64-bit mantissa) is what makes the longdouble route both portable and
# accurate; IEEE quad (aarch64 Linux) is portable too, only slower.
_EXTENDED = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def _elementary(func, *args):
    if _EXTENDED:
        with np.errstate(over="ignore", under="ignore"):
            out = func(*(np.asarray(a, dtype=np.longdouble) for a in args))
        return np.asarray(out, dtype=np.float64)
    return np.asarray(func(*(np.asarray(a, dtype=np.float64) for a in args)))


def exp(x):
    """``e**x``, the same bits on every x86-64 CPU (see the module docstring).

    >>> float(exp(0.0)), float(exp(1.0)) == 2.718281828459045
    (1.0, True)
    """
    return _elementary(np.exp, x)


def expm1(x):
    """``e**x - 1``, accurate near 0, the same bits on every x86-64 CPU."""
    return _elementary(np.expm1, x)


def log(x):
    """Natural logarithm, the same bits on every x86-64 CPU."""
    return _elementary(np.log, x)


def log1p(x):
    """``log(1 + x)``, accurate near 0, the same bits on every x86-64 CPU."""
    return _elementary(np.log1p, x)


def power(x, y):
    """``x**y``, the same bits on every x86-64 CPU."""
    return _elementary(np.power, x, y)


def cos(x):
    """Cosine, the same bits on every x86-64 CPU."""
    return _elementary(np.cos, x)


def dot(a, b):
    """``sum_i a_i b_i`` over the last axis, without BLAS (batched over leading axes).

    >>> float(dot([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]))
    32.0
    """
    return np.multiply(a, b).sum(axis=-1)


def matvec(A, x):
    """``A @ x`` without BLAS: ``A`` of shape (..., m, n), ``x`` of shape (..., n).

    >>> matvec([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0])
    array([3., 7.])
    """
    A = np.asarray(A, dtype=float)
    return np.multiply(A, np.asarray(x, dtype=float)[..., None, :]).sum(axis=-1)


def solve_spd(M, y):
    """Solve ``M z = y`` for symmetric positive definite ``M`` by Cholesky, without LAPACK.

    Parameters
    ----------
    M : array_like, shape (..., n, n)
        Symmetric positive definite; only its lower triangle is read. Batched over the
        leading axes.
    y : array_like, shape (..., n)

    Returns
    -------
    ndarray, shape (..., n)
        ``z``; all ``nan`` for a system whose pivot is not positive (``M`` not positive
        definite in floating point), so that a caller's finiteness check sees it.

    Notes
    -----
    ``M = L L^T`` column by column (Golub & Van Loan, Algorithm 4.2.1), then two triangular
    solves; every inner product is an element-wise product and a sum along one axis. About
    ``3 n`` NumPy calls, each vectorised over the batch: meant for ``n`` up to a few tens.

    Examples
    --------
    >>> solve_spd([[4.0, 2.0], [2.0, 3.0]], [2.0, 1.0])
    array([0.5, 0. ])
    """
    M = np.asarray(M, dtype=float)
    y = np.asarray(y, dtype=float)
    n = M.shape[-1]
    if M.shape[-2:] != (n, n) or y.shape[-1:] != (n,):
        raise ValueError(f"M must be (..., n, n) and y (..., n), got shapes {M.shape} and "
                         f"{y.shape}")
    batch = np.broadcast_shapes(M.shape[:-2], y.shape[:-1])
    M = np.broadcast_to(M, batch + (n, n))
    y = np.broadcast_to(y, batch + (n,))
    L = np.zeros(batch + (n, n))
    failed = np.zeros(batch, dtype=bool)
    for j in range(n):
        row = L[..., j, :j]
        pivot = M[..., j, j] - (row * row).sum(axis=-1)
        failed |= ~(pivot > 0)
        diag = np.sqrt(np.where(pivot > 0, pivot, 1.0))
        L[..., j, j] = diag
        if j + 1 < n:
            below = M[..., j + 1:, j] - (L[..., j + 1:, :j] * row[..., None, :]).sum(axis=-1)
            L[..., j + 1:, j] = below / diag[..., None]
    z = np.empty(batch + (n,))
    for i in range(n):                                   # L w = y
        z[..., i] = (y[..., i] - (L[..., i, :i] * z[..., :i]).sum(axis=-1)) / L[..., i, i]
    for i in range(n - 1, -1, -1):                       # L^T z = w
        z[..., i] = (z[..., i] - (L[..., i + 1:, i] * z[..., i + 1:]).sum(axis=-1)) / L[..., i, i]
    z[failed] = np.nan
    return z
