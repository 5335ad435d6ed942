"""The arithmetic switch (whittle_lib.arithmetic): native NumPy by default, portable fdlibm on
request, in this thread, the threads the library starts and the processes of run_tasks.

References: NumPy's own loops (native mode) and whittle_lib._portable (portable mode), bit for
bit; the special values of C99 for both.
"""

import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest

import whittle_lib as wl
from whittle_lib import _portable, arithmetic
from whittle_lib.stats import run_tasks

X = np.random.default_rng(3).uniform(-20.0, 20.0, 5000)


@pytest.fixture
def restore_default():
    """Tests that change the process-wide default put it back."""
    before = arithmetic._default
    yield
    arithmetic.set_portable(before)


def test_native_is_the_default_and_portable_is_a_block():
    assert wl.is_portable() is False
    with wl.portable():
        assert wl.is_portable() is True
        with wl.portable(False):                     # blocks nest
            assert wl.is_portable() is False
        assert wl.is_portable() is True
    assert wl.is_portable() is False

    @wl.portable()
    def inside():
        return wl.is_portable()

    assert inside() is True and wl.is_portable() is False


def test_the_process_default_is_seen_by_new_threads(restore_default):
    wl.set_portable(True)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(wl.is_portable()))
    thread.start()
    thread.join()
    assert seen == [True]
    with wl.portable(False):                         # a block overrides the default here only
        assert not wl.is_portable()
    assert wl.is_portable()


def test_a_block_reaches_a_thread_through_in_current_mode():
    with wl.portable(), ThreadPoolExecutor(1) as pool:
        plain = pool.submit(wl.is_portable).result()
        carried = pool.submit(arithmetic.in_current_mode(wl.is_portable)).result()
    assert (plain, carried) == (False, True)
    wrapped = pickle.loads(pickle.dumps(arithmetic.in_current_mode(partial(max, 1, 2))))
    assert wrapped() == 2


@pytest.mark.slow
def test_run_tasks_runs_its_tasks_in_the_callers_mode_in_worker_processes():
    # the default pool's workers start clean (forkserver): native unless told
    with wl.portable():
        inside = run_tasks([wl.is_portable] * 2, max_workers=2)
    assert inside == [True, True]
    assert run_tasks([wl.is_portable] * 2, max_workers=2) == [False, False]


@pytest.mark.parametrize("name, arg", [
    ("exp", X), ("expm1", X), ("log", np.abs(X) + 1e-3), ("log1p", np.abs(X)), ("cos", X),
])
def test_each_mode_is_its_own_implementation_bit_for_bit(name, arg):
    ours = getattr(arithmetic, name)
    with wl.portable(False):
        assert ours(arg).tobytes() == getattr(np, name)(arg).tobytes()
    with wl.portable():
        assert ours(arg).tobytes() == getattr(_portable, name)(arg).tobytes()
    with wl.portable(False):
        assert arithmetic.power(np.abs(arg), 0.6).tobytes() == np.power(np.abs(arg), 0.6).tobytes()
    with wl.portable():
        assert arithmetic.power(np.abs(arg), 0.6).tobytes() == _portable.power(np.abs(arg),
                                                                                0.6).tobytes()


@pytest.mark.parametrize("portable", [False, True])
def test_special_values_without_a_warning_in_both_modes(portable):
    # pytest turns warnings into errors: NumPy's loops must not warn where fdlibm's do not
    with wl.portable(portable):
        assert float(arithmetic.log(0.0)) == -np.inf and np.isnan(arithmetic.log(-1.0))
        assert float(arithmetic.log1p(-1.0)) == -np.inf and np.isnan(arithmetic.log1p(-2.0))
        assert np.isnan(arithmetic.power(-1.0, 0.5))
        assert float(arithmetic.power(0.0, -1.0)) == np.inf
        assert np.isnan(arithmetic.cos(np.inf))
        assert float(arithmetic.exp(-800.0)) == 0.0 and float(arithmetic.expm1(-800.0)) == -1.0
        assert isinstance(arithmetic.exp(0.5), np.floating)      # a number for a number


def test_the_switch_takes_a_bool():
    with pytest.raises(TypeError, match="enabled must be True"):
        with wl.portable("yes"):
            pass
    with pytest.raises(TypeError, match="enabled must be True"):
        wl.set_portable(1)
    with pytest.raises(TypeError, match="func must be callable"):
        arithmetic.in_current_mode(3)


def test_the_linear_algebra_is_the_same_in_both_modes():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 6, 6))
    M = A @ np.swapaxes(A, -1, -2) + np.eye(6)
    y = rng.normal(size=(3, 6))
    with wl.portable(False):
        native = arithmetic.solve_spd(M, y), arithmetic.matvec(A, y)
    with wl.portable():
        portable = arithmetic.solve_spd(M, y), arithmetic.matvec(A, y)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(native, portable))
