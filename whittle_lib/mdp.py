"""Finite Markov decision processes on sparse matrices.

Rewards are maximised (a cost is a negative reward). An MDP has ``n`` states and ``A`` actions;
action ``a`` has a transition matrix ``P[a]`` of shape ``(n, n)`` and a reward vector ``r[a]``
of shape ``(n,)``; a boolean mask says which actions are allowed in which state.

Solvers
-------
value_iteration
    discounted criterion, successive approximation with the standard epsilon-optimal stop.
relative_value_iteration
    average reward, the damped scheme of Talim, Liu, Nain and Coffman (1999), Proposition 4,
    with their relative stopping rule (and the span rule as an option).
policy_iteration
    discounted (Howard) and average reward; the average-reward version is Puterman's
    *multichain* policy iteration (Puterman 1994, Sec. 9.2), which is exact on communicating
    MDPs whose intermediate policies are multichain, such as the robots MDP.
backward_induction
    finite horizon.
dense_policy_iteration
    Howard's policy iteration with dense LAPACK solves, for the small MDPs of single arms.
operator_policy_iteration
    value then policy iteration on a model given by its Bellman and evaluation operators, for
    structured models too large to hold as matrices (the joint caching problem).

References
----------
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
.. [TLNC99] J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., "Controlling robots of web search
   engines", draft of May 20, 1999 (SIGMETRICS PER 2001).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.sparse import linalg as sparse_linalg

__all__ = [
    "FiniteMDP",
    "DiscountedSolution",
    "AverageSolution",
    "PolicyEvaluation",
    "value_iteration",
    "relative_value_iteration",
    "policy_iteration",
    "evaluate_policy",
    "policy_transition_matrix",
    "recurrent_classes",
    "communicating_classes",
    "is_communicating",
    "stationary_distribution",
    "stationary_distributions",
    "FiniteHorizonSolution",
    "backward_induction",
    "DenseSolution",
    "dense_policy_iteration",
    "OperatorSolution",
    "operator_policy_iteration",
]

#: Tolerance on row sums of transition matrices: a few ulps of accumulated rounding.
ROW_SUM_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class FiniteMDP:
    """A finite MDP: sparse transition matrices, rewards, and the allowed actions.

    Parameters
    ----------
    transitions : sequence of sparse or dense arrays, each of shape (n, n)
        ``transitions[a][x, y]`` is the probability of moving from ``x`` to ``y`` under action
        ``a``. Rows of allowed (state, action) pairs must sum to one; rows of disallowed pairs
        are ignored.
    rewards : array_like, shape (A, n)
        ``rewards[a, x]`` is the one-step reward of action ``a`` in state ``x``.
    allowed : array_like of bool, shape (A, n), optional
        ``allowed[a, x]`` says whether action ``a`` may be used in state ``x``. Every state
        needs at least one allowed action. Default: every action everywhere.

    Raises
    ------
    ValueError
        On inconsistent shapes, negative or non-finite probabilities, non-finite rewards, a
        state with no allowed action, or an allowed row that does not sum to one (the message
        names the action and the state).
    """

    transitions: tuple
    rewards: np.ndarray
    allowed: np.ndarray = None  # type: ignore[assignment]
    _stacked: sparse.csr_array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mats = tuple(sparse.csr_array(P, dtype=float) for P in self.transitions)
        if not mats:
            raise ValueError("transitions must hold at least one action, got none")
        n = mats[0].shape[0]
        for a, P in enumerate(mats):
            if P.shape != (n, n):
                raise ValueError(f"transitions[{a}] must have shape ({n}, {n}), got {P.shape}")
            if not np.all(np.isfinite(P.data)) or np.any(P.data < 0):
                raise ValueError(f"transitions[{a}] must hold finite non-negative probabilities")
        rewards = np.array(self.rewards, dtype=float)
        if rewards.shape != (len(mats), n):
            raise ValueError(f"rewards must have shape ({len(mats)}, {n}), got {rewards.shape}")
        if not np.all(np.isfinite(rewards)):
            bad = np.argwhere(~np.isfinite(rewards))[0]
            raise ValueError(f"rewards must be finite, got {rewards[tuple(bad)]} for action "
                             f"{bad[0]} in state {bad[1]}")
        allowed = (np.ones((len(mats), n), dtype=bool) if self.allowed is None
                   else np.array(self.allowed, dtype=bool))
        if allowed.shape != (len(mats), n):
            raise ValueError(f"allowed must have shape ({len(mats)}, {n}), got {allowed.shape}")
        if not np.all(allowed.any(axis=0)):
            x = int(np.flatnonzero(~allowed.any(axis=0))[0])
            raise ValueError(f"allowed must permit at least one action in every state; "
                             f"state {x} has none")
        for a, P in enumerate(mats):
            sums = np.asarray(P.sum(axis=1)).ravel()
            bad = allowed[a] & (np.abs(sums - 1.0) > ROW_SUM_TOL)
            if bad.any():
                x = int(np.flatnonzero(bad)[0])
                raise ValueError(f"transitions[{a}] row {x} must sum to 1, got {sums[x]!r}")
        rewards.setflags(write=False)
        allowed.setflags(write=False)
        object.__setattr__(self, "transitions", mats)
        object.__setattr__(self, "rewards", rewards)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "_stacked", sparse.csr_array(sparse.vstack(mats)))

    @property
    def n_states(self) -> int:
        """Number of states ``n``."""
        return self.transitions[0].shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions ``A``."""
        return len(self.transitions)

    def q_values(self, values: np.ndarray, discount: float = 1.0) -> np.ndarray:
        """``r[a, x] + discount * sum_y P[a][x, y] values[y]``, ``-inf`` where not allowed."""
        q = self.rewards + discount * (self._stacked @ values).reshape(self.n_actions, -1)
        return np.where(self.allowed, q, -np.inf)


@dataclass(frozen=True)
class DiscountedSolution:
    """Result of a discounted-reward solver.

    Attributes
    ----------
    value : ndarray, shape (n,)
        The optimal (or last iterate's) discounted value.
    policy : ndarray of int, shape (n,)
        A greedy action in each state.
    iterations : int
    residual : float
        Sup norm of the last change of the value (value iteration) or 0 (policy iteration).
    converged : bool
    """

    value: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool


@dataclass(frozen=True)
class AverageSolution:
    """Result of an average-reward solver.

    Attributes
    ----------
    gain : float
        The optimal average reward per step when it does not depend on the initial state
        (always so for communicating MDPs); ``nan`` if it does.
    gain_by_state : ndarray, shape (n,)
        The optimal average reward from each initial state.
    bias : ndarray, shape (n,)
        A relative value (bias) ``h`` solving the optimality equation, ``h[reference] = 0``.
    policy : ndarray of int, shape (n,)
        An optimal (greedy) action in each state.
    iterations : int
    residual : float
        Relative value iteration: the last value of the stopping statistic. Policy iteration:
        the span of the Bellman residual ``T h - h - gain`` of the returned solution.
    converged : bool
    gain_bounds : tuple of float
        ``(min_x (Th - h)(x), max_x (Th - h)(x))``, which bracket the optimal gain of a
        weakly communicating MDP whatever ``h`` is ([P94]_, Thm. 8.5.5).
    """

    gain: float
    gain_by_state: np.ndarray
    bias: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    gain_bounds: tuple[float, float]


@dataclass(frozen=True)
class PolicyEvaluation:
    """Gain and bias of one stationary policy (possibly multichain).

    Attributes
    ----------
    gain : ndarray, shape (n,)
        Average reward from each initial state.
    bias : ndarray, shape (n,)
        A solution ``h`` of ``gain + h = r + P h`` with ``h = 0`` at one state of each
        recurrent class.
    classes : list of ndarray
        The recurrent classes of the policy's chain.
    """

    gain: np.ndarray
    bias: np.ndarray
    classes: list


def _check_policy(mdp: FiniteMDP, policy) -> np.ndarray:
    policy = np.asarray(policy)
    if policy.shape != (mdp.n_states,) or not np.issubdtype(policy.dtype, np.integer):
        raise ValueError(f"policy must be an integer array of shape ({mdp.n_states},), "
                         f"got {policy.dtype} array of shape {policy.shape}")
    if np.any((policy < 0) | (policy >= mdp.n_actions)):
        raise ValueError(f"policy actions must lie in 0..{mdp.n_actions - 1}")
    not_allowed = ~mdp.allowed[policy, np.arange(mdp.n_states)]
    if not_allowed.any():
        x = int(np.flatnonzero(not_allowed)[0])
        raise ValueError(f"policy uses action {policy[x]} in state {x}, where it is not allowed")
    return policy


def _check_discount(discount: float) -> float:
    if not 0.0 < discount < 1.0:
        raise ValueError(f"discount must lie in (0, 1), got {discount}")
    return float(discount)


def _check_count(name: str, value, minimum: int = 1) -> int:
    """An iteration count or horizon: an integer of at least ``minimum`` (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_positive(name: str, value) -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer))
            and not isinstance(value, bool) and np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_state(name: str, value, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise ValueError(f"{name} must be a state in 0..{n - 1}, got {value!r}")
    return int(value)


def _check_start(name: str, value, n: int) -> np.ndarray:
    array = np.array(value, dtype=float)
    if array.shape != (n,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a finite array of shape ({n},), got "
                         f"shape {array.shape}")
    return array


def policy_transition_matrix(mdp: FiniteMDP, policy) -> sparse.csr_array:
    """The transition matrix ``P_pi`` of a stationary deterministic policy (sparse, CSR)."""
    policy = _check_policy(mdp, policy)
    rows = mdp.n_states * policy + np.arange(mdp.n_states)
    return sparse.csr_array(mdp._stacked[rows])


def _greedy(q: np.ndarray, incumbent: np.ndarray | None, tol: float) -> np.ndarray:
    """Argmax over actions; keeps the incumbent action when it is within ``tol`` of the max."""
    best = np.argmax(q, axis=0)
    if incumbent is None:
        return best
    qmax = q[best, np.arange(q.shape[1])]
    keep = q[incumbent, np.arange(q.shape[1])] >= qmax - tol
    return np.where(keep, incumbent, best)


# --------------------------------------------------------------------------------------------
# Discounted reward
# --------------------------------------------------------------------------------------------


def value_iteration(mdp: FiniteMDP, *, discount: float, epsilon: float = 1e-8,
                    max_iter: int = 100_000, v0=None) -> DiscountedSolution:
    """Discounted value iteration ([P94]_, Algorithm 6.3.1).

    Stops when ``||v_{k+1} - v_k||_inf < epsilon (1 - discount) / (2 discount)``, which makes the
    greedy policy epsilon-optimal and ``v_{k+1}`` within ``epsilon / 2`` of the optimum
    ([P94]_, Thm. 6.3.1).

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float
        In (0, 1).
    epsilon : float
        Target accuracy of the value.
    max_iter : int
    v0 : array_like, optional
        Initial value, zero by default.

    Returns
    -------
    DiscountedSolution
    """
    discount = _check_discount(discount)
    epsilon = _check_positive("epsilon", epsilon)
    max_iter = _check_count("max_iter", max_iter)
    v = np.zeros(mdp.n_states) if v0 is None else _check_start("v0", v0, mdp.n_states)
    threshold = epsilon * (1 - discount) / (2 * discount)
    residual = np.inf
    for k in range(1, max_iter + 1):
        v_new = mdp.q_values(v, discount).max(axis=0)
        residual = float(np.max(np.abs(v_new - v)))
        v = v_new
        if residual < threshold:
            break
    converged = residual < threshold
    if not converged:
        warnings.warn(f"value_iteration did not converge in {max_iter} iterations "
                      f"(residual {residual:.3g})", RuntimeWarning, stacklevel=2)
    policy = np.argmax(mdp.q_values(v, discount), axis=0)
    return DiscountedSolution(v, policy, k, residual, converged)


def _policy_iteration_discounted(mdp, discount, policy, max_iter):
    n = mdp.n_states
    eye = sparse.identity(n, format="csc")
    for k in range(1, max_iter + 1):
        P = policy_transition_matrix(mdp, policy)
        r = mdp.rewards[policy, np.arange(n)]
        v = sparse_linalg.spsolve(sparse.csc_array(eye - discount * P), r)
        q = mdp.q_values(v, discount)
        new = _greedy(q, policy, tol=1e-12 * (1 + np.max(np.abs(v))))
        if np.array_equal(new, policy):
            return DiscountedSolution(v, policy, k, 0.0, True)
        policy = new
    warnings.warn(f"policy_iteration did not converge in {max_iter} iterations",
                  RuntimeWarning, stacklevel=3)
    return DiscountedSolution(v, policy, max_iter, np.nan, False)


# --------------------------------------------------------------------------------------------
# Chains: recurrent classes, stationary distributions, evaluation of a policy
# --------------------------------------------------------------------------------------------


def recurrent_classes(P) -> list[np.ndarray]:
    """The recurrent (closed, irreducible) classes of a finite Markov chain.

    Parameters
    ----------
    P : sparse or dense array, shape (n, n)
        A stochastic matrix.

    Returns
    -------
    list of ndarray
        The states of each recurrent class, sorted; classes ordered by their smallest state.
    """
    P = sparse.csr_array(P)
    P.eliminate_zeros()
    _, labels = csgraph.connected_components(P, directed=True, connection="strong")
    rows, cols = P.nonzero()
    open_labels = np.unique(labels[rows[labels[rows] != labels[cols]]])
    closed = np.setdiff1d(np.unique(labels), open_labels)
    classes = [np.flatnonzero(labels == c) for c in closed]
    return sorted(classes, key=lambda c: c[0])


def communicating_classes(model: FiniteMDP) -> list[np.ndarray]:
    """The communicating classes of an MDP: strong components of its accessibility graph.

    The graph has an edge ``x -> y`` whenever ``P_a[x, y] > 0`` for some allowed ``a`` (the
    randomised policy that uses every allowed action has exactly these edges), so ``y`` is
    accessible from ``x`` under some stationary policy iff the graph has a path ``x -> y``
    ([P94]_, Sec. 8.3.1). The MDP is communicating iff there is one class
    (:func:`is_communicating`); then every stationary policy's gain is constant and relative
    value iteration applies.

    Returns
    -------
    list of ndarray
        The states of each class, sorted; classes largest first, ties by smallest state.

    Examples
    --------
    >>> P0 = np.array([[1.0, 0.0], [0.0, 1.0]]); P1 = np.array([[0.0, 1.0], [0.0, 1.0]])
    >>> m = FiniteMDP([P0, P1], np.zeros((2, 2)))
    >>> [c.tolist() for c in communicating_classes(m)]    # 1 is reachable from 0, not back
    [[0], [1]]
    """
    n = model.n_states
    union = sparse.csr_array((n, n))
    for a, P in enumerate(model.transitions):
        union = union + sparse.diags_array(model.allowed[a].astype(float)) @ P
    n_comp, label = csgraph.connected_components(union, directed=True, connection="strong")
    comps = [np.flatnonzero(label == c) for c in range(n_comp)]
    return sorted(comps, key=lambda c: (-c.size, int(c[0])))


def is_communicating(model: FiniteMDP) -> bool:
    """Whether every state is accessible from every other under some stationary policy
    (one class of :func:`communicating_classes`)."""
    return len(communicating_classes(model)) == 1


def _class_gain_and_bias(P_cc: sparse.csr_array, r_c: np.ndarray) -> tuple[float, np.ndarray]:
    """Solve ``g + h = r + P h`` on one irreducible class with ``h[0] = 0``.

    The column of ``h[0]`` (which is zero) is replaced by the column of ``g``, which makes the
    system non-singular for an irreducible ``P_cc`` ([P94]_, Sec. 8.2.3).
    """
    m = P_cc.shape[0]
    A = sparse.lil_array(sparse.identity(m, format="csr") - P_cc)
    A[:, 0] = np.ones((m, 1))
    sol = np.atleast_1d(sparse_linalg.spsolve(sparse.csc_array(A), r_c))
    h = sol.copy()
    h[0] = 0.0
    return float(sol[0]), h


def evaluate_policy(mdp: FiniteMDP, policy) -> PolicyEvaluation:
    """Gain and bias of a stationary policy under the average-reward criterion.

    Works for multichain policies: the gain is computed on each recurrent class and carried to
    the transient states by ``(I - P_TT) g_T = P_TR g_R`` ([P94]_, Sec. 9.2).

    Parameters
    ----------
    mdp : FiniteMDP
    policy : array of int, shape (n,)

    Returns
    -------
    PolicyEvaluation
    """
    policy = _check_policy(mdp, policy)
    P = policy_transition_matrix(mdp, policy)
    r = mdp.rewards[policy, np.arange(mdp.n_states)]
    return _evaluate_chain(P, r)


def _evaluate_chain(P: sparse.csr_array, r: np.ndarray) -> PolicyEvaluation:
    n = P.shape[0]
    classes = recurrent_classes(P)
    gain = np.empty(n)
    bias = np.empty(n)
    recurrent = np.zeros(n, dtype=bool)
    for c in classes:
        g, h = _class_gain_and_bias(sparse.csr_array(P[c][:, c]), r[c])
        gain[c] = g
        bias[c] = h
        recurrent[c] = True
    T = np.flatnonzero(~recurrent)
    if T.size:
        R = np.flatnonzero(recurrent)
        A = sparse.csc_array(sparse.identity(T.size, format="csr") - P[T][:, T])
        P_TR = P[T][:, R]
        gain[T] = np.atleast_1d(sparse_linalg.spsolve(A, P_TR @ gain[R]))
        bias[T] = np.atleast_1d(sparse_linalg.spsolve(A, r[T] - gain[T] + P_TR @ bias[R]))
    return PolicyEvaluation(gain, bias, classes)


def stationary_distributions(P) -> np.ndarray:
    """Every extreme stationary distribution of a Markov chain, one per recurrent class.

    Parameters
    ----------
    P : sparse or dense array, shape (n, n)
        A stochastic matrix (any number of recurrent classes, transient states allowed).

    Returns
    -------
    ndarray, shape (c, n)
        Row ``k`` is the stationary distribution concentrated on the ``k``-th recurrent class of
        :func:`recurrent_classes`; every stationary distribution of ``P`` is a convex
        combination of the rows ([P94]_, Sec. A.4).

    Examples
    --------
    >>> stationary_distributions([[1.0, 0.0, 0.0], [0.5, 0.0, 0.5], [0.0, 0.0, 1.0]])
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    P = sparse.csr_array(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P must be a square matrix, got shape {P.shape}")
    classes = recurrent_classes(P)
    out = np.zeros((len(classes), P.shape[0]))
    for k, c in enumerate(classes):
        out[k, c] = _class_weights(sparse.csr_array(P[c][:, c]))
        out[k] /= out[k].sum()
    return out


def _class_weights(P_cc: sparse.csr_array) -> np.ndarray:
    """The stationary weights of an irreducible chain, before the final normalisation."""
    m = P_cc.shape[0]
    # pi (I - P) = 0 with sum(pi) = 1: replace one (redundant) balance equation by the norm.
    A = sparse.lil_array((sparse.identity(m, format="csr") - P_cc).T)
    A[0, :] = np.ones((1, m))
    b = np.zeros(m)
    b[0] = 1.0
    return np.clip(np.atleast_1d(sparse_linalg.spsolve(sparse.csc_array(A), b)), 0.0, None)


def stationary_distribution(P) -> np.ndarray:
    """The stationary distribution of a unichain Markov chain.

    For a chain with several recurrent classes use :func:`stationary_distributions`.

    Parameters
    ----------
    P : sparse or dense array, shape (n, n)
        A stochastic matrix with exactly one recurrent class (transient states allowed).

    Returns
    -------
    ndarray, shape (n,)
        Zero on transient states.

    Raises
    ------
    ValueError
        If the chain has more than one recurrent class (the stationary distribution then
        depends on the initial state).
    """
    P = sparse.csr_array(P, dtype=float)
    classes = recurrent_classes(P)
    if len(classes) != 1:
        raise ValueError(f"P must be unichain, got {len(classes)} recurrent classes")
    c = classes[0]
    pi = np.zeros(P.shape[0])
    pi[c] = _class_weights(sparse.csr_array(P[c][:, c]))
    return pi / pi.sum()


# --------------------------------------------------------------------------------------------
# Finite horizon
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FiniteHorizonSolution:
    """Result of backward induction.

    Attributes
    ----------
    values : ndarray, shape (T + 1, n)
        ``values[t, x]``: the optimal expected reward from state ``x`` with ``T - t`` steps to
        go (``values[T]`` is the terminal reward).
    policy : ndarray of int, shape (T, n)
        ``policy[t, x]``: an optimal action at time ``t`` (the first of the maximisers).
    """

    values: np.ndarray
    policy: np.ndarray


def backward_induction(mdp: FiniteMDP, *, horizon: int, discount: float = 1.0,
                       terminal=None) -> FiniteHorizonSolution:
    """Optimal values and a Markov policy over a finite horizon ([P94]_, Sec. 4.5).

    .. math:: v_T = g, \\qquad
              v_t(x) = \\max_a \\{ r(x, a) + \\beta \\sum_y p_{xy}(a) v_{t+1}(y) \\}

    Parameters
    ----------
    mdp : FiniteMDP
    horizon : int
        Number of decisions ``T >= 1``.
    discount : float
        ``beta`` in (0, 1]; 1 for the total reward.
    terminal : array_like, shape (n,), optional
        Terminal reward ``g``, zero by default.

    Returns
    -------
    FiniteHorizonSolution

    Examples
    --------
    Two states; action 1 in state 0 pays 1 and moves to state 1, which is absorbing and pays
    nothing; action 0 pays 0.5 and stays: wait twice, then move.

    >>> m = FiniteMDP(transitions=[np.eye(2), [[0.0, 1.0], [0.0, 1.0]]],
    ...               rewards=[[0.5, 0.0], [1.0, 0.0]])
    >>> backward_induction(m, horizon=3).values[0].tolist()
    [2.0, 0.0]
    """
    horizon = _check_count("horizon", horizon)
    if not 0.0 < discount <= 1.0:
        raise ValueError(f"discount must lie in (0, 1], got {discount}")
    n = mdp.n_states
    values = np.zeros((horizon + 1, n))
    if terminal is not None:
        values[horizon] = _check_start("terminal", terminal, n)
    policy = np.zeros((horizon, n), dtype=int)
    for t in range(horizon - 1, -1, -1):
        q = mdp.q_values(values[t + 1], discount)
        policy[t] = np.argmax(q, axis=0)
        values[t] = q[policy[t], np.arange(n)]
    return FiniteHorizonSolution(values, policy)


# --------------------------------------------------------------------------------------------
# Average reward
# --------------------------------------------------------------------------------------------


def _gain_bounds(mdp: FiniteMDP, h: np.ndarray) -> tuple[float, float]:
    d = mdp.q_values(h).max(axis=0) - h
    return float(d.min()), float(d.max())


def relative_value_iteration(
    mdp: FiniteMDP,
    *,
    tau: float = 1.0,
    reference_state: int = 0,
    tol: float = 1e-5,
    stopping: Literal["relative", "span"] = "relative",
    max_iter: int = 1_000_000,
    h0=None,
) -> AverageSolution:
    """Relative value iteration with damping, as in Proposition 4 of [TLNC99]_.

    Iterates, from ``h_0`` with ``h_0(x_hat) = 0``,

    .. math:: h_{k+1}(x) = (1-\\tau) h_k(x) + \\tau \\big(T h_k(x) - T h_k(\\hat x)\\big),
              \\quad T h(x) = \\max_a \\{ r(x, a) + \\sum_y p_{xy}(a) h(y) \\}

    (the paper minimises costs; here rewards are maximised, ``r = -c``). The damping ``tau``
    is the aperiodicity transformation ([P94]_, Sec. 8.5.4): it leaves the bias and the
    optimal policy unchanged and makes every chain aperiodic.

    Parameters
    ----------
    mdp : FiniteMDP
        Weakly communicating (e.g. communicating) for the limit to exist.
    tau : float
        Damping in (0, 1]; the paper uses 0.99999.
    reference_state : int
        The state ``x_hat`` whose relative value is pinned to zero.
    tol : float
        Threshold of the stopping statistic.
    stopping : {"relative", "span"}
        ``"relative"`` is the paper's rule, ``max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < tol``,
        taken over ``x != x_hat`` (where ``h_k = 0`` always); a ratio with ``h_k(x) = 0`` counts
        as infinite unless ``h_{k+1}(x) = 0`` too. ``"span"`` is the classical rule
        ``sp(T h_k - h_k) < tol``, which bounds the error of the gain by ``tol``
        ([P94]_, Thm. 8.5.5).
    max_iter : int
    h0 : array_like, optional
        Initial relative values (zero by default); ``h0[reference_state]`` is set to zero.

    Returns
    -------
    AverageSolution
        ``gain`` is ``T h(x_hat)`` at the last iterate. (The paper writes
        ``theta = tau T(h)(x_hat)``; at the fixed point ``h(x_hat) = 0`` and the gain is
        ``T h(x_hat)`` itself, ``tau T h(x_hat)`` being the gain of the damped chain. With
        ``tau = 0.99999`` the two differ in the fifth significant digit at most.)

    Warns
    -----
    RuntimeWarning
        If the stopping rule is not met within ``max_iter`` iterations.

    Notes
    -----
    The relative rule looks at the change of ``h`` only, not at the gain; it stops early when
    ``h`` is large. The returned ``gain_bounds`` tell how accurate the gain actually is.
    """
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must lie in (0, 1], got {tau}")
    reference_state = _check_state("reference_state", reference_state, mdp.n_states)
    if stopping not in ("relative", "span"):
        raise ValueError(f"stopping must be 'relative' or 'span', got {stopping!r}")
    tol = _check_positive("tol", tol)
    max_iter = _check_count("max_iter", max_iter)
    h = np.zeros(mdp.n_states) if h0 is None else _check_start("h0", h0, mdp.n_states)
    h[reference_state] = 0.0
    others = np.ones(mdp.n_states, dtype=bool)
    others[reference_state] = False
    statistic = np.inf
    for k in range(1, max_iter + 1):
        Th = mdp.q_values(h).max(axis=0)
        h_new = (1 - tau) * h + tau * (Th - Th[reference_state])
        if stopping == "relative":
            delta = np.abs(h_new[others] - h[others])
            base = np.abs(h[others])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(base > 0, delta / base, np.where(delta > 0, np.inf, 0.0))
            statistic = float(ratio.max()) if ratio.size else 0.0
        else:
            diff = Th - h
            statistic = float(diff.max() - diff.min())
        h = h_new
        if statistic < tol:
            break
    converged = statistic < tol
    if not converged:
        warnings.warn(f"relative_value_iteration did not meet its stopping rule in {max_iter} "
                      f"iterations (statistic {statistic:.3g})", RuntimeWarning, stacklevel=2)
    q = mdp.q_values(h)
    policy = np.argmax(q, axis=0)
    gain = float(q.max(axis=0)[reference_state])
    return AverageSolution(
        gain=gain,
        gain_by_state=np.full(mdp.n_states, gain),
        bias=h,
        policy=policy,
        iterations=k,
        residual=statistic,
        converged=converged,
        gain_bounds=_gain_bounds(mdp, h),
    )


def _policy_iteration_average(mdp: FiniteMDP, policy: np.ndarray, max_iter: int,
                              reference_state: int) -> AverageSolution:
    """Multichain policy iteration ([P94]_, Algorithm 9.2.1), maximising."""
    cols = np.arange(mdp.n_states)
    for k in range(1, max_iter + 1):
        ev = evaluate_policy(mdp, policy)
        scale = 1.0 + float(np.max(np.abs(ev.bias))) + float(np.max(np.abs(ev.gain)))
        tol = 1e-11 * scale
        # First improve the gain: maximise sum_y p_xy(a) g(y), keeping the incumbent on ties.
        qg = mdp.q_values(ev.gain) - mdp.rewards  # P g, -inf where not allowed
        new = _greedy(qg, policy, tol)
        if np.array_equal(new, policy):
            # Then improve the bias among the gain-maximising actions.
            qh = mdp.q_values(ev.bias)
            qh = np.where(qg >= qg[policy, cols] - tol, qh, -np.inf)
            new = _greedy(qh, policy, tol)
            if np.array_equal(new, policy):
                break
        policy = new
    else:
        warnings.warn(f"policy_iteration did not converge in {max_iter} iterations",
                      RuntimeWarning, stacklevel=3)
        return _average_solution(mdp, ev, policy, max_iter, False, reference_state)
    return _average_solution(mdp, ev, policy, k, True, reference_state)


def _average_solution(mdp, ev: PolicyEvaluation, policy, iterations, converged,
                      reference_state) -> AverageSolution:
    g = ev.gain
    constant = bool(np.ptp(g) <= 1e-9 * (1.0 + np.max(np.abs(g))))
    h = ev.bias - ev.bias[reference_state] if constant else ev.bias
    gain = float(g[reference_state]) if constant else float("nan")
    if constant:
        residual_vec = mdp.q_values(h).max(axis=0) - h - gain
        residual = float(np.ptp(residual_vec))
    else:
        residual = float("nan")
    return AverageSolution(
        gain=gain,
        gain_by_state=g,
        bias=h,
        policy=policy,
        iterations=iterations,
        residual=residual,
        converged=converged,
        gain_bounds=_gain_bounds(mdp, h),
    )


def policy_iteration(mdp: FiniteMDP, *, discount: float = 1.0, policy0=None,
                     max_iter: int = 1_000, reference_state: int = 0):
    """Policy iteration, discounted or average reward.

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float
        In (0, 1) for the discounted criterion ([P94]_, Algorithm 6.4.1); ``1.0`` for the
        average reward, solved by multichain policy iteration ([P94]_, Algorithm 9.2.1): each
        policy is evaluated exactly on each of its recurrent classes (sparse LU), the gain is
        improved first and the bias second, the incumbent action is kept on ties. It is exact
        for any finite MDP, multichain policies included.
    policy0 : array of int, shape (n,), optional
        Initial policy; by default the first allowed action in each state.
    max_iter : int
    reference_state : int
        Average reward: the state where the returned bias is zero.

    Returns
    -------
    DiscountedSolution or AverageSolution
    """
    max_iter = _check_count("max_iter", max_iter)
    if policy0 is None:
        policy = np.argmax(mdp.allowed, axis=0)
    else:
        policy = _check_policy(mdp, policy0).copy()
    if discount == 1.0:
        reference_state = _check_state("reference_state", reference_state, mdp.n_states)
        return _policy_iteration_average(mdp, policy, max_iter, reference_state)
    return _policy_iteration_discounted(mdp, _check_discount(discount), policy, max_iter)


# --------------------------------------------------------------------------------------------
# Small dense models, and models given by their operators
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DenseSolution:
    """Result of :func:`dense_policy_iteration`.

    Attributes
    ----------
    value : ndarray, shape (n,)
        The optimal policy's value (discounted), or its bias with ``value[0] = 0`` (average).
    gain : float or None
        The gain (average reward); ``None`` for the discounted criterion.
    q : ndarray, shape (A, n)
        ``q[a, x] = r[a, x] + (discount P[a]) @ value`` at the returned policy.
    policy : ndarray of int, shape (n,)
        An optimal action in every state.
    iterations : int
        Policy evaluations done (the last one confirms the policy).
    """

    value: np.ndarray
    gain: float | None
    q: np.ndarray
    policy: np.ndarray
    iterations: int


def dense_policy_iteration(P, r, *, discount: float, policy=None, tol: float = 0.0,
                           max_iter: int | None = None) -> DenseSolution:
    """Howard's policy iteration on a small MDP held in dense arrays (LAPACK solves).

    For the arms of a restless bandit (a few hundred states at most), where one dense solve is
    cheaper than a sparse factorisation. Each step evaluates the policy exactly,
    ``(I - discount P_pi) v = r_pi`` (discounted), or ``(I - P_pi) h + g 1 = r_pi`` with
    ``h[0] = 0`` (average reward, every policy unichain), then moves each state to its best
    action if that gains more than ``tol``, so rounding cannot make it cycle ([P94]_, Sec. 6.4
    and 8.6). Exact: it stops at an optimal policy after finitely many steps.

    Parameters
    ----------
    P : array_like, shape (A, n, n)
        ``P[a]`` the transition matrix of action ``a``.
    r : array_like, shape (A, n)
        Rewards (maximised; pass negated costs to minimise).
    discount : float
        In (0, 1) for the discounted criterion; 1.0 for the average reward.
    policy : array_like of int, shape (n,), optional
        The starting policy (default: action 0 everywhere). A good start, such as the optimum
        of a nearby problem, saves steps.
    tol : float
        The gain a state needs to switch action (>= 0).
    max_iter : int, optional
        Default ``10 n + 100``.

    Returns
    -------
    DenseSolution

    Raises
    ------
    RuntimeError
        If the policy is still improving after ``max_iter`` steps.

    Examples
    --------
    >>> P = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]
    >>> sol = dense_policy_iteration(P, [[0.0, 1.0], [0.0, 0.0]], discount=0.5)
    >>> sol.policy.tolist(), sol.value.tolist()          # move to state 1 and stay there
    ([1, 0], [1.0, 2.0])
    """
    P = np.asarray(P, dtype=float)
    r = np.asarray(r, dtype=float)
    if P.ndim != 3 or P.shape[1] != P.shape[2] or r.shape != P.shape[:2]:
        raise ValueError(f"P must have shape (A, n, n) and r shape (A, n), got {P.shape} and "
                         f"{r.shape}")
    n_actions, n = r.shape
    if not (isinstance(discount, (int, float, np.floating)) and 0 < discount <= 1):
        raise ValueError(f"discount must lie in (0, 1], got {discount!r}")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    policy = (np.zeros(n, dtype=int) if policy is None
              else np.asarray(policy, dtype=int).copy())
    if policy.shape != (n,) or np.any((policy < 0) | (policy >= n_actions)):
        raise ValueError(f"policy must hold one action in 0..{n_actions - 1} per state, "
                         f"got {policy!r}")
    max_iter = 10 * n + 100 if max_iter is None else _check_count("max_iter", max_iter)
    states = np.arange(n)
    scaled = discount * P                    # the continuation (discount P[a]) @ value
    for iteration in range(1, max_iter + 1):
        P_pi, r_pi = P[policy, states], r[policy, states]
        if discount < 1.0:
            value = np.linalg.solve(np.eye(n) - discount * P_pi, r_pi)
            gain = None
        else:  # (I - P) h + g 1 = r with h[0] = 0: the gain takes the column of h[0]
            A = np.eye(n) - P_pi
            A[:, 0] = 1.0
            value = np.linalg.solve(A, r_pi)
            gain = float(value[0])
            value[0] = 0.0
        q = np.stack([r[a] + scaled[a] @ value for a in range(n_actions)])
        best = np.argmax(q, axis=0)
        switch = q[best, states] - q[policy, states] > tol
        if not switch.any():
            for arr in (value, q, policy):
                arr.setflags(write=False)
            return DenseSolution(value, gain, q, policy, iteration)
        policy = np.where(switch, best, policy)
    raise RuntimeError(f"dense_policy_iteration: the policy still improves after {max_iter} "
                       "steps")


@dataclass(frozen=True, eq=False)
class OperatorSolution:
    """Result of :func:`operator_policy_iteration`.

    Attributes
    ----------
    value : ndarray, shape (n,)
        The exact value of ``policy`` (``evaluate(policy)``).
    policy : ndarray of int, shape (n,)
        An optimal action in every state.
    vi_iterations, pi_iterations : int
        Value-iteration sweeps, then policy-iteration steps (exact evaluations).
    residual : float
        Sup norm of the Bellman residual ``T v - v`` of the returned value.
    """

    value: np.ndarray
    policy: np.ndarray
    vi_iterations: int
    pi_iterations: int
    residual: float


def operator_policy_iteration(q_values, evaluate, n_states: int, *,
                              objective: Literal["max", "min"] = "max", vi_tol: float = 1e-6,
                              max_iter: int = 100) -> OperatorSolution:
    r"""Discounted value iteration, then exact policy iteration, on a model given by operators.

    For MDPs too large to hold as matrices but with structure that applies the Bellman operator
    cheaply, such as a product of independent chains (the joint caching problem: each
    content's matrix applied along its axis). The model supplies ``q_values(v)``, the
    Q-function of a value vector, and ``evaluate(policy)``, the exact value of a policy. Value
    iteration from ``v = 0`` stops when the sup-norm change falls below ``vi_tol``; policy
    iteration from its greedy policy then keeps an action unless another is better by more than
    ``1e-12 (1 + max |v|)``, until the policy is stable ([P94]_, Sec. 6.3-6.4), which makes the
    result exactly optimal whatever ``vi_tol`` is.

    Parameters
    ----------
    q_values : callable
        ``q_values(v) -> ndarray of shape (n_states, n_actions)``.
    evaluate : callable
        ``evaluate(policy) -> ndarray of shape (n_states,)``, the exact value of a policy.
    n_states : int
    objective : {"max", "min"}
        Rewards are maximised (the library's convention); costs are minimised.
    vi_tol : float
        Stop of value iteration (> 0).
    max_iter : int
        Policy-iteration steps at most; a ``RuntimeWarning`` if the policy still changes.

    Returns
    -------
    OperatorSolution

    Examples
    --------
    Two states, two actions, rewards maximised: stay (0) or jump to the other state (1).

    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    >>> r = np.array([[0.0, 1.0], [-0.5, -0.5]])
    >>> q = lambda v: (r + 0.9 * P @ v).T
    >>> ev = lambda pol: np.linalg.solve(np.eye(2) - 0.9 * P[pol, [0, 1]], r[pol, [0, 1]])
    >>> sol = operator_policy_iteration(q, ev, 2)
    >>> sol.policy.tolist(), np.round(sol.value, 6).tolist()
    ([1, 0], [8.5, 10.0])
    """
    n_states = _check_count("n_states", n_states)
    vi_tol = _check_positive("vi_tol", vi_tol)
    max_iter = _check_count("max_iter", max_iter)
    if objective not in ("max", "min"):
        raise ValueError(f"objective must be 'max' or 'min', got {objective!r}")
    better, pick = (np.max, np.argmax) if objective == "max" else (np.min, np.argmin)
    v = np.zeros(n_states)
    vi = 0
    for vi in range(1, 100_000):
        v_new = better(q_values(v), axis=1)
        change = float(np.abs(v_new - v).max())
        v = v_new
        if change < vi_tol:
            break
    q = q_values(v)
    policy = pick(q, axis=1)
    states = np.arange(n_states)
    for pi in range(1, max_iter + 1):
        v = evaluate(policy)
        q = q_values(v)
        tol = 1e-12 * (1.0 + np.abs(v).max())
        best = pick(q, axis=1)
        if objective == "max":
            keep = q[states, policy] >= q[states, best] - tol
        else:
            keep = q[states, policy] <= q[states, best] + tol
        new = np.where(keep, policy, best)
        if np.array_equal(new, policy):
            break
        policy = new
    else:
        warnings.warn(f"operator_policy_iteration: the policy still changes after {max_iter} "
                      "steps", RuntimeWarning, stacklevel=2)
    residual = float(np.abs(better(q, axis=1) - v).max())
    for arr in (v, policy):
        arr.setflags(write=False)
    return OperatorSolution(v, policy, vi, pi, residual)
