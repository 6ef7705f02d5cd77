# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both build .venv in the checkout; `make test` also makes sure of the system parts
# the tests need (see scripts/ensure-system.sh).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The demo needs the core only (about a third of the disk and download of the full set);
# the tests need every extra and the dev tools, installed on top of it.
CORE_STAMP := $(VENV)/.core-stamp
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit system clean bench-smoke

$(CORE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	$(BIN)/python -m pip install -q -e '.[server,postgres,agentdojo,dev]'
	touch $(STAMP)

demo: $(CORE_STAMP)
	$(BIN)/intently demo

system:
	bash scripts/ensure-system.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) system
	INTENTLY_TEST_BACKENDS=sqlite,postgresql $(BIN)/pytest -q

test: lint typecheck unit

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
