"""Shared fixtures of the dpopt test suite.

The suite is a map of the code (``tests/contracts/test_test_layout.py`` keeps it one):

* ``tests/<layer>/test_<module>.py`` tests ``dpopt/<layer>/<module>.py`` (``tests/test_<module>.py``
  tests ``dpopt/<module>.py``; ``test_<module>_<aspect>.py`` when one module has several files):
  ``backends``, ``bench``, ``cli``, ``compile``, ``datasets``, ``mechanisms`` (each mechanism's
  neighbour test, audit and mutation test beside its other tests), ``modeling`` (and
  ``modeling/schema``), ``numerics``, ``privacy``, ``sklearn``, ``testing``;
* ``tests/contracts``: the generic guards and contract suites that run over every mechanism,
  set, loss, backend or module (layers, public API, coverage, pre-data declarations, set and
  loss contracts, backend conformance);
* ``tests/end_to_end``: whole programs — model scripts through the CLI, the README and docs
  examples, newcomers' mistakes.

Helpers that several test files use live in :mod:`dpopt.testing`, never in a test module.
Neighbouring datasets come from :mod:`dpopt.testing.pairs` (importable by user code too:
``one_point_pair``, ``grid_label_pair``, ``random_grid_pair``, and ``zero_one_problem`` for the
discrete mechanisms).  The fixtures here hold set-up that several folders share; a folder's
own ``conftest.py`` holds what only its files use.
"""

from __future__ import annotations

import pytest

import dpopt as dp
from dpopt.testing import neighbours


@pytest.fixture(scope="session")
def adult_300() -> dp.Dataset:
    """300 balanced rows of the shipped UCI Adult training data (seed 0), read once per run."""
    from dpopt.datasets import load_adult

    return load_adult("train", balanced=True, n=300, seed=0)


@pytest.fixture(params=sorted(neighbours.STRESS_ROWS), scope="module")
def convex_pair(request: pytest.FixtureRequest) -> tuple[dp.Dataset, dp.Dataset]:
    """A classification table and its neighbour with one stressing row (every mechanism's
    neighbour test on a convex problem runs on each, :mod:`dpopt.testing.neighbours`)."""
    return neighbours.convex_pair(request.param)


@pytest.fixture(params=sorted(neighbours.DISCRETE_STRESS), scope="module")
def discrete_pair(request: pytest.FixtureRequest) -> tuple[dp.Dataset, dp.Dataset]:
    """A table on a declared grid and its neighbour with one stressing row (the discrete
    mechanisms' neighbour tests run on each, :mod:`dpopt.testing.neighbours`)."""
    return neighbours.discrete_pair(request.param)
