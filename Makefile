# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000
STAGE ?= dev

.PHONY: run test lint unit fast e2e bench format clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a requirements file changed.
$(STAMP): $(PY) requirements.txt requirements-dev.txt
	$(PY) -m pip install --quiet --upgrade "pip<26.3"
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

## run: start the whole local stack (emulator, tables, queues, API on :$(PORT), workers, demo data)
run: $(STAMP)
	PORT=$(PORT) exec $(PY) -m chalicelib.local

## test: install what tests need, lint, and run every test (unit, service, api, e2e)
test: $(STAMP) lint
	$(PY) -m pytest -q -p no:cacheprovider

## lint: ruff and mypy, as CI runs them
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy app.py chalicelib bench

## fast: the tests that need no running stack
fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not e2e"

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: $(STAMP)
	$(PY) bench/cold_import.py

clean:
	rm -rf $(VENV) .local .pytest_cache .mypy_cache .ruff_cache
