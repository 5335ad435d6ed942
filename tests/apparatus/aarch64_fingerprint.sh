#!/usr/bin/env bash
# Run tests/apparatus/portable_fingerprint.py natively and as aarch64 (qemu user-mode emulation, Debian
# bookworm arm64 Python 3.11 in a private sysroot, the pinned numpy/scipy aarch64 wheels) and
# print the lines that differ. Run it from a project checkout (read only; nothing is written there):
#     bash tests/apparatus/aarch64_fingerprint.sh            (make test-aarch64)
# Exit 0 if every line but "control numpy" is identical, 1 otherwise, 2 on a setup error.
# The control line (NumPy's own SIMD exp/log) is expected to differ and is only reported.
# Env: PYTHON (native interpreter; default .venv/bin/python, else python3),
#      AARCH64_WORK (cache folder; default /tmp/aarch64-fingerprint),
#      QEMU_CPU (emulated CPU, read by qemu itself: max (default), neoverse-n1, cortex-a72, a64fx).
# Installs qemu-user-static with apt-get if missing; arm64 packages are only downloaded and
# unpacked into the cache folder (separate apt state: the host's dpkg is not touched).
set -euo pipefail
[ -f tests/apparatus/portable_fingerprint.py ] || { echo "run this from the project checkout" >&2; exit 2; }
PROJ=$(pwd)
PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python || PY=python3; }
W=${AARCH64_WORK:-/tmp/aarch64-fingerprint}
mkdir -p "$W"
export PYTHONDONTWRITEBYTECODE=1          # leave no __pycache__ in the checkout

command -v qemu-aarch64-static >/dev/null || apt-get install -y -q qemu-user-static >&2

if [ ! -x "$W/sysroot/usr/bin/python3.11" ]; then
  A="-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Dir::State::Lists=$W/apt/lists
     -o Dir::Cache=$W/apt/cache -o Dir::State::status=$W/apt/status"
  mkdir -p "$W/apt/lists/partial" "$W/apt/cache/archives/partial" "$W/debs"
  touch "$W/apt/status"
  apt-get $A -q update >&2
  (cd "$W/debs" && apt-get $A -q download python3.11-minimal libpython3.11-minimal \
     libpython3.11-stdlib libc6 libexpat1 zlib1g libffi8 libssl3 libbz2-1.0 liblzma5 \
     libsqlite3-0 libgcc-s1 libstdc++6 libgfortran5 libcrypt1 libncursesw6 libtinfo6 \
     libreadline8 libuuid1 libnsl2 libtirpc3 libdb5.3 media-types >&2)
  for d in "$W"/debs/*.deb; do dpkg -x "$d" "$W/sysroot"; done
fi

pin() { sed -n "s/^$1==//p" requirements/constraints.txt; }
NUMPY=$(pin numpy); SCIPY=$(pin scipy)
SITE="$W/site-numpy$NUMPY-scipy$SCIPY"
if [ ! -d "$SITE/numpy" ]; then
  "$PY" -m pip download -q --only-binary=:all: --no-deps --python-version 3.11 \
    --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --platform manylinux_2_28_aarch64 -d "$W/wheels" "numpy==$NUMPY" "scipy==$SCIPY" >&2
  mkdir -p "$SITE"
  for w in "$W"/wheels/numpy-"$NUMPY"-*.whl "$W"/wheels/scipy-"$SCIPY"-*.whl; do
    "$PY" -m zipfile -e "$w" "$SITE/"
  done
fi

NATIVE=$(mktemp); ARM=$(mktemp); trap 'rm -f "$NATIVE" "$ARM"' EXIT
PYTHONPATH="$PROJ" "$PY" tests/apparatus/portable_fingerprint.py > "$NATIVE"
start=$(date +%s)
PYTHONPATH="$SITE:$PROJ" qemu-aarch64-static -L "$W/sysroot" "$W/sysroot/usr/bin/python3.11" \
  tests/apparatus/portable_fingerprint.py > "$ARM"
echo "emulated aarch64 run: $(( $(date +%s) - start )) s" >&2

"$PY" - "$NATIVE" "$ARM" <<'EOF'
import sys
read = lambda p: dict(l.rsplit(" ", 1) for l in open(p).read().splitlines())
native, arm = read(sys.argv[1]), read(sys.argv[2])
bad = 0
for name in dict.fromkeys([*native, *arm]):
    a, b = native.get(name), arm.get(name)
    if a != b:
        control = name == "control numpy"
        bad += not control
        print(f"{name}: x86-64 {a}  aarch64 {b}" + ("  (control: expected)" if control else ""))
print(f"{bad} of {len(native) - 1} lines differ (control excluded)", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
