"""Floating point that gives the same bits on every x86-64 CPU.

NumPy picks its loops for ``exp``, ``log``, ``expm1`` and ``power`` by the CPU it runs on (AVX-512
and AVX2 builds of ``np.exp`` differ in the last bit), and OpenBLAS picks its kernels by CPU (the
order of the sums in ``A @ x`` and ``np.linalg.solve`` differs between Haswell, SkylakeX and Zen
kernels). A learning run or a long simulation amplifies such last-bit differences into different
trajectories, so the numbers a notebook stores would depend on the machine that computed them.

The functions here avoid both sources:

* :func:`exp` and :func:`log`, the ones in hot loops (the arrival sampler, the crawling index
  over many sources), are fdlibm's algorithms written with NumPy's element-wise ``+ - * /``,
  ``rint``, ``frexp`` and ``ldexp``, each correctly rounded by IEEE 754: the same bits on any
  machine, within 1 ulp of the exact value, about 5 times the cost of ``np.exp``;
* the other elementary functions are evaluated in the x87 extended precision of
  ``numpy.longdouble``, whose loops call the C library's ``expm1l``/``powl``/... (no SIMD
  dispatch), and rounded once to double; where ``longdouble`` is plain double (MSVC, macOS on
  arm64) they fall back to NumPy's double loops. They cost about 30 times ``np.exp``: use them
  on model constants, not inside long loops over large arrays;
* the linear algebra uses only element-wise products and NumPy's pairwise sums along one axis,
  whose order does not depend on the CPU, never BLAS or LAPACK. It is meant for the small
  systems (tens of unknowns) solved once per step of a learning loop.

``tests/test_portable.py`` checks the results bit for bit under other NumPy dispatch targets and
OpenBLAS kernels (``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE``).
"""

from __future__ import annotations

import math

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


# fdlibm (Sun Microsystems, 1993), e_exp.c and e_log.c: the split of ln 2 and the coefficients
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
          -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_LOG_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
           2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
           1.479819860511658591e-01)
_EXP_MAX = 7.09782712893383973096e+02         # above: overflow
_EXP_MIN = -7.45133219101941108420e+02        # below: underflow to 0


def _blocked(func):
    """Apply an element-wise ``func`` to a large array in blocks that stay in cache."""
    def wrapper(x):
        x = np.asarray(x, dtype=np.float64)
        if x.size <= _BLOCK:
            return func(x)
        flat = x.ravel()
        out = np.empty_like(flat)
        for start in range(0, flat.size, _BLOCK):
            out[start:start + _BLOCK] = func(flat[start:start + _BLOCK])
        return out.reshape(x.shape)
    wrapper.__name__, wrapper.__doc__ = func.__name__, func.__doc__
    wrapper.__wrapped__ = func
    return wrapper


_BLOCK = 1 << 14                                    # 128 KiB of doubles per work array


@_blocked
def exp(x):
    """``e**x`` by fdlibm's algorithm in element-wise IEEE operations: the same bits on every
    machine, within 1 ulp.

    ``x = k ln2 + r`` with ``|r| <= ln2/2`` (``ln 2`` split in two so that ``k ln2_hi`` is
    exact), a degree-5 minimax polynomial for ``r (e^r + 1)/(e^r - 1)``, and the exact
    scaling by ``2^k``.

    >>> float(exp(0.0)), abs(float(exp(1.0)) - 2.718281828459045) < 5e-16, float(exp(-800.0))
    (1.0, True, 0.0)
    """
    x = np.asarray(x, dtype=np.float64)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    finite = bool(np.isfinite(x).all())
    inside = finite and x.size and _EXP_MIN / 1.02 < x.min() and x.max() < _EXP_MAX / 1.02
    xs = x if inside else np.nan_to_num(np.clip(x, _EXP_MIN, _EXP_MAX))
    k = xs * _INV_LN2
    np.rint(k, out=k)
    hi = k * -_LN2_HI
    hi += xs                                            # x - k ln2_hi, exact
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    p1, p2, p3, p4, p5 = _EXP_P
    c = t * p5
    for coefficient in (p4, p3, p2, p1):
        c += coefficient
        c *= t
    np.subtract(r, c, out=c)                            # c = r - t P(t)
    num = r * c
    c -= 2.0
    np.negative(c, out=c)                               # 2 - c
    num /= c
    np.subtract(lo, num, out=num)
    num -= hi
    y = np.subtract(1.0, num, out=num)                  # in [0.7, 1.42]
    ki = k.astype(np.int64)
    if inside:                                          # 2^k is a normal number: exact product
        ki += 1023
        ki <<= 52
        y *= ki.view(np.float64)
    else:
        half = ki // 2                                  # two steps: 2^k alone may not exist
        with np.errstate(over="ignore", under="ignore"):
            y = np.ldexp(np.ldexp(y, half), ki - half)
        y[x > _EXP_MAX] = np.inf
        y[x < _EXP_MIN] = 0.0
        y[np.isnan(x)] = np.nan
    return y[0] if scalar else y


@_blocked
def log(x):
    """Natural logarithm by fdlibm's algorithm in element-wise IEEE operations: the same bits
    on every machine, within 1 ulp.

    ``x = 2^k (1 + f)`` with ``sqrt(2)/2 <= 1 + f < sqrt(2)``, ``s = f / (2 + f)`` and
    ``log(1 + f) = f - s (f - R(s^2))`` with a degree-7 minimax polynomial ``R``.

    >>> float(log(1.0)), float(log(np.e)) == 1.0, float(log(0.0)), bool(np.isnan(log(-1.0)))
    (0.0, True, -inf, True)
    """
    x = np.asarray(x, dtype=np.float64)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _log(x, scalar)


def _log(x, scalar):
    m, k = np.frexp(x)                                  # x = m 2^k, 0.5 <= m < 1 (exact)
    low = (m < 0.70710678118654752440).astype(np.float64)
    kf = k.astype(np.float64)
    kf -= low
    low += 1.0
    m *= low                                            # doubled where below sqrt(1/2): exact
    f = m
    f -= 1.0                                            # exact (Sterbenz)
    s = f + 2.0
    np.divide(f, s, out=s)
    z = s * s
    w = z * z
    g1, g2, g3, g4, g5, g6, g7 = _LOG_LG
    t1 = w * g6
    t1 += g4
    t1 *= w
    t1 += g2
    t1 *= w
    t2 = w * g7
    for coefficient in (g5, g3):
        t2 += coefficient
        t2 *= w
    t2 += g1
    t2 *= z
    t2 += t1                                            # R
    hfsq = f * f
    hfsq *= 0.5
    t2 += hfsq
    t2 *= s
    t2 += kf * _LN2_LO                                  # s (hfsq + R) + k ln2_lo
    np.subtract(hfsq, t2, out=t2)
    t2 -= f
    out = kf * _LN2_HI
    out -= t2
    if not (np.isfinite(x).all() and (x > 0).all()):
        out[x == 0.0] = -np.inf
        out[x < 0.0] = np.nan
        out[np.isposinf(x)] = np.inf
        out[np.isnan(x)] = np.nan
    return out[0] if scalar else out


def expm1(x):
    """``e**x - 1``, accurate near 0, the same bits on every x86-64 CPU."""
    return _elementary(np.expm1, x)


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
    ``3 n`` NumPy calls, each vectorised over the batch: meant for ``n`` up to a few tens. A
    single system is solved in Python floats instead (about ``n^3/6`` multiply-adds, 20 times
    faster than NumPy calls for ``n = 14``); its sums run left to right, the batched ones in
    NumPy's pairwise order, so the two agree to rounding, each the same on every machine.

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
    if not batch:
        return _solve_spd_one(M, y)
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


def _solve_spd_one(M, y):
    """:func:`solve_spd` for one system, in Python floats (IEEE double, no fused operations)."""
    n = y.shape[0]
    a, b = M.tolist(), y.tolist()
    L = [[0.0] * n for _ in range(n)]
    for j in range(n):
        Lj = L[j]
        pivot = a[j][j]
        for k in range(j):
            pivot -= Lj[k] * Lj[k]
        if not pivot > 0:
            return np.full(n, np.nan)
        d = math.sqrt(pivot)
        Lj[j] = d
        for i in range(j + 1, n):
            Li = L[i]
            t = a[i][j]
            for k in range(j):
                t -= Li[k] * Lj[k]
            Li[j] = t / d
    z = [0.0] * n
    for i in range(n):                                   # L w = y
        Li = L[i]
        t = b[i]
        for k in range(i):
            t -= Li[k] * z[k]
        z[i] = t / Li[i]
    for i in range(n - 1, -1, -1):                       # L^T z = w
        t = z[i]
        for k in range(i + 1, n):
            t -= L[k][i] * z[k]
        z[i] = t / L[i][i]
    return np.array(z)
