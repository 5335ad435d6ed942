r"""The greedy row of Table II: every reading of the printed rule, each computed exactly.

Sec. IV-B prints the greedy priority :math:`\frac{\Lambda_i\bar\xi_i}{\mu_i}(1 - e^{-\mu_i t_i})`,
a function of the time :math:`t_i` since the last crawl only. The ages move deterministically
given the decisions, so the policy is a *fixed* (eventually periodic) schedule, whatever the
arrivals. The reward of a crawl is :math:`X_i(n) = \sum_{d < g} \alpha_i^d U_i(n - d)` (``g``
periods since the previous crawl), linear in the utilities, so the expected reward of the
schedule equals its reward on the deterministic model (:math:`U \equiv u`) whatever the law of
the utilities, and the spread of one run is exact too (:func:`schedule_run_sd`).
:func:`greedy_readings` lists every reading of the printed rule we can name;
:func:`greedy_reading_rewards` computes each exactly
(:func:`whittle_lib.models.crawling_policies.crawling_orbit`); :func:`greedy_comparison` sets
them against the paper's row.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from whittle_lib.models import crawling_policies as policies
from whittle_lib.models.crawling import CrawlingModel

from .paper import TableTwoPaper

__all__ = ["StatePriorityRule", "greedy_readings", "greedy_reading_rewards", "utility_variance",
           "schedule_run_sd", "one_run_tolerance", "greedy_comparison"]

#: The two readings of the greedy rule that look at the state, as one entry of Table II's runs.
STATE_READINGS = "greedy on x and on x/mu"


def _read_only(name: str, value, bound: str, holds) -> np.ndarray:
    """``value`` as a read-only float array, finite and ``holds`` (else a ValueError that says
    ``bound``)."""
    arr = np.array(value, dtype=float)
    if not (np.all(np.isfinite(arr)) and holds(arr)):
        raise ValueError(f"{name} must be finite and {bound}, got {arr.tolist()}")
    arr.setflags(write=False)
    return arr


# -- readings of the greedy rule ------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class AgePriorityRule:
    r"""Priority ``scale_i (1 - exp(-rate_i (t_i + shift)))``, divided by ``t_i + shift`` if
    ``per_period``; ``t_i`` the periods since the last crawl (1 just after it).

    With ``scale = Lambda xi / mu`` and ``rate = mu`` this is the greedy rule of Sec. IV-B as
    printed. ``rate = 0`` gives the age itself (least recently crawled first).
    """

    scale: np.ndarray
    rate: np.ndarray
    shift: float = 0.0
    per_period: bool = False
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for name in ("scale", "rate"):
            object.__setattr__(self, name, _read_only(name, getattr(self, name), ">= 0",
                                                      lambda a: np.all(a >= 0)))
        if not math.isfinite(self.shift):
            raise ValueError(f"shift must be finite, got {self.shift!r}")

    def __call__(self, x, age, t):
        a = np.asarray(age, dtype=float) + self.shift
        gain = np.where(self.rate > 0, -np.expm1(-self.rate * a), a)
        value = self.scale * gain
        return value / np.maximum(a, 1e-300) if self.per_period else value


@dataclass(frozen=True, eq=False)
class StatePriorityRule:
    """Priority ``weight_i x_i``: greedy on the current state (``weight = 1``), or ``x / mu``."""

    weight: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "weight", _read_only("weight", self.weight, "> 0",
                                                      lambda a: np.all(a > 0)))

    def __call__(self, x, age, t):
        return self.weight * np.asarray(x, dtype=float)


@dataclass(frozen=True, eq=False)
class StaticPriorityRule:
    """A constant priority per source: always crawl the same ``M`` sources."""

    value: np.ndarray
    time_period: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        arr = np.array(self.value, dtype=float)           # any values: +-inf are priorities
        arr.setflags(write=False)
        object.__setattr__(self, "value", arr)

    def __call__(self, x, age, t):
        return np.broadcast_to(self.value, np.shape(x))


@dataclass(frozen=True, eq=False)
class GreedyReading:
    """One reading of the greedy rule of Sec. IV-B.

    Attributes
    ----------
    name : str
    rule : callable
        ``rule(x, age, t) -> priority``.
    fixed_schedule : bool
        The priority depends on the ages only: the decisions do not depend on the arrivals and
        the expected reward on the stochastic model equals the reward on the deterministic one.
    """

    name: str
    rule: object
    fixed_schedule: bool


def greedy_readings(model: CrawlingModel) -> list[GreedyReading]:
    r"""Every reading of the printed greedy rule we can name (Sec. IV-B).

    The printed rule is :math:`\frac{\Lambda_i\bar\xi_i}{\mu_i}(1 - e^{-\mu_i t_i})`,
    :math:`\bar\xi_i = E\xi^i_n`, :math:`t_i` the time since the last crawl. The readings:
    the rule as printed; the age shifted by -1 or +1; without the :math:`1/\mu`; as a rate
    (divided by :math:`t`); :math:`\bar\xi_i = 1/\theta_i` (``theta`` a rate); ``theta`` and
    ``mu`` exchanged; least recently crawled; greedy on the state :math:`x` and on
    :math:`x/\mu`; always the sources of highest :math:`u` (the 2015 paper's "greedily crawls
    only source 1"); and every permutation of the sources' :math:`\mu` or :math:`\bar\xi` in
    the rule (a mix-up of the table's columns). ``Lambda_i`` is common to all sources in
    Table I, so its value (25 or 250) does not change any schedule.
    """
    lam, xi, mu = model.arrival_rate, model.xi_mean, model.mu
    out = [
        GreedyReading("as printed (t = 1 just after a crawl)", AgePriorityRule(lam * xi / mu, mu),
                      True),
        GreedyReading("t - 1 (t = 0 just after a crawl)", AgePriorityRule(lam * xi / mu, mu, -1.0),
                      True),
        GreedyReading("t + 1 (value at the next period)", AgePriorityRule(lam * xi / mu, mu, 1.0),
                      True),
        GreedyReading("without the 1/mu", AgePriorityRule(lam * xi, mu), True),
        GreedyReading("reward rate: divided by t", AgePriorityRule(lam * xi / mu, mu,
                                                                    per_period=True), True),
        GreedyReading("xi-bar = 1/theta (theta a rate)", AgePriorityRule(lam / xi / mu, mu), True),
        GreedyReading("theta and mu columns exchanged", AgePriorityRule(lam * mu / xi, xi), True),
        GreedyReading("Lambda = 25 in the rule", AgePriorityRule(25.0 * xi / mu, mu), True),
        GreedyReading("least recently crawled (priority t)",
                      AgePriorityRule(np.ones_like(mu), np.zeros_like(mu)), True),
        GreedyReading("static: highest u", StaticPriorityRule(model.u), True),
        GreedyReading("current state x", StatePriorityRule(np.ones_like(mu)), False),
        GreedyReading("x / mu", StatePriorityRule(1.0 / mu), False),
    ]
    n = model.n_sources
    for perm in itertools.permutations(range(n)):
        if perm == tuple(range(n)):
            continue
        p = list(perm)
        out.append(GreedyReading(f"mu of sources {[q + 1 for q in p]}",
                                 AgePriorityRule(lam * xi / mu[p], mu[p]), True))
        out.append(GreedyReading(f"xi-bar of sources {[q + 1 for q in p]}",
                                 AgePriorityRule(lam * xi[p] / mu, mu), True))
    return out


@dataclass(frozen=True)
class GreedyRewards:
    """Exact long-run average rewards of the greedy readings on the deterministic model.

    Attributes
    ----------
    names : tuple of str
    fixed_schedule : ndarray of bool, shape (n,)
    M : tuple of int
    rewards : ndarray, shape (n, len(M))
        Exact on the deterministic model; for a fixed schedule also the expected reward on the
        stochastic model.
    run_sd : ndarray, shape (n, len(M))
        Exact standard deviation of the average over ``n_periods`` periods of one run on the
        stochastic model (:func:`schedule_run_sd`); ``nan`` where the schedule is not fixed.
    """

    names: tuple
    fixed_schedule: np.ndarray
    M: tuple
    rewards: np.ndarray
    run_sd: np.ndarray


def greedy_reading_rewards(model: CrawlingModel, M=(1, 2), *, n_periods: int = 10_000,
                           base_law: str = "exponential") -> GreedyRewards:
    """Exact rewards (periodic orbit) of every :func:`greedy_readings` for each ``M``."""
    readings = greedy_readings(model)
    Ms = tuple(int(m) for m in M)
    rewards = np.empty((len(readings), len(Ms)))
    sd = np.full((len(readings), len(Ms)), np.nan)
    for j, reading in enumerate(readings):
        for c, m in enumerate(Ms):
            orbit = policies.crawling_orbit(model, reading.rule, m)
            rewards[j, c] = orbit.average_reward
            if reading.fixed_schedule:
                sd[j, c] = schedule_run_sd(model, orbit, n_periods, base_law=base_law)
    return GreedyRewards(tuple(r.name for r in readings),
                         np.array([r.fixed_schedule for r in readings]), Ms, rewards, sd)


# -- the spread of one run of a fixed schedule ----------------------------------------------------

def utility_variance(model: CrawlingModel, base_law: str = "exponential") -> np.ndarray:
    r"""``Var U_i`` of the utility arriving in one period (eq. 17 of the 2015 paper).

    :math:`U = \sum_k \xi_k e^{-\mu a_k}` over a Poisson(:math:`\Lambda T`) number of contents
    with ages :math:`a_k` uniform on :math:`[0, T]`: a compound Poisson sum, so
    :math:`\operatorname{Var} U = \Lambda T\, E\xi^2\, E e^{-2\mu a}
    = \Lambda E\xi^2 (1 - e^{-2\mu T}) / (2\mu)`, with :math:`E\xi^2 = 2\bar\xi^2`
    (exponential) or :math:`\bar\xi^2` (deterministic).
    """
    if base_law not in ("exponential", "deterministic"):
        raise ValueError(f"base_law must be 'exponential' or 'deterministic', got {base_law!r}")
    second = (2.0 if base_law == "exponential" else 1.0) * model.xi_mean ** 2
    return model.arrival_rate * second * -np.expm1(-2 * model.mu * model.period) / (2 * model.mu)


def schedule_run_sd(model: CrawlingModel, orbit, n_periods: int, *,
                    base_law: str = "exponential") -> float:
    r"""Standard deviation of the average reward of one run of a fixed schedule.

    A fixed schedule (one whose decisions do not depend on the arrivals, e.g. round robin or
    an age-based priority) collects at a crawl of source ``i`` after a gap of ``g`` periods
    :math:`\sum_{d<g}\alpha_i^d U_i(n-d)`: every utility enters the total once, with weight
    :math:`\alpha_i^d`. Over the cycle of ``orbit`` (length ``L``) the weights' squares sum to
    :math:`S_i = \sum_{\text{gaps}} (1-\alpha_i^{2g})/(1-\alpha_i^2)`, so the average over
    ``n_periods`` periods has variance :math:`\sum_i \operatorname{Var}U_i\,S_i/(L\,n)` (the
    transient and the end effects are :math:`O(1/n^2)`).

    Parameters
    ----------
    model : CrawlingModel
    orbit : PeriodicOrbit
        From :func:`whittle_lib.models.crawling_policies.crawling_orbit` with a fixed-schedule rule.
    n_periods : int
    """
    if int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    cycle = np.asarray(orbit.active[orbit.transient:], dtype=bool)     # (L, N)
    L = cycle.shape[0]
    alpha2 = model.alpha ** 2
    s = np.zeros(model.n_sources)
    for i in range(model.n_sources):
        when = np.flatnonzero(cycle[:, i])
        if when.size == 0:
            continue
        gaps = np.diff(np.concatenate([when, [when[0] + L]]))
        s[i] = np.sum(-np.expm1(gaps * np.log(alpha2[i])) / (1 - alpha2[i]))
    var = np.sum(utility_variance(model, base_law) * s) / (L * n_periods)
    return float(math.sqrt(var))


def one_run_tolerance(run_sd: float, replications: int, *, half_digit: float = 0.005) -> float:
    r"""Tolerance for comparing a number the paper printed from *one* run with our mean of
    ``R`` runs: ``half_digit + 1.96 sd sqrt(1 + 1/R)``, half a unit of the printed digit plus
    the 95 % range of the difference between one run and a mean of ``R`` independent ones.
    """
    if not (math.isfinite(run_sd) and run_sd >= 0):
        raise ValueError(f"run_sd must be finite and >= 0, got {run_sd!r}")
    if int(replications) != replications or replications < 1:
        raise ValueError(f"replications must be a positive integer, got {replications!r}")
    return half_digit + 1.96 * run_sd * math.sqrt(1 + 1 / replications)


# -- against the paper ----------------------------------------------------------------------------

@dataclass(frozen=True)
class GreedyComparison:
    """Every reading of the greedy rule (:func:`greedy_reading_rewards`) against Table II.

    Attributes
    ----------
    readings : GreedyRewards
    values : ndarray, shape (n, 2)
        Exact reward of each fixed-schedule reading; for the two readings that look at the
        state, one stochastic run of ours (``M = 1, 2``).
    paper, tolerance : ndarray, shape (2,)
    within : ndarray of bool, shape (n, 2)
        Within the tolerance (twice it for a single stochastic run of ours).
    permutation : ndarray of bool, shape (n,)
        The reading is a mix-up of the sources' columns.
    """

    readings: GreedyRewards
    values: np.ndarray
    paper: np.ndarray
    tolerance: np.ndarray
    within: np.ndarray
    permutation: np.ndarray

    def nearest(self, c: int) -> int:
        """The reading nearest the paper for ``M = c + 1``."""
        return int(np.argmin(np.abs(self.values[:, c] - self.paper[c])))

    def to_frame(self) -> pd.DataFrame:
        """The paper's one run, every reading that is not a column mix-up, and the three mix-ups
        nearest the paper, with the exact sd of one run of each fixed schedule."""
        g, names, perm = self.readings, self.readings.names, self.permutation
        rows = {"paper (one run)": {"M=1": self.paper[0], "M=2": self.paper[1],
                                    "sd of one run": ""}}
        for j in np.flatnonzero(~perm):
            sd_ = ("stochastic run" if not g.fixed_schedule[j]
                   else f"{g.run_sd[j, 0]:.2f}, {g.run_sd[j, 1]:.2f}")
            rows[names[j]] = {"M=1": self.values[j, 0], "M=2": self.values[j, 1],
                              "sd of one run": sd_}
        far = np.abs(self.values - self.paper).max(axis=1)
        for j in np.flatnonzero(perm)[np.argsort(far[perm])[:3]]:
            rows[f"mix-up: {names[j]}"] = {"M=1": self.values[j, 0], "M=2": self.values[j, 1],
                                          "sd of one run": ""}
        frame = pd.DataFrame.from_dict(rows, orient="index").round(2)
        frame.index.name = "greedy reading"
        return frame


def greedy_comparison(greedy: GreedyRewards, table, paper: TableTwoPaper) -> GreedyComparison:
    """Compare every greedy reading with the paper's Greedy row; the two readings that look at
    the state take their one run from ``table`` (a :class:`~.table_two.TableTwo`). A state
    reading is one run of ours, so the paper's one run may differ from it by twice the one-run
    range."""
    values = greedy.rewards.copy()
    for j, name in enumerate(greedy.names):
        if not greedy.fixed_schedule[j]:
            which = 0 if name == "current state x" else 1
            values[j] = [table.runs[STATE_READINGS, M][which] for M in (1, 2)]
    g_paper = np.array([paper.value["Greedy", M] for M in (1, 2)])
    g_tol = np.array([paper.tolerance["Greedy", M] for M in (1, 2)])
    within = np.abs(values - g_paper) <= np.where(greedy.fixed_schedule[:, None], 1, 2) * g_tol
    perm = np.array(["of sources" in n for n in greedy.names])
    return GreedyComparison(greedy, values, g_paper, g_tol, within, perm)

