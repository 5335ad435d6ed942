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

Rows are paired with the reference by ``records.paper_key`` (the setting without the run's
parameters).

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
from dataclasses import dataclass, field

from replication.records import Row, paper_key, split_run_setting

__all__ = ["RunChanges", "compare", "describe", "number_of"]

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

    @property
    def moved(self) -> list[tuple[Row, Row]]:
        """The pairs whose value (the ``replicated`` column) moved."""
        return [(a, b) for a, b in self.pairs if a.replicated != b.replicated]

    @property
    def status_changed(self) -> list[tuple[Row, Row]]:
        return [(a, b) for a, b in self.pairs if a.status != b.status]

    @property
    def relabelled(self) -> list[Row]:
        """This run's rows written under the run's parameters."""
        return [b for _, b in self.pairs if split_run_setting(b.setting)[1]] + [
            r for r in self.only_run if split_run_setting(r.setting)[1]]

    @property
    def unlabelled_but_changed(self) -> list[tuple[Row, Row]]:
        """Pairs that kept the paper's setting although the value or the verdict moved."""
        return [(a, b) for a, b in self.pairs if not split_run_setting(b.setting)[1]
                and (a.replicated, a.status) != (b.replicated, b.status)]


def compare(reference: list[Row], fresh: list[Row]) -> RunChanges:
    """Pair a run's rows with the reference's by their paper key."""
    ref = {paper_key(r): r for r in reference}
    run = {paper_key(r): r for r in fresh}
    return RunChanges([(ref[k], run[k]) for k in ref if k in run],
                      [ref[k] for k in ref if k not in run],
                      [run[k] for k in run if k not in ref])


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


def _rows_word(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def describe(changes: RunChanges, parameters: dict, *, per_group: int = 3,
             limit: int | None = None) -> list[str]:
    """The report's lines (module docstring): model outputs, verdicts, labels.

    ``parameters`` are the run's (for the headings); at most ``per_group`` example rows per
    item and quantity, and, with ``limit``, at most that many lines in all (the last one
    saying how many were left out).
    """
    from replication.records import run_setting

    under = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                      for k, v in parameters.items()) or "the defaults"
    total = _groups(changes.pairs)
    out = [f"What the model computed differently under {under} (old -> new):"]
    moved = _groups(changes.moved)
    if not (moved or changes.only_reference or changes.only_run):
        out.append("  nothing: every value is the reference's")
    for (item, quantity), pairs in moved.items():
        shifts = [p for p in (_percent(a, b) for a, b in pairs) if p is not None]
        span = ("" if not shifts else f", by {_pct(shifts[0])}" if len(shifts) == 1 else
                f", by {_pct(min(shifts))} to {_pct(max(shifts))}")
        out.append(f"  {item}, {quantity}: {len(pairs)} of "
                   f"{_rows_word(len(total[(item, quantity)]))} moved{span}")
        width = max(len(paper_key(a)[1]) for a, _ in pairs[:per_group])
        for a, b in pairs[:per_group]:
            change = _percent(a, b)
            out.append(f"      {paper_key(a)[1].ljust(width)}  {a.replicated or '-'} -> "
                       f"{b.replicated or '-'}" + (f"  ({_pct(change)})" if change is not None
                                                   else ""))
        if len(pairs) > per_group:
            out.append(f"      ... {len(pairs) - per_group} more")
    still = {}
    for (item, quantity), pairs in total.items():
        if (item, quantity) not in moved:
            still[item] = still.get(item, 0) + len(pairs)
    for rows, what in ((changes.only_run, "computed in this run only"),
                       (changes.only_reference, "not computed in this run")):
        if rows:
            out.append(f"  {_rows_word(len(rows))} {what}:")
            out += [f"      {r.item}, {r.quantity}, {paper_key(r)[1]}: {r.replicated or '-'} "
                    f"({r.status})" for r in rows[:per_group]]
            if len(rows) > per_group:
                out.append(f"      ... {len(rows) - per_group} more")
    if moved and still:
        out.append("  unchanged: " + ", ".join(f"{item} ({_rows_word(n)})"
                                                for item, n in still.items()))
    out += ["", "What the verdicts became:"]
    flips: dict[tuple[str, str, str, str], list] = {}
    for a, b in changes.status_changed:
        flips.setdefault((a.item, a.quantity, a.status, b.status), []).append((a, b))
    if not flips:
        out.append("  no status changed")
    for (item, quantity, old, new), pairs in flips.items():
        same = sum(a.replicated == b.replicated for a, b in pairs)
        how = ("its value unchanged" if len(pairs) == 1 and same else
               "with its value" if len(pairs) == 1 else
               "every value unchanged" if same == len(pairs) else
               "with their values" if same == 0 else f"{same} of them with the value unchanged")
        out.append(f"  {item}, {quantity}: {_rows_word(len(pairs))} {old} -> {new}, {how}")
        width = max(len(paper_key(a)[1]) for a, _ in pairs[:per_group])
        for a, b in pairs[:per_group]:
            value = (a.replicated or "-") if a.replicated == b.replicated else \
                f"{a.replicated or '-'} -> {b.replicated or '-'}"
            out.append(f"      {paper_key(a)[1].ljust(width)}  {value}")
        if len(pairs) > per_group:
            out.append(f"      ... {len(pairs) - per_group} more")
    labelled = len(changes.relabelled)
    rows = len(changes.pairs) + len(changes.only_run)
    suffix = run_setting("", parameters)
    out += ["", (f"Labels: all {rows} rows computed under {under} say so in their setting "
                 f'(";{suffix}").' if labelled == rows and rows else
                 f'Labels: {labelled} of {rows} rows say "{suffix}" in their setting; '
                 f"{rows - labelled} kept the paper's setting (their items use none of the "
                 f"changed parameters).")]
    wrong = changes.unlabelled_but_changed
    if wrong:
        items = ", ".join(dict.fromkeys(a.item for a, _ in wrong))
        out.append(f"  but {_rows_word(len(wrong))} kept the paper's setting although the value "
                   f"or verdict moved ({items}): the notebook's Comparison(depends=...) misses "
                   f"a parameter they use.")
    if limit is not None and len(out) > limit:
        out = out[:limit - 1] + [f"... {len(out) - limit + 1} more lines"]
    return out
