"""The notebooks' code cells and the library at a page's width: ruff (the ``[tool.ruff]`` rules of
pyproject.toml: lines of at most 100 characters, no syntax error, no undefined name)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_notebooks_and_library_pass_ruff():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                          "--output-format", "concise", "notebooks", "whittle_lib"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-1000:]
