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
                          check_discount, check_real, distinct_objects)
from .arms import RestlessArm

__all__ = ["RelaxationBound", "relaxation_bound", "RelaxationSolution", "relaxation_solution"]

_METHODS = ("auto", "dual", "lp", "decomposition")
#: Bytes of stacked transition matrices that the dual's batched policy evaluations (given
#: ``indices=``) hold at once: arms of one size are evaluated in chunks of this size.
_CHUNK_BYTES = 1 << 27
#: A state whose occupation in the relaxation's solution is below this share of the arm's
#: total is unvisited (its policy is the action optimal at the subsidy).
_UNVISITED = 1e-12
#: Decimals of the single-arm policies of :class:`RelaxationSolution` (machine-independent).
_POLICY_DECIMALS = 12


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
    method : {"dual", "lp", "decomposition"}
        How it was solved: the dual over the Whittle indices, the linear program (HiGHS), or
        its Lagrangian decomposition (:func:`relaxation_solution`).
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
    distinct, _, first = distinct_objects(arms)        # each object checked once
    for i, arm in zip(first, distinct):
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
        unique_of_print: dict[str, int] = {}
        self.arms: list[RestlessArm] = []      # distinct arms
        self.first: list[int] = []             # the position of each distinct arm's first copy
        # each object fingerprinted once (in order of first occurrence); equal copies share
        # the print
        objects, kind, first = distinct_objects(arms)
        of_object = np.empty(len(objects), dtype=np.intp)
        for k, (arm, i) in enumerate(zip(objects, first)):
            u = unique_of_print.setdefault(arm.fingerprint, len(self.arms))
            if u == len(self.arms):
                self.arms.append(arm)
                self.first.append(i)
            of_object[k] = u
        arm_of = of_object[kind]
        start = np.zeros(N, dtype=np.intp) if x0 is None else np.asarray(x0, dtype=np.intp)
        # the classes (distinct arm, initial state), sorted by arm then state
        width = int(start.max()) + 1
        keys, class_of, counts = np.unique(arm_of * width + start, return_inverse=True,
                                           return_counts=True)
        self.class_arm = keys // width         # per class: its distinct arm
        self.class_x0 = keys % width           # per class: the initial state (discounted)
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
    method : {"auto", "dual", "lp", "decomposition"}
        ``"auto"``: the dual when every arm is indexable for the criterion (the indices are
        computed here), else the linear program. ``"dual"`` raises ``ValueError`` on a
        non-indexable or multichain arm. ``"decomposition"``: the linear program solved
        through its Lagrangian decomposition into single-arm problems
        (:func:`relaxation_solution`, which also gives the occupation measures and relative
        values), for any arms, at a cost linear in the number of distinct arms (the simplex
        method of ``"lp"`` takes minutes on 10,000 distinct arms); the same value to
        rounding, the subsidy the optimal one closest to 0.
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
    if method == "decomposition":
        sol = _decompose(kinds, M, activation, discount, None, arms)
        return RelaxationBound(sol.bound, sol.subsidy, activation, discount, sol.shares,
                               "decomposition")
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


# --- the relaxation's solution for any arms: Lagrangian decomposition -----------------------

@dataclass(frozen=True, eq=False, repr=False)
class RelaxationSolution(ShortRepr):
    r"""An optimal solution of Whittle's relaxation, for any arms: what the LP-based policies use.

    The relaxation's linear program over occupation measures ([P94]_; module docstring) has an
    optimal solution, an optimal subsidy (its dual price of the budget) and, at that subsidy,
    each arm's optimal relative values: :func:`relaxation_solution` gives all three, the
    occupation measures mixing at most two optimal policies per arm.

    Attributes
    ----------
    bound : float
        The relaxation's value (the same as :func:`relaxation_bound`'s, to rounding).
    subsidy : float
        The chosen optimal subsidy ``lam`` for passivity (see ``subsidy_range``).
    subsidy_range : tuple of float
        ``(low, high)``: every optimal subsidy. The dual is not unique when the dual function
        is flat at its minimum (a relaxation whose unsubsidised optimum meets the budget by
        itself, as Hong et al.'s eight-state arm); ``subsidy`` is then the one closest to 0,
        unless given. ``-inf`` / ``inf`` when the range is unbounded (``M = N``, ``M = 0``).
    activation : {"at_most", "exactly"}
    discount : float or None
    shares : ndarray, shape (N,)
        Each arm's share of activation (as :attr:`RelaxationBound.shares`). Read-only.
    occupation : tuple of ndarray
        Per arm, ``y[x, a]`` of shape ``(n_i, 2)``: its long-run fraction of periods in state
        ``x`` under action ``a`` (sums to 1); discounted: its expected discounted number of
        periods from ``x0`` (sums to ``1 / (1 - discount)``). Identical arms share one array.
    values : tuple of ndarray
        Per arm, at ``subsidy``: its optimal relative values ``h`` (average reward, a solution
        of ``g + h(x) = max(R0(x) + lam + P0 h, R1(x) + P1 h)`` with ``h[0] = 0`` when the
        optimal policy is unichain), or its optimal value function ``V`` (discounted).
    gains : ndarray, shape (N,), or None
        Average reward: each arm's optimal gain at ``subsidy`` (the relaxation's single-arm
        value, subsidy included); ``None`` when discounted.
    fingerprints : tuple of str
        Per arm, the :attr:`~whittle_lib.arms.RestlessArm.fingerprint` it was solved for.
    evaluations : int
        Subsidies at which the single-arm problems were solved.
    """

    bound: float
    subsidy: float
    subsidy_range: tuple
    activation: str
    discount: float | None
    shares: np.ndarray
    occupation: tuple
    values: tuple
    gains: np.ndarray | None
    fingerprints: tuple
    evaluations: int

    def __post_init__(self) -> None:
        for name in ("shares", "gains"):
            value = getattr(self, name)
            if value is not None:
                value = np.array(value, dtype=float)
                value.setflags(write=False)
                object.__setattr__(self, name, value)

    @property
    def n_arms(self) -> int:
        return len(self.occupation)

    def policy(self, i: int) -> np.ndarray:
        """Arm ``i``'s optimal single-arm policy in the relaxation: the probability of the
        active action in each state, ``y[x, 1] / (y[x, 0] + y[x, 1])``, and where the
        solution never visits ``x`` (occupation below ``1e-12`` of the arm's total), the
        action optimal at ``subsidy`` (1/2 on a tie). Rounded to 12 decimals: the last bits
        of the linear solves depend on the machine, the policy does not."""
        return self._policies[i]

    def to_frame(self):
        """One row per arm: ``share`` and (average reward) ``gain``; needs pandas."""
        pd = _pandas()
        columns = {"share": self.shares}
        if self.gains is not None:
            columns["gain"] = self.gains
        return pd.DataFrame(columns, index=pd.RangeIndex(self.shares.size, name="arm"))


class _Profile:
    """Every class's optimal policy at one subsidy, its gain (discounted: value from ``x0``),
    passive time, state occupation and relative values (discounted: values)."""

    def __init__(self, lam, policies, gain, passive, occupation, values):
        self.lam = lam
        self.policies = policies          # list of int arrays (1 active)
        self.gain = gain                  # (C,)
        self.passive = passive            # (C,)
        self.occupation = occupation      # list of (n_c,) state occupations
        self.values = values              # list of (n_c,)


def _stack_group(kinds, members):
    arms = [kinds.arms[u] for u in kinds.class_arm[members]]
    P = np.stack([np.stack([a.P0, a.P1]) for a in arms])        # (K, 2, n, n)
    R = np.stack([np.stack([a.R0, a.R1]) for a in arms])        # (K, 2, n)
    return P, R


class _Arms:
    """The classes of :class:`_Kinds` grouped by size, their matrices stacked once, solved at
    any subsidy by Howard's policy iteration in lock-step (a batched LAPACK solve per step)."""

    def __init__(self, kinds, discount):
        self.kinds = kinds
        self.discount = discount
        sizes = np.array([kinds.arms[u].n_states for u in kinds.class_arm])
        self.groups = []
        for n in np.unique(sizes):
            members = np.flatnonzero(sizes == n)
            P, R = _stack_group(kinds, members)
            self.groups.append((members, P, R))
        self.n_classes = sizes.size
        self.scale_reward = max(float(max(np.abs(R).max() for _, _, R in self.groups)), 1e-300)

    def solve(self, lam: float, start=None) -> _Profile:
        C = self.n_classes
        policies = [None] * C
        gain, passive = np.empty(C), np.empty(C)
        occupation, values = [None] * C, [None] * C
        for members, P, R in self.groups:
            pol0 = None if start is None else np.stack([start.policies[c] for c in members])
            out = self._solve_group(members, P, R, lam, pol0)
            for k, c in enumerate(members.tolist()):
                policies[c], occupation[c], values[c] = out[0][k], out[3][k], out[4][k]
            gain[members], passive[members] = out[1], out[2]
        return _Profile(lam, policies, gain, passive, occupation, values)

    def _solve_group(self, members, P, R, lam, policy):
        K, _, n, _ = P.shape
        beta = 1.0 if self.discount is None else self.discount
        r = R.copy()
        r[:, 0] += lam
        eye = np.eye(n)
        states = np.arange(n)
        rows = np.arange(K)[:, None]
        policy = (np.argmax(r, axis=1) if policy is None else policy).astype(np.intp)
        tol = 1e-12 * (self.scale_reward + abs(lam)) / (1.0 - beta if beta < 1 else 1e-3)
        fallback = np.zeros(K, dtype=bool)
        for _ in range(10 * n + 100):
            P_pi = P[rows, policy, states]                          # (K, n, n)
            r_pi = r[rows, policy, states]                          # (K, n)
            v, fallback = self._evaluate(P_pi, r_pi, eye, beta, fallback)
            if self.discount is None:                # slot 0 holds the gain, h[0] = 0
                gain, v = v[:, 0].copy(), v.copy()
                v[:, 0] = 0.0
            q = r + beta * np.einsum("kaxy,ky->kax", P, v)
            best = np.argmax(q, axis=1)
            switch = (q[rows, best, states] - q[rows, policy, states] > tol) & ~fallback[:, None]
            if not switch.any():
                break
            policy = np.where(switch, best, policy)
        else:
            # Howard's unichain steps can cycle on an arm with multichain policies: those
            # classes go to multichain policy iteration
            fallback |= switch.any(axis=1)
        P_pi = P[rows, policy, states]
        if self.discount is None:
            A = eye - P_pi
            A[:, :, 0] = 1.0
            rhs = np.zeros((K, n, 1))
            rhs[:, 0] = 1.0
        else:
            A = eye - beta * P_pi
            rhs = np.zeros((K, n, 1))
            rhs[np.arange(K), self.kinds.class_x0[members]] = 1.0
        u = np.zeros((K, n))
        ok = np.flatnonzero(~fallback)
        if ok.size:
            u[ok] = np.linalg.solve(np.swapaxes(A[ok], 1, 2), rhs[ok])[:, :, 0]
        u = np.clip(u, 0.0, None)
        if self.discount is not None:
            gain = v[np.arange(K), self.kinds.class_x0[members]]
        policies, occupations, vals = list(policy), list(u), list(v)
        for k in np.flatnonzero(fallback).tolist():       # a multichain optimal policy
            pol, g, occ, h = self._multichain(P[k], r[k])
            policies[k], gain[k], occupations[k], vals[k] = pol, g, occ, h
            u[k] = occ
        passive = np.einsum("kx,kx->k", u, policy == 0) if not fallback.any() else \
            np.array([float(o @ (p == 0)) for o, p in zip(occupations, policies)])
        return policies, gain, passive, occupations, vals

    def _evaluate(self, P_pi, r_pi, eye, beta, fallback):
        """Values (discounted) or gain in slot 0 and bias (average, unichain) of each policy;
        a class whose policy is multichain is marked for the multichain solver."""
        if self.discount is not None:
            return np.linalg.solve(eye - beta * P_pi, r_pi[:, :, None])[:, :, 0], fallback
        A = eye - P_pi
        A[:, :, 0] = 1.0
        try:
            v = np.linalg.solve(A, r_pi[:, :, None])[:, :, 0]
            # a multichain policy makes A singular; LAPACK may return a huge, meaningless
            # solution instead of failing: its residual gives it away
            size = 1.0 + np.abs(r_pi).max(axis=1)
            residual = np.abs(np.einsum("kxy,ky->kx", A, v) - r_pi).max(axis=1)
            bad = ~np.isfinite(v).all(axis=1) | (residual > 1e-8 * size) \
                | (np.abs(v).max(axis=1) > 1e12 * size)
        except np.linalg.LinAlgError:
            v = np.zeros(r_pi.shape)
            bad = np.zeros(len(r_pi), dtype=bool)
            for k in range(len(r_pi)):
                try:
                    v[k] = np.linalg.solve(A[k], r_pi[k])
                except np.linalg.LinAlgError:
                    bad[k] = True
        fallback = fallback | bad
        v[fallback] = 0.0
        return v, fallback

    @staticmethod
    def _multichain(P, r):
        """One class by multichain policy iteration: the best recurrent class (the linear
        program's single-arm optimum), its occupation, and the bias."""
        from . import mdp

        model = mdp.FiniteMDP([P[0], P[1]], rewards=r.T)
        sol = mdp.policy_iteration(model, evaluation="direct")
        pol = sol.policy.astype(np.intp)
        n = pol.size
        P_pi = np.where(pol[:, None] == 1, P[1], P[0])
        r_pi = np.where(pol == 1, r[1], r[0])
        dists = mdp.stationary_distributions(P_pi)
        gains = dists @ r_pi
        best = int(np.argmax(gains))
        h = np.asarray(sol.bias, dtype=float)
        h = h - h[0] if n else h
        return pol, float(gains[best]), dists[best], h


def relaxation_solution(arms: Sequence[RestlessArm], M: int, *, activation: str = "at_most",
                        discount: float | None = None, x0=None,
                        subsidy: float | None = None) -> RelaxationSolution:
    r"""An optimal solution of Whittle's relaxation for any arms: occupation measures, the
    optimal subsidy (with the range of optimal ones) and each arm's relative values there.

    The relaxation (:func:`relaxation_bound`) is a linear program over occupation measures
    with one coupling row, the budget, so it decomposes (Lagrangian decomposition,
    [W88]_ Sec. 3): its value is :math:`\min_\lambda D(\lambda)`, :math:`D(\lambda) =
    \sum_i g_i(\lambda) - \lambda T`, over all real :math:`\lambda` ("exactly") or
    :math:`\lambda \ge 0` ("at_most"), with :math:`g_i(\lambda)` the optimal gain (discounted:
    value from ``x0``) of arm ``i`` alone when passivity earns :math:`\lambda`. Each
    :math:`g_i` is convex and piecewise linear in :math:`\lambda`, with slope the passive time
    of an optimal policy. The minimum is found by cutting planes on this one-dimensional
    convex function (each cut: every distinct arm solved at one subsidy by Howard's policy
    iteration, batched over the arms of one size), which end at the exact minimiser in
    finitely many steps; an optimal solution of the linear program then mixes, with one
    weight for all arms, the optimal policies just left and just right of the minimiser, so
    that the budget holds (strong duality and complementary slackness, [P94]_ Sec. 8.8).
    It is the same program as :func:`relaxation_bound`'s ``method="lp"`` (HiGHS): the value is
    the same to rounding, but the solution and the subsidy may be another optimal one when
    the optimum is not unique. Its cost grows linearly with the number of distinct arms
    (10,000 distinct 10-state arms in about a second, where the simplex method takes
    minutes).

    Parameters
    ----------
    arms : sequence of RestlessArm
    M : int
        Budget, ``0 <= M <= N``.
    activation : {"at_most", "exactly"}
        Which relaxation (as :func:`relaxation_bound`).
    discount : float or None
        ``None`` (default) for the average reward; in (0, 1) for the discounted relaxation
        from ``x0``.
    x0 : array_like of int, optional
        Discounted only: each arm's initial state (0 by default).
    subsidy : float, optional
        Fix the subsidy among the optimal ones (``subsidy_range``): the dual is not unique when
        the dual function is flat at its minimum, and the relative values (so an LP-priority
        order) depend on the one taken. Default: the optimal subsidy closest to 0. A subsidy
        outside the optimal range is refused (``ValueError`` naming the range).

    Returns
    -------
    RelaxationSolution

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or value (as :func:`relaxation_bound`).
    RuntimeError
        If the cutting planes do not settle within their iteration limit (never seen).

    Notes
    -----
    Average reward: an arm whose optimal policy at some subsidy has several recurrent classes
    is solved there by multichain policy iteration (:func:`whittle_lib.mdp.policy_iteration`)
    and contributes its best class, as the linear program does.

    Examples
    --------
    The arm of :func:`relaxation_bound`'s example, two copies, at most one active:

    >>> arm = RestlessArm(P0=[[0.5, 0.5], [0, 1]], P1=[[1, 0], [1, 0]], R0=[0, 0], R1=[0, 1])
    >>> sol = relaxation_solution([arm, arm], 1)
    >>> round(sol.bound, 12), sol.subsidy, sol.subsidy_range
    (0.666666666667, 0.0, (0.0, 0.0))
    >>> sol.occupation[0].round(6).tolist()          # y[x, a]: active in state 1 only
    [[0.666667, 0.0], [0.0, 0.333333]]
    """
    arms = _check_arms(arms)
    N = len(arms)
    M = check_budget(M, N)
    activation = check_activation(activation)
    discount = check_discount(discount)
    x0 = _check_x0(x0, arms, discount)
    if subsidy is not None:
        subsidy = check_real("subsidy", subsidy, low_open=True, high_open=True)
    kinds = _Kinds(arms, x0)
    return _decompose(kinds, M, activation, discount, subsidy, arms)


def _decompose(kinds, M, activation, discount, subsidy, arms) -> RelaxationSolution:
    solver = _Arms(kinds, discount)
    counts = kinds.counts
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    T = (kinds.n_arms - M) * scale
    size = counts.sum() * scale * (solver.scale_reward + 1.0)
    tol = 1e-10 * size
    points: dict[float, tuple] = {}
    last = [None]

    def evaluate(lam):
        lam = float(lam) + 0.0
        if lam not in points:
            prof = solver.solve(lam, last[0])
            last[0] = prof
            D = float(counts @ prof.gain) - lam * T
            s = float(counts @ prof.passive) - T
            points[lam] = (D, s, prof)
        return points[lam]

    def line(lam):
        D, s, _ = points[lam]
        return D - s * lam, s                       # intercept, slope

    floor = 0.0 if activation == "at_most" else -np.inf
    step = max(solver.scale_reward, 1.0) * scale
    D0, s0, _ = evaluate(0.0)
    left = right = flat = None
    if abs(s0) <= tol or (activation == "at_most" and s0 > 0):
        flat = 0.0 if abs(s0) <= tol else None
        kink = None if flat is not None else (0.0, None, None)   # the boundary minimum
    else:
        kink = None
        if s0 < 0:
            left = 0.0
        else:
            right = 0.0
        lam = 0.0
        for _ in range(200):
            lam = lam + step if right is None else lam - step
            D, s, _ = evaluate(lam)
            if abs(s) <= tol:
                flat = lam
                break
            if s > 0:
                if right is None:
                    right = lam
                    break
            elif left is None:
                left = lam
                break
            step *= 4.0
        else:
            raise RuntimeError("the relaxation's dual function has no minimum in range")
        for _ in range(10_000):
            if flat is not None or kink is not None:
                break
            (a_l, s_l), (a_r, s_r) = line(left), line(right)
            c = (a_l - a_r) / (s_r - s_l)
            if not left < c < right:
                c = min(max(c, left), right)
            model = max(a_l + s_l * c, a_r + s_r * c)
            D, s, _ = evaluate(c)
            if D <= model + tol or c in (left, right):
                kink = (c, left, right)
            elif abs(s) <= tol:
                flat = c
            elif s < 0:
                left = c
            else:
                right = c
        else:
            raise RuntimeError("the relaxation's cutting planes did not settle")
    if flat is not None:
        level = points[flat][0]
        lo_end = _search(evaluate, line, flat, level, left, -step, tol, floor)
        hi_end = _search(evaluate, line, flat, level, right, step, tol, np.inf)
        (low, low_side), (high, high_side) = lo_end, hi_end
    else:
        c = kink[0]
        low = high = c
        low_side = high_side = None
    # the chosen subsidy and two optimal profiles there, of slopes <= 0 and >= 0
    if subsidy is None:
        chosen = min(max(0.0, low), high)
    else:
        slack = 1e-9 * (1.0 + abs(subsidy))
        if not low - slack <= subsidy <= high + slack:
            raise ValueError(f"subsidy must be an optimal subsidy of this relaxation, in "
                             f"[{low:.10g}, {high:.10g}], got {subsidy!r}")
        chosen = min(max(subsidy, low), high)
    if flat is None:
        c, l, r = kink
        pair = (points[c][2],) if l is None else (points[l][2], points[r][2])
        at = c
    elif low < chosen < high:
        D, s, prof = evaluate(chosen)
        pair = (prof,) if abs(s) <= tol else (points[flat][2],)
        at = chosen
    else:
        side = low_side if chosen == low else high_side
        pair = (points[flat][2],) if side is None else (points[side][2], points[flat][2])
        at = chosen
    return _solution(kinds, solver, pair, at, (low, high), T, tol, activation, discount,
                     arms, len(points))


def _search(evaluate, line, flat, level, side, step, tol, limit):
    """The end of the flat bottom of ``D`` (value ``level``) beyond ``flat`` in the direction
    of ``step``: Newton's steps on the piecewise-linear ``D`` from a point ``side`` where it
    is above the level (found by stepping out if ``None``), each landing where the current
    piece meets the level. Returns the end and the point whose profile is optimal there and
    just beyond (``None`` when the end is ``limit`` or the range is unbounded)."""
    direction = np.sign(step)
    if side is None:
        lam = flat
        for _ in range(60):
            lam = lam + step
            if direction < 0 and lam < limit:
                lam = float(limit)
            D, s, _ = evaluate(lam)
            if D > level + tol:
                side = lam
                break
            if lam == limit:
                return float(limit), None
            step *= 4.0
        else:
            return (-np.inf if direction < 0 else np.inf), None
    for _ in range(10_000):
        a, s = line(side)
        if abs(s) <= tol:
            return float(side), None
        end = (level - a) / s
        D, s_end, _ = evaluate(end)
        if D <= level + tol or end == side:
            return float(end), side
        side = end
    raise RuntimeError("the flat bottom of the relaxation's dual did not settle")


def _solution(kinds, solver, pair, lam, subsidy_range, T, tol, activation, discount,
              arms, evaluations) -> RelaxationSolution:
    counts = kinds.counts
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    if len(pair) == 1:
        theta = 1.0
        first = second = pair[0]
    else:
        first, second = sorted(pair, key=lambda p: float(counts @ p.passive))
        low, high = float(counts @ first.passive), float(counts @ second.passive)
        if activation == "at_most" and lam == 0.0 and low >= T - tol:
            theta = 1.0                                  # the most active one fits
        elif high - low > tol:
            theta = float(np.clip((high - T) / (high - low), 0.0, 1.0))
        else:
            theta = 1.0
    C = len(counts)
    occ_class, pol_class = [], []
    for c in range(C):
        ys = []
        for prof in (first, second):
            u, pol = prof.occupation[c], np.asarray(prof.policies[c])
            y = np.zeros((u.size, 2))
            y[np.arange(u.size), pol] = u
            ys.append(y)
        y = theta * ys[0] + (1.0 - theta) * ys[1]
        y.setflags(write=False)
        occ_class.append(y)
    # values at lam: one optimal profile solved at lam itself
    here = solver.solve(lam, first) if first.lam != lam else first
    gains = here.gain if discount is None else None
    values_class = []
    for c in range(C):
        v = np.array(here.values[c], dtype=float)
        v.setflags(write=False)
        values_class.append(v)
        beta = 1.0 if discount is None else discount
        arm = kinds.arms[kinds.class_arm[c]]
        mass = occ_class[c].sum(axis=1)
        q1 = arm.R1 + beta * arm.P1 @ v
        q0 = arm.R0 + lam + beta * arm.P0 @ v
        gap = q1 - q0
        act = np.where(gap > 1e-9 * (1.0 + np.abs(q1) + np.abs(q0)), 1.0,
                       np.where(gap < -1e-9 * (1.0 + np.abs(q1) + np.abs(q0)), 0.0, 0.5))
        # The occupation measures come out of linear solves, whose last bits depend on the
        # machine's BLAS kernels: a state the solution never visits may hold 1e-17 rather than
        # 0, and an action taken surely 1 - 1e-16 rather than 1. Below a relative 1e-12 a state
        # counts as unvisited, and the probabilities are rounded to 12 decimals, so that the
        # policy, and every draw a rule makes from it, is the same on every machine.
        visited = mass > _UNVISITED * mass.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            prob = np.where(visited, occ_class[c][:, 1] / np.where(visited, mass, 1.0), act)
        prob = np.round(prob, _POLICY_DECIMALS) + 0.0
        prob.setflags(write=False)
        pol_class.append(prob)
    shares_class = np.array([occ.sum(axis=0)[1] for occ in occ_class]) / scale
    of = kinds.class_of
    prints = [kinds.arms[a].fingerprint for a in kinds.class_arm.tolist()]
    # every profile optimal at lam has the same gains: the dual's value there
    bound = float(counts @ here.gain) - lam * T
    solution = RelaxationSolution(
        bound=float(bound), subsidy=float(lam) + 0.0,
        subsidy_range=(float(subsidy_range[0]) + 0.0, float(subsidy_range[1]) + 0.0),
        activation=activation, discount=discount, shares=shares_class[of],
        occupation=tuple(occ_class[c] for c in of.tolist()),
        values=tuple(values_class[c] for c in of.tolist()),
        gains=None if gains is None else gains[of],
        fingerprints=tuple(prints[c] for c in of.tolist()), evaluations=evaluations)
    object.__setattr__(solution, "_policies", tuple(pol_class[c] for c in of.tolist()))
    object.__setattr__(solution, "_class_of", of)
    return solution
