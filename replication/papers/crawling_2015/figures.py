"""What Sec. VII says of Figs. 3 and 4, judged on the exact cycle and over single runs.

Fig. 3 (``M = 2``, deterministic): "sources 2 and 3 are crawled in a non-trivial periodic way"
(:func:`fig3_nontrivial`). Fig. 4 (stochastic model): "source 1 is crawled from time to time",
a statement about the one run of the figure, whose truth depends on two things the paper leaves
open: the law of the base utility (:data:`~.laws.BASE_LAW_READINGS`) and the arrival rate (Table
I prints ``Lambda_i = 250``, the 2018 paper 25). :func:`skip_sweep` counts, under each reading,
the single runs of the figure's length that skip source 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib.models import crawling, crawling_policies as policies
from whittle_lib.stats import one_run_verdict, share_interval
from ...records import share_reach
from .laws import BASE_LAW_READINGS, BaseLawReading

__all__ = ["SkipReading", "fig3_nontrivial", "skip_evidence", "skip_sweep"]


@dataclass(frozen=True)
class SkipReading:
    """How often the index policy skips a source under one reading (Fig. 4's claim).

    Attributes
    ----------
    arrival_rate : float
        ``Lambda_i`` (the same for every source).
    law : BaseLawReading
    window : int
        Periods of one figure-length run.
    runs : int
        Independent figure-length runs, each from just-crawled sources ``x(0) = u``.
    runs_with_skip : int
        Runs in which the source is not crawled in at least one period.
    share_low, share_high : float
        95 % Wilson interval of ``runs_with_skip / runs``.
    long_run_skip : float
        Share of periods in which the source is not crawled, over ``replications`` long runs
        after the burn-in.
    periods : int
        Periods behind ``long_run_skip`` (replications times periods after the burn-in).
    """

    arrival_rate: float
    law: BaseLawReading
    window: int
    runs: int
    runs_with_skip: int
    share_low: float
    share_high: float
    long_run_skip: float
    periods: int

    @property
    def share(self) -> float:
        """Share of figure-length runs that show a skip."""
        return self.runs_with_skip / self.runs

    @property
    def holds(self) -> bool | None:
        """The claim "the source is skipped from time to time" under this reading.

        The convention of the collection for a claim about the one run a paper printed
        (:func:`whittle_lib.stats.one_run_verdict`): it holds if the 95 % Wilson interval of
        the share of our single runs that satisfy it lies above 1/2, fails if it lies below,
        and is undetermined (``None``) if it contains 1/2.
        """
        return one_run_verdict(self.runs_with_skip, self.runs)

    @property
    def label(self) -> str:
        return f"Lambda = {self.arrival_rate:g}, {self.law.label}"


def skip_sweep(arrival_rates, laws=BASE_LAW_READINGS, *, source: int = 0, M: int = 2,
               window: int = 30, runs: int = 200, periods: int = 2000,
               replications: int = 10, burn_in: int = 100, rng) -> tuple[SkipReading, ...]:
    """Share of runs and of periods in which the index policy skips ``source``, per reading.

    For each arrival rate (Table I's sources with ``Lambda_i`` replaced) and each law of the
    base utility, the Whittle index policy with ``M`` crawls per period runs on the stochastic
    model (eq. 17) through :func:`policies.simulate_crawling`: ``runs`` independent runs of
    ``window`` periods from ``x(0) = u`` (the figure), and ``replications`` runs of ``periods``
    periods (the long run, the first ``burn_in`` dropped).

    Parameters
    ----------
    arrival_rates : sequence of float
    laws : sequence of BaseLawReading
    source : int
        The source whose skips are counted (0-based; 0 is source 1 of the paper).
    M, window, runs, periods, replications, burn_in : int
    rng : numpy.random.Generator or seed
        One independent child stream per (rate, law) and per kind of run.

    Returns
    -------
    tuple of SkipReading
        In the order rate-major, law-minor.
    """
    for name, value in (("M", M), ("window", window), ("runs", runs), ("periods", periods),
                        ("replications", replications)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if int(burn_in) != burn_in or not 0 <= burn_in < periods:
        raise ValueError(f"burn_in must be an integer in [0, periods), got {burn_in!r}")
    laws = tuple(laws)
    rates = [float(r) for r in arrival_rates]
    children = np.random.default_rng(rng).spawn(2 * len(rates) * len(laws))
    out = []
    for j, rate in enumerate(rates):
        model = crawling.table_one(arrival_rate=rate)
        if not 0 <= source < model.n_sources:
            raise ValueError(f"source must lie in [0, {model.n_sources}), got {source!r}")
        rule = policies.WhittleRule(model)
        for k, law in enumerate(laws):
            g_window, g_long = children[2 * (j * len(laws) + k): 2 * (j * len(laws) + k) + 2]
            short = policies.simulate_crawling(model, rule, M, window, stochastic=True,
                                               replications=runs, record=True, rng=g_window,
                                               **law.kwargs)
            skipped = int(np.sum(~short.active[:, :, source].all(axis=0)))
            long = policies.simulate_crawling(model, rule, M, periods, stochastic=True,
                                              replications=replications, record=True,
                                              rng=g_long, **law.kwargs)
            tail = long.active[burn_in:, :, source]
            ci = share_interval(skipped, runs)
            lo, hi = ci.low, ci.high
            out.append(SkipReading(rate, law, int(window), int(runs), skipped, lo, hi,
                                   float(1.0 - tail.mean()), int(tail.size)))
    return tuple(out)


def skip_evidence(sweep, skipped_in_figure: int, law: str = "exponential") -> str:
    """How Fig. 4's claim is judged, and what the sweep (:func:`skip_sweep`, rates 250 and 25)
    found; ``skipped_in_figure`` is the number of periods the figure's own run (base utilities
    of the law ``law``, Table I's rate) skips source 1."""
    at_250 = [s for s in sweep if s.arrival_rate == 250.0]
    window, runs = sweep[0].window, sweep[0].runs
    return (
        f"Judged by the share of single runs of {window} periods (x(0) = u, {runs} per reading) "
        "in which source 1 is skipped at least once; holds if the 95% Wilson interval of that "
        "share lies above 1/2, fails if below, undetermined if it contains 1/2. With Table I's "
        "Lambda = 250 it fails under every law, even with infinite variance (at most "
        f"{max(s.share for s in at_250):.0%} of runs; long-run share of periods skipped "
        f"{', '.join(f'{s.long_run_skip:.2%}' for s in at_250)}); with the 2018 paper's "
        "Lambda = 25 it holds for every random base utility. Deterministic model: never "
        f"skipped. Our figure's run ({law}, Lambda = 250): skipped in {skipped_in_figure} of "
        f"{window} periods. Searched: {len(sweep)} readings x {runs} single runs of {window} "
        f"periods; {share_reach([runs])}.")


def fig3_nontrivial(cycle) -> bool:
    """Fig. 3's "sources 2 and 3 are crawled in a non-trivial periodic way" on one cycle of the
    exact orbit (``cycle``: periods x sources, crawled or not): each is crawled in some but not
    all periods, not every other period, and the two not equally often."""
    counts = cycle.sum(axis=0)
    return bool(all(0 < counts[i] < cycle.shape[0]
                    and not np.array_equal(np.roll(cycle[:, i], -1), cycle[:, i])
                    for i in (1, 2)) and counts[1] != counts[2])
