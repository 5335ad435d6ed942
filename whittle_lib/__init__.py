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
    learning the Whittle index from simulation (Borkar & Chadha 2018).
``queueing``
    the M/M/1/K model of web-robot control (Talim, Liu, Nain, Coffman).
``replication``, ``plotting``
    comparison with the papers' numbers, results files, the report; one figure style.

Submodules are imported here so that ``import whittle_lib as wl; wl.queueing.<name>`` works;
their public names are listed in each module's ``__all__``.
"""

from . import arms, crawling, indices, learning, mdp, plotting, policies, queueing, replication

__all__ = ["arms", "crawling", "indices", "learning", "mdp", "plotting", "policies", "queueing", "replication"]
__version__ = "0.1.0"
