r"""Whittle's relaxation bounds for N restless arms with a budget of M activations.

Two relaxations, each an upper bound on a different class of policies (reward maximisation;
the subsidy ``lam`` is paid for the passive action, Whittle 1988):

``activation="at_most"``
    at most ``M`` arms active *on average* (over time, or discounted over time) instead of in
    every period. It bounds **every policy that activates at most M arms in each period**
    (index policies with a threshold, policies that may idle), hence also every policy that
    activates exactly ``M``. Its optimal subsidy is ``>= 0``.
``activation="exactly"``
    exactly ``M`` arms active on average. It bounds **every policy that activates exactly M
    arms in each period**, and only those: when the arms would rather rest, a policy that
    activates fewer can earn more than this bound.

Average reward (``discount=None``, the default) or discounted from initial states ``x0``
(``discount`` in (0, 1)). Both are solved either as the linear program over occupation
measures (any arms) or, for indexable arms, through the structure of the Lagrangian dual
(faster by orders of magnitude). Identical arms (the same
:attr:`~whittle_lib.arms.RestlessArm.fingerprint`, and for the discounted bound the same
initial state) are solved once and weighted by their number. The tests check that the two
methods agree, and that grouping gives what solving every copy gives.

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world", *J. Appl.
   Probab.* 25A, 287-298, 1988 (the relaxation and its bound, Sec. 3-4).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994 (the linear programs of
   Sec. 6.9 and 8.8).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ._results import ShortRepr, pandas as _pandas
from ._validation import (as_numeric, check_activation, check_budget, check_choice,
                          check_discount)
from .arms import RestlessArm

__all__ = ["RelaxationBound", "relaxation_bound"]

_METHODS = ("auto", "dual", "lp")
#: Bytes of stacked transition matrices that the dual's batched policy evaluations (given
#: ``indices=``) hold at once: arms of one size are evaluated in chunks of this size.
_CHUNK_BYTES = 1 << 27


@dataclass(frozen=True, eq=False, repr=False)
class RelaxationBound(ShortRepr):
    """The value of Whittle's relaxation: an upper bound on what N arms can earn.

    Attributes
    ----------
    bound : float
        The relaxation's optimal value: a long-run average reward per period
        (``discount=None``), or the expected total discounted reward from ``x0``.
    subsidy : float
        A minimising subsidy ``lam`` of the dual ``sum_i g_i(lam) - lam (N - M)`` (paid per
        period for each passive arm; discounted: ``V_i`` from ``x0_i`` and ``(N - M) /
        (1 - discount)``). For ``"at_most"`` it is ``>= 0``, and ``0`` when the budget does
        not bind. A **negative** subsidy (``"exactly"`` only) is a charge for passivity: the
        arms would rather rest, so forcing ``M`` of them to work costs reward, and the
        ``"at_most"`` bound is then larger than this one.
    activation : {"at_most", "exactly"}
        Which relaxation was solved (see the module docstring for what each bounds).
    discount : float or None
        ``None`` for the average-reward criterion.
    shares : ndarray, shape (N,)
        Each arm's share of activation in an optimal relaxed solution: its long-run fraction
        of periods active (discounted: ``(1 - discount)`` times its expected discounted number
        of activations). They sum to ``M`` (``"exactly"``) or at most ``M`` (``"at_most"``).
        Identical arms get the same share. Read-only.
    method : {"dual", "lp"}
        How it was solved: the dual over the Whittle indices, or the linear program.
    """

    bound: float
    subsidy: float
    activation: str = "at_most"
    discount: float | None = None
    shares: np.ndarray | None = None
    method: str = "dual"

    def __post_init__(self) -> None:
        if self.shares is not None:
            shares = np.array(self.shares, dtype=float)
            shares.setflags(write=False)
            object.__setattr__(self, "shares", shares)

    def to_frame(self):
        """The shares of activation as a table: one row per arm (``arm``, its position in the
        arms given), column ``share``. Needs pandas.

        Examples
        --------
        >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0],
        ...                   R1=[0, 1])
        >>> relaxation_bound([arm, arm], 1).to_frame().round(6)  # doctest: +NORMALIZE_WHITESPACE
                share
        arm
        0    0.333333
        1    0.333333
        """
        pd = _pandas()
        shares = np.array([]) if self.shares is None else self.shares
        return pd.DataFrame({"share": shares}, index=pd.RangeIndex(shares.size, name="arm"))


def _check_arms(arms) -> list[RestlessArm]:
    if isinstance(arms, RestlessArm):
        raise TypeError("arms must be a sequence of RestlessArm, got a single RestlessArm: "
                        "pass [arm]")
    try:
        arms = list(arms)
    except TypeError:
        raise TypeError(f"arms must be a sequence of RestlessArm, got {type(arms).__name__}") \
            from None
    if not arms:
        raise ValueError("arms must hold at least one RestlessArm, got an empty sequence")
    for i, arm in enumerate(arms):
        if not isinstance(arm, RestlessArm):
            raise TypeError(f"arms[{i}] must be a RestlessArm, got {type(arm).__name__}")
    return arms


def _check_x0(x0, arms, discount) -> np.ndarray | None:
    N = len(arms)
    if discount is None:
        if x0 is not None:
            raise ValueError("x0 applies to the discounted bound only (the average-reward "
                             f"bound does not depend on the initial states), got x0={x0!r}")
        return None
    if x0 is None:
        return np.zeros(N, dtype=int)
    x = as_numeric("x0", x0)
    if x.dtype.kind not in "iu":
        raise TypeError(f"x0 must hold one integer state per arm, got {type(x0).__name__} of "
                        f"dtype {x.dtype}")
    if x.shape != (N,):
        raise ValueError(f"x0 must hold one integer state per arm (shape ({N},)), got shape "
                         f"{x.shape}")
    sizes = np.array([a.n_states for a in arms])
    bad = (x < 0) | (x >= sizes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x0[{i}] must be a state of arms[{i}] (0..{sizes[i] - 1}), "
                         f"got {int(x[i])}")
    return x.astype(int)


def _check_progress(progress) -> bool | None:
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__} "
                        f"{progress!r}")
    return None if progress is None else bool(progress)


def _criterion(discount) -> str:
    return "the average reward" if discount is None else f"discount={discount}"


def _check_results(results, arms, discount) -> list:
    """``indices=``: one WhittleIndexResult per arm, each computed for that arm (same
    fingerprint) and for this criterion."""
    from .indices import WhittleIndexResult

    if isinstance(results, (WhittleIndexResult, str, bytes)) or not hasattr(results, "__len__"):
        raise TypeError("indices must be a sequence of WhittleIndexResult (one per arm), got "
                        f"{type(results).__name__}")
    results = list(results)
    if len(results) != len(arms):
        raise ValueError(f"indices must hold one WhittleIndexResult per arm ({len(arms)}), "
                         f"got {len(results)}")
    for i, (result, arm) in enumerate(zip(results, arms)):
        if not isinstance(result, WhittleIndexResult):
            raise TypeError(f"indices[{i}] must be a WhittleIndexResult (from "
                            f"whittle_indices), got {type(result).__name__}")
        if result.fingerprint != arm.fingerprint:
            raise ValueError(
                f"indices[{i}] was computed for another arm (fingerprint "
                f"{result.fingerprint[:12]}...) than arms[{i}] (fingerprint "
                f"{arm.fingerprint[:12]}...): pass whittle_indices(arms[{i}]) at position {i}, "
                "or leave indices out and let the bound compute them")
        if result.discount != discount:
            raise ValueError(f"indices[{i}] is for {_criterion(result.discount)}, but the bound "
                             f"is for {_criterion(discount)}: compute the indices with "
                             f"discount={discount}")
    return results


class _Kinds:
    """The distinct problems among the arms: each distinct arm (by fingerprint) once, and for
    the discounted bound each of its distinct initial states once (a *class*), with the
    number of arms in each class."""

    def __init__(self, arms, x0):
        N = len(arms)
        first_of_object: dict[int, int] = {}
        unique_of_print: dict[str, int] = {}
        self.arms: list[RestlessArm] = []      # distinct arms
        self.first: list[int] = []             # the position of each distinct arm's first copy
        arm_of = np.empty(N, dtype=np.intp)
        for i, arm in enumerate(arms):
            u = first_of_object.get(id(arm))
            if u is None:
                # the same object is fingerprinted once; equal copies share the print
                u = unique_of_print.setdefault(arm.fingerprint, len(self.arms))
                if u == len(self.arms):
                    self.arms.append(arm)
                    self.first.append(i)
                first_of_object[id(arm)] = u
            arm_of[i] = u
        start = np.zeros(N, dtype=np.intp) if x0 is None else x0
        keys, class_of, counts = np.unique(np.stack([arm_of, start], axis=1), axis=0,
                                           return_inverse=True, return_counts=True)
        self.class_arm = keys[:, 0]            # per class: its distinct arm
        self.class_x0 = keys[:, 1]             # per class: the initial state (discounted)
        self.class_of = class_of.ravel()       # per position: its class
        self.counts = counts.astype(float)     # per class: how many arms
        self.n_arms = N


def relaxation_bound(arms: Sequence[RestlessArm], M: int, *, activation: str = "at_most",
                     discount: float | None = None, x0=None, method: str = "auto",
                     indices=None, progress: bool | None = None) -> RelaxationBound:
    r"""Whittle's relaxation bound on what N arms with budget ``M`` can earn.

    The relaxation keeps the budget only on average over time [W88]_:

    * ``activation="at_most"`` (default): the average number of active arms is at most ``M``.
      Its value bounds **every policy that activates at most M arms in each period**
      (including index policies with a threshold, and every exactly-M policy).
    * ``activation="exactly"``: the average number is exactly ``M``. Its value bounds **every
      policy that activates exactly M arms in each period**; a policy allowed to idle may
      beat it when arms would rather rest (then its subsidy is negative).

    Average reward (``discount=None``): the bound is on the long-run average reward per
    period, from any initial states. Discounted (``discount`` in (0, 1)): on the expected
    total discounted reward from the initial states ``x0``, the budget then being on the
    discounted number of activations, ``M / (1 - discount)``.

    The Lagrangian dual is

    .. math::
        D(\lambda) = \sum_i g_i(\lambda) - \lambda\,T, \qquad
        T = N - M \ \ \text{(discounted: } (N - M)/(1 - \beta)\text{)},

    with :math:`g_i(\lambda)` the optimal gain of arm ``i`` alone (discounted: its optimal
    value from :math:`x_{0,i}`) when passivity is subsidised by :math:`\lambda`; the bound is
    :math:`\min_\lambda D(\lambda)` over all real :math:`\lambda` ("exactly") or over
    :math:`\lambda \ge 0` ("at_most"). Each :math:`g_i` is convex and piecewise linear; for an
    indexable arm its kinks are the arm's Whittle indices and between two kinks the optimal
    policy is fixed (passive exactly on the states of index :math:`\le \lambda`), so
    :math:`D` is piecewise linear with kinks at the union of all indices and its minimum is
    at the first kink where its slope :math:`\sum_i p_i(\lambda) - T` turns non-negative
    (:math:`p_i` the passive time of arm ``i``'s policy). Any arms, indexable or not: the
    linear program over occupation measures [P94]_ (:func:`scipy.optimize.linprog`, HiGHS)
    has the same value (strong duality).

    Identical arms (equal :attr:`~whittle_lib.arms.RestlessArm.fingerprint`; discounted: and
    equal initial state) are one problem weighted by their number, in the dual and in the
    linear program alike (the relaxation is symmetric in them, so an optimal solution gives
    them equal shares).

    Parameters
    ----------
    arms : sequence of RestlessArm
        Any finite arms, possibly of different sizes.
    M : int
        Budget, ``0 <= M <= N``.
    activation : {"at_most", "exactly"}
        Which relaxation (above).
    discount : float or None, default None
        In (0, 1) for the discounted bound; ``None`` for the average reward (``1.0`` is
        refused: pass ``None``).
    x0 : array_like of int, shape (N,), optional
        Discounted bound only: the initial state of each arm, 0 by default (as
        :class:`~whittle_lib.rmab.FiniteArms`).
    method : {"auto", "dual", "lp"}
        ``"auto"``: the dual when every arm is indexable for the criterion (the indices are
        computed here), else the linear program. ``"dual"`` raises ``ValueError`` on a
        non-indexable or multichain arm.
    indices : sequence of WhittleIndexResult, optional
        The arms' indices for this criterion, if already computed
        (:func:`~whittle_lib.indices.whittle_indices`), so that they are not computed again.
        Each must have been computed for the arm at its position (same fingerprint) and for
        this ``discount``; another arm's result is refused (``ValueError`` naming the
        position).
    progress : bool, optional
        Show a progress bar (tqdm) over the distinct arms' index computations; by default only
        on an interactive terminal.

    Returns
    -------
    RelaxationBound
        The bound, a minimising subsidy, which relaxation, each arm's share of activation.

    Raises
    ------
    TypeError
        For an argument of the wrong type (``arms`` not arms, ``M`` not an integer, a
        ``discount`` that is not a number, ``indices`` not index results, ...).
    ValueError
        For a wrong value, naming it; for ``indices`` of another arm or criterion.

    Notes
    -----
    Cost. Without ``indices``, each distinct arm's indices are computed once by
    :func:`~whittle_lib.indices.whittle_indices`' recursion, which also follows, at
    ``O(n)`` more per index, the arm's gain (discounted: its value from each initial state)
    and passive time at every index: the dual's piecewise-linear :math:`g_i` come out of the
    index computation, and the bound costs little more than the indices of the distinct arms
    (memory: that of one arm's index computation, :math:`O(n^2)`). With ``indices``, the
    gains are evaluated at the probed kinks by batched policy evaluation (a linear solve per
    distinct problem per probe, :math:`\approx \log_2` of the number of kinks probes), in
    chunks of at most 128 MB of stacked matrices. The linear program has one block per
    distinct problem, built sparse from the matrices' non-zeros.

    Examples
    --------
    Two copies of an arm that, when active, pays 1 in state 1 and moves to state 0, and that
    otherwise drifts to state 1 with probability 1/2. Alone, each is best activated exactly
    in state 1: a cycle of 3 periods on average that pays 1, with a third of the periods
    active. With at most one activation per period the relaxation lets both do so (2/3);
    with exactly one, the spare activations are wasted in state 0, where they stop the
    drift, and the two arms take turns (1/2, a negative subsidy):

    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> at_most = relaxation_bound([arm, arm], 1)
    >>> round(at_most.bound, 12), round(at_most.subsidy, 12), at_most.shares.round(12).tolist()
    (0.666666666667, 0.0, [0.333333333333, 0.333333333333])
    >>> exactly = relaxation_bound([arm, arm], 1, activation="exactly")
    >>> round(exactly.bound, 12), exactly.subsidy < 0, exactly.shares.round(12).tolist()
    (0.5, True, [0.5, 0.5])
    """
    arms = _check_arms(arms)
    N = len(arms)
    M = check_budget(M, N)
    activation = check_activation(activation)
    method = check_choice("method", method, _METHODS)
    discount = check_discount(discount)
    x0 = _check_x0(x0, arms, discount)
    progress = _check_progress(progress)
    results = None if indices is None else _check_results(indices, arms, discount)
    kinds = _Kinds(arms, x0)
    if method == "lp":
        return _solve_lp(kinds, M, activation, discount)
    strict = method == "dual"
    if results is None:
        oracle = _curves(kinds, discount, progress, strict=strict)
    else:
        oracle = _given(kinds, results, discount, strict=strict)
    if oracle is None:
        return _solve_lp(kinds, M, activation, discount)
    return _solve_dual(kinds, oracle, M, activation, discount)


def _progress(iterable, total: int, progress: bool | None, desc: str):
    if progress is False:
        return iterable
    from tqdm.auto import tqdm

    # disable=None: tqdm shows the bar only when its stream is a terminal
    return tqdm(iterable, total=total, desc=desc, disable=None if progress is None else False,
                leave=False)


def _not_indexable(kinds, u, status, discount, strict):
    """``None`` (the linear program decides) or, for ``method="dual"``, the error."""
    if strict:
        raise ValueError(f"arms[{kinds.first[u]}] is {status} ({_criterion(discount)}): "
                         "method='dual' needs indexable arms; use method='lp' or 'auto'")
    return None


# --- the dual's slopes and values: from the index recursion, or by policy evaluation --------

class _Curves:
    """Each class's optimal gain :math:`g(\\lambda)` and passive time, known exactly as
    piecewise-linear functions from the index recursion (:func:`whittle_lib.indices._ggk`'s
    ``curve``): at the class's sorted indices ``mu``, ``g(mu[k]) = G[k]`` and the slope on
    ``(mu[k], mu[k+1])`` is ``P[k]``; below ``mu[0]`` the arm is always active (slope 0)."""

    def __init__(self, mus, Gs, Ps):
        self.kinks = [mu for mu in mus]
        sizes = np.array([mu.size for mu in mus])
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.mu = np.concatenate(mus)
        self.G = np.concatenate(Gs)
        self.P = np.concatenate(Ps)
        self.sizes = sizes

    def _last(self, lam, strict):
        """Per class, the flat position of the last kink ``<= lam`` (``< lam``), -1 if none."""
        below = self.mu < lam if strict else self.mu <= lam
        count = np.add.reduceat(below.astype(np.intp), self.offsets)
        return np.where(count > 0, self.offsets + count - 1, -1)

    def passive(self, lam: float, strict: bool = False) -> np.ndarray:
        last = self._last(lam, strict)
        return np.where(last >= 0, self.P[np.maximum(last, 0)], 0.0)

    def gain(self, lam: float) -> np.ndarray:
        last = self._last(lam, False)
        at = np.maximum(last, 0)
        return np.where(last >= 0, self.G[at] + (lam - self.mu[at]) * self.P[at],
                        self.G[self.offsets])


def _curves(kinds, discount, progress, *, strict):
    """The index recursion on each distinct arm, following the gain from each of its classes'
    initial states; ``None`` if an arm is not indexable (or ``strict``: raise)."""
    from .indices import IndexStatus, _ggk

    beta = 1.0 if discount is None else discount
    n_classes = len(kinds.counts)
    mus, Gs, Ps = [None] * n_classes, [None] * n_classes, [None] * n_classes
    classes_of = [np.flatnonzero(kinds.class_arm == u) for u in range(len(kinds.arms))]
    for u, arm in enumerate(_progress(kinds.arms, len(kinds.arms), progress,
                                      "Whittle indices")):
        n = arm.n_states
        classes = classes_of[u]
        # the rows e^T whose e^T V the recursion follows: e_0 in the average-reward system
        # (slot 0 of the unknowns is the gain), e_x0 discounted
        extra = np.zeros((classes.size, n))
        extra[np.arange(classes.size), 0 if discount is None else kinds.class_x0[classes]] = 1.0
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore",
                                                    over="ignore"):
            warnings.simplefilter("ignore")           # the verdict is in the status
            result, curve = _ggk(arm, beta, discount, extra)
        if result.status is not IndexStatus.INDEXABLE:
            return _not_indexable(kinds, u, result.status.value, discount, strict)
        mu, G, P, complete = curve
        if not complete:
            # every state passive is a multichain policy: its gain is not one number
            return _not_indexable(kinds, u, "multichain when every state rests", discount,
                                  strict)
        for column, c in enumerate(classes):
            mus[c], Gs[c], Ps[c] = mu, G[:, column], P[:, column]
    return _Curves(mus, Gs, Ps)


class _Evaluations:
    """Each class's gain and passive time at a subsidy, by policy evaluation of the optimal
    policy (passive where the index is ``<= lam``, or ``< lam``): the classes of one size
    stacked for a batched solve, in chunks of at most :data:`_CHUNK_BYTES`."""

    def __init__(self, kinds, tables, discount):
        self.kinks = tables
        self.discount = discount
        sizes = np.array([kinds.arms[u].n_states for u in kinds.class_arm])
        self.n_classes = sizes.size
        self.chunks = []
        for n in np.unique(sizes):
            members = np.flatnonzero(sizes == n)
            per = max(1, int(_CHUNK_BYTES // (2 * 8 * n * n)))
            for start in range(0, members.size, per):
                chunk = members[start:start + per]
                self.chunks.append(_Chunk(kinds, chunk, tables, discount,
                                          keep=chunk.size * 2 * 8 * n * n <= _CHUNK_BYTES))

    def evaluate(self, lam: float, strict: bool = False):
        gain = np.empty(self.n_classes)
        passive = np.empty(self.n_classes)
        for chunk in self.chunks:
            gain[chunk.members], passive[chunk.members] = chunk.evaluate(lam, strict)
        return gain, passive

    def passive(self, lam: float, strict: bool = False) -> np.ndarray:
        return self.evaluate(lam, strict)[1]

    def gain(self, lam: float) -> np.ndarray:
        return self.evaluate(lam)[0]


class _Chunk:
    """Classes of one size, stacked (or, a single class, its arm's own matrices)."""

    def __init__(self, kinds, members, tables, discount, keep):
        self.members = members
        self.arms = [kinds.arms[u] for u in kinds.class_arm[members]]
        n = self.arms[0].n_states
        self.W = np.stack([tables[c] for c in members])
        self.discount = discount
        self.eye = np.eye(n)
        rhs = np.zeros((members.size, n))
        if discount is None:
            rhs[:, 0] = 1.0                            # pi^T A = e_0^T (see evaluate)
        else:
            rhs[np.arange(members.size), kinds.class_x0[members]] = 1.0
        self.rhs = rhs[:, :, None]
        self.R0 = np.stack([a.R0 for a in self.arms])
        self.R1 = np.stack([a.R1 for a in self.arms])
        self.stacked = self._stack() if keep else None

    def _stack(self):
        if len(self.arms) == 1:                        # views, no copy
            return self.arms[0].P0[None], self.arms[0].P1[None]
        return (np.stack([a.P0 for a in self.arms]), np.stack([a.P1 for a in self.arms]))

    def evaluate(self, lam: float, strict: bool):
        """Per class: the gain and the passive time of the optimal policy at ``lam``.

        The policy is passive where the index is ``<= lam`` (``strict``: ``< lam``, the
        optimal policy just left of ``lam``). Average reward: its stationary distribution
        ``pi`` solves ``pi^T A = e_0^T`` with ``A = I - P_S`` whose column 0 is replaced by
        ones (the normalisation; the policy is unichain for an indexable arm, [GGK23] of
        :mod:`whittle_lib.indices`). Discounted: ``u^T = e_{x0}^T (I - beta P_S)^{-1}``,
        the discounted occupation measure from ``x0``. The gain (value) at subsidy ``lam``
        is ``u . r_S + lam * u . 1_S``.
        """
        P0, P1 = self.stacked if self.stacked is not None else self._stack()
        passive = self.W < lam if strict else self.W <= lam
        P = np.where(passive[:, :, None], P0, P1)
        r = np.where(passive, self.R0, self.R1)
        if self.discount is None:
            A = np.subtract(self.eye, P, out=P)
            A[:, :, 0] = 1.0
        else:
            P *= -self.discount
            A = np.add(self.eye, P, out=P)
        u = np.linalg.solve(np.swapaxes(A, 1, 2), self.rhs)[:, :, 0]
        time = np.einsum("gx,gx->g", u, passive)
        return np.einsum("gx,gx->g", u, r) + lam * time, time


def _given(kinds, results, discount, *, strict):
    """The dual's oracle from index results already computed (one per arm, checked)."""
    tables = []
    for c, u in enumerate(kinds.class_arm):
        result = results[kinds.first[u]]
        if not result.indexable:
            if strict:
                raise ValueError(f"arms[{kinds.first[u]}] is {result.status.value} (indices"
                                 f"[{kinds.first[u]}]): method='dual' needs indexable arms; "
                                 "use method='lp'")
            return None
        tables.append(result.indices)
    return _Evaluations(kinds, tables, discount)


def _solve_dual(kinds, oracle, M, activation, discount) -> RelaxationBound:
    N = kinds.n_arms
    counts = kinds.counts
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    target = (N - M) * scale                           # passive time the budget asks for
    kinks = np.concatenate(oracle.kinks)
    kinks = np.unique(kinks[np.isfinite(kinks)])
    if activation == "at_most":
        kinks = np.unique(np.concatenate([[0.0], kinks[kinks > 0.0]]))
    elif kinks.size == 0:                              # every index +inf: no kink at all
        kinks = np.array([0.0])
    # D's right slope sum_i p_i(lam) - target is non-decreasing: find the first kink where it
    # is >= 0. Tolerance: passive times are sums of n positive terms, exact to ~1e-12 relative.
    tol = 1e-9 * max(1.0, N * scale)

    def slope_ok(k):
        return counts @ oracle.passive(float(kinks[k])) - target >= -tol

    lo, hi = 0, kinks.size - 1
    if not slope_ok(hi):
        # every index of some arm is +inf above the last kink, and D still decreases: the
        # dual's structure does not settle it; the linear program does
        return _solve_lp(kinds, M, activation, discount)
    while lo < hi:
        mid = (lo + hi) // 2
        if slope_ok(mid):
            hi = mid
        else:
            lo = mid + 1
    lam = float(kinks[lo])
    gain, pass_r = oracle.gain(lam), oracle.passive(lam)
    bound = float(counts @ gain - lam * target)
    # shares: mix the policies just left and right of lam so that the passive time meets the
    # target (exactly), or stays above it (at most)
    pass_l = oracle.passive(lam, strict=True)
    low, high = counts @ pass_l, counts @ pass_r
    if activation == "at_most" and lam == 0.0 and low >= target - tol:
        theta = 0.0
    elif high - low > tol:
        theta = float(np.clip((target - low) / (high - low), 0.0, 1.0))
    else:
        theta = 1.0
    passive = (1.0 - theta) * pass_l + theta * pass_r
    shares = 1.0 - passive[kinds.class_of] / scale
    return RelaxationBound(bound, lam, activation, discount, shares, "dual")


def _solve_lp(kinds, M, activation, discount) -> RelaxationBound:
    """The relaxation as a linear program over occupation measures [P94]_.

    Variables ``y_c(x, a) >= 0``, one set per class ``c`` of ``w_c`` identical arms. Average
    reward: ``sum_a y_c(y, a) = sum_{x,a} y_c(x, a) P_a(x, y)`` and ``sum y_c = 1``;
    discounted: ``sum_a y_c(y, a) - beta sum_{x,a} y_c(x, a) P_a(x, y) = 1{y = x0_c}``.
    Budget: ``sum_c w_c sum_x y_c(x, 1)`` equal to (or at most) ``M``, discounted ``M / (1 -
    beta)``. Maximise ``sum_c w_c sum y_c(x, a) R_a(x)``. (The program of the ``N`` arms one
    by one is symmetric in identical arms, so averaging an optimal solution over them gives
    one with equal occupation measures: this one.) The blocks are built sparse from the
    matrices' non-zeros.
    """
    from scipy import optimize, sparse

    beta = 1.0 if discount is None else discount
    blocks, rhs, cost, budget = [], [], [], []
    for c, u in enumerate(kinds.class_arm):
        arm, weight = kinds.arms[u], kinds.counts[c]
        n = arm.n_states
        eye = sparse.eye_array(n, format="csr")
        balance = sparse.hstack([eye - beta * sparse.csr_array(arm.P0.T),
                                 eye - beta * sparse.csr_array(arm.P1.T)], format="csr")
        if discount is None:
            balance = sparse.vstack([balance, sparse.csr_array(np.ones((1, 2 * n)))],
                                    format="csr")
            b = np.zeros(n + 1)
            b[n] = 1.0
        else:
            b = np.zeros(n)
            b[kinds.class_x0[c]] = 1.0
        blocks.append(balance)
        rhs.append(b)
        cost.append(-weight * np.concatenate([arm.R0, arm.R1]))
        budget.append(np.concatenate([np.zeros(n), np.full(n, weight)]))
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    A_arms = sparse.block_diag(blocks, format="csr")
    budget_row = sparse.csr_array(np.concatenate(budget)[None, :])
    c = np.concatenate(cost)
    b_arms = np.concatenate(rhs)
    if activation == "exactly":
        A_eq = sparse.vstack([A_arms, budget_row], format="csr")
        res = optimize.linprog(c, A_eq=A_eq, b_eq=np.append(b_arms, M * scale),
                               bounds=(0, None), method="highs")
    else:
        res = optimize.linprog(c, A_ub=budget_row, b_ub=[M * scale], A_eq=A_arms,
                               b_eq=b_arms, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the relaxation's linear program failed: {res.message}")
    # the marginal of the budget is d(-bound)/d(budget); the subsidy for passivity is the
    # price of one activation per period: -marginal (per unit of M / scale, times scale)
    marginal = res.eqlin.marginals[-1] if activation == "exactly" else res.ineqlin.marginals[0]
    subsidy = float(-marginal) + 0.0
    class_shares, offset = np.empty(len(kinds.counts)), 0
    for c, u in enumerate(kinds.class_arm):
        n = kinds.arms[u].n_states
        class_shares[c] = res.x[offset + n:offset + 2 * n].sum() / scale
        offset += 2 * n
    return RelaxationBound(float(-res.fun), subsidy, activation, discount,
                           class_shares[kinds.class_of], "lp")
