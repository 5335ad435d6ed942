"""The exercises of 06_beyond_the_index, solved: each folded solution's code runs after the
notebook's Part I, as a reader would run it, and prints what its text claims.

Part I switches the process to portable arithmetic and sets matplotlib's and pandas' options, so
it runs in a process of its own, which reports what each solution printed."""

import json
import re
from pathlib import Path

import pytest

from replication import lesson

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06_beyond_the_index.ipynb"

# The values the solutions' texts speak of, read in the notebook's namespace afterwards.
VALUES = {"bound_eight": "float(bounds['Fig. 2'])", "mean3": "float(mean)",
          "half3": "float(half)", "optimum3": "float(optimum)", "gain3": "float(gain)"}


def _solution_text(number: int) -> str:
    """The markdown of exercise ``number`` (its question and folded solution)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.search(rf"\*\*{number}\.\*\*(.*?)</details>", text, re.S).group(1)


# Part I at its defaults takes most of a minute (H23's 50 replications at ten N, the gap figure
# up to 10,000 arms); the solutions use its functions and arms, not the size of its runs, and what
# their texts claim does not depend on it (exact gains, bounds, optima, or relations between
# estimates), so Part I runs here with smaller samples, checked by the parameters cell as a
# reader's values would be. nbval runs the notebook at its defaults.
SMALLER = ("replications = 4; ftva_replications = 2; periods = 100; gap_copies = [10, 100]; "
           "gap_replications = 4; gap_periods = 100; gap_warmup = 50; lp_update_copies = [10]; "
           "exact_copies = [5, 10]")


def _solve(out: Path) -> tuple[dict, list[str]]:
    """What every solution printed, and the values its text speaks of."""
    solved = lesson.solve_exercises(NOTEBOOK, after_parameters=SMALLER, values=VALUES,
                                    output_root=out)
    return solved["values"], solved["outputs"]


@pytest.mark.slow
def test_each_solution_runs_after_part_one_and_prints_what_its_text_says(tmp_path):
    # one test, so that the tests' workers run Part I once
    values, outputs = _solve(tmp_path)
    assert len(outputs) == 4 and all(outputs)                       # four exercises, with code
    # 1: at both ends of the optimal subsidies LP-priority jams the conveyor: it earns
    #    (almost) nothing against the bound 0.0125 per arm
    lines = outputs[0].strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("subsidy ") for line in lines)
    rewards = [float(re.search(r"reward per arm (\S+)", line).group(1)) for line in lines]
    assert all(r < 0.05 * values["bound_eight"] for r in rewards)
    # 2: the "exactly" LP on the page agrees with the library and is below the at-most bound
    assert "agree to 1e-7: True" in outputs[1] and "exactly <= at most: True" in outputs[1]
    # 3: LP-priority's exact gain is below the exact optimum, the long run's interval is not
    #    above it, and the text states the exact gain and the two losses the code prints
    assert values["gain3"] < values["optimum3"]
    assert values["mean3"] - values["half3"] <= values["optimum3"]
    assert "simulation covers the exact gain:" in outputs[2]
    text = _solution_text(3)
    gain, optimum, bound = map(float, re.search(
        r"LP-priority exact (\S+), simulated .*; optimum (\S+), bound (\S+)$", outputs[2],
        re.M).groups())
    assert f"exact gain per arm, {gain:.4f}," in text
    assert "loses about 0.030" in text and "optimum about as much to the bound" in text
    assert round(optimum - gain, 3) == 0.030 and abs((bound - optimum) - 0.030) < 0.001
    # 4: a caching content of 04 is indexable under the average criterion, and both priority
    #    policies' gaps at 1,000 contents are small beside the bound
    assert "indexable: True" in outputs[3]
    bound = abs(float(re.search(r"bound per arm (\S+)", outputs[3]).group(1)))
    gaps = re.findall(r"gap per arm (\S+) ± (\S+)", outputs[3])
    assert len(gaps) == 2 and all(abs(float(g)) - float(h) < 0.05 * bound for g, h in gaps)
