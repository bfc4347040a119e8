"""Regularizers added to the average loss (data-independent terms)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.variable import Variable, dimension_of


def _weight(lam: float, name: str) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)):
        raise ModelError(f"{name} weight must be a number, got {type(lam).__name__}")
    if not math.isfinite(lam) or lam <= 0:
        raise ModelError(f"{name} weight must be positive and finite, got {lam!r}")
    return float(lam)


@dataclass(frozen=True, init=False)
class L2Squared:
    """(λ/2)‖θ‖₂²: λ-strongly convex (the convention of Chaudhuri et al. 2011)."""

    dim: int
    lam: float

    def __init__(self, variable: Variable | int, lam: float) -> None:
        object.__setattr__(self, "dim", dimension_of(variable))
        object.__setattr__(self, "lam", _weight(lam, "L2Squared"))

    @property
    def strong_convexity(self) -> float:
        """Modulus of strong convexity in the ℓ2 norm."""
        return self.lam

    def value(self, theta: np.ndarray) -> float:
        return 0.5 * self.lam * float(theta @ theta)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return self.lam * theta


@dataclass(frozen=True, init=False)
class L1Norm:
    """λ‖θ‖₁ (non-smooth; handled through its proximal map)."""

    dim: int
    lam: float

    def __init__(self, variable: Variable | int, lam: float) -> None:
        object.__setattr__(self, "dim", dimension_of(variable))
        object.__setattr__(self, "lam", _weight(lam, "L1Norm"))

    @property
    def strong_convexity(self) -> float:
        return 0.0

    def value(self, theta: np.ndarray) -> float:
        return self.lam * float(np.abs(theta).sum())


Regularizer = L2Squared | L1Norm
