"""This repository's apparatus: what turns the library and the papers into the collection.

``whittle_lib`` is what a user installs; this package is never shipped with it. It may import
``whittle_lib``, never the reverse.

``records``
    the expected and results records (``data/expected``, ``data/results``): rows, statuses,
    the comparison of a notebook's numbers with the paper's, estimates at the precision their
    interval supports.
``params``
    a notebook's parameters: papermill reads its ``parameters`` cell, we check the ranges.
``figures``
    the figure style; figures saved reproducibly and shown from the saved file.
``run``, ``sweep``, ``rerun``, ``project``
    the runner (``python -m replication.run NN_name``), its sweeps, what a run with other
    parameters changed (values, then verdicts, then labels), and what they share (the layout,
    run folders, exit statuses).
``check``, ``machines``, ``report``, ``site``, ``lesson``
    the byte-for-byte check of results (also under emulated CPUs), the emulated machines,
    ``REPLICATION.md``, the site (``make html``), the measures of a notebook's lesson.
``papers``
    per paper: what it printed and the checks of its claims too long for a cell.
"""

from .params import check_parameters
from .records import Comparison, Status, format_estimate, setting, summary_table

__all__ = ["Comparison", "Status", "check_parameters", "format_estimate", "setting",
           "summary_table"]
