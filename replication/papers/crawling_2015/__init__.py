"""Avrachenkov & Borkar (CDC 2015): what the paper printed, and the readings that judge its claims.

The model, the index and the simulator live in :mod:`whittle_lib.models.crawling` and
:mod:`whittle_lib.models.crawling_policies`; the notebook ``01_ephemeral_crawling`` writes the
paper's method on the page (the index from its definition, the exact optimum over the joint
ages, the relaxation bound). This package holds what Part II of the notebook, the record, needs:
the paper's formulas as printed and the readings of the sentences and constants it leaves open,
run under each reading (``DESIGN.md``: a verdict against a paper stands only if it survives
every defensible reading). One module per part of the record:

- :mod:`.forms`: Theorem 1 and the printed forms of the index (2015, its Remark, 2019, 2018);
- :mod:`.rewards`: the rewards printed for Table I (179.79, 254.66) and quoted by the later
  papers (283, 259.61), and every reading tried;
- :mod:`.laws`: the laws of the base utility and the mean reward on the stochastic model;
- :mod:`.figures`: the sentences on Figs. 3 and 4 (the sweep of single runs of Fig. 4);
- :mod:`.beyond`: beyond the paper, ties and the policies compared on the stochastic model.

References
----------
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC
2015 (hal-01258647): Sec. II (model), eq. (17) (stochastic model), Sec. VII (Table I, Figs. 2-4).
"""

from .beyond import (COMPARED_POLICIES, TIE_ORDERS_NOTE, stochastic_comparison,
                     stochastic_comparison_note, tie_orders)
from .figures import fig3_nontrivial, skip_evidence, skip_sweep
from .forms import check_index_forms, index_2018, index_forms_notes, index_theorem1
from .laws import BASE_LAW_READINGS
from .rewards import printed_rewards, quoted_259_note, quoted_readings, readings_254

__all__ = ["BASE_LAW_READINGS", "COMPARED_POLICIES", "TIE_ORDERS_NOTE", "check_index_forms",
           "fig3_nontrivial", "index_2018", "index_forms_notes", "index_theorem1",
           "printed_rewards", "quoted_259_note", "quoted_readings", "readings_254",
           "skip_evidence", "skip_sweep", "stochastic_comparison", "stochastic_comparison_note",
           "tie_orders"]
