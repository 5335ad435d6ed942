"""Section IV: the recursions as printed, the Sherman-Morrison update of ``B^-1(n)`` and the
increment of ``A(n)``, under every reading of their typos.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib.learning import running_average, step_sizes

__all__ = ["sherman_morrison_check", "sherman_morrison_evidence", "printed_a_term_readings",
           "printed_a_term_shapes", "a_term_shapes_text", "a_term_evidence"]


@dataclass(frozen=True)
class ShermanMorrisonReading:
    """One reading of Section IV's pair of lines ``B(n)`` (its step) and ``B^-1(n)`` (its
    factors).

    Attributes
    ----------
    name : str
        Which printed line the reading keeps and which it corrects.
    step, factors : str
        The step of the average ``B(n)`` and the two factors of the inverse, as written.
    error : float
        ``max |B^-1 B - I|`` after the updates.
    printed_factors : bool
        Whether the inverse uses the printed factors ``n/(n-1)`` and ``n-1``.
    """

    name: str
    step: str
    factors: str
    error: float
    printed_factors: bool

    @property
    def inverts(self) -> bool:
        """The recursion inverts ``B(n)``: an error below 1e-8 (rounding stays below 1e-12)."""
        return bool(self.error < 1e-8)

    @property
    def error_text(self) -> str:
        """The error as reported: a bound when it is rounding (its last digits depend on the
        BLAS kernel, so the digits themselves are not a result)."""
        return "below 1e-12 (rounding)" if self.error < 1e-12 else f"{self.error:.1e}"


@dataclass(frozen=True)
class ShermanMorrisonCheck:
    """How well the Sherman-Morrison recursion for ``B^-1(n)`` inverts ``B(n)`` (Sec. IV), under
    every reading of the printed pair of lines.

    Attributes
    ----------
    readings : tuple of ShermanMorrisonReading
        The printed step ``1/(n+1)`` with the printed factors; the step ``1/n`` with the printed
        factors (the step line off by one); the step ``1/(n+1)`` with the factors ``(n+1)/n``
        and ``n`` (the factor line off by one); the example's ``b(n)`` with the printed factors
        and with ``1/(1-b)``, ``(1-b)/b``.
    n_updates, size : int
    """

    readings: tuple
    n_updates: int
    size: int

    def rows(self) -> list:
        """One dict per reading (reading, step, factors, error): the notebook's table."""
        return [{"reading": r.name, "step": r.step, "factors": r.factors,
                 f"max|B^-1 B - I| after {self.n_updates} updates": r.error_text}
                for r in self.readings]


def _sm_error(step_of, factors_of, n_updates: int, size: int, seed: int) -> float:
    """max |B^-1 B - I| after ``n_updates`` updates ``n = 2, 3, ...`` of ``B`` with step
    ``step_of(n)`` and of ``B^-1`` by Sherman-Morrison with ``(scale, shift) = factors_of(n)``,
    from ``B(1) = B^-1(1) = I``:
    ``B^-1(n) = scale (B^-1 - B^-1 v v^T B^-1 / (shift + v^T B^-1 v))``, with ``B^-1(n-1)`` on
    the right-hand side (the printed ``B^-1(n)`` there is the unknown)."""
    rng_check = np.random.default_rng(seed)
    B, P = np.eye(size), np.eye(size)
    for n in range(2, n_updates + 2):
        v = rng_check.normal(size=size)
        B = running_average(B, np.outer(v, v), step_of(n))
        scale, shift = factors_of(n)
        Pv = P @ v
        P = scale * (P - np.outer(Pv, Pv) / (shift + v @ Pv))
    return float(np.abs(P @ B - np.eye(size)).max())


def sherman_morrison_check(step_constant: float, *, n_updates: int = 49, size: int = 5,
                           seed: int = 0) -> ShermanMorrisonCheck:
    """Run the Sherman-Morrison update of ``B^-1`` (Sec. IV) under every reading of its two
    lines.

    ``B(n) = B(n-1) + b(n)(phi_n phi_n^T - B(n-1))`` on random ``phi_n`` (standard normal, of
    length ``size``, from ``seed``), ``n = 2, ..., n_updates + 1`` from ``B(1) = B^-1(1) = I``
    (so that the printed factors ``n/(n-1)``, ``n-1`` are defined). The exact update for a step
    ``b`` has the factors ``1/(1-b)`` and ``(1-b)/b``
    (:func:`~whittle_lib.learning.sherman_morrison_average`): ``n/(n-1)``, ``n-1`` for
    ``b = 1/n``, and ``(n+1)/n``, ``n`` for the printed ``b = 1/(n+1)``. The printed pair of
    lines is off by one; which line carries the typo is the reader's choice, and both
    corrections invert ``B(n)``.

    Parameters
    ----------
    step_constant : float
        ``c`` of the example's step sizes ``a(n), b(n)`` (:func:`~whittle_lib.learning.step_sizes`).
    n_updates, size, seed : int

    Examples
    --------
    >>> chk = sherman_morrison_check(0.5)
    >>> [r.inverts for r in chk.readings]
    [False, True, True, False, True]
    """
    if not 0 < step_constant < 1:
        raise ValueError(f"step_constant must lie in (0, 1), got {step_constant!r}")
    _, b_ex = step_sizes(np.arange(n_updates + 2), step_constant)

    def printed(n):
        return n / (n - 1), n - 1.0

    def exact(b):
        return 1.0 / (1.0 - b), (1.0 - b) / b

    example = f"b(n), c = {step_constant:g}"
    spec = [
        ("as printed (both lines)", "1/(n+1)", "n/(n-1), n-1", lambda n: 1.0 / (n + 1),
         printed, True),
        ("the step line off by one (B(n) the mean of n outer products)", "1/n", "n/(n-1), n-1",
         lambda n: 1.0 / n, printed, True),
        ("the factor line off by one", "1/(n+1)", "(n+1)/n, n", lambda n: 1.0 / (n + 1),
         lambda n: exact(1.0 / (n + 1)), False),
        ("the Sec. IV example's step, printed factors", example, "n/(n-1), n-1",
         lambda n: float(b_ex[n]), printed, True),
        ("the Sec. IV example's step, its exact factors", example, "1/(1-b), (1-b)/b",
         lambda n: float(b_ex[n]), lambda n: exact(float(b_ex[n])), False),
    ]
    readings = tuple(
        ShermanMorrisonReading(name, step, factors,
                               _sm_error(step_of, factors_of, n_updates, size, seed), keeps)
        for name, step, factors, step_of, factors_of, keeps in spec)
    return ShermanMorrisonCheck(readings, int(n_updates), int(size))


def sherman_morrison_evidence(sm: ShermanMorrisonCheck) -> str:
    """The evidence on "the printed recursion for B^-1(n) inverts B(n)" (Sec. IV).

    The claim is judged under the readings that keep the printed factors (the step as printed,
    the step line off by one, the example's ``b(n)``): an error below 1e-8 inverts. It is a typo
    with a correction, which this note names with the readings that fix it.
    """
    fixed = [r for r in sm.readings if not r.printed_factors]
    as_printed = sm.readings[0]
    return (
        "typo: an off-by-one between two printed lines. The printed factors n/(n-1) and n-1 are "
        "exact for the averaging step 1/n and wrong for the printed 1/(n+1); which line is wrong "
        "is the reader's choice, and either correction inverts B(n): "
        + "; ".join(f"{r.name} (step {r.step}, factors {r.factors}): {r.error_text}"
                    for r in fixed)
        + ". The B^-1(n) on the right-hand side reads B^-1(n-1) (the unknown cannot appear "
        f"there). max|B^-1 B - I| after {sm.n_updates} updates from B(1) = B^-1(1) = I. We use "
        "the factors 1/(1-b), (1-b)/b "
        "(tests/library/test_lspe.py::test_the_printed_sherman_morrison_is_wrong). "
        f"Searched: {len(sm.readings)} (step, factors) pairs x {sm.n_updates} rank-one updates "
        f"of a {sm.size} x {sm.size} matrix; an inverse off by more than 1e-8 is detected "
        "(rounding stays below 1e-12), and the printed pair misses by "
        f"{as_printed.error:.1e}.")


@dataclass(frozen=True)
class ATermReading:
    """One reading of the printed increment of ``A(n)`` (Sec. IV) and the shapes of its terms.

    Attributes
    ----------
    name, text : str
        The reading and the increment it reads.
    shapes : tuple
        The shapes of the two terms of the difference.
    lspe : bool
        Whether the increment, where defined, is LSPE(0)'s ``phi_n (phi_{n+1} - phi_n)^T``.
    """

    name: str
    text: str
    shapes: tuple
    lspe: bool

    @property
    def well_formed(self) -> bool:
        """Both terms have one shape, and it is square (``A(n)`` is ``l x l``)."""
        a, b = self.shapes
        return a == b and len(a) == 2 and a[0] == a[1]


def printed_a_term_readings(n_features: int = 14, *, seed: int = 0) -> tuple:
    """The printed ``A(n)`` increment ``phi(X(n)) (phi(X(n+1)))^T - phi(X(n))^T`` (Sec. IV) under
    three readings: as printed, one transpose lost (the second term ``phi(X(n))``), and the
    closing parenthesis misplaced (``phi(X(n)) (phi(X(n+1))^T - phi(X(n))^T)``). The shapes are
    computed on random features; the last reading is checked to equal LSPE(0)'s
    ``phi_n (phi_{n+1} - phi_n)^T``.

    Examples
    --------
    >>> [(r.shapes, r.well_formed) for r in printed_a_term_readings(3)]
    [(((3, 3), (1, 3)), False), (((3, 3), (3, 1)), False), (((3, 3), (3, 3)), True)]
    """
    rng_check = np.random.default_rng(seed)
    phi_n, phi_next = rng_check.normal(size=(2, n_features))
    col, row = phi_n[:, None], phi_n[None, :]
    outer = np.outer(phi_n, phi_next)
    moved = col @ (phi_next[None, :] - row)
    lspe = np.outer(phi_n, phi_next - phi_n)
    return (
        ATermReading("as printed", "phi(X(n)) phi(X(n+1))^T - phi(X(n))^T",
                     (outer.shape, row.shape), False),
        ATermReading("one transpose lost", "phi(X(n)) phi(X(n+1))^T - phi(X(n))",
                     (outer.shape, col.shape), False),
        ATermReading("closing parenthesis misplaced", "phi(X(n)) (phi(X(n+1))^T - phi(X(n))^T)",
                     (outer.shape, (col @ row).shape),
                     # the same products, subtracted before or after: rounding only
                     bool(np.allclose(moved, lspe, rtol=0, atol=1e-12))),
    )


def printed_a_term_shapes(n_features: int = 14) -> tuple:
    """Shapes of the two terms of the printed ``A(n)`` increment,
    ``phi(X(n)) phi(X(n+1))^T - phi(X(n))^T`` (Sec. IV), for ``n_features`` features.

    >>> printed_a_term_shapes()
    ((14, 14), (1, 14))
    """
    return printed_a_term_readings(n_features)[0].shapes


def a_term_shapes_text(reading: ATermReading) -> str:
    """``"14x14 - 1x14"``: the shapes of the two terms of one reading of the A(n) increment."""
    (a, b), (c, d) = reading.shapes
    return f"{a}x{b} - {c}x{d}"


def a_term_evidence(a_readings: tuple) -> str:
    """The evidence on "the printed recursion for A(n) is well formed" (Sec. IV), judged under
    the readings of :func:`printed_a_term_readings`: a typo with a correction."""
    holds = [r for r in a_readings if r.well_formed]
    return (
        "typo: a misplaced parenthesis. As printed, phi(X(n)) (phi(X(n+1)))^T - phi(X(n))^T "
        "subtracts a row from a 14 x 14 matrix (NumPy would broadcast it over every row, a "
        "different quantity); a lost transpose does not repair it (a column instead of a row). "
        "With the closing parenthesis after phi(X(n))^T the increment is "
        "phi(X(n)) (phi(X(n+1)) - phi(X(n)))^T, LSPE(0)'s matrix"
        + (" (equal to it on random features)" if all(r.lspe for r in holds) and holds else "")
        + ", which we use, checked against batch means in "
        "tests/library/test_lspe.py::test_running_averages_equal_batch_means. "
        f"Searched: {len(a_readings)} readings, each decided by the shapes of its terms (exact), "
        "the well-formed one also by its values against LSPE(0)'s increment to 1e-12.")
