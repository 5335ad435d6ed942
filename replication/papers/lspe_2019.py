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

The experiments of the notebook ``02_lspe_learning`` that take more than a line (the check of the
printed Sherman-Morrison factors, the readings and the sweep of our constants, the study of
``kappa``, the switched-off numerical fixes) are pure functions here with frozen results. The
notebook records each row in a visible cell; the evidence too long for a cell is written here,
in words, by named functions (``*_evidence``, ``*_note``).

References
----------
K. Avrachenkov, V. S. Borkar, "A learning algorithm for the Whittle index policy for scheduling
web crawlers", Allerton 2019 (hal-02416599), Sections II, III, V.
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC 2015
(hal-01258647), eq. (1) and Table I.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, replace
from functools import partial
from types import MappingProxyType

import numpy as np

from whittle_lib.models import crawling, crawling_policies as policies
from whittle_lib.learning.lspe import (LSPEResult, LSPESettings, run_lspe_many, running_average,
                             sherman_morrison_average, step_sizes)
from ..records import confidence_interval as _mean_ci, format_estimate as _est, share_reach
from whittle_lib.stats import one_run_verdict, run_tasks, share_interval

__all__ = [
    "PRINTED",
    "Printed",
    "LearningReading",
    "LEARNING_READINGS",
    "LITERAL_READINGS",
    "u_printed",
    "xi_readings",
    "ReferenceRewards",
    "reference_rewards",
    "printed_value_within",
    "SingleRunVerdict",
    "judge_single_runs",
    "reading_settings",
    "run_jobs",
    "WhittleEstimate",
    "simulate_whittle",
    "REFERENCE_NOTES",
    "whittle_stochastic_note",
    "whittle_283_evidence",
    "whittle_283_stochastic_evidence",
    "ShermanMorrisonReading",
    "ShermanMorrisonCheck",
    "sherman_morrison_check",
    "ATermReading",
    "printed_a_term_readings",
    "printed_a_term_shapes",
    "sherman_morrison_evidence",
    "a_term_shapes_text",
    "a_term_evidence",
    "RunsSummary",
    "summarise_runs",
    "sampled_runs_note",
    "reading_runs",
    "ReadingsJudgement",
    "judge_readings",
    "one_arm_evidence",
    "in_band_evidence",
    "KappaStudy",
    "kappa_study",
    "kappa_evidence",
    "NumericalFixes",
    "numerical_fixes",
    "projection_evidence",
    "tikhonov_evidence",
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

#: The literal readings (Sec. III and V as printed), each run by :func:`reading_runs` on its
#: own stream named after it.
LITERAL_READINGS = tuple(r for r in LEARNING_READINGS if r.name.startswith("literal"))


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
    period : int
        Period of the Whittle policy's orbit on the deterministic model.
    """

    u: np.ndarray
    best: float
    second: float
    whittle: float
    bound: float
    period: int


def reference_rewards(model: crawling.CrawlingModel) -> ReferenceRewards:
    """:class:`ReferenceRewards` of ``model`` with one crawler (``M = 1``)."""
    if not isinstance(model, crawling.CrawlingModel):
        raise ValueError(f"model must be a CrawlingModel, got {type(model).__name__}")
    order = np.sort(model.u)[::-1]
    orbit = policies.crawling_orbit(model, policies.WhittleRule(model), 1)
    bound = crawling.crawling_bound(model, 1).bound
    return ReferenceRewards(u=np.array(model.u), best=float(order[0]), second=float(order[1]),
                            whittle=float(orbit.average_reward), bound=float(bound),
                            period=int(orbit.period))


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
    """

    satisfied: int
    runs: int

    @property
    def share_low(self) -> float:
        """Lower end of the 95% Wilson interval of the share (:func:`whittle_lib.stats.share_interval`)."""
        return share_interval(self.satisfied, self.runs).low

    @property
    def share_high(self) -> float:
        """Upper end of the same interval."""
        return share_interval(self.satisfied, self.runs).high

    @property
    def holds(self) -> bool:
        """More than half of the runs satisfy it. Not the recorded verdict: the records use
        :attr:`verdict`, which also accounts for the number of runs."""
        return 2 * self.satisfied > self.runs

    @property
    def verdict(self) -> bool | None:
        """True if the share's 95% interval lies above 1/2, False if below, None if it
        contains 1/2 (too few runs to tell: the reading cannot carry a verdict)."""
        return one_run_verdict(self.satisfied, self.runs)

    @property
    def verdict_text(self) -> str:
        """:attr:`verdict` in words: ``"holds"``, ``"fails"`` or ``"undetermined"``."""
        return {True: "holds", False: "fails", None: "undetermined"}[self.verdict]

    def __str__(self) -> str:
        return (f"{self.satisfied}/{self.runs} runs (share 95% CI "
                f"[{self.share_low:.2f}, {self.share_high:.2f}])")


def judge_single_runs(values, low: float, high: float) -> SingleRunVerdict:
    """Judge ``low <= value <= high`` on each single run's value.

    The verdict recorded (:attr:`SingleRunVerdict.verdict`) holds if the 95% Wilson interval
    of the share of runs that satisfy the claim lies above 1/2, fails if it lies below 1/2,
    and is undetermined otherwise; ``holds`` is the bare majority.

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
    return SingleRunVerdict(int(np.sum((values >= low) & (values <= high))), int(values.size))


def _run_stack(model, jobs) -> list:
    with warnings.catch_warnings():
        # a worker's stderr is not the caller's: the stop is a field of the result, and
        # run_jobs warns about it in the calling process
        warnings.simplefilter("ignore", RuntimeWarning)
        return run_lspe_many(model, [settings for settings, _ in jobs],
                             [np.random.default_rng(seed) for _, seed in jobs])


def _stacks(jobs, workers: int) -> list:
    """The jobs' indices in stacks for :func:`~whittle_lib.learning.lspe.run_lspe_many`: the
    jobs that can share a stack (same ``n_steps``, ``record_every``, ``regularise``), in order,
    each group dealt round-robin into ``workers`` stacks (jobs of one reading, with or without
    arrivals to draw, spread over the workers)."""
    groups = {}
    for k, (settings, _) in enumerate(jobs):
        key = (settings.n_steps, settings.record_every, settings.regularise)
        groups.setdefault(key, []).append(k)
    stacks = []
    for members in groups.values():
        parts = min(workers, len(members))
        stacks += [members[k::parts] for k in range(parts)]
    return stacks


def run_jobs(model: crawling.CrawlingModel, jobs, *, max_workers: int | None = None) -> list:
    """Run :func:`~whittle_lib.learning.run_lspe` once per ``(settings, seed)``, on every core.

    Like :func:`whittle_lib.stats.replicate`, but each job has its own settings, so that the
    runs of several readings and constants share one pool (the short ones fill the gaps). The
    jobs that can share a stack run in lock-step (:func:`~whittle_lib.learning.lspe.run_lspe_many`,
    bit for bit ``run_lspe``), in one stack per worker.

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
    workers = max_workers or os.cpu_count() or 1
    stacks = _stacks(jobs, workers)
    done = run_tasks([partial(_run_stack, model, [jobs[k] for k in stack]) for stack in stacks],
                     max_workers=max_workers)
    results = [None] * len(jobs)
    for stack, runs in zip(stacks, done):
        for k, run in zip(stack, runs):
            results[k] = run
    stopped = [k for k, r in enumerate(results) if r.stopped_at is not None]
    if stopped:
        warnings.warn(f"{len(stopped)} of {len(results)} LSPE runs stopped early (jobs {stopped}; "
                      "see breakdown_at and diverged_at)", RuntimeWarning, stacklevel=2)
    return results


# --- Section II: the reference rewards, and "Whittle with one arm earns 283" -------------------


@dataclass(frozen=True)
class WhittleEstimate:
    """Average reward of the Whittle policy (one crawler) with random arrivals, over runs.

    Attributes
    ----------
    mean, half_width : float
        Mean over the runs and its Student-t 95% half-width.
    replications, n_steps : int
        How many runs of how many periods.
    """

    mean: float
    half_width: float
    replications: int
    n_steps: int

    def __str__(self) -> str:
        return _est(self.mean, self.half_width)


def simulate_whittle(model: crawling.CrawlingModel, n_steps: int, replications: int, *,
                     rng) -> WhittleEstimate:
    """The Whittle index policy with one crawler on the stochastic model, eq. (17) of [2].

    Random arrivals with exponential base utilities
    (:func:`whittle_lib.models.crawling_policies.simulate_crawling`), ``replications`` independent runs
    of ``n_steps`` periods; the 2019 paper quotes 283 for this policy (Sec. V).

    Parameters
    ----------
    model : CrawlingModel
    n_steps, replications : int
    rng : Generator, SeedSequence or int
        One stream for all the runs.
    """
    if not isinstance(model, crawling.CrawlingModel):
        raise ValueError(f"model must be a CrawlingModel, got {type(model).__name__}")
    res = policies.simulate_crawling(model, policies.WhittleRule(model), 1, n_steps, stochastic=True,
                            replications=replications, rng=np.random.default_rng(rng))
    mean, hw = _mean_ci(res.average_reward)
    return WhittleEstimate(mean, hw, int(replications), int(n_steps))


#: The notes of the rows of the rewards Section V measures its run against (Sec. II; new rows).
REFERENCE_NOTES = MappingProxyType({
    # the two notes below are stored in data/results (byte-identical since issue 32): they name
    # policies.crawling_orbit and crawling.crawling_bound by their names of before the rename
    "whittle": "exact average over the periodic orbit (policies.periodic_orbit); equals Whittle's "
               "relaxation bound",
    "bound": "crawling.relaxation_bound(model, 1): no M=1 policy earns more on the deterministic "
             "model",
    "u_1": "eq. (1), the best single source",
    "u_2": "eq. (1), the second-best single source",
})


def whittle_stochastic_note(stochastic: WhittleEstimate) -> str:
    """The note of the Whittle policy's average with random arrivals (eq. (17) of 2015)."""
    return (f"{stochastic.replications} replications of {stochastic.n_steps} periods of eq. (17), "
            "exponential base utilities; mean and 95% CI")


def whittle_283_evidence(r15: ReferenceRewards, r19: ReferenceRewards) -> str:
    """The evidence on "Whittle index with one arm, viz., 283" (Sec. V), deterministic model.

    A reading holds if 283 lies within half its printed last digit of our exact value
    (:func:`printed_value_within`); ``r15``, ``r19``: with the 2015 Table I's xi-bar, and with
    the 2019 u-formula read literally (:func:`xi_readings`).
    """
    W = PRINTED.whittle_one_arm
    return (
        f"The Whittle policy with one crawler earns {r15.whittle:.2f} with the 2015 xi-bar, equal to the relaxation bound {r15.bound:.2f}: "
        f"283 exceeds what any policy crawling one source per period can earn there. With the 2019 u-formula read literally (no xi-bar) "
        f"it earns {r19.whittle:.2f}, again the bound (optimal), and the paper's 160 could not lie between the best and second-best "
        f"constant rewards ({r19.best:.2f}, {r19.second:.2f}). Neither 283 nor the 2015 paper's 254.66 is reproduced. "
        f"Searched: 2 readings of xi-bar, each exact on the deterministic model, judged to half the printed unit (0.5); "
        f"283 lies {abs(W - r15.whittle):.2f} and {abs(W - r19.whittle):.2f} from them, and above the 2015 reading's "
        "relaxation bound, so no policy and no reading of the rule on that model could give it.")


def whittle_283_stochastic_evidence(ws: WhittleEstimate, ws19: WhittleEstimate) -> str:
    """The evidence on "Whittle index with one arm, viz., 283" (Sec. V) with random arrivals:
    :func:`simulate_whittle` under the 2015 xi-bar (``ws``) and the 2019 u-formula (``ws19``);
    a reading holds if 283 lies within the 95% half-width plus half the printed last digit."""
    W = PRINTED.whittle_one_arm
    return (
        f"With random arrivals (eq. 17, exponential base utilities) the Whittle policy earns {ws} with the 2015 xi-bar "
        f"(95% CI, {ws.replications} runs of {ws.n_steps} periods) and {ws19} with the 2019 u-formula ({ws19.replications} runs of {ws19.n_steps} periods): "
        f"the randomness does not bring either near 283. Searched: 2 readings x {ws.replications} and "
        f"{ws19.replications} runs; a mean within its 95% half-width ({ws.half_width:.2f}, {ws19.half_width:.2f}) "
        f"plus 0.5 of 283 would have been found; 283 lies {abs(W - ws.mean):.1f} and {abs(W - ws19.mean):.1f} away.")


# --- Section IV: the printed recursions -------------------------------------------------------


@dataclass(frozen=True)
class ShermanMorrisonReading:
    """One reading of Section IV's pair of lines ``B(n)`` (its step) and ``B^-1(n)`` (its factors).

    Attributes
    ----------
    name : str
        Which printed line the reading keeps and which it corrects.
    step, factors : str
        The step of the average ``B(n)`` and the two factors of the inverse, as written.
    error : float
        ``max |B^-1 B - I|`` after the updates.
    printed_factors : bool
        Whether the inverse uses the printed factors ``n/(n-1)`` and ``n-1``.
    """

    name: str
    step: str
    factors: str
    error: float
    printed_factors: bool

    @property
    def inverts(self) -> bool:
        """The recursion inverts ``B(n)``: an error below 1e-8 (rounding stays below 1e-12)."""
        return bool(self.error < 1e-8)

    @property
    def error_text(self) -> str:
        """The error as reported: a bound when it is rounding (its last digits depend on the
        BLAS kernel, so the digits themselves are not a result)."""
        return "below 1e-12 (rounding)" if self.error < 1e-12 else f"{self.error:.1e}"


@dataclass(frozen=True)
class ShermanMorrisonCheck:
    """How well the Sherman-Morrison recursion for ``B^-1(n)`` inverts ``B(n)`` (Sec. IV), under
    every reading of the printed pair of lines.

    Attributes
    ----------
    readings : tuple of ShermanMorrisonReading
        The printed step ``1/(n+1)`` with the printed factors; the step ``1/n`` with the printed
        factors (the step line off by one); the step ``1/(n+1)`` with the factors ``(n+1)/n``
        and ``n`` (the factor line off by one); the example's ``b(n)`` with the printed factors
        and with ``1/(1-b)``, ``(1-b)/b``.
    n_updates, size : int
    """

    readings: tuple
    n_updates: int
    size: int

    @property
    def printed(self) -> dict:
        """``{reading: error}`` for the readings that keep the printed factors."""
        return {r.name: r.error for r in self.readings if r.printed_factors}

    def rows(self) -> list:
        """One dict per reading (reading, step, factors, error): the notebook's table."""
        return [{"reading": r.name, "step": r.step, "factors": r.factors,
                 f"max|B^-1 B - I| after {self.n_updates} updates": r.error_text}
                for r in self.readings]


def _sm_error(step_of, factors_of, n_updates: int, size: int, seed: int) -> float:
    """max |B^-1 B - I| after ``n_updates`` updates ``n = 2, 3, ...`` of ``B`` with step
    ``step_of(n)`` and of ``B^-1`` by Sherman-Morrison with ``(scale, shift) = factors_of(n)``,
    from ``B(1) = B^-1(1) = I``: ``B^-1(n) = scale (B^-1 - B^-1 v v^T B^-1 / (shift + v^T B^-1 v))``,
    with ``B^-1(n-1)`` on the right-hand side (the printed ``B^-1(n)`` there is the unknown)."""
    rng_check = np.random.default_rng(seed)
    B, P = np.eye(size), np.eye(size)
    for n in range(2, n_updates + 2):
        v = rng_check.normal(size=size)
        B = running_average(B, np.outer(v, v), step_of(n))
        scale, shift = factors_of(n)
        Pv = P @ v
        P = scale * (P - np.outer(Pv, Pv) / (shift + v @ Pv))
    return float(np.abs(P @ B - np.eye(size)).max())


def sherman_morrison_check(step_constant: float, *, n_updates: int = 49, size: int = 5,
                           seed: int = 0) -> ShermanMorrisonCheck:
    """Run the Sherman-Morrison update of ``B^-1`` (Sec. IV) under every reading of its two lines.

    ``B(n) = B(n-1) + b(n)(phi_n phi_n^T - B(n-1))`` on random ``phi_n`` (standard normal, of
    length ``size``, from ``seed``), ``n = 2, ..., n_updates + 1`` from ``B(1) = B^-1(1) = I``
    (so that the printed factors ``n/(n-1)``, ``n-1`` are defined). The exact update for a step
    ``b`` has the factors ``1/(1-b)`` and ``(1-b)/b``
    (:func:`~whittle_lib.learning.sherman_morrison_average`): ``n/(n-1)``, ``n-1`` for
    ``b = 1/n``, and ``(n+1)/n``, ``n`` for the printed ``b = 1/(n+1)``. The printed pair of lines
    is off by one; which line carries the typo is the reader's choice, and both corrections
    invert ``B(n)``.

    Parameters
    ----------
    step_constant : float
        ``c`` of the example's step sizes ``a(n), b(n)`` (:func:`~whittle_lib.learning.step_sizes`).
    n_updates, size, seed : int

    Examples
    --------
    >>> chk = sherman_morrison_check(0.5)
    >>> [r.inverts for r in chk.readings]
    [False, True, True, False, True]
    """
    if not 0 < step_constant < 1:
        raise ValueError(f"step_constant must lie in (0, 1), got {step_constant!r}")
    _, b_ex = step_sizes(np.arange(n_updates + 2), step_constant)

    def printed(n):
        return n / (n - 1), n - 1.0

    def exact(b):
        return 1.0 / (1.0 - b), (1.0 - b) / b

    spec = [
        ("as printed (both lines)", "1/(n+1)", "n/(n-1), n-1", lambda n: 1.0 / (n + 1), printed, True),
        ("the step line off by one (B(n) the mean of n outer products)", "1/n", "n/(n-1), n-1",
         lambda n: 1.0 / n, printed, True),
        ("the factor line off by one", "1/(n+1)", "(n+1)/n, n", lambda n: 1.0 / (n + 1),
         lambda n: exact(1.0 / (n + 1)), False),
        ("the Sec. IV example's step, printed factors", f"b(n), c = {step_constant:g}", "n/(n-1), n-1",
         lambda n: float(b_ex[n]), printed, True),
        ("the Sec. IV example's step, its exact factors", f"b(n), c = {step_constant:g}",
         "1/(1-b), (1-b)/b", lambda n: float(b_ex[n]), lambda n: exact(float(b_ex[n])), False),
    ]
    readings = tuple(ShermanMorrisonReading(name, step, factors,
                                            _sm_error(step_of, factors_of, n_updates, size, seed), keeps)
                     for name, step, factors, step_of, factors_of, keeps in spec)
    return ShermanMorrisonCheck(readings, int(n_updates), int(size))


@dataclass(frozen=True)
class ATermReading:
    """One reading of the printed increment of ``A(n)`` (Sec. IV) and the shapes of its terms.

    Attributes
    ----------
    name, text : str
        The reading and the increment it reads.
    shapes : tuple
        The shapes of the two terms of the difference.
    lspe : bool
        Whether the increment, where defined, is LSPE(0)'s ``phi_n (phi_{n+1} - phi_n)^T``.
    """

    name: str
    text: str
    shapes: tuple
    lspe: bool

    @property
    def well_formed(self) -> bool:
        """Both terms have one shape, and it is square (``A(n)`` is ``l x l``)."""
        a, b = self.shapes
        return a == b and len(a) == 2 and a[0] == a[1]


def printed_a_term_readings(n_features: int = 14, *, seed: int = 0) -> tuple:
    """The printed ``A(n)`` increment ``phi(X(n)) (phi(X(n+1)))^T - phi(X(n))^T`` (Sec. IV) under
    three readings: as printed, one transpose lost (the second term ``phi(X(n))``), and the
    closing parenthesis misplaced (``phi(X(n)) (phi(X(n+1))^T - phi(X(n))^T)``). The shapes are
    computed on random features; the last reading is checked to equal LSPE(0)'s
    ``phi_n (phi_{n+1} - phi_n)^T``.

    Examples
    --------
    >>> [(r.shapes, r.well_formed) for r in printed_a_term_readings(3)]
    [(((3, 3), (1, 3)), False), (((3, 3), (3, 1)), False), (((3, 3), (3, 3)), True)]
    """
    rng_check = np.random.default_rng(seed)
    phi_n, phi_next = rng_check.normal(size=(2, n_features))
    col, row = phi_n[:, None], phi_n[None, :]
    outer = np.outer(phi_n, phi_next)
    moved = col @ (phi_next[None, :] - row)
    lspe = np.outer(phi_n, phi_next - phi_n)
    return (
        ATermReading("as printed", "phi(X(n)) phi(X(n+1))^T - phi(X(n))^T", (outer.shape, row.shape), False),
        ATermReading("one transpose lost", "phi(X(n)) phi(X(n+1))^T - phi(X(n))", (outer.shape, col.shape), False),
        ATermReading("closing parenthesis misplaced", "phi(X(n)) (phi(X(n+1))^T - phi(X(n))^T)",
                     (outer.shape, (col @ row).shape),
                     # the same products, subtracted before or after: rounding only
                     bool(np.allclose(moved, lspe, rtol=0, atol=1e-12))),
    )


def printed_a_term_shapes(n_features: int = 14) -> tuple:
    """Shapes of the two terms of the printed ``A(n)`` increment,
    ``phi(X(n)) phi(X(n+1))^T - phi(X(n))^T`` (Sec. IV), for ``n_features`` features.

    >>> printed_a_term_shapes()
    ((14, 14), (1, 14))
    """
    return printed_a_term_readings(n_features)[0].shapes


def sherman_morrison_evidence(sm: ShermanMorrisonCheck) -> str:
    """The evidence on "the printed recursion for B^-1(n) inverts B(n)" (Sec. IV).

    The claim is judged under the readings that keep the printed factors (the step as printed,
    the step line off by one, the example's ``b(n)``): an error below 1e-8 inverts. It is a typo
    with a correction, which this note names with the readings that fix it.
    """
    fixed = [r for r in sm.readings if not r.printed_factors]
    as_printed = sm.readings[0]
    return (
        "typo: an off-by-one between two printed lines. The printed factors n/(n-1) and n-1 are exact for the "
        "averaging step 1/n and wrong for the printed 1/(n+1); which line is wrong is the reader's choice, and "
        "either correction inverts B(n): "
        + "; ".join(f"{r.name} (step {r.step}, factors {r.factors}): {r.error_text}" for r in fixed)
        + ". The B^-1(n) on the right-hand side reads B^-1(n-1) (the unknown cannot appear there). "
        f"max|B^-1 B - I| after {sm.n_updates} updates from B(1) = B^-1(1) = I. We use the factors 1/(1-b), "
        "(1-b)/b (tests/test_lspe.py::test_the_printed_sherman_morrison_is_wrong). "
        f"Searched: {len(sm.readings)} (step, factors) pairs x {sm.n_updates} rank-one updates of a "
        f"{sm.size} x {sm.size} matrix; an inverse off by more than 1e-8 is detected (rounding stays "
        "below 1e-12), and the printed pair misses by "
        f"{as_printed.error:.1e}.")


def a_term_shapes_text(reading: ATermReading) -> str:
    """``"14x14 - 1x14"``: the shapes of the two terms of one reading of the A(n) increment."""
    (a, b), (c, d) = reading.shapes
    return f"{a}x{b} - {c}x{d}"


def a_term_evidence(a_readings: tuple) -> str:
    """The evidence on "the printed recursion for A(n) is well formed" (Sec. IV), judged under
    the readings of :func:`printed_a_term_readings`: a typo with a correction."""
    holds = [r for r in a_readings if r.well_formed]
    return (
        "typo: a misplaced parenthesis. As printed, phi(X(n)) (phi(X(n+1)))^T - phi(X(n))^T subtracts a row "
        "from a 14 x 14 matrix (NumPy would broadcast it over every row, a different quantity); a lost "
        "transpose does not repair it (a column instead of a row). With the closing parenthesis after "
        "phi(X(n))^T the increment is phi(X(n)) (phi(X(n+1)) - phi(X(n)))^T, LSPE(0)'s matrix"
        + (" (equal to it on random features)" if all(r.lspe for r in holds) and holds else "")
        + ", which we use, checked against batch means in "
        "tests/test_lspe.py::test_running_averages_equal_batch_means. "
        f"Searched: {len(a_readings)} readings, each decided by the shapes of its terms (exact), the "
        "well-formed one also by its values against LSPE(0)'s increment to 1e-12.")


# --- Section V: the runs, the readings, kappa, the numerical fixes ----------------------------


@dataclass(frozen=True)
class RunsSummary:
    """Independent LSPE runs of one setting, summarised over runs (mean, 95% half-width).

    Attributes
    ----------
    active, reward : tuple of float
        ``(mean, half-width)`` over runs of a run's mean number of crawled sources and of its
        average collected reward.
    late_reward : tuple of float
        The same for the average reward over the second half of each run.
    per_run : tuple of (float, float)
        Each run's mean number of crawled sources and average reward.
    at_bound : float
        Share of recorded thresholds sitting on a projection bound ``u_i`` or
        ``u_i/(1-alpha_i)`` in the second half of the runs (mean over runs).
    """

    active: tuple
    reward: tuple
    late_reward: tuple
    per_run: tuple
    at_bound: float

    def __len__(self) -> int:
        return len(self.per_run)


def summarise_runs(runs, model: crawling.CrawlingModel) -> RunsSummary:
    """:class:`RunsSummary` of complete runs of :func:`~whittle_lib.learning.run_lspe`.

    Raises
    ------
    ValueError
        If a run stopped early (with both numerical fixes none should).
    """
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one run, got none")
    if any(r.stopped_at is not None for r in runs):
        raise ValueError("a run stopped early: " + ", ".join(str(r.stopped_at) for r in runs))
    at_bound = np.mean([np.mean(np.isclose(r.threshold_history[len(r.steps) // 2:], model.u) |
                                np.isclose(r.threshold_history[len(r.steps) // 2:], model.u_star))
                        for r in runs])
    return RunsSummary(
        active=_mean_ci([r.average_active() for r in runs]),
        reward=_mean_ci([r.average_reward() for r in runs]),
        late_reward=_mean_ci([r.average_reward(r.settings.n_steps // 2) for r in runs]),
        per_run=tuple((r.average_active(), r.average_reward()) for r in runs),
        at_bound=float(at_bound))


def sampled_runs_note(sampled: RunsSummary) -> str:
    """The note of the runs whose decisions are drawn with probability ``f_i`` (Sec. III's
    surrogate taken literally; rows new to the paper, which reports the threshold policy)."""
    return f"decisions drawn with probability f_i; {len(sampled)} runs, mean and 95% CI"


def _streams(seeds, names) -> dict:
    """``{name: list of seeds}`` for each of ``names`` from the named streams ``seeds``."""
    missing = [name for name in names if name not in seeds]
    if missing:
        raise ValueError(f"seeds must hold a stream named {missing[0]!r}, got {list(seeds)}")
    return {name: list(seeds[name]) for name in names}


def reading_runs(model: crawling.CrawlingModel, settings: LSPESettings, seeds, sweep, *,
                 max_workers: int | None = None) -> dict:
    """Single runs of the literal readings, and of the first one at other values of our constants.

    Each literal reading ``r`` of :data:`LITERAL_READINGS` runs once per seed of
    ``seeds[r.name]``; each ``(name, value)`` of ``sweep`` once per seed of
    ``seeds[f"{name}={value:g}"]``, on the first literal reading with ``n_steps // 2`` periods
    (the first half of the full run on the same seed). All runs share one pool
    (:func:`run_jobs`).

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
        The notebook's main settings.
    seeds : mapping of str to sequence of SeedSequence
        Streams by name (:func:`~whittle_lib.stats.named_seeds`), as above.
    sweep : sequence of (str, float)
        An :class:`~whittle_lib.learning.LSPESettings` field and its value.
    max_workers : int, optional
        As in :func:`run_jobs`.

    Returns
    -------
    dict
        ``{group name: list of LSPEResult}``, the readings first, then the sweep, named as the
        notebook's table and the results note name them.
    """
    sweep = list(sweep)
    literal = LITERAL_READINGS
    streams = _streams(seeds, [r.name for r in literal] + [f"{name}={v:g}" for name, v in sweep])
    half = settings.n_steps // 2
    jobs = [(reading_settings(settings, r), s) for r in literal for s in streams[r.name]]
    jobs += [(reading_settings(settings, literal[0], n_steps=half, **{name: v}), s)
             for name, v in sweep for s in streams[f"{name}={v:g}"]]
    extra = iter(run_jobs(model, jobs, max_workers=max_workers))
    groups = {r.name: [next(extra) for _ in streams[r.name]] for r in literal}
    groups.update({f"literal, arrivals, {name}={v:g}, {half} steps":
                   [next(extra) for _ in streams[f"{name}={v:g}"]] for name, v in sweep})
    return groups


@dataclass(frozen=True)
class ReadingsJudgement:
    """The claims about the paper's single run, judged on our single runs of each group.

    Attributes
    ----------
    groups : tuple of str
        The groups (readings, swept constants), in the order given.
    one_arm, in_band : mapping
        ``{group: SingleRunVerdict}``: a run's mean number of crawled sources in
        ``PRINTED.one_arm``; a run's average reward in ``band``.
    per_run : mapping
        ``{group: (active, reward)}``, one value per run (reward nan for a run stopped early).
    broken : mapping
        ``{group: steps}`` for the groups where every run broke down: not judged.
    band : tuple of float
        ``(u_2, u_1)``: between the second-best and the best constant reward.
    """

    groups: tuple
    one_arm: MappingProxyType
    in_band: MappingProxyType
    per_run: MappingProxyType
    broken: MappingProxyType
    band: tuple

    def table(self) -> str:
        """Two blocks, one line per group in the order given, the judged groups numbered
        ``1, 2, ...`` (the order of the recorded values).

        First block: mean over runs of a run's number of crawled sources and of its reward
        (95% half-widths); a group whose runs all broke down is listed, unnumbered. Second
        block, by number: for "one arm" and "reward in band", the runs that satisfy the claim,
        the 95% Wilson interval of their share and the verdict (:attr:`SingleRunVerdict.verdict`).
        """
        lines = [f"{'#':>2s}  {'reading':52s} {'active arms':>12s} {'reward':>11s}"]
        judged = [name for name in self.groups if name not in self.broken]
        for name in self.groups:
            if name in self.broken:
                at = self.broken[name]
                lines.append(f"{'-':>2s}  {name:52s} every run broke down (steps {min(at)}..{max(at)})")
                continue
            act, rew = self.per_run[name]
            lines.append(f"{judged.index(name) + 1:2d}  {name:52s} {_est(*_mean_ci(act)):>12s} "
                         f"{_est(*_mean_ci(rew)):>11s}")
        lo, hi = PRINTED.one_arm
        u2, u1 = self.band
        lines.append("verdict: holds (fails) if the 95% Wilson interval of the share of runs lies "
                     "above (below) 1/2,")
        lines.append("  undetermined if it contains 1/2")
        lines.append(f"{'':2s}  {f'one arm: mean sources in [{lo:g}, {hi:g}]':39s}"
                     f"reward in [u_2, u_1] = [{u2:.2f}, {u1:.2f}]")
        head = f"{'runs':>5s}  {'share 95% CI':12s}  {'verdict':12s}"
        lines.append(f"{'#':>2s}  {head}      {head}".rstrip())

        def cells(v):
            return f"{f'{v.satisfied}/{v.runs}':>5s}  [{v.share_low:.2f}, {v.share_high:.2f}]  {v.verdict_text:12s}"

        for k, name in enumerate(judged, 1):
            lines.append(f"{k:2d}  {cells(self.one_arm[name])}      {cells(self.in_band[name])}".rstrip())
        return "\n".join(lines)


def judge_readings(groups, band) -> ReadingsJudgement:
    """Judge "one arm" and "reward between u_2 and u_1" on each group's single runs
    (:func:`judge_single_runs`); a group whose runs all broke down is listed, not judged.

    Parameters
    ----------
    groups : mapping
        ``{name: list of LSPEResult}``, in the order of the table.
    band : tuple of float
        ``(u_2, u_1)``.
    """
    low, high = band
    one_arm, in_band, broken, per_run = {}, {}, {}, {}
    for name, rs in groups.items():
        at = [r.stopped_at for r in rs]
        if all(st is not None for st in at):
            broken[name] = tuple(at)
            continue
        act = np.array([r.average_active() for r in rs])
        rew = np.array([r.average_reward() if r.stopped_at is None else np.nan for r in rs])
        per_run[name] = (act, rew)
        one_arm[name] = judge_single_runs(act, *PRINTED.one_arm)
        in_band[name] = judge_single_runs(rew, low, high)
    return ReadingsJudgement(tuple(groups), MappingProxyType(one_arm), MappingProxyType(in_band),
                             MappingProxyType(per_run), MappingProxyType(broken), (low, high))


def _unjudged(readings: ReadingsJudgement) -> str:
    return (" Not judged: " + "; ".join(f"{n} (every run broke down by step {max(s)})"
                                        for n, s in readings.broken.items()) + "."
            if readings.broken else "")


def _counts(verdicts) -> str:
    return "; ".join(f"{name}: {v}" for name, v in verdicts.items())


def _searched(verdicts) -> str:
    runs = [v.runs for v in verdicts.values()]
    return (f" Searched: {len(runs)} readings x {min(runs)} to {max(runs)} single runs ({sum(runs)} runs); "
            f"{share_reach(runs)}: a reading whose share of runs lies nearer 1/2 stays undetermined.")


def one_arm_evidence(readings: ReadingsJudgement, ours: RunsSummary) -> str:
    """The evidence on "on average one arm sampled" (Sec. V), judged by reading and swept
    constant (:func:`judge_readings`; ``ours``: the main runs).

    A reading holds (fails) when the 95% Wilson interval of its share of single runs that
    satisfy the claim lies above (below) 1/2, and carries no verdict otherwise
    (:attr:`SingleRunVerdict.verdict`); groups whose runs all broke down are listed, not judged.
    """
    lit_act, _ = readings.per_run[LEARNING_READINGS[2].name]   # literal: f_i sampled, eq. (6)
    return (
        f"Runs crawling on average 0.5 to 1.5 sources per period, by reading: {_counts(readings.one_arm)}. Mean over runs: ours "
        f"{_est(*ours.active)}, literal {_est(*_mean_ci(lit_act))}. A reading holds (fails) when the 95% Wilson "
        f"interval of its share of runs lies above (below) 1/2; it is undetermined when the interval contains 1/2.{_unjudged(readings)}"
        + _searched(readings.one_arm))


def in_band_evidence(readings: ReadingsJudgement, ours: RunsSummary) -> str:
    """The evidence on "the reward around 160, between the best and the second best" (Sec. V),
    judged by reading and swept constant as :func:`one_arm_evidence`."""
    u2, u1 = readings.band
    _, lit_rew = readings.per_run[LEARNING_READINGS[2].name]
    return (
        f"Runs earning between u_2 = {u2:.2f} and u_1 = {u1:.2f}, by reading: {_counts(readings.in_band)}. Under the literal reading the mean "
        f"over runs is {_est(*_mean_ci(lit_rew))}, near 160, but single runs scatter from {np.nanmin(lit_rew):.0f} to "
        f"{np.nanmax(lit_rew):.0f}: a run like the paper's is the exception. Ours: the runs settle on different always/rarely "
        f"patterns (mean {_est(*ours.reward)}). A reading is undetermined when the 95% Wilson interval of its share "
        f"contains 1/2: with 4 to 6 runs, 1 run in the band cannot reject a claim about one run.{_unjudged(readings)}"
        + _searched(readings.in_band))


@dataclass(frozen=True)
class KappaStudy:
    """Mean number of crawled sources, its dispersion and the reward, for each ``kappa``.

    Attributes
    ----------
    kappas : tuple of float
    replications : int
        Runs per value of ``kappa``.
    active, dispersion, reward : ndarray, shape (len(kappas), 2)
        ``(mean, 95% half-width)`` over runs of a run's mean number of crawled sources, of its
        standard deviation over the periods of the run, and of its average reward.
    """

    kappas: tuple
    replications: int
    active: np.ndarray
    dispersion: np.ndarray
    reward: np.ndarray

    @staticmethod
    def _separated(ms) -> bool:
        lo, hi = np.argmin(ms[:, 0]), np.argmax(ms[:, 0])
        return bool(ms[hi, 0] - ms[lo, 0] > ms[hi, 1] + ms[lo, 1])

    @property
    def controls(self) -> bool:
        """"kappa controls the mean and the dispersion": for both, the largest and the smallest
        mean over ``kappa`` differ by more than the sum of their half-widths."""
        return self._separated(self.active) and self._separated(self.dispersion)

    def table(self) -> str:
        """One line per ``kappa``: active arms, dispersion, reward (mean and 95% half-width)."""
        lines = [f"{'kappa':>6s} {'active arms':>15s} {'dispersion':>15s} {'reward':>15s}"]
        for k, a, d, r in zip(self.kappas, self.active, self.dispersion, self.reward):
            lines.append(f"{k:6.2f} {_est(*a):>15s} {_est(*d):>15s} {_est(*r):>15s}")
        return "\n".join(lines)


def kappa_study(model: crawling.CrawlingModel, settings: LSPESettings, kappas, seeds, *,
                reuse=(), max_workers: int | None = None) -> KappaStudy:
    """Run the scheme at each ``kappa`` (Sec. V: "kappa controls the average and dispersion
    of the number of engaged arms").

    Each ``kappa`` runs once per seed of ``seeds[f"kappa={kappa:g}"]``, the same number for
    every ``kappa``. At ``kappa == settings.kappa`` the first runs of ``reuse`` (runs at
    ``settings``) are taken instead, and its seeds go unused. The other runs share one pool
    (:func:`run_jobs`).

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
    kappas : sequence of float
    seeds : mapping of str to sequence of SeedSequence
        Streams by name (:func:`~whittle_lib.stats.named_seeds`), one per ``kappa``.
    reuse : sequence of LSPEResult
        Runs at ``settings``, at least as many as each ``kappa``'s seeds.
    max_workers : int, optional
    """
    kappas, reuse = tuple(float(k) for k in kappas), list(reuse)
    if not kappas:
        raise ValueError("kappas must hold at least one value, got none")
    streams = dict(zip(kappas, _streams(seeds, [f"kappa={k:g}" for k in kappas]).values()))
    n = len(streams[kappas[0]])
    if any(len(s) != n for s in streams.values()):
        raise ValueError(f"seeds must give every kappa the same number of runs, got "
                         f"{[len(s) for s in streams.values()]}")
    if settings.kappa in kappas and len(reuse) < n:
        raise ValueError(f"reuse must hold at least {n} runs at kappa = {settings.kappa}, got {len(reuse)}")
    jobs = [(replace(settings, kappa=k), s) for k in kappas if k != settings.kappa
            for s in streams[k]]
    fresh = iter(run_jobs(model, jobs, max_workers=max_workers))
    stats = []
    for k in kappas:
        rs = reuse[:n] if k == settings.kappa else [next(fresh) for _ in range(n)]
        stats.append((_mean_ci([r.average_active() for r in rs]), _mean_ci([r.n_active.std() for r in rs]),
                      _mean_ci([r.average_reward() for r in rs])))
    return KappaStudy(kappas, n, np.array([s[0] for s in stats]), np.array([s[1] for s in stats]),
                      np.array([s[2] for s in stats]))


def kappa_evidence(study: KappaStudy) -> str:
    """The evidence on "kappa controls the mean and the dispersion of the number of engaged
    arms" (Sec. V) from :func:`kappa_study` (verdict: :attr:`KappaStudy.controls`)."""
    means, spreads = study.active, study.dispersion
    return ("Over kappa = " + ", ".join(f"{k:g}" for k in study.kappas) + f" ({study.replications} runs each) the mean number of active arms ranges over "
            f"{means[:, 0].min():.2f}..{means[:, 0].max():.2f} and the dispersion over {spreads[:, 0].min():.2f}..{spreads[:, 0].max():.2f}, "
            f"with 95% half-widths up to {means[:, 1].max():.2f} and {spreads[:, 1].max():.2f}: "
            + ("the extremes are separated beyond their intervals." if study.controls else "the differences are within the run-to-run variability, with no trend in kappa."))


@dataclass(frozen=True)
class NumericalFixes:
    """One seed with each numerical fix of Sec. V switched off in turn, and the literal unit.

    Attributes
    ----------
    runs : mapping
        ``{"both fixes", "no projection", "no Tikhonov": LSPEResult}``.
    literal_scale : LSPEResult
        Both fixes, features at the paper's literal scale (``feature_scale=1``).
    outside : float
        Without projection: share of recorded thresholds outside ``[u_i, u_i/(1-alpha_i)]``.
    overflow_steps, recorded_steps : int
        Without projection: recorded steps on which the printed logistic ``e^z/(1+e^z)``
        overflows (``z > log(max float)`` for some source), out of how many.
    growth : float
        ``max|r|`` at the end without the Tikhonov inverse over the same with it.
    """

    runs: MappingProxyType
    literal_scale: LSPEResult
    outside: float
    overflow_steps: int
    recorded_steps: int
    growth: float

    def table(self) -> str:
        """The runs side by side, and what each switched-off fix lets happen."""
        lines = [f"{'run':14s} {'max|r|':>9s} {'max|q|':>9s} {'cond(B)':>9s} {'thresholds from':>16s} {'to':>8s} "
                 f"{'reward':>7s} {'active':>7s}"]
        for name, r in self.runs.items():
            lines.append(f"{name:14s} {r.r_norm[-1]:9.2e} {np.abs(r.q[-1]).max():9.2e} {r.condition:9.1e} "
                         f"{r.threshold_history.min():16.1f} {r.threshold_history.max():8.1f} {r.average_reward():7.1f} "
                         f"{r.average_active():7.2f}")
        lit = self.literal_scale
        lines.append(f"no projection: {self.outside:.0%} of recorded thresholds outside [u_i, u_i/(1-alpha_i)];")
        lines.append(f"  the printed logistic overflows on {self.overflow_steps} of {self.recorded_steps} recorded steps")
        lines.append(f"no Tikhonov: max|r| grows x{self.growth:.1e} over both fixes "
                     f"({self.runs['no Tikhonov'].r_norm[-1]:.2e} / {self.runs['both fixes'].r_norm[-1]:.2e})")
        lines.append("literal feature scale: " + (f"stopped at step {lit.breakdown_at}: the bound on "
                     f"cond(B^T B + delta I) reached {lit.condition_bound:.1e} > 1/eps" if lit.broke_down
                     else "no breakdown"))
        lines.append(f"default scale: largest bound {self.runs['both fixes'].condition_bound:.1e}")
        return "\n".join(lines)


def numerical_fixes(model: crawling.CrawlingModel, settings: LSPESettings, seed, base: LSPEResult,
                    *, max_workers: int | None = None) -> NumericalFixes:
    """Switch off each numerical fix of Sec. V (projection, Tikhonov inverse) on one seed.

    The runs without projection and without the Tikhonov inverse (corrected Sherman-Morrison
    instead), and the run with both fixes at the literal feature scale, share one pool
    (:func:`run_jobs`); the literal scale is expected to break down (the stated criterion of
    :func:`~whittle_lib.learning.tikhonov_condition_bound`), so its stop is a field of the
    result, not a warning.

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
        Both fixes on.
    seed : SeedSequence or int
        The seed of ``base``.
    base : LSPEResult
        The run at ``settings`` with ``seed`` ("both fixes"), reused.
    max_workers : int, optional
    """
    if base.settings != settings:
        raise ValueError("base must be the run at settings (both fixes), got other settings")
    jobs = [(replace(settings, project=False), seed), (replace(settings, regularise=False), seed),
            (replace(settings, feature_scale=1.0), seed)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the literal scale's stop: a field
        noproj, notik, literal = run_jobs(model, jobs, max_workers=max_workers)
    z = settings.kappa * (noproj.state_history - noproj.threshold_history - 0.5)
    overflow_steps = int(np.sum(np.any(z > np.log(np.finfo(float).max), axis=1)))
    outside = np.mean((noproj.threshold_history < model.u) | (noproj.threshold_history > model.u_star))
    runs = {"both fixes": base, "no projection": noproj, "no Tikhonov": notik}
    return NumericalFixes(MappingProxyType(runs), literal, float(outside), overflow_steps,
                          int(z.shape[0]), float(notik.r_norm[-1] / base.r_norm[-1]))


def projection_evidence(fixes: NumericalFixes) -> str:
    """The evidence on "without projection the thresholds reach values that break the exponent
    of the logit" (Sec. V), from :func:`numerical_fixes`: it holds if thresholds leave the
    state range and the printed logistic overflows."""
    noproj = fixes.runs["no projection"]
    return (f"Without projection {fixes.outside:.0%} of the recorded thresholds lie outside the state range (from {noproj.threshold_history.min():.0f} to {noproj.threshold_history.max():.0f}) "
            f"and e^z/(1+e^z) as printed overflows on {fixes.overflow_steps} of {fixes.recorded_steps} recorded steps.")


def tikhonov_evidence(fixes: NumericalFixes) -> str:
    """The evidence on "without the Tikhonov inverse the scheme is numerically unstable"
    (Sec. V), from :func:`numerical_fixes`: it holds if ``max|r|`` grows more than a
    millionfold (:attr:`NumericalFixes.growth`)."""
    base, notik, literal = fixes.runs["both fixes"], fixes.runs["no Tikhonov"], fixes.literal_scale
    return (f"With the corrected Sherman-Morrison inverse and no regularisation max|r| reaches {notik.r_norm[-1]:.1e} against {base.r_norm[-1]:.1e} with it (x{fixes.growth:.0e}), and q reaches {np.abs(notik.q[-1]).max():.0e}. "
            f"At the literal feature scale the regularised solve itself breaks down at step {literal.breakdown_at}: the bound ||B^T B||_F/delta + 1 on the condition number of B^T B + delta I is {literal.condition_bound:.0e}, beyond 1/eps = 4.5e15 (stated criterion, lspe.tikhonov_condition_bound; at the default scale it stays below {base.condition_bound:.0e}).")
