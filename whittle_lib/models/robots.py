"""The M/M/1/K model of web-robot control (Talim, Liu, Nain, Coffman, 1999).

A search engine's indexing queue holds at most ``K`` pages (the one in service included) and
serves them at rate ``mu``; each active robot brings pages at rate ``lam``. The cost is
``gamma`` times the starvation probability plus the loss rate, eq. (2):

.. math:: C(\\rho, \\gamma, K) = \\gamma P(X = 0) + \\lambda N P(X = K)
          = \\frac{(1-\\rho)(\\gamma + \\mu \\rho^{K+1})}{1 - \\rho^{K+1}}, \\qquad
          \\rho = N\\lambda/\\mu.

*Static* control fixes the number ``N`` of robots (Section 2, Lemma 1, Proposition 1);
*dynamic* control activates and deactivates robots at arrival and departure epochs, an
average-cost MDP (Section 3).

References
----------
.. [TLNC99] J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., "Controlling robots of web search
   engines", draft of May 20, 1999 (SIGMETRICS PER 2001).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from scipy import optimize, sparse

from .. import arithmetic as fp
from .. import mdp as _mdp
from .._validation import check_choice, check_integer, check_real, real_array

__all__ = [
    "mm1k_distribution",
    "robots_cost",
    "robots_cost_terms",
    "robots_cost_exact",
    "critical_gamma",
    "optimal_load",
    "StaticOptimum",
    "robots_static_optimum",
    "robots_large_K_optimum",
    "RobotsStateSpace",
    "robots_state_space",
    "robots_mdp",
    "static_policy",
    "policy_grid",
    "DynamicOptimum",
    "robots_dynamic_optimum",
    "robots_unconstrained_optimum",
    "TimeAverageRates",
    "time_average_rates",
    "SwitchingCurves",
    "switching_curves",
]


def _is_number(value) -> bool:
    """A real number (a 0-d numeric array too); never a bool, a string or None."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"


def _positive(name: str, value: float) -> float:
    if not _is_number(value):
        raise TypeError(f"{name} must be a positive finite number, got {value!r}")
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return value


def _integer(name: str, value, minimum: int) -> int:
    """An integer (``int`` or a NumPy integer, not a bool or a float) ``>= minimum``."""
    return check_integer(name, value, minimum)


def _buffer(K) -> int:
    return _integer("K", K, 2)


def _robots(N) -> int:
    return _integer("N", N, 1)


# --------------------------------------------------------------------------------------------
# Static control: Section 2
# --------------------------------------------------------------------------------------------


def mm1k_distribution(rho: float, K: int) -> np.ndarray:
    """Stationary queue length of the M/M/1/K queue, eq. (3).

    .. math:: P(X = i) = \\frac{1-\\rho}{1-\\rho^{K+1}} \\rho^i, \\quad i = 0, \\dots, K,

    uniform at ``rho = 1`` (the limit). Computed as normalised powers, which is exact at every
    ``rho`` and never divides by zero.

    Parameters
    ----------
    rho : float
        Traffic intensity ``N lam / mu > 0``.
    K : int
        Capacity, ``K >= 2``.

    Returns
    -------
    ndarray, shape (K + 1,)

    Examples
    --------
    >>> mm1k_distribution(1.0, 3)
    array([0.25, 0.25, 0.25, 0.25])
    """
    rho = _positive("rho", rho)
    K = _buffer(K)
    # Work with rho^(i - K) when rho > 1 so that nothing overflows.
    i = np.arange(K + 1)
    w = fp.power(rho, i - K) if rho > 1 else fp.power(rho, i)
    return w / w.sum()


def _empty_probability(rho: np.ndarray, K: int) -> np.ndarray:
    """``P(X = 0) = (rho - 1) / (rho^(K+1) - 1)``, via ``expm1`` so that it is accurate near
    ``rho = 1`` (where it tends to ``1/(K+1)``) and underflows to 0 instead of overflowing."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        p0 = (rho - 1.0) / fp.expm1((K + 1) * fp.log(rho))
    return np.where(rho == 1.0, 1.0 / (K + 1), np.nan_to_num(p0, nan=0.0))


def robots_cost(rho, gamma: float, K: int, mu: float = 1.0):
    """Cost of the static policy, eq. (4): ``gamma P(X=0) + mu rho P(X=K)``.

    Parameters
    ----------
    rho : float or array_like
        Traffic intensity ``N lam / mu > 0``; vectorised.
    gamma : float
        Weight of the starvation probability, ``> 0``.
    K : int
        Capacity, ``>= 2``.
    mu : float
        Service rate.

    Returns
    -------
    float or ndarray
        ``(1-rho)(gamma + mu rho^(K+1)) / (1 - rho^(K+1))``; ``(gamma + mu)/(K + 1)`` at
        ``rho = 1``. Computed with ``P(X = K; rho) = P(X = 0; 1/rho)`` (the M/M/1/K queue seen
        backwards) and ``expm1``, accurate near ``rho = 1`` and free of overflow for any ``K``.

    Examples
    --------
    >>> round(robots_cost(1.0, gamma=1.4, K=5, mu=1.0), 10)   # Table 1: C_s = 0.40000
    0.4
    """
    gamma = _positive("gamma", gamma)
    starvation, loss = robots_cost_terms(rho, K, mu)
    cost = gamma * starvation + loss
    return float(cost) if cost.ndim == 0 else cost


def robots_cost_terms(rho, K: int, mu: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The two terms of eq. (4) that do not depend on ``gamma``: ``C = gamma P(X=0) + loss``.

    :func:`robots_cost` is ``gamma * starvation + loss`` with these arrays, bit for bit, so a
    sweep over many ``gamma`` at the same loads evaluates the elementary functions once.

    Parameters
    ----------
    rho : float or array_like
        Traffic intensity ``N lam / mu > 0``; vectorised.
    K : int
        Capacity, ``>= 2``.
    mu : float
        Service rate.

    Returns
    -------
    starvation : ndarray
        ``P(X = 0)``, the starvation probability (eq. (3) at ``i = 0``), shape of ``rho``.
    loss : ndarray
        ``mu rho P(X = K)``, the rate of lost pages, computed as ``mu rho P(X = 0; 1/rho)``.

    Examples
    --------
    >>> p0, loss = robots_cost_terms(1.0, 5)
    >>> float(p0), float(loss), robots_cost(1.0, 1.4, 5) == float(1.4 * p0 + loss)
    (0.16666666666666666, 0.16666666666666666, True)
    """
    mu = _positive("mu", mu)
    K = _buffer(K)
    r = real_array("rho", rho, low=0.0, high=np.inf, low_open=True, high_open=True)
    return _empty_probability(r, K), mu * r * _empty_probability(1.0 / r, K)


def robots_cost_exact(n: int, mu_over_lambda, gamma_over_mu, K: int) -> Fraction:
    """Eq. (4) divided by ``mu``, in exact rational arithmetic, for ``n`` robots.

    .. math:: \\frac{C(\\rho, \\gamma, K)}{\\mu} = \\frac{\\gamma}{\\mu} P(X = 0)
              + \\rho P(X = K), \\qquad P(X = i) = \\frac{\\rho^i}{\\sum_{j=0}^K \\rho^j},
              \\quad \\rho = \\frac{n \\lambda}{\\mu}

    (eqs. (3)-(4)), for ties and printed digits that floating point cannot settle.

    Parameters
    ----------
    n : int
        Number of robots, ``>= 1``.
    mu_over_lambda, gamma_over_mu : Fraction, int or str
        ``mu / lam`` and ``gamma / mu``, positive, as exact rationals (a float is taken at its
        exact binary value: pass ``Fraction("0.4")`` for the decimal).
    K : int
        Capacity of the queue, ``>= 2``.

    Returns
    -------
    Fraction
        ``C(n lam / mu, gamma, K) / mu``; :func:`robots_cost` ``/ mu`` in floating point.

    Examples
    --------
    Table 1, row 1 of [TLNC99]_ (``lam = 0.01``, ``mu = 1``, ``K = 5``, ``gamma = 0.4``):
    ``N_s = 73``, ``C_s = 0.17541``.

    >>> round(float(robots_cost_exact(73, Fraction(100), Fraction(2, 5), 5)), 5)
    0.17541
    """
    n = _robots(n)
    K = _buffer(K)
    m, g = (_fraction(name, v) for name, v in (("mu_over_lambda", mu_over_lambda),
                                               ("gamma_over_mu", gamma_over_mu)))
    if m <= 0 or g <= 0:
        raise ValueError(f"mu_over_lambda and gamma_over_mu must be positive, got {m}, {g}")
    rho = Fraction(n) / m
    powers = [rho ** i for i in range(K + 1)]
    return (g * powers[0] + rho * powers[K]) / sum(powers)


def _fraction(name: str, value) -> Fraction:
    """An exact rational from a Fraction, an int, a decimal string or a float."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a Fraction, an int, a decimal string or a number, got "
                        f"bool {value!r}")
    try:
        return Fraction(value)
    except (TypeError, ValueError) as error:
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(f"{name} must be a Fraction, an int, a decimal string or a finite number, "
                   f"got {type(value).__name__} {value!r}") from None


def critical_gamma(K: int, mu: float = 1.0) -> float:
    """``gamma(K) = mu (K + 2) / K`` of Lemma 1: the weight at which ``rho(gamma, K) = 1``."""
    return _positive("mu", mu) * (_buffer(K) + 2) / _buffer(K)


def _R(rho: float, gamma: float, K: int, mu: float) -> float:
    """The numerator of the derivative of the cost, eq. (6): ``C_rho = R / (1-rho^(K+1))^2``."""
    return (mu * rho ** (2 * (K + 1)) - (gamma * K + mu * (K + 2)) * rho ** (K + 1)
            + (K + 1) * (mu + gamma) * rho**K - gamma)


def optimal_load(gamma: float, K: int, mu: float = 1.0) -> float:
    """The minimiser ``rho(gamma, K)`` of ``rho -> C(rho, gamma, K)`` (Lemma 1).

    ``C`` decreases while ``R < 0`` and increases while ``R > 0`` (eq. 5), and ``R`` has a
    double root at ``rho = 1`` that is not an extremum unless ``gamma = gamma(K)``. The
    minimiser is the other positive root of ``R``: in ``(0, 1)`` when ``gamma < gamma(K)``, in
    ``(1, inf)`` when ``gamma > gamma(K)``. It is bracketed away from 1 and found by Brent's
    method to machine precision.

    Parameters
    ----------
    gamma : float
    K : int
    mu : float

    Returns
    -------
    float

    Examples
    --------
    >>> optimal_load(1.4, 5)     # gamma = gamma(5): the optimum is rho = 1
    1.0
    """
    gamma = _positive("gamma", gamma)
    K = _buffer(K)
    mu = _positive("mu", mu)
    g_K = critical_gamma(K, mu)
    if math.isclose(gamma, g_K, rel_tol=1e-12):
        return 1.0

    def f(rho):
        return _R(rho, gamma, K, mu)

    if gamma < g_K:  # R(0) = -gamma < 0 and R > 0 on (rho*, 1)
        for j in range(1, 60):
            hi = 1.0 - 2.0**-j
            if f(hi) > 0:
                return optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    else:  # R < 0 on (1, rho*) and R -> +inf; use R / rho^(2K+2), same sign, no overflow
        def g(rho):
            s = 1.0 / rho
            return (mu - (gamma * K + mu * (K + 2)) * s ** (K + 1)
                    + (K + 1) * (mu + gamma) * s ** (K + 2) - gamma * s ** (2 * (K + 1)))

        lo = next((1.0 + 2.0**-j for j in range(1, 60) if g(1.0 + 2.0**-j) < 0), None)
        if lo is not None:
            step = lo - 1.0
            hi = lo + step
            while g(hi) <= 0:
                step *= 2.0
                hi = lo + step
            return optimize.brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    # gamma within rounding of gamma(K): the root merges with the double root at 1.
    return 1.0


@dataclass(frozen=True)
class StaticOptimum:
    """The optimal static number of robots (Proposition 1).

    Attributes
    ----------
    N : int
        The optimal number of robots ``N(gamma, K)``, eq. (8).
    rho : float
        The optimal load ``rho(gamma, K)`` of Lemma 1 (continuous).
    load : float
        ``N lam / mu``, the load with ``N`` robots.
    cost : float
        ``C(N lam / mu, gamma, K)``, eq. (4).
    """

    N: int
    rho: float
    load: float
    cost: float


def robots_static_optimum(lam: float, mu: float, gamma: float, K: int) -> StaticOptimum:
    """Optimal number of robots of Proposition 1 and its cost, eq. (4).

    ``N(gamma, K)`` is the better of ``floor`` and ``ceil`` of ``rho(gamma, K) mu / lam``
    (the smaller one on a tie), and at least 1.

    Parameters
    ----------
    lam : float
        Page rate of one robot, ``> 0``.
    mu : float
        Indexing rate, ``> 0``.
    gamma : float
        Weight of the starvation probability, ``> 0``.
    K : int
        Capacity of the queue, ``>= 2``.

    Returns
    -------
    StaticOptimum

    Examples
    --------
    Table 1, first row (lam = 0.01, K = 5, gamma = 0.4, mu = 1):

    >>> opt = robots_static_optimum(0.01, 1.0, 0.4, 5)
    >>> opt.N, round(opt.cost, 5)
    (73, 0.17541)
    """
    lam = _positive("lam", lam)
    mu = _positive("mu", mu)
    gamma = _positive("gamma", gamma)
    K = _buffer(K)
    rho = optimal_load(gamma, K, mu)
    x = rho * mu / lam
    candidates = sorted({max(1, math.floor(x)), max(1, math.ceil(x))})
    # both candidates in one call: the same bits as one call each (element-wise arithmetic)
    costs = robots_cost(np.array(candidates) * lam / mu, gamma, K, mu)
    best = int(np.argmin(costs))
    N = candidates[best]
    return StaticOptimum(N=N, rho=rho, load=N * lam / mu, cost=float(costs[best]))


def robots_large_K_optimum(lam: float, mu: float, gamma: float) -> int:
    """The approximation (16) of ``N(gamma, K)`` for large ``K``, i.e. ``N(gamma, inf)``.

    With ``rho_- = floor(mu/lam) lam/mu <= 1 <= rho_+ = ceil(mu/lam) lam/mu``, the limiting
    costs are ``C(rho_-, gamma, inf) = gamma (1 - rho_-)`` and
    ``C(rho_+, gamma, inf) = mu (rho_+ - 1)``; eq. (16) takes ``ceil(mu/lam)`` if
    ``C(rho_+) <= C(rho_-)`` and ``floor(mu/lam)`` otherwise. (The extracted text prints
    ``[mu/lam]`` in both branches; the brackets are the ceiling and the floor, in this order,
    since ``rho_+`` and ``rho_-`` are the loads of the two candidates of eq. (15).)

    Parameters
    ----------
    lam, mu, gamma : float

    Returns
    -------
    int
    """
    lam = _positive("lam", lam)
    mu = _positive("mu", mu)
    gamma = _positive("gamma", gamma)
    lo, hi = math.floor(mu / lam), math.ceil(mu / lam)
    if lo == hi:
        return lo
    c_minus = gamma * (1 - lo * lam / mu)
    c_plus = mu * (hi * lam / mu - 1)
    return hi if (c_plus <= c_minus or lo == 0) else lo


# --------------------------------------------------------------------------------------------
# Dynamic control: Section 3
# --------------------------------------------------------------------------------------------

#: Event types of a decision epoch: departure, arrival, fictitious (uniformisation).
DEPARTURE, ARRIVAL, FICTITIOUS = 0, 1, 2


@dataclass(frozen=True, eq=False)
class RobotsStateSpace:
    """The states ``x = (q, r, s)`` of the robots MDP, flattened.

    ``q`` is the queue length and ``r`` the number of active robots just before the decision
    epoch, ``s`` the epoch's type (0 departure, 1 arrival, 2 fictitious). The infeasible states
    ``(0, r, 0)``, ``(q, 0, 1)`` and the absorbing ``(0, 0, 2)`` are left out (Section 3.1).

    Attributes
    ----------
    K, N : int
    q, r, s : ndarray of int, shape (n,)
        The components of each state.
    index : ndarray of int, shape (K + 1, N + 1, 3)
        ``index[q, r, s]`` is the position of state ``(q, r, s)``, ``-1`` if infeasible.
    """

    K: int
    N: int
    q: np.ndarray
    r: np.ndarray
    s: np.ndarray
    index: np.ndarray

    @property
    def n_states(self) -> int:
        return self.q.size

    def state(self, q: int, r: int, s: int) -> int:
        """Position of ``(q, r, s)``; ``ValueError`` if it is not a state of the MDP,
        ``TypeError`` if they are not integers."""
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                   for v in (q, r, s)):
            raise TypeError(f"(q, r, s) must be three integers, got ({q!r}, {r!r}, {s!r})")
        if not (0 <= q <= self.K and 0 <= r <= self.N and s in (0, 1, 2)) \
                or self.index[q, r, s] < 0:
            raise ValueError(f"(q, r, s) = ({q}, {r}, {s}) is not a state of the MDP "
                             f"with K={self.K}, N={self.N}")
        return int(self.index[q, r, s])


def robots_state_space(K: int, N: int) -> RobotsStateSpace:
    """The state space ``X`` of Section 3.1 for capacity ``K`` and ``N`` robots."""
    K, N = _buffer(K), _robots(N)
    q, r, s = (a.ravel() for a in np.meshgrid(np.arange(K + 1), np.arange(N + 1),
                                              np.arange(3), indexing="ij"))
    feasible = ~(((q == 0) & (s == DEPARTURE)) | ((r == 0) & (s == ARRIVAL))
                 | ((q == 0) & (r == 0) & (s == FICTITIOUS)))
    q, r, s = q[feasible], r[feasible], s[feasible]
    index = np.full((K + 1, N + 1, 3), -1, dtype=np.int64)
    index[q, r, s] = np.arange(q.size)
    for a in (q, r, s, index):
        a.setflags(write=False)
    return RobotsStateSpace(K=K, N=N, q=q, r=r, s=s, index=index)


def robots_mdp(lam: float, mu: float, gamma: float, K: int, N: int
               ) -> tuple[_mdp.FiniteMDP, RobotsStateSpace]:
    """The MDP of Section 3 (uniformised at ``nu = lam N + mu``), rewards ``-c``.

    In state ``(q, r, s)`` with action ``a`` (1: activate one more robot, or reactivate the
    arriving one), the post-decision queue and robots are

    - departure (``s = 0``): ``(q - 1, min(r + a, N))``;
    - arrival (``s = 1``): ``(min(q + 1, K), r + a - 1)`` (a page finding ``q = K`` is lost);
    - fictitious (``s = 2``, only ``a = 0``): ``(q, r)``;

    and the next epoch is a departure with probability ``mu 1(q' > 0) / nu``, an arrival with
    ``lam r' / nu``, fictitious otherwise, eqs. (19)-(21) as corrected (see Notes). The cost
    (18) is ``c(x) = gamma 1(q = 0) + nu 1(q = K, s = 1)``, so that the average cost per epoch
    is ``gamma`` times the starvation probability plus the loss rate (eq. 25). Action 1 is
    forced in ``(1, 0, 0)`` so that the absorbing state ``(0, 0, 2)`` is never reached.

    Parameters
    ----------
    lam, mu, gamma : float
    K : int
        Capacity, ``>= 2``.
    N : int
        Robots in the pool, ``>= 1``.

    Returns
    -------
    (FiniteMDP, RobotsStateSpace)

    Notes
    -----
    Corrections of the draft, each checked in the notebook and the tests:

    - (19), after a departure the next arrival probability is ``lam min(r + a, N) / nu``
      (the draft prints ``lam r / nu``, the robots before the decision) and the fictitious
      probability ``1 - (mu 1(q > 1) + lam min(r + a, N)) / nu`` (the draft prints a minus
      sign before ``lam r``, which makes the row sum exceed one);
    - (20), the queue after an arrival is ``min(q + 1, K)`` in all three cases (the draft prints
      ``min(q + 1, N)`` in the third).
    """
    lam = _positive("lam", lam)
    mu = _positive("mu", mu)
    gamma = _positive("gamma", gamma)
    space = robots_state_space(K, N)
    K, N = space.K, space.N
    nu = lam * N + mu
    n = space.n_states
    q, r, s = space.q, space.r, space.s

    cost = gamma * (q == 0) + nu * ((q == K) & (s == ARRIVAL))
    allowed = np.ones((2, n), dtype=bool)
    allowed[1, s == FICTITIOUS] = False
    allowed[0, space.index[1, 0, DEPARTURE]] = False

    transitions = []
    for a in (0, 1):
        q_post = np.where(s == DEPARTURE, q - 1, np.where(s == ARRIVAL, np.minimum(q + 1, K), q))
        r_post = np.where(s == DEPARTURE, np.minimum(r + a, N),
                          np.where(s == ARRIVAL, r + a - 1, r))
        valid = allowed[a]
        p_dep = mu * (q_post > 0) / nu
        p_arr = lam * r_post / nu
        # Fictitious: the robots not active plus, on an empty queue, the idle server. Written
        # as a sum of non-negative terms (not 1 - ...) so that it is exactly zero when it is.
        p_fic = (lam * (N - r_post) + mu * (q_post == 0)) / nu
        rows, cols, vals = [], [], []
        for s_next, p in ((DEPARTURE, p_dep), (ARRIVAL, p_arr), (FICTITIOUS, p_fic)):
            keep = valid & (p > 0)
            target = space.index[q_post[keep], np.clip(r_post[keep], 0, N), s_next]
            if np.any(target < 0):
                raise RuntimeError("transition into an infeasible state")  # a bug, not input
            rows.append(np.flatnonzero(keep))
            cols.append(target)
            vals.append(p[keep])
        P = sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n, n))
        transitions.append(P)
    rewards = -np.column_stack([cost, cost])          # rewards[s, a]
    return _mdp.FiniteMDP(tuple(transitions), rewards, allowed.T), space


def static_policy(space: RobotsStateSpace) -> np.ndarray:
    """The static policy ``pi_N`` of Section 3: action 1 at every arrival and departure.

    Started with all ``N`` robots active it keeps them active, so its average cost is the
    static cost ``C(N lam / mu, gamma, K)`` of eq. (4).
    """
    _check_space(space)
    return np.where(space.s == FICTITIOUS, 0, 1)


def policy_grid(space: RobotsStateSpace, policy) -> np.ndarray:
    """A policy as an array ``grid[s, q, r]`` for ``s = 0, 1`` (``nan`` where no state).

    For plotting the switching curves of Figs. 6-8: ``grid[0]`` is the action at departures,
    ``grid[1]`` at arrivals, over the queue length ``q`` and the active robots ``r``.
    """
    _check_space(space)
    policy = _policy(policy, space)
    grid = np.full((2, space.K + 1, space.N + 1), np.nan)
    sel = space.s != FICTITIOUS
    grid[space.s[sel], space.q[sel], space.r[sel]] = policy[sel]
    return grid


def _check_space(space) -> RobotsStateSpace:
    if not isinstance(space, RobotsStateSpace):
        raise TypeError(f"space must be a RobotsStateSpace, got {type(space).__name__}")
    return space


def _policy(policy, space: RobotsStateSpace) -> np.ndarray:
    """A policy of the robots MDP: an action 0 or 1 per state of ``space``."""
    raw = policy
    policy = np.asarray(policy)
    if policy.dtype.kind not in "iub":
        raise TypeError(f"policy must hold the actions 0 and 1 (integers), got an array of "
                        f"dtype {policy.dtype}")
    if policy.shape != (space.n_states,):
        raise ValueError(f"policy must have shape ({space.n_states},), got {policy.shape}")
    if policy.size and (policy.min() < 0 or policy.max() > 1):
        raise ValueError(f"policy must hold the actions 0 and 1, got {raw!r}")
    return policy


#: Sweeps of relative value iteration before policy iteration (:func:`_exact_solution`).
_WARM_SWEEPS = 200


def _exact_solution(model: _mdp.FiniteMDP,
                    space: RobotsStateSpace) -> _mdp.PolicyIterationSolution:
    """The exact optimum of the robots MDP: multichain policy iteration with LU evaluations.

    From the static policy ``pi_N``, policy iteration needs up to ~40 evaluations on the pools
    of Table 2, each moving the recurrent class a little; ``200`` sweeps of relative value
    iteration first (each far cheaper than an evaluation) leave one or two. The optimal policy
    is the same: on the 45 MDPs of Tables 1-2 the gain, the bias and the policy are bit for bit
    those of policy iteration from ``pi_N`` (the action at the departures ``(q, N, 0)``, where
    both actions are the same row, aside: :func:`robots_dynamic_optimum` reports 0 there).
    """
    return _mdp.policy_iteration(model, policy0=static_policy(space), evaluation="direct",
                                 warm_start=_WARM_SWEEPS)


@dataclass(frozen=True)
class DynamicOptimum:
    """The optimal dynamic policy for a pool of ``N`` robots (Section 3).

    Attributes
    ----------
    cost : float
        Optimal average cost, eq. (23).
    N_min, N_max : int
        Smallest and largest number of active robots with positive stationary probability
        under the optimal policy (active robots just before a decision epoch, which by PASTA
        is their time-stationary distribution).
    N_mean : float
        Stationary mean number of active robots.
    iterations : int
        Iterations of the solver: policy evaluations (policy iteration, after its warm start)
        or iterations (relative value iteration).
    policy : ndarray of int, shape (n,)
        The optimal action in each state of ``space``.
    space : RobotsStateSpace
    stationary : ndarray, shape (n,)
        Stationary distribution of the optimal policy.
    method : str
    converged : bool
    gain_bounds : tuple of float
        Bounds on the optimal cost from the returned relative values (costs, not rewards).
    """

    cost: float
    N_min: int
    N_mean: float
    N_max: int
    iterations: int
    policy: np.ndarray
    space: RobotsStateSpace
    stationary: np.ndarray
    method: str
    converged: bool
    gain_bounds: tuple[float, float]


def robots_dynamic_optimum(
    lam: float,
    mu: float,
    gamma: float,
    K: int,
    N: int,
    method: Literal["policy_iteration", "relative_value_iteration"] = "policy_iteration",
    *,
    tau: float = 0.99999,
    tol: float = 1e-5,
    stopping: Literal["relative", "span"] = "relative",
    reference_state: tuple[int, int, int] = (0, 1, 2),
    max_iter: int = 1_000_000,
) -> DynamicOptimum:
    """Optimal dynamic control of a pool of ``N`` robots (Section 3).

    Parameters
    ----------
    lam, mu, gamma : float
        Page rate per robot, indexing rate, weight of starvation.
    K : int
        Capacity of the queue.
    N : int
        Robots in the pool.
    method : {"policy_iteration", "relative_value_iteration"}
        ``"policy_iteration"``: exact (multichain policy iteration, warm-started by relative
        value iteration, incumbent the static policy ``pi_N``).
        ``"relative_value_iteration"``: Proposition 4 as the paper ran it,
        with ``tau``, ``tol``, ``stopping`` and the reference state ``x_hat``.
    tau, tol, stopping, reference_state, max_iter
        Passed to :func:`whittle_lib.mdp.relative_value_iteration` (``reference_state`` as a
        triple ``(q, r, s)``; the paper does not say which it used). ``h_0 = 0``.

    Returns
    -------
    DynamicOptimum

    Examples
    --------
    Figure 7 of the paper (N = 16, K = 5, lam = 0.1, mu = 1, gamma = 1.4), Cost = 0.25924:

    >>> round(robots_dynamic_optimum(0.1, 1.0, 1.4, 5, 16).cost, 5)
    0.25924
    """
    check_choice("method", method, ("policy_iteration", "relative_value_iteration"))
    if method == "relative_value_iteration":
        check_real("tau", tau, 0.0, 1.0, low_open=True)
        check_real("tol", tol, 0.0, np.inf, low_open=True, high_open=True)
        check_choice("stopping", stopping, ("relative", "span"))
        check_integer("max_iter", max_iter, 1)
        if not (isinstance(reference_state, tuple) and len(reference_state) == 3):
            raise TypeError(f"reference_state must be a triple (q, r, s), got "
                            f"{reference_state!r}")
    model, space = robots_mdp(lam, mu, gamma, K, N)
    if method == "policy_iteration":
        sol = _exact_solution(model, space)
    elif method == "relative_value_iteration":
        sol = _mdp.relative_value_iteration(
            model, tau=tau, tol=tol, stopping=stopping, max_iter=max_iter,
            reference_state=space.state(*reference_state))
    else:
        raise ValueError(f"method must be 'policy_iteration' or 'relative_value_iteration', "
                         f"got {method!r}")
    # With all N robots active, "activate one more" at a departure does nothing: report the
    # identical action 0 there, so that the policy reads as the paper's switching curves.
    policy = np.where((space.s == DEPARTURE) & (space.r == space.N), 0, sol.policy)
    P = _mdp.policy_transition_matrix(model, policy)
    classes = _mdp.recurrent_classes(P)
    if len(classes) > 1:
        warnings.warn(f"the optimal policy has {len(classes)} recurrent classes; the robot "
                      f"counts are those of the class with the smallest state",
                      RuntimeWarning, stacklevel=2)
    pi = _mdp.stationary_distribution(P) if len(classes) == 1 else _class_distribution(P, classes)
    support = np.unique(space.r[pi > 0])
    return DynamicOptimum(
        cost=-sol.gain,
        N_min=int(support.min()),
        N_mean=float(pi @ space.r),
        N_max=int(support.max()),
        iterations=sol.iterations,
        policy=policy,
        space=space,
        stationary=pi,
        method=method,
        converged=sol.converged,
        gain_bounds=(-sol.gain_bounds[1], -sol.gain_bounds[0]),
    )


def robots_unconstrained_optimum(lam: float, mu: float, gamma: float, K: int,
                                 *, initial_pool: int | None = None) -> DynamicOptimum:
    """The optimal dynamic policy when the pool of robots does not bind (Table 2's setting).

    Starts from a pool of ``initial_pool`` robots (default: twice the static optimum
    ``N(gamma, K)``), doubles it while the optimal policy keeps every robot of the pool active
    at some time (``N_max == N``), then confirms with a pool twice as large that the optimal
    cost no longer changes (within ``1e-12``).

    Parameters
    ----------
    lam, mu, gamma, K
        As in :func:`robots_dynamic_optimum`.
    initial_pool : int, optional

    Returns
    -------
    DynamicOptimum
        For the smallest pool tried that does not bind; ``N_max`` is then the largest number
        of robots the optimal policy keeps active.

    Examples
    --------
    Table 2, lam = 0.05, K = 5, gamma = 0.4: C_d = 0.13770, N_max = 20.

    >>> opt = robots_unconstrained_optimum(0.05, 1.0, 0.4, 5)
    >>> round(opt.cost, 5), opt.N_max
    (0.1377, 20)
    """
    pool = _robots(initial_pool) if initial_pool is not None else \
        2 * robots_static_optimum(lam, mu, gamma, K).N
    while True:
        opt = robots_dynamic_optimum(lam, mu, gamma, K, pool)
        if opt.N_max < pool:
            check = robots_dynamic_optimum(lam, mu, gamma, K, 2 * pool)
            if abs(check.cost - opt.cost) <= 1e-12:
                return opt
        pool *= 2


@dataclass(frozen=True)
class TimeAverageRates:
    """Starvation probability and loss rate of a policy, two ways (:func:`time_average_rates`).

    Attributes
    ----------
    starvation_epochs, loss_epochs : float
        ``S_pi`` and ``L_pi`` as averages over decision epochs: ``pi(q = 0)`` and
        ``nu pi(q = K, s = 1)`` under the stationary law of the uniformised chain
        (``nu = lam N + mu``).
    starvation_time, loss_time : float
        The time averages: ``P(Q = 0)`` and ``lam E[R 1(Q = K)]`` under the stationary law of
        the continuous-time chain ``(Q(t), R(t))`` built from the verbal model of Section 3
        (no uniformisation).
    """

    starvation_epochs: float
    loss_epochs: float
    starvation_time: float
    loss_time: float


def time_average_rates(lam: float, mu: float, gamma: float, K: int, N: int, policy
                       ) -> TimeAverageRates:
    """A policy's starvation probability and loss rate per decision epoch and in time (eq. (25)).

    Eq. (25) of [TLNC99]_ says that the average cost of the MDP over decision epochs is the
    time-average cost ``gamma S + L`` of the controlled queue. The per-epoch averages come from
    the stationary law of the policy's uniformised chain (:func:`robots_mdp`); the time
    averages from the continuous-time chain on ``(q, r)`` built from the verbal model, not from
    (19)-(21): at rate ``lam r`` a robot brings a page (the queue grows by one unless full)
    and is deactivated, then reactivated if the policy's action at ``(q, r, 1)`` is 1; at rate
    ``mu`` when ``q > 0`` a page leaves and one more robot is activated (if ``r < N``) if the
    action at ``(q, r, 0)`` is 1.

    Parameters
    ----------
    lam, mu, gamma, K, N
        As in :func:`robots_mdp`.
    policy : array_like of int, shape (n_states,)
        An action per state of ``robots_mdp(lam, mu, gamma, K, N)``, with one recurrent class.

    Returns
    -------
    TimeAverageRates

    Examples
    --------
    The optimal policy of Fig. 7 (cost 0.25924 = gamma S + L): the two ways agree.

    >>> opt = robots_dynamic_optimum(0.1, 1.0, 1.4, 5, 16)
    >>> rates = time_average_rates(0.1, 1.0, 1.4, 5, 16, opt.policy)
    >>> round(1.4 * rates.starvation_time + rates.loss_time, 5)
    0.25924
    """
    model, space = robots_mdp(lam, mu, gamma, K, N)
    policy = _policy(policy, space)
    P = _mdp.policy_transition_matrix(model, policy)
    pi = _mdp.stationary_distribution(P)
    nu = lam * N + mu
    s_ep = float(pi[space.q == 0].sum())
    l_ep = float(nu * pi[(space.q == K) & (space.s == ARRIVAL)].sum())
    # The continuous-time generator on (q, r), without (0, 0): nothing happens there, and the
    # forced action at (1, 0, 0) never enters it.
    pairs = [(q, r) for q in range(K + 1) for r in range(N + 1) if (q, r) != (0, 0)]
    idx = {qr: i for i, qr in enumerate(pairs)}
    m = len(pairs)
    G = np.zeros((m, m))
    for (q, r), i in idx.items():
        if r > 0:
            a = policy[space.state(q, r, ARRIVAL)]
            G[i, idx[(min(q + 1, K), r - 1 + a)]] += lam * r
        if q > 0:
            a = policy[space.state(q, r, DEPARTURE)]
            G[i, idx[(q - 1, min(r + a, N))]] += mu
    G -= np.diag(G.sum(axis=1))
    pt = _mdp.stationary_distribution(sparse.csr_array(np.eye(m) + G / nu))
    qs = np.array([q for q, _ in pairs])
    rs = np.array([r for _, r in pairs])
    return TimeAverageRates(starvation_epochs=s_ep, loss_epochs=l_ep,
                            starvation_time=float(pt[qs == 0].sum()),
                            loss_time=float(lam * (pt * rs)[qs == K].sum()))


def _class_distribution(P, classes) -> np.ndarray:
    c = classes[0]
    sub = _mdp.stationary_distribution(sparse.csr_array(P[c][:, c]))
    pi = np.zeros(P.shape[0])
    pi[c] = sub
    return pi


@dataclass(frozen=True)
class SwitchingCurves:
    """A policy read as two switching curves (Section 3, after Figure 8).

    The paper conjectures that the optimal policy is ``pi(q, r, s) = 1(q <= f_s(r))`` for
    ``s = 0, 1`` with ``f_s`` non-increasing. Where both actions are optimal (within ``tol``)
    either may be chosen; the curves are then any thresholds compatible with the optimal sets.

    Attributes
    ----------
    is_switching_curve : bool
        For each ``s`` and ``r`` the states where action 1 must be taken lie below those where
        action 0 must be taken, so that a threshold ``f_s(r)`` exists.
    is_monotone : bool
        Moreover the thresholds can be chosen non-increasing in ``r``.
    thresholds : ndarray, shape (2, N + 1)
        A choice of ``f_s(r)`` (``-1``: action 0 at every ``q``; ``nan`` where no threshold
        exists or ``r`` has no state of type ``s``).
    """

    is_switching_curve: bool
    is_monotone: bool
    thresholds: np.ndarray


def switching_curves(lam: float, mu: float, gamma: float, K: int, N: int,
                     *, tol: float = 1e-9) -> SwitchingCurves:
    """Test the switching-curve conjecture of Section 3 on one instance.

    Solves the MDP exactly (policy iteration), computes for every state the set of optimal
    actions (those within ``tol`` of the best, on the optimal bias), and checks whether a
    policy of the form ``1(q <= f_s(r))`` with non-increasing ``f_s`` selects an optimal action
    in every state.

    Parameters
    ----------
    lam, mu, gamma, K, N
        As in :func:`robots_dynamic_optimum`.
    tol : float
        Absolute tolerance on Q-values for two actions to count as equally good.

    Returns
    -------
    SwitchingCurves
    """
    tol = check_real("tol", tol, 0.0, np.inf, high_open=True)
    model, space = robots_mdp(lam, mu, gamma, K, N)
    sol = _exact_solution(model, space)
    q_vals = model.q_values(sol.bias)          # q[s, a]
    best = q_vals.max(axis=1)
    one_ok = q_vals[:, 1] >= best - tol
    zero_ok = q_vals[:, 0] >= best - tol
    thresholds = np.full((2, space.N + 1), np.nan)
    lo_hi = np.full((2, space.N + 1, 2), np.nan)
    switching = True
    for s in (DEPARTURE, ARRIVAL):
        for r in range(space.N + 1):
            sel = (space.s == s) & (space.r == r)
            if not sel.any():
                continue
            qs = space.q[sel]
            must1 = qs[~zero_ok[sel]]  # action 0 not optimal: need q <= f
            must0 = qs[~one_ok[sel]]   # action 1 not optimal: need q > f
            lo = must1.max() if must1.size else -1
            hi = must0.min() - 1 if must0.size else K
            if lo > hi:
                switching = False
                continue
            lo_hi[s, r] = (lo, hi)
    monotone = switching
    if switching:
        for s in (DEPARTURE, ARRIVAL):
            prev = np.inf
            for r in range(space.N + 1):
                if np.isnan(lo_hi[s, r, 0]):
                    continue
                lo, hi = lo_hi[s, r]
                f = min(hi, prev)  # the largest admissible value keeps room below for later r
                if f < lo:
                    monotone = False
                    f = hi
                thresholds[s, r] = f
                prev = f
    return SwitchingCurves(is_switching_curve=switching, is_monotone=monotone,
                           thresholds=thresholds)
