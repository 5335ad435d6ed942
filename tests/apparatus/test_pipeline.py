"""The notebook pipeline: nbval catches a changed number, and a failed run changes nothing.

These run a notebook (seconds each); they use copies in a temporary folder so that the stored
notebook, figures and results are never touched.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NB = "05_robot_queue"
KERNEL = "whittle-lib"

pytestmark = pytest.mark.slow


def _env(tmp_path):
    env = dict(os.environ)
    env["WHITTLE_PROJECT_ROOT"] = str(ROOT)
    env["WHITTLE_OUTPUT_ROOT"] = str(tmp_path / "out")
    env["MPLBACKEND"] = "agg"
    return env


def _summary_cell(cells):
    return next(c for c in cells if "nbval-check-output" in c.get("metadata", {}).get("tags", []))


# What nbval is asked to catch: a changed number in a notebook's summary cell (the one tagged
# nbval-check-output), which every notebook displays as replication.records.Summary of its
# results rows (its text/plain form, which nbval compares, counts the rows per item and status).
# The property does not depend on the paper, so a tiny notebook with the same summary cell
# stands in for one (a paper notebook costs 20 s or more per run); make test-notebooks runs
# nbval on the real ones.
SUMMARY_CALL = "display(replication.records.Summary("
SUMMARY = """\
import replication.records
from replication.records import Row
rows = [Row("Fig. 1", "M=1", "x", status="claim-holds"),
        Row("Fig. 2", "M=1", "y", status="claim-holds"),
        Row("Fig. 2", "M=2", "y", "1.0", "1.0", 0.05, "reproduced"),
        Row("Table 1", "k=0", "z", "", "0.000", status="new")]
""" + SUMMARY_CALL + "rows))"


def test_nbval_reports_a_changed_number(tmp_path):
    import nbclient
    import nbformat

    # the table nbval compares is the one the paper notebooks' summary cells display
    stored = json.loads((ROOT / "notebooks" / "01_ephemeral_crawling.ipynb").read_text())
    assert SUMMARY_CALL in "".join(_summary_cell(stored["cells"])["source"])
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python (whittle_lib)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# 98 Summary\n\nnbval's test notebook."),
                nbformat.v4.new_code_cell(SUMMARY, metadata={"tags": ["nbval-check-output"]})]
    # the stored outputs, as the runner stores them: from a run in the project's kernel
    nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=300,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    data = json.loads(nbformat.writes(nb))
    same = tmp_path / "98_unchanged.ipynb"
    same.write_text(json.dumps(data))
    out = _summary_cell(data["cells"])["outputs"][0]
    # The summary counts the rows per item and status: raise one count in the stored output only.
    text = "".join(out["data"]["text/plain"])
    line = next((ln for ln in text.splitlines() if ln.startswith("Fig. 2 ")), None)
    assert line, "the stored summary should count the rows of Fig. 2"
    m = re.search(r"(\d+)(\s*)$", line)
    changed = line[:m.start(1)] + str(int(m.group(1)) + 1) + m.group(2)
    out["data"]["text/plain"] = text.replace(line, changed, 1)
    copy = tmp_path / "98_changed.ipynb"
    copy.write_text(json.dumps(data))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-kernel-name", KERNEL, "-o", "filterwarnings=ignore", "-rf", str(copy),
         str(same)], capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path,
        timeout=600)
    assert run.returncode == 1, run.stdout[-2000:]
    # the changed copy fails and the unchanged one, run the same way, passes
    assert "1 failed" in run.stdout
    assert "FAILED 98_changed.ipynb::Cell 0" in run.stdout, run.stdout[-2000:]
    # nbval names the summary cell and the table's text form as what differs
    assert "Cell outputs differ" in run.stdout and "mismatch 'text/plain'" in run.stdout


def _copy_project(tmp_path) -> Path:
    """A minimal copy of the project: the runner, one notebook, its data and figures."""
    dst = tmp_path / "project"
    dst.mkdir(parents=True)
    for sub in ("notebooks", "data/expected", "data/results"):
        (dst / sub).mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / f"{NB}.ipynb", dst / "notebooks")
    shutil.copy(ROOT / "data" / "expected" / f"{NB}.csv", dst / "data" / "expected")
    shutil.copy(ROOT / "data" / "results" / f"{NB}.csv", dst / "data" / "results")
    shutil.copytree(ROOT / "figures" / NB, dst / "figures" / NB)
    return dst


def _fingerprint(project: Path) -> dict[str, str]:
    files = [project / "notebooks" / f"{NB}.ipynb", project / "data" / "results" / f"{NB}.csv",
             *sorted((project / "figures" / NB).iterdir())]
    return {str(f.relative_to(project)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def _run(project: Path, *params: str):
    env = dict(os.environ)
    env.pop("WHITTLE_OUTPUT_ROOT", None)
    env["WHITTLE_PROJECT_ROOT"] = str(project)
    return subprocess.run([sys.executable, "-m", "replication.run", NB,
                           "--kernel", KERNEL, *params],
                          capture_output=True, text=True, env=env, timeout=600)


def test_bad_parameter_fails_clearly_and_changes_nothing(tmp_path):
    project = _copy_project(tmp_path)
    before = _fingerprint(project)
    run = _run(project, "-p", "K_policy", "1")
    # refused by the parameter's rule before a kernel starts: exit 2, the parameter named
    assert run.returncode == 2
    assert "K_policy must be an int in [2, inf), got 1" in run.stderr
    assert _fingerprint(project) == before
    assert not (project / "build").exists()


def test_bad_reference_state_fails_before_any_work(tmp_path):
    project = _copy_project(tmp_path)
    run = _run(project, "-p", "reference_state", "(9, 9, 9)")
    assert run.returncode == 1
    assert "(q, r, s) = (9, 9, 9) is not a state of the MDP" in run.stderr


def test_run_failing_halfway_changes_nothing(tmp_path):
    project = _copy_project(tmp_path)
    # Inject a failure in the middle of the notebook, right after the cell that saves Fig. 2
    # (Section 2): figures are staged by then, the rest of the notebook is not run.
    path = project / "notebooks" / f"{NB}.ipynb"
    data = json.loads(path.read_text())
    at = 1 + next(i for i, c in enumerate(data["cells"])
                  if c["cell_type"] == "code" and "fig2_gamma_to_N" in "".join(c["source"]))
    data["cells"].insert(at, {"cell_type": "code", "execution_count": None, "id": "injected",
                              "metadata": {}, "outputs": [],
                              "source": "raise RuntimeError('injected failure')"})
    path.write_text(json.dumps(data))
    before = _fingerprint(project)
    run = _run(project)
    assert run.returncode == 1
    assert "injected failure" in run.stderr
    staged = project / "build" / "stage" / NB / "figures" / NB
    assert (staged / "fig2_gamma_to_N.png").exists()      # it did get halfway
    assert not (staged / "fig6_fig8_policies.png").exists()
    assert _fingerprint(project) == before                # and nothing moved into place
