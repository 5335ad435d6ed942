"""The cost of the robots draft under the readings its text allows: the value of ``mu``
(0.5 in Sec. 4, 1 in the captions), the rows printed ``gamma = 1.13``, and the cost as Sec. 6
words it (a loss *probability*), each judged by the ``C_s`` that Table 1 prints.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from whittle_lib import arithmetic as _fp
from whittle_lib.models import robots as _q
from .paper import format_verdicts as _format_verdicts
from .paper import table_row_parameters as _table_row_parameters

__all__ = ["MU_TEXT", "LOSS_PROBABILITY_TEXT", "static_cost_loss_probability",
           "static_costs_matched", "brute_static_costs_matched", "check_cost_readings",
           "mu_readings", "loss_probability_readings"]

#: The claims of Secs. 4 and 6 on the cost, as the results file words them.
MU_TEXT = "mu was fixed and set to 0.5"
LOSS_PROBABILITY_TEXT = ("the cost is a weighted sum of the loss probability and the starvation "
                         "probability")


def static_cost_loss_probability(rho, gamma: float, K: int) -> np.ndarray:
    """The cost as Sec. 6 words it: ``gamma P(X = 0) + P(X = K)`` (a loss *probability*).

    Eq. (1) weighs the loss *rate* ``lam N P(X = K) = mu rho P(X = K)`` instead.
    """
    rho = np.atleast_1d(np.asarray(rho, dtype=float))
    if not (np.all(rho > 0) and np.all(np.isfinite(rho))):
        raise ValueError(f"rho must be positive and finite, got {rho}")
    if isinstance(K, bool) or int(K) != K or K < 2:
        raise ValueError(f"K must be an integer >= 2, got {K!r}")
    K = int(K)
    out = np.empty_like(rho)
    # mm1k_distribution(x, K) for all x at once, row by row the same bits: its powers are
    # element-wise (whittle_lib.arithmetic.power, as there) and each row's sum is the sum of
    # one row
    i = np.arange(K + 1)
    for above in (False, True):
        rows = (rho > 1) == above
        if rows.any():
            w = _fp.power(rho[rows][:, None], i - K if above else i)
            p = w / w.sum(axis=1, keepdims=True)
            out[rows] = gamma * p[:, 0] + p[:, K]
    return out



def static_costs_matched(printed_cs: Mapping[str, str], mu: float) -> int:
    """How many printed ``C_s`` (``{setting: text}``, Table 1) the static optimum
    (Proposition 1, eq. (4)) with this ``mu`` prints to five decimals."""
    return sum(f"{_q.robots_static_optimum(lam, mu, g, K).cost:.5f}" == printed
               for (lam, K, g), printed in zip(map(_table_row_parameters, printed_cs),
                                               printed_cs.values()))


def brute_static_costs_matched(printed_cs: Mapping[str, str], mu: float, *,
                               loss: str = "rate", printed_N=None) -> int:
    """How many printed ``C_s`` a cost reproduces to five decimals, with ``loss = "rate"``
    (eq. (1): ``lam N P(X = K)``) or ``"probability"`` (Sec. 6: ``P(X = K)``).

    The cost is minimised by exhaustive search over ``n = 1 .. 4 mu/lam + 20``, or taken at
    ``printed_N`` (``{setting: text}``, the printed ``N_s``) if given.
    """
    if loss not in ("rate", "probability"):
        raise ValueError(f"loss must be 'rate' or 'probability', got {loss!r}")
    hits = 0
    for s, printed in printed_cs.items():
        lam, K, g = _table_row_parameters(s)
        n = (np.arange(1, int(4 * mu / lam) + 20) if printed_N is None
             else np.array([int(printed_N[s])]))
        c = (_q.robots_cost(n * lam / mu, g, K, mu) if loss == "rate"
             else static_cost_loss_probability(n * lam / mu, g, K))
        hits += f"{c.min():.5f}" == printed
    return hits



@dataclass(frozen=True)
class CostReadings:
    """How many printed ``C_s`` of Table 1 each reading of ``mu`` and of the cost reproduces
    (:func:`check_cost_readings`).

    Attributes
    ----------
    n_rows : int
        Rows of Table 1.
    printed_gamma_113 : str
        The printed ``C_s`` of the row ``lambda = 0.01``, ``K = 15``, printed ``gamma = 1.13``.
    cost_gamma_113, cost_gamma_15 : float
        Its ``C_s`` with ``gamma = 1.13`` exactly and with ``gamma(15) = 17/15``.
    rate : dict of float to int
        For ``mu`` in ``0.5, 1, 2``: rows whose ``C_s`` the static optimum of eq. (4) prints
        (:func:`static_costs_matched`).
    rate_brute : int
        The same with ``mu = 1`` by exhaustive search over ``N``
        (:func:`brute_static_costs_matched`).
    probability, probability_at_printed_N : dict of float to int
        For ``mu`` in ``1, 0.5``: rows whose ``C_s`` the loss-probability cost of Sec. 6 prints,
        minimised over ``N`` and at the printed ``N_s``.
    """

    n_rows: int
    printed_gamma_113: str
    cost_gamma_113: float
    cost_gamma_15: float
    rate: dict
    rate_brute: int
    probability: dict
    probability_at_printed_N: dict

    def report(self, cmp=None) -> str:
        """The counts as the notebook prints them; with ``cmp``, the verdicts
        the notebook recorded there too."""
        prob, at_pool, rate = self.probability, self.probability_at_printed_N, self.rate
        text = ("Table 1, row lambda=0.01, K=15, printed gamma 1.13 (paper C_s "
                f"{self.printed_gamma_113}): C_s =\n  {self.cost_gamma_113:.5f} with gamma = 1.13 "
                f"exactly, {self.cost_gamma_15:.5f} with gamma(15) = 17/15\n"
                f"printed C_s of Table 1 (of {self.n_rows}) reproduced\n"
                f"  by the loss-rate cost (1): {rate[1.0]} (mu = 1; {self.rate_brute} by "
                f"exhaustive search over N), {rate[0.5]} (mu = 0.5), {rate[2.0]} (mu = 2)\n"
                f"  by the loss-probability cost: {prob[1.0]} (mu = 1), {prob[0.5]} (mu = 0.5);\n"
                f"    at the printed N_s: {at_pool[1.0]} (mu = 1), {at_pool[0.5]} (mu = 0.5)")
        if cmp is None:
            return text
        return text + "\n" + _format_verdicts(cmp, ("Sec. 4 text", MU_TEXT),
                                               ("Sec. 6 text", LOSS_PROBABILITY_TEXT))


def check_cost_readings(cmp, mu: float) -> CostReadings:
    """The value of ``mu`` (Sec. 4 text: 0.5; the captions: 1), the rows printed ``gamma =
    1.13`` and the cost as Sec. 6 words it, judged by the printed ``C_s`` and ``N_s`` of Table 1
    of [TLNC99]_ (read from ``cmp``'s expected table); ``mu`` is the notebook's, for the rows
    printed ``gamma = 1.13``."""
    table1 = [s for (_, s, _) in cmp.keys("Table 1", "C_s")]
    printed_cs = {s: cmp.paper("Table 1", s, "C_s").paper for s in table1}
    printed_ns = {s: cmp.paper("Table 1", s, "N_s").paper for s in table1}
    return CostReadings(
        n_rows=len(table1),
        printed_gamma_113=cmp.paper("Table 1", "lambda=0.01;K=15;gamma=1.13", "C_s").paper,
        cost_gamma_113=_q.robots_static_optimum(0.01, mu, 1.13, 15).cost,
        cost_gamma_15=_q.robots_static_optimum(0.01, mu, 17 / 15, 15).cost,
        rate={m: static_costs_matched(printed_cs, m) for m in (0.5, 1.0, 2.0)},
        rate_brute=brute_static_costs_matched(printed_cs, 1.0, loss="rate"),
        probability={m: brute_static_costs_matched(printed_cs, m, loss="probability")
                     for m in (1.0, 0.5)},
        probability_at_printed_N={m: brute_static_costs_matched(printed_cs, m, loss="probability",
                                                                printed_N=printed_ns)
                                  for m in (1.0, 0.5)})


def mu_readings(readings: CostReadings) -> tuple[dict, str]:
    """The Sec. 4 text's ``mu = 0.5`` of [TLNC99]_ under its two readings
    (:func:`check_cost_readings`): the verdicts and the evidence for
    :meth:`~replication.records.Comparison.claim_by_reading`."""
    n, rate = readings.n_rows, readings.rate
    verdicts = {"mu = 0.5 (a rate, as in the captions' notation)": rate[0.5] == n,
                "mu = 2 (0.5 read as the mean service time)": rate[2.0] == n}
    evidence = (
        f"With mu = 0.5, {rate[0.5]} of {n} printed C_s are reproduced, with mu = 2 {rate[2.0]}; "
        f"with mu = 1.0 (the captions), {'all' if rate[1.0] == n else rate[1.0]} are (rows below; "
        "the rows printed gamma = 1.13 read as gamma(15) = 17/15, see above: with 1.13 literally "
        "those 3 rows miss). The printed gammas (1.4, 1.2, 1.13) are gamma(K) = mu (K + 2)/K with "
        "mu = 1, not 0.7, 0.6, 0.567. The text's 0.5 is a leftover. Searched: 2 readings of "
        f"the 0.5, each on all {n} rows; a reading stands only if it prints every C_s to its 5 "
        "decimals, so one row off by more than half a unit of the last one refutes it.")
    return verdicts, evidence


def loss_probability_readings(readings: CostReadings) -> tuple[dict, str]:
    """The Sec. 6 wording of the cost ("loss probability") of [TLNC99]_ under four readings
    (:func:`check_cost_readings`): the verdicts and the evidence."""
    n = readings.n_rows
    prob, at_pool = readings.probability, readings.probability_at_printed_N
    verdicts = {"mu = 1 (captions), N minimising the cost": prob[1.0] == n,
                "mu = 0.5 (Sec. 4 text), N minimising the cost": prob[0.5] == n,
                "mu = 1, at the printed N_s": at_pool[1.0] == n,
                "mu = 0.5, at the printed N_s": at_pool[0.5] == n}
    evidence = (
        f"gamma P(X=0) + P(X=K), minimised over N, gives {prob[1.0]} (mu = 1) and {prob[0.5]} (mu "
        f"= 0.5) of the {n} printed C_s, and at the printed N_s {at_pool[1.0]} and {at_pool[0.5]} "
        "(where rho = 1 and mu = 1 the loss rate and the loss probability coincide); the loss "
        f"rate lambda N P(X=K) of eq. (1) gives {readings.rate_brute}. Searched: 4 readings (2 "
        f"values of mu x N minimised or the printed N_s), each on all {n} rows; a reading "
        "stands only if it prints every C_s to its 5 decimals, so one row off by more than half "
        "a unit of the last one refutes it.")
    return verdicts, evidence


