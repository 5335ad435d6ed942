"""replication/run.py: parameters checked before a kernel starts, only the defaults write the
reference, a parameter run gets its own folder and a status diff, progress on the console,
Ctrl-C keeps the partial run.

Every test runs the runner as a user would (a subprocess) on a tiny synthetic notebook in a
copy of the project layout under ``tmp_path``, so the stored notebooks are never touched.
"""

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from replication.records import read_results

ROOT = Path(__file__).resolve().parents[2]
NB = "99_demo"
KERNEL = "whittle-lib"

PARAMETERS = """\
# Parameters in papermill's grammar: name: type = default  # [range: ]help
mu: float = 1.0      # > 0: the rate that scales every value
n: int = 2           # in [1, inf): number of rows of Table 1
law: str = "exp"     # in {"exp", "det"}: law of the base utility
sleep: float = 0.0   # in [0, inf): seconds the last section waits (to test Ctrl-C)
"""

# The paper's numbers and claims of the demo: x = mu * k at k = 1, a claim that holds for
# mu <= 1, and y = 3, which depends on n only.
EXPECTED = """\
item,setting,quantity,paper,tolerance,note
Table 1,k=1,x,1.0,0.0005,printed to 3 decimals
Claim,mu,small,,,
Table 2,all,y,3,0,an integer
"""

# The reference results of the defaults: x = mu * k for k < n (k = 0 is ours), the claim, y.
REFERENCE = """\
item,setting,quantity,paper,replicated,tolerance,status,note
Table 1,k=1,x,1.0,1.000,0.0005,reproduced,printed to 3 decimals
Claim,mu,small,,,,claim-holds,mu <= 1
Table 2,all,y,3,3,0,reproduced,an integer
Table 1,k=0,x,,0.000,,new,ours
"""

# What each item's computation uses: Table 1 and the claim mu (n only says how many rows
# Table 1 has), Table 2 n.
RECORDS = """\
from replication import records as R
has_expected = (R.project_root() / "data" / "expected" / f"{NB}.csv").exists()
cmp = R.Comparison(NB, None if has_expected else [], params=params,
                   depends={"Table 2": ["n"], "*": ["mu"]},
                   paper_settings=None if has_expected else False)
for k in range(params.n):
    if cmp.has("Table 1", f"k={k}", "x"):
        cmp.number("Table 1", f"k={k}", "x", params.mu * k)
    else:
        cmp.new("Table 1", f"k={k}", "x", params.mu * k, "ours", decimals=3)
cmp.claim("Claim", "mu", "small", params.mu <= 1, "mu <= 1")
cmp.number("Table 2", "all", "y", 3) if has_expected else cmp.new("Table 2", "all", "y", 3, "y")
print(len(cmp.rows), "rows")
"""


def _notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python (whittle_lib)",
                                 "language": "python"}
    code, md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    nb.cells = [
        md("# 99 Demo\n\nA tiny notebook for the runner's tests."),
        code(PARAMETERS, metadata={"tags": ["parameters"]}),
        code(f'NB = "{NB}"\nimport replication\n'
             'params = replication.check_parameters(NB, globals())'),
        md("## 1. Table 1: the values"),
        code(RECORDS),
        md("## 2. Figure 1: a line"),
        code("import matplotlib.pyplot as plt\n"
             "fig, ax = plt.subplots(figsize=(2, 2))\nax.plot([0, 1], [0, params.mu])\n"
             f"import replication.figures\nreplication.figures.save_figure(fig, '{NB}', 'line')"),
        md("## 3. Summary"),
        code("import os, pathlib, time\n"
             "if os.environ.get('DEMO_STARTED'):   # tells the Ctrl-C test this cell runs\n"
             "    pathlib.Path(os.environ['DEMO_STARTED']).touch()\n"
             "time.sleep(params.sleep)\n"
             "cmp.write()\nprint('written')"),
    ]
    return nb


def _project(tmp_path) -> Path:
    """The project layout with the runner, the demo notebook and its reference outputs."""
    project = tmp_path / "project"
    project.mkdir(parents=True)
    (project / "data" / "expected").mkdir(parents=True)
    (project / "data" / "results").mkdir(parents=True)
    (project / "notebooks").mkdir()
    (project / "figures" / NB).mkdir(parents=True)
    nbformat.write(_notebook(), project / "notebooks" / f"{NB}.ipynb")
    (project / "data" / "results" / f"{NB}.csv").write_text(REFERENCE)
    # a notebook with an expected table replicates a paper and must write its results
    (project / "data" / "expected" / f"{NB}.csv").write_text(EXPECTED)
    (project / "figures" / NB / "line.png").write_bytes(b"reference figure")
    return project


def _fingerprint(project: Path) -> dict[str, str]:
    """A hash of every file of the reference (everything outside build/)."""
    return {str(f.relative_to(project)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(project.rglob("*"))
            if f.is_file() and "build" not in f.relative_to(project).parts}


def _env(project: Path) -> dict:
    env = dict(os.environ)
    env.pop("WHITTLE_OUTPUT_ROOT", None)
    env["WHITTLE_PROJECT_ROOT"] = str(project)
    return env


def _command(project: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "replication.run", NB, "--kernel", KERNEL, *args]


def _run(project: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(_command(project, *args), capture_output=True, text=True,
                          env={**_env(project), **(env or {})}, timeout=300)


def tripwire_kernel(tmp_path: Path) -> tuple[dict, Path]:
    """Environment entries that put a kernelspec named ``KERNEL`` first on Jupyter's kernel
    path (``JUPYTER_PATH`` comes before the venv's own), and the file its start creates: a
    run that starts a kernel leaves that file behind, however fast or slow the machine."""
    started = tmp_path / "kernel-started"
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", f"import pathlib; pathlib.Path({str(started)!r}).touch()",
                 "{connection_file}"],
        "display_name": "tripwire", "language": "python"}))
    paths = [str(tmp_path / "jupyter"), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    return {"JUPYTER_PATH": os.pathsep.join(paths)}, started


def test_the_tripwire_kernel_is_the_one_a_run_would_start(tmp_path, monkeypatch):
    from jupyter_client.kernelspec import KernelSpecManager

    env, started = tripwire_kernel(tmp_path)
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    assert str(started) in " ".join(KernelSpecManager().get_kernel_spec(KERNEL).argv)


def _outputs(nb, start: str) -> list:
    """The outputs of the code cell whose source starts with ``start``."""
    return next(c.outputs for c in nb.cells
                if c.cell_type == "code" and c.source.startswith(start))


def _tags(nb) -> list[list[str]]:
    return [c.metadata.get("tags", []) for c in nb.cells]


@pytest.mark.parametrize("args, message", [
    (("-p", "mux", "2"), "unknown parameter 'mux' for 99_demo"),
    (("-p", "mu", "fast"), "mu must be a float > 0 written as a Python literal, got 'fast'"),
    (("-p", "mu", "-1"), "mu must be a float > 0, got -1"),
    (("-p", "n", "2.5"), "n must be an int in [1, inf), got 2.5"),
    (("-p", "law", "normal"), 'law must be a str in {"exp", "det"}, got "normal"'),
    (("-p", "mu", "[1,"), "mu must be a float > 0 written as a Python literal, got '[1,'"),
])
def test_a_bad_parameter_stops_before_any_kernel_starts(tmp_path, args, message):
    project = _project(tmp_path)
    before = _fingerprint(project)
    tripwire, started = tripwire_kernel(tmp_path)
    run = _run(project, *args, env=tripwire)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr
    assert "nothing was run" in run.stderr
    assert not (project / "build").exists()           # no staging folder: no run was started
    # and no kernel was started: a signal, where a time bound (once "< 20 s") proves nothing on
    # a fast machine and fails on a loaded one
    assert not started.exists()
    assert _fingerprint(project) == before


def test_help_lists_the_notebooks_parameters(tmp_path):
    project = _project(tmp_path)
    run = _run(project, "--help")
    assert run.returncode == 0
    lines = run.stdout.splitlines()
    assert any(line.startswith("parameters of 99_demo") for line in lines)
    for name, rule, meaning in [("mu", "float > 0 (default 1.0)", "the rate that scales"),
                                ("n", "int in [1, inf) (default 2)", "number of rows of Table 1"),
                                ("law", 'str in {"exp", "det"} (default "exp")', "law of the")]:
        line = next(line for line in lines if line.split()[:1] == [name])
        assert rule in line and meaning in line


def test_an_unknown_notebook_is_a_usage_error(tmp_path):
    project = _project(tmp_path)
    run = subprocess.run([sys.executable, "-m", "replication.run", "98_none"],
                         capture_output=True, text=True, env=_env(project), timeout=60)
    assert run.returncode == 2
    assert "no notebook notebooks/98_none.ipynb" in run.stderr


@pytest.mark.slow
def test_a_parameter_run_writes_its_own_folder_and_says_what_changed(tmp_path):
    project = _project(tmp_path)
    before = _fingerprint(project)
    run = _run(project, "-p", "n", "3", "-p", "mu", "2", "-p", "law", "exp")
    assert run.returncode == 0, run.stderr
    assert _fingerprint(project) == before                 # the reference is byte-identical
    # cell order, and law dropped: it equals its default
    folder = project / "build" / "runs" / NB / "mu=2.0,n=3"
    assert (folder / "data" / "results" / f"{NB}.csv").exists()
    assert (folder / "figures" / NB / "line.png").exists()
    nb = nbformat.read(folder / "notebooks" / f"{NB}.ipynb", as_version=4)
    assert ["injected-parameters"] in _tags(nb)            # kept in the build copy only
    assert set(nb.metadata["papermill"]) == {"duration"}   # volatile metadata stripped,
    assert all(set(c.metadata) <= {"tags"} for c in nb.cells)   # the run time kept
    out = run.stdout
    # first what the model computed differently, then the verdicts, then the labels
    model, verdicts, labels = (out.index("What the model computed differently under mu=2.0, "
                                         "n=3 (old -> new):"),
                               out.index("What the verdicts became:"), out.index("Labels:"))
    assert model < verdicts < labels
    lines = out.splitlines()
    assert "  Table 1, x: 1 of 2 rows moved, by +100 %" in lines               # a value moved
    assert "      k=1  1.000 -> 2.000  (+100 %)" in lines
    assert "      Table 1, x, k=2: 4.000 (new)" in lines                       # a row only here
    assert ("  Table 1, x: 1 row reproduced -> deviates, with its value" in lines)
    assert "  Claim, small: 1 row claim-holds -> claim-fails, its value unchanged" in lines
    assert ('Labels: all 5 rows computed under mu=2.0, n=3 say so in their setting '
            '(";params=mu=2.0,n=3").') in lines
    assert "k=0" not in out                                              # 0.000 both times
    # every row under the run's parameters says so, with only those its item depends on
    rows = {(r.item, r.setting, r.quantity): r
            for r in read_results(folder / "data" / "results" / f"{NB}.csv")}
    assert set(rows) == {("Table 1", "k=1;params=mu=2.0", "x"), ("Claim", "mu;params=mu=2.0",
                         "small"), ("Table 2", "all;params=n=3", "y"),
                         ("Table 1", "k=0;params=mu=2.0", "x"),
                         ("Table 1", "k=2;params=mu=2.0", "x")}
    row = rows[("Table 1", "k=1;params=mu=2.0", "x")]
    assert row.status == "deviates" and row.note.endswith(
        "Computed with mu=2.0 (default 1.0): not the paper's setting.")
    changes = (folder / "changes.txt").read_text()
    assert "Claim | mu | small: claim-holds -> claim-fails" in changes    # every row, too
    assert "Table 1 | k=1 | x: reproduced -> deviates (1.000 -> 2.000)" in changes
    assert "Table 1 | k=2 | x: only in this run (new 4.000)" in changes
    # progress: the cell number and the section heading, on the console only
    assert "[6/10] 1. Table 1: the values" in out           # one more cell: the injected one
    assert "[10/10] 3. Summary" in out
    outputs = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "[6/10]" not in outputs
    assert "without encryption" not in run.stderr         # the kernel's transport warning
    assert "Passed unknown parameter" not in run.stderr   # papermill's own parameter guess


@pytest.mark.slow
def test_only_a_run_at_the_defaults_writes_the_reference_and_drops_injected_cells(tmp_path):
    project = _project(tmp_path)
    path = project / "notebooks" / f"{NB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    # what an earlier runner left behind: a stale injected-parameters cell with mu = 5
    nb.cells.insert(2, nbformat.v4.new_code_cell("mu = 5.0", metadata={
        "tags": ["injected-parameters"]}))
    nbformat.write(nb, path)
    run = _run(project, "-p", "mu", "1")                   # equal to the default
    assert run.returncode == 0, run.stderr
    assert not (project / "build" / "runs").exists()
    stored = nbformat.read(path, as_version=4)
    assert ["injected-parameters"] not in _tags(stored)
    assert (project / "data" / "results" / f"{NB}.csv").read_text() == REFERENCE  # mu = 1
    assert (project / "figures" / NB / "line.png").read_bytes()[:4] == b"\x89PNG"  # replaced
    images = [o for c in stored.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    # save_figure shows the very file it saved, once
    assert len(images) == 1
    assert (base64.b64decode("".join(images[0]["data"]["image/png"]))
            == (project / "figures" / NB / "line.png").read_bytes())


def _without_results(project: Path, write: bool) -> None:
    """Make the demo a notebook that replicates no paper (no data/expected, no stored
    results), as the primer ``00_whittle_primer``; ``write``: its last cell still writes."""
    (project / "data" / "expected" / f"{NB}.csv").unlink()
    (project / "data" / "results" / f"{NB}.csv").unlink()
    if not write:
        path = project / "notebooks" / f"{NB}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells[-1].source = "print('no results: this notebook replicates no paper')"
        nbformat.write(nb, path)


@pytest.mark.slow
def test_a_notebook_without_expected_table_runs_and_writes_no_results(tmp_path):
    project = _project(tmp_path)
    _without_results(project, write=False)
    run = _run(project)
    assert run.returncode == 0, run.stderr
    assert not (project / "data" / "results" / f"{NB}.csv").exists()
    assert (project / "figures" / NB / "line.png").read_bytes()[:4] == b"\x89PNG"  # replaced
    assert "data/results" not in run.stdout
    stored = nbformat.read(project / "notebooks" / f"{NB}.ipynb", as_version=4)
    assert _outputs(stored, "print('no results")[0]["text"].startswith("no results")


@pytest.mark.slow
def test_a_parameter_run_of_a_notebook_without_results_shows_its_checked_outputs(tmp_path):
    """The primer records no rows: what a parameter changed is in the cells nbval checks."""
    project = _project(tmp_path)
    _without_results(project, write=False)
    path = project / "notebooks" / f"{NB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if c.source.startswith("from replication import records")
         ).metadata["tags"] = ["nbval-check-output"]
    nbformat.write(nb, path)
    assert _run(project).returncode == 0                  # the reference, with its outputs
    run = _run(project, "-p", "n", "3")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    start = lines.index("What the model computed differently under n=3 (old -> new):")
    assert lines[start + 1:start + 3] == ["  - 4 rows", "  + 5 rows"]


@pytest.mark.slow
def test_a_notebook_without_expected_table_must_not_write_results(tmp_path):
    project = _project(tmp_path)
    _without_results(project, write=True)
    before = _fingerprint(project)
    run = _run(project)
    assert run.returncode == 1
    assert f"has no data/expected/{NB}.csv but wrote data/results/{NB}.csv" in run.stderr
    assert _fingerprint(project) == before


@pytest.mark.slow
def test_a_failed_run_keeps_the_reference_and_the_partial_notebook(tmp_path):
    project = _project(tmp_path)
    path = project / "notebooks" / f"{NB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(7, nbformat.v4.new_code_cell("raise RuntimeError('injected failure')"))
    nbformat.write(nb, path)
    before = _fingerprint(project)
    run = _run(project)
    assert run.returncode == 1
    assert "injected failure" in run.stderr and "the reference is unchanged" in run.stderr
    assert _fingerprint(project) == before
    partial = nbformat.read(project / "build" / "stage" / NB / "notebooks" / f"{NB}.ipynb",
                            as_version=4)
    # papermill puts an error banner first; the cells before the failure ran
    assert _outputs(partial, "from replication import records")[0]["text"] == "4 rows\n"
    assert _outputs(partial, "raise")[0]["ename"] == "RuntimeError"


@pytest.mark.slow
def test_ctrl_c_keeps_the_reference_and_writes_the_partial_notebook(tmp_path):
    project = _project(tmp_path)
    before = _fingerprint(project)
    # A terminal's Ctrl-C signals the whole foreground process group: emulate it with a group
    # of our own.
    started = tmp_path / "started"                         # the last cell touches it
    env = dict(_env(project), DEMO_STARTED=str(started))
    proc = subprocess.Popen(_command(project, "-p", "sleep", "60"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        # Wait for the cell's own signal, not for a guess of how long a loaded machine takes.
        deadline = time.monotonic() + 300
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the last cell never started"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    folder = project / "build" / "runs" / NB / "sleep=60.0"
    staged = folder / "stage" / NB / "notebooks" / f"{NB}.ipynb"
    assert err.strip() == (f"interrupted: the reference is unchanged; the partial run is in "
                           f"{staged.relative_to(project)}")  # one line, no traceback
    assert "Traceback" not in out + err
    partial = nbformat.read(staged, as_version=4)
    assert _outputs(partial, "from replication import records")[0]["text"] == "4 rows\n"  # with outputs
    assert _fingerprint(project) == before
    assert not (folder / "data").exists()                  # nothing moved into place


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def test_make_clean_removes_build_output_and_no_tracked_file(tmp_path):
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "--quiet", str(ROOT), str(clone))
    tracked = _git(clone, "ls-files", "-z").split("\0")[:-1]
    assert "data/results/05_robot_queue.csv" in tracked and "REPLICATION.md" in tracked
    output = [clone / "build" / "runs" / "x.csv", clone / "whittle_lib" / "__pycache__" / "a.pyc",
              clone / "tests" / "__pycache__" / "b.pyc", clone / ".pytest_cache" / "c",
              clone / ".hypothesis" / "d", clone / "whittle_lib.egg-info" / "PKG-INFO"]
    kept = clone / ".venv" / "lib" / "__pycache__" / "e.pyc"  # the environment is not output
    for path in [*output, kept]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    # the working tree's Makefile, run in the clone
    make = subprocess.run(["make", "-f", str(ROOT / "Makefile"), "clean"], cwd=clone,
                          capture_output=True, text=True, timeout=120)
    assert make.returncode == 0, make.stderr
    assert [p for p in output if p.exists()] == []
    assert not (clone / "build").exists() and not (clone / "whittle_lib" / "__pycache__").exists()
    assert kept.exists()
    assert _git(clone, "status", "--porcelain") == ""                # nothing tracked changed
    assert all((clone / f).exists() for f in tracked)


def test_make_clean_refuses_when_a_tracked_file_would_go(tmp_path):
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "--quiet", str(ROOT), str(clone))
    (clone / "build").mkdir()
    (clone / "build" / "kept.txt").write_text("tracked by mistake")
    _git(clone, "add", "-f", "build/kept.txt")
    make = subprocess.run(["make", "-f", str(ROOT / "Makefile"), "clean"], cwd=clone,
                          capture_output=True, text=True, timeout=120)
    assert make.returncode != 0
    assert "build/kept.txt" in make.stdout
    assert (clone / "build" / "kept.txt").exists()
