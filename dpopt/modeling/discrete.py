"""Discrete problems for the oracle-efficient mechanisms (NRVW19) and a brute-force oracle."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.row_losses import RowLoss
from dpopt.modeling.zero_one import ZeroOneLoss

#: the losses a DiscreteProblem takes: the 0/1 loss of a halfspace, or any bounded per-row loss
DiscreteLoss = ZeroOneLoss | RowLoss

#: how the noise vector η enters the objective (see :class:`DiscreteProblem`)
PerturbationKind = Literal["normalized", "linear", "levels"]
KINDS: tuple[str, ...] = ("normalized", "linear", "levels")


@dataclass(frozen=True)
class DiscreteProblem:
    """minimize_{w ∈ W_τ}  L(D, w) + P_η(w): the oracle problems of NRVW19 (times n).

    L is the *sum* of per-row losses: the (weighted) 0/1 loss of a halfspace over an
    :class:`~dpopt.modeling.domains.IntegerGrid` (:class:`~dpopt.modeling.zero_one.ZeroOneLoss`), or any
    bounded :class:`~dpopt.modeling.row_losses.RowLoss` over an IntegerGrid or a
    :class:`~dpopt.modeling.decision_domain.DiscreteDomain`.  The perturbation P_η depends on ``kind``:

    * ``"normalized"`` (OPDisc, Alg. 1; docs/design.md's ``Normalized(η)``): P = −⟨η, π(w)⟩,
      η of length d + 1, π(w) = (w, √(D² − ‖w‖²))/D;
    * ``"linear"`` (OPSamp, Alg. 2; ``Linear(b)``): P = −⟨η, w⟩, η of length d;
    * ``"levels"`` (RSPM, Alg. 3): P = Σ_j T_j[k_j] with w = τk and T = η reshaped to
      d × K (K = grid levels per coordinate, column v − klow for k_j = v): any
      separable function of the coordinates, e.g. a weighted separator set of threshold
      functions 1[k_j ≥ t].

    ``eta`` None means no perturbation.
    """

    loss: DiscreteLoss
    eta: np.ndarray | None = None
    kind: PerturbationKind = "normalized"

    def __post_init__(self) -> None:
        if not isinstance(self.loss, (ZeroOneLoss, RowLoss)):
            raise ModelError("DiscreteProblem needs a bounded per-row loss over a discrete domain (dp.ZeroOneLoss, "
                             f"dp.ScoreIndicator, dp.Ramp, dp.CappedMin, dp.Lookup or a sum of them), got {type(self.loss).__name__}")
        if self.kind not in KINDS:
            raise ModelError(f"unknown perturbation kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if self.eta is not None:
            e = np.array(self.eta, dtype=np.float64).reshape(-1)
            if e.shape != (self.noise_size,) or not np.all(np.isfinite(e)):
                raise ModelError(f"eta must be a finite vector of length {self.noise_size} "
                                 f"(kind {self.kind!r}, d = {self.dim})")
            e.setflags(write=False)
            object.__setattr__(self, "eta", e)

    @property
    def dim(self) -> int:
        return self.loss.variable.size

    @property
    def n(self) -> int:
        """The number of rows (public under replace-one neighbours)."""
        return self.loss.data.n

    @property
    def domain(self):  # noqa: ANN201 — IntegerGrid | DiscreteDomain
        return self.loss.domain

    @property
    def halfspace(self) -> bool:
        """Whether this is the 0/1-loss halfspace over a plain IntegerGrid (the specialised compilers' case)."""
        return isinstance(self.loss, ZeroOneLoss)

    @property
    def decision_names(self) -> tuple[str, ...] | None:
        """Names of w's coordinates: the features for a halfspace, else none."""
        names = self.loss.data.feature_names if self.halfspace else None
        return None if names is None else tuple(names)

    def zero_one(self) -> ZeroOneLoss:
        """The 0/1 loss of a halfspace problem (what the specialised compilers read), or ModelError."""
        if not isinstance(self.loss, ZeroOneLoss):
            raise ModelError("this compiler takes the 0/1-loss halfspace (dp.ZeroOneLoss over an IntegerGrid); "
                             f"the problem's loss is {type(self.loss).__name__}")
        return self.loss

    @property
    def levels(self) -> int:
        """K: the grid levels per coordinate (klow..khigh)."""
        return int(self.domain.khigh - self.domain.klow + 1)

    @property
    def noise_size(self) -> int:
        """Length of η for this kind: d + 1, d or d·K."""
        d = self.dim
        return {"normalized": d + 1, "linear": d, "levels": d * self.levels}[self.kind]

    def with_eta(self, eta: np.ndarray | None) -> DiscreteProblem:
        return replace(self, eta=eta)

    def with_kind(self, kind: PerturbationKind, eta: np.ndarray | None = None) -> DiscreteProblem:
        """The same loss and domain with another perturbation kind."""
        return replace(self, kind=kind, eta=eta)

    def linear_terms(self) -> tuple[np.ndarray, float, np.ndarray | None]:
        """(c, a, T) with P_η(w) = −⟨c, w⟩ − a √(D² − ‖w‖²)/D + Σ_j T[j, k_j − klow].

        What the compilers put in their objectives: c has length d, a is a scalar, T is
        d × K or None (kinds "normalized" and "linear" have no table).
        """
        d = self.dim
        e = np.zeros(self.noise_size) if self.eta is None else np.asarray(self.eta)
        if self.kind == "normalized":
            return e[:d] / self.domain.bound(d), float(e[d]), None
        if self.kind == "linear":
            return e.copy(), 0.0, None
        return np.zeros(d), 0.0, e.reshape(d, self.levels).copy()

    def perturbation_values(self, W: np.ndarray) -> np.ndarray:
        """P_η at each row of ``W`` (zeros without a perturbation)."""
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        if self.eta is None:
            return np.zeros(W.shape[0])
        if self.kind == "normalized":
            return -(self.domain.normalize(W) @ self.eta)
        if self.kind == "linear":
            return -(W @ self.eta)
        g = self.domain
        idx = np.clip(np.rint(W / g.step).astype(np.int64) - g.klow, 0, self.levels - 1)
        table = self.eta.reshape(self.dim, self.levels)
        return table[np.arange(self.dim)[None, :], idx].sum(axis=1)

    def objectives(self, W: np.ndarray) -> np.ndarray:
        """The objective at each row of ``W``."""
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        v = self.loss.values(W)
        if self.eta is not None:
            v = v + self.perturbation_values(W)
        return v

    def objective(self, w: np.ndarray) -> float:
        return float(self.objectives(np.asarray(w)[None, :])[0])

    def summary(self) -> str:
        if not isinstance(self.loss, ZeroOneLoss):
            dom = self.domain.summary() if isinstance(self.domain, DiscreteDomain) else repr(self.domain)
            return f"{self.loss.summary()} on n={self.n}, d={self.dim} over {dom}, {self.kind} perturbation"
        g = self.domain
        return (f"zero-one loss on n={self.loss.data.n}, d={self.dim} over IntegerGrid(step={g.step:g}, "
                f"[{g.low:g}, {g.high:g}], D={g.bound(self.dim):.4g}), {self.kind} perturbation")


def brute_force(problem: DiscreteProblem, max_count: int = 2_000_000) -> tuple[np.ndarray, float]:
    """Exhaustive argmin over W_τ (tiny instances only): (w, objective)."""
    W = problem.domain.enumerate(problem.dim, max_count=max_count)
    vals = problem.objectives(W)
    i = int(np.argmin(vals))
    return W[i], float(vals[i])
