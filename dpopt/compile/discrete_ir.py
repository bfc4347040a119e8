"""Any bounded per-row loss over a discrete domain as an exact integer linear model (one IR, two targets).

:class:`LinearIR` is what :mod:`dpopt.compile.discrete_pyomo` (HiGHS, SCIP, any pyomo MIP solver) and
:mod:`dpopt.compile.discrete_cpsat` (OR-Tools CP-SAT) translate.  Every coefficient and bound is an
integer; the loss is Σ cost_v·x_v + constant with exact rational costs; constraints may be
*enforced* (hold when a 0/1 variable takes a value: CP-SAT's ``OnlyEnforceIf``, a big-M from the
variables' bounds in pyomo).

The decision w = τk (NRVW19 Sec. 3)
    ``k_j ∈ [lo_j, hi_j]``; one-hot levels ``u_{jv}`` (Σ_v u_{jv} = 1, k_j = Σ_v v·u_{jv}) carry the
    separable perturbation of RSPM and the squared norm ``s = Σ_j Σ_v v²·u_{jv} ∈ [0, S]``,
    S = ⌊D²/τ²⌋ (the ℓ2 bound, exact on integers), which the targets turn into the normalization
    term √(D² − τ²s) of OPDisc exactly (a one-hot over the achievable s, or a table).  Cardinality
    counts the coordinates with u_{j0} = 0; side constraints are the domain's integer rows.

The atoms (:mod:`dpopt.modeling.row_losses`), on groups of identical rows with count c (weights c·unit)
    * ScoreIndicator 1[m ≤ T] (m = ⟨z, k⟩ an exact integer margin): a 0/1 e with ``e = 0 ⇒ m ≥ T + 1``;
      groups whose margin range over the box decides the indicator become constants or vanish.
    * Ramp r = clip(qb − q·m, 0, R) (loss r/R): ``r ≥ R`` when a 0/1 z is 1, ``r + q·m ≥ qb`` when
      it is 0, r ∈ [0, R] (the minimiser takes r at its least feasible value, which is the clip).
    * CappedMin: with the group's distinct costs v₁ < … < v_p below the cap U (integer units),
      ℓ = U − Σ_r (v_{r+1} − v_r)·y_r, v_{p+1} = U, where y_r ∈ [0, 1] and y_r ≤ y_{r−1} + Σ_{j:
      cost_j = v_r} k_j (y₀ = 0): the minimiser sets y_r = 1 exactly when a site of cost ≤ v_r is open,
      so ℓ is the capped distance to the nearest open site.
    * Lookup: Σ_i Σ_j T_ij k_j is linear in k: its coefficients are summed over the rows.

Auxiliary variables marked ``relax`` take integral values at the optimum for integral k (each is
the least or largest value its rows allow), so pyomo may declare them continuous; CP-SAT keeps
them integer.  Nothing here reads a value to decide anything but the model's own coefficients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.row_losses import RowLoss, domain_bounds

if TYPE_CHECKING:
    from dpopt.modeling.discrete import DiscreteProblem
    from dpopt.modeling.row_losses import CappedMin, Lookup, Ramp, ScoreIndicator

#: relative slack on D² when deciding which ‖k‖² values lie in the ℓ2 ball (IntegerGrid.enumerate's)
L2_SLACK = 1e-12


@dataclass(frozen=True)
class Var:
    """An integer variable with bounds; ``relax``: continuous is exact at the optimum."""

    lb: int
    ub: int
    relax: bool
    name: str


@dataclass(frozen=True)
class Row:
    """lb ≤ Σ coef·x ≤ ub, enforced only when variable ``when[0]`` equals ``when[1]`` (if given)."""

    terms: tuple[tuple[int, int], ...]
    lb: int | None
    ub: int | None
    when: tuple[int, int] | None = None

    def activity_bounds(self, variables: list[Var]) -> tuple[int, int]:
        lo = sum(c * (variables[v].lb if c > 0 else variables[v].ub) for v, c in self.terms)
        hi = sum(c * (variables[v].ub if c > 0 else variables[v].lb) for v, c in self.terms)
        return lo, hi


def norm_limit(problem: DiscreteProblem) -> int:
    """S: the ℓ2 bound as ‖k‖² ≤ S (τ²S ≤ D²(1 + 10⁻¹²)), capped by the box."""
    dom, d = problem.domain, problem.dim
    tau, D = float(dom.step), float(dom.bound(d))
    S = int(math.floor(D * D * (1 + L2_SLACK) / (tau * tau)))
    while S >= 0 and tau * tau * S > D * D * (1 + L2_SLACK):
        S -= 1
    lo, hi = domain_bounds(dom, d)
    return min(S, int(np.maximum(lo * lo, hi * hi).sum()))


def achievable_norms(lo: np.ndarray, hi: np.ndarray, limit: int) -> np.ndarray:
    """Sorted t ≤ limit with t = Σ_j k_j², k_j ∈ [lo_j, hi_j] (dynamic programming; every exact
    normalization term of the MIP compilers lists these t)."""
    reach = np.zeros(limit + 1, dtype=bool)
    reach[0] = True
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        nxt = np.zeros_like(reach)
        for q in sorted({v * v for v in range(a, b + 1)}):
            if q <= limit:
                nxt[q:] |= reach[: limit + 1 - q]
        reach = nxt
    return np.flatnonzero(reach)


@dataclass
class LinearIR:
    """The integer linear model of a :class:`DiscreteProblem` with a :class:`RowLoss` (module docstring)."""

    problem: DiscreteProblem
    variables: list[Var] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    cost: dict[int, Fraction] = field(default_factory=dict)
    constant: Fraction = Fraction(0)
    k: list[int] = field(default_factory=list)
    u: list[dict[int, int]] = field(default_factory=list)
    s: int = -1
    norms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _weight: Fraction = Fraction(1)

    # -- building blocks -------------------------------------------------------------------------
    def var(self, lb: int, ub: int, name: str, *, relax: bool = False) -> int:
        self.variables.append(Var(int(lb), int(ub), relax, name))
        return len(self.variables) - 1

    def row(self, terms: dict[int, int] | list[tuple[int, int]], lb: int | None = None, ub: int | None = None,
            when: tuple[int, int] | None = None) -> None:
        items = terms.items() if isinstance(terms, dict) else terms
        self.rows.append(Row(tuple((int(v), int(c)) for v, c in items if c != 0), lb, ub, when))

    def add_cost(self, v: int, c: Fraction) -> None:
        self.cost[v] = self.cost.get(v, Fraction(0)) + c

    def margin_range(self, z: np.ndarray) -> tuple[int, int]:
        """min and max of ⟨z, k⟩ over the box."""
        lo, hi = domain_bounds(self.problem.domain, self.problem.dim)
        a, b = z * lo, z * hi
        return int(np.minimum(a, b).sum()), int(np.maximum(a, b).sum())

    def margin_terms(self, z: np.ndarray, scale: int = 1) -> dict[int, int]:
        return {self.k[j]: scale * int(z[j]) for j in np.flatnonzero(z)}

    # -- the domain ------------------------------------------------------------------------------
    def build_domain(self) -> None:
        dom, d = self.problem.domain, self.problem.dim
        lo, hi = domain_bounds(dom, d)
        self.k = [self.var(int(lo[j]), int(hi[j]), f"k{j}") for j in range(d)]
        for j in range(d):
            self.u.append({v: self.var(0, 1, f"u{j}_{v}") for v in range(int(lo[j]), int(hi[j]) + 1)})
            self.row({u: 1 for u in self.u[j].values()}, 1, 1)
            self.row({self.k[j]: 1, **{u: -v for v, u in self.u[j].items()}}, 0, 0)
        S = norm_limit(self.problem)
        self.norms = achievable_norms(lo, hi, max(S, 0))
        if S < 0 or self.norms.size == 0:
            raise ModelError("the discrete domain has no point inside its ℓ2 bound")
        self.s = self.var(0, S, "s")
        self.row({self.s: 1, **{u: -v * v for j in range(d) for v, u in self.u[j].items()}}, 0, 0)
        if isinstance(dom, DiscreteDomain):
            zeros = [self.u[j][0] for j in range(d) if 0 in self.u[j]]
            always = d - len(zeros)  # coordinates whose range excludes 0 are always nonzero
            count = {z: -1 for z in zeros}  # nonzeros = always + Σ (1 − u_{j0})
            if dom.max_nonzero is not None:
                self.row(count, None, dom.max_nonzero - always - len(zeros))
            if dom.min_nonzero is not None:
                self.row(count, dom.min_nonzero - always - len(zeros), None)
            for side in dom.side:
                for a, b in zip(side.A, side.b, strict=True):
                    terms = {self.k[j]: int(c) for j, c in enumerate(a) if c}
                    self.row(terms, b if side.equal else None, b)

    # -- the atoms (called back by Atom.encode) ----------------------------------------------------
    def indicator_atom(self, atom: ScoreIndicator) -> None:
        Z, _, counts = atom.groups
        binaries: dict[tuple[int, ...], int] = {}
        for g in range(Z.shape[0]):
            c = self._weight * atom.unit * int(counts[g])
            if c == 0:
                continue
            lo, hi = self.margin_range(Z[g])
            if atom.sense == "<=":
                if hi <= atom.cut:
                    self.constant += c
                    continue
                if lo > atom.cut:
                    continue
                e = self.var(0, 1, f"e{len(self.variables)}")
                self.row(self.margin_terms(Z[g]), atom.cut + 1, None, when=(e, 0))
            else:
                if lo >= atom.cut:
                    self.constant += c
                    continue
                if hi < atom.cut:
                    continue
                e = self.var(0, 1, f"e{len(self.variables)}")
                self.row(self.margin_terms(Z[g]), None, atom.cut - 1, when=(e, 0))
            self.add_cost(e, c)
            binaries[tuple(Z[g].tolist())] = e
        self.opposite_cuts(atom, binaries)

    def opposite_cuts(self, atom: ScoreIndicator, binaries: dict[tuple[int, ...], int]) -> None:
        """e_z + e_{−z} ≥ 1 for opposite rows (same x, opposite labels) when one of them must hit.

        1[m ≤ T] + 1[−m ≤ T] ≥ 1 for every integer m when T ≥ 0 (and 1[m ≥ T] + 1[−m ≥ T] ≥ 1 when
        T ≤ 0): a valid cut that only tightens the relaxation (the 0/1 halfspace's own MIP has it too).
        """
        if (atom.sense == "<=" and atom.cut < 0) or (atom.sense == ">=" and atom.cut > 0):
            return
        for z, e in binaries.items():
            neg = tuple(-v for v in z)
            if neg in binaries and binaries[neg] > e:
                self.row({e: 1, binaries[neg]: 1}, 1, None)

    def ramp_atom(self, atom: Ramp) -> None:
        Z, _, counts = atom.groups
        R, q, qb = atom.span, atom.q, atom.qb
        for g in range(Z.shape[0]):
            c = self._weight * atom.unit * int(counts[g])
            if c == 0:
                continue
            lo, hi = self.margin_range(Z[g])
            vmin, vmax = qb - q * hi, qb - q * lo  # range of qb − q·m over the box
            if vmin >= R:
                self.constant += c * R
                continue
            if vmax <= 0:
                continue
            r = self.var(0, R, f"r{len(self.variables)}", relax=True)
            terms = {r: 1, **self.margin_terms(Z[g], q)}
            if vmax <= R:  # never capped: r ≥ qb − q·m suffices
                self.row(terms, qb, None)
            else:
                z = self.var(0, 1, f"z{len(self.variables)}")
                self.row({r: 1}, R, None, when=(z, 1))
                self.row(terms, qb, None, when=(z, 0))
            self.add_cost(r, c)

    def capped_min_atom(self, atom: CappedMin) -> None:
        C, counts, U = atom.cost_units, atom.groups[2], atom.top_units
        for g in range(C.shape[0]):
            c = self._weight * atom.unit * int(counts[g])
            self.constant += c * U
            levels = np.unique(C[g][C[g] < U])
            prev: int | None = None
            for r, v in enumerate(levels.tolist()):
                nxt = int(levels[r + 1]) if r + 1 < levels.size else U
                y = self.var(0, 1, f"y{len(self.variables)}", relax=True)
                terms = {y: 1, **{self.k[j]: -1 for j in np.flatnonzero(C[g] == v)}}
                if prev is not None:
                    terms[prev] = -1
                self.row(terms, None, 0)
                self.add_cost(y, -c * (nxt - int(v)))
                prev = y

    def lookup_atom(self, atom: Lookup) -> None:
        totals = atom.groups[2].astype(object) @ atom.cost_units.astype(object)
        for j, t in enumerate(totals):
            if t:
                self.add_cost(self.k[j], self._weight * atom.unit * int(t))

    # -- exact loss of a point -------------------------------------------------------------------
    def exact_loss(self, k: np.ndarray) -> float:
        """The loss at integer ``k`` from the atoms' own exact evaluation."""
        loss = self.problem.loss
        assert isinstance(loss, RowLoss)
        return float(loss.exact_totals(np.asarray(k, dtype=np.int64)[None, :])[0])


def build_domain_ir(problem: DiscreteProblem) -> LinearIR:
    """The domain's part of the model alone (no loss): what a feasibility check solves."""
    ir = LinearIR(problem)
    ir.build_domain()
    return ir


def build_ir(problem: DiscreteProblem) -> LinearIR:
    """The :class:`LinearIR` of ``problem`` (a RowLoss over an IntegerGrid or DiscreteDomain)."""
    loss = problem.loss
    if not isinstance(loss, RowLoss):
        raise ModelError("build_ir compiles a RowLoss (ScoreIndicator, Ramp, CappedMin, Lookup or their sums)")
    ir = LinearIR(problem)
    ir.build_domain()
    for weight, atom in loss.terms:
        if weight == 0:
            continue
        ir._weight = weight
        atom.encode(ir)
    ir._weight = Fraction(1)
    return ir
