"""The notebooks' code cells and the library at a page's width: ruff (the ``[tool.ruff]`` rules of
pyproject.toml: lines of at most 100 characters, no syntax error, no undefined name). The
apparatus' top-level modules (``replication/*.py``) are held to the same rules, and so are the
per-paper packages already split into modules of at most 800 lines (``SPLIT_PAPERS``; the other
per-paper modules of ``replication/papers/`` are being split, issue 31, item 6). And the
apparatus' modules import one another without a circle."""

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


def test_the_apparatus_top_level_modules_pass_ruff():
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "replication").glob("*.py"))
    run = _ruff(*modules)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-1000:]


# The per-paper packages split so far (issue 31, item 6): modules of at most 800 lines. Every
# package under replication/papers/ is one (a paper still in one module is not yet split).
SPLIT_PAPERS = tuple(sorted(p.parent.name for p in
                            (ROOT / "replication" / "papers").glob("*/__init__.py")))


def test_the_split_paper_packages_pass_ruff_in_short_modules():
    for paper in SPLIT_PAPERS:
        package = ROOT / "replication" / "papers" / paper
        run = _ruff(str(package.relative_to(ROOT)))
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-1000:]
        long = {p.name: n for p in package.glob("*.py")
                if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
        assert long == {}, f"{paper}: modules over 800 lines: {long}"


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
