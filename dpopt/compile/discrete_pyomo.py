"""A :class:`~dpopt.compile.discrete_ir.LinearIR` as a pyomo MILP: HiGHS, SCIP or any pyomo MIP solver.

The program offers what :class:`~dpopt.backends.pyomo_mip.PyomoMipBackend` reads from the 0/1-loss
program (:class:`~dpopt.compile.mip_pyomo.PyomoProgram`): the model with mutable noise
parameters, ``set_eta``, ``extract_k``, ``exact_loss`` and the loss ``resolution``.

Enforced rows become big-M rows with M from the variables' declared bounds (exact integers):
``Σ a·x ≥ lb when b = 0`` is ``Σ a·x + (lb − L)·b ≥ lb`` with L the least activity, and ``≤``
alike.  The perturbation enters as in :mod:`dpopt.compile.mip_pyomo`: −Σ_j kc_j k_j, the exact
normalization −a·Σ_t (λ_t/D) z_t over a one-hot z of the achievable s = ‖k‖² (exact for either
sign of η_{d+1}), and RSPM's level table on the one-hot u.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.compile.discrete_ir import LinearIR, Row, build_ir
from dpopt.compile.mip_pyomo import load_noise
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem


@dataclass(frozen=True)
class GeneralSize:
    """Counts of the compiled model."""

    variables: int
    rows: int
    loss_terms: int
    norm_values: int

    def summary(self) -> str:
        return (f"{self.variables} variables, {self.rows} constraints ({self.loss_terms} loss terms, "
                f"{self.norm_values} norm values)")


def _number(c: Fraction) -> int | float:
    return int(c) if c.denominator == 1 and abs(c) < 2**53 else float(c)


def big_m_row(row: Row, ir: LinearIR) -> tuple[list[tuple[int, int]], int | None, int | None]:
    """An enforced one-sided row as an ordinary one, M from the variables' bounds.

    ``Σ ≥ lb when x_b = 0`` → ``Σ + M·x_b ≥ lb``; ``when x_b = 1`` → ``Σ − M·x_b ≥ lb − M``
    (M = lb − least activity); ``≤ ub`` alike with M = greatest activity − ub.
    """
    if row.when is None:
        return list(row.terms), row.lb, row.ub
    if row.lb is not None and row.ub is not None:
        raise ModelError("an enforced row has one side only")
    b, value = row.when
    lo, hi = row.activity_bounds(ir.variables)
    if row.lb is not None:
        M = max(row.lb - lo, 0)
        if value == 0:
            return [*row.terms, (b, M)], row.lb, None
        return [*row.terms, (b, -M)], row.lb - M, None
    assert row.ub is not None
    M = max(hi - row.ub, 0)
    if value == 0:
        return [*row.terms, (b, -M)], None, row.ub
    return [*row.terms, (b, M)], None, row.ub + M


@dataclass
class GeneralPyomoProgram:
    """A compiled general discrete problem (module docstring)."""

    model: Any
    problem: DiscreteProblem
    ir: LinearIR
    resolution: float
    size: GeneralSize
    _eta: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def eta(self) -> np.ndarray:
        return self._eta.copy()

    def set_eta(self, eta: np.ndarray | None) -> None:
        """Put a new noise vector into the model's mutable parameters (no rebuild)."""
        self._eta = load_noise(self.model, self.problem, eta)

    def current_problem(self) -> DiscreteProblem:
        return self.problem.with_eta(self._eta.copy())

    def extract_k(self) -> np.ndarray:
        vals = [self.model.x[v].value for v in self.ir.k]
        if any(v is None for v in vals):
            raise ModelError("the model holds no solution")
        return np.rint(np.asarray(vals, dtype=np.float64)).astype(np.int64)

    def exact_loss(self, k: np.ndarray) -> float:
        return self.ir.exact_loss(k)


def compile_general_pyomo(problem: DiscreteProblem) -> GeneralPyomoProgram:
    """Build the pyomo MILP of ``problem`` once (module docstring)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    ir = build_ir(problem)
    d = problem.dim
    D = float(problem.domain.bound(d))
    tau = float(problem.domain.step)
    T = ir.norms
    lam = np.sqrt(np.maximum(D * D - tau * tau * T.astype(np.float64), 0.0))

    m = pyo.ConcreteModel(name="discrete_row_loss")
    N = len(ir.variables)
    m.X = pyo.RangeSet(0, N - 1)

    def _domain(_: Any, i: int) -> Any:
        v = ir.variables[i]
        if v.relax:
            return pyo.Reals
        return pyo.Binary if (v.lb, v.ub) == (0, 1) else pyo.Integers

    m.x = pyo.Var(m.X, domain=_domain, bounds=lambda _, i: (ir.variables[i].lb, ir.variables[i].ub))
    m.J = pyo.RangeSet(0, d - 1)
    m.T = pyo.Set(initialize=[int(t) for t in T], ordered=True)
    m.kc = pyo.Param(m.J, mutable=True, initialize=0.0)
    m.normc = pyo.Param(mutable=True, initialize=0.0)
    m.z = pyo.Var(m.T, domain=pyo.Binary)
    m.zone = pyo.Constraint(expr=sum(m.z[t] for t in m.T) == 1)
    m.znorm = pyo.Constraint(expr=sum(int(t) * m.z[t] for t in m.T) == m.x[ir.s])
    m.rows = pyo.ConstraintList()
    for row in ir.rows:
        terms, lb, ub = big_m_row(row, ir)
        expr = LinearExpression(constant=0, linear_coefs=[c for _, c in terms],
                                linear_vars=[m.x[v] for v, _ in terms])
        if lb is not None and ub is not None:
            m.rows.add(expr == lb) if lb == ub else m.rows.add(pyo.inequality(lb, expr, ub))
        elif lb is not None:
            m.rows.add(expr >= lb)
        elif ub is not None:
            m.rows.add(expr <= ub)
    cost_vars = sorted(ir.cost)
    loss = LinearExpression(constant=_number(ir.constant), linear_coefs=[_number(ir.cost[v]) for v in cost_vars],
                            linear_vars=[m.x[v] for v in cost_vars])
    lam_list = lam.tolist()
    expr = (loss - sum(m.kc[j] * m.x[ir.k[j]] for j in range(d))
            - m.normc * sum((lam_list[i] / D) * m.z[t] for i, t in enumerate(m.T)))
    if problem.kind == "levels":
        index = [(j, v) for j in range(d) for v in ir.u[j]]
        m.lev = pyo.Param(index, mutable=True, initialize=0.0)
        expr = expr + sum(m.lev[j, v] * m.x[ir.u[j][v]] for j, v in index)
    m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    loss_obj = problem.loss
    resolution = float(getattr(loss_obj, "resolution", Fraction(1)))
    size = GeneralSize(variables=N + len(T), rows=len(ir.rows) + 2, loss_terms=len(cost_vars), norm_values=len(T))
    prog = GeneralPyomoProgram(model=m, problem=problem, ir=ir, resolution=resolution if math.isfinite(resolution)
                               else 1.0, size=size)
    prog.set_eta(problem.eta)
    return prog
