"""Discrete parameter domains: the τ-grid of Neel–Roth–Vietri–Wu 2019 (Sec. 3)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from dpopt.errors import ModelError


@dataclass(frozen=True)
class IntegerGrid:
    """W_τ = {w = τ k : k ∈ ℤ^d, low ≤ w_j ≤ high, ‖w‖₂ ≤ l2_bound}.

    Parameters
    ----------
    step : float
        The grid step τ > 0; distinct points differ by at least τ in some coordinate
        (the grid is τ-separated).
    low, high : float
        Per-coordinate bounds (multiples of τ after rounding inwards).
    l2_bound : float, optional
        The ℓ2 bound D on w (default: the box's own ℓ2 radius, computed per dimension).
    """

    step: float
    low: float
    high: float
    l2_bound: float | None = None

    def __post_init__(self) -> None:
        for name in ("step", "low", "high"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ModelError(f"IntegerGrid {name} must be a finite number, got {v!r}")
        if self.step <= 0:
            raise ModelError("IntegerGrid step τ must be positive")
        if self.klow > self.khigh:
            raise ModelError("IntegerGrid has no grid point between low and high")
        if self.l2_bound is not None and not (math.isfinite(self.l2_bound) and self.l2_bound > 0):
            raise ModelError("IntegerGrid l2_bound must be positive and finite")

    @property
    def klow(self) -> int:
        """Smallest integer k with τk ≥ low."""
        return math.ceil(self.low / self.step - 1e-12)

    @property
    def khigh(self) -> int:
        """Largest integer k with τk ≤ high."""
        return math.floor(self.high / self.step + 1e-12)

    def levels(self) -> np.ndarray:
        """The values one coordinate can take."""
        return self.step * np.arange(self.klow, self.khigh + 1, dtype=np.float64)

    def bound(self, dim: int) -> float:
        """The ℓ2 bound D used by the normalization π (declared or the box's radius)."""
        if self.l2_bound is not None:
            return float(self.l2_bound)
        return self.step * math.sqrt(dim) * max(abs(self.klow), abs(self.khigh))

    def contains(self, w: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``w`` is a grid point of this domain."""
        w = np.asarray(w, dtype=np.float64)
        k = w / self.step
        return bool(
            np.all(np.abs(k - np.round(k)) <= tol)
            and np.all(np.round(k) >= self.klow)
            and np.all(np.round(k) <= self.khigh)
            and float(w @ w) <= self.bound(w.shape[0]) ** 2 * (1 + tol)
        )

    def enumerate(self, dim: int, max_count: int = 2_000_000) -> np.ndarray:
        """Every point of W_τ in ``dim`` dimensions (for brute force on tiny instances)."""
        count = (self.khigh - self.klow + 1) ** dim
        if count > max_count:
            raise ModelError(f"the grid has {count} points in {dim} dimensions, more than {max_count}")
        pts = np.array(list(itertools.product(self.levels(), repeat=dim)), dtype=np.float64).reshape(-1, dim)
        D = self.bound(dim)
        return pts[np.einsum("ij,ij->i", pts, pts) <= D * D * (1 + 1e-12)]

    def normalize(self, w: np.ndarray) -> np.ndarray:
        """π(w) = (w, √(D² − ‖w‖²)) / D ∈ S^d (NRVW19 Sec. 3)."""
        w = np.asarray(w, dtype=np.float64)
        D = self.bound(w.shape[-1])
        last = np.sqrt(np.maximum(D * D - np.sum(w * w, axis=-1), 0.0))
        return np.concatenate([w, last[..., None]], axis=-1) / D
