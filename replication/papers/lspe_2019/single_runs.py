"""Section V: "on average one arm sampled" and "the reward around 160", claims about the one run
the paper reports, judged on each of our single runs under every reading and constant.

A reading holds if the 95% Wilson interval of the share of our single runs that satisfy the
claim lies above 1/2, fails if it lies below, and is undetermined if it contains 1/2
(:func:`whittle_lib.stats.one_run_verdict`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from whittle_lib.stats import one_run_verdict, share_interval

from ...records import (confidence_interval as _mean_ci, format_estimate as _est,
                        share_reach)
from .printed import LEARNING_READINGS, PRINTED
from .runs import RunsSummary

__all__ = ["judge_single_runs", "judge_readings", "one_arm_evidence", "in_band_evidence"]


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
        """Lower end of the 95% Wilson interval of the share
        (:func:`whittle_lib.stats.share_interval`)."""
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

    def rows(self) -> list:
        """The notebook's table: one dict per group in the order given, the judged groups
        numbered ``"1"``, ``"2"``, ... (the order of the recorded values), a group whose runs
        all broke down marked ``"-"``; for each judged group the mean over runs of a run's
        number of crawled sources and of its reward (95% half-widths), and for "one arm" and
        "reward in band" the runs that satisfy the claim and the verdict (``"6/6 holds"``; the
        95% Wilson interval of their share is in the evidence, :func:`one_arm_evidence`)."""
        table, k = [], 0
        for name in self.groups:
            if name in self.broken:
                at = self.broken[name]
                table.append({"#": "-", "reading": name, "active arms":
                              f"every run broke down (steps {min(at)}..{max(at)})"})
                continue
            k += 1
            act, rew = self.per_run[name]
            row = {"#": str(k), "reading": name, "active arms": _est(*_mean_ci(act)),
                   "reward": _est(*_mean_ci(rew))}
            for claim, v in (("one arm", self.one_arm[name]),
                             ("reward in band", self.in_band[name])):
                row[claim] = f"{v.satisfied}/{v.runs} {v.verdict_text}"
            table.append(row)
        return table


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
    return (f" Searched: {len(runs)} readings x {min(runs)} to {max(runs)} single runs "
            f"({sum(runs)} runs); {share_reach(runs)}: a reading whose share of runs lies "
            "nearer 1/2 stays undetermined.")


def one_arm_evidence(readings: ReadingsJudgement, ours: RunsSummary) -> str:
    """The evidence on "on average one arm sampled" (Sec. V), judged by reading and swept
    constant (:func:`judge_readings`; ``ours``: the main runs).

    A reading holds (fails) when the 95% Wilson interval of its share of single runs that
    satisfy the claim lies above (below) 1/2, and carries no verdict otherwise
    (:attr:`SingleRunVerdict.verdict`); groups whose runs all broke down are listed, not judged.
    """
    lit_act, _ = readings.per_run[LEARNING_READINGS[2].name]   # literal: f_i sampled, eq. (6)
    return (
        "Runs crawling on average 0.5 to 1.5 sources per period, by reading: "
        f"{_counts(readings.one_arm)}. Mean over runs: ours {_est(*ours.active)}, literal "
        f"{_est(*_mean_ci(lit_act))}. A reading holds (fails) when the 95% Wilson interval of "
        "its share of runs lies above (below) 1/2; it is undetermined when the interval "
        f"contains 1/2.{_unjudged(readings)}" + _searched(readings.one_arm))


def in_band_evidence(readings: ReadingsJudgement, ours: RunsSummary) -> str:
    """The evidence on "the reward around 160, between the best and the second best" (Sec. V),
    judged by reading and swept constant as :func:`one_arm_evidence`."""
    u2, u1 = readings.band
    _, lit_rew = readings.per_run[LEARNING_READINGS[2].name]
    return (
        f"Runs earning between u_2 = {u2:.2f} and u_1 = {u1:.2f}, by reading: "
        f"{_counts(readings.in_band)}. Under the literal reading the mean over runs is "
        f"{_est(*_mean_ci(lit_rew))}, near 160, but single runs scatter from "
        f"{np.nanmin(lit_rew):.0f} to {np.nanmax(lit_rew):.0f}: a run like the paper's is the "
        "exception. Ours: the runs settle on different always/rarely patterns (mean "
        f"{_est(*ours.reward)}). A reading is undetermined when the 95% Wilson interval of its "
        "share contains 1/2: with 4 to 6 runs, 1 run in the band cannot reject a claim about "
        f"one run.{_unjudged(readings)}" + _searched(readings.in_band))
