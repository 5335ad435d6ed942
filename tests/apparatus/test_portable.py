"""Same bits on every x86-64 CPU: the computations the notebooks store do not depend on the
BLAS kernel or on NumPy's SIMD loops.

References: the native run itself, against runs under emulated machines
(``replication/machines.py``: OpenBLAS kernels forced by ``OPENBLAS_CORETYPE``, NumPy dispatch
targets switched off by ``NPY_DISABLE_CPU_FEATURES``); LAPACK and NumPy for the values.
"""

import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from whittle_lib import _portable as fp

ROOT = Path(__file__).resolve().parents[2]
from replication import machines  # noqa: E402

x86 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                         reason="the emulated machines are x86-64 ones")


def _fingerprint(env_machine=None) -> dict[str, str]:
    cmd = [sys.executable, str(ROOT / "tests" / "apparatus" / "portable_fingerprint.py")]
    env = None
    if env_machine is not None:
        import os
        env = {**os.environ, **machines.environment(env_machine)}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return dict(line.rsplit(" ", 1) for line in out.stdout.splitlines())


@pytest.fixture(scope="module")
def fingerprints():
    """The fingerprint under a machine (``None``: native), each run once for the module: two
    tests compare haswell-avx2's (tests/conftest.py keeps this module on one worker)."""
    runs: dict = {}

    def get(machine=None) -> dict[str, str]:
        if machine not in runs:
            runs[machine] = _fingerprint(machine)
        return runs[machine]

    return get


@pytest.fixture(scope="module")
def native(fingerprints):
    return fingerprints(None)


@x86
@pytest.mark.parametrize("machine", ["haswell-avx2", "sandybridge-avx", "nehalem-sse42"])
def test_learning_and_simulation_give_the_same_bits_on_other_machines(native, fingerprints,
                                                                     machine):
    other = fingerprints(machine)
    differing = [k for k in native if k != "control numpy" and native[k] != other[k]]
    assert not differing, f"{machine}: {differing} differ from the native run"


@x86
def test_the_emulation_changes_numpys_own_loops(native, fingerprints):
    # Without this the test above could pass because the emulation does nothing: on a CPU
    # with AVX-512, NumPy's exp/log differ in the last bit without it.
    import os
    if os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        pytest.skip("this test process is itself an emulated machine: no native loops to compare")
    if "X86_V4" not in machines.environment("haswell-avx2").get("NPY_DISABLE_CPU_FEATURES", ""):
        pytest.skip("this CPU has no AVX-512 loops to switch off")
    assert fingerprints("haswell-avx2")["control numpy"] != native["control numpy"]


def test_elementary_functions_agree_with_numpy_to_an_ulp():
    x = np.linspace(-20.0, 20.0, 2001)
    # a sanity check against a second implementation: both are within 1 ulp of the exact value
    # (ours measured against mpmath in test_portable_elementary.py), and on these grids they
    # differ by at most 1 ulp (rtol 2.3e-16: about 1 ulp at the bottom of a binade)
    for ours, ref, arg in ((fp.exp, np.exp, x), (fp.expm1, np.expm1, x),
                           (fp.log, np.log, np.abs(x) + 1e-3), (fp.cos, np.cos, x),
                           (fp.log1p, np.log1p, np.abs(x))):
        np.testing.assert_allclose(ours(arg), ref(arg), rtol=2.3e-16, atol=1e-300)
    np.testing.assert_allclose(fp.power(np.abs(x), 2 / 3), np.abs(x) ** (2 / 3), rtol=2.3e-16)


def test_linear_algebra_agrees_with_lapack():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 12, 12))
    M = A @ np.swapaxes(A, -1, -2) + 0.1 * np.eye(12)
    y = rng.normal(size=(4, 12))
    # Cholesky is backward stable: residual of the order of eps * cond(M) * |y|
    np.testing.assert_allclose(fp.solve_spd(M, y), np.linalg.solve(M, y[..., None])[..., 0],
                               rtol=1e-9, atol=1e-9)
    # a sum of 12 products in another order differs by at most about 12 eps sum|a_i y_i|
    # (forward error of summation; a relative tolerance fails where the sum nearly cancels)
    bound = 12 * np.finfo(float).eps * (np.abs(A) @ np.abs(y)[..., None])[..., 0]
    assert np.all(np.abs(fp.matvec(A, y) - (A @ y[..., None])[..., 0]) <= bound)
    bound0 = 12 * np.finfo(float).eps * np.einsum("ij,ij->i", np.abs(A[:, 0]), np.abs(y))
    assert np.all(np.abs(fp.dot(A[:, 0], y) - np.einsum("ij,ij->i", A[:, 0], y)) <= bound0)


def test_solve_spd_marks_a_system_that_is_not_positive_definite():
    M = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    z = fp.solve_spd(M, np.ones((2, 2)))
    np.testing.assert_array_equal(z[0], [1.0, 1.0])
    assert np.all(np.isnan(z[1]))
    with pytest.raises(ValueError, match="M must be"):
        fp.solve_spd(np.eye(2), np.ones(3))
