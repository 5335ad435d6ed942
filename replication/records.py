"""Compare a notebook's numbers with the paper's, write the results file, render the report.

Every notebook ``NN_name`` has ``data/expected/NN_name.csv`` (numbers and claims transcribed
from the paper) and writes ``data/results/NN_name.csv`` in the same long format, one row per
reported number (``DESIGN.md``, "The results record"):

``item, setting, quantity, paper, replicated, tolerance, status, note``

A row is keyed by ``(item, setting, quantity)``. A number is ``reproduced`` when
``|paper - replicated| <= tolerance`` and ``deviates`` otherwise; a deviation must carry a
diagnosis. Qualitative claims are ``claim-holds`` or ``claim-fails``, or ``claim-depends`` when
the verdict holds under some defensible readings (or values of the constants we chose) and
fails under others; numbers the paper does not report are ``new``.

Where files go: reading uses :func:`project_root` (the folder holding ``data/expected``);
writing uses :func:`output_root`, which is the project root unless the environment variable
``WHITTLE_OUTPUT_ROOT`` names a staging folder (``python -m replication.run`` sets it so that a run
that fails halfway overwrites nothing).

Rows computed under other parameters
------------------------------------
A row recorded under parameters that differ from the notebook's defaults never reads as the
paper's setting: its setting carries them, ``lambda=0.01;K=5;gamma=0.4;params=K_policy=10``
(:func:`run_setting`), and its note ends "Computed with K_policy=10 (default 5): not the
paper's setting." Which rows: those whose **item** depends on a changed parameter. A notebook
says so once, where it makes its comparison (Part II's first cell)::

    params = replication.check_parameters(NOTEBOOK, globals())
    cmp = replication.Comparison(NOTEBOOK, params=params, depends={
        "Table 1": ["mu", "tau", "rvi_tol", "reference_state"],   # what Table 1's cells use
        "Fig. 2": ["mu_over_lambda_fig2", "buffer_sizes_fig2"],
        "Lemma 1": (),                                            # no parameter changes it
    })

- An item not in ``depends`` depends on every parameter (the safe default: a run with any
  ``-p`` relabels it); the key ``"*"`` sets the default for the items not listed instead.
- ``()`` declares an item that no parameter changes; its rows keep the paper's setting and
  are judged as at the defaults under any run.
- Record every row under the paper's key as at the defaults (``cmp.number("Table 1",
  "lambda=0.01;K=5;gamma=0.4", "C_d", ...)``, ``cmp.paper(...)``, ``cmp.row(...)`` all take
  it): the comparison appends the parameters when it writes. A setting that already names a
  changed parameter with its value (``...;mu=0.5``) does not get it twice.
- A relabelled row is still judged against the paper's row (``reproduced`` if it stays within
  the tolerance; a claim holds or fails), so a rerun shows what the parameter does to the
  verdict; a deviation there needs no diagnosis of its own. :func:`paper_key` pairs it with
  the reference row, which is how ``python -m replication.run NN -p NAME VALUE``
  (``replication.rerun``) prints first the values that moved, then the verdicts, then the
  labels, and names any row that kept the paper's setting although it moved (a ``depends``
  that misses a parameter).
- Without ``params`` the comparison reads the changed parameters from the runner
  (:data:`RUN_PARAMETERS_ENV`, set by ``python -m replication.run``), every item depending on
  all of them: so a notebook not yet converted still labels every row of a ``-p`` run.
  Elsewhere (JupyterLab, papermill alone) pass ``params``.

A test of a notebook's declaration is a run with the parameter changed: ``python -m
replication.run 05_robot_queue -p K_policy 10`` must leave Table 1's rows under the paper's
setting with their verdicts unchanged when Table 1 does not use ``K_policy``, and otherwise
write them under ``...;params=K_policy=10``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Iterable, Mapping


from whittle_lib import stats as _stats

__all__ = [
    "confidence_interval",
    "format_estimate",
    "decided_counts",
    "share_reach",
    "Status",
    "Row",
    "COLUMNS",
    "project_root",
    "output_root",
    "load_expected",
    "setting",
    "parse_setting",
    "RUN_PARAMETERS_ENV",
    "run_setting",
    "split_run_setting",
    "paper_key",
    "names_parameter",
    "Comparison",
    "write_results",
    "read_results",
    "result_changes",
    "summary_table",
    "Summary",
    "status_counts",
    "render_report",
    "render_status_table",
]

COLUMNS = ("item", "setting", "quantity", "paper", "replicated", "tolerance", "status", "note")


class Status(str, Enum):
    """Status of a results row (``DESIGN.md``)."""

    REPRODUCED = "reproduced"
    DEVIATES = "deviates"
    NEW = "new"
    CLAIM_HOLDS = "claim-holds"
    CLAIM_FAILS = "claim-fails"
    CLAIM_DEPENDS = "claim-depends"


@dataclass(frozen=True)
class Row:
    """One row of an expected or results table.

    ``paper`` and ``replicated`` are kept as text, exactly as printed (the paper) or formatted
    (ours); ``tolerance`` is a float (``nan`` when the row is not numeric).
    """

    item: str
    setting: str
    quantity: str
    paper: str = ""
    replicated: str = ""
    tolerance: float = math.nan
    status: str = ""
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.item, self.setting, self.quantity)

    @property
    def paper_value(self) -> float:
        """The printed number as a float (``ValueError`` for a claim, which has none)."""
        if not self.paper:
            raise ValueError(f"{self.key} is a claim: the paper prints no number for it")
        return float(self.paper)

    def as_record(self) -> dict[str, str]:
        tol = "" if math.isnan(self.tolerance) else f"{self.tolerance:g}"
        return {"item": self.item, "setting": self.setting, "quantity": self.quantity,
                "paper": self.paper, "replicated": self.replicated, "tolerance": tol,
                "status": self.status, "note": self.note}


def confidence_interval(values, *, level: float = 0.95) -> tuple[float, float]:
    """``(mean, half-width)`` of :func:`whittle_lib.stats.mean_interval` (Student t), the pair
    :func:`format_estimate` and :meth:`Comparison.number` take."""
    ci = _stats.mean_interval(values, level=level)
    return ci.estimate, ci.half_width


def decided_counts(trials: int) -> tuple[int, int]:
    """What the one-run rule (:func:`whittle_lib.stats.one_run_verdict`) can decide with
    ``trials`` single runs: ``(largest count that fails, smallest count that holds)``.

    Counts strictly between the two leave the reading undetermined.

    Examples
    --------
    >>> decided_counts(8), decided_counts(4)
    ((1, 7), (0, 4))
    """
    verdicts = [_stats.one_run_verdict(k, trials) for k in range(int(trials) + 1)]
    fails = max((k for k, v in enumerate(verdicts) if v is False), default=-1)
    holds = min((k for k, v in enumerate(verdicts) if v is True), default=int(trials) + 1)
    return fails, holds


def share_reach(trials) -> str:
    """In words, what a reading judged by the one-run rule on ``trials`` single runs can
    detect (the "Searched" sentence of a note): for each number of runs, the counts that decide,
    and how far from 1/2 the observed share must lie.

    Examples
    --------
    >>> first, rest = share_reach([8, 4]).split(", with 4 runs")
    >>> first
    'with 8 runs a reading is decided only at <= 1 or >= 7 runs (a share at least 0.38 from 1/2)'
    >>> rest
    ' only at 0 or 4 (at least 0.50 from 1/2)'
    """
    parts = []
    for j, n in enumerate(sorted({int(t) for t in trials}, reverse=True)):
        fails, holds = decided_counts(n)
        gap = min(0.5 - fails / n, holds / n - 0.5)
        at = f"{fails} or {holds}" if (fails, holds) == (0, n) else f"<= {fails} or >= {holds}"
        if j == 0:
            parts.append(f"with {n} runs a reading is decided only at {at} runs "
                         f"(a share at least {gap:.2f} from 1/2)")
        else:
            parts.append(f"with {n} runs only at {at} (at least {gap:.2f} from 1/2)")
    return ", ".join(parts)


def format_estimate(mean: float, half_width: float, *, digits: int = 2) -> str:
    """``"mean ± half-width"`` at the precision the interval supports.

    The half-width is rounded to ``digits`` significant digits and the mean to the same
    decimal place: digits beyond it are noise that another sample (or another machine's
    rounding) would change.

    Examples
    --------
    >>> format_estimate(197.04, 46.31)
    '197 ± 46'
    >>> format_estimate(1.8612, 0.2533)
    '1.86 ± 0.25'
    >>> format_estimate(12345.6, 234.5)
    '12350 ± 230'
    >>> format_estimate(61.283, 0.997)
    '61.3 ± 1.0'
    """
    mean, half_width = float(mean), float(half_width)
    if not (math.isfinite(mean) and math.isfinite(half_width)) or half_width < 0:
        raise ValueError(f"need a finite mean and half-width >= 0, got {mean!r}, {half_width!r}")
    if int(digits) != digits or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    if half_width == 0:
        return f"{mean:g} ± 0"
    exponent = math.floor(math.log10(half_width)) - (int(digits) - 1)
    if round(half_width / 10.0 ** exponent) >= 10 ** int(digits):
        exponent += 1                    # rounding carried into a new digit: 0.997 -> 1.0
    if exponent >= 0:
        unit = 10 ** exponent
        return f"{round(mean / unit) * unit:d} ± {round(half_width / unit) * unit:d}"
    return f"{mean:.{-exponent}f} ± {half_width:.{-exponent}f}"


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The collection's root: ``WHITTLE_PROJECT_ROOT``, else the nearest folder upward from
    ``start`` (default: the working directory) that holds ``data/expected``."""
    env = os.environ.get("WHITTLE_PROJECT_ROOT")
    if env:
        return Path(env)
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "data" / "expected").is_dir():
            return folder
    raise FileNotFoundError(f"no folder holding data/expected above {here}; "
                            f"set WHITTLE_PROJECT_ROOT")


def output_root() -> Path:
    """Where results and figures are written: ``WHITTLE_OUTPUT_ROOT`` or the project root."""
    env = os.environ.get("WHITTLE_OUTPUT_ROOT")
    return Path(env) if env else project_root()


def _parse_tolerance(text: str, where: str) -> float:
    if text.strip() == "":
        return math.nan
    try:
        tol = float(text)
    except ValueError:
        raise ValueError(f"{where}: tolerance must be a number, got {text!r}") from None
    if tol < 0:
        raise ValueError(f"{where}: tolerance must be >= 0, got {tol}")
    return tol


def _read_rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"item", "setting", "quantity", "paper", "tolerance", "note"} - set(
            reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing columns {sorted(missing)}")
        rows = []
        for i, rec in enumerate(reader, start=2):
            rows.append(Row(
                item=rec["item"], setting=rec["setting"], quantity=rec["quantity"],
                paper=rec["paper"], replicated=rec.get("replicated", "") or "",
                tolerance=_parse_tolerance(rec["tolerance"], f"{path}:{i}"),
                status=rec.get("status", "") or "", note=rec["note"]))
    dup = [k for k, c in Counter(r.key for r in rows).items() if c > 1]
    if dup:
        raise ValueError(f"{path}: duplicate rows {dup[:3]}")
    return rows


def load_expected(notebook: str) -> list[Row]:
    """Read ``data/expected/<notebook>.csv``.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        On a missing column, a bad tolerance or a duplicated ``(item, setting, quantity)``.
    """
    return _read_rows(project_root() / "data" / "expected" / f"{notebook}.csv")


def read_results(path: str | os.PathLike) -> list[Row]:
    """Read a results file written by :func:`write_results`."""
    return _read_rows(Path(path))


def setting(**params) -> str:
    """The ``setting`` column: ``key=value`` pairs joined by ``;`` in the order given.

    Floats are written in their shortest exact form (``0.1``, ``1.4``), so a setting built from
    the same parameters is always the same string.

    >>> setting(lam=0.01, K=5, gamma=0.4)
    'lam=0.01;K=5;gamma=0.4'
    """
    def fmt(v):
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return repr(v) if isinstance(v, float) else str(v)
    return ";".join(f"{k}={fmt(v)}" for k, v in params.items())


def parse_setting(text: str) -> dict[str, str]:
    """Inverse of :func:`setting`: ``"lam=0.01;K=5"`` -> ``{"lam": "0.01", "K": "5"}``.

    Values stay text, as printed; convert them where they are used.

    >>> parse_setting("lambda=0.01;K=5;gamma=1.13")
    {'lambda': '0.01', 'K': '5', 'gamma': '1.13'}
    """
    out = {}
    for part in filter(None, text.split(";")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"setting must be key=value pairs joined by ';', got {text!r}")
        out[key.strip()] = value.strip()
    return out


def _decimals(text: str) -> int:
    m = re.fullmatch(r"\s*-?\d*(?:\.(\d+))?\s*", text)
    return len(m.group(1) or "") if m else 6


def _format(value, decimals: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:.{decimals}f}"


#: The environment variable by which ``python -m replication.run`` tells a notebook's kernel the
#: run's parameters that differ from the defaults, as JSON ``{"values": {...}, "defaults":
#: {...}}``; read by :class:`Comparison` when it is not given ``params``.
RUN_PARAMETERS_ENV = "WHITTLE_RUN_PARAMETERS"
#: The key that introduces a run's parameters in a row's setting (:func:`run_setting`).
RUN_KEY = "params"


def _param_text(value) -> str:
    """A parameter's value as a setting writes it: lists in brackets without spaces, floats in
    their shortest form, strings as they are (``;`` would end the pair: it becomes ``,``)."""
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_param_text(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value).replace(";", ",")


def run_setting(setting: str, parameters: Mapping) -> str:
    """A row's setting with the run's parameters appended: ``<setting>;params=<name>=<value>,...``.

    A row computed under parameters other than the notebook's defaults carries them here, so
    that it never reads as the paper's setting; :func:`split_run_setting` takes them off again
    (to pair the row with the reference row computed at the defaults). No parameters: the
    setting unchanged.

    Examples
    --------
    >>> run_setting("lambda=0.01;K=5", {"K_policy": 10, "buffers": (5, 20)})
    'lambda=0.01;K=5;params=K_policy=10,buffers=[5,20]'
    >>> run_setting("", {"mu": 0.5}), run_setting("K=5", {})
    ('params=mu=0.5', 'K=5')
    """
    if not parameters:
        return setting
    text = ",".join(f"{k}={_param_text(v)}" for k, v in parameters.items())
    return f"{setting};{RUN_KEY}={text}" if setting else f"{RUN_KEY}={text}"


def split_run_setting(setting: str) -> tuple[str, str]:
    """``(the setting without its run parameters, the parameters' text)``; the inverse of
    :func:`run_setting`.

    >>> split_run_setting("lambda=0.01;K=5;params=K_policy=10")
    ('lambda=0.01;K=5', 'K_policy=10')
    >>> split_run_setting("lambda=0.01;K=5")
    ('lambda=0.01;K=5', '')
    """
    if setting.startswith(f"{RUN_KEY}="):
        return "", setting[len(RUN_KEY) + 1:]
    head, sep, tail = setting.rpartition(f";{RUN_KEY}=")
    return (head, tail) if sep else (setting, "")


def paper_key(row: Row) -> tuple[str, str, str]:
    """The row's key with any run parameters taken off its setting: the key of the row that a
    run at the defaults records for the same computation."""
    return (row.item, split_run_setting(row.setting)[0], row.quantity)


def names_parameter(setting: str, name: str, value) -> bool:
    """Whether ``setting`` already holds the pair ``name=value`` (a notebook that wrote the
    parameter into the setting itself).

    >>> names_parameter("lambda=0.1;mu=0.5", "mu", 0.5), names_parameter("mu=1", "mu", 0.5)
    (True, False)
    """
    for part in setting.split(";"):
        key, sep, text = part.partition("=")
        if sep and key.strip() == name:
            if text.strip() == _param_text(value):
                return True
            try:
                return float(text) == float(value)
            except (TypeError, ValueError):
                return False
    return False


def _run_parameters(params) -> tuple[dict, dict, tuple | None]:
    """``(changed values, their defaults, every parameter name or None)`` of ``params`` (a
    :class:`replication.params.ParameterValues`), or, without it, of the runner's
    :data:`RUN_PARAMETERS_ENV`."""
    if params is not None:
        defaults = {spec.name: spec.default for spec in params.specs}
        changed = dict(params.changed)
        return changed, {k: defaults[k] for k in changed}, tuple(defaults)
    text = os.environ.get(RUN_PARAMETERS_ENV, "")
    if not text:
        return {}, {}, None
    data = json.loads(text)
    return dict(data.get("values", {})), dict(data.get("defaults", {})), None


class Comparison:
    """Collects a notebook's results against the paper's expected table.

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"05_robot_queue"``; its expected table is loaded.
    expected : list of Row, optional
        Use these rows instead of reading ``data/expected/<notebook>.csv`` (for tests).
    params : ParameterValues, optional
        The notebook's checked parameters (``replication.check_parameters(NOTEBOOK,
        globals())``): the comparison learns which differ from their defaults. Every row whose
        item depends on one of those (``depends``) is written with them in its setting
        (:func:`run_setting`), never under the paper's setting alone. Without ``params`` the
        changed parameters are those the runner names in :data:`RUN_PARAMETERS_ENV` (none
        outside ``python -m replication.run``).
    depends : mapping of str to iterable of str, optional
        ``{item: parameter names}``: the parameters each item's computation uses. An item
        not listed depends on every parameter (the safe default), unless the key ``"*"``
        gives the names for every item not listed. ``()`` declares an item that no parameter
        changes: its rows keep the paper's setting under any run. The names must be the
        notebook's parameters.
    paper_settings : bool, optional
        Default: whether every parameter is at its default. True: every recorded number or
        claim must be a row of the expected table, and :meth:`write` requires all of them.
        False (a run with other parameters): a number or claim whose setting the paper does
        not report is recorded as ``new``, with the note that says so, and missing rows are
        allowed.

    Notes
    -----
    A row computed under other parameters is judged against the paper's row as at the
    defaults (a number is ``reproduced`` if it still lies within the tolerance, a claim holds
    or fails), so that a rerun shows what the parameter does to the verdict; only its
    setting and note say under which parameters (``lambda=0.01;K=5;params=K_policy=10``), and
    a deviation needs no diagnosis of its own there. :func:`paper_key` pairs it with the
    reference row.

    Examples
    --------
    >>> cmp = Comparison("demo", expected=[Row("Table 1", "K=5", "C_s", "0.40000", tolerance=5e-6,
    ...                                        note="printed to 5 decimals")])
    >>> cmp.number("Table 1", "K=5", "C_s", 0.4)
    >>> cmp.row("Table 1", "K=5", "C_s").status
    'reproduced'
    """

    def __init__(self, notebook: str, expected: list[Row] | None = None, *,
                 params=None, depends: Mapping[str, Iterable[str]] | None = None,
                 paper_settings: bool | None = None):
        self.notebook = notebook
        self.expected = {r.key: r for r in (load_expected(notebook) if expected is None
                                             else expected)}
        changed, defaults, names = _run_parameters(params)
        #: the run's parameters that differ from the notebook's defaults, and those defaults
        self.changed, self.defaults = changed, defaults
        self.depends = {}
        for item, used in (depends or {}).items():
            used = (used,) if isinstance(used, str) else tuple(used)
            unknown = [n for n in used if names is not None and n not in names]
            if unknown:
                raise ValueError(f"depends[{item!r}] names {unknown}, which are not parameters "
                                 f"of {notebook} ({', '.join(names)})")
            self.depends[item] = used
        self.paper_settings = (not changed) if paper_settings is None else bool(paper_settings)
        self._rows: dict[tuple[str, str, str], Row] = {}

    def run_parameters(self, item: str, setting: str = "") -> dict:
        """The changed parameters that the rows of ``item`` depend on, in the order of the
        notebook's cell, less those the ``setting`` already names with the same value: what
        :func:`run_setting` appends to the row's setting."""
        used = self.depends.get(item, self.depends.get("*"))
        return {k: v for k, v in self.changed.items()
                if (used is None or k in used) and not names_parameter(setting, k, v)}

    def _labelled(self, row: Row) -> Row:
        """The row as written: under its run parameters, if any, with a note that says so."""
        moved = self.run_parameters(row.item, row.setting)
        if not moved:
            return row
        text = ", ".join(f"{k}={_param_text(v)}" + (f" (default {_param_text(self.defaults[k])})"
                                                    if k in self.defaults else "")
                         for k, v in moved.items())
        note = row.note.rstrip()
        if note and not note.endswith("."):
            note += "."                  # the note's own last sentence, then ours
        return replace(row, setting=run_setting(row.setting, moved),
                       note=f"{note} Computed with {text}: not the paper's setting.".strip())

    def _expected(self, key) -> Row | None:
        if key not in self.expected:
            if not self.paper_settings:
                return None
            raise KeyError(f"{key} is not in data/expected/{self.notebook}.csv")
        return self.expected[key]

    def row(self, item: str, setting: str, quantity: str) -> Row:
        """The recorded row with this key (the key the notebook recorded it under), as it
        will be written: under its run parameters, if any (:meth:`run_parameters`)."""
        return self._labelled(self._rows[(item, setting, quantity)])

    def paper(self, item: str, setting: str, quantity: str) -> Row:
        """What the paper printed for this key, as transcribed in ``data/expected``: the row's
        ``paper`` (text as printed), ``tolerance`` and ``note``. A notebook reads the paper's
        values through here, never by indexing the comparison's tables.

        Raises
        ------
        KeyError
            If the key is not in the expected table.
        """
        key = (item, setting, quantity)
        if key not in self.expected:
            raise KeyError(f"{key} is not in data/expected/{self.notebook}.csv")
        return self.expected[key]

    def has(self, item: str, setting: str, quantity: str) -> bool:
        """Whether the paper reports this key (it is in the expected table)."""
        return (item, setting, quantity) in self.expected

    def keys(self, item: str | None = None, quantity: str | None = None) -> list:
        """The expected keys ``(item, setting, quantity)`` in the table's order, optionally
        only those of one item and/or quantity."""
        return [k for k in self.expected
                if (item is None or k[0] == item) and (quantity is None or k[2] == quantity)]

    def _add(self, row: Row) -> None:
        if row.key in self._rows:
            raise ValueError(f"{row.key} recorded twice")
        self._rows[row.key] = row

    _NOT_IN_PAPER = "not a setting the paper reports (a run with other parameters)"

    def number(self, item: str, setting: str, quantity: str, value,
               *, diagnosis: str = "", extra_decimals: int = 2,
               half_width: float | None = None) -> None:
        """Record our value of a number the paper reports.

        The status is ``reproduced`` if ``|paper - value| <= tolerance`` (the tolerance of the
        expected row), ``deviates`` otherwise, in which case ``diagnosis`` is required and
        appended to the note. An exact ``value`` is written with ``extra_decimals`` more
        decimals than the paper printed; a stochastic estimate, given with the ``half_width``
        of its 95 % interval, as :func:`format_estimate` writes it.
        """
        exp = self._expected((item, setting, quantity))
        if exp is None:
            return self.new(item, setting, quantity, value, self._NOT_IN_PAPER)
        paper = float(exp.paper)
        value = float(value)
        ok = abs(paper - value) <= exp.tolerance * (1 + 1e-9)
        if not ok and not diagnosis and self.run_parameters(item, setting):
            diagnosis = "computed with other parameters than the paper's."
        if not ok and not diagnosis:
            raise ValueError(f"{exp.key} deviates (paper {exp.paper}, ours {value:.6g}) and "
                             f"needs a diagnosis")
        note = exp.note if ok else f"{exp.note} DEVIATES: {diagnosis}".strip()
        if half_width is not None:
            text = format_estimate(value, half_width)
        elif _decimals(exp.paper) == 0 and value == int(value):
            text = str(int(value))
        else:
            text = _format(value, _decimals(exp.paper) + extra_decimals)
        self._add(replace(exp, replicated=text,
                          status=(Status.REPRODUCED if ok else Status.DEVIATES).value, note=note))

    def claim(self, item: str, setting: str, quantity: str, holds: bool, evidence: str,
              value="") -> None:
        """Record whether a claim of the paper (a row of the expected table) holds."""
        if not evidence:
            raise ValueError(f"({item}, {setting}, {quantity}): a claim needs its evidence")
        exp = self._expected((item, setting, quantity))
        if exp is None:
            verdict = "holds" if holds else "fails"
            return self.new(item, setting, quantity, value,
                            f"{self._NOT_IN_PAPER}; the claim {verdict} here: {evidence}")
        status = Status.CLAIM_HOLDS if holds else Status.CLAIM_FAILS
        text = value if isinstance(value, str) else _format(value, 5)
        self._add(replace(exp, replicated=text, status=status.value,
                          note=f"{exp.note} {evidence}".strip()))

    def claim_by_reading(self, item: str, setting: str, quantity: str,
                         verdicts: Mapping[str, bool], evidence: str, value="") -> None:
        """Record a claim judged under several readings or values of our free constants.

        The status is ``claim-holds`` if the claim holds under every reading, ``claim-fails``
        if it fails under every one, and ``claim-depends`` otherwise; the note lists the
        readings under which it holds and fails (``DESIGN.md``: a verdict against a paper
        stands only if it survives every defensible reading). A reading whose verdict is
        ``None`` is undetermined (for example too few runs to tell a share from 1/2): the
        claim then neither holds nor fails everywhere, and the status is ``claim-depends``.

        Parameters
        ----------
        verdicts
            ``{reading: holds}`` with ``holds`` True, False or None (undetermined), in the
            order the note should list them; at least one.
        evidence
            What was computed, for the note.

        Examples
        --------
        >>> Comparison._status_of({"d=1": True, "d=3": False}).value
        'claim-depends'
        >>> Comparison._status_of({"8 runs": False, "4 runs": None}).value
        'claim-depends'
        """
        verdicts = dict(verdicts)
        if not verdicts:
            raise ValueError(f"({item}, {setting}, {quantity}): verdicts is empty")
        status = self._status_of(verdicts)
        holds = [k for k, v in verdicts.items() if v is not None and v]
        fails = [k for k, v in verdicts.items() if v is not None and not v]
        open_ = [k for k, v in verdicts.items() if v is None]

        def under(verb, names, of=""):      # "fails under 2 (a; b)"; "holds under none of 7"
            return (f"{verb} under {len(names)}{of} ({'; '.join(names)})" if names
                    else f"{verb} under none{of}")

        split = (f"{under('holds', holds, f' of {len(verdicts)} readings')}, "
                 f"{under('fails', fails)}")
        split += f", {under('undetermined', open_)}." if open_ else "."
        if status is Status.CLAIM_HOLDS:
            split = f"holds under all {len(verdicts)} readings ({'; '.join(holds)})."
        elif status is Status.CLAIM_FAILS:
            split = f"fails under all {len(verdicts)} readings ({'; '.join(fails)})."
        text = f"{evidence} Verdict: {split}".strip()
        exp = self._expected((item, setting, quantity))
        if exp is None:
            return self.new(item, setting, quantity, value,
                            f"{self._NOT_IN_PAPER}; the claim {text}")
        shown = value if isinstance(value, str) else _format(value, 5)
        self._add(replace(exp, replicated=shown, status=status.value,
                          note=f"{exp.note} {text}".strip()))

    @staticmethod
    def _status_of(verdicts: Mapping[str, bool]) -> Status:
        values = list(verdicts.values())
        if any(v is None for v in values):
            return Status.CLAIM_DEPENDS
        if all(bool(v) for v in values):
            return Status.CLAIM_HOLDS
        if not any(bool(v) for v in values):
            return Status.CLAIM_FAILS
        return Status.CLAIM_DEPENDS

    def new(self, item: str, setting: str, quantity: str, value, note: str,
            decimals: int = 5) -> None:
        """Record a number of ours that the paper does not report."""
        if not note:
            raise ValueError(f"({item}, {setting}, {quantity}): a new row needs a note")
        text = value if isinstance(value, str) else _format(value, decimals)
        self._add(Row(item, setting, quantity, "", text, math.nan, Status.NEW.value, note))

    @property
    def rows(self) -> list[Row]:
        """Recorded rows as they will be written (under their run parameters, if any):
        expected ones in the expected table's order, then new ones."""
        order = {k: i for i, k in enumerate(self.expected)}
        return [self._labelled(r) for r in sorted(
            self._rows.values(), key=lambda r: (order.get(r.key, len(order)),))]

    def missing(self) -> list[tuple[str, str, str]]:
        """Expected rows that have not been recorded yet."""
        return [k for k in self.expected if k not in self._rows]

    def write(self) -> Path:
        """Write ``data/results/<notebook>.csv`` under :func:`output_root`.

        Raises
        ------
        ValueError
            If an expected row has not been recorded: every number of the paper must appear.
        """
        missing = self.missing() if self.paper_settings else []
        if missing:
            raise ValueError(f"{len(missing)} expected rows not recorded, e.g. {missing[:3]}")
        return write_results(self.notebook, self.rows)


def write_results(notebook: str, rows: Iterable[Row]) -> Path:
    """Write rows to ``data/results/<notebook>.csv`` (atomically: temp file, then rename)."""
    path = output_root() / "data" / "results" / f"{notebook}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row.as_record())
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    os.replace(tmp, path)
    return path


def result_changes(reference: Iterable[Row], fresh: Iterable[Row],
                   columns: tuple[str, ...] = ("status", "replicated")) -> list[str]:
    """How ``fresh`` results differ from ``reference``, one line per difference.

    Rows whose status changed come first, then rows whose other ``columns`` changed, then rows
    found in only one of the two, each in the reference's order. An empty list means the two
    agree on those columns. Used to compare a run with other parameters, or on another
    machine, with the stored results. Rows are paired by :func:`paper_key`: a row written
    under a run's parameters (:func:`run_setting`) meets the reference row of its computation,
    and is named by the reference's key.

    Examples
    --------
    >>> a = [Row("Table 1", "K=5", "C_s", "0.4", "0.40000", status="reproduced")]
    >>> b = [Row("Table 1", "K=5", "C_s", "0.4", "0.41000", status="deviates")]
    >>> result_changes(a, b)
    ['Table 1 | K=5 | C_s: reproduced -> deviates (0.40000 -> 0.41000)']
    """
    old = {paper_key(r): r for r in reference}
    new = {paper_key(r): r for r in fresh}
    status, other = [], []
    for key in (k for k in old if k in new):
        a, b = old[key], new[key]
        where = " | ".join(key)
        if a.status != b.status:
            status.append(f"{where}: {a.status} -> {b.status} ({a.replicated or '-'} -> "
                          f"{b.replicated or '-'})")
            continue
        for col in columns:
            va, vb = getattr(a, col), getattr(b, col)
            if va != vb and not (isinstance(va, float) and math.isnan(va) and math.isnan(vb)):
                other.append(f"{where}: {col} {str(va)[:80]} -> {str(vb)[:80]}"
                             + (f" ({b.status})" if col == "replicated" else ""))
    only_old = [f"{' | '.join(k)}: only in the reference ({old[k].status})"
                for k in old if k not in new]
    only_new = [f"{' | '.join(k)}: only in this run ({new[k].status} {new[k].replicated})"
                for k in new if k not in old]
    return status + other + only_old + only_new


def status_counts(rows: Iterable[Row]) -> dict[str, int]:
    """Number of rows of each status, in the order of :class:`Status`."""
    c = Counter(r.status for r in rows)
    return {s.value: c.get(s.value, 0) for s in Status}


def summary_table(rows: Iterable[Row], *, width: int = 100) -> str:
    """The text a notebook's summary cell prints (what nbval compares), ``width`` columns wide.

    First the rows per item and status; then every row that is not ``reproduced`` (a
    deviation, a claim, a number of ours), as ``status  item | setting`` and, indented,
    ``quantity: paper P, ours V``, wrapped to ``width``. Reproduced numbers are counted, not
    listed: the results file holds each of them, and ``make test`` compares it byte for byte.
    Deterministic: values as written in the results file, no timings.

    Examples
    --------
    >>> rows = [Row("Table 1", "K=5", "C_s", "0.4", "0.40000", status="reproduced"),
    ...         Row("Table 1", "K=5", "N_iter", "12", "13", status="deviates")]
    >>> print(summary_table(rows))
    item     rows  reproduced  deviates  new  claim-holds  claim-fails  claim-depends
    -------  ----  ----------  --------  ---  -----------  -----------  -------------
    Table 1     2           1         1    0            0            0              0
    <BLANKLINE>
    deviates     Table 1 | K=5
        N_iter: paper 12, ours 13
    <BLANKLINE>
    1 reproduced, 1 deviates
    """
    import textwrap

    rows = list(rows)
    statuses = [s.value for s in Status]
    items = list(dict.fromkeys(r.item for r in rows))
    head = ["item", "rows", *statuses]
    data = [[item, str(sum(r.item == item for r in rows)),
             *(str(sum(r.item == item and r.status == st for r in rows)) for st in statuses)]
            for item in items]
    widths = [max([len(h)] + [len(d[i]) for d in data]) for i, h in enumerate(head)]
    # a long item name wraps within its column, so that the table stays ``width`` wide
    widths[0] = max(len(head[0]), min(widths[0], width - sum(w + 2 for w in widths[1:])))
    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    out = [line(head), "  ".join("-" * w for w in widths)]
    for d in data:
        name = textwrap.wrap(d[0], widths[0], break_on_hyphens=False) or [""]
        out.append(line([name[0], *d[1:]]))
        out += [line([rest] + [""] * (len(d) - 1)) for rest in name[1:]]
    listed = [r for r in rows if r.status != Status.REPRODUCED.value]
    for r in listed:
        out.append("")
        out += textwrap.wrap(f"{r.status:<12} {r.item} | {r.setting}", width,
                             subsequent_indent=" " * 13, break_on_hyphens=False)
        value = (f"paper {r.paper}, ours {r.replicated}" if r.paper
                 else f"ours {r.replicated}" if r.replicated else "")
        out += textwrap.wrap(f"{r.quantity}: {value}" if value else r.quantity, width,
                             initial_indent="    ", subsequent_indent="      ",
                             break_on_hyphens=False)
    counts = status_counts(rows)
    out += ["", ", ".join(f"{v} {k}" for k, v in counts.items() if v)]
    return "\n".join(out)


class Summary:
    """What a notebook's summary cell shows: ``display(replication.records.Summary(cmp.rows))``.

    As HTML (the site, JupyterLab): the rows per item and status, then every row that is not
    ``reproduced`` with its paper value and ours, and under it its note **in full** across the
    table (a pandas DataFrame cuts a cell at ``display.max_colwidth``, 50 characters: the
    notes lost their diagnosis), in a box that scrolls sideways if it is wider than the page.
    As text (what nbval compares with ``text/plain``, and a terminal shows):
    :func:`summary_table`. Both are deterministic: values as written in the results file.

    Examples
    --------
    >>> rows = [Row("Table 1", "K=5", "N_iter", "12", "13", status="deviates",
    ...             note="off by one: " + "the reason " * 10)]
    >>> html = Summary(rows)._repr_html_()
    >>> "the reason " * 10 in html and html.startswith('<div class="whittle-summary"')
    True
    >>> print(repr(Summary(rows)).splitlines()[-1])
    1 deviates
    """

    def __init__(self, rows: Iterable[Row], *, width: int = 100):
        self.rows = list(rows)
        self.width = int(width)

    def __repr__(self) -> str:
        return summary_table(self.rows, width=self.width)

    def _repr_html_(self) -> str:
        from html import escape

        statuses = [st.value for st in Status]
        items = list(dict.fromkeys(r.item for r in self.rows))
        head = "".join(f"<th>{escape(h)}</th>" for h in ["item", "rows", *statuses])
        body = "".join(
            f"<tr><th>{escape(item)}</th><td>{sum(r.item == item for r in self.rows)}</td>"
            + "".join(f"<td>{sum(r.item == item and r.status == st for r in self.rows)}</td>"
                      for st in statuses) + "</tr>" for item in items)
        out = ['<div class="whittle-summary" style="overflow-x: auto; max-width: 100%">',
               f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{body}'
               f"</tbody></table>"]
        listed = [r for r in self.rows if r.status != Status.REPRODUCED.value]
        if listed:
            # each row, then its note across the whole table: the note reads at page width
            columns = ["status", "item", "setting", "quantity", "paper", "ours"]
            cells = "".join(
                '<tr class="whittle-row">' + "".join(f"<td>{escape(v)}</td>" for v in (
                    r.status, r.item, r.setting, r.quantity, r.paper, r.replicated))
                + "</tr>" + (f'<tr><td class="whittle-note" colspan="{len(columns)}" '
                             'style="white-space: normal; text-align: left; '
                             f'padding-left: 2em">{escape(r.note)}</td></tr>' if r.note else "")
                for r in listed)
            out.append('<table class="dataframe" style="width: 100%"><thead><tr>'
                       + "".join(f"<th>{c}</th>" for c in columns)
                       + f"</tr></thead><tbody>{cells}</tbody></table>")
        counts = status_counts(self.rows)
        out += [f"<p>{escape(', '.join(f'{v} {k}' for k, v in counts.items() if v))}</p>",
                "</div>"]
        return "\n".join(out)


def render_status_table(results: Mapping[str, list[Row]]) -> str:
    """Markdown table: one line per notebook with its counts of each status."""
    head = "| notebook | " + " | ".join(s.value for s in Status) + " |"
    sep = "|---|" + "---:|" * len(Status)
    lines = [head, sep]
    for nb, rows in results.items():
        counts = status_counts(rows)
        lines.append(f"| `{nb}` | " + " | ".join(str(counts[s.value]) for s in Status) + " |")
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_report(results: Mapping[str, list[Row]]) -> str:
    """``REPLICATION.md``: the status table, then per notebook its deviations and claims."""
    out = ["# Replication status", "",
           "Generated by `make report` from `data/results/*.csv`; do not edit by hand.", "",
           render_status_table(results), ""]
    for nb, rows in results.items():
        out += [f"## `{nb}`", ""]
        for title, statuses in (("Deviations", {"deviates"}),
                                ("Claims", {"claim-holds", "claim-fails", "claim-depends"}),
                                ("New results", {"new"})):
            sel = [r for r in rows if r.status in statuses]
            if not sel:
                continue
            out += [f"### {title}", "",
                    "| item | setting | quantity | paper | ours | status | note |",
                    "|---|---|---|---|---|---|---|"]
            out += [f"| {_md_escape(r.item)} | {_md_escape(r.setting)} | "
                    f"{_md_escape(r.quantity)} | {r.paper} | {r.replicated} | {r.status} | "
                    f"{_md_escape(r.note)} |" for r in sel]
            out.append("")
        numbers = [r for r in rows if r.paper]
        reproduced = sum(r.status == Status.REPRODUCED.value for r in numbers)
        depends = sum(r.status == Status.CLAIM_DEPENDS.value for r in numbers)
        deviates = sum(r.status == Status.DEVIATES.value for r in numbers)
        text = (f"{reproduced} of {len(numbers)} printed numbers reproduced within their "
                f"tolerance")
        if depends:
            text += (f"; {depends} reproduced under some readings of what the paper leaves open "
                     "and not under others (claim-depends)")
        out += [f"{text}; {deviates} deviate." if numbers
                else "The paper prints no number that this notebook reproduces: claims only.", ""]
    return "\n".join(out).rstrip() + "\n"
