"""The environment files agree, and every notebook has what the pipeline needs."""

import csv
import json
import re
import tomllib
from pathlib import Path

import pytest

from replication import records as replication

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# The notebooks that replicate a paper (all but the 00_ primer): they have data/expected.
PAPER_NOTEBOOKS = [nb for nb in NOTEBOOKS if not nb.stem.startswith("00_")]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_dependencies() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = meta["dependencies"] + [d for extra in meta["optional-dependencies"].values()
                                   for d in extra]
    return {_norm(re.split(r"[ ;<>=!~\[]", d)[0]) for d in deps}


def _constraints() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            out[_norm(name)] = version
    return out


def _environment_yml() -> dict[str, str]:
    out = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s*-\s+([A-Za-z0-9_.\-]+)\s*(==?)\s*([^\s#]+)", line)
        if m and _norm(m.group(1)) != "python":
            out[_norm(m.group(1))] = m.group(3)
    return out


def test_environment_yml_lists_the_pyproject_dependencies():
    assert set(_environment_yml()) == _pyproject_dependencies()


def test_environment_yml_pins_the_locked_versions():
    locked = _constraints()
    for name, version in _environment_yml().items():
        assert locked.get(name) == version, name


def test_every_dependency_is_locked():
    assert _pyproject_dependencies() <= set(_constraints())


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_one_parameters_cell_and_a_checked_summary(nb):
    cells = json.loads(nb.read_text())["cells"]
    tags = [c.get("metadata", {}).get("tags", []) for c in cells]
    assert sum("parameters" in t for t in tags) == 1
    assert sum("nbval-check-output" in t for t in tags) >= 1
    assert json.loads(nb.read_text())["metadata"]["kernelspec"]["name"] == "whittle-lib"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_stored_without_volatile_metadata(nb):
    data = json.loads(nb.read_text())
    # papermill's run record is dropped but its run time (the site's status page shows it)
    assert set(data["metadata"].get("papermill", {})) <= {"duration"}
    assert set(data["metadata"]) <= {"kernelspec", "language_info", "papermill"}
    for cell in data["cells"]:
        assert not {"papermill", "execution"} & set(cell.get("metadata", {}))


def test_every_paper_notebook_has_an_expected_table_and_the_primer_none():
    # 00_ notebooks teach and replicate no paper's numbers: no data/expected, no data/results
    for nb in NOTEBOOKS:
        teaches = nb.stem.startswith("00_")
        for folder in ("expected", "results"):
            stored = (ROOT / "data" / folder / f"{nb.stem}.csv").exists()
            assert stored != teaches, f"{nb.stem}: data/{folder} file {stored=}"


@pytest.mark.parametrize("nb", PAPER_NOTEBOOKS, ids=lambda p: p.stem)
def test_results_cover_every_expected_row(nb):
    expected = replication._read_rows(ROOT / "data" / "expected" / f"{nb.stem}.csv")
    results = replication.read_results(ROOT / "data" / "results" / f"{nb.stem}.csv")
    by_key = {r.key: r for r in results}
    assert {r.key for r in expected} <= set(by_key)
    statuses = {s.value for s in replication.Status}
    for r in results:
        assert r.status in statuses
        if r.status in ("deviates", "claim-fails"):
            assert "DEVIATES" in r.note or r.status == "claim-fails"
            assert r.note.strip()
    with open(ROOT / "data" / "results" / f"{nb.stem}.csv", newline="") as f:
        assert tuple(csv.DictReader(f).fieldnames) == replication.COLUMNS


def test_import_loads_no_matplotlib_and_submodules_load_on_use():
    """``import whittle_lib`` is light (NumPy only); ``wl.<module>`` imports on first use; no
    part of the library imports matplotlib."""
    import subprocess
    import sys

    code = ("import sys, whittle_lib as wl; heavy = {'matplotlib', 'scipy'} & set(sys.modules); "
            "assert not heavy, heavy; wl.mdp.FiniteMDP; assert 'scipy' in sys.modules; "
            "assert 'matplotlib' not in sys.modules; wl.models.robots.robots_mdp; "
            "assert 'matplotlib' not in sys.modules; "
            "print(sorted({'arms', 'indices', 'mdp', 'relaxation_bound'} & set(wl.__all__)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # the submodules and the re-exported core names (issue 25) are both public
    assert out.stdout.strip() == "['arms', 'indices', 'mdp', 'relaxation_bound']"


def test_conda_users_leave_out_rfc3987_syntax_as_make_venv_does():
    """make venv uninstalls rfc3987-syntax (its import-time grammar costs 1.1 s a process);
    environment.yml lists no such package and tells conda users the same step."""
    makefile = (ROOT / "Makefile").read_text()
    yml = (ROOT / "environment.yml").read_text()
    assert "pip uninstall --quiet --yes rfc3987-syntax" in makefile
    assert "rfc3987" not in "".join(_environment_yml())
    header = "".join(line for line in yml.splitlines(keepends=True) if line.startswith("#"))
    assert "conda remove -n whittle-lib --force --yes rfc3987-syntax" in header


def test_the_aarch64_check_is_part_of_the_checkout():
    """make test-aarch64 runs a script of the repository, not one beside the checkout."""
    import subprocess

    default = re.search(r"^AARCH64_FINGERPRINT \?= (\S+)$", (ROOT / "Makefile").read_text(),
                        re.M).group(1)
    script = ROOT / default
    assert default == "tests/apparatus/aarch64_fingerprint.sh" and script.is_file()
    assert script.stat().st_mode & 0o111                       # executable
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0   # it parses
    assert "tests/apparatus/portable_fingerprint.py" in script.read_text()
