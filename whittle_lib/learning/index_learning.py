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

The scheme is generic: :func:`learn_whittle_index` runs it on any *problem* (an arm, its
features and its draws). Two are given:

* :class:`FiniteArmIndexProblem`: any finite arm of your own
  (:class:`~whittle_lib.arms.RestlessArm`, which ``learn_whittle_index`` also takes directly),
  with tabular features; its states must be ordered so that threshold policies are optimal
  (Whittle indices nondecreasing in the state), which it checks. The learned ``y`` is then the
  arm's average-reward Whittle index, state by state;
* :class:`CrawlerIndexProblem`: Section IV's crawler instance, specific to the crawling model
  by the paper's design (a :class:`~whittle_lib.models.crawling.CrawlingModel` only). It
  perturbs the closed-form index of the deterministic model, ``gamma(x) = gamma*(x) +
  Psi(x)^T y`` with the cosine features ``Psi_i = k gamma*(x) cos(i arg(x))``, and optionally
  projects ``y`` onto ``|Psi(X_n)^T y| <= |p gamma*(X_n)|`` (:func:`project_perturbation`,
  exact).

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

import contextvars
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .. import arithmetic as fp
from .._results import ShortRepr
from .._validation import check_choice, check_integer, check_real, check_rng, real_array
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
        positive = dict(low=0.0, high=np.inf, low_open=True, high_open=True)
        object.__setattr__(self, "c0", check_real("c0", self.c0, 0.0, 1.0, low_open=True))
        object.__setattr__(self, "a0", check_real("a0", self.a0, **positive))
        object.__setattr__(self, "c_power", check_real("c_power", self.c_power, 0.5, 1.0,
                                                       low_open=True))
        a_power = check_real("a_power", self.a_power, 0.0, 1.0, low_open=True)
        if not self.c_power < a_power:
            raise ValueError(f"a_power must lie in (c_power={self.c_power!r}, 1] so that "
                             f"a(n) = o(c(n)), got {self.a_power!r}")
        object.__setattr__(self, "a_power", a_power)
        object.__setattr__(self, "n0", check_real("n0", self.n0, **positive))

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
    y_tilde, psi = _finite("y_tilde", y_tilde), _finite("psi", psi)
    bound = real_array("bound", bound, low=0.0)
    if y_tilde.ndim < 1 or psi.shape[-1:] != y_tilde.shape[-1:]:
        raise ValueError(f"y_tilde and psi must have shape (..., K) with one K, got "
                         f"{y_tilde.shape} and {psi.shape}")
    try:
        np.broadcast_shapes(y_tilde.shape[:-1], psi.shape[:-1], bound.shape)
    except ValueError:
        raise ValueError(f"the leading shapes of y_tilde {y_tilde.shape[:-1]}, psi "
                         f"{psi.shape[:-1]} and bound {bound.shape} do not broadcast") from None
    return _project(y_tilde, psi, bound)


def _finite(name, value):
    """An array of finite numbers (any shape)."""
    return real_array(name, value, low=-np.inf, high=np.inf, low_open=True, high_open=True)


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
    every CPU (:func:`whittle_lib.arithmetic.solve_spd`, in either mode).

    Examples
    --------
    >>> lspe_target([0.0, 0.0], [[2.0, 0.0], [0.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [1.0, 2.0])
    array([0.5, 0.5])
    """
    r, B, A, b = (_finite(name, v) for name, v in (("r", r), ("B", B), ("A", A), ("b", b)))
    m = r.shape[-1:] if r.ndim else ()
    if not m or B.shape[-2:] != m * 2 or A.shape[-2:] != m * 2 or b.shape[-1:] != m:
        raise ValueError(f"r and b must have shape (..., m), B and A (..., m, m), got "
                         f"{r.shape}, {B.shape}, {A.shape} and {b.shape}")
    return r + fp.solve_spd(B, fp.matvec(A, r) + b)


# -- the arms -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class FiniteArmIndexProblem:
    """Section III on a finite arm of your own (:class:`~whittle_lib.arms.RestlessArm`), with
    tabular features: the generic entry of :func:`learn_whittle_index`.

    States ``0..n-1``; threshold policy ``x~``: active iff ``x >= x~``. ``kappa`` is uniform
    on ``0..n-1``. ``Phi(x, x~)`` is the indicator of the pair (``m = n**2``), ``Psi(x)`` the
    indicator of ``x`` (``K = n``, so ``y`` is the index itself), no base index and no
    projection. The active and passive successors of (11) are drawn from one uniform by
    inversion (a coupling: each has its own law). The learned ``y`` estimates the arm's
    Whittle index under the average reward, state by state.

    Parameters
    ----------
    arm : RestlessArm
        Indexable, with its states ordered so that threshold policies are optimal: Whittle
        indices (average reward) nondecreasing in the state. Checked here: otherwise the
        scheme's fixed point is not the index, and a ``ValueError`` says which states to swap
        (relabel the states by the order it gives, ``arm`` matrices indexed by it).
    check : bool
        Whether to check the order (the check solves the arm's indices once; ``False`` skips
        it, for an arm known to be ordered).

    Raises
    ------
    TypeError
        For an ``arm`` that is not a :class:`~whittle_lib.arms.RestlessArm`.
    ValueError
        For an arm that is not indexable or whose indices decrease somewhere.

    Notes
    -----
    Whether the iterates settle depends on the step sizes and on how fast the arm's chain
    mixes: on an arm whose active action resets it and whose passive one drifts slowly (a
    wear/repair machine), the index iteration (11) can run away for every step size of
    :class:`StepSizes` we tried. Compare ``y`` with :func:`whittle_lib.whittle_indices` on a
    small instance before trusting a run.

    Examples
    --------
    An arm of one's own, its states relabelled by increasing index (the order the check's
    message gives), then learned:

    >>> import numpy as np
    >>> from whittle_lib import RestlessArm, random_arm, whittle_indices
    >>> arm = random_arm(4, rng=7)
    >>> order = np.argsort(whittle_indices(arm, discount=None).indices)
    >>> mine = RestlessArm(arm.P0[np.ix_(order, order)], arm.P1[np.ix_(order, order)],
    ...                    arm.R0[order], arm.R1[order])
    >>> run = learn_whittle_index(mine, 2_000, rng=2018, steps=StepSizes(a0=0.2))
    >>> exact = whittle_indices(mine, discount=None).indices
    >>> bool(np.abs(run.y - exact).max() < 0.5 < np.ptp(exact))    # a range of 3.3
    True
    """

    arm: RestlessArm
    check: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.arm, RestlessArm):
            raise TypeError(f"arm must be a RestlessArm, got {type(self.arm).__name__}")
        if not isinstance(self.check, (bool, np.bool_)):
            raise TypeError(f"check must be True or False, got {self.check!r}")
        if self.check:
            _check_threshold_order(self.arm)
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


#: The criterion of whittle_indices for the average reward.
_AVERAGE = None


def _check_threshold_order(arm: RestlessArm) -> None:
    """ValueError unless the arm is indexable with indices nondecreasing in the state."""
    from ..indices import whittle_indices
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the verdict below says what went wrong
        result = whittle_indices(arm, discount=_AVERAGE)
    if not result.indexable:
        raise ValueError(f"the arm is not indexable under the average reward "
                         f"({result.status.value}): the scheme learns a Whittle index, which "
                         "it does not have")
    w = np.asarray(result.indices, dtype=float)
    scale = max(1.0, float(np.abs(w).max()))
    drops = np.flatnonzero(np.diff(w) < -1e-9 * scale)
    if drops.size:
        x = int(drops[0])
        order = np.argsort(w, kind="stable").tolist()
        raise ValueError(f"the arm's Whittle index decreases from state {x} to state {x + 1} "
                         f"({w[x]:.6g} > {w[x + 1]:.6g}): threshold policies are not optimal "
                         f"in this state order, and the learned values would not be the index. "
                         f"Relabel the states by increasing index, order {order} (P[order][:, "
                         f"order], R[order])")


@dataclass(frozen=True, eq=False)
class CrawlerIndexProblem:
    r"""Section IV's crawler: one learner per source of a :class:`CrawlingModel`.

    Specific to the crawling model by the paper's design: its base index is the crawling
    model's closed form, its features are scaled by ``u*`` and its draws are the model's
    arrivals (a ``TypeError`` for another model; an arm of your own is
    :class:`FiniteArmIndexProblem`).

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
            raise TypeError(f"model must be a CrawlingModel (Section IV's crawler instance), got "
                            f"{type(self.model).__name__}; for a finite arm of your own use "
                            "FiniteArmIndexProblem(arm)")
        positive = dict(low=0.0, high=np.inf, low_open=True, high_open=True)
        object.__setattr__(self, "k", check_real("k", self.k, **positive))
        variants = isinstance(self.p, (list, tuple, np.ndarray))
        ps = list(self.p) if variants else [self.p]
        if variants and not ps:
            raise ValueError("p must not be an empty sequence")
        ps = [None if v is None else check_real("p", v, **positive) for v in ps]
        object.__setattr__(self, "n_cosines", check_integer("n_cosines", self.n_cosines, 1))
        object.__setattr__(self, "kappa_scale",
                           check_real("kappa_scale", self.kappa_scale, **positive))
        check_choice("base_law", self.base_law, ("exponential", "deterministic"))
        p_arr = np.array([np.inf if v is None else float(v) for v in ps])
        # cached model constants: the properties of CrawlingModel revalidate on every access
        object.__setattr__(self, "_p", p_arr if variants else p_arr[0])
        object.__setattr__(self, "_variants", len(ps) if variants else None)
        object.__setattr__(self, "_u", self.model.u)
        object.__setattr__(self, "_alpha", self.model.alpha)
        object.__setattr__(self, "_u_star", self.model.u_star)
        object.__setattr__(self, "_cos_i", np.arange(1, int(self.n_cosines) + 1, dtype=float))
        # the index with its per-source constants once, portably (crawling.whittle_index would
        # redo them every step)
        object.__setattr__(self, "_index", crawling.ClosedFormIndex.of(self.model))

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
        return crawling._whittle_index(x, *self._index.constants)   # whittle_index, C = 1

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

@dataclass(frozen=True, repr=False)
class IndexLearningResult(ShortRepr):
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
    problem : RestlessArm, FiniteArmIndexProblem or CrawlerIndexProblem
        The arm to learn: a finite arm of your own (a ``RestlessArm`` is
        ``FiniteArmIndexProblem(arm)``), the crawling model's sources
        (:class:`CrawlerIndexProblem`), or anything with the same methods (``draw``,
        ``successors``, ``phi``, ``psi``, ``base_index``, ``bound``, ``reward_active``,
        ``reward_passive``, ``initial_state``, ``step_scale``, ``check_batch_shape``,
        ``n_features``, ``n_index_features``).
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
    ``numpy.add.accumulate``, sequential): the bits are those of the plain loop, which the
    project's test suite keeps as a reference. The problem's methods must broadcast
    over leading axes (``phi``, ``psi``, ``base_index``, ``reward_*`` of shape
    ``(steps, *batch)``).
    """
    if not isinstance(steps, StepSizes):
        raise TypeError(f"steps must be a StepSizes, got {type(steps).__name__}")
    return _learn(problem, n_steps, rng, batch_shape, (steps,), (subsidy_at,), burn_in,
                  regularisation, record_every, record_trajectory, chunk, y0)[0]


def learn_whittle_index_many(problem, n_steps: int, *, rng, steps, subsidy_at="threshold",
                             batch_shape=(), burn_in: int = 0, regularisation: float = 1e-3,
                             record_every: int = 100, record_trajectory: bool = False,
                             chunk: int = 2000, y0=None) -> list:
    """:func:`learn_whittle_index` for several step sizes and subsidy readings, on the same draws.

    ``learn_whittle_index_many(problem, n, rng=seed, steps=S, subsidy_at=A)[k]`` equals
    ``learn_whittle_index(problem, n, rng=seed, steps=S[k], subsidy_at=A[k])`` field for
    field and bit for bit (a test of the project checks it): every run sees the thresholds
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
        raise TypeError(f"steps must be a StepSizes or a list of them, got {steps!r}")
    if isinstance(subsidy_at, str):
        subsidy_at = [subsidy_at]
    elif isinstance(subsidy_at, (list, tuple)):
        subsidy_at = list(subsidy_at)
    else:
        raise TypeError("subsidy_at must be 'threshold', 'state' or a list of them, got "
                        f"{subsidy_at!r}")
    for s in steps:
        if not isinstance(s, StepSizes):
            raise TypeError(f"steps must hold StepSizes, got {type(s).__name__}")
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

#: What the loop asks of a problem.
_PROBLEM_METHODS = ("draw", "successors", "phi", "psi", "base_index", "bound", "reward_active",
                    "reward_passive", "initial_state", "step_scale", "check_batch_shape",
                    "n_features", "n_index_features")


def _as_problem(problem):
    """The problem from what a user passes: a RestlessArm is FiniteArmIndexProblem(arm)."""
    if isinstance(problem, RestlessArm):
        return FiniteArmIndexProblem(problem)
    if isinstance(problem, CrawlingModel):
        raise TypeError("problem must be the learning problem of the model: pass "
                        "CrawlerIndexProblem(model) (Section IV's crawler)")
    missing = [name for name in _PROBLEM_METHODS if not hasattr(problem, name)]
    if missing:
        raise TypeError(f"problem must be a RestlessArm, a FiniteArmIndexProblem, a "
                        f"CrawlerIndexProblem or an object with their methods; "
                        f"{type(problem).__name__} has no {', '.join(missing)}")
    return problem


def _batch_shape(batch_shape) -> tuple:
    """The batch shape: a tuple of positive integers (an integer for one axis)."""
    if isinstance(batch_shape, (int, np.integer)) and not isinstance(batch_shape, bool):
        batch_shape = (batch_shape,)
    if not isinstance(batch_shape, (tuple, list)):
        raise TypeError(f"batch_shape must be a tuple of integers, got "
                        f"{type(batch_shape).__name__} {batch_shape!r}")
    return tuple(check_integer("batch_shape", s, 1) for s in batch_shape)


def _initial_weights(y0, shape):
    y0 = _finite("y0", y0)
    try:
        return np.broadcast_to(y0, shape).copy()
    except ValueError:
        raise ValueError(f"y0 must broadcast to the weights' shape {shape[1:]}, got shape "
                         f"{y0.shape}") from None


def _learn(problem, n_steps, rng, batch_shape, steps, subsidy_at, burn_in, regularisation,
           record_every, record_trajectory, chunk, y0):
    """The coupled iteration for ``len(steps)`` runs stacked along a leading axis."""
    problem = _as_problem(problem)
    n_steps = check_integer("n_steps", n_steps, 1)
    burn_in = check_integer("burn_in", burn_in, 0, n_steps - 1)
    for where in subsidy_at:
        check_choice("subsidy_at", where, ("threshold", "state"))
    regularisation = check_real("regularisation", regularisation, 0.0, np.inf, low_open=True,
                                high_open=True)
    record_every = check_integer("record_every", record_every, 1)
    if not isinstance(record_trajectory, (bool, np.bool_)):
        raise TypeError(f"record_trajectory must be True or False, got {record_trajectory!r}")
    chunk = check_integer("chunk", chunk, 1)
    rng = check_rng(rng)
    shape = _batch_shape(batch_shape)
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
         else _initial_weights(y0, (R,) + shape + (K,)))
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
    # each draw runs in a copy of the caller's context: the arithmetic mode of a
    # ``whittle_lib.portable()`` block holds in the thread (a new thread's context is empty)
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(context.copy().run, problem.draw, min(chunk, n_steps), shape, rng)
        for start in starts:
            drawn = pending.result()
            if start + chunk < n_steps:
                pending = pool.submit(context.copy().run, problem.draw,
                                      min(chunk, n_steps - start - chunk), shape, rng)
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
    """Priority rule ``gamma*(x) + Psi(x)^T y`` of the crawling model, for
    :func:`whittle_lib.models.crawling_policies.simulate_crawling`.

    Parameters
    ----------
    problem : CrawlerIndexProblem
        Gives ``gamma*`` and ``Psi`` (a crawling rule: another problem is a ``TypeError``; the
        learned index of a finite arm is a table, ``result.y``, for the core's
        :func:`whittle_lib.simulate`).
    y : array_like, shape (N, K) or (R, N, K)
        Learned weights, one row per source (and per replication, matching
        ``simulate_crawling(..., replications=R)``).
    """

    problem: CrawlerIndexProblem
    y: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.problem, CrawlerIndexProblem):
            raise TypeError(f"problem must be a CrawlerIndexProblem, got "
                            f"{type(self.problem).__name__}")
        y = np.array(_finite("y", self.y), dtype=float)
        if y.ndim < 2 or y.shape[-1] != self.problem.n_index_features:
            raise ValueError(f"y must have shape (..., N, {self.problem.n_index_features}), "
                             f"got {y.shape}")
        y.setflags(write=False)
        object.__setattr__(self, "y", y)

    def __call__(self, x, age, t):
        return _index(self.problem, x, self.y)
