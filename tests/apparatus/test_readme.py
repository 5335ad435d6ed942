"""The README's "Use the library on your own arms" example runs, outside the repository, and
prints what the README says."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_examples_print_what_the_readme_shows(tmp_path):
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use the library on your own arms", 1)[1].split("\n## ", 1)[0]
    codes = re.findall(r"```python\n(.*?)```", section, re.S)
    shown = re.findall(r"```text\n(.*?)```", section, re.S)
    assert len(codes) == len(shown) >= 2, "each example is followed by what it prints"
    for code, printed in zip(codes, shown):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300)   # not the clone: the installed package
        assert out.returncode == 0, out.stderr
        assert out.stdout == printed
