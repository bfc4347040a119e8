"""Random terms that mechanisms add to an objective.

All terms are added to the *normalized* objective (average loss plus
regularizers): ``F(θ) + ⟨b, θ⟩ + (ζ/2)‖θ − θ₀‖²``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpopt.errors import ModelError


def _vector(a: object, name: str, dim: int | None = None) -> np.ndarray:
    v = np.array(a, dtype=np.float64)
    if v.ndim != 1:
        raise ModelError(f"{name} must be a vector, got shape {v.shape}")
    if dim is not None and v.shape[0] != dim:
        raise ModelError(f"{name} must have {dim} entries, got {v.shape[0]}")
    if not np.all(np.isfinite(v)):
        raise ModelError(f"{name} has NaN or inf entries")
    v.setflags(write=False)
    return v


@dataclass(frozen=True)
class Linear:
    """The linear term ⟨b, θ⟩."""

    b: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", _vector(self.b, "b"))


@dataclass(frozen=True)
class Quadratic:
    """The quadratic term (ζ/2)‖θ − θ₀‖²."""

    zeta: float
    theta0: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        z = float(self.zeta)
        if not np.isfinite(z) or z < 0:
            raise ModelError(f"zeta must be non-negative and finite, got {self.zeta!r}")
        object.__setattr__(self, "zeta", z)
        object.__setattr__(self, "theta0", _vector(self.theta0, "theta0"))


@dataclass(frozen=True)
class Perturbation:
    """A linear plus quadratic perturbation of dimension ``dim``.

    ``b`` is the random part; ``zeta`` and ``theta0`` are public constants.
    """

    dim: int
    b: np.ndarray | None = None
    zeta: float = 0.0
    theta0: np.ndarray | None = None

    def __post_init__(self) -> None:
        b = np.zeros(self.dim) if self.b is None else _vector(self.b, "b", self.dim)
        t0 = np.zeros(self.dim) if self.theta0 is None else _vector(self.theta0, "theta0", self.dim)
        q = Quadratic(self.zeta, t0)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "theta0", t0)
        object.__setattr__(self, "zeta", q.zeta)

    def with_noise(self, b: np.ndarray) -> Perturbation:
        """The same quadratic part with a new linear term."""
        return Perturbation(self.dim, b=b, zeta=self.zeta, theta0=self.theta0)

    def value(self, theta: np.ndarray) -> float:
        assert self.b is not None and self.theta0 is not None
        d = theta - self.theta0
        return float(self.b @ theta) + 0.5 * self.zeta * float(d @ d)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        assert self.b is not None and self.theta0 is not None
        return self.b + self.zeta * (theta - self.theta0)
