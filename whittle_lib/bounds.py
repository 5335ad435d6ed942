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

Average reward (``discount=None``) or discounted from initial states ``x0``
(``discount`` in (0, 1)). Both are solved either as the linear program over occupation
measures (any arms) or, for indexable arms, through the structure of the Lagrangian dual
(faster by orders of magnitude). The tests check that the two agree.

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world", *J. Appl.
   Probab.* 25A, 287-298, 1988 (the relaxation and its bound, Sec. 3-4).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994 (the linear programs of
   Sec. 6.9 and 8.8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .arms import RestlessArm

__all__ = ["RelaxationBound", "relaxation_bound"]

_ACTIVATIONS = ("at_most", "exactly")
_METHODS = ("auto", "dual", "lp")


@dataclass(frozen=True, eq=False)
class RelaxationBound:
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
        Read-only.
    method : {"dual", "lp"}
        How it was solved: the dual over the Whittle indices, or the linear program.
    """

    bound: float
    subsidy: float
    activation: str = "exactly"
    discount: float | None = None
    shares: np.ndarray | None = None
    method: str = "dual"

    def __post_init__(self) -> None:
        if self.shares is not None:
            shares = np.array(self.shares, dtype=float)
            shares.setflags(write=False)
            object.__setattr__(self, "shares", shares)


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


def _check_budget(M, N: int) -> int:
    if isinstance(M, (bool, np.bool_)) or not isinstance(M, (int, np.integer, float, np.floating)):
        raise TypeError(f"M must be an integer in [0, N={N}], got {M!r}")
    if not math.isfinite(M) or int(M) != M or not 0 <= M <= N:
        raise ValueError(f"M must be an integer in [0, N={N}], got {M!r}")
    return int(M)


def _check_bound_discount(discount) -> float | None:
    if discount is None:
        return None
    if isinstance(discount, (bool, np.bool_)) or not isinstance(
            discount, (int, float, np.integer, np.floating)):
        raise TypeError(f"discount must be a number in (0, 1) or None, got {discount!r}")
    discount = float(discount)
    if discount == 1.0:
        return None
    if not 0.0 < discount < 1.0:
        raise ValueError("discount must lie in (0, 1), or be None (or 1.0) for the "
                         f"average-reward criterion, got {discount!r}")
    return discount


def _check_x0(x0, arms, discount) -> np.ndarray | None:
    N = len(arms)
    if discount is None:
        if x0 is not None:
            raise ValueError("x0 applies to the discounted bound only (the average-reward "
                             f"bound does not depend on the initial states), got x0={x0!r}")
        return None
    if x0 is None:
        return np.zeros(N, dtype=int)
    x = np.asarray(x0)
    if x.shape != (N,) or not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x0 must hold one integer state per arm (shape ({N},)), got {x0!r}")
    sizes = np.array([a.n_states for a in arms])
    bad = (x < 0) | (x >= sizes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x0[{i}] must be a state of arms[{i}] (0..{sizes[i] - 1}), "
                         f"got {int(x[i])}")
    return x.astype(int)


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
    found by bisection on the sign of its slope (one batched policy evaluation per arm per
    probe, :math:`\approx \log_2(Nn)` probes). Any arms, indexable or not: the linear program
    over occupation measures [P94]_ (:func:`scipy.optimize.linprog`, HiGHS) has the same
    value (strong duality).

    Parameters
    ----------
    arms : sequence of RestlessArm
        Any finite arms, possibly of different sizes.
    M : int
        Budget, ``0 <= M <= N``.
    activation : {"at_most", "exactly"}
        Which relaxation (above).
    discount : float in (0, 1), optional
        ``None`` (or ``1.0``) for the average-reward criterion.
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
    progress : bool, optional
        Show a progress bar (tqdm) over the arms' index computations; by default only on an
        interactive terminal.

    Returns
    -------
    RelaxationBound
        The bound, a minimising subsidy, which relaxation, each arm's share of activation.

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
    M = _check_budget(M, N)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {_ACTIVATIONS}, got {activation!r}")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    discount = _check_bound_discount(discount)
    x0 = _check_x0(x0, arms, discount)
    if method == "lp":
        return _solve_lp(arms, M, activation, discount, x0)
    if indices is None:
        tables = _index_tables(arms, discount, progress, strict=method == "dual")
    else:
        tables = _given_tables(indices, arms, discount, strict=method == "dual")
    if tables is None:
        return _solve_lp(arms, M, activation, discount, x0)
    return _solve_dual(arms, tables, M, activation, discount, x0)


def _progress(iterable, total: int, progress: bool | None, desc: str):
    if progress is False:
        return iterable
    from tqdm.auto import tqdm

    # disable=None: tqdm shows the bar only when its stream is a terminal
    return tqdm(iterable, total=total, desc=desc, disable=None if progress is None else False,
                leave=False)


def _index_tables(arms, discount, progress, *, strict: bool):
    """The Whittle indices of every arm, or ``None`` if one is not indexable (``strict``:
    raise instead)."""
    import warnings

    from .indices import IndexStatus, whittle_indices

    tables = []
    beta = 1.0 if discount is None else discount
    for i, arm in enumerate(_progress(arms, len(arms), progress, "Whittle indices")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # the verdict is in the status
            result = whittle_indices(arm, discount=beta)
        if result.status is not IndexStatus.INDEXABLE:
            if strict:
                raise ValueError(f"arms[{i}] is {result.status.value} (discount={beta}): "
                                 "method='dual' needs indexable arms; use method='lp' or "
                                 "'auto'")
            return None
        tables.append(result.indices)
    return tables


def _given_tables(results, arms, discount, *, strict: bool):
    from .indices import WhittleIndexResult

    beta = 1.0 if discount is None else discount
    if isinstance(results, WhittleIndexResult) or not hasattr(results, "__len__"):
        raise TypeError("indices must be a sequence of WhittleIndexResult (one per arm), got "
                        f"{type(results).__name__}")
    if len(results) != len(arms):
        raise ValueError(f"indices must hold one WhittleIndexResult per arm ({len(arms)}), "
                         f"got {len(results)}")
    tables = []
    for i, (result, arm) in enumerate(zip(results, arms)):
        if not isinstance(result, WhittleIndexResult):
            raise TypeError(f"indices[{i}] must be a WhittleIndexResult (from "
                            f"whittle_indices), got {type(result).__name__}")
        if result.discount != beta or result.indices.shape != (arm.n_states,):
            raise ValueError(f"indices[{i}] is for discount={result.discount} and "
                             f"{result.indices.size} states, but arms[{i}] has "
                             f"{arm.n_states} states and the bound discount={beta}")
        if not result.indexable:
            if strict:
                raise ValueError(f"arms[{i}] is {result.status.value} (indices[{i}]): "
                                 "method='dual' needs indexable arms; use method='lp'")
            return None
        tables.append(result.indices)
    return tables


class _Group:
    """Arms of one size, stacked for batched policy evaluation."""

    def __init__(self, members, arms, tables, discount, x0):
        self.members = np.asarray(members)
        n = arms[members[0]].n_states
        self.P0 = np.stack([arms[i].P0 for i in members])
        self.P1 = np.stack([arms[i].P1 for i in members])
        self.R0 = np.stack([arms[i].R0 for i in members])
        self.R1 = np.stack([arms[i].R1 for i in members])
        self.W = np.stack([tables[i] for i in members])
        self.discount = discount
        eye = np.eye(n)
        self.eye = eye
        rhs = np.zeros((len(members), n))
        if discount is None:
            rhs[:, 0] = 1.0                            # pi^T A = e_0^T (see evaluate)
        else:
            rhs[np.arange(len(members)), x0[self.members]] = 1.0
        self.rhs = rhs[:, :, None]

    def evaluate(self, lam: float, strict: bool):
        """Per arm: the reward part and the passive part of the optimal policy at ``lam``.

        The policy is passive where the index is ``<= lam`` (``strict``: ``< lam``, the
        optimal policy just left of ``lam``). Average reward: its stationary distribution
        ``pi`` solves ``pi^T A = e_0^T`` with ``A = I - P_S`` whose column 0 is replaced by
        ones (the normalisation; the policy is unichain for an indexable arm, [GGK23] of
        :mod:`whittle_lib.indices`). Discounted: ``u^T = e_{x0}^T (I - beta P_S)^{-1}``,
        the discounted occupation measure from ``x0``. The gain (value) at subsidy ``lam``
        is ``u . r_S + lam * u . 1_S``.
        """
        passive = self.W < lam if strict else self.W <= lam
        P = np.where(passive[:, :, None], self.P0, self.P1)
        r = np.where(passive, self.R0, self.R1)
        if self.discount is None:
            A = self.eye - P
            A[:, :, 0] = 1.0
        else:
            A = self.eye - self.discount * P
        u = np.linalg.solve(np.swapaxes(A, 1, 2), self.rhs)[:, :, 0]
        return np.einsum("gx,gx->g", u, r), np.einsum("gx,gx->g", u, passive)


def _solve_dual(arms, tables, M, activation, discount, x0) -> RelaxationBound:
    N = len(arms)
    scale = 1.0 if discount is None else 1.0 / (1.0 - discount)
    target = (N - M) * scale                           # passive time the budget asks for
    sizes = np.array([a.n_states for a in arms])
    groups = [_Group(np.flatnonzero(sizes == n), arms, tables, discount, x0)
              for n in np.unique(sizes)]

    def evaluate(lam, strict=False):
        base = np.empty(N)
        passive = np.empty(N)
        for g in groups:
            base[g.members], passive[g.members] = g.evaluate(lam, strict)
        return base, passive

    kinks = np.concatenate(tables)
    kinks = np.unique(kinks[np.isfinite(kinks)])
    if activation == "at_most":
        kinks = np.unique(np.concatenate([[0.0], kinks[kinks > 0.0]]))
    elif kinks.size == 0:                              # every index +inf: no kink at all
        kinks = np.array([0.0])
    # D's right slope sum_i p_i(lam) - target is non-decreasing: find the first kink where it
    # is >= 0. Tolerance: passive times are sums of n positive terms, exact to ~1e-12 relative.
    tol = 1e-9 * max(1.0, N * scale)

    def slope_ok(k):
        return evaluate(float(kinks[k]))[1].sum() - target >= -tol

    lo, hi = 0, kinks.size - 1
    if not slope_ok(hi):
        # every index of some arm is +inf above the last kink, and D still decreases: the
        # dual's structure does not settle it; the linear program does
        return _solve_lp(arms, M, activation, discount, x0)
    while lo < hi:
        mid = (lo + hi) // 2
        if slope_ok(mid):
            hi = mid
        else:
            lo = mid + 1
    lam = float(kinks[lo])
    base_r, pass_r = evaluate(lam)
    bound = float(np.sum(base_r + lam * pass_r) - lam * target)
    # shares: mix the policies just left and right of lam so that the passive time meets the
    # target (exactly), or stays above it (at most)
    _, pass_l = evaluate(lam, strict=True)
    low, high = pass_l.sum(), pass_r.sum()
    if activation == "at_most" and lam == 0.0 and low >= target - tol:
        theta = 0.0
    elif high - low > tol:
        theta = float(np.clip((target - low) / (high - low), 0.0, 1.0))
    else:
        theta = 1.0
    passive = (1.0 - theta) * pass_l + theta * pass_r
    shares = 1.0 - passive / scale
    return RelaxationBound(bound, lam, activation, discount, shares, "dual")


def _solve_lp(arms, M, activation, discount, x0) -> RelaxationBound:
    """The relaxation as a linear program over occupation measures [P94]_.

    Variables ``y_i(x, a) >= 0``. Average reward: ``sum_a y_i(y, a) = sum_{x,a} y_i(x, a)
    P_a(x, y)`` and ``sum y_i = 1`` for each arm; discounted: ``sum_a y_i(y, a) - beta
    sum_{x,a} y_i(x, a) P_a(x, y) = 1{y = x0_i}``. Budget: ``sum_i sum_x y_i(x, 1)`` equal to
    (or at most) ``M``, discounted ``M / (1 - beta)``. Maximise ``sum y_i(x, a) R_a(x)``.
    """
    from scipy import optimize, sparse

    beta = 1.0 if discount is None else discount
    blocks, rhs, cost, budget = [], [], [], []
    for i, arm in enumerate(arms):
        n = arm.n_states
        eye = np.eye(n)
        balance = np.hstack([eye - beta * arm.P0.T, eye - beta * arm.P1.T])
        if discount is None:
            balance = np.vstack([balance, np.ones((1, 2 * n))])
            b = np.zeros(n + 1)
            b[n] = 1.0
        else:
            b = np.zeros(n)
            b[x0[i]] = 1.0
        blocks.append(sparse.csr_array(balance))
        rhs.append(b)
        cost.append(-np.concatenate([arm.R0, arm.R1]))
        budget.append(np.concatenate([np.zeros(n), np.ones(n)]))
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
    shares, offset = np.empty(len(arms)), 0
    for i, arm in enumerate(arms):
        n = arm.n_states
        shares[i] = res.x[offset + n:offset + 2 * n].sum() / scale
        offset += 2 * n
    return RelaxationBound(float(-res.fun), subsidy, activation, discount, shares, "lp")
