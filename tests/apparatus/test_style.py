"""The notebooks' code cells and the library at a page's width: ruff (the ``[tool.ruff]`` rules of
pyproject.toml: lines of at most 100 characters, no syntax error, no undefined name). The
apparatus, ``replication/``, is held to the same rules; each paper's record is a package of
modules of at most 800 lines (issue 31, item 6). And the apparatus' modules import one another
without a circle."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                           "--output-format", "concise", *paths],
                          capture_output=True, text=True, cwd=ROOT)


def test_notebooks_and_library_pass_ruff():
    run = _ruff("notebooks", "whittle_lib")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-1000:]


def test_the_apparatus_passes_ruff():
    run = _ruff("replication")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-1000:]


def test_each_paper_is_a_package_of_short_modules():
    papers = ROOT / "replication" / "papers"
    single = sorted(p.name for p in papers.glob("*.py") if p.name != "__init__.py")
    assert single == [], f"a paper's record in one module, not a package: {single}"
    long = {str(p.relative_to(ROOT)): n for p in papers.glob("*/*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
    assert long == {}, f"modules over 800 lines: {long}"


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that a file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                                  # from .records import ...
                base = f"{package}.{base}".rstrip(".")
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return {name for name in found if name.startswith(package + ".")}


def test_the_apparatus_imports_no_circle():
    """``replication.run`` hands a sweep to ``replication.sweep``, and both read the layout
    from ``replication.project``: no module reaches itself through its imports."""
    modules = {f"replication.{p.stem}": p for p in (ROOT / "replication").glob("*.py")
               if p.stem != "__init__"}
    graph = {name: _imports(path, "replication") & set(modules) - {name}
             for name, path in modules.items()}

    def reaches(start, target, seen=()):
        return any(nxt == target or (nxt not in seen and reaches(nxt, target, (*seen, nxt)))
                   for nxt in graph[start])

    circles = sorted(name for name in graph if reaches(name, name))
    assert circles == [], {name: sorted(graph[name]) for name in circles}
    assert "replication.run" not in graph["replication.sweep"]
