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
from functools import cached_property

import numpy as np

from ._results import fingerprint as _fingerprint
from ._validation import ROW_SUM_TOL, as_numeric, finite_vector, stochastic_matrix

__all__ = ["RestlessArm", "ROW_SUM_TOL", "from_markovianbandit", "to_markovianbandit",
           "from_mdptoolbox", "to_mdptoolbox", "from_quantecon", "to_quantecon"]

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
        P0 = stochastic_matrix("P0", self.P0)
        n = P0.shape[0]
        P1 = stochastic_matrix("P1", self.P1, n)
        object.__setattr__(self, "P0", P0)
        object.__setattr__(self, "P1", P1)
        object.__setattr__(self, "R0", finite_vector("R0", self.R0, n, what="one reward per state"))
        object.__setattr__(self, "R1", finite_vector("R1", self.R1, n, what="one reward per state"))

    @property
    def n_states(self) -> int:
        """Number of states ``n``."""
        return self.P0.shape[0]

    @cached_property
    def fingerprint(self) -> str:
        """A digest of ``P0, P1, R0, R1`` (32 hex digits): results computed for this arm carry
        it, and functions given a result refuse one whose fingerprint is another arm's."""
        return _fingerprint(self.P0, self.P1, self.R0, self.R1)

    def __repr__(self) -> str:
        return f"RestlessArm(n_states={self.n_states}, fingerprint={self.fingerprint[:12]!r})"

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
        P1 = stochastic_matrix("P1", P1)
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
    T = as_numeric("transitions", transitions)
    R = as_numeric("rewards", rewards)
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
    P = as_numeric("P", P)
    R = as_numeric("R", R)
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
    R = as_numeric("R", R)
    Q = as_numeric("Q", Q)
    _two_actions("Q", Q, 1, 3)
    _two_actions("R", R, 1, 2)
    if not np.isfinite(R).all():
        raise ValueError("R must be finite: both actions of an arm are feasible in every state")
    return RestlessArm(P0=Q[:, 0, :], P1=Q[:, 1, :], R0=R[:, 0], R1=R[:, 1])


def to_quantecon(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(R[s, a], Q[s, a, s'])``, the arguments of QuantEcon's ``DiscreteDP(R, Q, beta)``."""
    _check_arm(arm)
    return np.stack([arm.R0, arm.R1], axis=1), np.stack([arm.P0, arm.P1], axis=1)
