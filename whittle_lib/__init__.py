"""Whittle index policies: the models and algorithms of five papers.

The package is organised as one module per concern:

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
``stats``
    named random streams, independent replications and sweeps over any executor, confidence
    intervals.

Submodules load on first use (``wl.models.robots.<name>`` works without an import), so
``import whittle_lib`` itself loads no SciPy solver and no matplotlib. Their public names
are listed in each module's ``__all__``.
"""

from ._lazy import lazy_submodules

_SUBMODULES = ("arms", "indices", "learning", "mdp", "models", "rmab", "stats")

__all__ = list(_SUBMODULES)
__version__ = "0.1.0"


# PEP 562: ``wl.mdp`` imports SciPy only when it is first used.
__getattr__, __dir__ = lazy_submodules(__name__, _SUBMODULES, globals)
