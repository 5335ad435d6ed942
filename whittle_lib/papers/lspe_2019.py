"""Avrachenkov & Borkar (2019): what Section V printed, its readings, and the checks of its claims.

Section V of the paper runs the LSPE(0) scheme (:mod:`whittle_lib.learning.lspe`) on the four
sources of Table I and reports one run: "with our choice kappa_i = 2, we have on average one arm
sampled and obtain the reward around 160, which is a value between the rewards that we could
get by sampling constantly either the best or the second best arm. It is significantly smaller
than what we can get by using Whittle index with one arm, viz., 283 [2]."

The paper leaves open which policy acts (the threshold rule of Section III or decisions drawn
from the logistic ``f_i``), which reward is learnt (the collected utility of Section II's
objective or ``sum_i x_i`` as eq. (6) prints it), the dynamics (eq. (1) with random arrivals or
the mean dynamics (2)-(3)), and, for the example, the mean base utilities ``xi-bar`` (its
``u``-formula has none). This module names those readings (:data:`LEARNING_READINGS`,
:func:`xi_readings`), computes the reference rewards under each (:func:`reference_rewards`) and
judges a claim about one printed run by the share of our single runs that satisfy it
(:func:`judge_single_runs`).

References
----------
K. Avrachenkov, V. S. Borkar, "A learning algorithm for the Whittle index policy for scheduling
web crawlers", Allerton 2019 (hal-02416599), Sections II, III, V.
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC 2015
(hal-01258647), eq. (1) and Table I.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from types import MappingProxyType

import numpy as np

from ..models import crawling, crawling_policies as policies
from ..learning.lspe import LSPEResult, LSPESettings, run_lspe
from ..stats import share_interval

__all__ = [
    "PRINTED",
    "Printed",
    "LearningReading",
    "LEARNING_READINGS",
    "u_printed",
    "xi_readings",
    "ReferenceRewards",
    "reference_rewards",
    "printed_value_within",
    "SingleRunVerdict",
    "judge_single_runs",
    "reading_settings",
    "run_jobs",
]


@dataclass(frozen=True)
class Printed:
    """The numbers Section V printed.

    Attributes
    ----------
    kappa, gamma : float
        "kappa_i = 2 and gamma = 0.05".
    n_steps : int
        "We have run the algorithm for N = 10000 steps".
    arrival_rate : float
        ``lambda_i = 250`` of Table I.
    decay : tuple of float
        ``c_i`` of Table I.
    reward_around : float
        "the reward around 160".
    whittle_one_arm : float
        "Whittle index with one arm, viz., 283 [2]".
    one_arm : tuple of float
        Our criterion for "on average one arm sampled": a run's mean number of crawled sources
        in this closed interval (one, to the nearest integer).
    """

    kappa: float = 2.0
    gamma: float = 0.05
    n_steps: int = 10_000
    arrival_rate: float = 250.0
    decay: tuple = (0.7, 0.35, 0.7, 0.21)
    reward_around: float = 160.0
    whittle_one_arm: float = 283.0
    one_arm: tuple = (0.5, 1.5)


#: Section V as printed.
PRINTED = Printed()


@dataclass(frozen=True)
class LearningReading:
    """One reading of Sections III-V for the learning experiment.

    Attributes
    ----------
    name : str
        How the notebook and the results note call it.
    overrides : mapping
        The :class:`~whittle_lib.learning.LSPESettings` fields it sets (``action``, ``reward``,
        ``dynamics``); every other field is the notebook's.
    """

    name: str
    overrides: MappingProxyType

    def __post_init__(self):
        if not self.name:
            raise ValueError("name must be a non-empty string, got ''")
        allowed = {"action", "reward", "dynamics"}
        bad = set(self.overrides) - allowed
        if bad:
            raise ValueError(f"overrides may set only {sorted(allowed)}, got {sorted(bad)}")
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))


#: The readings of the experiment, ours first ("arrivals": eq. (1); "mean dynamics": (2)-(3)). Section III: "the actual operative policy is an
#: index policy which deterministically picks" (threshold) but ``f_i`` is "the probability of
#: picking 1" (sample); Section II's objective collects ``sum_i X_i nu_i`` but eq. (6), ``eta``
#: and ``b`` print ``sum_i X_i`` (state); Section II's dynamics are eq. (1) (random arrivals),
#: "the observed dynamics is effectively the deterministic one given by (2)-(3)".
LEARNING_READINGS = (
    LearningReading("threshold, collected reward, arrivals (ours)", {}),
    LearningReading("f_i sampled, collected reward, arrivals", {"action": "sample"}),
    LearningReading("literal: f_i sampled, eq. (6) reward, arrivals",
                    {"action": "sample", "reward": "state"}),
    LearningReading("literal: f_i sampled, eq. (6) reward, mean dynamics",
                    {"action": "sample", "reward": "state", "dynamics": "deterministic"}),
)


def reading_settings(settings: LSPESettings, reading: LearningReading, **changes) -> LSPESettings:
    """``settings`` with the fields of ``reading`` (and any ``changes``, e.g. a swept constant)."""
    if not isinstance(settings, LSPESettings):
        raise ValueError(f"settings must be LSPESettings, got {type(settings).__name__}")
    if not isinstance(reading, LearningReading):
        raise ValueError(f"reading must be a LearningReading, got {type(reading).__name__}")
    return replace(settings, **{**reading.overrides, **changes})


def u_printed(arrival_rate, decay, horizon=math.inf):
    """The 2019 paper's ``u_i = (1 - alpha_i)(1 - alpha_i^{M_i}) lambda_i / c_i`` (Section II).

    No mean base utility ``xi-bar_i`` appears: each content starts with interest 1. The 2015
    paper's eq. (1) is ``u_i = Lambda_i xi-bar_i (1 - alpha_i) / mu_i``, the same with
    ``xi-bar_i = 1`` when ``M_i = inf`` (Table I of 2019).

    Parameters
    ----------
    arrival_rate, decay : array_like
        ``lambda_i`` and ``c_i`` (``alpha_i = exp(-c_i)``).
    horizon : array_like
        ``M_i`` (``inf`` in Table I).

    Examples
    --------
    >>> np.round(u_printed(250.0, [0.7, 0.35]), 2)
    array([179.79, 210.94])
    """
    lam = np.asarray(arrival_rate, dtype=float)
    c = np.asarray(decay, dtype=float)
    if np.any(~np.isfinite(c)) or np.any(c <= 0):
        raise ValueError(f"decay must be positive and finite, got {decay!r}")
    if np.any(~np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"arrival_rate must be positive and finite, got {arrival_rate!r}")
    alpha = np.exp(-c)
    tail = 1.0 - np.power(alpha, np.asarray(horizon, dtype=float))
    return (1.0 - alpha) * tail * lam / c


def xi_readings(arrival_rate: float = PRINTED.arrival_rate) -> dict:
    """The two readings of the example's ``u_i``: ``{name: CrawlingModel}``.

    ``"xi-bar of the 2015 Table I"``: "the same numerical example as in [2]", whose Table I
    gives ``xi-bar = (1, 0.7, 0.2, 0.08)`` (:func:`whittle_lib.models.crawling.table_one`).
    ``"2019 u-formula (no xi-bar)"``: Section II's ``u_i`` as printed (:func:`u_printed`), i.e.
    ``xi-bar_i = 1`` for every source.
    """
    c = list(PRINTED.decay)
    return {
        "xi-bar of the 2015 Table I": crawling.table_one(arrival_rate),
        "2019 u-formula (no xi-bar)": crawling.CrawlingModel(
            xi_mean=[1.0] * len(c), mu=c, arrival_rate=[arrival_rate] * len(c)),
    }


@dataclass(frozen=True)
class ReferenceRewards:
    """The rewards Section V measures its run against, on one model (deterministic, exact).

    Attributes
    ----------
    u : ndarray
        Reward of crawling each source at every period (eq. (1)).
    best, second : float
        The largest and second-largest ``u_i``: "sampling constantly either the best or the
        second best arm".
    whittle : float
        Long-run reward of the Whittle index policy crawling one source per period (exact, over
        its periodic orbit).
    bound : float
        Whittle's relaxation bound for one source per period: no policy earns more.
    """

    u: np.ndarray
    best: float
    second: float
    whittle: float
    bound: float


def reference_rewards(model: crawling.CrawlingModel) -> ReferenceRewards:
    """:class:`ReferenceRewards` of ``model`` with one crawler (``M = 1``)."""
    if not isinstance(model, crawling.CrawlingModel):
        raise ValueError(f"model must be a CrawlingModel, got {type(model).__name__}")
    order = np.sort(model.u)[::-1]
    orbit = policies.periodic_orbit(model, policies.WhittleRule(model), 1)
    bound = crawling.relaxation_bound(model, 1).bound
    return ReferenceRewards(u=np.array(model.u), best=float(order[0]), second=float(order[1]),
                            whittle=float(orbit.average_reward), bound=float(bound))


def printed_value_within(printed: float, value: float, half_width: float = 0.0,
                         digits: int = 0) -> bool:
    """Whether a printed number agrees with ours: ``|printed - value| <= half_width + ulp/2``.

    ``ulp = 10**-digits`` is the last printed digit (283: ``digits = 0``, so 0.5);
    ``half_width`` is our 95% half-width for a stochastic estimate (0 for an exact value).

    Examples
    --------
    >>> printed_value_within(283, 260.39), printed_value_within(283, 282.6)
    (False, True)
    """
    if not half_width >= 0:
        raise ValueError(f"half_width must be >= 0, got {half_width!r}")
    return bool(abs(printed - value) <= half_width + 0.5 * 10.0 ** -digits)


@dataclass(frozen=True)
class SingleRunVerdict:
    """A claim about one printed run, judged on each of our single runs.

    Attributes
    ----------
    satisfied, runs : int
        How many of our runs satisfy the claim, out of how many.
    share_low, share_high : float
        95% Wilson interval of the share (:func:`whittle_lib.stats.share_interval`).
    holds : bool
        More than half of the runs satisfy it (a run like the paper's is more likely than
        not).
    """

    @property
    def verdict(self) -> bool | None:
        """True if the share's 95% interval lies above 1/2, False if below, None if it
        contains 1/2 (too few runs to tell: the reading cannot carry a verdict)."""
        if self.share_low > 0.5:
            return True
        if self.share_high < 0.5:
            return False
        return None

    satisfied: int
    runs: int
    share_low: float
    share_high: float
    holds: bool

    def __str__(self) -> str:
        return (f"{self.satisfied}/{self.runs} runs (share 95% CI "
                f"[{self.share_low:.2f}, {self.share_high:.2f}])")


def judge_single_runs(values, low: float, high: float) -> SingleRunVerdict:
    """Judge ``low <= value <= high`` on each single run's value; holds if most runs satisfy it.

    Parameters
    ----------
    values : array_like, shape (runs,)
        One number per run (a run's mean number of crawled sources, or its average reward).
        A nan (a run stopped early) does not satisfy the claim.
    low, high : float

    Examples
    --------
    >>> v = judge_single_runs([0.7, 1.1, 2.0], *PRINTED.one_arm)
    >>> v.satisfied, v.holds
    (2, True)
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 1:
        raise ValueError(f"values must be a non-empty 1-d array, got shape {values.shape}")
    if not low <= high:
        raise ValueError(f"low must not exceed high, got {low!r} > {high!r}")
    ok = int(np.sum((values >= low) & (values <= high)))
    ci = share_interval(ok, values.size)
    lo, hi = ci.low, ci.high
    return SingleRunVerdict(ok, int(values.size), lo, hi, 2 * ok > values.size)


def _run_job(model, job) -> LSPEResult:
    settings, seed = job
    with warnings.catch_warnings():
        # a worker's stderr is not the caller's: the stop is a field of the result, and
        # run_jobs warns about it in the calling process
        warnings.simplefilter("ignore", RuntimeWarning)
        return run_lspe(model, settings, rng=np.random.default_rng(seed))


def run_jobs(model: crawling.CrawlingModel, jobs, *, max_workers: int | None = None) -> list:
    """Run :func:`~whittle_lib.learning.run_lspe` once per ``(settings, seed)``, on every core.

    Like :func:`whittle_lib.stats.replicate`, but each job has its own settings, so that the
    runs of several readings and constants share one pool (the short ones fill the gaps).

    Parameters
    ----------
    model : CrawlingModel
    jobs : iterable of (LSPESettings, SeedSequence or int)
    max_workers : int, optional
        Default: the number of CPUs; 1 runs them in this process.

    Returns
    -------
    list of LSPEResult
        ``[run_lspe(model, s, rng=default_rng(seed)) for s, seed in jobs]``: the same list for
        any number of workers. Runs that stopped early (breakdown or divergence) say so in
        their fields, and one ``RuntimeWarning`` here lists them.
    """
    jobs = list(jobs)
    for settings, _ in jobs:
        if not isinstance(settings, LSPESettings):
            raise ValueError(f"jobs must hold LSPESettings, got {type(settings).__name__}")
    if max_workers is not None and (isinstance(max_workers, bool) or int(max_workers) != max_workers
                                    or max_workers < 1):
        raise ValueError(f"max_workers must be a positive integer, got {max_workers!r}")
    workers = min(len(jobs), max_workers or os.cpu_count() or 1)
    if workers <= 1:
        results = [_run_job(model, job) for job in jobs]
    else:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(partial(_run_job, model), jobs))
    stopped = [k for k, r in enumerate(results) if r.stopped_at is not None]
    if stopped:
        warnings.warn(f"{len(stopped)} of {len(results)} LSPE runs stopped early (jobs {stopped}; "
                      "see breakdown_at and diverged_at)", RuntimeWarning, stacklevel=2)
    return results
