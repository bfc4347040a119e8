"""Shared fixtures of the dpopt test suite.

The suite is a map of the code:

* ``tests/unit``: declarations (schema, data, losses, sets, regularizers), compilation,
  the a-priori solver, privacy primitives (calibration, samplers, profiles, accountant),
  the audit harness and the public API snapshot;
* ``tests/backends``: the backend registry and conformance suite, the MIP oracles, the
  solver layer, executors and the fast linear path;
* ``tests/mechanisms``: one file per mechanism family (calibration, refusals, audits and
  mutation tests);
* ``tests/privacy``: the whole program as the mechanism (neighbour tests, pre-data
  declarations, ledgers, the coverage guard, refusals before the charge);
* ``tests/end_to_end``: the CLI, model scripts, README and docs examples, scikit-learn
  estimators and benchmark smoke tests.

Neighbouring datasets come from :mod:`dpopt.testing.pairs` (importable by user code too:
``one_point_pair``, ``grid_label_pair``, ``random_grid_pair``, and ``zero_one_problem`` for the
discrete mechanisms).  The fixtures here hold set-up that several folders share; a folder's
own ``conftest.py`` holds what only its files use.
"""

from __future__ import annotations

import pytest

import dpopt as dp


@pytest.fixture(scope="session")
def adult_300() -> dp.Dataset:
    """300 balanced rows of the shipped UCI Adult training data (seed 0), read once per run."""
    from dpopt.datasets import load_adult

    return load_adult("train", balanced=True, n=300, seed=0)
