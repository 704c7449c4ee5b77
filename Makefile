# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# manage.py, parity.wsgi and parity.celery default to the production settings (no default
# secret, HTTPS only); the laptop targets below say so explicitly.
LOCAL := DJANGO_SETTINGS_MODULE=parity.settings.local

.PHONY: demo test install migrate serve lint fixture worker beat clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

migrate: install
	$(LOCAL) $(PY) manage.py migrate --noinput

## Set up everything, load demo data through the upload API, serve on http://127.0.0.1:8000
demo: migrate
	$(LOCAL) $(PY) manage.py load_demo
	$(LOCAL) $(PY) manage.py runserver $(HOST):$(PORT)

## The whole test suite against a real Postgres (DATABASE_URL, or the embedded one)
test: install
	$(PY) -m pytest

serve: migrate
	$(LOCAL) $(PY) manage.py runserver $(HOST):$(PORT)

worker: install
	$(LOCAL) $(VENV)/bin/celery -A parity worker --loglevel=INFO

beat: install
	$(LOCAL) $(VENV)/bin/celery -A parity beat --loglevel=INFO --schedule=var/celerybeat-schedule

## Lint, format, and the import walls: .importlinter's contracts and no import cycles
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache --no-logo
	$(PY) tools/import_cycles.py

## Rebuild the demo fixture from ../shared/data/pytorch-xla
fixture: install
	$(PY) -m parity.demo.build_fixture

clean:
	rm -rf $(VENV) var
