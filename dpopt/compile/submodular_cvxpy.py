"""cvxpy encodings of Ω∞ (Kumar–Deisenroth 2019, Eq. (5)) and of its unit ball.

Exact atoms where the family has one:

* :class:`~dpopt.modeling.submodular.Cardinality`  → ``c‖θ‖₁``;
* :class:`~dpopt.modeling.submodular.Indicator`    → ``c‖θ‖∞``;
* :class:`~dpopt.modeling.submodular.ConcaveCardinality` → ``Σ_k (d_k − d_{k+1})·sum_largest(|θ|, k)``
  with ``d_k = h(k) − h(k−1)`` non-increasing (an ordered weighted ℓ1 norm);
* :class:`~dpopt.modeling.submodular.GroupCoverage` (and ChainCut) → ``Σ_G w_G max_{i∈G}|θ_i|``.

For a general F the epigraph ``Ω∞(θ) ≤ t`` is the exact LP
``u ≥ ±θ, ⟨w, u⟩ ≤ t`` for every greedy base w of F (finitely many), solved by
constraint generation: the program starts with the singleton cuts
``F({i}) u_i ≤ t``, and after every solve the greedy base of û (the most
violated cut, with value f(û)) is written into a cvxpy Parameter slot and the
program re-solved (DPP: no re-canonicalization), until ``f(û) ≤ t̂`` up to a
relative 1e-9 or the slots run out.  :class:`CuttingPlaneProblem` does this
inside ``solve``, so every dpopt backend reached through cvxpy runs the loop
unchanged.  The mechanisms' own certificates decide whether the final point is
good enough; the loop itself never claims optimality.
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

from dpopt.modeling.submodular import (
    Cardinality,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
    SetFunction,
    greedy,
)
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall

__all__ = ["CuttingPlaneProblem", "make_problem", "norm_ball_constraints", "norm_term", "omega_atom"]

#: extra cut slots beyond the p singleton cuts
DEFAULT_EXTRA_CUTS = 200
_TAG = "_dpopt_cuts"


def omega_atom(F: SetFunction, theta: cp.Expression) -> cp.Expression | None:
    """An exact cvxpy expression of Ω∞(θ) for the families that have one, else None."""
    if isinstance(F, Cardinality):
        return F.c * cp.norm(theta, 1)
    if isinstance(F, Indicator):
        return F.c * cp.norm(theta, "inf")
    if isinstance(F, ConcaveCardinality):
        d = np.concatenate([F.inc, [0.0]])
        coef = d[:-1] - d[1:]
        terms = [float(c) * cp.sum_largest(cp.abs(theta), k + 1) for k, c in enumerate(coef) if c > 1e-15]
        return cp.sum(cp.hstack(terms)) if terms else None
    if isinstance(F, GroupCoverage):
        parts = []
        for block in F._blocks():
            maxes = cp.max(cp.abs(theta[block.idx]), axis=1)
            parts.append(block.weights @ maxes)
        return parts[0] if len(parts) == 1 else cp.sum(cp.hstack(parts))
    return None


class OmegaCuts:
    """Cut slots ``W u ≤ t`` for ``Ω∞(θ) ≤ t`` with u ≥ |θ| (see the module notes)."""

    def __init__(self, F: SetFunction, theta: cp.Expression, t: cp.Expression,
                 extra: int = DEFAULT_EXTRA_CUTS) -> None:
        p = F.p
        self.F, self.t, self.p = F, t, p
        self.u = cp.Variable(p, nonneg=True, name="omega_majorant")
        self.W = cp.Parameter((p + extra, p), nonneg=True, name="omega_cuts")
        start = np.diag(F.singletons())
        self._rows = np.vstack([start, np.repeat(start[:1], extra, axis=0)])
        self.W.value = self._rows
        self.used = p
        self.exhausted = False
        self.constraints = [self.u >= theta, self.u >= -theta, self.W @ self.u <= t]
        setattr(self.constraints[-1], _TAG, self)

    def separate(self, rtol: float = 1e-9) -> bool:
        """Add the most violated cut; False if none is violated (or no slot is left)."""
        u = self.u.value
        t = self.t.value if isinstance(self.t, cp.Expression) else self.t
        if u is None or t is None:
            return False
        u = np.maximum(np.asarray(u, dtype=np.float64).reshape(-1), 0.0)
        w = greedy(self.F, u)
        tv = float(np.asarray(t))
        if float(w @ u) <= tv + rtol * max(1.0, abs(tv)):
            return False
        if self.used >= self._rows.shape[0]:
            self.exhausted = True
            return False
        self._rows[self.used] = w
        self.used += 1
        self.W.value = self._rows
        return True


class CuttingPlaneProblem(cp.Problem):
    """A cvxpy problem whose ``solve`` runs constraint generation for its Ω∞ cuts."""

    def __init__(self, objective: Any, constraints: list[Any], generators: list[OmegaCuts],
                 max_rounds: int = 500) -> None:
        super().__init__(objective, constraints)
        self._generators = generators
        self._max_rounds = max_rounds
        self.rounds = 0

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        result = super().solve(*args, **kwargs)
        self.rounds = 1
        for _ in range(self._max_rounds):
            if self.status not in ("optimal", "optimal_inaccurate"):
                break
            added = [g.separate() for g in self._generators]
            if not any(added):
                break
            result = super().solve(*args, **kwargs)
            self.rounds += 1
        return result


def norm_term(reg: SubmodularNorm, theta: cp.Variable) -> tuple[cp.Expression, list[Any]]:
    """``lam·Ω∞(θ)`` and the constraints it needs (none for an exact atom)."""
    atom = omega_atom(reg.F, theta)
    if atom is not None:
        return reg.lam * atom, []
    t = cp.Variable(name="omega_epigraph")
    cuts = OmegaCuts(reg.F, theta, t)
    return reg.lam * t, cuts.constraints


def norm_ball_constraints(ball: SubmodularNormBall, theta: cp.Variable) -> list[Any]:
    """Constraints expressing ``Ω∞(θ) ≤ r``."""
    atom = omega_atom(ball.F, theta)
    if atom is not None:
        return [atom <= ball.r]
    return OmegaCuts(ball.F, theta, cp.Constant(ball.r)).constraints


def make_problem(objective: Any, constraints: list[Any]) -> cp.Problem:
    """A plain cvxpy problem, or a :class:`CuttingPlaneProblem` when Ω∞ cuts are present."""
    gens = [getattr(c, _TAG) for c in constraints if hasattr(c, _TAG)]
    if not gens:
        return cp.Problem(objective, constraints)
    return CuttingPlaneProblem(objective, constraints, gens)
