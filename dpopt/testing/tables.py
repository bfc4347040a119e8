"""Small tables of a known structure for tests of the solvers' fast paths.

:func:`onehot_table` gives rows like the standard Adult encoding (two one-hot blocks and two
numeric columns with few levels), so many rows are exactly equal: what row aggregation
(:mod:`dpopt.compile.aggregate`) merges and the scipy backend's Newton method solves on.
:func:`regression_table` gives a small bounded regression table.  :func:`marked_table` gives a
raw table that the declarations of :data:`MARKED_SCHEMA` change in every declared way, with
:func:`independent_feature_counts`, the rows each declared rule changes counted by pandas.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpopt.modeling.dataset import Dataset
from dpopt.modeling.schema import Categorical, Fill, Numeric, Schema

__all__ = ["MARKED_SCHEMA", "independent_feature_counts", "marked_table", "onehot_table", "regression_table"]

#: the declarations :func:`marked_table` breaks: ages in [0, 100] (missing filled with 30), jobs
#: "a" or "b", hours in [0, 60] on a 0.5 grid
MARKED_SCHEMA = Schema({"age": Numeric(0, 100, grid=1, missing=Fill(30)),
                        "job": Categorical(["a", "b"]),
                        "hours": Numeric(0, 60, grid=0.5)})


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


def marked_table(n: int, seed: int, *, price: bool = False) -> Any:
    """A raw table (a pandas DataFrame) that :data:`MARKED_SCHEMA` changes in every declared way.

    Ages up to 150 (some missing), jobs with an undeclared "c", hours off the 0.5 grid for some
    rows, labels ``y`` with a mistyped class ("No") and missing ones; with ``price``, a second
    label partly outside [0, 200] and partly missing (drawn after the others, so the other
    columns are the same with or without it).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    age = rng.integers(0, 150, n).astype(float)
    age[rng.random(n) < 0.1] = np.nan
    hours = rng.integers(0, 120, n) / 2.0
    hours[rng.random(n) < 0.2] += 0.2
    label = rng.choice(np.array(["no", "yes", "No", None], dtype=object), n, p=[0.4, 0.4, 0.1, 0.1])
    columns: dict[str, Any] = {"age": age, "job": rng.choice(["a", "b", "c"], n), "hours": hours, "y": label}
    if price:
        columns["price"] = rng.uniform(-50, 250, n)
        columns["price"][rng.random(n) < 0.1] = np.nan
    return pd.DataFrame(columns)


def independent_feature_counts(t: Any) -> dict[str, int]:
    """The rows of a :func:`marked_table` each feature declaration of :data:`MARKED_SCHEMA` changes,
    counted on the raw table with pandas (another code path than the dataset's marks)."""
    hours = t["hours"].to_numpy()
    return {
        "age: entries clipped or rounded or missing": int((t["age"].isna() | (t["age"] > 100)).sum()),
        "job: entries of an undeclared category": int((t["job"] == "c").sum()),
        "hours: entries clipped or rounded": int(((hours > 60) | (np.abs(hours * 2 - np.rint(hours * 2)) > 1e-9)).sum()),
    }
