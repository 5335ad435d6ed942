"""Builders of common restless arms, as plain functions returning :class:`RestlessArm`.

``wear_repair_arm``
    a machine that wears out while it runs (passive) and is repaired when visited (active).
``birth_death_arm``
    a chain that moves one state up or down per period, with its own rates under each action
    (a queue served when active, a population, an inventory).
``random_arm``
    dense random rows and Gaussian rewards from a seed, for tests and benchmarks.

Conventions as in :mod:`whittle_lib.arms`: action ``0`` passive, ``1`` active, rewards
maximised (a cost is a negative reward).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_numeric, check_integer, check_real, check_rng
from .arms import RestlessArm

__all__ = ["wear_repair_arm", "birth_death_arm", "random_arm"]


def _per_state(name: str, value, n: int, low: float = -math.inf,
               high: float = math.inf) -> np.ndarray:
    """A number, or one number per state, within ``[low, high]`` and finite."""
    raw = as_numeric(name, value)
    if raw.dtype.kind == "b":
        raise TypeError(f"{name} must be a number or one number per state, got {value!r}")
    try:
        array = np.broadcast_to(raw.astype(float), (n,)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or {n} numbers (one per state), got "
                         f"{value!r}") from None
    bad = ~(np.isfinite(array) & (array >= low) & (array <= high))
    if bad.any():
        x = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must lie in [{low}, {high}] in every state, got "
                         f"{float(array[x])!r} in state {x}")
    return array


def wear_repair_arm(n_levels: int, *, wear: float, repair_cost: float = 0.0,
                    repair_success: float = 1.0) -> RestlessArm:
    r"""A machine with wear levels ``0`` (new) to ``n_levels - 1`` (worn out).

    Passive (the machine runs): from level ``x`` it wears to ``x + 1`` with probability
    ``wear`` (the last level stays) and yields :math:`1 - x / (K - 1)`, ``K = n_levels``.
    Active (a repair visit): back to level 0 with probability ``repair_success`` (else it stays
    where it is), yielding nothing and paying ``repair_cost``. The Whittle index of level
    ``x`` (the subsidy at which running and repairing are equally good) grows with ``x``.

    Parameters
    ----------
    n_levels : int
        Number of wear levels, ``>= 2``.
    wear : float
        Probability in [0, 1] of wearing one level per period of running.
    repair_cost : float
        Cost of a repair, ``>= 0``.
    repair_success : float
        Probability in (0, 1] that a repair returns the machine to level 0.

    Examples
    --------
    >>> arm = wear_repair_arm(3, wear=0.5, repair_cost=0.1)
    >>> arm.P0.tolist(), arm.R0.tolist(), arm.R1.tolist()
    ([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]], [1.0, 0.5, 0.0], [-0.1, -0.1, -0.1])
    """
    K = check_integer("n_levels", n_levels, 2)
    p = check_real("wear", wear, 0.0, 1.0)
    cost = check_real("repair_cost", repair_cost, 0.0, math.inf, high_open=True)
    q = check_real("repair_success", repair_success, 0.0, 1.0, low_open=True)
    x = np.arange(K)
    P0 = np.zeros((K, K))
    P0[x[:-1], x[:-1]] = 1.0 - p
    P0[x[:-1], x[:-1] + 1] = p
    P0[K - 1, K - 1] = 1.0
    P1 = (1.0 - q) * np.eye(K)
    P1[:, 0] += q
    return RestlessArm(P0=P0, P1=P1, R0=1.0 - x / (K - 1), R1=np.full(K, -cost))


def birth_death_arm(n_states: int, *, up, down, R0, R1) -> RestlessArm:
    """A birth-death chain on ``0 .. n_states - 1`` under each action.

    From state ``x`` under action ``a`` the chain moves to ``x + 1`` with probability
    ``up[a]``, to ``x - 1`` with probability ``down[a]`` and stays otherwise; a move out of
    the range is cancelled (the chain stays at ``0`` or at ``n_states - 1``).

    Parameters
    ----------
    n_states : int
        ``>= 1``.
    up, down : pair of (float or array_like of shape (n_states,))
        ``(passive, active)`` probabilities of moving up and down, each in [0, 1] with
        ``up[a] + down[a] <= 1`` in every state.
    R0, R1 : float or array_like, shape (n_states,)
        Rewards of the passive and the active action.

    Examples
    --------
    A queue of at most 3 jobs: one arrives with probability 0.3 each period, one is served
    with probability 0.6 when the server visits (active); holding costs 1 per job.

    >>> arm = birth_death_arm(4, up=(0.3, 0.3), down=(0.0, 0.6), R0=-np.arange(4.0),
    ...                       R1=-np.arange(4.0))
    >>> arm.P1[1].round(12).tolist()
    [0.6, 0.1, 0.3, 0.0]
    """
    n = check_integer("n_states", n_states, 1)
    pairs = {}
    for name, value in (("up", up), ("down", down)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise TypeError(f"{name} must be a pair (passive, active), got "
                            f"{type(value).__name__} {value!r}")
        if len(value) != 2:
            raise ValueError(f"{name} must be a pair (passive, active), got {value!r}")
        pairs[name] = [_per_state(f"{name}[{a}]", value[a], n, 0.0, 1.0) for a in (0, 1)]
    R0 = _per_state("R0", R0, n)
    R1 = _per_state("R1", R1, n)
    matrices = []
    x = np.arange(n)
    for a in (0, 1):
        u, d = pairs["up"][a].copy(), pairs["down"][a].copy()
        if (u + d > 1.0 + 1e-12).any():       # a sum of two probabilities, one rounding
            state = int(np.flatnonzero(u + d > 1.0 + 1e-12)[0])
            raise ValueError(f"up[{a}] + down[{a}] must be at most 1, got "
                             f"{u[state]!r} + {d[state]!r} in state {state}")
        u[-1] = 0.0
        d[0] = 0.0
        P = np.zeros((n, n))
        P[x[:-1], x[:-1] + 1] = u[:-1]
        P[x[1:], x[1:] - 1] = d[1:]
        P[x, x] = 1.0 - u - d
        matrices.append(P)
    return RestlessArm(P0=matrices[0], P1=matrices[1], R0=R0, R1=R1)


def random_arm(n_states: int, *, rng=None, concentration: float = 1.0) -> RestlessArm:
    """A random dense arm: Dirichlet rows and standard normal rewards.

    Parameters
    ----------
    n_states : int
        ``>= 1``.
    rng : numpy.random.Generator or seed
        The random stream (``numpy.random.default_rng(rng)``).
    concentration : float
        Dirichlet parameter of every row, ``> 0``: small values give sparse-looking rows.

    Examples
    --------
    >>> arm = random_arm(3, rng=1)
    >>> arm.n_states, bool(np.allclose(arm.P0.sum(axis=1), 1.0))
    (3, True)
    """
    n = check_integer("n_states", n_states, 1)
    alpha = check_real("concentration", concentration, 0.0, math.inf, low_open=True,
                       high_open=True)
    generator = check_rng(rng)
    P0, P1 = generator.dirichlet(np.full(n, alpha), size=(2, n))
    # Dirichlet draws sum to one within an ulp or two; renormalise to be safe
    P0 /= P0.sum(axis=1, keepdims=True)
    P1 /= P1.sum(axis=1, keepdims=True)
    R0, R1 = generator.normal(size=(2, n))
    return RestlessArm(P0=P0, P1=P1, R0=R0, R1=R1)
