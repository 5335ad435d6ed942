"""Tests of replication.params: papermill's parameters-cell grammar with our range checks.

papermill reads every line (``name: type = default  # help``); the ranges at the start of the
help and the checks by name are ours. No tolerances here: parsing and validation are exact (a
bound is compared with ``<`` or ``<=`` on the value as given).
"""

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

import replication
from replication.params import (ParameterSpec, ParameterValues, check_parameters,
                                parse_parameters_cell, read_parameter_specs)

ROOT = Path(__file__).resolve().parents[2]

CELL = """\
# Parameters in papermill's grammar: name: type = default  # [range: ]help
seed: int = 20191                 # in [0, inf): seed of every random stream
arrival_rate: float = 250.0       # > 0: Lambda_i of Table I (the 2018 paper prints 25)

replications: int = 8             # in [2, inf): independent runs for each claim
base_law: str = "exponential"     # in {"exponential", "deterministic"}: law of the base utility
kappas: list[float] = [0.5, 1.0, 2.0]  # > 0: values of kappa swept
tau: float = 0.99999              # in (0, 1]: damping of relative value iteration
quick: bool = False               # a short run for tests
labels: list[str] = ["a", "b"]    # in {"a", "b", "c"}: panels drawn
sizes: list[int] = [5, 20]        # in [1, 50): buffer sizes K
"""


def _specs():
    return {s.name: s for s in parse_parameters_cell(CELL)}


def test_the_example_cell_parses_in_order_with_types_ranges_and_meanings():
    specs = parse_parameters_cell(CELL)
    assert [s.name for s in specs] == ["seed", "arrival_rate", "replications", "base_law",
                                       "kappas", "tau", "quick", "labels", "sizes"]
    by = {s.name: s for s in specs}
    assert by["seed"].rule == "int in [0, inf)" and by["seed"].default == 20191
    assert by["arrival_rate"].meaning == "Lambda_i of Table I (the 2018 paper prints 25)"
    assert by["base_law"].choices == ("exponential", "deterministic")  # order as written
    assert by["base_law"].rule == 'str in {"exponential", "deterministic"}'
    assert by["kappas"].rule == "list[float] > 0"
    assert by["kappas"].default == (0.5, 1.0, 2.0)                     # lists kept as tuples
    assert by["tau"].rule == "float in (0, 1]"
    assert (by["tau"].low, by["tau"].high) == (0, 1)
    assert not by["tau"].low_inclusive and by["tau"].high_inclusive
    assert by["quick"].rule == "bool" and by["quick"].default is False
    assert by["quick"].meaning == "a short run for tests"           # no range
    assert by["sizes"].rule == "list[int] in [1, 50)"


@pytest.mark.parametrize("name, value, message", [
    ("replications", 1, "replications must be an int in [2, inf), got 1"),
    ("replications", 2.0, "replications must be an int in [2, inf), got 2.0"),   # no float for int
    ("replications", True, "replications must be an int in [2, inf), got True"),  # bool is no int
    ("arrival_rate", 0, "arrival_rate must be a float > 0, got 0"),
    ("arrival_rate", "fast", 'arrival_rate must be a float > 0, got "fast"'),
    ("arrival_rate", math.nan, "arrival_rate must be a float > 0, got nan"),  # NaN in no range
    ("tau", 1.5, "tau must be a float in (0, 1], got 1.5"),
    ("base_law", "normal", 'base_law must be a str in {"exponential", "deterministic"}, got '
                           '"normal"'),
    ("kappas", [1.0, -2.0], "kappas must be a list[float] > 0, got [1.0, -2.0] "
                            "(element -2.0)"),
    ("kappas", 2.0, "kappas must be a list[float] > 0, got 2.0"),
    ("quick", 0, "quick must be a bool, got 0"),
    ("labels", ["a", "z"], 'labels must be a list[str] in {"a", "b", "c"}, got ["a", "z"] '
                           '(element "z")'),
    ("sizes", [5, 50], "sizes must be a list[int] in [1, 50), got [5, 50] (element 50)"),
    ("sizes", [5, 2.5], "sizes must be a list[int] in [1, 50), got [5, 2.5] (element 2.5)"),
])
def test_a_bad_value_names_the_parameter_the_rule_and_the_value(name, value, message):
    with pytest.raises(ValueError) as info:
        _specs()[name].validate(value)
    assert str(info.value) == message


@pytest.mark.parametrize("line, value, message", [
    ("kappas: list[float] = [1.0, 2.0]  # > 0, distinct: kappa swept", [0.5, 2, 2.0, 0.5],
     "kappas must be a list[float] > 0, distinct, got [0.5, 2.0, 2.0, 0.5] "
     "(2.0 twice, 0.5 twice)"),
    ("cs: list[float] = [0.1, 0.9]  # in (0, 1), distinct: c swept", [0.9, 0.9],
     "cs must be a list[float] in (0, 1), distinct, got [0.9, 0.9] (0.9 twice)"),
    ('tags: list[str] = ["a"]  # distinct: panels', ["a", "a"],
     'tags must be a list[str], distinct, got ["a", "a"] ("a" twice)'),
])
def test_a_distinct_list_refuses_a_value_twice_and_names_it(line, value, message):
    (spec,) = parse_parameters_cell(line)
    with pytest.raises(ValueError) as info:
        spec.validate(value)
    assert str(info.value) == message
    assert spec.validate(value[:1]) == tuple(value[:1])
    assert f"{spec._range_text()}: " in line                # the help as the cell writes it


def test_only_a_list_is_distinct():
    with pytest.raises(ValueError, match="only a list can be distinct, got a float"):
        parse_parameters_cell("kappa: float = 2.0  # > 0, distinct: x")


def test_values_are_normalised():
    specs = _specs()
    assert specs["arrival_rate"].validate(25) == 25.0
    assert isinstance(specs["arrival_rate"].validate(25), float)       # int accepted for float
    assert specs["kappas"].validate([1, 2]) == (1.0, 2.0)
    assert specs["kappas"].validate((1.0,)) == (1.0,)                  # a tuple is a list too
    assert specs["tau"].validate(1) == 1.0                             # ] includes the bound
    assert specs["seed"].validate(0) == 0                              # >= includes it


def test_a_value_from_the_command_line_is_a_literal_but_a_str_needs_no_quotes():
    specs = _specs()
    assert specs["kappas"].parse("(1, 2.5)") == (1.0, 2.5)
    assert specs["base_law"].parse("deterministic") == "deterministic"
    assert specs["base_law"].parse('"deterministic"') == "deterministic"
    with pytest.raises(ValueError, match=r"^arrival_rate must be a float > 0 written as a "
                                         r"Python literal, got 'fast'$"):
        specs["arrival_rate"].parse("fast")
    with pytest.raises(ValueError, match=r"^replications must be an int in \[2, inf\), got 1$"):
        specs["replications"].parse("1")


@pytest.mark.parametrize("line, reason", [
    ("a, b = 1, 2  # x", "one name, an annotation"),       # papermill cannot set a tuple
    ("a = 1  # in [0, inf): x", "one name, an annotation"),   # no type
    ("a: int = 1  # >= 0: x", "no second '='"),               # papermill skips the line
    ("a: int = 1  # x, a = 1", "no second '='"),
    ("a: integer = 1  # x", "type must be one of"),
    ("a: list[bool] = [True]  # x", "type must be one of"),
    ("a: int = 1  # in [0, zero): x", "starts like a range but none parses"),
    ("a: int = 1  # in {1, 2: x", "starts like a range but none parses"),
    ("a: int = f(1)  # x", "must be a Python literal"),
    ("a: int = 1  # in [2, inf): x", "a must be an int in [2, inf), got 1"),  # default off its rule
    ("a: float = 1.0  # in (2, 1): x", "is empty"),
    ("a: bool = True  # > 0: x", "takes no bounds"),
    ('a: str = "x"  # in {"x", "x"}: x', "distinct"),
])
def test_a_line_off_the_grammar_is_named(line, reason):
    with pytest.raises(ValueError) as info:
        parse_parameters_cell("# header\n\nseed: int = 1  # s\n" + line)
    message = str(info.value)
    assert message.startswith("parameters cell: line 4")
    assert reason in message


def test_a_colon_inside_an_allowed_value_or_the_help_is_kept():
    (spec,) = parse_parameters_cell('mode: str = "a:b"  # in {"a:b", "c"}: see "Sec. 3: x"')
    assert spec.choices == ("a:b", "c")
    assert spec.meaning == 'see "Sec. 3: x"'


def test_a_name_set_twice_is_refused():
    with pytest.raises(ValueError, match="line 2 sets a a second time"):
        parse_parameters_cell("a: int = 1  # x\na: int = 2  # y")


def test_papermill_lists_what_we_check(tmp_path):
    """papermill's own reading of the cell (``--help-notebook``) gives every parameter with
    the type and help we check against."""
    path = _notebook(tmp_path, CELL)
    seen = papermill.inspect_notebook(str(path))
    specs = read_parameter_specs(path)
    assert list(seen) == [s.name for s in specs]
    for spec in specs:
        assert seen[spec.name]["inferred_type_name"] == spec.type
        assert seen[spec.name]["help"].endswith(spec.meaning)


@pytest.mark.parametrize("name", sorted(p.stem for p in
                                        (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
def test_every_notebook_is_in_papermills_grammar(name):
    """``papermill --help-notebook`` lists every parameter with its type, and the help
    starting with the range we check."""
    path = ROOT / "notebooks" / f"{name}.ipynb"
    specs = read_parameter_specs(path)       # every line read by papermill, ranges parse
    seen = papermill.inspect_notebook(str(path))
    assert list(seen) == [s.name for s in specs] and specs
    assert all(seen[s.name]["help"] and s.meaning for s in specs)   # every parameter explained
    shown = subprocess.run([sys.executable, "-m", "papermill", "--help-notebook", str(path)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    for spec in specs:
        assert f"  {spec.name}: {spec.type} (default " in shown.stdout
        assert f"{spec._range_text()}: {spec.meaning}".lstrip(": ") in shown.stdout


def test_a_spec_is_validated_when_built():
    with pytest.raises(ValueError, match="type must be one of"):
        ParameterSpec("a", 1, "integer")
    with pytest.raises(ValueError, match="either bounds or allowed values"):
        ParameterSpec("a", 1, "int", low=0, choices=(1, 2))


def _notebook(tmp_path, source, name="99_demo"):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "whittle-lib", "display_name": "Python (whittle_lib)", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# Demo"),
                nbformat.v4.new_code_cell(source, metadata={"tags": ["parameters"]})]
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "data" / "expected").mkdir(parents=True, exist_ok=True)
    path = tmp_path / "notebooks" / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_specs_are_read_from_the_cell_tagged_parameters(tmp_path):
    path = _notebook(tmp_path, CELL)
    assert read_parameter_specs(path) == parse_parameters_cell(CELL)


def test_a_bad_cell_names_the_notebook(tmp_path):
    path = _notebook(tmp_path, "N, K = 16, 5  # x\n")
    with pytest.raises(ValueError, match=r"^99_demo.ipynb, parameters cell: line 1 "):
        read_parameter_specs(path)


def test_check_parameters_reads_the_notebook_under_the_project_root(tmp_path, monkeypatch):
    _notebook(tmp_path, CELL)
    monkeypatch.setenv("WHITTLE_PROJECT_ROOT", str(tmp_path))
    namespace = {"seed": 7, "arrival_rate": 25, "replications": 8, "base_law": "exponential",
                 "kappas": [0.5, 1.0, 2.0], "tau": 0.99999, "quick": False,
                 "labels": ["a", "b"], "sizes": [5, 20], "np": object()}  # globals hold more
    params = replication.check_parameters("99_demo", namespace)
    assert isinstance(params, ParameterValues)
    assert params.seed == 7 and params["arrival_rate"] == 25.0     # read as a mapping too
    assert list(params) == [s.name for s in parse_parameters_cell(CELL)] and len(params) == 9
    assert params.kappas == (0.5, 1.0, 2.0)
    assert list(params.asdict()) == [s.name for s in parse_parameters_cell(CELL)]  # no others
    assert not params.is_default                                       # seed 7, arrival 25
    assert type(params).__name__ == "DemoParameters" and dataclasses.is_dataclass(params)
    assert params.asdict()["labels"] == ("a", "b") and len(params.specs) == 9
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.seed = 1
    assert "seed=7" in repr(params) and params.changed == {"seed": 7, "arrival_rate": 25.0}
    namespace["replications"] = 1
    with pytest.raises(ValueError, match=r"^replications must be an int in \[2, inf\), got 1$"):
        check_parameters("99_demo", namespace)
    del namespace["replications"]
    with pytest.raises(ValueError, match=r"^replications is not defined"):
        check_parameters("99_demo", namespace)
