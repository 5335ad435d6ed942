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
from ._validation import (ROW_SUM_TOL, as_numeric, check_choice, finite_vector,
                          stochastic_matrix)

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


#: What ``layout="action_first"`` means in every converter: the action is the first axis,
#: as ``numpy.stack([P0, P1])`` and ``numpy.stack([R0, R1])`` give them.
ACTION_FIRST = "action_first"


def _from_layout(peer: str, T_name: str, T, R_name: str, R, layout, *, T_axis: int,
                 peer_form: str) -> RestlessArm:
    """The arm of transitions ``T`` and rewards ``R`` laid out as ``peer`` lays them (the action
    on axis ``T_axis`` of ``T``, rewards ``R[s, a]``, or ``R[a, s, s']`` for pymdptoolbox) or
    action first (``layout="action_first"``: ``T[a, s, s']``, ``R[a, s]``).

    With ``layout=None`` the shapes decide; where both readings fit them (2 states) the caller
    must say which, since a wrong guess builds a valid but wrong arm.
    """
    if layout is not None:
        layout = check_choice("layout", layout, (peer, ACTION_FIRST))
    T = as_numeric(T_name, T)
    R = as_numeric(R_name, R)
    first_form = f"{T_name}[a, s, s'] of shape (2, n, n) and {R_name}[a, s] of shape (2, n)"
    shapes = f"{T_name} has shape {T.shape} and {R_name} has shape {R.shape}"
    n = T.shape[-1] if T.ndim == 3 else None

    def fits(reading: str) -> bool:
        axis = T_axis if reading == peer else 0
        if n is None or T.shape[axis] != 2 or np.delete(T.shape, axis).tolist() != [n, n]:
            return False
        if R.ndim == 3:                           # R[a, s, s'] (pymdptoolbox), either reading
            return peer == "mdptoolbox" and R.shape == (2, n, n)
        return R.shape == ((n, 2) if reading == peer else (2, n))

    readings = [reading for reading in (peer, ACTION_FIRST) if fits(reading)]
    both = (f"{peer}'s layout is {peer_form}; layout='{ACTION_FIRST}' is {first_form}")
    if layout is None:
        if len(readings) == 2 and (T_axis != 0 or R.ndim == 2):
            raise ValueError(f"{shapes}: with 2 states both layouts have these shapes, so a "
                             f"guess could build a wrong arm; name it, layout='{peer}' or "
                             f"layout='{ACTION_FIRST}' ({both})")
        if readings == [ACTION_FIRST]:
            raise ValueError(f"{shapes}, the action-first layout: pass "
                             f"layout='{ACTION_FIRST}' if that is what they are ({both})")
        if not readings:
            raise ValueError(f"{shapes}, which is neither layout: {both}")
        layout = peer
    elif layout not in readings:
        raise ValueError(f"{shapes}, not the shapes of layout={layout!r}: {both}")
    axis = T_axis if layout == peer else 0
    P0, P1 = np.take(T, 0, axis=axis), np.take(T, 1, axis=axis)
    if R.ndim == 3:                               # expected reward sum_s' P[a,s,s'] R[a,s,s']
        R0, R1 = np.einsum("ast,ast->as", np.stack([P0, P1]), R)
    elif layout == peer:
        R0, R1 = R[:, 0], R[:, 1]
    else:
        R0, R1 = R[0], R[1]
    return RestlessArm(P0=P0, P1=P1, R0=R0, R1=R1)


def from_markovianbandit(transitions, rewards, *, layout: str | None = None) -> RestlessArm:
    """The arm of markovianbandit-pkg's layout (``RestlessBandit(transitions, rewards)``).

    Parameters
    ----------
    transitions : array_like, shape (n, 2, n)
        ``transitions[s, a, s']``.
    rewards : array_like, shape (n, 2)
        ``rewards[s, a]``.
    layout : {"markovianbandit", "action_first"}, optional
        Which layout the arrays are in: ``"markovianbandit"`` (above), or ``"action_first"``
        (``transitions[a, s, s']``, shape (2, n, n), and ``rewards[a, s]``, shape (2, n):
        ``numpy.stack([P0, P1])`` and ``numpy.stack([R0, R1])``). By default the shapes say
        which, and must say markovianbandit's; **a 2-state arm must name it**, since both
        layouts then have the shapes (2, 2, 2) and (2, 2) and a wrong guess builds a valid but
        wrong arm.

    Raises
    ------
    ValueError
        For shapes of neither layout (or not of the one named), or a 2-state arm without
        ``layout``; and as :class:`RestlessArm` for the values.
    TypeError
        For entries that are not numbers, or a ``layout`` that is not a string.

    Examples
    --------
    >>> T = np.zeros((3, 2, 3)); T[:, 0, 0] = 1.0; T[:, 1, 2] = 1.0
    >>> arm = from_markovianbandit(T, [[0, 1], [0, 2], [0, 3]])
    >>> arm.P1[:, 2].tolist(), arm.R1.tolist()
    ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])

    With two states, say which layout:

    >>> arm = from_markovianbandit([[[1, 0], [0, 1]], [[0, 1], [1, 0]]], [[0, 1], [0, 2]],
    ...                            layout="markovianbandit")
    >>> arm.P1.tolist(), arm.R1.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [1.0, 2.0])
    """
    return _from_layout("markovianbandit", "transitions", transitions, "rewards", rewards,
                        layout, T_axis=1, peer_form="transitions[s, a, s'] of shape (n, 2, n) "
                        "and rewards[s, a] of shape (n, 2)")


def _check_arm(arm) -> None:
    if not isinstance(arm, RestlessArm):
        raise TypeError(f"arm must be a RestlessArm, got {type(arm).__name__}")


def to_markovianbandit(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(transitions[s, a, s'], rewards[s, a])`` for markovianbandit-pkg's ``RestlessBandit``."""
    _check_arm(arm)
    return np.stack([arm.P0, arm.P1], axis=1), np.stack([arm.R0, arm.R1], axis=1)


def from_mdptoolbox(P, R, *, layout: str | None = None) -> RestlessArm:
    """The arm of pymdptoolbox's layout (``mdptoolbox.mdp.*(P, R, discount)``).

    Parameters
    ----------
    P : array_like, shape (2, n, n), or a sequence of 2 matrices (dense or scipy.sparse)
        ``P[a, s, s']``.
    R : array_like, shape (n, 2) or (2, n, n)
        ``R[s, a]``, or ``R[a, s, s']`` (a reward on each transition); the latter becomes the
        expected reward ``sum_s' P[a, s, s'] R[a, s, s']``, as pymdptoolbox computes it.
        ``scipy.sparse`` matrices are densified.
    layout : {"mdptoolbox", "action_first"}, optional
        ``"action_first"`` takes rewards ``R[a, s]`` of shape (2, n) instead of ``R[s, a]``
        (``P`` is action first in both). By default the shapes say which, and must say
        pymdptoolbox's (``layout="mdptoolbox"``); **a 2-state arm with 2-d rewards must name
        it**: both layouts of ``R`` then have the shape (2, 2).

    Examples
    --------
    >>> P = [np.eye(3), np.full((3, 3), 1 / 3)]
    >>> arm = from_mdptoolbox(P, [[0, 1], [0, 2], [0, 3]])
    >>> arm.R1.tolist()
    [1.0, 2.0, 3.0]
    """
    return _from_layout("mdptoolbox", "P", P, "R", R, layout, T_axis=0,
                        peer_form="P[a, s, s'] of shape (2, n, n) and R[s, a] of shape (n, 2) "
                        "or R[a, s, s'] of shape (2, n, n)")


def to_mdptoolbox(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(P[a, s, s'], R[s, a])`` for pymdptoolbox (reward maximisation, as there)."""
    _check_arm(arm)
    return np.stack([arm.P0, arm.P1]), np.stack([arm.R0, arm.R1], axis=1)


def from_quantecon(R, Q, *, layout: str | None = None) -> RestlessArm:
    """The arm of QuantEcon's ``DiscreteDP(R, Q, beta)`` in its product formulation.

    Parameters
    ----------
    R : array_like, shape (n, 2)
        ``R[s, a]``; ``-inf`` marks an infeasible action, which an arm cannot have.
    Q : array_like, shape (n, 2, n)
        ``Q[s, a, s']``.
    layout : {"quantecon", "action_first"}, optional
        ``"action_first"`` takes ``R[a, s]`` of shape (2, n) and ``Q[a, s, s']`` of shape
        (2, n, n). By default the shapes say which, and must say QuantEcon's; **a 2-state arm
        must name it**: both layouts then have the shapes (2, 2) and (2, 2, 2).

    Examples
    --------
    >>> Q = np.zeros((3, 2, 3)); Q[:, 0, 0] = 1.0; Q[:, 1, 2] = 1.0
    >>> from_quantecon([[0, 1], [0, 2], [0, 3]], Q).R1.tolist()
    [1.0, 2.0, 3.0]
    """
    R_checked = as_numeric("R", R)
    if R_checked.dtype.kind == "f" and np.isinf(R_checked).any():
        raise ValueError("R must be finite: both actions of an arm are feasible in every "
                         "state (QuantEcon marks an infeasible action with -inf)")
    return _from_layout("quantecon", "Q", Q, "R", R_checked, layout, T_axis=1,
                        peer_form="Q[s, a, s'] of shape (n, 2, n) and R[s, a] of shape (n, 2)")


def to_quantecon(arm: RestlessArm) -> tuple[np.ndarray, np.ndarray]:
    """``(R[s, a], Q[s, a, s'])``, the arguments of QuantEcon's ``DiscreteDP(R, Q, beta)``."""
    _check_arm(arm)
    return np.stack([arm.R0, arm.R1], axis=1), np.stack([arm.P0, arm.P1], axis=1)
