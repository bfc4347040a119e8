# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test bench lint typecheck clean

$(VENV)/.base: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PIP) install -q -e '.[test]'
	touch $@

$(VENV)/.bench: $(VENV)/.base
	$(PIP) install -q -e '.[bench]'
	touch $@

demo: $(VENV)/.base
	$(VENV)/bin/dpopt solve models/private_logistic_regression.py --epsilon 1.0 --delta 1e-6

test: $(VENV)/.test
	$(PY) -m pytest -q

bench: $(VENV)/.bench
	$(VENV)/bin/dpopt bench objective-perturbation

lint: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
