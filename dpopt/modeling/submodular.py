"""Non-decreasing submodular set functions and the norms they induce.

Kumar and Deisenroth (2019, Sec. 2, after Bach 2010/2013) regularize ERM with
the tight convex relaxation of a submodular support penalty ``F(Supp θ)``:

``Ω∞(θ) = f(|θ|)``
    with ``f`` the Lovász extension of a non-decreasing submodular F with
    F(∅) = 0 and positive singletons; Ω∞ is a norm and the support function of
    the symmetric submodular polyhedron (Eq. (5))
``|P|(F) = {s ∈ ℝ^p : |s|(A) ≤ F(A) ∀A ⊆ V}``
    the unit ball of the dual norm ``Ω*(s) = max_{A≠∅} |s|(A)/F(A)``.

This module holds the set-function protocol (:class:`SetFunction`), the
families users meet, the greedy algorithm (Lovász extension, linear
optimization over |P|(F) with signs), the dual norm, the vertices of |P|(F)
and its Gaussian width ``G_{|P|(F)} = E Ω∞(g)`` (the quantity of Thm. 1 and
Lemma 1).

Families
--------
:class:`Cardinality`           F(A) = |A|             → Ω∞ = ℓ1,   |P|(F) = ℓ∞ ball
:class:`Indicator`             F(A) = min(|A|, 1)     → Ω∞ = ℓ∞,   |P|(F) = ℓ1 ball
:class:`ConcaveCardinality`    F(A) = h(|A|), h concave → ordered weighted ℓ1 norm
:class:`GroupCoverage`         F(A) = Σ_G w_G 1[A ∩ G ≠ ∅] (groups may overlap)
                               → Ω∞(θ) = Σ_G w_G ‖θ_G‖∞
:class:`ChainCut`              the cut function of a chain made non-decreasing,
                               F(A) = η|A| + w (cut(A) + Σ_{i∈A} deg(i)); it
                               favours equal magnitudes of neighbours
:class:`CallableSetFunction`   any user function of a boolean mask (checked)

Everything here is public structure (never data) and uses numpy and scipy only.
The greedy algorithm costs one argsort plus the vectorised marginal gains of the
family: O(p log p) (O(p log p + Σ_G |G|) for coverage).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import GaussianWidth
from dpopt.modeling.gaussian_width import expected_max_abs_gaussian
from dpopt.modeling.structured_sets import LinearAnswer, minimize_linear

__all__ = [
    "CallableSetFunction",
    "Cardinality",
    "ChainCut",
    "ConcaveCardinality",
    "GroupCoverage",
    "Indicator",
    "SetFunction",
    "VertexBlocks",
    "check_submodular",
    "dual_norm",
    "dual_norm_argmax",
    "dual_norm_program",
    "greedy",
    "lovasz",
    "omega",
    "polyhedron_lmo",
    "vertex_blocks",
]

#: ground sets up to this size are checked exhaustively (2^p subsets) by :func:`check_submodular`
CHECK_MAX_P = 14
#: largest p for which vertex lists and dual norms are enumerated over all orders / subsets
ENUMERATE_MAX_P = 8


# ---------------------------------------------------------------------------
# The protocol
# ---------------------------------------------------------------------------


class SetFunction(ABC):
    """A non-decreasing submodular ``F : 2^V → ℝ`` with ``F(∅) = 0``, ``F({i}) > 0``.

    Subclasses implement :meth:`value_mask` and, where the family allows,
    override :meth:`gains` (the marginal gains along an order, vectorised) and
    the structural hooks (closed-form dual norm, Gaussian width, vertex blocks).
    """

    p: int

    @abstractmethod
    def value_mask(self, mask: np.ndarray) -> float:
        """``F(A)`` for ``A`` given as a boolean mask of shape (p,)."""

    def __call__(self, A: Iterable[int] | np.ndarray) -> float:
        """``F(A)`` for ``A`` given as indices or a boolean mask."""
        arr = np.asarray(list(A) if not isinstance(A, np.ndarray) else A)
        if arr.dtype == bool:
            if arr.shape != (self.p,):
                raise ModelError(f"a mask must have shape ({self.p},), got {arr.shape}")
            return float(self.value_mask(arr))
        mask = np.zeros(self.p, dtype=bool)
        if arr.size:
            idx = arr.astype(np.int64)
            if idx.min() < 0 or idx.max() >= self.p:
                raise ModelError(f"set elements must lie in [0, {self.p})")
            mask[idx] = True
        return float(self.value_mask(mask))

    def gains(self, order: np.ndarray) -> np.ndarray:
        """Marginal gains ``F(σ_1..σ_k) − F(σ_1..σ_{k−1})`` along a permutation σ (generic: p calls)."""
        mask = np.zeros(self.p, dtype=bool)
        out = np.empty(self.p)
        prev = 0.0
        for k, i in enumerate(order):
            mask[i] = True
            cur = float(self.value_mask(mask))
            out[k], prev = cur - prev, cur
        return out

    def singletons(self) -> np.ndarray:
        """``F({i})`` for every i."""
        eye = np.eye(self.p, dtype=bool)
        return np.array([self.value_mask(eye[i]) for i in range(self.p)])

    # -- structural hooks (None: no closed form) ------------------------------
    def _dual_norm(self, a: np.ndarray) -> float | None:
        """``max_A a(A)/F(A)`` for ``a ≥ 0`` in closed form, or None."""
        return None

    def _dual_argmax(self, a: np.ndarray) -> np.ndarray | None:
        """A maximiser θ ≥ 0 of ``⟨a, θ⟩`` over ``{Ω∞(θ) ≤ 1}`` in closed form, or None."""
        return None

    def _width(self) -> GaussianWidth | None:
        """``E f(|g|)`` in closed form / by quadrature, or None."""
        return None

    def _blocks(self) -> list[VertexBlocks] | None:
        """A decomposition of |P|(F) into a Minkowski sum of small vertex sets, or None."""
        return None

    def _l2_radius(self) -> float | None:
        """``max_{s∈|P|(F)} ‖s‖₂`` in closed form, or None."""
        return None

    def _is_cardinality_based(self) -> bool:
        return False

    def describe(self) -> str:
        """A one-line description (public structure only)."""
        return f"{type(self).__name__}(p={self.p})"

    def __repr__(self) -> str:
        return self.describe()


def _check_p(p: object) -> int:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ModelError(f"the ground set size p must be a positive integer, got {p!r}")
    return int(p)


def _positive(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise ModelError(f"{name} must be a positive finite number, got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ModelError(f"{name} must be a positive finite number, got {value!r}")
    return v


@dataclass(frozen=True)
class VertexBlocks:
    """One family of blocks of a Minkowski decomposition ``|P|(F) = Σ_j w_j conv(V) on idx_j``.

    Attributes
    ----------
    idx : ndarray, shape (m, k)
        Coordinates of each of the m blocks.
    V : ndarray, shape (c, k)
        The c template vertices shared by the blocks.
    weights : ndarray, shape (m,)
        Scale of each block.
    """

    idx: np.ndarray
    V: np.ndarray
    weights: np.ndarray

    @property
    def n_blocks(self) -> int:
        return int(self.idx.shape[0])


# ---------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------


def _ordered_l1_blocks(p: int) -> np.ndarray:
    eye = np.eye(p)
    return np.vstack([eye, -eye])


class Cardinality(SetFunction):
    """``F(A) = c·|A|``: Ω∞ = c‖·‖₁ and |P|(F) = c·[−1, 1]^p (a product of p segments)."""

    def __init__(self, p: int, weight: float = 1.0) -> None:
        self.p = _check_p(p)
        self.c = _positive(weight, "Cardinality weight")

    def value_mask(self, mask: np.ndarray) -> float:
        return self.c * float(np.count_nonzero(mask))

    def gains(self, order: np.ndarray) -> np.ndarray:
        return np.full(self.p, self.c)

    def _dual_norm(self, a: np.ndarray) -> float:
        return float(np.max(a)) / self.c

    def _dual_argmax(self, a: np.ndarray) -> np.ndarray:
        out = np.zeros(self.p)
        out[int(np.argmax(a))] = 1.0 / self.c
        return out

    def _width(self) -> GaussianWidth:
        v = self.c * self.p * math.sqrt(2.0 / math.pi)
        return GaussianWidth(v, v, v, "closed-form")

    def _blocks(self) -> list[VertexBlocks]:
        return [VertexBlocks(np.arange(self.p)[:, None], np.array([[1.0], [-1.0]]), np.full(self.p, self.c))]

    def _l2_radius(self) -> float:
        return self.c * math.sqrt(self.p)

    def _is_cardinality_based(self) -> bool:
        return True


class Indicator(SetFunction):
    """``F(A) = c·min(|A|, 1)``: Ω∞ = c‖·‖∞ and |P|(F) = c·(ℓ1 ball), 2p vertices."""

    def __init__(self, p: int, weight: float = 1.0) -> None:
        self.p = _check_p(p)
        self.c = _positive(weight, "Indicator weight")

    def value_mask(self, mask: np.ndarray) -> float:
        return self.c * float(bool(np.any(mask)))

    def gains(self, order: np.ndarray) -> np.ndarray:
        out = np.zeros(self.p)
        out[0] = self.c
        return out

    def _dual_norm(self, a: np.ndarray) -> float:
        return float(np.sum(a)) / self.c

    def _dual_argmax(self, a: np.ndarray) -> np.ndarray:
        return np.full(self.p, 1.0 / self.c)

    def _width(self) -> GaussianWidth:
        v, lo, hi = expected_max_abs_gaussian(self.p)
        return GaussianWidth(self.c * v, self.c * lo, self.c * hi, "quadrature")

    def _blocks(self) -> list[VertexBlocks]:
        return [VertexBlocks(np.arange(self.p)[None, :], _ordered_l1_blocks(self.p), np.array([self.c]))]

    def _l2_radius(self) -> float:
        return self.c

    def _is_cardinality_based(self) -> bool:
        return True


class ConcaveCardinality(SetFunction):
    """``F(A) = h(|A|)`` for a concave non-decreasing h with h(0) = 0 and h(1) > 0.

    Ω∞(θ) = Σ_k (h(k) − h(k−1)) |θ|_(k) (sorted decreasingly): an ordered
    weighted ℓ1 norm.  ``h`` is an array ``[h(0), …, h(p)]`` or a callable of k.
    """

    def __init__(self, p: int, h: Sequence[float] | np.ndarray | Callable[[int], float]) -> None:
        self.p = _check_p(p)
        values = np.array([h(k) for k in range(self.p + 1)] if callable(h) else h, dtype=np.float64)
        if values.shape != (self.p + 1,) or not np.all(np.isfinite(values)):
            raise ModelError(f"h must give p + 1 = {self.p + 1} finite values h(0), …, h(p)")
        if values[0] != 0.0 or values[1] <= 0.0:
            raise ModelError("h must satisfy h(0) = 0 and h(1) > 0")
        inc = np.diff(values)
        if np.any(inc < -1e-12) or np.any(np.diff(inc) > 1e-12):
            raise ModelError("h must be non-decreasing and concave (F(A) = h(|A|) is then submodular)")
        self.h = values
        self.inc = np.maximum(inc, 0.0)

    def value_mask(self, mask: np.ndarray) -> float:
        return float(self.h[int(np.count_nonzero(mask))])

    def gains(self, order: np.ndarray) -> np.ndarray:
        return self.inc.copy()

    def _dual_norm(self, a: np.ndarray) -> float:
        top = np.cumsum(np.sort(a)[::-1])
        return float(np.max(top / self.h[1:]))

    def _dual_argmax(self, a: np.ndarray) -> np.ndarray:
        order = np.argsort(-a, kind="stable")
        top = np.cumsum(a[order])
        k = int(np.argmax(top / self.h[1:])) + 1
        out = np.zeros(self.p)
        out[order[:k]] = 1.0 / self.h[k]
        return out

    def _l2_radius(self) -> float:
        return float(np.linalg.norm(self.inc))

    def _is_cardinality_based(self) -> bool:
        return True

    def describe(self) -> str:
        return f"ConcaveCardinality(p={self.p})"


def _parse_groups(groups: object, p: int) -> list[np.ndarray]:
    if not isinstance(groups, Sequence) or isinstance(groups, str) or len(groups) == 0:
        raise ModelError("groups must be a non-empty list of index lists")
    out = []
    for g in groups:
        idx = np.unique(np.asarray(g))
        if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
            raise ModelError("every group must be a non-empty list of integer indices")
        if idx.min() < 0 or idx.max() >= p:
            raise ModelError(f"group indices must lie in [0, {p})")
        out.append(idx.astype(np.int64))
    covered = np.zeros(p, dtype=bool)
    for g in out:
        covered[g] = True
    if not covered.all():
        raise ModelError(
            f"{int(np.count_nonzero(~covered))} coordinate(s) lie in no group, so F({{i}}) = 0 there and "
            "Ω∞ is not a norm; put every coordinate in some group (a singleton group is fine)"
        )
    return out


class GroupCoverage(SetFunction):
    """Weighted coverage ``F(A) = Σ_G w_G 1[A ∩ G ≠ ∅]``, groups may overlap.

    Its Lovász extension is ``f(w) = Σ_G w_G max_{i∈G} w_i`` (greedy: the first
    element of G in the order collects w_G), so ``Ω∞(θ) = Σ_G w_G ‖θ_G‖∞``, the
    ℓ1/ℓ∞ group norm (Bach 2010).  |P|(F) is the Minkowski sum of the scaled
    ℓ1 balls ``w_G · B₁(G)``, so linear optimization and the exponential
    mechanism over its vertices factorize over groups.

    Parameters
    ----------
    p : int
        Ground set size.
    groups : list of index lists
        Every coordinate must lie in at least one group.
    weights : array_like, optional
        Positive ``w_G`` (default 1; ``√|G|`` is a common choice).
    """

    def __init__(self, p: int, groups: Sequence[Sequence[int]], weights: Sequence[float] | None = None) -> None:
        self.p = _check_p(p)
        self.groups = _parse_groups(groups, self.p)
        w = np.ones(len(self.groups)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(self.groups),) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ModelError(f"weights must be {len(self.groups)} positive finite numbers, one per group")
        self.weights = w
        self._elem = np.concatenate(self.groups)
        self._gid = np.repeat(np.arange(len(self.groups)), [g.size for g in self.groups])
        self._starts = np.concatenate([[0], np.cumsum([g.size for g in self.groups])[:-1]])
        counts = np.bincount(self._elem, minlength=self.p)
        self.disjoint = bool(np.all(counts == 1))

    def value_mask(self, mask: np.ndarray) -> float:
        hit = np.maximum.reduceat(mask[self._elem].astype(np.int8), self._starts) > 0
        return float(self.weights @ hit)

    def gains(self, order: np.ndarray) -> np.ndarray:
        pos = np.empty(self.p, dtype=np.int64)
        pos[order] = np.arange(self.p)
        first_pos = np.minimum.reduceat(pos[self._elem], self._starts)  # when each group is first hit
        by_pos = np.bincount(first_pos, weights=self.weights, minlength=self.p)
        return by_pos[: self.p]

    def lovasz_abs(self, theta: np.ndarray) -> float:
        """``Σ_G w_G ‖θ_G‖∞`` directly (equals the greedy value)."""
        return float(self.weights @ np.maximum.reduceat(np.abs(theta)[self._elem], self._starts))

    def _dual_norm(self, a: np.ndarray) -> float | None:
        if self.disjoint:
            sums = np.add.reduceat(a[self._elem], self._starts)
            return float(np.max(sums / self.weights))
        return float(a @ self._coverage_lp(a))

    def _dual_argmax(self, a: np.ndarray) -> np.ndarray:
        if self.disjoint:
            sums = np.add.reduceat(a[self._elem], self._starts)
            k = int(np.argmax(sums / self.weights))
            out = np.zeros(self.p)
            out[self.groups[k]] = 1.0 / self.weights[k]
            return out
        return self._coverage_lp(a)

    def _coverage_lp(self, a: np.ndarray) -> np.ndarray:
        """``max a·θ s.t. θ ≥ 0, Σ_G w_G u_G ≤ 1, u_G ≥ θ_i (i ∈ G)`` with HiGHS (an exact LP)."""
        m, M = len(self.groups), self._elem.size
        c = np.concatenate([-a, np.zeros(m)])
        rows = np.concatenate([np.arange(M), np.arange(M), np.full(m, M)])
        cols = np.concatenate([self._elem, self.p + self._gid, self.p + np.arange(m)])
        vals = np.concatenate([np.ones(M), -np.ones(M), self.weights])
        from scipy.sparse import csr_matrix

        A = csr_matrix((vals, (rows, cols)), shape=(M + 1, self.p + m))
        b = np.concatenate([np.zeros(M), [1.0]])
        x = nonnegative_lp(c, A, b, "coverage dual-norm").x
        assert x is not None  # nonnegative_lp raised otherwise
        return np.maximum(np.asarray(x[: self.p]), 0.0)

    def _width(self) -> GaussianWidth:
        sizes, counts = np.unique([g.size for g in self.groups], return_counts=True)
        total = np.zeros(3)
        for k in sizes:
            wsum = float(self.weights[[g.size == k for g in self.groups]].sum())
            total += wsum * np.array(expected_max_abs_gaussian(int(k)))
        return GaussianWidth(float(total[0]), float(total[1]), float(total[2]), "quadrature")

    def _blocks(self) -> list[VertexBlocks]:
        out = []
        sizes = np.array([g.size for g in self.groups])
        for k in np.unique(sizes):
            sel = np.flatnonzero(sizes == k)
            idx = np.stack([self.groups[j] for j in sel])
            out.append(VertexBlocks(idx, _ordered_l1_blocks(int(k)), self.weights[sel]))
        return out

    def _l2_radius(self) -> float | None:
        if self.disjoint:
            return float(np.linalg.norm(self.weights))
        return None

    def describe(self) -> str:
        kind = "disjoint" if self.disjoint else "overlapping"
        return f"{type(self).__name__}(p={self.p}, {len(self.groups)} {kind} groups)"


class ChainCut(GroupCoverage):
    """The cut function of the chain 1–2–…–p made non-decreasing.

    ``F(A) = η|A| + w·(cut(A) + Σ_{i∈A} deg(i))`` with ``cut(A)`` the number of
    chain edges with one end in A.  The cut alone is submodular but not
    monotone (F(V) = 0); adding each vertex's degree makes every marginal gain
    non-negative, and F equals ``η|A| + 2w·#{edges touching A}``, a coverage
    function of the edges and singletons.  Hence::

        Ω∞(θ) = η‖θ‖₁ + 2w Σ_i max(|θ_i|, |θ_{i+1}|)
              = η‖θ‖₁ + w Σ_i (|θ_i| + |θ_{i+1}|) + w Σ_i ||θ_i| − |θ_{i+1}||,

    a total variation of the magnitudes that favours equal values of
    neighbours (Bach 2010, Sec. 3).

    Parameters
    ----------
    p : int
        Chain length (p ≥ 2).
    weight : float
        w > 0, the edge weight.
    eta : float
        η ≥ 0, the ℓ1 part (η > 0 keeps ℓ1-type sparsity inside runs).
    """

    def __init__(self, p: int, weight: float = 1.0, eta: float = 0.0) -> None:
        p = _check_p(p)
        if p < 2:
            raise ModelError("ChainCut needs p ≥ 2 (a chain with at least one edge)")
        w = _positive(weight, "ChainCut weight")
        if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not (math.isfinite(eta) and eta >= 0):
            raise ModelError(f"eta must be a finite number ≥ 0, got {eta!r}")
        groups: list[list[int]] = [[i, i + 1] for i in range(p - 1)]
        weights = [2.0 * w] * (p - 1)
        if eta > 0:
            groups += [[i] for i in range(p)]
            weights += [float(eta)] * p
        super().__init__(p, groups, weights)
        self.w, self.eta = w, float(eta)

    def describe(self) -> str:
        return f"ChainCut(p={self.p}, weight={self.w:g}, eta={self.eta:g})"


class CallableSetFunction(SetFunction):
    """A user-defined F given as a function of a boolean mask.

    It is checked at construction (exhaustively for p ≤ 14, see
    :func:`check_submodular`); larger ground sets are checked on ``n_checks``
    random chains and pairs, which can only refute, and must be declared
    ``trusted=True``.
    """

    def __init__(self, p: int, fn: Callable[[np.ndarray], float], *, name: str = "F",
                 trusted: bool = False, n_checks: int = 2000, seed: int = 0) -> None:
        self.p = _check_p(p)
        if not callable(fn):
            raise ModelError("fn must be a callable F(mask) -> float")
        self.fn = fn
        self.name = str(name)
        if self.p <= CHECK_MAX_P:
            check_submodular(self)
        elif not trusted:
            raise ModelError(
                f"a set function on p={self.p} > {CHECK_MAX_P} elements cannot be checked exhaustively; "
                "pass trusted=True after proving it non-decreasing and submodular (random checks still run)"
            )
        else:
            _random_checks(self, n_checks, seed)

    def value_mask(self, mask: np.ndarray) -> float:
        v = float(self.fn(mask.copy()))
        if not math.isfinite(v):
            raise ModelError(f"{self.name} returned a non-finite value")
        return v

    def describe(self) -> str:
        return f"CallableSetFunction({self.name}, p={self.p})"


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _all_values(F: SetFunction) -> np.ndarray:
    """``F`` on all 2^p masks, indexed by the bitmask integer."""
    p = F.p
    masks = ((np.arange(2**p)[:, None] >> np.arange(p)[None, :]) & 1).astype(bool)
    return np.array([F.value_mask(m) for m in masks])


def check_submodular(F: SetFunction, *, tol: float = 1e-9) -> None:
    """Refuse F unless F(∅) = 0, F({i}) > 0, F is non-decreasing and submodular.

    Exhaustive over all 2^p subsets (p ≤ 14): monotonicity as
    ``F(A ∪ {i}) ≥ F(A)`` and submodularity as diminishing returns
    ``F(A∪{i}) − F(A) ≥ F(A∪{i,j}) − F(A∪{j})`` for all A, i, j ∉ A (equivalent
    to Eq. (3)), with a relative tolerance.

    Raises
    ------
    ModelError
        Naming the property that fails and the size of a witness set (never values).
    """
    p = F.p
    if p > CHECK_MAX_P:
        raise ModelError(f"exhaustive checks need p ≤ {CHECK_MAX_P}, got p={p}")
    vals = _all_values(F)
    scale = tol * max(1.0, float(np.max(np.abs(vals))))
    if abs(vals[0]) > scale:
        raise ModelError("F(∅) must be 0")
    ids = np.arange(2**p)
    for i in range(p):
        if vals[1 << i] <= scale:
            raise ModelError(f"F({{{i}}}) must be positive (every singleton), otherwise Ω∞ is not a norm")
    for i in range(p):
        without = ids[(ids >> i) & 1 == 0]
        gain_i = vals[without | (1 << i)] - vals[without]
        if np.any(gain_i < -scale):
            k = int(without[int(np.argmin(gain_i))])
            raise ModelError(f"F is not non-decreasing: adding element {i} to a set of size {bin(k).count('1')} lowers it")
        for j in range(i + 1, p):
            base = without[(without >> j) & 1 == 0]
            drop = (vals[base | (1 << i)] - vals[base]) - (vals[base | (1 << i) | (1 << j)] - vals[base | (1 << j)])
            if np.any(drop < -scale):
                raise ModelError(
                    f"F is not submodular: the gain of element {i} grows when element {j} is added "
                    "(diminishing returns, Eq. (3), fails)"
                )


def _random_checks(F: SetFunction, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(max(1, n // F.p)):
        order = rng.permutation(F.p)
        g = F.gains(order)
        if g[0] <= 0 or np.any(g < -1e-9):
            raise ModelError("F fails a random check: a marginal gain along a chain is negative")
        a, b = rng.integers(0, 2, (2, F.p)).astype(bool)
        lhs = F.value_mask(a) + F.value_mask(b)
        if lhs < F.value_mask(a | b) + F.value_mask(a & b) - 1e-9 * max(1.0, abs(lhs)):
            raise ModelError("F fails a random check: F(A) + F(B) < F(A ∪ B) + F(A ∩ B) (not submodular)")


# ---------------------------------------------------------------------------
# Greedy algorithm, Lovász extension, Ω∞, LMO over |P|(F)
# ---------------------------------------------------------------------------


def _vector(x: object, p: int, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != (p,):
        raise ModelError(f"{name} must have shape ({p},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{name} contains NaN or inf entries")
    return arr


def greedy(F: SetFunction, w: np.ndarray) -> np.ndarray:
    """The greedy base ``s ∈ B(F)`` maximising ``⟨w, s⟩`` (Edmonds; Bach 2013, Prop. 3.2).

    Sort w decreasingly (stable argsort, O(p log p)) and give ``σ_k`` the gain
    ``F(σ_1..σ_k) − F(σ_1..σ_{k−1})``.
    """
    w = _vector(w, F.p, "w")
    order = np.argsort(-w, kind="stable")
    s = np.empty(F.p)
    s[order] = F.gains(order)
    return s


def lovasz(F: SetFunction, w: np.ndarray) -> float:
    """The Lovász extension ``f(w) = ⟨w, greedy(w)⟩`` (any real w)."""
    w = _vector(w, F.p, "w")
    return float(w @ greedy(F, w))


def omega(F: SetFunction, theta: np.ndarray) -> float:
    """``Ω∞(θ) = f(|θ|) = max_{s∈|P|(F)} ⟨s, θ⟩`` (Eq. (5))."""
    theta = _vector(theta, F.p, "theta")
    if isinstance(F, GroupCoverage):
        return F.lovasz_abs(theta)
    return lovasz(F, np.abs(theta))


def polyhedron_lmo(F: SetFunction, g: np.ndarray, *, maximize: bool = False) -> np.ndarray:
    """A vertex of |P|(F) minimising (or maximising) ``⟨s, g⟩``: ``∓sign(g) ⊙ greedy(|g|)``.

    ``max_{s∈|P|(F)} ⟨s, g⟩ = max_{u∈P₊(F)} ⟨u, |g|⟩ = f(|g|)``, attained by the
    (non-negative, since F is non-decreasing) greedy base of |g| with the signs of g.
    """
    g = _vector(g, F.p, "g")
    s = np.sign(g) * greedy(F, np.abs(g))
    return s if maximize else -s


# ---------------------------------------------------------------------------
# Dual norm
# ---------------------------------------------------------------------------


def nonnegative_lp(c: np.ndarray, A: Any, b: np.ndarray, what: str) -> LinearAnswer:
    """``min ⟨c, x⟩ s.t. A x ≤ b, x ≥ 0`` by :func:`~dpopt.modeling.structured_sets.minimize_linear`
    (HiGHS from :mod:`dpopt.backends.polytope_programs`)."""
    ans = minimize_linear(c, A, b, [(0.0, None)] * A.shape[1])
    if ans.status != "optimal" or ans.x is None:  # pragma: no cover - bounded and feasible by construction
        raise ModelError(f"the {what} LP did not solve ({ans.message})")
    return ans


def subset_masks(p: int) -> np.ndarray:
    return ((np.arange(1, 2**p)[:, None] >> np.arange(p)[None, :]) & 1).astype(bool)


@singledispatch
def dual_norm_program(F: SetFunction, a: np.ndarray) -> tuple[float, np.ndarray, bool]:
    """``(Ω*(a), θ, converged)`` for ``a ≥ 0`` beyond the closed forms and enumeration, by the
    algorithm registered for the set function's type.

    The modeling layer only names the question; a higher layer registers its algorithm with
    ``@dual_norm_program.register`` (:mod:`dpopt.numerics.submodular_lp` registers constraint
    generation over greedy vertices for every :class:`SetFunction`, imported with this module).

    Raises
    ------
    ModelError
        For a type no algorithm is registered for.
    """
    raise ModelError(f"no dual-norm program is registered for a {type(F).__name__}: register one with "
                     "@dpopt.modeling.submodular.dual_norm_program.register")


def dual_norm(F: SetFunction, s: np.ndarray) -> float:
    """``Ω*(s) = max_{A≠∅} |s|(A)/F(A)``: the gauge of |P|(F).

    Closed forms for the families; an exact LP for overlapping coverage;
    enumeration of all subsets for p ≤ 8; otherwise :func:`dual_norm_program` (the exact LP by
    constraint generation over greedy vertices, :func:`dpopt.numerics.submodular_lp.cutting_plane_dual`).
    """
    a = np.abs(_vector(s, F.p, "s"))
    closed = F._dual_norm(a)
    if closed is not None:
        return float(closed)
    if F.p <= ENUMERATE_MAX_P:
        masks = subset_masks(F.p)
        vals = np.array([F.value_mask(m) for m in masks])
        return float(np.max(masks.astype(float) @ a / vals))
    return dual_norm_program(F, a)[0]


def dual_norm_argmax(F: SetFunction, s: np.ndarray) -> np.ndarray:
    """A point θ with ``Ω∞(θ) ≤ 1`` and ``⟨s, θ⟩ = Ω*(s)`` (signs of s; zero where s is 0)."""
    s = _vector(s, F.p, "s")
    a = np.abs(s)
    theta = F._dual_argmax(a)
    if theta is None:
        if F.p <= ENUMERATE_MAX_P:
            masks = subset_masks(F.p)
            vals = np.array([F.value_mask(m) for m in masks])
            k = int(np.argmax(masks.astype(float) @ a / vals))
            theta = masks[k] / vals[k]
        else:
            theta = dual_norm_program(F, a)[1]
    sign = np.where(s >= 0, 1.0, -1.0)
    return sign * theta


# ---------------------------------------------------------------------------
# Vertices and decompositions of |P|(F)
# ---------------------------------------------------------------------------


def vertex_blocks(F: SetFunction) -> list[VertexBlocks] | None:
    """A Minkowski decomposition of |P|(F) into small vertex sets, or None.

    Cardinality: p segments; indicator: one ℓ1 ball (2p vertices); coverage
    and chain cut: one scaled ℓ1 ball per group.  Linear optimization and the
    exponential mechanism over the *product* of the block vertex sets factorize
    over blocks, and every sum of block vertices lies in |P|(F).
    """
    return F._blocks()


# ---------------------------------------------------------------------------
# Gaussian width of |P|(F)
# ---------------------------------------------------------------------------


