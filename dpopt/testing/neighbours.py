"""Neighbouring datasets that stress the whole program, for the mechanisms' neighbour tests.

The whole program is the mechanism (docs/design.md, "Privacy rules"): on neighbouring datasets
D, D' (one row replaced) everything an analyst observes besides the noisy output must be the same
(:func:`dpopt.testing.views.assert_same_view`).  The replaced row is chosen to stress the
*program*, not the noise: a row outside the declared bounds, off the declared grid, one that the
old MIP scaling could not read, one that flips what an automatic column split would see, an
exact-zero margin, a zero row, a row that contradicts another.  Each mechanism's test file runs
its neighbour test on every pair built here (:func:`convex_pair`, :func:`discrete_pair`) and on
every installed backend that can solve its problem (:func:`convex_backends`,
:func:`discrete_backends`: a backend's capability is decided from the problem's structure only).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpopt.backends import registry
from dpopt.modeling.balls import L2Ball
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.losses import LogisticLoss
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L2Squared
from dpopt.modeling.schema import Binary, Numeric, Schema
from dpopt.modeling.variable import Variable
from dpopt.modeling.zero_one import ZeroOneLoss

__all__ = ["DISCRETE_SCHEMA_COLUMNS", "DISCRETE_STRESS", "STRESS_ROWS", "classification",
           "convex_backends", "convex_pair", "discrete_backends", "discrete_data", "discrete_pair",
           "discrete_problem", "discrete_schema", "glm"]

Stress = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, float]]

# ----------------------------------------------------------------------------- convex problems


def classification(seed: int = 0, n: int = 120, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows in the unit ℓ2 ball with ±1 labels from a noisy linear rule."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.arange(1, d + 1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


#: rows that stress the program: outside the declared bound (mapped onto it), zero,
#: contradicting row 0, and a huge-leverage row exactly on the bound
STRESS_ROWS: dict[str, Stress] = {
    "outside-bound": lambda X, y: (np.full(X.shape[1], 50.0), 1.0),
    "zero-row": lambda X, y: (np.zeros(X.shape[1]), -1.0),
    "contradiction": lambda X, y: (X[0].copy(), -y[0]),
    "on-bound": lambda X, y: (np.eye(X.shape[1])[0], -1.0),
}


def convex_pair(stress: str) -> tuple[Dataset, Dataset]:
    """:func:`classification`'s table and the same table with row 7 replaced by ``STRESS_ROWS[stress]``."""
    X, y = classification()
    d0 = Dataset(X, y, x_bound=1.0, y_bound=1.0, clip=True)
    x, label = STRESS_ROWS[stress](X, y)
    return d0, d0.replace_row(7, x, label)


def glm(data: Dataset, *, loss: type = LogisticLoss, lam: float = 0.05) -> Problem:
    """A regularized GLM over the ℓ2 ball of radius 5."""
    th = Variable(data.n_features)
    return Problem(loss(data, th), constraint=L2Ball(th, 5.0), regularizer=L2Squared(th, lam))


def convex_backends(problem: Problem | None = None) -> list[str]:
    """Every installed convex backend that can solve ``problem`` (default: :func:`glm` on
    :func:`classification`), decided from its structure."""
    if problem is None:
        problem = glm(Dataset(*classification(), x_bound=1.0, y_bound=1.0, clip=True))
    names = []
    for name in registry.names():
        backend = registry.get(name)
        if backend.kind != "convex" or not backend.available():
            continue
        try:
            backend.check(problem)  # structural capability: a public fact
        except Exception:  # noqa: BLE001
            continue
        names.append(name)
    return names


# ----------------------------------------------------------------------------- discrete problems

DISCRETE_SCHEMA_COLUMNS = 3


def discrete_schema() -> Schema:
    """Two numeric columns on a 1/4 grid and a binary one."""
    return Schema([("a", Numeric(-1, 1, grid="1/4")), ("b", Numeric(-1, 1, grid="1/4")),
                   ("c", Binary())])


#: rows that stress the program: off the declared grid, values the old rational scaling
#: refused, a half on the binary column (the old automatic split read 0/1-ness off the
#: data), far outside the bounds, an exact-zero margin at many grid points, and a row
#: that contradicts row 0 (an opposite pair: a harder MIP)
DISCRETE_STRESS: dict[str, Stress] = {
    "off-grid": lambda X, y: (np.array([0.3, -0.77, 1.0]), 1.0),
    "unscalable": lambda X, y: (np.array([math.pi / 10, math.sqrt(2) / 3, 0.0]), -1.0),
    "split-changing": lambda X, y: (np.array([0.25, 0.5, 0.5]), 1.0),
    "out-of-bounds": lambda X, y: (np.array([5.0, -7.0, 3.0]), -1.0),
    "zero-margin": lambda X, y: (np.array([0.25, -0.25, 0.0]), 1.0),
    "contradiction": lambda X, y: (X[0].copy(), -y[0]),
    "label-zero": lambda X, y: (X[1].copy(), 0.0),  # not ±1: mapped to −1, never a refusal
}


def discrete_data() -> tuple[np.ndarray, np.ndarray]:
    """12 rows on :func:`discrete_schema`'s grid with ±1 labels."""
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.integers(-4, 5, size=(12, 2)) / 4.0, rng.integers(0, 2, size=12)])
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.normal(size=12) > 0, 1.0, -1.0)
    return X, y


def discrete_pair(stress: str) -> tuple[Dataset, Dataset]:
    """:func:`discrete_data`'s table and the same table with row 5 replaced by ``DISCRETE_STRESS[stress]``."""
    X, y = discrete_data()
    d0 = Dataset(X, y, schema=discrete_schema())
    x, label = DISCRETE_STRESS[stress](X, y)
    return d0, d0.replace_row(5, x, label)


def discrete_problem(data: Dataset) -> DiscreteProblem:
    """The 0/1 loss of a halfspace on an integer grid with an ℓ2 bound."""
    w = Variable(DISCRETE_SCHEMA_COLUMNS)
    return DiscreteProblem(ZeroOneLoss(data, w, IntegerGrid(1, -2, 2, l2_bound=3.0)))


def discrete_backends() -> list[str]:
    """Every installed MIP backend."""
    return [n for n in registry.names() if registry.get(n).kind == "mip" and registry.get(n).available()]
