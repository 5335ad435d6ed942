"""Learning the Whittle policy of the crawling problem: the two learning schemes.

``lspe``
    LSPE(0) learning of a parametrised threshold policy (Avrachenkov & Borkar 2019).
``index_learning``
    two-timescale learning of Whittle indices (Borkar & Chadha 2018).
"""

from .lspe import (LSPEResult, LSPESettings, activation_probability, run_lspe, running_average,
                   score, sherman_morrison_average, step_sizes, threshold_basis, thresholds,
                   tikhonov_solve, value_features)

__all__ = [
    "threshold_basis", "thresholds", "activation_probability", "score", "value_features",
    "running_average", "sherman_morrison_average", "tikhonov_solve", "step_sizes",
    "LSPESettings", "LSPEResult", "run_lspe",
]
