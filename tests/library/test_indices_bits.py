"""The general recursion's bits, before and after issue 32's work on its speed.

``whittle_indices`` on an arm that is neither rested nor reset runs Gast, Gaujal & Khun's
recursion (``indices._ggk``), and ``relaxation_bound`` runs it with extra rows. Its speed is
worked on with every floating-point operation kept: the same BLAS and NumPy routines on the
same operands in the same order (and, discounted, without the estimate of the conditioning
where a bound shows it passes). The stored results of the collection depend on those
bits. ``ggk_before`` below is the recursion as it was at commit e6373ef (frozen: its own copies
of the policy system, the careful event search and the tolerances), and the tests compare the
two byte for byte on arms of many sizes (one to five blocks of delayed updates), both criteria,
indexable and not, multichain, tied and degenerate, with and without extra rows.

``benchmarks/bench_indices.py`` times ``whittle_indices_before`` (the same, through the public
function's checks) against today's path.
"""

import math
import warnings

import numpy as np
import pytest
from scipy.linalg import blas, lapack

from whittle_lib import indices
from whittle_lib.arms import RestlessArm
from whittle_lib.indices import IndexStatus, WhittleIndexResult, _reward_scale

# The tolerances and block size at e6373ef.
_SLOPE_TOL = 1e-10
_ADVANTAGE_TOL = 1e-9
_SUBSIDY_TOL = 1e-9
_PIVOT_TOL = 1e-10
_RCOND_TOL = 1e-13
_BLOCK = 64
_min = np.minimum.reduce


# --- the recursion at e6373ef, frozen -----------------------------------------------------------

def _policy_system_before(arm: RestlessArm, discount: float, extra=None):
    """Return ``Delta`` and the all-active matrix ``A_0`` of [GGK23], Algorithm 2.

    Discounted: ``A_pi = I - beta P_pi`` and ``Delta = beta (P1 - P0)``. Average reward
    (``discount`` 1.0 here): the unknowns are the bias ``h`` with ``h[0] = 0`` and the gain
    ``g`` stored in slot 0, so column 0 of ``I - P_pi`` is replaced by ones and column 0 of
    ``Delta = P1 - P0`` by zeros. Both are returned in Fortran order, the layout LAPACK works
    in (no copy on the way in). ``extra`` (rows ``e``, shape ``(m, n)``) is appended below
    ``Delta``: the recursion then follows ``e^T A_pi^{-1}`` too (see :func:`_ggk`).
    """
    n = arm.n_states
    rows = n if extra is None else n + len(extra)
    delta = np.empty((rows, n), order="F")
    a0 = np.empty((n, n), order="F")
    top = delta if extra is None else delta[:n]
    np.subtract(arm.P1, arm.P0, out=top)
    if discount < 1.0:
        top *= discount
        np.multiply(arm.P1, -discount, out=a0)
    else:
        top[:, 0] = 0.0
        np.negative(arm.P1, out=a0)
    a0[np.diag_indices(n)] += 1.0
    if discount == 1.0:
        a0[:, 0] = 1.0
    if extra is not None:
        delta[n:] = extra
    return delta, a0


def ggk_before(arm: RestlessArm, beta: float, discount: float | None, extra=None):
    """The recursion (1)-(3) of :func:`whittle_indices`, blocked; see its Notes.

    ``beta`` is the discount, ``1.0`` for the average reward (``discount`` is what the result
    records). Returns ``(result, curve)``. With ``extra``, rows ``e`` (shape ``(m, n)``), the
    recursion also follows :math:`e^\\top V_S(\\lambda)` (the gain, or the value from an
    initial state) and its slope :math:`e^\\top A_S^{-1} 1_S` (the passive time) like the
    advantages of ``m`` more states, at ``O(m n)`` more per pivot: ``curve = (mu, G, P,
    complete)`` gives at the ``K`` finite indices ``mu`` (non-decreasing) the values ``G[k] =
    e^T V(mu[k])`` and the slopes ``P[k]`` on ``(mu[k], mu[k+1])`` (policy ``mu[:k+1]``
    passive), so that :math:`e^\\top V(\\lambda) = G[k] + (\\lambda - \\mu_k) P[k]` there and
    ``G[0]`` below ``mu[0]``; ``complete`` is False when the last policy (every state
    passive) is multichain and ``P[-1]`` unknown. ``curve`` is None without ``extra`` and when
    the arm is not indexable. Without ``extra`` the arithmetic is exactly that of the
    recursion alone.
    """
    n = arm.n_states
    me = 0 if extra is None else len(extra)
    R0, R1 = arm.R0, arm.R1
    scale = _reward_scale(arm)
    adv_tol = _ADVANTAGE_TOL * scale
    indices = np.full(n, np.nan)
    order: list[int] = []

    def finish(status, violating=None, at=None):
        return WhittleIndexResult(indices=indices, status=status,
                                  indexable=status is IndexStatus.INDEXABLE,
                                  discount=discount, passive_order=order,
                                  fingerprint=arm.fingerprint,
                                  violating_state=violating, violation_subsidy=at), None

    delta, a0 = _policy_system_before(arm, beta, extra)
    anorm = np.abs(a0).sum(axis=0).max()
    lu, piv, info = lapack.dgetrf(a0, overwrite_a=True)
    rcond = lapack.dgecon(lu, anorm, norm="1")[0] if info == 0 else 0.0
    if info != 0 or rcond < _RCOND_TOL:
        # average reward: multichain all-active policy; discounted (I - beta P is a
        # non-singular M-matrix) only when beta is within rounding of 1
        return finish(IndexStatus.MULTICHAIN)
    # X_0 = Delta A_0^{-1} = Delta U^{-1} L^{-1} P^T: two triangular solves from the right on
    # Delta in place (Fortran order, so column c of Delta U^{-1} L^{-1} is contiguous) ...
    xf = blas.dtrsm(1.0, lu, delta, side=1, lower=0, diag=0, overwrite_b=True)
    xf = blas.dtrsm(1.0, lu, xf, side=1, lower=1, diag=1, overwrite_b=True)
    # ... and the permutation P^T only relabels the columns: column i is that of state st[i].
    st = np.arange(n)
    for i, p in enumerate(piv.tolist()):
        if p != i:
            st[i], st[p] = st[p], st[i]
    # Xt[i] = column st[i] of X (over every state, then the extra rows). The columns of the
    # states active at the start of the current block are rows 0..k-1 of Xt.
    Xt = xf.T
    row_of = np.empty(n, dtype=np.intp)
    row_of[st] = np.arange(n)
    k = n
    m = min(_BLOCK, n)
    # Delayed updates of the current block (j pivots blk[:j]): X = X_b - U L^{-1} X_b[blk, :]
    # with X_b the matrix at the start of the block, U[:, l] = Ut[l] the l-th normalised
    # column of (3) and L unit lower triangular, L[i, l] = Ut[l, blk[i]] (i > l).
    Ut = np.empty((m, n + me))
    L = np.zeros((m, m), order="F")
    blk = np.empty(m, dtype=np.intp)
    j = 0

    active = np.ones(n, dtype=bool)
    sign = np.ones(n + me)  # +1 active, -1 passive (the extra rows: +1)
    # The advantages z at the current index and their slopes 1 - y, both times ``sign``:
    # an event (2) is a ratio zs / ss with ss > 0 (see _next_event).
    if me:
        zs = np.concatenate([R1 - R0, np.zeros(me)]) + Xt.T @ R1[st]
    else:
        zs = R1 - R0 + Xt.T @ R1[st]  # a_0 of (1); y_0 = 0, every slope 1 - y is 1
    ss = np.ones(n + me)
    # views on the states (the whole vectors without extra rows); blas.daxpy updates in place
    zn, sn = zs[:n], ss[:n]
    sigma = int(np.argmin(zn))
    mu = float(zs[sigma])
    zs -= mu
    indices[sigma] = mu
    order.append(sigma)
    col, tmp, key = np.empty(n + me), np.empty(n + me), np.empty(n)
    tn, sgn = tmp[:n], sign[:n]
    flat = np.empty(n, dtype=bool)
    if me:
        ze, se = zs[n:], ss[n:]
        curve_g, curve_p = np.empty((n, me)), np.empty((n, me))
        curve_g[0] = ze + mu
    last = n + 1 if me else n  # with extra rows, one more pivot: the all-passive policy

    for it in range(1, last):
        # --- pivot: sigma becomes passive, equation (3) -------------------------------------
        xr = Xt[row_of[sigma]]
        if j:
            w = blas.dtrsv(L[:j, :j], xr.take(blk[:j]), lower=1, diag=1, overwrite_x=1)
            np.dot(w, Ut[:j], out=col)
            np.subtract(xr, col, out=col)
        else:
            np.copyto(col, xr)
        denominator = 1.0 + float(col[sigma])
        if it == n:  # (extra rows only) the all-passive policy: its passive time
            complete = denominator > _PIVOT_TOL  # else multichain: its passive time unknown
            curve_p[-1] = (1.0 - (se - float(ss[sigma]) * (col[n:] / denominator))
                           if complete else np.nan)
            return finish(IndexStatus.INDEXABLE)[0], (indices[order], curve_g, curve_p,
                                                      complete)
        if denominator <= _PIVOT_TOL:  # the next policy is multichain (or, discounted,
            return finish(IndexStatus.MULTICHAIN)  # numerically so: beta too close to 1)
        u = Ut[j]
        np.divide(col, denominator, out=u)
        if j:
            L[j, :j] = Ut[:j, sigma]
        blk[j] = sigma
        # y += (1 - y[sigma]) u, i.e. every slope moves by -slope[sigma] u
        np.multiply(u, sign, out=tmp)
        ss = blas.daxpy(tmp, ss, a=-float(ss[sigma]))  # in place (contiguous float64)
        active[sigma] = False
        sign[sigma] = -1.0
        ss[sigma] = -ss[sigma]
        zs[sigma] = -zs[sigma]
        if me:
            curve_p[it - 1] = 1.0 - se
        j += 1
        if j == m:  # apply the block: one triangular solve and one level-3 product ...
            # (W = L^{-1} X_b[blk, active]; Xt[:k].T is Fortran-contiguous, so dgemm
            # updates it in place)
            W = blas.dtrsm(1.0, L, Xt[:k, blk].T, lower=1, diag=1, overwrite_b=True)
            blas.dgemm(alpha=-1.0, a=Ut.T, b=W, beta=1.0, c=Xt[:k].T, overwrite_c=True)
            # ... then move the columns still active into rows 0..k-m-1
            k -= m
            holes = row_of[blk]
            holes = holes[holes < k]
            fill = np.arange(k, k + m)
            fill = fill[active[st[fill]]]
            Xt[holes] = Xt[fill]
            st[holes] = st[fill]
            row_of[st[holes]] = holes
            j = 0

        # --- next index (2) and indexability test ------------------------------------------
        np.divide(zn, sn, out=key)  # = z / slope
        np.abs(sn, out=tn)
        nxt = -1
        if _min(tn) > _SLOPE_TOL and _min(zn) >= -adv_tol:
            # the fast path of _next_event, on the signed vectors
            np.less_equal(sn, _SLOPE_TOL, out=flat)
            np.putmask(key, flat, np.inf)
            nxt = int(key.argmin())
            step, bad_step = max(float(key[nxt]), 0.0), np.inf
        if nxt < 0 or sign[nxt] < 0.0:  # the careful path (flat slopes, ties, violations)
            nxt, step, bad, bad_step = _next_event_before(active, sgn, sn * sgn, key, zn * sgn,
                                                   adv_tol)
        if bad_step < step - _SUBSIDY_TOL * (scale + abs(mu)):
            # a passive advantage turns positive before the next index: the passive set shrinks
            return finish(IndexStatus.NOT_INDEXABLE, bad, mu + bad_step)
        if not math.isfinite(step):
            indices[active] = np.inf  # active is optimal for every larger subsidy
            order.extend(np.flatnonzero(active).tolist())
            result = finish(IndexStatus.INDEXABLE)[0]
            if not me:
                return result, None
            return result, (indices[order[:it]], curve_g[:it], curve_p[:it], True)
        sigma = nxt
        mu += step
        zs = blas.daxpy(ss, zs, a=-step)  # z -= step * slope, in place
        indices[sigma] = mu
        order.append(sigma)
        if me:
            curve_g[it] = ze + mu
    result = finish(IndexStatus.INDEXABLE)[0]
    return result, ((indices[order], curve_g, curve_p, True) if me else None)


def _next_event_before(active, sign, slope, ratio, z, adv_tol):
    """Next active state to cross (2) and first passive state to rise, as subsidy increments.

    An active state crosses when its advantage ``z >= 0`` falls to zero (``slope > 0``); a
    passive state violates indexability when its advantage ``z <= 0`` rises to zero
    (``slope < 0``). Both happen after the increment ``ratio = z / slope``, i.e. when
    ``sign * slope > 0`` with ``sign = +1`` for active and ``-1`` for passive states.

    Returns ``(nxt, step, bad, bad_step)``: the active state with the smallest crossing
    increment ``step`` (``inf`` if none) and the passive state with the smallest rising
    increment ``bad_step`` (``inf`` if none).
    """
    # Fast path, taken unless some slope is ~0 or some advantage has the wrong sign beyond
    # rounding: one pass over all states, the earliest event is an active crossing.
    if np.abs(slope).min() > _SLOPE_TOL and (z * sign).min() >= -adv_tol:
        steps = np.where(sign * slope > _SLOPE_TOL, ratio, np.inf)
        first = int(np.argmin(steps))
        if sign[first] > 0.0:  # no passive event can come before it
            return first, max(float(steps[first]), 0.0), -1, np.inf
    # Careful path: ties with flat advantages, wrong-sign rounding, or a passive event first.
    step_active = np.where(active & (slope > _SLOPE_TOL), np.maximum(ratio, 0.0), np.inf)
    flat = active & (np.abs(slope) <= _SLOPE_TOL) & (z <= adv_tol)
    step_active[flat] = 0.0  # indifferent whatever lam: passive (ties included) from now on
    passive = ~active
    step_passive = np.where(passive & (slope < -_SLOPE_TOL), np.maximum(ratio, 0.0), np.inf)
    step_passive[passive & (z > adv_tol)] = 0.0  # already prefers to be active
    nxt = int(np.argmin(step_active))
    bad = int(np.argmin(step_passive))
    return nxt, float(step_active[nxt]), bad, float(step_passive[bad])



def whittle_indices_before(arm: RestlessArm, *, discount: float | None = None):
    """``whittle_indices`` of an arm that is neither rested nor reset, as at e6373ef (its
    checks, then the frozen recursion)."""
    discount = indices.check_discount(discount)
    indices._check_arm(arm)
    beta = 1.0 if discount is None else discount
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        assert indices._structure(arm, beta) is None, "a rested or reset arm"
        result = ggk_before(arm, beta, discount)[0]
    indices._warn_if_degraded(result, stacklevel=3)
    return result


# --- the comparison ----------------------------------------------------------------------------

def _same(before, after):
    """Byte-for-byte equality of two ``_ggk`` outputs ``(result, curve)``."""
    (r0, c0), (r1, c1) = before, after
    assert r0.status is r1.status
    assert r0.indices.tobytes() == r1.indices.tobytes()
    assert r0.passive_order.tobytes() == r1.passive_order.tobytes()
    assert r0.violating_state == r1.violating_state
    assert np.array(r0.violation_subsidy, dtype=float).tobytes() == \
        np.array(r1.violation_subsidy, dtype=float).tobytes()
    assert r0.fingerprint == r1.fingerprint and r0.discount == r1.discount
    assert (c0 is None) == (c1 is None)
    if c0 is not None:
        assert len(c0) == len(c1)
        for a, b in zip(c0, c1):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _compare(arm, discount, extra=None):
    beta = 1.0 if discount is None else discount
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        before = ggk_before(arm, beta, discount, extra)
        after = indices._ggk(arm, beta, discount, extra)
    _same(before, after)
    return before[0].status


def _arm(P, R):
    P = P / P.sum(axis=-1, keepdims=True)
    return RestlessArm(P0=P[0], P1=P[1], R0=R[0], R1=R[1])


def dense(rng, n):
    """Every transition positive: unichain, mostly indexable."""
    return _arm(rng.exponential(size=(2, n, n)), rng.random((2, n)))


def sparse(rng, n):
    """About three transitions per row around a cycle: often not indexable."""
    P = rng.exponential(size=(2, n, n)) * (rng.random((2, n, n)) < 3.0 / n)
    P[:, np.arange(n), (np.arange(n) + 1) % n] += 0.1
    return _arm(P, rng.random((2, n)))


def skewed(rng, n):
    """A few large probabilities per row, rewards on a grid of quarters (ties)."""
    return _arm(rng.exponential(size=(2, n, n)) ** 4, np.round(4 * rng.random((2, n))) / 4)


def multichain(rng, n):
    """Rested (``P0 = I``, ``R0 = 0``): average reward, two passive (frozen) states make the
    policy multichain (discounted, the recursion on an arm ``whittle_indices`` would give to
    the elimination)."""
    P = rng.exponential(size=(2, n, n))
    P[0] = np.eye(n)
    return _arm(P, np.stack([np.zeros(n), rng.random(n)]))


def duplicated(rng, n):
    """Pairs of interchangeable states: exact ties, often in different blocks."""
    half = (n + 1) // 2
    base = dense(rng, half)
    P = np.stack([np.tile(base.P0, (2, 2)), np.tile(base.P1, (2, 2))])[:, :n, :n]
    R = np.stack([np.tile(base.R0, 2), np.tile(base.R1, 2)])[:, :n]
    return _arm(P, R)


def inert(rng, n):
    """A third of the states where the action does not move the chain (flat slopes)."""
    P = rng.exponential(size=(2, n, n))
    P[1, ::3] = P[0, ::3]
    return _arm(P, rng.random((2, n)))


KINDS = {"dense": dense, "sparse": sparse, "skewed": skewed, "multichain": multichain,
         "duplicated": duplicated, "inert": inert}
#: one state, within the first block, its edges, two to five blocks (64 pivots each)
SIZES = (1, 2, 3, 7, 20, 63, 64, 65, 100, 127, 128, 129, 200, 257, 330)
CRITERIA = (0.5, 0.9, 0.999, None)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("n", SIZES)
def test_recursion_bits_unchanged(kind, n):
    rng = np.random.default_rng([n, sorted(KINDS).index(kind)])
    arm = KINDS[kind](rng, n)
    statuses = {_compare(arm, discount) for discount in CRITERIA}
    assert statuses <= set(IndexStatus)


@pytest.mark.parametrize("n", (5, 64, 65, 150, 300))
@pytest.mark.parametrize("kind", ("dense", "sparse", "multichain"))
def test_recursion_bits_unchanged_with_extra_rows(kind, n):
    # relaxation_bound's use: the recursion also follows e^T V (the gain and value curves)
    rng = np.random.default_rng([n, 7, sorted(KINDS).index(kind)])
    arm = KINDS[kind](rng, n)
    for m in (1, 3):
        extra = rng.random((m, n))
        extra /= extra.sum(axis=1, keepdims=True)
        for discount in (0.9, None):
            _compare(arm, discount, extra)


def test_every_outcome_is_compared():
    # the arms above reach each status (here a few of them, for the record)
    seen = set()
    for kind in ("dense", "sparse", "multichain"):
        for n in (65, 129):
            rng = np.random.default_rng([n, sorted(KINDS).index(kind)])
            arm = KINDS[kind](rng, n)
            seen |= {_compare(arm, discount) for discount in CRITERIA}
    assert seen == set(IndexStatus)


@pytest.mark.parametrize("discount", [0.9, None])
def test_whittle_indices_equals_the_recursion_before(discount):
    arm = dense(np.random.default_rng(3), 150)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        before = whittle_indices_before(arm, discount=discount)
        after = indices.whittle_indices(arm, discount=discount)
    assert before.indices.tobytes() == after.indices.tobytes()
    assert before.passive_order.tobytes() == after.passive_order.tobytes()


def test_the_conditioning_estimate_is_skipped_only_where_it_passes():
    # discounted: skipped when (1 - beta) / (n (1 + beta n)) >= 1e3 * _RCOND_TOL, where the
    # estimate is far above the threshold; near beta = 1 it is made and decides
    for n, beta in ((50, 0.9), (200, 0.999), (400, 0.99)):
        arm = dense(np.random.default_rng(n), n)
        a0 = np.eye(n) - beta * arm.P1
        lu, _, info = lapack.dgetrf(np.asfortranarray(a0))
        rcond = lapack.dgecon(lu, np.abs(a0).sum(axis=0).max(), norm="1")[0]
        bound = (1.0 - beta) / (n * (1.0 + beta * n))
        assert rcond >= bound >= indices._RCOND_MARGIN * indices._RCOND_TOL
    arm = dense(np.random.default_rng(1), 30)
    close = 1.0 - 1e-15  # A_0 singular within rounding: the estimate is made and says so
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _compare(arm, close) is IndexStatus.MULTICHAIN
