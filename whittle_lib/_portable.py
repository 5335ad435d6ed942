"""Floating point that gives the same bits on every machine.

NumPy picks its loops for ``exp``, ``log``, ``expm1`` and ``power`` by the CPU it runs on (AVX-512
and AVX2 builds of ``np.exp`` differ in the last bit), the C library behind its other loops
differs between platforms, and OpenBLAS picks its kernels by CPU (the order of the sums in
``A @ x`` and ``np.linalg.solve`` differs between Haswell, SkylakeX and Zen kernels). A learning
run or a long simulation amplifies such last-bit differences into different trajectories, so the
numbers a notebook stores would depend on the machine that computed them.

The functions here avoid these sources:

* the elementary functions :func:`exp`, :func:`log`, :func:`expm1`, :func:`log1p`, :func:`cos`
  and :func:`power` are fdlibm's algorithms (Sun Microsystems, 1993-2004, as in FreeBSD's
  msun and musl) written with NumPy's element-wise ``+ - * /``, ``abs``, ``trunc``, ``rint``,
  ``floor``, ``frexp``, ``ldexp`` and integer operations on the bits, each exact or correctly
  rounded by IEEE 754: the same bits on any machine and any NumPy build, within 1 ulp of the
  exact value (the project's test suite measures each against mpmath). Nothing
  goes through NumPy's long double type, whose width differs between platforms (x87 80-bit on
  x86-64 Linux, IEEE quad on aarch64 Linux, double on macOS arm64 and Windows). On 10^6
  doubles :func:`exp` costs about 40 times ``np.exp``'s AVX-512 loop and the others 200 to
  600 times; each call costs some 30 to 100 NumPy operations, so on small arrays a call is
  tens of microseconds: keep them out of loops that could hoist them;
* the linear algebra uses only element-wise products and NumPy's pairwise sums along one axis,
  whose order does not depend on the CPU, never BLAS or LAPACK. It is meant for the small
  systems (tens of unknowns) solved once per step of a learning loop.

The project's test suite checks the results bit for bit under other NumPy dispatch targets and
OpenBLAS kernels (``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE``); ``make test-aarch64``
checks them under an emulated aarch64 Linux.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["exp", "expm1", "log", "log1p", "power", "cos", "dot", "matvec", "solve_spd", "cholesky",
           "solve_cholesky"]

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


def _from_high(high):
    """The double whose high 32 bits are ``high`` and low 32 bits zero (fdlibm's thresholds)."""
    return float(np.array(high << 32, dtype=np.int64).view(np.float64))


def _zero_low(v):
    """``v`` with the low 32 bits of its significand cleared (fdlibm's ``SET_LOW_WORD(v, 0)``):
    a double with at most 21 significant bits, whose products with another such are exact."""
    return np.bitwise_and(v.view(np.int64), _HIGH_MASK).view(np.float64)


_HIGH_MASK = np.int64(-(1 << 32))


def _pow2(k):
    """``2.0**k`` for integer ``k`` in [-1022, 1023], exactly (the bits built directly)."""
    return ((np.asarray(k, dtype=np.int64) + 1023) << 52).view(np.float64)


# fdlibm s_expm1.c: thresholds on |x| (the high words it compares) and the scaled coefficients
_EXPM1_Q = (-3.33333333333331316428e-02, 1.58730158725481460165e-03, -7.93650757867487942473e-05,
            4.00821782732936239552e-06, -2.01099218183624371326e-07)
_EXPM1_REDUCE = _from_high(0x3fd62e43)       # |x| >= this (about ln2/2): argument reduction
_EXPM1_ONE = _from_high(0x3ff0a2b2)          # |x| below this (about 1.5 ln2): k = +-1
_EXPM1_SATURATE = _from_high(0x4043687a)     # x <= -this (about -56 ln2): -1


@_blocked
def expm1(x):
    """``e**x - 1``, accurate near 0, by fdlibm's algorithm in element-wise IEEE operations: the
    same bits on every machine, within 1 ulp.

    ``x = k ln2 + r`` with ``|r| <= ln2/2`` and a correction ``c`` for the rounding of ``r``;
    ``expm1(r)`` from a degree-5 minimax polynomial ``R1`` of ``r (e^r + 1)/(e^r - 1)``, then
    ``2^k (expm1(r) + 1) - 1`` arranged for each range of ``k`` so that nothing cancels
    (fdlibm ``s_expm1.c``, Sun Microsystems 1993). Every finite and infinite input: ``-1``
    below ``-56 ln2``, ``inf`` above 709.78, ``nan`` for ``nan``.

    >>> float(expm1(0.0)), float(expm1(1e-20)), float(expm1(-800.0)), float(expm1(1.0))
    (0.0, 1e-20, -1.0, 1.718281828459045)
    """
    x = np.asarray(x, dtype=np.float64)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    inside = bool(x.size) and x.min() > -_EXPM1_SATURATE and x.max() <= _EXP_MAX
    xs = x if inside else np.clip(np.nan_to_num(x), -_EXPM1_SATURATE, _EXP_MAX)
    ax = np.abs(xs)
    t = xs * _INV_LN2                                   # k = [x/ln2] rounded half away from 0
    t += np.copysign(0.5, xs)
    np.trunc(t, out=t)
    t = np.where(ax < _EXPM1_ONE, np.sign(xs), t)       # fdlibm's k = +-1 band
    t[ax < _EXPM1_REDUCE] = 0.0                         # no reduction: r = x, c = 0
    hi = t * -_LN2_HI
    hi += xs                                            # x - k ln2_hi, exact
    lo = t * _LN2_LO
    r = hi - lo
    c = hi - r
    c -= lo                                             # the rounding of r = hi - lo
    hfx = 0.5 * r
    hxs = r * hfx
    q1, q2, q3, q4, q5 = _EXPM1_Q
    r1 = hxs * q5
    for coefficient in (q4, q3, q2, q1):
        r1 += coefficient
        r1 *= hxs
    r1 += 1.0
    tt = r1 * hfx
    np.subtract(3.0, tt, out=tt)                        # 3 - R1 r/2
    den = r * tt
    np.subtract(6.0, den, out=den)
    e = r1 - tt
    e /= den
    e *= hxs
    e -= c
    e *= r
    e -= c
    e -= hxs                                            # expm1(r + c) = r - e
    d = r - e
    k = t.astype(np.int64)
    out = d                                             # k = 0
    m = k == -1
    if m.any():
        out[m] = 0.5 * d[m] - 0.5
    m = k == 1
    if m.any():
        rm, em = r[m], e[m]
        out[m] = np.where(rm < -0.25, -2.0 * (em - (rm + 0.5)), 1.0 + 2.0 * (rm - em))
    m = (k < -1) | (k > 56)                             # 2^k (expm1(r) + 1) - 1 suffices
    if m.any():
        km = k[m]
        ym = d[m] + 1.0
        top = km == 1024                                # 2^1024 is no double
        ym[top] *= 2.0
        out[m] = ym * _pow2(np.minimum(km, 1023)) - 1.0
    m = (k > 1) & (k < 20)
    if m.any():
        km = k[m]
        out[m] = (d[m] + (1.0 - _pow2(-km))) * _pow2(km)
    m = (k >= 20) & (k <= 56)
    if m.any():
        km = k[m]
        out[m] = (r[m] - (e[m] + _pow2(-km)) + 1.0) * _pow2(km)
    if not inside:
        out[x <= -_EXPM1_SATURATE] = -1.0
        out[x > _EXP_MAX] = np.inf
        out[np.isnan(x)] = np.nan
    return out[0] if scalar else out


# fdlibm s_log1p.c: the k = 0 band (sqrt(2)/2 <= 1 + x < sqrt(2), by high words) and the split
# of the normalised 1 + x at sqrt(2)
_LOG1P_POS = _from_high(0x3fda827a)          # 0 <= x below this: k = 0
_LOG1P_NEG = _from_high(0x3fd2bec5)          # -this < x < 0: k = 0
_LOG1P_SQRT2 = _from_high(0x3ff6a09e)        # normalised 1 + x at or above: halve it
_TWO53 = 9007199254740992.0


@_blocked
def log1p(x):
    """``log(1 + x)``, accurate near 0, by fdlibm's algorithm in element-wise IEEE operations:
    the same bits on every machine, within 1 ulp.

    ``1 + x = 2^k (1 + f)`` with ``sqrt(2)/2 <= 1 + f < sqrt(2)`` (``f = x`` when ``k = 0``,
    else ``1 + x`` rounded and its rounding error ``c`` carried as ``c/(1 + x)``), then
    ``log(1 + f)`` as in :func:`log` (fdlibm ``s_log1p.c``). ``-inf`` at -1, ``nan`` below.

    >>> float(log1p(0.0)), float(log1p(1e-20)), float(log1p(-1.0)), float(log1p(np.e - 1))
    (0.0, 1e-20, -inf, 1.0)
    """
    x = np.asarray(x, dtype=np.float64)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    inside = bool(x.size) and x.min() > -1.0 and x.max() < np.inf
    xs = x if inside else np.where((x > -1.0) & (x < np.inf), x, 1.0)
    big = xs >= _TWO53
    u = xs + 1.0
    if big.any():
        u[big] = xs[big]                                # 1 + x = x: no correction
    c = np.where(u >= 2.0, 1.0 - (u - xs), xs - (u - 1.0))
    c /= u                                              # log(1 + x) - log(u) ~ c/u
    c[big] = 0.0
    m, kf = np.frexp(u)                                 # u = m 2^k, 0.5 <= m < 1 (exact)
    kf = kf.astype(np.float64)
    kf -= 1.0
    m *= 2.0                                            # in [1, 2)
    half = m >= _LOG1P_SQRT2
    m[half] *= 0.5
    kf += half
    f = m
    f -= 1.0                                            # exact (Sterbenz)
    band = (xs < _LOG1P_POS) & (xs > -_LOG1P_NEG)       # k = 0: f = x exactly
    f = np.where(band, xs, f)
    kf[band] = 0.0
    c[band] = 0.0
    hfsq = f * f
    hfsq *= 0.5
    s = f + 2.0
    np.divide(f, s, out=s)
    z = s * s
    lp1, lp2, lp3, lp4, lp5, lp6, lp7 = _LOG_LG
    R = z * lp7
    for coefficient in (lp6, lp5, lp4, lp3, lp2, lp1):
        R += coefficient
        R *= z
    R += hfsq
    R *= s                                              # s (hfsq + R)
    t = kf * _LN2_LO
    t += c
    R += t
    np.subtract(hfsq, R, out=R)
    R -= f
    out = kf * _LN2_HI
    out -= R                    # k ln2_hi - ((hfsq - (s (hfsq + R) + k ln2_lo + c)) - f)
    ax = np.abs(xs)
    tiny = ax < 2.0 ** -29
    if tiny.any():
        xt = xs[tiny]
        out[tiny] = xt - xt * xt * 0.5
    if not inside:
        with np.errstate(invalid="ignore"):
            out[x == -1.0] = -np.inf
            out[x < -1.0] = np.nan
            out[x == np.inf] = np.inf
            out[np.isnan(x)] = np.nan
    return out[0] if scalar else out


# fdlibm k_cos.c, k_sin.c and e_rem_pio2.c: the kernels on [-pi/4, pi/4] and pi/2 in three
# 33-bit pieces with their tails
_COS_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
          -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
_SIN_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
          2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_INV_PIO2 = 6.36619772367581382433e-01
_PIO2 = ((1.57079632673412561417e+00, 6.07710050650619224932e-11),   # pio2_1, pio2_1t
         (6.07710050630396597660e-11, 2.02226624879595063154e-21),   # pio2_2, pio2_2t
         (2.02226624871116645580e-21, 8.47842766036889956997e-32))   # pio2_3, pio2_3t
_COS_NO_REDUCTION = _from_high(0x3fe921fc)   # |x| below this (about pi/4): the kernel alone
_COS_MEDIUM = _from_high(0x413921fb)         # |x| below this (about 2^20 pi/2): three pieces
# 2/pi to 1280 bits and pi/2 to 251 bits, for the reduction of |x| >= 2^20 pi/2 in integers
_TWO_OVER_PI = int(
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09"
    "d1921cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff8"
    "97ffde05980fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292"
    "ea6bfb5fb11f8d5d0856033046fc7b6babf0cfbc209af4361d", 16)
_TWO_OVER_PI_BITS = 1280
_PI_OVER_TWO = int("6487ed5110b4611a62633145c06e0e68948127044533e63a0105df531d89cd9", 16)
_PI_OVER_TWO_BITS = 250


def _rem_pio2_large(ax):
    """``ax = n pi/2 + y0 + y1`` for one double ``ax >= 2^20 pi/2``: ``(n mod 4, y0, y1)``,
    ``|y0 + y1| <= pi/4``.

    Payne and Hanek's reduction done exactly in Python integers: ``ax = M 2^E`` times 2/pi to
    1280 bits (the truncation changes ``ax 2/pi`` by less than ``2^(53 + 971 - 1280)``), the
    nearest integer split off, the fraction times pi/2 to 250 bits rounded to ``y0`` and the
    rest to ``y1``. The closest a double comes to a multiple of pi/2 is about ``2^-61``, so
    ``y0 + y1`` carries far more than the 106 bits the kernels need.
    """
    mantissa, exponent = math.frexp(ax)
    M = int(mantissa * 2.0 ** 53)
    shift = _TWO_OVER_PI_BITS - (exponent - 53)         # ax 2/pi = M T / 2^shift
    product = M * _TWO_OVER_PI
    n = (product + (1 << (shift - 1))) >> shift
    rest = Fraction((product - (n << shift)) * _PI_OVER_TWO, 1 << (shift + _PI_OVER_TWO_BITS))
    y0 = float(rest)                                    # int / int: correctly rounded
    return n & 3, y0, float(rest - Fraction(y0))


@_blocked
def cos(x):
    """Cosine by fdlibm's algorithm in element-wise IEEE operations: the same bits on every
    machine, within 1 ulp.

    ``|x| = n pi/2 + y0 + y1`` (Cody and Waite's reduction with pi/2 in three 33-bit pieces,
    the later ones only where the first cancels, for ``|x| < 2^20 pi/2``; above, an exact
    reduction in integers), then the degree-14 cosine or degree-13 sine kernel on
    ``[-pi/4, pi/4]`` by the quadrant (fdlibm ``s_cos.c``, ``e_rem_pio2.c``, ``k_cos.c``,
    ``k_sin.c``). ``nan`` for ``+-inf`` and ``nan``.

    >>> float(cos(0.0)), float(cos(np.pi)), float(cos(1e22))
    (1.0, -1.0, 0.523214785395139)
    """
    x = np.asarray(x, dtype=np.float64)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    ax = np.abs(x)
    inside = bool(x.size) and ax.max() < _COS_MEDIUM    # False for nan
    axs = ax if inside else np.where(ax < _COS_MEDIUM, ax, 0.0)
    fn = axs * _INV_PIO2
    np.rint(fn, out=fn)
    fn[axs < _COS_NO_REDUCTION] = 0.0
    (p1, p1t), (p2, p2t), (p3, p3t) = _PIO2
    r = fn * -p1
    r += axs                                            # |x| - n pio2_1, exact
    w = fn * p1t
    y0 = r - w
    # where y0 lost more than 16 bits to cancellation, subtract the next pieces of pi/2
    if (np.abs(y0) * 2.0 ** 15 < axs).any():
        ex = axs.view(np.int64) >> 52
        for (p, pt), bits in (((p2, p2t), 16), ((p3, p3t), 49)):
            again = ex - (y0.view(np.int64) >> 52 & 0x7ff) > bits
            if not again.any():
                break
            t = r
            w2 = fn * p
            r = np.where(again, t - w2, r)
            w = np.where(again, fn * pt - ((t - r) - w2), w)
            y0 = np.where(again, r - w, y0)
    y1 = r - y0
    y1 -= w
    n = fn.astype(np.int64)
    if not inside:
        for i in np.flatnonzero((ax >= _COS_MEDIUM) & (ax < np.inf)):
            n[i], y0[i], y1[i] = _rem_pio2_large(float(ax[i]))
    z = y0 * y0
    zz = z * z
    c1, c2, c3, c4, c5, c6 = _COS_C
    s1, s2, s3, s4, s5, s6 = _SIN_S
    # cosine kernel: 1 - z/2 + z r(z) - y0 y1, with 1 - z/2 = w + its rounding error
    rc = z * c3
    rc += c2
    rc *= z
    rc += c1
    rc *= z
    rc2 = z * c6
    rc2 += c5
    rc2 *= z
    rc2 += c4
    rc2 *= zz * zz
    rc += rc2
    hz = 0.5 * z
    wc = 1.0 - hz
    corr = 1.0 - wc
    corr -= hz
    rc *= z
    rc -= y0 * y1
    corr += rc
    cosk = wc + corr
    # sine kernel with tail: y0 - ((z (y1/2 - v r) - y1) - v S1), v = z y0
    rs = z * s4
    rs += s3
    rs *= z
    rs += s2
    rs2 = z * s6
    rs2 += s5
    rs2 *= z * zz
    rs += rs2
    v = z * y0
    rs *= v
    np.subtract(0.5 * y1, rs, out=rs)
    rs *= z
    rs -= y1
    rs -= v * s1
    sink = np.subtract(y0, rs, out=rs)
    out = np.where(n & 1, sink, cosk)
    np.negative(out, out=out, where=((n + 1) & 2).astype(bool))
    if not inside:
        out[~(ax < np.inf)] = np.nan
    return out[0] if scalar else out


# fdlibm e_pow.c (2004): log2 in pieces, 2^x, and the thresholds
_POW_L = (5.99999999999994648725e-01, 4.28571428578550184252e-01, 3.33333329818377432918e-01,
          2.72728123808534006489e-01, 2.30660745775561754067e-01, 2.06975017800338417784e-01)
_DP_H = 5.84962487220764160156e-01           # log2(1.5) high
_DP_L = 1.35003920212974897128e-08           # log2(1.5) tail
_LG2 = 6.93147180559945286227e-01
_LG2_H = 6.93147182464599609375e-01
_LG2_L = -1.90465429995776804525e-09
_OVT = 8.0085662595372944372e-17             # -(1024 - log2(overflow threshold + 0.5 ulp))
_CP = 9.61796693925975554329e-01             # 2/(3 ln2)
_CP_H = 9.61796700954437255859e-01
_CP_L = -7.02846165095275826516e-09
_POW_BIG_Y = _from_high(0x41e00001)          # |y| at or above (about 2^31): near-one path
_POW_HUGE_Y = _from_high(0x43f00001)         # |y| at or above (about 2^64): always o/uflow
_POW_NEAR_LO = _from_high(0x3fefffff)        # with a big y, |x| in [this, _POW_NEAR_HI)
_POW_NEAR_HI = _from_high(0x3ff00001)        # keeps a finite nonzero result
_POW_HALF_Z = _from_high(0x3fe00001)         # |y log2 x| at or above: split off the integer


def power(x, y):
    """``x**y`` by fdlibm's algorithm in element-wise IEEE operations: the same bits on every
    machine, within 1 ulp (0.84 ulp at most on 10^6 arguments, measured against mpmath).

    ``log2|x|`` in two pieces (``t1`` with 21 significant bits plus ``t2``), ``y log2|x| =
    n + z`` in simulated double-double, ``2^z`` by the polynomial of :func:`exp`, scaled by
    ``2^n`` (fdlibm ``e_pow.c``, Sun Microsystems 2004); integer powers of integers come out
    exact when representable. Broadcasts ``x`` and ``y``. The special values of C99's ``pow``:
    ``x**0 = 1`` and ``1**y = 1`` (even for ``nan``), ``nan`` for a negative ``x`` and a
    non-integer ``y``, signed zeros and infinities for ``x = +-0`` and ``+-inf``.

    >>> [float(power(x, y)) for x, y in ((2.0, 10.0), (-3.0, 3.0), (8.0, 1 / 3), (0.0, -1.0))]
    [1024.0, -27.0, 2.0, inf]
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    shape = x.shape
    xf, yf = x.ravel(), y.ravel()
    if xf.size <= _BLOCK:
        out = _power(xf, yf)
    else:
        out = np.empty(xf.size)
        for start in range(0, xf.size, _BLOCK):
            out[start:start + _BLOCK] = _power(xf[start:start + _BLOCK], yf[start:start + _BLOCK])
    return out[0] if not shape else out.reshape(shape)


def _power(x, y):
    with np.errstate(all="ignore"):
        return _power_checked(x, y)


def _power_checked(x, y):
    ax = np.abs(x)
    ay = np.abs(y)
    negative = np.signbit(x)
    y_int = np.trunc(y) == y                            # True for +-inf, not for nan
    y_odd = y_int & (ay < _TWO53) & (np.trunc(0.5 * y) != 0.5 * y)
    # the elements the logarithm path computes: finite, |x| not 0 or 1, y not 0, x < 0 only
    # with an integer y; the rest are special values, set at the end
    main = (ax < np.inf) & (ax != 0.0) & (ax != 1.0) & (ay < np.inf) & (y != 0.0)
    main &= ~negative | y_int
    main &= (ay != 1.0) & (y != 2.0) & ((y != 0.5) | negative)   # fdlibm's shortcuts
    everything = bool(main.all())
    y_given = y
    if not everything:
        ax = np.where(main, ax, 2.0)
        y = np.where(main, y, 3.0)
        ay = np.abs(y)
    sign = np.where(negative & y_odd, -1.0, 1.0)
    big_y = ay >= _POW_BIG_Y
    near_one = big_y & (ax >= _POW_NEAR_LO) & (ax < _POW_NEAR_HI) & (ay < _POW_HUGE_Y)
    t1, t2 = _log2_pieces(ax)
    if near_one.any():
        a1, a2 = _log2_near_one(ax[near_one])
        t1[near_one], t2[near_one] = a1, a2
    # y log2|x| = p_h + p_l, y split so that y1 t1 is exact
    y1 = _zero_low(y)
    p_l = y - y1
    p_l *= t1
    p_l += y * t2
    p_h = y1 * t1
    z = p_l + p_h
    over = (z > 1024.0) | ((z == 1024.0) & (p_l + _OVT > z - p_h))
    under = (z < -1075.0) | ((z == -1075.0) & (p_l <= z - p_h))
    flow = big_y & ~near_one                            # |x|^y surely outside the doubles
    over |= flow & ((ax > 1.0) == (y > 0.0))
    under |= flow & ((ax > 1.0) != (y > 0.0))
    if over.any() or under.any():
        out_of_range = over | under
        p_h[out_of_range] = p_l[out_of_range] = z[out_of_range] = 0.0
    # 2^(p_h + p_l) = 2^n 2^(p_h - n + p_l), n the integer nearest z (half away from zero)
    az = np.abs(z)
    n = np.floor(az + 0.5)
    n[az < _POW_HALF_Z] = 0.0
    np.copysign(n, z, out=n)
    p_h -= n
    t = _zero_low(p_l + p_h)
    u = t * _LG2_H
    v = t - p_h
    np.subtract(p_l, v, out=v)
    v *= _LG2
    v += t * _LG2_L
    z = u + v
    w = z - u
    np.subtract(v, w, out=w)                            # z + w = (p_h + p_l) ln2
    t = z * z
    p1, p2, p3, p4, p5 = _EXP_P
    t1 = t * p5
    for coefficient in (p4, p3, p2, p1):
        t1 += coefficient
        t1 *= t
    np.subtract(z, t1, out=t1)
    r = z * t1
    r /= t1 - 2.0
    r -= w + z * w
    np.subtract(r, z, out=r)
    out = np.subtract(1.0, r, out=r)                    # 2^(p_h - n + p_l), in [0.7, 1.42]
    ni = n.astype(np.int64)
    if ni.min() >= -1021 and ni.max() <= 1023:          # a normal result: the exact product
        out *= _pow2(ni)
    else:
        out = np.ldexp(out, ni.astype(np.int32))        # rounded once where subnormal
    out *= sign
    if over.any():
        out[over] = sign[over] * np.inf
    if under.any():
        out[under] = sign[under] * 0.0
    if not everything:
        _power_special(out, x, y_given, y_int, y_odd, ~main)
    return out


def _power_special(out, x, y, y_int, y_odd, rest):
    """The special values of C99's ``pow``, written into ``out`` where ``rest``; fdlibm tests
    them in the opposite order (the first that applies wins), so each here overrides the ones
    above it."""
    ax = np.abs(x)
    ay = np.abs(y)
    negative = np.signbit(x)
    # x = +-0, +-inf, +-1: |x|^y is 0, 1 or inf; the sign of an odd power
    z = np.where(y < 0.0, 1.0 / ax, ax)
    z = np.where(negative & y_odd, -z, z)
    z = np.where(negative & (ax == 1.0) & ~y_int, np.nan, z)
    m = rest & ((ax == 0.0) | (ax == np.inf) | (ax == 1.0))
    out[m] = z[m]
    out[rest & negative & ~y_int & (ax != 0.0) & (ax != np.inf) & (ax != 1.0)] = np.nan
    m = rest & ~negative & (y == 0.5)
    out[m] = np.sqrt(x[m])
    m = rest & (y == 2.0)
    out[m] = x[m] * x[m]
    m = rest & (y == -1.0)
    out[m] = 1.0 / x[m]
    m = rest & (y == 1.0)
    out[m] = x[m]
    m = rest & (ay == np.inf)
    out[m] = np.where(ax[m] == 1.0, 1.0, np.where((ax[m] > 1.0) == (y[m] > 0.0), np.inf, 0.0))
    out[np.isnan(x) | np.isnan(y)] = np.nan
    out[x == 1.0] = 1.0
    out[y == 0.0] = 1.0


def _log2_pieces(ax):
    """``log2(ax) = t1 + t2`` for positive finite ``ax``, ``t1`` with its low 32 bits zero
    (fdlibm ``e_pow.c``: ``ax = 2^n (1 + f)`` about 1 or 1.5, ``s = (ax - b)/(ax + b)`` in two
    pieces and a degree-6 polynomial in ``s^2``, times ``2/(3 ln2)`` in pieces)."""
    n = np.zeros(ax.shape, dtype=np.int64)
    sub = ax < 2.0 ** -1022
    if sub.any():
        ax = np.where(sub, ax * _TWO53, ax)
        n[sub] -= 53
    bits = ax.view(np.int64)
    ix = bits >> 32
    n += (ix >> 20) - 0x3ff
    j = ix & 0x000fffff
    k = ((j > 0x3988e) & (j < 0xbb67a)).astype(np.int64)   # |x| between sqrt(3/2) and sqrt(3)
    up = j >= 0xbb67a                                        # above sqrt(3): next binade
    n += up
    ix = j | 0x3ff00000
    ix -= up.astype(np.int64) << 20
    ax = ((ix << 32) | (bits & 0xffffffff)).view(np.float64)
    bp = 1.0 + 0.5 * k
    dp_h = k * _DP_H
    dp_l = k * _DP_L
    u = ax - bp
    v = 1.0 / (ax + bp)
    ss = u * v                                           # (ax - bp)/(ax + bp)
    s_h = _zero_low(ss)
    # ax + bp with the low word zero
    t_h = ((((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18)) << 32).view(np.float64)
    t_l = ax - (t_h - bp)
    s_l = u - s_h * t_h
    s_l -= s_h * t_l
    s_l *= v
    s2 = ss * ss
    l1, l2, l3, l4, l5, l6 = _POW_L
    r = s2 * l6
    for coefficient in (l5, l4, l3, l2):
        r += coefficient
        r *= s2
    r += l1
    r *= s2 * s2
    r += s_l * (s_h + ss)
    s2 = s_h * s_h
    t_h = _zero_low(3.0 + s2 + r)
    t_l = r - ((t_h - 3.0) - s2)
    u = s_h * t_h
    v = s_l * t_h + t_l * ss
    p_h = _zero_low(u + v)
    p_l = v - (p_h - u)
    z_h = _CP_H * p_h
    z_l = _CP_L * p_h + p_l * _CP + dp_l
    t = n.astype(np.float64)
    t1 = _zero_low(((z_h + z_l) + dp_h) + t)
    t2 = z_l - (((t1 - t) - dp_h) - z_h)
    return t1, t2


def _log2_near_one(ax):
    """``log2(ax) = t1 + t2`` for ``|ax - 1| <= 2^-20``, ``t1`` with its low 32 bits zero, to
    about ``2^-72`` relative: ``t - w`` with ``t = ax - 1`` (exact) and ``w = t^2/2 - t^3/3 +
    t^4/4`` (``t^5/5`` is below ``2^-80 t``), times ``1/ln2`` in two pieces, ``t/ln2`` as an
    exact product of doubles (Dekker's splitting).

    fdlibm ``e_pow.c`` has this path (for ``|y| > 2^31``) with ``t`` times a 24-bit ``1/ln2``
    assumed exact, which it is not for ``t`` of more than 29 bits: ``1.000000198145915 **
    -2631019204.059651`` came out 400 ulp off. Here the product is exact.
    """
    t = ax - 1.0
    w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25))
    c = t * _SPLITTER
    t_hi = c - (c - t)
    t_lo = t - t_hi
    p_hi = t * _INV_LN2
    p_lo = (t_hi * _INV_LN2_HI - p_hi) + t_hi * _INV_LN2_LO + t_lo * _INV_LN2_HI
    p_lo += t_lo * _INV_LN2_LO
    v = p_lo + (t * _INV_LN2_TAIL - w * _INV_LN2)       # t/ln2 = p_hi + p_lo exactly
    t1 = _zero_low(p_hi + v)
    t2 = v - (t1 - p_hi)
    return t1, t2


_SPLITTER = 134217729.0                      # 2^27 + 1: Veltkamp's split into 26 + 27 bits
_INV_LN2_TAIL = 2.0355273740931033e-17       # 1/ln2 - _INV_LN2
_INV_LN2_HI = 1.4426950514316559             # _INV_LN2 split by Veltkamp: 26 bits
_INV_LN2_LO = -1.0542692496784412e-08        # and the other 27, exactly


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
    L, failed = cholesky(np.broadcast_to(M, batch + (n, n)))
    return solve_cholesky(L, failed, np.broadcast_to(y, batch + (n,)))


def cholesky(M):
    """The Cholesky factors of a stack of systems, as :func:`solve_spd` computes them.

    Parameters
    ----------
    M : ndarray, shape (..., n, n)
        Symmetric positive definite; only the lower triangle is read. At least one leading
        axis: the factors of one system alone are :func:`solve_spd`'s Python-float path.

    Returns
    -------
    L : ndarray, shape (..., n, n)
        Lower triangular, ``M = L L^T`` (column by column, Golub & Van Loan, Algorithm 4.2.1).
    failed : ndarray of bool, shape (...)
        Systems with a pivot that is not positive; their ``L`` is not a factor.

    Notes
    -----
    ``solve_spd(M, y)`` of a stack is ``solve_cholesky(*cholesky(M), y)`` bit for bit: a loop
    that solves many right-hand sides with matrices known in advance can factor them all at
    once (:func:`whittle_lib.learning.learn_whittle_index` factors a block of steps) and solve
    one step at a time.
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[-1]
    if M.ndim < 3 or M.shape[-2] != n:
        raise ValueError(f"M must be a stack (..., n, n) of systems, got shape {M.shape}")
    batch = M.shape[:-2]
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
    return L, failed


def solve_cholesky(L, failed, y):
    """Solve ``L L^T z = y`` by two triangular solves (the second half of :func:`solve_spd`).

    Parameters
    ----------
    L, failed : ndarray
        From :func:`cholesky`; broadcast against ``y``'s leading axes.
    y : ndarray, shape (..., n)

    Returns
    -------
    ndarray, shape (..., n)
        ``z``; all ``nan`` where ``failed``.
    """
    n = L.shape[-1]
    batch = np.broadcast_shapes(L.shape[:-2], np.shape(y)[:-1])
    z = np.empty(batch + (n,))
    add = np.add.reduce                                  # ndarray.sum without its wrapper
    for i in range(n):                                   # L w = y
        z[..., i] = (y[..., i] - add(L[..., i, :i] * z[..., :i], axis=-1)) / L[..., i, i]
    for i in range(n - 1, -1, -1):                       # L^T z = w
        z[..., i] = (z[..., i] - add(L[..., i + 1:, i] * z[..., i + 1:], axis=-1)) / L[..., i, i]
    if failed.any():
        z[np.broadcast_to(failed, batch)] = np.nan
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
