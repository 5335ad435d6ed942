"""The joint problem of N contents and a cache of M (Sec. 2.2): exact costs, policies and the
optimum."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from ... import mdp
from ..._validation import check_integer, check_real
from .assumptions import theorem51_bound
from .content import CachingContent

__all__ = ["CachingProblem", "JointSolution", "solve_joint", "joint_transition_matrix",
           "joint_costs", "evaluate_joint_policy"]

# --------------------------------------------------------------------------------------------
# The joint problem of N contents and a cache of M (Sec. 2.2)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CachingProblem:
    """``N`` contents and a cache of capacity ``M`` (Sec. 2), discounted cost.

    Parameters
    ----------
    contents : sequence of CachingContent
    capacity : int
        ``M``, ``1 <= M <= N``.
    discount : float
        In (0, 1).

    Notes
    -----
    Joint states: request levels :math:`(k_1, \\dots, k_N)` and the previous cache vector
    :math:`c` with :math:`\\sum c_n \\le M`. The feasible cache vectors are listed in
    :attr:`configs` (row ``i`` is configuration ``i``, ordered by number cached then
    lexicographically); a joint state is ``s = i * L + ravel_multi_index(k, shape)`` with
    ``L = prod(K_n)``; actions are configuration numbers, and the next configuration is the
    action.
    """

    contents: tuple
    capacity: int
    discount: float

    def __post_init__(self) -> None:
        if not isinstance(self.contents, (list, tuple)):
            raise TypeError(f"contents must be a list of CachingContent, got "
                            f"{type(self.contents).__name__}")
        contents = tuple(self.contents)
        if not contents:
            raise ValueError("contents must hold at least one CachingContent, got none")
        for n, c in enumerate(contents):
            if not isinstance(c, CachingContent):
                raise TypeError(f"contents[{n}] must be a CachingContent, got "
                                f"{type(c).__name__}")
        M = check_integer("capacity", self.capacity, 1, len(contents))
        theorem51_bound(self.discount)
        object.__setattr__(self, "contents", contents)
        object.__setattr__(self, "capacity", M)
        object.__setattr__(self, "discount", float(self.discount))
        N = len(contents)
        configs = [np.array(v) for m in range(M + 1)
                   for v in itertools.product((0, 1), repeat=N) if sum(v) == m]
        configs = np.array(configs, dtype=np.int8).reshape(-1, N)
        configs.setflags(write=False)
        object.__setattr__(self, "configs", configs)
        code = np.full(2 ** N, -1, dtype=np.intp)
        code[configs.astype(np.int64) @ (1 << np.arange(N))] = np.arange(len(configs))
        code.setflags(write=False)
        object.__setattr__(self, "_config_of_code", code)

    @property
    def n_contents(self) -> int:
        return len(self.contents)

    @property
    def shape(self) -> tuple:
        """Numbers of levels ``(K_1, ..., K_N)``."""
        return tuple(c.n_levels for c in self.contents)

    @property
    def n_states(self) -> int:
        return len(self.configs) * math.prod(self.shape)

    def config_index(self, cached) -> np.ndarray:
        """Configuration numbers of cache vectors ``cached`` (shape (..., N), 0/1); -1 if
        more than ``M`` are cached."""
        cached = np.asarray(cached, dtype=np.int64)
        return self._config_of_code[cached @ (1 << np.arange(self.n_contents))]

    def state_index(self, levels, cached) -> np.ndarray:
        """Joint state numbers of level vectors and cache vectors (shape (..., N))."""
        levels = np.asarray(levels)
        flat = np.ravel_multi_index(tuple(np.moveaxis(levels, -1, 0)), self.shape)
        return self.config_index(cached) * math.prod(self.shape) + flat

    def decode(self, states) -> tuple[np.ndarray, np.ndarray]:
        """Level vectors and cache vectors of joint state numbers (inverse of
        :meth:`state_index`)."""
        states = np.asarray(states)
        L = math.prod(self.shape)
        levels = np.stack(np.unravel_index(states % L, self.shape), axis=-1)
        return levels, np.asarray(self.configs)[states // L]


def _check_problem(problem) -> CachingProblem:
    if not isinstance(problem, CachingProblem):
        raise TypeError(f"problem must be a CachingProblem, got {type(problem).__name__}")
    return problem


def joint_costs(problem: CachingProblem) -> np.ndarray:
    """Expected one-slot cost (3) of every joint state and action, shape (n_states, n_configs).

    ``cost[s, a] = sum_n (1 - a_n) (P0 C)_n(k_n) + a_n (1 - c_n) d_n + a_n h_n``.
    """
    _check_problem(problem)
    cfg = np.asarray(problem.configs, dtype=float)
    L = math.prod(problem.shape)
    # missing part: depends on the levels and the action
    miss = np.zeros((L, len(cfg)))
    grids = np.meshgrid(*[np.arange(K) for K in problem.shape], indexing="ij")
    for n, content in enumerate(problem.contents):  # once per content, not per time step
        m = content.expected_missing_cost[grids[n].ravel()]
        miss += m[:, None] * (1.0 - cfg[:, n])[None, :]
    d = np.array([c.fetch_cost for c in problem.contents])
    h = np.array([c.holding_cost for c in problem.contents])
    switch = (cfg * (1.0 - cfg[:, None, :]) * d).sum(-1) + (cfg * h).sum(-1)[None, :]
    # state s = (config c, levels): cost[c, levels, a] = miss[levels, a] + switch[c, a]
    return (miss[None, :, :] + switch[:, None, :]).reshape(-1, len(cfg))


def _kron_chain(problem: CachingProblem, config) -> sparse.csr_array:
    """Level transition matrix (L x L) of the joint chain when the cache vector is ``config``."""
    out = sparse.csr_array(np.ones((1, 1)))
    for content, a in zip(problem.contents, config):
        out = sparse.kron(out, sparse.csr_array(content.P1 if a else content.P0), format="csr")
    return out


def _apply_chain(problem, V, config):
    """E[V(k') | k] for the level tensor V (shape ``problem.shape``) under cache vector ``config``:
    the product chain applied one axis at a time (no joint matrix is formed)."""
    for n, (content, a) in enumerate(zip(problem.contents, config)):
        P = content.P1 if a else content.P0
        V = np.moveaxis(np.tensordot(P, V, axes=([1], [n])), 0, n)
    return V


def joint_transition_matrix(problem: CachingProblem, policy) -> sparse.csr_array:
    """Transition matrix of the joint chain under a stationary policy (configuration per state).

    Raises
    ------
    TypeError
        For a problem that is not a ``CachingProblem``, a policy that is not integers.
    ValueError
        If the policy has the wrong shape or uses a configuration number out of range.
    """
    policy = _check_joint_policy(problem, policy)
    L = math.prod(problem.shape)
    n_cfg = len(problem.configs)
    blocks = [[None] * n_cfg for _ in range(n_cfg)]
    for a in range(n_cfg):
        chain = _kron_chain(problem, problem.configs[a])
        for c in range(n_cfg):
            mask = (policy[c * L:(c + 1) * L] == a).astype(float)
            if mask.any():
                blocks[c][a] = sparse.diags_array(mask) @ chain
    for c in range(n_cfg):  # bmat needs a block in every block-row and block-column
        if blocks[c][c] is None:
            blocks[c][c] = sparse.csr_array((L, L))
    for a in range(n_cfg):
        if all(blocks[c][a] is None for c in range(n_cfg)):
            blocks[a][a] = sparse.csr_array((L, L))
    return sparse.csr_array(sparse.bmat(blocks, format="csr"))


def _check_joint_policy(problem, policy):
    _check_problem(problem)
    policy = np.asarray(policy)
    if not np.issubdtype(policy.dtype, np.integer):
        raise TypeError(f"policy must be an integer array of configuration numbers, got "
                        f"{policy.dtype} array")
    if policy.shape != (problem.n_states,):
        raise ValueError(f"policy must be an integer array of shape ({problem.n_states},), "
                         f"got {policy.dtype} array of shape {policy.shape}")
    if policy.min() < 0 or policy.max() >= len(problem.configs):
        raise ValueError(f"policy must use configuration numbers in 0..{len(problem.configs) - 1}")
    return policy


def evaluate_joint_policy(problem: CachingProblem, policy) -> np.ndarray:
    """Exact discounted cost of a stationary policy from every joint state.

    Solves :math:`(I - \\beta P_\\pi) v = c_\\pi` with a sparse LU factorisation.

    Returns
    -------
    numpy.ndarray, shape (n_states,)
    """
    policy = _check_joint_policy(problem, policy)
    P = joint_transition_matrix(problem, policy)
    cost = joint_costs(problem)[np.arange(problem.n_states), policy]
    A = sparse.identity(problem.n_states, format="csc") - problem.discount * P.tocsc()
    return sparse_linalg.spsolve(sparse.csc_array(A), cost)


@dataclass(frozen=True, eq=False)
class JointSolution:
    """Exact optimum of the joint caching problem.

    Attributes
    ----------
    cost : numpy.ndarray, shape (n_states,)
        Optimal discounted cost from every joint state (exact evaluation of ``policy``).
    policy : numpy.ndarray of int, shape (n_states,)
        An optimal cache configuration in every joint state.
    vi_iterations : int
        Value-iteration sweeps before the policy-iteration polish.
    pi_iterations : int
        Policy-iteration steps (exact evaluations) until the policy was stable.
    residual : float
        Sup norm of the Bellman residual ``T v - v`` of the returned cost.
    """

    cost: np.ndarray
    policy: np.ndarray
    vi_iterations: int
    pi_iterations: int
    residual: float


def _bellman(problem, V, costs):
    """Q-values of every joint state and configuration (shape (n_states, n_configs))."""
    L = math.prod(problem.shape)
    n_cfg = len(problem.configs)
    cont = np.empty((L, n_cfg))
    V = V.reshape(n_cfg, *problem.shape)
    for a in range(n_cfg):  # next configuration = a
        cont[:, a] = _apply_chain(problem, V[a], problem.configs[a]).ravel()
    return costs + problem.discount * np.tile(cont, (n_cfg, 1))


def solve_joint(problem: CachingProblem, *, vi_tol: float = 1e-6,
                max_iter: int = 100) -> JointSolution:
    r"""The optimal caching policy of the joint problem (Sec. 2.2), exactly.

    Value iteration (the paper's method, Sec. 6) on the joint state with the product
    structure of the chain (each content's matrix applied along its axis), stopped when the
    sup-norm change falls below ``vi_tol``; then policy iteration from its greedy policy, each
    step an exact sparse solve, until the policy is stable ([P94]_ Sec. 6.4), which makes the
    result exactly optimal whatever ``vi_tol`` is. The algorithm is
    :func:`whittle_lib.mdp.operator_policy_iteration`; this model supplies its Bellman
    operator (never building the joint matrices) and the exact evaluation of a policy.

    Returns
    -------
    JointSolution
    """
    _check_problem(problem)
    vi_tol = check_real("vi_tol", vi_tol, 0.0, np.inf, low_open=True, high_open=True)
    max_iter = check_integer("max_iter", max_iter, 1)
    costs = joint_costs(problem)
    sol = mdp.operator_policy_iteration(lambda V: _bellman(problem, V, costs),
                                        lambda policy: evaluate_joint_policy(problem, policy),
                                        problem.n_states, objective="min", vi_tol=vi_tol,
                                        max_iter=max_iter)
    return JointSolution(sol.value, sol.policy, sol.vi_iterations, sol.pi_iterations,
                         sol.residual)
