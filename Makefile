# Everything a fresh machine needs: `make demo` and `make test` build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck unit install clean-venv constraints sandbox bench lab notebooks reliability

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The main job: the text tour, then every notebook executed on a fresh embedded sandbox,
# written as HTML (and key figures as PNG) under build/.
demo: $(STAMP)
	$(BIN)/python -m quantscope.tour
	$(BIN)/python tools/notebooks.py demo --out build

# Regenerate notebooks/*.ipynb from notebooks/src/*.py and store fresh outputs (nbval compares
# against them): run after editing a notebook source.
notebooks: $(STAMP)
	$(BIN)/python tools/notebooks.py sync

lab: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt jupyterlab
	$(BIN)/python tools/notebooks.py lab

# Everything, as CI runs it: lint, format check, types, every test, the notebooks under nbval.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q tests notebooks --nbval --nbval-current-env

# The inner loop while coding (about a minute here): every test but the `slow` ones, no
# notebooks, no lint. One folder or file alone: `.venv/bin/python -m pytest -q tests/toolkit`.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q tests -m "not slow"

# The reliability suite alone (tests/reliability, also part of `make test`): schemathesis over
# every operation (20,000+ requests), races, quota races, restarts, kill -9, a 60 s soak.
# Figures and how to read them: docs/reliability.md.
reliability: $(STAMP)
	$(BIN)/python -m pytest -q tests/reliability -m reliability -s -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -q

sandbox: $(STAMP)
	$(BIN)/quantscope sandbox serve

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# Re-pin the constraints after changing dependencies (needs the registry).
constraints:
	rm -rf /tmp/qs-pin && $(PYTHON) -m venv /tmp/qs-pin
	/tmp/qs-pin/bin/python -m pip install --quiet --upgrade pip
	/tmp/qs-pin/bin/python -m pip install --quiet -e ".[dev]"
	/tmp/qs-pin/bin/python -m pip freeze --exclude-editable | grep -v '^-e' > constraints.txt

clean-venv:
	rm -rf $(VENV)
