"""A :class:`~dpopt.compile.discrete_ir.LinearIR` as an OR-Tools CP-SAT model (exact, rounding-proof).

The program has the interface of :class:`~dpopt.compile.mip_cpsat.CpSatProgram`, so the ``cpsat``
backend's two-phase certificate (:mod:`dpopt.backends.cpsat`) applies unchanged: the objective

    f(k) = min over the auxiliaries of [Σ_v cost_v x_v + c₀] − Σ_j b_j k_j + g(s) + Σ_j T_j[k_j]

is scaled by a power of two Q and rounded, with a proven bound E: every coefficient's rounding error
times the largest |value| its variable takes, plus the table and floating-point terms of
:meth:`CpSatProgram.rounded`.  The bound holds for every feasible assignment, so also for the least
over the auxiliaries at each k: |min F(k, ·) − Q f(k)| ≤ E.  Enforced rows are CP-SAT's
``OnlyEnforceIf``; every IR variable stays an integer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpopt.compile.discrete_ir import build_ir
from dpopt.compile.mip_cpsat import (
    DEFAULT_SCALE,
    FP_SAFETY,
    MAX_SCALED_OBJECTIVE,
    MAX_TABLE,
    CpSatProgram,
    RoundedObjective,
)
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem


class GeneralCpSatProgram(CpSatProgram):
    """A DiscreteProblem with a RowLoss compiled once into a CP-SAT base model (module docstring).

    It has its own model, objective terms and exact objective; the models to solve
    (:meth:`minimize_model`, :meth:`excluded_model`), reading a solution and the bound on the
    normalization's rounding are the 0/1 program's (:class:`~dpopt.compile.mip_cpsat.CpSatProgram`).
    """

    def __init__(self, problem: DiscreteProblem) -> None:
        from ortools.sat.python import cp_model

        self.problem = problem
        self.ir = ir = build_ir(problem)
        d = problem.dim
        self.d = d
        self.tau = float(problem.domain.step)
        self.D = float(problem.domain.bound(d))
        self.s_max = ir.variables[ir.s].ub
        if self.s_max + 1 > MAX_TABLE:
            raise ModelError(f"(D/τ)² = {self.s_max} is too large for the CP-SAT table of √(D² − ‖w‖²); "
                             "use a coarser step or a smaller l2_bound")
        m = cp_model.CpModel()
        self.x = [m.new_int_var(v.lb, v.ub, v.name) for v in ir.variables]
        for row in ir.rows:
            expr = cp_model.LinearExpr.weighted_sum([self.x[v] for v, _ in row.terms], [c for _, c in row.terms])
            lo = row.lb if row.lb is not None else cp_model.INT_MIN
            hi = row.ub if row.ub is not None else cp_model.INT_MAX
            ct = m.add_linear_constraint(expr, lo, hi)
            if row.when is not None:
                b, value = row.when
                lit = m.get_bool_var_from_proto_index(self.x[b].index)
                ct.only_enforce_if(lit if value == 1 else ~lit)
        self.k = [self.x[v] for v in ir.k]
        self.s = self.x[ir.s]
        self.cost_vars = sorted(ir.cost)
        self.base = m

    @property
    def n_rows(self) -> int:
        """Loss terms of the model (for the backend's subsolver choice: a public size)."""
        return len(self.cost_vars)

    def rounded(self, eta: np.ndarray | None, *, scale: int | None = None) -> RoundedObjective:
        """The integer objective F for ``eta`` and its error bound E (module docstring)."""
        eta = self._eta(eta)
        ir = self.ir
        c, a, table = self.problem.with_eta(eta).linear_terms()
        b = c * self.tau
        t = np.arange(self.s_max + 1, dtype=np.float64)
        g = -a * np.sqrt(np.maximum(self.D * self.D - self.tau * self.tau * t, 0.0)) / self.D
        klow = int(self.problem.domain.klow)
        lev = [] if table is None else [table[j, [v - klow for v in sorted(ir.u[j])]] for j in range(self.d)]
        costs = np.array([float(ir.cost[v]) for v in self.cost_vars])
        xmax = np.array([max(abs(ir.variables[v].lb), abs(ir.variables[v].ub)) for v in self.cost_vars], dtype=np.float64)
        kmax = np.array([max(abs(ir.variables[v].lb), abs(ir.variables[v].ub)) for v in ir.k], dtype=np.float64)
        c0 = float(ir.constant)
        M = float(np.abs(costs) @ xmax + abs(c0) + np.abs(b) @ kmax + np.abs(g).max(initial=0.0)
                  + sum(np.abs(row).max(initial=0.0) for row in lev))
        Q = DEFAULT_SCALE if scale is None else int(scale)
        if Q < 1 or Q & (Q - 1):
            raise ModelError("the objective scale Q must be a power of two")
        while Q > 1 and Q * M > MAX_SCALED_OBJECTIVE:
            Q //= 2
        exact = [ir.cost[v] * Q for v in self.cost_vars]
        C = [round(e) for e in exact]
        C0e = ir.constant * Q
        C0 = round(C0e)
        Qb, Qg = Q * b, Q * g
        B, G = np.rint(Qb), np.rint(Qg)
        L = [np.rint(Q * row) for row in lev]
        err = (sum(abs(float(ci - e)) * xm for ci, e, xm in zip(C, exact, xmax, strict=True)) + abs(float(C0 - C0e))
               + float(np.abs(B - Qb) @ kmax) + float(np.abs(G - Qg).max(initial=0.0))
               + sum(float(np.abs(Li - Q * row).max(initial=0.0)) for Li, row in zip(L, lev, strict=True)))
        if np.any(eta):
            err += FP_SAFETY * Q * M + Q * abs(a) / self.D * self._sqrt_discrepancy(t)
        return RoundedObjective(scale=Q, loss_coef=[int(v) for v in C], constant=int(C0),
                                k_coef=[-int(v) for v in B], table=[int(v) for v in G], error=float(err),
                                level_tables=[[int(v) for v in row] for row in L])

    def _with_objective_terms(self, ro: RoundedObjective) -> tuple[Any, Any]:
        from ortools.sat.python import cp_model

        m = self.base.clone()
        lam = m.new_int_var(min(ro.table), max(ro.table), "lam")
        m.add_element(m.get_int_var_from_proto_index(self.s.index), ro.table, lam)
        k = [m.get_int_var_from_proto_index(v.index) for v in self.k]
        xs = [m.get_int_var_from_proto_index(self.x[v].index) for v in self.cost_vars]
        expr = (cp_model.LinearExpr.weighted_sum(xs, ro.loss_coef)
                + cp_model.LinearExpr.weighted_sum(k, ro.k_coef) + lam)
        for j, row in enumerate(ro.level_tables):
            lo = self.ir.variables[self.ir.k[j]].lb
            lv = m.new_int_var(min(row), max(row), f"lev{j}")
            m.add_element(k[j] - lo, row, lv)
            expr = expr + lv
        return m, expr

    def objective(self, k: np.ndarray, eta: np.ndarray | None) -> float:
        """The exact loss at integer ``k`` plus the η terms as :meth:`DiscreteProblem.objectives` computes them."""
        eta = self._eta(eta)
        val = self.ir.exact_loss(k)
        if np.any(eta):
            val += float(self.problem.with_eta(eta).perturbation_values(self.w_of(k)[None, :])[0])
        return val


def compile_general_cpsat(problem: DiscreteProblem) -> GeneralCpSatProgram:
    """Compile ``problem`` (a RowLoss over a discrete domain) once into a :class:`GeneralCpSatProgram`."""
    return GeneralCpSatProgram(problem)
