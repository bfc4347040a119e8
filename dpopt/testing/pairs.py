"""Neighbouring data sets for privacy audits."""

from __future__ import annotations

import numpy as np

from dpopt.modeling.dataset import Dataset

__all__ = ["one_point_pair", "random_grid_pair"]


def one_point_pair(n: int) -> tuple[Dataset, Dataset]:
    """A replace-one pair on one feature: n − 1 zero rows plus (x, y) = (1, 1), or (1, −1).

    The extreme row sits on the declared bounds (``x_bound = y_bound = 1``), so the
    pair's gradient difference attains the declared sensitivity of GLM losses; the
    zero rows contribute nothing to any gradient.
    """
    X = np.zeros((n, 1))
    y = np.zeros(n)
    X[-1, 0], y[-1] = 1.0, 1.0
    d0 = Dataset(X, y, x_bound=1.0, y_bound=1.0)
    return d0, d0.replace_row(n - 1, [1.0], -1.0)


def random_grid_pair(rng: np.random.Generator, d: int) -> tuple[Dataset, Dataset]:
    """A random tiny replace-one pair on the half-integer grid of [−1, 1]^d (3–7 rows, ±1 labels).

    The schema declares every column ``Numeric(-1, 1, grid="1/2")``; row 0 is replaced.  Used by
    the white-box coupling tests, which check a proof's step exhaustively on many such pairs.
    """
    from dpopt.modeling.schema import Numeric, Schema

    n = int(rng.integers(3, 8))
    X = rng.integers(-2, 3, size=(n, d)) / 2.0
    d0 = Dataset(X, rng.choice([-1.0, 1.0], size=n), x_bound=2.0,
                 schema=Schema.uniform(d, Numeric(-1, 1, grid="1/2")))
    return d0, d0.replace_row(0, rng.integers(-2, 3, size=d) / 2.0, float(rng.choice([-1.0, 1.0])))
