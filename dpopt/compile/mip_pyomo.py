"""The exact MIP of OPDisc's oracle problem (NRVW19 App. D.2, Fig. 2) as a pyomo model.

:func:`compile_pyomo` turns a :class:`~dpopt.modeling.discrete.DiscreteProblem`

    minimize_{w ∈ W_τ}  Σ_i c_i 1[y_i⟨x_i, w⟩ ≤ 0] − Σ_j η_j w_j / D − η_{d+1} √(D² − ‖w‖²) / D

into a mixed-integer *linear* program whose optimum is exactly the optimum of the
problem (no relaxation, for either sign of η_{d+1}).  The model is built once; the
noise η lives in mutable ``pyo.Param`` objects, so a new draw changes objective
coefficients only (:meth:`PyomoProgram.set_eta`).

Formulation (w = τk, W_τ = {τk : k ∈ ℤ^d, klow ≤ k_j ≤ khigh, τ²‖k‖² ≤ D²})
--------------------------------------------------------------------------
*Exact margins.*  The paper writes the strict inequality y⟨x, w⟩ > 0, which a MIP
cannot state.  The data carry a declared :class:`~dpopt.modeling.schema.Schema`: every
column lives on a declared grid whose values are rationals with the common denominator
s = ``schema.scale`` (Adult's ``paper23`` encoding: s = lcm(90, 16, 99) = 7920), and rows
are mapped onto it row by row when the Dataset is built.  So a_i = s·y_i·x_i is an integer
vector (``ZeroOneLoss.integer_rows``, computed from grid indices, never by reading a
float as a rational); dividing it by the gcd g_i of its entries gives the primitive
vector b_i (:func:`integer_rows`, the one exact scaling every MIP compiler uses), and on the grid

    y_i⟨x_i, w⟩ > 0  ⟺  ⟨b_i, k⟩ > 0  ⟺  ⟨b_i, k⟩ ≥ 1      (⟨b_i, k⟩ ∈ ℤ).

Nothing here reads a value to decide anything: the scaling is the declaration's, and the
only size refusal (:func:`check_declared_coefficients`) compares the declared bounds
|b_ij| ≤ |a_ij| ≤ ``schema.integer_bound(j)`` and the big-M bound they imply with
:data:`MAX_COEFFICIENT`, so for a given schema and grid it refuses always or never (the
earlier reading of the data as rationals refused depending on one row's values, a
data-dependent bit outside the noise).  ``ZeroOneLoss.values`` uses the
same integers, so the backend's re-check agrees exactly (:meth:`PyomoProgram.exact_loss`).

*Aggregation (what is kept).*  The error indicator of row i depends only on b_i,
so rows are merged by b_i (this merges identical (x, y) pairs, and also rows
whose y·x are positive multiples of each other); their weights are summed and
rows of zero total weight are dropped.  A merged row whose margin cannot be
positive anywhere on the box (e.g. x = 0: a point on every hyperplane is an error)
becomes a constant; one whose margin is ≥ 1 on the whole box is dropped (never
an error).  Rows with opposite directions b and −b (e.g. identical x, opposite
labels) keep their own binaries, plus the valid cut e_b + e_{−b} ≥ 1 (⟨b, k⟩ ≥ 1 and
⟨−b, k⟩ ≥ 1 cannot both hold); it tightens the LP relaxation only.

*Loss.*  One binary e_i per remaining merged row with weight c_i and

    ⟨b_i, k⟩ ≥ 1 − M_i e_i,   M_i = 1 − min_{k} ⟨b_i, k⟩,

with the minimum over the box (Σ_j min(b_ij klow, b_ij khigh)) intersected with the
ℓ2 ball (≥ −⌊‖b_i‖₂ D/τ⌋): a per-row big-M much tighter than the paper's global
c > max ‖x‖‖w‖.  The loss part of the objective is Σ_i c_i e_i + constant, with
integer coefficients when the weights are integers.

*Normalization, exactly.*  λ = √(D² − ‖w‖²) is not linear, and the paper's
relaxation λ² + ‖w‖² ≤ D² is exact only when η_{d+1} ≥ 0 (for η_{d+1} < 0 the
minimiser pushes λ to its lower end).  On the grid ‖w‖² = τ² Σ_j k_j² takes finitely
many values, so it is encoded exactly by one-hot binaries:

* u_{j,v} ∈ {0,1} for v = klow..khigh, Σ_v u_{jv} = 1, k_j = Σ_v v u_{jv};
* z_t ∈ {0,1} for every achievable t = Σ_j k_j² with τ²t ≤ D²(1 + 10⁻¹²) (the same
  tolerance as :meth:`IntegerGrid.enumerate`; listing only these t *is* the ℓ2
  bound), Σ_t z_t = 1, Σ_t t z_t = Σ_j Σ_v v² u_{jv};
* the last term is −η_{d+1}/D · Σ_t √(D² − τ²t) z_t: linear and exact.

*Other perturbation kinds.*  The objective's noise part is written through
:meth:`DiscreteProblem.linear_terms` as −Σ_j kc_j k_j − a Σ_t (λ_t/D) z_t (+ Σ_{j,v}
lev_{jv} u_{jv} for kind "levels"), all mutable parameters: OPDisc's normalized
η (kc = η_j τ/D, a = η_{d+1}), OPSamp's linear −⟨σ, w⟩ (kc = τσ_j, a = 0) and RSPM's
separable separator weights (a table on the one-hot u, exact for any values) share
one model builder.

Size: with m = khigh − klow + 1 levels, T achievable values of t, R merged rows
that are neither constant nor dropped and P opposite pairs among them, there are
d integer k_j, d·m + T + R binaries, and 2d + 2 + R + P linear constraints.  For
d = 23, τ = 1, k ∈ {−4..4}, D = √23 (T = 24: ‖k‖² ∈ {0..23}): 23 integers,
231 + R binaries, 48 + R + P constraints (balanced Adult: n = 500 → R = 473,
P = 15; n = 1000 → R = 915, P = 30; all 15,682 rows → R = 10,038, P = 762).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.compile.discrete_ir import achievable_norms, norm_limit
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.zero_one import ZeroOneLoss

#: largest |coefficient| or big-M the model may contain (exact in double, and well
#: inside the range where HiGHS's feasibility tolerances cannot blur a unit margin)
MAX_COEFFICIENT = 10**9


def l2_cap(norm: np.ndarray | float, radius: float) -> np.ndarray:
    """⌊‖b‖₂ · D/τ⌋ (with a tiny upward slack): a bound on |⟨b, k⟩| over the ℓ2 ball."""
    return np.floor(np.asarray(norm, dtype=np.float64) * radius * (1 + 1e-12) + 1e-9)


def declared_big_m(problem: DiscreteProblem) -> tuple[int, int]:
    """(max |b_ij|, max M_i) bounded from the declarations only.

    |b_ij| ≤ |a_ij| ≤ ``integer_bound(j)`` =: β_j, so every per-row big-M
    M_i = 1 − min_k ⟨b_i, k⟩ is at most 1 + min(Σ_j β_j·max|k_j|, ⌊‖β‖₂ D/τ⌋).
    """
    schema = problem.loss.data.schema
    if schema is None:
        raise ModelError("the 0/1-loss MIP needs data with a declared schema (Dataset(..., schema=...))")
    grid, d = problem.domain, problem.dim
    beta = [int(v) for v in schema.integer_bounds()]
    kmax = max(abs(int(grid.klow)), abs(int(grid.khigh)))
    box = sum(beta) * kmax
    ball = int(l2_cap(math.sqrt(float(sum(b * b for b in beta))), float(grid.bound(d)) / float(grid.step)))
    return max(beta), 1 + min(box, ball)


def check_declared_coefficients(problem: DiscreteProblem) -> None:
    """ModelError unless the declared bounds keep every coefficient and big-M ≤ MAX_COEFFICIENT.

    Reads the schema and the domain only (:func:`declared_big_m`).
    """
    coef, big = declared_big_m(problem)
    if coef > MAX_COEFFICIENT or big > MAX_COEFFICIENT:
        raise ModelError(f"the declared schema and domain allow big-M coefficients above {MAX_COEFFICIENT:g}; "
                         "declare coarser feature grids (a smaller common denominator) or use a smaller domain")


@dataclass(frozen=True)
class IntegerRows:
    """The 0/1 loss on integer data: Σ_i weights_i 1[⟨Z_i, k⟩ ≤ 0] + constant.

    Attributes
    ----------
    Z : ndarray of int64, shape (m, d)
        Primitive integer rows (gcd 1) with the label folded in, pairwise distinct.
    weights : ndarray, shape (m,)
        Summed positive weights of the merged rows.
    constant : float
        Total weight of rows with x_i = 0 (an error for every w).
    scale : int
        The schema's common denominator s.
    """

    Z: np.ndarray
    weights: np.ndarray
    constant: float
    scale: int

    def loss(self, k: np.ndarray) -> float:
        """The 0/1 loss at integer ``k``, with exact integer margins."""
        k = np.asarray(k, dtype=np.int64)
        margins = self.Z @ k
        return float(self.constant + self.weights[margins <= 0].sum())


def integer_rows(loss: ZeroOneLoss, *, allow_approximation: float | None = None) -> IntegerRows:
    """The exact integer scaling of every MIP compiler: merged primitive rows with the label folded in.

    A = s·X (``ZeroOneLoss.integer_rows``, from the schema's grid indices; s = ``schema.scale``);
    row i becomes z_i = y_i·a_i / gcd(a_i), so for an integer k,
    ``y_i⟨x_i, w⟩ > 0 ⟺ ⟨z_i, k⟩ ≥ 1`` exactly (a margin of exactly zero is an error).  Rows
    with a_i = 0 are errors for every w (their weight is the constant); rows of weight 0 are
    dropped; identical z_i are merged with their weights summed (this merges identical
    (x, y) pairs and rows that are positive multiples of each other).  Nothing is decided
    from a value: the size checks are the compilers' own, on the declaration
    (:func:`check_declared_coefficients`, ``mip_cpsat.check_declared_activity``).

    Parameters
    ----------
    loss : ZeroOneLoss
        The (weighted) 0/1 loss on data with a schema.
    allow_approximation : float, optional
        Reserved.  Rounding the data is not supported (the 0/1 loss is discontinuous in
        the data, so no small α bounds the effect); anything but None raises ModelError.

    Raises
    ------
    ModelError
        If approximation is asked for, or the data have no schema.
    """
    if allow_approximation is not None:
        raise ModelError(
            "approximate integer scaling of the data is not supported: the 0/1 loss is "
            "discontinuous in the data, so rounding x can change the loss by a whole row weight; "
            "declare the feature grid in the Dataset's schema instead"
        )
    if loss.data.schema is None:
        raise ModelError("the 0/1-loss MIP needs data with a declared schema (Dataset(..., schema=...))")
    y, c = loss.data.y, np.asarray(loss.weights, dtype=np.float64)
    d = loss.variable.size
    A = loss.integer_rows()
    g = np.gcd.reduce(np.abs(A), axis=1)
    zero = g == 0
    Z = (A[~zero] // g[~zero, None]) * y[~zero, None].astype(np.int64)
    w = c[~zero]
    keep = w > 0
    Z, w = Z[keep], w[keep]
    Zu: np.ndarray
    wu: np.ndarray
    if Z.shape[0]:
        Zu, back = np.unique(Z, axis=0, return_inverse=True)
        wu = np.bincount(back.reshape(-1), weights=w, minlength=Zu.shape[0])
    else:
        Zu, wu = np.zeros((0, d), dtype=np.int64), np.zeros(0)
    return IntegerRows(Z=Zu.astype(np.int64), weights=wu, constant=float(c[zero].sum()), scale=int(loss.scale))


@dataclass(frozen=True)
class MipSize:
    """Counts of the compiled MIP."""

    integer_vars: int
    binary_vars: int
    constraints: int
    rows: int  # merged rows carrying a binary e_i
    pairs: int  # opposite pairs (b, −b) among them, each with the cut e_b + e_{−b} ≥ 1
    levels: int  # m = khigh − klow + 1
    norm_values: int  # T: achievable ‖k‖² values in the ℓ2 ball

    def summary(self) -> str:
        return (f"{self.integer_vars} integer + {self.binary_vars} binary variables, {self.constraints} constraints "
                f"({self.rows} loss rows, {self.pairs} opposite pairs, {self.levels} levels per coordinate, {self.norm_values} norm values)")


@dataclass
class PyomoProgram:
    """A compiled OPDisc oracle problem.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
        The MIP (built once).  ``model.kc``, ``model.normc`` (and ``model.lev``) hold the
        mutable noise coefficients.
    problem : DiscreteProblem
        The problem it was compiled from (its ``eta`` is the initial value only).
    scale : int
        The schema's common denominator s (y⟨x, w⟩ ∈ (τ/s)ℤ on the grid).
    constant : float
        Weight of rows that are errors for every w (part of the objective constant).
    resolution : float
        Granularity of the loss part: when all positive weights are integers, their
        gcd (two loss values differ by 0 or by at least this); otherwise the
        minimum positive weight (a scale, not a granularity).  A certified MIP
        answer must have an absolute gap below it.
    size : MipSize
        Variable and constraint counts.
    """

    model: Any
    problem: DiscreteProblem
    scale: int
    constant: float
    resolution: float
    size: MipSize
    rows: np.ndarray  # merged primitive directions b_i (R × d, int64) carrying a binary
    row_weights: np.ndarray
    const_rows: np.ndarray = field(repr=False)  # directions that are errors everywhere (weights in `constant`)
    _eta: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def eta(self) -> np.ndarray:
        """The noise currently in the model (length ``problem.noise_size``)."""
        return self._eta.copy()

    def set_eta(self, eta: np.ndarray | None) -> None:
        """Put a new noise vector into the model's mutable parameters (no rebuild).

        The parameters are the coefficients of :meth:`DiscreteProblem.linear_terms`:
        ``kc[j]`` = τ c_j on k_j, ``normc`` = a on Σ_t (λ_t/D) z_t and, for kind
        "levels", ``lev[j, v]`` = T[j, v − klow] on u_{jv}.
        """
        self._eta = load_noise(self.model, self.problem, eta)

    def current_problem(self) -> DiscreteProblem:
        """The DiscreteProblem with the noise currently in the model."""
        return self.problem.with_eta(self._eta.copy())

    def extract_k(self) -> np.ndarray:
        """Integer coordinates k of the solution loaded into the model (rounded)."""
        m = self.model
        vals = [m.k[j].value for j in range(self.problem.dim)]
        if any(v is None for v in vals):
            raise ModelError("the model holds no solution")
        return np.rint(np.asarray(vals, dtype=np.float64)).astype(np.int64)

    def exact_loss(self, k: np.ndarray) -> float:
        """The loss at w = τk with exact integer margins (the MIP's own semantics)."""
        k = np.asarray(k, dtype=np.int64)
        loss = self.constant
        if self.rows.shape[0]:
            loss += float(self.row_weights[(self.rows @ k) <= 0].sum())
        return float(loss)


def load_noise(model: Any, problem: DiscreteProblem, eta: np.ndarray | None) -> np.ndarray:
    """Put η into a compiled model's mutable noise parameters; returns η (zeros for None).

    The parameters are the coefficients of :meth:`DiscreteProblem.linear_terms`: ``kc[j]`` = τ c_j
    on k_j, ``normc`` = a on the normalization term and, for kind "levels", ``lev[j, v]`` =
    T[j, v − klow] on the one-hot level u_{jv} (the 0/1 program's and the general program's alike).
    """
    p = problem.with_eta(eta)  # validates the length and finiteness
    c, a, table = p.linear_terms()
    tau = float(p.domain.step)
    for j in range(p.dim):
        model.kc[j].set_value(float(tau * c[j]))
    model.normc.set_value(float(a))
    if table is not None:
        klow = int(p.domain.klow)
        for (j, v) in model.lev:
            model.lev[j, v].set_value(float(table[j, v - klow]))
    return np.zeros(p.noise_size) if eta is None else np.asarray(p.eta).copy()


def compile_pyomo(problem: DiscreteProblem) -> PyomoProgram:
    """Build the exact MIP of ``problem`` once (see the module docstring).

    Raises
    ------
    ModelError
        If the data have no schema, or the declared bounds allow coefficients above
        :data:`MAX_COEFFICIENT` (:func:`check_declared_coefficients`: a decision on the
        declaration only, checked before the data are read).
    """
    if not isinstance(problem, DiscreteProblem):
        raise ModelError("compile_pyomo needs a DiscreteProblem")
    check_declared_coefficients(problem)
    loss, grid, d = problem.zero_one(), problem.domain, problem.dim
    klow, khigh = int(grid.klow), int(grid.khigh)
    weights = np.asarray(loss.weights, dtype=np.float64)

    # -- exact integer margins and aggregation by primitive direction ----------------
    merged = integer_rows(loss)
    uniq, cw, constant, s = merged.Z, merged.weights, merged.constant, merged.scale

    l2cap = l2_cap(np.linalg.norm(uniq.astype(np.float64), axis=1), float(grid.bound(d)) / float(grid.step))
    lo = np.minimum(uniq * klow, uniq * khigh).sum(axis=1)
    hi = np.maximum(uniq * klow, uniq * khigh).sum(axis=1)
    lo = np.maximum(lo, -l2cap).astype(np.int64)
    hi = np.minimum(hi, l2cap).astype(np.int64)
    always_err = hi <= 0
    never_err = lo >= 1
    constant += float(cw[always_err].sum())
    const_rows = uniq[always_err]
    active = ~always_err & ~never_err
    rows, row_w, bigM = uniq[active], cw[active], (1 - lo[active]).astype(np.int64)  # ≤ declared_big_m

    return build_program(problem, rows, row_w, bigM, scale=int(s), resolution=loss_resolution(weights), constant=constant,
                         const_rows=const_rows, opposite_cuts=True, name="opdisc_zero_one")


def _norm_values(problem: DiscreteProblem) -> tuple[np.ndarray, np.ndarray]:
    """(T, λ): the achievable t = ‖k‖² inside the ℓ2 ball and λ_t = √(D² − τ²t)."""
    grid, d = problem.domain, problem.dim
    tau, klow, khigh = float(grid.step), int(grid.klow), int(grid.khigh)
    D = float(grid.bound(d))
    T = achievable_norms(np.full(d, klow), np.full(d, khigh), norm_limit(problem))
    if T.size == 0:
        raise ModelError("the grid has no point inside the ℓ2 bound")
    return T, np.sqrt(np.maximum(D * D - tau * tau * T.astype(np.float64), 0.0))


def loss_resolution(weights: np.ndarray) -> float:
    """The loss granularity (PyomoProgram.resolution) of positive weights."""
    pos = weights[weights > 0]
    if pos.size == 0:
        return math.inf
    if np.all(pos == np.round(pos)) and pos.max() < 2**53:
        return float(math.gcd(*(int(c) for c in pos)))
    return float(pos.min())


def build_program(problem: DiscreteProblem, rows: np.ndarray, row_weights: np.ndarray, big_m: np.ndarray, *,
                  scale: int, resolution: float, constant: float = 0.0, const_rows: np.ndarray | None = None,
                  opposite_cuts: bool = True, name: str = "opdisc_zero_one") -> PyomoProgram:
    """The pyomo model for given integer margin rows (one binary e_i per row).

    Shared by :func:`compile_pyomo` and the benchmark's naive formulation: the grid
    (one-hot levels), the exact ‖k‖² values, the rows ⟨b_i, k⟩ + M_i e_i ≥ 1, the optional
    opposite-pair cuts, and the objective with mutable noise coefficients.
    """
    import pyomo.environ as pyo

    grid, d = problem.domain, problem.dim
    klow, khigh = int(grid.klow), int(grid.khigh)
    D = float(grid.bound(d))
    T, lam = _norm_values(problem)
    row_w = np.asarray(row_weights, dtype=np.float64)
    bigM = np.asarray(big_m, dtype=np.int64).reshape(-1)
    if bigM.shape != (rows.shape[0],):
        raise ModelError("build_program needs one big-M per row")

    m = pyo.ConcreteModel(name=name)
    m.J = pyo.RangeSet(0, d - 1)
    m.V = pyo.Set(initialize=list(range(klow, khigh + 1)), ordered=True)
    m.T = pyo.Set(initialize=[int(t) for t in T], ordered=True)
    m.R = pyo.RangeSet(0, rows.shape[0] - 1) if rows.shape[0] else pyo.Set(initialize=[])
    m.kc = pyo.Param(m.J, mutable=True, initialize=0.0)
    m.normc = pyo.Param(mutable=True, initialize=0.0)
    if problem.kind == "levels":
        m.lev = pyo.Param(m.J, m.V, mutable=True, initialize=0.0)

    m.k = pyo.Var(m.J, domain=pyo.Integers, bounds=(klow, khigh))
    m.u = pyo.Var(m.J, m.V, domain=pyo.Binary)
    m.z = pyo.Var(m.T, domain=pyo.Binary)
    m.e = pyo.Var(m.R, domain=pyo.Binary)

    m.onehot = pyo.Constraint(m.J, rule=lambda mm, j: sum(mm.u[j, v] for v in mm.V) == 1)
    m.klink = pyo.Constraint(m.J, rule=lambda mm, j: mm.k[j] == sum(v * mm.u[j, v] for v in mm.V))
    m.zone = pyo.Constraint(expr=sum(m.z[t] for t in m.T) == 1)
    m.norm = pyo.Constraint(
        expr=sum(int(t) * m.z[t] for t in m.T) == sum(v * v * m.u[j, v] for j in m.J for v in m.V)
    )
    row_list = rows.tolist()
    big_list = bigM.tolist()

    def _margin(mm: Any, i: int) -> Any:
        b = row_list[i]
        return sum(b[j] * mm.k[j] for j in range(d) if b[j] != 0) + big_list[i] * mm.e[i] >= 1

    m.margin = pyo.Constraint(m.R, rule=_margin)
    index = {tuple(r): i for i, r in enumerate(row_list)}
    pairs = sorted((i, index[neg]) for i, r in enumerate(row_list)
                   if (neg := tuple(-v for v in r)) in index and index[neg] > i) if opposite_cuts else []
    m.P = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.opposite = pyo.Constraint(m.P, rule=lambda mm, i, j: mm.e[i] + mm.e[j] >= 1)

    def _weight(c: float) -> float | int:
        return int(c) if float(c).is_integer() else float(c)

    lam_list = lam.tolist()
    loss_expr = sum(_weight(row_w[i]) * m.e[i] for i in range(rows.shape[0]))
    expr = (loss_expr + _weight(constant)
            - sum(m.kc[j] * m.k[j] for j in m.J)
            - m.normc * sum((lam_list[i] / D) * m.z[t] for i, t in enumerate(m.T)))
    if problem.kind == "levels":
        expr = expr + sum(m.lev[j, v] * m.u[j, v] for j in m.J for v in m.V)
    m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)

    size = MipSize(
        integer_vars=d,
        binary_vars=d * (khigh - klow + 1) + int(T.size) + int(rows.shape[0]),
        constraints=2 * d + 2 + int(rows.shape[0]) + len(pairs),
        rows=int(rows.shape[0]),
        pairs=len(pairs),
        levels=khigh - klow + 1,
        norm_values=int(T.size),
    )
    prog = PyomoProgram(model=m, problem=problem, scale=int(scale), constant=constant, resolution=float(resolution),
                        size=size, rows=rows, row_weights=row_w,
                        const_rows=np.zeros((0, d), np.int64) if const_rows is None else const_rows)
    prog.set_eta(problem.eta)
    return prog
