# Everything a fresh machine needs: `make demo` and `make test` build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit install clean-venv constraints sandbox bench

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m quantscope.tour

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

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
