"""Exact aggregation of identical data rows into weights, and a cached GLM design.

Σ_i φ(⟨x_i, θ⟩, y_i) = Σ_k c_k φ(⟨x_k, θ⟩, y_k) exactly when the k-th distinct row
(x_k, y_k) occurs c_k times, so a solver may see fewer terms without changing the
objective.  :func:`glm_design` packs the (aggregated) rows with what a second-order
solver needs — a sparse copy for matrix-vector products when most entries are zero and
a float32 copy for Hessian *models* — and caches it per data array, so repeated private
runs on the same :class:`~dpopt.modeling.dataset.Dataset` do not redo the work.

Nothing here changes what is released: the design is an exact rewrite of the objective
(up to floating-point summation order) used by accelerators only; dpopt's certificate
(:func:`dpopt.numerics.certificates.certify`) always re-evaluates the problem on the original rows.
The choices below (aggregate or not, sparse or dense) read the data, but they only
change the accelerator's speed, never the certified answer or what an analyst observes
besides time.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["GLMDesign", "aggregate_rows", "glm_design"]

#: aggregate only when it removes at least this share of the rows (else keep them as they are)
MIN_SAVING = 0.2
#: keep a CSR copy for products when at most this share of the entries is non-zero
MAX_SPARSE_DENSITY = 0.25
_CACHE_SIZE = 4


def _row_keys(Z: np.ndarray) -> np.ndarray:
    """A 64-bit hash per row of the float64 matrix ``Z`` (equal rows, equal keys)."""
    bits = np.ascontiguousarray(Z + 0.0).view(np.uint64)  # + 0.0 maps −0.0 onto 0.0
    key = np.zeros(Z.shape[0], dtype=np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    for j in range(bits.shape[1]):  # polynomial hash, wrapping modulo 2^64
        key = key * mult + (bits[:, j] ^ (bits[:, j] >> np.uint64(29)))
    return key


def aggregate_rows(X: np.ndarray, y: np.ndarray, *, sort: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge identical (x, y) rows: returns (X_unique, y_unique, counts).

    Rows are grouped by a 64-bit hash and every row is then compared with its group's
    representative, so the grouping is exact; on a hash collision the exact (slower)
    ``np.unique(..., axis=0)`` is used instead.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Features.
    y : ndarray of shape (n,)
        Labels.
    sort : bool
        Return the distinct rows in lexicographic order of (x, y), as ``np.unique(axis=0)``
        does (interior-point solvers' iterates depend on the row order; keeping it fixed
        keeps their behaviour); ``False`` leaves them in hash order (faster).

    Returns
    -------
    tuple of ndarray
        The distinct rows (n_unique, d), their labels (n_unique,) and counts (float64,
        summing to n).
    """
    Z = np.column_stack([np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)]) + 0.0
    _, first, inverse, counts = np.unique(_row_keys(Z), return_index=True, return_inverse=True,
                                          return_counts=True)
    uniq = Z[first]
    if not np.array_equal(Z, uniq[inverse.ravel()]):  # a hash collision: fall back to the exact sort
        uniq, counts = np.unique(Z, axis=0, return_counts=True)
    elif sort:
        order = np.lexsort(uniq.T[::-1])  # the first column is the primary key
        uniq, counts = uniq[order], counts[order]
    return uniq[:, :-1], uniq[:, -1], counts.astype(np.float64)


@dataclass(frozen=True, eq=False)
class GLMDesign:
    """The rows of a GLM objective, possibly aggregated, ready for fast products.

    Attributes
    ----------
    X : ndarray of shape (m, d)
        Distinct rows (or all n rows when aggregation would save little), float64.
    y : ndarray of shape (m,)
        Their labels.
    counts : ndarray of shape (m,)
        Multiplicities (all ones without aggregation); they sum to n.
    sparse : scipy.sparse.csr_matrix or None
        A CSR copy of ``X`` when it is mostly zeros (used for X·θ and Xᵀ·r).
    """

    X: np.ndarray
    y: np.ndarray
    counts: np.ndarray
    sparse: sp.csr_matrix | None
    _X32: list[np.ndarray] = field(default_factory=list, repr=False)
    _memo: list[np.ndarray] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def n_rows(self) -> int:
        """m, the number of rows the solver sees."""
        return int(self.X.shape[0])

    def matvec(self, theta: np.ndarray) -> np.ndarray:
        """X·θ (float64)."""
        return np.asarray(self.X @ theta if self.sparse is None else self.sparse @ theta)

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Xᵀ·r (float64)."""
        return np.asarray(self.X.T @ r if self.sparse is None else self.sparse.T @ r)

    def gram_model(self, weights: np.ndarray) -> np.ndarray:
        """Xᵀ diag(weights) X accumulated in float32, returned as a new float64 array.

        For Newton *models* only: a relative error of order 1e-7 changes a Newton
        method's convergence speed, not the point it converges to, and no certificate
        reads it.  ``weights`` must be non-negative (negative entries are treated as 0).
        The last result is remembered: a GLM's Hessian at θ = 0 (every logistic weight is
        φ''(0) = 1/4) or a squared loss's constant Hessian is then computed once per data set.
        """
        with self._lock:
            if self._memo and np.array_equal(self._memo[0], weights):
                return self._memo[1].copy()
            if not self._X32:
                self._X32.append(np.ascontiguousarray(self.X, dtype=np.float32))
            X32 = self._X32[0]
        A = X32 * np.sqrt(np.maximum(weights, 0.0)).astype(np.float32)[:, None]
        H = np.asarray(A.T @ A, dtype=np.float64)  # numpy runs A.T @ A as one syrk
        with self._lock:
            self._memo[:] = [np.array(weights, dtype=np.float64), H]
        return H.copy()


_cache: dict[tuple[int, int], tuple[weakref.ref[np.ndarray], weakref.ref[np.ndarray], GLMDesign]] = {}
_cache_lock = threading.Lock()


def _build(X: np.ndarray, y: np.ndarray) -> GLMDesign:
    n = X.shape[0]
    Xu, yu, counts = aggregate_rows(X, y, sort=False)
    if Xu.shape[0] > (1.0 - MIN_SAVING) * n:
        Xu, yu, counts = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64), np.ones(n)
    Xu = np.ascontiguousarray(Xu)
    density = np.count_nonzero(Xu) / max(Xu.size, 1)
    sparse = sp.csr_matrix(Xu) if density <= MAX_SPARSE_DENSITY else None
    return GLMDesign(Xu, np.ascontiguousarray(yu), counts, sparse)


def glm_design(X: np.ndarray, y: np.ndarray) -> GLMDesign:
    """The (cached) :class:`GLMDesign` of the rows (X, y).

    Cached per array object (a :class:`~dpopt.modeling.dataset.Dataset` holds read-only
    arrays) for the last few data sets; an entry goes when its ``X`` is garbage collected.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Features.
    y : ndarray of shape (n,)
        Labels.
    """
    key = (id(X), id(y))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0]() is X and hit[1]() is y and not X.flags.writeable:
            return hit[2]
    design = _build(X, y)
    if X.flags.writeable or y.flags.writeable:  # a mutable array may change under the cache
        return design
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (weakref.ref(X), weakref.ref(y), design)
    weakref.finalize(X, _cache.pop, key, None)  # drop the entry with its data set (no lock: GC may run anywhere)
    return design
