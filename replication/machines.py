"""Emulate another x86-64 machine on this one: the environment that makes NumPy and OpenBLAS
compute as they would on an older CPU.

Two things in the numerical stack depend on the CPU:

* OpenBLAS picks its kernels at load time (``OPENBLAS_CORETYPE`` forces one: ``Haswell``,
  ``Sandybridge``, ``Nehalem``; ``Zen`` selects the Haswell kernels);
* NumPy dispatches its SIMD loops (``exp``, ``log``, ``power``, ``cos``, ...) at import
  (``NPY_DISABLE_CPU_FEATURES`` switches targets off, e.g. the AVX-512 ones).

A machine below names both. Features that this NumPy does not dispatch, or that this CPU does
not have, are left out of ``NPY_DISABLE_CPU_FEATURES`` (NumPy refuses to disable them).

Usage::

    python -m replication.machines list                      # the machines, what each selects
    python -m replication.machines env haswell-avx2          # NAME=value lines
    python -m replication.machines run haswell-avx2 -- CMD   # run CMD under that machine
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import subprocess
import sys

#: Emulated machines: OpenBLAS kernel and the NumPy dispatch targets switched off.
MACHINES = {
    # an AVX2 desktop or server CPU (Haswell to Alder Lake; AMD Zen 1-3 use the same kernels)
    "haswell-avx2": ("Haswell", ("X86_V4", "AVX512_ICL", "AVX512_SPR")),
    # an AVX CPU without FMA (Sandy Bridge, Ivy Bridge)
    "sandybridge-avx": ("Sandybridge", ("X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR")),
    # an SSE4.2 CPU (Nehalem): NumPy's baseline loops only
    "nehalem-sse42": ("Nehalem", ("X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR")),
    # an AVX-512 server CPU (Skylake-X and later)
    "skylakex-avx512": ("SkylakeX", ()),
}


def _disableable(features):
    """The features NumPy would accept to disable here: dispatched by this build, present on
    this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:                                   # not NumPy 2
        return ()
    return tuple(f for f in features if f in __cpu_dispatch__ and __cpu_features__.get(f))


def environment(name: str) -> dict[str, str]:
    """The variables that emulate machine ``name`` on this CPU."""
    if name not in MACHINES:
        raise ValueError(f"machine must be one of {sorted(MACHINES)}, got {name!r}")
    core, features = MACHINES[name]
    env = {"OPENBLAS_CORETYPE": core}
    disabled = _disableable(features)
    if disabled:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disabled)
    return env


def openblas_core() -> str:
    """The kernel NumPy's OpenBLAS selected in this process."""
    import numpy
    libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs",
                                  "libscipy_openblas*.so*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                       "openblas_get_corename"):
            func = getattr(lib, symbol, None)
            if func is not None:
                func.restype = ctypes.c_char_p
                return func().decode()
    return "unknown"


def _describe_child(env: dict[str, str]) -> str:
    code = ("import sys; sys.path.insert(0, %r); import machines; "
            "from numpy._core._multiarray_umath import __cpu_features__ as f, "
            "__cpu_dispatch__ as d, __cpu_baseline__ as b; "
            "on = [k for k in d if f.get(k)]; "
            "print(machines.openblas_core(), 'kernels; NumPy loops:', "
            "on[-1] if on else 'baseline ' + b[-1])"
            % os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                         capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the machines and what each selects on this CPU")
    p_env = sub.add_parser("env", help="print NAME=value lines for a machine")
    p_env.add_argument("machine", choices=sorted(MACHINES))
    p_run = sub.add_parser("run", help="run a command under a machine")
    p_run.add_argument("machine", choices=sorted(MACHINES))
    p_run.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "list":
        print(f"{'native':16s} {_describe_child({})}")
        for name in MACHINES:
            print(f"{name:16s} {_describe_child(environment(name))}")
        return 0
    if args.command == "env":
        for key, value in environment(args.machine).items():
            print(f"{key}={value}")
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("run needs a command after the machine")
    return subprocess.call(cmd, env={**os.environ, **environment(args.machine)})


if __name__ == "__main__":
    sys.exit(main())
