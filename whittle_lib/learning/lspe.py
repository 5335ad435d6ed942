"""LSPE(0) learning of a parametrised threshold policy for crawling (Avrachenkov & Borkar 2019).

Section III of the paper writes the Whittle policy of the crawling problem as a threshold policy
per source: source ``i`` is crawled when ``x_i >= T_i(x_-i)``. The threshold is approximated by
``T_i(x_-i) = sum_j q^i_j psi_j(x_-i)`` with the basis of Section V,
``psi(x_-i) = [1, s_i, s_i**2]``, ``s_i = sum_{k != i} x_k`` (:func:`threshold_basis`), and the
indicator by the logistic ``f_i = sigma(kappa_i (x_i - T_i - 0.5))``
(:func:`activation_probability`).
The parameters ``q`` follow the stochastic gradient ascent (9), the likelihood-ratio estimate
(7) of the gradient of the average reward, with the score (8) (:func:`score`) and a value
function ``V(x) = r . phi(x)`` on quadratic features (:func:`value_features`) learnt by LSPE(0)
(Section IV; Yu & Bertsekas 2009). :func:`run_lspe` runs the coupled scheme,
:func:`run_lspe_many` several runs of it in lock-step (the one implementation: a single run is
a stack of one).

The scheme is the crawling model's by the paper's design: the threshold policy of Section III,
its basis (the states of the *other* sources) and the value features of Section V are those of
:class:`~whittle_lib.models.crawling.CrawlingModel`, whose dynamics (eqs. (2)-(3), (17)) the
runs simulate. ``run_lspe`` takes a ``CrawlingModel`` only (``TypeError`` otherwise); the
learning scheme for an arm of your own is :func:`whittle_lib.learning.learn_whittle_index`.

The recursions as printed contain typos; this module implements the corrected ones
(:func:`sherman_morrison_average` and :func:`running_average`, derived in their Notes):

* the A recursion prints ``phi(X(n)) phi(X(n+1))^T - phi(X(n))^T``, an ``l x l`` matrix minus a
  row vector; the LSPE(0) matrix is ``phi(X(n)) (phi(X(n+1)) - phi(X(n)))^T``;
* the Sherman-Morrison update prints ``B^-1(n)`` (the unknown) on its right-hand side where
  ``B^-1(n-1)`` belongs, and its factors ``n/(n-1)`` and ``n-1`` belong to the average with
  step ``1/n``, not to the printed step ``1/(n+1)`` (for which they are ``(n+1)/n`` and ``n``,
  and which at ``n = 0`` erases ``B(-1) = eps I`` and leaves a singular ``B(0)``). We use the
  form exact for any step ``b`` in (0, 1).

References
----------
K. Avrachenkov, V. S. Borkar, "A learning algorithm for the Whittle index policy for scheduling
web crawlers", Allerton 2019 (hal-02416599), Sections III-V, eqs. (7)-(9).
H. Yu, D. P. Bertsekas, "Convergence results for some temporal difference methods based on least
squares", IEEE TAC 54(7), 2009.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from .. import arithmetic as fp
from .._results import ShortRepr
from .._validation import check_choice, check_integer, check_real, check_rng, real_array
from ..models.crawling import CrawlingModel, sample_new_utility

__all__ = [
    "threshold_basis",
    "thresholds",
    "activation_probability",
    "score",
    "value_features",
    "running_average",
    "sherman_morrison_average",
    "tikhonov_system",
    "tikhonov_condition_bound",
    "tikhonov_solve",
    "step_sizes",
    "LSPESettings",
    "LSPEResult",
    "run_lspe",
    "run_lspe_many",
]

_ACTIONS = ("threshold", "sample")
_DYNAMICS = ("stochastic", "deterministic")
_REWARDS = ("collected", "state")


# -- the policy of Section III -------------------------------------------------------------------

def threshold_basis(x):
    """The threshold basis of Section V: ``psi(x_-i) = [1, s_i, s_i**2]``, ``s_i = sum_{k!=i} x_k``.

    The paper prints ``q_1^i`` on both the linear and the quadratic term; we read the second as
    ``q_2^i`` (three free parameters per source).

    Parameters
    ----------
    x : array_like, shape (..., N)

    Returns
    -------
    ndarray, shape (..., N, 3)

    Examples
    --------
    >>> threshold_basis([1.0, 2.0, 3.0])[0]
    array([ 1.,  5., 25.])
    """
    x = _finite("x", x)
    if x.ndim < 1:
        raise ValueError(f"x must hold the states of the N sources, shape (..., N), got a "
                         f"number {float(x)!r}")
    return _threshold_basis(x)


def _finite(name, value):
    """An array of finite numbers (any shape)."""
    return real_array(name, value, low=-np.inf, high=np.inf, low_open=True, high_open=True)


def _threshold_basis(x):
    x = np.asarray(x, dtype=float)
    s = x.sum(axis=-1, keepdims=True) - x
    return np.stack([np.ones_like(s), s, s * s], axis=-1)


def thresholds(q, x, *, lower=None, upper=None):
    """``T_i(x_-i) = sum_j q^i_j psi_j(x_-i)``, optionally projected onto ``[lower_i, upper_i]``.

    Section V projects the thresholds onto ``[u_i, u_i / (1 - alpha_i)]``, the range of the
    states; pass ``lower=model.u, upper=model.u_star`` for it.

    Parameters
    ----------
    q : array_like, shape (N, 3)
    x : array_like, shape (N,)
    lower, upper : array_like, shape (N,), optional

    Examples
    --------
    >>> thresholds([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [3.0, 4.0]).tolist()
    [1.0, 3.0]
    """
    x = _finite("x", x)
    q = _finite("q", q)
    if x.ndim != 1 or q.shape != (x.size, 3):
        raise ValueError(f"q must have shape (N, 3) and x shape (N,), got {q.shape} and "
                         f"{x.shape}")
    for name, bound in (("lower", lower), ("upper", upper)):
        if bound is not None:
            bound = real_array(name, bound, ndim=(0, 1))
            if bound.ndim and bound.shape != x.shape:
                raise ValueError(f"{name} must have shape {x.shape}, got {bound.shape}")
    t = fp.dot(q, _threshold_basis(x))
    if lower is not None or upper is not None:
        t = np.clip(t, lower, upper)
    return t


def activation_probability(x, t, kappa):
    """The logistic surrogate of Section III, ``f_i = e^z / (1 + e^z)``,
    ``z = kappa_i (x_i - T_i - 0.5)``.

    Evaluated as ``scipy.special.expit(z)``, which equals the printed form wherever that form is
    finite and does not overflow for ``z > 709``.

    Parameters
    ----------
    x, t : array_like, shape (..., N)
        States and thresholds, finite.
    kappa : float or array_like, shape (N,)
        Positive and finite.

    Examples
    --------
    >>> float(activation_probability(2.5, 2.0, 1.0))
    0.5
    """
    x, t = _finite("x", x), _finite("t", t)
    kappa = _kappa(kappa)
    return _activation_probability(x, t, kappa)


def _kappa(kappa):
    return real_array("kappa", kappa, low=0.0, high=np.inf, low_open=True, high_open=True)


def _activation_probability(x, t, kappa):
    gap = np.asarray(x, float) - np.asarray(t, float) - 0.5
    return expit(np.asarray(kappa, dtype=float) * gap)


def score(x, t, kappa, active, *, basis=None):
    """The score ``d log p(y | x) / d q^i_j`` of eq. (8), for every source and basis function.

    With ``f_i`` the activation probability and ``a_i = 1`` if source ``i`` went to ``u_i``
    (active), eq. (8) reads ``kappa_i (I{passive}/(1 - f_i) - I{active}/f_i) psi_j f_i (1 - f_i)``,
    which simplifies to ``kappa_i (f_i - a_i) psi_j(x_-i)``: the form computed here, finite even
    where ``f_i`` rounds to 0 or 1. Only ``q^i`` enters ``p_i``, so the score of the product
    ``p = prod_i p_i`` with respect to ``q^i`` is that of ``p_i`` alone.

    Parameters
    ----------
    x, t : array_like, shape (N,)
        States and (projected) thresholds.
    kappa : array_like, shape (N,) or scalar
    active : array_like of bool, shape (N,)
    basis : ndarray, shape (N, 3), optional
        ``threshold_basis(x)`` if already computed.

    Returns
    -------
    ndarray, shape (N, 3)
    """
    x, t, kappa = _finite("x", x), _finite("t", t), _kappa(kappa)
    active = np.asarray(active)
    if active.dtype != bool:
        raise TypeError(f"active must be a boolean array (True: crawled), got dtype "
                        f"{active.dtype}")
    if x.ndim != 1 or t.shape != x.shape or active.shape != x.shape:
        raise ValueError(f"x, t and active must have one shape (N,), got {x.shape}, {t.shape} "
                         f"and {active.shape}")
    psi = _threshold_basis(x) if basis is None else _finite("basis", basis)
    if psi.shape != (x.size, 3):
        raise ValueError(f"basis must have shape ({x.size}, 3), got {psi.shape}")
    f = _activation_probability(x, t, kappa)
    kappa = np.broadcast_to(np.asarray(kappa, dtype=float), f.shape)
    return (kappa * (f - np.asarray(active, dtype=float)))[:, None] * psi


def value_features(x):
    """The features of Section V, ``phi(x) = [x_1 .. x_N, x_1^2, x_1 x_2, .., x_{N-1} x_N, x_N^2]``.

    Length ``N + N (N + 1) / 2`` (14 for ``N = 4``); no constant (the value function of the
    average-reward problem is defined up to one).

    Examples
    --------
    >>> value_features([1.0, 2.0])
    array([1., 2., 1., 2., 4.])
    """
    x = _finite("x", x)
    if x.ndim < 1:
        raise ValueError(f"x must hold the states of the N sources, shape (..., N), got a "
                         f"number {float(x)!r}")
    i, j = np.triu_indices(x.shape[-1])
    return np.concatenate([x, x[..., i] * x[..., j]], axis=-1)


# -- the recursions of Section IV ----------------------------------------------------------------

def running_average(mean, sample, step):
    """One step of the averages of Section IV: ``mean + step (sample - mean)``.

    With ``step = 1/(n+1)`` from ``n = 0`` this is the sample mean of the first ``n + 1``
    samples (the printed step); the paper allows any ``b(n)`` (see :func:`step_sizes`).
    The corrected ``A`` recursion uses ``sample = phi(X(n)) (phi(X(n+1)) - phi(X(n)))^T``.

    Parameters
    ----------
    mean, sample : array_like
        Of shapes that broadcast.
    step : float or array_like
        In (0, 1].

    Examples
    --------
    >>> float(running_average(1.0, 3.0, 0.5))
    2.0
    """
    mean, sample = _finite("mean", mean), _finite("sample", sample)
    step = real_array("step", step, low=0.0, high=1.0, low_open=True)
    try:
        np.broadcast_shapes(mean.shape, sample.shape, step.shape)
    except ValueError:
        raise ValueError(f"mean, sample and step must broadcast, got shapes {mean.shape}, "
                         f"{sample.shape} and {step.shape}") from None
    return _running_average(mean, sample, step)


def _running_average(mean, sample, step):
    return mean + step * (np.asarray(sample, dtype=float) - mean)


def sherman_morrison_average(inverse, v, step):
    """Inverse of ``(1 - b) B + b v v^T`` from ``B^-1``: the corrected update of Section IV.

    Parameters
    ----------
    inverse : ndarray, shape (l, l)
        ``B^-1(n-1)``.
    v : ndarray, shape (l,)
        ``phi(X(n))``.
    step : float
        ``b`` in (0, 1).

    Returns
    -------
    ndarray
        ``B^-1(n)`` for ``B(n) = B(n-1) + b (v v^T - B(n-1))``.

    Notes
    -----
    ``B(n) = (1 - b) [B(n-1) + (b/(1-b)) v v^T]`` and the Sherman-Morrison formula give

    .. math:: B^{-1}(n) = \\frac{1}{1-b}\\Big(B^{-1}(n-1)
              - \\frac{B^{-1}(n-1) v v^T B^{-1}(n-1)}{(1-b)/b + v^T B^{-1}(n-1) v}\\Big).

    With ``b = 1/(n+1)`` the factors are ``(n+1)/n`` and ``n``. The paper prints ``n/(n-1)`` and
    ``n - 1`` (the factors for ``b = 1/n``) and ``B^-1(n)`` instead of ``B^-1(n-1)`` in the
    numerator. The project's tests check this update against a direct inverse.
    """
    step = check_real("step", step, 0.0, 1.0, low_open=True, high_open=True)
    inverse, v = _finite("inverse", inverse), _finite("v", v)
    if v.ndim != 1 or inverse.shape != (v.size, v.size):
        raise ValueError(f"inverse must have shape (l, l) and v shape (l,), got {inverse.shape} "
                         f"and {v.shape}")
    bv = fp.matvec(inverse, v)
    return (inverse - np.outer(bv, bv) / ((1.0 - step) / step + fp.dot(v, bv))) / (1.0 - step)


def _gram(B):
    """``B^T B`` without BLAS: element-wise products summed along one axis."""
    Bt = np.asarray(B, dtype=float).T
    return (Bt[:, None, :] * Bt[None, :, :]).sum(axis=-1)


def _tikhonov_arguments(B, delta):
    B = _finite("B", B)
    if B.ndim != 2 or B.shape[0] != B.shape[1] or not B.size:
        raise ValueError(f"B must be a square matrix, got shape {B.shape}")
    return B, check_real("delta", delta, 0.0, np.inf, low_open=True, high_open=True)


def tikhonov_system(B, delta):
    """``B^T B + delta I``, the matrix of the regularised inverse of Section V (without BLAS).

    ``B`` is square and finite, ``delta`` positive.

    Examples
    --------
    >>> tikhonov_system([[1.0, 2.0], [0.0, 1.0]], 1.0).tolist()
    [[2.0, 2.0], [2.0, 6.0]]
    """
    B, delta = _tikhonov_arguments(B, delta)
    return _gram(B) + delta * np.eye(B.shape[0])


def tikhonov_condition_bound(B, delta):
    """An upper bound on the 2-norm condition number of ``B^T B + delta I``.

    The eigenvalues of the symmetric matrix ``B^T B + delta I`` lie in
    ``[delta, ||B^T B||_F + delta]``, so its condition number is at most
    ``(||B^T B||_F + delta) / delta``. :func:`run_lspe` stops the regularised scheme when this
    bound reaches ``1 / eps`` (``eps`` the double-precision machine epsilon): beyond it the
    solve's relative error bound ``cond * eps`` exceeds 1 and no digit of the direction is
    guaranteed. The bound uses no BLAS or LAPACK, so the step at which it is crossed is the same
    on every CPU.

    Examples
    --------
    >>> float(tikhonov_condition_bound([[1.0, 0.0], [0.0, 0.0]], 1.0))
    2.0
    """
    B, delta = _tikhonov_arguments(B, delta)
    BtB = _gram(B)
    return (np.sqrt((BtB * BtB).sum()) + delta) / delta


def tikhonov_solve(B, y, delta):
    """``(B^T B + delta I)^-1 B^T y``: the regularised inverse of Section V applied to ``y``.

    Solved by Cholesky without BLAS or LAPACK, so that a learning run gives the same bits on
    every CPU (:func:`whittle_lib.arithmetic.solve_spd`, in either mode); all ``nan`` if the
    system is not positive definite in floating point.

    Examples
    --------
    >>> tikhonov_solve([[1.0, 0.0], [0.0, 1.0]], [2.0, 1.0], 3.0).tolist()   # (4 I)^-1 (2, 1)
    [0.5, 0.25]
    """
    B, delta = _tikhonov_arguments(B, delta)
    y = _finite("y", y)
    if y.shape != B.shape[:1]:
        raise ValueError(f"y must have shape {B.shape[:1]}, got {y.shape}")
    return fp.solve_spd(_gram(B) + delta * np.eye(B.shape[0]), fp.matvec(B.T, y))


def step_sizes(n, c, *, a_period=500, b_period=1000, b_power=2.0 / 3.0):
    """The example step sizes of Section IV: ``a(n) = c/ceil(n/500)``,
    ``b(n) = c/ceil(n/1000)**(2/3)``.

    As printed both divide by zero at ``n = 0`` (``ceil(0) = 0``); we use ``ceil((n+1)/500)``,
    i.e. ``a(n) = c`` for the first 500 steps. ``a(n) = o(b(n))`` as (9) requires.

    Parameters
    ----------
    n : int or array_like of int
        Steps, ``>= 0``.
    c : float
        Positive and finite.
    a_period, b_period, b_power : float
        Positive and finite.

    Returns
    -------
    a, b : ndarray

    Examples
    --------
    >>> a, b = step_sizes([0, 499, 500], 0.5)
    >>> a.tolist()
    [0.5, 0.5, 0.25]
    """
    n = real_array("n", n, low=0.0, high=np.inf, high_open=True)
    if np.any(n != np.floor(n)):
        raise ValueError(f"n must hold whole numbers of steps, got {n[n != np.floor(n)][0]!r}")
    c = check_real("c", c, 0.0, np.inf, low_open=True, high_open=True)
    for name, v in (("a_period", a_period), ("b_period", b_period), ("b_power", b_power)):
        check_real(name, v, 0.0, np.inf, low_open=True, high_open=True)
    a = c / np.ceil((n + 1.0) / a_period)
    b = c / fp.power(np.ceil((n + 1.0) / b_period), b_power)
    return a, b


# -- settings, results and the coupled scheme ----------------------------------------------------

@dataclass(frozen=True)
class LSPESettings:
    """Parameters of the learning scheme (Section V's values by default).

    Parameters
    ----------
    kappa : float
        Steepness of the logistic ``f_i`` (Section V: 2).
    gamma : float
        LSPE(0) step ``gamma`` of the ``r`` update (Section V: 0.05).
    n_steps : int
        Periods simulated (Section V: ``N = 10000``).
    step_constant : float
        ``c`` in (0, 1) of the step sizes (:func:`step_sizes`); the paper does not give it.
    epsilon : float
        ``B(-1) = epsilon I``; not given in the paper.
    project : bool
        Project the thresholds onto ``[u_i, u_i/(1-alpha_i)]`` (Section V's first fix).
    regularise : bool
        Replace ``B^-1`` by ``(B^T B + delta I)^-1 B^T`` (Section V's second fix); if False the
        corrected Sherman-Morrison recursion is used.
    delta : float
        Tikhonov parameter; "small" in the paper.
    action : {"threshold", "sample"}
        ``"threshold"``: crawl source ``i`` iff ``x_i >= T_i(x_-i)`` (the operative policy of
        Section III); ``"sample"``: crawl with probability ``f_i`` (the surrogate taken
        literally).
    dynamics : {"stochastic", "deterministic"}
        Eq. (1) (random utility arrives each period, :func:`crawling.sample_new_utility`) or the
        mean dynamics (2)-(3).
    reward : {"collected", "state"}
        One-period reward used by the learner: ``sum_i X_i nu_i`` (the objective of Section II)
        or ``sum_i X_i`` as printed in eq. (6) and in the ``eta`` and ``b`` recursions.
    q0 : tuple of 3 floats, or None
        Initial ``(q_0, q_1, q_2)`` of every source; None: ``q_0^i`` at the middle of
        ``[u_i, u_i/(1-alpha_i)]``, ``q_1 = q_2 = 0``. Not given in the paper.
    feature_scale : float
        Unit in which states enter the features ``phi`` and the basis ``psi``: both are
        evaluated at ``x / feature_scale``. The paper does not say which unit it used; 1 is the
        paper literally (states in the hundreds, ``phi`` up to ``2.5e5``, ``B^T B`` singular in
        double precision, so the Tikhonov solve fails within a few dozen steps). The default
        100 puts the features in ``[0, 25]``. ``kappa`` and the ``0.5`` of ``f_i`` stay in the
        units of ``x``.
    record_every : int
        Keep ``q`` every this many steps.
    """

    kappa: float = 2.0
    gamma: float = 0.05
    n_steps: int = 10_000
    step_constant: float = 0.5
    epsilon: float = 1.0
    project: bool = True
    regularise: bool = True
    delta: float = 1e-3
    action: str = "threshold"
    dynamics: str = "stochastic"
    reward: str = "collected"
    q0: tuple | None = None
    feature_scale: float = 100.0
    record_every: int = 10

    def __post_init__(self):
        for name in ("kappa", "gamma", "epsilon", "delta", "feature_scale"):
            object.__setattr__(self, name, check_real(name, getattr(self, name), 0.0, np.inf,
                                                      low_open=True, high_open=True))
        object.__setattr__(self, "step_constant",
                           check_real("step_constant", self.step_constant, 0.0, 1.0,
                                      low_open=True, high_open=True))
        for name in ("n_steps", "record_every"):
            object.__setattr__(self, name, check_integer(name, getattr(self, name), 1))
        for name in ("project", "regularise"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got "
                                f"{type(getattr(self, name)).__name__} {getattr(self, name)!r}")
        for name, allowed in (("action", _ACTIONS), ("dynamics", _DYNAMICS),
                              ("reward", _REWARDS)):
            check_choice(name, getattr(self, name), allowed)
        if self.q0 is not None:
            q0 = real_array("q0", self.q0, low=-np.inf, high=np.inf, low_open=True,
                            high_open=True, ndim=1)
            if q0.shape != (3,):
                raise ValueError(f"q0 must be three finite numbers, got {self.q0!r}")
            object.__setattr__(self, "q0", tuple(float(v) for v in q0))


@dataclass(frozen=True, repr=False)
class LSPEResult(ShortRepr):
    """A run of :func:`run_lspe`.

    Attributes
    ----------
    rewards : ndarray, shape (n_steps,)
        Utility collected each period, ``sum_i X_i(n) nu_i(n)`` (nan after an early stop).
    n_active : ndarray, shape (n_steps,)
        Sources crawled each period (-1 after an early stop).
    q : ndarray, shape (n_records, N, 3)
        Threshold parameters at steps ``steps``.
    steps : ndarray
        Steps at which ``q`` was recorded.
    state_history : ndarray, shape (n_records, N)
        ``X(n)`` at the recorded steps.
    r_norm : ndarray, shape (n_records,)
        ``max_m |r_m|`` at the recorded steps (the size of the value-function weights).
    threshold_history : ndarray, shape (n_records, N)
        ``T_i(x_-i(n))`` (projected if projection is on) at the recorded steps.
    r : ndarray
        Final value-function weights.
    condition : float
        2-norm condition number of the final ``B`` (from ``B^-1`` without regularisation).
    eta : float
        Final average-reward estimate ``eta``.
    diverged_at : int or None
        First step at which ``q``, ``r`` or the inverse became non-finite (the run stops there).
    breakdown_at : int or None
        With ``regularise=True``: first step at which the bound
        :func:`tikhonov_condition_bound` on the condition number of ``B^T B + delta I`` reached
        ``1/eps`` (about ``4.5e15``); the run stops there, before solving. The criterion is
        stated, not "the linear solver raised", and it is evaluated without BLAS, so it stops
        at the same step on every CPU.
    condition_bound : float
        Largest value of that bound over the run (nan without regularisation).
    """

    rewards: np.ndarray
    n_active: np.ndarray
    q: np.ndarray
    steps: np.ndarray
    threshold_history: np.ndarray
    state_history: np.ndarray
    r_norm: np.ndarray
    r: np.ndarray
    condition: float
    eta: float
    diverged_at: int | None = None
    breakdown_at: int | None = None
    condition_bound: float = math.nan
    settings: LSPESettings = field(default_factory=LSPESettings)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    @property
    def broke_down(self) -> bool:
        """Whether the regularised solve broke down (see ``breakdown_at``)."""
        return self.breakdown_at is not None

    @property
    def stopped_at(self) -> int | None:
        """The step at which the run stopped early (breakdown or divergence), or None."""
        return self.breakdown_at if self.breakdown_at is not None else self.diverged_at

    def average_reward(self, burn_in: int = 0) -> float:
        """Time average of the collected reward after ``burn_in`` steps (nan if stopped early)."""
        return float(np.mean(self.rewards[burn_in:]))

    def average_active(self, burn_in: int = 0) -> float:
        """Time average of the number of sources crawled after ``burn_in`` steps (nan if stopped
        early)."""
        return float(np.mean(self.n_active[burn_in:])) if self.stopped_at is None else math.nan


def _initial_q(model: CrawlingModel, settings: LSPESettings) -> np.ndarray:
    q = np.zeros((model.n_sources, 3))
    if settings.q0 is None:
        q[:, 0] = 0.5 * (model.u + model.u_star)
    else:
        q[:] = settings.q0
    return q


def run_lspe(model: CrawlingModel, settings: LSPESettings = LSPESettings(), *,
             rng) -> LSPEResult:
    """Run the LSPE(0) / stochastic-gradient scheme of Section IV on a crawling model.

    Each period ``n``: thresholds ``T_i(X_-i(n))`` (projected if ``settings.project``), the
    decision (``settings.action``), the reward, the next state ``X(n+1)``; then the averages
    ``eta, B, A, b`` with step ``b(n)``, ``B^-1`` (corrected Sherman-Morrison) or the Tikhonov
    solve, ``r(n+1) = r(n) + gamma B^-1 (A r(n) + b)``, and (9):
    ``q(n+1) = q(n) + a(n) score(X(n+1) | X(n)) r(n) . phi(X(n+1))``.

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
    rng : numpy.random.Generator or seed
        For the arrivals (``dynamics="stochastic"``) and sampled decisions (``action="sample"``).

    Returns
    -------
    LSPEResult
        A run whose iterates became non-finite stops there, with ``diverged_at`` set and a
        ``RuntimeWarning``.

    Notes
    -----
    The score is that of the surrogate ``f_i`` at the projected threshold; the projection is
    treated as part of the evaluation of ``f_i`` (Section V: it keeps the exponent in range),
    not differentiated, so ``q`` keeps moving when the threshold is clipped.

    One run is a stack of one: this is ``run_lspe_many(model, [settings], [rng])[0]``, the
    same loop (:func:`run_lspe_many`).

    Raises
    ------
    TypeError
        For a model that is not a :class:`~whittle_lib.models.crawling.CrawlingModel` (the
        scheme is the crawling model's by design; for an arm of your own see
        :func:`whittle_lib.learning.learn_whittle_index`), settings that are not
        :class:`LSPESettings`, an ``rng`` of the wrong type.

    Examples
    --------
    >>> from whittle_lib.models.crawling import table_one
    >>> run = run_lspe(table_one(), LSPESettings(n_steps=200, record_every=50), rng=1)
    >>> run.q.shape, run.stopped_at
    ((4, 4, 3), None)
    """
    return _run_many(model, [settings], [rng], "run_lspe")[0]


# -- many runs in lock-step ----------------------------------------------------------------------

def _solve_spd_rows(M, y):
    """:func:`whittle_lib._portable.solve_spd` of one system, for a stack of systems.

    ``M`` of shape (R, n, n) (lower triangle read), ``y`` of shape (R, n): row ``k`` of the
    result has the bits of ``solve_spd(M[k], y[k])``, whose single system is solved in Python
    floats with every sum running left to right. Here the same subtractions run in the same
    order, each vectorised over the stack:

    * the Cholesky factor right-looking, of ``M`` bordered by the row ``y``: entry ``(i, m)``
      loses ``L_i0 L_m0``, then ``L_i1 L_m1``, ..., and the border row becomes the forward
      solution ``w`` of ``L w = y`` (``w_j`` loses ``L_j0 w_0``, then ``L_j1 w_1``, ..., and is
      divided by ``L_jj``: the forward solve of the single system);
    * the backward solve ``L^T z = w`` by rows: ``z_i = (w_i - L_{i+1,i} z_{i+1} - ... -
      L_{n-1,i} z_{n-1}) / L_ii`` with ``np.subtract.reduce``, which runs left to right
      (subtraction is never reordered, unlike NumPy's pairwise sums); each product
      ``L_ki z_k`` is formed once ``z_k`` is known.

    Rows whose pivot is not positive are all nan, as ``solve_spd`` returns them. A stack of a
    few rows is solved row by row in Python floats (``solve_spd`` itself: the same bits, and
    for one row five times faster than the vectorised loop).
    """
    R, n = y.shape
    if R <= _ROWS_IN_PYTHON:
        return np.array([fp.solve_spd(M[k], y[k]) for k in range(R)]).reshape(R, n)
    S = np.zeros((R, n + 1, n + 1))
    S[:, :n, :n] = M
    S[:, n, :n] = y
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(n):
            d = np.sqrt(S[:, j, j])
            S[:, j, j] = d
            col = S[:, j + 1:, j]
            col /= d[:, None]
            S[:, j + 1:, j + 1:] -= col[:, :, None] * col[:, None, :]
        ar = np.arange(n)
        diag = S[:, ar, ar]
        P = np.zeros((R, n, n))                      # P[:, i, k] = L_ki z_k (k > i), P_ii = w_i
        P[:, ar, ar] = S[:, n, :n]
        z = np.empty((R, n))
        for i in range(n - 1, -1, -1):
            zi = np.subtract.reduce(P[:, i, i:], axis=1) / diag[:, i]
            z[:, i] = zi
            if i:
                np.multiply(S[:, i, :i], zi[:, None], out=P[:, :i, i])
    z[~np.all(diag > 0, axis=1)] = np.nan
    return z


#: Stacks of at most this many systems are solved one system at a time (see _solve_spd_rows).
_ROWS_IN_PYTHON = 2


def _stack_compatible(settings: LSPESettings) -> tuple:
    """The fields that runs stacked by :func:`run_lspe_many` must share."""
    return (int(settings.n_steps), int(settings.record_every), bool(settings.regularise))


def _warn_if_stopped(s, breakdown_at, bound, limit, diverged_at) -> None:
    """The warning of a run that stopped early, at the caller of :func:`run_lspe` or
    :func:`run_lspe_many` (user -> run_lspe[_many] -> _run_many -> here -> warn)."""
    if breakdown_at is not None:
        warnings.warn(f"LSPE stopped at step {breakdown_at}: the condition number bound "
                      f"{bound:.1e} of B^T B + delta I reached 1/eps = {limit:.1e} "
                      f"(feature_scale={s.feature_scale}, delta={s.delta})", RuntimeWarning,
                      stacklevel=4)
    if diverged_at is not None:
        warnings.warn(f"LSPE diverged at step {diverged_at}: q or r became non-finite "
                      f"(project={s.project}, regularise={s.regularise})", RuntimeWarning,
                      stacklevel=4)


def run_lspe_many(model: CrawlingModel, settings, rngs) -> list:
    """:func:`run_lspe` for several runs at once, stacked along a leading axis: the one loop of
    the scheme (``run_lspe`` is a stack of one).

    ``run_lspe_many(model, settings, rngs)[k]`` equals ``run_lspe(model, settings[k],
    rng=rngs[k])`` field for field and bit for bit (a test of the project checks it): every
    step makes the same floating-point operations in the same order whatever the other runs of
    the stack (NumPy's sums along the last axis of a C-contiguous stack run row by row as for
    one row; the Tikhonov solve is :func:`_solve_spd_rows`, which has the bits of
    :func:`whittle_lib.arithmetic.solve_spd` of one system), and each run draws from its own
    generator in a run's order: its decisions (``action="sample"``), then every 1,000 steps its
    arrivals. A run that stops early (breakdown, divergence) leaves the stack at that step, with
    its ``RuntimeWarning``.

    Parameters
    ----------
    model : CrawlingModel
    settings : sequence of LSPESettings
        Equal in ``n_steps``, ``record_every`` and ``regularise``; the other fields may differ.
    rngs : sequence of numpy.random.Generator or seeds
        One per run.

    Returns
    -------
    list of LSPEResult

    Raises
    ------
    TypeError
        As :func:`run_lspe`; for ``settings`` or ``rngs`` that are not sequences.
    ValueError
        For sequences of different lengths, or settings that differ in ``n_steps``,
        ``record_every`` or ``regularise``.
    """
    if isinstance(settings, LSPESettings) or not isinstance(settings, (list, tuple)):
        raise TypeError(f"settings must be a list of LSPESettings (one per run), got "
                        f"{type(settings).__name__}")
    if not isinstance(rngs, (list, tuple)):
        raise TypeError(f"rngs must be a list of generators or seeds (one per run), got "
                        f"{type(rngs).__name__}")
    return _run_many(model, list(settings), list(rngs), "run_lspe_many")


def _run_many(model, settings: list, rngs: list, caller: str) -> list:
    """The coupled scheme for a stack of runs (see :func:`run_lspe_many`)."""
    if not isinstance(model, CrawlingModel):
        raise TypeError(f"{caller} learns the threshold policy of the crawling model (Section "
                        f"III of the 2019 paper): model must be a CrawlingModel, got "
                        f"{type(model).__name__}; for an arm of your own see "
                        f"learn_whittle_index(arm, ...)")
    if len(settings) != len(rngs):
        raise ValueError(f"settings and rngs must have the same length, got {len(settings)} "
                         f"and {len(rngs)}")
    if not settings:
        return []
    for s in settings:
        if not isinstance(s, LSPESettings):
            raise TypeError(f"settings must be LSPESettings, got {type(s).__name__}")
    if len({_stack_compatible(s) for s in settings}) != 1:
        raise ValueError("settings must share n_steps, record_every and regularise, got "
                         f"{sorted({_stack_compatible(s) for s in settings})}")
    rngs = [check_rng(g, name="rng") for g in rngs]
    R, s0 = len(settings), settings[0]
    n_src, n_steps, every = model.n_sources, int(s0.n_steps), int(s0.record_every)
    regularise = bool(s0.regularise)
    u, alpha, u_star = model.u, model.alpha, model.u_star

    kappa = np.array([np.full(n_src, float(s.kappa)) for s in settings])
    unit = np.array([float(s.feature_scale) for s in settings])[:, None]
    gamma = np.array([s.gamma for s in settings], dtype=float)[:, None]
    delta = np.array([s.delta for s in settings], dtype=float)
    project = np.array([s.project for s in settings])
    sample = np.array([s.action != "threshold" for s in settings])
    stochastic = np.array([s.dynamics == "stochastic" for s in settings])
    state_reward = np.array([s.reward != "collected" for s in settings])
    steps_of = {}
    for s in settings:
        if s.step_constant not in steps_of:
            steps_of[s.step_constant] = step_sizes(np.arange(n_steps), s.step_constant)
    a_step = np.array([steps_of[s.step_constant][0] for s in settings])
    b_step = np.array([steps_of[s.step_constant][1] for s in settings])

    q = np.array([_initial_q(model, s) for s in settings])
    x = np.tile(u, (R, 1))
    iu, ju = np.triu_indices(n_src)
    ell = n_src + iu.size
    r = np.zeros((R, ell))
    eta = np.zeros(R)
    eye = np.eye(ell)
    B = np.array([s.epsilon * eye for s in settings])
    B_inv = np.array([eye / s.epsilon for s in settings])
    A = np.zeros((R, ell, ell))
    bvec = np.zeros((R, ell))

    rewards = np.full((R, n_steps), np.nan)
    n_active = np.full((R, n_steps), -1, dtype=int)
    rec_steps = np.arange(0, n_steps, every)
    q_hist = np.full((R, rec_steps.size, n_src, 3), np.nan)
    t_hist = np.full((R, rec_steps.size, n_src), np.nan)
    r_hist = np.full((R, rec_steps.size), np.nan)
    x_hist = np.full((R, rec_steps.size, n_src), np.nan)
    chunk = 1000
    new_utility = np.empty((R, chunk, n_src))
    stopped = {}                                     # run -> (kind, step, r, eta, B, B_inv)
    max_bound = np.zeros(R)
    limit = 1.0 / np.finfo(float).eps
    alive = np.arange(R)                             # runs in the stack, in order
    at = slice(None)                                 # their rows in the outputs
    # the per-run constants, cut with the state when runs leave the stack
    per_run = dict(kappa=kappa, unit=unit, gamma=gamma, delta=delta, project=project,
                   sample=sample, stochastic=stochastic, state_reward=state_reward,
                   a_step=a_step, b_step=b_step, new_utility=new_utility, max_bound=max_bound)
    rng_of = list(rngs)

    def features(y):                                 # value_features, stacked
        return np.concatenate([y, y[:, iu] * y[:, ju]], axis=-1)

    def flags():
        c = per_run
        return (c["project"].all(), c["project"].any(), np.flatnonzero(c["sample"]),
                np.flatnonzero(c["stochastic"]), c["stochastic"].all(), c["state_reward"].any())

    project_all, project_any, sampled, drawn, all_drawn, any_state = flags()
    y = x / unit
    phi = features(y)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in range(n_steps):
            c = per_run
            psi = _threshold_basis(y)
            t = np.multiply(q, psi).sum(axis=-1)
            if project_all:
                t = np.clip(t, u, u_star)
            elif project_any:
                t = np.where(c["project"][:, None], np.clip(t, u, u_star), t)
            active = x >= t
            if sampled.size:
                f = _activation_probability(x, t, c["kappa"])
                for k in sampled:
                    active[k] = rng_of[k].random(n_src) < f[k]
            collected = np.where(active, x, 0.0).sum(axis=-1)
            rewards[at, n], n_active[at, n] = collected, active.sum(axis=-1)
            if n % every == 0:
                k = n // every
                q_hist[at, k], t_hist[at, k], x_hist[at, k] = q, t, x
                r_hist[at, k] = np.abs(r).max(axis=-1)
            if n % chunk == 0 and drawn.size:
                size = min(chunk, n_steps - n)
                for k in drawn:
                    c["new_utility"][k, :size] = sample_new_utility(model, size, rng=rng_of[k])
            if all_drawn:
                arrivals = c["new_utility"][:, n % chunk]
            else:
                arrivals = np.where(c["stochastic"][:, None], c["new_utility"][:, n % chunk], u)
            x_next = np.where(active, arrivals, alpha * x + arrivals)
            g = np.where(c["state_reward"], x.sum(axis=-1), collected) if any_state else collected
            y_next = x_next / c["unit"]
            phi_next = features(y_next)

            b_n = c["b_step"][:, n]
            bvec = _running_average(bvec, phi * (g - eta)[:, None], b_n[:, None])
            eta = eta + b_n * (g - eta)
            A = _running_average(A, phi[:, :, None] * (phi_next - phi)[:, None, :],
                                b_n[:, None, None])
            rhs = np.multiply(A, r[:, None, :]).sum(axis=-1) + bvec
            if regularise:
                B = _running_average(B, phi[:, :, None] * phi[:, None, :], b_n[:, None, None])
                Bt = B.swapaxes(-1, -2)
                gram = (Bt[..., :, None, :] * Bt[..., None, :, :]).sum(axis=-1)
                dl = c["delta"]
                bound = (np.sqrt((gram * gram).reshape(len(alive), -1).sum(axis=-1)) + dl) / dl
                seen = c["max_bound"]                   # max() of run_lspe: nan never wins
                c["max_bound"] = np.where(bound > seen, bound, seen)
                broken = ~(bound < limit)
                if broken.any():
                    for k in np.flatnonzero(broken):
                        stopped[alive[k]] = ("breakdown", n, r[k], eta[k], B[k], B_inv[k],
                                             c["max_bound"][k])
                    keep = ~broken
                    alive = alive[keep]
                    if not alive.size:
                        break
                    at = alive
                    (x, q, r, eta, B, B_inv, A, bvec, phi, phi_next, y_next, psi, t, active,
                     rhs, gram, x_next) = (v[keep] for v in (
                        x, q, r, eta, B, B_inv, A, bvec, phi, phi_next, y_next, psi, t, active,
                        rhs, gram, x_next))
                    per_run = c = {name: v[keep] for name, v in c.items()}
                    rng_of = [g_ for g_, k in zip(rng_of, keep) if k]
                    project_all, project_any, sampled, drawn, all_drawn, any_state = flags()
                    Bt = B.swapaxes(-1, -2)             # a view, as B.T in run_lspe
                system = gram + c["delta"][:, None, None] * eye
                direction = _solve_spd_rows(system, np.multiply(Bt, rhs[:, None, :]).sum(axis=-1))
            else:
                b_k = b_n[:, None]
                bv = np.multiply(B_inv, phi[:, None, :]).sum(axis=-1)
                denom = (1.0 - b_k) / b_k + np.multiply(phi, bv).sum(axis=-1)[:, None]
                B_inv = ((B_inv - bv[:, :, None] * bv[:, None, :] / denom[:, :, None])
                         / (1.0 - b_k)[:, :, None])
                direction = np.multiply(B_inv, rhs[:, None, :]).sum(axis=-1)
            value_next = np.multiply(r, phi_next).sum(axis=-1)
            kp = c["kappa"]
            f = _activation_probability(x, t, kp)
            sc = (kp * (f - active.astype(float)))[:, :, None] * psi
            q = q + c["a_step"][:, n][:, None, None] * sc * value_next[:, None, None]
            r = r + c["gamma"] * direction
            finite = (np.isfinite(q).all(axis=(1, 2)) & np.isfinite(r).all(axis=1)
                      & np.isfinite(B_inv).all(axis=(1, 2)))
            if not finite.all():
                for k in np.flatnonzero(~finite):
                    stopped[alive[k]] = ("diverged", n, r[k], eta[k], B[k], B_inv[k],
                                         c["max_bound"][k])
                keep = finite
                alive = alive[keep]
                if not alive.size:
                    break
                at = alive
                x_next, phi_next, y_next, q, r, eta, B, B_inv, A, bvec = (
                    v[keep] for v in (x_next, phi_next, y_next, q, r, eta, B, B_inv, A, bvec))
                per_run = {name: v[keep] for name, v in c.items()}
                rng_of = [g_ for g_, k in zip(rng_of, keep) if k]
                project_all, project_any, sampled, drawn, all_drawn, any_state = flags()
            x, phi, y = x_next, phi_next, y_next

    final = {int(k): ("", None, r[i], eta[i], B[i], B_inv[i], per_run["max_bound"][i])
             for i, k in enumerate(alive)}
    final.update(stopped)
    results = []
    for k, s in enumerate(settings):
        kind, at, r_k, eta_k, B_k, Binv_k, bound_k = final[k]
        with np.errstate(all="ignore"):
            M = B_k if regularise else Binv_k
            condition = float(np.linalg.cond(M)) if np.all(np.isfinite(M)) else math.nan
        breakdown_at = at if kind == "breakdown" else None
        diverged_at = at if kind == "diverged" else None
        _warn_if_stopped(s, breakdown_at, bound_k, limit, diverged_at)
        results.append(LSPEResult(
            rewards=rewards[k], n_active=n_active[k], q=q_hist[k], steps=rec_steps.copy(),
            threshold_history=t_hist[k], state_history=x_hist[k], r_norm=r_hist[k],
            r=np.array(r_k), condition=condition, eta=float(eta_k), diverged_at=diverged_at,
            breakdown_at=breakdown_at,
            condition_bound=float(bound_k) if regularise else math.nan, settings=s))
    return results
