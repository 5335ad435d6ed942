"""What the robots draft printed, its readings, and the sweeps that judge its claims.

J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., *Controlling Robots of Web Search Engines*, draft
of May 20, 1999 ([TLNC99]_). The model itself (eqs. (4), (18)-(21), corrected) is
:mod:`whittle_lib.models.robots`, and the notebook's Part I computes the paper's tables and
figures with it; this package holds what the draft wrote where it matters for a verdict, and
the computations of Part II, the record, that decide whether a verdict survives every reading.
One module per part of the record:

- :mod:`.paper`: the draft's printed values (``data/expected``), the rows of its tables as
  parameters, the check of the notebook's parameters, the verdict lines the notebook prints;
- :mod:`.static`: Section 2, eq. (4), Lemmas 1-3, Propositions 1-2, eq. (16), the proofs'
  slips;
- :mod:`.dynamic`: Section 3, the transition law (19)-(21), Lemma 4, Proposition 3, eq. (25),
  the switching-curve conjecture;
- :mod:`.readings`: relative value iteration as the paper ran it, from many reference states,
  under both readings of its stopping rule, and the search for one reading of its counts;
- :mod:`.proposition4`: the three readings of ``theta = tau T(h)(x_hat)``, the remark on
  ``tau``, the forms of ``theta`` at the paper's ``tau``;
- :mod:`.figures`: the reference state that gives the counts of the captions of Figs. 6-8;
- :mod:`.costs`: ``mu``, the rows ``gamma = 1.13`` and the cost as Sec. 6 words it;
- :mod:`.table1`, :mod:`.table2`: the two tables, row by row, and the claim of Sec. 5.

Each function returns what it computed (a frozen result) and the evidence of each verdict
(``*_evidence``, ``*_readings``, ``*_verdicts``, and constants for the claims as the results
file words them); the notebook records each row of ``data/results/05_robot_queue.csv`` in a
visible line of its Part II.

References
----------
.. [TLNC99] J. Talim, Z. Liu, P. Nain, E. G. Coffman Jr., "Controlling Robots of Web Search
   Engines", draft, May 20, 1999 (SIGMETRICS Performance Evaluation Review, 2001).
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""
from . import costs, dynamic, figures, paper, proposition4, readings, static, table1, table2
from .costs import *          # noqa: F403 (each module's __all__: what the notebook uses)
from .dynamic import *        # noqa: F403
from .figures import *        # noqa: F403
from .paper import *          # noqa: F403
from .proposition4 import *   # noqa: F403
from .readings import *       # noqa: F403
from .static import *         # noqa: F403
from .table1 import *         # noqa: F403
from .table2 import *         # noqa: F403

__all__ = [name for module in (paper, static, dynamic, readings, proposition4, figures, costs,
                               table1, table2) for name in module.__all__]
