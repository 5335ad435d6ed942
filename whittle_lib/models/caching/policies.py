"""Index policies for the joint problem (Whittle, greedy) and their Monte Carlo cost (Sec. 6)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..._validation import check_integer, check_rng, real_array
from ...indices import WhittleIndexResult, whittle_indices
from ...rmab import sample_next, simulate, top_m
from ...stats import ConfidenceInterval, mean_interval
from .joint import CachingProblem, _check_joint_policy, _check_problem

__all__ = ["whittle_priorities", "greedy_priorities", "index_policy", "CachingDynamics",
           "MonteCarloEstimate", "simulate_policy"]

# --------------------------------------------------------------------------------------------
# Index policies: Whittle (Sec. 3.4) and greedy (Sec. 6)
# --------------------------------------------------------------------------------------------


def whittle_priorities(problem: CachingProblem) -> tuple[np.ndarray, ...]:
    """Whittle indices of every content, as priorities for :func:`index_policy`.

    Returns
    -------
    tuple of numpy.ndarray, one of shape (2K_n,) per content
        ``W_n[k + K_n c]``, from :func:`whittle_lib.indices.whittle_indices`.

    Raises
    ------
    ValueError
        If some content is not indexable (the Whittle index policy is then undefined; Sec. 4
        suggests changing its missing costs first, :func:`repair_missing_costs`).
    """
    _check_problem(problem)
    out = []
    for n, content in enumerate(problem.contents):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res: WhittleIndexResult = whittle_indices(content.arm(), discount=problem.discount)
        if not res.indexable:
            raise ValueError(f"content {n} is not indexable ({res.status.value}); "
                             "its Whittle index is undefined")
        out.append(res.indices)
    return tuple(out)


def greedy_priorities(problem: CachingProblem) -> tuple[np.ndarray, ...]:
    """One-slot saving of caching each content, the priorities of the greedy policy (Sec. 6).

    ``g_n(k, c) = (P0 C)_n(k) - (1 - c) d_n - h_n``: the cost (3) of one slot is separable, so
    minimising it under the capacity constraint caches the (at most ``M``) contents of largest
    positive saving, exactly what :func:`index_policy` does with these priorities.
    """
    _check_problem(problem)
    out = []
    for content in problem.contents:
        K = content.n_levels
        m = np.tile(content.expected_missing_cost, 2)
        fetch = np.concatenate([np.full(K, content.fetch_cost), np.zeros(K)])
        out.append(m - fetch - content.holding_cost)
    return tuple(out)


def _select(priority, capacity):
    """Cache vectors (0/1, shape (..., N)) choosing the ``capacity`` largest positive priorities
    (ties to the lower content number): the core's :func:`~whittle_lib.rmab.top_m`."""
    return top_m(priority, capacity, threshold=0.0).astype(np.int8)


def _priorities_at(problem, priorities, levels, cached):
    """Priority of every content at level vectors / cache vectors of shape (R, N)."""
    out = np.empty(levels.shape)
    for n, (content, pr) in enumerate(zip(problem.contents, priorities)):
        out[:, n] = pr[levels[:, n] + content.n_levels * cached[:, n]]
    return out


def _check_priorities(problem, priorities):
    if not isinstance(priorities, (list, tuple)):
        raise TypeError(f"priorities must be a tuple of arrays, one per content, got "
                        f"{type(priorities).__name__}")
    priorities = tuple(real_array(f"priorities[{n}]", p) for n, p in enumerate(priorities))
    if len(priorities) != problem.n_contents or any(
            p.shape != (2 * c.n_levels,) for p, c in zip(priorities, problem.contents)):
        raise ValueError("priorities must hold one array of shape (2K_n,) per content")
    return priorities


def index_policy(problem: CachingProblem, priorities) -> np.ndarray:
    """The joint policy that caches the ``M`` contents of largest positive priority.

    With :func:`whittle_priorities` this is the Whittle index policy of Sec. 3.4 ("chooses
    those arms whose current states have the largest Whittle indices and, among these, caches
    those with positive Whittle indices"); with :func:`greedy_priorities` the greedy policy.
    Ties go to the lower content number; a priority of exactly 0 is not cached.

    Returns
    -------
    numpy.ndarray of int, shape (n_states,)
        Configuration number in every joint state (for :func:`evaluate_joint_policy`).
    """
    _check_problem(problem)
    priorities = _check_priorities(problem, priorities)
    levels, cached = problem.decode(np.arange(problem.n_states))
    chosen = _select(_priorities_at(problem, priorities, levels, cached), problem.capacity)
    return problem.config_index(chosen)


def _initial_state(problem, initial_levels, initial_cached):
    """Level indices (intp) and cache bits (int8) of shape (n_runs, N), checked."""
    N = problem.n_contents
    raw_levels, raw_cached = np.asarray(initial_levels), np.asarray(initial_cached)
    for name, raw in (("initial_levels", raw_levels), ("initial_cached", raw_cached)):
        if raw.dtype.kind not in "iub":
            raise TypeError(f"{name} must hold integers, got an array of dtype {raw.dtype}")
    levels = np.array(raw_levels, dtype=np.intp)
    cached = np.array(raw_cached, dtype=np.int8)
    if levels.ndim != 2 or levels.shape[1] != N or cached.shape != levels.shape:
        raise ValueError(f"initial_levels and initial_cached must have shape (n_runs, {N}), "
                         f"got {levels.shape} and {cached.shape}")
    if np.any(levels < 0) or np.any(levels >= np.array(problem.shape)):
        raise ValueError(f"initial_levels must lie in 0..K_n - 1 (K = {problem.shape}), got "
                         f"{levels.tolist()}")
    if np.any(cached.sum(1) > problem.capacity) or np.any((cached != 0) & (cached != 1)):
        raise ValueError(f"initial_cached must be 0/1 with at most {problem.capacity} ones per run")
    return levels, cached


@dataclass(frozen=True, eq=False)
class CachingDynamics:
    """The joint caching model as dynamics of the core's simulator
    (:func:`whittle_lib.rmab.simulate`).

    The state of replication ``i`` is ``(levels[i], cached[i])``: the level index of every
    content in the last slot and its cache bit. A step caches the active contents, draws every
    content's next level from row ``levels`` of ``P1`` (cached) or ``P0`` (not), and earns the
    negated *realised* cost: the missing cost :math:`C(r)` of the level actually drawn for every
    uncached content, the fetch cost of a newly cached content and the holding cost.

    Parameters
    ----------
    problem : CachingProblem
    initial_levels, initial_cached : ndarray of int, shape (R, N)
        One row per replication: level indices in ``0..K_n - 1`` and cache bits with at most
        ``M`` ones (checked as :func:`simulate_policy` checks them).
    """

    problem: CachingProblem
    initial_levels: np.ndarray
    initial_cached: np.ndarray

    def __post_init__(self) -> None:
        problem = _check_problem(self.problem)
        levels, cached = _initial_state(problem, self.initial_levels, self.initial_cached)
        object.__setattr__(self, "initial_levels", levels)
        object.__setattr__(self, "initial_cached", cached)
        N, Kmax = problem.n_contents, max(problem.shape)
        cdf = np.ones((N, 2, Kmax, Kmax))             # cumulative rows, padded: cdf[n, a, k, j]
        missing = np.zeros((N, Kmax))
        for n, c in enumerate(problem.contents):
            K = c.n_levels
            for a, P in enumerate((c.P0, c.P1)):
                cdf[n, a, :K, :K] = np.cumsum(P, axis=1)
            missing[n, :K] = c.missing_cost
        object.__setattr__(self, "_cdf", cdf)
        object.__setattr__(self, "_missing", missing)
        object.__setattr__(self, "_fetch", np.array([c.fetch_cost for c in problem.contents]))
        object.__setattr__(self, "_holding",
                           np.array([c.holding_cost for c in problem.contents]))
        object.__setattr__(self, "_top_level", np.array(problem.shape) - 1)

    @property
    def n_arms(self) -> int:
        return self.problem.n_contents

    def initial(self, replications):
        return self.initial_levels.copy(), self.initial_cached.copy()

    def step(self, state, active, rng):
        levels, cached = state
        action = active.astype(np.int8)
        contents = np.arange(self.n_arms)[None, :]
        u = rng.random(levels.shape)
        rows = self._cdf[contents, action, levels]               # (R, N, Kmax)
        new_levels = np.minimum(sample_next(rows, u), self._top_level)
        slot = ((1 - action) * self._missing[contents, new_levels]
                + action * (1 - cached) * self._fetch + action * self._holding).sum(1)
        return (new_levels, action), -slot

    def observe(self, state):
        return np.stack([state[0], state[1]], axis=-1)


@dataclass(frozen=True, eq=False)
class MonteCarloEstimate:
    """Monte Carlo estimate of a discounted cost.

    Attributes
    ----------
    mean, std_error : float
        Sample mean of the discounted costs of the runs and its standard error.
    interval : whittle_lib.stats.ConfidenceInterval
        The 95 % Student-t interval of the mean (:func:`whittle_lib.stats.mean_interval`);
        ``None`` for a single run.
    n_runs, horizon : int
    truncation : float
        Upper bound on the cost ignored by stopping at ``horizon``:
        ``beta^horizon * max one-slot cost / (1 - beta)``.
    """

    mean: float
    std_error: float
    interval: ConfidenceInterval | None
    n_runs: int
    horizon: int
    truncation: float


def simulate_policy(problem: CachingProblem, policy, *, initial_levels, initial_cached,
                    horizon: int, rng) -> MonteCarloEstimate:
    """Simulate a caching policy and estimate its discounted cost.

    Each run starts from its own initial state and pays the *realised* costs: the missing cost
    :math:`C(r)` of the level actually drawn for every uncached content, and the fetch and
    holding costs. The runs are the replications of the core's simulator
    (:func:`whittle_lib.rmab.simulate` on :class:`CachingDynamics`, vectorised over runs and
    contents; a loop over time only); a joint policy enters it as the priorities 1 (cache) and
    0 (do not), with the budget ``M`` and the threshold 0 of :func:`index_policy`.

    Parameters
    ----------
    problem : CachingProblem
    policy : tuple of arrays or numpy.ndarray of int
        Either per-content priorities (applied online as in :func:`index_policy`) or a joint
        policy (configuration per joint state, e.g. :attr:`JointSolution.policy`).
    initial_levels, initial_cached : array_like of int, shape (n_runs, N)
        Initial level indices and cache vectors, one row per run.
    horizon : int
        Number of slots simulated.
    rng : numpy.random.Generator or seed
        Keyword-only; passed to :func:`numpy.random.default_rng`.

    Returns
    -------
    MonteCarloEstimate
    """
    _check_problem(problem)
    rng = check_rng(rng)
    levels, cached = _initial_state(problem, initial_levels, initial_cached)
    horizon = check_integer("horizon", horizon, 1)
    joint = not isinstance(policy, tuple)
    if joint:
        policy = _check_joint_policy(problem, policy)
        configs = np.asarray(problem.configs)
    else:
        policy = _check_priorities(problem, policy)
    R = levels.shape[0]
    dynamics = CachingDynamics(problem, levels, cached)
    if joint:
        configs = np.asarray(problem.configs)

        def rule(state, t):                    # the joint policy's cache vector, as priorities
            return configs[policy[problem.state_index(*state)]].astype(float)
    else:
        def rule(state, t):
            return _priorities_at(problem, policy, *state)
    run = simulate(dynamics, rule, problem.capacity, horizon, replications=R,
                   activation="at_most", rng=rng)
    beta = problem.discount
    total = np.zeros(R)
    discount_t = 1.0
    for slot in run.rewards:                   # rewards are negated costs
        total += discount_t * -slot
        discount_t *= beta
    max_slot = float(sum(c.missing_cost.max() + c.fetch_cost + c.holding_cost
                         for c in problem.contents))
    mean = float(total.mean())
    se = float(total.std(ddof=1) / math.sqrt(R)) if R > 1 else math.nan
    interval = mean_interval(total) if R > 1 else None
    return MonteCarloEstimate(mean, se, interval, R, horizon,
                              beta ** horizon * max_slot / (1 - beta))
