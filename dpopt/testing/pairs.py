"""Neighbouring data sets for privacy audits."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpopt.modeling.dataset import Dataset

if TYPE_CHECKING:
    from dpopt.modeling.discrete import DiscreteProblem
    from dpopt.modeling.domains import IntegerGrid

__all__ = ["grid_label_pair", "one_point_pair", "random_grid_pair", "zero_one_problem"]


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


def grid_label_pair(n: int = 5) -> tuple[Dataset, Dataset]:
    """A replace-one pair for the discrete mechanisms: n − 1 rows (0, +1) plus (1, +1), or (1, −1).

    One column declared ``Numeric(-1, 1, grid="1/2")`` with ``x_bound = 1``; the last row's
    label flips, so the 0/1 loss of every grid point with θ ≠ 0 changes by exactly one row
    (the sensitivity the discrete mechanisms assume).
    """
    from dpopt.modeling.schema import Numeric, Schema

    X = np.zeros((n, 1))
    X[-1] = 1.0
    d0 = Dataset(X, np.ones(n), x_bound=1.0, schema=Schema.uniform(1, Numeric(-1, 1, grid="1/2")))
    return d0, d0.replace_row(n - 1, [1.0], -1.0)


def zero_one_problem(data: Dataset, grid: IntegerGrid) -> DiscreteProblem:
    """The 0/1-loss problem over ``grid`` on ``data`` (one variable per feature)."""
    import dpopt as dp

    return dp.DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(data.n_features), grid))
