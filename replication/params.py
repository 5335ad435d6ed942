"""A notebook's parameters: specs read from its ``parameters`` cell, values checked by name.

Every notebook has one cell tagged ``parameters`` (papermill) with exactly one parameter per
line, in this grammar::

    name = <python literal default>  # <type> [<range>]: <meaning>

``<type>`` is one of ``int``, ``float``, ``bool``, ``str``, ``list of int``, ``list of float``,
``list of str``. ``<range>`` is optional: ``> a``, ``>= a``, ``< b``, ``<= b``, ``in (a, b)``,
``in [a, b]``, ``in (a, b]``, ``in [a, b)`` with numbers ``a``, ``b``, or ``in {x, y, z}`` (the
allowed values, as literals). For a list the range applies to each element. Comment lines and
blank lines are allowed in the cell; nothing else is (no tuple assignment ``a, b = 1, 2``, which
papermill cannot set, and no statement spanning lines).

The cell right after the parameters cell checks what papermill injected::

    params = replication.check_parameters(NOTEBOOK, globals())

so a bad value stops the notebook before any long computation, with a ``ValueError`` naming
the parameter, the value and the rule (``"replications must be an int >= 2, got 1"``).
``python -m replication.run`` reads the same specs to list the parameters (``--help``) and to
refuse an unknown name or a bad value before it starts a kernel.

Examples
--------
>>> specs = parse_parameters_cell('''
... # Parameters (papermill). One per line: name = default  # type range: meaning
... replications = 8          # int >= 2: independent runs for each claim
... kappas = [0.5, 1.0, 2.0]  # list of float > 0: values of kappa swept
... ''')
>>> [s.name for s in specs]
['replications', 'kappas']
>>> specs[0].rule
'int >= 2'
>>> specs[1].validate([1, 2.5])
(1.0, 2.5)
>>> specs[0].validate(1)
Traceback (most recent call last):
    ...
ValueError: replications must be an int >= 2, got 1
"""

from __future__ import annotations

import ast
import io
import json
import math
import numbers
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, make_dataclass
from pathlib import Path
from typing import ClassVar

from .records import project_root

__all__ = [
    "PARAMETER_TYPES",
    "ParameterSpec",
    "ParameterValues",
    "parameters_class",
    "parse_parameters_cell",
    "read_parameter_specs",
    "check_parameters",
    "is_default",
    "format_value",
]

#: The types a parameter may declare in its comment.
PARAMETER_TYPES = ("int", "float", "bool", "str", "list of int", "list of float", "list of str")

_GRAMMAR = "name = <literal>  # <type> [<range>]: <meaning>"
_TYPE_RE = re.compile(r"(list of (?:int|float|str)|int|float|bool|str)(?![\w])")
_BOUND_RE = re.compile(r"(>=|<=|>|<)\s*(\S+)")
_INTERVAL_RE = re.compile(r"in\s*([\[(])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\])])")


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
    """One parameter of a notebook: its name, default, type, allowed values and meaning.

    Parameters
    ----------
    name : str
        The variable name in the parameters cell.
    default : object
        The default value, normalised by :meth:`validate` (a tuple for a list type, so that the
        spec stays immutable).
    type : str
        One of :data:`PARAMETER_TYPES`.
    meaning : str
        What the parameter is, as the cell's comment says.
    low, high : float or None
        Bounds of a numeric parameter (of each element for a list); ``None`` if unbounded.
    low_inclusive, high_inclusive : bool
        Whether the bound itself is allowed (``>=``, ``<=``, ``[`` and ``]``).
    choices : tuple or None
        The allowed values (``in {x, y, z}``), in the order written; ``None`` if any value of
        the type is allowed. Exclusive with bounds.

    Raises
    ------
    ValueError
        If the type is unknown, a bound is given for a ``bool`` or ``str``, the bounds are
        empty or not numbers, a choice is not of the type, or the default breaks the rule.
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

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        if self.type not in PARAMETER_TYPES:
            raise ValueError(f"{self.name}: type must be one of {', '.join(PARAMETER_TYPES)}, "
                             f"got {self.type!r}")
        bounded = self.low is not None or self.high is not None
        if bounded and self.element_type not in ("int", "float"):
            raise ValueError(f"{self.name}: a {self.type} takes no bounds, only a set of "
                             f"allowed values")
        for label, bound in (("low", self.low), ("high", self.high)):
            if bound is not None and not (_is_real(bound) and math.isfinite(bound)):
                raise ValueError(f"{self.name}: {label} bound must be a finite number, "
                                 f"got {bound!r}")
        if self.low is not None and self.high is not None and (
                self.low > self.high or (self.low == self.high and not (
                    self.low_inclusive and self.high_inclusive))):
            raise ValueError(f"{self.name}: the range {self._range_text()} is empty")
        if self.choices is not None:
            if bounded:
                raise ValueError(f"{self.name}: give either bounds or a set of values, not both")
            if self.element_type == "bool" or not self.choices:
                raise ValueError(f"{self.name}: a set of allowed values must be non-empty and "
                                 f"is not for a bool, got {self.choices!r}")
            choices = tuple(self._check_type(c, c) for c in self.choices)
            if len(set(choices)) != len(choices):
                raise ValueError(f"{self.name}: the allowed values {format_value(choices)} "
                                 f"repeat one")
            object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "default", self.validate(self.default))

    @property
    def is_list(self) -> bool:
        """Whether the parameter is a list (``list of ...``)."""
        return self.type.startswith("list of ")

    @property
    def element_type(self) -> str:
        """The type of the value, or of each element for a list."""
        return self.type.removeprefix("list of ")

    def _range_text(self) -> str:
        if self.choices is not None:
            return "in {" + ", ".join(format_value(c) for c in self.choices) + "}"
        if self.low is not None and self.high is not None:
            return (f"in {'[' if self.low_inclusive else '('}{self.low!r}, {self.high!r}"
                    f"{']' if self.high_inclusive else ')'}")
        if self.low is not None:
            return f"{'>=' if self.low_inclusive else '>'} {self.low!r}"
        if self.high is not None:
            return f"{'<=' if self.high_inclusive else '<'} {self.high!r}"
        return ""

    @property
    def rule(self) -> str:
        """The type and range as the cell writes them, e.g. ``"list of float > 0"``."""
        return f"{self.type} {self._range_text()}".rstrip()

    def _fail(self, value, detail: str = ""):
        article = "an" if self.type == "int" else "a"
        raise ValueError(f"{self.name} must be {article} {self.rule}, got {format_value(value)}"
                         f"{detail}")

    def _check_type(self, element, value):
        """One element (or the value itself) converted to the element type, else raise."""
        kind = self.element_type
        if kind == "int" and _is_int(element):
            return int(element)
        if kind == "float" and _is_real(element):
            return float(element)
        if kind == "bool" and isinstance(element, bool):
            return element
        if kind == "str" and isinstance(element, str):
            return element
        self._fail(value, "" if element is value else f" (element {format_value(element)})")

    def _in_range(self, element) -> bool:
        if self.choices is not None:
            return element in self.choices
        if self.low is not None and not (element >= self.low if self.low_inclusive
                                         else element > self.low):
            return False
        if self.high is not None and not (element <= self.high if self.high_inclusive
                                          else element < self.high):
            return False
        return True

    def validate(self, value):
        """Check a value against the type and range and return it normalised.

        An ``int`` is accepted for a ``float`` (and converted); only a true integer is accepted
        for an ``int`` (not ``2.0``), and a ``bool`` is never a number. A list may be given as a
        list or a tuple and is returned as a tuple. NaN lies in no range.

        Raises
        ------
        ValueError
            Naming the parameter, the rule and the value:
            ``"replications must be an int >= 2, got 1"``.
        """
        if self.is_list:
            if not isinstance(value, (list, tuple)):
                self._fail(value)
            elements = tuple(self._check_type(e, value) for e in value)
        else:
            elements = (self._check_type(value, value),)
        for element in elements:
            if not self._in_range(element):
                self._fail(value, f" (element {format_value(element)})" if self.is_list else "")
        return elements if self.is_list else elements[0]

    def parse(self, text: str):
        """A value given as text (on a command line): a Python literal, then :meth:`validate`.

        For a ``str`` parameter, text that is not a literal string is taken as the string
        itself, so that ``-p base_law deterministic`` needs no quotes.

        Raises
        ------
        ValueError
            If the text is not a Python literal (naming the parameter), or the value fails
            :meth:`validate`.

        Examples
        --------
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
        if self.type == "str" and not isinstance(value, str):
            value = text
        return self.validate(value)

    def describe(self) -> str:
        """``rule (default D): meaning``, one line for a help text."""
        return f"{self.rule} (default {format_value(self.default)}): {self.meaning}"


class ParameterValues:
    """Base of every notebook's parameters class: a frozen dataclass with one field per parameter.

    :func:`check_parameters` builds the class from the notebook's parameters cell
    (:func:`parameters_class`), so ``params.seed`` is a checked, normalised value that cannot be
    assigned; ``params["seed"]`` reads the same field. ``params.specs`` are the specs the values
    were checked against, ``params.is_default`` says whether every value is the default and
    ``params.changed`` lists the others.
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
        return is_default(self.asdict(), self.specs)

    @property
    def changed(self) -> dict:
        """The parameters whose value differs from the default, in the order of the cell."""
        return {spec.name: getattr(self, spec.name) for spec in self.specs
                if getattr(self, spec.name) != spec.default}


_PYTHON_TYPES = {"int": int, "float": float, "bool": bool, "str": str,
                 "list of int": tuple[int, ...], "list of float": tuple[float, ...],
                 "list of str": tuple[str, ...]}


def parameters_class(notebook_name: str, specs) -> type:
    """The frozen dataclass of a notebook's parameters, one typed field per spec.

    ``"01_ephemeral_crawling"`` gives ``EphemeralCrawlingParameters``; building an instance
    validates every value against its spec (``ValueError`` naming the parameter), lists come
    in as tuples, and assigning a field raises ``dataclasses.FrozenInstanceError``: the values
    are changed in the parameters cell or with papermill, never in the notebook's body.

    Examples
    --------
    >>> cls = parameters_class("99_demo", parse_parameters_cell("mu = 1.0  # float > 0: rate"))
    >>> cls(mu=2)
    DemoParameters(mu=2.0)
    >>> cls(mu=0)
    Traceback (most recent call last):
        ...
    ValueError: mu must be a float > 0, got 0
    """
    specs = tuple(specs)
    stem = re.sub(r"^\d+_", "", notebook_name)
    name = "".join(part.capitalize() for part in stem.split("_") if part) + "Parameters"

    def __post_init__(self):
        for spec in specs:
            object.__setattr__(self, spec.name, spec.validate(getattr(self, spec.name)))

    fields = [(spec.name, _PYTHON_TYPES[spec.type]) for spec in specs]
    return make_dataclass(name, fields, bases=(ParameterValues,), frozen=True, slots=True,
                          namespace={"specs": specs, "__post_init__": __post_init__,
                                     "__repr__": ParameterValues.__repr__,
                                     "__module__": __name__})


def _parse_range(text: str, type_: str) -> dict:
    """Keyword arguments of :class:`ParameterSpec` for a range text ('' for none)."""
    def number(token):
        value = ast.literal_eval(token)
        if not _is_real(value):
            raise ValueError(token)
        return value

    if not text:
        return {}
    if m := _BOUND_RE.fullmatch(text):
        op, value = m.group(1), number(m.group(2))
        side = "low" if op.startswith(">") else "high"
        return {side: value, f"{side}_inclusive": op.endswith("=")}
    if m := _INTERVAL_RE.fullmatch(text):
        return {"low": number(m.group(2)), "high": number(m.group(3)),
                "low_inclusive": m.group(1) == "[", "high_inclusive": m.group(4) == "]"}
    if text.startswith("in") and text[2:].strip().startswith("{") and text.endswith("}"):
        # a list keeps the written order (a set literal would not)
        choices = ast.literal_eval("[" + text[2:].strip()[1:-1] + "]")
        return {"choices": tuple(choices)}
    raise ValueError(text)


def _parse_comment(comment: str) -> dict:
    """``# <type> [<range>]: <meaning>`` as keyword arguments of :class:`ParameterSpec`."""
    body = comment.lstrip("#").strip()
    m = _TYPE_RE.match(body)
    if not m:
        raise ValueError(f"the comment must start with a type ({', '.join(PARAMETER_TYPES)})")
    rest = body[m.end():]
    # The range ends at the first colon after which the range parses: a colon may sit inside a
    # quoted allowed value.
    for at in (i for i, ch in enumerate(rest) if ch == ":"):
        try:
            bounds = _parse_range(rest[:at].strip(), m.group(1))
        except (ValueError, SyntaxError):
            continue
        meaning = rest[at + 1:].strip()
        if not meaning:
            raise ValueError("the meaning after the colon is empty")
        return {"type": m.group(1), "meaning": meaning, **bounds}
    raise ValueError("after the type, expected an optional range (> a, >= a, < b, <= b, "
                     "in (a, b), in [a, b], in {x, y}) then a colon and the meaning")


def _parse_line(line: str) -> ParameterSpec:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        raise ValueError("the statement must fit on one line") from None
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    if comment is None:
        raise ValueError("no comment with the type and meaning")
    code = line.strip()[:comment.start[1]].strip()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        raise ValueError("not a Python assignment") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign):
        raise ValueError("one assignment `name = value` per line")
    stmt = tree.body[0]
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        raise ValueError("one name per line (papermill cannot set `a, b = 1, 2` or `a = b = 1`)")
    try:
        default = ast.literal_eval(stmt.value)
    except (ValueError, SyntaxError, TypeError):
        raise ValueError("the default must be a Python literal") from None
    return ParameterSpec(name=stmt.targets[0].id, default=default,
                         **_parse_comment(comment.string))


def parse_parameters_cell(source: str) -> tuple[ParameterSpec, ...]:
    """The specs of a ``parameters`` cell, in the order of the cell.

    Parameters
    ----------
    source : str
        The cell's source (grammar in the module docstring).

    Returns
    -------
    tuple of ParameterSpec

    Raises
    ------
    ValueError
        For a line that does not follow the grammar, whose default breaks its own rule, or that
        repeats a name; the message gives the line number and the line.
    """
    specs: dict[str, ParameterSpec] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            spec = _parse_line(line)
            if spec.name in specs:
                raise ValueError(f"{spec.name} is set twice")
        except ValueError as exc:
            raise ValueError(f"parameters cell, line {number}: {exc}: {line.strip()!r} "
                             f"(expected {_GRAMMAR})") from None
        specs[spec.name] = spec
    return tuple(specs.values())


def read_parameter_specs(notebook_path) -> tuple[ParameterSpec, ...]:
    """The specs of the cell tagged ``parameters`` of an ``.ipynb`` file.

    Raises
    ------
    ValueError
        If the notebook has no cell, or more than one, tagged ``parameters``, or the cell does
        not follow the grammar (the message names the notebook).
    """
    path = Path(notebook_path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1:
        raise ValueError(f"{path.name}: expected one cell tagged 'parameters', "
                         f"found {len(tagged)}")
    source = tagged[0]["source"]
    try:
        return parse_parameters_cell(source if isinstance(source, str) else "".join(source))
    except ValueError as exc:
        raise ValueError(f"{path.name}: {exc}") from None


def check_parameters(notebook_name: str, namespace: Mapping) -> ParameterValues:
    """Check a notebook's parameter values (what papermill injected) against its specs.

    Called in the cell right after the parameters cell:
    ``params = replication.check_parameters(NOTEBOOK, globals())``.

    Parameters
    ----------
    notebook_name : str
        ``NN_name``; the specs are read from ``notebooks/NN_name.ipynb`` under
        :func:`replication.records.project_root`.
    namespace : mapping
        Where the parameters live (the notebook's ``globals()``).

    Returns
    -------
    ParameterValues
        An instance of the notebook's frozen dataclass (:func:`parameters_class`): every
        parameter's value, normalised, in the order of the cell.

    Raises
    ------
    ValueError
        If a parameter is missing from ``namespace`` or its value breaks its rule; the message
        names the parameter and the value.
    """
    specs = read_parameter_specs(project_root() / "notebooks" / f"{notebook_name}.ipynb")
    for spec in specs:
        if spec.name not in namespace:
            raise ValueError(f"{spec.name} is not defined: run the parameters cell of "
                             f"{notebook_name} first")
    cls = parameters_class(notebook_name, specs)
    return cls(**{spec.name: namespace[spec.name] for spec in specs})


def is_default(values: Mapping, specs) -> bool:
    """Whether every value in ``values`` equals its spec's default (compared normalised).

    A parameter absent from ``values`` counts as default, so a mapping of command-line
    parameters can be passed as is; names without a spec are ignored, so a notebook's
    ``globals()`` can be passed too.

    Examples
    --------
    >>> spec = ParameterSpec("mu", 1.0, "float", low=0)
    >>> is_default({"mu": 1}, [spec]), is_default({"mu": 0.5}, [spec]), is_default({}, [spec])
    (True, False, True)
    """
    return all(s.validate(values[s.name]) == s.default for s in specs if s.name in values)
