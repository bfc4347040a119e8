"""Per-example gradient clipping to a declared Lipschitz constant, so that the calibrated
sensitivity holds at every iterate.

The noise of the gradient mechanisms (TTZ14 Alg. 1, Alg. 4, Alg. 5) is calibrated
to the sensitivity of the average gradient, ``Δ = 2L/n`` in the norm ‖·‖ the
mechanism uses, where ``L = sup ‖∇ℓ(θ; d)‖`` over θ ∈ C and every admissible row d
(:meth:`dpopt.modeling.losses.Loss.constants`).  That supremum is over C only: an
iterate θ ∉ C — a compiled mirror step or an LP-based LMO feasible only to solver
tolerance, or a bug — can give a per-example gradient longer than L (the squared
loss's gradient ``2(⟨x, θ⟩ − y)x`` grows with ‖θ‖), and then the noise no longer
covers the sensitivity.  The gradients here are clipped per example:

    ∇̃(θ; D) = (1/n) Σ_i clip_L(∇ℓ(θ; d_i)),   clip_L(g) = g · min(1, L/‖g‖),

so ‖clip_L(∇ℓ(θ; d))‖ ≤ L for every θ and row, and by the triangle inequality
``‖∇̃(θ; D) − ∇̃(θ; D')‖ ≤ 2L/n`` for replace-one neighbours *by construction*,
wherever θ is.  For θ ∈ C nothing is clipped (‖∇ℓ‖ ≤ L there), so the utility
analyses, which evaluate gradients at points of C, are unchanged.

For a generalized linear loss ``∇ℓ = φ'(⟨x, θ⟩, y) x``, so the per-example norm
is ``|φ'_i| ‖x_i‖`` and clipping rescales the scalar φ'_i: the clipped average
gradient costs one pass over X, as the plain one does.  The bound used is
``L (1 − 10⁻¹²)``, so the computed per-example norms stay ≤ L despite rounding
in the norms and products (the relative change is far below any solver tolerance).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpopt.errors import ModelError
from dpopt.modeling.losses import Loss

__all__ = ["ClippedGradient", "in_domain_ball", "row_norms"]

#: clip to L·(1 − _MARGIN) so rounding cannot push a computed per-example norm above L
_MARGIN = 1e-12
_ORDERS: dict[object, float] = {1: 1.0, 2: 2.0, "inf": math.inf, math.inf: math.inf}


def _order(norm: object) -> float:
    try:
        return _ORDERS[norm]
    except (KeyError, TypeError):
        raise ModelError(f"unknown norm {norm!r} for gradient clipping: use 1, 2 or 'inf'") from None


def row_norms(X: Any, norm: object) -> np.ndarray:
    """‖x_i‖ in the given norm (1, 2 or ``"inf"``) for every row of a dense or scipy-sparse X."""
    order = _order(norm)
    if sp.issparse(X):
        A = sp.csr_matrix(X)
        absval = abs(A)
        if order == 1.0:
            return np.asarray(absval.sum(axis=1)).ravel()
        if order == 2.0:
            return np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
        return np.asarray(absval.max(axis=1).toarray()).ravel()
    return np.linalg.norm(np.asarray(X, dtype=np.float64), ord=order, axis=1)


def in_domain_ball(theta: np.ndarray, loss: Loss, radius: dict[object, float] | None) -> bool:
    """Whether θ lies in the ball the loss constants were computed for.

    :meth:`Loss.constants` bounds the margin by ``|⟨x, θ⟩| ≤ x_bound · r_{q*}``
    with q the declared row norm and r_{q*} the domain radius in the dual norm;
    inside that ball every per-example gradient is within the declared constants,
    so clipping is a no-op there.  Reads θ (an already-private iterate) and
    public declarations only.
    """
    if radius is None:
        return False
    dual = {1.0: "inf", 2.0: 2, math.inf: 1}[loss.data.norm_order]
    return bool(np.linalg.norm(np.asarray(theta, dtype=np.float64), ord=_order(dual)) <= radius[dual])


def _link_norms(c: np.ndarray) -> np.ndarray:
    """|φ'_i| per row, or ‖φ'_i‖₂ for k outputs: the per-example gradient x_i ⊗ φ'_i has norm
    ‖x_i‖·‖φ'_i‖₂ in ℓ2 (a fresh array)."""
    return np.abs(c) if c.ndim == 1 else np.linalg.norm(c, axis=1)


#: a dense X with at most this fraction of non-zeros is multiplied as CSR (one-hot encodings)
_SPARSE_DENSITY = 0.25


def _fast_matrix(X: Any) -> Any:
    """X as CSR when it is mostly zeros (one-hot rows): the two products per step then cost
    O(nnz) instead of O(nd).  A public-shape decision; the values are unchanged."""
    if sp.issparse(X):
        return sp.csr_matrix(X)
    dense = np.asarray(X, dtype=np.float64)
    if dense.size >= 10_000 and np.count_nonzero(dense) <= _SPARSE_DENSITY * dense.size:
        return sp.csr_matrix(dense)
    return dense


#: per dataset, the products every run repeats: the fast matrix, the row norms per norm and XᵀX.  A
#: dataset's arrays are read-only (``Dataset`` sets them so), so they cannot go stale; the entry
#: goes with the dataset.
_PREPARED: weakref.WeakKeyDictionary[Any, dict[object, Any]] = weakref.WeakKeyDictionary()


def _entry(data: Any) -> dict[object, Any]:
    """The cache entry of ``data`` (a fresh, unshared one if it cannot be weakly referenced)."""
    try:
        return _PREPARED.setdefault(data, {})
    except TypeError:  # not weak-referenceable: nothing cached
        return {}


def _prepared(data: Any, norm: object) -> tuple[np.ndarray, Any, Any]:
    """(the row norms of X in ``norm``, X as :func:`_fast_matrix` makes it, and Xᵀ for the gradient
    sum Xᵀc: CSR of its own when X is sparse, so a step neither rebuilds nor scatters), computed
    once per dataset."""
    entry = _entry(data)
    if "matrix" not in entry:
        matrix = _fast_matrix(data.X)
        entry["matrix"] = matrix
        entry["transposed"] = sp.csr_matrix(matrix.T) if sp.issparse(matrix) else matrix.T
    key = _order(norm)
    if key not in entry:
        entry[key] = row_norms(data.X, norm)
    return entry[key], entry["matrix"], entry["transposed"]


class ClippedGradient:
    """θ ↦ (1/n) Σ_i clip_L(∇ℓ(θ; d_i)) for a generalized linear loss.

    Parameters
    ----------
    loss : Loss
        The per-example loss over its dataset.
    norm : {1, 2, "inf"}
        The norm the mechanism's sensitivity uses (ℓ2 for Gaussian gradients,
        ℓ∞ for the Laplace/Gumbel scores ⟨s, ∇L⟩ of a polytope, whose
        sensitivity is ``2 L₁ ‖C‖₁ / n`` with ``L₁ = sup ‖∇ℓ‖∞``).
    bound : float
        The declared Lipschitz constant L in that norm (``inf``: no clipping).

    Notes
    -----
    The row norms of X are computed once.  Only the data enter the result
    through the clipped per-example gradients; nothing data-dependent is
    returned besides the gradient itself.

    On a Dask-backed dataset (:attr:`Dataset.is_distributed`) every method computes
    each partition's sum of clipped per-example gradients with the same formulas and
    reduces them to one d-vector on the cluster
    (:func:`dpopt.numerics.distributed.clipped_sum`): one pass over the data per call,
    nothing persisted, the row norms recomputed in the pass.  The result equals the
    in-memory one up to the order of floating-point summation.  DP-SGD's Poisson
    batches are selected inside each partition (:meth:`sum_over`).
    """

    def __init__(self, loss: Loss, *, norm: object, bound: float) -> None:
        if not isinstance(loss, Loss):
            raise ModelError(f"gradient clipping needs a dpopt Loss, got {type(loss).__name__}")
        if not (isinstance(bound, (int, float)) and not isinstance(bound, bool) and bound >= 0):
            raise ModelError(f"the clipping bound must be a non-negative declared constant, got {bound!r}")
        if loss.n_outputs > 1 and _order(norm) != 2.0:
            raise ModelError(f"gradient clipping of a loss with {loss.n_outputs} outputs is in ℓ2 only, got norm {norm!r}")
        self.loss = loss
        self.norm = norm
        self.bound = float(bound)
        self._cap = self.bound * (1.0 - _MARGIN)
        self._distributed = bool(getattr(loss.data, "is_distributed", False))
        if self._distributed:  # Dask: row norms are recomputed per partition in each pass
            self._x_norms = np.empty(0)
            self._X = loss.data.X
            self._Xt = None
        else:
            self._x_norms, self._X, self._Xt = _prepared(loss.data, norm)

    def gram(self) -> np.ndarray:
        """XᵀX of the loss's data as a dense d×d array, with the gradients' fast product (CSR
        for one-hot data; a Dask-backed dataset is reduced on the executor's client)."""
        if self._distributed:
            from dpopt.modeling.readers import compute

            return np.asarray(compute(self._X.T @ self._X)[0], dtype=np.float64)
        entry = _entry(self.loss.data)
        if "gram" not in entry:  # the exact XᵀX, kept like the matrix (a fresh copy per call)
            gram = self._X.T @ self._X
            entry["gram"] = np.asarray(gram.toarray() if sp.issparse(gram) else gram, dtype=np.float64)
        return np.array(entry["gram"])

    def _dask_sum(self, theta: np.ndarray, cap: float, count_bound: float | None = None,
                  mask: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        from dpopt.numerics.distributed import clipped_sum

        return clipped_sum(self.loss, theta, order=_order(self.norm), cap=cap, count_bound=count_bound, mask=mask)

    def coefficients(self, theta: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """The clipped scalars c_i, with ``clip_L(∇ℓ(θ; d_i)) = c_i x_i`` (for ``rows`` only, if given)."""
        if self._distributed:
            from dpopt.numerics.distributed import clipped_coefficients

            c = clipped_coefficients(self.loss, theta, order=_order(self.norm), cap=self._cap)
            return c if rows is None else c[rows]
        X = self._X if rows is None else self._X[rows]
        return self._clipped(X, theta, rows)

    def _clipped(self, X: Any, theta: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """The clipped scalars for the rows ``rows`` (all if None) of X, already sliced as ``X``."""
        y, norms = np.asarray(self.loss.data.y), self._x_norms
        if rows is not None:
            y, norms = y[rows], norms[rows]
        c = self._link(X, theta, y)
        if math.isinf(self.bound):
            return c
        size = _link_norms(c) * norms
        scale = np.ones_like(size)
        over = size > self._cap
        scale[over] = self._cap / size[over]
        return c * (scale if c.ndim == 1 else scale[:, None])

    def _link(self, X: Any, theta: np.ndarray, y: np.ndarray) -> np.ndarray:
        """φ'(scores) per row: an n-vector, or n×k for a loss of k outputs (``Loss.n_outputs``)."""
        z = self.loss.scores(theta, X)
        return np.asarray(self.loss.dphi(z.ravel() if z.ndim == 1 else z, y), dtype=np.float64)

    def sum_and_count(self, theta: np.ndarray, bound: float) -> tuple[np.ndarray, int]:
        """(Σ_i clip_b(∇ℓ(θ; d_i)), #{i : ‖∇ℓ(θ; d_i)‖ ≤ b}) for a bound b ≤ L given now
        (adaptive clipping: the bound changes every step; one pass over X, in place)."""
        if self._distributed:
            return self._dask_sum(theta, min(float(bound), self.bound) * (1.0 - _MARGIN), float(bound))
        c = self._link(self._X, theta, np.asarray(self.loss.data.y))
        size = _link_norms(c)
        size *= self._x_norms
        count = int(np.count_nonzero(size <= bound))
        cap = min(float(bound), self.bound) * (1.0 - _MARGIN)
        np.maximum(size, cap, out=size)  # the scale min(1, cap/size) = cap / max(size, cap)
        c *= cap
        c /= size if c.ndim == 1 else size[:, None]
        return np.asarray(self._Xt @ c).ravel(), count

    def sum_over(self, theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Σ_{i ∈ rows} clip_L(∇ℓ(θ; d_i)): the sum over a batch (DP-SGD).

        On a Dask-backed dataset the batch is passed as a row mask and selected inside
        each partition (Poisson sampling per partition, the same rows as in memory)."""
        if self._distributed:
            mask = np.zeros(self.loss.data.n, dtype=bool)
            mask[np.asarray(rows)] = True
            return self._dask_sum(theta, self._cap, mask=mask)[0]
        X = self._X[rows]
        return np.asarray(X.T @ self._clipped(X, theta, rows)).ravel()

    def per_example(self, theta: np.ndarray) -> np.ndarray:
        """The clipped per-example gradients, shape (n, d) (dense; for tests and small n)."""
        X = self.loss.data.X
        if self._distributed:
            from dpopt.modeling.readers import materialize

            X = materialize([X])[0]
        dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)  # type: ignore[attr-defined]
        c = self.coefficients(theta)
        if c.ndim == 1:
            return c[:, None] * dense
        return (dense[:, :, None] * c[:, None, :]).reshape(dense.shape[0], -1)  # x ⊗ φ'(z), row-major

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        """The clipped average gradient at θ."""
        if self._distributed:
            return self._dask_sum(theta, self._cap if not math.isinf(self.bound) else math.inf)[0] / self.loss.data.n
        return np.asarray(self._Xt @ self.coefficients(theta)).ravel() / self.loss.data.n

