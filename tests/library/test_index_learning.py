"""Tests of whittle_lib.learning.index_learning (Borkar & Chadha 2018, Sections III-IV).

References used:

1. An independent algorithm: the projection Gamma against scipy's SLSQP on the same
   quadratic program, and its KKT conditions; the recursive LSPE sums and the minimiser (9)
   against batch least squares (``numpy.linalg.lstsq``) on the recorded trajectory.
2. A known index: on small finite arms the learned index against the exact average-reward
   Whittle index of ``whittle_lib.indices.whittle_indices``.
3. Invariants: the crawler's learned index is the deterministic index when nothing is
   learned; runs with one seed are identical.
4. The plain loop: ``learn_whittle_index`` computes what depends on the chain alone a block
   of steps at a time; ``_plain_loop`` below is the step-by-step loop it replaced, and both
   give the same bits. ``learn_whittle_index_many`` gives each run the bits it has alone.
"""

import numpy as np
import pytest
from scipy import optimize

from whittle_lib import _portable as fp
from whittle_lib.builders import random_arm
from whittle_lib.models import crawling
from whittle_lib.arms import RestlessArm
from whittle_lib.indices import whittle_indices
from whittle_lib.learning import (
    CrawlerIndexProblem,
    FiniteArmIndexProblem,
    LearnedIndexRule,
    StepSizes,
    learn_whittle_index,
    learn_whittle_index_many,
    lspe_target,
    project_perturbation,
)


# -- the projection ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_projection_solves_the_quadratic_program(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 8))
    y_tilde = rng.normal(size=K) * 3
    psi = rng.normal(size=K)
    bound = abs(rng.normal())
    y, moved = project_perturbation(y_tilde, psi, bound)
    cons = [{"type": "ineq", "fun": lambda v: bound - psi @ v, "jac": lambda v: -psi},
            {"type": "ineq", "fun": lambda v: bound + psi @ v, "jac": lambda v: psi}]
    ref = optimize.minimize(lambda v: 0.5 * np.sum((v - y_tilde) ** 2), y_tilde,
                            jac=lambda v: v - y_tilde, constraints=cons, method="SLSQP",
                            options={"ftol": 1e-14, "maxiter": 200})
    assert ref.success
    # SLSQP stops at ftol 1e-14 on a problem of scale O(1): agreement to 1e-6 is far above
    # its stopping error and far below any wrong-face or wrong-direction error (O(1)).
    np.testing.assert_allclose(y, ref.x, atol=1e-6)
    assert bool(moved) == (abs(psi @ y_tilde) > bound)


@pytest.mark.parametrize("seed", range(20))
def test_projection_kkt_conditions(seed):
    rng = np.random.default_rng(100 + seed)
    K = 6
    y_tilde, psi = rng.normal(size=(2, 5, K)) * [[[3.0]], [[1.0]]]
    bound = np.abs(rng.normal(size=5))
    y, moved = project_perturbation(y_tilde, psi, bound)
    s = np.sum(psi * y, axis=-1)
    # 1e-12: a few ulps of the O(10) quantities involved
    assert np.all(np.abs(s) <= bound + 1e-12)                      # primal feasibility
    for i in range(5):
        shift = y_tilde[i] - y[i]                                   # = mu * sign * psi
        if moved[i]:
            assert abs(abs(s[i]) - bound[i]) <= 1e-12               # the constraint is active
            mult = shift @ psi[i] / (psi[i] @ psi[i])
            # stationarity: y~ - y is parallel to psi, multiplier of the face's sign
            np.testing.assert_allclose(shift, mult * psi[i], atol=1e-12)
            assert mult * np.sign(s[i]) > 0                         # dual feasibility
        else:
            assert np.all(shift == 0)                               # complementary slackness


def test_projection_validates_and_handles_no_constraint():
    y, moved = project_perturbation([1.0, 2.0], [1.0, 1.0], np.inf)
    assert y.tolist() == [1.0, 2.0] and not moved
    y, moved = project_perturbation([1.0, 2.0], [0.0, 0.0], 0.0)   # psi = 0: 0 <= 0 holds
    assert y.tolist() == [1.0, 2.0] and not moved
    with pytest.raises(ValueError, match="bound must lie in \\[0, inf\\], got -1.0"):
        project_perturbation([1.0], [1.0], -1.0)
    with pytest.raises(TypeError, match="psi must be an array of numbers"):
        project_perturbation([1.0], "psi", 1.0)
    with pytest.raises(ValueError, match="same K|one K"):
        project_perturbation([1.0, 2.0], [1.0], 1.0)
    with pytest.raises(ValueError, match="y_tilde must lie in"):
        project_perturbation([np.nan], [1.0], 1.0)


# -- LSPE(0) -----------------------------------------------------------------------------------

def test_recursive_lspe_sums_equal_batch_least_squares():
    model = crawling.table_one(250)
    problem = CrawlerIndexProblem(model, p=0.1)
    n = 400
    res = learn_whittle_index(problem, n, rng=11, batch_shape=(4,), record_trajectory=True)
    tr = res.trajectory
    phi = problem.phi(tr["x"], tr["threshold"])                     # (n, N, m)
    active = tr["x"] >= tr["threshold"]
    x_next = np.where(active, tr["x_active"], tr["x_passive"])
    phi_next = problem.phi(x_next, tr["threshold"])
    g = np.where(active, tr["x"], tr["subsidy"])
    beta = g.mean(axis=0)
    B = np.einsum("tni,tnj->nij", phi, phi)
    A = np.einsum("tni,tnj->nij", phi, phi_next - phi)
    b = np.einsum("tni,tn->ni", phi, g - beta)
    # sums of 400 terms of size O(1) to O(500): rounding differs by the summation order only
    np.testing.assert_allclose(res.B, B, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(res.A, A, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(res.beta, beta, rtol=1e-12)
    np.testing.assert_allclose(res.b, b, rtol=1e-9, atol=1e-6 * np.abs(b).max())
    # (9): r~ minimises sum_k (Phi_k^T r - Phi_k^T r_n - d_n(k))^2 with
    # d_n(k) = g_k - beta_n + Phi(X_{k+1}, X~_k)^T r_n - Phi_k^T r_n. Check it for r_n = res.r.
    for i in range(4):
        r = res.r[i]
        d = g[:, i] - beta[i] + phi_next[:, i] @ r - phi[:, i] @ r
        target = phi[:, i] @ r + d
        r_batch, *_ = np.linalg.lstsq(phi[:, i], target, rcond=None)
        r_rec = lspe_target(r, B[i], A[i], b[i])
        # the same normal equations solved two ways; B's condition number (features scaled
        # to O(1)) is below 1e6, so 1e-6 relative to |r~| bounds the difference
        scale = max(1.0, np.abs(r_batch).max())
        np.testing.assert_allclose(r_rec, r_batch, atol=1e-6 * scale)


# -- convergence to the exact index on finite arms ---------------------------------------------

def _sorted_dense_arm(seed, n):
    """A random arm with all transitions positive, states relabelled by increasing exact
    index: then every optimal policy is a threshold policy in the state order."""
    rng = np.random.default_rng(seed)
    P = rng.exponential(size=(2, n, n))
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((2, n))
    exact = whittle_indices(RestlessArm(P0=P[0], P1=P[1], R0=R[0], R1=R[1]), discount=None)
    o = np.argsort(exact.indices)
    return RestlessArm(P0=P[0][np.ix_(o, o)], P1=P[1][np.ix_(o, o)], R0=R[0][o], R1=R[1][o])


@pytest.mark.slow
@pytest.mark.parametrize("arm_seed", [0, 1])
def test_learned_index_converges_to_exact_whittle_index(arm_seed):
    arm = _sorted_dense_arm(arm_seed, 4)
    exact = whittle_indices(arm, discount=None)
    assert exact.indexable and np.all(np.diff(exact.indices) > 0)
    res = learn_whittle_index(FiniteArmIndexProblem(arm), 20_000, rng=2018, batch_shape=(3,),
                              steps=StepSizes(a0=0.2))
    error = np.abs(res.y - exact.indices).max()
    # After 2e4 steps a(n) = 0.2 / 21**0.8 = 0.018, so the index iterate still carries noise
    # of about sqrt(a/2) ~ 0.1 times the spread of its target (rewards in [0, 1)), plus the lag
    # of r. The worst error over 3 runs is 0.03-0.06 here; 0.15 (12% of the index range of
    # these arms, 1.1-1.3) separates convergence from a wrong fixed point (errors O(1)).
    assert error < 0.15, (res.y, exact.indices)
    # and the ordering of the states, which is what an index policy uses, is right
    assert np.all(np.argsort(res.y.mean(axis=0)) == np.arange(4))


def test_crawler_index_matches_deterministic_index_at_y_zero():
    model = crawling.table_one(250)
    problem = CrawlerIndexProblem(model, p=None)
    rule = LearnedIndexRule(problem, np.zeros((4, 6)))
    x = crawling.visited_states(model.u, model.alpha, np.arange(1, 8)[:, None])
    # y = 0 is exactly gamma*: same arithmetic
    np.testing.assert_array_equal(rule(x, None, 0), crawling.whittle_index(x, model.u, model.alpha))


def test_projection_keeps_the_crawler_perturbation_in_its_band():
    model = crawling.table_one(250)
    problem = CrawlerIndexProblem(model, p=0.05)
    res = learn_whittle_index(problem, 3000, rng=3, batch_shape=(4,), record_trajectory=True)
    x = res.trajectory["x"][-1]
    # after the last step y was projected at the last state: |Psi^T y| <= p gamma*(x)
    pert = np.sum(problem.psi(x) * res.y, axis=-1)
    assert np.all(np.abs(pert) <= 0.05 * np.abs(problem.base_index(x)) * (1 + 1e-12))
    assert res.projections.sum() + res.projections_burn_in.sum() > 0


# -- reproducibility and validation -------------------------------------------------------------

def test_same_seed_same_run():
    problem = CrawlerIndexProblem(crawling.table_one(250), p=(0.1, None))
    one = learn_whittle_index(problem, 600, rng=5, batch_shape=(2, 2, 4))
    two = learn_whittle_index(problem, 600, rng=5, batch_shape=(2, 2, 4))
    np.testing.assert_array_equal(one.y, two.y)
    np.testing.assert_array_equal(one.r, two.r)
    other = learn_whittle_index(problem, 600, rng=6, batch_shape=(2, 2, 4))
    assert not np.array_equal(one.y, other.y)
    assert one.y_path.shape == (6, 2, 2, 4, 6)           # every 100 steps, from step 0


def test_variants_share_random_inputs():
    problem = CrawlerIndexProblem(crawling.table_one(250), p=(1e9, None))
    res = learn_whittle_index(problem, 300, rng=9, batch_shape=(2, 3, 4))
    # p = 1e9 never binds, so both variants run the same iteration on the same draws
    np.testing.assert_array_equal(res.y[0], res.y[1])


@pytest.mark.parametrize("kwargs, match", [
    (dict(c0=0.0), "c0 must lie in"),
    (dict(c_power=0.5), "c_power must lie in"),
    (dict(a_power=0.6), "a_power must lie in"),
    (dict(a0=-1.0), "a0 must lie in"),
    (dict(n0=0.0), "n0 must lie in"),
])
def test_step_sizes_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        StepSizes(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(c0="1"), "c0 must be a number"), (dict(n0=None), "n0 must be a number"),
    (dict(a_power=True), "a_power must be a number"),
])
def test_step_sizes_of_the_wrong_type(kwargs, match):
    with pytest.raises(TypeError, match=match):
        StepSizes(**kwargs)


def test_step_sizes_two_timescales():
    s = StepSizes()
    n = np.array([0, 10**3, 10**5, 10**7])
    assert np.all(np.diff(s.a(n) / s.c(n)) < 0)        # a(n) / c(n) decreases to 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=0.0), "k must lie in"),
    (dict(p=-0.1), "p must lie in"),
    (dict(p=()), "p must not be an empty"),
    (dict(n_cosines=0), "n_cosines must be an integer"),
    (dict(kappa_scale=np.inf), "kappa_scale must lie in"),
    (dict(base_law="gamma"), "base_law must be"),
])
def test_crawler_problem_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CrawlerIndexProblem(crawling.table_one(250), **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(k="1"), "k must be a number"), (dict(p=[0.1, "x"]), "p must be a number"),
    (dict(n_cosines=6.0), "n_cosines must be an integer"), (dict(base_law=1), "base_law must"),
])
def test_crawler_problem_of_the_wrong_type(kwargs, match):
    with pytest.raises(TypeError, match=match):
        CrawlerIndexProblem(crawling.table_one(250), **kwargs)


def test_the_crawler_scheme_takes_a_crawling_model_only():
    # Section IV's instance is the crawling model's by design: another model is a TypeError
    # that names the generic entry
    arm = RestlessArm(P0=np.eye(2), P1=[[1.0, 0.0], [1.0, 0.0]], R0=[0.0, 0.0], R1=[0.0, 1.0])
    with pytest.raises(TypeError, match="model must be a CrawlingModel.*FiniteArmIndexProblem"):
        CrawlerIndexProblem(arm)
    with pytest.raises(TypeError, match="CrawlerIndexProblem\\(model\\)"):
        learn_whittle_index(crawling.table_one(250), 10, rng=0)
    with pytest.raises(TypeError, match="has no draw"):
        learn_whittle_index(object(), 10, rng=0)
    with pytest.raises(TypeError, match="problem must be a CrawlerIndexProblem"):
        LearnedIndexRule(FiniteArmIndexProblem(arm, check=False), np.zeros((2, 2)))


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_steps=0), "n_steps must be an integer >= 1"),
    (dict(burn_in=10), "burn_in must be an integer in \\[0, 9\\]"),
    (dict(subsidy_at="x"), "subsidy_at must be"),
    (dict(regularisation=0.0), "regularisation must lie in"),
    (dict(record_every=0), "record_every must be an integer"),
    (dict(batch_shape=(0,)), "batch_shape must be an integer"),
    (dict(y0=np.zeros(5)), "y0 must broadcast"),
])
def test_learner_validation(kwargs, match):
    args = dict(n_steps=10, rng=0, batch_shape=(4,))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        learn_whittle_index(CrawlerIndexProblem(crawling.table_one(250)), **args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(steps=(1, 2)), "steps must be a StepSizes"),
    (dict(n_steps=10.0), "n_steps must be an integer, got float"),
    (dict(rng=1.5), "rng must be a numpy.random.Generator"),
    (dict(batch_shape="4"), "batch_shape must be a tuple"),
    (dict(record_trajectory="yes"), "record_trajectory must be True or False"),
    (dict(regularisation="1e-3"), "regularisation must be a number"),
    (dict(y0="zeros"), "y0 must be an array of numbers"),
])
def test_learner_arguments_of_the_wrong_type(kwargs, match):
    args = dict(n_steps=10, rng=0, batch_shape=(4,))
    args.update(kwargs)
    with pytest.raises(TypeError, match=match):
        learn_whittle_index(CrawlerIndexProblem(crawling.table_one(250)), **args)


def test_batch_shape_must_end_with_sources():
    with pytest.raises(ValueError, match="must end with the 4 sources"):
        learn_whittle_index(CrawlerIndexProblem(crawling.table_one(250)), 5, rng=0,
                            batch_shape=(3,))
    with pytest.raises(ValueError, match="must start with 2"):
        learn_whittle_index(CrawlerIndexProblem(crawling.table_one(250), p=(0.1, None)), 5,
                            rng=0, batch_shape=(3, 4))


def test_finite_arm_problem_validation():
    with pytest.raises(TypeError, match="arm must be a RestlessArm"):
        FiniteArmIndexProblem(arm=np.eye(2))
    with pytest.raises(TypeError, match="check must be True or False"):
        FiniteArmIndexProblem(random_arm(3, rng=1), check="no")
    # an arm whose index decreases in the state: threshold policies are not optimal, the
    # scheme's fixed point is not the index; the message gives the order to relabel by
    with pytest.raises(ValueError,
                       match="decreases from state 1 to state 2.*order \\[0, 3, 2, 1\\]"):
        FiniteArmIndexProblem(random_arm(4, rng=7))


def test_learned_rule_validation():
    with pytest.raises(ValueError, match="y must have shape"):
        LearnedIndexRule(CrawlerIndexProblem(crawling.table_one(250)), np.zeros(6))


# -- the blocked loop against the plain one; stacked runs against single ones -------------------

def _plain_loop(problem, n_steps, *, rng, batch_shape, steps=StepSizes(), burn_in=0,
                subsidy_at="threshold", regularisation=1e-3, chunk=2000):
    """The coupled iteration step by step, every quantity computed at its step (the loop that
    learn_whittle_index ran before it computed the chain's quantities by blocks)."""
    rng = np.random.default_rng(rng)
    shape = problem.check_batch_shape(tuple(batch_shape))
    m, K = problem.n_features, problem.n_index_features
    x = problem.initial_state(shape)
    r, y = np.zeros(shape + (m,)), np.zeros(shape + (K,))
    B, A = np.zeros(shape + (m, m)), np.zeros(shape + (m, m))
    sum_phi, sum_phi_g, sum_g = np.zeros(shape + (m,)), np.zeros(shape + (m,)), np.zeros(shape)
    eye, step_scale = regularisation * np.eye(m), problem.step_scale()
    projections = np.zeros(shape, dtype=np.int64)
    for start in range(0, n_steps, chunk):
        length = min(chunk, n_steps - start)
        thresholds, noise = problem.draw(length, shape, rng)
        base_t = problem.base_index(thresholds)
        psi_t = problem.psi(thresholds, base_t)
        c_n = steps.c(np.arange(start, start + length))
        a_n = steps.a(np.arange(start, start + length))
        for j in range(length):
            n, xt = start + j, thresholds[j]
            x_a, x_p = problem.successors(x, noise[j])
            active = x >= xt
            x_next = np.where(active, x_a, x_p)
            base_x = problem.base_index(x)
            psi_x = problem.psi(x, base_x)
            if subsidy_at == "threshold":
                lam = base_t[j] + np.sum(psi_t[j] * y, axis=-1)
            else:
                lam = base_x + np.sum(psi_x * y, axis=-1)
            r_active, r_passive = problem.reward_active(x), problem.reward_passive(x)
            g = np.where(active, r_active, lam + r_passive)
            phi = problem.phi(x, xt)
            B += phi[..., :, None] * phi[..., None, :]
            A += phi[..., :, None] * (problem.phi(x_next, xt) - phi)[..., None, :]
            sum_phi += phi
            sum_phi_g += phi * g[..., None]
            sum_g += g
            b = sum_phi_g - (sum_g / (n + 1))[..., None] * sum_phi
            r_old = r
            r = r + c_n[j] * (lspe_target(r, B + eye, A, b) - r)
            target = (r_active - r_passive
                      + np.sum((problem.phi(x_a, x) - problem.phi(x_p, x)) * r_old, axis=-1))
            error = base_x + np.sum(psi_x * y, axis=-1) - target
            y_tilde = y - (a_n[j] / step_scale * error)[..., None] * psi_x
            y, moved = project_perturbation(y_tilde, psi_x, problem.bound(x, base_x))
            if n >= burn_in:
                projections += moved
            x = x_next
    return y, r, B, A, projections


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("case", ["crawler variants", "crawler at the state", "finite arm"])
def test_blocked_loop_has_the_bits_of_the_plain_loop(case, monkeypatch):
    from whittle_lib.learning import index_learning
    model = crawling.table_one(250)
    problem, shape, kw = {
        "crawler variants": (CrawlerIndexProblem(model, p=(0.1, None)), (2, 3, 4), {}),
        "crawler at the state": (CrawlerIndexProblem(model, p=0.05, base_law="deterministic"),
                                 (4,), dict(subsidy_at="state", steps=StepSizes(a0=0.5))),
        # m = 16 features: sums of 8 or more terms, where NumPy's summation is pairwise
        "finite arm": (FiniteArmIndexProblem(random_arm(4, rng=7), check=False), (5,), {}),
    }[case]
    # blocks of 37 steps and chunks of 150: both boundaries fall inside the run
    monkeypatch.setattr(index_learning, "_BLOCK_DOUBLES",
                        37 * int(np.prod(shape)) * problem.n_features ** 2)
    y, r, B, A, projections = _plain_loop(problem, 400, rng=3, batch_shape=shape, chunk=150,
                                          burn_in=50, **kw)
    res = learn_whittle_index(problem, 400, rng=3, batch_shape=shape, chunk=150, burn_in=50,
                              **kw)
    for name, ours, plain in (("y", res.y, y), ("r", res.r, r), ("B", res.B, B), ("A", res.A, A),
                              ("projections", res.projections, projections)):
        assert _same_bits(ours, plain), name


def test_stacked_runs_have_the_bits_of_single_runs():
    problem = CrawlerIndexProblem(crawling.table_one(250), p=(0.05, 0.2, None))
    runs = [(StepSizes(a0=a0), where) for where in ("threshold", "state") for a0 in (0.05, 5.0)]
    kw = dict(batch_shape=(3, 2, 4), burn_in=100, record_every=50, chunk=170,
              record_trajectory=True)
    many = learn_whittle_index_many(problem, 400, rng=np.random.default_rng(8),
                                    steps=[s for s, _ in runs], subsidy_at=[w for _, w in runs],
                                    **kw)
    assert len(many) == len(runs)
    for (steps, where), got in zip(runs, many):
        alone = learn_whittle_index(problem, 400, rng=np.random.default_rng(8), steps=steps,
                                    subsidy_at=where, **kw)
        for field in ("y", "r", "beta", "B", "A", "b", "y_path", "path_steps", "projections",
                      "projections_burn_in"):
            assert _same_bits(getattr(got, field), getattr(alone, field)), (where, field)
        for key in alone.trajectory:
            assert _same_bits(got.trajectory[key], alone.trajectory[key]), (where, key)
    # one subsidy reading for all runs, or one step size for all
    one = learn_whittle_index_many(problem, 60, rng=2, steps=StepSizes(), batch_shape=(3, 1, 4),
                                   subsidy_at=["threshold", "state"])
    assert len(one) == 2 and not np.array_equal(one[0].y, one[1].y)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(steps=[StepSizes()] * 2, subsidy_at=["state"] * 3), ValueError, "same length"),
    (dict(steps=[]), ValueError, "at least one run"),
    (dict(steps=[0.05]), TypeError, "steps must hold StepSizes"),
    (dict(steps=0.05), TypeError, "steps must be a StepSizes or a list"),
    (dict(steps=StepSizes(), subsidy_at=None), TypeError,
     "subsidy_at must be 'threshold', 'state' or"),
    (dict(steps=StepSizes(), subsidy_at=["threshold", "nowhere"]), ValueError,
     "subsidy_at must be"),
])
def test_stacked_runs_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        learn_whittle_index_many(CrawlerIndexProblem(crawling.table_one(250)), 5, rng=0,
                                 batch_shape=(4,), **kwargs)


def test_cholesky_then_solve_is_solve_spd():
    rng = np.random.default_rng(4)
    G = rng.standard_normal((3, 5, 7, 7))
    M = G @ np.swapaxes(G, -1, -2) + 0.1 * np.eye(7)
    M[0, 1] = -np.eye(7)                                  # not positive definite: nan
    y = rng.standard_normal((2, 3, 5, 7))                 # one more leading axis than M
    L, failed = fp.cholesky(M)
    assert failed.tolist() == (np.arange(15).reshape(3, 5) == 1).tolist()
    z = fp.solve_cholesky(L, failed, y)
    assert _same_bits(z, fp.solve_spd(M, y))
    with pytest.raises(ValueError, match="stack"):
        fp.cholesky(np.eye(3))


# -- the generic entry, and the arithmetic mode in the draws' thread ----------------------------

@pytest.mark.slow
def test_a_users_own_arm_is_learned_through_the_generic_entry():
    # a RestlessArm of one's own: the order check says how to relabel its states, and
    # learn_whittle_index takes the relabelled arm directly (FiniteArmIndexProblem(arm))
    arm = random_arm(4, rng=7)
    with pytest.raises(ValueError, match="order \\[0, 3, 2, 1\\]"):
        learn_whittle_index(arm, 10, rng=0)
    o = [0, 3, 2, 1]
    mine = RestlessArm(P0=arm.P0[np.ix_(o, o)], P1=arm.P1[np.ix_(o, o)], R0=arm.R0[o],
                       R1=arm.R1[o])
    exact = whittle_indices(mine, discount=None)
    res = learn_whittle_index(mine, 5_000, rng=2018, batch_shape=(3,), steps=StepSizes(a0=0.2))
    # a(5000) = 0.2 / 6**0.8 = 0.048: noise of about sqrt(a/2) = 0.15 of the target's spread
    # (rewards in [0, 1)); the worst of 3 runs is 0.13 here. 0.4 (12% of the index range, 3.3)
    # separates convergence from a wrong fixed point (errors O(1)).
    assert np.abs(res.y - exact.indices).max() < 0.4
    assert np.all(np.argsort(res.y.mean(axis=0)) == np.arange(4))


class _ModeSpy(FiniteArmIndexProblem):
    """Records the arithmetic mode in which each chunk is drawn (in the prefetch thread)."""

    def draw(self, n_steps, shape, rng):
        from whittle_lib import arithmetic
        self.modes.append(arithmetic.is_portable())
        return super().draw(n_steps, shape, rng)


def test_the_draws_thread_runs_in_the_callers_arithmetic_mode():
    # learn_whittle_index draws the next chunk in a thread; a new thread's context is empty,
    # so the mode of a portable() block must be carried there (the crawler's draws evaluate
    # exp in the arrival sampler)
    from whittle_lib import arithmetic
    spy = _ModeSpy(random_arm(3, rng=1), check=False)
    object.__setattr__(spy, "modes", [])
    with arithmetic.portable():
        learn_whittle_index(spy, 50, rng=1, chunk=10)
    assert spy.modes == [True] * 5
    spy.modes.clear()
    learn_whittle_index(spy, 50, rng=1, chunk=10)
    assert spy.modes == [False] * 5
    # and the crawler learns the same bits as a run drawn without a thread would, in each mode
    problem = CrawlerIndexProblem(crawling.table_one(250))
    for portable in (True, False):
        with arithmetic.portable(portable):
            got = learn_whittle_index(problem, 300, rng=4, batch_shape=(4,), chunk=100)
            y, r, *_ = _plain_loop(problem, 300, rng=4, batch_shape=(4,), chunk=100)
        assert _same_bits(got.y, y) and _same_bits(got.r, r)
