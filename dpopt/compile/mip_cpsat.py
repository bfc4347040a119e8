"""Compile a :class:`~dpopt.modeling.discrete.DiscreteProblem` into an OR-Tools CP-SAT model.

The problem is NRVW19's normalized oracle problem (App. D.2, eq. 16)::

    minimize_{w ∈ W_τ}  f(w) = Σ_i c_i 1[y_i⟨x_i, w⟩ ≤ 0] − Σ_j η_j w_j / D − η_{d+1} √(D² − ‖w‖²) / D

CP-SAT works on integers only, so every piece is made integral.

Variables
    ``k_j ∈ [klow, khigh]`` with ``w = τ k`` (the range is also clipped to ``|k_j| ≤ √S``,
    S below); ``q_j = k_j²`` through an element table; ``s = Σ_j q_j ∈ [0, S]`` where
    ``S = max{t ∈ ℤ : τ² t ≤ D²}`` (this *is* the ℓ2 bound ‖w‖ ≤ D, exactly, because
    ‖w‖² = τ² s with s an integer); one error boolean ``e_i`` per aggregated row.

Data (exact integer scaling, from the declaration)
    The one exact scaling of every MIP compiler, :func:`dpopt.compile.mip_pyomo.integer_rows`.
    The data carry a declared :class:`~dpopt.modeling.schema.Schema`, so A = s·X
    (``ZeroOneLoss.integer_rows``, s = ``schema.scale``) is an exact integer matrix, the
    same one every discrete backend uses.  The label is folded in (z_i = y_i a_i) and the
    row is divided by the gcd of its entries.  Then, for an integer k,
    ``y_i⟨x_i, w⟩ > 0 ⟺ ⟨z_i, k⟩ ≥ 1`` exactly (a margin of exactly zero is an error, as
    in :class:`~dpopt.modeling.zero_one.ZeroOneLoss`).  Identical z_i are merged (weights
    summed); that also merges rows that are positive multiples of each other.  Rows with
    z_i = 0 are errors for every w and become a constant.  No value is read to decide
    anything: the only refusal (int64 activity) compares the declared bounds
    |z_ij| ≤ ``schema.integer_bound(j)`` with the domain, before the data are read.  (The
    earlier per-row rational reading of the floats refused depending on one row's values:
    a data-dependent bit outside the noise.)

    The encoding of ``e_i`` is an enforced linear constraint, ``¬e_i ⇒ ⟨z_i, k⟩ ≥ 1``
    (``OnlyEnforceIf``); ``encoding="big-m"`` gives the linear form
    ``⟨z_i, k⟩ + M_i e_i ≥ 1`` with ``M_i = 1 + Σ_j |z_ij| max|k_j|`` instead.

Objective (rounded, with a proven error bound)
    With ``b_j = η_j τ / D`` and ``g(t) = −η_{d+1} √(max(D² − τ² t, 0)) / D`` (both signs of
    η_{d+1} are exact: g enters through an element table indexed by s, not through the
    convex relaxation λ² + ‖w‖² ≤ D² of the paper, which is exact only for η_{d+1} ≥ 0)::

        Q f(k) = Q c₀ + Σ_i Q c_i e_i − Σ_j Q b_j k_j + Q g(s)
        F(k)   =   C₀ + Σ_i C_i e_i  − Σ_j B_j k_j  + G[s]        (integers: C, B, G rounded)

    Q is a power of two (2³⁰ unless the objective's magnitude forces it lower to keep
    |F| ≤ 2⁵⁰).  For every grid point ``|F(k) − Q f(k)| ≤ E`` with

        E = Σ_i |C_i − Q c_i| + |C₀ − Q c₀| + Σ_j |B_j − Q b_j| max|k_j| + max_t |G[t] − Q g(t)|
            + Q |η_{d+1}| / D · (bound on √ discrepancy between τ² t and the float Σ (τ k_j)²;
                                   zero when τ is a power of two)
            + 2⁻⁴⁰ Q M      (floating-point safety; M bounds |f| over the domain)

    and the approximation of the rounded oracle alone is ``α = 2E / Q`` in objective units
    (``2E`` is the worst distortion between two points).  E = 0 when η = 0 and the weights
    are integers: then F = Q f exactly.

Other perturbation kinds (:meth:`DiscreteProblem.linear_terms`)
    OPSamp's linear −⟨σ, w⟩ has b_j = τσ_j and no table term (g ≡ 0); RSPM's separable
    separator weights T add one element table per coordinate, ``L_j[k_j − klow]`` with
    L_j = round(Q T_j), contributing Σ_j max_v |L_jv − Q T_jv| to E.

How the backend turns this into an *exact* oracle is described in
:mod:`dpopt.backends.cpsat` (the second phase uses :meth:`CpSatProgram.excluded_model`).
The base model (variables, data constraints, ℓ2 bound) is built once; a new η only changes
the objective and the table G, so each solve clones the base model (a protobuf copy,
measured to be far cheaper than rebuilding) and adds those two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dpopt.compile.mip_pyomo import IntegerRows, integer_rows
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.zero_one import ZeroOneLoss

__all__ = ["CpSatProgram", "IntegerRows", "RoundedObjective", "check_declared_activity", "compile_cpsat",
           "integer_rows"]

#: default objective scale Q (a power of two)
DEFAULT_SCALE = 2**30
#: bound on |F| over the domain, far inside int64 so CP-SAT's sums never overflow
MAX_SCALED_OBJECTIVE = 2**50
#: largest table s ↦ G[s] (S + 1 entries) this encoding builds
MAX_TABLE = 1_000_000
#: relative floating-point safety margin added to the rounding bound
FP_SAFETY = 2.0**-40
#: bound on Σ_j |z_ij| max|k_j| so that CP-SAT's linear sums stay inside int64
_MAX_ACTIVITY = 2**60

Encoding = Literal["indicator", "big-m"]


def check_declared_activity(loss: ZeroOneLoss, kmax: np.ndarray | None) -> None:
    """ModelError unless Σ_j β_j·max|k_j| < 2⁶⁰/4 for the declared bounds β_j = ``integer_bound(j)``.

    Reads the schema and the domain only, so it refuses always or never for them.
    """
    schema = loss.data.schema
    if schema is None:
        raise ModelError("CP-SAT needs data with a declared schema (Dataset(..., schema=...))")
    d = schema.n_features
    km = [1] * d if kmax is None else [max(int(v), 1) for v in np.asarray(kmax).reshape(-1)]
    if sum(int(b) * k for b, k in zip(schema.integer_bounds(), km, strict=True)) >= _MAX_ACTIVITY // 4:
        raise ModelError("the declared schema and domain allow integer margins too large for CP-SAT (int64); "
                         "declare coarser feature grids or use a smaller domain")


@dataclass(frozen=True)
class RoundedObjective:
    """The integer objective F for one η, and its proven distance to Q·f.

    Attributes
    ----------
    scale : int
        Q (a power of two).
    loss_coef : list of int
        C_i, one per aggregated row.
    constant : int
        C₀.
    k_coef : list of int
        −B_j: the coefficient of k_j in F.
    table : list of int
        G[t] for t = 0..S.
    level_tables : list of list of int
        For kind "levels": L_j[v − klow] ≈ Q T[j, v] for the model's k_j range (else empty).
    error : float
        E: |F(k) − Q f(k)| ≤ E for every grid point (integer units).
    """

    scale: int
    loss_coef: list[int]
    constant: int
    k_coef: list[int]
    table: list[int]
    error: float
    level_tables: list[list[int]] = field(default_factory=list)

    @property
    def alpha(self) -> float:
        """Approximation of the rounded oracle alone, 2E/Q, in objective units."""
        return 2.0 * self.error / self.scale


class CpSatProgram:
    """A DiscreteProblem compiled once into a CP-SAT base model.

    Use :meth:`rounded` for an η, then :meth:`minimize_model` / :meth:`excluded_model`
    for the models to solve, :meth:`k_of` to read a solution and :meth:`objective` for the
    exact objective of a grid point.
    """

    def __init__(self, problem: DiscreteProblem, *, encoding: Encoding = "indicator",
                 allow_approximation: float | None = None) -> None:
        from ortools.sat.python import cp_model

        if not isinstance(problem, DiscreteProblem):
            raise ModelError("the CP-SAT compiler takes a DiscreteProblem (0/1 loss over an IntegerGrid)")
        if encoding not in ("indicator", "big-m"):
            raise ModelError(f"unknown encoding {encoding!r}: use 'indicator' or 'big-m'")
        self.problem = problem
        self.encoding = encoding
        grid = problem.domain
        d = problem.dim
        self.d = d
        self.tau = float(grid.step)
        self.D = float(grid.bound(d))
        self.s_max = self._s_max()
        if self.s_max < 0:
            raise ModelError("the ℓ2 bound D is smaller than the grid step: W_τ is empty")
        if self.s_max + 1 > MAX_TABLE:
            raise ModelError(
                f"(D/τ)² = {self.s_max} is too large for the CP-SAT table encoding of √(D² − ‖w‖²) "
                f"(at most {MAX_TABLE - 1}); use a coarser step τ or a smaller l2_bound"
            )
        r = math.isqrt(self.s_max)
        self.klow = max(grid.klow, -r)
        self.khigh = min(grid.khigh, r)
        if self.klow > self.khigh:
            raise ModelError("no grid point satisfies the ℓ2 bound in every coordinate range")
        self.kmax = np.full(d, max(abs(self.klow), abs(self.khigh)), dtype=np.int64)
        check_declared_activity(problem.zero_one(), self.kmax)  # the declared int64 bound, before the data are read
        self.rows = integer_rows(problem.zero_one(), allow_approximation=allow_approximation)

        m = cp_model.CpModel()
        self.k = [m.new_int_var(self.klow, self.khigh, f"k{j}") for j in range(d)]
        squares = [v * v for v in range(self.klow, self.khigh + 1)]
        self.q = [m.new_int_var(min(squares), max(squares), f"q{j}") for j in range(d)]
        for kj, qj in zip(self.k, self.q, strict=True):
            m.add_element(kj - self.klow, squares, qj)
        self.s = m.new_int_var(0, self.s_max, "s")
        m.add(self.s == sum(self.q))
        Z = self.rows.Z
        self.e = [m.new_bool_var(f"e{i}") for i in range(Z.shape[0])]
        kmax = self.kmax
        # |⟨z, k⟩| ≤ ‖z‖₂ ‖k‖₂ ≤ ‖z‖₂ √S (Cauchy–Schwarz with the ℓ2 bound), rounded up safely
        cs_bound = [math.isqrt(int(v) * self.s_max) + 1 for v in (Z.astype(object) ** 2).sum(axis=1)] if Z.size else []
        for i in range(Z.shape[0]):
            nz = np.flatnonzero(Z[i])
            coefs = [int(v) for v in Z[i, nz]]
            expr = cp_model.LinearExpr.weighted_sum([self.k[j] for j in nz], coefs)
            if encoding == "indicator":
                m.add(expr >= 1).only_enforce_if(~self.e[i])
            else:
                big = 1 + min(int(np.abs(Z[i, nz]) @ kmax[nz]), cs_bound[i])
                m.add(expr + big * self.e[i] >= 1)
        self.base = m

    # ------------------------------------------------------------------ domain
    def _s_max(self) -> int:
        """Largest integer t with τ² t ≤ D² (the same float test as IntegerGrid.enumerate)."""
        tau2, lim = self.tau * self.tau, self.D * self.D * (1 + 1e-12)
        t = math.floor(lim / tau2)
        while t >= 0 and t * tau2 > lim:
            t -= 1
        while (t + 1) * tau2 <= lim:
            t += 1
        return t

    @property
    def n_rows(self) -> int:
        """Aggregated rows in the model."""
        return int(self.rows.Z.shape[0])

    # --------------------------------------------------------------- objective
    def _eta(self, eta: np.ndarray | None) -> np.ndarray:
        if eta is None:
            return np.zeros(self.problem.noise_size)
        return np.asarray(self.problem.with_eta(eta).eta)  # validates length and finiteness

    def rounded(self, eta: np.ndarray | None, *, scale: int | None = None) -> RoundedObjective:
        """The integer objective F for ``eta`` and its error bound E (module docstring)."""
        eta = self._eta(eta)
        c, a, table = self.problem.with_eta(eta).linear_terms()
        b = c * self.tau
        t = np.arange(self.s_max + 1, dtype=np.float64)
        g = -a * np.sqrt(np.maximum(self.D * self.D - self.tau * self.tau * t, 0.0)) / self.D
        lev = np.zeros((self.d, 0)) if table is None else table[:, self.klow - self.problem.domain.klow:
                                                                 self.khigh - self.problem.domain.klow + 1]
        w, c0 = self.rows.weights, self.rows.constant
        kmax = self.kmax.astype(np.float64)
        M = float(w.sum() + c0 + np.abs(b) @ kmax + np.abs(g).max() + np.abs(lev).max(axis=1, initial=0.0).sum())
        Q = DEFAULT_SCALE if scale is None else int(scale)
        if Q < 1 or Q & (Q - 1):
            raise ModelError("the objective scale Q must be a power of two")
        while Q > 1 and Q * M > MAX_SCALED_OBJECTIVE:
            Q //= 2
        if Q * M > MAX_SCALED_OBJECTIVE:
            raise ModelError("the objective is too large for CP-SAT's integer arithmetic; rescale the weights")
        Qw, Qc0, Qb, Qg, QL = Q * w, Q * c0, Q * b, Q * g, Q * lev  # exact: Q is a power of two
        C, C0, B, G, L = np.rint(Qw), float(np.rint(Qc0)), np.rint(Qb), np.rint(Qg), np.rint(QL)
        err = (np.abs(C - Qw).sum() + abs(C0 - Qc0) + np.abs(B - Qb) @ kmax + np.abs(G - Qg).max()
               + np.abs(L - QL).max(axis=1, initial=0.0).sum())
        err += Q * abs(a) / self.D * self._sqrt_discrepancy(t)
        exact_weights = bool(np.all(C == Qw) and C0 == Qc0)
        if not (exact_weights and not np.any(eta)):
            err += FP_SAFETY * Q * M
        return RoundedObjective(
            scale=Q,
            loss_coef=[int(v) for v in C],
            constant=int(C0),
            k_coef=[-int(v) for v in B],
            table=[int(v) for v in G],
            error=float(err),
            level_tables=[[int(v) for v in row] for row in L] if table is not None else [],
        )

    def _sqrt_discrepancy(self, t: np.ndarray) -> float:
        """Bound on |√(D² − τ²t) − √(D² − Σ_j (τk_j)²)| between the table (τ² t) and
        :meth:`IntegerGrid.normalize` (a float sum of squares) over points with Σ k_j² = t.

        Zero when τ is a power of two (every square and sum is exact in binary); otherwise
        the sums differ by at most ε = (2d + 8)·2⁻⁵³·(D² + τ² t), and |√a − √b| ≤
        min(√ε, ε/√a) with a the table's radicand: negligible except where D² − τ² t ≈ 0.
        """
        if math.frexp(self.tau)[0] == 0.5 and self.tau * self.tau * self.s_max < 2.0**52:
            return 0.0
        tau2, D2 = self.tau * self.tau, self.D * self.D
        eps = (2 * self.d + 8) * 2.0**-53 * (D2 + tau2 * t)
        a = np.maximum(D2 - tau2 * t, 0.0)
        with np.errstate(divide="ignore"):
            bound = np.minimum(np.sqrt(eps), np.where(a > 0, eps / np.sqrt(a), np.inf))
        return float(bound.max())

    def _with_objective_terms(self, ro: RoundedObjective) -> tuple[Any, Any]:
        from ortools.sat.python import cp_model

        m = self.base.clone()
        lam = m.new_int_var(min(ro.table), max(ro.table), "lam")
        m.add_element(m.get_int_var_from_proto_index(self.s.index), ro.table, lam)
        k = [m.get_int_var_from_proto_index(v.index) for v in self.k]
        e = [m.get_bool_var_from_proto_index(v.index) for v in self.e]
        expr = (cp_model.LinearExpr.weighted_sum(e, ro.loss_coef)
                + cp_model.LinearExpr.weighted_sum(k, ro.k_coef) + lam)
        for j, row in enumerate(ro.level_tables):  # kind "levels": Σ_j L_j[k_j − klow]
            lv = m.new_int_var(min(row), max(row), f"lev{j}")
            m.add_element(k[j] - self.klow, row, lv)
            expr = expr + lv
        return m, expr

    def minimize_model(self, ro: RoundedObjective) -> Any:
        """Base model + minimize F − C₀ (the constant is added back by the caller)."""
        m, expr = self._with_objective_terms(ro)
        m.minimize(expr)
        return m

    def excluded_model(self, ro: RoundedObjective, exclude: list[tuple[int, ...]]) -> Any:
        """Base model + minimize F − C₀ with the k-tuples in ``exclude`` forbidden.

        Phase 2 of the backend's certificate runs this with callbacks that stop as soon as
        the bound exceeds the threshold U or a solution reaches it.  (Measured on Adult,
        n = 100: adding ``F ≤ U`` as a constraint, with or without the objective, made
        CP-SAT 3–6× slower than phase 1; the plain objective with the forbidden tuple costs
        about as much as phase 1.)
        """
        m, expr = self._with_objective_terms(ro)
        m.minimize(expr)
        if exclude:
            k = [m.get_int_var_from_proto_index(v.index) for v in self.k]
            m.add_forbidden_assignments(k, [tuple(int(v) for v in t) for t in exclude])
        return m

    # ---------------------------------------------------------------- solutions
    def k_of(self, solver: Any) -> np.ndarray:
        """The integer vector k of the solver's current solution."""
        return np.array([solver.value(v) for v in self.k], dtype=np.int64)

    def w_of(self, k: np.ndarray) -> np.ndarray:
        """w = τ k."""
        return self.tau * np.asarray(k, dtype=np.float64)

    def objective(self, k: np.ndarray, eta: np.ndarray | None) -> float:
        """The exact objective f at integer ``k``: exact integer margins, the η terms as
        :meth:`DiscreteProblem.objectives` computes them."""
        eta = self._eta(eta)
        w = self.w_of(k)
        val = self.rows.loss(k)
        if np.any(eta):
            val += float(self.problem.with_eta(eta).perturbation_values(w[None, :])[0])
        return val


def compile_cpsat(problem: DiscreteProblem, *, encoding: Encoding = "indicator",
                  allow_approximation: float | None = None) -> CpSatProgram:
    """Compile ``problem`` once into a :class:`CpSatProgram` (see the module docstring)."""
    return CpSatProgram(problem, encoding=encoding, allow_approximation=allow_approximation)
