"""Finite Markov decision processes on sparse matrices.

Rewards are maximised (a cost is a negative reward). An MDP has ``n`` states and ``A`` actions;
action ``a`` has a transition matrix ``P[a]`` of shape ``(n, n)`` and a reward vector ``r[a]``
of shape ``(n,)``; a boolean mask says which actions are allowed in which state.

Solvers
-------
value_iteration
    discounted criterion, successive approximation with the span (or sup-norm) epsilon-optimal
    stop.
modified_policy_iteration
    discounted criterion, a few evaluation sweeps per improvement (Puterman 1994, Sec. 6.5).
relative_value_iteration
    average reward, the damped scheme of Talim, Liu, Nain and Coffman (1999), Proposition 4
    (or Bertsekas' form, the damping on the expectation only), from one reference state or a
    batch of them at once, with a pluggable stopping rule (their pointwise relative rule, the
    span rule, a norm rule, or the caller's own), or several rules watched in one pass.
policy_iteration
    discounted (Howard) and average reward; the average-reward version is Puterman's
    *multichain* policy iteration (Puterman 1994, Sec. 9.2), which is exact on communicating
    MDPs whose intermediate policies are multichain, such as the robots MDP. Each policy is
    evaluated by a sparse LU factorisation or by a Krylov solver, chosen by the structure of
    the chain (see :func:`policy_iteration`).
backward_induction
    finite horizon.
dense_policy_iteration
    Howard's policy iteration with dense LAPACK solves, for the small MDPs of single arms.
operator_policy_iteration
    value then policy iteration on a model given by its Bellman and evaluation operators, for
    structured models too large to hold as matrices (the joint caching problem).

References
----------
.. [B87] D. P. Bertsekas, *Dynamic Programming: Deterministic and Stochastic Models*,
   Prentice-Hall, 1987: the text [TLNC99]_ cites for its Proposition 4 (p. 313).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
.. [TLNC99] J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., "Controlling robots of web search
   engines", draft of May 20, 1999 (SIGMETRICS PER 2001).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.sparse import linalg as sparse_linalg

from ._validation import as_numeric as _numeric, row_sum_tol as _row_sum_tol

__all__ = [
    "FiniteMDP",
    "DiscountedSolution",
    "AverageSolution",
    "RelativeValueBatch",
    "PolicyEvaluation",
    "value_iteration",
    "modified_policy_iteration",
    "relative_value_iteration",
    "STOPPING_RULES",
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
    "dense_policy_iteration_many",
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
        try:
            given = tuple(self.transitions)
        except TypeError:
            raise TypeError("transitions must be a sequence of matrices, one per action, got "
                            f"{type(self.transitions).__name__}") from None
        dtypes = [P.dtype if sparse.issparse(P) else _numeric(f"transitions[{a}]", P).dtype
                  for a, P in enumerate(given)]
        mats = tuple(sparse.csr_array(P, dtype=float) for P in given)
        if not mats:
            raise ValueError("transitions must hold at least one action, got none")
        n = mats[0].shape[0]
        for a, P in enumerate(mats):
            if P.shape != (n, n):
                raise ValueError(f"transitions[{a}] must have shape ({n}, {n}), got {P.shape}")
            if not np.all(np.isfinite(P.data)) or np.any(P.data < 0):
                raise ValueError(f"transitions[{a}] must hold finite non-negative probabilities")
        rewards = np.array(_numeric("rewards", self.rewards), dtype=float)
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
        renormalised = []
        for a, P in enumerate(mats):
            sums = np.asarray(P.sum(axis=1)).ravel()
            tol = _row_sum_tol(dtypes[a], n)           # follows a float32 input's precision
            bad = allowed[a] & (np.abs(sums - 1.0) > tol)
            if bad.any():
                x = int(np.flatnonzero(bad)[0])
                raise ValueError(f"transitions[{a}] row {x} must sum to 1, got "
                                 f"{float(sums[x])!r} (tolerance {tol:.3g}); if the rows are "
                                 "right up to rounding, renormalise them: P / P.sum(axis=1, "
                                 "keepdims=True)")
            if tol > ROW_SUM_TOL:
                scale = np.where(allowed[a] & (sums > 0), 1.0 / np.where(sums > 0, sums, 1), 1.0)
                P = sparse.csr_array(sparse.diags_array(scale) @ P)
            renormalised.append(P)
        mats = tuple(renormalised)
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

    @cached_property
    def _masked_rewards(self) -> np.ndarray:
        """``rewards`` with ``-inf`` where an action is not allowed (for the Bellman maximum)."""
        out = np.where(self.allowed, self.rewards, -np.inf)
        out.setflags(write=False)
        return out

    @cached_property
    def _direct_preferred(self) -> bool:
        """Whether a sparse LU factorisation of a policy's chain is cheap (see
        :func:`policy_iteration`, ``evaluation="auto"``)."""
        return _lu_is_cheap(self)


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
        Value iteration: sweeps. Policy iteration: policy evaluations (an iterative evaluation
        of the final policy is repeated once at the full tolerance).
    residual : float
        Sup norm of the Bellman residual ``T v - v`` of the returned ``value`` (policy and
        modified policy iteration), or of the last change of the value (value iteration, sup
        rule) or its span (span rule).
    converged : bool
    method : str
        How the policies were evaluated: ``"direct"`` (sparse LU), ``"iterative"`` (Krylov),
        ``"sweeps"`` (modified policy iteration), ``"value iteration"``.
    inner_iterations : int
        Krylov iterations summed over all evaluations, or evaluation sweeps (modified policy
        iteration), or warm-start sweeps (policy iteration with ``warm_start``).
    """

    value: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    method: str = "direct"
    inner_iterations: int = 0


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
    method : str
        Policy iteration: how the policies were evaluated, ``"direct"`` (sparse LU, every
        policy multichain-safe) or ``"iterative"`` (Krylov on the unichain bias equations, LU
        for a multichain policy). Relative value iteration: ``"relative value iteration"``.
    inner_iterations : int
        Krylov iterations summed over all evaluations, plus warm-start sweeps.
    """

    gain: float
    gain_by_state: np.ndarray
    bias: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    gain_bounds: tuple[float, float]
    method: str = "direct"
    inner_iterations: int = 0


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
    if isinstance(discount, bool) or not isinstance(discount, (int, float, np.integer,
                                                               np.floating)):
        raise TypeError(f"discount must be a number in (0, 1), got {discount!r}")
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


def _check_mdp(mdp) -> FiniteMDP:
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"mdp must be a FiniteMDP, got {type(mdp).__name__}")
    return mdp


def _check_stochastic(name: str, P) -> sparse.csr_array:
    """``P`` as a CSR float64 stochastic matrix, or a ValueError naming it: square, not empty,
    finite, non-negative, rows summing to one (tolerance :func:`arms._row_sum_tol`, which
    follows the input's precision)."""
    if sparse.issparse(P):
        dtype = P.dtype
        if dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold numbers, got dtype {dtype}")
        P = sparse.csr_array(P, dtype=float)
    else:
        raw = _numeric(name, P)
        dtype = raw.dtype
        if raw.ndim != 2:
            raise ValueError(f"{name} must be a square matrix, got shape {raw.shape}")
        P = sparse.csr_array(raw.astype(float))
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {P.shape}")
    if not np.all(np.isfinite(P.data)) or np.any(P.data < 0):
        raise ValueError(f"{name} must hold finite non-negative probabilities, got "
                         f"{float(P.data[~(np.isfinite(P.data) & (P.data >= 0))][0])!r}")
    tol = _row_sum_tol(dtype, P.shape[1])
    sums = np.asarray(P.sum(axis=1)).ravel()
    bad = np.abs(sums - 1.0) > tol
    if bad.any():
        x = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} row {x} must sum to 1, got {float(sums[x])!r} (tolerance "
                         f"{tol:.3g}); if the rows are right up to rounding, renormalise them: "
                         f"{name} / {name}.sum(axis=1, keepdims=True)")
    if tol > ROW_SUM_TOL:
        P = sparse.csr_array(sparse.diags_array(1.0 / sums) @ P)
    return P


def policy_transition_matrix(mdp: FiniteMDP, policy) -> sparse.csr_array:
    """The transition matrix ``P_pi`` of a stationary deterministic policy (sparse, CSR)."""
    _check_mdp(mdp)
    return _policy_matrix(mdp, _check_policy(mdp, policy))


def _policy_matrix(mdp: FiniteMDP, policy: np.ndarray) -> sparse.csr_array:
    """Row ``x`` of ``P[policy[x]]`` for every ``x``: the rows of the stacked matrix gathered
    with index arithmetic, the same arrays as ``mdp._stacked[n * policy + arange(n)]`` without
    SciPy's fancy-indexing overhead."""
    n = mdp.n_states
    S = mdp._stacked
    rows = n * policy + np.arange(n)
    starts = S.indptr[rows]
    counts = S.indptr[rows + 1] - starts
    indptr = np.zeros(n + 1, dtype=S.indptr.dtype)
    np.cumsum(counts, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1], dtype=S.indptr.dtype)
    return sparse.csr_array((S.data[take], S.indices[take], indptr), shape=(n, n))


def _greedy(q: np.ndarray, incumbent: np.ndarray | None, tol: float) -> np.ndarray:
    """Argmax over actions; keeps the incumbent action when it is within ``tol`` of the max."""
    best = np.argmax(q, axis=0)
    if incumbent is None:
        return best
    qmax = q[best, np.arange(q.shape[1])]
    keep = q[incumbent, np.arange(q.shape[1])] >= qmax - tol
    return np.where(keep, incumbent, best)


# --------------------------------------------------------------------------------------------
# Policy evaluation: direct (sparse LU) or iterative (Krylov), chosen by structure
# --------------------------------------------------------------------------------------------

#: Up to this many states a sparse LU factorisation is cheap whatever the pattern.
_DIRECT_MAX_STATES = 1000
#: A pattern whose reverse Cuthill-McKee band holds at most this many times the non-zeros of
#: the chain factorises with little fill-in (the LU factors of a band matrix stay in the band).
_FILL_RATIO = 32.0
#: Default warm start of policy iteration with iterative evaluations: sweeps of (relative) value
#: iteration before the first evaluation (fast-mixing chains: a few sweeps pick most actions).
_WARM_START_ITERATIVE = 20
#: Relative residual of the iterative evaluations before the policy first stops changing: the
#: greedy step only needs the value to a few digits; the final policy is evaluated again at
#: the full tolerance and must survive that evaluation's greedy step too.
_EARLY_RTOL = 1e-6


def _lu_is_cheap(mdp: FiniteMDP) -> bool:
    """Structure test for ``evaluation="auto"``: will sparse LU factors of ``I - beta P_pi`` stay
    sparse?

    Yes when the MDP is small (``n <= 1000``), when every allowed row has a single non-zero
    (deterministic transitions: eliminating a state leaves each row with one off-diagonal
    entry, so the factors have no fill-in), or when the union of the allowed patterns,
    reordered by reverse Cuthill-McKee, is banded with a band of at most ``_FILL_RATIO`` times
    its non-zeros (birth-death chains, queues, grids of a few rows). Random, expander-like
    patterns fail the test: their LU factors fill in almost completely.
    """
    n = mdp.n_states
    if n <= _DIRECT_MAX_STATES:
        return True
    S = mdp._stacked
    if not mdp.allowed.all():  # disallowed rows may hold anything: drop them
        S = sparse.csr_array(sparse.diags_array(mdp.allowed.ravel().astype(float)) @ S)
    if np.diff(S.indptr).max() <= 1:
        return True
    budget = _FILL_RATIO * S.nnz
    # Quick rejection: in any ordering with band b, the states within k steps of a state number
    # at most 2 k b + 1. Grow the ball of states leading to state 0 in k steps: an expander's
    # ball grows geometrically and betrays a wide band after a few sparse products.
    ball = np.zeros(n, dtype=bool)
    ball[0] = True
    for k in range(1, 9):
        grown = (S @ ball.astype(float)).reshape(mdp.n_actions, n).any(axis=0) | ball
        size = int(grown.sum())
        if n * (2 * (size - 1) / (2 * k) + 1) > budget:
            return False
        if size == int(ball.sum()):
            break
        ball = grown
    ones = np.ones(S.indices.size)
    pattern = sparse.csr_array((ones, S.indices, S.indptr), shape=S.shape)
    union = pattern[:n]
    for a in range(1, mdp.n_actions):
        union = union + pattern[a * n:(a + 1) * n]
    union = sparse.csr_array(union)
    perm = csgraph.reverse_cuthill_mckee(union, symmetric_mode=False)
    where = np.empty(n, dtype=np.int64)
    where[perm] = np.arange(n)
    r = np.repeat(np.arange(n), np.diff(union.indptr))
    band = int(np.abs(where[r] - where[union.indices]).max()) if r.size else 0
    return n * (2 * band + 1) <= _FILL_RATIO * union.nnz


def _resolve_evaluation(mdp: FiniteMDP, evaluation: str) -> str:
    if evaluation not in ("auto", "direct", "iterative"):
        raise ValueError(f"evaluation must be 'auto', 'direct' or 'iterative', got {evaluation!r}")
    if evaluation == "auto":
        return "direct" if mdp._direct_preferred else "iterative"
    return evaluation


def _bicgstab(matvec: Callable, b: np.ndarray, x: np.ndarray, rtol: float,
              maxiter: int) -> tuple[np.ndarray, int, bool]:
    """BiCGSTAB (van der Vorst 1992) for ``A x = b`` from ``x``, ``A`` given by ``matvec``.

    Stops when the sup norm of the residual is at most ``rtol (||b|| + ||x||)`` (sup norms; the
    matrices here have ``||A||_inf <= 2``, so this is a relative backward error). The residual
    is recomputed from ``x`` at the end; returns ``(x, iterations, converged)``.
    """
    r = b - matvec(x)
    target = rtol * (np.abs(b).max() + np.abs(x).max())
    if np.abs(r).max() <= target:
        return x, 0, True
    r_hat = r.copy()
    p = r.copy()
    v = np.zeros_like(b)
    rho = alpha = omega = 1.0
    k = 0
    for k in range(1, maxiter + 1):
        rho_new = float(r_hat @ r)
        if rho_new == 0.0:
            break  # breakdown: r is orthogonal to the shadow residual
        if k > 1:
            p = r + (rho_new / rho) * (alpha / omega) * (p - omega * v)
        rho = rho_new
        v = matvec(p)
        denominator = float(r_hat @ v)
        if denominator == 0.0:
            break
        alpha = rho / denominator
        s = r - alpha * v
        if np.abs(s).max() <= target:
            x = x + alpha * p
            break
        t = matvec(s)
        tt = float(t @ t)
        if tt == 0.0:
            break
        omega = float(t @ s) / tt
        x = x + alpha * p + omega * s
        r = s - omega * t
        if np.abs(r).max() <= target or omega == 0.0:
            break
    residual = np.abs(b - matvec(x)).max()
    return x, k, bool(residual <= rtol * (np.abs(b).max() + np.abs(x).max()))


def _krylov_solve(matvec: Callable, b: np.ndarray, x0: np.ndarray, rtol: float
                  ) -> tuple[np.ndarray | None, int]:
    """BiCGSTAB, then restarted GMRES if BiCGSTAB breaks down or stalls; ``None`` if neither
    meets the tolerance (the caller then factorises)."""
    n = b.size
    x, iterations, ok = _bicgstab(matvec, b, x0, rtol, maxiter=max(100, min(n, 2000)))
    if ok:
        return x, iterations
    op = sparse_linalg.LinearOperator((n, n), matvec=matvec, dtype=float)
    counter = [0]

    def count(_):
        counter[0] += 1

    target = rtol * (np.abs(b).max() + np.abs(x).max())
    # GMRES stops on the 2-norm; ||r||_2 <= target implies ||r||_inf <= target.
    x, _ = sparse_linalg.gmres(op, b, x0=x, rtol=0.0, atol=target, restart=50, maxiter=40,
                               callback=count, callback_type="pr_norm")
    iterations += counter[0]
    residual = np.abs(b - matvec(x)).max()
    if residual <= rtol * (np.abs(b).max() + np.abs(x).max()):
        return x, iterations
    return None, iterations


def _evaluate_discounted(P: sparse.csr_array, r: np.ndarray, discount: float, method: str,
                         x0: np.ndarray, rtol: float) -> tuple[np.ndarray, int]:
    """``v = (I - discount P)^{-1} r`` by sparse LU or by a Krylov solver from ``x0``.

    ``I - discount P`` is strictly diagonally dominant (its off-diagonal row sums are at most
    ``discount < 1``), with condition number at most ``(1 + discount) / (1 - discount)``
    whatever its pattern, so Krylov solvers converge without preconditioning.
    """
    if method == "iterative":
        v, iterations = _krylov_solve(lambda x: x - discount * (P @ x), r, x0, rtol)
        if v is not None:
            return v, iterations
    else:
        iterations = 0
    eye = sparse.identity(P.shape[0], format="csc")
    return sparse_linalg.spsolve(sparse.csc_array(eye - discount * P), r), iterations


# --------------------------------------------------------------------------------------------
# Discounted reward
# --------------------------------------------------------------------------------------------


def value_iteration(mdp: FiniteMDP, *, discount: float, epsilon: float = 1e-8,
                    max_iter: int = 100_000, v0=None,
                    stopping: Literal["span", "sup"] = "span") -> DiscountedSolution:
    """Discounted value iteration ([P94]_, Algorithm 6.3.1 and Sec. 6.6.3).

    ``stopping="span"`` (default) stops when ``sp(v_{k+1} - v_k) < epsilon (1 - discount) /
    discount``, where ``sp(d) = max d - min d``, and returns ``v_{k+1}`` shifted by
    ``discount / (1 - discount)`` times the midpoint of ``v_{k+1} - v_k``: the optimum lies
    between the two shifts by its extremes ([P94]_, Thm. 6.6.6, eq. 6.6.12), so the returned
    value is within ``epsilon / 2`` of it and the greedy policy is epsilon-optimal. The span
    contracts at the rate at which the chains forget their initial state, often far faster than
    ``discount``. ``stopping="sup"`` is the classical rule ``||v_{k+1} - v_k||_inf < epsilon (1
    - discount) / (2 discount)`` ([P94]_, Thm. 6.3.1), which returns ``v_{k+1}`` itself.

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
    stopping : {"span", "sup"}

    Returns
    -------
    DiscountedSolution
        ``residual`` is the last span (or sup norm) of ``v_{k+1} - v_k``.
    """
    _check_mdp(mdp)
    discount = _check_discount(discount)
    epsilon = _check_positive("epsilon", epsilon)
    max_iter = _check_count("max_iter", max_iter)
    if stopping not in ("span", "sup"):
        raise ValueError(f"stopping must be 'span' or 'sup', got {stopping!r}")
    v = np.zeros(mdp.n_states) if v0 is None else _check_start("v0", v0, mdp.n_states)
    if stopping == "span":
        threshold = epsilon * (1 - discount) / discount
    else:
        threshold = epsilon * (1 - discount) / (2 * discount)
    rewards, A = mdp._masked_rewards, mdp.n_actions
    residual = np.inf
    diff = np.zeros_like(v)
    for k in range(1, max_iter + 1):
        v_new = (rewards + discount * (mdp._stacked @ v).reshape(A, -1)).max(axis=0)
        diff = v_new - v
        residual = float(diff.max() - diff.min()) if stopping == "span" \
            else float(np.abs(diff).max())
        v = v_new
        if residual < threshold:
            break
    converged = residual < threshold
    if not converged:
        warnings.warn(f"value_iteration did not converge in {max_iter} iterations "
                      f"(residual {residual:.3g})", RuntimeWarning, stacklevel=2)
    policy = np.argmax(mdp.q_values(v, discount), axis=0)
    if stopping == "span":
        v = v + discount / (1 - discount) * 0.5 * (float(diff.max()) + float(diff.min()))
    return DiscountedSolution(v, policy, k, residual, converged, "value iteration")


def modified_policy_iteration(mdp: FiniteMDP, *, discount: float, sweeps: int = 20,
                              epsilon: float = 1e-8, max_iter: int = 100_000,
                              v0=None) -> DiscountedSolution:
    """Modified policy iteration ([P94]_, Algorithm 6.5.1) with the span stopping rule.

    Each iteration takes the greedy policy of ``v`` (one Bellman maximum), then applies that
    policy's operator ``v <- r_pi + discount P_pi v`` up to ``sweeps`` more times, stopping the
    sweeps early once their span change is below the threshold. It stops when the span of the
    change of the greedy (maximising) sweep is below ``epsilon (1 - discount) / discount``, and
    returns the value shifted as in :func:`value_iteration` (``stopping="span"``), within
    ``epsilon / 2`` of the optimum. ``sweeps = 0`` is value iteration; as ``sweeps`` grows it
    tends to policy iteration. It wins where a Bellman maximum costs much more than a policy's
    sweep (many actions) and a policy's chain mixes fast.

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float
        In (0, 1).
    sweeps : int
        Evaluation sweeps per improvement (>= 0).
    epsilon : float
    max_iter : int
        Improvements at most.
    v0 : array_like, optional
        Initial value, zero by default.

    Returns
    -------
    DiscountedSolution
        ``iterations`` counts improvements, ``inner_iterations`` the evaluation sweeps.
    """
    _check_mdp(mdp)
    discount = _check_discount(discount)
    epsilon = _check_positive("epsilon", epsilon)
    max_iter = _check_count("max_iter", max_iter)
    sweeps = _check_count("sweeps", sweeps, minimum=0)
    n, A = mdp.n_states, mdp.n_actions
    v = np.zeros(n) if v0 is None else _check_start("v0", v0, n)
    threshold = epsilon * (1 - discount) / discount
    rewards = mdp._masked_rewards
    states = np.arange(n)
    inner = 0
    residual = np.inf
    diff = np.zeros(n)
    for k in range(1, max_iter + 1):
        q = rewards + discount * (mdp._stacked @ v).reshape(A, n)
        policy = np.argmax(q, axis=0)
        v_new = q[policy, states]
        diff = v_new - v
        residual = float(diff.max() - diff.min())
        v = v_new
        if residual < threshold:
            break
        P = _policy_matrix(mdp, policy)
        r = mdp.rewards[policy, states]
        for _ in range(sweeps):
            v_next = r + discount * (P @ v)
            change = v_next - v
            v = v_next
            inner += 1
            if float(change.max() - change.min()) < threshold:
                break
    converged = residual < threshold
    if not converged:
        warnings.warn(f"modified_policy_iteration did not converge in {max_iter} iterations "
                      f"(span {residual:.3g})", RuntimeWarning, stacklevel=2)
    policy = np.argmax(mdp.q_values(v, discount), axis=0)
    v = v + discount / (1 - discount) * 0.5 * (float(diff.max()) + float(diff.min()))
    return DiscountedSolution(v, policy, k, residual, converged, "sweeps", inner)


def _warm_start(mdp: FiniteMDP, discount: float, sweeps: int, policy: np.ndarray
                ) -> tuple[np.ndarray, int, np.ndarray]:
    """``sweeps`` of value iteration (discounted) or relative value iteration (average, relative
    to state 0) from zero; their greedy policy, keeping ``policy``'s action on ties, and the
    sweeps done (it stops early once the span of the change is at rounding level), and a first
    guess for the evaluation: the last value (discounted) or ``h + g`` with ``h`` relative to
    state 0 and ``g`` the last change at state 0 (average; see :func:`_unichain_evaluation`)."""
    n, A = mdp.n_states, mdp.n_actions
    rewards = mdp._masked_rewards
    v = np.zeros(n)
    scale = 1.0 + float(np.abs(mdp.rewards).max())
    done = 0
    change = np.zeros(n)
    for done in range(1, sweeps + 1):
        Tv = (rewards + discount * (mdp._stacked @ v).reshape(A, n)).max(axis=0)
        change = Tv - v
        v = Tv - Tv[0] if discount == 1.0 else Tv
        if float(change.max() - change.min()) <= 1e-13 * scale:
            break
    q = mdp.q_values(v, discount)
    guess = v + float(change[0]) if discount == 1.0 and sweeps else v
    return _greedy(q, policy, 1e-12 * (1.0 + float(np.abs(v).max()))), done, guess


def _policy_iteration_discounted(mdp, discount, policy, max_iter, method, tol, inner, v):
    n = mdp.n_states
    states = np.arange(n)
    # A direct evaluation is exact, and after a warm start the policy is mostly optimal: no
    # loose first pass in either case.
    tight = method == "direct" or inner > 0
    for k in range(1, max_iter + 1):
        P = _policy_matrix(mdp, policy)
        r = mdp.rewards[policy, states]
        v, its = _evaluate_discounted(P, r, discount, method, v, tol if tight else _EARLY_RTOL)
        inner += its
        q = mdp.q_values(v, discount)
        new = _greedy(q, policy, tol=1e-12 * (1 + np.max(np.abs(v))))
        if np.array_equal(new, policy):
            if tight:
                residual = float(np.max(np.abs(q.max(axis=0) - v)))
                return DiscountedSolution(v, policy, k, residual, True, method, inner)
            tight = True
        policy = new
    warnings.warn(f"policy_iteration did not converge in {max_iter} iterations",
                  RuntimeWarning, stacklevel=3)
    residual = float(np.max(np.abs(mdp.q_values(v, discount).max(axis=0) - v)))
    return DiscountedSolution(v, policy, max_iter, residual, False, method, inner)


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
    return _recurrent_classes(_check_stochastic("P", P))


def _recurrent_classes(P: sparse.csr_array) -> list[np.ndarray]:
    P = sparse.csr_array(P)
    P.eliminate_zeros()
    n_components, labels = csgraph.connected_components(P, directed=True, connection="strong")
    if n_components == 1:  # irreducible
        return [np.arange(P.shape[0])]
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
    _check_mdp(model)
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
    _check_mdp(model)
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
    _check_mdp(mdp)
    policy = _check_policy(mdp, policy)
    P = policy_transition_matrix(mdp, policy)
    r = mdp.rewards[policy, np.arange(mdp.n_states)]
    return _evaluate_chain(P, r)


def _evaluate_chain(P: sparse.csr_array, r: np.ndarray) -> PolicyEvaluation:
    n = P.shape[0]
    classes = _recurrent_classes(P)
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
    P = _check_stochastic("P", P)
    classes = _recurrent_classes(P)
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
    P = _check_stochastic("P", P)
    classes = _recurrent_classes(P)
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
    _check_mdp(mdp)
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


@dataclass(frozen=True, eq=False)
class RelativeValueBatch:
    """Relative value iteration from several reference states at once
    (:func:`relative_value_iteration` with an array of ``reference_state``).

    Column ``j`` of every array is the run from ``reference_states[j]``; it stops, and its
    iterate freezes, at the first iteration where its stopping statistic is below ``tol``.

    Attributes
    ----------
    reference_states : ndarray of int, shape (m,)
    gain : ndarray, shape (m,)
        ``T h(x_hat)`` at each column's last iterate.
    bias : ndarray, shape (n, m)
        The last iterates, ``bias[x_hat_j, j] = 0``.
    policy : ndarray of int, shape (n, m)
        A greedy action of each column's last iterate.
    iterations : ndarray of int, shape (m,)
        The iteration at which each column stopped (``max_iter`` if it did not).
    residual : ndarray, shape (m,)
        Each column's last stopping statistic.
    converged : ndarray of bool, shape (m,)
    gain_bounds : ndarray, shape (m, 2)
        ``min`` and ``max`` of ``T h - h`` for each column, which bracket the optimal gain.
    """

    reference_states: np.ndarray
    gain: np.ndarray
    bias: np.ndarray
    policy: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    converged: np.ndarray
    gain_bounds: np.ndarray


def _column_max(a: np.ndarray) -> np.ndarray:
    """``a.max(axis=0)`` for ``a`` of shape ``(n, m)``, the same values (a maximum is exact).
    With few columns NumPy reduces a C-ordered ``(n, m)`` array row by row, in loops of length
    ``m``; a transposed copy reduces each column in one pass (tens of times faster for
    ``m = 2``, slower from about ``m = 16``)."""
    return np.ascontiguousarray(a.T).max(axis=1) if a.shape[1] < 16 else a.max(axis=0)


def _relative_rule(h_new, h, Th, refs):
    """The pointwise relative rule of [TLNC99]_: ``max_{x != x_hat} |h_new(x) - h(x)| / |h(x)|``,
    a ratio with ``h(x) = 0`` counting as infinite unless ``h_new(x) = 0`` too."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(h_new - h) / np.abs(h)   # inf where h = 0 < |change|, nan where both 0
    ratio[refs, np.arange(refs.size)] = 0.0
    # fmax skips nan (0/0, a ratio of 0 for the rule); every column holds the 0 at x_hat
    if ratio.shape[1] < 16:   # see _column_max
        return np.fmax.reduce(np.ascontiguousarray(ratio.T), axis=1)
    return np.fmax.reduce(ratio, axis=0)


def _span_rule(h_new, h, Th, refs):
    """The span of the Bellman residual, ``sp(T h - h)``: it bounds the error of the gain
    estimate ``T h(x_hat)`` ([P94]_, Thm. 8.5.5)."""
    diff = Th - h
    return diff.max(axis=0) - diff.min(axis=0)


def _norm_rule(h_new, h, Th, refs):
    """The change relative to the iterate in sup norm, ``||h_new - h|| / ||h||`` (infinite while
    ``h = 0``): the other reading of the draft's rule."""
    big = _column_max(np.abs(h))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(big > 0, _column_max(np.abs(h_new - h)) / big, np.inf)


#: The named stopping rules of :func:`relative_value_iteration`: each maps ``(h_new, h, T h,
#: reference_states)``, arrays of shape ``(n, m)`` and ``(m,)``, to one statistic per column;
#: a column stops when its statistic falls below ``tol``.
STOPPING_RULES = {"relative": _relative_rule, "span": _span_rule, "norm": _norm_rule}


def relative_value_iteration(
    mdp: FiniteMDP,
    *,
    tau: float = 1.0,
    reference_state=0,
    tol: float = 1e-5,
    stopping: str | Callable | tuple = "relative",
    max_iter: int = 1_000_000,
    h0=None,
    damping: str = "update",
):
    """Relative value iteration with damping, as in Proposition 4 of [TLNC99]_.

    Iterates, from ``h_0`` with ``h_0(x_hat) = 0``,

    .. math:: h_{k+1}(x) = (1-\\tau) h_k(x) + \\tau \\big(T h_k(x) - T h_k(\\hat x)\\big),
              \\quad T h(x) = \\max_a \\{ r(x, a) + \\sum_y p_{xy}(a) h(y) \\}

    (the paper minimises costs; here rewards are maximised, ``r = -c``). The damping ``tau``
    is the aperiodicity transformation ([P94]_, Sec. 8.5.4): it leaves the bias and the
    optimal policy unchanged and makes every chain aperiodic. With ``damping="expectation"``
    the damping multiplies the expectation only, not the reward (the form of Bertsekas' texts,
    e.g. [B87]_; the page was not checked here):

    .. math:: h_{k+1}(x) = (1-\\tau) h_k(x) + T_\\tau h_k(x) - T_\\tau h_k(\\hat x),
              \\quad T_\\tau h(x) = \\max_a \\{ r(x, a) + \\tau \\sum_y p_{xy}(a) h(y) \\},

    relative value iteration on the model with rewards ``r`` and transitions
    ``(1 - tau) I + tau P``, whose gain is the original gain and whose bias is the original
    bias divided by ``tau``.

    Parameters
    ----------
    mdp : FiniteMDP
        Weakly communicating (e.g. communicating) for the limit to exist.
    tau : float
        Damping in (0, 1]; the paper uses 0.99999.
    reference_state : int or array_like of int
        The state ``x_hat`` whose relative value is pinned to zero. An array runs one
        iteration per reference state, all at once (one sparse product per step for all of
        them), each stopping on its own, and returns a :class:`RelativeValueBatch`; each column
        follows the iterates of the run from that state alone.
    tol : float
        Threshold of the stopping statistic.
    stopping : {"relative", "span", "norm"}, callable, or tuple of them
        ``"relative"`` is the paper's rule, ``max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < tol``,
        taken over ``x != x_hat`` (where ``h_k = 0`` always); a ratio with ``h_k(x) = 0`` counts
        as infinite unless ``h_{k+1}(x) = 0`` too. ``"span"`` is the classical rule
        ``sp(T h_k - h_k) < tol``, which bounds the error of the gain by ``tol``
        ([P94]_, Thm. 8.5.5). ``"norm"`` is ``||h_{k+1} - h_k||_inf / ||h_k||_inf < tol``. A
        callable ``rule(h_new, h, Th, reference_states) -> statistic`` receives arrays of shape
        ``(n, m)`` (``m = 1`` for one reference state) and ``(m,)`` and returns one statistic
        per column (see :data:`STOPPING_RULES`). A tuple of rules watches the same iterates
        with each rule in one pass: a run goes on until every rule has held, and each rule's
        result is the iterate at which it first held, exactly as a run with that rule alone.
    max_iter : int
    h0 : array_like, shape (n,) or (n, m), optional
        Initial relative values (zero by default); ``h0[x_hat]`` is set to zero.
    damping : {"update", "expectation"}
        Where ``tau`` acts: on the whole update (the iteration printed in [TLNC99]_) or on the
        expectation only (the form of [B87]_). The stopping rule sees, as ``Th``, the Bellman
        operator of the transformed model, ``(1 - tau) h + T_tau h``, for ``"expectation"``.

    Returns
    -------
    AverageSolution or RelativeValueBatch, or dict of them
        ``gain`` is ``T h(x_hat)`` at the last iterate (``T_tau h(x_hat)`` with
        ``damping="expectation"``): at a fixed point, the optimal gain in both forms. ``bias``
        is the last iterate ``h``; with ``damping="expectation"`` the original model's bias
        is ``tau * bias``. (The paper writes ``theta = tau T(h)(x_hat)``. With the printed
        iteration ``tau T h(x_hat)`` is the gain of the damped chain, ``tau`` times the optimal
        gain. With ``damping="expectation"``, ``tau T h(x_hat) = T_tau h(x_hat) - (1 - tau)
        r(x_hat)`` when the reward at ``x_hat`` does not depend on the action, so the printed
        formula is exact when that reward is zero. With ``tau = 0.99999`` the forms differ in
        the fifth significant digit at most.) With a tuple ``stopping``, a dict from each of
        its entries to the result of that rule.

    Warns
    -----
    RuntimeWarning
        If the stopping rule is not met within ``max_iter`` iterations (by some column).

    Notes
    -----
    The relative rule looks at the change of ``h`` only, not at the gain; it stops early when
    ``h`` is large. The returned ``gain_bounds`` tell how accurate the gain actually is.

    Examples
    --------
    Two reference states of a two-state chain at once: the same gain, different pins.

    >>> m = FiniteMDP([[[0.5, 0.5], [0.5, 0.5]]], [[1.0, 0.0]])
    >>> batch = relative_value_iteration(m, reference_state=[0, 1], stopping="span", tol=1e-12)
    >>> batch.gain.tolist(), batch.bias.tolist()
    ([0.5, 0.5], [[0.0, 1.0], [-1.0, 0.0]])

    Two readings of a stopping rule on the same iterates, in one pass:

    >>> both = relative_value_iteration(m, reference_state=0, stopping=("relative", "span"))
    >>> sorted(both), both["span"].gain
    (['relative', 'span'], 0.5)
    """
    _check_mdp(mdp)
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must lie in (0, 1], got {tau}")
    n = mdp.n_states
    single = np.ndim(reference_state) == 0
    if single:
        refs = np.array([_check_state("reference_state", reference_state, n)])
    else:
        refs = np.array([_check_state("reference_state", x, n) for x in
                         np.asarray(reference_state).ravel().tolist()], dtype=np.int64)
        if refs.size == 0:
            raise ValueError("reference_state must hold at least one state, got none")
    several = isinstance(stopping, (tuple, list))
    named = tuple(stopping) if several else (stopping,)
    if not named or len(set(named)) != len(named):
        raise ValueError(f"stopping must name at least one rule, each once, got {stopping!r}")
    rules = []
    for entry in named:
        if callable(entry):
            rules.append(entry)
        elif isinstance(entry, str) and entry in STOPPING_RULES:
            rules.append(STOPPING_RULES[entry])
        else:
            raise ValueError(f"stopping must be 'relative', 'span', 'norm', a callable or a "
                             f"tuple of them, got {entry!r}")
    if damping not in ("update", "expectation"):
        raise ValueError(f"damping must be 'update' or 'expectation', got {damping!r}")
    tol = _check_positive("tol", tol)
    max_iter = _check_count("max_iter", max_iter)
    scale = tau if damping == "expectation" else None
    m = refs.size
    if h0 is None:
        H = np.zeros((n, m))
    else:
        start = np.array(h0, dtype=float)
        if start.shape == (n,):
            start = start[:, None]
        if start.shape not in ((n, 1), (n, m)) or not np.all(np.isfinite(start)):
            raise ValueError(f"h0 must be a finite array of shape ({n},) or ({n}, {m}), got "
                             f"shape {np.shape(h0)}")
        H = np.repeat(start, m, axis=1) if start.shape[1] != m else start.copy()
    H[refs, np.arange(m)] = 0.0
    results = _rvi_loop(mdp, H, refs, tau, tol, rules, max_iter, scale)
    out = {entry: _rvi_result(mdp, refs, single, scale, tol, *result)
           for entry, result in zip(named, results)}
    statistic = np.concatenate([r[2] for r in results])
    if not (statistic < tol).all():
        warnings.warn(f"relative_value_iteration did not meet its stopping rule in {max_iter} "
                      f"iterations (statistic {float(statistic.max()):.3g})", RuntimeWarning,
                      stacklevel=2)
    return out if several else out[stopping]


def _rvi_result(mdp, refs, single, scale, tol, H, iterations, statistic):
    """The :class:`AverageSolution` (``single``) or :class:`RelativeValueBatch` of the last
    iterates ``H`` of :func:`relative_value_iteration`."""
    n, m = mdp.n_states, refs.size
    converged = statistic < tol
    # the original model's bias: h itself, or tau h for damping="expectation"
    original = 1.0 if scale is None else scale
    if single:
        h = H[:, 0]
        q = mdp.q_values(h) if scale is None else mdp.q_values(h, scale)
        return AverageSolution(
            gain=float(q.max(axis=0)[refs[0]]),
            gain_by_state=np.full(n, float(q.max(axis=0)[refs[0]])),
            bias=h,
            policy=np.argmax(q, axis=0),
            iterations=int(iterations[0]),
            residual=float(statistic[0]),
            converged=bool(converged[0]),
            gain_bounds=_gain_bounds(mdp, h if scale is None else original * h),
            method="relative value iteration",
        )
    q = _q_batch(mdp, H, scale)
    Th = q.max(axis=0)
    diff = Th - original * H
    return RelativeValueBatch(
        reference_states=refs, gain=Th[refs, np.arange(m)], bias=H, policy=q.argmax(axis=0),
        iterations=iterations, residual=statistic, converged=converged,
        gain_bounds=np.stack([diff.min(axis=0), diff.max(axis=0)], axis=1))


def _q_batch(mdp: FiniteMDP, H: np.ndarray, scale: float | None = None) -> np.ndarray:
    """``q[a, x, j] = r[a, x] + scale (P[a] H[:, j])[x]`` (``-inf`` where not allowed; no
    ``scale``: 1). One column is a sparse matrix-vector product, the same arithmetic as
    :meth:`FiniteMDP.q_values`."""
    A, n, m = mdp.n_actions, mdp.n_states, H.shape[1]
    product = mdp._stacked @ H[:, 0] if m == 1 else mdp._stacked @ H
    if scale is not None:
        product = scale * product
    return mdp._masked_rewards[:, :, None] + product.reshape(A, n, m)


#: Below this many columns :func:`_rvi_loop` makes one sparse matrix-vector product per column,
#: above it one matrix-matrix product (SciPy's ``csr_matvecs``, which adds the products of each
#: row in the same order as ``csr_matvec``: the same bits, ``tests/test_mdp.py``).
_ROWS_BY_VECTOR = 8


def _rvi_loop(mdp, H, refs, tau, tol, rules, max_iter, scale=None):
    """The iteration of :func:`relative_value_iteration` on the columns of ``H``, watched by
    each of ``rules``. ``scale`` (``tau``, or ``None``) selects ``damping="expectation"``.

    Returns, per rule, ``(H_rule, iterations, statistic)``: the iterates at which the
    rule first held (the last iterates where it never did), the iteration of that stop
    (``max_iter`` if none) and the statistic then. A column freezes once every rule has held.

    The iterates are kept as rows, ``G = H.T`` (one contiguous row per reference state), so
    that every step is a contiguous loop over ``n`` states instead of a loop of length ``m``:
    the arithmetic of each column is that of :func:`_q_batch`'s layout, bit for bit (one
    sparse product per column, the same element-wise operations in the same order, and
    maxima and minima, which are exact), and the rules see the same values as ``(n, m)``
    views ``G.T``.
    """
    m, n_rules = refs.size, len(rules)
    A, n = mdp.n_actions, mdp.n_states
    stacked, rewards = mdp._stacked, mdp._masked_rewards
    keep = 1 - tau
    iterations = np.full((n_rules, m), max_iter, dtype=np.int64)
    statistic = np.full((n_rules, m), np.inf)
    stopped = np.zeros((n_rules, m), dtype=bool)
    frozen = [None] * n_rules
    G = np.ascontiguousarray(H.T)
    active = np.arange(m)
    rows = active
    for k in range(1, max_iter + 1):
        a = active.size
        Gs = G if a == m else G[active]
        ref = refs[active]
        if a < _ROWS_BY_VECTOR:   # _q_batch's sparse product, one column at a time
            q = np.empty((a, A * n))
            for j in range(a):
                q[j] = stacked @ Gs[j]
        else:   # or for all columns at once: the same sums for each (see _ROWS_BY_VECTOR)
            q = np.ascontiguousarray((stacked @ Gs.T).T)
        if scale is not None:
            q *= scale
        q = q.reshape(a, A, n)
        q += rewards   # r + P h, as in _q_batch (a sum of two doubles does not depend on order)
        best = q.max(axis=1)
        if scale is None:
            Th = best
            Gn = keep * Gs + tau * (Th - Th[rows, ref][:, None])
        else:
            Gn = keep * Gs + (best - best[rows, ref][:, None])
            Th = keep * Gs + best   # the transformed model's Bellman operator
        stats = [np.asarray(rule(Gn.T, Gs.T, Th.T, ref), dtype=float).reshape(a)
                 for rule in rules]
        if a == m:
            G = Gn
        else:
            G[active] = Gn
        for i, stat in enumerate(stats):
            watching = ~stopped[i, active]
            statistic[i, active[watching]] = stat[watching]
            done = watching & (stat < tol)
            if done.any():
                iterations[i, active[done]] = k
                stopped[i, active[done]] = True
                if n_rules > 1:
                    if frozen[i] is None:
                        frozen[i] = np.zeros_like(G)
                    frozen[i][active[done]] = Gn[done]
        still = ~stopped[:, active].all(axis=0)
        if not still.all():
            active = active[still]
            rows = np.arange(active.size)
        if active.size == 0:
            break
    if n_rules == 1:
        frozen[0] = G
    for i in range(n_rules):
        if n_rules > 1 and not stopped[i].all():   # a rule that never held: the last iterates
            if frozen[i] is None:
                frozen[i] = np.zeros_like(G)
            frozen[i][~stopped[i]] = G[~stopped[i]]
    return [(np.ascontiguousarray(frozen[i].T), iterations[i], statistic[i])
            for i in range(n_rules)]


def _unichain_evaluation(P: sparse.csr_array, r: np.ndarray, reference: int, x0: np.ndarray,
                         rtol: float):
    """Gain and bias of a unichain policy by a Krylov solver; ``None`` if the chain has several
    recurrent classes (or the solver fails), for the caller to factorise instead.

    With ``x_hat`` a recurrent state (``reference`` if it is recurrent), the bias equations
    ``g + h = r + P h``, ``h(x_hat) = 0`` become ``B x = r`` with ``B = I - P + 1 e_{x_hat}^T``,
    ``g = x(x_hat)`` and ``h = x - g``: indeed ``(I - P) x + x(x_hat) 1 = r`` and ``(I - P) 1 =
    0``. ``B`` is non-singular for a unichain ``P``, and by Brauer's theorem its eigenvalues are
    1 (on the vector ``1``) and ``1 - mu`` for the other eigenvalues ``mu`` of ``P``: the
    rank-one term moves the zero eigenvalue of ``I - P`` to 1, so a Krylov solver converges at
    the rate at which the chain mixes.
    """
    classes = _recurrent_classes(P)
    if len(classes) != 1:
        return None
    c = classes[0]
    position = int(np.searchsorted(c, reference))
    ref = reference if position < c.size and c[position] == reference else int(c[0])
    x, iterations = _krylov_solve(lambda y: y - P @ y + y[ref], r, x0, rtol)
    if x is None:
        return None
    g = float(x[ref])
    return PolicyEvaluation(np.full(r.size, g), x - g, classes), iterations, x


def _policy_iteration_average(mdp: FiniteMDP, policy: np.ndarray, max_iter: int,
                              reference_state: int, method: str = "direct",
                              rtol: float = 1e-12, inner: int = 0,
                              x: np.ndarray | None = None) -> AverageSolution:
    """Multichain policy iteration ([P94]_, Algorithm 9.2.1), maximising. ``x``: a first guess
    for an iterative evaluation (see :func:`_unichain_evaluation`)."""
    cols = np.arange(mdp.n_states)
    # A direct evaluation is exact, and after a warm start the policy is mostly optimal: no
    # loose first pass in either case.
    tight = method == "direct" or inner > 0
    x = np.zeros(mdp.n_states) if x is None else x
    for k in range(1, max_iter + 1):
        if method == "direct":
            ev = evaluate_policy(mdp, policy)
        else:
            P = _policy_matrix(mdp, policy)
            r = mdp.rewards[policy, cols]
            out = _unichain_evaluation(P, r, reference_state, x, rtol if tight else _EARLY_RTOL)
            if out is None:
                ev = _evaluate_chain(P, r)
            else:
                ev, its, x = out
                inner += its
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
                if tight:
                    break
                tight = True  # evaluate the same policy again, at the full tolerance
        policy = new
    else:
        warnings.warn(f"policy_iteration did not converge in {max_iter} iterations",
                      RuntimeWarning, stacklevel=3)
        return _average_solution(mdp, ev, policy, max_iter, False, reference_state, method,
                                 inner)
    return _average_solution(mdp, ev, policy, k, True, reference_state, method, inner)


def _average_solution(mdp, ev: PolicyEvaluation, policy, iterations, converged,
                      reference_state, method="direct", inner=0) -> AverageSolution:
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
        method=method,
        inner_iterations=inner,
    )


def policy_iteration(mdp: FiniteMDP, *, discount: float = 1.0, policy0=None,
                     max_iter: int = 1_000, reference_state: int = 0,
                     evaluation: Literal["auto", "direct", "iterative"] = "auto",
                     tol: float = 1e-12, warm_start: int | None = None):
    """Policy iteration, discounted or average reward.

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float
        In (0, 1) for the discounted criterion ([P94]_, Algorithm 6.4.1); ``1.0`` for the
        average reward, solved by multichain policy iteration ([P94]_, Algorithm 9.2.1): each
        policy is evaluated exactly on each of its recurrent classes, the gain is improved
        first and the bias second, the incumbent action is kept on ties. It is exact for any
        finite MDP, multichain policies included.
    policy0 : array of int, shape (n,), optional
        Initial policy; by default the first allowed action in each state.
    max_iter : int
    reference_state : int
        Average reward: the state where the returned bias is zero.
    evaluation : {"auto", "direct", "iterative"}
        How each policy is evaluated. ``"direct"``: sparse LU factorisation (SuperLU), exact
        to rounding. ``"iterative"``: a Krylov solver (BiCGSTAB, restarted GMRES if it stalls,
        LU if both fail) on ``I - discount P_pi``, which is strictly diagonally dominant, or,
        for the average reward, on the unichain bias equations made non-singular by a rank-one
        term (a multichain policy is factorised instead); it is warm-started from the previous
        policy's value, solved to a relative residual of ``1e-6`` until the policy stops
        changing, then once more to ``tol``, and the policy must survive that evaluation's
        improvement step too (after a warm start every evaluation is solved to ``tol``).
        ``"auto"`` factorises when the LU factors stay sparse (at most
        1000 states, deterministic transitions, or a pattern that reverse Cuthill-McKee makes
        banded: queues, birth-death chains) and iterates otherwise (random, expander-like
        patterns, where LU fills in).
    tol : float
        Relative residual of the final iterative evaluation, ``||b - A x||_inf <= tol
        (||b||_inf + ||x||_inf)``.
    warm_start : int, optional
        Sweeps of value iteration (discounted) or relative value iteration (average reward)
        from zero before the first evaluation; policy iteration then starts from their greedy
        policy (keeping ``policy0``'s action on ties), and an iterative evaluation from their
        value. A sweep costs a fraction of an evaluation: on chains that mix slowly a few
        hundred sweeps replace most of the evaluations, on chains that mix fast a few sweeps
        already pick most of the optimal actions. The result is an optimal policy either way
        (the same one unless several are optimal). Default: ``20`` when the evaluation is
        iterative, ``0`` when it is direct.

    Returns
    -------
    DiscountedSolution or AverageSolution
        ``method`` says how the policies were evaluated, ``inner_iterations`` the Krylov
        iterations and warm-start sweeps, ``residual`` the Bellman residual of the result.

    Examples
    --------
    Two states: staying in state 1 pays 1 a step, reaching it from 0 costs a step.

    >>> m = FiniteMDP([np.eye(2), [[0.0, 1.0], [0.0, 1.0]]], [[0.0, 1.0], [0.0, 0.0]])
    >>> sol = policy_iteration(m)
    >>> sol.gain, sol.policy.tolist(), sol.method
    (1.0, [1, 0], 'direct')
    >>> policy_iteration(m, discount=0.5, evaluation="iterative").value.round(12).tolist()
    [1.0, 2.0]
    """
    _check_mdp(mdp)
    max_iter = _check_count("max_iter", max_iter)
    method = _resolve_evaluation(mdp, evaluation)
    tol = _check_positive("tol", tol)
    if warm_start is None:
        warm_start = _WARM_START_ITERATIVE if method == "iterative" else 0
    warm_start = _check_count("warm_start", warm_start, minimum=0)
    if policy0 is None:
        policy = np.argmax(mdp.allowed, axis=0)
    else:
        policy = _check_policy(mdp, policy0).copy()
    if discount == 1.0:
        reference_state = _check_state("reference_state", reference_state, mdp.n_states)
        sweeps, guess = 0, np.zeros(mdp.n_states)
        if warm_start:
            policy, sweeps, guess = _warm_start(mdp, 1.0, warm_start, policy)
        return _policy_iteration_average(mdp, policy, max_iter, reference_state, method, tol,
                                         sweeps, guess)
    discount = _check_discount(discount)
    sweeps, guess = 0, np.zeros(mdp.n_states)
    if warm_start:
        policy, sweeps, guess = _warm_start(mdp, discount, warm_start, policy)
    return _policy_iteration_discounted(mdp, discount, policy, max_iter, method, tol, sweeps,
                                        guess)


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


def dense_policy_iteration_many(P, r, *, discount: float, tol=0.0,
                                max_iter: int | None = None) -> tuple:
    """:func:`dense_policy_iteration` of many reward vectors on one discounted chain at once.

    Parameters
    ----------
    P : array_like, shape (A, n, n)
        The transition matrices, shared by every problem.
    r : array_like, shape (k, A, n)
        The rewards of ``k`` problems.
    discount : float
        In (0, 1) (the discounted criterion only).
    tol : float or array_like, shape (k,)
        The gain a state needs to switch action, per problem (>= 0).
    max_iter : int, optional
        Default ``10 n + 100``.

    Returns
    -------
    tuple of DenseSolution
        ``dense_policy_iteration(P, r[i], discount=discount, tol=tol[i])`` for each ``i``,
        the same numbers bit for bit, each from the all-0 policy.

    Raises
    ------
    RuntimeError
        If some policy still improves after ``max_iter`` steps.

    Notes
    -----
    The problems run in lock-step: each step evaluates the policies of the problems not yet
    stable by one stacked LAPACK solve (``gesv`` on each matrix in turn, as for one), then
    forms ``q`` with one matrix-vector product per problem and action (the BLAS call of the
    single version, so the same rounding) and improves every policy with array operations.
    For many small problems (a sweep over a subsidy, a penalty) it saves the Python overhead
    of one call per problem.

    Examples
    --------
    >>> P = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]
    >>> sols = dense_policy_iteration_many(P, [[[0.0, 1.0], [0.0, 0.0]],
    ...                                        [[0.0, 1.0], [5.0, 0.0]]], discount=0.5)
    >>> [s.policy.tolist() for s in sols]
    [[1, 0], [1, 0]]
    """
    P = np.asarray(P, dtype=float)
    r = np.asarray(r, dtype=float)
    if P.ndim != 3 or P.shape[1] != P.shape[2]:
        raise ValueError(f"P must have shape (A, n, n), got {P.shape}")
    n_actions, n = P.shape[:2]
    if r.ndim != 3 or r.shape[1:] != (n_actions, n):
        raise ValueError(f"r must have shape (k, {n_actions}, {n}), got {r.shape}")
    k = r.shape[0]
    if not (isinstance(discount, (int, float, np.floating)) and 0 < discount < 1):
        raise ValueError(f"discount must lie in (0, 1), got {discount!r}")
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (k,))
    if not (np.isfinite(tol).all() and (tol >= 0).all()):
        raise ValueError(f"tol must hold finite numbers >= 0, got {tol!r}")
    max_iter = 10 * n + 100 if max_iter is None else _check_count("max_iter", max_iter)
    states = np.arange(n)
    scaled = discount * P
    eye = np.eye(n)
    policy = np.zeros((k, n), dtype=int)
    value = np.empty((k, n))
    q = np.empty((k, n_actions, n))
    iterations = np.zeros(k, dtype=int)
    todo = np.arange(k)
    for iteration in range(1, max_iter + 1):
        if todo.size == 0:
            break
        pol = policy[todo]
        P_pi = P[pol, states]                                   # (m, n, n)
        r_pi = r[todo[:, None], pol, states]                    # (m, n)
        v = np.linalg.solve(eye - discount * P_pi, r_pi[:, :, None])[:, :, 0]
        value[todo] = v
        for i, vi in zip(todo.tolist(), v):
            for a in range(n_actions):
                q[i, a] = scaled[a] @ vi
        q[todo] += r[todo]                                      # r[a] + (scaled[a] @ value)
        qt = q[todo]
        best = np.argmax(qt, axis=1)
        rows = np.arange(todo.size)[:, None]
        switch = qt[rows, best, states] - qt[rows, pol, states] > tol[todo, None]
        moving = switch.any(axis=1)
        iterations[todo[~moving]] = iteration
        policy[todo[moving]] = np.where(switch[moving], best[moving], pol[moving])
        todo = todo[moving]
    if todo.size:
        raise RuntimeError(f"dense_policy_iteration_many: {todo.size} policies still improve "
                           f"after {max_iter} steps")
    out = []
    for i in range(k):
        vi, qi, pi = value[i].copy(), q[i].copy(), policy[i].copy()
        for arr in (vi, qi, pi):
            arr.setflags(write=False)
        out.append(DenseSolution(vi, None, qi, pi, int(iterations[i])))
    return tuple(out)


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
