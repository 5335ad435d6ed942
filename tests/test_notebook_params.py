"""Tests of replication.params: the parameters-cell grammar and the checks by name.

No tolerances here: parsing and validation are exact (a bound is compared with ``<`` or ``<=``
on the value as given).
"""

import dataclasses
import json
import math

import pytest

import replication
from replication.params import (ParameterSpec, ParameterValues, check_parameters,
                                         is_default, parse_parameters_cell,
                                         read_parameter_specs)

CELL = """\
# Parameters (papermill). One per line: name = default  # type range: meaning
seed = 20191                 # int >= 0: seed of every random stream
arrival_rate = 250.0         # float > 0: Lambda_i of Table I (the 2018 paper prints 25)

replications = 8             # int >= 2: independent runs for each claim
base_law = "exponential"     # str in {"exponential", "deterministic"}: law of the base utility
kappas = [0.5, 1.0, 2.0]     # list of float > 0: values of kappa swept
tau = 0.99999                # float in (0, 1]: damping of relative value iteration
quick = False                # bool: a short run for tests
labels = ["a", "b"]          # list of str in {"a", "b", "c"}: panels drawn
sizes = [5, 20]              # list of int in [1, 50): buffer sizes K
"""


def _specs():
    return {s.name: s for s in parse_parameters_cell(CELL)}


def test_the_example_cell_parses_in_order_with_types_ranges_and_meanings():
    specs = parse_parameters_cell(CELL)
    assert [s.name for s in specs] == ["seed", "arrival_rate", "replications", "base_law",
                                       "kappas", "tau", "quick", "labels", "sizes"]
    by = {s.name: s for s in specs}
    assert by["seed"].rule == "int >= 0" and by["seed"].default == 20191
    assert by["arrival_rate"].meaning == "Lambda_i of Table I (the 2018 paper prints 25)"
    assert by["base_law"].choices == ("exponential", "deterministic")  # order as written
    assert by["base_law"].rule == 'str in {"exponential", "deterministic"}'
    assert by["kappas"].default == (0.5, 1.0, 2.0)                     # lists kept as tuples
    assert by["tau"].rule == "float in (0, 1]"
    assert (by["tau"].low, by["tau"].high) == (0, 1)
    assert not by["tau"].low_inclusive and by["tau"].high_inclusive
    assert by["quick"].rule == "bool" and by["quick"].default is False
    assert by["sizes"].rule == "list of int in [1, 50)"


@pytest.mark.parametrize("name, value, message", [
    ("replications", 1, "replications must be an int >= 2, got 1"),
    ("replications", 2.0, "replications must be an int >= 2, got 2.0"),   # no float for int
    ("replications", True, "replications must be an int >= 2, got True"),  # bool is no int
    ("arrival_rate", 0, "arrival_rate must be a float > 0, got 0"),
    ("arrival_rate", "fast", 'arrival_rate must be a float > 0, got "fast"'),
    ("arrival_rate", math.nan, "arrival_rate must be a float > 0, got nan"),  # NaN in no range
    ("tau", 1.5, "tau must be a float in (0, 1], got 1.5"),
    ("base_law", "normal", 'base_law must be a str in {"exponential", "deterministic"}, got '
                           '"normal"'),
    ("kappas", [1.0, -2.0], "kappas must be a list of float > 0, got [1.0, -2.0] "
                            "(element -2.0)"),
    ("kappas", 2.0, "kappas must be a list of float > 0, got 2.0"),
    ("quick", 0, "quick must be a bool, got 0"),
    ("labels", ["a", "z"], 'labels must be a list of str in {"a", "b", "c"}, got ["a", "z"] '
                           '(element "z")'),
    ("sizes", [5, 50], "sizes must be a list of int in [1, 50), got [5, 50] (element 50)"),
    ("sizes", [5, 2.5], "sizes must be a list of int in [1, 50), got [5, 2.5] (element 2.5)"),
])
def test_a_bad_value_names_the_parameter_the_rule_and_the_value(name, value, message):
    with pytest.raises(ValueError) as info:
        _specs()[name].validate(value)
    assert str(info.value) == message


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
    with pytest.raises(ValueError, match=r"^replications must be an int >= 2, got 1$"):
        specs["replications"].parse("1")


@pytest.mark.parametrize("line, reason", [
    ("a, b = 1, 2  # int: x", "papermill cannot set"),
    ("a = b = 1  # int: x", "one name per line"),
    ("a = 1", "no comment"),
    ("a = 1  # the first parameter", "must start with a type"),
    ("a = 1  # list of bool: x", "must start with a type"),
    ("a = 1  # int >= 0", "then a colon and the meaning"),
    ("a = 1  # int >= 0:", "meaning after the colon is empty"),
    ("a = 1  # int >= zero: x", "then a colon and the meaning"),
    ("a = 1  # int in {1, 2: x", "then a colon and the meaning"),
    ("a = [1,  # list of int: x", "fit on one line"),
    ("a = f(1)  # int: x", "must be a Python literal"),
    ("a = 1; b = 2  # int: x", "one assignment"),
    ("a: int = 1  # int: x", "one assignment"),
    ("a = 1  # int >= 2: x", "a must be an int >= 2, got 1"),          # default breaks its rule
    ("a = 1.0  # float in (2, 1): x", "is empty"),
    ("a = True  # bool > 0: x", "takes no bounds"),
    ('a = "x"  # str in {"x", "x"}: x', "repeat"),
])
def test_a_line_off_the_grammar_is_named(line, reason):
    with pytest.raises(ValueError) as info:
        parse_parameters_cell("# header\n\nseed = 1  # int: s\n" + line)
    message = str(info.value)
    assert message.startswith("parameters cell, line 4: ")
    assert reason in message and repr(line.strip()) in message


def test_a_name_set_twice_is_refused():
    with pytest.raises(ValueError, match="line 2: a is set twice"):
        parse_parameters_cell("a = 1  # int: x\na = 2  # int: y")


def test_a_colon_inside_an_allowed_value_or_the_meaning_is_kept():
    (spec,) = parse_parameters_cell('mode = "a:b"  # str in {"a:b", "c"}: see "Sec. 3: x"')
    assert spec.choices == ("a:b", "c")
    assert spec.meaning == 'see "Sec. 3: x"'


def test_a_spec_is_validated_when_built():
    with pytest.raises(ValueError, match="type must be one of"):
        ParameterSpec("a", 1, "integer")
    with pytest.raises(ValueError, match="not defined|identifier"):
        ParameterSpec("not a name", 1, "int")
    with pytest.raises(ValueError, match="either bounds or a set of values"):
        ParameterSpec("a", 1, "int", low=0, choices=(1, 2))


def _notebook(tmp_path, source, name="99_demo"):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Demo"]},
                    {"cell_type": "code", "execution_count": None, "metadata":
                     {"tags": ["parameters"]}, "outputs": [],
                     "source": source.splitlines(keepends=True)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "data" / "expected").mkdir(parents=True, exist_ok=True)
    path = tmp_path / "notebooks" / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_the_specs_are_read_from_the_cell_tagged_parameters(tmp_path):
    path = _notebook(tmp_path, CELL)
    assert read_parameter_specs(path) == parse_parameters_cell(CELL)


def test_a_bad_cell_names_the_notebook(tmp_path):
    path = _notebook(tmp_path, "N, K = 16, 5  # int: x\n")
    with pytest.raises(ValueError, match=r"^99_demo.ipynb: parameters cell, line 1: "):
        read_parameter_specs(path)


def test_check_parameters_reads_the_notebook_under_the_project_root(tmp_path, monkeypatch):
    _notebook(tmp_path, CELL)
    monkeypatch.setenv("WHITTLE_PROJECT_ROOT", str(tmp_path))
    namespace = {"seed": 7, "arrival_rate": 25, "replications": 8, "base_law": "exponential",
                 "kappas": [0.5, 1.0, 2.0], "tau": 0.99999, "quick": False,
                 "labels": ["a", "b"], "sizes": [5, 20], "np": object()}  # globals hold more
    params = replication.check_parameters("99_demo", namespace)
    assert isinstance(params, ParameterValues)
    assert params.seed == 7 and params["arrival_rate"] == 25.0
    assert params.kappas == (0.5, 1.0, 2.0)
    assert list(params) == [s.name for s in parse_parameters_cell(CELL)]  # no extra names
    assert not params.is_default                                       # seed 7, arrival 25
    assert type(params).__name__ == "DemoParameters" and dataclasses.is_dataclass(params)
    assert params.asdict()["labels"] == ("a", "b") and len(params) == len(params.specs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.seed = 1
    assert "seed=7" in repr(params) and params.changed == {"seed": 7, "arrival_rate": 25.0}
    namespace["replications"] = 1
    with pytest.raises(ValueError, match=r"^replications must be an int >= 2, got 1$"):
        check_parameters("99_demo", namespace)
    del namespace["replications"]
    with pytest.raises(ValueError, match=r"^replications is not defined"):
        check_parameters("99_demo", namespace)


def test_is_default_compares_normalised_values_and_ignores_other_names():
    specs = parse_parameters_cell(CELL)
    assert is_default({}, specs)
    assert is_default({"arrival_rate": 250, "kappas": [0.5, 1, 2], "np": None}, specs)
    assert not is_default({"kappas": [0.5, 1.0]}, specs)
    with pytest.raises(ValueError, match="replications must be"):
        is_default({"replications": 0}, specs)
