r"""Sec. 4 of [PS23]_ (Lemma 4, Table 1): the two lowest missing costs changed to restore
Assumption 3, under three readings of what the change may do.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from whittle_lib.arms import RestlessArm
from whittle_lib.indices import is_indexable, whittle_indices
from whittle_lib.models.caching import CachingContent, check_assumptions, repair_missing_costs

from .instances import joint_contents, quietly_indexable

__all__ = ["arm_with_missing_cost", "RepairRow", "repair_reading", "repair_verdicts",
           "repair_table", "r2_repair_indices", "R1_READING", "RepairReadings", "repair_readings",
           "sec4_readings"]


def arm_with_missing_cost(content: CachingContent, missing_cost) -> RestlessArm:
    r"""The arm of ``content`` (:meth:`~whittle_lib.models.caching.CachingContent.arm`) with other
    missing costs, negative ones allowed.

    Lemma 4's three properties (non-decreasing, concave, Assumption 3) do not ask for
    :math:`C' \ge 0`; a repair without that constraint
    (``repair_missing_costs(..., nonnegative=False)``) may lower :math:`C(r_1) = 0` below 0,
    which :class:`~whittle_lib.models.caching.CachingContent` does not hold. Its index and
    indexability are still defined; this builds the arm for them.
    """
    cost = np.asarray(missing_cost, dtype=float)
    K = content.n_levels
    if cost.shape != (K,) or not np.all(np.isfinite(cost)):
        raise ValueError(f"missing_cost must be {K} finite numbers, got {cost.tolist()}")
    arm = content.arm()
    return RestlessArm(P0=arm.P0, P1=arm.P1, R0=-np.tile(content.P0 @ cost, 2), R1=arm.R1)


@dataclass(frozen=True, eq=False)
class RepairRow:
    """One content violating Assumption 3 and its repair (Sec. 4, Lemma 4, Table 1).

    Attributes
    ----------
    exponent : float
        ``e`` of :math:`C_n(r) = w_n r^e`.
    content_no : int
    content : CachingContent
        With the original costs.
    repair : MissingCostRepair
    assumptions_after : bool
        Assumptions 1-3 hold after the repair (checked on ``C' - min(C', 0)``: Assumptions
        2 and 3 do not see a constant).
    indexable_before, indexable_after : bool
    """

    exponent: float
    content_no: int
    content: CachingContent
    repair: object
    assumptions_after: bool
    indexable_before: bool
    indexable_after: bool


def repair_reading(weights, chains, levels, exponents, *, fetch_cost: float, discount: float,
                   nonnegative: bool) -> list:
    r"""Repair every content :math:`C_n(r) = w_n r^e` on ``levels`` that violates Assumption 3
    (:func:`whittle_lib.models.caching.repair_missing_costs`, Lemma 4), for each exponent ``e``.

    Returns
    -------
    list of RepairRow
    """
    rows = []
    for e in exponents:
        for n, c in enumerate(joint_contents(weights, chains, levels, fetch_cost=fetch_cost,
                                             exponent=e)):
            if check_assumptions(c).assumption3:
                continue
            rp = repair_missing_costs(c, nonnegative=nonnegative)
            before = quietly_indexable(c, discount)
            after = ok_after = False
            if rp.feasible:
                new = np.concatenate([rp.modified, c.missing_cost[2:]])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    after = is_indexable(arm_with_missing_cost(c, new), discount=discount)
                shifted = c.with_missing_cost(new - min(new.min(), 0.0))
                ok_after = check_assumptions(shifted).assumptions_1_to_3
            rows.append(RepairRow(e, n, c, rp, ok_after, before, after))
    return rows


def repair_verdicts(readings: dict):
    """``(restores, indexable_after)``, readings for ``Comparison.claim_by_reading`` of the
    two claims of Sec. 4, from ``{reading name: rows of repair_reading}``."""
    restores, idx_after = {}, {}
    for name, rows in readings.items():
        fixed = [x for x in rows if x.repair.feasible]
        restores[f"{name}: fixable {len(fixed)} of {len(rows)}"] = (
            len(fixed) > 0 and all(x.assumptions_after for x in fixed))
        idx_after[f"{name}: {sum(x.indexable_after for x in fixed)} of {len(fixed)}"] = all(
            x.indexable_after for x in fixed)
    return restores, idx_after


def repair_table(rows) -> str:
    """The rows of :func:`repair_reading` as a text table (Sec. 4, Table 1): original and
    modified ``C(r_1), C(r_2)``, the change, Assumptions 1-3 after, indexable before and
    after."""
    pair = lambda v: f"{v[0]:.4f}, {v[1]:.4f}"
    yes = lambda b: "yes" if b else "no"
    lines = [f"{'e':>6s}  {'content':>7s}  {'C(r1), C(r2)':>14s}  {'modified to':>20s}  "
             f"{'change':>6s}  {'A1-A3 after':>11s}  {'indexable before, after':>23s}"]
    for x in rows:
        rp, before = x.repair, yes(x.indexable_before)
        lines.append(f"{x.exponent:6g}  {x.content_no:7d}  {pair(rp.original):>14s}  " + (
            f"{pair(rp.modified):>20s}  {rp.change:6.4f}  {yes(x.assumptions_after):>11s}  "
            f"{before + ', ' + yes(x.indexable_after):>23s}" if rp.feasible else
            f"{'none (LP infeasible)':>20s}  {'':6s}  {'':11s}  {before + ', -':>23s}"))
    return "\n".join(lines)


def r2_repair_indices(content: CachingContent, discount: float) -> np.ndarray:
    """Indices of ``content`` with its missing costs repaired under R2 (no ``C' >= 0``), the
    original ones if Assumption 3 holds or the repair is infeasible."""
    cost = content.missing_cost
    if not check_assumptions(content).assumption3:
        rp = repair_missing_costs(content, nonnegative=False)
        cost = np.concatenate([rp.modified, content.missing_cost[2:]]) if rp.feasible else cost
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return whittle_indices(arm_with_missing_cost(content, cost), discount=discount).indices


#: The first reading of Sec. 4 (its key in :attr:`RepairReadings.readings`).
R1_READING = "R1 (r_1 = 0, C' >= 0)"


@dataclass(frozen=True, eq=False)
class RepairReadings:
    """The repairs of Sec. 4 (Lemma 4, Table 1) under the three readings (:func:`repair_readings`).

    Attributes
    ----------
    readings : dict
        ``{reading name: list of RepairRow}``: R1 (levels from 0, ``C' >= 0``), R2 (levels
        from 0, no ``C' >= 0``), R3 (levels from ``first_level``, ``C' >= 0``).
    exponents : tuple of float
        ``e`` of :math:`C_n(r) = w_n r^e`.
    n_contents : int
    """

    readings: dict
    exponents: tuple
    n_contents: int

    def table(self) -> str:
        """A note that only the contents violating Assumption 3 are listed, then each
        reading's name and :func:`repair_table`."""
        return "\n".join(["only contents violating Assumption 3 are listed: the others need no "
                          "change"] + [f"{name}\n" + repair_table(rows)
                                       for name, rows in self.readings.items()])


def repair_readings(weights, chains, levels, exponents, *, first_level: float,
                    fetch_cost: float, discount: float) -> RepairReadings:
    """:func:`repair_reading` of the contents :math:`C_n(r) = w_n r^e` under the three readings
    of Sec. 4: R1 and R2 on ``levels``, R3 on ``levels + first_level``."""
    lv = np.asarray(levels, dtype=float)
    names = {R1_READING: (0.0, True), "R2 (r_1 = 0, no C' >= 0)": (0.0, False),
             f"R3 (r_1 = {first_level:g}, C' >= 0)": (first_level, True)}
    return RepairReadings({name: repair_reading(weights, chains, lv + first, exponents,
                                                fetch_cost=fetch_cost, discount=discount,
                                                nonnegative=nonneg)
                           for name, (first, nonneg) in names.items()},
                          tuple(exponents), len(weights))


def sec4_readings(repairs: RepairReadings) -> dict:
    """``{"restores": (verdicts, evidence), "indexable": (verdicts, evidence)}``: the two claims
    of Sec. 4 of [PS23] (Lemma 4, Table 1) judged by reading: changing
    :math:`C(r_1), C(r_2)` restores Assumptions 2 and 3 in some cases, and the modified contents
    are indexable (:func:`repair_verdicts`)."""
    sec4 = repairs.readings
    restores, idx_after = repair_verdicts(sec4)
    n_viol = {name: len(rows) for name, rows in sec4.items()}
    r1 = sec4[R1_READING]
    return {"restores": (
        restores,
        f"Contents violating Assumption 3, of {len(repairs.exponents) * repairs.n_contents}: "
        + ", ".join(f"{k.split(' ')[0]} {v}" for k, v in n_viol.items())
        + ". Under R1 (C(r_1) = 0 and C' >= 0: C(r_1) cannot be lowered) only C(r_2) can move and "
        "no linear cost is fixable; dropping C' >= 0 (R2, Lemma 4's properties) or starting the "
        "levels at r_1 > 0 (R3) makes every violating content fixable."),
        "indexable": (
        idx_after,
        f"Indexable before any change (original costs): {sum(x.indexable_before for x in r1)} of "
        f"{len(r1)} violating contents under R1, so in these instances the change is not needed "
        "for indexability.")}
