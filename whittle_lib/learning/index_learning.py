r"""Two-timescale reinforcement learning of the Whittle index (Borkar & Chadha 2018).

Section III of the paper learns the Whittle index of one arm whose optimal policy under any
subsidy is a *threshold* policy (active iff ``x >= x~``). Candidate thresholds ``X~_n`` are
drawn i.i.d. with law ``kappa``; the state ``X_n`` moves with the active kernel if
``X_n >= X~_n`` and the passive kernel otherwise. Two coupled iterations run on this joint
chain:

* the *fast* one, LSPE(0) (Yu & Bertsekas 2009), fits ``V(x, x~) ~ Phi(x, x~)^T r`` to the
  Poisson equation (7)-(8) of the threshold policy ``x~`` under the current subsidy: the least
  squares problem (9) and the relaxation (10), with the recursive sums ``B_n, A_n, b_n`` and the
  average reward ``beta_n``;
* the *slow* one, (11), fits the index ``lambda(x) ~ Psi(x)^T y`` to the indifference condition
  (5): ``R_a(x) - R_b(x) + V(X', x) - V(X'', x)`` with ``X' ~ p_a(.|x)``, ``X'' ~ p_b(.|x)``
  and the value function of the threshold ``x~ = x``. Its step ``a(n) = o(c(n))``.

Section IV's crawler instance (:class:`CrawlerIndexProblem`) perturbs the closed-form index of
the deterministic model, ``gamma(x) = gamma*(x) + Psi(x)^T y`` with the cosine features
``Psi_i = k gamma*(x) cos(i arg(x))``, and optionally projects ``y`` onto
``|Psi(X_n)^T y| <= |p gamma*(X_n)|`` (:func:`project_perturbation`, exact).
:class:`FiniteArmIndexProblem` is the same scheme on a finite arm with tabular features, where
the exact index is known (the tests use it).

Everything is vectorised over a batch of independent learners (sources, replications,
variants): the Python loop runs over time steps only.

References
----------
V. Borkar, K. Chadha, "A Reinforcement Learning Algorithm for Restless Bandits", Indian
Control Conference 2018: Section III (eqs. (7)-(11)), Section IV (the crawler).
H. Yu, D. P. Bertsekas, "Convergence results for some temporal difference methods based on
least squares", IEEE TAC 54(7), 2009 (LSPE).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .. import _portable as fp
from ..models import crawling
from ..arms import RestlessArm
from ..models.crawling import CrawlingModel

__all__ = [
    "StepSizes",
    "project_perturbation",
    "lspe_target",
    "FiniteArmIndexProblem",
    "CrawlerIndexProblem",
    "IndexLearningResult",
    "learn_whittle_index",
    "learn_whittle_index_many",
    "LearnedIndexRule",
]


# -- step sizes -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepSizes:
    r"""The two step-size sequences of the coupled scheme.

    ``c(n) = c0 / (1 + n / n0)**c_power`` for LSPE (10) and
    ``a(n) = a0 / (1 + n / n0)**a_power`` for the index (11). The paper needs
    ``sum c = sum a = inf``, ``sum c**2, sum a**2 < inf`` and ``a(n)/c(n) -> 0``, i.e.
    ``1/2 < c_power < a_power <= 1``.

    Parameters
    ----------
    c0, a0 : float
        Initial steps, ``0 < c0 <= 1`` (``c = 1`` is plain LSPE) and ``a0 > 0``.
    c_power, a_power : float
        Decay exponents, ``1/2 < c_power < a_power <= 1``.
    n0 : float
        Steps before the decay sets in, ``> 0``.
    """

    c0: float = 1.0
    c_power: float = 0.6
    a0: float = 0.05
    a_power: float = 0.8
    n0: float = 1000.0

    def __post_init__(self) -> None:
        if not 0 < self.c0 <= 1:
            raise ValueError(f"c0 must lie in (0, 1], got {self.c0!r}")
        if not (math.isfinite(self.a0) and self.a0 > 0):
            raise ValueError(f"a0 must be positive and finite, got {self.a0!r}")
        if not 0.5 < self.c_power <= 1:
            raise ValueError(f"c_power must lie in (1/2, 1], got {self.c_power!r}")
        if not self.c_power < self.a_power <= 1:
            raise ValueError(f"a_power must lie in (c_power={self.c_power!r}, 1] so that "
                             f"a(n) = o(c(n)), got {self.a_power!r}")
        if not (math.isfinite(self.n0) and self.n0 > 0):
            raise ValueError(f"n0 must be positive and finite, got {self.n0!r}")

    def c(self, n):
        """LSPE step ``c(n)`` of (10)."""
        return self.c0 / fp.power(1.0 + np.asarray(n, dtype=float) / self.n0, self.c_power)

    def a(self, n):
        """Index step ``a(n)`` of (11)."""
        return self.a0 / fp.power(1.0 + np.asarray(n, dtype=float) / self.n0, self.a_power)


# -- the projection Gamma -------------------------------------------------------------------------

def project_perturbation(y_tilde, psi, bound):
    r"""Euclidean projection onto ``{y : |psi^T y| <= bound}`` (Section IV-B, the map Gamma).

    The quadratic program ``min ||y - y~||_2  s.t.  |psi^T y| <= c`` has one (two-sided)
    linear constraint; its solution is

    .. math:: y = \tilde y - \max(0, |\psi^T\tilde y| - c)\,
              \operatorname{sign}(\psi^T \tilde y)\, \psi / \|\psi\|^2 ,

    the move along ``psi`` that puts ``psi^T y`` on the nearer face ``+-c``. Batched over the
    leading axes.

    Parameters
    ----------
    y_tilde, psi : array_like, shape (..., K)
    bound : array_like, shape (...)
        ``c >= 0``; ``inf`` means no constraint.

    Returns
    -------
    y : ndarray, shape (..., K)
    projected : ndarray of bool, shape (...)
        Whether the constraint was active (``y != y~``).

    Examples
    --------
    >>> y, moved = project_perturbation([3.0, 4.0], [1.0, 0.0], 1.0)
    >>> y.tolist(), bool(moved)
    ([1.0, 4.0], True)
    """
    y_tilde = np.asarray(y_tilde, dtype=float)
    psi = np.asarray(psi, dtype=float)
    bound = np.asarray(bound, dtype=float)
    if np.any(bound < 0) or np.any(np.isnan(bound)):
        bad = bound[(bound < 0) | np.isnan(bound)].ravel()[0]
        raise ValueError(f"bound must be >= 0, got {bad!r}")
    return _project(y_tilde, psi, bound)


def _project(y_tilde, psi, bound):
    """:func:`project_perturbation` on arrays already checked (the learning loop's bounds are
    ``|p gamma*|``)."""
    s = np.add.reduce(psi * y_tilde, axis=-1)
    excess = np.maximum(0.0, np.abs(s) - bound)
    norm2 = np.add.reduce(psi * psi, axis=-1)
    projected = excess > 0
    # psi = 0 makes the constraint 0 <= c, always satisfied: excess is 0 there
    coef = np.where(projected, excess * np.sign(s) / np.where(projected, norm2, 1.0), 0.0)
    return y_tilde - coef[..., None] * psi, projected


# -- LSPE(0), eqs. (9)-(10) -----------------------------------------------------------------------

def lspe_target(r, B, A, b):
    r"""The minimiser ``r~_n = r_n + B~_n^{-1}(A~_n r_n + b~_n)`` of (9).

    The common factor ``1/(n+1)`` of ``B~, A~, b~`` cancels, so the sums ``B_n, A_n, b_n``
    can be passed directly. Batched: ``r`` (..., m), ``B``, ``A`` (..., m, m), ``b`` (..., m).
    ``B`` is symmetric positive definite (a sum of ``phi phi^T`` plus the identity); the
    system is solved by Cholesky without LAPACK, so that a learning run gives the same bits on
    every CPU (``whittle_lib._portable``).
    """
    return r + fp.solve_spd(B, fp.matvec(A, r) + b)


# -- the arms -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class FiniteArmIndexProblem:
    """Section III on a finite arm (:class:`~whittle_lib.arms.RestlessArm`), tabular features.

    States ``0..n-1``; threshold policy ``x~``: active iff ``x >= x~``. ``kappa`` is uniform
    on ``0..n-1``. ``Phi(x, x~)`` is the indicator of the pair (``m = n**2``), ``Psi(x)`` the
    indicator of ``x`` (``K = n``, so ``y`` is the index itself), no base index and no
    projection. The active and passive successors of (11) are drawn from one uniform by
    inversion (a coupling: each has its own law).

    Parameters
    ----------
    arm : RestlessArm
        Its Whittle indices must be nondecreasing in the state for the threshold form to hold.
    """

    arm: RestlessArm

    def __post_init__(self) -> None:
        if not isinstance(self.arm, RestlessArm):
            raise ValueError(f"arm must be a RestlessArm, got {type(self.arm).__name__}")
        object.__setattr__(self, "_cdf0", np.cumsum(self.arm.P0, axis=1))
        object.__setattr__(self, "_cdf1", np.cumsum(self.arm.P1, axis=1))

    @property
    def n_states(self) -> int:
        return self.arm.n_states

    @property
    def n_features(self) -> int:
        return self.n_states ** 2

    @property
    def n_index_features(self) -> int:
        return self.n_states

    def check_batch_shape(self, shape):
        """Any batch shape."""
        return tuple(shape)

    def initial_state(self, shape):
        return np.zeros(shape, dtype=np.intp)

    def phi(self, x, x_threshold):
        n = self.n_states
        out = np.zeros(np.shape(x) + (n * n,))
        flat = np.asarray(x) * n + np.asarray(x_threshold)
        np.put_along_axis(out, flat[..., None], 1.0, axis=-1)
        return out

    def psi(self, x, base=None):
        out = np.zeros(np.shape(x) + (self.n_states,))
        np.put_along_axis(out, np.asarray(x)[..., None], 1.0, axis=-1)
        return out

    def base_index(self, x):
        return np.zeros(np.shape(x))

    def bound(self, x, base=None):
        return np.full(np.shape(x), np.inf)

    def reward_active(self, x):
        return self.arm.R1[x]

    def reward_passive(self, x):
        return self.arm.R0[x]

    def draw(self, n_steps, shape, rng):
        """Thresholds ``X~`` (law kappa) and transition noise for ``n_steps`` steps."""
        thresholds = rng.integers(0, self.n_states, size=(n_steps,) + tuple(shape))
        return thresholds, rng.random((n_steps,) + tuple(shape))

    def step_scale(self):
        """1: the tabular features are already O(1)."""
        return 1.0

    def successors(self, x, noise):
        """``(X', X'')``: successors under the active and the passive kernel."""
        cap = self.n_states - 1
        active = np.minimum((self._cdf1[x] <= noise[..., None]).sum(axis=-1), cap)
        passive = np.minimum((self._cdf0[x] <= noise[..., None]).sum(axis=-1), cap)
        return active, passive


@dataclass(frozen=True, eq=False)
class CrawlerIndexProblem:
    r"""Section IV's crawler: one learner per source of a :class:`CrawlingModel`.

    ``R_a(x) = x``, ``R_b = 0``; active: ``X' = U``, passive: ``X'' = alpha X + U`` with the
    same new utility ``U`` (eq. 17; Poisson arrivals, base utilities of law ``base_law``).

    * Value features (Section IV-B): ``Phi = [1, z, z~, z^2, z~^2, z z~]`` with
      ``z = x / u*``, ``z~ = x~ / u*``. Dividing by ``u*`` (the supremum of the deterministic
      state space) makes every feature O(1), so ``B_n`` is well conditioned; the span, hence
      LSPE, is unchanged.
    * Index: ``gamma(x) = gamma*(x) + Psi(x)^T y``, ``Psi_i = k gamma*(x) cos(i arg(x))``,
      ``arg(x) = pi (x - u)(1 - alpha) / (alpha u)`` (0 at ``x = u``, ``pi`` at ``u*``),
      ``i = 1..K``. ``gamma*`` is the exact deterministic index
      (:func:`whittle_lib.models.crawling.whittle_index`).
    * kappa: thresholds uniform on ``[0, kappa_scale u*]``.
    * Projection bound ``|p gamma*(x)|`` (``p = None``: no projection).

    Parameters
    ----------
    model : CrawlingModel
    k : float
        Scale of the cosine features, ``> 0``. With ``k = 1``, ``y_i`` are relative amplitudes.
    p : float, None, or sequence of them
        Fraction of the projection, ``> 0``; ``None`` for the scheme without projection. A
        sequence of ``V`` values runs ``V`` variants side by side on the *same* thresholds and
        utilities (common random numbers): the batch shape is then ``(V, ..., N)``.
    n_cosines : int
        ``K`` (the paper: 6).
    kappa_scale : float
        Upper end of the thresholds' uniform law, in units of ``u*``.
    base_law : {"exponential", "deterministic"}
        Law of the base utilities (:func:`whittle_lib.models.crawling.sample_new_utility`).
    """

    model: CrawlingModel
    k: float = 1.0
    p: float | None | tuple = 0.1
    n_cosines: int = 6
    kappa_scale: float = 1.0
    base_law: str = "exponential"

    def __post_init__(self) -> None:
        if not isinstance(self.model, CrawlingModel):
            raise ValueError(f"model must be a CrawlingModel, got {type(self.model).__name__}")
        if not (math.isfinite(self.k) and self.k > 0):
            raise ValueError(f"k must be positive and finite, got {self.k!r}")
        variants = isinstance(self.p, (list, tuple, np.ndarray))
        ps = list(self.p) if variants else [self.p]
        if variants and not ps:
            raise ValueError("p must not be an empty sequence")
        for v in ps:
            if v is not None and not (isinstance(v, (int, float, np.floating))
                                      and math.isfinite(v) and v > 0):
                raise ValueError(f"p must be positive and finite or None, got {v!r}")
        if int(self.n_cosines) != self.n_cosines or self.n_cosines < 1:
            raise ValueError(f"n_cosines must be a positive integer, got {self.n_cosines!r}")
        if not (math.isfinite(self.kappa_scale) and self.kappa_scale > 0):
            raise ValueError(f"kappa_scale must be positive and finite, got {self.kappa_scale!r}")
        if self.base_law not in ("exponential", "deterministic"):
            raise ValueError("base_law must be 'exponential' or 'deterministic', "
                             f"got {self.base_law!r}")
        p_arr = np.array([np.inf if v is None else float(v) for v in ps])
        # cached model constants: the properties of CrawlingModel revalidate on every access
        object.__setattr__(self, "_p", p_arr if variants else p_arr[0])
        object.__setattr__(self, "_variants", len(ps) if variants else None)
        object.__setattr__(self, "_u", self.model.u)
        object.__setattr__(self, "_alpha", self.model.alpha)
        object.__setattr__(self, "_u_star", self.model.u_star)
        object.__setattr__(self, "_cos_i", np.arange(1, int(self.n_cosines) + 1, dtype=float))
        # the index's per-source constants (crawling.whittle_index would redo them every step)
        object.__setattr__(self, "_index_constants",
                           crawling._index_constants(self._u, self._alpha))

    @property
    def n_features(self) -> int:
        return 6

    @property
    def n_index_features(self) -> int:
        return int(self.n_cosines)

    @property
    def scale(self) -> np.ndarray:
        """``u*`` per source: the unit of the state in the features."""
        return self._u_star

    def check_batch_shape(self, shape):
        """The batch shape, validated: ``(..., N)``, or ``(V, ..., N)`` with ``V`` values
        of ``p``."""
        shape = tuple(shape)
        n = self.model.n_sources
        if shape[-1:] != (n,):
            raise ValueError(f"the batch shape must end with the {n} sources, got {shape}")
        if self._variants is not None and shape[0] != self._variants:
            raise ValueError(f"with {self._variants} values of p the batch shape must "
                             f"start with {self._variants}, got {shape}")
        return shape

    def initial_state(self, shape):
        """``u``, the state just after a crawl."""
        return np.broadcast_to(self._u, shape).astype(float)

    def phi(self, x, x_threshold):
        z = np.asarray(x) / self._u_star
        zt = np.asarray(x_threshold) / self._u_star
        return np.stack([np.ones_like(z), z, zt, z * z, zt * zt, z * zt], axis=-1)

    def base_index(self, x):
        """``gamma*(x)``, the exact index of the deterministic model."""
        return crawling._whittle_index(x, *self._index_constants)   # whittle_index, C = 1

    def psi(self, x, base=None):
        """``Psi(x)``, shape (..., K); ``base`` = ``gamma*(x)`` if already computed."""
        base = self.base_index(x) if base is None else base
        arg = np.pi * (np.asarray(x) - self._u) * (1 - self._alpha) / (self._alpha * self._u)
        return self.k * base[..., None] * fp.cos(self._cos_i * arg[..., None])

    def bound(self, x, base=None):
        """``|p gamma*(x)|`` (``inf`` without projection)."""
        base = self.base_index(x) if base is None else base
        p = self._p
        if self._variants is not None:
            p = p.reshape((-1,) + (1,) * (np.ndim(base) - 1))
        return np.abs(p * base)

    def reward_active(self, x):
        return np.asarray(x, dtype=float)

    def reward_passive(self, x):
        return np.zeros(np.shape(x))

    def draw(self, n_steps, shape, rng):
        """Thresholds ``X~`` (law kappa) and the new utilities ``U_{n+1}`` for ``n_steps``,
        shared by the variants of ``p``."""
        shape = self.check_batch_shape(shape)
        own = shape if self._variants is None else shape[1:]
        thresholds = (rng.uniform(0.0, 1.0, size=(n_steps,) + own)
                      * (self.kappa_scale * self._u_star))
        reps = int(np.prod(own[:-1], dtype=int))
        new = crawling.sample_new_utility(self.model, n_steps * reps, rng=rng,
                                          base_law=self.base_law).reshape((n_steps,) + own)
        if self._variants is not None:
            thresholds = np.broadcast_to(thresholds[:, None], (n_steps,) + shape)
            new = np.broadcast_to(new[:, None], (n_steps,) + shape)
        return thresholds, new

    def successors(self, x, noise):
        """``(X', X'') = (U, alpha X + U)``."""
        return noise, self._alpha * x + noise

    def step_scale(self):
        """``(k u*)**2``: the index step (11) is divided by it, which makes ``a(n)``
        dimensionless (a normalised LMS step); equivalently, the features are
        ``Psi / (k u*)``."""
        return (self.k * self._u_star) ** 2


# -- the coupled iteration ------------------------------------------------------------------------

@dataclass(frozen=True)
class IndexLearningResult:
    """What :func:`learn_whittle_index` did.

    Attributes
    ----------
    y : ndarray, shape (*batch, K)
        Final index weights ``y_n``.
    r : ndarray, shape (*batch, m)
        Final value weights ``r_n``.
    beta : ndarray, shape (*batch)
        Final average reward estimate ``beta_n``.
    B, A, b : ndarray
        The sums ``B_n, A_n, b_n`` of Section III (without the regularisation ``B_{-1}``).
    regularisation : float
        ``B_{-1} = regularisation * I`` added to ``B_n`` before solving.
    y_path : ndarray, shape (n_recorded, *batch, K)
        ``y_n`` every ``record_every`` steps; ``path_steps`` gives the ``n``.
    path_steps : ndarray of int
    projections : ndarray of int, shape (*batch)
        Steps at which the projection acted, after ``burn_in``.
    projections_burn_in : ndarray of int, shape (*batch)
        Steps at which it acted during the burn-in.
    n_steps, burn_in : int
    trajectory : dict or None
        With ``record_trajectory``: ``x``, ``threshold``, ``x_active``, ``x_passive``,
        ``subsidy`` (``lambda_n`` used in ``g``), each of shape (n_steps, *batch).
    """

    y: np.ndarray
    r: np.ndarray
    beta: np.ndarray
    B: np.ndarray
    A: np.ndarray
    b: np.ndarray
    regularisation: float
    y_path: np.ndarray
    path_steps: np.ndarray
    projections: np.ndarray
    projections_burn_in: np.ndarray
    n_steps: int
    burn_in: int
    trajectory: dict | None = field(default=None, repr=False)


def _index(problem, x, y):
    base = problem.base_index(x)
    return base + np.sum(problem.psi(x, base) * y, axis=-1)


def learn_whittle_index(problem, n_steps: int, *, rng, batch_shape=(), steps=StepSizes(),
                        burn_in: int = 0, subsidy_at: str = "threshold",
                        regularisation: float = 1e-3, record_every: int = 100,
                        record_trajectory: bool = False, chunk: int = 2000,
                        y0=None) -> IndexLearningResult:
    r"""Run the coupled LSPE (9)-(10) / index (11) iteration of Section III.

    At step ``n`` with state ``X_n`` and threshold ``X~_n ~ kappa``: draw the successors
    ``X' ~ p_a(.|X_n)``, ``X'' ~ p_b(.|X_n)``, move to ``X_{n+1} = X'`` if ``X_n >= X~_n``
    else ``X''``, and

    * add ``Phi_n Phi_n^T`` to ``B``, ``Phi_n (Phi(X_{n+1}, X~_n) - Phi_n)^T`` to ``A``,
      ``g(X_n, X~_n, lambda_n)`` to the running mean ``beta_n``, and form
      ``b_n = sum_k Phi_k (g_k - beta_n)``;
    * ``r_{n+1} = r_n + c(n) (r~_n - r_n)`` with ``r~_n`` from :func:`lspe_target` (10);
    * ``y~ = y_n - a(n) Psi(X_n) (gamma*(X_n) + Psi(X_n)^T y_n - (R_a - R_b)(X_n)
      - Phi(X', X_n)^T r_n + Phi(X'', X_n)^T r_n)`` (11), and ``y_{n+1} = Gamma y~``
      (:func:`project_perturbation`) where the problem has a projection bound.

    Parameters
    ----------
    problem : FiniteArmIndexProblem or CrawlerIndexProblem
        Anything with the same methods (``draw``, ``successors``, ``phi``, ``psi``,
        ``base_index``, ``bound``, ``reward_active``, ``reward_passive``, ``initial_state``,
        ``step_scale``, ``check_batch_shape``).
    n_steps : int
        Iterations, burn-in included.
    rng : numpy.random.Generator or seed
        Keyword-only.
    batch_shape : tuple of int
        Independent learners run side by side (the crawler's must end with its ``N``
        sources). They share nothing but the Python loop.
    steps : StepSizes
    burn_in : int
        Steps not counted in ``projections`` (the paper removes 34,000 from its figures).
    subsidy_at : {"threshold", "state"}
        Where the subsidy ``lambda_n`` in ``g`` is evaluated: at the threshold
        ``lambda(X~_n)`` (default: the Poisson equation of threshold ``x~`` pays the index of
        ``x~``, which makes the index the fixed point of (5)), or at the state
        ``lambda(X_n)`` as printed after (11).
    regularisation : float
        ``B_{-1} = regularisation * I`` so that ``B_n`` is invertible from the first step;
        its weight in ``B~_n`` vanishes as ``1/(n+1)``.
    record_every : int
        Thinning of ``y_path``.
    record_trajectory : bool
        Keep the whole joint chain (memory ``O(n_steps * batch)``; for tests).
    chunk : int
        Steps whose random inputs are drawn at once (bounds the memory). The order of the
        draws, hence the run, depends on it: keep it fixed to reproduce a run.
    y0 : array_like, optional
        Initial index weights (default 0: the base index).

    Returns
    -------
    IndexLearningResult

    See Also
    --------
    learn_whittle_index_many : several step sizes and subsidy readings on the same draws.

    Notes
    -----
    The joint chain ``(X_n, X~_n)`` does not depend on the iterates: thresholds and successors
    are drawn, and the policy is the threshold rule. So every quantity that depends on the
    chain alone (the features, ``gamma*`` and ``Psi`` at ``X_n``, the sums ``B_n``, ``A_n`` and
    the Cholesky factors of ``B_n + B_{-1}``) is computed for a block of steps at once, and the
    loop over steps does only what depends on ``r_n`` and ``y_n``. Every element-wise operation
    and every sum is the one a step-by-step loop makes, in the same order (``B_n`` by
    ``numpy.add.accumulate``, sequential): the bits are those of the plain loop, which
    ``tests/test_index_learning.py`` keeps as a reference. The problem's methods must broadcast
    over leading axes (``phi``, ``psi``, ``base_index``, ``reward_*`` of shape
    ``(steps, *batch)``).
    """
    if not isinstance(steps, StepSizes):
        raise ValueError(f"steps must be a StepSizes, got {type(steps).__name__}")
    return _learn(problem, n_steps, rng, batch_shape, (steps,), (subsidy_at,), burn_in,
                  regularisation, record_every, record_trajectory, chunk, y0)[0]


def learn_whittle_index_many(problem, n_steps: int, *, rng, steps, subsidy_at="threshold",
                             batch_shape=(), burn_in: int = 0, regularisation: float = 1e-3,
                             record_every: int = 100, record_trajectory: bool = False,
                             chunk: int = 2000, y0=None) -> list:
    """:func:`learn_whittle_index` for several step sizes and subsidy readings, on the same draws.

    ``learn_whittle_index_many(problem, n, rng=seed, steps=S, subsidy_at=A)[k]`` equals
    ``learn_whittle_index(problem, n, rng=seed, steps=S[k], subsidy_at=A[k])`` field for
    field and bit for bit (``tests/test_index_learning.py``): every run sees the thresholds
    and utilities that ``rng`` draws (common random numbers, as a sweep over step sizes
    wants them), so the joint chain, its features and the sums ``B_n``, ``A_n`` are computed
    once for all runs, and each step updates the iterates of all runs with one set of NumPy
    calls.

    Parameters
    ----------
    problem, n_steps, rng, batch_shape, burn_in, regularisation, record_every,
    record_trajectory, chunk, y0
        As for :func:`learn_whittle_index`, shared by the runs. A generator passed as ``rng``
        is used once, for all runs.
    steps : StepSizes or list of StepSizes
    subsidy_at : {"threshold", "state"} or list of them
        One value per run; a single value (or a list of one) is used for every run.

    Returns
    -------
    list of IndexLearningResult
        One per run, in order.

    Examples
    --------
    >>> from whittle_lib.models.crawling import table_one
    >>> problem = CrawlerIndexProblem(table_one(250.0))
    >>> runs = learn_whittle_index_many(problem, 50, rng=1, batch_shape=(4,),
    ...                                 steps=[StepSizes(a0=0.05), StepSizes(a0=0.5)],
    ...                                 subsidy_at=["threshold", "state"])
    >>> [r.y.shape for r in runs]
    [(4, 6), (4, 6)]
    """
    if isinstance(steps, StepSizes):
        steps = [steps]
    elif isinstance(steps, (list, tuple)):
        steps = list(steps)
    else:
        raise ValueError(f"steps must be a StepSizes or a list of them, got {steps!r}")
    if isinstance(subsidy_at, str):
        subsidy_at = [subsidy_at]
    elif isinstance(subsidy_at, (list, tuple)):
        subsidy_at = list(subsidy_at)
    else:
        raise ValueError("subsidy_at must be 'threshold', 'state' or a list of them, got "
                         f"{subsidy_at!r}")
    for s in steps:
        if not isinstance(s, StepSizes):
            raise ValueError(f"steps must hold StepSizes, got {type(s).__name__}")
    if not steps or not subsidy_at:
        raise ValueError("steps and subsidy_at must each give at least one run")
    runs = max(len(steps), len(subsidy_at))
    if {len(steps), len(subsidy_at)} - {1, runs}:
        raise ValueError(f"steps and subsidy_at must have the same length (or one of them a "
                         f"single value), got {len(steps)} and {len(subsidy_at)}")
    steps = steps * runs if len(steps) == 1 else steps
    subsidy_at = subsidy_at * runs if len(subsidy_at) == 1 else subsidy_at
    return _learn(problem, n_steps, rng, batch_shape, tuple(steps), tuple(subsidy_at), burn_in,
                  regularisation, record_every, record_trajectory, chunk, y0)


#: Doubles per work array of a block of precomputed steps (16 MiB): the block's length is
#: this over ``batch size * m**2``, at most a chunk.
_BLOCK_DOUBLES = 1 << 21


def _learn(problem, n_steps, rng, batch_shape, steps, subsidy_at, burn_in, regularisation,
           record_every, record_trajectory, chunk, y0):
    """The coupled iteration for ``len(steps)`` runs stacked along a leading axis."""
    if int(n_steps) != n_steps or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    if int(burn_in) != burn_in or not 0 <= burn_in < n_steps:
        raise ValueError(f"burn_in must be an integer in [0, n_steps), got {burn_in!r}")
    for where in subsidy_at:
        if where not in ("threshold", "state"):
            raise ValueError(f"subsidy_at must be 'threshold' or 'state', got {where!r}")
    if not (math.isfinite(regularisation) and regularisation > 0):
        raise ValueError(f"regularisation must be positive and finite, got {regularisation!r}")
    if int(record_every) != record_every or record_every < 1:
        raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
    if int(chunk) != chunk or chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    rng = np.random.default_rng(rng)
    n_steps, burn_in = int(n_steps), int(burn_in)
    shape = tuple(int(s) for s in np.atleast_1d(batch_shape)) if batch_shape != () else ()
    shape = problem.check_batch_shape(shape)
    m, K = problem.n_features, problem.n_index_features
    R = len(steps)
    run_axis = (R,) + (1,) * len(shape)          # per-run constants against (R, *batch)
    at_state = np.array([w == "state" for w in subsidy_at]).reshape(run_axis)
    threshold_runs = not at_state.all()
    mixed = threshold_runs and at_state.any()    # both readings: choose per run

    x = problem.initial_state(shape)
    r = np.zeros((R,) + shape + (m,))
    y = (np.zeros((R,) + shape + (K,)) if y0 is None
         else np.broadcast_to(np.asarray(y0, float), (R,) + shape + (K,)).copy())
    B = np.zeros(shape + (m, m))                 # the sums of the chain alone: shared by runs
    A = np.zeros(shape + (m, m))
    sum_phi = np.zeros(shape + (m,))
    sum_phi_g = np.zeros((R,) + shape + (m,))
    sum_g = np.zeros((R,) + shape)
    eye = regularisation * np.eye(m)
    step_scale = problem.step_scale()
    projections = np.zeros((R,) + shape, dtype=np.int64)
    projections_burn = np.zeros((R,) + shape, dtype=np.int64)
    path, path_steps = [], []
    traj = ({k: [] for k in ("x", "threshold", "x_active", "x_passive", "subsidy")}
            if record_trajectory else None)
    lanes = int(np.prod(shape, dtype=np.int64))
    block = max(1, _BLOCK_DOUBLES // max(1, lanes * m * m))

    for start, (thresholds, noise) in _prefetched_draws(problem, n_steps, chunk, shape, rng):
        length = min(chunk, n_steps - start)
        # everything that does not depend on the iterates, for the whole chunk at once
        base_t = problem.base_index(thresholds)
        psi_t = problem.psi(thresholds, base_t) if threshold_runs else None
        c_n = np.stack([s.c(np.arange(start, start + length)) for s in steps])
        a_n = np.stack([s.a(np.arange(start, start + length)) for s in steps])
        # the joint chain: threshold rule on drawn successors, whatever the iterates
        xs = np.empty((length,) + np.shape(x), dtype=np.asarray(x).dtype)
        x_act, x_pas = np.empty_like(xs), np.empty_like(xs)
        for j in range(length):
            xs[j] = x
            x_act[j], x_pas[j] = problem.successors(x, noise[j])
            x = np.where(x >= thresholds[j], x_act[j], x_pas[j])
        for b0 in range(0, length, block):
            blk = slice(b0, min(length, b0 + block))
            f = _chain_block(problem, xs[blk], x_act[blk], x_pas[blk], thresholds[blk],
                             B, A, sum_phi, eye)
            B, A, sum_phi = f["B"][-1], f["A"][-1], f["sum_phi"][-1]
            for i in range(blk.stop - b0):
                j = b0 + i
                n = start + j
                if n % record_every == 0:
                    path.append(y.copy())
                    path_steps.append(n)
                psi_x, base_x = f["psi_x"][i], f["base_x"][i]
                # gamma_n(X_n): the subsidy at the state, and the index in (11)
                index_x = base_x + np.add.reduce(psi_x * y, axis=-1)
                if threshold_runs:
                    lam_t = base_t[j] + np.add.reduce(psi_t[j] * y, axis=-1)
                    lam = np.where(at_state, index_x, lam_t) if mixed else lam_t
                else:
                    lam = index_x
                g = np.where(f["active"][i], f["r_active"][i], lam + f["r_passive"][i])
                # LSPE(0): the recursive sums of Section III, then (9)-(10)
                sum_phi_g += f["phi"][i] * g[..., None]
                sum_g += g
                beta = sum_g / (n + 1)
                b = sum_phi_g - beta[..., None] * f["sum_phi"][i]
                r_old = r
                A_r = np.add.reduce(f["A"][i] * r[..., None, :], axis=-1)    # fp.matvec
                target_r = r + fp.solve_cholesky(f["L"][i], f["failed"][i], A_r + b)
                r = r + c_n[:, j].reshape(run_axis + (1,)) * (target_r - r)
                # the index, (11), with r_n (before its update) and the threshold x~ = X_n
                target = (f["reward_gap"][i]
                          + np.add.reduce(f["successor_gap"][i] * r_old, axis=-1))
                error = index_x - target
                step = a_n[:, j].reshape(run_axis) / step_scale * error
                y_tilde = y - step[..., None] * psi_x
                y, moved = _project(y_tilde, psi_x, problem.bound(xs[j], base_x))
                if n < burn_in:
                    projections_burn += moved
                else:
                    projections += moved
                if traj is not None:
                    for key, val in zip(traj, (xs[j], thresholds[j], x_act[j], x_pas[j])):
                        traj[key].append(np.array(val, copy=True))
                    traj["subsidy"].append(np.array(np.broadcast_to(lam, (R,) + shape)))

    beta = sum_g / n_steps
    b_end = sum_phi_g - beta[..., None] * sum_phi
    path = np.asarray(path)
    results = []
    for k in range(R):
        trajectory = None
        if traj is not None:
            trajectory = {key: np.asarray(v) for key, v in traj.items() if key != "subsidy"}
            trajectory["subsidy"] = np.asarray(traj["subsidy"])[:, k]
        results.append(IndexLearningResult(
            y=y[k], r=r[k], beta=beta[k], B=B.copy(), A=A.copy(), b=b_end[k],
            regularisation=float(regularisation), y_path=path[:, k],
            path_steps=np.asarray(path_steps, dtype=np.int64), projections=projections[k],
            projections_burn_in=projections_burn[k], n_steps=n_steps, burn_in=burn_in,
            trajectory=trajectory))
    return results


def _prefetched_draws(problem, n_steps, chunk, shape, rng):
    """``(start, problem.draw(length, shape, rng))`` for each chunk, in order; the next chunk
    is drawn in a thread while the caller works on this one (NumPy's generators and ufuncs
    release the GIL). The same calls on ``rng`` in the same order: the same numbers."""
    starts = range(0, n_steps, chunk)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(problem.draw, min(chunk, n_steps), shape, rng)
        for start in starts:
            drawn = pending.result()
            if start + chunk < n_steps:
                pending = pool.submit(problem.draw, min(chunk, n_steps - start - chunk), shape,
                                      rng)
            yield start, drawn


def _chain_block(problem, x, x_act, x_pas, thresholds, B, A, sum_phi, eye):
    """What steps ``x[0..T-1]`` of the joint chain give, whatever the iterates: features,
    ``gamma*`` and ``Psi`` at ``X_n``, the running sums ``B_n, A_n, sum Phi`` after each step
    (starting from ``B, A, sum_phi``) and the Cholesky factors of ``B_n + eye``."""
    active = x >= thresholds
    x_next = np.where(active, x_act, x_pas)
    base_x = problem.base_index(x)
    phi = problem.phi(x, thresholds)
    B_n = np.add.accumulate(np.concatenate([B[None], phi[..., :, None] * phi[..., None, :]]))[1:]
    dphi = problem.phi(x_next, thresholds) - phi
    A_n = np.add.accumulate(np.concatenate([A[None], phi[..., :, None] * dphi[..., None, :]]))[1:]
    L, failed = fp.cholesky(B_n + eye)
    r_active, r_passive = problem.reward_active(x), problem.reward_passive(x)
    return {"active": active, "base_x": base_x, "psi_x": problem.psi(x, base_x), "phi": phi,
            "B": B_n, "A": A_n, "L": L, "failed": failed,
            "sum_phi": np.add.accumulate(np.concatenate([sum_phi[None], phi]))[1:],
            "r_active": r_active, "r_passive": r_passive, "reward_gap": r_active - r_passive,
            "successor_gap": problem.phi(x_act, x) - problem.phi(x_pas, x)}


# -- the learned index as a policy ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LearnedIndexRule:
    """Priority rule ``gamma*(x) + Psi(x)^T y`` for
    :func:`whittle_lib.models.crawling_policies.simulate`.

    Parameters
    ----------
    problem : CrawlerIndexProblem
        Gives ``gamma*`` and ``Psi``.
    y : array_like, shape (N, K) or (R, N, K)
        Learned weights, one row per source (and per replication, matching
        ``simulate(..., replications=R)``).
    """

    problem: CrawlerIndexProblem
    y: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        y = np.array(self.y, dtype=float)
        if y.ndim < 2 or y.shape[-1] != self.problem.n_index_features:
            raise ValueError(f"y must have shape (..., N, {self.problem.n_index_features}), "
                             f"got {y.shape}")
        y.setflags(write=False)
        object.__setattr__(self, "y", y)

    def __call__(self, x, age, t):
        return _index(self.problem, x, self.y)
