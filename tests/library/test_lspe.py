"""LSPE(0) learning of the crawling thresholds (Avrachenkov & Borkar 2019, Sections III-IV).

References: a direct inverse for the Sherman-Morrison recursion, batch means for the running
averages, a finite-difference gradient of log p for the score (8); invariants of a run.
"""

import math
import re
import warnings

import numpy as np
import pytest

from whittle_lib import arithmetic as fp
from whittle_lib.models import crawling
from whittle_lib.models.crawling import deterministic_step, sample_new_utility, stochastic_step
from whittle_lib.learning import (LSPEResult, LSPESettings, activation_probability, run_lspe,
                                  running_average, score, sherman_morrison_average, step_sizes,
                                  threshold_basis, thresholds, tikhonov_condition_bound,
                                  tikhonov_solve, value_features)
from whittle_lib.learning.lspe import _initial_q

MODEL = crawling.table_one()


def test_sherman_morrison_tracks_the_direct_inverse_for_the_printed_step():
    # B(-1) = eps I; B(n) = B(n-1) + b(n) (phi phi^T - B(n-1)) with b(n) = 1/(n+2): the printed
    # 1/(n+1) shifted by one so that B(-1) counts as a sample (with 1/(n+1), B(0) = phi phi^T is
    # singular and no recursion can start).
    rng = np.random.default_rng(7)
    ell = 6
    B = np.eye(ell)
    B_inv = np.eye(ell)
    for n in range(200):
        v = rng.normal(size=ell)
        b = 1.0 / (n + 2)
        B = running_average(B, np.outer(v, v), b)
        B_inv = sherman_morrison_average(B_inv, v, b)
    # 200 rank-one updates of a matrix of condition ~10: rounding accumulates to ~1e-13.
    np.testing.assert_allclose(B_inv, np.linalg.inv(B), rtol=1e-9, atol=1e-12)


def test_sherman_morrison_tracks_the_direct_inverse_for_the_paper_schedule():
    # b(n) = c / ceil((n+1)/1000)^(2/3) of Section IV, on the features of real crawling states.
    rng = np.random.default_rng(3)
    _, b = step_sizes(np.arange(3000), 0.5)
    x = MODEL.u * (1 + rng.random((3000, 4)))
    feats = value_features(x / 100.0)
    B = np.eye(feats.shape[1])
    B_inv = np.eye(feats.shape[1])
    for v, bn in zip(feats, b):
        B = running_average(B, np.outer(v, v), bn)
        B_inv = sherman_morrison_average(B_inv, v, bn)
    # cond(B) ~ 1e7 here: relative agreement to 1e-6 of the largest entry is what double
    # precision allows after 3000 updates (errors grow like cond * eps * sqrt(n)).
    err = np.abs(B_inv - np.linalg.inv(B)).max() / np.abs(B_inv).max()
    assert err < 1e-6


def test_the_printed_sherman_morrison_is_wrong():
    # The printed factors n/(n-1) and n-1 (the step 1/n) with the step 1/(n+1) of the averages:
    # it does not invert B(n).
    rng = np.random.default_rng(1)
    ell, n = 4, 5
    B = np.eye(ell) + 0.1 * rng.normal(size=(ell, ell))
    B = B @ B.T
    v = rng.normal(size=ell)
    Bi = np.linalg.inv(B)
    B_next = running_average(B, np.outer(v, v), 1.0 / (n + 1))
    printed = n / (n - 1) * (Bi - Bi @ np.outer(v, v) @ Bi / (n - 1 + v @ Bi @ v))
    corrected = sherman_morrison_average(Bi, v, 1.0 / (n + 1))
    assert np.abs(printed @ B_next - np.eye(ell)).max() > 1e-2
    np.testing.assert_allclose(corrected @ B_next, np.eye(ell), atol=1e-12)  # rounding only


def test_running_averages_equal_batch_means():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(500, 3))
    phi = value_features(x)
    g = rng.normal(size=500)
    eta = 0.0
    A = np.zeros((phi.shape[1],) * 2)
    for n in range(499):
        b = 1.0 / (n + 1)
        eta = running_average(eta, g[n], b)
        A = running_average(A, np.outer(phi[n], phi[n + 1] - phi[n]), b)   # the corrected A
    batch_A = np.einsum("ti,tj->ij", phi[:-1], phi[1:] - phi[:-1]) / 499
    # means of 499 O(1) terms: the recursion and the sum differ by rounding only (~1e-14).
    np.testing.assert_allclose(eta, g[:-1].mean(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(A, batch_A, rtol=0, atol=1e-12)


@pytest.mark.parametrize("active", [[True, False, False, True], [False, True, True, False]])
def test_score_is_the_gradient_of_log_p(active):
    rng = np.random.default_rng(5)
    x = MODEL.u * (1 + 0.5 * rng.random(4))
    q = np.column_stack([x + rng.normal(scale=0.7, size=4), 1e-3 * rng.normal(size=4),
                         1e-6 * rng.normal(size=4)])
    active = np.array(active)
    kappa = np.array([2.0, 1.0, 0.5, 3.0])

    def log_p(qq):
        f = activation_probability(x, thresholds(qq, x), kappa)
        return np.sum(np.where(active, np.log(f), np.log1p(-f)))

    analytic = score(x, thresholds(q, x), kappa, active)
    numeric = np.zeros_like(q)
    for idx in np.ndindex(q.shape):
        h = 1e-6 * max(1.0, abs(q[idx])) / max(1.0, threshold_basis(x)[idx])
        up, dn = q.copy(), q.copy()
        up[idx] += h
        dn[idx] -= h
        numeric[idx] = (log_p(up) - log_p(dn)) / (2 * h)
    # central differences: truncation O(h^2) and rounding eps*|log p|/h; 1e-5 relative to the
    # largest component is well above both and far below any error in (8).
    np.testing.assert_allclose(analytic, numeric, atol=1e-5 * np.abs(analytic).max())


def test_threshold_projection_and_basis():
    x = np.array([100.0, 200.0, 300.0, 400.0])
    psi = threshold_basis(x)
    np.testing.assert_array_equal(psi[:, 1], [900.0, 800.0, 700.0, 600.0])   # sum of the others
    q = np.array([[1e6, 0, 0], [-1e6, 0, 0], [50.0, 0, 0], [60.0, 0, 0]])
    t = thresholds(q, MODEL.u, lower=MODEL.u, upper=MODEL.u_star)
    np.testing.assert_array_equal(t, [MODEL.u_star[0], MODEL.u[1], 50.0, 60.0])


def test_tikhonov_solve_is_the_least_squares_limit():
    rng = np.random.default_rng(2)
    B = rng.normal(size=(5, 5))
    y = rng.normal(size=5)
    # delta = 1e-12 against cond(B) ~ 10: the regularised solution is the solution to ~1e-10.
    np.testing.assert_allclose(tikhonov_solve(B, y, 1e-12), np.linalg.solve(B, y), rtol=1e-8)


def test_step_sizes_of_the_paper():
    a, b = step_sizes(np.array([0, 499, 500, 999, 1000, 7999]), 0.5)
    np.testing.assert_allclose(a, [0.5, 0.5, 0.25, 0.25, 0.5 / 3, 0.5 / 16])
    np.testing.assert_allclose(b, [0.5, 0.5, 0.5, 0.5, 0.5 / 2 ** (2 / 3), 0.5 / 8 ** (2 / 3)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(kappa=0.0), "kappa must lie in (0, inf), got 0.0"),
    (dict(step_constant=1.0), "step_constant must lie in (0, 1), got 1.0"),
    (dict(n_steps=0), "n_steps must be an integer >= 1, got 0"),
    (dict(action="top"), "action must be one of"),
    (dict(dynamics="noisy"), "dynamics must be one of"),
    (dict(reward="sum"), "reward must be one of"),
    (dict(q0=(1.0, 2.0)), "q0 must be three finite numbers"),
    (dict(q0=(1.0, 2.0, float("inf"))), "q0 must lie in"),
    (dict(delta=float("nan")), "delta must lie in (0, inf), got nan"),
])
def test_settings_validation(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        LSPESettings(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(kappa="2"), "kappa must be a number, got str"),
    (dict(n_steps=10.0), "n_steps must be an integer, got float"),
    (dict(record_every=True), "record_every must be an integer, got bool"),
    (dict(project=1), "project must be True or False"),
    (dict(action=None), "action must be one of"),
    (dict(q0=("a", "b", "c")), "q0 must be an array of numbers"),
])
def test_settings_of_the_wrong_type(kwargs, message):
    with pytest.raises(TypeError, match=message):
        LSPESettings(**kwargs)


def test_run_rejects_bad_arguments():
    # the scheme is the crawling model's by design: another model is refused by type, with
    # the way to the generic scheme
    from whittle_lib.builders import wear_repair_arm
    with pytest.raises(TypeError, match="model must be a CrawlingModel, got str"):
        run_lspe("table one", LSPESettings(n_steps=5), rng=0)
    with pytest.raises(TypeError, match="learn_whittle_index"):
        run_lspe(wear_repair_arm(4, wear=0.3, repair_cost=0.5), LSPESettings(n_steps=5), rng=0)
    with pytest.raises(TypeError, match="settings must be LSPESettings, got dict"):
        run_lspe(MODEL, {"kappa": 2.0}, rng=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        run_lspe(MODEL, LSPESettings(n_steps=5), rng=1.5)
    with pytest.raises(ValueError, match="step must lie in"):
        sherman_morrison_average(np.eye(2), np.ones(2), 1.0)


@pytest.mark.parametrize("call, error, message", [
    (lambda: threshold_basis("x"), TypeError, "x must be an array of numbers"),
    (lambda: threshold_basis(3.0), ValueError, "shape \\(..., N\\)"),
    (lambda: threshold_basis([1.0, np.nan]), ValueError, "x must lie in"),
    (lambda: thresholds(np.ones((3, 3)), [1.0, 2.0]), ValueError, "q must have shape"),
    (lambda: thresholds(np.ones((2, 3)), [1.0, 2.0], lower=[1.0]), ValueError,
     "lower must have shape"),
    (lambda: activation_probability([1.0], [1.0], 0.0), ValueError, "kappa must lie in"),
    (lambda: activation_probability([1.0], None, 1.0), TypeError, "t must be an array"),
    (lambda: score([1.0, 2.0], [1.0, 2.0], 1.0, [1, 0]), TypeError, "active must be a boolean"),
    (lambda: score([1.0, 2.0], [1.0], 1.0, [True, False]), ValueError, "one shape"),
    (lambda: value_features([np.inf]), ValueError, "x must lie in"),
    (lambda: running_average(1.0, 2.0, 0.0), ValueError, "step must lie in"),
    (lambda: running_average(np.ones(2), np.ones(3), 0.5), ValueError, "must broadcast"),
    (lambda: sherman_morrison_average(np.eye(2), np.ones(3), 0.5), ValueError, "inverse must"),
    (lambda: sherman_morrison_average(np.eye(2), np.ones(2), "0.5"), TypeError, "step must be"),
    (lambda: tikhonov_solve(np.ones((2, 3)), np.ones(2), 1.0), ValueError, "B must be a square"),
    (lambda: tikhonov_solve(np.eye(2), np.ones(3), 1.0), ValueError, "y must have shape"),
    (lambda: tikhonov_condition_bound(np.eye(2), -1.0), ValueError, "delta must lie in"),
    (lambda: tikhonov_condition_bound(np.eye(2), None), TypeError, "delta must be a number"),
    (lambda: step_sizes([0, 1.5], 0.5), ValueError, "whole numbers"),
    (lambda: step_sizes([-1], 0.5), ValueError, "n must lie in"),
    (lambda: step_sizes([0], 0.0), ValueError, "c must lie in"),
    (lambda: step_sizes([0], 0.5, b_power="2/3"), TypeError, "b_power must be a number"),
])
def test_the_pieces_of_the_scheme_name_a_misuse(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_short_run_is_reproducible_and_consistent():
    settings = LSPESettings(n_steps=300, record_every=50)
    one = run_lspe(MODEL, settings, rng=20191)
    two = run_lspe(MODEL, settings, rng=20191)
    other = run_lspe(MODEL, settings, rng=20192)
    np.testing.assert_array_equal(one.rewards, two.rewards)
    np.testing.assert_array_equal(one.q, two.q)
    assert not np.array_equal(one.rewards, other.rewards)
    assert not one.diverged
    assert one.q.shape == (6, 4, 3) and one.threshold_history.shape == (6, 4)
    # projected thresholds stay in [u_i, u_i/(1 - alpha_i)]
    assert np.all(one.threshold_history >= MODEL.u)
    assert np.all(one.threshold_history <= MODEL.u_star)
    assert np.all((one.n_active >= 0) & (one.n_active <= 4))


def test_deterministic_run_without_randomness_ignores_the_seed():
    settings = LSPESettings(n_steps=200, dynamics="deterministic")
    np.testing.assert_array_equal(run_lspe(MODEL, settings, rng=1).rewards,
                                  run_lspe(MODEL, settings, rng=2).rewards)


def test_literal_scale_breaks_the_tikhonov_solve_by_the_stated_criterion():
    # feature_scale=1 (the paper's raw states): phi reaches 3e4 at the first state, so
    # ||B^T B||_F / delta is about 1e20, beyond 1/eps = 4.5e15, already after the first average.
    # The criterion is a computed bound, not an exception of the linear solver: the same step
    # on every CPU.
    with pytest.warns(RuntimeWarning, match="condition number bound"):
        res = run_lspe(MODEL, LSPESettings(n_steps=500, feature_scale=1.0), rng=0)
    assert res.broke_down and not res.diverged and res.stopped_at == res.breakdown_at == 0
    assert res.condition_bound >= 1 / np.finfo(float).eps
    assert np.isnan(res.average_active()) and np.isnan(res.average_reward())


def test_default_scale_stays_far_below_the_breakdown_bound():
    # features in [0, 25]: the bound stays near 1e10, six orders below 1/eps
    res = run_lspe(MODEL, LSPESettings(n_steps=300), rng=0)
    assert not res.broke_down and res.stopped_at is None
    assert 1.0 < res.condition_bound < 1e-4 / np.finfo(float).eps


def test_condition_bound_bounds_the_condition_number():
    rng = np.random.default_rng(3)
    for delta in (1e-3, 1.0):
        B = rng.normal(size=(6, 6))
        M = B.T @ B + delta * np.eye(6)
        # upper bound by construction; equality up to rounding is not required
        assert np.linalg.cond(M) <= tikhonov_condition_bound(B, delta) * (1 + 1e-12)


def _fields_equal(a, b):
    """Every field of two LSPEResults equal, arrays byte for byte (nan equal to nan)."""
    for name in a.__dataclass_fields__:
        va, vb = getattr(a, name), getattr(b, name)
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype and va.shape == vb.shape, name
            assert va.tobytes() == vb.tobytes(), name
        else:
            assert va == vb or (va != va and vb != vb), name


def test_stacked_runs_equal_single_runs_bit_for_bit():
    # run_lspe_many must make run_lspe's operations in run_lspe's order: 1,200 steps cross a
    # chunk of arrivals; the stack mixes every per-run field (decisions drawn, eq. (6) reward,
    # mean dynamics, no projection, kappa, c, the unit) and one run that breaks down at step 0
    # and leaves the stack. No tolerance: the runs are chaotic, a last-bit difference would grow.
    from dataclasses import replace

    from whittle_lib.learning import run_lspe_many
    base = LSPESettings(n_steps=1200, record_every=7)
    stack = [base, replace(base, action="sample"), replace(base, kappa=0.5),
             replace(base, action="sample", reward="state", dynamics="deterministic"),
             replace(base, project=False), replace(base, feature_scale=1.0),
             replace(base, step_constant=0.9, feature_scale=10.0),
             replace(base, action="sample", reward="state")]
    seeds = np.random.SeedSequence(11).spawn(len(stack))
    with pytest.warns(RuntimeWarning, match="condition number bound"):
        many = run_lspe_many(MODEL, stack, [np.random.default_rng(s) for s in seeds])
    with pytest.warns(RuntimeWarning, match="condition number bound"):
        one = [run_lspe(MODEL, s, rng=np.random.default_rng(q)) for s, q in zip(stack, seeds)]
    assert one[5].breakdown_at == 0 and sum(r.stopped_at is not None for r in one) >= 1
    for a, b in zip(one, many):
        _fields_equal(a, b)
    # the corrected Sherman-Morrison path (no Tikhonov), stacked apart
    plain = [replace(base, regularise=False), replace(base, regularise=False, project=False)]
    many = run_lspe_many(MODEL, plain, [1, 2])
    for s, seed, b in zip(plain, [1, 2], many):
        _fields_equal(run_lspe(MODEL, s, rng=seed), b)


def test_a_single_run_keeps_the_bits_of_the_former_single_run_loop():
    # run_lspe is now a stack of one (the one implementation, issue 32): every field of the
    # result must be the plain loop's, bit for bit, for every per-run option and both solves,
    # a breakdown and in both arithmetic modes (the two loops in the same mode).
    from dataclasses import replace
    base = LSPESettings(n_steps=1200, record_every=7)
    cases = [base, replace(base, action="sample"), replace(base, kappa=0.5),
             replace(base, action="sample", reward="state", dynamics="deterministic"),
             replace(base, project=False), replace(base, step_constant=0.9, feature_scale=50.0),
             replace(base, regularise=False), replace(base, regularise=False, project=False)]
    for portable in (True, False):
        with fp.portable(portable):
            for k, settings in enumerate(cases):
                _fields_equal(run_lspe(MODEL, settings, rng=k),
                              _reference_run_lspe(MODEL, settings, rng=k))
            broken = replace(base, feature_scale=1.0)
            with pytest.warns(RuntimeWarning):
                want = _reference_run_lspe(MODEL, broken, rng=3)
            with pytest.warns(RuntimeWarning, match="condition number bound"):
                _fields_equal(run_lspe(MODEL, broken, rng=3), want)


def test_stacked_solve_equals_the_portable_single_solve():
    from whittle_lib import _portable as fp
    from whittle_lib.learning.lspe import _solve_spd_rows
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 14, 20)) * np.exp(rng.normal(size=(40, 14, 1)) * 3)
    M = X @ X.swapaxes(1, 2) + 1e-3 * np.eye(14)
    M[3] = -np.eye(14)                                 # not positive definite: all nan
    y = rng.normal(size=(40, 14))
    z = _solve_spd_rows(M, y)
    for k in range(40):
        assert z[k].tobytes() == fp.solve_spd(M[k], y[k]).tobytes()
    assert np.isnan(z[3]).all()


def test_stacked_runs_reject_bad_arguments():
    from whittle_lib.learning import run_lspe_many
    assert run_lspe_many(MODEL, [], []) == []
    with pytest.raises(TypeError, match="model must be a CrawlingModel"):
        run_lspe_many("table one", [LSPESettings()], [0])
    with pytest.raises(ValueError, match="same length"):
        run_lspe_many(MODEL, [LSPESettings()], [0, 1])
    with pytest.raises(TypeError, match="settings must be LSPESettings, got dict"):
        run_lspe_many(MODEL, [{"kappa": 2.0}], [0])
    with pytest.raises(TypeError, match="settings must be a list of LSPESettings"):
        run_lspe_many(MODEL, LSPESettings(), [0])
    with pytest.raises(TypeError, match="rngs must be a list"):
        run_lspe_many(MODEL, [LSPESettings()], 0)
    with pytest.raises(ValueError, match="must share n_steps"):
        run_lspe_many(MODEL, [LSPESettings(n_steps=10), LSPESettings(n_steps=20)], [0, 1])


# -- the single-run loop of before issue 32, kept as the reference of run_lspe's bits ----------

def _stopped_warnings(s, breakdown_at, diverged_at):
    if breakdown_at is not None:
        warnings.warn("LSPE stopped: condition number bound", RuntimeWarning)
    if diverged_at is not None:
        warnings.warn("LSPE diverged", RuntimeWarning)


def _reference_run_lspe(model, settings, *, rng):
    """``run_lspe`` as it was written for one run before it became a stack of one (issue 32):
    the plain loop over the public pieces, whose bits the stacked loop must keep."""
    rng = np.random.default_rng(rng)
    s = settings
    n_src, n_steps = model.n_sources, int(s.n_steps)
    u, alpha, u_star = model.u, model.alpha, model.u_star
    lower, upper = (u, u_star) if s.project else (None, None)
    kappa = np.full(n_src, float(s.kappa))
    a_step, b_step = step_sizes(np.arange(n_steps), s.step_constant)

    q = _initial_q(model, s)
    x = u.copy()                                     # just crawled
    unit = float(s.feature_scale)
    ell = value_features(x).size
    r = np.zeros(ell)
    eta = 0.0
    B = s.epsilon * np.eye(ell)
    B_inv = np.eye(ell) / s.epsilon
    A = np.zeros((ell, ell))
    bvec = np.zeros(ell)

    rewards = np.full(n_steps, np.nan)
    n_active = np.full(n_steps, -1, dtype=int)
    rec_steps = np.arange(0, n_steps, int(s.record_every))
    q_hist = np.full((rec_steps.size, n_src, 3), np.nan)
    t_hist = np.full((rec_steps.size, n_src), np.nan)
    r_hist = np.full(rec_steps.size, np.nan)
    x_hist = np.full((rec_steps.size, n_src), np.nan)
    chunk = 1000
    new_utility = None
    diverged_at = None
    phi = value_features(x / unit)

    limit = 1.0 / np.finfo(float).eps                  # breakdown of the regularised solve
    breakdown_at = None
    max_bound = 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in range(n_steps):
            psi = threshold_basis(x / unit)
            t = fp.dot(q, psi)
            if s.project:
                t = np.clip(t, lower, upper)
            if s.action == "threshold":
                active = x >= t
            else:
                active = rng.random(n_src) < activation_probability(x, t, kappa)
            collected = float(x[active].sum())
            rewards[n], n_active[n] = collected, int(active.sum())
            if n % s.record_every == 0:
                k = n // s.record_every
                q_hist[k], t_hist[k], x_hist[k], r_hist[k] = q, t, x, np.abs(r).max()
            if s.dynamics == "stochastic":
                if n % chunk == 0:
                    new_utility = sample_new_utility(model, min(chunk, n_steps - n), rng=rng)
                x_next = stochastic_step(x, active, new_utility[n % chunk], alpha)
            else:
                x_next = deterministic_step(x, active, u, alpha)
            g = collected if s.reward == "collected" else float(x.sum())
            phi_next = value_features(x_next / unit)

            # averages of Section IV with step b(n); b uses eta(n), before its update
            b_n = b_step[n]
            bvec = running_average(bvec, phi * (g - eta), b_n)
            eta = eta + b_n * (g - eta)
            A = running_average(A, np.outer(phi, phi_next - phi), b_n)     # corrected A
            rhs = fp.matvec(A, r) + bvec
            if s.regularise:
                B = running_average(B, np.outer(phi, phi), b_n)
                bound = float(tikhonov_condition_bound(B, s.delta))
                max_bound = max(max_bound, bound)
                if not bound < limit:
                    breakdown_at = n
                    break
                direction = tikhonov_solve(B, rhs, s.delta)
            else:
                B_inv = sherman_morrison_average(B_inv, phi, b_n)
                direction = fp.matvec(B_inv, rhs)
            value_next = float(fp.dot(r, phi_next))                        # r(n) in (9)
            q = q + a_step[n] * score(x, t, kappa, active, basis=psi) * value_next
            r = r + s.gamma * direction
            if not (np.all(np.isfinite(q)) and np.all(np.isfinite(r))
                    and np.all(np.isfinite(B_inv))):
                diverged_at = n
                break
            x, phi = x_next, phi_next

    with np.errstate(all="ignore"):
        finite = np.all(np.isfinite(B if s.regularise else B_inv))
        condition = float(np.linalg.cond(B if s.regularise else B_inv)) if finite else math.nan
    _stopped_warnings(s, breakdown_at, diverged_at)
    return LSPEResult(rewards=rewards, n_active=n_active, q=q_hist, steps=rec_steps,
                      threshold_history=t_hist, state_history=x_hist, r_norm=r_hist, r=r,
                      condition=condition, eta=float(eta), diverged_at=diverged_at,
                      breakdown_at=breakdown_at,
                      condition_bound=max_bound if s.regularise else math.nan, settings=s)
