# Everything a fresh machine needs: `make demo` and `make test` build .venv themselves.
# Another Python (every one pyproject.toml claims: 3.11, 3.12, 3.13): `make test PYTHON=python3.13`
# builds and uses .venv-3.13 beside the default .venv (pyenv: `PYENV_VERSION=3.13.0` too, or
# PYTHON=/path/to/python3.13). The default `python3` keeps .venv.
PYTHON ?= python3
VENV ?= $(if $(filter python3,$(PYTHON)),.venv,.venv-$(patsubst python%,%,$(notdir $(PYTHON))))
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck unit install clean-venv constraints sandbox bench lab panels chromium notebooks reliability python-versions

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The main job: the text tour, then every notebook executed on a fresh embedded sandbox,
# written as HTML (and key figures as PNG) under build/, and one study report per quant
# under build/reports/. It runs on a sandbox already used today: the tour starts a fresh quota
# day on the embedded sandbox (and says so), the notebooks run in a world of their own.
demo: $(STAMP)
	$(BIN)/python -m quantscope.tour
	$(BIN)/python tools/notebooks.py demo --out build
	$(BIN)/quantscope report --all-quants --confirm -o build/reports

# Regenerate notebooks/*.ipynb from notebooks/src/*.py and store fresh outputs (nbval compares
# against them): run after editing a notebook source.
notebooks: $(STAMP)
	$(BIN)/python tools/notebooks.py sync

# JupyterLab (pinned in constraints.txt, installed with the dev extras) on notebooks/, as root
# too (--allow-root is added then); QUANTSCOPE_URL/QUANTSCOPE_API_KEY reach the kernels.
# Extra arguments: `make lab ARGS="--port=8899 --no-browser"`.
lab: $(STAMP)
	$(BIN)/python tools/notebooks.py lab $(ARGS)

# The three panels (ThresholdPanel, PlaybookEditor, RecommendationsPanel) as a Voila page on
# http://127.0.0.1:8866/: the embedded sandbox, or the service of QUANTSCOPE_URL and
# QUANTSCOPE_API_KEY. `make panels ARGS="--quant 2 --no-browser"`.
panels: $(STAMP)
	$(BIN)/python tools/notebooks.py panels $(ARGS)

# Debian's Chromium for the browser tests (tests/browser/; Playwright never downloads one):
# apt-get as root, else through sudo.
CHROMIUM := /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || if [ "$$(id -u)" = 0 ]; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	else \
		sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

# Everything but the reliability suite, as CI runs it: lint, format check, types, every test
# (the browser tests too: Voila + Chromium, skipped with one line when Chromium is missing and
# not installable), the notebooks under nbval. CI (.ci/run) then runs `make reliability`.
# pytest runs on every core (pytest-xdist; TEST_WORKERS=0 for one process): a test module, the
# notebooks and the browser tests each stay in one worker (tests/conftest.py).
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) tests notebooks --nbval --nbval-current-env -m "not reliability"

# The inner loop while coding (a few minutes here): every test but the `slow` ones (the
# browser tests are slow) and the reliability suite, no notebooks, no lint, on every core.
# One folder or file alone: `.venv/bin/python -m pytest -q tests/toolkit`.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) tests -m "not slow and not reliability"

# The reliability suite (tests/reliability; CI runs it after `make test`): schemathesis over
# every operation (20,000+ requests), races, quota races, restarts, kill -9, a 60 s soak; the
# fuzz and the soak run in the background while the fault tests run (tests/reliability/conftest.py).
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

# The fast suite on every Python the package claims, each in its own venv (.venv-3.12, ...).
PYTHON_VERSIONS ?= python3.11 python3.12 python3.13
python-versions:
	for py in $(PYTHON_VERSIONS); do $(MAKE) test-fast PYTHON=$$py || exit 1; done
