"""What the robots draft printed, its readings, and the sweeps that judge its claims.

J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., *Controlling Robots of Web Search Engines*, draft
of May 20, 1999 ([TLNC99]_). The model itself (eqs. (4), (18)-(21), corrected) is
:mod:`whittle_lib.queueing`; this module holds what the draft wrote where it matters for a
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

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .. import mdp as _mdp
from .. import queueing as _q

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
        Rewards are ``-c``, as built by :func:`whittle_lib.queueing.robots_mdp`.
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

    >>> from whittle_lib import queueing
    >>> model, space = queueing.robots_mdp(0.1, 1.0, 1.4, 2, 1)
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
    :func:`whittle_lib.queueing.robots_mdp`. The policy must have one recurrent class.
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
