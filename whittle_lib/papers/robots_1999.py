"""What the robots draft printed, its readings, and the sweeps that judge its claims.

J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., *Controlling Robots of Web Search Engines*, draft
of May 20, 1999 ([TLNC99]_). The model itself (eqs. (4), (18)-(21), corrected) is
:mod:`whittle_lib.models.robots`; this module holds what the draft wrote where it matters for a
verdict, and the computations that decide whether a verdict survives every reading:

- :func:`rvi_reference_sweep`: Proposition 4 as the paper ran it, for many reference states
  ``x_hat`` at once, two initial values ``h_0`` and two readings of the stopping rule (the paper
  gives neither ``x_hat`` nor ``h_0``, and its rule divides by ``h_k(x_hat) = 0``);
- :func:`strong_components`, :func:`paper_multichain_example_classes`, :func:`gain_spread`:
  Lemma 4, the example of Section 3 and Proposition 3;
- :func:`time_average_rates`: the starvation probability and the loss rate of a policy from
  the continuous-time chain, the right-hand side of eq. (25), against the per-epoch averages;
- :func:`eq16_exact`: eq. (16) in exact rational arithmetic, for the ties;
- :func:`static_cost_loss_probability`: the cost of Sec. 6's wording ("loss probability").

References
----------
.. [TLNC99] J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., "Controlling Robots of Web Search
   Engines", draft, May 20, 1999 (SIGMETRICS Performance Evaluation Review, 2001).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .. import mdp as _mdp
from ..models import robots as _q
from ..replication import parse_setting as _parse_setting
from ..replication import setting as _setting

__all__ = [
    "STOPPING_READINGS",
    "RVISweep",
    "rvi_reference_sweep",
    "strong_components",
    "is_communicating",
    "paper_multichain_example_classes",
    "gain_spread",
    "TimeAverageRates",
    "time_average_rates",
    "eq16_exact",
    "static_cost_exact",
    "static_cost_loss_probability",
    "check_notebook_parameters",
    "with_changed",
    "table_row_parameters",
    "prints_as",
    "optimal_robots",
    "Lemma1Check",
    "check_lemma1",
    "check_proposition1",
    "check_proposition2",
    "Lemma23Check",
    "check_lemmas_2_3",
    "Eq16Check",
    "check_eq16",
    "rho_at_cited_threshold",
    "check_eq11",
    "eq19_printed_row_sums",
    "rvi_iterations_by_tau",
    "state_tuple",
    "AllReferenceStates",
    "rvi_all_reference_states",
    "Lemma4Check",
    "check_lemma4",
    "MultichainExample",
    "multichain_example",
    "Eq21Check",
    "check_eq21",
    "eq25_gaps",
    "static_costs_matched",
    "brute_static_costs_matched",
    "Table1Row",
    "table1_row",
    "PoolSearch",
    "pool_search",
    "NMaxReadings",
    "n_max_readings",
]

#: The two readings of the stopping rule "max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < 1e-5"
#: (Sec. 3; Sec. 4: "the relative error between two consecutive iterates was (uniformly) less
#: than 1e-5"). ``"pointwise"``: the ratio state by state, over ``x != x_hat`` (at ``x_hat``
#: both iterates are 0); ``"norm"``: ``max_x |h_{k+1} - h_k| / max_x |h_k|``.
STOPPING_READINGS = ("pointwise", "norm")


@dataclass(frozen=True)
class RVISweep:
    """Relative value iteration (Proposition 4) run from many reference states at once.

    Attributes
    ----------
    reference_states : ndarray of int, shape (m,)
        Positions of the reference states ``x_hat`` in the model's state space.
    h0 : str
        ``"zero"`` (``h_0 = 0``) or ``"cost"`` (``h_0 = c``, the one-step cost), each with
        ``h_0(x_hat) = 0``.
    iterations : dict of str to ndarray of int, shape (m,)
        For each reading of :data:`STOPPING_READINGS`, the iteration at which it stops.
    estimate : dict of str to ndarray, shape (m,)
        For each reading, ``T(h)(x_hat)`` at the stop: the cost estimate (Proposition 4 with
        ``theta = T(h)(x_hat)``; the draft prints ``tau T(h)(x_hat)``, see the notebook).
    policy : dict of str to ndarray of int, shape (n, m)
        The greedy policy at the stop, one column per reference state.
    """

    reference_states: np.ndarray
    h0: str
    iterations: dict
    estimate: dict
    policy: dict


def rvi_reference_sweep(model: _mdp.FiniteMDP, reference_states, *, tau: float = 0.99999,
                        tol: float = 1e-5, h0: str = "zero", max_iter: int = 100_000
                        ) -> RVISweep:
    """Run Proposition 4 of [TLNC99]_ from every reference state in ``reference_states``.

    The iteration ``h_{k+1} = (1 - tau) h_k + tau (T h_k - T h_k(x_hat))`` is vectorised over
    the reference states (one column each); both readings of the stopping rule
    (:data:`STOPPING_READINGS`) watch the same iterates, so one pass gives both. The costs of
    the model are its negated rewards; ``T`` minimises cost as in (24).

    Parameters
    ----------
    model : FiniteMDP
        Rewards are ``-c``, as built by :func:`whittle_lib.models.robots.robots_mdp`.
    reference_states : array_like of int
        Positions of the ``x_hat`` to try.
    tau, tol : float
        Damping and threshold of the stopping rule (the paper: 0.99999 and 1e-5).
    h0 : {"zero", "cost"}
        The initial relative values, which the paper leaves arbitrary.
    max_iter : int

    Returns
    -------
    RVISweep

    Notes
    -----
    Column ``j`` follows exactly the iterates of
    ``whittle_lib.mdp.relative_value_iteration(model, tau=tau, tol=tol,
    reference_state=reference_states[j])`` (``h0`` zero), so its pointwise count equals that
    function's ``iterations`` (checked in the tests).
    """
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must lie in (0, 1], got {tau}")
    if tol <= 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if h0 not in ("zero", "cost"):
        raise ValueError(f"h0 must be 'zero' or 'cost', got {h0!r}")
    refs = np.asarray(reference_states, dtype=np.int64).ravel()
    n, A = model.n_states, model.n_actions
    if refs.size == 0 or refs.min() < 0 or refs.max() >= n:
        raise ValueError(f"reference_states must be positions in 0..{n - 1}, got {refs}")
    m = refs.size
    start = np.zeros(n) if h0 == "zero" else -model.rewards.max(axis=0)
    H = np.repeat(start[:, None], m, axis=1)
    H[refs, np.arange(m)] = 0.0
    R = model.rewards[:, :, None]
    allowed = model.allowed[:, :, None]
    stacked = sparse.csr_array(sparse.vstack(model.transitions))

    def t_of(Hc):
        q = np.where(allowed, R + (stacked @ Hc).reshape(A, n, -1), -np.inf)
        return q

    iters = {r: np.zeros(m, dtype=np.int64) for r in STOPPING_READINGS}
    est = {r: np.full(m, np.nan) for r in STOPPING_READINGS}
    pol = {r: np.zeros((n, m), dtype=np.int64) for r in STOPPING_READINGS}
    active = np.arange(m)
    for k in range(1, max_iter + 1):
        Hs = H[:, active]
        ref, cols = refs[active], np.arange(active.size)
        Th = t_of(Hs).max(axis=0)
        Hn = (1 - tau) * Hs + tau * (Th - Th[ref, cols])
        delta, base = np.abs(Hn - Hs), np.abs(Hs)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(base > 0, delta / base, np.where(delta > 0, np.inf, 0.0))
            ratio[ref, cols] = 0.0
            big = base.max(axis=0)
            norm = np.where(big > 0, delta.max(axis=0) / big, np.inf)
        H[:, active] = Hn
        for reading, stat in zip(STOPPING_READINGS, (ratio.max(axis=0), norm)):
            newly = (stat < tol) & (iters[reading][active] == 0)
            if newly.any():
                done = active[newly]
                qf = t_of(Hn[:, newly])
                # rewards are maximised: the cost estimate is -max_a q at x_hat
                est[reading][done] = -qf.max(axis=0)[refs[done], np.arange(done.size)]
                pol[reading][:, done] = qf.argmax(axis=0)
                iters[reading][done] = k
        active = active[np.any([iters[r][active] == 0 for r in STOPPING_READINGS], axis=0)]
        if active.size == 0:
            break
    if active.size:
        raise RuntimeError(f"relative value iteration did not stop within {max_iter} "
                           f"iterations for {active.size} reference states")
    return RVISweep(reference_states=refs, h0=h0, iterations=iters, estimate=est, policy=pol)


def strong_components(model: _mdp.FiniteMDP) -> list[np.ndarray]:
    """The communicating classes of an MDP: strong components of its accessibility graph.

    The graph has an edge ``x -> y`` whenever ``p_{xy}(a) > 0`` for some allowed ``a`` (the
    randomised policy that uses every allowed action has exactly these edges), so ``y`` is
    accessible from ``x`` under some stationary policy iff the graph has a path ``x -> y``.
    The MDP is communicating (Appendix A of [TLNC99]_; [P94]_, Sec. 8.3.1) iff there is one
    component. Components are returned largest first.

    Examples
    --------
    Lemma 4 on ``K = 2``, ``N = 1``: besides one class, the two states ``(q, N, 2)``, ``q >= 1``,
    which no transition enters.

    >>> from whittle_lib.models import robots
    >>> model, space = robots.robots_mdp(0.1, 1.0, 1.4, 2, 1)
    >>> [(int(space.q[c[0]]), int(space.r[c[0]]), int(space.s[c[0]]))
    ...  for c in strong_components(model)[1:]]
    [(1, 1, 2), (2, 1, 2)]
    """
    n = model.n_states
    union = sparse.csr_array((n, n))
    for a, P in enumerate(model.transitions):
        union = union + sparse.diags_array(model.allowed[a].astype(float)) @ P
    n_comp, label = csgraph.connected_components(union, directed=True, connection="strong")
    comps = [np.flatnonzero(label == c) for c in range(n_comp)]
    return sorted(comps, key=lambda c: (-c.size, int(c[0])))


def is_communicating(model: _mdp.FiniteMDP) -> bool:
    """Whether the MDP is communicating: one strong component (:func:`strong_components`)."""
    return len(strong_components(model)) == 1


def paper_multichain_example_classes(lam: float, mu: float, gamma: float, K: int
                                     ) -> list[np.ndarray]:
    """Recurrent classes of the policy of the Section 3 example (``N = 2``).

    "Any stationary policy that selects action 1 in states ``(., r, 1)`` for ``r in {1, 2}``
    and in state ``(1, 0, 0)``, and action 0 otherwise": the paper says it has two recurrent
    classes (levels ``r = 1`` and ``r = 2``) and transient states at ``r = 0``.

    Returns
    -------
    list of ndarray
        The recurrent classes (positions in the state space of ``robots_mdp(..., N=2)``).
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, 2)
    policy = np.where((space.s == _q.ARRIVAL) & (space.r >= 1), 1, 0)
    policy[space.state(1, 0, _q.DEPARTURE)] = 1
    return _mdp.recurrent_classes(_mdp.policy_transition_matrix(model, policy))


def gain_spread(lam: float, mu: float, gamma: float, K: int, N: int) -> float:
    """``max_x W*(x) - min_x W*(x)`` of the optimal gain (Proposition 3 says it is zero).

    The gain is computed state by state by multichain policy iteration ([P94]_, Alg. 9.2.1),
    which does not assume a constant gain.
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    sol = _mdp.policy_iteration(model, policy0=_q.static_policy(space))
    g = -np.asarray(sol.gain_by_state, dtype=float)
    return float(g.max() - g.min())


@dataclass(frozen=True)
class TimeAverageRates:
    """Starvation probability and loss rate of a policy, two ways (eq. (25) of [TLNC99]_).

    Attributes
    ----------
    starvation_epochs, loss_epochs : float
        ``S_pi`` and ``L_pi`` as averages over decision epochs: ``pi(q = 0)`` and
        ``nu pi(q = K, s = 1)`` under the stationary law of the uniformised chain.
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
    """Check eq. (25): per-epoch averages of the MDP against continuous-time averages.

    The continuous-time chain on ``(q, r)``: at rate ``lam r`` a robot brings a page (the queue
    grows by one unless full) and is deactivated, then reactivated if the policy's action at
    ``(q, r, 1)`` is 1; at rate ``mu`` when ``q > 0`` a page leaves and one more robot is
    activated (if ``r < N``) if the action at ``(q, r, 0)`` is 1. Its stationary law gives the
    time averages; the per-epoch ones come from the uniformised chain of
    :func:`whittle_lib.models.robots.robots_mdp`. The policy must have one recurrent class.
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    policy = np.asarray(policy)
    P = _mdp.policy_transition_matrix(model, policy)
    pi = _mdp.stationary_distribution(P)
    nu = lam * N + mu
    s_ep = float(pi[space.q == 0].sum())
    l_ep = float(nu * pi[(space.q == K) & (space.s == _q.ARRIVAL)].sum())
    # Continuous-time generator on (q, r), built from the verbal model (not from (19)-(21)).
    # Continuous-time generator on (q, r), built from the verbal model (not from (19)-(21)),
    # without (0, 0): nothing happens there, and the forced action at (1, 0, 0) never enters it.
    pairs = [(q, r) for q in range(K + 1) for r in range(N + 1) if (q, r) != (0, 0)]
    idx = {qr: i for i, qr in enumerate(pairs)}
    m = len(pairs)
    G = np.zeros((m, m))
    for (q, r), i in idx.items():
        if r > 0:
            a = policy[space.state(q, r, _q.ARRIVAL)]
            G[i, idx[(min(q + 1, K), r - 1 + a)]] += lam * r
        if q > 0:
            a = policy[space.state(q, r, _q.DEPARTURE)]
            G[i, idx[(q - 1, min(r + a, N))]] += mu
    G -= np.diag(G.sum(axis=1))
    pt = _mdp.stationary_distribution(sparse.csr_array(np.eye(m) + G / nu))
    qs = np.array([q for q, _ in pairs])
    rs = np.array([r for _, r in pairs])
    return TimeAverageRates(starvation_epochs=s_ep, loss_epochs=l_ep,
                            starvation_time=float(pt[qs == 0].sum()),
                            loss_time=float(lam * (pt * rs)[qs == K].sum()))


def eq16_exact(mu_over_lambda: Fraction, gamma_over_mu: Fraction) -> int:
    """Eq. (16) of [TLNC99]_ in exact arithmetic: ``ceil`` if ``C(rho_+) <= C(rho_-)``.

    With ``m = mu / lam``, ``rho_- = floor(m) / m`` and ``rho_+ = ceil(m) / m``, the limiting
    costs are ``C(rho_-, gamma, inf) = gamma (1 - rho_-)`` and
    ``C(rho_+, gamma, inf) = mu (rho_+ - 1)``. At a tie (``gamma = mu`` and half-integer ``m``,
    for instance) the printed rule takes the ceiling; floating point may not.

    Examples
    --------
    A tie: ``gamma = mu`` and ``mu / lam = 3.5``; the printed ``<=`` takes 4 robots.

    >>> eq16_exact(Fraction(7, 2), Fraction(1))
    4
    """
    m, g = Fraction(mu_over_lambda), Fraction(gamma_over_mu)
    if m <= 0 or g <= 0:
        raise ValueError(f"mu_over_lambda and gamma_over_mu must be positive, got {m}, {g}")
    lo, hi = m.numerator // m.denominator, -(-m.numerator // m.denominator)
    if lo == hi:
        return lo
    c_minus = g * (1 - Fraction(lo) / m)
    c_plus = Fraction(hi) / m - 1
    return hi if (c_plus <= c_minus or lo == 0) else lo


def static_cost_exact(n: int, mu_over_lambda: Fraction, gamma_over_mu: Fraction, K: int
                      ) -> Fraction:
    """Eq. (4) divided by ``mu``, exactly, for ``n`` robots: ``C(n lam / mu, gamma, K) / mu``.

    ``(gamma/mu P(X = 0) + rho P(X = K))`` with ``P(X = i) = rho^i / sum_j rho^j`` (eq. (3)).

    Examples
    --------
    Table 1, row 1 (``lam = 0.01``, ``mu = 1``, ``K = 5``, ``gamma = 0.4``): ``N_s = 73``,
    ``C_s = 0.17541``.

    >>> round(float(static_cost_exact(73, Fraction(100), Fraction(2, 5), 5)), 5)
    0.17541
    """
    rho = Fraction(n) / Fraction(mu_over_lambda)
    powers = [rho ** i for i in range(K + 1)]
    total = sum(powers)
    return (Fraction(gamma_over_mu) * powers[0] + rho * powers[K]) / total


def static_cost_loss_probability(rho, gamma: float, K: int) -> np.ndarray:
    """The cost as Sec. 6 words it: ``gamma P(X = 0) + P(X = K)`` (a loss *probability*).

    Eq. (1) weighs the loss *rate* ``lam N P(X = K) = mu rho P(X = K)`` instead.
    """
    rho = np.atleast_1d(np.asarray(rho, dtype=float))
    out = np.empty_like(rho)
    for i, x in enumerate(rho):
        p = _q.mm1k_distribution(float(x), K)
        out[i] = gamma * p[0] + p[K]
    return out


# --------------------------------------------------------------------------------------------
# The notebook's sweeps: the static problem (Sec. 2), the MDP (Sec. 3), Tables 1 and 2.
# Each returns what it computed; the notebook turns it into verdicts and prints it.
# --------------------------------------------------------------------------------------------

def check_notebook_parameters(*, mu: float, lambda_policy: float, gammas_policy, K_policy: int,
                              N_policy: int, reference_state, buffer_sizes_fig2) -> None:
    """Check what the notebook's parameter rules cannot say, through the model.

    The MDP of Figs. 6-8 must build, ``reference_state`` ``(q, r, s)`` must be one of its
    states, each ``gamma`` and ``K`` must be valid for eq. (4), and ``gammas_policy`` must not
    repeat a value (one figure each).

    Raises
    ------
    ValueError
        Naming the parameter and its value.

    Examples
    --------
    >>> check_notebook_parameters(mu=1.0, lambda_policy=0.1, gammas_policy=[1.0, 1.0],
    ...                           K_policy=5, N_policy=16, reference_state=(0, 1, 2),
    ...                           buffer_sizes_fig2=[5, 20])
    Traceback (most recent call last):
    ...
    ValueError: gammas_policy must not repeat a value, got [1.0, 1.0]
    """
    _q.robots_mdp(lambda_policy, mu, gammas_policy[0], K_policy, N_policy)
    _q.robots_state_space(K_policy, N_policy).state(*reference_state)
    for g in gammas_policy:
        for k in buffer_sizes_fig2:
            _q.robots_cost(1.0, gamma=g, K=k, mu=mu)
    if len(set(gammas_policy)) != len(gammas_policy):
        raise ValueError(f"gammas_policy must not repeat a value, got {gammas_policy}")


def with_changed(changed: Mapping[str, object], text: str, *names: str) -> str:
    """A ``setting`` with the parameters among ``names`` that are not at their defaults.

    ``changed`` maps the changed parameters to their values (``wl.check_parameters(...)
    .changed``); a row computed at the paper's setting keeps its setting ``text``, any other
    gets ``;name=value`` for each of ``names`` it depends on, so it cannot be mistaken for a
    number of the paper.

    Examples
    --------
    >>> with_changed({"mu": 0.5}, "lambda=0.1;K=5", "mu", "tau")
    'lambda=0.1;K=5;mu=0.5'
    >>> with_changed({}, "lambda=0.1;K=5", "mu")
    'lambda=0.1;K=5'
    """
    picked = {name: changed[name] for name in names if name in changed}
    return f"{text};{_setting(**picked)}" if picked else text


def table_row_parameters(setting_text: str) -> tuple[float, int, float]:
    """``(lam, K, gamma)`` of a row of Tables 1 and 2 from its ``setting`` text.

    The rows printed ``gamma = 1.13`` are ``gamma(15) = 17/15`` (with the captions'
    ``mu = 1``, Lemma 1) printed to two decimals: their ``C_s = 0.13333 = (gamma(15) + 1)/16``
    is the cost (4) at ``rho = 1``; those rows get ``critical_gamma(K, 1.0)``.

    Examples
    --------
    >>> table_row_parameters("lambda=0.01;K=15;gamma=1.13")
    (0.01, 15, 1.1333333333333333)
    """
    p = _parse_setting(setting_text)
    lam, K, g_printed = float(p["lambda"]), int(p["K"]), p["gamma"]
    g = float(g_printed)
    if g_printed == "1.13":
        g = _q.critical_gamma(K, 1.0)
    return lam, K, g


def prints_as(expected_row, value: float) -> bool:
    """Whether ``value`` prints as the paper's number: within the expected row's tolerance.

    ``expected_row`` has the attributes ``paper`` (the text as printed) and ``tolerance``
    (a :class:`whittle_lib.replication.Row`); the slack ``1e-9`` relative is the one
    :meth:`whittle_lib.replication.Comparison.number` uses.
    """
    return abs(float(expected_row.paper) - value) <= expected_row.tolerance * (1 + 1e-9)


def optimal_robots(lam: float, mu: float, gammas, K: int) -> np.ndarray:
    """``N(gamma, K)`` of Proposition 1 for each ``gamma`` of ``gammas`` (Fig. 2).

    Examples
    --------
    Fig. 2's ``mu/lam = 5.7``: more robots as ``gamma`` grows.

    >>> optimal_robots(1 / 5.7, 1.0, [0.1, 1.0, 5.0], 5).tolist()
    [3, 5, 8]
    """
    return np.array([_q.robots_static_optimum(lam, mu, g, K).N for g in gammas], dtype=np.int64)


@dataclass(frozen=True)
class Lemma1Check:
    """Lemma 1 against brute force (:func:`check_lemma1`).

    Attributes
    ----------
    holds : bool
        The minimiser lies on the side of 1 the lemma says, and within one grid step of the
        brute-force minimiser, for every pair.
    worst_distance : float
        Largest distance between the root of ``R`` and the brute-force minimiser.
    """

    holds: bool
    worst_distance: float


def check_lemma1(mu: float, *, buffers=(2, 3, 4, 5, 7, 10, 15, 20, 30, 45, 60), gammas=None,
                 step: float = 1e-4, rho_max: float = 6.0) -> Lemma1Check:
    """Lemma 1 of [TLNC99]_: ``rho(gamma, K)`` is unique and ``<, =, > 1`` as ``gamma <, =, >
    gamma(K) = mu (K + 2) / K``.

    For each ``K`` and each ``gamma`` (default 100 values in ``[0.05, 5]``, plus ``gamma(K)``),
    the minimiser from the root of ``R`` (eq. (6), :func:`whittle_lib.models.robots.optimal_load`)
    is compared with a brute-force minimisation of eq. (4) on the grid ``step, 2 step, ...,
    rho_max`` that knows nothing of ``R``.
    """
    gammas = np.linspace(0.05, 5.0, 100) if gammas is None else np.asarray(gammas, dtype=float)
    rho_grid = np.arange(step, rho_max, step)
    ok, worst = True, 0.0
    for K in buffers:
        gK = _q.critical_gamma(K, mu)
        for g in np.append(gammas, gK):
            r = _q.optimal_load(g, K, mu)
            brute = rho_grid[np.argmin(_q.robots_cost(rho_grid, g, K, mu))]
            worst = max(worst, abs(brute - r))
            side_ok = (r < 1) if g < gK - 1e-12 else (r > 1) if g > gK + 1e-12 else (r == 1)
            ok &= bool(side_ok)
    ok &= worst <= step
    return Lemma1Check(holds=bool(ok), worst_distance=float(worst))


def check_proposition1(mu: float, *, buffers=(2, 3, 5, 10, 30, 60),
                       gammas=(0.1, 0.4, 1.0, 1.4, 2.4, 5.0), mu_over_lambda=None) -> bool:
    """Proposition 1 of [TLNC99]_: ``N(gamma, K)``, the better of ``floor`` and ``ceil`` of
    ``rho(gamma, K) mu / lam``, against exhaustive search over ``n = 1 .. 4 mu/lam + 20``.

    ``mu_over_lambda`` defaults to ``1, 1.5, ..., 30``.
    """
    ratios = np.arange(1.0, 30.5, 0.5) if mu_over_lambda is None else mu_over_lambda
    ok = True
    for K, g, m in itertools.product(buffers, gammas, ratios):
        lam = mu / m
        n = np.arange(1, int(4 * m) + 20)
        brute = int(n[np.argmin(_q.robots_cost(n * lam / mu, g, K, mu))])
        ok &= _q.robots_static_optimum(lam, mu, g, K).N == brute
    return bool(ok)


def check_proposition2(mu: float, *, buffers=range(2, 61), gammas=None) -> bool:
    """Proposition 2 of [TLNC99]_: ``gamma -> rho(gamma, K)`` is nondecreasing (to ``1e-12``)
    on ``gammas`` (default 200 values in ``[0.01, 50]``) for each ``K``, and unbounded
    (``rho(1e4, 5) > 5``)."""
    gammas = np.geomspace(0.01, 50, 200) if gammas is None else gammas
    ok = True
    for K in buffers:
        r = np.array([_q.optimal_load(g, K, mu) for g in gammas])
        ok &= bool(np.all(np.diff(r) >= -1e-12))
    ok &= _q.optimal_load(1e4, 5, mu) > 5
    return bool(ok)


@dataclass(frozen=True)
class Lemma23Check:
    """Lemmas 2 and 3 on a grid (:func:`check_lemmas_2_3`).

    Attributes
    ----------
    lemma2_holds : bool
        ``K -> rho(gamma, K)`` nondecreasing for ``gamma <= mu``, unimodal for ``gamma > mu``.
    K0 : dict of float to int
        For each ``gamma/mu > 1``, the ``K`` that maximises ``rho(gamma, K)``.
    lemma3_gap : float
        ``max |rho(gamma, K_max) - 1|`` over the grid of ``gamma``.
    """

    lemma2_holds: bool
    K0: dict
    lemma3_gap: float


def check_lemmas_2_3(mu: float, *, buffers=None, gamma_over_mu=None) -> Lemma23Check:
    """Lemma 2 (unproven in [TLNC99]_) and Lemma 3 (``rho(gamma, K) -> 1``).

    ``buffers`` defaults to ``K = 2 .. 400``, ``gamma_over_mu`` to ``0.1, 0.2, ..., 5.0``.
    Monotonicity is tested to ``1e-12``; ``K_0`` is the argmax of ``rho`` over ``buffers``.
    """
    Ks = np.arange(2, 401) if buffers is None else np.asarray(buffers)
    ratios = np.round(np.arange(0.1, 5.01, 0.1), 2) if gamma_over_mu is None else gamma_over_mu
    ok, K0 = True, {}
    for g in ratios:
        r = np.array([_q.optimal_load(g * mu, K, mu) for K in Ks])
        d = np.diff(r)
        if g <= 1:
            ok &= bool(np.all(d >= -1e-12))
        else:
            k0 = int(np.argmax(r))
            ok &= bool(np.all(d[:k0] >= -1e-12) and np.all(d[k0:] <= 1e-12))
            K0[g] = int(Ks[k0])
    K_last = int(Ks[-1])
    gap = max(abs(_q.optimal_load(g * mu, K_last, mu) - 1) for g in ratios)
    return Lemma23Check(lemma2_holds=bool(ok), K0=K0, lemma3_gap=gap)


@dataclass(frozen=True)
class Eq16Check:
    """Eq. (16) in exact arithmetic against the exact ``N(gamma, K)`` (:func:`check_eq16`).

    Attributes
    ----------
    mu_over_lambda : ndarray
        The grid of ``mu / lam``.
    N_inf : dict of float to list of int
        Eq. (16) on the grid, for each ``gamma``.
    agree, total : int
        Pairs ``(gamma, mu/lam)`` whose limiting costs differ, and how many of them (16) gets
        equal to ``N(gamma, K)``.
    ties : list of (float, Fraction, int)
        The exact ties ``(gamma, mu/lam, N by (16))``.
    ties_ceil : int
        Ties at which (16) takes the ceiling.
    floor_at_finite_K : bool
        Every tie is at ``gamma = mu`` with ``rho_- rho_+ < 1``: every finite ``K`` takes the
        floor there.
    """

    mu_over_lambda: np.ndarray
    N_inf: dict
    agree: int
    total: int
    ties: list
    ties_ceil: int
    floor_at_finite_K: bool


def check_eq16(mu: float, *, gammas=(0.4, 1.0, 2.4), mu_over_lambda=None, K: int = 2000
               ) -> Eq16Check:
    """Eq. (16) of [TLNC99]_ (:func:`eq16_exact`) against ``N(gamma, K)`` at a large ``K``.

    ``mu_over_lambda`` defaults to ``1, 1.05, ..., 30``. A tie ``gamma (m - n) = mu (n + 1 -
    m)``, ``m = mu/lam in (n, n + 1)``, is detected in rational arithmetic (parameters read
    through their shortest decimal text) and set apart.
    """
    ratios = (np.round(np.arange(1.0, 30.01, 0.05), 2) if mu_over_lambda is None
              else np.asarray(mu_over_lambda))
    agree = total = 0
    ties, N_inf = [], {}
    mu_exact = Fraction(str(mu))
    for g in gammas:
        g_exact = Fraction(str(g)) / mu_exact
        N_inf[g] = [eq16_exact(Fraction(str(m)), g_exact) for m in ratios]
        N_big = [_q.robots_static_optimum(mu / m, mu, g, K).N for m in ratios]
        for m, a, b in zip(ratios, N_inf[g], N_big):
            m_ex = Fraction(str(m))
            lo, hi = math.floor(m_ex), math.ceil(m_ex)
            if lo != hi and g_exact * (m_ex - lo) == hi - m_ex:   # C(rho-, inf) = C(rho+, inf)
                ties.append((g, m_ex, a))
            else:
                agree += int(a == b)
                total += 1
    ties_ceil = sum(a == math.ceil(m) for _, m, a in ties)
    floor_at_finite_K = all(g == mu and math.floor(m) * math.ceil(m) < m * m for g, m, _ in ties)
    return Eq16Check(mu_over_lambda=ratios, N_inf=N_inf, agree=agree, total=total, ties=ties,
                     ties_ceil=ties_ceil, floor_at_finite_K=floor_at_finite_K)


def rho_at_cited_threshold(mu: float, buffers=range(2, 61)) -> dict:
    """``rho(gamma, K)`` at ``gamma = mu (K + 3/2) / K``, between the threshold ``mu (K + 1)/K``
    that Proposition 2's proof cites and ``gamma(K) = mu (K + 2) / K`` of Lemma 1."""
    return {K: _q.optimal_load(mu * (K + 1.5) / K, K, mu) for K in buffers}


def check_eq11(mu: float, gamma: float = 2.7, *, loads=None, buffers=None) -> bool:
    """Eq. (11) of [TLNC99]_ is eq. (10) rearranged, with a positive left factor for ``L > 1``.

    ``gamma (K L^(K+1) - (K+1) L^K + 1) = mu L^K (L^(K+2) - (K+2) L + (K+1))`` against (10),
    to ``1e-12`` of the size of the terms, on ``L`` in ``(1, 3]`` (default 50 values from
    1.01) and ``K = 2 .. 60``.
    """
    L_grid = np.linspace(1.01, 3.0, 50) if loads is None else loads
    K_grid = np.arange(2, 61) if buffers is None else buffers
    Lm, Km = np.meshgrid(L_grid, K_grid)
    g = gamma
    lhs_factor = Km * Lm ** (Km + 1) - (Km + 1) * Lm ** Km + 1
    eq10 = (mu * Lm ** (2 * (Km + 1)) - (g * Km + mu * (Km + 2)) * Lm ** (Km + 1)
            + (Km + 1) * (mu + g) * Lm ** Km - g)
    eq11 = mu * Lm ** Km * (Lm ** (Km + 2) - (Km + 2) * Lm + (Km + 1)) - g * lhs_factor
    scale = (mu * Lm ** (2 * (Km + 1)) + (g * Km + mu * (Km + 2)) * Lm ** (Km + 1)
             + (Km + 1) * (mu + g) * Lm ** Km)
    return bool(np.all(lhs_factor > 0) and np.all(np.abs(eq10 - eq11) <= 1e-12 * scale))


def eq19_printed_row_sums(lam: float, mu: float, N: int) -> np.ndarray:
    """Row sums of eq. (19) as printed, after a departure with ``q > 1``, for ``r = 1 .. N``:
    ``mu/nu + lam r/nu + (1 - (mu - lam r)/nu) = 1 + 2 lam r / nu`` (the sign error)."""
    nu = lam * N + mu
    r = np.arange(1, N + 1)
    return mu / nu + lam * r / nu + (1 - (mu - lam * r) / nu)


def rvi_iterations_by_tau(lam: float, mu: float, gamma: float, K: int, N: int, taus, *,
                          tol: float, reference_state) -> dict:
    """Iterations of relative value iteration (Proposition 4) to the paper's stopping rule,
    for each damping ``tau`` (the Sec. 4 remark: the closer to 1, the faster)."""
    return {t: _q.robots_dynamic_optimum(lam, mu, gamma, K, N, method="relative_value_iteration",
                                         tau=t, tol=tol, reference_state=reference_state
                                         ).iterations for t in taus}


def state_tuple(space, i) -> tuple[int, int, int]:
    """The state ``(q, r, s)`` at position ``i`` of a robots state space."""
    return (int(space.q[i]), int(space.r[i]), int(space.s[i]))


@dataclass(frozen=True)
class AllReferenceStates:
    """Proposition 4 as printed from every reference state (:func:`rvi_all_reference_states`).

    Attributes
    ----------
    space : RobotsStateSpace
        The states ``(q, r, s)`` of the instance.
    sweep : RVISweep
        One column per state of ``space``, in its order.
    """

    space: object
    sweep: RVISweep

    @property
    def counts(self) -> np.ndarray:
        """Iterations to the pointwise stopping rule, one per reference state."""
        return self.sweep.iterations["pointwise"]

    def count_from(self, state) -> int:
        """Iterations from the reference state ``(q, r, s)``."""
        return int(self.counts[self.space.state(*state)])

    def states_with_count(self, n: int) -> set:
        """The reference states ``(q, r, s)`` from which the rule stops after ``n`` iterations."""
        return {state_tuple(self.space, i) for i in np.flatnonzero(self.counts == n)}


def rvi_all_reference_states(lam: float, mu: float, gamma: float, K: int, N: int, *,
                             tau: float, tol: float) -> AllReferenceStates:
    """Relative value iteration as the paper ran it (``h_0 = 0``) from every reference state of
    the instance at once (:func:`rvi_reference_sweep`): the paper gives no ``x_hat``.

    Examples
    --------
    >>> swept = rvi_all_reference_states(0.1, 1.0, 1.4, 2, 1, tau=0.99999, tol=1e-5)
    >>> swept.counts.size == swept.space.n_states
    True
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    return AllReferenceStates(space=space, sweep=rvi_reference_sweep(
        model, np.arange(space.n_states), tau=tau, tol=tol))


@dataclass(frozen=True)
class Lemma4Check:
    """Lemma 4 on a grid of instances (:func:`check_lemma4`).

    Attributes
    ----------
    communicating : bool
        One communicating class on every instance (Lemma 4 on the state space as printed).
    communicating_without_entry_free : bool
        On every instance, besides one class, exactly the ``K`` singletons ``(q, N, 2)``,
        ``q >= 1``, that no transition enters.
    n_classes, largest, outside : dict keyed by (K, N)
        Number of classes, size of the largest, and the states outside it.
    """

    communicating: bool
    communicating_without_entry_free: bool
    n_classes: dict
    largest: dict
    outside: dict


def check_lemma4(lam: float, mu: float, gamma: float, instances) -> Lemma4Check:
    """Lemma 4 of [TLNC99]_ ("the MDP is communicating") on each ``(K, N)`` of ``instances``,
    by the strong components of the accessibility graph (:func:`strong_components`)."""
    literal = trimmed = True
    n_classes, largest, outside = {}, {}, {}
    for K, N in instances:
        model, space = _q.robots_mdp(lam, mu, gamma, K, N)
        comps = strong_components(model)
        out = sorted(state_tuple(space, c[0]) for c in comps[1:])
        literal &= len(comps) == 1
        trimmed &= all(c.size == 1 for c in comps[1:]) and out == [(q, N, 2) for q in range(1, K + 1)]
        n_classes[(K, N)], largest[(K, N)], outside[(K, N)] = len(comps), int(comps[0].size), out
    return Lemma4Check(communicating=bool(literal), communicating_without_entry_free=bool(trimmed),
                       n_classes=n_classes, largest=largest, outside=outside)


@dataclass(frozen=True)
class MultichainExample:
    """The example policy of Section 3 (:func:`multichain_example`).

    Attributes
    ----------
    n_classes : int
        Its recurrent classes.
    levels : list of list of int
        The levels ``r`` of each class, sorted.
    transient_at_level_2 : list of tuple
        The states ``(q, 2, s)`` in no recurrent class.
    """

    n_classes: int
    levels: list
    transient_at_level_2: list


def multichain_example(lam: float, mu: float, gamma: float, K: int) -> MultichainExample:
    """The recurrent structure of the Section 3 example (:func:`paper_multichain_example_classes`,
    ``N = 2``): the paper says two recurrent classes, at levels ``r = 1`` and ``r = 2``."""
    classes = paper_multichain_example_classes(lam, mu, gamma, K)
    _, space = _q.robots_mdp(lam, mu, gamma, K, 2)
    levels = sorted(sorted(set(space.r[c].tolist())) for c in classes)
    in_class = np.zeros(space.n_states, dtype=bool)
    for c in classes:
        in_class[c] = True
    transient = sorted(state_tuple(space, i) for i in np.flatnonzero(~in_class & (space.r == 2)))
    return MultichainExample(n_classes=len(classes), levels=levels, transient_at_level_2=transient)


@dataclass(frozen=True)
class Eq21Check:
    """Eq. (21) as printed against the model's rows at fictitious epochs (:func:`check_eq21`).

    Attributes
    ----------
    n_rows : int
        Fictitious states compared.
    max_deviation : float
        Largest difference between (21) as printed and the model's rows.
    rows_sum_to_one : bool
        Whether the printed rows sum to one.
    """

    n_rows: int
    max_deviation: float
    rows_sum_to_one: bool


def check_eq21(lam: float, mu: float, gamma: float, K: int, N: int) -> Eq21Check:
    """Eq. (21) of [TLNC99]_ as printed: from a fictitious epoch ``(q, r, 2)`` the next epoch
    is a departure w.p. ``mu 1(q > 0)/nu``, an arrival w.p. ``lam r/nu``, fictitious otherwise,
    with ``q`` and ``r`` unchanged; compared with the rows of
    :func:`whittle_lib.models.robots.robots_mdp` under action 0."""
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    nu = lam * N + mu
    fic = np.flatnonzero(space.s == 2)
    P0 = model.transitions[0].toarray()
    printed = np.zeros((fic.size, space.n_states))
    for row, i in enumerate(fic):
        q, r = int(space.q[i]), int(space.r[i])
        for s_next, p in ((0, mu * (q > 0) / nu), (1, lam * r / nu),
                          (2, 1 - (mu * (q > 0) + lam * r) / nu)):
            if p > 0:
                printed[row, space.state(q, r, s_next)] += p
    return Eq21Check(n_rows=int(fic.size), max_deviation=float(np.abs(printed - P0[fic]).max()),
                     rows_sum_to_one=bool(np.allclose(printed.sum(axis=1), 1)))


def eq25_gaps(lam: float, mu: float, gammas, K: int, N: int) -> list[float]:
    """Eq. (25) for the optimal and the static policy at each ``gamma`` (in that order): the
    larger of the gaps between per-epoch and time averages (:func:`time_average_rates`)."""
    gaps = []
    for g in gammas:
        opt = _q.robots_dynamic_optimum(lam, mu, g, K, N)
        for policy in (opt.policy, _q.static_policy(opt.space)):
            rates = time_average_rates(lam, mu, g, K, N, policy)
            gaps.append(max(abs(rates.starvation_epochs - rates.starvation_time),
                            abs(rates.loss_epochs - rates.loss_time)))
    return gaps


def static_costs_matched(printed_cs: Mapping[str, str], mu: float) -> int:
    """How many printed ``C_s`` (``{setting: text}``, Table 1) the static optimum
    (Proposition 1, eq. (4)) with this ``mu`` prints to five decimals."""
    return sum(f"{_q.robots_static_optimum(lam, mu, g, K).cost:.5f}" == printed
               for (lam, K, g), printed in zip(map(table_row_parameters, printed_cs),
                                               printed_cs.values()))


def brute_static_costs_matched(printed_cs: Mapping[str, str], mu: float, *,
                               loss: str = "rate", printed_N=None) -> int:
    """How many printed ``C_s`` a cost reproduces to five decimals, with ``loss = "rate"``
    (eq. (1): ``lam N P(X = K)``) or ``"probability"`` (Sec. 6: ``P(X = K)``).

    The cost is minimised by exhaustive search over ``n = 1 .. 4 mu/lam + 20``, or taken at
    ``printed_N`` (``{setting: text}``, the printed ``N_s``) if given.
    """
    if loss not in ("rate", "probability"):
        raise ValueError(f"loss must be 'rate' or 'probability', got {loss!r}")
    hits = 0
    for s, printed in printed_cs.items():
        lam, K, g = table_row_parameters(s)
        n = (np.arange(1, int(4 * mu / lam) + 20) if printed_N is None
             else np.array([int(printed_N[s])]))
        c = (_q.robots_cost(n * lam / mu, g, K, mu) if loss == "rate"
             else static_cost_loss_probability(n * lam / mu, g, K))
        hits += f"{c.min():.5f}" == printed
    return hits


@dataclass(frozen=True)
class Table1Row:
    """One row of Table 1 (:func:`table1_row`).

    Attributes
    ----------
    static : StaticOptimum
        ``N_s``, ``C_s`` (Proposition 1, eq. (4)).
    dynamic : DynamicOptimum
        The exact optimum with a pool of ``N_s`` robots (policy iteration).
    rvi : dict of tuple to (int, float)
        For each reference state ``x_hat``, relative value iteration as printed (``h_0 = 0``,
        pointwise rule): the iterations and the estimate ``T(h)(x_hat)``.
    """

    static: object
    dynamic: object
    rvi: dict


def table1_row(lam: float, mu: float, gamma: float, K: int, reference_states, *,
               tau: float, tol: float) -> Table1Row:
    """Static and dynamic control with a pool of ``N_s`` robots, and Proposition 4 as the
    paper ran it from each reference state ``(q, r, s)`` (:func:`rvi_reference_sweep`)."""
    st = _q.robots_static_optimum(lam, mu, gamma, K)
    dyn = _q.robots_dynamic_optimum(lam, mu, gamma, K, st.N)
    model, space = _q.robots_mdp(lam, mu, gamma, K, st.N)
    sw = rvi_reference_sweep(model, [space.state(*x) for x in reference_states], tau=tau, tol=tol)
    rvi = {x: (int(sw.iterations["pointwise"][k]), float(sw.estimate["pointwise"][k]))
           for k, x in enumerate(reference_states)}
    return Table1Row(static=st, dynamic=dyn, rvi=rvi)


@dataclass(frozen=True)
class PoolSearch:
    """Pools that print a given ``C_d`` (:func:`pool_search`).

    Attributes
    ----------
    pools : range
        The pools searched, ``N_s .. N_max`` of the unconstrained optimum.
    cost_at_smallest : float
        ``C_d`` with the smallest pool.
    at_pools : list of int
        Pools whose ``C_d`` prints as the target.
    both : list of int
        Those whose ``N_bar`` (one decimal) and ``N_max`` print as the targets too.
    """

    pools: range
    cost_at_smallest: float
    at_pools: list
    both: list


def pool_search(lam: float, mu: float, gamma: float, K: int, pools: range, *, C_d: float,
                N_bar: float, N_max: int) -> PoolSearch:
    """Which pools give Table 2's printed ``C_d`` (five decimals), with its ``N_bar`` and
    ``N_max``? ``C_d`` is nonincreasing in the pool (a larger pool keeps every policy of a
    smaller one), so bisect for the first pool at or below the target, then walk up."""
    runs = {}

    def run(n):
        if n not in runs:
            runs[n] = _q.robots_dynamic_optimum(lam, mu, gamma, K, n)
        return runs[n]

    lo, hi = pools.start, pools.stop - 1
    last = hi
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if round(run(mid).cost, 5) > C_d else (lo, mid)
    at_pools = []
    while lo <= last and round(run(lo).cost, 5) == C_d:
        at_pools.append(lo)
        lo += 1
    both = [n for n in at_pools if round(run(n).N_mean, 1) == N_bar and run(n).N_max == N_max]
    return PoolSearch(pools=pools, cost_at_smallest=run(pools.start).cost, at_pools=at_pools,
                      both=both)


@dataclass(frozen=True)
class NMaxReadings:
    """``N_max`` of Table 2 under two readings (:func:`n_max_readings`).

    Attributes
    ----------
    stationary_max : bool
        The printed ``N_max`` is the largest ``r`` of positive stationary probability.
    pool_of_run : bool
        A pool of the printed ``N_max`` gives the same ``C_d`` (five decimals), ``N_min`` and
        ``N_bar`` (one decimal) as the unconstrained optimum.
    queues_activating : list of int
        The ``q`` of the departures ``(q, N_max, 0)`` at which the optimum activates one more
        robot (states of stationary probability 0).
    """

    stationary_max: bool
    pool_of_run: bool
    queues_activating: list


def n_max_readings(lam: float, mu: float, gamma: float, K: int, optimum, printed_N_max: int
                   ) -> NMaxReadings:
    """Judge a printed ``N_max`` against the unconstrained ``optimum`` (a
    :class:`whittle_lib.models.robots.DynamicOptimum`) and a run with a pool of ``printed_N_max``."""
    sp, pol = optimum.space, optimum.policy
    extra = (sp.s == 0) & (sp.r == optimum.N_max) & (pol == 1)
    at_pool = _q.robots_dynamic_optimum(lam, mu, gamma, K, printed_N_max)
    same = (round(at_pool.cost, 5) == round(optimum.cost, 5) and at_pool.N_min == optimum.N_min
            and round(at_pool.N_mean, 1) == round(optimum.N_mean, 1))
    return NMaxReadings(stationary_max=optimum.N_max == printed_N_max, pool_of_run=bool(same),
                        queues_activating=sorted(set(sp.q[extra].tolist())))
