r"""Pavamana & Singh (2023): the readings of its claims and the sweeps that judge them.

The model is :mod:`whittle_lib.models.caching`; the notebook ``04_caching_rmab`` computes the
index, the paper's figures and their comparison on the page (Part I). Here sits what the
record needs beyond that (Part II; ``DESIGN.md``: a verdict against a paper stands only if it
survives every defensible reading and every value of the constants we chose), one module per
part of the record:

``instances``         the notebook's profile of constants, contents from chains, quiet engine
                      calls
``readings``          the assumptions as we read them (Sec. 2-3), and the condition the proof
                      of Lemma 2 needs beyond them (boost sums)
``theorem3``          Theorems 3.1-3.2 on our grid and on random level-dependent chains
``theorem31``         Theorem 3.1 searched under both readings of Assumption 1, a
                      counterexample verified by independent solvers
``repair``            Sec. 4 (Lemma 4, Table 1) under three readings
``theorem51``         Sec. 5 (Remark 5, Theorem 5.1): random arms inside and beyond the bound,
                      and the arm that shows the bound sharp
``bound_search``      non-indexable arms searched on purpose: what the test of the bound can
                      detect
``index_figures``     Figs. 2-4: the sweep over the constants we chose, the criteria of "does
                      not vary much"
``policies``          Figs. 5-7: ties of the index policy, Monte Carlo costs, the evidence

Every name the notebook and the tests use is importable from here.

References
----------
.. [PS23] K. J. Pavamana, C. Singh, "Caching Contents with Varying Popularity using Restless
   Bandits", VALUETOOLS 2023, arXiv:2304.12227.
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""

from .instances import *  # noqa: F401,F403
from .readings import *  # noqa: F401,F403
from .theorem3 import *  # noqa: F401,F403
from .theorem31 import *  # noqa: F401,F403
from .repair import *  # noqa: F401,F403
from .bound_search import *  # noqa: F401,F403
from .theorem51 import *  # noqa: F401,F403
from .index_figures import *  # noqa: F401,F403
from .policies import *  # noqa: F401,F403
from . import (bound_search, index_figures, instances, policies, readings, repair, theorem3,
               theorem31, theorem51)

__all__ = [name for module in (instances, readings, theorem3, theorem31, repair,
                               bound_search, theorem51, index_figures, policies)
           for name in module.__all__]
