# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000
# FRESH=1: `make run` forgets the data of earlier runs (.local/data/) and starts empty.
FRESH ?=
STAGE ?= dev

.PHONY: run test lint unit fast e2e bench format clean screenshot

# Python writes and reuses bytecode here whatever the calling shell says: a test run starts ~25
# Python processes (the xdist workers, a local stack and its emulator per e2e module, CLI runs),
# and with PYTHONDONTWRITEBYTECODE set each compiled chalicelib and pytest rewrote every test module
# again (collection: 15.7 s of CPU per worker without the cache, 5.4 s with it).
unexport PYTHONDONTWRITEBYTECODE

# Install Debian package $(2) when command $(1) is missing (root or passwordless sudo, and apt);
# idempotent; prints a warning instead of failing, because its tests skip outside CI.
define apt_install
command -v $(1) >/dev/null || { S=; [ "$$(id -u)" = 0 ] || S="sudo -n"; \
  { command -v apt-get >/dev/null && { [ -z "$$S" ] || sudo -n true 2>/dev/null; } \
    && $$S apt-get update -qq && $$S env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); } \
  || echo "warning: could not install $(2) (needs root or sudo, and apt); $(3)"; }
endef

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a requirements file changed. --no-compile: pip would compile every module of
# every package (moto's hundreds of services, botocore, ...) to bytecode, more than half of the
# install's 27 s; Python compiles what is imported, once, on first use (12.7 s with it).
$(STAMP): $(PY) requirements.txt requirements-dev.txt pyproject.toml
	$(PY) -m pip install --quiet --upgrade "pip<26.3"
	$(PY) -m pip install --quiet --no-compile -r requirements-dev.txt
	@# The `tocsin` command (chalicelib/client) as .venv/bin/tocsin, pointing at this checkout.
	$(PY) -m pip install --quiet --no-compile --no-deps --no-build-isolation -e .
	touch $(STAMP)

## run: start the whole local stack (emulator, tables, queues, API on :$(PORT), workers, demo data);
## its data lives in .local/data/ across restarts, `make run FRESH=1` starts empty
run: $(STAMP)
	PORT=$(PORT) FRESH=$(FRESH) exec $(PY) -m chalicelib.local

## test: install what tests need, lint, and run every test (unit, service, api, e2e)
test: $(STAMP)
	@# Alertmanager e2e test needs the real binary (Debian package); idempotent, warns if it cannot install.
	@command -v prometheus-alertmanager >/dev/null || { S=; [ "$$(id -u)" = 0 ] || S="sudo -n"; \
	  { command -v apt-get >/dev/null && { [ -z "$$S" ] || sudo -n true 2>/dev/null; } \
	    && $$S apt-get update -qq && $$S env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-alertmanager \
	    && { $$S systemctl disable --now prometheus-alertmanager >/dev/null 2>&1 || true; }; } \
	  || echo "warning: could not install prometheus-alertmanager (needs root or sudo, and apt); its e2e test skips outside CI"; }
	@# The status page browser test drives headless Chromium (Debian package chromium).
	@$(call apt_install,chromium,chromium,the status page browser test skips outside CI)
	@# Lint on one CPU while a collect-only run on the other writes every test module's rewritten
	@# bytecode: each xdist worker then loads it instead of rewriting the suite's 11,000 asserts
	@# itself (a clean clone's collection: 19.7 s a worker cold, 5.2 s warm). Its own errors, if
	@# any, are the real run's to report.
	@$(PY) -m pytest -q -p no:cacheprovider --collect-only >/dev/null 2>&1 & warm=$$!; \
	  $(MAKE) --no-print-directory lint; status=$$?; wait $$warm; exit $$status
	@# One file per worker at a time (its module fixtures, e.g. an e2e module's local stack, are built
	@# once), in collection order, which tests/conftest.py sorts longest first (the e2e files, the
	@# contract sweep's two parts first of all). (`--dist loadgroup` no longer groups anything with
	@# pytest 9: xdist 3.8 renames node ids through an attribute pytest ignores.)
	$(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile --no-loadscope-reorder

## lint: ruff and mypy, as CI runs them
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy app.py chalicelib bench scripts

## fast: the tests that need no running stack, on every CPU
fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not e2e" -n auto --dist loadfile --no-loadscope-reorder

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: $(STAMP)
	$(PY) bench/cold_import.py

## screenshot: desktop and phone screenshots of a running stack's status page and console (incident list,
## an incident) into .local/screenshots/
SCREENSHOT_URL ?= http://127.0.0.1:$(PORT)/status/tocsin-demo
screenshot: $(STAMP)
	@$(call apt_install,chromium,chromium,screenshots need it)
	$(PY) scripts/status_screenshot.py "$(SCREENSHOT_URL)" .local/screenshots
	$(PY) -m scripts.console_screenshot .local/demo.json .local/screenshots

clean:
	rm -rf $(VENV) .local .pytest_cache .mypy_cache .ruff_cache

# --- AWS (docs/DEPLOY.md) ------------------------------------------------------------------------
AWS_DEFAULT_REGION ?= us-east-1
DIST ?= dist/$(STAGE)
STACK ?= tocsin-$(STAGE)
DEPLOY_BUCKET ?=
PARAMS ?=

.PHONY: package deploy

## package: dist/$(STAGE)/sam.json + deployment.zip from `chalice package` (no AWS account needed)
package: $(STAMP)
	$(PY) -m chalicelib.deploy check --stage $(STAGE)
	rm -rf $(DIST)
	AWS_DEFAULT_REGION=$(AWS_DEFAULT_REGION) $(VENV)/bin/chalice package --stage $(STAGE) \
		--merge-template template/resources.json $(DIST)

## deploy: package and deploy the stack with the AWS CLI; without credentials, print the plan and fail
deploy: $(STAMP)
	$(PY) -m chalicelib.deploy deploy --stage $(STAGE) --stack $(STACK) --region $(AWS_DEFAULT_REGION) \
		--bucket "$(DEPLOY_BUCKET)" --parameters "$(PARAMS)"
