"""OPDisc's oracle problem decomposed by column blocks: enumerate a few columns, group the rows.

The 0/1 loss of NRVW19 App. D.2 is hard for branch and bound in the per-row big-M form
(:mod:`dpopt.compile.mip_pyomo`): its LP relaxation sets every e_i to a small fraction at
w = 0, so the bound stays near zero and the search enumerates.  Real data often has
structure that a different *exact* formulation can use.  On Adult's ``paper23`` encoding
20 of the 23 columns are one-hot indicators of four categorical features and only 3 are
numeric; the 15,682 balanced rows have only 174 distinct categorical patterns.

Decomposition (exact)
---------------------
Split the columns into an *enumerated* set S (few columns, e.g. the numeric ones) and a
*grouped* set C.  With exact integer rows a_i = s·x_i (``ZeroOneLoss.integer_rows``, from the schema)
and w = τk, row i is an error iff y_i(⟨a_i^C, k_C⟩ + ⟨a_i^S, k_S⟩) ≤ 0.  Rows are grouped by
their C-part: a_i^C = g_p·P_p for the primitive integer pattern P_p of group p (g_p = gcd).
For a fixed k_S every row i of group p has the known integer S_i = ⟨a_i^S, k_S⟩, and with
the integer group score c_p = ⟨P_p, k_C⟩

    y_i = +1:  error ⟺ g_p c_p + S_i ≤ 0 ⟺ c_p ≤ ⌊−S_i / g_p⌋,
    y_i = −1:  error ⟺ g_p c_p + S_i ≥ 0 ⟺ c_p ≥ ⌈−S_i / g_p⌉,

so the loss of the whole group is a step function F_p(c_p) of one integer, tabulated
exactly (in integer arithmetic) over c_p's range (box ∩ ℓ2 ball).  Groups whose pattern
is zero have c_p ≡ 0.

For each enumerated k_S (every point of the box over S with τ²‖k_S‖² ≤ D²) the remaining
problem over k_C is the MIP

    min  Σ_p Σ_c F_p(c) v_{pc} + Σ_{j∈C, v} cost_{jv} u_{jv} − a Σ_t (λ(t + ‖k_S‖²)/D) z_t + const(k_S)
    s.t. Σ_v u_{jv} = 1, Σ_c v_{pc} = 1, Σ_c c·v_{pc} = Σ_{j∈C} P_{pj} Σ_v v·u_{jv},
         Σ_t z_t = 1, Σ_t t·z_t = Σ_{j∈C, v} v² u_{jv},   u, v, z binary,

with z_t fixed to 0 where t + ‖k_S‖² leaves the ℓ2 ball.  It is exact for every
perturbation kind of :class:`~dpopt.modeling.discrete.DiscreteProblem` (normalized for
either sign of η_{d+1}, linear, separable levels), and its LP relaxation bounds each group
by the convex envelope of F_p rather than by a big-M fraction.  The minimum over all k_S
of these minima is the oracle's answer; :mod:`dpopt.backends.highs_grouped` prunes k_S by
LP bounds and solves the rest with an objective cutoff.

The model's structure does not depend on k_S or η: only column costs and the z bounds
change (:meth:`GroupedProgram.costs`).

Which columns to enumerate, and the size limits (public)
--------------------------------------------------------
``enumerate="auto"`` enumerates exactly the columns the data's
:class:`~dpopt.modeling.schema.Schema` declares non-binary (Numeric); Binary and one-hot
columns are grouped.  An explicit list of column indices (e.g. in a solver profile) is
used as given.  The split changes the running time only, never the answer.

Every refusal is decided before the data are read, from public facts only
(:func:`check_declared_size`): the enumerated points (domain and |S|)
against :data:`MAX_POINTS`, and an upper bound on the per-point MIP's columns against
:data:`MAX_COLUMNS`:

    |C|·m + G_max·W_max + |T|,   G_max = min(n, number of C-parts the schema allows),

where W_max bounds every group's score range cmax − cmin + 1.  Each a_ij (j ∈ C) is a
multiple of the column's unit u_j = gcd(s·low_j, s·grid_j), so the gcd g_p of a pattern is
a multiple of U = gcd_{j∈C} u_j and |P_pj| ≤ π_j := ⌊β_j/U⌋ with β_j the declared
``integer_bound(j)``; a one-hot block has at most one non-zero entry, so it contributes
only its largest π_j.  With Π₁ = Σ (free π_j) + Σ_blocks max π_j and Π₂² the same sum of
squares, W_max = 2·min(Π₁·max|k|, ⌊Π₂·√tmax⌋) + 1.  The same bounds decide the int64
magnitude check.  Replacing one row can therefore change the running time but never
whether the backend accepts the problem.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpopt.compile.discrete_ir import achievable_norms, norm_limit
from dpopt.compile.mip_pyomo import MAX_COEFFICIENT, l2_cap, loss_resolution
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.schema import Schema

#: most enumerated points k_S the decomposition accepts
MAX_POINTS = 50_000
#: most columns (u, v and z binaries) of the per-point MIP
MAX_COLUMNS = 200_000


@dataclass(frozen=True)
class GroupedSize:
    """Counts of the decomposition."""

    points: int  # enumerated k_S
    groups: int  # row groups (distinct C-patterns)
    rows: int  # merged rows
    columns: int  # binaries of the per-point MIP
    constraints: int

    def summary(self) -> str:
        return (f"{self.points} enumerated points × MIP of {self.columns} binaries and {self.constraints} rows "
                f"({self.groups} row groups, {self.rows} merged rows)")


@dataclass(frozen=True)
class SparseRows:
    """Constraint rows in CSR form with equal lower and upper bounds."""

    starts: np.ndarray  # int32, len = rows + 1
    index: np.ndarray  # int32
    value: np.ndarray  # float64
    rhs: np.ndarray  # float64


@dataclass(frozen=True)
class GroupedProgram:
    """The decomposition of one DiscreteProblem (data part only; η enters through :meth:`costs`).

    Columns of the per-point MIP: ``u`` (|C| × m one-hot levels), then ``v`` (one block per
    group, c = cmin..cmax), then ``z`` (one per achievable ‖k_C‖²).
    """

    problem: DiscreteProblem
    enumerated: np.ndarray  # S: column indices
    grouped: np.ndarray  # C: column indices
    points: np.ndarray  # (P, |S|) int64: every enumerated k_S
    row_s: np.ndarray  # (R, |S|) int64: a_i^S
    row_group: np.ndarray  # (R,) int64
    row_positive: np.ndarray  # (R,) bool: y_i = +1
    row_weight: np.ndarray  # (R,) float64: summed weights of merged rows
    patterns: np.ndarray  # (G, |C|) int64: primitive P_p (zero for the zero pattern)
    pattern_gcd: np.ndarray  # (G,) int64 (1 for the zero pattern)
    cmin: np.ndarray  # (G,) int64
    cmax: np.ndarray  # (G,) int64
    tmax: int  # ‖k‖² ≤ tmax is the ℓ2 bound
    t_values: np.ndarray  # achievable ‖k_C‖² ≤ tmax
    scale: int
    resolution: float
    rows: SparseRows = field(repr=False)
    size: GroupedSize = field(repr=False)

    # ---- column layout ------------------------------------------------------------
    @functools.cached_property
    def levels(self) -> np.ndarray:
        return np.arange(self.problem.domain.klow, self.problem.domain.khigh + 1, dtype=np.int64)

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """Start of each group's v block inside the v columns (length G + 1)."""
        return np.concatenate([[0], np.cumsum(self.cmax - self.cmin + 1)]).astype(np.int64)

    @property
    def n_u(self) -> int:
        return int(self.grouped.size * self.levels.size)

    @property
    def n_v(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_columns(self) -> int:
        return self.n_u + self.n_v + int(self.t_values.size)

    # ---- per-point data -----------------------------------------------------------
    def group_costs(self, ks: np.ndarray) -> np.ndarray:
        """F_p(c) for every group and c (flat, in v-column order) at the enumerated ``ks``."""
        s_int = self.row_s @ np.asarray(ks, dtype=np.int64)
        g = self.pattern_gcd[self.row_group]
        offs = self.offsets
        lo, hi = self.cmin[self.row_group], self.cmax[self.row_group]
        start = offs[self.row_group]
        diff = np.zeros(self.n_v + 1)
        pos = self.row_positive
        # y = +1: error for cmin ≤ c ≤ ⌊−S/g⌋
        top = np.clip(np.floor_divide(-s_int[pos], g[pos]), lo[pos] - 1, hi[pos])
        np.add.at(diff, start[pos], self.row_weight[pos])
        np.add.at(diff, start[pos] + (top - lo[pos]) + 1, -self.row_weight[pos])
        # y = −1: error for ⌈−S/g⌉ ≤ c ≤ cmax
        neg = ~pos
        bottom = np.clip(-np.floor_divide(s_int[neg], g[neg]), lo[neg], hi[neg] + 1)
        np.add.at(diff, start[neg] + (bottom - lo[neg]), self.row_weight[neg])
        np.add.at(diff, offs[self.row_group[neg] + 1], -self.row_weight[neg])
        return np.cumsum(diff)[: self.n_v]

    def costs(self, problem: DiscreteProblem, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(column costs, z upper bounds, constant) of the per-point MIP for ``problem``'s η at ``ks``."""
        c, a, table = problem.linear_terms()
        grid = problem.domain
        tau, klow, D = float(grid.step), int(grid.klow), float(grid.bound(problem.dim))
        lev = self.levels.astype(np.float64)
        ks = np.asarray(ks, dtype=np.int64)
        cC, cS = c[self.grouped], c[self.enumerated]
        ucost = -tau * cC[:, None] * lev[None, :]
        const = -tau * float(cS @ ks)
        if table is not None:
            ucost = ucost + table[self.grouped, :]
            const += float(table[self.enumerated, ks - klow].sum()) if ks.size else 0.0
        t_s = int(ks @ ks)
        inside = self.t_values + t_s <= self.tmax
        lam = np.sqrt(np.maximum(D * D - tau * tau * (self.t_values + t_s).astype(np.float64), 0.0))
        zcost = np.where(inside, -a * lam / D, 0.0)
        col = np.concatenate([ucost.reshape(-1), self.group_costs(ks), zcost])
        return col, inside.astype(np.float64), const

    def point(self, ks: np.ndarray, k_c: np.ndarray) -> np.ndarray:
        """The full integer vector k from its enumerated and grouped parts."""
        k = np.zeros(self.problem.dim, dtype=np.int64)
        k[self.enumerated] = ks
        k[self.grouped] = k_c
        return k

    def k_from_columns(self, x: np.ndarray) -> np.ndarray:
        """k_C from a (near-)integral column vector of the per-point MIP."""
        u = np.asarray(x[: self.n_u], dtype=np.float64).reshape(self.grouped.size, self.levels.size)
        return self.levels[np.argmax(u, axis=1)] if u.size else np.zeros(0, dtype=np.int64)

    def exact_loss(self, k: np.ndarray) -> float:
        """The loss at w = τk with exact integer margins, from the grouped tables."""
        k = np.asarray(k, dtype=np.int64)
        table = self.group_costs(k[self.enumerated])
        score = self.patterns @ k[self.grouped] if self.grouped.size else np.zeros(self.cmin.size, np.int64)
        if np.any(score < self.cmin) or np.any(score > self.cmax):
            raise ModelError("the point lies outside the grid's ℓ2 ball or box")
        return float(table[self.offsets[:-1] + score - self.cmin].sum())


def auto_split(schema: Schema) -> np.ndarray:
    """Column indices to enumerate by default: every column the schema declares non-binary."""
    if not isinstance(schema, Schema):
        raise ModelError("the automatic split needs data with a declared schema (Dataset(..., schema=...))")
    return np.setdiff1d(np.arange(schema.n_features), schema.binary_columns)


@dataclass(frozen=True)
class DeclaredSize:
    """Public upper bounds on the decomposition's size (module docstring)."""

    points: int  # enumerated k_S in the ℓ2 ball (exact: it depends on the domain only)
    groups: int  # G_max
    score_range: int  # W_max
    columns: int  # |C|·m + G_max·W_max + |T|
    s_bound: int  # bound on |⟨a^S, k_S⟩|
    c_bound: int  # bound on |⟨a^C, k_C⟩| = |g_p c_p|


def declared_size(problem: DiscreteProblem, S: np.ndarray) -> DeclaredSize:
    """Upper bounds on the grouped program's size from the schema, n and the domain only."""
    schema = problem.loss.data.schema
    if schema is None:
        raise ModelError("the grouped decomposition needs data with a declared schema (Dataset(..., schema=...))")
    grid, d = problem.domain, problem.dim
    klow, khigh = int(grid.klow), int(grid.khigh)
    kmax = max(abs(klow), abs(khigh))
    tmax = norm_limit(problem)
    C = np.setdiff1d(np.arange(d), S)
    beta = [int(v) for v in schema.integer_bounds()]
    points = _enumerated_points(int(S.size), klow, khigh, tmax).shape[0]
    groups = min(problem.loss.data.n, schema.value_count(C.tolist())) if C.size else 1
    width = _score_range(schema, C, beta, kmax, tmax)
    t_count = int(achievable_norms(np.full(C.size, klow), np.full(C.size, khigh), tmax).size)
    columns = int(C.size) * (khigh - klow + 1) + groups * width + t_count
    return DeclaredSize(points=int(points), groups=int(groups), score_range=width, columns=int(columns),
                        s_bound=sum(beta[j] for j in S.tolist()) * kmax,
                        c_bound=sum(beta[j] for j in C.tolist()) * kmax)


def _score_range(schema: Schema, C: np.ndarray, beta: list[int], kmax: int, tmax: int) -> int:
    """W_max: a bound on cmax − cmin + 1 of every group (module docstring)."""
    if C.size == 0:
        return 1
    unit = math.gcd(*(schema.integer_unit(int(j)) for j in C))
    pi = {int(j): beta[int(j)] // unit for j in C}
    parts: list[int] = []
    blocked: set[int] = set()
    for block in schema.blocks:
        members = [int(j) for j in block if int(j) in pi]
        blocked.update(members)
        if members:
            parts.append(max(pi[j] for j in members))
    parts += [pi[j] for j in pi if j not in blocked]
    box = sum(parts) * kmax
    ball = int(l2_cap(math.sqrt(float(sum(p * p for p in parts))), math.sqrt(tmax)))
    return 2 * min(box, ball) + 1


def check_declared_size(size: DeclaredSize) -> None:
    """ModelError when the public bounds exceed the limits (never reads the data)."""
    if size.columns > MAX_COLUMNS:
        raise ModelError(f"the grouped MIP could need more than {MAX_COLUMNS} binaries for this schema, n and "
                         "domain; enumerate other columns (option 'enumerate'), declare categorical columns as "
                         "Categorical (fewer possible patterns), or use solver 'highs'")
    if size.s_bound > 2**53 or size.c_bound > 2**53 or (size.score_range - 1) // 2 > MAX_COEFFICIENT:
        raise ModelError("the declared schema and domain allow margins too large for exact integer arithmetic; "
                         "declare coarser feature grids or use a smaller domain")


def compile_grouped(problem: DiscreteProblem, enumerate: str | Sequence[int] = "auto") -> GroupedProgram:
    """Decompose ``problem`` (see the module docstring).

    Parameters
    ----------
    problem : DiscreteProblem
    enumerate : "auto" or sequence of int
        The columns S whose grid values are enumerated; the rest are grouped.

    Raises
    ------
    ModelError
        If the data have no schema, a column index is invalid, or the public size bounds
        (:func:`declared_size`) exceed :data:`MAX_POINTS` / :data:`MAX_COLUMNS` or exact
        integer arithmetic.  All of these are decided before the data are read.
    """
    if not isinstance(problem, DiscreteProblem):
        raise ModelError("compile_grouped needs a DiscreteProblem")
    loss, grid, d = problem.zero_one(), problem.domain, problem.dim
    S = _split(problem, enumerate, d)
    declared = declared_size(problem, S)
    check_declared_size(declared)
    C = np.setdiff1d(np.arange(d), S)
    klow, khigh = int(grid.klow), int(grid.khigh)
    tmax = norm_limit(problem)
    points = _enumerated_points(S.size, klow, khigh, tmax)

    # -- the data: exact integers, grouped (nothing below can refuse) ----------------------
    s, A, y = loss.scale, loss.integer_rows(), loss.data.y
    weights = np.asarray(loss.weights, dtype=np.float64)
    keep = weights > 0
    A, y, weights = A[keep], y[keep], weights[keep]
    AC, AS = A[:, C], A[:, S]
    gcd = np.gcd.reduce(np.abs(AC), axis=1) if C.size else np.zeros(A.shape[0], np.int64)
    prim = np.where(gcd[:, None] > 0, AC // np.maximum(gcd, 1)[:, None], 0)
    gcd = np.maximum(gcd, 1)
    key = np.column_stack([prim, gcd]) if C.size else gcd[:, None]
    ukey, group = np.unique(key, axis=0, return_inverse=True)
    group = group.reshape(-1)
    patterns, pattern_gcd = ukey[:, : C.size].astype(np.int64), ukey[:, C.size].astype(np.int64)

    # merge rows with the same group, S-part and label
    rkey = np.column_stack([group, AS, (y > 0).astype(np.int64)])
    urows, rinv = np.unique(rkey, axis=0, return_inverse=True)
    rweight = np.bincount(rinv.reshape(-1), weights=weights, minlength=urows.shape[0])

    l2cap = l2_cap(np.linalg.norm(patterns.astype(np.float64), axis=1), math.sqrt(tmax))
    cmin = np.maximum(np.minimum(patterns * klow, patterns * khigh).sum(axis=1), -l2cap).astype(np.int64)
    cmax = np.minimum(np.maximum(patterns * klow, patterns * khigh).sum(axis=1), l2cap).astype(np.int64)
    t_values = achievable_norms(np.full(C.size, klow), np.full(C.size, khigh), tmax)

    prog_rows = _constraint_rows(patterns, cmin, cmax, t_values, klow, khigh)
    n_cols = int(C.size * (khigh - klow + 1) + (cmax - cmin + 1).sum() + t_values.size)
    if n_cols > declared.columns:  # cannot happen: the declared bound holds for every dataset
        raise AssertionError("the grouped MIP exceeds its declared size bound")
    size = GroupedSize(points=int(points.shape[0]), groups=int(patterns.shape[0]), rows=int(urows.shape[0]),
                       columns=n_cols, constraints=int(prog_rows.rhs.size))
    return GroupedProgram(
        problem=problem, enumerated=S, grouped=C, points=points,
        row_s=urows[:, 1: 1 + S.size].astype(np.int64), row_group=urows[:, 0].astype(np.int64),
        row_positive=urows[:, -1] > 0, row_weight=rweight,
        patterns=patterns, pattern_gcd=pattern_gcd, cmin=cmin, cmax=cmax, tmax=tmax, t_values=t_values,
        scale=int(s), resolution=loss_resolution(np.asarray(loss.weights, dtype=np.float64)), rows=prog_rows, size=size,
    )


def _split(problem: DiscreteProblem, enumerate: str | Sequence[int], d: int) -> np.ndarray:
    if isinstance(enumerate, str):
        if enumerate != "auto":
            raise ModelError(f"enumerate must be 'auto' or a list of column indices, got {enumerate!r}")
        return auto_split(problem.loss.data.schema)  # type: ignore[arg-type]
    try:
        S = np.unique(np.asarray(list(enumerate), dtype=np.int64))
    except (TypeError, ValueError):
        raise ModelError("enumerate must be 'auto' or a list of column indices") from None
    if S.size and (S.min() < 0 or S.max() >= d):
        raise ModelError(f"enumerate names a column outside 0..{d - 1}")
    return S


def _enumerated_points(size: int, klow: int, khigh: int, tmax: int) -> np.ndarray:
    count = (khigh - klow + 1) ** size
    if count > MAX_POINTS * 16:
        raise ModelError(f"enumerating {size} columns gives more than {MAX_POINTS} grid points; "
                         "enumerate fewer columns (option 'enumerate') or use solver 'highs'")
    pts = np.array(list(itertools.product(range(klow, khigh + 1), repeat=size)), dtype=np.int64)
    pts = pts.reshape(max(pts.shape[0], 1) if size == 0 else -1, size)
    pts = pts[(pts * pts).sum(axis=1) <= tmax]
    if pts.shape[0] > MAX_POINTS:
        raise ModelError(f"the enumerated columns have more than {MAX_POINTS} grid points in the ℓ2 ball; "
                         "enumerate fewer columns (option 'enumerate') or use solver 'highs'")
    if pts.shape[0] == 0:
        raise ModelError("the grid has no point inside the ℓ2 bound")
    return pts


def _constraint_rows(patterns: np.ndarray, cmin: np.ndarray, cmax: np.ndarray, t_values: np.ndarray,
                     klow: int, khigh: int) -> SparseRows:
    """The equality rows of the per-point MIP (see the module docstring)."""
    n_c = patterns.shape[1]
    lev = np.arange(klow, khigh + 1, dtype=np.float64)
    m = lev.size
    n_u = n_c * m
    v_start = n_u + np.concatenate([[0], np.cumsum(cmax - cmin + 1)])
    z_start = int(v_start[-1])
    index: list[np.ndarray] = []
    value: list[np.ndarray] = []
    rhs: list[float] = []

    def add(idx: np.ndarray, val: np.ndarray, b: float) -> None:
        index.append(np.asarray(idx, dtype=np.int32))
        value.append(np.asarray(val, dtype=np.float64))
        rhs.append(b)

    for j in range(n_c):  # one level per grouped coordinate
        add(np.arange(j * m, (j + 1) * m), np.ones(m), 1.0)
    for p in range(patterns.shape[0]):
        cols = np.arange(v_start[p], v_start[p + 1])
        cs = np.arange(cmin[p], cmax[p] + 1, dtype=np.float64)
        add(cols, np.ones(cols.size), 1.0)  # one score per group
        nz = np.flatnonzero(patterns[p])
        ucols = (nz[:, None] * m + np.arange(m)[None, :]).reshape(-1)
        uval = (-patterns[p, nz][:, None] * lev[None, :]).reshape(-1)
        add(np.concatenate([cols, ucols]), np.concatenate([cs, uval]), 0.0)  # c_p = ⟨P_p, k_C⟩
    zcols = np.arange(z_start, z_start + t_values.size)
    add(zcols, np.ones(zcols.size), 1.0)
    add(np.concatenate([zcols, np.arange(n_u)]),
        np.concatenate([t_values.astype(np.float64), -np.tile(lev * lev, n_c)]), 0.0)  # ‖k_C‖² = Σ t z_t
    starts = np.concatenate([[0], np.cumsum([i.size for i in index])]).astype(np.int32)
    return SparseRows(starts=starts, index=np.concatenate(index), value=np.concatenate(value),
                      rhs=np.asarray(rhs, dtype=np.float64))
