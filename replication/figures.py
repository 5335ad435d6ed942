"""One figure style for the collection, and saving figures reproducibly.

Figures are written as PNG without the metadata that changes between runs, so that rerunning
an unchanged notebook leaves ``git status`` clean.
"""

from __future__ import annotations

import os

import matplotlib as mpl
import matplotlib.pyplot as plt

from .records import output_root

__all__ = ["STYLE", "use_style", "save_figure"]

#: rcParams of the collection's figures.
STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply :data:`STYLE` to matplotlib's global rcParams (call once, in a notebook)."""
    mpl.rcParams.update(STYLE)


def save_figure(fig: plt.Figure, notebook: str, name: str) -> None:
    """Save ``fig`` as ``figures/<notebook>/<name>.png`` under the output root, show that very
    file in the notebook, and close the figure.

    Written to a temporary file first and renamed, with no timestamp or software version in
    the PNG, so the bytes depend only on the figure. In a Jupyter kernel the saved bytes are
    displayed as the cell's image output, so the stored notebook shows exactly the figure
    under ``figures/`` (``tests/apparatus/test_notebooks.py`` checks it); outside one nothing is
    shown.

    Returns nothing (a notebook cell ending with it shows the figure, not a path): the file is
    ``output_root() / "figures" / notebook / f"{name}.png"``.
    """
    if not name or "/" in name or name.endswith(".png"):
        raise ValueError(f"name must be a bare file stem like 'fig2_gamma', got {name!r}")
    path = output_root() / "figures" / notebook / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, format="png", metadata={"Software": None}, bbox_inches="tight")
    os.replace(tmp, path)
    _display_png(path.read_bytes())
    plt.close(fig)


def _display_png(data: bytes) -> None:
    """Show PNG bytes as an image output when running in a Jupyter kernel."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:                                  # no IPython: a script, nothing to show
        return
    shell = get_ipython()
    if shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell":
        display(Image(data=data, format="png"))
