"""Learning the Whittle index and index policies from simulation.

``index_learning``
    two-timescale reinforcement learning of the Whittle index (Borkar & Chadha 2018):
    LSPE(0) for the Poisson equation of a threshold policy, a slower iteration for the index,
    the crawler instance with the cosine perturbation and its projection.
"""

from .index_learning import (
    CrawlerIndexProblem,
    FiniteArmIndexProblem,
    IndexLearningResult,
    LearnedIndexRule,
    StepSizes,
    learn_whittle_index,
    lspe_target,
    project_perturbation,
)

__all__ = [
    "CrawlerIndexProblem",
    "FiniteArmIndexProblem",
    "IndexLearningResult",
    "LearnedIndexRule",
    "StepSizes",
    "learn_whittle_index",
    "lspe_target",
    "project_perturbation",
]
