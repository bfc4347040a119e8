# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test bench docs lint typecheck clean

$(VENV)/.base: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

# the demo: dpopt with the sklearn extra, which the README's scikit-learn example needs
$(VENV)/.demo: $(VENV)/.base
	$(PIP) install -q -e '.[sklearn]'
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PIP) install -q -e '.[test]'
	touch $@

$(VENV)/.bench: $(VENV)/.base
	$(PIP) install -q -e '.[bench]'
	touch $@

$(VENV)/.docs: $(VENV)/.base
	$(PIP) install -q -e '.[docs]'
	touch $@

demo: $(VENV)/.demo
	$(VENV)/bin/dpopt solve models/private_logistic_regression.py --epsilon 1.0 --delta 1e-6

# -n auto: one pytest-xdist worker per core (the slowest tests are printed at the end)
test: $(VENV)/.test
	$(PY) -m pytest -q -n auto

bench: $(VENV)/.bench
	$(VENV)/bin/dpopt bench objective-perturbation

# the documentation site (docs/): HTML in docs/_build/html, every warning an error; the API
# pages (docs/generated) are made afresh, so a name removed from __all__ leaves no stale page
docs: $(VENV)/.docs
	rm -rf docs/generated
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

lint: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache docs/_build docs/generated
