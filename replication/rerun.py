"""What a run with other parameters changed, told so that a reader learns from it.

``python -m replication.run NN_name -p NAME VALUE`` compares the results file of its run with
the reference (``data/results/NN_name.csv``, the defaults) and prints, in this order:

1. **what the model computed differently**: per item and quantity, how many of its rows
   moved and by how much (old -> new, and the relative change where both are numbers), with
   a few of them; then the items that did not move at all;
2. **what the verdicts became**: the rows whose status changed, grouped the same way, saying
   whether the value moved with the verdict (a verdict that changes while the number stays
   put was reached by a reading that the parameter changes, not by the number);
3. **the labels**: how many rows carry the run's parameters in their setting
   (``records.run_setting``) and how many kept the paper's setting; a row that kept the
   paper's setting although its value or verdict moved is named, since the notebook's
   ``Comparison(depends=...)`` then misses a parameter its computation uses.

A notebook that records no results (the primer) has its computed quantities in the outputs of
the cells that nbval checks (tagged ``nbval-check-output``): :func:`output_changes` gives the
lines of those outputs that moved, old then new.

Rows are paired with the reference by their setting without the run's parameters
(``records.paper_key``, and any ``;name=value`` pair naming a changed parameter, which a
notebook may have written itself). A parameter can also move a row to another setting (05's
``K_policy`` sets the ``K`` of Figs. 6-8): the rows left without a partner are paired within
their item and quantity, in order, when both sides have as many, and shown with the part of the
setting that changed (``K=5 -> K=10``).

Examples
--------
>>> from replication.records import Row
>>> ref = [Row("Table 1", "K=5", "C", "0.4", "0.400", status="reproduced"),
...        Row("Table 1", "K=9", "C", "0.2", "0.200", status="reproduced")]
>>> new = [Row("Table 1", "K=5;params=mu=2.0", "C", "0.4", "0.500", status="deviates"),
...        Row("Table 1", "K=9;params=mu=2.0", "C", "0.2", "0.200", status="reproduced")]
>>> print("\\n".join(describe(compare(ref, new), {"mu": 2.0})))
What the model computed differently under mu=2.0 (old -> new):
  Table 1, C: 1 of 2 rows moved, by +25 %
      K=5  0.400 -> 0.500  (+25 %)
<BLANKLINE>
What the verdicts became:
  Table 1, C: 1 row reproduced -> deviates, with its value
      K=5  0.400 -> 0.500
<BLANKLINE>
Labels: all 2 rows computed under mu=2.0 say so in their setting (";params=mu=2.0").
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from replication.records import Row, names_parameter, paper_key, split_run_setting

__all__ = ["RunChanges", "checked_outputs", "compare", "describe", "number_of",
           "output_changes", "setting_change"]

_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:±\s*\S+)?\s*")


def number_of(text: str) -> float | None:
    """The number a results cell holds (an estimate ``m ± h`` gives its mean), else None.

    >>> number_of("0.40000"), number_of("260.50 ± 0.17"), number_of("4/10 readings")
    (0.4, 260.5, None)
    """
    m = _NUMBER.fullmatch(text or "")
    return float(m.group(1)) if m else None


@dataclass(frozen=True)
class RunChanges:
    """A run's rows against the reference's, paired by :func:`replication.records.paper_key`.

    ``pairs`` holds every ``(reference row, this run's row)`` in the reference's order;
    ``only_reference`` and ``only_run`` the rows without a partner.
    """

    pairs: list[tuple[Row, Row]] = field(default_factory=list)
    only_reference: list[Row] = field(default_factory=list)
    only_run: list[Row] = field(default_factory=list)
    #: the run's parameters: a row is labelled if its setting names one of them
    parameters: dict = field(default_factory=dict)

    @property
    def moved(self) -> list[tuple[Row, Row]]:
        """The pairs whose value (the ``replicated`` column) moved."""
        return [(a, b) for a, b in self.pairs if a.replicated != b.replicated]

    @property
    def status_changed(self) -> list[tuple[Row, Row]]:
        return [(a, b) for a, b in self.pairs if a.status != b.status]

    def labelled(self, row: Row) -> bool:
        """Whether the row's setting says it was computed under the run's parameters."""
        return bool(split_run_setting(row.setting)[1]) or any(
            key.strip() in self.parameters for key, _ in _pairs(row.setting))

    @property
    def relabelled(self) -> list[Row]:
        """This run's rows whose setting names the run's parameters."""
        return [b for _, b in self.pairs if self.labelled(b)] + [
            r for r in self.only_run if self.labelled(r)]

    @property
    def unlabelled_but_changed(self) -> list[tuple[Row, Row]]:
        """Pairs that kept the paper's setting although the value or the verdict moved."""
        return [(a, b) for a, b in self.pairs if not self.labelled(b)
                and (a.replicated, a.status) != (b.replicated, b.status)]


def _pairs(setting: str) -> list[tuple[str, str]]:
    return [(k, v) for k, sep, v in (part.partition("=") for part in setting.split(";")) if sep]


def _key(row: Row, parameters: dict) -> tuple[str, str, str]:
    """The key of a run's row without the run's parameters, however its setting names them:
    the ``params=`` suffix, and a pair ``name=value`` with a changed parameter's value."""
    item, setting, quantity = paper_key(row)
    kept = [part for part in setting.split(";")
            if not (part.partition("=")[0].strip() in parameters
                    and names_parameter(part, part.partition("=")[0].strip(),
                                  parameters[part.partition("=")[0].strip()]))]
    return item, ";".join(kept), quantity


def setting_change(old: str, new: str) -> str:
    """The pairs of two settings that differ, ``K=5 -> K=10``; empty if none do.

    >>> setting_change("N=16;K=5;gamma=1.0", "N=16;K=10;gamma=1.0;params=K_policy=10")
    'K=5 -> K=10'
    """
    a = [p for p in split_run_setting(old)[0].split(";")]
    b = [p for p in split_run_setting(new)[0].split(";")]
    gone, came = [p for p in a if p not in b], [p for p in b if p not in a]
    return f"{';'.join(gone) or '-'} -> {';'.join(came) or '-'}" if gone or came else ""


def compare(reference: list[Row], fresh: list[Row], parameters: dict | None = None
            ) -> RunChanges:
    """Pair a run's rows with the reference's (module docstring): by their key without the
    run's ``parameters``, then what is left within each item and quantity, in order."""
    parameters = dict(parameters or {})
    ref = {r.key: r for r in reference}
    run: dict[tuple[str, str, str], Row] = {}
    for r in fresh:                    # a key that two rows would share keeps its full setting
        key = _key(r, parameters)
        run[r.key if key in run else key] = r
    pairs = [(ref[k], run[k]) for k in ref if k in run]
    alone_ref = [ref[k] for k in ref if k not in run]
    alone_run = [run[k] for k in run if k not in ref]

    def by_group(rows):
        out: dict[tuple[str, str], list[Row]] = {}
        for r in rows:
            out.setdefault((r.item, r.quantity), []).append(r)
        return out

    left, right = by_group(alone_ref), by_group(alone_run)
    moved = [g for g in left if len(left[g]) == len(right.get(g, ()))]
    pairs += [pair for g in moved for pair in zip(left[g], right[g])]
    order = {r.key: i for i, r in enumerate(reference)}
    pairs.sort(key=lambda pair: order[pair[0].key])
    return RunChanges(pairs, [r for r in alone_ref if (r.item, r.quantity) not in moved],
                      [r for r in alone_run if (r.item, r.quantity) not in moved], parameters)


def _percent(a: Row, b: Row) -> float | None:
    x, y = number_of(a.replicated), number_of(b.replicated)
    if x is None or y is None or x == 0:
        return None
    return 100.0 * (y - x) / abs(x)


def _pct(value: float) -> str:
    """``+25 %``, ``-2.7 %``, ``+100 %``, ``+0.013 %``: three significant digits at most.

    >>> _pct(100.0), _pct(-2.7), _pct(0.0125)
    ('+100 %', '-2.7 %', '+0.0125 %')
    """
    return f"{value:+.3g} %"


def _groups(pairs):
    """``{(item, quantity): [pairs]}`` in the order of first appearance."""
    out: dict[tuple[str, str], list] = {}
    for a, b in pairs:
        out.setdefault((a.item, a.quantity), []).append((a, b))
    return out


def _where(a: Row, b: Row, parameters: dict) -> str:
    """The reference row's setting, and what of it this run's row changed (besides naming the
    run's parameters)."""
    moved = setting_change(a.setting, ";".join(
        part for part in b.setting.split(";")
        if not names_parameter(part, part.partition("=")[0].strip(),
                               parameters.get(part.partition("=")[0].strip(), object()))))
    return f"{a.setting} ({moved})" if moved else a.setting


def _rows_word(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _example_lines(pairs, per_group: int, value, parameters: dict) -> list[str]:
    """Up to ``per_group`` rows of a group, one a line: where, then ``value(a, b)``."""
    shown = pairs[:per_group]
    width = max(len(_where(a, b, parameters)) for a, b in shown)
    out = [f"      {_where(a, b, parameters).ljust(width)}  {value(a, b)}" for a, b in shown]
    if len(pairs) > per_group:
        out.append(f"      ... {len(pairs) - per_group} more")
    return out


def _model_section(changes: RunChanges, under: str, per_group: int) -> list[str]:
    total = _groups(changes.pairs)
    moved = _groups(changes.moved)
    out = [f"What the model computed differently under {under} (old -> new):"]
    if not (moved or changes.only_reference or changes.only_run):
        out.append("  nothing: every value is the reference's")

    def value(a, b):
        change = _percent(a, b)
        return f"{a.replicated or '-'} -> {b.replicated or '-'}" + (
            f"  ({_pct(change)})" if change is not None else "")

    for (item, quantity), pairs in moved.items():
        shifts = [p for p in (_percent(a, b) for a, b in pairs) if p is not None]
        span = ("" if not shifts else f", by {_pct(shifts[0])}" if len(shifts) == 1 else
                f", by {_pct(min(shifts))} to {_pct(max(shifts))}")
        out.append(f"  {item}, {quantity}: {len(pairs)} of "
                   f"{_rows_word(len(total[(item, quantity)]))} moved{span}")
        out += _example_lines(pairs, per_group, value, changes.parameters)
    for rows, what in ((changes.only_run, "computed in this run only"),
                       (changes.only_reference, "not computed in this run")):
        if rows:
            out.append(f"  {_rows_word(len(rows))} {what}:")
            out += [f"      {r.item}, {r.quantity}, {paper_key(r)[1]}: {r.replicated or '-'} "
                    f"({r.status})" for r in rows[:per_group]]
            if len(rows) > per_group:
                out.append(f"      ... {len(rows) - per_group} more")
    still: dict[str, int] = {}
    for (item, quantity), pairs in total.items():
        if (item, quantity) not in moved:
            still[item] = still.get(item, 0) + len(pairs)
    if moved and still:
        out += textwrap.wrap("unchanged: " + ", ".join(f"{item} ({_rows_word(n)})"
                                                       for item, n in still.items()),
                             100, initial_indent="  ", subsequent_indent="    ")
    return out


def _verdict_section(changes: RunChanges, per_group: int) -> list[str]:
    out = ["What the verdicts became:"]
    flips: dict[tuple[str, str, str, str], list] = {}
    for a, b in changes.status_changed:
        flips.setdefault((a.item, a.quantity, a.status, b.status), []).append((a, b))
    if not flips:
        out.append("  no status changed")

    def value(a, b):
        return (a.replicated or "-") if a.replicated == b.replicated else \
            f"{a.replicated or '-'} -> {b.replicated or '-'}"

    for (item, quantity, old, new), pairs in flips.items():
        same = sum(a.replicated == b.replicated for a, b in pairs)
        how = ("its value unchanged" if len(pairs) == 1 and same else
               "with its value" if len(pairs) == 1 else
               "every value unchanged" if same == len(pairs) else
               "with their values" if same == 0 else f"{same} of them with the value unchanged")
        out.append(f"  {item}, {quantity}: {_rows_word(len(pairs))} {old} -> {new}, {how}")
        out += _example_lines(pairs, per_group, value, changes.parameters)
    return out


def _label_section(changes: RunChanges, parameters: dict, under: str) -> list[str]:
    from replication.records import run_setting

    labelled = len(changes.relabelled)
    rows = len(changes.pairs) + len(changes.only_run)
    suffix = run_setting("", parameters)
    out = [f"Labels: all {rows} rows computed under {under} say so in their setting "
           f'(";{suffix}").' if labelled == rows and rows else
           f"Labels: {labelled} of {rows} rows name the changed parameters in their "
           f'setting (";{suffix}"); {rows - labelled} kept the paper\'s setting (their '
           f"items are declared not to use them: Comparison(depends=...))."]
    wrong = changes.unlabelled_but_changed
    if wrong:
        items = ", ".join(dict.fromkeys(a.item for a, _ in wrong))
        out.append(f"  but {_rows_word(len(wrong))} kept the paper's setting although the value "
                   f"or verdict moved ({items}): the notebook's Comparison(depends=...) misses "
                   f"a parameter they use.")
    return out


def describe(changes: RunChanges, parameters: dict, *, per_group: int = 3,
             limit: int | None = None) -> list[str]:
    """The report's lines (module docstring): model outputs, verdicts, labels.

    ``parameters`` are the run's (for the headings); at most ``per_group`` example rows per
    item and quantity. With ``limit``, at most that many lines in all: the two first sections
    are cut (each ending with the number of lines left out), the labels never.
    """
    under = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                      for k, v in parameters.items()) or "the defaults"
    model = _model_section(changes, under, per_group)
    verdicts = _verdict_section(changes, per_group)
    labels = _label_section(changes, parameters, under)
    if limit is not None and len(model) + len(verdicts) + len(labels) + 2 > limit:
        room = max(4, limit - len(labels) - 2)
        keep_model = max(2, min(len(model), room - min(len(verdicts), room // 2)))
        keep_verdicts = max(2, room - keep_model)

        def cut(lines, n):
            return lines if len(lines) <= n else \
                lines[:n - 1] + [f"  ... {len(lines) - n + 1} more lines"]
        model, verdicts = cut(model, keep_model), cut(verdicts, keep_verdicts)
    return [*model, "", *verdicts, "", *labels]


CHECKED_TAG = "nbval-check-output"


def checked_outputs(path) -> list[str]:
    """The text of each cell of a stored notebook tagged ``nbval-check-output`` (its streams
    and ``text/plain`` results), in order: what the notebook's computation shows."""
    import json
    from pathlib import Path

    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    out = []
    for cell in cells:
        if CHECKED_TAG not in cell.get("metadata", {}).get("tags", []):
            continue
        parts = []
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        out.append("".join(parts))
    return out


def output_changes(reference, run, parameters: dict) -> list[str]:
    """The lines of the checked outputs (:func:`checked_outputs`) of the notebook ``run`` that
    differ from those of ``reference``: per cell, each old line (``-``) then its new one
    (``+``).

    >>> import json, tempfile, pathlib
    >>> def nb(text):
    ...     cell = {"cell_type": "code", "metadata": {"tags": [CHECKED_TAG]}, "source": "",
    ...             "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    ...     path = pathlib.Path(tempfile.mkdtemp()) / "nb.ipynb"
    ...     path.write_text(json.dumps({"cells": [cell]}))
    ...     return path
    >>> print("\\n".join(output_changes(nb("30 arms\\nbound -0.1741\\n"),
    ...                                  nb("30 arms\\nbound -0.1520\\n"), {"share": 0.4})))
    What the model computed differently under share=0.4 (old -> new):
      - bound -0.1741
      + bound -0.1520
    """
    import difflib

    under = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                      for k, v in parameters.items())
    out = [f"What the model computed differently under {under} (old -> new):"]
    old, new = checked_outputs(reference), checked_outputs(run)
    for a, b in zip(old, new):
        lines = [line for line in difflib.ndiff(a.splitlines(), b.splitlines())
                 if line[:2] in ("- ", "+ ")]
        out += [f"  {line}" for line in lines]
    if len(out) == 1:
        out.append("  nothing: every checked output is the reference's")
    return out
