"""Build REPLICATION.md and the status table of README.md from data/results/*.csv, and the
README's table of run times from the stored notebooks' papermill metadata.

    python -m replication.report
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from replication import records as replication
from replication.site import run_time_table

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- status-table:begin -->", "<!-- status-table:end -->"
RUN_BEGIN, RUN_END = "<!-- run-times:begin -->", "<!-- run-times:end -->"


def _fill(text: str, begin: str, end: str, table: str) -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``table``."""
    return re.sub(re.escape(begin) + ".*?" + re.escape(end),
                  lambda _: f"{begin}\n{table}\n{end}", text, flags=re.S)


def main() -> int:
    files = sorted((ROOT / "data" / "results").glob("*.csv"))
    results = {f.stem: replication.read_results(f) for f in files}
    report = ROOT / "REPLICATION.md"
    tmp = report.with_suffix(".md.tmp")
    tmp.write_text(replication.render_report(results), encoding="utf-8")
    os.replace(tmp, report)
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = _fill(text, BEGIN, END, replication.render_status_table(results))
    if RUN_BEGIN in text and RUN_END in text:
        text = _fill(text, RUN_BEGIN, RUN_END, run_time_table(ROOT))
    readme.write_text(text, encoding="utf-8")
    print(f"wrote REPLICATION.md ({len(results)} notebooks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
