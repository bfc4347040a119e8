"""Discrete decision domains beyond the box grid: binary and one-of-m choices, cardinality, side constraints.

A :class:`DiscreteDomain` is the finite set

    W = {w = τk : k ∈ ℤ^d,  lo_j ≤ k_j ≤ hi_j,  ‖w‖₂ ≤ D,  m₋ ≤ #{j : k_j ≠ 0} ≤ m₊,
         A_ub w ≤ b_ub,  A_eq w = b_eq}

with every piece a public declaration.  It offers what the oracle-efficient mechanisms read
from :class:`~dpopt.modeling.domains.IntegerGrid` (NRVW19 Sec. 3): the separation τ (distinct
points differ by at least τ in some coordinate), the ℓ2 radius D of the normalization π (the
declared ``l2_bound``, else the radius the declaration implies: τ·√(sum of the m₊ largest
max(lo_j², hi_j²))), membership in exact integer arithmetic, enumeration for brute force and the
exponential mechanism, and the coordinate ranges the MIP compilers declare.

Side constraints are given in w's units, like scipy's ``linprog`` (``A_ub @ w <= b_ub``).  Floats
are dyadic rationals, so each row is scaled once, exactly, to integer coefficients in k
(:func:`integer_rows`); membership and every compiled model use those integers, so no solver
tolerance can admit a point the declaration excludes.  Nothing here reads data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dpopt.errors import ModelError

#: largest |integer coefficient| a scaled side constraint may have (exact in float64 MIP models)
MAX_SIDE_COEFFICIENT = 10**12


@dataclass(frozen=True)
class SideRows:
    """Integer side constraints on k: ``A k ≤ b`` (``equal`` False) or ``A k = b`` (True)."""

    A: tuple[tuple[int, ...], ...]
    b: tuple[int, ...]
    equal: bool

    def holds(self, K: np.ndarray) -> np.ndarray:
        """Whether each row k of ``K`` satisfies the constraints (exact: Python integers)."""
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        if not self.A:
            return np.ones(K.shape[0], dtype=bool)
        A = np.array(self.A, dtype=object)
        lhs = K.astype(object) @ A.T
        b = np.array(self.b, dtype=object)
        ok = (lhs == b) if self.equal else (lhs <= b)
        return np.asarray(np.asarray(ok, dtype=bool).all(axis=1))


def integer_rows(A: object, b: object, step: float, dim: int, *, equal: bool, name: str) -> SideRows:
    """``A w ≤ b`` (or ``=``) in w's units as exact integer rows on k (w = τk).

    Each row (a·τ, b) is multiplied by the least common multiple of its denominators (floats
    are dyadic, so this is exact); for ``≤`` the right-hand side is then rounded down, which
    is exact on integer k.  An equality whose scaled right-hand side is not an integer has
    no integer solution and is refused (the domain would be empty).
    """
    if not all(isinstance(v, (list, tuple, np.ndarray, int, float, np.number)) for v in (A, b)):
        raise ModelError(f"{name} must be public arrays of numbers (a side constraint may not read data), "
                         f"got {type(A).__name__}")
    Am = np.atleast_2d(np.asarray(A, dtype=np.float64))
    bv = np.atleast_1d(np.asarray(b, dtype=np.float64)).reshape(-1)
    if Am.shape != (bv.shape[0], dim) or not (np.all(np.isfinite(Am)) and np.all(np.isfinite(bv))):
        raise ModelError(f"{name} must be finite with shape (r, {dim}) and its right-hand side length r")
    tau = Fraction(step)
    rows, rhs = [], []
    for a_row, b_i in zip(Am, bv, strict=True):
        coefs = [Fraction(float(v)) * tau for v in a_row]
        rhs_f = Fraction(float(b_i))
        den = math.lcm(*(c.denominator for c in coefs), rhs_f.denominator)
        ints = [int(c * den) for c in coefs]
        scaled = rhs_f * den
        if max((abs(v) for v in ints), default=0) > MAX_SIDE_COEFFICIENT:
            raise ModelError(f"{name} has coefficients too fine for exact integer scaling; round them "
                             "(e.g. to multiples of 1/1024)")
        g = math.gcd(*ints)
        if equal and (scaled.denominator != 1 or (g and int(scaled) % g) or (not g and scaled != 0)):
            raise ModelError(f"{name}: an equality has no solution on the grid (right-hand side off the lattice)")
        rows.append(tuple(ints))
        rhs.append(math.floor(scaled))
    return SideRows(tuple(rows), tuple(rhs), equal)


def _bounds(value: float | Sequence[float], dim: int, step: float, name: str, *, up: bool) -> tuple[int, ...]:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (dim,))
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"DiscreteDomain {name} must be finite (a bounded domain)")
    k = arr / step
    out = np.floor(k + 1e-12) if up else np.ceil(k - 1e-12)
    return tuple(int(v) for v in out)


@dataclass(frozen=True, eq=False)
class DiscreteDomain:
    """A finite decision set on a τ-grid with public side constraints (module docstring).

    Parameters
    ----------
    dim : int
        d, the length of w.
    low, high : float or sequence of float
        Per-coordinate bounds in w's units (a scalar applies to every coordinate), rounded
        inwards to multiples of ``step``.
    step : float
        τ > 0, the grid step and the separation of the domain.
    l2_bound : float, optional
        D, a declared bound on ‖w‖₂ (a constraint); default the radius the declaration implies.
    max_nonzero, min_nonzero : int, optional
        Cardinality: at most / at least this many coordinates with k_j ≠ 0.
    A_ub, b_ub, A_eq, b_eq : array_like, optional
        Public linear side constraints ``A_ub @ w <= b_ub`` and ``A_eq @ w == b_eq``.

    Raises
    ------
    ModelError
        On a malformed declaration, an unbounded or empty box, or impossible cardinality.
    """

    dim: int
    low: float | Sequence[float]
    high: float | Sequence[float]
    step: float = 1.0
    l2_bound: float | None = None
    max_nonzero: int | None = None
    min_nonzero: int | None = None
    A_ub: object = None
    b_ub: object = None
    A_eq: object = None
    b_eq: object = None
    lows: tuple[int, ...] = field(init=False)
    highs: tuple[int, ...] = field(init=False)
    side: tuple[SideRows, ...] = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 1:
            raise ModelError(f"DiscreteDomain dim must be a positive integer, got {self.dim!r}")
        if isinstance(self.step, bool) or not isinstance(self.step, (int, float)) or not (
                math.isfinite(self.step) and self.step > 0):
            raise ModelError("DiscreteDomain step τ must be a positive finite number")
        lows = _bounds(self.low, self.dim, self.step, "low", up=False)
        highs = _bounds(self.high, self.dim, self.step, "high", up=True)
        if any(lo > hi for lo, hi in zip(lows, highs, strict=True)):
            raise ModelError("DiscreteDomain has a coordinate with no grid point between low and high")
        object.__setattr__(self, "lows", lows)
        object.__setattr__(self, "highs", highs)
        if self.l2_bound is not None and not (isinstance(self.l2_bound, (int, float))
                                              and math.isfinite(self.l2_bound) and self.l2_bound > 0):
            raise ModelError("DiscreteDomain l2_bound must be positive and finite")
        for name in ("max_nonzero", "min_nonzero"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= self.dim):
                raise ModelError(f"DiscreteDomain {name} must be an integer in [0, {self.dim}], got {v!r}")
        if (self.max_nonzero is not None and self.min_nonzero is not None
                and self.min_nonzero > self.max_nonzero):
            raise ModelError("DiscreteDomain min_nonzero exceeds max_nonzero: the domain is empty")
        side = []
        for A, b, equal, name in ((self.A_ub, self.b_ub, False, "A_ub"), (self.A_eq, self.b_eq, True, "A_eq")):
            if (A is None) != (b is None):
                raise ModelError(f"give {name} together with its right-hand side (b_{name[2:]})")
            if A is not None:
                side.append(integer_rows(A, b, float(self.step), self.dim, equal=equal, name=name))
        object.__setattr__(self, "side", tuple(side))

    # -- what the mechanisms and compilers read (the IntegerGrid interface) -------------------
    @property
    def klow(self) -> int:
        """The smallest level of any coordinate (the level table's first column)."""
        return min(self.lows)

    @property
    def khigh(self) -> int:
        """The largest level of any coordinate."""
        return max(self.highs)

    def levels(self) -> np.ndarray:
        """The values a coordinate can take at most (klow..khigh, times τ)."""
        return self.step * np.arange(self.klow, self.khigh + 1, dtype=np.float64)

    def _max_squares(self) -> np.ndarray:
        return np.array([max(lo * lo, hi * hi) for lo, hi in zip(self.lows, self.highs, strict=True)],
                        dtype=np.float64)

    def implied_radius(self) -> float:
        """τ·√(the sum of the m₊ largest max(lo_j², hi_j²)): a bound on ‖w‖₂ from the declaration."""
        sq = np.sort(self._max_squares())[::-1]
        top = sq if self.max_nonzero is None else sq[: self.max_nonzero]
        return float(self.step * math.sqrt(float(top.sum())))

    def bound(self, dim: int | None = None) -> float:
        """D: the declared ℓ2 bound, else :meth:`implied_radius` (never below τ, so π is defined)."""
        if dim is not None and dim != self.dim:
            raise ModelError(f"the domain has dimension {self.dim}, not {dim}")
        D = float(self.l2_bound) if self.l2_bound is not None else self.implied_radius()
        return max(D, float(self.step))

    def grid_indices(self, W: np.ndarray) -> np.ndarray:
        """k = rint(W/τ) (int64) for each row of ``W``."""
        return np.rint(np.atleast_2d(np.asarray(W, dtype=np.float64)) / self.step).astype(np.int64)

    def contains_indices(self, K: np.ndarray) -> np.ndarray:
        """Whether each integer row k of ``K`` lies in the domain (exact)."""
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        ok = np.all((K >= np.array(self.lows)) & (K <= np.array(self.highs)), axis=1)
        nz = np.count_nonzero(K, axis=1)
        if self.max_nonzero is not None:
            ok &= nz <= self.max_nonzero
        if self.min_nonzero is not None:
            ok &= nz >= self.min_nonzero
        if self.l2_bound is not None:
            D2 = float(self.l2_bound) ** 2
            ok &= (self.step**2) * np.einsum("ij,ij->i", K.astype(np.float64), K.astype(np.float64)) <= D2 * (1 + 1e-12)
        for rows in self.side:
            ok &= rows.holds(K)
        return ok

    def contains(self, w: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``w`` is a point of the domain (on the grid within ``tol`` steps)."""
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        if w.shape != (self.dim,):
            return False
        k = w / self.step
        if not np.all(np.abs(k - np.round(k)) <= tol):
            return False
        return bool(self.contains_indices(np.round(k).astype(np.int64)[None, :])[0])

    def box_count(self) -> int:
        """Points of the box (or of the cardinality-limited box, for 0/1 coordinates): an upper bound on |W|."""
        sizes = [hi - lo + 1 for lo, hi in zip(self.lows, self.highs, strict=True)]
        box = math.prod(sizes)
        if self.max_nonzero is not None and all(lo <= 0 <= hi for lo, hi in zip(self.lows, self.highs, strict=True)):
            # at most m₊ nonzero coordinates, each with (size − 1) nonzero values: a bound by the largest size
            big = max(sizes) - 1
            return min(box, sum(math.comb(self.dim, r) * big**r for r in range(self.max_nonzero + 1)))
        return box

    def _candidates(self) -> Iterator[tuple[int, ...]]:
        if self.max_nonzero is not None and all(lo <= 0 <= hi for lo, hi in zip(self.lows, self.highs, strict=True)):
            for r in range(self.max_nonzero + 1):
                for support in itertools.combinations(range(self.dim), r):
                    ranges = [[v for v in range(self.lows[j], self.highs[j] + 1) if v != 0] for j in support]
                    for values in itertools.product(*ranges):
                        k = [0] * self.dim
                        for j, v in zip(support, values, strict=True):
                            k[j] = v
                        yield tuple(k)
            return
        yield from itertools.product(*(range(lo, hi + 1) for lo, hi in zip(self.lows, self.highs, strict=True)))

    def enumerate_indices(self, max_count: int = 2_000_000) -> np.ndarray:
        """Every integer point k of the domain (rows), in a fixed order that reads no data."""
        count = self.box_count()
        if count > max_count:
            raise ModelError(f"the domain has up to {count} points, more than {max_count}: too many to enumerate")
        K = np.array(list(self._candidates()), dtype=np.int64).reshape(-1, self.dim)
        K = K[self.contains_indices(K)]
        if K.shape[0] == 0:
            raise ModelError("the discrete domain is empty: no grid point satisfies its constraints")
        return K

    def enumerate(self, dim: int | None = None, max_count: int = 2_000_000) -> np.ndarray:
        """Every point w = τk of the domain (rows)."""
        if dim is not None and dim != self.dim:
            raise ModelError(f"the domain has dimension {self.dim}, not {dim}")
        return self.step * self.enumerate_indices(max_count).astype(np.float64)

    def normalize(self, w: np.ndarray) -> np.ndarray:
        """π(w) = (w, √(D² − ‖w‖²)) / D ∈ S^d (NRVW19 Sec. 3)."""
        w = np.asarray(w, dtype=np.float64)
        D = self.bound()
        last = np.sqrt(np.maximum(D * D - np.sum(w * w, axis=-1), 0.0))
        return np.concatenate([w, last[..., None]], axis=-1) / D

    def max_ones(self) -> int:
        """The most coordinates that can be nonzero (m₊ or d): bounds a lookup's row sum."""
        return self.dim if self.max_nonzero is None else int(self.max_nonzero)

    @property
    def binary(self) -> bool:
        """Whether every coordinate is a 0/1 choice (τ = 1, k_j ∈ {0, 1})."""
        return self.step == 1 and all(lo == 0 for lo in self.lows) and all(hi == 1 for hi in self.highs)

    def summary(self) -> str:
        parts = [f"d={self.dim}, τ={self.step:g}, k ∈ [{self.klow}, {self.khigh}]"]
        if self.max_nonzero is not None or self.min_nonzero is not None:
            parts.append(f"nonzeros in [{self.min_nonzero or 0}, {self.max_nonzero if self.max_nonzero is not None else self.dim}]")
        if self.side:
            parts.append(f"{sum(len(s.A) for s in self.side)} side constraints")
        return f"DiscreteDomain({', '.join(parts)}, D={self.bound():.4g})"


def BinaryChoice(m: int, *, at_most: int | None = None, exactly: int | None = None,  # noqa: N802
                 at_least: int | None = None, A_ub: object = None, b_ub: object = None) -> DiscreteDomain:
    """w ∈ {0, 1}^m with at most / exactly / at least that many ones (which sites to open, which features to keep)."""
    if exactly is not None and (at_most is not None or at_least is not None):
        raise ModelError("give exactly= alone, or at_most=/at_least=")
    hi = exactly if exactly is not None else at_most
    lo = exactly if exactly is not None else at_least
    return DiscreteDomain(m, 0.0, 1.0, 1.0, max_nonzero=hi, min_nonzero=lo, A_ub=A_ub, b_ub=b_ub)


def OneOf(m: int) -> DiscreteDomain:  # noqa: N802
    """w ∈ {e_1, …, e_m}: exactly one of m options (a price from a grid, a single site)."""
    return BinaryChoice(m, exactly=1)
