"""Replications over executors, and the confidence intervals.

References: the serial loop for the pool and a thread executor; SciPy's Wilson interval.
"""

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest
from scipy import stats as sps

from whittle_lib import stats


def _draw(n, *, rng):
    return rng.normal(size=n)


def test_replicate_gives_the_same_results_on_every_executor():
    seeds = stats.spawn_seeds(7, 5)
    serial = stats.replicate(partial(_draw, 3), seeds, max_workers=1)
    pooled = stats.replicate(partial(_draw, 3), seeds, max_workers=2)
    with ThreadPoolExecutor(3) as ex:
        threaded = stats.replicate(partial(_draw, 3), seeds, executor=ex)
    for a, b, c in zip(serial, pooled, threaded):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # each replication owns its stream
    assert not np.array_equal(serial[0], serial[1])


def test_replicate_and_spawn_validate_their_arguments():
    with pytest.raises(ValueError, match="max_workers must be"):
        stats.replicate(partial(_draw, 1), [1], max_workers=0)
    with pytest.raises(ValueError, match="n must be"):
        stats.spawn_seeds(1, -1)


@pytest.mark.parametrize("k, n", [(0, 8), (1, 8), (4, 8), (8, 8), (13, 40)])
def test_share_interval_is_scipys_wilson_interval(k, n):
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    ci = stats.share_interval(k, n)
    lo, hi = ci.low, ci.high
    # z = 1.96 against SciPy's exact normal quantile 1.959964: the bounds agree to 1e-4
    assert lo == pytest.approx(ref.low, abs=1e-4) and hi == pytest.approx(ref.high, abs=1e-4)


def test_sweep_on_a_dask_cluster_equals_the_serial_sweep():
    """A sweep of crawling simulations on a dask.distributed LocalCluster (two worker
    processes) gives the serial results bit for bit: each task owns its spawned stream."""
    distributed = pytest.importorskip("dask.distributed")
    from whittle_lib.models import crawling, crawling_policies as policies

    model = crawling.table_one()  # the four sources of the 2015 paper
    run = partial(policies.simulate_crawling, model, policies.WhittleRule(model), n_periods=50,
                  stochastic=True)
    grid = [{"M": 1}, {"M": 2}]
    serial = stats.sweep(run, grid, 2015, replications=2, max_workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        clustered = stats.sweep(run, grid, 2015, replications=2,
                                executor=client.get_executor())
    for row_s, row_c in zip(serial, clustered):
        for a, b in zip(row_s, row_c):
            np.testing.assert_array_equal(a.rewards, b.rewards)
    assert not np.array_equal(serial[0][0].rewards, serial[0][1].rewards)
    assert serial[0][0].rewards.shape != () and len(serial) == 2


def test_sweep_validates_replications():
    with pytest.raises(ValueError, match="replications must be"):
        stats.sweep(_draw, [{"n": 1}], 1, replications=0)


def test_named_seeds_are_the_sequential_spawns_in_declared_order():
    root = np.random.SeedSequence(2015)
    first, second = root.spawn(3), root.spawn(4)
    streams = stats.named_seeds(2015, fig4=1, long=1, table=1, runs=4)
    keys = [s.spawn_key for group in streams.values() for s in group]
    assert keys == [s.spawn_key for s in first + second]
    assert list(streams) == ["fig4", "long", "table", "runs"] and len(streams["runs"]) == 4
    assert stats.named_seeds(1) == {} and stats.named_seeds(1, none=0) == {"none": ()}
    with pytest.raises(ValueError, match="^runs must be an integer >= 0, got -1"):
        stats.named_seeds(1, runs=-1)


def test_run_tasks_returns_results_in_order_for_every_executor():
    tasks = [partial(divmod, 17, k) for k in range(1, 6)]
    serial = stats.run_tasks(tasks, max_workers=1)
    assert serial == [divmod(17, k) for k in range(1, 6)]
    assert stats.run_tasks(tasks, max_workers=2) == serial
    with ThreadPoolExecutor(3) as pool:
        assert stats.run_tasks(tasks, executor=pool) == serial
    assert stats.run_tasks([]) == []
    with pytest.raises(ValueError, match="^max_workers must be"):
        stats.run_tasks(tasks, max_workers=0)


# --- issue 32: one spelling of each check, short reprs --------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: stats.spawn_seeds(1, 2.0), TypeError, "n must be an integer, got float"),
    (lambda: stats.spawn_seeds(1, True), TypeError, "n must be an integer, got bool"),
    (lambda: stats.spawn_seeds(None, 2), TypeError, "seed must be a non-negative int"),
    (lambda: stats.spawn_seeds(1.5, 2), TypeError, "seed must be a non-negative int"),
    (lambda: stats.spawn_seeds(-1, 2), ValueError, "seed must be non-negative"),
    (lambda: stats.named_seeds(1, fig=0.5), TypeError, "fig must be an integer, got float"),
    (lambda: stats.sweep(_draw, [{"n": 1}], 1, replications=1.0), TypeError,
     "replications must be an integer"),
    (lambda: stats.run_tasks([1], max_workers=1), TypeError, r"tasks\[0\] must be a callable"),
    (lambda: stats.run_tasks([], executor="pool"), TypeError,
     "executor must be a concurrent.futures.Executor"),
    (lambda: stats.run_tasks([], max_workers=2.0), TypeError, "max_workers must be an integer"),
    (lambda: stats.share_interval(1.0, 3), TypeError, "successes must be an integer"),
    (lambda: stats.share_interval(1, 3.0), TypeError, "trials must be an integer"),
    (lambda: stats.share_interval(4, 3), ValueError, r"successes must be an integer in \[0, 3\]"),
    (lambda: stats.share_interval(1, 3, z="2"), TypeError, "z must be a number"),
    (lambda: stats.mean_interval(["a", "b"]), TypeError, "values must be an array of numbers"),
    (lambda: stats.mean_interval([[1.0], [1.0, 2.0]]), ValueError, "rectangular array"),
    (lambda: stats.mean_interval([1.0, 2.0], level=True), TypeError, "level must be a number"),
    (lambda: stats.mean_interval([1.0, 2.0], level=1.0), ValueError,
     r"level must lie in \(0, 1\)"),
])
def test_type_errors_and_value_errors_are_told_apart(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_confidence_intervals_print_short():
    ci = stats.mean_interval(np.arange(1000.0))
    text = repr(ci)
    # ShortRepr: floats to 10 significant digits, one field per line past 100 characters
    assert text.startswith("ConfidenceInterval(\n    estimate=499.5,\n    low=481.5774007,")
    assert "n=1000" in text and len(text) < 250
    assert ci == stats.mean_interval(np.arange(1000.0))          # equal values, equal results
