"""Section V: the runs of the learning scheme that the record needs beyond the lesson's.

The notebook's Part I runs the scheme under three readings and at each ``kappa`` with the
library alone; Part II runs here, in one pool (:func:`record_runs`), what only the record
needs: the literal reading on the mean dynamics, the sweep of our free constants, and the
numerical fixes switched off. :func:`run_jobs` is the pool: runs of different settings, each
on its own seed, in lock-step stacks (:func:`~whittle_lib.learning.run_lspe_many`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from functools import partial
from types import MappingProxyType

import numpy as np

from whittle_lib.learning import LSPESettings, run_lspe_many
from whittle_lib.models import crawling
from whittle_lib.stats import run_tasks

from ...records import confidence_interval as _mean_ci
from .printed import LITERAL_READINGS, reading_settings

__all__ = ["run_jobs", "summarise_runs", "sampled_runs_note", "record_runs"]


def _run_stack(model, jobs) -> list:
    with warnings.catch_warnings():
        # a worker's stderr is not the caller's: the stop is a field of the result, and
        # run_jobs warns about it in the calling process
        warnings.simplefilter("ignore", RuntimeWarning)
        return run_lspe_many(model, [settings for settings, _ in jobs],
                             [np.random.default_rng(seed) for _, seed in jobs])


def _stacks(jobs, workers: int) -> list:
    """The jobs' indices in stacks for :func:`~whittle_lib.learning.run_lspe_many`: the
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
    jobs that can share a stack run in lock-step (:func:`~whittle_lib.learning.run_lspe_many`,
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
        warnings.warn(f"{len(stopped)} of {len(results)} LSPE runs stopped early (jobs "
                      f"{stopped}; see breakdown_at and diverged_at)", RuntimeWarning,
                      stacklevel=2)
    return results


@dataclass(frozen=True)
class RunsSummary:
    """Independent LSPE runs of one setting, summarised over runs (mean, 95% half-width).

    Attributes
    ----------
    active, reward : tuple of float
        ``(mean, half-width)`` over runs of a run's mean number of crawled sources and of its
        average collected reward.
    per_run : tuple of (float, float)
        Each run's mean number of crawled sources and average reward.
    """

    active: tuple
    reward: tuple
    per_run: tuple

    def __len__(self) -> int:
        return len(self.per_run)


def summarise_runs(runs) -> RunsSummary:
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
    return RunsSummary(active=_mean_ci([r.average_active() for r in runs]),
                       reward=_mean_ci([r.average_reward() for r in runs]),
                       per_run=tuple((r.average_active(), r.average_reward()) for r in runs))


def sampled_runs_note(sampled: RunsSummary) -> str:
    """The note of the runs whose decisions are drawn with probability ``f_i`` (Sec. III's
    surrogate taken literally; rows new to the paper, which reports the threshold policy)."""
    return f"decisions drawn with probability f_i; {len(sampled)} runs, mean and 95% CI"


@dataclass(frozen=True)
class RecordRuns:
    """The runs of :func:`record_runs`.

    Attributes
    ----------
    groups : mapping
        ``{group name: tuple of LSPEResult}``: the literal reading on the mean dynamics
        (named as in :data:`~.printed.LITERAL_READINGS`), then each swept constant
        (``"literal, arrivals, feature_scale=10, 5000 steps"``), in the order given.
    fixes : mapping
        ``{"no projection", "no Tikhonov", "literal feature scale": LSPEResult}``: one seed,
        each numerical fix of Sec. V switched off in turn, and both fixes on with the features
        at the paper's literal unit (``feature_scale=1``).
    """

    groups: MappingProxyType
    fixes: MappingProxyType


def record_runs(model: crawling.CrawlingModel, settings: LSPESettings, *, mean_dynamics,
                sweep, fixes_seed, max_workers: int | None = None) -> RecordRuns:
    """The record's runs, in one pool (:func:`run_jobs`).

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
        The notebook's main settings (threshold decisions, both fixes on).
    mean_dynamics : sequence of SeedSequence
        One run each of the literal reading on the mean dynamics (2)-(3).
    sweep : sequence of (str, float, sequence of SeedSequence)
        An :class:`~whittle_lib.learning.LSPESettings` field, its value, and the seeds: one run
        each of the literal reading with arrivals at that value, ``n_steps // 2`` periods (the
        first half of the full run on the same seed).
    fixes_seed : SeedSequence
        The seed of the main run with both fixes (the notebook's first): the same run with
        ``project=False``, with ``regularise=False``, and with ``feature_scale=1``.
    max_workers : int, optional
        As in :func:`run_jobs`.

    Warns
    -----
    RuntimeWarning
        Once, naming the groups with runs that stopped early (breakdown or divergence); the
        literal feature scale is expected to break down (the stated criterion of
        :func:`~whittle_lib.learning.tikhonov_condition_bound`), so its stop is a field.
    """
    literal_arrivals, literal_mean = LITERAL_READINGS
    sweep = [(name, value, list(seeds)) for name, value, seeds in sweep]
    half = settings.n_steps // 2
    named = [(literal_mean.name, reading_settings(settings, literal_mean), list(mean_dynamics))]
    named += [(f"literal, arrivals, {name}={value:g}, {half} steps",
               reading_settings(settings, literal_arrivals, n_steps=half, **{name: value}),
               seeds) for name, value, seeds in sweep]
    fixes = {"no projection": replace(settings, project=False),
             "no Tikhonov": replace(settings, regularise=False),
             "literal feature scale": replace(settings, feature_scale=1.0)}
    jobs = [(s, seed) for _, s, seeds in named for seed in seeds]
    jobs += [(s, fixes_seed) for s in fixes.values()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # said once below, by group
        done = iter(run_jobs(model, jobs, max_workers=max_workers))
    groups = {name: tuple(next(done) for _ in seeds) for name, _, seeds in named}
    runs = {name: next(done) for name in fixes}
    stopped = [name for name, rs in groups.items() if any(r.stopped_at is not None for r in rs)]
    stopped += [name for name, r in runs.items()
                if r.stopped_at is not None and name != "literal feature scale"]
    if stopped:
        warnings.warn(f"LSPE runs stopped early in: {'; '.join(stopped)} (see breakdown_at and "
                      "diverged_at)", RuntimeWarning, stacklevel=2)
    return RecordRuns(MappingProxyType(groups), MappingProxyType(runs))
