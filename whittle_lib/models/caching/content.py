"""One content of the caching model: its popularity chain, costs and arm (Sec. 2.1); random
contents."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..._validation import (ROW_SUM_TOL, check_choice, check_integer, check_real, check_rng,
                            real_array, stochastic_matrix)
from ...arms import RestlessArm

__all__ = ["birth_death_matrix", "CachingContent", "random_content"]

# --------------------------------------------------------------------------------------------
# One content
# --------------------------------------------------------------------------------------------


def birth_death_matrix(n_levels: int, up, down) -> np.ndarray:
    """The popularity chain of Fig. 1: one level up, one level down, or stay.

    Parameters
    ----------
    n_levels : int
        Number of request levels ``K`` (at least 2).
    up, down : float or array_like, shape (K,)
        Probability of moving one level up (down) from each level. At the top level there is
        no level above, and at the bottom none below: ``up[K-1]`` and ``down[0]`` are ignored
        and that probability mass stays put (a self-loop, which Fig. 1 does not draw).

    Returns
    -------
    numpy.ndarray, shape (K, K)
        Row-stochastic matrix.

    Raises
    ------
    TypeError
        For a level count that is not an integer, probabilities that are not numbers.
    ValueError
        On ``K < 2``, a probability outside [0, 1], a vector of the wrong length or
        ``up + down > 1`` at some level.

    Examples
    --------
    >>> birth_death_matrix(3, 0.5, 0.25).tolist()
    [[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.0, 0.25, 0.75]]
    """
    K = check_integer("n_levels", n_levels, 2)
    probabilities = []
    for name, v in (("up", up), ("down", down)):
        v = real_array(name, v, low=0.0, high=1.0, ndim=(0, 1))
        if v.ndim and v.shape != (K,):
            raise ValueError(f"{name} must be a probability or hold one per level ({K}), got "
                             f"shape {v.shape}")
        probabilities.append(np.broadcast_to(v, (K,)).copy())
    p, q = probabilities
    p[-1] = 0.0
    q[0] = 0.0
    if np.any(p + q > 1 + ROW_SUM_TOL):
        k = int(np.argmax(p + q > 1 + ROW_SUM_TOL))
        raise ValueError(f"up + down must be <= 1 at every level, got {p[k] + q[k]!r} at level {k}")
    P = np.diag(1.0 - p - q)
    P[np.arange(K - 1), np.arange(1, K)] = p[:-1]
    P[np.arange(1, K), np.arange(K - 1)] = q[1:]
    return P


@dataclass(frozen=True, eq=False)
class CachingContent:
    r"""One content of the caching problem: its request levels, costs and popularity chains.

    Parameters
    ----------
    levels : array_like, shape (K,)
        Request levels :math:`r_1 < \dots < r_K` (numbers of requests in a slot), increasing.
    missing_cost : array_like, shape (K,)
        :math:`C(r_k)`, paid when the content is not cached and requested :math:`r_k` times.
    P0, P1 : array_like, shape (K, K)
        Popularity chain when the content is not cached (``P0``) and when it is (``P1``):
        ``Pa[k, j]`` is the probability that the coming slot has level ``j`` after level ``k``.
    fetch_cost : float
        ``d >= 0``: paid when a content that was not cached is cached (the paper's "caching
        cost", a switching cost).
    holding_cost : float, default 0
        ``h``: paid per slot in the cache (Sec. 3.4). It shifts every index by ``-h``.

    Raises
    ------
    TypeError
        For values that are not numbers.
    ValueError
        On a bad shape, non-increasing levels, non-finite or negative costs, a non-stochastic
        matrix; the message names the parameter.

    Notes
    -----
    :meth:`arm` is the single-content problem of Sec. 3.1 as a :class:`RestlessArm` with the
    state ``x = k + K c`` (see the module docstring).

    Examples
    --------
    >>> P = birth_death_matrix(3, 0.3, 0.3)
    >>> content = CachingContent(levels=[0, 1, 2], missing_cost=[0, 1, 2], P0=P, P1=P,
    ...                          fetch_cost=1.0)
    >>> content.arm().n_states
    6
    """

    levels: np.ndarray
    missing_cost: np.ndarray
    P0: np.ndarray
    P1: np.ndarray
    fetch_cost: float
    holding_cost: float = 0.0

    def __post_init__(self) -> None:
        levels = np.array(real_array("levels", self.levels), dtype=float)
        if levels.ndim != 1 or levels.size < 2:
            raise ValueError(f"levels must be a 1-d array of at least 2 levels, got shape "
                             f"{levels.shape}")
        if not np.all(np.isfinite(levels)) or np.any(np.diff(levels) <= 0):
            raise ValueError(f"levels must be finite and increasing, got {levels.tolist()}")
        K = levels.size
        cost = np.array(real_array("missing_cost", self.missing_cost), dtype=float)
        if cost.shape != (K,):
            raise ValueError(f"missing_cost must have shape ({K},) like levels, got {cost.shape}")
        if not np.all(np.isfinite(cost)) or cost.min() < 0:
            raise ValueError(f"missing_cost must be finite and >= 0, got {cost.tolist()}")
        P0 = stochastic_matrix("P0", self.P0, K)
        P1 = stochastic_matrix("P1", self.P1, K)
        for name in ("fetch_cost", "holding_cost"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                   np.floating)):
                raise TypeError(f"{name} must be a number, got {type(v).__name__} {v!r}")
            v = float(v)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        for arr in (levels, cost):
            arr.setflags(write=False)
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "missing_cost", cost)
        object.__setattr__(self, "P0", P0)
        object.__setattr__(self, "P1", P1)

    @classmethod
    def birth_death(cls, levels, missing_cost, *, up0, down0, up1, down1, fetch_cost,
                    holding_cost=0.0) -> "CachingContent":
        """A content with the birth-death popularity chains of Fig. 1.

        ``up0, down0`` (``up1, down1``) are the probabilities of one level up / down when the
        content is not cached (cached), as in :func:`birth_death_matrix`.
        """
        K = len(np.atleast_1d(levels))
        return cls(levels=levels, missing_cost=missing_cost,
                   P0=birth_death_matrix(K, up0, down0), P1=birth_death_matrix(K, up1, down1),
                   fetch_cost=fetch_cost, holding_cost=holding_cost)

    @property
    def n_levels(self) -> int:
        """Number of request levels ``K``."""
        return self.levels.size

    @property
    def expected_missing_cost(self) -> np.ndarray:
        r""":math:`(P_0 C)(k)`: expected missing cost of the coming slot if not cached."""
        return self.P0 @ self.missing_cost

    def arm(self) -> RestlessArm:
        r"""The single-content caching problem (Sec. 3.1) as a restless arm.

        State ``x = k + K c`` (level ``k`` of the previous slot, previous cache status ``c``);
        action 1 caches the content for the coming slot. Rewards are negative costs:
        ``R0[x] = -(P0 C)(k)``, ``R1[x] = -((1 - c) d + h)``. The subsidy for passivity of
        :mod:`whittle_lib.indices` equals the paper's penalty :math:`\lambda` for caching.
        """
        K = self.n_levels
        Z = np.zeros((K, K))
        P0 = np.block([[self.P0, Z], [self.P0, Z]])
        P1 = np.block([[Z, self.P1], [Z, self.P1]])
        R0 = -np.tile(self.expected_missing_cost, 2)
        R1 = -np.concatenate([np.full(K, self.fetch_cost), np.zeros(K)]) - self.holding_cost
        return RestlessArm(P0=P0, P1=P1, R0=R0, R1=R1)

    def with_missing_cost(self, missing_cost) -> "CachingContent":
        """The same content with other missing costs (Sec. 4)."""
        return CachingContent(self.levels, missing_cost, self.P0, self.P1, self.fetch_cost,
                              self.holding_cost)


def random_content(n_levels: int, *, rng, chain: str = "birth-death",
                   closeness: float | None = None) -> CachingContent:
    """A random content, for checking the theorems over many instances (our generator).

    Parameters
    ----------
    n_levels : int
        ``K``; the levels are ``0, 1, ..., K-1``.
    rng : numpy.random.Generator or seed
        Keyword-only.
    chain : {"birth-death", "dense"}
        ``"birth-death"``: Fig. 1 chains with level-dependent up/down probabilities and
        Assumption 1 built in (``up1 >= up0``, ``down1 <= down0``), and a non-decreasing
        concave missing cost (Assumption 2). ``"dense"``: Sec. 5's arbitrary chains, rows
        drawn uniformly from the simplex, and missing costs uniform in [0, 10) (no assumption).
    closeness : float in [0, 1], optional
        Only for ``"dense"``: ``P1 = (1 - closeness) P0 + closeness Q`` with ``Q`` another random
        chain, so the :func:`popularity_perturbation` is at most ``closeness``.

    Returns
    -------
    CachingContent
        With a fetch cost uniform in [0, 10).

    Examples
    --------
    >>> random_content(4, rng=1).n_levels
    4
    """
    K = check_integer("n_levels", n_levels, 2)
    rng = check_rng(rng)
    check_choice("chain", chain, ("birth-death", "dense"))
    if closeness is not None:
        closeness = check_real("closeness", closeness, 0.0, 1.0)
    levels = np.arange(K, dtype=float)
    d = 10.0 * rng.random()
    if chain == "birth-death":
        if closeness is not None:
            raise ValueError("closeness applies to chain='dense' only")
        up0 = 0.5 * rng.random(K)
        down0 = 0.5 * rng.random(K)
        up1 = up0 + (0.5 - up0) * rng.random(K)
        down1 = down0 * rng.random(K)
        slopes = np.sort(rng.random(K - 1))[::-1] * 3.0
        cost = np.concatenate([[0.0], np.cumsum(slopes)])
        return CachingContent.birth_death(levels, cost, up0=up0, down0=down0, up1=up1,
                                          down1=down1, fetch_cost=d)
    if chain != "dense":
        raise ValueError(f"chain must be 'birth-death' or 'dense', got {chain!r}")
    P0 = rng.dirichlet(np.ones(K), size=K)
    if closeness is None:
        P1 = rng.dirichlet(np.ones(K), size=K)
    else:
        eta = float(closeness)
        if not 0.0 <= eta <= 1.0:
            raise ValueError(f"closeness must lie in [0, 1], got {closeness!r}")
        P1 = (1.0 - eta) * P0 + eta * rng.dirichlet(np.ones(K), size=K)
        P1 /= P1.sum(axis=1, keepdims=True)
    return CachingContent(levels, 10.0 * rng.random(K), P0, P1, d)
