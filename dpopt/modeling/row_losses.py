"""Bounded per-row losses over a discrete decision: the algebra OPDisc, OPSamp, RSPM and the exponential mechanism take.

NRVW19's OPDisc needs only that each row's loss lies in a known range [0, B] and that the
domain is τ-separated (Sec. 3: G = B/τ); RSPM needs the range; OPSamp a Lipschitz constant on the
grid; the exponential mechanism the range.  Every loss here states B from its declaration alone
(never from data), and evaluates the total Σ_i ℓ_i(w) *exactly*: each atom's row value is an
integer number of its public ``unit`` (a rational), so totals are exact rationals
(:meth:`RowLoss.exact_value`), independent of every solver; every certificate is re-checked with
them.

Atoms (a row's data enter only through the Dataset's declared, mapped columns):

* :class:`ScoreIndicator` — 1[s_i(w) ≤ t] (or ≥ t), s_i(w) = ⟨x_i, w⟩, times y_i when ``signed``:
  the 0/1 loss of a linear classifier is ``ScoreIndicator(data, w, domain)`` (NRVW19 Sec. 5); needs a
  Schema so the score is an exact integer (docs/design.md, "Schema").
* :class:`Ramp` — 1 when s_i(w) ≤ low, 0 when s_i(w) ≥ high, linear between: a clipped, bounded
  surrogate of the 0/1 loss.
* :class:`CappedMin` — min(cap, min over *chosen* options j of cost_j(x_i)): facility location,
  nearest chosen prototype (binary decisions).
* :class:`Lookup` — Σ_j T_j(x_i) w_j with T_j ∈ [0, bound]: linear in a binary or one-of-m
  decision (posted prices, assortments).

Non-negative scalings and sums (``2 * a + b``) are losses too; B adds up.  A cost or table
function is called on one row at a time (a 1-D array of that row's mapped values), so a row's
loss cannot depend on another row; its output is clipped to the declared range and rounded to
the atom's public resolution.  It is tried once on a row of zeros when the loss is declared (a
function that fails there is refused before any budget is spent); on the data, a failure, a
wrong shape or a non-finite value is mapped to the bound, never raised.  Rows with identical
data are grouped (their counts become weights) for evaluation and for every compiled model.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.variable import Variable

Domain = IntegerGrid | DiscreteDomain
#: points evaluated at once by the exact evaluation (bounds its memory: points × groups integers)
CHUNK = 512
#: default resolution of a cost or table atom: the power of two 2^-16 times the bound's next power of two
DEFAULT_BITS = 16


def _fraction(value: float, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelError(f"{name} must be a finite number, got {value!r}")
    return Fraction(value)


def domain_bounds(domain: Domain, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-coordinate integer bounds (lo, hi) of k for either domain type."""
    if isinstance(domain, DiscreteDomain):
        return np.array(domain.lows, dtype=np.int64), np.array(domain.highs, dtype=np.int64)
    return (np.full(dim, domain.klow, dtype=np.int64), np.full(dim, domain.khigh, dtype=np.int64))


class RowLoss:
    """L(D, w) = Σ_terms c · Σ_i ℓ_i(w): a non-negative combination of bounded per-row atoms.

    Attributes read by the mechanisms: ``data``, ``variable``, ``domain``, ``value_bound`` (B, each
    row's total loss lies in [0, B]), ``lipschitz`` and ``lipschitz_l1`` (B/τ on the τ-separated
    domain, NRVW19 Sec. 3.1), ``declared`` (always True: B comes from the declaration).
    """

    name = "row-loss"
    #: what the labels mean to the loss: "none" (unused) or "classes" (±1, mapped row by row)
    label_domain = "none"

    def __init__(self, terms: tuple[tuple[Fraction, Atom], ...]) -> None:
        if not terms:
            raise ModelError("a loss needs at least one term")
        first = terms[0][1]
        for _, atom in terms:
            if atom.data is not first.data or atom.variable is not first.variable or atom.domain != first.domain:
                raise ModelError("terms of one loss must share the Dataset, the Variable and the domain")
        self.terms = terms
        self.data: Dataset = first.data
        self.variable: Variable = first.variable
        self.domain: Domain = first.domain

    # -- algebra -------------------------------------------------------------------------------
    def __add__(self, other: object) -> RowLoss:
        if not isinstance(other, RowLoss):
            return NotImplemented
        return RowLoss(self.terms + other.terms)

    def __mul__(self, scale: object) -> RowLoss:
        if isinstance(scale, bool) or not isinstance(scale, (int, float, Fraction)):
            return NotImplemented
        c = Fraction(scale) if isinstance(scale, Fraction) else _fraction(float(scale), "a loss's scale")
        if c < 0:
            raise ModelError("a loss may only be scaled by a non-negative number (the range [0, B] must stay bounded below)")
        return RowLoss(tuple((w * c, a) for w, a in self.terms))

    __rmul__ = __mul__

    # -- declared constants ------------------------------------------------------------------------
    @property
    def declared(self) -> bool:
        """Whether B comes from the declaration (always, for these losses)."""
        return True

    @property
    def exact_bound(self) -> Fraction:
        """B as a rational: Σ c · (the atom's row range)."""
        return sum((w * a.row_bound for w, a in self.terms), Fraction(0))

    @property
    def value_bound(self) -> float:
        """B: every row's loss lies in [0, B] (from the declaration)."""
        return float(self.exact_bound)

    @property
    def lipschitz(self) -> float:
        """G = B/τ: ℓ2-Lipschitz on the τ-separated domain (NRVW19 Sec. 3.1)."""
        return self.value_bound / float(self.domain.step)

    @property
    def lipschitz_l1(self) -> float:
        """B/τ is also a Lipschitz constant in ℓ1 (‖w − w'‖₁ ≥ τ for distinct points)."""
        return self.lipschitz

    # -- exact evaluation ----------------------------------------------------------------------------
    def grid_indices(self, W: np.ndarray) -> np.ndarray:
        return np.rint(np.atleast_2d(np.asarray(W, dtype=np.float64)) / float(self.domain.step)).astype(np.int64)

    def exact_totals(self, K: np.ndarray) -> list[Fraction]:
        """Σ_i ℓ_i at each integer row k of ``K`` (w = τk), exactly."""
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        out = [Fraction(0)] * K.shape[0]
        for weight, atom in self.terms:
            factor = weight * atom.unit
            if factor == 0:
                continue
            for start in range(0, K.shape[0], CHUNK):
                units = atom.total_units(K[start:start + CHUNK])
                for i, u in enumerate(units):
                    out[start + i] += factor * int(u)
        return out

    def exact_value(self, w: np.ndarray) -> Fraction:
        """L(D, w) as an exact rational (w read as the grid point τ·rint(w/τ))."""
        return self.exact_totals(self.grid_indices(np.asarray(w)[None, :]))[0]

    def values(self, W: np.ndarray) -> np.ndarray:
        """L(D, w) at each row of ``W`` (the exact totals, rounded once to float)."""
        return np.array([float(v) for v in self.exact_totals(self.grid_indices(W))], dtype=np.float64)

    def value(self, w: np.ndarray) -> float:
        return float(self.values(np.asarray(w)[None, :])[0])

    def declared_groups(self) -> int:
        """A public bound on the groups of identical rows the loss evaluates, summed over its atoms.

        Per atom: n, or fewer when the schema allows fewer distinct rows (``Schema.value_count``,
        times 2 for the labels of a signed score); never read from the data.
        """
        total = 0
        for _, atom in self.terms:
            n = int(atom.data.n)
            schema = atom.data.schema
            if schema is None:
                total += n
                continue
            rows = schema.value_count(range(atom.data.n_features)) * (2 if getattr(atom, "signed", False) else 1)
            total += min(n, rows)
        return total

    @property
    def public_lattice(self) -> bool:
        """Whether every atom's unit comes from the declaration (a weighted 0/1 loss's comes from its weights)."""
        return all(atom.public_unit for _, atom in self.terms)

    @property
    def resolution(self) -> Fraction:
        """A granularity of the total: two totals differ by 0 or by at least this."""
        fracs = [w * a.unit for w, a in self.terms if w * a.unit > 0]
        if not fracs:
            return Fraction(1)
        den = math.lcm(*(f.denominator for f in fracs))
        return Fraction(math.gcd(*(int(f * den) for f in fracs)), den)

    def summary(self) -> str:
        parts = [f"{float(w):g}·{a.describe()}" if w != 1 else a.describe() for w, a in self.terms]
        return " + ".join(parts)

    def __repr__(self) -> str:
        return f"RowLoss({self.summary()}, B={self.value_bound:g})"


class Atom(RowLoss):
    """One per-row loss: ``row_bound`` (its range), ``unit`` (value = unit × integer), grouped rows.

    Subclasses set ``row_bound`` and ``unit`` and implement :meth:`group_units` (the integer row
    values of each group at given points) and :meth:`encode` (its MIP constraints,
    :mod:`dpopt.compile.discrete_ir`).
    """

    row_bound: Fraction
    unit: Fraction
    #: whether ``unit`` is a function of the declaration alone (so a mechanism may read it before the charge)
    public_unit: bool = True

    def __init__(self, data: Dataset, variable: Variable, domain: Domain) -> None:
        if not isinstance(data, Dataset) or not isinstance(variable, Variable):
            raise ModelError(f"{type(self).__name__} needs a dpopt Dataset and Variable")
        if not isinstance(domain, (IntegerGrid, DiscreteDomain)):
            raise ModelError(f"{type(self).__name__} needs a discrete domain (dp.IntegerGrid or dp.DiscreteDomain), "
                             f"got {type(domain).__name__}")
        if isinstance(domain, DiscreteDomain) and domain.dim != variable.size:
            raise ModelError(f"the domain has dimension {domain.dim} but the variable has size {variable.size}")
        self.data, self.variable, self.domain = data, variable, domain
        self.terms = ((Fraction(1), self),)

    @property
    def dim(self) -> int:
        return self.variable.size

    def describe(self) -> str:
        return type(self).__name__

    # -- groups ------------------------------------------------------------------------------------
    def group_keys(self) -> np.ndarray:
        """The row data that determine ℓ_i (one row per data row); identical keys are grouped."""
        raise NotImplementedError

    @functools.cached_property
    def groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(unique keys, first row of each, count of each): rows with identical data."""
        keys = self.group_keys()
        uniq, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
        return uniq, first, counts.astype(np.int64)

    def group_units(self, K: np.ndarray) -> np.ndarray:
        """Integer value (in units) of each group at each point: shape (points, groups)."""
        raise NotImplementedError

    def total_units(self, K: np.ndarray) -> list[int]:
        """Σ_i ℓ_i / unit at each point (exact Python integers)."""
        U = self.group_units(K)
        counts = self.groups[2]
        if U.dtype == object or (U.size and int(np.abs(U).max()) * int(counts.sum()) >= 2**62):
            return [int(v) for v in (U.astype(object) @ counts.astype(object))]
        return [int(v) for v in (U.astype(np.int64) @ counts)]

    def encode(self, ir: Any) -> None:  # pragma: no cover - each atom implements it
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------------
# scores of a row: exact integers from the schema
# ---------------------------------------------------------------------------------------------------
class _ScoreAtom(Atom):
    """An atom of the row's score s_i(w) = ⟨x_i, w⟩ (× y_i when signed), exact on the schema's grid.

    With A = s·X (``Schema.to_integers``) and w = τk, s_i(w) = (τ/s)·⟨z_i, k⟩ with z_i = y_i A_i
    (signed) or A_i: an exact integer margin in units of τ/s.
    """

    label_domain = "classes"

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, *, signed: bool) -> None:
        super().__init__(data, variable, domain)
        if variable.size != data.n_features:
            raise ModelError(f"variable has size {variable.size} but the data has {data.n_features} features")
        if data.schema is None:
            raise ModelError(f"{type(self).__name__} needs data with a declared schema (Dataset(..., schema=...)) so "
                             "that scores are exact integers on the declared grid")
        self.signed = bool(signed)
        if self.signed:
            self.data = data = data.with_class_labels()  # labels mapped to ±1 row by row, never refused
        self.terms = ((Fraction(1), self),)

    @property
    def score_unit(self) -> Fraction:
        """τ/s: one integer margin step in the score's units."""
        assert self.data.schema is not None
        return Fraction(float(self.domain.step)) / int(self.data.schema.scale)

    def group_keys(self) -> np.ndarray:
        assert self.data.schema is not None
        A = self.data.schema.to_integers(self.data.X).astype(np.int64)
        if self.signed:
            A = A * np.where(self.data.y > 0, 1, -1).astype(np.int64)[:, None]
        return A

    def group_margins(self, K: np.ndarray) -> np.ndarray:
        """⟨z_g, k⟩ for each point and group (int64, or Python integers beyond 2⁶²)."""
        Z = self.groups[0]
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        bound = int(np.abs(Z).max(initial=0)) * int(np.abs(K).max(initial=0)) * Z.shape[1]
        if bound < 2**62:
            return K @ Z.T
        return K.astype(object) @ Z.T.astype(object)

    def threshold_units(self, t: Fraction) -> Fraction:
        """A score threshold t in margin units (t·s/τ), exact."""
        return t / self.score_unit


class ScoreIndicator(_ScoreAtom):
    """ℓ_i(w) = 1[s_i(w) ≤ t] (``sense="<="``) or 1[s_i(w) ≥ t] (``">="``), range [0, 1].

    ``ScoreIndicator(data, w, domain)`` with the defaults (signed, ≤ 0) is the 0/1 loss of a linear
    classifier, a point on the hyperplane counted as an error (NRVW19 Sec. 5).
    """

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, *, threshold: float = 0.0,
                 sense: Literal["<=", ">="] = "<=", signed: bool = True) -> None:
        super().__init__(data, variable, domain, signed=signed)
        if sense not in ("<=", ">="):
            raise ModelError(f"ScoreIndicator sense must be '<=' or '>=', got {sense!r}")
        self.sense = sense
        self.threshold = _fraction(threshold, "ScoreIndicator threshold")
        t = self.threshold_units(self.threshold)
        # on integer margins: m ≤ t ⟺ m ≤ ⌊t⌋;  m ≥ t ⟺ m ≥ ⌈t⌉
        self.cut = math.floor(t) if sense == "<=" else math.ceil(t)
        self.row_bound, self.unit = Fraction(1), Fraction(1)

    def describe(self) -> str:
        return f"ScoreIndicator({'y·' if self.signed else ''}⟨x, w⟩ {self.sense} {float(self.threshold):g})"

    def group_units(self, K: np.ndarray) -> np.ndarray:
        M = self.group_margins(K)
        hit = (M <= self.cut) if self.sense == "<=" else (M >= self.cut)
        return np.asarray(hit, dtype=np.int64)

    def encode(self, ir: Any) -> None:
        ir.indicator_atom(self)


class Ramp(_ScoreAtom):
    """ℓ_i(w) = clip((high − s_i(w)) / (high − low), 0, 1): 1 below ``low``, 0 above ``high``, range [0, 1]."""

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, *, low: float = -1.0,
                 high: float = 1.0, signed: bool = True) -> None:
        super().__init__(data, variable, domain, signed=signed)
        lo, hi = _fraction(low, "Ramp low"), _fraction(high, "Ramp high")
        if not lo < hi:
            raise ModelError("Ramp needs low < high")
        self.low, self.high = lo, hi
        a, b = self.threshold_units(lo), self.threshold_units(hi)
        q = math.lcm(a.denominator, b.denominator)
        self.q, self.qa, self.qb = q, int(a * q), int(b * q)
        self.span = self.qb - self.qa  # R: the loss is r/R with r = clip(qb − q·m, 0, R)
        self.row_bound, self.unit = Fraction(1), Fraction(1, self.span)

    def describe(self) -> str:
        return f"Ramp({'y·' if self.signed else ''}⟨x, w⟩ from {float(self.low):g} to {float(self.high):g})"

    def group_units(self, K: np.ndarray) -> np.ndarray:
        M = self.group_margins(K)
        R = np.clip(self.qb - self.q * M, 0, self.span) if M.dtype != object else np.vectorize(
            lambda m: min(max(self.qb - self.q * m, 0), self.span), otypes=[object])(M)
        return np.asarray(R)

    def encode(self, ir: Any) -> None:
        ir.ramp_atom(self)


# ---------------------------------------------------------------------------------------------------
# costs of a row per option: public functions of one row, clipped and rounded
# ---------------------------------------------------------------------------------------------------
class _CostAtom(Atom):
    """An atom whose row enters through public per-option costs c_j(x_i) ∈ [0, top], on a grid of ``resolution``."""

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, fn: Callable[[np.ndarray], Any],
                 top: float, resolution: float | None, what: str) -> None:
        super().__init__(data, variable, domain)
        if not callable(fn):
            raise ModelError(f"{type(self).__name__} needs a function of one row returning {variable.size} {what}")
        self.fn = fn
        self.top = _fraction(top, f"{type(self).__name__} bound")
        if self.top <= 0:
            raise ModelError(f"{type(self).__name__} bound must be positive")
        # a power of two by default, so integer and dyadic costs are kept exactly
        top_exp = math.ceil(math.log2(float(self.top)))
        res = Fraction(2) ** (top_exp - DEFAULT_BITS) if resolution is None else _fraction(resolution, "resolution")
        if res <= 0 or self.top / res > 2**40:
            raise ModelError("resolution must be positive and at least bound/2⁴⁰")
        self.resolution_step = res
        self.top_units = math.floor(self.top / res)
        self._probe()

    def _probe(self) -> None:
        """Call the function on a public row (zeros) when the loss is declared: a function that fails,
        or returns the wrong number of values, is refused now, before any budget is spent."""
        probe = np.zeros(self.data.n_features)
        try:
            out = np.asarray(self.fn(probe), dtype=np.float64).reshape(-1)
        except Exception as exc:  # noqa: BLE001 — any failure of the user's function on the probe row
            raise ModelError(f"{type(self).__name__}'s function failed on a row of zeros ({type(exc).__name__}); "
                             f"it must map any row of the declared columns to {self.dim} numbers") from None
        if out.shape != (self.dim,):
            raise ModelError(f"{type(self).__name__}'s function must return {self.dim} numbers per row, "
                             f"got {out.size} for a row of zeros")

    def _row_costs(self, row: np.ndarray) -> np.ndarray:
        """The function's values at one row, clipped to [0, bound]; a failure, a wrong shape or a
        non-finite value is mapped to the bound, never refused (it happens after the charge, and one
        row could trigger it)."""
        try:
            c = np.asarray(self.fn(row.copy()), dtype=np.float64).reshape(-1)
        except Exception:  # noqa: BLE001 — mapped, never raised (module docstring)
            c = np.full(self.dim, np.inf)
        if c.shape != (self.dim,):
            c = np.full(self.dim, np.inf)
        return np.clip(np.where(np.isfinite(c), c, float(self.top)), 0.0, float(self.top))

    def group_keys(self) -> np.ndarray:
        X = self.data.X
        return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)

    @functools.cached_property
    def cost_units(self) -> np.ndarray:
        """Integer costs (groups × options): each group's first row through ``fn``, clipped, rounded."""
        uniq, first, _ = self.groups
        X = self.group_keys()
        out = np.zeros((uniq.shape[0], self.dim), dtype=np.int64)
        res = float(self.resolution_step)
        for g, i in enumerate(first):
            out[g] = np.clip(np.rint(self._row_costs(X[i]) / res), 0, self.top_units).astype(np.int64)
        return out


class CappedMin(_CostAtom):
    """ℓ_i(w) = min(cap, min_{j : w_j = 1} cost_j(x_i)) over a binary decision; range [0, cap].

    Facility location: ``cost`` maps a client row to its distances to the m public sites.
    """

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, cost: Callable[[np.ndarray], Any], *,
                 cap: float, resolution: float | None = None) -> None:
        super().__init__(data, variable, domain, cost, cap, resolution, "costs")
        if not (isinstance(domain, DiscreteDomain) and domain.binary):
            raise ModelError("CappedMin needs a binary decision domain (dp.BinaryChoice or dp.OneOf)")
        self.row_bound, self.unit = self.top, self.resolution_step

    def describe(self) -> str:
        return f"CappedMin(cap={float(self.top):g})"

    def group_units(self, K: np.ndarray) -> np.ndarray:
        C = self.cost_units  # groups × m
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        big = np.where(K[:, None, :] > 0, C[None, :, :], self.top_units)  # points × groups × m
        return np.minimum(big.min(axis=2), self.top_units)

    def encode(self, ir: Any) -> None:
        ir.capped_min_atom(self)


class Lookup(_CostAtom):
    """ℓ_i(w) = Σ_j T_j(x_i) w_j with T_j ∈ [0, bound]: linear in a binary or one-of-m decision.

    Range [0, bound × (the most ones the domain allows)].  Posted price: w one-of-m prices,
    T_j(v) = p_max − p_j·1[v ≥ p_j] (revenue lost against the top price).
    """

    def __init__(self, data: Dataset, variable: Variable, domain: Domain, table: Callable[[np.ndarray], Any], *,
                 bound: float, resolution: float | None = None) -> None:
        super().__init__(data, variable, domain, table, bound, resolution, "table values")
        if not (isinstance(domain, DiscreteDomain) and domain.binary):
            raise ModelError("Lookup needs a binary decision domain (dp.BinaryChoice or dp.OneOf)")
        self.row_bound, self.unit = self.top * domain.max_ones(), self.resolution_step

    def describe(self) -> str:
        return f"Lookup(bound={float(self.top):g})"

    def group_units(self, K: np.ndarray) -> np.ndarray:
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        return K @ self.cost_units.T

    def encode(self, ir: Any) -> None:
        ir.lookup_atom(self)
