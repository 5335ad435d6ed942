"""How ``make test-lib`` spreads the tests over its pytest-xdist workers.

Two rules, both about wall time on a few cores; no test depends on either:

- the slow tests are collected first: with two workers, a long test collected last sets the
  wall time while the other worker idles; started first, the long tests run side by side with
  the many short ones, which then fill in behind them (longest first, the usual heuristic for
  balancing jobs over a few machines);
- the tests of a module whose expensive module-scoped fixture serves all of them (the site
  build of ``test_site.py``, one process rendering every pydoc page in ``test_surface.py``, the
  native fingerprint of ``test_portable.py``) run on one worker, which builds it once; spread
  over two workers, each would build it. ``--dist loadgroup`` with ``xdist_group`` marks is the
  documented way, but with pytest 9.2 it no longer groups anything (pytest-xdist issue #1386:
  the group is written into a node id field pytest no longer reads), so the scheduler below
  groups by module name instead.
"""

import pytest

SHARED_FIXTURE_MODULES = ("tests/apparatus/test_site.py", "tests/library/test_surface.py",
                          "tests/apparatus/test_portable.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)   # stable: otherwise kept


@pytest.hookimpl(optionalhook=True)     # a hook of pytest-xdist: unknown without it
def pytest_xdist_make_scheduler(config, log):
    """``--dist load`` (the default of ``-n``), with the modules above as one unit each."""
    if config.getvalue("dist") != "load":
        return None                     # another mode asked for by name: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class LoadWithSharedFixtures(LoadScopeScheduling):
        # LoadScopeScheduling hands out one unit at a time, the largest units first (its
        # --loadscope-reorder default): here a unit is one test, or one of the modules above.
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in SHARED_FIXTURE_MODULES else nodeid

    return LoadWithSharedFixtures(config, log)
