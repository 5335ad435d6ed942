"""The library's one spelling of each argument check.

Every public function of :mod:`whittle_lib` checks its arguments through these helpers, so that
one idea is checked one way everywhere:

* a value of the wrong **type** raises :class:`TypeError`; a value of the right type but out of
  range, of the wrong shape, or not finite raises :class:`ValueError`; both name the parameter
  and the value, and say what to pass instead;
* the **criterion** is one keyword, ``discount``: a number in (0, 1) for the discounted
  criterion, ``None`` for the average reward per period. ``1.0`` is refused where the horizon is
  infinite (it is not a discount: the total reward diverges), with a message that says to pass
  ``None``; finite-horizon functions accept it (the plain total);
* the **activation rule** of N arms under a budget M is ``activation="at_most"`` (every arm of
  positive priority among the M highest; the relaxation that bounds such policies) or
  ``"exactly"`` (the M highest, whatever their priority), with ``"at_most"`` the default
  everywhere;
* a **transition matrix** is checked by :func:`stochastic_matrix` (finite, non-negative, rows
  summing to one within :data:`ROW_SUM_TOL`);
* a **random stream** is :func:`check_rng`'s: a :class:`numpy.random.Generator`, or anything
  :func:`numpy.random.default_rng` accepts (an int, a :class:`~numpy.random.SeedSequence`, a bit
  generator).
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

__all__: list[str] = []          # private: the public modules re-export what users need

#: Absolute tolerance on each row sum of a transition matrix given in double precision: rows
#: built in floating point (normalised random rows, products of stochastic matrices) sum to one
#: within a few hundred ulps, while a transcription error (a dropped or mistyped entry) is far
#: larger than this.
ROW_SUM_TOL = 1e-9

ACTIVATIONS = ("at_most", "exactly")


def _is_number(value) -> bool:
    """A real number that is not a bool (``True`` is an ``int`` in Python, never a count here)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_discount(discount, *, average: bool = True, total: bool = False,
                   name: str = "discount", average_instead: str | None = None) -> float | None:
    """The one check of the criterion: a discount in (0, 1), or ``None`` for the average reward.

    Parameters
    ----------
    discount : float or None
    average : bool
        Whether ``None`` (the average-reward criterion) is allowed here.
    total : bool
        Whether ``1.0`` (the plain total reward, finite horizons only) is allowed here.
    name : str
        The parameter's name in messages.
    average_instead : str, optional
        Where ``average`` is false: what to call for the average reward, named in the message
        that refuses ``None`` or ``1.0``.

    Returns
    -------
    float or None

    Raises
    ------
    TypeError
        For a value that is not a number (or ``None``).
    ValueError
        For a number out of range, ``1.0`` where the horizon is infinite, ``None`` where only a
        discounted criterion makes sense.
    """
    instead = (f"; for the average reward use {average_instead}"
               if average_instead and not average else "")
    if discount is None:
        if not average:
            raise ValueError(f"{name} must be a number in (0, 1) here (a discounted criterion), "
                             f"got None{instead}")
        return None
    if not _is_number(discount):
        raise TypeError(f"{name} must be a number in (0, 1)"
                        + (" or None (the average reward)" if average else "")
                        + f", got {type(discount).__name__} {discount!r}")
    value = float(discount)
    if value == 1.0 and total:
        return 1.0
    if value == 1.0 and average:
        raise ValueError(f"{name}=1.0 is not a discount: pass {name}=None for the "
                         "average-reward criterion")
    if not 0.0 < value < 1.0:
        allowed = "(0, 1]" if total else "(0, 1)"
        raise ValueError(f"{name} must lie in {allowed}"
                         + (", or be None for the average reward" if average else "")
                         + f", got {discount!r}" + (instead if value == 1.0 else ""))
    return value


def check_integer(name: str, value, minimum: int | None = None,
                  maximum: int | None = None) -> int:
    """An integer (``int`` or a NumPy integer; not a bool, not a float) within bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral,
                                                                     np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = operator.index(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        if maximum is None:
            where = f">= {minimum}"
        elif minimum is None:
            where = f"<= {maximum}"
        else:
            where = f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {where}, got {value!r}")
    return int(value)


def check_real(name: str, value, low: float = -np.inf, high: float = np.inf, *,
               low_open: bool = False, high_open: bool = False) -> float:
    """A real number (not a bool), not nan, within ``[low, high]`` (or the open ends)."""
    if not _is_number(value):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    x = float(value)
    too_low = x <= low if low_open else x < low
    too_high = x >= high if high_open else x > high
    if np.isnan(x) or too_low or too_high:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return x


def check_choice(name: str, value, choices) -> str:
    """One of ``choices`` (strings)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {tuple(choices)}, got "
                        f"{type(value).__name__} {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_activation(activation) -> str:
    """``"at_most"`` or ``"exactly"`` (see the module docstring)."""
    return check_choice("activation", activation, ACTIVATIONS)


def check_budget(M, N: int) -> int:
    """A budget: an integer in ``[0, N]``."""
    if isinstance(M, (bool, np.bool_)) or not isinstance(M, (numbers.Integral, np.integer)):
        raise TypeError(f"M must be an integer in [0, N={N}], got {type(M).__name__} {M!r}")
    if not 0 <= M <= N:
        raise ValueError(f"M must be an integer in [0, N={N}], got {M!r}")
    return int(M)


def check_rng(rng, *, name: str = "rng", required: bool = False,
              why: str = "") -> np.random.Generator:
    """The random stream: a Generator from anything :func:`numpy.random.default_rng` takes.

    ``None`` gives a stream seeded from the operating system's entropy, unless ``required``
    (then ``ValueError``: a result that would differ at each call without saying so is refused;
    ``why`` says what needs the stream).
    """
    if rng is None:
        if required:
            raise ValueError(f"{name} is required{' ' + why if why else ''}: pass a seed (an int) "
                             "or a numpy.random.Generator so that the result can be reproduced")
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)) or not isinstance(
            rng, (numbers.Integral, np.integer, np.random.SeedSequence, np.random.BitGenerator)):
        if not (isinstance(rng, (list, tuple, np.ndarray))
                and all(isinstance(s, (numbers.Integral, np.integer))
                        and not isinstance(s, (bool, np.bool_)) for s in np.ravel(rng))):
            raise TypeError(f"{name} must be a numpy.random.Generator or a seed (an int, a "
                            f"sequence of ints, a SeedSequence or a BitGenerator), got "
                            f"{type(rng).__name__} {rng!r}")
    try:
        return np.random.default_rng(rng)
    except ValueError as error:                        # a negative seed
        raise ValueError(f"{name} must be a non-negative seed, got {rng!r} ({error})") from None


def _is_sparse(value) -> bool:
    """A ``scipy.sparse`` matrix or array of any format (without importing SciPy)."""
    return hasattr(value, "toarray") and hasattr(value, "nnz")


def as_numeric(name: str, value) -> np.ndarray:
    """``value`` as an array of numbers (bool, int or float), without copying.

    ``TypeError`` when the entries are not numbers (strings, ``None``, objects); ``ValueError``
    when nested lists are ragged (not an array). A ``scipy.sparse`` matrix is densified, and so
    is each one of a sequence of them (one matrix per action, as pymdptoolbox takes ``P``).
    """
    if _is_sparse(value):                                        # scipy.sparse, any format
        value = value.toarray()
    elif (isinstance(value, (list, tuple))
          or (isinstance(value, np.ndarray) and value.dtype == object and value.ndim)) \
            and any(_is_sparse(v) for v in value):
        value = [v.toarray() if _is_sparse(v) else v for v in value]
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as error:      # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers, got {value!r} "
                         f"({error})") from None
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__} "
                        f"of dtype {raw.dtype}")
    return raw


def row_sum_tol(dtype, n: int) -> float:
    """The row-sum tolerance of a matrix given in ``dtype`` with ``n`` columns.

    :data:`ROW_SUM_TOL` for double precision; for a lower precision (``float32``, ``float16``)
    the rounding of ``n`` stored entries, ``n * eps(dtype)``.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 8:
        return max(ROW_SUM_TOL, n * float(np.finfo(dtype).eps))
    return ROW_SUM_TOL


def check_stochastic_rows(name: str, sums: np.ndarray, tol: float, rows=None,
                          values=None) -> None:
    """Raise ``ValueError`` naming the first row (among ``rows``, a mask) whose sum is not 1."""
    bad = np.abs(sums - 1.0) > tol
    if rows is not None:
        bad &= rows
    if bad.any():
        x = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} row of state {x} sums to {float(sums[x])!r}, not 1 (tolerance "
                         f"{tol:.3g}); if the rows are right up to rounding, renormalise them: "
                         f"{name} / {name}.sum(axis=1, keepdims=True)")


def stochastic_matrix(name: str, value, n: int | None = None, *,
                      copy: bool = True) -> np.ndarray:
    """The one validator of a dense transition matrix.

    Returns ``value`` as a read-only ``float64`` array of shape ``(n, n)``: square, non-empty,
    finite, non-negative, each row summing to one within :func:`row_sum_tol` (a ``float32``
    matrix within its own rounding, and then renormalised in double precision). A
    ``scipy.sparse`` matrix is densified. ``n`` fixes the expected size.

    Raises
    ------
    TypeError
        For entries that are not numbers.
    ValueError
        Naming the matrix and the first offending state.
    """
    raw = as_numeric(name, value)
    array = np.array(raw, dtype=float, copy=copy)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {array.shape}")
    if n is not None and array.shape != (n, n):
        raise ValueError(f"{name} must have shape {(n, n)}, got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} must have at least one state, got shape {array.shape}")
    bad_rows = ~np.isfinite(array).all(axis=1)
    if bad_rows.any():
        state = int(np.flatnonzero(bad_rows)[0])
        raise ValueError(f"{name} has a non-finite entry in the row of state {state}: "
                         f"{array[state].tolist()}")
    negative_rows = (array < 0).any(axis=1)
    if negative_rows.any():
        state = int(np.flatnonzero(negative_rows)[0])
        raise ValueError(f"{name} has a negative probability in the row of state {state}: "
                         f"min {float(array[state].min())!r}")
    tol = row_sum_tol(raw.dtype, array.shape[1])
    check_stochastic_rows(name, array.sum(axis=1), tol)
    if tol > ROW_SUM_TOL:
        if not copy:
            array = array.copy()
        array /= array.sum(axis=1, keepdims=True)
    if copy:
        array.setflags(write=False)
    return array


def stochastic_matrices(name: str, value, shape: tuple[int, int] | None = None) -> np.ndarray:
    """:func:`stochastic_matrix` for a stack of ``k`` matrices, shape ``(k, n, n)``.

    Each matrix is checked as :func:`stochastic_matrix` checks one (finite, non-negative, rows
    summing to one within :func:`row_sum_tol`, a lower precision renormalised in double
    precision); ``k = 0`` is allowed (no matrix), ``n = 0`` is not. Returns a new writeable
    ``float64`` array; ``shape`` fixes ``(k, n)``. Messages name the matrix as ``name[i]`` and
    the first offending state.
    """
    raw = as_numeric(name, value)
    array = np.array(raw, dtype=float)
    if array.ndim != 3 or array.shape[1] != array.shape[2]:
        raise ValueError(f"{name} must have shape (k, n, n) (k square matrices), got shape "
                         f"{array.shape}")
    if shape is not None and array.shape[:2] != tuple(shape):
        k, n = shape
        raise ValueError(f"{name} must have shape {(k, n, n)}, got shape {array.shape}")
    k, n = array.shape[:2]
    if k and not n:
        raise ValueError(f"{name} must have at least one state, got shape {array.shape}")
    for bad, what in ((~np.isfinite(array), "a non-finite entry"),
                      (array < 0, "a negative probability")):
        if bad.any():
            i, x, _ = np.argwhere(bad)[0]
            raise ValueError(f"{name}[{i}] has {what} in the row of state {x}: "
                             f"{array[i, x].tolist()}")
    tol = row_sum_tol(raw.dtype, n)
    sums = array.sum(axis=2)
    off = np.abs(sums - 1.0) > tol
    if off.any():
        i = int(np.argwhere(off)[0][0])
        check_stochastic_rows(f"{name}[{i}]", sums[i], tol)
    if tol > ROW_SUM_TOL:
        array /= sums[:, :, None]
    return array


def finite_vector(name: str, value, n: int | None = None, *, what: str = "") -> np.ndarray:
    """A read-only finite ``float64`` vector (of length ``n`` if given)."""
    array = np.array(as_numeric(name, value), dtype=float, copy=True)
    if array.ndim != 1 or (n is not None and array.shape != (n,)):
        expected = f"({n},)" if n is not None else "(n,)"
        raise ValueError(f"{name} must have shape {expected}{' (' + what + ')' if what else ''}, "
                         f"got shape {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        state = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} is not finite in state {state}: {float(array[state])!r}")
    array.setflags(write=False)
    return array


def real_array(name: str, value, *, low: float = -np.inf, high: float = np.inf,
               low_open: bool = False, high_open: bool = False, ndim=None) -> np.ndarray:
    """``value`` as a ``float64`` array of real numbers in ``[low, high]`` (or the open ends).

    For the array arguments of the models (states, rates, probabilities per source), where
    :func:`check_real` takes one number. ``ndim`` is the allowed number of dimensions (an int
    or a tuple of them; any if ``None``). Returns ``value`` itself when it is already a
    ``float64`` array (no copy).

    Raises
    ------
    TypeError
        For entries that are not numbers, or booleans (:func:`as_numeric`).
    ValueError
        For a wrong number of dimensions, or naming the first entry (and its position) that is
        nan or out of range.
    """
    raw = as_numeric(name, value)
    if raw.dtype.kind == "b":
        raise TypeError(f"{name} must hold numbers, got booleans {value!r}")
    if ndim is not None and raw.ndim not in ((ndim,) if isinstance(ndim, int) else tuple(ndim)):
        allowed = ndim if isinstance(ndim, int) else " or ".join(map(str, ndim))
        raise ValueError(f"{name} must have {allowed} dimension(s), got shape {raw.shape}")
    array = np.asarray(raw, dtype=float)
    too_low = (array <= low) if low_open else (array < low)
    too_high = (array >= high) if high_open else (array > high)
    bad = np.isnan(array) | too_low | too_high
    if bad.any():
        where = np.argwhere(bad)[0] if array.ndim else ()
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        position = f" at {tuple(int(i) for i in where)}" if array.ndim else ""
        raise ValueError(f"{name} must lie in {interval}, got {float(array[tuple(where)])!r}"
                         f"{position}")
    return array


# --- the checks of whittle_lib.mdp: instances, sparse stochastic matrices, policies ---

def check_instance(name: str, value, cls, *, what: str = ""):
    """``value`` itself if it is an instance of ``cls``; ``TypeError`` naming it otherwise."""
    if not isinstance(value, cls):
        expected = what or f"a {cls.__name__}"
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}")
    return value


def sparse_stochastic_matrix(name: str, value, n: int | None = None, *, rows=None):
    """The sparse counterpart of :func:`stochastic_matrix`: a CSR ``float64`` stochastic matrix.

    ``value`` is a ``scipy.sparse`` matrix (any format) or anything :func:`stochastic_matrix`
    takes. It is checked as :func:`stochastic_matrix` checks a dense matrix (square, non-empty,
    entries finite and non-negative, each row summing to one within :func:`row_sum_tol` of the
    input's precision, a lower-precision input renormalised in double precision), except that
    only the rows where ``rows`` (a boolean mask of length ``n``, default every row) is true
    must sum to one: the rows of an action that is not allowed in a state may hold anything
    finite and non-negative. The returned matrix is ``scipy.sparse.csr_array(value,
    dtype=float)``, with the input's pattern and order of entries.

    Raises
    ------
    TypeError
        For entries that are not numbers.
    ValueError
        Naming the matrix and the first offending state.
    """
    from scipy import sparse

    if sparse.issparse(value):
        dtype = value.dtype
        if dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold numbers, got a {type(value).__name__} of dtype "
                            f"{dtype}")
        matrix = sparse.csr_array(value, dtype=float)
    else:
        raw = as_numeric(name, value)
        dtype = raw.dtype
        if raw.ndim != 2:
            raise ValueError(f"{name} must be a square matrix, got shape {raw.shape}")
        matrix = sparse.csr_array(raw.astype(float))
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {matrix.shape}")
    if n is not None and matrix.shape != (n, n):
        raise ValueError(f"{name} must have shape {(n, n)}, got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise ValueError(f"{name} must have at least one state, got shape {matrix.shape}")
    data = matrix.data
    bad = ~np.isfinite(data) | (data < 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        state = int(np.searchsorted(matrix.indptr, first, side="right") - 1)
        what = "a non-finite entry" if not np.isfinite(data[first]) else "a negative probability"
        raise ValueError(f"{name} has {what} in the row of state {state}: "
                         f"{float(data[first])!r}")
    tol = row_sum_tol(dtype, matrix.shape[1])
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    mask = None if rows is None else np.asarray(rows, dtype=bool)
    check_stochastic_rows(name, sums, tol, rows=mask)
    if tol > ROW_SUM_TOL:
        keep = (sums > 0) if mask is None else (mask & (sums > 0))
        scale = np.where(keep, 1.0 / np.where(sums > 0, sums, 1.0), 1.0)
        matrix = sparse.csr_array(sparse.diags_array(scale) @ matrix)
    return matrix


def action_vector(name: str, value, allowed) -> np.ndarray:
    """A deterministic stationary policy: one allowed action per state.

    ``allowed`` is the boolean mask ``allowed[s, a]``, shape ``(n_states, n_actions)``. Returns
    a new ``int64`` array of shape ``(n_states,)``.
    """
    allowed = np.asarray(allowed, dtype=bool)
    n, n_actions = allowed.shape
    raw = as_numeric(name, value)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers (one action per state), got "
                        f"dtype {raw.dtype}")
    if raw.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) (one action per state), got shape "
                         f"{raw.shape}")
    policy = raw.astype(np.int64)
    out = (policy < 0) | (policy >= n_actions)
    if out.any():
        x = int(np.flatnonzero(out)[0])
        raise ValueError(f"{name} must hold actions in 0..{n_actions - 1}, got {policy[x]} in "
                         f"state {x}")
    not_allowed = ~allowed[np.arange(n), policy]
    if not_allowed.any():
        x = int(np.flatnonzero(not_allowed)[0])
        raise ValueError(f"{name} uses action {policy[x]} in state {x}, where it is not allowed")
    return policy
