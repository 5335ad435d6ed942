"""Build REPLICATION.md and the status table of README.md from data/results/*.csv.

    python -m replication.report
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from replication import records as replication

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- status-table:begin -->", "<!-- status-table:end -->"


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
        table = replication.render_status_table(results)
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                      lambda _: f"{BEGIN}\n{table}\n{END}", text, flags=re.S)
        readme.write_text(text, encoding="utf-8")
    print(f"wrote REPLICATION.md ({len(results)} notebooks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
