# The collection's pipeline. `make all` regenerates every notebook, figure, results table and
# the report; `make test` runs the library's tests and nbval on the stored notebooks. Both
# create .venv first if it is missing (a fresh machine needs only Python 3.11+ and make).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
KERNEL := whittle-lib
# What the venv holds besides the library (NumPy, SciPy): see pyproject.toml.
EXTRAS := notebooks,docs,test,dask
# Per-cell time limit (seconds) for papermill: a runaway cell fails the run instead of hanging.
CELL_TIMEOUT ?= 600

NOTEBOOKS := $(basename $(notdir $(wildcard notebooks/[0-9][0-9]_*.ipynb)))
# The machine `make test` runs the notebooks as (replication/machines.py): the stored results
# must come out byte for byte the same on it. Nehalem kernels and NumPy's baseline
# loops differ from every newer CPU's, and run on any x86-64 CPU.
PORTABLE_MACHINE ?= nehalem-sse42
# Notebooks run side by side by make all, nbval and the portable check (one per core).
JOBS ?= 2

.PHONY: all venv test test-lib test-notebooks test-portable test-aarch64 machines report bench clean \
	distclean lock html lab $(NOTEBOOKS)

# The notebooks run side by side, $(JOBS) at a time (each line of progress names its notebook),
# with one BLAS thread each since the runs already fill the cores; then the report reads
# their results. No stored result depends on the order or the thread count (make test checks
# them with one thread, as another machine).
all: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(MAKE) --no-print-directory -j$(JOBS) $(NOTEBOOKS)
	$(MAKE) --no-print-directory report

venv: $(STAMP)

$(STAMP): pyproject.toml requirements/constraints.txt Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or later is needed, found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e '.[$(EXTRAS)]'
	@# rfc3987-syntax (jupyter-events' jsonschema[format-nongpl]) builds a Lark grammar when
	@# jsonschema is imported: 1.1 s in every process that imports nbformat (each run, sweep
	@# point, nbval), python-jsonschema/jsonschema#1428. Without it jsonschema only skips the
	@# "iri" format check, which nothing here uses; pip check stays clean. environment.yml's
	@# header gives conda users the same step.
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name 'Python (whittle_lib)' >/dev/null
	@# The apparatus (replication/) is not part of the wheel: the venv finds it through a .pth
	@# file naming this checkout, so the kernel imports it from any working directory.
	$(BIN)/python -c 'import pathlib, sys, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "whittle-replication.pth").write_text(sys.argv[1] + "\n")' '$(CURDIR)'
	touch $(STAMP)

# One target per notebook: papermill runs it into build/, and only a complete run is moved
# into notebooks/, figures/ and data/results/ (replication/run.py).
$(NOTEBOOKS): %: $(STAMP)
	$(BIN)/python -m replication.run $* --kernel $(KERNEL) --cell-timeout $(CELL_TIMEOUT)

report: $(STAMP)
	$(BIN)/python -m replication.report

# The site under build/html/ (Sphinx with MyST-NB, docs/conf.py): the stored notebooks, not
# run, the reading order, a status page, the library's API and the source of every module;
# MathJax is copied from a Python package, so the pages read the same without network. Any
# Sphinx warning fails the build; tests/apparatus/test_site.py walks every local link.
html: $(STAMP)
	$(BIN)/python -m replication.site

# JupyterLab on notebooks/ with the project's kernel ($(KERNEL), "Python (whittle_lib)").
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks --MappingKernelManager.default_kernel_name=$(KERNEL)

test: test-lib test-notebooks

# One BLAS thread per test worker: the workers already fill the cores, and OpenBLAS's threads on
# the small matrices of the tests cost far more than they save (149 small policy iterations:
# 8.9 s with two threads per worker, 0.26 s with one). No stored result depends on the count.
test-lib test-notebooks: export OPENBLAS_NUM_THREADS = 1
test-lib test-notebooks: export OMP_NUM_THREADS = 1

# How the tests are spread over the workers (slow ones first, a few modules kept on one worker):
# tests/conftest.py.
test-lib: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) tests whittle_lib replication

# nbval reruns the stored notebooks and compares the summary cells (tag nbval-check-output);
# what the rerun writes goes to build/nbval, never over the stored figures and results, and
# must equal the stored results byte for byte. On x86-64 the rerun runs as the emulated
# machine $(PORTABLE_MACHINE) (its kernel inherits the environment), so one execution of each
# notebook checks both the summary cells and the results on another CPU; elsewhere natively.
AS_MACHINE = $(if $(filter x86_64,$(shell uname -m)),$(BIN)/python -m replication.machines run $(PORTABLE_MACHINE) --,)

test-notebooks: $(STAMP)
	rm -rf build/nbval
	@echo "nbval on the stored notebooks, as machine: $(if $(AS_MACHINE),$(PORTABLE_MACHINE),native $$(uname -m))"
	WHITTLE_OUTPUT_ROOT=$(CURDIR)/build/nbval MPLBACKEND=agg $(AS_MACHINE) $(BIN)/python -m pytest \
	    -p no:cacheprovider -n $(JOBS) --dist loadfile --nbval-lax --nbval-kernel-name $(KERNEL) \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout $(CELL_TIMEOUT) notebooks
	$(BIN)/python -m replication.check build/nbval

# The notebooks run as another emulated machine (`make test-portable PORTABLE_MACHINE=haswell-avx2`),
# into build/portable/; fails if a results file differs from the stored one. Not part of `make
# test`, whose nbval run is already an emulated machine's. Skipped on CPUs other than x86-64.
test-portable: $(STAMP)
	@if [ "$$(uname -m)" = x86_64 ]; then \
	    $(BIN)/python -m replication.check --machine $(PORTABLE_MACHINE) --jobs $(JOBS); \
	else echo "test-portable: skipped on $$(uname -m) (the emulated machines are x86-64)"; fi

# The fingerprint of the CPU-sensitive computations (tests/apparatus/portable_fingerprint.py) natively and
# as aarch64 Linux (qemu user-mode, Debian arm64 Python, the pinned NumPy/SciPy aarch64 wheels):
# every line but NumPy's own control line must be identical. The script installs
# qemu-user-static with apt-get and caches the arm64 sysroot in /tmp (about a minute at first).
# The script is part of the checkout (AARCH64_FINGERPRINT=/path/to/another.sh runs another).
AARCH64_FINGERPRINT ?= tests/apparatus/aarch64_fingerprint.sh

test-aarch64: $(STAMP)
	@if [ ! -f '$(AARCH64_FINGERPRINT)' ]; then \
	    echo "test-aarch64: skipped, no $(AARCH64_FINGERPRINT) (set AARCH64_FINGERPRINT)"; \
	elif ! command -v qemu-aarch64-static >/dev/null && \
	    ! { command -v apt-get >/dev/null && apt-get install -y -q qemu-user-static >/dev/null 2>&1; }; then \
	    echo "test-aarch64: skipped, qemu-user-static is missing and apt-get cannot install it"; \
	else PYTHON=$(BIN)/python bash '$(AARCH64_FINGERPRINT)'; fi

# What each emulated machine selects on this CPU.
machines: $(STAMP)
	$(BIN)/python -m replication.machines list

# The benchmark suite (benchmarks/README.md): our times against the peers' in the same run, one
# thread. The peers are the 'bench' extra, installed on first use. BENCH_ARGS="-k robots" or
# "--quick" selects cases.
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

# Regenerate the lock file from a clean venv built from pyproject.toml alone.
lock:
	rm -rf build/lockenv
	$(PYTHON) -m venv build/lockenv
	build/lockenv/bin/python -m pip install --quiet '.[$(EXTRAS),bench]'
	{ sed -n '1,5p' requirements/constraints.txt; build/lockenv/bin/python -m pip freeze --exclude-editable | grep -v -i '^whittle'; } > build/constraints.txt
	mv build/constraints.txt requirements/constraints.txt

# Untracked build output only: the stored notebooks, figures, results and REPLICATION.md are
# tracked, and `make all` regenerates them. Refuses if any of these paths is tracked.
CLEAN_PATHS := build .pytest_cache .hypothesis *.egg-info

clean:
	@tracked="$$(git ls-files -- $(CLEAN_PATHS) '*/__pycache__/*' '__pycache__/*' 2>/dev/null)"; \
	if [ -n "$$tracked" ]; then echo "make clean: refusing, tracked files would go:"; \
	    echo "$$tracked"; exit 1; fi
	rm -rf $(CLEAN_PATHS)
	find . -path ./.venv -prune -o -path ./.git -prune -o -type d -name __pycache__ -prune \
	    -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
