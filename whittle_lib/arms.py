"""Finite two-action restless arms.

An arm has ``n`` states and two actions: passive (``0``) and active (``1``). Action ``a``
moves the state with the row-stochastic matrix ``Pa`` and pays the reward vector ``Ra``
(reward maximisation; a cost is a negative reward). The subsidy ``lam`` of the Whittle
relaxation is *not* part of the arm: the index functions of :mod:`whittle_lib.indices` add it
to the passive reward (Whittle 1988).

The peer libraries lay the same arm out differently; the converters below go both ways
(action ``0`` is passive, ``1`` active in all three):

============================  ==========================  ===============================
library                       transitions                 rewards
============================  ==========================  ===============================
markovianbandit-pkg           ``T[s, a, s']``, (n, 2, n)  ``R[s, a]``, (n, 2)
pymdptoolbox                  ``P[a, s, s']``, (2, n, n)  ``R[s, a]`` or ``R[a, s, s']``
QuantEcon ``DiscreteDP``      ``Q[s, a, s']``, (n, 2, n)  ``R[s, a]``, (n, 2)
============================  ==========================  ===============================

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world",
   *Journal of Applied Probability* 25A, 287-298, 1988 (Sec. 2, the subsidy for passivity).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RestlessArm", "ROW_SUM_TOL", "from_markovianbandit", "to_markovianbandit",
           "from_mdptoolbox", "to_mdptoolbox", "from_quantecon", "to_quantecon"]

#: Absolute tolerance on each row sum of ``P0`` and ``P1``: rows built in floating point
#: (normalised random rows, products of stochastic matrices) sum to one within a few hundred
#: ulps, while a transcription error (a dropped or mistyped entry) is far larger than this.
ROW_SUM_TOL = 1e-9


def _row_sum_tol(dtype, n: int) -> float:
    """The row-sum tolerance for a matrix given in ``dtype`` with ``n`` columns.

    :data:`ROW_SUM_TOL` for double precision; for a lower precision (``float32``,
    ``float16``) the rounding of ``n`` stored entries, ``n * eps(dtype)`` (a float32 row of
    normalised entries sums to one within a few ulps of float32, about 1e-7).
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 8:
        return max(ROW_SUM_TOL, n * float(np.finfo(dtype).eps))
    return ROW_SUM_TOL


def _numeric(name: str, value) -> np.ndarray:
    """``value`` as an array of numbers (bool, int or float), or a TypeError naming it."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as error:      # ragged nested lists
        raise ValueError(f"{name} must be an array of numbers, got {value!r} ({error})") \
            from None
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__} "
                        f"of dtype {raw.dtype}")
    return raw


def _as_matrix(name: str, value, n: int | None) -> np.ndarray:
    raw = _numeric(name, value)
    array = np.array(raw, dtype=float, copy=True)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {array.shape}")
    if n is not None and array.shape != (n, n):
        raise ValueError(f"{name} must have shape {(n, n)} like P0, got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} must have at least one state, got shape {array.shape}")
    bad_rows = ~np.isfinite(array).all(axis=1)
    if bad_rows.any():
        state = int(np.flatnonzero(bad_rows)[0])
        raise ValueError(f"{name} has a non-finite entry in the row of state {state}: "
                         f"{array[state].tolist()}")
    negative_rows = (array < 0).any(axis=1)
    if negative_rows.any():
        state = int(np.flatnonzero(negative_rows)[0])
        raise ValueError(f"{name} has a negative probability in the row of state {state}: "
                         f"min {float(array[state].min())!r}")
    tol = _row_sum_tol(raw.dtype, array.shape[1])
    deviation = np.abs(array.sum(axis=1) - 1.0)
    if (deviation > tol).any():
        state = int(np.argmax(deviation > tol))
        raise ValueError(f"{name} row of state {state} sums to {float(array[state].sum())!r}, "
                         f"not 1 (tolerance {tol:.3g}); if the rows are right up to rounding, "
                         f"renormalise them: {name} / {name}.sum(axis=1, keepdims=True)")
    if tol > ROW_SUM_TOL:
        # lower-precision input accepted within its own rounding: renormalised in float64
        array /= array.sum(axis=1, keepdims=True)
    array.setflags(write=False)
    return array


def _as_vector(name: str, value, n: int) -> np.ndarray:
    array = np.array(_numeric(name, value), dtype=float, copy=True)
    if array.shape != (n,):
        raise ValueError(f"{name} must have shape {(n,)} (one reward per state), "
                         f"got shape {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        state = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} is not finite in state {state}: {float(array[state])!r}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class RestlessArm:
    """A finite restless arm: two transition matrices and two reward vectors.

    Parameters
    ----------
    P0, P1 : array_like, shape (n, n)
        Transition matrices of the passive (``P0``) and the active (``P1``) action:
        ``Pa[x, y]`` is the probability of moving from ``x`` to ``y`` under action ``a``.
        Entries must be finite and non-negative, and each row must sum to one within
        :data:`ROW_SUM_TOL`; a ``float32`` (or ``float16``) matrix within ``n`` ulps of its
        own precision, and is then renormalised in ``float64``.
    R0, R1 : array_like, shape (n,)
        One-step rewards of the passive and the active action, finite.

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite or negative entry, or a row that does not sum to one;
        the message names the matrix or vector and the offending state.
    TypeError
        On an entry that is not a number (a string, ``None``).

    Notes
    -----
    The arrays are copied to ``float64`` and made read-only, so an arm cannot change after its
    indices have been computed. Equality is identity (``eq=False``): compare the arrays
    themselves when needed.

    A *rested* arm (Gittins' setting) freezes when passive and pays nothing: ``P0 = I`` and
    ``R0 = 0``; :meth:`rested` builds one.

    Examples
    --------
    >>> arm = RestlessArm(P0=[[1.0, 0.0], [0.5, 0.5]], P1=[[0.2, 0.8], [0.0, 1.0]],
    ...                   R0=[0.0, 0.0], R1=[1.0, 2.0])
    >>> arm.n_states
    2
    >>> RestlessArm(P0=[[1.0, 0.1], [0.5, 0.5]], P1=[[0.2, 0.8], [0.0, 1.0]],
    ...             R0=[0.0, 0.0], R1=[1.0, 2.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: P0 row of state 0 sums to 1.1, not 1 (tolerance 1e-09); ... renormalise them: ...
    """

    P0: np.ndarray
    P1: np.ndarray
    R0: np.ndarray
    R1: np.ndarray

    def __post_init__(self) -> None:
        P0 = _as_matrix("P0", self.P0, None)
        n = P0.shape[0]
        P1 = _as_matrix("P1", self.P1, n)
        object.__setattr__(self, "P0", P0)
        object.__setattr__(self, "P1", P1)
        object.__setattr__(self, "R0", _as_vector("R0", self.R0, n))
        object.__setattr__(self, "R1", _as_vector("R1", self.R1, n))

    @property
    def n_states(self) -> int:
        """Number of states ``n``."""
        return self.P0.shape[0]

    @classmethod
    def rested(cls, P1, R1) -> "RestlessArm":
        """A rested arm: the passive action freezes the state and pays nothing.

        Parameters
        ----------
        P1 : array_like, shape (n, n)
            Transition matrix of the active action.
        R1 : array_like, shape (n,)
            Reward of the active action.

        Returns
        -------
        RestlessArm
            The arm with ``P0 = I`` and ``R0 = 0``.
        """
        P1 = _as_matrix("P1", P1, None)
        n = P1.shape[0]
        return cls(P0=np.eye(n), P1=P1, R0=np.zeros(n), R1=R1)


def _two_actions(name: str, array: np.ndarray, axis: int, ndim: int) -> None:
    if array.ndim != ndim or array.shape[axis] != 2:
        raise ValueError(f"{name} must have 2 actions (passive 0, active 1) on axis {axis} "
                         f"of {ndim}, got shape {array.shape}")


def from_markovianbandit(transitions, rewards) -> RestlessArm:
    """The arm of markovianbandit-pkg's layout (``RestlessBandit(transitions, rewards)``).

    Parameters
    ----------
    transitions : array_like, shape (n, 2, n)
        ``transitions[s, a, s']``.
    rewards : array_like, shape (n, 2)
        ``rewards[s, a]``.

    Examples
    --------
    >>> arm = from_markovianbandit([[[1, 0], [0, 1]], [[0, 1], [1, 0]]], [[0, 1], [0, 2]])
    >>> arm.P1.tolist(), arm.R1.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [1.0, 2.0])
    """
    T = _numeric("transitions", transitions)
    R = _numeric("rewards", rewards)
    _two_actions("transitions", T, 1, 3)
    _two_actions("rewards", R, 1, 2)
    return RestlessArm(P0=T[:, 0, :], P1=T[:, 1, :], R0=R[:, 0], R1=R[:, 1])


def _check_arm(arm) -> None:
    if not isinstance(arm, RestlessArm):
        raise TypeError(f"arm must be a RestlessArm, got {type(arm).__name__}")


def to_markovianbandit(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(transitions[s, a, s'], rewards[s, a])`` for markovianbandit-pkg's ``RestlessBandit``."""
    _check_arm(arm)
    return np.stack([arm.P0, arm.P1], axis=1), np.stack([arm.R0, arm.R1], axis=1)


def from_mdptoolbox(P, R) -> RestlessArm:
    """The arm of pymdptoolbox's layout (``mdptoolbox.mdp.*(P, R, discount)``).

    Parameters
    ----------
    P : array_like, shape (2, n, n)
        ``P[a, s, s']``.
    R : array_like, shape (n, 2) or (2, n, n)
        ``R[s, a]``, or ``R[a, s, s']`` (a reward on each transition); the latter becomes the
        expected reward ``sum_s' P[a, s, s'] R[a, s, s']``, as pymdptoolbox computes it.
    """
    P = _numeric("P", P)
    R = _numeric("R", R)
    _two_actions("P", P, 0, 3)
    if R.ndim == 3:
        if R.shape != P.shape:
            raise ValueError(f"R[a, s, s'] must have P's shape {P.shape}, got {R.shape}")
        R = np.einsum("ast,ast->sa", P, R)
    _two_actions("R", R, 1, 2)
    return RestlessArm(P0=P[0], P1=P[1], R0=R[:, 0], R1=R[:, 1])


def to_mdptoolbox(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(P[a, s, s'], R[s, a])`` for pymdptoolbox (reward maximisation, as there)."""
    _check_arm(arm)
    return np.stack([arm.P0, arm.P1]), np.stack([arm.R0, arm.R1], axis=1)


def from_quantecon(R, Q) -> RestlessArm:
    """The arm of QuantEcon's ``DiscreteDP(R, Q, beta)`` in its product formulation.

    Parameters
    ----------
    R : array_like, shape (n, 2)
        ``R[s, a]``; ``-inf`` marks an infeasible action, which an arm cannot have.
    Q : array_like, shape (n, 2, n)
        ``Q[s, a, s']``.
    """
    R = _numeric("R", R)
    Q = _numeric("Q", Q)
    _two_actions("Q", Q, 1, 3)
    _two_actions("R", R, 1, 2)
    if not np.isfinite(R).all():
        raise ValueError("R must be finite: both actions of an arm are feasible in every state")
    return RestlessArm(P0=Q[:, 0, :], P1=Q[:, 1, :], R0=R[:, 0], R1=R[:, 1])


def to_quantecon(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(R[s, a], Q[s, a, s'])``, the arguments of QuantEcon's ``DiscreteDP(R, Q, beta)``."""
    _check_arm(arm)
    return np.stack([arm.R0, arm.R1], axis=1), np.stack([arm.P0, arm.P1], axis=1)
