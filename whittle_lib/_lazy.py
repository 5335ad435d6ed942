"""Submodules and names that load on first use (PEP 562), for the package's ``__init__`` files."""

import importlib


def lazy_submodules(package: str, names, namespace, exports=None):
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for the submodules
    ``names``: ``package.name`` imports ``name`` on first access, so importing the package
    itself loads none of them (no SciPy solver, no matplotlib). ``namespace`` is the package's
    ``globals`` function. ``exports`` maps a re-exported name to the submodule defining it
    (``{"RestlessArm": "arms"}``): ``package.RestlessArm`` imports ``arms`` on first access.
    """
    names = tuple(names)
    exports = dict(exports or {})

    def __getattr__(name: str):
        if name in names:
            return importlib.import_module(f".{name}", package)
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
            namespace()[name] = value          # later accesses skip __getattr__
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted({*namespace(), *names, *exports})

    return __getattr__, __dir__
