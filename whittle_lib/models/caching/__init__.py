r"""Caching contents with varying popularity as a restless bandit (Pavamana & Singh 2023).

The model, rebuilt from the prose of the paper (its inline mathematics was lost; every choice
below is ours where the paper's symbol did not survive):

* Content ``n`` has ``K`` request levels :math:`r_1 < \dots < r_K` (the numbers of requests in
  a slot, Fig. 1). Given the cache status :math:`a \in \{0, 1\}` of the content in the coming
  slot, the level of the coming slot is drawn from row ``k`` of ``P0`` (not cached) or ``P1``
  (cached); Fig. 1 is a birth-death chain (:func:`birth_death_matrix`), Sec. 5 allows any chain.
* Costs (Sec. 2.1.2): a *missing cost* :math:`C(r)` when the content is not cached and is
  requested :math:`r` times in the slot; a *fetch (caching) cost* ``d`` when a content that was
  not cached is cached; optionally a *holding cost* ``h`` per slot in the cache (Sec. 3.4).
  The expected one-slot cost of content ``n`` in state :math:`(k, c)` under action ``a`` is
  :math:`(1-a)\,(P_0 C)(k) + a\,(1-c)\,d + a\,h`, eq. (3)/(6).
* The state of one content is :math:`(k, c)`: the request level of the previous slot and the
  previous cache status. It is flattened as ``x = k + K * c``: states ``0..K-1`` are "not cached
  before", ``K..2K-1`` "cached before". The next state is :math:`(k', a)`.
* The joint problem: ``N`` contents, a cache of ``M`` contents (:math:`\sum_n a_n \le M`),
  discounted total cost (eq. 4), minimised.

Sign convention (as ``arms``). The library maximises rewards and pays the Whittle subsidy for
the *passive* action. The paper minimises costs and charges a penalty :math:`\lambda` per slot
for *caching* (eq. 6; its "holding cost" reading, Sec. 3.4). A cost is a negative reward, so the
arm of :meth:`CachingContent.arm` has ``R0 = -(P0 C)`` and ``R1 = -((1-c) d + h)``; charging
:math:`\lambda` for the active action or paying it for the passive one differs by the constant
:math:`\lambda/(1-\beta)` in every value, so the decisions, and hence the indices, are the same
numbers: our subsidy *is* the paper's penalty. The Whittle index policy caches the ``M``
contents of largest index among those of *positive* index: at penalty 0 (the real problem,
no holding cost) a content with :math:`W(x) > 0` is worth caching on its own.

Functions working on the joint problem report *costs* (positive numbers, minimised), as the
paper does.

The package holds one idea per module; every public name is importable from here:

``content``      one content: its popularity chain, costs and arm (Sec. 2.1), random contents
``assumptions``  Assumptions 1-3 (Sec. 3), Theorem 5.1's bound, Sec. 4's repair of the costs
``single``       one content under a penalty: the optimal threshold policy, its Whittle index
``joint``        the joint problem of N contents and a cache of M (Sec. 2.2), solved exactly
``policies``     the Whittle and greedy index policies and their Monte Carlo cost (Sec. 6)

References
----------
.. [PS23] K. J. Pavamana, C. Singh, "Caching Contents with Varying Popularity using Restless
   Bandits", VALUETOOLS 2023, arXiv:2304.12227.
.. [P94] M. L. Puterman, *Markov Decision Processes*, Wiley, 1994.
"""

from .content import *  # noqa: F401,F403
from .assumptions import *  # noqa: F401,F403
from .single import *  # noqa: F401,F403
from .joint import *  # noqa: F401,F403
from .policies import *  # noqa: F401,F403

__all__ = [
    "birth_death_matrix",
    "CachingContent",
    "ASSUMPTION_TOL",
    "AssumptionReport",
    "check_assumptions",
    "is_concave_on",
    "popularity_perturbation",
    "theorem51_bound",
    "ContentSolution",
    "solve_content",
    "solve_content_many",
    "StructureCheck",
    "check_structure",
    "random_content",
    "MissingCostRepair",
    "repair_missing_costs",
    "CachingProblem",
    "JointSolution",
    "solve_joint",
    "joint_transition_matrix",
    "joint_costs",
    "evaluate_joint_policy",
    "whittle_priorities",
    "greedy_priorities",
    "index_policy",
    "CachingDynamics",
    "MonteCarloEstimate",
    "simulate_policy",
]
