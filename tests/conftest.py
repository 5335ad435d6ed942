"""Order of the collected tests: the slow ones first.

With two pytest-xdist workers (``make test-lib``) a long test collected last sets the wall time
while the other worker idles; started first, the long tests run side by side with the many short
ones, which then fill in behind them (longest first is the usual heuristic for balancing jobs
on a few machines). No test depends on the order.
"""

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)   # stable: otherwise kept
