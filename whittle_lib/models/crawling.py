"""Crawling ephemeral content: the model and the closed-form Whittle index.

The model of Avrachenkov & Borkar (2015, 2018 journal version). Source ``i`` publishes
content as a Poisson process of rate ``Lambda_i``; a content has a random base utility of mean
``xi_mean_i`` that decays as ``exp(-mu_i t)``. A crawler visits sources at multiples of the
period ``T``; crawling source ``i`` yields its accumulated utility ``X_i`` and empties it.

With ``alpha = exp(-mu T)`` and ``u = Lambda xi_mean (1 - alpha) / mu`` (eq. 1), the
deterministic dynamics are (eqs. 2-3)::

    X(t+1) = alpha X(t) + u   if not crawled,     X(t+1) = u   if crawled,

and the stochastic dynamics (eq. 17) replace ``u`` by the random utility ``U(t+1)`` that arrives
during the period. After one crawl the deterministic state only takes the values
``x_k = u (1 - alpha**k) / (1 - alpha)``, ``k = 1, 2, ...`` (:func:`visited_states`), ``k``
being the number of periods since the last crawl.

The Whittle index (Theorem 1) is :func:`whittle_index`, checked against the index by
definition (:func:`index_by_definition`); the index of the stochastic model, which has no
closed form, is estimated by renewal Monte Carlo (:func:`stochastic_whittle_index`).

References
----------
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC
2015 (hal-01258647).
V. S. Borkar, K. Chadha, "A Reinforcement Learning Algorithm for Restless Bandits", Indian
Control Conference 2018 (the stochastic model's index, Sec. IV-B).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, sparse

from .. import arithmetic as fp
from .. import mdp
from .._results import ShortRepr
from .._validation import check_choice, check_integer, check_real, check_rng, real_array
from ..arms import RestlessArm

__all__ = [
    "CrawlingModel",
    "StochasticIndex",
    "stochastic_whittle_index",
    "draw_new_utilities",
    "table_one",
    "utility_rate",
    "visited_states",
    "periods_to_reach",
    "whittle_index",
    "ClosedFormIndex",
    "cycle_reward",
    "visited_state_arm",
    "index_by_definition",
    "crawling_bound",
    "CrawlingBound",
    "OptimalCrawling",
    "crawling_mdp",
    "optimal_crawling",
    "deterministic_step",
    "stochastic_step",
    "sample_new_utility",
    "BASE_LAWS",
    "check_base_law",
    "CrawlingState",
    "CrawlingDynamics",
]

#: On a visited state ``x_k`` the ratio ``log_alpha((u - (1-alpha) x)/u)`` is the integer ``k``
#: up to rounding: the argument ``alpha**k`` is formed as ``1 - (1-alpha) x / u`` and carries an
#: absolute error of a few ulps of 1, so the ratio errs by about ``1e-16 / (alpha**k |log alpha|)``
#: (1e-7 when ``alpha**k`` is 1e-9). A ratio less than this above an integer is taken to be that
#: integer: exact wherever ``alpha**k > 1e-9``, i.e. wherever ``x_k`` is not within a relative
#: 1e-9 of ``u*``. The index (Theorem 1) is continuous in ``x``, so near-lattice off-lattice
#: states lose nothing: their index changes by ``u |alpha**k - arg|``.
_LATTICE_SLACK = 1e-6


def _positive(name, value, *, ndim=(0, 1)):
    """A rate, a mean or a cost: numbers in (0, inf), a scalar or one per source."""
    return real_array(name, value, low=0.0, high=np.inf, low_open=True, high_open=True,
                      ndim=ndim)


def _discount_factor(name, value, *, ndim=None):
    """``alpha = exp(-mu T)``: numbers in (0, 1)."""
    return real_array(name, value, low=0.0, high=1.0, low_open=True, high_open=True, ndim=ndim)


def _states(name, value):
    """Utilities waiting at sources: finite and non-negative, any shape."""
    return real_array(name, value, low=0.0, high=np.inf, high_open=True)


def _check_model(model, name: str = "model", why: str = ""):
    if not isinstance(model, CrawlingModel):
        raise TypeError(f"{name} must be a CrawlingModel{why}, got {type(model).__name__}")
    return model


def _broadcast(**arrays):
    """The common shape of the named arrays, or a ValueError naming their shapes."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"the shapes of {', '.join(arrays)} do not broadcast: {shapes}") from None


def utility_rate(xi_mean, mu, arrival_rate, period=1.0):
    """Expected utility collected by crawling a source every period, eq. (1).

    ``u = Lambda E[xi] (1 - exp(-mu T)) / mu``: the content that arrives during one period,
    each item decayed from its (uniform) arrival time to the end of the period.

    Parameters
    ----------
    xi_mean, mu, arrival_rate : float or array_like, shape (N,)
        Positive and finite.
    period : float
        Positive and finite.

    Raises
    ------
    TypeError, ValueError
        For a value that is not a number, or not positive and finite (the message names it).

    Examples
    --------
    >>> round(float(utility_rate(1.0, 0.7, 250.0)), 2)   # source 1 of Table I: "179.79"
    179.79
    """
    xi_mean = _positive("xi_mean", xi_mean)
    mu = _positive("mu", mu)
    arrival_rate = _positive("arrival_rate", arrival_rate)
    period = _positive("period", period, ndim=0)
    _broadcast(xi_mean=xi_mean, mu=mu, arrival_rate=arrival_rate)
    return _utility_rate(xi_mean, mu, arrival_rate, period)


def _utility_rate(xi_mean, mu, arrival_rate, period):
    return arrival_rate * xi_mean * -fp.expm1(-mu * period) / mu


@dataclass(frozen=True)
class CrawlingModel:
    """N ephemeral-content sources (Section II of the 2015 paper).

    Parameters
    ----------
    xi_mean : array_like, shape (N,)
        Mean base utility of a content, ``xi-bar_i``.
    mu : array_like, shape (N,)
        Decay rate of interest, ``mu_i``.
    arrival_rate : array_like, shape (N,)
        Poisson rate of new content, ``Lambda_i``.
    period : float
        Crawling period ``T``.
    cost : array_like, shape (N,)
        Crawling cost ``C_i`` of eq. (5) (1 for the per-period count constraint).

    Every parameter is positive and finite (a scalar is used for every source); a value that
    is not a number raises ``TypeError``, one out of range ``ValueError`` naming it.

    Attributes
    ----------
    alpha, u, u_star : ndarray
        ``exp(-mu T)``, eq. (1), and ``u / (1 - alpha)``, the supremum of the state space.
        Computed in portable arithmetic whatever the mode (:mod:`whittle_lib.arithmetic`):
        the same model on every machine.
    """

    xi_mean: np.ndarray
    mu: np.ndarray
    arrival_rate: np.ndarray
    period: float = 1.0
    cost: np.ndarray | float = 1.0
    alpha: np.ndarray = field(init=False, repr=False, compare=False)
    u: np.ndarray = field(init=False, repr=False, compare=False)
    u_star: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        xi = np.atleast_1d(_positive("xi_mean", self.xi_mean))
        mu = np.atleast_1d(_positive("mu", self.mu))
        lam = np.atleast_1d(_positive("arrival_rate", self.arrival_rate))
        try:
            xi, mu, lam = np.broadcast_arrays(xi, mu, lam)
        except ValueError:
            raise ValueError("xi_mean, mu and arrival_rate must have the same length, got "
                             f"{xi.size}, {mu.size}, {lam.size}") from None
        if xi.size == 0:
            raise ValueError("xi_mean, mu and arrival_rate must describe at least one source, "
                             "got empty arrays")
        period = float(_positive("period", self.period, ndim=0))
        cost = _positive("cost", self.cost)
        if cost.ndim and cost.shape not in (xi.shape, (1,)):
            raise ValueError(f"cost must be a number or hold one cost per source ({xi.size}), "
                             f"got shape {cost.shape}")
        cost = np.broadcast_to(cost, xi.shape).copy()
        for name, arr in (("xi_mean", xi), ("mu", mu), ("arrival_rate", lam), ("cost", cost)):
            arr = np.array(arr, dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "period", period)
        # derived once (read-only, portable): simulators read them every period
        with fp.portable():
            alpha = fp.exp(-self.mu * period)
            u = _utility_rate(self.xi_mean, self.mu, self.arrival_rate, period)
            u_star = u / -fp.expm1(-self.mu * period)
        for name, arr in (("alpha", alpha), ("u", u), ("u_star", u_star)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def n_sources(self) -> int:
        return int(self.xi_mean.size)

    def subset(self, sources) -> "CrawlingModel":
        """The model restricted to some sources (an index array or a boolean mask)."""
        return CrawlingModel(self.xi_mean[sources], self.mu[sources],
                             self.arrival_rate[sources], self.period, self.cost[sources])


def table_one(arrival_rate: float = 250.0) -> CrawlingModel:
    """The four sources of Table I (2015 paper; also Table I of the 2019 paper).

    The 2018 paper prints ``Lambda_i = 25`` for the same sources; pass ``arrival_rate=25``.
    """
    arrival_rate = check_real("arrival_rate", arrival_rate, 0.0, np.inf, low_open=True,
                              high_open=True)
    return CrawlingModel(xi_mean=[1.0, 0.7, 0.2, 0.08], mu=[0.7, 0.35, 0.7, 0.21],
                         arrival_rate=[arrival_rate] * 4)


def visited_states(u, alpha, k):
    """The states ``x_k = u (1 - alpha**k) / (1 - alpha)`` reached ``k`` periods after a crawl.

    ``x_1 = u`` (just crawled), ``x_{k+1} = alpha x_k + u`` (eq. 2), ``x_k -> u* = u/(1-alpha)``.
    Broadcasts over ``u > 0``, ``alpha`` in (0, 1) and ``k >= 0`` (``x_0 = 0``; ``k = inf``
    gives ``u*``; the formula holds for real ``k``, the states of whole numbers of periods).

    Examples
    --------
    >>> visited_states(10.0, 0.5, [1, 2, 3])
    array([10. , 15. , 17.5])
    """
    u = _positive("u", u, ndim=None)
    alpha = _discount_factor("alpha", alpha)
    k = real_array("k", k, low=0.0)
    _broadcast(u=u, alpha=alpha, k=k)
    return _visited_states(u, alpha, k)


def _periods(name, k, minimum):
    """Whole numbers of periods ``>= minimum`` (``inf``: never)."""
    k = real_array(name, k, low=minimum)
    finite = k[np.isfinite(k)]
    if finite.size and np.any(finite != np.floor(finite)):
        raise ValueError(f"{name} must hold whole numbers of periods, got "
                         f"{float(finite[finite != np.floor(finite)][0])!r}")
    return k


def _visited_states(u, alpha, k):
    u = np.asarray(u, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    k = np.asarray(k)
    # -expm1(k log alpha) / (1 - alpha) keeps full relative accuracy for small k and alpha near 1
    return u * -fp.expm1(k * fp.log(alpha)) / -fp.expm1(fp.log(alpha))


def _index_constants(u, alpha):
    """Per-source constants of the index: ``(1 - alpha)/u``, ``log alpha``, ``u*``."""
    u = np.asarray(u, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    log_alpha = fp.log(alpha)
    return u, -fp.expm1(log_alpha) / u, log_alpha, u / -fp.expm1(log_alpha)


def _ceil_log_ratio(x, slope, log_alpha):
    """``(eta, arg, outside)``: ``arg = 1 - (1-alpha) x / u``, ``eta = ceil(log_alpha(arg))``
    computed robustly, and the mask ``arg <= 0`` (``x >= u*``, where ``eta`` is meaningless).

    On a visited state ``x_k`` the ratio ``log(arg)/log(alpha)`` is ``k`` up to rounding, and
    the plain ceiling of ``k + 1e-12`` is ``k + 1``; lowering the ratio by ``_LATTICE_SLACK``
    before the ceiling puts it back on ``k``. Written with two work arrays updated in place:
    at a million sources a period of the simulator is dominated by passes over memory.
    """
    x = np.asarray(x, dtype=float)
    shape = np.broadcast(x, slope).shape
    arg = np.multiply(slope, x, out=np.empty(shape))
    np.subtract(1.0, arg, out=arg)                     # alpha**eta on visited states
    outside = arg <= 0                                 # x >= u*
    # log of max(arg, 1e-300): where arg <= 0 the ratio is a large finite number that callers
    # mask with `outside` (no inf or nan, no slow masked ufunc)
    eta = np.maximum(arg, 1e-300, out=np.empty(shape))
    eta = np.asarray(fp.log(eta))                      # an array even for one state
    eta *= 1.0 / log_alpha
    eta -= _LATTICE_SLACK
    np.ceil(eta, out=eta)
    return eta, arg, outside


def periods_to_reach(x, u, alpha):
    """``eta(x)`` of eq. (14) and Theorem 1, computed robustly on the visited states.

    ``eta(x) = ceil(log_alpha((u - (1 - alpha) x) / u))`` for ``x < u*``: the number of periods
    after a crawl at which the state first reaches ``x`` (``eta(x_k) = k``). Rounding makes the
    logarithm ``k + 1e-12`` on ``x_k``, whose plain ceiling is ``k + 1``; a ratio within
    ``1e-6`` above an integer is taken to be that integer (exact where ``alpha**k > 1e-9``).
    Returns ``-1`` where
    ``x >= u*`` (the argument of the logarithm is not positive: ``log+`` of the paper is 0 there,
    and no finite number of periods reaches ``x``).

    Examples
    --------
    >>> periods_to_reach(visited_states(10.0, 0.5, [1, 2, 3]), 10.0, 0.5)
    array([1., 2., 3.])
    """
    x, u, alpha = _index_arguments(x, u, alpha)
    u, slope, log_alpha, _ = _index_constants(u, alpha)
    eta, _, outside = _ceil_log_ratio(x, slope, log_alpha)
    return np.where(outside, -1.0, eta)


def _index_arguments(x, u, alpha, C=None):
    """The checked arguments of the index: states ``x >= 0``, ``u > 0``, ``alpha`` in (0, 1)
    and costs ``C > 0``, whose shapes broadcast."""
    x = _states("x", x)
    u = _positive("u", u, ndim=None)
    alpha = _discount_factor("alpha", alpha)
    if C is None:
        _broadcast(x=x, u=u, alpha=alpha)
        return x, u, alpha
    C = _positive("C", C, ndim=None)
    _broadcast(x=x, u=u, alpha=alpha, C=C)
    return x, u, alpha, C


def _whittle_index(x, u, slope, log_alpha, u_star):
    """The index from precomputed constants (see :func:`whittle_index`); ``C = 1``.

    Theorem 1 on :func:`_ceil_log_ratio`, in place (one more work array).
    """
    x = np.asarray(x, dtype=float)
    eta, arg, outside = _ceil_log_ratio(x, slope, log_alpha)
    shape = eta.shape
    # gamma = eta ((1-alpha) x - u) + x_eta = u* (1 - alpha**eta) - eta u arg, as
    # (1 - alpha) x - u = -u arg and x_eta = u* (1 - alpha**eta)
    gamma = np.multiply(eta, log_alpha, out=np.empty(shape))
    gamma = np.asarray(fp.exp(gamma))
    np.subtract(1.0, gamma, out=gamma)
    gamma *= u_star
    eta *= arg
    eta *= u
    gamma -= eta
    np.copyto(gamma, np.broadcast_to(x, shape), where=outside)   # x >= u*: the index is x
    return gamma


def whittle_index(x, u, alpha, C=1.0):
    """The Whittle index of the crawling problem (Theorem 1, made exact on every state).

    .. math:: \\gamma(x) = \\frac{1}{C}\\Big[\\eta(x)\\big((1-\\alpha)x - u\\big)
              + \\frac{1 - \\alpha^{\\eta(x)}}{1-\\alpha}\\,u\\Big], \\qquad x < u^* ,

    with ``eta`` from :func:`periods_to_reach`, and ``gamma(x) = x / C`` for ``x >= u*``.
    On a visited state ``x_k`` this is ``x_k - k u alpha**k`` (over ``C``): the subsidy at
    which crawling every ``k`` and every ``k + 1`` periods earn the same (see
    :func:`index_by_definition`). Theorem 1 as printed gives 0 for ``x >= u*`` (its
    ``log+`` is 0 there); the index by definition is ``x``, which the stochastic model
    (eq. 17) does reach.

    Parameters
    ----------
    x : array_like
        States; broadcasts against ``u``, ``alpha`` and ``C`` (pass ``x`` of shape (T, N)
        with parameters of shape (N,) for a trajectory).
    u, alpha : array_like
        eq. (1) and ``exp(-mu T)``.
    C : array_like
        Crawling cost of eq. (5).

    Returns
    -------
    ndarray
        The index, increasing in ``x`` (Lemma 4), continuous at ``u*``.

    Examples
    --------
    >>> import numpy as np
    >>> u, alpha = 10.0, 0.5
    >>> x = visited_states(u, alpha, np.arange(1, 5))
    >>> whittle_index(x, u, alpha)      # x_k - k u alpha**k
    array([ 5.  , 10.  , 13.75, 16.25])
    """
    x, u, alpha, C = _index_arguments(x, u, alpha, C)
    u, slope, log_alpha, u_star = _index_constants(u, alpha)
    return _whittle_index(x, u, slope, log_alpha, u_star) / C


@dataclass(frozen=True, eq=False)
class ClosedFormIndex:
    """Theorem 1's index of ``N`` sources (costs ``C = 1``), its per-source constants once.

    ``ClosedFormIndex(u, alpha)(x)`` is :func:`whittle_index` ``(x, u, alpha)``: the same
    operations on the same constants, without their logarithm and ``expm1`` on every call (a
    simulator or a priority rule calls it every period). The constants are computed in
    portable arithmetic whatever the mode (:mod:`whittle_lib.arithmetic`), so in portable mode
    the two agree bit for bit, and in native mode to an ulp or two.

    Parameters
    ----------
    u : array_like, shape (N,)
        ``u_i`` of eq. (1), positive.
    alpha : array_like, shape (N,)
        ``exp(-mu_i T)``, in (0, 1).

    Examples
    --------
    >>> index = ClosedFormIndex.of(table_one())
    >>> model = table_one()
    >>> bool(np.all(index(model.u) == whittle_index(model.u, model.u, model.alpha)))
    True
    """

    u: np.ndarray
    alpha: np.ndarray

    def __post_init__(self) -> None:
        u = np.atleast_1d(_positive("u", self.u))
        alpha = np.atleast_1d(_discount_factor("alpha", self.alpha, ndim=(0, 1)))
        shape = _broadcast(u=u, alpha=alpha)
        u, alpha = (np.array(np.broadcast_to(a, shape), dtype=float) for a in (u, alpha))
        with fp.portable():
            constants = _index_constants(u, alpha)
        for a in (u, alpha, *constants):
            a.setflags(write=False)
        object.__setattr__(self, "u", u)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "_constants", constants)

    @classmethod
    def of(cls, model: "CrawlingModel") -> "ClosedFormIndex":
        """The index of a model's sources (its crawling costs aside: divide by ``model.cost``)."""
        _check_model(model)
        return cls(model.u, model.alpha)

    @property
    def n_sources(self) -> int:
        return int(self.u.size)

    @property
    def constants(self) -> tuple:
        """``(u, (1 - alpha)/u, log alpha, u*)``, each of shape (N,)."""
        return self._constants

    def __call__(self, x) -> np.ndarray:
        """The index of states ``x`` of shape ``(..., N)`` (finite and non-negative)."""
        x = _states("x", x)
        if x.shape[-1:] != (self.n_sources,):
            raise ValueError(f"x must have shape (..., {self.n_sources}) (one state per "
                             f"source), got {x.shape}")
        return _whittle_index(x, *self._constants)


# -- the index from its definition --------------------------------------------------------------

def cycle_reward(k, lam, u, alpha, C=1.0):
    """Long-run average reward of crawling every ``k`` periods under subsidy ``lam`` (eq. 15).

    From the state ``u`` the source waits ``k - 1`` periods (earning ``C lam`` each) and is
    crawled in state ``x_k``: ``(C lam (k - 1) + x_k) / k``. ``k = inf`` (never crawl) earns
    ``C lam``. ``k`` holds whole numbers ``>= 1`` (or ``inf``), ``lam`` finite numbers;
    everything broadcasts.

    Examples
    --------
    >>> cycle_reward([1, 2, np.inf], 1.0, 10.0, 0.5).tolist()
    [10.0, 8.0, 1.0]
    """
    k = _periods("k", k, 1)
    lam = real_array("lam", lam, low=-np.inf, high=np.inf, low_open=True, high_open=True)
    u = _positive("u", u, ndim=None)
    alpha = _discount_factor("alpha", alpha)
    C = _positive("C", C, ndim=None)
    _broadcast(k=k, lam=lam, u=u, alpha=alpha, C=C)
    return _cycle_reward(k, lam, u, alpha, C)


def _cycle_reward(k, lam, u, alpha, C=1.0):
    k = np.asarray(k, dtype=float)
    finite = np.isfinite(k)
    kf = np.where(finite, k, 1.0)
    periodic = (C * lam * (kf - 1.0) + _visited_states(u, alpha, kf)) / kf
    return np.where(finite, periodic, C * lam + 0.0 * kf)


def _optimal_cycle(lam, u, alpha, C, k_max):
    """The best crawling period at subsidy ``lam`` among 1..k_max and never (returned as inf)."""
    ks = np.arange(1, k_max + 1)
    rewards = _cycle_reward(ks, lam, u, alpha, C)
    best = int(np.argmax(rewards))
    if C * lam >= rewards[best]:
        return math.inf, C * lam
    return float(ks[best]), float(rewards[best])


def index_by_definition(k, u, alpha, C=1.0, *, k_max=None, xtol=1e-12):
    """The Whittle index of the visited state ``x_k`` from its definition, by root finding.

    The index of ``x_k`` is the subsidy at which crawling in ``x_k`` and waiting are equally
    good. Among threshold policies of a single source (crawl every ``j`` periods, eq. 15, or
    never), crawling in ``x_k`` is optimal when the best period is at most ``k``. This finds, by
    Brent's method on ``max_{j<=k} g_j(lam) - max_{j>k} g_j(lam)``, the subsidy where the best
    period passes ``k``. It uses neither the closed form nor its logarithm.

    Parameters
    ----------
    k : int
        The state ``x_k`` (periods since the last crawl), ``k >= 1``.
    u, alpha, C : float
        One source.
    k_max : int, optional
        Longest period considered (default: enough for ``alpha**k_max < 1e-13``).
    xtol : float
        Absolute tolerance of the root, relative to ``u*``.

    Examples
    --------
    >>> round(index_by_definition(2, 10.0, 0.5), 9)      # x_2 - 2 u alpha**2 (Theorem 1)
    10.0
    """
    k = check_integer("k", k, 1)
    u = check_real("u", u, 0.0, np.inf, low_open=True, high_open=True)
    alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    C = check_real("C", C, 0.0, np.inf, low_open=True, high_open=True)
    if k_max is None:
        k_max = max(k + 2, int(math.ceil(math.log(1e-13) / math.log(alpha))))
    k_max = check_integer("k_max", k_max, k + 1)
    xtol = check_real("xtol", xtol, 0.0, 1.0, low_open=True)
    ks = np.arange(1, k_max + 1)
    u_star = u / (1 - alpha)

    def advantage(lam):   # best reward crawling by x_k minus best reward waiting past x_k
        rewards = _cycle_reward(ks, lam, u, alpha, C)
        wait = max(float(rewards[k:].max()), C * lam)
        return float(rewards[:k].max()) - wait

    lo, hi = -u_star / C, 2 * u_star / C   # advantage > 0 at lo (crawl every period), < 0 at hi
    return optimize.brentq(advantage, lo, hi, xtol=xtol * u_star, rtol=4 * np.finfo(float).eps)


def visited_state_arm(u, alpha, n_states: int) -> RestlessArm:
    """One source as a finite restless arm on its first ``n_states`` visited states.

    State ``k - 1`` is ``x_k`` (:func:`visited_states`). Passive: ``x_k -> x_{k+1}``, the last
    state staying put (a truncation: ``x_n`` stands for ``x_n, x_{n+1}, ...``); active: reward
    ``x_k``, next state ``x_1 = u``. The engine's indices of this arm under the average
    reward (:func:`whittle_lib.indices.whittle_indices`, the average criterion) are the closed
    form's on the states far enough from the truncation.

    Parameters
    ----------
    u : float
        ``u`` of eq. (1), positive.
    alpha : float
        ``exp(-mu T)``, in (0, 1).
    n_states : int
        At least 2.
    """
    u = check_real("u", u, 0.0, np.inf, low_open=True, high_open=True)
    alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    n = check_integer("n_states", n_states, 2)
    states = np.arange(n)
    P0 = np.zeros((n, n))
    P0[states, np.minimum(states + 1, n - 1)] = 1.0
    P1 = np.zeros((n, n))
    P1[:, 0] = 1.0
    return RestlessArm(P0=P0, P1=P1, R0=np.zeros(n),
                       R1=_visited_states(u, alpha, states + 1))


@dataclass(frozen=True, repr=False)
class CrawlingBound(ShortRepr):
    """Whittle's relaxation of the per-period constraint (Section III) on a crawling model
    (:func:`crawling_bound`).

    Attributes
    ----------
    bound : float
        ``min_lam sum_i beta_i(lam) - lam (N - M)`` (costs ``C = 1``): an upper bound on the
        average reward of any policy crawling ``M`` sources per period.
    subsidy : float
        The minimising subsidy ``lam``.
    periods : ndarray
        The optimal crawling period of each source at that subsidy (``inf``: never).
    """

    bound: float
    subsidy: float
    periods: np.ndarray


def crawling_bound(model: CrawlingModel, M: float, *, k_max: int = 400) -> CrawlingBound:
    """Upper bound of Whittle's relaxation on the crawling model (average constraint
    ``sum_i E[v_i] = M``), from the closed form of each source's problem.

    The dual function ``D(lam) = sum_i beta_i(lam) - lam (N - M)`` is convex and piecewise
    linear, with ``beta_i(lam) = max(lam, max_k g_k(lam))`` (:func:`cycle_reward`); its breakpoints
    are the indices of the visited states, so the minimum is attained at one of them.
    Periods up to ``k_max`` are considered (``alpha**k_max`` below rounding for Table I).

    The average-reward criterion of the deterministic model (eqs. 2-3), as the paper's.
    Every index is positive, so crawling "exactly ``M``" and "at most ``M``" on average have
    the same relaxation: this is :func:`whittle_lib.relaxation_bound` of the sources as arms,
    without truncating their state spaces.

    Parameters
    ----------
    model : CrawlingModel
        With unit crawling costs ``C_i = 1``.
    M : float
        Sources crawled per period on average, in ``(0, N)`` (the relaxation allows a
        fraction).
    k_max : int
        Longest crawling period considered, at least 1.

    Returns
    -------
    CrawlingBound

    Examples
    --------
    >>> round(crawling_bound(table_one(), 1).bound, 2)   # Sec. VII: M = 1
    260.39
    """
    _check_model(model)
    if np.any(model.cost != 1.0):
        raise ValueError("crawling_bound assumes unit crawling costs C_i = 1, got cost="
                         f"{model.cost.tolist()}")
    M = check_real("M", M, 0.0, model.n_sources, low_open=True, high_open=True)
    k_max = check_integer("k_max", k_max, 1)
    u, alpha = model.u, model.alpha
    ks = np.arange(1, k_max + 1)
    u_k, alpha_k = u[:, None], alpha[:, None]
    breakpoints = _whittle_index(_visited_states(u_k, alpha_k, ks),
                                 *_index_constants(u_k, alpha_k)).ravel()
    breakpoints = np.unique(np.concatenate([breakpoints, model.u_star]))

    def dual(lam):
        rewards = _cycle_reward(ks[None, :], lam, u[:, None], alpha[:, None])
        beta = np.maximum(rewards.max(axis=1), lam)
        return float(beta.sum() - lam * (model.n_sources - M))

    values = np.array([dual(lam) for lam in breakpoints])
    best = int(np.argmin(values))
    lam = float(breakpoints[best])
    periods = np.array([_optimal_cycle(lam, u[i], alpha[i], 1.0, k_max)[0]
                        for i in range(model.n_sources)])
    return CrawlingBound(bound=float(values[best]), subsidy=lam, periods=periods)


@dataclass(frozen=True, repr=False)
class OptimalCrawling(ShortRepr):
    """The optimal policy of the per-period constraint on the deterministic model.

    Attributes
    ----------
    average_reward : float
        Optimal long-run average reward of the age-capped model: a lower bound on the optimum
        of the true model, equal to it when no source waits ``age_cap`` periods on the optimal
        cycle (``cap_binds`` is False) -- see :func:`optimal_crawling`.
    cycle_ages : ndarray, shape (period, N)
        Ages ``k_i`` (the state is ``x_{k_i}``) along the optimal cycle.
    cycle_crawls : ndarray of bool, shape (period, N)
        Which sources the optimal policy crawls along the cycle.
    age_cap : ndarray of int, shape (N,)
    cap_binds : bool
        Whether the optimal cycle crawls a source at its age cap (where the capped model
        under-counts the source's value).
    n_states : int
        States of the joint MDP.
    """

    average_reward: float
    cycle_ages: np.ndarray
    cycle_crawls: np.ndarray
    age_cap: np.ndarray
    cap_binds: bool
    n_states: int


def crawling_mdp(model: CrawlingModel, M: int, age_cap):
    """The joint MDP of the per-period constraint over capped ages (see :func:`optimal_crawling`).

    Returns
    -------
    problem : whittle_lib.mdp.FiniteMDP
        Deterministic transitions; action ``a`` crawls the sources ``actions[a]``.
    ages : ndarray of int, shape (S, N)
        The ages of each joint state (state ``s`` holds ``x_{ages[s, i]}`` at source ``i``).
    actions : ndarray of bool, shape (binomial(N, M), N)

    Raises
    ------
    TypeError
        For a model that is not a ``CrawlingModel``, a budget or caps that are not integers.
    ValueError
        For ``M`` outside ``[1, N - 1]``, caps below 1 or more than 2,000,000 joint states.
    """
    _check_model(model)
    n = model.n_sources
    if n < 2:
        raise ValueError("crawling_mdp needs at least two sources (a budget M in [1, N - 1]), "
                         "got one")
    M = check_integer("M", M, 1, n - 1)
    raw_cap = age_cap
    age_cap = np.asarray(age_cap)
    if age_cap.dtype.kind not in "iu" or age_cap.ndim > 1:
        raise TypeError(f"age_cap must be an integer or one integer per source, got {raw_cap!r}")
    if age_cap.ndim and age_cap.shape != (n,):
        raise ValueError(f"age_cap must hold one cap per source ({n}), got shape "
                         f"{age_cap.shape}")
    if np.any(age_cap < 1):
        raise ValueError(f"age_cap must hold positive integers, got {raw_cap!r}")
    cap = np.broadcast_to(age_cap, (n,)).astype(int)
    n_states = int(np.prod(cap))
    if n_states > 2_000_000:
        raise ValueError(f"age_cap gives {n_states} joint states; at most 2,000,000 allowed")
    ages = np.stack(np.unravel_index(np.arange(n_states), cap), axis=1) + 1   # (S, N), 1-based
    values = _visited_states(model.u[None, :], model.alpha[None, :], ages)
    actions = [np.isin(np.arange(n), c) for c in itertools.combinations(range(n), int(M))]
    transitions, rewards = [], []
    for crawl in actions:
        nxt = np.where(crawl, 1, np.minimum(ages + 1, cap))
        target = np.ravel_multi_index(tuple((nxt - 1).T), cap)
        transitions.append(sparse.csr_array((np.ones(n_states), (np.arange(n_states), target)),
                                            shape=(n_states, n_states)))
        rewards.append(values[:, crawl].sum(axis=1))
    return mdp.FiniteMDP(transitions, np.stack(rewards, axis=1)), ages, np.array(actions)


def optimal_crawling(model: CrawlingModel, M: int, age_cap) -> OptimalCrawling:
    """Exact optimum of crawling exactly ``M`` sources every period (deterministic model).

    After every source has been crawled once, the joint state is the vector of ages
    ``k_i >= 1`` (periods since the last crawl; source ``i`` holds ``x_{k_i}``). Ages are capped
    at ``age_cap``: a source left at its cap stays there (it holds ``x_cap < x_{cap+1}``), so
    any sequence of decisions earns at most what it earns in the true model: the capped
    optimum is a lower bound on the true optimum, non-decreasing in the cap. The relaxation
    bound (:func:`crawling_bound`) is an upper bound; where the two meet, both are the
    optimum. Solved by multichain policy iteration (:func:`whittle_lib.mdp.policy_iteration`);
    the optimal cycle is then followed from the state with every source at its cap.

    Parameters
    ----------
    model : CrawlingModel
    M : int
        Sources crawled per period (crawling never lowers the reward, so "at most M" and
        "exactly M" have the same optimum).
    age_cap : int or array_like of int, shape (N,)
        The joint MDP has ``prod(age_cap)`` states and ``binomial(N, M)`` actions.
    """
    problem, ages, actions = crawling_mdp(model, M, age_cap)
    cap = np.asarray(ages.max(axis=0))
    n_states = problem.n_states
    transitions = problem.transitions
    rewards = problem.rewards
    solution = mdp.policy_iteration(problem)                # the average reward (default)
    # follow the optimal policy from the all-capped state until a state repeats
    state = n_states - 1
    seen: dict[int, int] = {}
    path = []
    while state not in seen:
        seen[state] = len(path)
        path.append(state)
        state = int(transitions[solution.policy[state]].indices[state])
    cycle = np.array(path[seen[state]:])
    crawls = np.array([actions[a] for a in solution.policy[cycle]])
    gain = float(np.mean(rewards[cycle, solution.policy[cycle]]))
    return OptimalCrawling(average_reward=gain, cycle_ages=ages[cycle], cycle_crawls=crawls,
                           age_cap=cap, cap_binds=bool(np.any(crawls & (ages[cycle] >= cap))),
                           n_states=n_states)


# -- dynamics -----------------------------------------------------------------------------------

def _crawl_mask(crawl):
    """The crawl decisions: a boolean array."""
    mask = np.asarray(crawl)
    if mask.dtype != bool:
        raise TypeError(f"crawl must be a boolean array (True: crawled), got "
                        f"{type(crawl).__name__} of dtype {mask.dtype}")
    return mask


def deterministic_step(x, crawl, u, alpha):
    """One period of eqs. (2)-(3): ``alpha x + u`` if passive, ``u`` if crawled.

    Parameters
    ----------
    x : array_like
        States, finite and non-negative.
    crawl : array_like of bool
        The crawl decisions, broadcasting against ``x``.
    u, alpha : array_like
        ``u > 0`` and ``alpha`` in (0, 1), per source.

    Examples
    --------
    >>> deterministic_step([10.0, 10.0], [True, False], 10.0, 0.5).tolist()
    [10.0, 15.0]
    """
    x = _states("x", x)
    crawl = _crawl_mask(crawl)
    u = _positive("u", u, ndim=None)
    alpha = _discount_factor("alpha", alpha)
    _broadcast(x=x, crawl=crawl, u=u, alpha=alpha)
    return np.where(crawl, u, alpha * x + u)


#: Laws of the base utility ``xi`` that :func:`sample_new_utility` draws, each with mean
#: ``xi_mean``, and the default of its shape parameter (``None``: the law has none).
BASE_LAWS = {"exponential": None, "deterministic": None, "lognormal": 1.0, "lomax": 3.0}


def check_base_law(base_law: str, base_shape: float | None = None) -> float | None:
    """Check a law of the base utility and return its shape parameter in effect.

    Parameters
    ----------
    base_law : str
        One of :data:`BASE_LAWS` (see :func:`sample_new_utility`).
    base_shape : float, optional
        The law's shape parameter: ``s > 0`` of the lognormal law (default 1), the tail index
        ``a > 1`` of the lomax law (default 3); ``None`` for the laws without one.

    Returns
    -------
    float or None
        The shape parameter the sampler uses (its default when ``base_shape`` is ``None``),
        ``None`` for the exponential and deterministic laws.

    Raises
    ------
    TypeError
        For a law that is not a string, a shape that is not a number.
    ValueError
        For an unknown law, a shape out of range or given to a law without one.

    Examples
    --------
    >>> check_base_law("lomax"), check_base_law("lognormal", 0.5), check_base_law("exponential")
    (3.0, 0.5, None)
    """
    check_choice("base_law", base_law, tuple(BASE_LAWS))
    if BASE_LAWS[base_law] is None:
        if base_shape is not None:
            raise ValueError(f"base_shape must be None for base_law={base_law!r}, "
                             f"got {base_shape!r}")
        return None
    shape = BASE_LAWS[base_law] if base_shape is None else base_shape
    low = 1.0 if base_law == "lomax" else 0.0          # lomax: a finite mean needs a > 1
    return check_real(f"base_shape of the {base_law} law", shape, low, np.inf, low_open=True,
                      high_open=True)


def sample_new_utility(model: CrawlingModel, size=None, *, rng, base_law: str = "exponential",
                       base_shape: float | None = None):
    """The utility ``U_i(k)`` that arrives during one period (the sum under eq. 17).

    Contents arrive as a Poisson process of rate ``Lambda_i``; given their number, their
    arrival times are i.i.d. uniform on the period; each has base utility ``xi`` and is worth
    ``xi exp(-mu_i (T - tau))`` at the end of the period. ``E[U_i] = u_i`` (eq. 1) under every
    law below, since each has mean ``xi_mean_i``.

    Parameters
    ----------
    model : CrawlingModel
    size : int, optional
        Number of periods; the result has shape ``(size, N)`` (``(N,)`` if omitted).
    rng : numpy.random.Generator or seed
    base_law : {"exponential", "deterministic", "lognormal", "lomax"}
        Law of the base utility ``xi`` with mean ``xi_mean``. The 2015 paper gives only the
        mean (Section II: "a nonnegative random variable ... with a finite mean"); the 2018
        paper says exponential, which we take as default. ``"deterministic"`` keeps only the
        randomness of arrivals. The two heavier-tailed laws: ``"lognormal"``,
        ``xi = xi_mean exp(s Z - s**2 / 2)`` with ``Z`` standard normal (coefficient of
        variation ``sqrt(exp(s**2) - 1)``, 1.31 at ``s = 1``); ``"lomax"`` (Pareto type II),
        ``xi = xi_mean (a - 1) (exp(E / a) - 1)`` with ``E`` standard exponential, i.e.
        ``P(xi > y) = (1 + y / (xi_mean (a - 1)))**-a`` (coefficient of variation
        ``sqrt(a / (a - 2))`` for ``a > 2``, 1.73 at ``a = 3``; infinite variance for
        ``a <= 2``).
    base_shape : float, optional
        ``s`` of the lognormal law (default 1) or the tail index ``a > 1`` of the lomax law
        (default 3); must be omitted for the other laws (:func:`check_base_law`).

    Returns
    -------
    ndarray, shape ([size,] N)

    Examples
    --------
    >>> sample_new_utility(table_one(), 3, rng=1).shape
    (3, 4)
    """
    _check_model(model)
    shape_param = check_base_law(base_law, base_shape)
    rng = check_rng(rng)
    shape = ((model.n_sources,) if size is None
             else (check_integer("size", size, 1), model.n_sources))
    return _sample_new_utility(model, shape, rng, base_law, shape_param)


def _sample_new_utility(model, shape, rng, base_law, shape_param):
    """:func:`sample_new_utility` on checked arguments (a simulator draws every period)."""
    counts = rng.poisson(model.arrival_rate * model.period, size=shape)
    total = int(counts.sum())
    age = rng.uniform(0.0, model.period, size=total)      # time from arrival to end of period
    # The contents of one cell (period, source) are consecutive: the values are made and summed
    # a block of cells at a time, in cache, with the draws of the base utilities continuing the
    # generator's stream block after block (the same numbers as one call, after the ages).
    counts = counts.ravel()
    neg_mu = np.broadcast_to(-model.mu, shape).ravel()
    xi_mean = np.broadcast_to(model.xi_mean, shape).ravel()
    ends = np.cumsum(counts)
    out = np.empty(counts.size)
    first = 0                                             # first cell of the block
    while first < counts.size:
        begin = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, begin + _SAMPLE_BLOCK, side="right")))
        end = int(ends[last - 1])
        c = counts[first:last]
        value = np.repeat(neg_mu[first:last], c)
        value *= age[begin:end]
        value = fp.exp(value) if value.size else value
        value *= np.repeat(xi_mean[first:last], c)
        if base_law == "exponential":
            value *= rng.standard_exponential(end - begin)
        elif base_law == "lognormal":
            value *= fp.exp(shape_param * rng.standard_normal(end - begin)
                            - 0.5 * shape_param ** 2)
        elif base_law == "lomax":
            value *= (shape_param - 1.0) * (fp.exp(rng.standard_exponential(end - begin)
                                                   / shape_param) - 1.0)
        out[first:last] = np.bincount(np.repeat(np.arange(last - first), c), weights=value,
                                      minlength=last - first)
        first = last
    return out.reshape(shape)


#: Contents per block of :func:`sample_new_utility` (its work arrays stay in cache).
_SAMPLE_BLOCK = 1 << 15


def stochastic_step(x, crawl, new_utility, alpha):
    """One period of eq. (17): ``alpha x + U`` if passive, ``U`` if crawled.

    Parameters
    ----------
    x, new_utility : array_like
        States and the period's new utility, finite and non-negative.
    crawl : array_like of bool
    alpha : array_like
        In (0, 1), per source.

    Examples
    --------
    >>> stochastic_step([10.0, 10.0], [True, False], [3.0, 4.0], 0.5).tolist()
    [3.0, 9.0]
    """
    x = _states("x", x)
    crawl = _crawl_mask(crawl)
    new_utility = _states("new_utility", new_utility)
    alpha = _discount_factor("alpha", alpha)
    _broadcast(x=x, crawl=crawl, new_utility=new_utility, alpha=alpha)
    return np.where(crawl, new_utility, alpha * x + new_utility)


@dataclass(frozen=True)
class CrawlingState:
    """The state of N sources in a simulation: their values and the periods since each crawl.

    Attributes
    ----------
    x : ndarray, shape ([R,] N)
        Utility waiting at each source, ``x_i(t)``.
    age : ndarray, shape ([R,] N)
        Periods since the source was last crawled (1 just after a crawl, ``inf`` for a start
        that no crawl leads to).
    """

    x: np.ndarray
    age: np.ndarray


@dataclass(frozen=True)
class _ReplayState(CrawlingState):
    """A :class:`CrawlingState` that also counts the periods, for replayed utilities."""

    period: int = 0


def draw_new_utilities(model: CrawlingModel, n_periods: int, size=None, *, rng,
                       base_law: str = "exponential", base_shape: float | None = None):
    """The new utilities of ``n_periods`` successive periods, drawn as a simulation draws them.

    Each period is one call ``sample_new_utility(model, size, rng=rng, ...)``, in turn: the
    draws a stochastic :class:`CrawlingDynamics` makes from ``rng``, whatever the policy. Runs
    of several policies on common arrivals can draw them once and replay them
    (``CrawlingDynamics(..., utilities=...)``, or ``utilities=`` of
    :func:`whittle_lib.models.crawling_policies.simulate_crawling`): the same numbers, bit for
    bit.

    Parameters
    ----------
    model : CrawlingModel
    n_periods : int
    size : int, optional
        Replications ``R``; see :func:`sample_new_utility`.
    rng, base_law, base_shape
        See :func:`sample_new_utility`.

    Returns
    -------
    ndarray, shape (n_periods, [R,] N)
    """
    _check_model(model)
    n_periods = check_integer("n_periods", n_periods, 1)
    rng = check_rng(rng)
    out = np.stack([sample_new_utility(model, size, rng=rng, base_law=base_law,
                                       base_shape=base_shape) for _ in range(int(n_periods))])
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class CrawlingDynamics:
    """The crawling model as dynamics: a crawled source pays what it holds and restarts from the
    period's new utility; a passive one keeps ``alpha x`` and gains the new utility: eqs.
    (2)-(3) (deterministic, the new utility is ``u``) or eq. (17) (stochastic, drawn by
    :func:`sample_new_utility`).

    The simulators of :mod:`whittle_lib.models.crawling_policies` run it; so do the core's
    :func:`whittle_lib.rmab.simulate` and :func:`whittle_lib.rmab.periodic_orbit` (it has
    their :class:`~whittle_lib.rmab.Dynamics` methods, with a rule of ``(state, t)``).

    Parameters
    ----------
    model : CrawlingModel
    x0 : array_like, optional
        Initial values, finite and non-negative, broadcasting to ``([R,] N)`` (default ``u``,
        just crawled, age 1).
    stochastic : bool
    base_law, base_shape
        See :func:`sample_new_utility`.
    utilities : array_like, shape (T, [R,] N), optional
        Stochastic only: the new utility of each period, replayed in order instead of drawn
        (from :func:`draw_new_utilities`, which draws what this dynamics would); the ``rng``
        of :meth:`step` is then unused. A simulation of more than ``T`` periods fails.
    """

    model: CrawlingModel
    x0: np.ndarray | None = None
    stochastic: bool = False
    base_law: str = "exponential"
    base_shape: float | None = None
    utilities: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_model(self.model)
        if not isinstance(self.stochastic, (bool, np.bool_)):
            raise TypeError(f"stochastic must be True or False, got "
                            f"{type(self.stochastic).__name__} {self.stochastic!r}")
        object.__setattr__(self, "_shape_param", check_base_law(self.base_law, self.base_shape)
                           if self.stochastic else None)
        if self.x0 is not None:
            x0 = _states("x0", self.x0)
            if x0.ndim > 2 or x0.shape[-1:] not in ((), (1,), (self.model.n_sources,)):
                raise ValueError(f"x0 must be a state or one state per source "
                                 f"({self.model.n_sources}), got shape {x0.shape}")
            object.__setattr__(self, "x0", x0)
        if self.utilities is not None:
            if not self.stochastic:
                raise ValueError("utilities are replayed by the stochastic model only "
                                 "(stochastic=True)")
            U = real_array("utilities", self.utilities, low=0.0, high=np.inf, high_open=True,
                           ndim=(2, 3))
            if U.shape[-1] != self.model.n_sources:
                raise ValueError(f"utilities must have shape (T, [R,] {self.model.n_sources}), "
                                 f"got {U.shape}")
            object.__setattr__(self, "utilities", U)

    @property
    def n_arms(self) -> int:
        return self.model.n_sources

    def initial(self, replications: int | None) -> CrawlingState:
        u, alpha = self.model.u, self.model.alpha
        shape = (self.n_arms,) if replications is None else (replications, self.n_arms)
        x = np.broadcast_to(u if self.x0 is None else np.asarray(self.x0, dtype=float),
                            shape).copy()
        if self.x0 is None:
            age = np.ones(shape)
        else:
            # periods since a crawl that would give x0 (inf where x0 is not a visited state)
            age = np.broadcast_to(periods_to_reach(x, u, alpha), shape).copy()
            age[age < 1] = np.inf
        if self.utilities is not None:
            if self.utilities.shape[1:] != shape:
                raise ValueError(f"utilities must have shape (T, {', '.join(map(str, shape))}) "
                                 f"for this run, got {self.utilities.shape}")
            return _ReplayState(x, age, 0)
        return CrawlingState(x, age)

    def step(self, state: CrawlingState, crawl: np.ndarray,
             rng) -> tuple[CrawlingState, np.ndarray]:
        x, model = state.x, self.model
        reward = np.sum(x, axis=-1, where=crawl)
        new = self.new_utility(getattr(state, "period", None),
                               None if x.ndim == 1 else x.shape[0], rng)
        # eqs. (2)-(3) or (17): x <- alpha x + U, then x <- U where crawled
        x_next = model.alpha * x
        x_next += new
        np.copyto(x_next, new, where=crawl)
        age = state.age + 1.0
        age[crawl] = 1.0
        if self.utilities is not None:
            return _ReplayState(x_next, age, state.period + 1), reward
        return CrawlingState(x_next, age), reward

    def new_utility(self, period, replications, rng) -> np.ndarray:
        """The utility that arrives in ``period``, shape ``([R,] N)`` (``u`` for every
        replication of the deterministic model): replayed from ``utilities``, or drawn from
        ``rng`` by :func:`sample_new_utility`. :meth:`step` moves by it, and so does
        :func:`~whittle_lib.models.crawling_policies.simulate_crawling_many` for all its slots."""
        if self.utilities is not None:
            if period >= self.utilities.shape[0]:
                raise ValueError(f"utilities hold {self.utilities.shape[0]} periods, the run "
                                 "is longer")
            return self.utilities[period]
        if self.stochastic:
            n = self.model.n_sources
            return _sample_new_utility(self.model, (n,) if replications is None
                                       else (replications, n), check_rng(rng), self.base_law,
                                       self._shape_param)
        return self.model.u

    def observe(self, state: CrawlingState) -> np.ndarray:
        return state.x.copy()


# -- the Whittle index of the stochastic model, by renewal Monte Carlo ----------------------------

@dataclass(frozen=True, repr=False)
class StochasticIndex(ShortRepr):
    """The Whittle index of one source of the stochastic model on a grid of states.

    Attributes
    ----------
    x : ndarray, shape (J,)
        Thresholds ``h_j`` (states).
    index : ndarray, shape (J,)
        ``gamma(h_j)``: the smallest subsidy at which a threshold above ``h_j`` is optimal
        (nan where no grid subsidy moves the optimum past ``h_j``).
    cycle_reward, cycle_length : ndarray, shape (J,)
        Renewal estimates of ``E[X_tau]`` and ``E[tau]`` for the threshold policy ``h_j``.
    n_cycles : int
    """

    x: np.ndarray
    index: np.ndarray
    cycle_reward: np.ndarray
    cycle_length: np.ndarray
    n_cycles: int


def stochastic_whittle_index(model: CrawlingModel, source: int, x, *, rng, n_cycles: int = 4000,
                             pool: int = 20_000, max_periods: int = 200,
                             base_law: str = "exponential", n_subsidies: int = 4000):
    r"""The Whittle index of the stochastic crawler, by renewal Monte Carlo over thresholds.

    Under the threshold policy "crawl iff :math:`X \ge h`" the chain regenerates at each crawl
    (:math:`X = U` after it, eq. 17). A cycle lasts :math:`\tau` periods, :math:`\tau - 1`
    passive (each paid the subsidy :math:`\lambda`) and one crawl collecting :math:`X_\tau`, so
    the average reward is :math:`\beta(h, \lambda) = \lambda + (E X_\tau - \lambda)/E\tau`
    (renewal-reward). Whittle's index at :math:`x` is the subsidy at which the optimal threshold
    passes :math:`x` (eq. (5) with threshold policies, Sec. II-B): the smallest grid
    :math:`\lambda` whose maximiser over the grid :math:`\{h_j\}` lies above :math:`x`.

    The cycles of all thresholds use the same utilities (common random numbers), resampled
    from ``pool`` exact draws of :func:`sample_new_utility`. This uses
    nothing of the learning code: it is the independent reference for the learned index.
    With ``U = u`` (``base_law`` irrelevant, a degenerate pool) it gives the deterministic
    index at the visited states (a test).

    Parameters
    ----------
    model : CrawlingModel
    source : int
    x : array_like, shape (J,)
        Increasing thresholds/states.
    rng : numpy.random.Generator or seed
        Keyword-only.
    n_cycles, pool, max_periods, n_subsidies : int
        Cycles per threshold, utilities drawn exactly, cap on a cycle's length (a cycle still
        running is crawled then), points of the subsidy grid (at least 2).
    base_law : str
        A law of :data:`BASE_LAWS` with its default shape (:func:`sample_new_utility`).
    """
    _check_model(model)
    source = check_integer("source", source, 0, model.n_sources - 1)
    x = _states("x", x)
    if x.ndim != 1 or x.size < 2 or np.any(np.diff(x) <= 0):
        raise ValueError(f"x must be an increasing 1-d array of at least 2 states, got {x!r}")
    rng = check_rng(rng)
    n_cycles = check_integer("n_cycles", n_cycles, 1)
    pool = check_integer("pool", pool, 1)
    max_periods = check_integer("max_periods", max_periods, 1)
    n_subsidies = check_integer("n_subsidies", n_subsidies, 2)
    draws = sample_new_utility(model, pool, rng=rng, base_law=base_law)[:, source]
    return _renewal_index(draws, float(model.alpha[source]), x, rng, n_cycles, max_periods,
                          n_subsidies)


def _renewal_index(draws, alpha, x, rng, n_cycles, max_periods, n_subsidies):
    idx = rng.integers(0, draws.size, size=(max_periods, n_cycles))
    J = x.size
    state = np.broadcast_to(draws[idx[0]], (J, n_cycles)).copy()
    running = np.ones((J, n_cycles), dtype=bool)
    length = np.ones((J, n_cycles))
    reward = np.zeros((J, n_cycles))
    for n in range(max_periods):
        crawl = running & ((state >= x[:, None]) | (n == max_periods - 1))
        reward[crawl] = state[crawl]
        running &= ~crawl
        if not running.any():
            break
        state = alpha * state + draws[idx[min(n + 1, max_periods - 1)]]
        length += running
    R, T = reward.mean(axis=1), length.mean(axis=1)
    lam = np.linspace(0.0, 1.5 * R.max(), n_subsidies)
    best = np.argmax(R[None, :] / T[None, :] - lam[:, None] / T[None, :], axis=1)  # (L,)
    # running maximum: the optimal threshold is monotone in lambda (indexability, Sec. II-B)
    best = np.maximum.accumulate(best)
    index = np.full(J, np.nan)
    for j in range(J):
        above = np.flatnonzero(best > j)
        if above.size:
            index[j] = lam[above[0]]
    return StochasticIndex(x=x, index=index, cycle_reward=R, cycle_length=T,
                           n_cycles=int(n_cycles))
