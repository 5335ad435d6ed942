"""The papers' systems as models on the core: a model, its closed forms, what it hands the core.

``crawling``, ``crawling_policies``
    ephemeral content (Avrachenkov & Borkar 2015-2019): the model, the closed-form Whittle
    index, its relaxation bound, the exact optimum, its dynamics; the priority rules, their
    simulator (``simulate_crawling``) and exact periodic averages (``crawling_orbit``).
``caching``
    contents with varying popularity as restless arms (Pavamana & Singh 2023).
``robots``
    the M/M/1/K model of web-robot control (Talim, Liu, Nain & Coffman 1999).

Imports run one way: ``models`` -> the core, never back. Submodules load on first
use, so ``wl.models.robots`` needs no import of its own.
"""

from .._lazy import lazy_submodules

_SUBMODULES = ("caching", "crawling", "crawling_policies", "robots")
__all__ = list(_SUBMODULES)


__getattr__, __dir__ = lazy_submodules(__name__, _SUBMODULES, globals)
