"""Finite Markov decision processes on sparse matrices.

Rewards are maximised (a cost is a negative reward). An MDP has ``n_states`` states and
``n_actions`` actions; action ``a`` has a transition matrix ``P[a]`` of shape ``(n_states,
n_states)``, ``P[a][s, s']`` the probability of moving from ``s`` to ``s'``; the rewards are
``rewards[s, a]``, shape ``(n_states, n_actions)``, and a boolean mask ``allowed[s, a]`` of the
same shape says which actions are allowed in which state: the layout of pymdptoolbox,
QuantEcon's ``DiscreteDP`` and markovianbandit (:class:`FiniteMDP`).

The criterion is one keyword, ``discount``: a number in (0, 1) for the discounted reward,
``None`` for the average reward per period. ``1.0`` is refused where the horizon is infinite
(pass ``None``); :func:`backward_induction`, over a finite horizon, takes it as the plain total.

Solvers
-------
value_iteration
    discounted criterion, successive approximation with the span (or sup-norm) epsilon-optimal
    stop.
modified_policy_iteration
    discounted criterion, a few evaluation sweeps per improvement (Puterman 1994, Sec. 6.5).
relative_value_iteration, relative_value_iteration_many
    average reward, the damped scheme of Talim, Liu, Nain and Coffman (1999), Proposition 4
    (or Bertsekas' form, the damping on the expectation only), from one reference state or a
    batch of them at once, with a pluggable stopping rule (their pointwise relative rule, the
    span rule, a norm rule, or the caller's own callable).
policy_iteration
    discounted (Howard) and average reward; the average-reward version is Puterman's
    *multichain* policy iteration (Puterman 1994, Sec. 9.2), which is exact on communicating
    MDPs whose intermediate policies are multichain, such as the robots MDP. Each policy is
    evaluated by dense LAPACK solves, a sparse LU factorisation or a Krylov solver, chosen by
    the structure of the chains (see :func:`policy_iteration`).
backward_induction
    finite horizon: values and decisions per stage.
dense_policy_iteration, dense_policy_iteration_many
    Howard's policy iteration with dense LAPACK solves, for small or dense MDPs (one reward
    table, or many on one chain).
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

from ._results import ShortRepr
from ._validation import (action_vector, as_numeric, check_choice, check_discount,
                          check_instance, check_integer, check_real, finite_vector,
                          sparse_stochastic_matrix, stochastic_matrix)

__all__ = [
    "FiniteMDP",
    "DiscountedSolution",
    "AverageSolution",
    "PolicyIterationSolution",
    "RelativeValueBatch",
    "PolicyEvaluation",
    "value_iteration",
    "modified_policy_iteration",
    "relative_value_iteration",
    "relative_value_iteration_many",
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

#: The layout every message and docstring names.
_REWARDS_LAYOUT = "rewards[s, a], shape (n_states, n_actions)"
_TRANSITIONS_LAYOUT = ("a sequence of n_actions matrices P[a][s, s'] (sparse or dense) or a 3-d "
                       "array P[a, s, s'] of shape (n_actions, n_states, n_states)")


def _positive(name: str, value) -> float:
    """A finite number > 0 (a tolerance)."""
    return check_real(name, value, 0.0, np.inf, low_open=True, high_open=True)


def _as_mdp(mdp) -> FiniteMDP:
    return check_instance("mdp", mdp, FiniteMDP)


@dataclass(frozen=True, eq=False, repr=False)
class FiniteMDP(ShortRepr):
    """A finite MDP: transition matrices (stored sparse), rewards, and the allowed actions.

    Parameters
    ----------
    transitions : sequence of sparse or dense arrays, or array_like of shape (n_actions, \
n_states, n_states)
        ``transitions[a][s, s']`` (``P[a, s, s']``) is the probability of moving from ``s`` to
        ``s'`` under action ``a``: a sequence of ``n_actions`` square matrices, or one 3-d
        array. Rows of allowed (state, action) pairs must sum to one; rows of disallowed pairs
        may hold anything finite and non-negative (they are never used).
    rewards : array_like, shape (n_states, n_actions)
        ``rewards[s, a]`` is the one-step reward of action ``a`` in state ``s`` (the layout of
        pymdptoolbox, QuantEcon's ``DiscreteDP`` and markovianbandit; before whittle_lib 1.0
        it was ``rewards[a, s]``). A transposed array is refused, except where the two layouts
        have the same shape (as many states as actions, e.g. two states and two actions):
        there the array is read as ``rewards[s, a]`` and cannot be checked, so make sure of
        its layout.
    allowed : array_like of bool, shape (n_states, n_actions), optional
        ``allowed[s, a]`` says whether action ``a`` may be used in state ``s``. Every state
        needs at least one allowed action. Default: every action everywhere.

    Attributes
    ----------
    transitions : tuple of scipy.sparse.csr_array
        The matrices ``P[a]``, validated, in double precision.
    rewards, allowed : ndarray, shape (n_states, n_actions)
        Read-only.

    Raises
    ------
    TypeError
        For entries that are not numbers, or ``transitions`` that is not a sequence.
    ValueError
        On inconsistent shapes (the message names the layout), negative or non-finite
        probabilities, non-finite rewards, a state with no allowed action, or an allowed row
        that does not sum to one (the message names the action and the state).

    Examples
    --------
    Two states and two actions: stay (0) or move to state 1 (1); staying in 1 pays 1.

    >>> m = FiniteMDP([np.eye(2), [[0.0, 1.0], [0.0, 1.0]]], rewards=[[0.0, 0.0], [1.0, 0.0]])
    >>> m.n_states, m.n_actions
    (2, 2)
    >>> m.q_values([0.0, 10.0], discount=0.5).tolist()      # q[s, a]
    [[0.0, 5.0], [6.0, 5.0]]
    """

    transitions: tuple = field(repr=False)
    rewards: np.ndarray
    allowed: np.ndarray = None  # type: ignore[assignment]
    _stacked: sparse.csr_array = field(init=False, repr=False)
    #: rewards[a, s] and allowed[a, s]: the solvers' layout (one contiguous row per action)
    _r: np.ndarray = field(init=False, repr=False)
    _ok: np.ndarray = field(init=False, repr=False)
    #: the matrices as given, when given dense in double precision (P[a, s, s']): the dense
    #: solvers use them without converting the sparse ones back
    _P: np.ndarray | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        given = self.transitions
        if sparse.issparse(given) or (isinstance(given, np.ndarray) and given.ndim < 3):
            raise ValueError(f"transitions must be {_TRANSITIONS_LAYOUT}, got a single "
                             f"matrix of shape {given.shape}: for one action pass [P]")
        try:
            given = tuple(given)
        except TypeError:
            raise TypeError(f"transitions must be {_TRANSITIONS_LAYOUT}, got "
                            f"{type(self.transitions).__name__}") from None
        if not given:
            raise ValueError(f"transitions must hold at least one action ({_TRANSITIONS_LAYOUT})"
                             ", got none")
        n_actions = len(given)
        first = given[0] if sparse.issparse(given[0]) else as_numeric("transitions[0]", given[0])
        if first.ndim != 2:
            raise ValueError(f"transitions must be {_TRANSITIONS_LAYOUT}; transitions[0] has "
                             f"shape {first.shape}")
        n = first.shape[0]
        rewards = np.array(as_numeric("rewards", self.rewards), dtype=float)
        if rewards.shape != (n, n_actions):
            hint = (": it is the transpose, pass rewards.T (before whittle_lib 1.0 the layout "
                    "was rewards[a, s])" if rewards.shape == (n_actions, n) else "")
            raise ValueError(f"rewards must be {_REWARDS_LAYOUT} = ({n}, {n_actions}), got "
                             f"shape {rewards.shape}{hint}")
        if not np.all(np.isfinite(rewards)):
            bad = np.argwhere(~np.isfinite(rewards))[0]
            raise ValueError(f"rewards must be finite, got {rewards[tuple(bad)]} for action "
                             f"{bad[1]} in state {bad[0]} ({_REWARDS_LAYOUT})")
        if self.allowed is None:
            allowed = np.ones((n, n_actions), dtype=bool)
        else:
            raw = as_numeric("allowed", self.allowed)
            if raw.shape != (n, n_actions):
                hint = (": it is the transpose, pass allowed.T" if raw.shape == (n_actions, n)
                        else "")
                raise ValueError(f"allowed must be allowed[s, a], shape (n_states, n_actions) "
                                 f"= ({n}, {n_actions}), got shape {raw.shape}{hint}")
            if raw.dtype.kind != "b" and not np.isin(raw, (0, 1)).all():
                raise ValueError("allowed must hold booleans (or 0 and 1), got "
                                 f"{raw[~np.isin(raw, (0, 1))][0]!r}")
            allowed = np.array(raw, dtype=bool)
        if not np.all(allowed.any(axis=1)):
            x = int(np.flatnonzero(~allowed.any(axis=1))[0])
            raise ValueError(f"allowed must permit at least one action in every state; "
                             f"state {x} has none")
        mats = tuple(sparse_stochastic_matrix(f"transitions[{a}]", P, n, rows=allowed[:, a])
                     for a, P in enumerate(given))
        dense = None
        if not any(sparse.issparse(P) for P in given):
            raws = [as_numeric(f"transitions[{a}]", P) for a, P in enumerate(given)]
            if all(raw.dtype.itemsize >= 8 or raw.dtype.kind in "biu" for raw in raws):
                dense = np.array(raws, dtype=float)        # the values of the CSR matrices
                dense.setflags(write=False)
        r = np.ascontiguousarray(rewards.T)
        ok = np.ascontiguousarray(allowed.T)
        for arr in (rewards, allowed, r, ok):
            arr.setflags(write=False)
        object.__setattr__(self, "transitions", mats)
        object.__setattr__(self, "rewards", rewards)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "_r", r)
        object.__setattr__(self, "_ok", ok)
        object.__setattr__(self, "_stacked", sparse.csr_array(sparse.vstack(mats)))
        object.__setattr__(self, "_P", dense)

    @property
    def n_states(self) -> int:
        """Number of states ``n_states``."""
        return self.transitions[0].shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions ``n_actions``."""
        return len(self.transitions)

    def q_values(self, values, discount: float | None = None) -> np.ndarray:
        """The Q-function of ``values``: ``q[s, a] = rewards[s, a] + discount sum_s' P[a][s, s']
        values[s']``, ``-inf`` where ``a`` is not allowed in ``s``.

        Parameters
        ----------
        values : array_like, shape (n_states,)
        discount : float or None
            In (0, 1]; ``None`` (default) or ``1.0``: no discount (the average-reward and the
            finite-horizon total criteria).

        Returns
        -------
        ndarray, shape (n_states, n_actions)
            ``q[s, a]``.
        """
        values = finite_vector("values", values, self.n_states)
        discount = check_discount(discount, total=True)
        return self._q(values, 1.0 if discount is None else discount).T

    def _q(self, values: np.ndarray, discount: float = 1.0) -> np.ndarray:
        """``q[a, s]`` (the solvers' layout): ``r[a, s] + discount (P[a] values)[s]``, ``-inf``
        where not allowed."""
        q = self._r + discount * (self._stacked @ values).reshape(self.n_actions, -1)
        return np.where(self._ok, q, -np.inf)

    @cached_property
    def _masked_rewards(self) -> np.ndarray:
        """``r[a, s]`` with ``-inf`` where an action is not allowed (for the Bellman maximum)."""
        out = np.where(self._ok, self._r, -np.inf)
        out.setflags(write=False)
        return out

    @cached_property
    def _direct_preferred(self) -> bool:
        """Whether a sparse LU factorisation of a policy's chain is cheap (see
        :func:`policy_iteration`, ``evaluation="auto"``)."""
        return _lu_is_cheap(self)

    @cached_property
    def _density(self) -> float:
        """Non-zeros of the allowed rows per entry of those rows (1 for dense matrices)."""
        counts = np.diff(self._stacked.indptr)[self._ok.ravel()]
        return float(counts.sum()) / (counts.size * self.n_states)

    @cached_property
    def _all_positive(self) -> bool:
        """Whether every allowed row is strictly positive (every policy is then irreducible)."""
        counts = np.diff(self._stacked.indptr)[self._ok.ravel()]
        S = self._stacked
        if not np.all(counts == self.n_states):
            return False
        rows = np.repeat(self._ok.ravel(), np.diff(S.indptr))
        return bool(np.all(S.data[rows] > 0))

    @cached_property
    def _dense(self) -> np.ndarray:
        """The matrices as one dense array ``P[a, s, s']`` (for the dense solvers): as given, or
        from the sparse ones."""
        if self._P is not None:
            return self._P
        out = np.empty((self.n_actions, self.n_states, self.n_states))
        for a, P in enumerate(self.transitions):
            out[a] = P.toarray()
        out.setflags(write=False)
        return out


@dataclass(frozen=True, eq=False, repr=False)
class DiscountedSolution(ShortRepr):
    """Result of a discounted-reward solver (:func:`value_iteration`,
    :func:`modified_policy_iteration`).

    Attributes
    ----------
    discount : float
        The discount it was computed for.
    value : ndarray, shape (n_states,)
        The solver's estimate of the optimal discounted value (see the solver for which
        iterate, and for the shift it applies when it converged).
    policy : ndarray of int, shape (n_states,)
        A greedy action in each state.
    iterations : int
        Value iteration: sweeps. Modified policy iteration: improvements.
    residual : float
        The last span (span rule) or sup norm (sup rule) of the change ``v_{k+1} - v_k``.
    converged : bool
        Whether the stopping rule held within ``max_iter``.
    method : str
        ``"value iteration"`` or ``"sweeps"`` (modified policy iteration).
    inner_iterations : int
        Modified policy iteration: the evaluation sweeps.
    """

    discount: float
    value: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    method: str
    inner_iterations: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class AverageSolution(ShortRepr):
    """Result of :func:`relative_value_iteration` (average reward, one reference state).

    Attributes
    ----------
    gain : float
        ``T h(x_hat)`` at the last iterate: at a fixed point, the optimal average reward per
        step (see :func:`relative_value_iteration` for the damped forms).
    gain_by_state : ndarray, shape (n_states,)
        ``gain`` in every state (relative value iteration assumes a constant optimal gain).
    bias : ndarray, shape (n_states,)
        The last iterate ``h``, ``h[reference_state] = 0``.
    policy : ndarray of int, shape (n_states,)
        A greedy action of ``h`` in each state.
    iterations : int
    residual : float
        The last value of the stopping statistic.
    converged : bool
    gain_bounds : tuple of float
        ``(min_s (Th - h)(s), max_s (Th - h)(s))``, which bracket the optimal gain of a
        weakly communicating MDP whatever ``h`` is ([P94]_, Thm. 8.5.5).
    method : str
        ``"relative value iteration"``.
    inner_iterations : int
        Always 0 (kept for the fields shared with :class:`PolicyIterationSolution`).
    """

    gain: float
    gain_by_state: np.ndarray
    bias: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    gain_bounds: tuple[float, float]
    method: str = "relative value iteration"
    inner_iterations: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class PolicyIterationSolution(ShortRepr):
    """Result of :func:`policy_iteration`, under either criterion.

    Attributes
    ----------
    discount : float or None
        The criterion it was computed for: a discount in (0, 1), or ``None`` for the average
        reward.
    policy : ndarray of int, shape (n_states,)
        An optimal action in each state.
    value : ndarray, shape (n_states,) or None
        Discounted: the optimal value (the returned policy's). Average reward: ``None``.
    gain : float or None
        Average reward: the optimal average reward per step when it does not depend on the
        initial state (always so for communicating MDPs), ``nan`` if it does. Discounted:
        ``None``.
    gain_by_state : ndarray, shape (n_states,) or None
        Average reward: the optimal average reward from each initial state.
    bias : ndarray, shape (n_states,) or None
        Average reward: a relative value (bias) ``h`` solving the optimality equation,
        ``h[reference_state] = 0`` (when the gain is constant).
    iterations : int
        Policy evaluations (an iterative evaluation of the final policy is repeated once at
        the full tolerance).
    residual : float
        Discounted: the sup norm of the Bellman residual ``T v - v`` of ``value``. Average
        reward: the span of ``T h - h - gain`` (``nan`` if the gain is not constant).
    converged : bool
        Whether the policy stopped changing within ``max_iter``.
    method : str
        How the policies were evaluated: ``"dense"`` (LAPACK), ``"direct"`` (sparse LU, every
        policy multichain-safe for the average reward) or ``"iterative"`` (Krylov; LU for a
        multichain policy).
    inner_iterations : int
        Krylov iterations summed over all evaluations, plus warm-start sweeps.
    gain_bounds : tuple of float or None
        Average reward: ``(min_s (Th - h)(s), max_s (Th - h)(s))``, which bracket the optimal
        gain ([P94]_, Thm. 8.5.5).
    """

    discount: float | None
    policy: np.ndarray
    value: np.ndarray | None
    gain: float | None
    gain_by_state: np.ndarray | None
    bias: np.ndarray | None
    iterations: int
    residual: float
    converged: bool
    method: str
    inner_iterations: int
    gain_bounds: tuple[float, float] | None


@dataclass(frozen=True, eq=False, repr=False)
class PolicyEvaluation(ShortRepr):
    """Gain and bias of one stationary policy (possibly multichain).

    Attributes
    ----------
    gain : ndarray, shape (n_states,)
        Average reward from each initial state.
    bias : ndarray, shape (n_states,)
        A solution ``h`` of ``gain + h = r + P h`` with ``h = 0`` at one state of each
        recurrent class.
    classes : list of ndarray
        The recurrent classes of the policy's chain.
    """

    gain: np.ndarray
    bias: np.ndarray
    classes: list


def policy_transition_matrix(mdp: FiniteMDP, policy) -> sparse.csr_array:
    """The transition matrix ``P_pi`` of a stationary deterministic policy (sparse, CSR).

    Parameters
    ----------
    mdp : FiniteMDP
    policy : array_like of int, shape (n_states,)
        An allowed action in each state.

    Returns
    -------
    scipy.sparse.csr_array, shape (n_states, n_states)
        Row ``s`` is row ``s`` of ``P[policy[s]]``.
    """
    mdp = _as_mdp(mdp)
    return _policy_matrix(mdp, action_vector("policy", policy, mdp.allowed))


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
# Policy evaluation: dense (LAPACK), direct (sparse LU) or iterative (Krylov), by structure
# --------------------------------------------------------------------------------------------

#: Up to this many states a sparse LU factorisation is cheap whatever the pattern.
_DIRECT_MAX_STATES = 1000
#: A pattern whose reverse Cuthill-McKee band holds at most this many times the non-zeros of
#: the chain factorises with little fill-in (the LU factors of a band matrix stay in the band).
_FILL_RATIO = 32.0
#: Default warm start of policy iteration with iterative evaluations: sweeps of (relative) value
#: iteration before the first evaluation (fast-mixing chains: a few sweeps pick most actions).
_WARM_START_ITERATIVE = 20
#: Default warm start of average-reward policy iteration with sparse LU evaluations: a sweep
#: costs a sparse product, an evaluation several LU solves; on slowly mixing chains (the robots
#: MDPs) a hundred sweeps replace most evaluations.
_WARM_START_AVERAGE_DIRECT = 100
#: The dense path (LAPACK) of ``evaluation="auto"``: allowed rows at least this dense ...
_DENSE_MIN_DENSITY = 0.05
#: ... and matrices ``P[a, s, s']`` of at most this many entries in all (256 MiB of doubles).
_DENSE_MAX_ENTRIES = 2 ** 25
#: Relative residual of the iterative evaluations before the policy first stops changing: the
#: greedy step only needs the value to a few digits; the final policy is evaluated again at
#: the full tolerance and must survive that evaluation's greedy step too.
_EARLY_RTOL = 1e-6


def _lu_is_cheap(mdp: FiniteMDP) -> bool:
    """Structure test for ``evaluation="auto"``: will sparse LU factors of ``I - beta P_pi`` stay
    sparse?

    No when the allowed rows are dense (at least ``_DENSE_MIN_DENSITY`` of their entries) and
    ``n > 1000``: a sparse LU of a dense matrix costs a dense one's flops at a sparse code's
    speed. Yes when the MDP is small (``n <= 1000``), when every allowed row has a single non-zero
    (deterministic transitions: eliminating a state leaves each row with one off-diagonal
    entry, so the factors have no fill-in), or when the union of the allowed patterns,
    reordered by reverse Cuthill-McKee, is banded with a band of at most ``_FILL_RATIO`` times
    its non-zeros (birth-death chains, queues, grids of a few rows). Random, expander-like
    patterns fail the test: their LU factors fill in almost completely.
    """
    n = mdp.n_states
    if n <= _DIRECT_MAX_STATES:
        return True
    if mdp._density >= _DENSE_MIN_DENSITY:
        return False
    S = mdp._stacked
    if not mdp._ok.all():  # disallowed rows may hold anything: drop them
        S = sparse.csr_array(sparse.diags_array(mdp._ok.ravel().astype(float)) @ S)
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


def _resolve_evaluation(mdp: FiniteMDP, evaluation: str, average: bool) -> str:
    """The evaluation of ``evaluation="auto"`` (see :func:`policy_iteration`)."""
    evaluation = check_choice("evaluation", evaluation, ("auto", "dense", "direct", "iterative"))
    if evaluation != "auto":
        return evaluation
    fits = mdp.n_actions * mdp.n_states ** 2 <= _DENSE_MAX_ENTRIES
    # the average reward on the dense path needs every policy unichain: positive rows
    if fits and mdp._density >= _DENSE_MIN_DENSITY and (not average or mdp._all_positive):
        return "dense"
    return "direct" if mdp._direct_preferred else "iterative"


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


def _dense_krylov_budget(n: int) -> int:
    """BiCGSTAB iterations allowed on a dense chain of ``n`` states before a LAPACK solve: an
    iteration costs two matrix-vector products (``4 n^2`` flops), an LU ``2 n^3 / 3``, so the
    budget bounds the waste of a chain that mixes too slowly at about a third of an LU."""
    return max(10, n // 20)


def _evaluate_discounted(P, r: np.ndarray, discount: float, method: str,
                         x0: np.ndarray, rtol: float) -> tuple[np.ndarray, int]:
    """``v = (I - discount P)^{-1} r`` by sparse LU, by a Krylov solver from ``x0`` (sparse
    ``P``), or by BiCGSTAB on a dense ``P`` with a LAPACK solve if it stalls (``"dense"``).

    ``I - discount P`` is strictly diagonally dominant (its off-diagonal row sums are at most
    ``discount < 1``), with condition number at most ``(1 + discount) / (1 - discount)``
    whatever its pattern, so Krylov solvers converge without preconditioning; on the dense,
    fast-mixing chains of random MDPs in a handful of iterations (tens of times cheaper than an
    LU factorisation at 1,000 states).
    """
    if method == "dense":
        n = P.shape[0]
        v, iterations, ok = _bicgstab(lambda x: x - discount * (P @ x), r, x0, rtol,
                                      maxiter=_dense_krylov_budget(n))
        if ok:
            return v, iterations
        return np.linalg.solve(np.eye(n) - discount * P, r), iterations
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


#: What the discounted solvers' refusal of ``discount=None`` or ``1.0`` names instead.
_AVERAGE_INSTEAD = "relative_value_iteration(mdp) or policy_iteration(mdp, discount=None)"


def value_iteration(mdp: FiniteMDP, *, discount: float, epsilon: float = 1e-8,
                    max_iter: int = 100_000, v0=None,
                    stopping: Literal["span", "sup"] = "span") -> DiscountedSolution:
    """Discounted value iteration ([P94]_, Algorithm 6.3.1 and Sec. 6.6.3).

    Iterates ``v_{k+1} = T v_k`` from ``v_0`` (zero by default). ``stopping="span"`` (default)
    stops when ``sp(v_{k+1} - v_k) < epsilon (1 - discount) / discount``, where ``sp(d) = max d
    - min d``; the span contracts at the rate at which the chains forget their initial state,
    often far faster than ``discount``. ``stopping="sup"`` is the classical rule ``||v_{k+1} -
    v_k||_inf < epsilon (1 - discount) / (2 discount)`` ([P94]_, Thm. 6.3.1).

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float
        In (0, 1).
    epsilon : float
        Target accuracy of the value (> 0).
    max_iter : int
        Sweeps at most (>= 1).
    v0 : array_like, shape (n_states,), optional
        Initial value, zero by default.
    stopping : {"span", "sup"}

    Returns
    -------
    DiscountedSolution
        ``value`` is, when the rule held with ``stopping="span"``, ``v_{k+1}`` shifted by
        ``discount / (1 - discount)`` times the midpoint of ``v_{k+1} - v_k``: the optimum lies
        between the two shifts by its extremes ([P94]_, Thm. 6.6.6, eq. 6.6.12), so the value
        is within ``epsilon / 2`` of it and the greedy policy is epsilon-optimal. When the rule
        held with ``stopping="sup"``, it is ``v_{k+1}`` itself. When the rule did not hold
        within ``max_iter`` sweeps (``converged`` false, with a ``RuntimeWarning``), it is the
        last iterate ``v_{max_iter}`` itself, unshifted: the value of ``max_iter`` stages with
        terminal value ``v0`` (the shift extrapolates by ``discount / (1 - discount)``, which
        near ``discount = 1`` is no estimate at all). ``policy`` is greedy for the returned
        ``value``'s unshifted iterate; ``residual`` is the last span (or sup norm) of
        ``v_{k+1} - v_k``.

    Examples
    --------
    Three sweeps that do not converge return the three-stage value (two absorbing states, one
    paying 1 a step; with discount ``1 - 1e-12`` a shift would add about ``5e11``):

    >>> m = FiniteMDP([np.eye(2)], rewards=[[1.0], [0.0]])
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", RuntimeWarning)
    ...     sol = value_iteration(m, discount=1 - 1e-12, max_iter=3)
    >>> sol.converged, np.round(sol.value, 9).tolist()
    (False, [3.0, 0.0])
    """
    mdp = _as_mdp(mdp)
    discount = check_discount(discount, average=False, average_instead=_AVERAGE_INSTEAD)
    epsilon = _positive("epsilon", epsilon)
    max_iter = check_integer("max_iter", max_iter, minimum=1)
    stopping = check_choice("stopping", stopping, ("span", "sup"))
    v = np.zeros(mdp.n_states) if v0 is None else np.array(finite_vector("v0", v0, mdp.n_states))
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
                      f"(residual {residual:.3g}); the value returned is the last iterate",
                      RuntimeWarning, stacklevel=2)
    policy = np.argmax(mdp._q(v, discount), axis=0)
    if stopping == "span" and converged:
        v = v + discount / (1 - discount) * 0.5 * (float(diff.max()) + float(diff.min()))
    return DiscountedSolution(discount=discount, value=v, policy=policy, iterations=k,
                              residual=residual, converged=converged, method="value iteration")


def modified_policy_iteration(mdp: FiniteMDP, *, discount: float, sweeps: int = 20,
                              epsilon: float = 1e-8, max_iter: int = 100_000,
                              v0=None) -> DiscountedSolution:
    """Modified policy iteration ([P94]_, Algorithm 6.5.1) with the span stopping rule.

    Each iteration takes the greedy policy of ``v`` (one Bellman maximum), then applies that
    policy's operator ``v <- r_pi + discount P_pi v`` up to ``sweeps`` more times, stopping the
    sweeps early once their span change is below the threshold. It stops when the span of the
    change of the greedy (maximising) sweep is below ``epsilon (1 - discount) / discount``.
    ``sweeps = 0`` is value iteration; as ``sweeps`` grows it tends to policy iteration. It
    wins where a Bellman maximum costs much more than a policy's sweep (many actions) and a
    policy's chain mixes fast.

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
    v0 : array_like, shape (n_states,), optional
        Initial value, zero by default.

    Returns
    -------
    DiscountedSolution
        ``iterations`` counts improvements, ``inner_iterations`` the evaluation sweeps. When
        the rule held, ``value`` is the last greedy sweep's value shifted as in
        :func:`value_iteration` (``stopping="span"``), within ``epsilon / 2`` of the optimum;
        when it did not (``converged`` false, with a ``RuntimeWarning``), the last iterate
        itself, unshifted.
    """
    mdp = _as_mdp(mdp)
    discount = check_discount(discount, average=False, average_instead=_AVERAGE_INSTEAD)
    epsilon = _positive("epsilon", epsilon)
    max_iter = check_integer("max_iter", max_iter, minimum=1)
    sweeps = check_integer("sweeps", sweeps, minimum=0)
    n, A = mdp.n_states, mdp.n_actions
    v = np.zeros(n) if v0 is None else np.array(finite_vector("v0", v0, n))
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
        r = mdp._r[policy, states]
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
                      f"(span {residual:.3g}); the value returned is the last iterate",
                      RuntimeWarning, stacklevel=2)
    policy = np.argmax(mdp._q(v, discount), axis=0)
    if converged:
        v = v + discount / (1 - discount) * 0.5 * (float(diff.max()) + float(diff.min()))
    return DiscountedSolution(discount=discount, value=v, policy=policy, iterations=k,
                              residual=residual, converged=converged, method="sweeps",
                              inner_iterations=inner)


def _qa(mdp: FiniteMDP, v: np.ndarray, discount: float, dense: bool) -> np.ndarray:
    """``q[a, s]`` of ``v`` (``-inf`` where not allowed): :meth:`FiniteMDP._q` on the sparse
    matrices, or one BLAS product of the stacked dense ones (the dense path)."""
    if not dense:
        return mdp._q(v, discount)
    A, n = mdp.n_actions, mdp.n_states
    return mdp._masked_rewards + discount * (mdp._dense.reshape(A * n, n) @ v).reshape(A, n)


def _warm_start(mdp: FiniteMDP, discount: float, sweeps: int, policy: np.ndarray,
                dense: bool = False) -> tuple[np.ndarray, int, np.ndarray]:
    """``sweeps`` of value iteration (discounted) or relative value iteration (average, relative
    to state 0) from zero; their greedy policy, keeping ``policy``'s action on ties, and the
    sweeps done (it stops early once the span of the change is at rounding level), and a first
    guess for the evaluation: the last value (discounted) or ``h + g`` with ``h`` relative to
    state 0 and ``g`` the last change at state 0 (average; see :func:`_unichain_evaluation`).
    ``dense``: the products on the dense matrices (:func:`_qa`)."""
    n, A = mdp.n_states, mdp.n_actions
    rewards = mdp._masked_rewards
    v = np.zeros(n)
    scale = 1.0 + float(np.abs(mdp._r).max())
    done = 0
    change = np.zeros(n)
    for done in range(1, sweeps + 1):
        if dense:
            Tv = _qa(mdp, v, discount, True).max(axis=0)
        else:
            Tv = (rewards + discount * (mdp._stacked @ v).reshape(A, n)).max(axis=0)
        change = Tv - v
        v = Tv - Tv[0] if discount == 1.0 else Tv
        if float(change.max() - change.min()) <= 1e-13 * scale:
            break
    q = _qa(mdp, v, discount, dense)
    guess = v + float(change[0]) if discount == 1.0 and sweeps else v
    return _greedy(q, policy, 1e-12 * (1.0 + float(np.abs(v).max()))), done, guess


def _policy_iteration_discounted(mdp, discount, policy, max_iter, method, tol, inner, v):
    n = mdp.n_states
    states = np.arange(n)
    dense = method == "dense"
    # A direct evaluation is exact, and after a warm start the policy is mostly optimal: no
    # loose first pass in either case.
    tight = method == "direct" or inner > 0
    for k in range(1, max_iter + 1):
        P = mdp._dense[policy, states] if dense else _policy_matrix(mdp, policy)
        r = mdp._r[policy, states]
        v, its = _evaluate_discounted(P, r, discount, method, v, tol if tight else _EARLY_RTOL)
        inner += its
        q = _qa(mdp, v, discount, dense)
        new = _greedy(q, policy, tol=1e-12 * (1 + np.max(np.abs(v))))
        if np.array_equal(new, policy):
            if tight:
                residual = float(np.max(np.abs(q.max(axis=0) - v)))
                return _discounted_solution(discount, v, policy, k, residual, True, method,
                                            inner)
            tight = True
        policy = new
    warnings.warn(f"policy_iteration did not converge in {max_iter} iterations",
                  RuntimeWarning, stacklevel=3)
    residual = float(np.max(np.abs(_qa(mdp, v, discount, dense).max(axis=0) - v)))
    return _discounted_solution(discount, v, policy, max_iter, residual, False, method,
                                inner)


def _discounted_solution(discount, v, policy, iterations, residual, converged, method, inner):
    return PolicyIterationSolution(
        discount=discount, policy=policy, value=v, gain=None, gain_by_state=None, bias=None,
        iterations=iterations, residual=residual, converged=converged, method=method,
        inner_iterations=inner, gain_bounds=None)


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
    return _recurrent_classes(sparse_stochastic_matrix("P", P))


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
    >>> m = FiniteMDP([P0, P1], rewards=np.zeros((2, 2)))
    >>> [c.tolist() for c in communicating_classes(m)]    # 1 is reachable from 0, not back
    [[0], [1]]
    """
    model = check_instance("model", model, FiniteMDP)
    n = model.n_states
    union = sparse.csr_array((n, n))
    for a, P in enumerate(model.transitions):
        union = union + sparse.diags_array(model._ok[a].astype(float)) @ P
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
    policy : array_like of int, shape (n_states,)
        An allowed action in each state.

    Returns
    -------
    PolicyEvaluation
    """
    mdp = _as_mdp(mdp)
    policy = action_vector("policy", policy, mdp.allowed)
    P = _policy_matrix(mdp, policy)
    r = mdp._r[policy, np.arange(mdp.n_states)]
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
    P = sparse_stochastic_matrix("P", P)
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
    P = sparse_stochastic_matrix("P", P)
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


@dataclass(frozen=True, eq=False, repr=False)
class FiniteHorizonSolution(ShortRepr):
    """Result of :func:`backward_induction`: values and decisions per stage.

    The layout of QuantEcon's ``backward_induction`` (``vs``, ``sigmas``); pymdptoolbox's
    ``FiniteHorizon`` gives the transposes (``V[s, t]``, ``policy[s, t]``).

    Attributes
    ----------
    discount : float
        The discount per stage, in (0, 1]; ``1.0`` for the plain total.
    values : ndarray, shape (horizon + 1, n_states)
        ``values[t, s]``: the optimal expected reward from state ``s`` at stage ``t``, with
        ``horizon - t`` decisions to go (``values[horizon]`` is the terminal reward).
    policy : ndarray of int, shape (horizon, n_states)
        ``policy[t, s]``: an optimal decision at stage ``t`` (the first of the maximisers).
    """

    discount: float
    values: np.ndarray
    policy: np.ndarray

    @property
    def horizon(self) -> int:
        """The number of decisions ``T``."""
        return self.policy.shape[0]


def backward_induction(mdp: FiniteMDP, horizon: int, *, terminal=None,
                       discount: float = 1.0) -> FiniteHorizonSolution:
    """Optimal values and a Markov policy over a finite horizon ([P94]_, Sec. 4.5).

    .. math:: v_T = g, \\qquad
              v_t(s) = \\max_a \\{ r(s, a) + \\beta \\sum_{s'} p_{ss'}(a) v_{t+1}(s') \\},
              \\quad t = T - 1, \\dots, 0,

    QuantEcon's ``backward_induction(ddp, T, v_term)`` and pymdptoolbox's
    ``FiniteHorizon(P, R, discount, N, h)``.

    Parameters
    ----------
    mdp : FiniteMDP
    horizon : int
        Number of decisions ``T >= 1``.
    terminal : array_like, shape (n_states,), optional
        Terminal reward ``g = v_T``, zero by default.
    discount : float
        ``beta`` in (0, 1]; ``1.0`` (default) for the total reward, which is finite here.

    Returns
    -------
    FiniteHorizonSolution

    Examples
    --------
    Two states; action 1 in state 0 pays 1 and moves to state 1, which is absorbing and pays
    nothing; action 0 pays 0.5 and stays: wait twice, then move.

    >>> m = FiniteMDP(transitions=[np.eye(2), [[0.0, 1.0], [0.0, 1.0]]],
    ...               rewards=[[0.5, 1.0], [0.0, 0.0]])
    >>> sol = backward_induction(m, 3)
    >>> sol.values[:, 0].tolist(), sol.policy[:, 0].tolist()
    ([2.0, 1.5, 1.0, 0.0], [0, 0, 1])
    """
    mdp = _as_mdp(mdp)
    horizon = check_integer("horizon", horizon, minimum=1)
    discount = check_discount(discount, average=False, total=True)
    n = mdp.n_states
    values = np.zeros((horizon + 1, n))
    if terminal is not None:
        values[horizon] = finite_vector("terminal", terminal, n)
    policy = np.zeros((horizon, n), dtype=int)
    for t in range(horizon - 1, -1, -1):
        q = mdp._q(values[t + 1], discount)
        policy[t] = np.argmax(q, axis=0)
        values[t] = q[policy[t], np.arange(n)]
    for arr in (values, policy):
        arr.setflags(write=False)
    return FiniteHorizonSolution(discount=discount, values=values, policy=policy)


# --------------------------------------------------------------------------------------------
# Average reward
# --------------------------------------------------------------------------------------------


def _gain_bounds(mdp: FiniteMDP, h: np.ndarray) -> tuple[float, float]:
    d = mdp._q(h).max(axis=0) - h
    return float(d.min()), float(d.max())


@dataclass(frozen=True, eq=False, repr=False)
class RelativeValueBatch(ShortRepr):
    """Result of :func:`relative_value_iteration_many`: relative value iteration from several
    reference states at once.

    Column ``j`` of every array is the run from ``reference_states[j]``; it stops, and its
    iterate freezes, at the first iteration where its stopping statistic is below ``tol``.

    Attributes
    ----------
    reference_states : ndarray of int, shape (m,)
    gain : ndarray, shape (m,)
        ``T h(x_hat)`` at each column's last iterate.
    bias : ndarray, shape (n_states, m)
        The last iterates, ``bias[x_hat_j, j] = 0``.
    policy : ndarray of int, shape (n_states, m)
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

    def to_frame(self):
        """One row per reference state: gain, its bounds, iterations, residual, converged.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``reference_state``.
        """
        try:
            import pandas as pd
        except ImportError as error:   # pragma: no cover - pandas is in every extra we test
            raise ImportError("RelativeValueBatch.to_frame needs pandas: pip install pandas"
                              ) from error
        return pd.DataFrame({
            "reference_state": self.reference_states, "gain": self.gain,
            "gain_lower": self.gain_bounds[:, 0], "gain_upper": self.gain_bounds[:, 1],
            "iterations": self.iterations, "residual": self.residual,
            "converged": self.converged}).set_index("reference_state")


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


#: The named stopping rules of :func:`relative_value_iteration` and
#: :func:`relative_value_iteration_many`: each maps ``(h_new, h, T h, reference_states)``,
#: arrays of shape ``(n_states, m)`` and ``(m,)``, to one statistic per column; a column stops
#: when its statistic falls below ``tol``. A callable of the same form is a rule too.
STOPPING_RULES = {"relative": _relative_rule, "span": _span_rule, "norm": _norm_rule}


def relative_value_iteration_many(
    mdp: FiniteMDP,
    reference_states,
    *,
    tau: float = 1.0,
    tol: float = 1e-5,
    stopping: str | Callable = "relative",
    max_iter: int = 1_000_000,
    h0=None,
    damping: Literal["update", "expectation"] = "update",
) -> RelativeValueBatch:
    """Relative value iteration with damping (Proposition 4 of [TLNC99]_) from several
    reference states at once.

    One iteration per reference state, all at once (one sparse product per state and step),
    each stopping on its own: column ``j`` follows, bit for bit, the iterates of
    :func:`relative_value_iteration` from ``reference_states[j]`` alone (which calls this
    function with one state). The iteration, the damping and the stopping rules are those of
    :func:`relative_value_iteration`.

    Parameters
    ----------
    mdp : FiniteMDP
        Weakly communicating (e.g. communicating) for the limit to exist.
    reference_states : array_like of int, shape (m,)
        The states ``x_hat`` whose relative value is pinned to zero, one per run (repeats
        allowed, e.g. with different ``h0`` columns).
    tau, tol, max_iter, damping
        As in :func:`relative_value_iteration`.
    stopping : {"relative", "span", "norm"} or callable
        As in :func:`relative_value_iteration`. A callable ``rule(h_new, h, Th, refs)`` is
        called once per iteration with the columns still running, in their order in
        ``reference_states`` (arrays of shape ``(n_states, a)`` and ``refs`` of shape
        ``(a,)``), and returns one statistic per column; a column stops at the first
        iteration where its statistic is below ``tol`` and is not passed again. The rule may
        keep state between calls (e.g. watch several statistics and hold a column until each
        has held once, recording the iterate ``h_new`` at which each did).
    h0 : array_like, shape (n_states,) or (n_states, m), optional
        Initial relative values (zero by default), one column per run or one for all;
        ``h0[x_hat_j, j]`` is set to zero.

    Returns
    -------
    RelativeValueBatch

    Warns
    -----
    RuntimeWarning
        If the stopping rule is not met within ``max_iter`` iterations by some column.

    Examples
    --------
    Two reference states of a two-state chain at once: the same gain, different pins.

    >>> m = FiniteMDP([[[0.5, 0.5], [0.5, 0.5]]], [[1.0], [0.0]])
    >>> batch = relative_value_iteration_many(m, [0, 1], stopping="span", tol=1e-12)
    >>> batch.gain.tolist(), batch.bias.tolist()
    ([0.5, 0.5], [[0.0, 1.0], [-1.0, 0.0]])
    """
    return _relative_value_iteration(mdp, reference_states, tau, tol, stopping, max_iter, h0,
                                     damping, single=False)


def relative_value_iteration(
    mdp: FiniteMDP,
    *,
    tau: float = 1.0,
    reference_state: int = 0,
    tol: float = 1e-5,
    stopping: str | Callable = "relative",
    max_iter: int = 1_000_000,
    h0=None,
    damping: Literal["update", "expectation"] = "update",
) -> AverageSolution:
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
    bias divided by ``tau``. The run is :func:`relative_value_iteration_many` with one
    reference state.

    Parameters
    ----------
    mdp : FiniteMDP
        Weakly communicating (e.g. communicating) for the limit to exist.
    tau : float
        Damping in (0, 1]; the paper uses 0.99999.
    reference_state : int
        The state ``x_hat`` whose relative value is pinned to zero (several at once:
        :func:`relative_value_iteration_many`).
    tol : float
        Threshold of the stopping statistic (> 0).
    stopping : {"relative", "span", "norm"} or callable
        ``"relative"`` is the paper's rule, ``max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < tol``,
        taken over ``x != x_hat`` (where ``h_k = 0`` always); a ratio with ``h_k(x) = 0`` counts
        as infinite unless ``h_{k+1}(x) = 0`` too. ``"span"`` is the classical rule
        ``sp(T h_k - h_k) < tol``, which bounds the error of the gain by ``tol``
        ([P94]_, Thm. 8.5.5). ``"norm"`` is ``||h_{k+1} - h_k||_inf / ||h_k||_inf < tol``. A
        callable ``rule(h_new, h, Th, reference_states) -> statistic`` receives arrays of shape
        ``(n_states, 1)`` and ``(1,)`` and returns one statistic (see :data:`STOPPING_RULES`
        and :func:`relative_value_iteration_many`).
    max_iter : int
    h0 : array_like, shape (n_states,), optional
        Initial relative values (zero by default); ``h0[x_hat]`` is set to zero.
    damping : {"update", "expectation"}
        Where ``tau`` acts: on the whole update (the iteration printed in [TLNC99]_) or on the
        expectation only (the form of [B87]_). The stopping rule sees, as ``Th``, the Bellman
        operator of the transformed model, ``(1 - tau) h + T_tau h``, for ``"expectation"``.

    Returns
    -------
    AverageSolution
        ``gain`` is ``T h(x_hat)`` at the last iterate (``T_tau h(x_hat)`` with
        ``damping="expectation"``): at a fixed point, the optimal gain in both forms. ``bias``
        is the last iterate ``h``; with ``damping="expectation"`` the original model's bias
        is ``tau * bias``. (The paper writes ``theta = tau T(h)(x_hat)``. With the printed
        iteration ``tau T h(x_hat)`` is the gain of the damped chain, ``tau`` times the optimal
        gain. With ``damping="expectation"``, ``tau T h(x_hat) = T_tau h(x_hat) - (1 - tau)
        r(x_hat)`` when the reward at ``x_hat`` does not depend on the action, so the printed
        formula is exact when that reward is zero. With ``tau = 0.99999`` the forms differ in
        the fifth significant digit at most.)

    Warns
    -----
    RuntimeWarning
        If the stopping rule is not met within ``max_iter`` iterations.

    Notes
    -----
    The relative rule looks at the change of ``h`` only, not at the gain; it stops early when
    ``h`` is large. The returned ``gain_bounds`` tell how accurate the gain actually is.

    Examples
    --------
    >>> m = FiniteMDP([[[0.5, 0.5], [0.5, 0.5]]], [[1.0], [0.0]])
    >>> sol = relative_value_iteration(m, stopping="span", tol=1e-12)
    >>> sol.gain, sol.bias.tolist()
    (0.5, [0.0, -1.0])
    """
    batch = _relative_value_iteration(mdp, reference_state, tau, tol, stopping, max_iter, h0,
                                      damping, single=True)
    gain = float(batch.gain[0])
    return AverageSolution(
        gain=gain,
        gain_by_state=np.full(mdp.n_states, gain),
        bias=batch.bias[:, 0],
        policy=batch.policy[:, 0],
        iterations=int(batch.iterations[0]),
        residual=float(batch.residual[0]),
        converged=bool(batch.converged[0]),
        gain_bounds=(float(batch.gain_bounds[0, 0]), float(batch.gain_bounds[0, 1])),
    )


def _relative_value_iteration(mdp, reference_states, tau, tol, stopping, max_iter, h0,
                              damping, *, single: bool) -> RelativeValueBatch:
    """Both entry points: the checks, :func:`_rvi_loop` on every column, and the batch of its
    last iterates (``single``: one reference state, given as an integer)."""
    mdp = _as_mdp(mdp)
    n = mdp.n_states
    if single:
        if np.ndim(reference_states) != 0:
            raise TypeError("reference_state must be one state (an integer), got "
                            f"{type(reference_states).__name__}: for several reference states "
                            "at once use relative_value_iteration_many")
        refs = np.array([check_integer("reference_state", reference_states, 0, n - 1)],
                        dtype=np.int64)
    else:
        raw = as_numeric("reference_states", reference_states)
        if raw.size == 0:
            raise ValueError("reference_states must hold at least one state, got none")
        if raw.dtype.kind not in "iu" or raw.ndim != 1:
            raise (TypeError if raw.dtype.kind not in "iu" else ValueError)(
                f"reference_states must be a 1-d array of states (integers in 0..{n - 1}), got "
                f"dtype {raw.dtype} and shape {raw.shape}")
        refs = np.array([check_integer("reference_states", int(x), 0, n - 1)
                         for x in raw.tolist()], dtype=np.int64)
    if callable(stopping):
        rule = stopping
    elif isinstance(stopping, (tuple, list)):
        raise TypeError(f"stopping must be one rule, got {stopping!r}: to watch several rules "
                        "on the same iterates pass a callable rule that holds each column until "
                        "every rule has held (see relative_value_iteration_many)")
    else:
        rule = STOPPING_RULES[check_choice("stopping", stopping, tuple(STOPPING_RULES))]
    tau = check_real("tau", tau, 0.0, 1.0, low_open=True)
    damping = check_choice("damping", damping, ("update", "expectation"))
    tol = _positive("tol", tol)
    max_iter = check_integer("max_iter", max_iter, minimum=1)
    scale = tau if damping == "expectation" else None
    m = refs.size
    if h0 is None:
        H = np.zeros((n, m))
    else:
        start = np.array(as_numeric("h0", h0), dtype=float)
        if start.shape == (n,):
            start = start[:, None]
        if start.shape not in ((n, 1), (n, m)):
            raise ValueError(f"h0 must have shape ({n},) or ({n}, {m}), got shape "
                             f"{np.shape(h0)}")
        if not np.all(np.isfinite(start)):
            raise ValueError("h0 must be finite")
        H = np.repeat(start, m, axis=1) if start.shape[1] != m else start.copy()
    H[refs, np.arange(m)] = 0.0
    H, iterations, statistic = _rvi_loop(mdp, H, refs, tau, tol, rule, max_iter, scale)
    converged = statistic < tol
    if not converged.all():
        warnings.warn(f"relative_value_iteration did not meet its stopping rule in {max_iter} "
                      f"iterations (statistic {float(statistic.max()):.3g})", RuntimeWarning,
                      stacklevel=3)
    return _rvi_batch(mdp, refs, scale, H, iterations, statistic, converged)


def _rvi_batch(mdp, refs, scale, H, iterations, statistic, converged) -> RelativeValueBatch:
    """The :class:`RelativeValueBatch` of the last iterates ``H`` (one column per run), each
    column with the arithmetic of one vector (:meth:`FiniteMDP._q`, through
    :func:`_products`): the gain ``T h(x_hat)`` and the greedy policy from ``q = r + scale (P
    h)``, the gain bounds from ``T h' - h'`` for the original model's bias ``h'`` (``tau h``
    for ``damping="expectation"``)."""
    n, m = H.shape
    A = mdp.n_actions
    G = np.ascontiguousarray(H.T)
    product = _products(mdp, G)
    q = (product if scale is None else scale * product).reshape(m, A, n) + mdp._masked_rewards
    best = q.max(axis=1)
    gain = best[np.arange(m), refs]
    policy = np.ascontiguousarray(np.argmax(q, axis=1).T)
    if scale is None:
        d = best - G
    else:
        Gs = scale * G
        d = (_products(mdp, Gs).reshape(m, A, n) + mdp._masked_rewards).max(axis=1) - Gs
    bounds = np.stack([d.min(axis=1), d.max(axis=1)], axis=1)
    return RelativeValueBatch(
        reference_states=refs, gain=gain, bias=H, policy=policy, iterations=iterations,
        residual=statistic, converged=converged, gain_bounds=bounds)


def _products(mdp: FiniteMDP, G: np.ndarray) -> np.ndarray:
    """``P h`` for each row ``h`` of ``G`` (shape ``(m, n)``), as rows ``(m, A n)``: one sparse
    matrix-vector product per row below :data:`_ROWS_BY_VECTOR` rows, one matrix-matrix product
    above (the same sums, see :data:`_ROWS_BY_VECTOR`)."""
    m = G.shape[0]
    if m < _ROWS_BY_VECTOR:
        out = np.empty((m, mdp._stacked.shape[0]))
        for j in range(m):
            out[j] = mdp._stacked @ G[j]
        return out
    return np.ascontiguousarray((mdp._stacked @ G.T).T)


#: Below this many columns :func:`_rvi_loop` makes one sparse matrix-vector product per column,
#: above it one matrix-matrix product (SciPy's ``csr_matvecs``, which adds the products of each
#: row in the same order as ``csr_matvec``: the same bits, as the project's tests check).
_ROWS_BY_VECTOR = 8


def _rvi_loop(mdp, H, refs, tau, tol, rule, max_iter, scale=None):
    """The iteration of :func:`relative_value_iteration_many` on the columns of ``H``, stopped
    by ``rule``. ``scale`` (``tau``, or ``None``) selects ``damping="expectation"``.

    Returns ``(H, iterations, statistic)``: the last iterates (each column's at its stop), the
    iteration of each column's stop (``max_iter`` if none) and its last statistic.

    The iterates are kept as rows, ``G = H.T`` (one contiguous row per reference state), so
    that every step is a contiguous loop over ``n`` states instead of a loop of length ``m``:
    the arithmetic of each column is that of one vector, bit for bit (one sparse product per
    column, the same element-wise operations in the same order, and maxima and minima, which
    are exact), and the rule sees the same values as ``(n, m)`` views ``G.T``.
    """
    m = refs.size
    A, n = mdp.n_actions, mdp.n_states
    stacked, rewards = mdp._stacked, mdp._masked_rewards
    keep = 1 - tau
    iterations = np.full(m, max_iter, dtype=np.int64)
    statistic = np.full(m, np.inf)
    G = np.ascontiguousarray(H.T)
    active = np.arange(m)
    rows = active
    for k in range(1, max_iter + 1):
        a = active.size
        Gs = G if a == m else G[active]
        ref = refs[active]
        if a < _ROWS_BY_VECTOR:   # one sparse product per column
            q = np.empty((a, A * n))
            for j in range(a):
                q[j] = stacked @ Gs[j]
        else:   # or for all columns at once: the same sums for each (see _ROWS_BY_VECTOR)
            q = np.ascontiguousarray((stacked @ Gs.T).T)
        if scale is not None:
            q *= scale
        q = q.reshape(a, A, n)
        q += rewards   # r + P h, as in FiniteMDP._q (a sum of two doubles does not depend on order)
        best = q.max(axis=1)
        if scale is None:
            Th = best
            Gn = keep * Gs + tau * (Th - Th[rows, ref][:, None])
        else:
            Gn = keep * Gs + (best - best[rows, ref][:, None])
            Th = keep * Gs + best   # the transformed model's Bellman operator
        stat = np.asarray(rule(Gn.T, Gs.T, Th.T, ref), dtype=float).reshape(a)
        if a == m:
            G = Gn
        else:
            G[active] = Gn
        statistic[active] = stat
        done = stat < tol
        if done.any():
            iterations[active[done]] = k
            active = active[~done]
            rows = np.arange(active.size)
            if active.size == 0:
                break
    return np.ascontiguousarray(G.T), iterations, statistic
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


def _dense_unichain_evaluation(P: np.ndarray, r: np.ndarray, reference: int, x0: np.ndarray,
                               rtol: float):
    """:func:`_unichain_evaluation` on a dense chain known to be irreducible (positive rows):
    BiCGSTAB on ``B = I - P + 1 e_{x_hat}^T``, a LAPACK solve of ``B x = r`` if it stalls."""
    n = r.size
    x, iterations, ok = _bicgstab(lambda y: y - P @ y + y[reference], r, x0, rtol,
                                  maxiter=_dense_krylov_budget(n))
    if not ok:
        B = np.eye(n) - P
        B[:, reference] += 1.0
        x = np.linalg.solve(B, r)
    g = float(x[reference])
    return PolicyEvaluation(np.full(n, g), x - g, [np.arange(n)]), iterations, x


def _policy_iteration_average(mdp: FiniteMDP, policy: np.ndarray, max_iter: int,
                              reference_state: int, method: str = "direct",
                              rtol: float = 1e-12, inner: int = 0,
                              x: np.ndarray | None = None) -> PolicyIterationSolution:
    """Multichain policy iteration ([P94]_, Algorithm 9.2.1), maximising. ``x``: a first guess
    for an iterative evaluation (see :func:`_unichain_evaluation`)."""
    cols = np.arange(mdp.n_states)
    dense = method == "dense"
    # A direct evaluation is exact, and after a warm start the policy is mostly optimal: no
    # loose first pass in either case.
    tight = method == "direct" or inner > 0
    x = np.zeros(mdp.n_states) if x is None else x
    for k in range(1, max_iter + 1):
        if method == "direct":
            ev = evaluate_policy(mdp, policy)
        elif dense:
            ev, its, x = _dense_unichain_evaluation(mdp._dense[policy, cols], mdp._r[policy, cols],
                                                    reference_state, x,
                                                    rtol if tight else _EARLY_RTOL)
            inner += its
        else:
            P = _policy_matrix(mdp, policy)
            r = mdp._r[policy, cols]
            out = _unichain_evaluation(P, r, reference_state, x, rtol if tight else _EARLY_RTOL)
            if out is None:
                ev = _evaluate_chain(P, r)
            else:
                ev, its, x = out
                inner += its
        scale = 1.0 + float(np.max(np.abs(ev.bias))) + float(np.max(np.abs(ev.gain)))
        tol = 1e-11 * scale
        # First improve the gain: maximise sum_y p_xy(a) g(y), keeping the incumbent on ties.
        qg = _qa(mdp, ev.gain, 1.0, dense) - mdp._r  # P g, -inf where not allowed
        new = _greedy(qg, policy, tol)
        if np.array_equal(new, policy):
            # Then improve the bias among the gain-maximising actions.
            qh = _qa(mdp, ev.bias, 1.0, dense)
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
                      reference_state, method="direct", inner=0) -> PolicyIterationSolution:
    g = ev.gain
    constant = bool(np.ptp(g) <= 1e-9 * (1.0 + np.max(np.abs(g))))
    h = ev.bias - ev.bias[reference_state] if constant else ev.bias
    gain = float(g[reference_state]) if constant else float("nan")
    Th = _qa(mdp, h, 1.0, method == "dense").max(axis=0)
    residual = float(np.ptp(Th - h - gain)) if constant else float("nan")
    d = Th - h
    return PolicyIterationSolution(
        discount=None,
        policy=policy,
        value=None,
        gain=gain,
        gain_by_state=g,
        bias=h,
        iterations=iterations,
        residual=residual,
        converged=converged,
        method=method,
        inner_iterations=inner,
        gain_bounds=(float(d.min()), float(d.max())),
    )


def policy_iteration(mdp: FiniteMDP, *, discount: float | None = None, policy0=None,
                     max_iter: int = 1_000, reference_state: int = 0,
                     evaluation: Literal["auto", "dense", "direct", "iterative"] = "auto",
                     tol: float = 1e-12, warm_start: int | None = None
                     ) -> PolicyIterationSolution:
    """Policy iteration, discounted or average reward.

    Parameters
    ----------
    mdp : FiniteMDP
    discount : float or None
        In (0, 1) for the discounted criterion ([P94]_, Algorithm 6.4.1); ``None`` (default)
        for the average reward, solved by multichain policy iteration ([P94]_, Algorithm
        9.2.1): each policy is evaluated exactly on each of its recurrent classes, the gain is
        improved first and the bias second, the incumbent action is kept on ties. It is exact
        for any finite MDP, multichain policies included. ``1.0`` is refused (pass ``None``).
    policy0 : array_like of int, shape (n_states,), optional
        Initial policy; by default the first allowed action in each state (a warm start
        replaces it but on ties).
    max_iter : int
    reference_state : int
        Average reward: the state where the returned bias is zero.
    evaluation : {"auto", "dense", "direct", "iterative"}
        How each policy is evaluated. ``"dense"``: on the dense matrices ``P[a, s, s']``,
        BiCGSTAB with BLAS products (a handful of iterations on a fast-mixing chain, each
        ``O(n^2)``), a LAPACK solve if it has not converged within ``max(10, n / 20)``
        iterations, loose then tight as ``"iterative"`` below; for the average reward every
        policy must be unichain, which strictly positive rows guarantee (else ``ValueError``).
        For LAPACK solves of every policy use :func:`dense_policy_iteration`. ``"direct"``:
        sparse LU factorisation (SuperLU), exact to rounding. ``"iterative"``: a Krylov solver
        (BiCGSTAB, restarted GMRES if it stalls, LU if both fail) on ``I - discount P_pi``,
        which is strictly diagonally dominant, or, for the average reward, on the unichain
        bias equations made non-singular by a rank-one term (a multichain policy is factorised
        instead); it is warm-started from the previous policy's value, solved to a relative
        residual of ``1e-6`` until the policy stops changing, then once more to ``tol``, and
        the policy must survive that evaluation's improvement step too (after a warm start
        every evaluation is solved to ``tol``). ``"auto"`` takes the dense path when the
        allowed rows hold at least 5 % non-zeros and the matrices at most ``2**25`` entries
        (for the average reward: when every allowed row is positive); else it factorises when
        the LU factors stay sparse (at most 1000 states, deterministic transitions, or a
        pattern that reverse Cuthill-McKee makes banded: queues, birth-death chains) and
        iterates otherwise (random, expander-like patterns, where LU fills in).
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
        iterative, ``100`` for the average reward with sparse LU evaluations (new in 1.0: on
        the 45 robots MDPs of [TLNC99]_'s Tables 1-2, a tenth of the evaluations),
        ``1`` on the dense path (the start of QuantEcon's ``DiscreteDP``: the greedy policy
        of one step of value iteration from zero), ``0`` for the discounted reward with sparse
        LU evaluations.

    Returns
    -------
    PolicyIterationSolution
        ``value`` (discounted) or ``gain``, ``gain_by_state``, ``bias`` and ``gain_bounds``
        (average reward); ``method`` says how the policies were evaluated,
        ``inner_iterations`` the Krylov iterations and warm-start sweeps, ``residual`` the
        Bellman residual of the result.

    Examples
    --------
    Two states: staying in state 1 pays 1 a step, reaching it from 0 costs a step.

    >>> m = FiniteMDP([np.eye(2), [[0.0, 1.0], [0.0, 1.0]]], [[0.0, 0.0], [1.0, 0.0]])
    >>> sol = policy_iteration(m)
    >>> sol.gain, sol.policy.tolist(), sol.method
    (1.0, [1, 0], 'direct')
    >>> policy_iteration(m, discount=0.5, evaluation="iterative").value.round(12).tolist()
    [1.0, 2.0]
    """
    mdp = _as_mdp(mdp)
    discount = check_discount(discount)
    max_iter = check_integer("max_iter", max_iter, minimum=1)
    reference_state = check_integer("reference_state", reference_state, 0, mdp.n_states - 1)
    method = _resolve_evaluation(mdp, evaluation, discount is None)
    if method == "dense" and discount is None and not mdp._all_positive:
        raise ValueError("evaluation='dense' for the average reward needs every policy unichain,"
                         " which this MDP does not guarantee (some allowed row has a zero): use "
                         "evaluation='direct' (multichain policy iteration)")
    tol = _positive("tol", tol)
    if warm_start is None:
        warm_start = (_WARM_START_ITERATIVE if method == "iterative" else
                      _WARM_START_AVERAGE_DIRECT if method == "direct" and discount is None
                      else 1 if method == "dense" else 0)
    warm_start = check_integer("warm_start", warm_start, minimum=0)
    if policy0 is None:
        policy = np.argmax(mdp._ok, axis=0)
    else:
        policy = action_vector("policy0", policy0, mdp.allowed)
    beta = 1.0 if discount is None else discount
    sweeps, guess = 0, np.zeros(mdp.n_states)
    if warm_start:
        policy, sweeps, guess = _warm_start(mdp, beta, warm_start, policy, method == "dense")
    if discount is None:
        return _policy_iteration_average(mdp, policy, max_iter, reference_state, method, tol,
                                         sweeps, guess)
    return _policy_iteration_discounted(mdp, discount, policy, max_iter, method, tol, sweeps,
                                        guess)


# --------------------------------------------------------------------------------------------
# Small dense models, and models given by their operators
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class DenseSolution(ShortRepr):
    """Result of :func:`dense_policy_iteration` (one per problem of
    :func:`dense_policy_iteration_many`).

    Attributes
    ----------
    discount : float or None
        The criterion: a discount in (0, 1), or ``None`` for the average reward.
    value : ndarray, shape (n_states,)
        The optimal policy's value (discounted), or its bias with ``value[0] = 0`` (average).
    gain : float or None
        The gain (average reward); ``None`` for the discounted criterion.
    q : ndarray, shape (n_states, n_actions)
        ``q[s, a] = r[s, a] + discount (P[a] @ value)[s]`` at the returned policy (no
        discount for the average reward).
    policy : ndarray of int, shape (n_states,)
        An optimal action in every state.
    iterations : int
        Policy evaluations done (the last one confirms the policy).
    """

    discount: float | None
    value: np.ndarray
    gain: float | None
    q: np.ndarray
    policy: np.ndarray
    iterations: int


def _dense_policy_iteration(P, r, discount, policy, tol, max_iter):
    """Howard's policy iteration on ``k`` problems that share their chains, in lock-step: the
    one implementation of :func:`dense_policy_iteration`, :func:`dense_policy_iteration_many`
    and the dense path of :func:`policy_iteration`.

    ``P`` has shape ``(A, n, n)``; ``r`` ``(k, A, n)`` (``r[i, a, s]``, ``-inf`` where an action
    is not allowed); ``policy`` ``(k, n)`` the starting policies; ``tol`` ``(k,)`` the gain a
    state needs to switch action; ``discount`` a number in (0, 1) or ``None`` (average reward,
    every policy unichain). Each step evaluates the policies of the problems not yet stable by
    one stacked LAPACK solve (``gesv`` on each matrix in turn, as for one), forms ``q`` with one
    matrix-vector product per problem and action, and improves every policy with array
    operations.

    Returns ``(value, gain, q, policy, iterations, improving)``: arrays over the problems
    (``gain`` ``None`` when discounted, ``q`` of shape ``(k, A, n)``), and the problems whose
    policy still improved after ``max_iter`` steps.
    """
    n_actions, n = P.shape[:2]
    k = r.shape[0]
    states = np.arange(n)
    scaled = P if discount is None else discount * P    # the continuation (discount P[a]) @ v
    eye = np.eye(n)
    policy = np.array(policy, dtype=np.int64)
    value = np.empty((k, n))
    gain = np.empty(k) if discount is None else None
    q = np.empty((k, n_actions, n))
    iterations = np.zeros(k, dtype=np.int64)
    todo = np.arange(k)
    for iteration in range(1, max_iter + 1):
        if todo.size == 0:
            break
        pol = policy[todo]
        P_pi = P[pol, states]                                   # (m, n, n)
        r_pi = r[todo[:, None], pol, states]                    # (m, n)
        if discount is None:   # (I - P) h + g 1 = r with h[0] = 0: g takes the column of h[0]
            M = eye - P_pi
            M[:, :, 0] = 1.0
            try:
                v = np.linalg.solve(M, r_pi[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                raise ValueError("a policy's chain has several recurrent classes (its bias "
                                 "equations are singular): the dense solver needs every policy "
                                 "unichain; use policy_iteration(..., evaluation='direct') for "
                                 "multichain policy iteration") from None
            gain[todo] = v[:, 0]
            v[:, 0] = 0.0
        else:
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
    return value, gain, q, policy, iterations, todo


def _dense_arrays(P, r, *, many: bool):
    """``P`` (validated, ``(A, n, n)``) and ``r`` as ``r[..., s, a]`` (validated, finite)."""
    raw = as_numeric("P", P)
    if raw.ndim != 3 or raw.shape[1] != raw.shape[2] or 0 in raw.shape:
        raise ValueError(f"P must be P[a, s, s'], shape (n_actions, n_states, n_states), got "
                         f"shape {raw.shape}")
    n_actions, n = raw.shape[:2]
    P = np.stack([stochastic_matrix(f"P[{a}]", raw[a], n) for a in range(n_actions)])
    r = np.array(as_numeric("r", r), dtype=float)
    want = (r.shape[0], n, n_actions) if many and r.ndim == 3 else (n, n_actions)
    layout = ("r[i, s, a], shape (k, n_states, n_actions)" if many
              else "r[s, a], shape (n_states, n_actions)")
    if r.shape != want or (many and r.ndim != 3):
        raise ValueError(f"r must be {layout} = {(('k',) if many else ()) + (n, n_actions)}, "
                         f"got shape {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError("r must be finite")
    return P, r


def dense_policy_iteration(P, r, *, discount: float | None = None, policy=None,
                           tol: float = 0.0, max_iter: int | None = None) -> DenseSolution:
    """Howard's policy iteration on a small MDP held in dense arrays (LAPACK solves).

    For small or dense MDPs (the arms of a restless bandit, a few hundred states at most),
    where one dense solve is cheaper than a sparse factorisation. Each step evaluates the
    policy exactly, ``(I - discount P_pi) v = r_pi`` (discounted), or ``(I - P_pi) h + g 1 =
    r_pi`` with ``h[0] = 0`` (average reward, every policy unichain), then moves each state to
    its best action if that gains more than ``tol``, so rounding cannot make it cycle ([P94]_,
    Sec. 6.4 and 8.6). Exact: it stops at an optimal policy after finitely many steps. It is
    :func:`dense_policy_iteration_many` with one problem.

    Parameters
    ----------
    P : array_like, shape (n_actions, n_states, n_states)
        ``P[a, s, s']``: the transition matrix of action ``a``.
    r : array_like, shape (n_states, n_actions)
        Rewards ``r[s, a]`` (maximised; pass negated costs to minimise).
    discount : float or None
        In (0, 1) for the discounted criterion; ``None`` (default) for the average reward.
    policy : array_like of int, shape (n_states,), optional
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
    ValueError
        For the average reward, if a policy's chain has several recurrent classes.

    Examples
    --------
    >>> P = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]
    >>> sol = dense_policy_iteration(P, [[0.0, 0.0], [1.0, 0.0]], discount=0.5)
    >>> sol.policy.tolist(), sol.value.tolist()          # move to state 1 and stay there
    ([1, 0], [1.0, 2.0])
    """
    P, r = _dense_arrays(P, r, many=False)
    n_actions, n = P.shape[:2]
    discount = check_discount(discount)
    tol = check_real("tol", tol, 0.0, np.inf, high_open=True)
    if policy is None:
        start = np.zeros(n, dtype=np.int64)
    else:
        start = action_vector("policy", policy, np.ones((n, n_actions), dtype=bool))
    max_iter = 10 * n + 100 if max_iter is None else check_integer("max_iter", max_iter,
                                                                    minimum=1)
    value, gain, q, policy, iterations, improving = _dense_policy_iteration(
        P, r.T[None], discount, start[None], np.array([tol]), max_iter)
    if improving.size:
        raise RuntimeError(f"dense_policy_iteration: the policy still improves after {max_iter} "
                           "steps")
    return _dense_solution(discount, value[0], None if gain is None else float(gain[0]), q[0],
                           policy[0], int(iterations[0]))


def _dense_solution(discount, value, gain, q, policy, iterations) -> DenseSolution:
    value, q, policy = value.copy(), np.ascontiguousarray(q.T), policy.copy()
    for arr in (value, q, policy):
        arr.setflags(write=False)
    return DenseSolution(discount=discount, value=value, gain=gain, q=q, policy=policy,
                         iterations=iterations)


def dense_policy_iteration_many(P, r, *, discount: float | None = None, tol=0.0,
                                max_iter: int | None = None) -> tuple:
    """:func:`dense_policy_iteration` of many reward tables on one chain at once.

    Parameters
    ----------
    P : array_like, shape (n_actions, n_states, n_states)
        The transition matrices ``P[a, s, s']``, shared by every problem.
    r : array_like, shape (k, n_states, n_actions)
        The rewards ``r[i, s, a]`` of ``k`` problems.
    discount : float or None
        In (0, 1) for the discounted criterion; ``None`` (default) for the average reward.
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
    >>> sols = dense_policy_iteration_many(P, [[[0.0, 0.0], [1.0, 0.0]],
    ...                                        [[0.0, 5.0], [1.0, 0.0]]], discount=0.5)
    >>> [s.policy.tolist() for s in sols]
    [[1, 0], [1, 0]]
    """
    P, r = _dense_arrays(P, r, many=True)
    n = P.shape[1]
    k = r.shape[0]
    discount = check_discount(discount)
    raw = as_numeric("tol", tol)
    try:
        tol = np.broadcast_to(np.asarray(raw, dtype=float), (k,))
    except ValueError:
        raise ValueError(f"tol must be a number or hold one per problem ({k}), got shape "
                         f"{raw.shape}") from None
    if not (np.isfinite(tol).all() and (tol >= 0).all()):
        raise ValueError(f"tol must hold finite numbers >= 0, got {tol!r}")
    max_iter = 10 * n + 100 if max_iter is None else check_integer("max_iter", max_iter,
                                                                    minimum=1)
    value, gain, q, policy, iterations, improving = _dense_policy_iteration(
        P, r.transpose(0, 2, 1), discount, np.zeros((k, n), dtype=np.int64), tol, max_iter)
    if improving.size:
        raise RuntimeError(f"dense_policy_iteration_many: {improving.size} policies still "
                           f"improve after {max_iter} steps")
    return tuple(_dense_solution(discount, value[i], None if gain is None else float(gain[i]),
                                 q[i], policy[i], int(iterations[i])) for i in range(k))



@dataclass(frozen=True, eq=False, repr=False)
class OperatorSolution(ShortRepr):
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
    for name, function in (("q_values", q_values), ("evaluate", evaluate)):
        if not callable(function):
            raise TypeError(f"{name} must be a callable, got {type(function).__name__}")
    n_states = check_integer("n_states", n_states, minimum=1)
    vi_tol = _positive("vi_tol", vi_tol)
    max_iter = check_integer("max_iter", max_iter, minimum=1)
    objective = check_choice("objective", objective, ("max", "min"))
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
