r"""Whittle indices of a finite restless arm, with an exact indexability test.

Conventions (as ``arms``): rewards are maximised and the subsidy ``lam`` is paid for the
*passive* action, so with subsidy ``lam`` the arm pays ``R0[x] + lam`` when passive and
``R1[x]`` when active. The passive set :math:`\Pi(\lambda)` is the set of states where the
passive action is optimal (ties included). The arm is *indexable* when :math:`\Pi(\lambda)`
grows from the empty set to the whole state space as ``lam`` goes from :math:`-\infty` to
:math:`+\infty`; the Whittle index of ``x`` is then :math:`W(x) = \inf\{\lambda: x \in
\Pi(\lambda)\}` (Whittle 1988).

The criterion is ``discount``: a number in (0, 1) for the discounted reward, ``None`` (the
default) for the long-run average reward per period.

Functions
---------
whittle_indices
    every index at once, exactly, in :math:`O(n^3)` operations (Gast, Gaujal & Khun 2023,
    Algorithm 2), with the indexability test of the same paper; rested arms (``P0 = I``) and
    reset arms (every row of ``P0`` the same) are recognised and solved by state elimination
    (Sonin 2008), about one LU factorisation of work instead of five or six.
is_indexable
    the verdict alone.
is_indexable_many
    the verdicts of many small arms of the same size at once (stacked arrays), the same
    recursion vectorised over the arms.
whittle_indices_bisection
    the slow reference straight from the definition: bisection on ``lam``, every probe an
    MDP solved exactly by policy iteration. Used by the tests.
gittins_indices
    the Gittins indices of a classical (rested) bandit arm.

References
----------
.. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world",
   *Journal of Applied Probability* 25A, 287-298, 1988.
.. [GGK23] N. Gast, B. Gaujal, K. Khun, "Testing indexability and computing Whittle and
   Gittins index in subcubic time", *Mathematical Methods of Operations Research* 97,
   391-436, 2023 (arXiv:2203.05207), Algorithm 2.
.. [NM20] J. Niño-Mora, "A fast-pivoting algorithm for Whittle's restless bandit index",
   *Mathematics* 8(12), 2226, 2020.
.. [S08] I. M. Sonin, "A generalized Gittins index for a Markov chain and its recursive
   calculation", *Statistics & Probability Letters* 78(12), 1526-1533, 2008.
"""

from __future__ import annotations

import ctypes
import enum
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas, lapack

from . import mdp
from ._results import ShortRepr, pandas as _pandas
from ._validation import as_numeric, check_discount, check_real, stochastic_matrices
from .arms import RestlessArm

__all__ = [
    "IndexStatus",
    "WhittleIndexResult",
    "whittle_indices",
    "is_indexable",
    "is_indexable_many",
    "whittle_indices_bisection",
    "gittins_indices",
]

# --- numerical tolerances of the exact algorithm -------------------------------------------
# All are relative to the reward scale ``s`` of the arm (largest spread of R0, R1 and R1 - R0),
# so that multiplying every reward by a constant changes no decision.
#: A slope (d advantage / d lam, dimensionless) at most this in modulus counts as zero: the
#: slopes are O(1) to O(1/(1-discount)) and are computed with an error of a few hundred ulps
#: times the condition number of the policy's linear system.
_SLOPE_TOL = 1e-10
#: An advantage (reward units) at most ``_ADVANTAGE_TOL * s`` counts as zero (ties).
_ADVANTAGE_TOL = 1e-9
#: Two subsidies closer than ``_SUBSIDY_TOL * (s + |lam|)`` count as equal in the
#: indexability test: rounding in exactly tied arms is far below this, genuine violations in
#: random arms far above.
_SUBSIDY_TOL = 1e-9
#: Sherman-Morrison denominator ``1 + X[s, s]`` is the ratio det(A_{k+1}) / det(A_k) of two
#: policy matrices; it is positive for discounted and for unichain policies and vanishes
#: when the new policy is multichain (average reward). Below this, the policy is multichain.
_PIVOT_TOL = 1e-10
#: Reciprocal condition number below which the all-active policy matrix is singular
#: (a multichain all-active policy in the average-reward case).
_RCOND_TOL = 1e-13
#: Discounted, the conditioning is not estimated when its lower bound (see :func:`_ggk`) is
#: this many times ``_RCOND_TOL``: the estimate (a lower bound of ||A_0^{-1}||_1, from the
#: computed factors, within a relative O(n eps / rcond) of it) could not then fall below the
#: threshold.
_RCOND_MARGIN = 1e3
#: Number of Sherman-Morrison updates that are delayed and then applied to the working
#: matrix as one matrix-matrix product (level-3 BLAS).
_BLOCK = 64
#: The same for the eliminations of rested and reset arms (two delayed vectors per pivot, a
#: column and a row, so the rebuilds cost twice as much per pivot: a smaller block).
_ELIMINATION_BLOCK = 32
#: ``P0`` counts as the identity (a rested arm) or as rows all equal (a reset arm) when its
#: entries are within this of it: probabilities are at most 1 and rows normalised in floating
#: point differ from the exact ones by a few ulps; a transcription error is far larger.
_STRUCTURE_TOL = 1e-14
#: Average reward, state elimination: a pivot ``1 - Q[x, x]`` (the probability of leaving
#: ``x`` for a state not yet eliminated) below this means a class of the active chain closes
#: without the remaining states, i.e. a multichain policy: the arm goes to the general
#: recursion, which decides (an exactly multichain chain gives 0 up to rounding, ~1e-16).
_ELIMINATION_PIVOT_TOL = 1e-8


class IndexStatus(enum.Enum):
    """Outcome of an index computation.

    INDEXABLE
        the passive set grows monotonically; every index is computed (possibly ``+inf``).
    NOT_INDEXABLE
        the passive set shrinks at some subsidy: the Whittle index does not exist. The result
        names the first state that leaves the passive set and the subsidy where it does.
    MULTICHAIN
        average reward: a policy met on the way has several recurrent classes, so the gain
        depends on the initial state and the unichain computation is ill-posed; try a
        discount close to one. (Discounted: a policy system numerically singular, which
        needs a discount within rounding of one.)
    """

    INDEXABLE = "indexable"
    NOT_INDEXABLE = "not indexable"
    MULTICHAIN = "multichain"


@dataclass(frozen=True, eq=False, repr=False)
class WhittleIndexResult(ShortRepr):
    """Whittle indices of an arm and the verdict on its indexability.

    Attributes
    ----------
    indices : numpy.ndarray, shape (n,)
        ``indices[x]`` is the Whittle index of state ``x`` (subsidy for passivity at which both
        actions are optimal in ``x``), ``+inf`` where the active action is optimal for every
        subsidy. Entries the computation did not reach (after a violation or a multichain
        policy) are ``nan``. Read-only.
    status : IndexStatus
        Indexable, not indexable, or multichain.
    indexable : bool
        ``status is IndexStatus.INDEXABLE``.
    discount : float or None
        The discount factor, ``None`` for the average-reward criterion.
    passive_order : numpy.ndarray of int
        States in the order they join the passive set as the subsidy increases (the states whose
        index was computed, in non-decreasing order of index). Read-only.
    fingerprint : str
        The :attr:`~whittle_lib.arms.RestlessArm.fingerprint` of the arm the indices were
        computed for: :func:`~whittle_lib.bounds.relaxation_bound`, the index rules and the
        simulator refuse a result whose arm is not the one they are given.
    violating_state : int or None
        For ``NOT_INDEXABLE``: the first state that leaves the passive set.
    violation_subsidy : float or None
        For ``NOT_INDEXABLE``: the subsidy at which it leaves.

    Examples
    --------
    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[0.9, 0.1], [0.9, 0.1]], P1=[[0.1, 0.9], [0.1, 0.9]],
    ...                   R0=[0.0, 0.0], R1=[0.0, 1.0])
    >>> result = whittle_indices(arm, discount=0.5)
    >>> result.fingerprint == arm.fingerprint
    True
    >>> result.to_frame().round(6)  # doctest: +NORMALIZE_WHITESPACE
           index  order
    state
    0        0.4      0
    1        1.0      1
    """

    indices: np.ndarray
    status: IndexStatus
    indexable: bool
    discount: float | None
    passive_order: np.ndarray
    fingerprint: str
    violating_state: int | None = None
    violation_subsidy: float | None = None

    def __post_init__(self) -> None:
        indices = np.array(as_numeric("indices", self.indices), dtype=float)
        if indices.ndim != 1:
            raise ValueError(f"indices must be one-dimensional, got shape {indices.shape}")
        if not isinstance(self.status, IndexStatus):
            raise TypeError(f"status must be an IndexStatus, got {self.status!r}")
        if self.indexable != (self.status is IndexStatus.INDEXABLE):
            raise ValueError(f"indexable={self.indexable!r} contradicts status={self.status}")
        object.__setattr__(self, "discount", check_discount(self.discount))
        if not isinstance(self.fingerprint, str):
            raise TypeError("fingerprint must be the arm's fingerprint (a str, "
                            f"RestlessArm.fingerprint), got {type(self.fingerprint).__name__}")
        order = np.array(as_numeric("passive_order", self.passive_order), dtype=np.intp)
        if (self.violating_state is None) != (self.status is not IndexStatus.NOT_INDEXABLE):
            raise ValueError("violating_state must be given exactly when status is "
                             f"NOT_INDEXABLE, got {self.violating_state!r} with {self.status}")
        indices.setflags(write=False)
        order.setflags(write=False)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "passive_order", order)

    def to_frame(self):
        """The indices as a table: one row per state (``state``), with its ``index`` and its
        ``order`` (its position in :attr:`passive_order`, missing where the computation did
        not reach it). Needs pandas."""
        pd = _pandas()
        n = self.indices.size
        position = np.full(n, -1)
        position[self.passive_order] = np.arange(self.passive_order.size)
        order = pd.array(position, dtype="Int64")
        order[position < 0] = pd.NA
        return pd.DataFrame({"index": self.indices, "order": order},
                            index=pd.RangeIndex(n, name="state"))


def _criterion(discount) -> str:
    """``discount=0.9`` or ``average reward``, for messages."""
    return "average reward" if discount is None else f"discount={discount}"


def _check_arm(arm, name: str = "arm") -> RestlessArm:
    if not isinstance(arm, RestlessArm):
        raise TypeError(f"{name} must be a RestlessArm, got {type(arm).__name__}")
    return arm


def _reward_scale(arm: RestlessArm) -> float:
    rewards = np.concatenate([arm.R0, arm.R1])
    scale = max(float(np.ptp(rewards)), float(np.abs(arm.R1 - arm.R0).max()))
    return scale if scale > 0.0 else 1.0


def _policy_system(arm: RestlessArm, discount: float, extra=None):
    """Return ``Delta`` and the all-active matrix ``A_0`` of [GGK23], Algorithm 2.

    Discounted: ``A_pi = I - beta P_pi`` and ``Delta = beta (P1 - P0)``. Average reward
    (``discount`` 1.0 here): the unknowns are the bias ``h`` with ``h[0] = 0`` and the gain
    ``g`` stored in slot 0, so column 0 of ``I - P_pi`` is replaced by ones and column 0 of
    ``Delta = P1 - P0`` by zeros. Both are returned in Fortran order, the layout LAPACK works
    in (no copy on the way in). ``extra`` (rows ``e``, shape ``(m, n)``) is appended below
    ``Delta``: the recursion then follows ``e^T A_pi^{-1}`` too (see :func:`_ggk`).
    """
    n = arm.n_states
    rows = n if extra is None else n + len(extra)
    delta = np.empty((rows, n), order="F")
    a0 = np.empty((n, n), order="F")
    top = delta if extra is None else delta[:n]
    np.subtract(arm.P1, arm.P0, out=top)
    if discount < 1.0:
        top *= discount
        np.multiply(arm.P1, -discount, out=a0)
    else:
        top[:, 0] = 0.0
        np.negative(arm.P1, out=a0)
    a0[np.diag_indices(n)] += 1.0
    if discount == 1.0:
        a0[:, 0] = 1.0
    if extra is not None:
        delta[n:] = extra
    return delta, a0


def whittle_indices(arm: RestlessArm, *, discount: float | None = None) -> WhittleIndexResult:
    r"""Whittle indices of every state, and an exact indexability test.

    Parameters
    ----------
    arm : RestlessArm
        The arm.
    discount : float or None, default None
        Discount factor in (0, 1), or ``None`` for the average-reward criterion (``1.0`` is
        refused: pass ``None``).

    Returns
    -------
    WhittleIndexResult
        Indices, status (indexable / not indexable / multichain), the order in which states
        join the passive set, for a non-indexable arm the first state that leaves it, and the
        arm's fingerprint.

    Raises
    ------
    TypeError
        If ``arm`` is not a :class:`~whittle_lib.arms.RestlessArm` or ``discount`` not a
        number (or ``None``).
    ValueError
        If ``discount`` is outside (0, 1).

    Warns
    -----
    UserWarning
        When the arm is not indexable, or (average reward) when a policy met on the way is
        multichain. The result then holds the indices computed before the problem, ``nan``
        elsewhere.

    Notes
    -----
    This is Algorithm 2 of Gast, Gaujal & Khun [GGK23]_ (the Sherman-Morrison recursion
    that computes the k-th smallest index from the (k-1)-th), with its test of indexability.
    For a policy with passive set :math:`S` write :math:`A_S = I - \beta P_S` (rows of
    :math:`P_0` on :math:`S`, of :math:`P_1` elsewhere; average reward: :math:`\beta = 1` and
    column 0 replaced as in [GGK23]) and :math:`\Delta = \beta (P_1 - P_0)`. With subsidy
    :math:`\lambda` the value is :math:`V = A_S^{-1}(r_S + \lambda 1_S)`, so the advantage of
    the active action in state :math:`x` is affine in :math:`\lambda`:

    .. math::
        \mathrm{adv}_S(x, \lambda) = R_1(x) - R_0(x) - \lambda + \Delta_x V
        = a_S(x) - \lambda\,(1 - y_S(x)),
        \quad X_S = \Delta A_S^{-1},\ y_S = X_S 1_S,\ a_S = R_1 - R_0 + X_S r_S.      \tag{1}

    Start from the all-active policy (optimal for :math:`\lambda \to -\infty`) and, with
    :math:`z = \mathrm{adv}_S(\cdot, \mu_k)` at the current index :math:`\mu_k`, the next
    state to become passive and its index are

    .. math::
        \sigma_{k+1} = \arg\min_{x \notin S} \mu_k + \frac{z(x)}{1 - y_S(x)}
        \quad\text{over } 1 - y_S(x) > 0 .                                               \tag{2}

    Moving :math:`\sigma` to the passive set changes one row of :math:`A_S` by
    :math:`\Delta_\sigma`, so by Sherman-Morrison

    .. math::
        X_{S+\sigma} = X_S - \frac{X_S e_\sigma\, e_\sigma^\top X_S}{1 + X_S[\sigma,\sigma]},
        \qquad
        y_{S+\sigma} = y_S + (1 - y_S(\sigma))\frac{X_S e_\sigma}{1 + X_S[\sigma,\sigma]}. \tag{3}

    The arm is indexable iff, on every interval :math:`[\mu_k, \mu_{k+1}]`, no passive state's
    advantage becomes positive (its slope :math:`-(1 - y_S(x))` is positive and it reaches zero
    before :math:`\mu_{k+1}`) [GGK23]; the first such state is reported. When no active state
    has a positive slope in (2), the current policy stays optimal for every larger subsidy and
    the remaining states get the index :math:`+\infty` (this happens in the average-reward
    case when the all-passive policy is multichain; in the discounted case every index is
    finite). Equal indices (ties) are taken one state at a time at the same :math:`\mu`.

    Implementation: only the columns of :math:`X` of the still-active states are needed. The
    rank-one updates (3) of a block of ``64`` pivots are delayed (the column of the next pivot
    is rebuilt from them, a product with at most 63 vectors) and then applied as one
    triangular solve and one matrix product on the active columns, which are kept contiguous.
    The cost is one LU factorisation of :math:`A_\emptyset` and two triangular solves with
    :math:`n` right-hand sides for :math:`X_\emptyset` (:math:`\tfrac23 n^3 + 2n^3` flops,
    about four times the LU alone) plus :math:`\sum_k 2n(n-k) \approx n^3` flops of
    updates, of which :math:`n^3/3` keep the rows of the passive states current for the
    indexability test: :math:`O(n^3)` overall, mostly in level-3 BLAS, and :math:`O(n^2)`
    memory. The algorithms of [GGK23]_ and [NM20]_ count :math:`\tfrac23 n^3` for the
    recursion after that initialisation, which dominates. Each pivot also makes a few dozen
    calls on vectors of :math:`n` numbers (the column, the slopes, the next index), whose
    overhead is about one more LU's time at 1,000 states and half of one at 2,000; with one
    BLAS thread the whole takes about six LU times at those sizes. (Discounted, the estimate
    of :math:`A_\emptyset`'s conditioning, which decides whether it is singular, is not made
    where :math:`(1-\beta)/(n(1+\beta n))`, a lower bound of its reciprocal condition
    number, shows that it is not.)

    **Rested and reset arms.** Two kinds of arm are recognised from ``P0`` (exactly, or within
    ``1e-14`` per entry) and take a path of about :math:`\tfrac23 n^3` flops, the cost of one
    LU factorisation:

    * *rested* arms, ``P0 = I`` (the passive action freezes the state; Gittins' setting),
      discounted. Passive is then optimal for good once it is optimal, so with subsidy
      :math:`\lambda` the arm is an optimal-stopping problem, and with :math:`h = R_0/(1-\beta)`
      the stopping reward becomes :math:`\lambda/(1-\beta)` and the running reward
      :math:`r' = R_1 + \beta P_1 h - h`: :math:`W(x)` is the Gittins index of :math:`(P_1,
      r')` in its ratio form. Such arms are always indexable. (Average reward, two frozen
      states already make the policy multichain: such arms take the general recursion.)
    * *reset* arms, ``P0 = 1 q^T`` (every row of ``P0`` the same: the passive action renews the
      arm from ``q``), discounted or average reward. With :math:`h = R_0` the advantage of
      resting in :math:`x` against :math:`K = \lambda + \beta\,q^\top V` compares the stopping
      reward :math:`K` with the running reward :math:`r' = R_1 - R_0 + \beta P_1 R_0`, so the
      passive set is :math:`\{x: \alpha(x) \le (1-\beta) K\}` (average reward: :math:`\alpha(x)
      \le g`) with :math:`\alpha` the Gittins index of :math:`(P_1, r')` in its ratio form
      (average reward: the undiscounted ratio). As :math:`K` (or :math:`g`) grows with
      :math:`\lambda`, the arm is indexable and the states become passive in increasing order
      of :math:`\alpha`; the index of :math:`x` is the subsidy at which the renewal value
      reaches :math:`\alpha(x)`:
      :math:`W(x) = \alpha(x)\,(1 + \beta\,T_q) - \beta\,(q^\top R_0 + G_q)`, where :math:`G_q`
      and :math:`T_q` are the expected (discounted) reward :math:`r'` and time collected from
      ``q`` until the chain first enters :math:`\{y: \alpha(y) \le \alpha(x)\}`.

    Both come from Sonin's state elimination [S08]_ on :math:`\beta P_1`: the state of largest
    ratio (collected reward over collected time) is the next index, and is then eliminated
    (the chain passes through it without stopping; a rank-one update of the rest, Gaussian
    elimination in data-driven order), with one more row for ``q`` that collects
    :math:`G_q, T_q`. The updates are delayed in blocks of 32 and applied as one matrix
    product on the remaining rows and columns: :math:`\tfrac23 n^3` flops. Average reward,
    a pivot that vanishes (a class of the active chain closes: a multichain policy) sends the
    arm to the general recursion, which reports it.

    References
    ----------
    .. [GGK23] N. Gast, B. Gaujal, K. Khun, "Testing indexability and computing Whittle and
       Gittins index in subcubic time", *Math. Methods Oper. Res.* 97, 391-436, 2023,
       Algorithm 2.
    .. [NM20] J. Niño-Mora, "A fast-pivoting algorithm for Whittle's restless bandit index",
       *Mathematics* 8(12), 2226, 2020 (the same count after its initialisation stage).
    .. [S08] I. M. Sonin, "A generalized Gittins index for a Markov chain and its recursive
       calculation", *Statist. Probab. Lett.* 78(12), 1526-1533, 2008 (state elimination).

    Examples
    --------
    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[0.9, 0.1], [0.9, 0.1]], P1=[[0.1, 0.9], [0.1, 0.9]],
    ...                   R0=[0.0, 0.0], R1=[0.0, 1.0])
    >>> result = whittle_indices(arm, discount=0.5)
    >>> result.status
    <IndexStatus.INDEXABLE: 'indexable'>
    >>> result.indices.round(6).tolist()
    [0.4, 1.0]

    The average reward is the default criterion:

    >>> whittle_indices(arm).indices.round(6).tolist()
    [0.8, 1.0]
    """
    discount = check_discount(discount)
    _check_arm(arm)
    beta = 1.0 if discount is None else discount
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = None
        structure = _structure(arm, beta)
        if structure is not None:
            result = _eliminate(arm, beta, discount, reset=structure == "reset")
        if result is None:
            result = _ggk(arm, beta, discount)[0]
    _warn_if_degraded(result, stacklevel=3)
    return result


def _warn_if_degraded(result: WhittleIndexResult, stacklevel: int) -> None:
    criterion = _criterion(result.discount)
    if result.status is IndexStatus.NOT_INDEXABLE:
        warnings.warn(f"the arm is not indexable ({criterion}): state "
                      f"{result.violating_state} leaves the passive set at subsidy "
                      f"{result.violation_subsidy:.6g}; indices after that point are nan",
                      stacklevel=stacklevel)
    elif result.status is IndexStatus.MULTICHAIN:
        warnings.warn(f"ill-posed ({criterion}): a policy met while computing the "
                      "indices is multichain (or numerically singular); indices not computed "
                      "are nan (for average reward, try a discount close to 1)",
                      stacklevel=stacklevel)


def _ggk(arm: RestlessArm, beta: float, discount: float | None, extra=None):
    """The recursion (1)-(3) of :func:`whittle_indices`, blocked; see its Notes.

    ``beta`` is the discount, ``1.0`` for the average reward (``discount`` is what the result
    records). Returns ``(result, curve)``. With ``extra``, rows ``e`` (shape ``(m, n)``), the
    recursion also follows :math:`e^\\top V_S(\\lambda)` (the gain, or the value from an
    initial state) and its slope :math:`e^\\top A_S^{-1} 1_S` (the passive time) like the
    advantages of ``m`` more states, at ``O(m n)`` more per pivot: ``curve = (mu, G, P,
    complete)`` gives at the ``K`` finite indices ``mu`` (non-decreasing) the values ``G[k] =
    e^T V(mu[k])`` and the slopes ``P[k]`` on ``(mu[k], mu[k+1])`` (policy ``mu[:k+1]``
    passive), so that :math:`e^\\top V(\\lambda) = G[k] + (\\lambda - \\mu_k) P[k]` there and
    ``G[0]`` below ``mu[0]``; ``complete`` is False when the last policy (every state
    passive) is multichain and ``P[-1]`` unknown. ``curve`` is None without ``extra`` and when
    the arm is not indexable. Without ``extra`` the arithmetic is exactly that of the
    recursion alone.
    """
    n = arm.n_states
    me = 0 if extra is None else len(extra)
    R0, R1 = arm.R0, arm.R1
    scale = _reward_scale(arm)
    adv_tol = _ADVANTAGE_TOL * scale
    indices = np.full(n, np.nan)
    order: list[int] = []

    def finish(status, violating=None, at=None):
        return WhittleIndexResult(indices=indices, status=status,
                                  indexable=status is IndexStatus.INDEXABLE,
                                  discount=discount, passive_order=order,
                                  fingerprint=arm.fingerprint,
                                  violating_state=violating, violation_subsidy=at), None

    delta, a0 = _policy_system(arm, beta, extra)
    # The estimate of A_0's conditioning costs a tenth of its factorisation. Discounted,
    # A_0 = I - beta P1 has ||A_0^{-1}||_inf = 1 / (1 - beta) and ||A_0||_1 <= 1 + beta n, so
    # its reciprocal condition number (1-norm) is at least (1 - beta) / (n (1 + beta n)): when
    # that is above the threshold by a wide margin the estimate would pass, and is not made.
    conditioned = beta < 1.0 and (1.0 - beta) >= _RCOND_MARGIN * _RCOND_TOL * n * (1.0 + beta * n)
    anorm = None if conditioned else np.abs(a0).sum(axis=0).max()
    lu, piv, info = lapack.dgetrf(a0, overwrite_a=True)
    if info == 0:
        rcond = np.inf if conditioned else lapack.dgecon(lu, anorm, norm="1")[0]
    if info != 0 or rcond < _RCOND_TOL:
        # average reward: multichain all-active policy; discounted (I - beta P is a
        # non-singular M-matrix) only when beta is within rounding of 1
        return finish(IndexStatus.MULTICHAIN)
    # X_0 = Delta A_0^{-1} = Delta U^{-1} L^{-1} P^T: two triangular solves from the right on
    # Delta in place (Fortran order, so column c of Delta U^{-1} L^{-1} is contiguous) ...
    xf = blas.dtrsm(1.0, lu, delta, side=1, lower=0, diag=0, overwrite_b=True)
    xf = blas.dtrsm(1.0, lu, xf, side=1, lower=1, diag=1, overwrite_b=True)
    # ... and the permutation P^T only relabels the columns: column i is that of state st[i].
    st = np.arange(n)
    for i, p in enumerate(piv.tolist()):
        if p != i:
            st[i], st[p] = st[p], st[i]
    # Xt[i] = column st[i] of X (over every state, then the extra rows). The columns of the
    # states active at the start of the current block are rows 0..k-1 of Xt.
    Xt = xf.T
    row_of = np.empty(n, dtype=np.intp)
    row_of[st] = np.arange(n)
    k = n
    m = min(_BLOCK, n)
    # Delayed updates of the current block (j pivots blk[:j]): X = X_b - U L^{-1} X_b[blk, :]
    # with X_b the matrix at the start of the block, U[:, l] = Ut[l] the l-th normalised
    # column of (3) and L unit lower triangular, L[i, l] = Ut[l, blk[i]] (i > l).
    Ut = np.empty((m, n + me))
    L = np.zeros((m, m), order="F")
    blk = np.empty(m, dtype=np.intp)
    j = 0
    # Each pivot is a few dozen operations on vectors of n numbers, whose call overhead is most
    # of what it costs at 1,000 states: their views are made here once, and the column's
    # w = L^{-1} X_b[blk, sigma] is solved in place in ``g`` by dtrsv on L's leading block
    # where it lies (:class:`_UnitLowerSolve`).
    g = np.empty(m)
    solve = _UnitLowerSolve(L, g)
    views = [(g[:i], blk[:i], Ut[:i], L[i, :i], Ut[i]) for i in range(m)]
    Ucols = Ut.T  # Ucols[x, :i] = Ut[:i, x]

    sign = np.ones(n + me)  # +1 active, -1 passive (the extra rows: +1)
    # The slopes 1 - y times ``sign`` (ss) and the advantages z at the current index times
    # -sign (nz): an event (2) is a ratio z / slope = -nz / ss with ss > 0 (see _next_event).
    # Negated, the advantages give -(z / slope) = nz / ss, whose largest entry over ss > 0
    # is the next index (below): the same numbers as z / slope up to their signs, which
    # round symmetrically.
    if me:
        nz = np.concatenate([R1 - R0, np.zeros(me)]) + Xt.T @ R1[st]
    else:
        nz = R1 - R0 + Xt.T @ R1[st]  # a_0 of (1); y_0 = 0, every slope 1 - y is 1
    ss = np.ones(n + me)
    # views on the states (the whole vectors without extra rows); blas.daxpy updates in place
    zn, sn = nz[:n], ss[:n]
    sigma = int(np.argmin(zn))
    mu = float(nz[sigma])
    nz -= mu
    np.negative(nz, out=nz)
    indices[sigma] = mu
    order.append(sigma)
    col, tmp, key = np.empty(n + me), np.empty(n + me), np.empty(n)
    tn, sgn = tmp[:n], sign[:n]
    if me:
        ze, se = nz[n:], ss[n:]
        curve_g, curve_p = np.empty((n, me)), np.empty((n, me))
        curve_g[0] = mu - ze
    last = n + 1 if me else n  # with extra rows, one more pivot: the all-passive policy
    divide, multiply, subtract, dot, fmin = np.divide, np.multiply, np.subtract, np.dot, np.fmin
    daxpy = blas.daxpy
    inf = np.inf
    infinity = np.array(np.inf)  # a 0-d operand: no conversion of a Python float per call
    size = n + me  # daxpy's n, given by position: no keyword parsing per call

    for it in range(1, last):
        # --- pivot: sigma becomes passive, equation (3) -------------------------------------
        xr = Xt[row_of[sigma]]
        gj, bj, uj, lj, u = views[j]
        if j:
            xr.take(bj, None, gj, "clip")  # the indices are in range: no checks
            solve(j)  # gj = L[:j, :j]^{-1} xr[blk[:j]]
            dot(gj, uj, out=col)
            subtract(xr, col, out=col)
            column = col
        else:
            column = xr
        denominator = 1.0 + float(column[sigma])
        if it == n:  # (extra rows only) the all-passive policy: its passive time
            complete = denominator > _PIVOT_TOL  # else multichain: its passive time unknown
            curve_p[-1] = (1.0 - (se - float(ss[sigma]) * (column[n:] / denominator))
                           if complete else np.nan)
            return finish(IndexStatus.INDEXABLE)[0], (indices[order], curve_g, curve_p,
                                                      complete)
        if denominator <= _PIVOT_TOL:  # the next policy is multichain (or, discounted,
            return finish(IndexStatus.MULTICHAIN)  # numerically so: beta too close to 1)
        divide(column, denominator, out=u)
        if j:
            lj[...] = Ucols[sigma, :j]
        blk[j] = sigma
        # y += (1 - y[sigma]) u, i.e. every slope moves by -slope[sigma] u
        multiply(u, sign, out=tmp)
        ss = daxpy(tmp, ss, size, -float(ss[sigma]))  # in place (contiguous float64)
        sign[sigma] = -1.0
        ss[sigma] = -ss[sigma]
        nz[sigma] = -nz[sigma]
        if me:
            curve_p[it - 1] = 1.0 - se
        j += 1
        if j == m:  # apply the block: one triangular solve and one level-3 product ...
            # (W = L^{-1} X_b[blk, active]; Xt[:k].T is Fortran-contiguous, so dgemm
            # updates it in place)
            W = blas.dtrsm(1.0, L, Xt[:k, blk].T, lower=1, diag=1, overwrite_b=True)
            blas.dgemm(alpha=-1.0, a=Ut.T, b=W, beta=1.0, c=Xt[:k].T, overwrite_c=True)
            # ... then move the columns still active into rows 0..k-m-1
            k -= m
            holes = row_of[blk]
            holes = holes[holes < k]
            fill = np.arange(k, k + m)
            fill = fill[sign[st[fill]] > 0.0]
            Xt[holes] = Xt[fill]
            st[holes] = st[fill]
            row_of[st[holes]] = holes
            j = 0

        # --- next index (2) and indexability test ------------------------------------------
        # The fast path of _next_event on the signed vectors, taken unless some slope is
        # within _SLOPE_TOL of zero or some advantage has the wrong sign beyond adv_tol (the
        # smallest |slope| and the largest -z read at their arg-extremum: a vectorised pass,
        # where np.minimum.reduce is not; NaN is found by both).
        np.abs(sn, out=tn)
        nxt = -1
        if tn[tn.argmin()] > _SLOPE_TOL and zn[zn.argmax()] <= adv_tol:
            # every slope is then away from zero: the candidates are the positive ones, and
            # -(z / slope) is kept there, -inf elsewhere (slope * inf is +-inf)
            divide(zn, sn, out=key)
            multiply(sn, infinity, out=tn)
            fmin(key, tn, out=key)
            nxt = int(key.argmax())
            step, bad_step = max(-float(key[nxt]), 0.0), inf
        if nxt < 0 or sign[nxt] < 0.0:  # the careful path (flat slopes, ties, violations)
            divide(zn, sn, out=key)
            np.negative(key, out=key)  # z / slope
            nxt, step, bad, bad_step = _next_event(sgn > 0.0, sgn, sn * sgn, key,
                                                   zn * -sgn, adv_tol)
        if bad_step < step - _SUBSIDY_TOL * (scale + abs(mu)):
            # a passive advantage turns positive before the next index: the passive set shrinks
            return finish(IndexStatus.NOT_INDEXABLE, bad, mu + bad_step)
        if not math.isfinite(step):
            active = sgn > 0.0
            indices[active] = np.inf  # active is optimal for every larger subsidy
            order.extend(np.flatnonzero(active).tolist())
            result = finish(IndexStatus.INDEXABLE)[0]
            if not me:
                return result, None
            return result, (indices[order[:it]], curve_g[:it], curve_p[:it], True)
        sigma = nxt
        mu += step
        nz = daxpy(ss, nz, size, step)  # z -= step * slope, in place (negated)
        indices[sigma] = mu
        order.append(sigma)
        if me:
            curve_g[it] = mu - ze
    result = finish(IndexStatus.INDEXABLE)[0]
    return result, ((indices[order], curve_g, curve_p, True) if me else None)


def _next_event(active, sign, slope, ratio, z, adv_tol):
    """Next active state to cross (2) and first passive state to rise, as subsidy increments.

    An active state crosses when its advantage ``z >= 0`` falls to zero (``slope > 0``); a
    passive state violates indexability when its advantage ``z <= 0`` rises to zero
    (``slope < 0``). Both happen after the increment ``ratio = z / slope``, i.e. when
    ``sign * slope > 0`` with ``sign = +1`` for active and ``-1`` for passive states.

    Returns ``(nxt, step, bad, bad_step)``: the active state with the smallest crossing
    increment ``step`` (``inf`` if none) and the passive state with the smallest rising
    increment ``bad_step`` (``inf`` if none).
    """
    # Fast path, taken unless some slope is ~0 or some advantage has the wrong sign beyond
    # rounding: one pass over all states, the earliest event is an active crossing.
    if np.abs(slope).min() > _SLOPE_TOL and (z * sign).min() >= -adv_tol:
        steps = np.where(sign * slope > _SLOPE_TOL, ratio, np.inf)
        first = int(np.argmin(steps))
        if sign[first] > 0.0:  # no passive event can come before it
            return first, max(float(steps[first]), 0.0), -1, np.inf
    # Careful path: ties with flat advantages, wrong-sign rounding, or a passive event first.
    step_active = np.where(active & (slope > _SLOPE_TOL), np.maximum(ratio, 0.0), np.inf)
    flat = active & (np.abs(slope) <= _SLOPE_TOL) & (z <= adv_tol)
    step_active[flat] = 0.0  # indifferent whatever lam: passive (ties included) from now on
    passive = ~active
    step_passive = np.where(passive & (slope < -_SLOPE_TOL), np.maximum(ratio, 0.0), np.inf)
    step_passive[passive & (z > adv_tol)] = 0.0  # already prefers to be active
    nxt = int(np.argmin(step_active))
    bad = int(np.argmin(step_passive))
    return nxt, float(step_active[nxt]), bad, float(step_passive[bad])


# --- rested and reset arms: state elimination -----------------------------------------------

def _structure(arm: RestlessArm, beta: float) -> str | None:
    """``"rested"`` (``P0 = I``, discounted only), ``"reset"`` (every row of ``P0`` the same)
    or ``None``, within :data:`_STRUCTURE_TOL` per entry; cheap on other arms (the first
    entries differ)."""
    P0 = arm.P0
    n = P0.shape[0]
    if n < 2:
        return None
    tol = _STRUCTURE_TOL
    if beta < 1.0 and P0[0, 0] >= 1.0 - tol and P0[1, 1] >= 1.0 - tol:
        diagonal = P0.diagonal()
        # rows are non-negative and sum to one within ROW_SUM_TOL: off the diagonal a row
        # holds its sum minus its diagonal entry
        if diagonal.min() >= 1.0 - tol and (P0.sum(axis=1) - diagonal).max() <= tol:
            return "rested"
        return None
    first = P0[0]
    if np.abs(P0[1] - first).max() > tol:
        return None
    chunk = max(1, (1 << 15) // n)                # about 32K entries at a time, in cache
    for start in range(2, n, chunk):
        rows = P0[start:start + chunk]
        if not (rows == first).all() and np.abs(rows - first).max() > tol:
            return None
    return "reset"


def _cython_blas(name: str):
    """The BLAS routine ``name`` that SciPy exports for Cython (:mod:`scipy.linalg.cython_blas`,
    the library :mod:`scipy.linalg.blas` wraps) as a ctypes function without argument types
    (every argument a ctypes pointer, ``byref`` or ``c_void_p``), or ``None`` if this SciPy
    build does not export it."""
    try:
        from scipy.linalg import cython_blas

        capsule = cython_blas.__pyx_capi__[name]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype = ctypes.c_void_p
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        function = ctypes.CFUNCTYPE(None)(get_pointer(capsule, get_name(capsule)))
        function.argtypes = None
        return function
    except Exception:  # noqa: BLE001 - any failure means: use SciPy's Python wrapper
        return None


class _UnitLowerSolve:
    """``x[:j] = L[:j, :j]^{-1} x[:j]`` in place, ``L`` unit lower triangular (Fortran order),
    for the column of each pivot of :func:`_ggk`.

    The BLAS ``dtrsv`` through :func:`_cython_blas` with arguments made once, on ``L[:j, :j]``
    where it lies (leading dimension ``L.shape[0]``): the routine ``scipy.linalg.blas.dtrsv``
    calls, the same arithmetic, without that wrapper's copy of the non-contiguous block and its
    argument parsing (about 1 us against 5 per pivot). Without the entry point, the wrapper."""

    def __init__(self, L: np.ndarray, x: np.ndarray):
        if not (L.flags.f_contiguous and x.flags.c_contiguous and L.dtype == x.dtype
                == np.float64):
            raise ValueError("_UnitLowerSolve needs a Fortran-ordered L and a contiguous x")
        self.L, self.x = L, x
        self.size = ctypes.c_int(0)
        self.function = _cython_blas("dtrsv")
        byref = ctypes.byref
        self.arguments = (byref(ctypes.c_char(b"L")), byref(ctypes.c_char(b"N")),
                          byref(ctypes.c_char(b"U")), byref(self.size),
                          ctypes.c_void_p(L.ctypes.data), byref(ctypes.c_int(L.shape[0])),
                          ctypes.c_void_p(x.ctypes.data), byref(ctypes.c_int(1)))

    def __call__(self, j: int) -> None:
        if self.function is None:
            self.x[:j] = blas.dtrsv(self.L[:j, :j], self.x[:j], lower=1, diag=1)
            return
        self.size.value = j
        self.function(*self.arguments)


class _Gemm:
    """``C += A @ B`` in place on a block of a larger array (any leading dimension), through
    the BLAS ``dgemm`` that SciPy exports for Cython (:mod:`scipy.linalg.cython_blas`).

    SciPy's Python wrappers copy an operand that is not contiguous, and the block of remaining
    rows and columns of an elimination is not: this writes into it where it lies. Without that
    entry point (an unusual SciPy build), NumPy forms the product and adds it (the same
    result, with one temporary array per block)."""

    def __init__(self):
        self.function = None
        try:
            from scipy.linalg import cython_blas

            capsule = cython_blas.__pyx_capi__["dgemm"]
            get_name = ctypes.pythonapi.PyCapsule_GetName
            get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
            get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
            get_pointer.restype = ctypes.c_void_p
            get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
            pointer = get_pointer(capsule, get_name(capsule))
            integer, real = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_double)
            prototype = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, integer,
                                         integer, integer, real, ctypes.c_void_p, integer,
                                         ctypes.c_void_p, integer, real, ctypes.c_void_p,
                                         integer)
            self.function = prototype(pointer)
            self.one = ctypes.c_double(1.0)
        except Exception:  # noqa: BLE001 - any failure means: use the NumPy product
            self.function = None

    def __call__(self, C, A, B):
        """``C += A @ B``: ``C`` with unit stride down its columns (a Fortran-ordered block),
        ``A`` and ``B`` with unit stride along one axis (a block of a C or a Fortran array)."""
        if self.function is None:
            C += A @ B
            return
        m, n = C.shape
        k = A.shape[1]
        if m == 0 or n == 0 or k == 0:
            return
        if C.dtype != np.float64 or C.strides[0] != 8:
            raise ValueError("_Gemm writes into float64 blocks with unit stride down the columns")
        size = ctypes.c_int
        operands = []
        for X in (A, B):
            if X.dtype != np.float64:
                raise ValueError("_Gemm multiplies float64 arrays")
            if X.strides[0] == 8 and X.strides[1] >= 8 * max(X.shape[0], 1):
                operands.append((b"N", X.ctypes.data, X.strides[1] // 8))
            elif X.strides[1] == 8 and X.strides[0] >= 8 * max(X.shape[1], 1):
                operands.append((b"T", X.ctypes.data, X.strides[0] // 8))
            else:
                raise ValueError("_Gemm needs operands with unit stride along one axis")
        (ta, pa, lda), (tb, pb, ldb) = operands
        self.function(ta, tb, ctypes.byref(size(m)), ctypes.byref(size(n)),
                      ctypes.byref(size(k)), ctypes.byref(self.one), pa,
                      ctypes.byref(size(lda)), pb, ctypes.byref(size(ldb)),
                      ctypes.byref(self.one), C.ctypes.data,
                      ctypes.byref(size(C.strides[1] // 8)))


_gemm = None


def _block_product():
    global _gemm
    if _gemm is None:
        _gemm = _Gemm()
    return _gemm


def _eliminate(arm: RestlessArm, beta: float, discount: float | None, *, reset: bool):
    """All indices of a rested or a reset arm by state elimination (see :func:`whittle_indices`,
    Notes); ``None`` when a pivot vanishes (average reward: a multichain policy), so that the
    general recursion decides.

    The matrix ``Q`` starts as ``beta P1`` (row ``y``, column ``x``: the weight of a step from
    ``y`` to ``x``) with one more row on top, ``q`` (reset arms; zeros for rested arms):
    from it the chain starts afresh. Each state carries the reward ``G`` and the (discounted)
    time ``T`` collected from it until the chain returns to a state not yet eliminated: first
    ``r'`` and ``1``, the ``q`` row ``0`` and ``0``. The state of largest ``G / T`` is the next
    index (the largest remaining one); eliminating ``x`` with ``N = 1 / (1 - Q[x, x])`` adds to
    every row ``y`` the detours through ``x``: ``Q[y, :] += Q[y, x] N Q[x, :]``, ``G[y] +=
    Q[y, x] N G[x]``, ``T[y] += Q[y, x] N T[x]`` [S08]_.

    Storage: ``Q`` in C order (``beta P1`` needs no transposition), the live rows in ``Q[:r]``
    and the live columns in ``Q[:, :k]``; the ``j`` eliminations of the current block are
    delayed as ``Q = Q_b + A^T B`` with ``A[l]`` the scaled column and ``B[l]`` the row of the
    ``l``-th (each current when it was eliminated), so the column and the row of the next pivot
    are rebuilt with two products with ``j`` vectors; a full block is applied as one matrix
    product on the live ``r x k`` block, then the eliminated rows and columns are replaced by
    the last live ones.
    """
    n = arm.n_states
    P1, R0, R1 = arm.P1, arm.R0, arm.R1
    P1R0 = P1 @ R0
    if reset:
        q = arm.P0[0]
        reward = R1 - R0 + beta * P1R0
        qR0 = float(q @ R0)
    else:
        reward = R1 - R0 + beta * (P1R0 - R0) / (1.0 - beta)
    width = n + 1                              # rows: 0 the restart row, 1 + s state s
    Q = np.empty((width, n))
    np.multiply(P1, beta, out=Q[1:])
    Q[0] = q if reset else 0.0
    G = np.concatenate([[0.0], reward])        # collected reward (row order)
    T = np.concatenate([[0.0], np.ones(n)])    # collected time (row order)
    column_state = np.arange(n)                # the state of each column
    column_of = np.arange(n)
    row_state = np.arange(-1, n)               # the state of each row; -1: the restart row
    row_of = np.arange(1, n + 1)
    k, r = n, width                            # live columns, live rows
    m = min(_ELIMINATION_BLOCK, n)
    # the delayed vectors of a block, as wide as the live rows and columns at its start (so
    # that A[:j] and B[:j] are contiguous)
    A = np.empty((m, r))
    B = np.empty((m, k))
    blk = np.empty(m, dtype=np.intp)
    j = 0
    gemm = _block_product()
    pivot_tol = _ELIMINATION_PIVOT_TOL if beta == 1.0 else 0.0
    indices = np.empty(n)
    eliminated = np.empty(n, dtype=np.intp)
    ratio = np.empty(n)
    for step in range(n):
        # --- the next index: the live state of largest G / T ---------------------------------
        live = ratio[:r - 1]
        np.divide(G[1:r], T[1:r], out=live)
        i = int(live.argmax()) + 1             # its row
        x = int(row_state[i])
        alpha = float(live[i - 1])
        indices[x] = (alpha * (1.0 + beta * float(T[0])) - beta * (qR0 + float(G[0]))
                      if reset else alpha)
        eliminated[step] = x
        if step == n - 1:
            break
        # --- eliminate x: its current column (over the live rows) and row (live columns) ----
        c = column_of[x]
        scaled, bv = A[j], B[j]
        if j:
            np.dot(B[:j, c], A[:j], out=scaled)
            scaled += Q[:r, c]
            np.dot(A[:j, i], B[:j], out=bv)
            bv += Q[i, :k]
        else:
            np.copyto(scaled, Q[:r, c])
            np.copyto(bv, Q[i, :k])
        pivot = 1.0 - float(scaled[i])
        if not pivot > pivot_tol:
            return None
        np.divide(scaled, pivot, out=scaled)
        gx, tx = float(G[i]), float(T[i])
        blas.daxpy(scaled, G[:r], a=gx)        # in place
        blas.daxpy(scaled, T[:r], a=tx)
        G[i] = -np.inf                         # never the largest ratio again
        blk[j] = x
        j += 1
        if j == m:
            # --- apply the block on the live r x k block, then compact it --------------------
            # Q[:r, :k] += A^T B, i.e. its Fortran view (k x r) += B^T (k x m) @ A (m x r)
            gemm(Q[:r, :k].T, B.T, A)
            k -= m
            holes = column_of[blk]
            holes = holes[holes < k]
            fill = np.arange(k, k + m)
            fill = fill[G[row_of[column_state[fill]]] > -np.inf]
            Q[:r, holes] = Q[:r, fill]
            column_state[holes] = column_state[fill]
            column_of[column_state[holes]] = holes
            r -= m
            holes = row_of[blk]
            holes = holes[holes < r]
            fill = np.arange(r, r + m)
            fill = fill[G[fill] > -np.inf]
            Q[holes, :k] = Q[fill, :k]
            G[holes], T[holes] = G[fill], T[fill]
            row_state[holes] = row_state[fill]
            row_of[row_state[holes]] = holes
            A = np.empty((m, r))
            B = np.empty((m, k))
            j = 0
    # states join the passive set from the smallest index: the eliminations reversed, sorted
    # (stably) where rounding left two a few ulps out of order
    order = eliminated[::-1]
    order = order[np.argsort(indices[order], kind="stable")]
    return WhittleIndexResult(indices=indices, status=IndexStatus.INDEXABLE, indexable=True,
                              discount=discount, passive_order=order,
                              fingerprint=arm.fingerprint)


def is_indexable(arm: RestlessArm, *, discount: float | None = None) -> bool:
    """Whether the arm is indexable, by the exact test of :func:`whittle_indices`.

    Parameters
    ----------
    arm : RestlessArm
        The arm.
    discount : float or None, default None
        Discount factor in (0, 1), or ``None`` for the average reward.

    Returns
    -------
    bool
        ``True`` iff the status is :attr:`IndexStatus.INDEXABLE`. A multichain average-reward
        arm gives ``False`` with a warning (indexability not established).

    References
    ----------
    .. [GGK23] Gast, Gaujal & Khun (2023), Algorithm 2 (the indexability test).

    Examples
    --------
    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[1.0, 0.0], [0.0, 1.0]], P1=[[0.5, 0.5], [0.5, 0.5]],
    ...                   R0=[0.0, 0.0], R1=[1.0, 0.0])
    >>> is_indexable(arm, discount=0.9)
    True
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = whittle_indices(arm, discount=discount)
    if result.status is IndexStatus.MULTICHAIN:
        warnings.warn("average reward is ill-posed (multichain policy): indexability is not "
                      "established, returning False", stacklevel=2)
    return result.indexable


#: Where the vectorised recursion of :func:`is_indexable_many` takes a decision within this
#: factor of a tolerance of :func:`whittle_indices` (a slope, an advantage or a subsidy gap
#: between ``tol / _SURE`` and ``tol * _SURE``, or two candidate pivots within a subsidy
#: tolerance of each other), the arm is re-tested one at a time: the two computations round
#: differently (a few ulps), and only a decision that close to its threshold could differ.
_SURE = 2.0


def is_indexable_many(P0, P1, R0, R1, *, discount: float | None = None) -> np.ndarray:
    r"""The exact indexability test of :func:`whittle_indices` on many arms of ``n`` states.

    Parameters
    ----------
    P0, P1 : array_like, shape (k, n, n)
        Passive and active transition matrices of ``k`` arms, rows summing to 1.
    R0, R1 : array_like, shape (k, n)
        Their passive and active rewards.
    discount : float or None, default None
        Discount factor in (0, 1), or ``None`` for the average-reward criterion (then every
        arm is tested by :func:`is_indexable`, one at a time).

    Returns
    -------
    numpy.ndarray of bool, shape (k,)
        ``is_indexable(RestlessArm(P0[i], P1[i], R0[i], R1[i]), discount=discount)`` for
        each ``i``.

    Raises
    ------
    TypeError
        For entries that are not numbers, or a ``discount`` that is not a number (or None).
    ValueError
        For a wrong shape, a non-finite reward, a matrix that is not stochastic (naming the
        arm and the state), or a ``discount`` outside (0, 1).

    Notes
    -----
    The recursion (1)-(3) of :func:`whittle_indices` (Algorithm 2 of [GGK23]_, its
    indexability test included), written on arrays of shape ``(k, n, n)`` and ``(k, n)``:
    each of the ``n - 1`` pivots is a few NumPy operations on all the arms at once, instead
    of a few dozen small operations per arm. It pays for small arms (``n`` up to a few
    dozen), where :func:`whittle_indices` spends its time in Python rather than in
    arithmetic; for large arms call :func:`is_indexable`. :math:`X_\emptyset` comes from one
    batched solve, and the Sherman-Morrison updates (3) are applied to the whole of ``X``.

    It is a second implementation of the recursion, not the core of :func:`whittle_indices`
    with a batch of one: the single-arm path keeps only the columns of the still-active
    states and applies its updates 64 at a time as triangular solves and matrix products
    (level-3 BLAS, which the batched arrays of many small arms cannot use), so routing one arm
    through this function would change its bits and cost ``n^3`` more flops for large arms.
    The tests compare the two on thousands of arms.

    The arithmetic is not that of :func:`whittle_indices` (another factorisation, updates not
    delayed), so the two may differ by a few ulps. Every decision of the recursion compares a
    computed number with a tolerance of :func:`whittle_indices` (flat slopes, advantages of
    the wrong sign, a passive state rising before the next index, the choice between two
    pivots); an arm where one of them falls within a factor ``2`` of its threshold, or whose
    pivot denominator or conditioning is in doubt, is re-tested by :func:`is_indexable`.
    The verdicts are therefore those of :func:`is_indexable` unless rounding moved a number
    by more than its distance to the threshold, which is many orders of magnitude larger.

    References
    ----------
    .. [GGK23] Gast, Gaujal & Khun (2023), Algorithm 2 (the indexability test).

    Examples
    --------
    >>> import numpy as np
    >>> P0 = np.array([[[1.0, 0.0], [0.0, 1.0]]] * 2)
    >>> P1 = np.array([[[0.5, 0.5], [0.5, 0.5]]] * 2)
    >>> R0 = np.zeros((2, 2))
    >>> R1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> is_indexable_many(P0, P1, R0, R1, discount=0.9).tolist()
    [True, True]
    """
    discount = check_discount(discount)
    P0 = stochastic_matrices("P0", P0)
    k, n = P0.shape[:2]
    P1 = stochastic_matrices("P1", P1, (k, n))
    R0, R1 = (np.array(as_numeric(name, value), dtype=float)
              for name, value in (("R0", R0), ("R1", R1)))
    for name, arr in (("R0", R0), ("R1", R1)):
        if arr.shape != (k, n):
            raise ValueError(f"{name} must have shape {(k, n)} like P0, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            i, x = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"{name} must be finite, got {float(arr[i, x])!r} for arm {i}, "
                             f"state {x}")
    if k == 0 or n == 0:
        return np.zeros(k, dtype=bool)
    if discount is None:
        return np.array([is_indexable(RestlessArm(P0[i], P1[i], R0[i], R1[i]))
                         for i in range(k)], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        verdict, unsure = _ggk_many(P0, P1, R0, R1, discount)
    for i in np.flatnonzero(unsure):
        verdict[i] = is_indexable(RestlessArm(P0[i], P1[i], R0[i], R1[i]), discount=discount)
    return verdict


def _ggk_many(P0, P1, R0, R1, discount):
    """``(verdict, unsure)`` of :func:`is_indexable_many` (discounted), see its Notes.

    One algorithm, two implementations, on purpose: this is :func:`_ggk` vectorised over arms
    (full ``X`` updated at each pivot, no delayed blocks), and :func:`whittle_indices` does not
    call it with one arm because its blocked level-3 updates (and only them) keep large arms at
    a few LU factorisations and give the bits the stored results were computed with.
    The library's tests compare the two verdicts on thousands of arms.
    """
    k, n = R0.shape
    arms = np.arange(k)
    rewards = np.concatenate([R0, R1], axis=1)
    scale = np.maximum(np.ptp(rewards, axis=1), np.abs(R1 - R0).max(axis=1))
    scale[scale <= 0.0] = 1.0
    adv_tol = _ADVANTAGE_TOL * scale[:, None]
    A = np.eye(n) - discount * P1
    delta = discount * (P1 - P0)
    unsure = np.zeros(k, dtype=bool)
    # conditioning of A_0 (1-norm estimate as whittle_indices, here from the inverse itself)
    inv = np.linalg.inv(A)
    rcond = 1.0 / (np.abs(A).sum(axis=1).max(axis=1) * np.abs(inv).sum(axis=1).max(axis=1))
    unsure |= ~(rcond >= _RCOND_TOL * _SURE)
    X = delta @ inv                                         # X_0 = Delta A_0^{-1}
    z = R1 - R0 + (X @ R1[:, :, None])[:, :, 0]             # a_0 of (1)
    slope = np.ones((k, n))                                 # 1 - y_0
    active = np.ones((k, n), dtype=bool)
    sigma = np.argmin(z, axis=1)
    mu = z[arms, sigma].copy()
    if n > 1:                                               # a tie for the first index
        gap = np.partition(z, 1, axis=1)[:, 1] - mu
        unsure |= gap <= _SUBSIDY_TOL * (scale + np.abs(mu)) * _SURE
    z -= mu[:, None]
    done = np.zeros(k, dtype=bool)
    verdict = np.ones(k, dtype=bool)
    for _ in range(1, n):
        # pivot (3): sigma becomes passive
        col = X[arms, :, sigma]
        den = 1.0 + col[arms, sigma]
        unsure |= ~done & ~(den > _PIVOT_TOL * _SURE)
        u = col / den[:, None]
        slope -= slope[arms, sigma][:, None] * u
        X -= u[:, :, None] * X[arms, sigma, :][:, None, :]
        active[arms, sigma] = False
        # next index (2) and the indexability test, as _next_event's careful path
        ratio = np.maximum(z / slope, 0.0)
        mag = np.abs(slope)
        near = (mag > _SLOPE_TOL / _SURE) & (mag <= _SLOPE_TOL * _SURE)
        zn = np.abs(z)
        near |= (zn > adv_tol / _SURE) & (zn <= adv_tol * _SURE)
        unsure |= ~done & near.any(axis=1)
        step_active = np.where(active & (slope > _SLOPE_TOL), ratio, np.inf)
        step_active[active & (mag <= _SLOPE_TOL) & (z <= adv_tol)] = 0.0
        passive = ~active
        step_passive = np.where(passive & (slope < -_SLOPE_TOL), ratio, np.inf)
        step_passive[passive & (z > adv_tol)] = 0.0
        nxt = np.argmin(step_active, axis=1)
        step = step_active[arms, nxt]
        bad_step = step_passive.min(axis=1)
        tol = _SUBSIDY_TOL * (scale + np.abs(mu))
        # a second active state within a tolerance of the first: the order of the tie may
        # differ from whittle_indices'
        second = np.partition(step_active, 1, axis=1)[:, 1] if n > 1 else np.full(k, np.inf)
        tie = np.isfinite(step) & (second - step <= tol * _SURE)
        gap = bad_step - (step - tol)
        close = np.isfinite(bad_step) & (np.abs(gap) <= tol * _SURE) & np.isfinite(step)
        unsure |= ~done & (tie | close)
        bad = ~done & (bad_step < step - tol)
        verdict[bad] = False
        done |= bad | ~np.isfinite(step)
        step = np.where(done, 0.0, step)
        mu += step
        z -= step[:, None] * slope
        sigma = np.where(done, sigma, nxt)
        # a finished arm keeps pivoting on a state already passive: its numbers are unused
        if done.all():
            break
    return verdict, unsure


# --- the reference: bisection on the subsidy ------------------------------------------------

def _optimal_advantage(arm, discount, lam, active, tol):
    """Policy iteration at subsidy ``lam`` from the policy ``active``; return Q1 - Q0.

    :func:`whittle_lib.mdp.dense_policy_iteration`: exact (finite) for the discounted
    criterion and for the average-reward criterion when every policy is unichain [Puterman
    1994, Sec. 6.4, 8.6]. A state switches action only if that gains more than ``tol``, so
    rounding cannot cycle.
    """
    sol = mdp.dense_policy_iteration(np.stack([arm.P0, arm.P1]),
                                     np.stack([arm.R0 + lam, arm.R1], axis=1),
                                     discount=None if discount == 1.0 else discount,
                                     policy=active.astype(int), tol=tol)
    return sol.q[:, 1] - sol.q[:, 0], sol.policy.astype(bool)


def whittle_indices_bisection(arm: RestlessArm, *, discount: float | None = None,
                              tol: float = 1e-10) -> np.ndarray:
    r"""Whittle indices from the definition, by bisection on the subsidy (slow reference).

    For every state ``x`` the subsidy interval is halved until it is shorter than ``tol``:
    at each probe ``lam`` the arm's MDP with subsidy ``lam`` for passivity is solved exactly by
    policy iteration (linear solves), and ``x`` is in the passive set when
    :math:`Q_\lambda(x, 0) \ge Q_\lambda(x, 1)`. The index is the midpoint of the last interval,
    so it is within ``tol / 2`` of :math:`\inf\{\lambda: x \in \Pi(\lambda)\}` when the arm is
    indexable. Nothing is checked about indexability: on a non-indexable arm the result is one
    of the crossing points.

    Parameters
    ----------
    arm : RestlessArm
        The arm. For the average reward every policy must be unichain (e.g. all transition
        probabilities positive); otherwise the linear solves fail.
    discount : float or None, default None
        Discount factor in (0, 1), or ``None`` for the average reward.
    tol : float, default 1e-10
        Width of the final bisection interval (reward units), positive.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The indices; ``+inf`` (``-inf``) where ``x`` is active (passive) at every subsidy up to
        ``1e12`` times the reward scale.

    References
    ----------
    .. [W88] Whittle (1988), the definition of the index by the subsidy for passivity.
    .. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Sec. 6.4 and 8.6
       (policy iteration).

    Examples
    --------
    >>> from whittle_lib.arms import RestlessArm
    >>> arm = RestlessArm(P0=[[0.9, 0.1], [0.9, 0.1]], P1=[[0.1, 0.9], [0.1, 0.9]],
    ...                   R0=[0.0, 0.0], R1=[0.0, 1.0])
    >>> whittle_indices_bisection(arm, discount=0.5).round(6).tolist()
    [0.4, 1.0]
    """
    discount = check_discount(discount)
    _check_arm(arm)
    tol = check_real("tol", tol, 0.0, np.inf, low_open=True, high_open=True)
    beta = 1.0 if discount is None else discount
    n = arm.n_states
    scale = _reward_scale(arm)
    # Values are O(scale / (1 - discount)) (discounted) or biases O(n * scale) (average);
    # policy evaluation errs by a few hundred ulps of that, far below 1e-12 of it.
    pi_tol = 1e-12 * scale * (1.0 / (1.0 - beta) if beta < 1.0 else n)
    limit = 1e12 * scale
    out = np.empty(n)
    policy = np.ones(n, dtype=bool)
    for x in range(n):
        lo, hi = -scale, scale
        adv, policy = _optimal_advantage(arm, beta, lo, policy, pi_tol)
        while adv[x] <= 0.0 and lo > -limit:  # x must be active at lo
            hi, lo = lo, 2.0 * lo
            adv, policy = _optimal_advantage(arm, beta, lo, policy, pi_tol)
        if adv[x] <= 0.0:
            out[x] = -np.inf
            continue
        adv, policy = _optimal_advantage(arm, beta, hi, policy, pi_tol)
        while adv[x] > 0.0 and hi < limit:  # x must be passive at hi
            lo, hi = hi, 2.0 * hi
            adv, policy = _optimal_advantage(arm, beta, hi, policy, pi_tol)
        if adv[x] > 0.0:
            out[x] = np.inf
            continue
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            adv, policy = _optimal_advantage(arm, beta, mid, policy, pi_tol)
            if adv[x] > 0.0:
                lo = mid
            else:
                hi = mid
        out[x] = 0.5 * (lo + hi)
    return out


def gittins_indices(P, R, *, discount: float) -> np.ndarray:
    r"""Gittins indices of a rested (classical) bandit arm.

    The Gittins index of state ``x`` is the largest reward rate a stopping time can earn,

    .. math:: G(x) = \sup_{\tau \ge 1} \frac{E_x \sum_{t<\tau} \beta^t R(X_t)}
                                              {E_x \sum_{t<\tau} \beta^t},

    and it is the Whittle index of the *rested* arm that freezes and pays nothing when passive
    (``P0 = I``, ``R0 = 0``; Whittle 1980, [W88]_): with subsidy ``lam`` for passivity,
    resting forever in ``x`` pays ``lam / (1 - beta)``, and ``x`` is on the boundary exactly
    when ``lam`` equals the best reward rate. Such an arm is always indexable, and
    :func:`whittle_indices` computes its indices by state elimination (Sonin 2008, [S08]_),
    about the cost of one LU factorisation.

    Parameters
    ----------
    P : array_like, shape (n, n)
        Transition matrix of the arm when it is played.
    R : array_like, shape (n,)
        Reward when it is played.
    discount : float
        ``beta`` in (0, 1) (a discounted criterion only: an undiscounted rested arm is
        multichain).

    Returns
    -------
    ndarray, shape (n,)

    References
    ----------
    .. [W88] P. Whittle, "Restless bandits: activity allocation in a changing world",
       *J. Appl. Probab.* 25A, 287-298, 1988.
    .. [S08] I. M. Sonin, "A generalized Gittins index for a Markov chain and its recursive
       calculation", *Statist. Probab. Lett.* 78(12), 1526-1533, 2008.

    Examples
    --------
    State 0 pays 1 forever: index 1. State 1 pays 0 once and then moves to state 0: the best
    stopping time plays on, at rate ``(beta / (1 - beta)) (1 - beta) = beta``.

    >>> gittins_indices([[1.0, 0.0], [1.0, 0.0]], [1.0, 0.0], discount=0.5).round(12).tolist()
    [1.0, 0.5]
    """
    discount = check_discount(discount, average=False)
    arm = RestlessArm.rested(P, R)
    return whittle_indices(arm, discount=discount).indices
