"""Small tables of a known structure for tests of the solvers' fast paths.

:func:`onehot_table` gives rows like the standard Adult encoding (two one-hot blocks and two
numeric columns with few levels), so many rows are exactly equal: what row aggregation
(:mod:`dpopt.compile.aggregate`) merges and the scipy backend's Newton method solves on.
:func:`regression_table` gives a small bounded regression table.
"""

from __future__ import annotations

import math

import numpy as np

from dpopt.modeling.dataset import Dataset

__all__ = ["onehot_table", "regression_table"]


def onehot_table(n: int = 400, seed: int = 0) -> Dataset:
    """Rows like the standard Adult encoding (2 one-hot blocks + 2 numeric), norm ≤ 1, with duplicates."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, n), rng.integers(0, 4, n)
    X = np.zeros((n, 9))
    X[np.arange(n), a] = 1.0
    X[np.arange(n), 3 + b] = 1.0
    X[:, 7:] = rng.integers(0, 3, (n, 2)) / 2.0  # few levels: many identical rows
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=9) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Dataset(X, y, x_bound=1.0, y_bound=1.0)


def regression_table(n: int = 60, p: int = 6, seed: int = 0) -> Dataset:
    """``n`` rows in the unit ℓ2 ball of ℝ^p, labels a noisy linear function clipped to [−1, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p)) / math.sqrt(p)
    y = np.clip(X @ rng.normal(size=p) + 0.1 * rng.normal(size=n), -1, 1)
    return Dataset(X, y, x_bound=1.0, y_bound=1.0)
