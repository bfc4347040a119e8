"""Discrete problems for the oracle-efficient mechanisms (NRVW19) and a brute-force oracle."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.zero_one import ZeroOneLoss


@dataclass(frozen=True)
class DiscreteProblem:
    """minimize_{w ∈ W_τ}  L(D, w) − ⟨η, π(w)⟩   (NRVW19 Def. 2.2, times n).

    ``eta`` (length d + 1) is the normalized linear perturbation of OPDisc; ``None``
    means no perturbation (η = 0).  L is the (weighted) *sum* of 0/1 losses.
    """

    loss: ZeroOneLoss
    eta: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.loss, ZeroOneLoss):
            raise ModelError("DiscreteProblem needs a ZeroOneLoss")
        if self.eta is not None:
            e = np.asarray(self.eta, dtype=np.float64)
            if e.shape != (self.dim + 1,) or not np.all(np.isfinite(e)):
                raise ModelError(f"eta must be a finite vector of length d + 1 = {self.dim + 1}")
            e.setflags(write=False)
            object.__setattr__(self, "eta", e)

    @property
    def dim(self) -> int:
        return self.loss.variable.size

    @property
    def domain(self):  # noqa: ANN201 — IntegerGrid
        return self.loss.domain

    def with_eta(self, eta: np.ndarray | None) -> DiscreteProblem:
        return replace(self, eta=eta)

    def objectives(self, W: np.ndarray) -> np.ndarray:
        """The objective at each row of ``W``."""
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        v = self.loss.values(W)
        if self.eta is not None:
            v = v - self.domain.normalize(W) @ self.eta
        return v

    def objective(self, w: np.ndarray) -> float:
        return float(self.objectives(np.asarray(w)[None, :])[0])

    def summary(self) -> str:
        g = self.domain
        return (f"zero-one loss on n={self.loss.data.n}, d={self.dim} over IntegerGrid(step={g.step:g}, "
                f"[{g.low:g}, {g.high:g}], D={g.bound(self.dim):.4g})")


def brute_force(problem: DiscreteProblem, max_count: int = 2_000_000) -> tuple[np.ndarray, float]:
    """Exhaustive argmin over W_τ (tiny instances only): (w, objective)."""
    W = problem.domain.enumerate(problem.dim, max_count=max_count)
    vals = problem.objectives(W)
    i = int(np.argmin(vals))
    return W[i], float(vals[i])
