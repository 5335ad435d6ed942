"""Whittle index policies: the models and algorithms of five papers.

The package is organised as one module per concern (see ``DESIGN.md`` of the collection):

``arms``, ``indices``
    finite restless arms (and converters to the peers' layouts), their Whittle and Gittins
    indices.
``mdp``
    finite MDPs on sparse matrices: value, relative value and policy iteration, backward
    induction, stationary distributions.
``rmab``
    N arms with a budget: top-M, index rules, a simulator, Whittle's relaxation bound.
``models``
    one module per paper's system, on the core: ``crawling`` (ephemeral content, its closed-form
    Whittle index, Avrachenkov & Borkar) with ``crawling_policies`` (its priority rules on the
    core's simulator), ``caching`` (contents with varying popularity as restless arms, Pavamana
    & Singh) and ``robots`` (the M/M/1/K model of web-robot control, Talim, Liu, Nain, Coffman).
``learning``
    learning the crawling policy: LSPE(0) on parametrised thresholds (Avrachenkov & Borkar
    2019) and two-timescale learning of the Whittle index (Borkar & Chadha 2018).
``replication``, ``stats``, ``plotting``
    comparison with the papers' numbers, results files, the report; independent
    replications over any executor; one figure style.
``papers``
    per paper: what it printed, and the sweeps that judge its claims.
``notebook_params``
    a notebook's parameters: specs read from its ``parameters`` cell, values checked by name
    (``check_parameters`` is also exported here).

Submodules load on first use (``wl.models.robots.<name>`` works without an import), so
``import whittle_lib`` itself loads only the parameter checker: no SciPy solver, no
matplotlib. Their public names are listed in each module's ``__all__``.
"""

from ._lazy import lazy_submodules
from .notebook_params import check_parameters

_SUBMODULES = ("arms", "indices", "learning", "mdp", "models", "notebook_params", "papers",
               "plotting", "replication", "rmab", "stats")

__all__ = ["check_parameters", *_SUBMODULES]
__version__ = "0.1.0"


# PEP 562: ``wl.plotting`` imports matplotlib only when a notebook asks for it.
__getattr__, __dir__ = lazy_submodules(__name__, _SUBMODULES, globals)
