r"""Figs. 5-7 of [PS23]_: the Whittle index policy against the optimum and greedy on the
joint problem (its ties, its Monte Carlo cost), and the passive set of Fig. 7.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib.models.caching import (evaluate_joint_policy, index_policy,
                                       popularity_perturbation, simulate_policy,
                                       theorem51_bound)

from ...records import format_estimate
from .instances import TIE_RTOL

__all__ = ["snap_ties", "PolicyComparison", "close_to_optimal", "format_gaps", "policy_comparison",
           "Figs56", "fig6_readings", "fig7_evidence"]


def snap_ties(priorities, *, rtol: float = TIE_RTOL) -> tuple[np.ndarray, ...]:
    r"""Make indices that are equal within the engine's accuracy exactly equal.

    The index policy (Sec. 3.4) caches the ``M`` contents of largest index among those with a
    *positive* index, ties to the lower content number. Indices that are equal in exact
    arithmetic come out of the engine a few ulps apart (e.g. ``0.0`` and ``4.4e-16``), which
    would turn a tie into a strict order and a zero into a positive index. Values within
    ``tol = rtol * max(1, max |W|)`` of 0 become 0; the remaining values, sorted, are cut into
    groups wherever two neighbours differ by more than ``tol``, and each group takes its
    smallest value.

    Parameters
    ----------
    priorities : sequence of array_like
        One array of indices per content.
    rtol : float
        Relative accuracy, default :data:`TIE_RTOL` (that of the engine).

    Returns
    -------
    tuple of numpy.ndarray
        Same shapes.

    Examples
    --------
    >>> [a.tolist() for a in snap_ties([[0.0, 1.0], [4.4e-16, 1.0 + 1e-12]])]
    [[0.0, 1.0], [0.0, 1.0]]
    """
    rtol = float(rtol)
    if not rtol >= 0.0:
        raise ValueError(f"rtol must be >= 0, got {rtol!r}")
    arrays = [np.asarray(p, dtype=float) for p in priorities]
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)
    finite = flat[np.isfinite(flat)]
    tol = rtol * max(1.0, float(np.abs(finite).max()) if finite.size else 1.0)
    out = np.where(np.abs(flat) <= tol, 0.0, flat)
    order = np.argsort(out, kind="stable")
    vals = out[order]
    ok = np.isfinite(vals)
    new_group = np.concatenate([[True], np.diff(vals) > tol]) | ~ok
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(vals.size), 0))
    snapped = np.where(ok, vals[group_start], vals)
    out[order] = snapped
    res, at = [], 0
    for a in arrays:
        res.append(out[at:at + a.size].reshape(a.shape))
        at += a.size
    return tuple(res)


@dataclass(frozen=True, eq=False)
class PolicyComparison:
    """Discounted costs of the policies of Figs. 5-6 (:func:`policy_comparison`).

    Attributes
    ----------
    costs : dict
        ``{name: (exact, MonteCarloEstimate or None)}`` for ``"optimal"``, ``"Whittle"``,
        ``"greedy"``, ``"Whittle, raw"`` (engine indices without :func:`snap_ties`; exact
        only) and every extra priority rule (exact only). Exact: the mean over the initial
        levels with nothing cached.
    n_snapped : int
        Index values moved by :func:`snap_ties`.
    optimum : JointSolution
    """

    costs: dict
    n_snapped: int
    optimum: object

    @property
    def intervals_contain_exact(self) -> bool:
        """Each Monte Carlo 95 % interval of optimal, Whittle and greedy contains its exact
        value."""
        return all(est.interval.low <= exact <= est.interval.high
                   for exact, est in (self.costs[n] for n in ("optimal", "Whittle", "greedy")))

    def report(self, label: str) -> str:
        """The comparison as a text table headed ``label``: exact (and Monte Carlo) costs,
        the raw engine indices, the extras and the optimum's convergence."""
        est0 = self.costs["optimal"][1]
        mc = est0 is not None
        lines = [f"{label}: expected discounted cost    exact"
                 + (f"    Monte Carlo ({est0.n_runs} runs, 95 %)" if mc else "")]
        for name, (exact, est) in list(self.costs.items())[:3]:
            lines.append(f"  {name:28s} {exact:9.4f}" + (
                f"    {format_estimate(est.mean, est.interval.half_width)}" if mc else ""))
        lines.append(f"  Whittle, raw engine indices  {self.costs['Whittle, raw'][0]:9.4f}    "
                     f"({self.n_snapped} index values moved by the tie rule)")
        lines += [f"  {name:28s} {exact:9.4f}" for name, (exact, _) in list(self.costs.items())[4:]]
        opt = self.optimum
        lines.append(f"  optimum: {opt.vi_iterations} value-iteration sweeps, {opt.pi_iterations} "
                     f"policy-iteration steps, Bellman residual "
                     + (f"{opt.residual:.1e}" if opt.residual >= 1e-9 else "below 1e-09"))
        return "\n".join(lines)

    def evidence(self) -> str:
        """The evidence of the claim of Figs. 5-6: exact costs with the gaps to the optimum,
        the Monte Carlo estimates and whether their intervals contain the exact values."""
        c = self.costs
        mcs = [c[n][1] for n in ("optimal", "Whittle", "greedy")]
        return (f"exact discounted costs: optimal {c['optimal'][0]:.4f}, "
                f"{format_gaps(c, ['Whittle', 'greedy'])}; Monte Carlo ({mcs[0].n_runs} runs) "
                + ", ".join(format_estimate(m.mean, m.interval.half_width) for m in mcs)
                + "; each 95 % interval "
                + ("contains" if self.intervals_contain_exact else "does NOT contain")
                + " its exact value. Indices within the engine's accuracy are tied (raw engine "
                f"indices: Whittle {c['Whittle, raw'][0]:.4f}).")


def close_to_optimal(costs: dict, name: str = "Whittle", *, rtol: float = 0.02) -> bool:
    """The claim of Figs. 5-6 on exact costs: ``name`` within ``rtol`` of the optimum
    (ours: 2 %) and cheaper than greedy."""
    o, w, g = costs["optimal"][0], costs[name][0], costs["greedy"][0]
    return (w - o) / o <= rtol and w < g


def format_gaps(costs: dict, names) -> str:
    """``"name cost (+x %)"`` for each of ``names``, the excess over the optimum."""
    o = costs["optimal"][0]
    return ", ".join(f"{n} {costs[n][0]:.4f} (+{100 * (costs[n][0] - o) / o:.2f} %)"
                     for n in names)


def policy_comparison(run, *, n_runs: int, horizon: int, rng, extra=None,
                      monte_carlo: bool = True) -> PolicyComparison:
    """The record of one exact comparison of Figs. 5-6: its Monte Carlo costs and the index
    policy with the engine's raw indices (and any ``extra`` priorities), exactly.

    Parameters
    ----------
    run : mapping
        The exact comparison as the notebook computes it (Part I): ``"problem"`` (a
        :class:`~whittle_lib.models.caching.CachingProblem`), ``"optimum"`` (its
        :func:`~whittle_lib.models.caching.solve_joint`), ``"raw"`` (the engine's Whittle
        priorities), ``"rules"`` (``{"Whittle": ..., "greedy": ...}``, priorities after
        :func:`snap_ties`) and ``"exact"`` (``{"optimal", "Whittle", "greedy"}``: each policy's
        exact discounted cost, the mean over the initial levels with nothing cached).
    n_runs, horizon : int
        Monte Carlo runs per policy, slots per run.
    rng : numpy.random.Generator
        Keyword-only. The initial levels of the runs are drawn first, then the runs of the
        optimal, Whittle and greedy policies in turn; nothing is drawn without
        ``monte_carlo``.
    extra : mapping of str to priorities, optional
        Other priority rules, costed exactly (after :func:`snap_ties`).

    Returns
    -------
    PolicyComparison
    """
    prob, opt, raw, rules, exact = (run[k] for k in ("problem", "optimum", "raw", "rules",
                                                       "exact"))
    n_lv = prob.contents[0].n_levels
    L = n_lv ** prob.n_contents                          # configuration 0: nothing cached
    policies = {"optimal": opt.policy, **rules}
    out = {name: (exact[name], None) for name in policies}
    if monte_carlo:
        lv0 = rng.integers(0, n_lv, size=(n_runs, prob.n_contents))
        c0 = np.zeros_like(lv0)
        out = {name: (exact[name], simulate_policy(prob, pol, initial_levels=lv0,
                                                   initial_cached=c0, horizon=horizon, rng=rng))
               for name, pol in policies.items()}
    out["Whittle, raw"] = (evaluate_joint_policy(prob, index_policy(prob, raw))[:L].mean(), None)
    for name, pol in (extra or {}).items():
        out[name] = (evaluate_joint_policy(prob, index_policy(prob, snap_ties(pol)))[:L].mean(),
                     None)
    n_snap = sum(int(np.sum(a != b)) for a, b in zip(raw, rules["Whittle"]))
    return PolicyComparison(out, n_snap, opt)


@dataclass(frozen=True, eq=False)
class Figs56:
    """The policy comparisons of Figs. 5-6 (:func:`policy_comparison` of each).

    Attributes
    ----------
    comparisons : dict
        ``{label: PolicyComparison}``: ``"Fig. 5"`` (:math:`w_n \\sqrt r`), ``"Fig. 6 (R1)"``
        (:math:`w_n r^e`, indices of the R1 repair, the R2 repair as an extra rule, exact
        only) and the R3 instance (levels from ``first_level``, exact only).
    n_contents, capacity, n_levels : int
    exponent, first_level : float
    """

    comparisons: dict
    n_contents: int
    capacity: int
    n_levels: int
    exponent: float
    first_level: float

    @property
    def fig5(self) -> PolicyComparison:
        return self.comparisons["Fig. 5"]

    @property
    def fig6(self) -> PolicyComparison:
        return self.comparisons["Fig. 6 (R1)"]

    @property
    def fig6_r3(self) -> PolicyComparison:
        return self.comparisons[f"Fig. 6, R3 instance (levels from {self.first_level:g})"]

    def report(self) -> str:
        """Every comparison's :meth:`PolicyComparison.report`."""
        return "\n".join(c.report(label) for label, c in self.comparisons.items())


def fig6_readings(figs: Figs56) -> tuple[dict, str]:
    """``(verdicts, evidence)`` of the claim of Fig. 6 of [PS23], "the Whittle index policy is
    close to optimal and better than greedy" (ours: within 2 % on exact costs,
    :func:`close_to_optimal`), judged under the readings R1, R2, R3 of Sec. 4. Fig. 5 is one
    claim: ``close_to_optimal(figs.fig5.costs)`` with ``figs.fig5.evidence()``."""
    r3, res = figs.fig6_r3.costs, figs.fig6.costs
    return ({"indices of the R1 repair": bool(close_to_optimal(res)),
             "of the R2 repair (no C' >= 0)": bool(close_to_optimal(res, "Whittle, R2 repair")),
             f"R3 instance (levels from {figs.first_level:g}), its repair":
                 bool(close_to_optimal(r3))},
            figs.fig6.evidence() + f" R2 repair: {format_gaps(res, ['Whittle, R2 repair'])}. "
            f"R3 instance: optimal {r3['optimal'][0]:.4f}, "
            + format_gaps(r3, ["Whittle", "greedy"]) + ".")


def fig7_evidence(content, discount: float, lams, passive, engine: bool) -> str:
    """The evidence of the claim of Fig. 7 of [PS23], the arm is indexable beyond the bound of
    Theorem 5.1: the passive-set sizes ``passive`` at the penalties ``lams`` (the claim needs
    them non-decreasing, from none to all states) and the engine's verdict ``engine``."""
    eps = popularity_perturbation(content)
    bound, K = theorem51_bound(discount), content.n_levels
    rel = ">" if eps > bound else "<="
    return (f"eps = {eps:.2f} {rel} (1-beta)/beta = {bound:.4f}; the passive set grows from 0 to "
            f"{2 * K} states over {len(lams)} penalties in [{lams[0]:g}, "
            f"{lams[-1]:g}] without shrinking; engine verdict indexable = {engine}.")
