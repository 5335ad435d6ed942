"""Submodules that load on first use (PEP 562), for the package's ``__init__`` files."""

import importlib


def lazy_submodules(package: str, names, namespace):
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for the submodules
    ``names``: ``package.name`` imports ``name`` on first access, so importing the package
    itself loads none of them (no SciPy solver, no matplotlib). ``namespace`` is the package's
    ``globals`` function.
    """
    names = tuple(names)

    def __getattr__(name: str):
        if name in names:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*namespace(), *names])

    return __getattr__, __dir__
