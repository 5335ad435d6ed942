"""Learning the Whittle policy: the two learning schemes of the crawling papers.

``lspe``
    LSPE(0) learning of a parametrised threshold policy (Avrachenkov & Borkar 2019). Specific
    to the crawling model by the paper's design (its thresholds depend on the other sources'
    states): :func:`run_lspe` takes a ``CrawlingModel`` only.
``index_learning``
    two-timescale reinforcement learning of the Whittle index (Borkar & Chadha 2018):
    LSPE(0) for the Poisson equation of a threshold policy, a slower iteration for the index.
    Generic: :func:`learn_whittle_index` learns the index of a finite arm of your own (a
    ``RestlessArm``, or :class:`FiniteArmIndexProblem`) as well as Section IV's crawler
    instance (:class:`CrawlerIndexProblem`, the cosine perturbation and its projection).
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
