"""Whittle index policies: the models and algorithms of five papers.

The package is organised as one module per concern (see ``DESIGN.md`` of the collection):

``arms``, ``indices``
    finite restless arms and their Whittle indices.
``mdp``
    finite MDPs on sparse matrices: value, relative value and policy iteration.
``crawling``, ``policies``
    the ephemeral-content crawling model, its closed-form Whittle index (Avrachenkov &
    Borkar), priority policies with a budget and a vectorised simulator.
``learning``
    learning the crawling policy: LSPE(0) on parametrised thresholds (Avrachenkov & Borkar
    2019) and two-timescale learning of the Whittle index (Borkar & Chadha 2018).
``caching``
    contents with varying popularity as restless arms (Pavamana & Singh).
``queueing``
    the M/M/1/K model of web-robot control (Talim, Liu, Nain, Coffman).
``replication``, ``stats``, ``plotting``
    comparison with the papers' numbers, results files, the report; independent
    replications over any executor; one figure style.
``notebook_params``
    a notebook's parameters: specs read from its ``parameters`` cell, values checked by name
    (``check_parameters`` is also exported here).

Submodules are imported here so that ``import whittle_lib as wl; wl.queueing.<name>`` works;
their public names are listed in each module's ``__all__``.
"""

from . import (arms, caching, crawling, indices, learning, mdp, notebook_params, plotting,
               policies, queueing, replication, stats)
from .notebook_params import check_parameters

__all__ = ["arms", "caching", "check_parameters", "crawling", "indices", "learning", "mdp",
           "notebook_params", "plotting", "policies", "queueing", "replication", "stats"]
__version__ = "0.1.0"
