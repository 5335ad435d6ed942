"""The stochastic model (eq. 17) under the laws of the base utility the paper leaves open.

Section II asks of the base utility ``xi`` only "a nonnegative random variable ... with a finite
mean" ``xi-bar_i``. A defensible law keeps Table I's mean per source (:data:`BASE_LAW_READINGS`:
no noise beyond the arrivals, the exponential law of the 2018 paper, and heavier tails). The
mean reward of a policy on the stochastic model is estimated over independent replications
(:func:`reward_estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass

from whittle_lib.models import crawling, crawling_policies as policies
from ...records import confidence_interval, format_estimate

__all__ = ["BASE_LAW_READINGS", "BaseLawReading", "reward_estimate"]


@dataclass(frozen=True)
class BaseLawReading:
    """A law of the base utility ``xi`` with Table I's mean (:func:`crawling.sample_new_utility`).

    Attributes
    ----------
    label : str
        How the notebook names the reading.
    law : str
        ``base_law`` of :func:`crawling.sample_new_utility`.
    shape : float or None
        ``base_shape`` (lognormal ``s``, lomax tail index ``a``), ``None`` for laws without one.
    """

    label: str
    law: str
    shape: float | None = None

    def __post_init__(self):
        if self.law not in crawling.BASE_LAWS:
            raise ValueError(f"law must be one of {tuple(crawling.BASE_LAWS)}, got {self.law!r}")
        crawling.check_base_law(self.law, self.shape)

    @property
    def kwargs(self) -> dict:
        """The keywords of :func:`policies.simulate_crawling` that select this law."""
        return {"base_law": self.law, "base_shape": self.shape}


#: The laws of ``xi`` we call defensible: every one has mean ``xi-bar_i`` (Table I) and is
#: nonnegative (Sec. II), from no randomness beyond the Poisson arrivals to a tail with infinite
#: variance (lomax, a = 1.5: the paper asks only for a finite mean). Coefficients of variation:
#: 0, 1, 1.31, 1.73, infinite.
BASE_LAW_READINGS = (
    BaseLawReading("deterministic xi", "deterministic"),
    BaseLawReading("exponential xi", "exponential"),
    BaseLawReading("lognormal xi (s = 1)", "lognormal", 1.0),
    BaseLawReading("lomax xi (a = 3)", "lomax", 3.0),
    BaseLawReading("lomax xi (a = 1.5)", "lomax", 1.5),
)


@dataclass(frozen=True)
class RewardEstimate:
    """The mean reward per period of a policy over independent runs, with its 95 % interval.

    Attributes
    ----------
    mean : float
        Mean over the replications of each run's average reward after the burn-in.
    half_width : float
        Half-width of the 95 % confidence interval (Student t over the replications,
        :func:`replication.records.confidence_interval`).
    replications : int
        Independent runs behind the estimate.
    periods : int
        Periods averaged in each run (after the burn-in).
    """

    mean: float
    half_width: float
    replications: int
    periods: int

    @property
    def text(self) -> str:
        """``"mean ± half-width"`` at the precision the interval supports."""
        return format_estimate(self.mean, self.half_width)


def reward_estimate(model: crawling.CrawlingModel, rule, M: int, *, periods: int,
                    replications: int, burn_in: int, base_law: str, rng) -> RewardEstimate:
    """Mean reward of a priority policy on the stochastic model (eq. 17), with its interval.

    ``replications`` independent runs of ``periods`` periods from just-crawled sources
    (:func:`policies.simulate_crawling`); each run's average after the first ``burn_in``
    periods is one observation of the mean reward per period, the paper's objective (4).

    Parameters
    ----------
    model : CrawlingModel
    rule : callable
        A priority rule (:class:`policies.WhittleRule`).
    M : int
        Sources crawled per period.
    periods, replications, burn_in : int
    base_law : str
        The law of ``xi`` (:func:`crawling.sample_new_utility`).
    rng : numpy.random.Generator or seed

    Returns
    -------
    RewardEstimate

    Examples
    --------
    >>> est = reward_estimate(crawling.table_one(), policies.WhittleRule(crawling.table_one()), 1,
    ...                       periods=50, replications=3, burn_in=10, base_law="exponential", rng=1)
    >>> est.half_width > 0
    True
    """
    if int(burn_in) != burn_in or not 0 <= burn_in < periods:
        raise ValueError(f"burn_in must be an integer in [0, periods), got {burn_in!r}")
    run = policies.simulate_crawling(model, rule, M, periods, stochastic=True,
                                     base_law=base_law, replications=replications, rng=rng)
    mean, half_width = confidence_interval(run.rewards[burn_in:].mean(axis=0))
    return RewardEstimate(mean, half_width, int(replications), int(periods - burn_in))
