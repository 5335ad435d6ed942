"""A notebook's parameters: papermill reads the ``parameters`` cell, we check the ranges.

The cell is written in papermill's own grammar, one parameter per line::

    name: type = default  # [range: ]help

``papermill --help-notebook notebooks/NN_name.ipynb`` lists every parameter with its type,
default and help (papermill's ``inspect_notebook``, which this module reads too). ``type`` is
one of ``int``, ``float``, ``bool``, ``str``, ``list[int]``, ``list[float]``, ``list[str]``.
The help may start with a range and a colon; papermill skips any line holding a second ``=``,
so a range has none: ``> a``, ``< b``, an interval ``in (a, b)``, ``in [a, b]``,
``in (a, b]``, ``in [a, b)`` whose ends may be ``-inf`` or ``inf`` (``in [0, inf)`` is
"at least 0"), or the allowed values ``in {x, y, z}``. For a list the range applies to each
element, and ``, distinct`` after it (or ``distinct`` alone) refuses a list that holds a value
twice (a swept list: each value runs once, under its own name). What is ours is only the check
of a value against the type and range, by name:

    params = replication.check_parameters(NOTEBOOK, globals())

in the cell right after the parameters cell stops the notebook before any long computation
with a ``ValueError`` naming the parameter, the rule and the value
(``"replications must be an int in [2, inf), got 1"``); ``python -m replication.run`` refuses
an unknown name or a bad value the same way before it starts a kernel.

Examples
--------
>>> specs = parse_parameters_cell('''
... replications: int = 8          # in [2, inf): independent runs for each claim
... kappas: list[float] = [0.5, 1.0, 2.0]  # > 0: values of kappa swept
... ''')
>>> [s.name for s in specs], specs[0].rule
(['replications', 'kappas'], 'int in [2, inf)')
>>> specs[1].validate([1, 2.5])
(1.0, 2.5)
>>> specs[0].validate(1)
Traceback (most recent call last):
    ...
ValueError: replications must be an int in [2, inf), got 1
>>> parse_parameters_cell('kappas: list[float] = [1.0, 2.0]  # > 0, distinct: kappa swept'
...                       )[0].validate([1, 2, 1.0])
Traceback (most recent call last):
    ...
ValueError: kappas must be a list[float] > 0, distinct, got [1.0, 2.0, 1.0] (1.0 twice)
"""

from __future__ import annotations

import ast
import json
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass, make_dataclass
from pathlib import Path
from typing import ClassVar

from .records import project_root

__all__ = ["PARAMETER_TYPES", "ParameterSpec", "ParameterValues", "check_parameters",
           "format_value", "parse_parameters_cell", "read_parameter_specs"]

#: The types a parameter may declare (its annotation in the cell).
PARAMETER_TYPES = ("int", "float", "bool", "str", "list[int]", "list[float]", "list[str]")
_ONE_SIDED = re.compile(r"([<>])\s*(\S+)")
_INTERVAL = re.compile(r"in\s*([\[(])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\])])")
_DISTINCT = re.compile(r"(.+?)\s*,\s*distinct", re.S)


def format_value(value) -> str:
    """A value as a parameters cell writes it: strings in double quotes, lists in brackets.

    >>> format_value(("a", 1.5)), format_value(1e-05)
    ('["a", 1.5]', '1e-05')
    """
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return repr(value)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: name, default, type, range and help, as the parameters cell writes them.

    ``low``/``high`` bound a number (each element of a list), ``None`` if unbounded; the
    ``*_inclusive`` flags say whether the bound itself is allowed. ``choices`` are the allowed
    values in the order written, exclusive with bounds. ``distinct`` (lists only) refuses a
    value that holds an element twice. The default is normalised by :meth:`validate` (a tuple
    for a list, so the spec stays immutable).

    Raises
    ------
    ValueError
        If the type is unknown, a bool or str is bounded, the range is empty, a choice is not
        of the type, or the default breaks the rule.
    """

    name: str
    default: object
    type: str
    meaning: str = ""
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = False
    high_inclusive: bool = False
    choices: tuple | None = None
    distinct: bool = False

    def __post_init__(self):
        if self.type not in PARAMETER_TYPES:
            raise ValueError(f"{self.name}: type must be one of {', '.join(PARAMETER_TYPES)}, "
                             f"got {self.type!r}")
        if self.distinct and not self.is_list:
            raise ValueError(f"{self.name}: only a list can be distinct, got a {self.type}")
        bounded = self.low is not None or self.high is not None
        if bounded and self.element_type not in ("int", "float"):
            raise ValueError(f"{self.name}: a {self.type} takes no bounds, only allowed values")
        if bounded and self.choices is not None:
            raise ValueError(f"{self.name}: give either bounds or allowed values, not both")
        if self.low is not None and self.high is not None and (self.low > self.high or (
                self.low == self.high and not (self.low_inclusive and self.high_inclusive))):
            raise ValueError(f"{self.name}: the range {self._range_text()} is empty")
        if self.choices is not None:
            choices = tuple(self._element(c, c) for c in self.choices)
            if len(set(choices)) != len(choices) or self.element_type == "bool":
                raise ValueError(f"{self.name}: allowed values must be distinct and not bool, "
                                 f"got {format_value(choices)}")
            object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "default", self.validate(self.default))

    @property
    def is_list(self) -> bool:
        return self.type.startswith("list[")

    @property
    def element_type(self) -> str:
        """The type of the value, or of each element for a list."""
        return self.type.removeprefix("list[").removesuffix("]")

    def _range_text(self) -> str:
        """The range as the cell writes it, with ``, distinct`` (or ``distinct`` alone)."""
        bounds = self._bounds_text()
        if not self.distinct:
            return bounds
        return f"{bounds}, distinct" if bounds else "distinct"

    def _bounds_text(self) -> str:
        if self.choices is not None:
            return "in {" + ", ".join(format_value(c) for c in self.choices) + "}"
        if self.low is None and self.high is None:
            return ""
        if self.high is None and not self.low_inclusive:
            return f"> {self.low!r}"
        if self.low is None and not self.high_inclusive:
            return f"< {self.high!r}"
        low = "-inf" if self.low is None else repr(self.low)
        high = "inf" if self.high is None else repr(self.high)
        return (f"in {'[' if self.low_inclusive else '('}{low}, {high}"
                f"{']' if self.high_inclusive else ')'}")

    @property
    def rule(self) -> str:
        """The type and range, e.g. ``"list[float] > 0, distinct"`` or ``"int in [2, inf)"``."""
        text = self._range_text()
        return f"{self.type}, {text}" if text == "distinct" else f"{self.type} {text}".rstrip()

    def _fail(self, value, detail: str = ""):
        article = "an" if self.type == "int" else "a"
        raise ValueError(f"{self.name} must be {article} {self.rule}, got {format_value(value)}"
                         f"{detail}")

    def _element(self, element, value):
        """One element (or the value itself) converted to the element type, else raise."""
        kind = self.element_type
        if kind == "int" and _is_int(element):
            return int(element)
        if kind == "float" and _is_real(element):
            return float(element)
        if (kind == "bool" and isinstance(element, bool)) or (
                kind == "str" and isinstance(element, str)):
            return element
        self._fail(value, "" if element is value else f" (element {format_value(element)})")

    def _in_range(self, x) -> bool:
        if self.choices is not None:
            return x in self.choices
        if self.low is not None and not (x >= self.low if self.low_inclusive else x > self.low):
            return False
        return self.high is None or (x <= self.high if self.high_inclusive else x < self.high)

    def validate(self, value):
        """The value checked against the type and range, normalised.

        An ``int`` is accepted for a ``float`` (and converted), only a true integer for an
        ``int`` (not ``2.0``), and a ``bool`` is never a number. A list may come as a list or
        a tuple and is returned as a tuple. NaN lies in no range.

        Raises
        ------
        ValueError
            Naming the parameter, the rule and the value:
            ``"replications must be an int in [2, inf), got 1"``.
        """
        if self.is_list and not isinstance(value, (list, tuple)):
            self._fail(value)
        elements = (tuple(self._element(e, value) for e in value) if self.is_list
                    else (self._element(value, value),))
        for element in elements:
            if not self._in_range(element):
                self._fail(value, f" (element {format_value(element)})" if self.is_list else "")
        if self.distinct:
            twice = [e for k, e in enumerate(elements) if e in elements[:k]]
            if twice:
                self._fail(elements, " (" + ", ".join(f"{format_value(e)} twice"
                                                      for e in dict.fromkeys(twice)) + ")")
        return elements if self.is_list else elements[0]

    def parse(self, text: str):
        """A value given as text (on a command line): a Python literal, then :meth:`validate`.

        A ``str`` parameter takes text that is not a literal string as the string itself,
        so ``-p base_law deterministic`` needs no quotes.

        >>> ParameterSpec("mu", 1.0, "float", low=0).parse("fast")
        Traceback (most recent call last):
            ...
        ValueError: mu must be a float > 0 written as a Python literal, got 'fast'
        """
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if self.type != "str":
                raise ValueError(f"{self.name} must be a {self.rule} written as a Python "
                                 f"literal, got {text!r}") from None
            value = text
        return self.validate(text if self.type == "str" and not isinstance(value, str)
                             else value)

    def describe(self) -> str:
        """``rule (default D): meaning``, one line for a help text."""
        return f"{self.rule} (default {format_value(self.default)}): {self.meaning}"


def _number(token: str) -> float | None:
    """A bound: a number, or ``None`` for an infinite end."""
    if token.strip() in ("inf", "-inf", "+inf"):
        return None
    value = ast.literal_eval(token)
    if not (_is_real(value) and math.isfinite(value)):
        raise ValueError(token)
    return value


def _parse_range(text: str) -> dict:
    """Keyword arguments of :class:`ParameterSpec` for a range written in a help text, with
    ``, distinct`` after it, or ``distinct`` alone."""
    if text == "distinct":
        return {"distinct": True}
    if m := _DISTINCT.fullmatch(text):
        return {**_parse_range(m.group(1)), "distinct": True}
    if m := _ONE_SIDED.fullmatch(text):
        side = "low" if m.group(1) == ">" else "high"
        return {side: _number(m.group(2))}
    if m := _INTERVAL.fullmatch(text):
        low, high = _number(m.group(2)), _number(m.group(3))
        return {"low": low, "high": high, "low_inclusive": m.group(1) == "[" and low is not None,
                "high_inclusive": m.group(4) == "]" and high is not None}
    if re.fullmatch(r"in\s*\{.*\}", text, re.S):
        # a list keeps the written order (a set literal would not)
        return {"choices": tuple(ast.literal_eval("[" + text.split("{", 1)[1][:-1] + "]"))}
    raise ValueError(text)


def _spec(name: str, annotation: str, default: str, help_: str) -> ParameterSpec:
    """A spec from what papermill read off one line: the range is the help's start up to the
    first colon after which it parses (a colon may sit inside a quoted allowed value)."""
    try:
        value = ast.literal_eval(default)
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"{name}: the default must be a Python literal, got {default!r}")
    if re.match(r"(in\s*[\[({]|[<>]|distinct\b)", help_):
        for at in (i for i, ch in enumerate(help_) if ch == ":"):
            try:
                bounds = _parse_range(help_[:at].strip())
            except (ValueError, SyntaxError):
                continue
            return ParameterSpec(name, value, annotation, help_[at + 1:].strip(), **bounds)
        raise ValueError(f"{name}: the help starts like a range but none parses before a "
                         f"colon (> a, < b, in (a, b], in [a, inf), in {{x, y}}, any of them "
                         f"followed by ', distinct'): {help_!r}")
    return ParameterSpec(name, value, annotation, help_)


def _specs_of_cell(cell, where: str) -> tuple[ParameterSpec, ...]:
    """Every assignment of a ``parameters`` cell, read by papermill's Python translator."""
    from papermill.translators import PythonTranslator

    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    found = {p.name: p for p in PythonTranslator.inspect({"source": source})}
    try:
        body = ast.parse(source).body
    except SyntaxError as exc:
        raise ValueError(f"{where}: the parameters cell is not Python: {exc}") from None
    specs = []
    for stmt in body:
        line = source.splitlines()[stmt.lineno - 1].strip()
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        param = found.get(target.id) if isinstance(target, ast.Name) else None
        if param is None or param.inferred_type_name == "None":
            raise ValueError(f"{where}: line {stmt.lineno} is not `name: type = default  # help` "
                             f"(one name, an annotation, no second '=' in the help): {line!r}")
        if any(s.name == param.name for s in specs):
            raise ValueError(f"{where}: line {stmt.lineno} sets {param.name} a second time")
        try:
            specs.append(_spec(param.name, param.inferred_type_name, param.default, param.help))
        except ValueError as exc:
            raise ValueError(f"{where}: line {stmt.lineno}: {exc}") from None
    return tuple(specs)


def parse_parameters_cell(source: str) -> tuple[ParameterSpec, ...]:
    """The specs of a ``parameters`` cell's source, in the order of the cell.

    Raises
    ------
    ValueError
        For a line papermill cannot read (no annotation, a second ``=``, more than one name),
        a range that does not parse or a default that breaks its own rule; the message gives
        the line.
    """
    return _specs_of_cell({"source": source}, "parameters cell")


def read_parameter_specs(notebook_path) -> tuple[ParameterSpec, ...]:
    """The specs of the first cell tagged ``parameters`` of an ``.ipynb`` file (the cell
    papermill parameterises).

    Raises
    ------
    ValueError
        If the notebook has no such cell or the cell is off the grammar (naming the notebook).
    """
    path = Path(notebook_path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])),
                None)
    if cell is None:
        raise ValueError(f"{path.name}: no cell tagged 'parameters'")
    return _specs_of_cell(cell, f"{path.name}, parameters cell")


class ParameterValues:
    """Base of every notebook's parameters class: a frozen dataclass with one field per parameter.

    ``params.seed`` (or ``params["seed"]``) is a checked, normalised value that cannot be
    assigned; ``params.specs`` are the specs it was checked against; ``params.is_default`` says
    whether every value is the default, ``params.changed`` lists the others.
    """

    __slots__ = ()
    specs: ClassVar[tuple[ParameterSpec, ...]] = ()

    def __getitem__(self, name):
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self):
        return iter(spec.name for spec in self.specs)

    def __len__(self):
        return len(self.specs)

    def __repr__(self):
        values = ", ".join(f"{s.name}={format_value(getattr(self, s.name))}" for s in self.specs)
        return f"{type(self).__name__}({values})"

    def asdict(self) -> dict:
        """Every parameter's value, in the order of the cell."""
        return {spec.name: getattr(self, spec.name) for spec in self.specs}

    @property
    def is_default(self) -> bool:
        """Whether every value equals its default."""
        return not self.changed

    @property
    def changed(self) -> dict:
        """The parameters whose value differs from the default, in the order of the cell."""
        return {spec.name: getattr(self, spec.name) for spec in self.specs
                if getattr(self, spec.name) != spec.default}


def check_parameters(notebook_name: str, namespace: Mapping) -> ParameterValues:
    """A notebook's parameter values (what papermill injected) checked against its cell.

    Called in the cell right after the parameters cell:
    ``params = replication.check_parameters(NOTEBOOK, globals())``; the specs are read from
    ``notebooks/<notebook_name>.ipynb`` under :func:`replication.records.project_root`.

    Returns
    -------
    ParameterValues
        An instance of the notebook's frozen dataclass (``01_ephemeral_crawling`` gives
        ``EphemeralCrawlingParameters``), every value normalised, lists as tuples.

    Raises
    ------
    ValueError
        If a parameter is missing from ``namespace`` or breaks its rule, naming it.
    """
    specs = read_parameter_specs(project_root() / "notebooks" / f"{notebook_name}.ipynb")
    missing = [s.name for s in specs if s.name not in namespace]
    if missing:
        raise ValueError(f"{missing[0]} is not defined: run the parameters cell of "
                         f"{notebook_name} first")
    stem = re.sub(r"^\d+_", "", notebook_name)
    cls = make_dataclass(
        "".join(part.capitalize() for part in stem.split("_") if part) + "Parameters",
        [(s.name, object) for s in specs], bases=(ParameterValues,), frozen=True, slots=True,
        namespace={"specs": specs, "__repr__": ParameterValues.__repr__,
                   "__module__": __name__})
    return cls(**{s.name: s.validate(namespace[s.name]) for s in specs})
