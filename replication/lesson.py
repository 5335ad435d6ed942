"""How much of a notebook is a lesson: the measures of Part I and the budgets it must keep.

A paper notebook is a lesson first and a record second (``DESIGN.md``, "Notebooks"): Part I
runs up to the first Markdown heading that starts with "Part II" or "The record"; a notebook
without one is all Part I. For Part I this module measures

- ``words``: words of prose in its Markdown cells, without folded ``<details>`` blocks (the
  exercises' solutions), math (``$...$``, ``$$...$$``, ``\\begin{...}``), inline code
  (names of functions), HTML tags, link targets and images; a word is a run of letters or
  digits (``1.5`` and ``Lemma`` are one word each);
- ``paragraphs`` and ``bookkeeping``: the prose paragraphs (blocks between blank lines, a
  list one block, headings left out) and those about bookkeeping, in which the words of
  :data:`BOOKKEEPING_TERMS` occur two or more times ("the printed value and the printed
  reading" counts 3);
- ``code_cells``: code cells with any code;
- ``papers_calls``: call sites of a function of ``replication.papers`` (through any name an
  import in the notebook binds to one of its modules or functions);
- ``cmp_calls``: call sites of a method of ``cmp`` (the notebook's ``Comparison``);
- ``longest_print``: the longest block of text output, in lines: a stream (``print``) or a
  ``text/plain`` result shown without an HTML or image form (tables and figures are not
  printed blocks).

:data:`BUDGETS` are issue 31's: at most 2,500 words, at most one bookkeeping paragraph in
ten, no ``cmp.`` call, at most 3 calls into ``replication.papers``, no printed block over 15
lines.

Prose never states a number that a computation produces (issue 31, item 3); two checks over
every Markdown cell of a notebook (both parts, folded solutions included):

- :func:`computed_numbers`: a number of at least three significant digits that equals a value
  the notebook recorded (``data/results/<nb>.csv``, column ``replicated``: a number, or the
  mean of ``m ± h``) at the precision the prose writes it, unless it is a number the paper
  printed (``data/expected/<nb>.csv``, column ``paper``). Such a sentence goes stale when a
  rerun moves the value: the computation should print it.
- :func:`count_drift`: a count "N of M" (also "N of the M", "N of all M") whose pair the
  computation never produced, in an output of the notebook or its results file ("N of M" or
  "N/M"), while it did produce counts out of M: the text of a count that has since moved, as
  01's "69 of 160" beside a table and a results file that say 71.

``python -m replication.lesson [NN_name ...]`` prints the table and what each notebook breaks.

Examples
--------
>>> words("The index $W(x) = \\\\lambda$ of [a state](#s) <details>hidden words</details>")
5
>>> bookkeeping("The printed value is recorded as a reading.")
True
>>> bookkeeping("The value is recorded."), bookkeeping("The printed form, as printed.")
(False, True)
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BOOKKEEPING_TERMS", "BUDGETS", "LessonMeasures", "bookkeeping", "computed_numbers",
           "count_drift", "measure", "over_budget", "paragraphs", "part_one", "prose",
           "solve_exercises", "table", "words"]

#: The words of bookkeeping, each a pattern; a paragraph where they occur twice is bookkeeping.
BOOKKEEPING_TERMS = {
    "printed": r"\bprinted\b",
    "reading": r"\breadings?\b",
    "verdict": r"\bverdicts?\b",
    "claim-holds/-fails/-depends": r"\bclaim-(?:holds|fails|depends)\b",
    "recorded": r"\brecorded\b",
    "record": r"\brecords?\b",
    "deviate": r"\bdeviates?\b",
    "did not survive": r"\bdid not survive\b",
}

#: The budgets of Part I (issue 31, item 2): the largest value each measure may take.
BUDGETS = {"words": 2500, "bookkeeping_share": 0.10, "cmp_calls": 0, "papers_calls": 3,
           "longest_print": 15}

_PART_TWO = re.compile(r"^#{1,6}\s+(?:\d+[.)]?\s+)?(?:Part II\b|The record\b)", re.M | re.I)
_DETAILS = re.compile(r"<details\b.*?</details>", re.S | re.I)
_MATH = re.compile(r"\$\$.*?\$\$|\\begin\{(\w+\*?)\}.*?\\end\{\1\}|\$[^$\n]+\$", re.S)
_WORD = re.compile(r"[A-Za-z0-9]+(?:[._'’-][A-Za-z0-9]+)*")


def _source(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def part_one(cells: list) -> list:
    """The cells before the first Markdown heading "Part II ..." or "The record ..."."""
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown" and _PART_TWO.search(_source(cell)):
            return cells[:i]
    return list(cells)


def prose(markdown: str) -> str:
    """The text a reader reads as prose: no folded blocks, math, tags, link targets, images,
    code fences."""
    text = _DETAILS.sub(" ", markdown)
    text = re.sub(r"^```.*?^```", " ", text, flags=re.S | re.M)
    text = _MATH.sub(" ", text)
    text = re.sub(r"`[^`\n]*`", " ", text)                          # inline code
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)            # images
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)           # links: their text
    text = re.sub(r"<[^>]+>", " ", text)                            # HTML tags
    return text


def words(markdown: str) -> int:
    """Words of prose in a Markdown text (:func:`prose`)."""
    return len(_WORD.findall(prose(markdown)))


def paragraphs(markdown: str) -> list[str]:
    """The prose paragraphs of a Markdown text: blocks between blank lines (a list is one
    block), headings and blocks without a word left out."""
    out = []
    for block in re.split(r"\n\s*\n", prose(markdown)):
        lines = [line for line in block.strip().splitlines()
                 if not re.match(r"\s*#{1,6}\s", line)]
        text = " ".join(line.strip() for line in lines)
        if _WORD.search(text):
            out.append(text)
    return out


def bookkeeping(paragraph: str) -> bool:
    """Whether the words of :data:`BOOKKEEPING_TERMS` occur two or more times in a paragraph."""
    found = sum(len(re.findall(p, paragraph, re.I)) for p in BOOKKEEPING_TERMS.values())
    return found >= 2


def _code(source: str) -> ast.Module | None:
    """A code cell's AST, IPython magics and shell lines blanked; None if it does not parse."""
    lines = ["" if re.match(r"\s*[%!]", line) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _papers_names(trees) -> tuple[set[str], set[str]]:
    """Names bound to modules of ``replication.papers`` and to functions imported from them,
    by the imports of the whole notebook."""
    modules, functions = set(), set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("replication.papers."):
                        modules.add(alias.asname or alias.name)
                    elif alias.name == "replication.papers" and alias.asname:
                        modules.add(alias.asname)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if node.module == "replication.papers":
                        modules.add(bound)
                    elif node.module.startswith("replication.papers."):
                        functions.add(bound)
    return modules, functions


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _calls(tree, modules: set[str], functions: set[str]) -> tuple[int, int]:
    """``(calls into replication.papers, calls of cmp's methods)`` in one cell."""
    papers = cmp = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, rest = name.rpartition(".")
        if name.startswith("replication.papers.") or (
                head and any(head == m or head.startswith(m + ".") for m in modules)) or (
                not head and name in functions):
            papers += 1
        if name.startswith("cmp.") and rest:
            cmp += 1
    return papers, cmp


def _printed_lines(cell) -> int:
    """The longest text block among a code cell's outputs, in lines."""
    longest = 0
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text = out.get("text", "")
        else:
            data = out.get("data", {})
            if any(k in data for k in ("text/html", "image/png", "image/svg+xml",
                                       "text/markdown", "text/latex")):
                continue
            text = data.get("text/plain", "")
        text = text if isinstance(text, str) else "".join(text)
        longest = max(longest, len(text.rstrip("\n").splitlines()))
    return longest


@dataclass(frozen=True)
class LessonMeasures:
    """The measures of one notebook's Part I (module docstring)."""

    notebook: str
    has_part_two: bool
    words: int
    paragraphs: int
    bookkeeping: int
    code_cells: int
    papers_calls: int
    cmp_calls: int
    longest_print: int

    @property
    def bookkeeping_share(self) -> float:
        return self.bookkeeping / self.paragraphs if self.paragraphs else 0.0


def measure(path: str | Path) -> LessonMeasures:
    """The measures of the Part I of the notebook at ``path``."""
    path = Path(path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lesson = part_one(cells)
    markdown = "\n\n".join(_source(c) for c in lesson if c.get("cell_type") == "markdown")
    paras = paragraphs(markdown)
    code = [c for c in lesson if c.get("cell_type") == "code" and _source(c).strip()]
    trees = [t for t in (_code(_source(c)) for c in cells if c.get("cell_type") == "code")
             if t is not None]
    modules, functions = _papers_names(trees)
    counts = [_calls(t, modules, functions) for t in
              (_code(_source(c)) for c in code) if t is not None]
    return LessonMeasures(
        notebook=path.stem, has_part_two=len(lesson) < len(cells), words=words(markdown),
        paragraphs=len(paras), bookkeeping=sum(map(bookkeeping, paras)),
        code_cells=len(code), papers_calls=sum(p for p, _ in counts),
        cmp_calls=sum(c for _, c in counts),
        longest_print=max((_printed_lines(c) for c in code), default=0))


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
_RECORDED = re.compile(r"\s*(-?\d+(?:\.\d+)?)(?:\s*±\s*\S+)?\s*")
_COUNT = re.compile(r"(?<![\w.$])(\d+) of (?:the |all |its |their )?(\d+)\b")


def _significant(text: str) -> int:
    """Significant digits of a number as written: ``274`` 3, ``2000`` 1, ``0.104`` 3."""
    whole, _, decimals = text.lstrip("-").partition(".")
    digits = (whole + decimals).lstrip("0")
    return len(digits if decimals else digits.rstrip("0"))


def _decimals(text: str) -> int:
    return len(text.partition(".")[2])


def _markdown_cells(cells) -> list[tuple[int, str]]:
    return [(i, _source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "markdown"]


def _read_csv(path: Path) -> list[dict]:
    import csv

    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def computed_numbers(path: str | Path, root: str | Path | None = None) -> list[tuple]:
    """``(cell index, number as written, recorded value)`` for each number in a Markdown cell
    that states a recorded value (module docstring), once per cell and number."""
    path = Path(path)
    root = Path(root) if root is not None else path.parents[1]
    recorded = [m.group(1) for row in _read_csv(root / "data" / "results" / f"{path.stem}.csv")
                if (m := _RECORDED.fullmatch(row.get("replicated", "")))]
    printed = set()
    for row in _read_csv(root / "data" / "expected" / f"{path.stem}.csv"):
        try:
            printed.add(float(row["paper"]))
        except (KeyError, ValueError):
            pass
    found = []
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for index, text in _markdown_cells(cells):
        seen = set()
        for m in _NUMBER.finditer(text):
            written = m.group(0)
            if _significant(written) < 3 or float(written) in printed or written in seen:
                continue
            places = _decimals(written)
            for value in recorded:
                if _decimals(value) >= places and round(float(value), places) == float(written):
                    found.append((index, written, value))
                    seen.add(written)
                    break
    return found


def _output_text(cells) -> str:
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            chunks = [out.get("text", "")] + [out.get("data", {}).get(k, "") for k in
                                              ("text/plain", "text/html", "text/markdown")]
            parts += ["".join(c) if isinstance(c, list) else c for c in chunks]
    return "\n".join(parts)


def count_drift(path: str | Path, root: str | Path | None = None) -> list[tuple]:
    """``(cell index, "N of M", the counts out of M that the computation produced)`` for each
    count in a Markdown cell that the computation does not produce (module docstring)."""
    path = Path(path)
    root = Path(root) if root is not None else path.parents[1]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    results = root / "data" / "results" / f"{path.stem}.csv"
    produced = _output_text(cells) + "\n" + (results.read_text(encoding="utf-8")
                                             if results.exists() else "")
    found = []
    for index, text in _markdown_cells(cells):
        for m in _COUNT.finditer(text):
            n, total = m.group(1), m.group(2)
            counts = sorted(set(re.findall(rf"\b(\d+)\s*(?:of|/)\s*(?:the |all )?{total}\b",
                                           produced)), key=int)
            if counts and n not in counts:
                found.append((index, m.group(0), [f"{c} of {total}" for c in counts]))
    return found


def over_budget(m: LessonMeasures) -> list[str]:
    """The budgets that ``m`` exceeds, in words; empty if it keeps them all."""
    out = []
    if m.words > BUDGETS["words"]:
        out.append(f"{m.words} words of prose (at most {BUDGETS['words']})")
    if m.bookkeeping_share > BUDGETS["bookkeeping_share"]:
        out.append(f"{m.bookkeeping} of {m.paragraphs} paragraphs about bookkeeping "
                   f"({m.bookkeeping_share:.0%}; at most 1 in 10)")
    if m.cmp_calls > BUDGETS["cmp_calls"]:
        out.append(f"{m.cmp_calls} cmp. calls (none in Part I)")
    if m.papers_calls > BUDGETS["papers_calls"]:
        out.append(f"{m.papers_calls} calls into replication.papers (at most "
                   f"{BUDGETS['papers_calls']})")
    if m.longest_print > BUDGETS["longest_print"]:
        out.append(f"a printed block of {m.longest_print} lines (at most "
                   f"{BUDGETS['longest_print']})")
    return out


def table(measures: list[LessonMeasures]) -> str:
    """A Markdown table of the measures, one line per notebook."""
    head = ("| notebook | Part II | words | bookkeeping paragraphs | code cells | "
            "calls into replication.papers | cmp. calls | longest printed block |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|"]
    for m in measures:
        lines.append(f"| {m.notebook} | {'yes' if m.has_part_two else 'no'} | {m.words:,} | "
                     f"{m.bookkeeping} of {m.paragraphs} ({m.bookkeeping_share:.0%}) | "
                     f"{m.code_cells} | {m.papers_calls} | {m.cmp_calls} | "
                     f"{m.longest_print} lines |")
    return "\n".join(lines)


def _solve_here(path: str, after_parameters: str, values: dict) -> dict:
    """Part I's code cells, then every folded solution's code, in this process (see
    :func:`solve_exercises`)."""
    import contextlib
    import io

    import matplotlib
    matplotlib.use("agg")
    cells = part_one(json.loads(Path(path).read_text(encoding="utf-8"))["cells"])
    solutions = [block for c in cells if c["cell_type"] == "markdown"
                 for block in _DETAILS.findall(_source(c))]
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):        # the notebook's own outputs
        for c in cells:
            if c["cell_type"] == "code":
                exec(compile(_source(c), path, "exec"), ns)
                if after_parameters and "parameters" in c.get("metadata", {}).get("tags", []):
                    exec(after_parameters, ns)
    outputs = []
    for block in solutions:
        for code in re.findall(r"```python\n(.*?)```", block, re.S):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "solution", "exec"), ns)
            outputs.append(out.getvalue())
    return {"solutions": solutions, "outputs": outputs,
            "values": {name: eval(expr, ns) for name, expr in values.items()}}


def solve_exercises(path: str | Path, *, after_parameters: str = "",
                    values: dict[str, str] | None = None, output_root: str | Path,
                    timeout: float = 900) -> dict:
    """Run a notebook's Part I as a reader would, then the code of each folded solution.

    In a fresh process (Part I switches process-wide state: the arithmetic mode, matplotlib's
    and pandas' options), from the project's root, the notebook's figures and results written
    under ``output_root``. ``after_parameters`` runs right after the parameters cell (other
    values, checked by the notebook as a reader's would be).

    Returns
    -------
    dict
        ``"solutions"``: the text of each ``<details>`` block of Part I, in order;
        ``"outputs"``: what each of their ```python blocks printed, in order; ``"values"``: each
        expression of ``values`` evaluated in the notebook's namespace afterwards (JSON values).
    """
    root = Path(__file__).resolve().parents[1]
    script = ("import json, sys\nfrom replication import lesson\n"
              "print(json.dumps(lesson._solve_here(*json.loads(sys.argv[1]))))")
    env = dict(os.environ, WHITTLE_OUTPUT_ROOT=str(output_root), MPLBACKEND="agg")
    run = subprocess.run([sys.executable, "-c", script,
                          json.dumps([str(path), after_parameters, values or {}])],
                         capture_output=True, text=True, cwd=root, env=env, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"the exercises of {Path(path).name} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.splitlines()[-1])


def main(argv=None) -> int:
    root = Path(__file__).resolve().parents[1]
    names = list(sys.argv[1:] if argv is None else argv)
    paths = ([root / "notebooks" / f"{n}.ipynb" for n in names] if names else
             sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    measures = [measure(p) for p in paths]
    print(table(measures))
    for path, m in zip(paths, measures):
        for problem in over_budget(m):
            print(f"{m.notebook}: over budget: {problem}")
        for index, written, value in computed_numbers(path):
            print(f"{m.notebook}: cell {index} states {written}, a recorded value ({value})")
        for index, count, counts in count_drift(path):
            print(f"{m.notebook}: cell {index} says {count!r}; the computation gives "
                  f"{', '.join(counts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
