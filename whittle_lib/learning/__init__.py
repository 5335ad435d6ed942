"""Learning the Whittle policy of the crawling problem: the two learning schemes.

``lspe``
    LSPE(0) learning of a parametrised threshold policy (Avrachenkov & Borkar 2019).
``index_learning``
    two-timescale reinforcement learning of the Whittle index (Borkar & Chadha 2018):
    LSPE(0) for the Poisson equation of a threshold policy, a slower iteration for the index,
    the crawler instance with the cosine perturbation and its projection.
"""

from .index_learning import (CrawlerIndexProblem, FiniteArmIndexProblem, IndexLearningResult,
                             LearnedIndexRule, StepSizes, learn_whittle_index,
                             learn_whittle_index_many, lspe_target,
                             project_perturbation)
from .lspe import (LSPEResult, LSPESettings, activation_probability, run_lspe, run_lspe_many,
                   running_average,
                   score, sherman_morrison_average, step_sizes, threshold_basis, thresholds,
                   tikhonov_condition_bound, tikhonov_solve, tikhonov_system,
                   value_features)

__all__ = [
    # lspe
    "threshold_basis", "thresholds", "activation_probability", "score", "value_features",
    "running_average", "sherman_morrison_average", "tikhonov_system", "tikhonov_condition_bound",
    "tikhonov_solve", "step_sizes",
    "LSPESettings", "LSPEResult", "run_lspe", "run_lspe_many",
    # index_learning
    "CrawlerIndexProblem", "FiniteArmIndexProblem", "IndexLearningResult", "LearnedIndexRule",
    "StepSizes", "learn_whittle_index", "learn_whittle_index_many", "lspe_target",
    "project_perturbation",
]
