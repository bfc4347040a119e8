"""The 0/1 loss of a linear classifier over a discrete domain (NRVW19 Sec. 5, App. D)."""

from __future__ import annotations

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.variable import Variable


class ZeroOneLoss:
    """ℓ_i(w) = c_i · 1[y_i ⟨x_i, w⟩ ≤ 0]: a point on the hyperplane counts as an error.

    Parameters
    ----------
    data : Dataset
        Labels must be ±1.
    variable : Variable
        The classifier w; its size must equal the number of features.
    domain : IntegerGrid
        The discrete domain W_τ.
    weights : array_like, optional
        Non-negative per-row weights c_i (default 1): the weighted 0/1 loss.

    Notes
    -----
    Each ℓ_i takes values in {0, c_i} and W_τ is τ-separated, so ℓ_i is
    (max c_i / τ)-Lipschitz on W_τ in the ℓ2 norm (NRVW19 Sec. 3.1): that is the G
    of OPDisc.  Unlike the convex losses this is the *sum* Σ ℓ_i (the paper's L(D, w)).
    """

    name = "zero-one"

    def __init__(self, data: Dataset, variable: Variable, domain: IntegerGrid,
                 weights: np.ndarray | None = None) -> None:
        if not isinstance(data, Dataset) or not isinstance(variable, Variable):
            raise ModelError("ZeroOneLoss needs a dpopt Dataset and Variable")
        if variable.size != data.n_features:
            raise ModelError(f"variable has size {variable.size} but the data has {data.n_features} features")
        if not isinstance(domain, IntegerGrid):
            raise ModelError("ZeroOneLoss needs an IntegerGrid domain (a continuous w is not supported)")
        if not data.labels_are_binary():
            raise ModelError("zero-one loss needs labels in {-1, +1}")
        w = np.ones(data.n) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (data.n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ModelError(f"weights must be {data.n} finite non-negative numbers")
        self.data, self.variable, self.domain, self.weights = data, variable, domain, w

    @property
    def lipschitz(self) -> float:
        """G = max c_i / τ on the τ-separated grid."""
        return float(self.weights.max()) / self.domain.step

    @property
    def lipschitz_l1(self) -> float:
        """G₁ = max c_i / τ: Lipschitz in the ℓ1 norm on the grid (what OPSamp needs).

        |ℓ_i(w) − ℓ_i(w')| ≤ c_i ≤ c_i ‖w − w'‖_∞ / τ ≤ c_i ‖w − w'‖₁ / τ for w ≠ w' in W_τ.
        """
        return float(self.weights.max()) / self.domain.step

    @property
    def value_bound(self) -> float:
        """B = max c_i: each ℓ_i takes values in [0, B] (a bounded loss)."""
        return float(self.weights.max())

    def values(self, W: np.ndarray) -> np.ndarray:
        """L(D, w) = Σ_i c_i 1[y_i⟨x_i, w⟩ ≤ 0] for each row w of ``W`` (k × d)."""
        margins = (np.atleast_2d(W) @ self.data.X.T) * self.data.y
        return (margins <= 0).astype(np.float64) @ self.weights

    def value(self, w: np.ndarray) -> float:
        return float(self.values(np.asarray(w)[None, :])[0])
