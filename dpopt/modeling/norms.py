"""The norms a dataset's bound may be declared in (ℓ1, ℓ2, ℓ∞) and their duals."""

from __future__ import annotations

import numpy as np

from dpopt.errors import ModelError

__all__ = [
    "dual_order",
    "inverse_order",
    "norm_order",
]


_NORMS: dict[object, float] = {1: 1.0, 2: 2.0, "inf": np.inf, np.inf: np.inf, float("inf"): np.inf}


def norm_order(norm: object) -> float:
    """Return the numpy order for a declared norm (1, 2 or ``"inf"``).

    Raises
    ------
    ModelError
        If the norm is not one of 1, 2, ``"inf"``.
    """
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise ModelError(f"unknown norm {norm!r}: use 1, 2 or 'inf'") from None


def dual_order(order: float) -> float:
    """The Hölder conjugate of a norm order (1 ↔ ∞, 2 ↔ 2)."""
    if order == 1.0:
        return np.inf
    if order == np.inf:
        return 1.0
    return order / (order - 1.0)


def inverse_order(order: float) -> float:
    """1/p, with 1/∞ = 0."""
    return 0.0 if order == np.inf else 1.0 / order
