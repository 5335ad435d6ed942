"""replication/sweep.py: ``python -m replication.run NN --sweep name=v1,v2`` runs one point per
folder on a process pool or a dask cluster, checks names and values before any run, never
touches the reference, and prints one table of the results rows that change.

The demo notebook and the scratch project are those of ``tests/apparatus/test_runner.py``: x = mu * k
for k < n, and a claim that holds for mu <= 1.
"""

import subprocess

import pytest
from test_runner import NB, _command, _env, _fingerprint, _project, tripwire_kernel

from replication.records import Row, write_results
from replication.sweep import changes_table, split_values


def _sweep(project, *args, timeout=600, env=None):
    return subprocess.run(_command(project, *args), capture_output=True, text=True,
                          env={**_env(project), **(env or {})}, timeout=timeout, cwd=project)


def _table(stdout: str) -> list[list[str]]:
    """The printed table's lines after its header, split into cells."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["item", "setting",
                                                                           "quantity"])
    return [line.split() for line in lines[start:]]


def _check_two_points(project, result):
    assert result.returncode == 0, result.stdout + result.stderr
    for point in ("mu=0.5", "mu=2.0"):
        folder = project / "build" / "sweep" / NB / point
        assert (folder / "notebooks" / f"{NB}.ipynb").exists()
        assert (folder / "data" / "results" / f"{NB}.csv").exists()
        assert "ok:" in (folder / "run.log").read_text()
    assert "mu=0.5: ok, 1 rows differ" in result.stdout
    assert "mu=2.0: ok, 2 rows differ" in result.stdout
    table = _table(result.stdout)
    # mu = 0.5 halves x at k = 1; mu = 2 doubles it and breaks the claim; x at k = 0 stays 0.
    # The points' rows carry "params=mu=..." in their settings and meet the reference's rows.
    assert table == [
        ["item", "setting", "quantity", "reference", "mu=0.5", "mu=2.0"],
        ["Table", "1", "k=1", "x", "1.000", "(reproduced)", "0.500", "(deviates)", "2.000",
         "(deviates)"],
        ["Claim", "mu", "small", "claim-holds", "claim-holds", "claim-fails"],
    ]


@pytest.mark.slow
def test_a_sweep_on_a_process_pool_writes_one_folder_per_point_and_one_table(tmp_path):
    project = _project(tmp_path)
    before = _fingerprint(project)
    result = _sweep(project, "--sweep", "mu=0.5,2.0", "--jobs", "2")
    _check_two_points(project, result)
    assert "a process pool of 2 workers" in result.stdout
    saved = (project / "build" / "sweep" / NB / "changes.csv").read_text().splitlines()
    assert saved[0] == "item,setting,quantity,reference,mu=0.5,mu=2.0"
    assert saved[1:] == ["Table 1,k=1,x,1.000 (reproduced),0.500 (deviates),2.000 (deviates)",
                         "Claim,mu,small,claim-holds,claim-holds,claim-fails"]
    assert _fingerprint(project) == before
    assert not (project / "build" / "runs").exists()


@pytest.mark.slow
def test_a_sweep_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    project = _project(tmp_path)
    before = _fingerprint(project)
    # Worker processes (not threads): the scheduler must be reachable over TCP from the runner,
    # a separate process; one worker runs the two points one after the other.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        result = _sweep(project, "--sweep", "mu=0.5,2.0", "--scheduler",
                        cluster.scheduler_address)
    _check_two_points(project, result)
    assert "on the dask scheduler tcp://" in result.stdout
    assert _fingerprint(project) == before


@pytest.mark.slow
def test_the_grid_is_the_product_of_the_sweeps_and_unchanged_rows_are_left_out(tmp_path):
    project = _project(tmp_path)
    before = _fingerprint(project)
    result = _sweep(project, "--sweep", "n=1,2", "--sweep", "law=exp,det", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    # n=2,law=exp is the defaults: it too runs in its own folder, not into the reference
    assert _fingerprint(project) == before
    points = sorted(p.name for p in (project / "build" / "sweep" / NB).iterdir() if p.is_dir())
    assert points == ["n=1,law=det", "n=1,law=exp", "n=2,law=det", "n=2,law=exp"]
    # n = 1 drops the row k=1; law changes nothing in the demo's results
    assert _table(result.stdout) == [
        ["item", "setting", "quantity", "reference", "n=1,law=exp", "n=1,law=det",
         "n=2,law=exp", "n=2,law=det"],
        ["Table", "1", "k=1", "x", "1.000", "(reproduced)", "-", "-", "1.000", "(reproduced)",
         "1.000", "(reproduced)"],
    ]


@pytest.mark.parametrize("args, message", [
    (["--sweep", "nu=1,2"], "unknown parameter 'nu'"),
    (["--sweep", "mu=0.5,-1"], "mu must be"),
    (["--sweep", "mu=0.5,fast"], "got 'fast'"),
    (["--sweep", "n=1,2", "-p", "n", "3"], "both swept and given with -p"),
    (["--sweep", "mu"], "--sweep takes NAME=V1,V2"),
    (["--sweep", "mu=1,1.0"], "repeats a value"),
    (["--sweep", "mu=1", "--jobs", "0"], "--jobs must be a positive integer"),
])
def test_a_bad_sweep_stops_before_any_run(tmp_path, args, message):
    project = _project(tmp_path)
    tripwire, started = tripwire_kernel(tmp_path)
    result = _sweep(project, *args, timeout=120, env=tripwire)
    assert result.returncode == 2
    assert message in result.stderr
    assert "nothing was run" in result.stderr
    assert not (project / "build").exists()
    assert not started.exists()                       # no kernel started either


def test_values_split_on_top_level_commas():
    assert split_values("[1, 2],[3, 4]") == ["[1, 2]", "[3, 4]"]
    assert split_values("'a,b', c") == ["'a,b'", "c"]


def test_the_table_marks_failed_runs_and_rows_in_one_file_only(tmp_path, monkeypatch):
    monkeypatch.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path / "ref"))
    reference = write_results("x", [Row("T", "a", "q", "", "1.0", status="new"),
                                    Row("T", "b", "q", "", "2.0", status="new")])
    monkeypatch.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path / "run"))
    fresh = write_results("x", [Row("T", "a", "q", "", "1.0", status="new"),
                                Row("T", "c", "q", "", "3.0", status="new")])
    table = changes_table(reference, {"p=1": fresh, "p=2": None, "p=3": reference})
    assert table.to_dict("records") == [
        {"item": "T", "setting": "b", "quantity": "q", "reference": "2.0 (new)",
         "p=1": "-", "p=2": "failed", "p=3": "2.0 (new)"},
        {"item": "T", "setting": "c", "quantity": "q", "reference": "-",
         "p=1": "3.0 (new)", "p=2": "failed", "p=3": "-"},
    ]
    assert changes_table(reference, {"p=3": reference}).empty
    # a point's rows under its parameters meet the reference's rows of the same computation
    monkeypatch.setenv("WHITTLE_OUTPUT_ROOT", str(tmp_path / "labelled"))
    labelled = write_results("x", [Row("T", "a;params=p=4", "q", "", "1.5", status="new"),
                                   Row("T", "b;params=p=4", "q", "", "2.0", status="new")])
    assert changes_table(reference, {"p=4": labelled}).to_dict("records") == [
        {"item": "T", "setting": "a", "quantity": "q", "reference": "1.0 (new)",
         "p=4": "1.5 (new)"}]
