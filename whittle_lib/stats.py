"""Independent replications over any ``concurrent.futures.Executor``.

A replication is a call ``func(rng=seed)`` with its own seed, spawned from one
``numpy.random.SeedSequence``: the results are the same whichever executor runs them, with
however many workers, in whatever order they finish (each task owns its stream).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Callable, Sequence

import numpy as np

__all__ = ["spawn_seeds", "replicate"]


def spawn_seeds(seed, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seeds of ``seed`` (``SeedSequence(seed).spawn(n)``).

    >>> [s.spawn_key for s in spawn_seeds(1, 2)]
    [(0,), (1,)]
    """
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(int(n))


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
    if max_workers is not None and (isinstance(max_workers, bool) or int(max_workers) != max_workers
                                    or max_workers < 1):
        raise ValueError(f"max_workers must be a positive integer, got {max_workers!r}")
    if executor is not None:
        return list(executor.map(_call, [func] * len(seeds), seeds))
    workers = min(len(seeds), max_workers or os.cpu_count() or 1)
    if workers <= 1:
        return [_call(func, s) for s in seeds]
    # forkserver: a clean child, not a fork of a Jupyter kernel's threads
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_call, [func] * len(seeds), seeds))
