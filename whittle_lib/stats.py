"""Independent replications and sweeps over any ``concurrent.futures.Executor``, and the one
confidence-interval type of the collection.

A replication is a call ``func(rng=seed)`` with its own seed, spawned from one
``numpy.random.SeedSequence``: the results are the same whichever executor runs them, with
however many workers, in whatever order they finish (each task owns its stream).
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping, Sequence

import numpy as np

from ._results import ShortRepr
from ._validation import as_numeric, check_integer, check_real
from .arithmetic import in_current_mode

__all__ = ["spawn_seeds", "named_seeds", "run_tasks", "replicate", "sweep", "ConfidenceInterval",
           "mean_interval", "share_interval", "one_run_verdict"]


def spawn_seeds(seed, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seeds of ``seed`` (``SeedSequence(seed).spawn(n)``).

    >>> [s.spawn_key for s in spawn_seeds(1, 2)]
    [(0,), (1,)]
    """
    n = check_integer("n", n, 0)
    return _seed_sequence(seed).spawn(n)


def _seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` as a SeedSequence: an int (>= 0), a sequence of them, or a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not (
            isinstance(seed, (int, np.integer))
            or (isinstance(seed, (list, tuple, np.ndarray))
                and all(isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))
                        for s in np.ravel(seed)))):
        raise TypeError(f"seed must be a non-negative int, a sequence of them or a "
                        f"numpy.random.SeedSequence, got {type(seed).__name__} {seed!r}")
    try:
        return np.random.SeedSequence(seed)
    except ValueError as error:                       # a negative entry
        raise ValueError(f"seed must be non-negative, got {seed!r} ({error})") from None


def named_seeds(seed, **counts: int) -> dict[str, tuple[np.random.SeedSequence, ...]]:
    """Named independent streams of one seed, declared together: ``{name: count seeds}``.

    A notebook declares every stream it draws from in one place, so which draws a cell gets
    depends on its name, not on the cells run before it. The children are spawned from
    ``SeedSequence(seed)`` in the order the names are given (``counts[name]`` consecutive
    children each), which is what the same sequence of ``spawn`` calls would give. A count that
    depends on a parameter shifts only the streams declared after it: declare those last.

    Parameters
    ----------
    seed : int or SeedSequence
        The root.
    **counts : int
        How many children each name gets (>= 0).

    Returns
    -------
    dict
        ``{name: tuple of SeedSequence}``, in the order given.

    Examples
    --------
    >>> streams = named_seeds(1, fig4=1, table=2)
    >>> [s.spawn_key for s in streams["table"]]
    [(1,), (2,)]
    >>> named_seeds(1, fig4=-1)
    Traceback (most recent call last):
        ...
    ValueError: fig4 must be an integer >= 0, got -1
    """
    counts = {name: check_integer(name, n, 0) for name, n in counts.items()}
    children = iter(spawn_seeds(seed, sum(counts.values())))
    return {name: tuple(next(children) for _ in range(n)) for name, n in counts.items()}


def _call(func, seed):
    return func(rng=np.random.default_rng(seed))


def replicate(func: Callable, seeds: Sequence, *, executor: Executor | None = None,
              max_workers: int | None = None) -> list:
    """Run ``func(rng=Generator(seed))`` once per seed and return the results in seed order.

    Parameters
    ----------
    func : callable
        Takes a keyword-only ``rng``; must be picklable (a module-level function or a
        ``functools.partial`` of one) unless ``max_workers=1``.
    seeds : sequence of SeedSequence or int
        One per replication (:func:`spawn_seeds`).
    executor : concurrent.futures.Executor, optional
        Where to run: for example a ``dask.distributed.Client``'s ``get_executor()`` for a
        cluster. Default: a process pool on the local cores, or a plain loop when
        ``max_workers=1`` or there is one seed.
    max_workers : int, optional
        Workers of the default pool (default: the number of CPUs).

    Returns
    -------
    list
        ``[func(rng=default_rng(s)) for s in seeds]``, computed wherever the executor runs it:
        the same list for every executor and worker count.
    """
    seeds = list(seeds)
    return _run([func] * len(seeds), seeds, executor, max_workers)


def sweep(func: Callable, grid: Sequence[Mapping], seed, *, replications: int = 1,
          executor: Executor | None = None, max_workers: int | None = None) -> list[list]:
    """Run ``func(**setting, rng=...)`` ``replications`` times for every setting of ``grid``.

    Every task gets its own stream, spawned from ``seed`` in the order (setting, replication),
    so the results do not depend on the executor, the number of workers or the order in which
    tasks finish. (Changing ``grid`` or ``replications`` changes which stream a task gets.)

    Parameters
    ----------
    func : callable
        Takes the setting's keywords and a keyword-only ``rng``; picklable for a process pool
        or a cluster (a module-level function or a ``functools.partial`` of one).
    grid : sequence of mappings
        The settings, for example ``[{"M": 1}, {"M": 2}]``.
    seed : int or SeedSequence
    replications : int
        Runs per setting, at least 1.
    executor, max_workers
        As in :func:`replicate`: any ``concurrent.futures.Executor``, such as
        ``dask.distributed.Client(...).get_executor()``; by default the local cores.

    Returns
    -------
    list of lists
        ``out[i][r]`` is replication ``r`` of setting ``grid[i]``.

    Examples
    --------
    >>> from functools import partial
    >>> def draw(scale, *, rng):
    ...     return round(float(rng.normal(scale=scale)), 6)
    >>> out = sweep(draw, [{"scale": 1.0}, {"scale": 0.0}], 7, replications=2, max_workers=1)
    >>> out[1]
    [0.0, 0.0]
    """
    grid = [dict(setting) for setting in grid]
    replications = check_integer("replications", replications, 1)
    seeds = spawn_seeds(seed, len(grid) * replications)
    funcs = [partial(func, **setting) for setting in grid for _ in range(replications)]
    flat = _run(funcs, seeds, executor, max_workers)
    return [flat[i * replications:(i + 1) * replications] for i in range(len(grid))]


def _run(funcs: list, seeds: list, executor, max_workers) -> list:
    """``[f(rng=default_rng(s)) for f, s in zip(funcs, seeds)]`` on the executor, in order."""
    return run_tasks([partial(_call, f, s) for f, s in zip(funcs, seeds)], executor=executor,
                     max_workers=max_workers)


def _invoke(task):
    return task()


def run_tasks(tasks: Sequence[Callable], *, executor: Executor | None = None,
              max_workers: int | None = None) -> list:
    """Run independent zero-argument calls and return their results in order.

    The one place where the library runs work in parallel: :func:`replicate` and :func:`sweep`
    come here, and so do calls that differ in more than their seed (each a
    ``functools.partial`` that carries its own seed, such as the runs of several learning
    variants sharing one pool). The results are ``[task() for task in tasks]`` whatever runs
    them.

    Parameters
    ----------
    tasks : sequence of callables
        Picklable for a process pool (module-level functions or ``functools.partial``).
    executor : concurrent.futures.Executor, optional
        Default: a process pool on the local cores (``forkserver``: a clean child, not a fork of
        a Jupyter kernel's threads), or a plain loop when ``max_workers=1`` or there is one task.
    max_workers : int, optional
        Workers of the default pool (default: the number of CPUs).

    Each task runs in the arithmetic mode current at the call (``whittle_lib.portable()``),
    in whatever worker runs it.

    Examples
    --------
    >>> from functools import partial
    >>> run_tasks([partial(pow, 2, 3), partial(divmod, 7, 2)], max_workers=1)
    [8, (3, 1)]
    """
    if max_workers is not None:
        max_workers = check_integer("max_workers", max_workers, 1)
    tasks = list(tasks)
    for i, task in enumerate(tasks):
        if not callable(task):
            raise TypeError(f"tasks[{i}] must be a callable of no argument, got "
                            f"{type(task).__name__}")
    tasks = [in_current_mode(task) for task in tasks]    # a worker process starts native
    if executor is not None:
        if not callable(getattr(executor, "map", None)):
            raise TypeError("executor must be a concurrent.futures.Executor (with a map method), "
                            f"got {type(executor).__name__}")
        return list(executor.map(_invoke, tasks))
    workers = min(len(tasks), max_workers or os.cpu_count() or 1)
    if workers <= 1:
        return [task() for task in tasks]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_invoke, tasks))


# -- confidence intervals -------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ConfidenceInterval(ShortRepr):
    """An estimate with its confidence interval, and the method that made it.

    Attributes
    ----------
    estimate : float
        The point estimate (a mean, a share).
    low, high : float
        The interval's ends.
    half_width : float
        ``(high - low) / 2`` for a symmetric interval (``mean_interval``); for an asymmetric
        one (``share_interval``) the larger distance from the estimate to an end.
    level : float
        The confidence level, for example 0.95.
    method : str
        ``"student-t"`` (mean of independent replications) or ``"wilson"`` (a share).
    n : int
        The number of replications or trials.
    """

    estimate: float
    low: float
    high: float
    half_width: float
    level: float
    method: str
    n: int


def _check_level(level) -> float:
    return check_real("level", level, 0.0, 1.0, low_open=True, high_open=True)


def mean_interval(values, *, level: float = 0.95) -> ConfidenceInterval:
    """The mean of independent replications and its Student-t interval.

    ``mean -+ t s / sqrt(R)`` with ``s`` the sample standard deviation (``ddof=1``) of the
    ``R`` values and ``t`` the ``(1 + level)/2`` quantile of Student's t with ``R - 1``
    degrees of freedom (with ``R = 8`` the normal 1.96 would be 17 % too narrow).

    Examples
    --------
    >>> ci = mean_interval([1.0, 2.0, 3.0])
    >>> ci.estimate, round(ci.half_width, 6), ci.method   # t(0.975, 2) = 4.302653 / sqrt(3)
    (2.0, 2.484138, 'student-t')
    """
    from scipy import stats as _scipy_stats

    values = np.asarray(as_numeric("values", values), dtype=float).ravel()
    if values.size < 2:
        raise ValueError(f"a confidence interval needs at least 2 values, got {values.size}")
    if not np.isfinite(values).all():
        k = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ValueError(f"values must be finite, got {float(values[k])!r} at position {k}")
    level = _check_level(level)
    t = _scipy_stats.t.ppf(0.5 + level / 2, values.size - 1)
    mean = float(values.mean())
    half = float(t * values.std(ddof=1) / np.sqrt(values.size))
    return ConfidenceInterval(mean, mean - half, mean + half, half, level, "student-t",
                              int(values.size))


def share_interval(successes: int, trials: int, *, z: float = 1.96) -> ConfidenceInterval:
    """Wilson score interval (95 % by default, ``z = 1.96``) for a share ``successes / trials``.

    Used to judge a claim about one run of a paper by the share of our single runs that
    satisfy it: the verdict is robust to resampling when the interval lies on one side of 1/2.

    Examples
    --------
    >>> ci = share_interval(1, 8)
    >>> round(ci.low, 3), round(ci.high, 3), ci.method
    (0.022, 0.471, 'wilson')
    """
    trials = check_integer("trials", trials, 1)
    successes = check_integer("successes", successes, 0, trials)
    z = check_real("z", z, 0.0, math.inf, low_open=True, high_open=True)
    n, p = float(trials), successes / trials
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    level = math.erf(z / math.sqrt(2))
    return ConfidenceInterval(p, low, high, max(p - low, high - p), level, "wilson",
                              int(trials))


def one_run_verdict(successes: int, trials: int, *, z: float = 1.96) -> bool | None:
    """Judge a claim about the one run a paper printed by the share of our single runs.

    The collection's rule: the claim holds under a reading if the Wilson interval of the share
    of our single runs that satisfy it (:func:`share_interval`) lies above 1/2, fails if it lies
    below, and is undetermined (``None``) if it contains 1/2: too few runs to tell, so the
    reading can carry no verdict.

    Examples
    --------
    >>> one_run_verdict(6, 6), one_run_verdict(0, 8), one_run_verdict(4, 6)
    (True, False, None)
    """
    ci = share_interval(successes, trials, z=z)
    if ci.low > 0.5:
        return True
    if ci.high < 0.5:
        return False
    return None
