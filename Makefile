# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Absolute links (the digest, drafted issues, the demo's printout) name the served address.
SITE_URL ?= http://$(HOST):$(PORT)
# ...and is recorded where the local settings read it, for manage.py commands run beside it.
VAR_DIR := $(or $(PARITY_VAR_DIR),var)
RECORD_SITE_URL := mkdir -p $(VAR_DIR) && echo '$(SITE_URL)' > $(VAR_DIR)/site_url
# parity.wsgi, parity.celery and manage.py runserver default to the production settings (no
# default secret, HTTPS only); the laptop targets below say so explicitly.
LOCAL := DJANGO_SETTINGS_MODULE=parity.settings.local SITE_URL=$(SITE_URL)

.PHONY: demo test install install-dev migrate serve superuser stop lint fixture worker beat clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

## What the site needs (requirements.txt); install-dev adds the test and lint tools
install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

migrate: install
	$(LOCAL) $(PY) manage.py migrate --noinput

## Set up everything, load demo data through the upload API, serve on http://127.0.0.1:8000
demo: migrate
	@$(RECORD_SITE_URL)
	$(LOCAL) $(PY) manage.py load_demo
	$(LOCAL) $(PY) manage.py runserver $(HOST):$(PORT)

## The whole test suite against a real Postgres (DATABASE_URL, or the embedded one)
test: install-dev
	$(PY) -m pytest

serve: migrate
	@$(RECORD_SITE_URL)
	$(LOCAL) $(PY) manage.py runserver $(HOST):$(PORT)

## An admin login (/admin/), with the local settings
superuser: migrate
	$(LOCAL) $(PY) manage.py createsuperuser

## Stop the embedded Postgres (it outlives the server; nothing to do with DATABASE_URL set)
stop:
	@if [ -x $(PY) ]; then $(LOCAL) $(PY) -m parity.embedded_db stop; fi

worker: install
	$(LOCAL) $(VENV)/bin/celery -A parity worker -Q ingest,parity,digest,recovery --loglevel=INFO

# Webhook and Slack deliveries, apart: a slow receiver holds only this worker.
worker-webhooks: install
	$(LOCAL) $(VENV)/bin/celery -A parity worker -Q webhooks --loglevel=INFO -n webhooks@%h

beat: install
	$(LOCAL) $(VENV)/bin/celery -A parity beat --loglevel=INFO --schedule=var/celerybeat-schedule

## Lint, format, and the import walls: .importlinter's contracts and no import cycles
lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache --no-logo
	$(PY) tools/import_cycles.py
	$(PY) tools/rollup_reads.py
	$(PY) tools/stack_total.py

## Rebuild the demo fixture from ../shared/data/pytorch-xla
fixture: install
	$(PY) -m parity.demo.build_fixture

## Delete the virtualenv and var/ (the embedded database's data), stopping its server first
clean: stop
	rm -rf $(VENV) var
