# Two commands on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)
PYSRC := $(shell find python -name '*.py' -o -name '*.pyi' 2>/dev/null)
RSSRC := $(shell find crates -name '*.rs' -o -name 'Cargo.toml' 2>/dev/null) Cargo.toml Cargo.lock

.PHONY: demo test test-rust test-python fuzz bench develop clean

$(VENV)/.installed: requirements/dev.txt requirements/constraints.txt
	python3 -m venv $(VENV)
	$(PIP) install -q -r requirements/dev.txt -c requirements/constraints.txt
	touch $@

# The extension is rebuilt whenever Rust or Python sources change.
$(VENV)/.built: $(VENV)/.installed $(RSSRC) $(PYSRC) pyproject.toml
	$(VENV)/bin/maturin develop --release --quiet
	touch $@

develop: $(VENV)/.built

target/release/flowshare-sim: $(VENV)/.installed $(RSSRC)
	cargo build --release --quiet -p flowshare-bench

demo: develop
	$(VENV)/bin/flowshare demo --out demo-out

test: test-rust test-python

test-rust: $(VENV)/.installed
	cargo fmt --all --check
	cargo clippy --profile checked --workspace --all-targets --quiet -- -D warnings
	# Every test with debug assertions and overflow checks (Cargo.toml's `checked` profile: the
	# release optimisation without LTO), the golden outputs among them. The shipped build (fat
	# LTO) gives the same goldens in tests/test_golden.py, through the Python extension.
	cargo test --workspace --profile checked --quiet

# The suite runs on every core (pytest-xdist, each test file on one worker so that its
# fixtures are built once), then the `serial` tests alone: live runs need a quiet machine.
PYTEST_WORKERS ?= logical
test-python: develop
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not serial"
	$(PY) -m pytest -m serial

# Nightly: the fuzz of the scenario loader and builder that `make test` runs for about a
# minute (docs/reliability.md, "Fuzzing"), with many more cases: the Rust fuzz in both
# profiles, then the Python API and the command line; about 25 minutes on two cores (estimated).
FUZZ_RUST_CASES ?= 1000000
FUZZ_PYTHON_CASES ?= 20000
FUZZ_CLI_CASES ?= 2000
fuzz: develop
	FLOWSHARE_FUZZ_CASES=$(FUZZ_RUST_CASES) cargo test --release -p flowshare-core --test fuzz_scenarios -- --nocapture
	FLOWSHARE_FUZZ_CASES=$(FUZZ_RUST_CASES) cargo test --profile checked -p flowshare-core --test fuzz_scenarios -- --nocapture
	FLOWSHARE_FUZZ_CASES=$(FUZZ_PYTHON_CASES) $(PY) -m pytest tests/test_fuzz.py -k "not command_line"
	FLOWSHARE_FUZZ_CASES=$(FUZZ_CLI_CASES) $(PY) -m pytest tests/test_fuzz.py -k command_line

# The driver (bench/) times the flowshare-sim binary; it needs no build of the Python package.
bench: $(VENV)/.installed target/release/flowshare-sim
	$(PY) -m bench --write-doc docs/performance.md

clean:
	rm -rf $(VENV) target demo-out
