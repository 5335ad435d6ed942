"""Avrachenkov & Borkar (2019): what Section V printed, its readings, and the checks of its claims.

Section V of the paper runs the LSPE(0) scheme (:mod:`whittle_lib.learning.lspe`) on the four
sources of Table I and reports one run: "with our choice kappa_i = 2, we have on average one arm
sampled and obtain the reward around 160, which is a value between the rewards that we could
get by sampling constantly either the best or the second best arm. It is significantly smaller
than what we can get by using Whittle index with one arm, viz., 283 [2]."

The notebook ``02_lspe_learning`` teaches the scheme in its Part I with the library alone; its
Part II, the record, comes here, one module per part of the record:

``printed``
    the numbers Section V printed and the readings of Sections II-V (:data:`PRINTED`,
    :data:`LEARNING_READINGS`, :func:`xi_readings`);
``references``
    Section II: the rewards the run is measured against, and "Whittle with one arm: 283";
``recursions``
    Section IV: the printed Sherman-Morrison and ``A(n)`` recursions under every reading;
``runs``
    the runs only the record needs, in one pool (:func:`record_runs`);
``single_runs``
    "one arm" and "around 160", judged on our single runs by reading (:func:`judge_readings`);
``claims``
    "kappa controls ...", and the two numerical fixes.

Each check is a pure function with a frozen result; the evidence too long for a cell is
written, in words, by named functions (``*_evidence``, ``*_note``).

References
----------
K. Avrachenkov, V. S. Borkar, "A learning algorithm for the Whittle index policy for scheduling
web crawlers", Allerton 2019 (hal-02416599), Sections II-V.
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC 2015
(hal-01258647), eq. (1) and Table I.
"""

from .claims import (KappaStudy, kappa_evidence, numerical_fixes, projection_evidence,
                     tikhonov_evidence)
from .printed import (LEARNING_READINGS, LITERAL_READINGS, PRINTED, LearningReading,
                      reading_settings, u_printed, xi_readings)
from .recursions import (a_term_evidence, a_term_shapes_text, printed_a_term_readings,
                         printed_a_term_shapes, sherman_morrison_check,
                         sherman_morrison_evidence)
from .references import (REFERENCE_NOTES, printed_value_within, reference_rewards,
                         simulate_whittle, whittle_283_evidence,
                         whittle_283_stochastic_evidence, whittle_stochastic_note)
from .runs import record_runs, run_jobs, sampled_runs_note, summarise_runs
from .single_runs import (in_band_evidence, judge_readings, judge_single_runs,
                          one_arm_evidence)

__all__ = [
    # printed
    "PRINTED", "LearningReading", "LEARNING_READINGS", "LITERAL_READINGS", "reading_settings",
    "u_printed", "xi_readings",
    # references (Sec. II)
    "reference_rewards", "printed_value_within", "simulate_whittle", "REFERENCE_NOTES",
    "whittle_stochastic_note", "whittle_283_evidence", "whittle_283_stochastic_evidence",
    # recursions (Sec. IV)
    "sherman_morrison_check", "sherman_morrison_evidence", "printed_a_term_readings",
    "printed_a_term_shapes", "a_term_shapes_text", "a_term_evidence",
    # runs, single runs, claims (Sec. V)
    "run_jobs", "summarise_runs", "sampled_runs_note", "record_runs", "judge_single_runs",
    "judge_readings", "one_arm_evidence", "in_band_evidence", "KappaStudy", "kappa_evidence",
    "numerical_fixes", "projection_evidence", "tikhonov_evidence",
]
