r"""The learned indices: Figs. 1-2, the quick sweep of the constants the paper does not give,
and the index of the stochastic model.

The notebook learns (:func:`whittle_lib.learning.learn_whittle_index_many`) and sweeps in its
Part I; this module turns what it computed into the record's readings and notes:

* Figs. 1-2: how often the projection acted (:func:`projection_counts`), whether the weights
  settled (:class:`WeightConvergence`), and the claim that the projection acts "of the order
  :math:`10^2` times" under every reading (:func:`projection_order`);
* the quick sweep over the index step ``a0`` and the projection fraction ``p``, stacked over
  its replications (:class:`SweepSummary`);
* the stochastic model's index, computed by
  :func:`whittle_lib.models.crawling.stochastic_whittle_index` independently of the learning
  code, beside the learned indices (:func:`compare_indices`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from whittle_lib.learning import CrawlerIndexProblem
from whittle_lib.models import crawling

from .paper import ClaimReadings, MainRun

__all__ = ["SweepConfig", "SweepSummary", "ProjectionCounts", "projection_counts",
           "WeightConvergence", "convergence_evidence", "compare_indices", "stochastic_index_note",
           "LEARNED_INDEX_NOTE", "projection_order", "projection_order_evidence"]


# -- the quick sweep ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepConfig:
    """The grid of the quick sweep: index steps ``a0`` (of
    :class:`~whittle_lib.learning.StepSizes`), projection fractions ``p`` (``None``: no
    projection) and the two readings of the subsidy, each learned for ``n_steps`` iterations
    and evaluated for ``eval_periods`` periods with ``M`` in ``Ms``.

    Every ``p`` runs on the same thresholds and utilities (common random numbers); the
    evaluation runs every learned index and the exact deterministic index on the same arrivals.
    """

    a0s: tuple = (0.05, 0.5, 5.0)
    ps: tuple = (0.05, 0.1, 0.2, 0.4, None)
    subsidy_at: tuple = ("threshold", "state")
    n_steps: int = 3_000
    eval_periods: int = 1_500
    Ms: tuple = (1, 2)

    def __post_init__(self) -> None:
        if not self.a0s or any(not (a > 0 and math.isfinite(a)) for a in self.a0s):
            raise ValueError(f"a0s must be positive and finite, got {self.a0s!r}")
        if not self.ps or self.ps[-1] is not None or None in self.ps[:-1]:
            raise ValueError(f"ps must end with None (no projection) and hold it only there, "
                             f"got {self.ps!r}")
        for s in self.subsidy_at:
            if s not in ("threshold", "state"):
                raise ValueError(f"subsidy_at must hold 'threshold' or 'state', got {s!r}")
        if int(self.n_steps) != self.n_steps or self.n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer, got {self.n_steps!r}")
        if int(self.eval_periods) != self.eval_periods or self.eval_periods < 1:
            raise ValueError(f"eval_periods must be a positive integer, got "
                             f"{self.eval_periods!r}")


@dataclass(frozen=True)
class SweepSummary:
    """The quick sweep's replications, stacked (the notebook runs them in its Part I).

    Attributes
    ----------
    config : SweepConfig
        Its ``ps`` end with ``None`` (no projection).
    diff : ndarray, shape (R, S, A, V, len(Ms))
        Learned index minus ``gamma*``, paired on the same arrivals.
    projections : ndarray, shape (R, S, A, V, N)
        Projections per 1e5 iterations, per learner.
    """

    config: SweepConfig
    diff: np.ndarray
    projections: np.ndarray

    @property
    def p_values(self) -> tuple:
        """The projection fractions (without the final ``None``)."""
        return tuple(self.config.ps[:-1])

    def readings(self):
        """``(s, subsidy_at, a, a0)`` over the swept grid, in the order the notes list them."""
        for s, sub in enumerate(self.config.subsidy_at):
            for a, a0 in enumerate(self.config.a0s):
                yield s, sub, a, a0

    def _rows(self):
        return pd.Index([f"{sub}, {a0}" for _, sub, _, a0 in self.readings()], name="subsidy, a0")

    def diff_frame(self, M: int) -> pd.DataFrame:
        """Reward of the learned-index policy minus that of ``gamma*`` (paired, mean of the
        replications): rows (subsidy, a0), columns p and ``none`` (no projection)."""
        c = self.config.Ms.index(M)
        cols = [f"p={v}" for v in self.p_values] + ["none"]
        means = [self.diff[:, s, a, :, c].mean(axis=0) for s, _, a, _ in self.readings()]
        return pd.DataFrame(means, index=self._rows(), columns=cols).round(2)

    def projection_frame(self) -> pd.DataFrame:
        """Projections per 1e5 iterations per learner, median over sources and replications."""
        med = np.median(self.projections, axis=(0, 4))                # (S, A, P)
        P = len(self.p_values)
        return pd.DataFrame([med[s, a, :P] for s, _, a, _ in self.readings()], index=self._rows(),
                            columns=[f"p={v}" for v in self.p_values]).round(0).astype(int)


# -- Figs. 1-2 ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProjectionCounts:
    """How often the projection acted in the main run (Fig. 1), and what ``p`` would bind.

    Attributes
    ----------
    per_learner : ndarray, shape (R, N)
        Projections per 1e5 iterations after the burn-in, per learner (one source, one
        replication), with projection.
    burn_in_per_replication : float
        Projections during the burn-in, four sources together, per replication.
    largest_free : ndarray, shape (N,)
        Largest relative perturbation ``|Psi^T y| / gamma*`` learned without projection
        (mean weights over replications) on ``[u, u*]``.
    p : float
    """

    per_learner: np.ndarray
    burn_in_per_replication: float
    largest_free: np.ndarray
    p: float

    def to_frame(self) -> pd.DataFrame:
        """Per source: projections per 1e5 iterations after the burn-in (median and range over
        replications), and the largest relative perturbation learned without projection."""
        c = self.per_learner
        return pd.DataFrame({"median per 1e5": np.median(c, axis=0).round(0).astype(int),
                             "smallest": c.min(axis=0).round(0).astype(int),
                             "largest": c.max(axis=0).round(0).astype(int),
                             "largest |Psi^T y| / gamma*, free": self.largest_free.round(3)},
                            index=pd.RangeIndex(1, c.shape[1] + 1, name="source"))


def projection_counts(learned, problem: CrawlerIndexProblem, p: float) -> ProjectionCounts:
    """Count the projections of the main run (batch ``(2, R, N)``: with, without projection)."""
    model = problem.model
    per_learner = learned.projections[0] * 1e5 / (learned.n_steps - learned.burn_in)
    burn = learned.projections_burn_in[0].sum() / learned.y.shape[1]
    # up to 1.5 u* (gamma*(0) = 0 excluded)
    u_grid = np.linspace(0.02, 1.5, 297)[:, None] * model.u_star
    rel_free = (np.abs(np.sum(problem.psi(u_grid) * learned.y[1].mean(axis=0), axis=-1))
                / crawling.whittle_index(u_grid, model.u, model.alpha))
    inside = (u_grid >= model.u) & (u_grid <= model.u_star)                # [u, u*] per source
    largest = np.array([rel_free[inside[:, i], i].max() for i in range(model.n_sources)])
    return ProjectionCounts(per_learner, float(burn), largest, p)


@dataclass(frozen=True)
class WeightConvergence:
    """Have the index weights settled (Figs. 1-2)?

    Attributes
    ----------
    spread : ndarray, shape (2,)
        Largest sd of the final weights across replications, with and without projection.
    settle : ndarray, shape (2,)
        Largest change of the mean weights between the last two quarters after the burn-in.
    n_replications, n_steps, burn_in : int
    """

    spread: np.ndarray
    settle: np.ndarray
    n_replications: int
    n_steps: int
    burn_in: int

    @property
    def converged(self) -> bool:
        """The criterion fixed in advance: both below 0.02 (2 % of gamma*, k = 1)."""
        return bool(self.spread.max() < 0.02 and self.settle.max() < 0.02)

    def table(self) -> str:
        return ("sd of the final weights across replications, max per variant (with, without): "
                f"{np.round(self.spread, 4)}\n"
                "change of the mean weights between the last two quarters shown, max per variant: "
                f"{np.round(self.settle, 4)}")


def convergence_evidence(conv: WeightConvergence) -> str:
    """The evidence for the claim of Figs. 1-2 that the weights converge."""
    return (f"Criterion fixed in advance: sd across {conv.n_replications} independent "
            f"replications below 0.02 (2% of gamma*, k = 1) and the mean over the last quarter of "
            f"the shown iterations "
            f"within 0.02 of the previous quarter. Measured: sd {conv.spread.max():.4f}, change "
            f"{conv.settle.max():.4f} ({conv.n_steps} iterations, {conv.burn_in} burn-in). "
            f"With decreasing steps this is settling, not a proof of convergence (the paper "
            f"claims none, Lemma 2)."
            + ("" if conv.converged else
               f" Searched: one criterion on {conv.n_replications} replications of both "
               f"learners; a spread or a "
               "change above 0.02 is measured directly, with no sampling tolerance."))


def projection_order(counts: ProjectionCounts, sweep: SweepSummary,
                     main: MainRun) -> ClaimReadings:
    """Fig. 1: "the projection operator was used only of the order 1e2 times out of 1e5".

    A reading holds if, per learner (median over replications), some source's count lies
    between 10 and 1000 per 1e5 iterations; the main run and every ``(subsidy, a0, p)`` of the
    sweep are readings.
    """
    def order_1e2(c):
        return bool(np.any((c >= 10) & (c <= 1000)))
    median = np.median(counts.per_learner, axis=0)
    verdicts = {main.label(): order_1e2(median)}
    for s, sub, a, a0 in sweep.readings():
        for v, pv in enumerate(sweep.p_values):
            median_sweep = np.median(sweep.projections[:, s, a, v], axis=0)
            verdicts[f"{sub}, a0={a0}, p={pv}"] = order_1e2(median_sweep)
    return ClaimReadings(verdicts, {"median": median, "p": counts.p,
                                    "largest_free": float(counts.largest_free.max())})


def projection_order_evidence(readings: ClaimReadings) -> str:
    """The evidence for the claim of Fig. 1 on how often the projection acts."""
    e = readings.evidence
    return (
        f"Per learner, median over replications, some source between 10 and 1000 per 1e5. Main "
        f"run: per source "
        f"{', '.join(f'{v:.0f}' for v in e['median'])} per 1e5 (p = {e['p']}); the count falls "
        f"as p grows "
        f"(the free scheme learns corrections up to {e['largest_free']:.2f} of gamma*, so a "
        f"small p binds often). "
        f"Searched: {len(readings.verdicts)} readings (the main run and "
        f"{len(readings.verdicts) - 1} points of the quick "
        "sweep); a count is exact given its run and the band [10, 1000] spans two decades, so "
        "only a median count within "
        "resampling noise of an edge could be misjudged; the sweep counts from the first "
        "iteration (upper bounds for "
        "the paper's window).")


# -- the index of the stochastic model ------------------------------------------------------------

@dataclass(frozen=True)
class IndexComparison:
    """The stochastic model's index (renewal Monte Carlo) against ``gamma*`` and the learned
    indices, on :func:`index_grid` without ``u*`` itself (no threshold lies above it).

    Attributes
    ----------
    x : ndarray, shape (J, N)
    relative_stochastic : ndarray, shape (J, N)
        ``gamma_stochastic / gamma* - 1``.
    jitter : ndarray, shape (N,)
        Monte Carlo noise of one point (sd of neighbour differences over sqrt 2).
    relative_learned : dict
        ``{label: gamma_learned / gamma* - 1}``, shape ``(J, N)``.
    gap_learned : dict
        ``{label: |gamma_learned / gamma_stochastic - 1|}``, shape ``(J, N)``.
    n_cycles : int
        Renewal cycles per threshold.
    """

    x: np.ndarray
    relative_stochastic: np.ndarray
    jitter: np.ndarray
    relative_learned: dict
    gap_learned: dict
    n_cycles: int

    def to_frame(self) -> pd.DataFrame:
        """Per source: the stochastic index against ``gamma*`` (median, range, Monte Carlo noise of
        a point), the learned indices against it, and the learned corrections."""
        rel_s = self.relative_stochastic
        frame = pd.DataFrame({"median": np.median(rel_s, axis=0), "smallest": rel_s.min(axis=0),
                              "largest": rel_s.max(axis=0), "noise of a point": self.jitter},
                             index=pd.RangeIndex(1, rel_s.shape[1] + 1, name="source")).round(3)
        frame.columns = [f"gamma_s / gamma* - 1: {c}" for c in frame.columns]
        for lab, g in self.gap_learned.items():
            frame[f"max |gamma / gamma_s - 1|, {lab}"] = g.max(axis=0).round(3)
        for lab, r in self.relative_learned.items():
            frame[f"max |gamma / gamma* - 1|, {lab}"] = np.abs(r).max(axis=0).round(2)
        return frame


def compare_indices(problem: CrawlerIndexProblem, x: np.ndarray, stochastic,
                    weights: dict) -> IndexComparison:
    """Compare :func:`~whittle_lib.models.crawling.stochastic_whittle_index` (one
    :class:`~whittle_lib.models.crawling.StochasticIndex` per source, on the
    columns of ``x``) with ``gamma*`` and the learned indices ``gamma* + Psi^T y`` (weights
    averaged over replications)."""
    model = problem.model
    g_star = crawling.whittle_index(x, model.u, model.alpha)                 # (J + 1, N)
    g_stoch = np.stack([s.index for s in stochastic], axis=1)[:-1]           # u*: none above
    g_learn = {lab: (g_star + np.sum(problem.psi(x) * y.mean(axis=0), axis=-1))[:-1]
               for lab, y in weights.items()}
    rel_s = g_stoch / g_star[:-1] - 1
    jitter = np.std(np.diff(rel_s, axis=0), axis=0, ddof=1) / np.sqrt(2)
    return IndexComparison(x[:-1], rel_s, jitter,
                           {lab: g / g_star[:-1] - 1 for lab, g in g_learn.items()},
                           {lab: np.abs(g / g_stoch - 1) for lab, g in g_learn.items()},
                           int(stochastic[0].n_cycles))


def stochastic_index_note(comp: IndexComparison) -> str:
    """The note of the new row: how far the stochastic model's index lies from ``gamma*``."""
    rel_s = comp.relative_stochastic
    medians = ", ".join(f"{v:+.3f}" for v in np.median(rel_s, axis=0))
    return (f"Whittle index of the stochastic model by renewal Monte Carlo over threshold "
            f"policies ({comp.n_cycles} "
            f"cycles per threshold, 30 thresholds per source); median per source "
            f"{medians}; Monte Carlo noise of a point about "
            f"{comp.jitter.max():.3f}; largest |gamma_stochastic / gamma* - 1| at one point "
            f"{np.abs(rel_s).max():.3f}")


#: The note of the new rows on the learned indices against the stochastic model's index.
LEARNED_INDEX_NOTE = ("the learned index (mean weights over replications) against the "
                      "stochastic model's index: "
                      "the learned correction is mostly the method's approximation error, not a "
                      "stochastic correction")


