VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup test lint typecheck demo bench

setup: $(VENV)/.installed .nltk_data/.complete

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[offline,dev]"
	touch $@

.nltk_data/.complete: $(VENV)/.installed scripts/setup_nltk_data.py
	$(PY) scripts/setup_nltk_data.py --dest .nltk_data

lint: setup
	$(VENV)/bin/ruff check .

typecheck: setup
	$(VENV)/bin/mypy

# Two workers (pytest-xdist), each test file on one worker, files handed out in collection
# order as a worker runs low: tests/conftest.py puts the two slowest first.
test: setup lint typecheck
	$(VENV)/bin/pytest -n 2 --dist loadfile --no-loadscope-reorder

demo: setup
	$(VENV)/bin/mismatch demo

bench: setup
	$(VENV)/bin/mismatch bench all
