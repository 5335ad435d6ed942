"""Section V's other claims: "kappa controls the average and dispersion of the number of engaged
arms", and the two numerical fixes (projection of the thresholds, a Tikhonov-regularised
inverse) without which "the algorithm quickly runs into numerical instability".
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from whittle_lib.learning import LSPEResult, LSPESettings
from whittle_lib.models import crawling

__all__ = ["KappaStudy", "kappa_evidence", "numerical_fixes", "projection_evidence",
           "tikhonov_evidence"]


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

    def __post_init__(self):
        for name in ("active", "dispersion", "reward"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (len(self.kappas), 2):
                raise ValueError(f"{name} must have shape ({len(self.kappas)}, 2), one (mean, "
                                 f"half-width) per kappa, got {value.shape}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "kappas", tuple(float(k) for k in self.kappas))

    @staticmethod
    def _separated(ms) -> bool:
        lo, hi = np.argmin(ms[:, 0]), np.argmax(ms[:, 0])
        return bool(ms[hi, 0] - ms[lo, 0] > ms[hi, 1] + ms[lo, 1])

    @property
    def controls(self) -> bool:
        """"kappa controls the mean and the dispersion": for both, the largest and the smallest
        mean over ``kappa`` differ by more than the sum of their half-widths."""
        return self._separated(self.active) and self._separated(self.dispersion)


def kappa_evidence(study: KappaStudy) -> str:
    """The evidence on "kappa controls the mean and the dispersion of the number of engaged
    arms" (Sec. V) from a :class:`KappaStudy` (verdict: :attr:`KappaStudy.controls`)."""
    means, spreads = study.active, study.dispersion
    return ("Over kappa = " + ", ".join(f"{k:g}" for k in study.kappas)
            + f" ({study.replications} runs each) the mean number of active arms ranges over "
            f"{means[:, 0].min():.2f}..{means[:, 0].max():.2f} and the dispersion over "
            f"{spreads[:, 0].min():.2f}..{spreads[:, 0].max():.2f}, with 95% half-widths up to "
            f"{means[:, 1].max():.2f} and {spreads[:, 1].max():.2f}: "
            + ("the extremes are separated beyond their intervals." if study.controls else
               "the differences are within the run-to-run variability, with no trend in "
               "kappa."))


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

    def rows(self) -> dict:
        """The notebook's table: ``{run: {column: value}}`` for the three runs side by side."""
        return {name: {"max|r|": r.r_norm[-1], "max|q|": np.abs(r.q[-1]).max(),
                       "cond(B)": r.condition, "thresholds from": r.threshold_history.min(),
                       "to": r.threshold_history.max(), "reward": r.average_reward(),
                       "active": r.average_active()} for name, r in self.runs.items()}


def numerical_fixes(model: crawling.CrawlingModel, settings: LSPESettings, base: LSPEResult,
                    runs) -> NumericalFixes:
    """What each numerical fix of Sec. V prevents, on one seed.

    Parameters
    ----------
    model : CrawlingModel
    settings : LSPESettings
        Both fixes on.
    base : LSPEResult
        The run at ``settings`` ("both fixes").
    runs : mapping
        The same seed with ``"no projection"``, ``"no Tikhonov"`` (the corrected
        Sherman-Morrison inverse instead) and ``"literal feature scale"``
        (:attr:`~.runs.RecordRuns.fixes`).
    """
    if base.settings != settings:
        raise ValueError("base must be the run at settings (both fixes), got other settings")
    noproj, notik, literal = (runs[k] for k in ("no projection", "no Tikhonov",
                                                 "literal feature scale"))
    expected = {"no projection": ("project", False), "no Tikhonov": ("regularise", False),
                "literal feature scale": ("feature_scale", 1.0)}
    for name, (field, value) in expected.items():
        if getattr(runs[name].settings, field) != value:
            raise ValueError(f"runs[{name!r}] must be run with {field}={value}, got "
                             f"{getattr(runs[name].settings, field)!r}")
    z = settings.kappa * (noproj.state_history - noproj.threshold_history - 0.5)
    overflow_steps = int(np.sum(np.any(z > np.log(np.finfo(float).max), axis=1)))
    outside = np.mean((noproj.threshold_history < model.u)
                      | (noproj.threshold_history > model.u_star))
    three = {"both fixes": base, "no projection": noproj, "no Tikhonov": notik}
    return NumericalFixes(MappingProxyType(three), literal, float(outside), overflow_steps,
                          int(z.shape[0]), float(notik.r_norm[-1] / base.r_norm[-1]))


def projection_evidence(fixes: NumericalFixes) -> str:
    """The evidence on "without projection the thresholds reach values that break the exponent
    of the logit" (Sec. V), from :func:`numerical_fixes`: it holds if thresholds leave the
    state range and the printed logistic overflows."""
    noproj = fixes.runs["no projection"]
    return (f"Without projection {fixes.outside:.0%} of the recorded thresholds lie outside the "
            f"state range (from {noproj.threshold_history.min():.0f} to "
            f"{noproj.threshold_history.max():.0f}) and e^z/(1+e^z) as printed overflows on "
            f"{fixes.overflow_steps} of {fixes.recorded_steps} recorded steps.")


def tikhonov_evidence(fixes: NumericalFixes) -> str:
    """The evidence on "without the Tikhonov inverse the scheme is numerically unstable"
    (Sec. V), from :func:`numerical_fixes`: it holds if ``max|r|`` grows more than a
    millionfold (:attr:`NumericalFixes.growth`)."""
    base, notik, literal = fixes.runs["both fixes"], fixes.runs["no Tikhonov"], fixes.literal_scale
    return (
        "With the corrected Sherman-Morrison inverse and no regularisation max|r| reaches "
        f"{notik.r_norm[-1]:.1e} against {base.r_norm[-1]:.1e} with it (x{fixes.growth:.0e}), "
        f"and q reaches {np.abs(notik.q[-1]).max():.0e}. At the literal feature scale the "
        f"regularised solve itself breaks down at step {literal.breakdown_at}: the bound "
        "||B^T B||_F/delta + 1 on the condition number of B^T B + delta I is "
        f"{literal.condition_bound:.0e}, beyond 1/eps = 4.5e15 (stated criterion, "
        "lspe.tikhonov_condition_bound; at the default scale it stays below "
        f"{base.condition_bound:.0e}).")
