"""Exact aggregation of identical data rows into weights."""

from __future__ import annotations

import numpy as np


def aggregate_rows(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge identical (x, y) rows: returns (X_unique, y_unique, counts).

    Σ_i φ(⟨x_i, θ⟩, y_i) = Σ_k c_k φ(⟨x_k, θ⟩, y_k) exactly, so the compiled
    objective is unchanged while the solver sees fewer terms.
    """
    Z = np.column_stack([X, y])
    uniq, counts = np.unique(Z, axis=0, return_counts=True)
    return uniq[:, :-1], uniq[:, -1], counts.astype(np.float64)
