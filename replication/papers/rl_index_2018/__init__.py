r"""Borkar & Chadha (ICC 2018): what the paper gives, and the readings and searches that judge
its Table II and its claims.

The model (the crawler of Avrachenkov & Borkar) lives in :mod:`whittle_lib.models.crawling`,
the learning scheme in :mod:`whittle_lib.learning.index_learning`; notebook
``03_rl_index_learning`` learns, simulates and sweeps in its Part I with them. This package
holds what the paper left open and what its record (Part II) needs, one module per part:

* :mod:`.paper`: Table I's setting (round robin settles it), the index of Sec. IV-A as
  printed, Table II's values as transcribed, the run profiles, and :class:`ClaimReadings`;
* :mod:`.greedy`: every reading of the greedy rule, each an exact fixed schedule, and the
  exact spread of one run (the tolerances of Table II);
* :mod:`.learning`: Figs. 1-2 (projection counts, convergence), the quick sweep of ``a0`` and
  ``p``, the stochastic model's index against the learned ones;
* :mod:`.extensions`: the Deterministic row under every continuation of the index outside
  ``[u, u*)`` and every law of ``U``;
* :mod:`.table_two`: Table II's runs, the readings of its learned rows, the diagnosis of each
  of its ten numbers, and the claims after it.

References
----------
V. Borkar, K. Chadha, "A Reinforcement Learning Algorithm for Restless Bandits", Indian
Control Conference 2018, Sec. III (eqs. (7)-(11)) and Sec. IV-B (Table II, the greedy rule).
K. Avrachenkov, V. Borkar, "Whittle Index Policy for Crawling Ephemeral Content", IEEE CDC
2015 (eqs. (1)-(3), (17)).
"""

from . import extensions, greedy, learning, paper, table_two
from .extensions import *  # noqa: F403
from .greedy import *  # noqa: F403
from .learning import *  # noqa: F403
from .paper import *  # noqa: F403
from .table_two import *  # noqa: F403

__all__ = (paper.__all__ + greedy.__all__ + learning.__all__ + extensions.__all__
           + table_two.__all__)
