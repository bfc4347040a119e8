"""Neighbouring data sets for privacy audits."""

from __future__ import annotations

import numpy as np

from dpopt.modeling.dataset import Dataset

__all__ = ["one_point_pair"]


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
