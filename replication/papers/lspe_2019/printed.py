"""What Section V printed, and the readings of Sections II-V that the notebook runs.

The paper leaves open which policy acts (the threshold rule of Section III or decisions drawn
from the logistic ``f_i``), which reward is learnt (the collected utility of Section II's
objective or ``sum_i x_i`` as eq. (6) prints it), the dynamics (eq. (1) with random arrivals or
the mean dynamics (2)-(3)), and, for the example, the mean base utilities ``xi-bar`` (its
``u``-formula has none). This module names those readings (:data:`LEARNING_READINGS`,
:func:`xi_readings`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from whittle_lib.learning import LSPESettings
from whittle_lib.models import crawling

__all__ = ["PRINTED", "LearningReading", "LEARNING_READINGS", "LITERAL_READINGS",
           "reading_settings", "u_printed", "xi_readings"]


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


#: The readings of the experiment, ours first ("arrivals": eq. (1); "mean dynamics": (2)-(3)).
#: Section III: "the actual operative policy is an index policy which deterministically picks"
#: (threshold) but ``f_i`` is "the probability of picking 1" (sample); Section II's objective
#: collects ``sum_i X_i nu_i`` but eq. (6), ``eta`` and ``b`` print ``sum_i X_i`` (state);
#: Section II's dynamics are eq. (1) (random arrivals), "the observed dynamics is effectively
#: the deterministic one given by (2)-(3)".
LEARNING_READINGS = (
    LearningReading("threshold, collected reward, arrivals (ours)", {}),
    LearningReading("f_i sampled, collected reward, arrivals", {"action": "sample"}),
    LearningReading("literal: f_i sampled, eq. (6) reward, arrivals",
                    {"action": "sample", "reward": "state"}),
    LearningReading("literal: f_i sampled, eq. (6) reward, mean dynamics",
                    {"action": "sample", "reward": "state", "dynamics": "deterministic"}),
)

#: The literal readings (Sec. III and V as printed): with arrivals, and on the mean dynamics.
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
