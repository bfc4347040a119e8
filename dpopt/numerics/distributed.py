"""Per-example clipped gradients over a Dask-backed dataset, reduced on the cluster.

:func:`clipped_sum` computes each partition's ``(Σ_i clip(∇ℓ_i), count)`` with
``blockwise`` and sums the partition vectors on the cluster; only a (d+1)-vector comes
back.  X is never persisted (it may not fit in memory); every step reads the partitions
again.  The noise is added afterwards, on the client, by the mechanism (its RNG never
leaves the client).  The partitions themselves, and where they are computed, come from
:mod:`dpopt.modeling.readers`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpopt.modeling.readers import compute, data_free, require_dask

if TYPE_CHECKING:
    from dpopt.modeling.losses import Loss


__all__ = [
    "clipped_coefficients",
    "clipped_sum",
]


def _clip_block(Xb: np.ndarray, yb: np.ndarray, *rest: np.ndarray, theta: np.ndarray, link: Loss, order: float,
                cap: float, count_bound: float | None) -> np.ndarray:
    """One partition's [Σ_i clip(∇ℓ_i) | count] as a (1, d+1) block (the in-memory formulas of
    :class:`~dpopt.numerics.clipping.ClippedGradient`, row by row)."""
    if rest:  # a Poisson batch: this partition's rows in it
        Xb, yb = Xb[rest[0]], yb[rest[0]]
    c = np.asarray(link.dphi(Xb @ theta, yb), dtype=np.float64)
    count = 0.0
    if count_bound is None:  # ClippedGradient._clipped
        if not math.isinf(cap):
            size = np.abs(c) * np.linalg.norm(Xb, ord=order, axis=1)
            over = size > cap
            c[over] = c[over] * (cap / size[over])
    else:  # ClippedGradient.sum_and_count
        size = np.abs(c)
        size *= np.linalg.norm(Xb, ord=order, axis=1)
        count = float(np.count_nonzero(size <= count_bound))
        np.maximum(size, cap, out=size)
        c *= cap
        c /= size
    out = np.empty((1, Xb.shape[1] + 1))
    out[0, :-1] = Xb.T @ c
    out[0, -1] = count
    return out


def clipped_sum(loss: Loss, theta: np.ndarray, *, order: float, cap: float, count_bound: float | None = None,
                mask: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(Σ_i clip(∇ℓ(θ; d_i)), count) over a Dask-backed dataset, reduced on the cluster.

    Parameters
    ----------
    loss : Loss
        Over a Dask-backed dataset.
    theta : ndarray
        The current (already private) iterate; sent to every partition.
    order : float
        The norm order of the clipping.
    cap : float
        Per-example gradients longer than ``cap`` are scaled onto it (``inf``: no clipping).
    count_bound : float, optional
        Adaptive clipping (``ClippedGradient.sum_and_count``): also count the examples
        with ‖∇ℓ_i‖ ≤ count_bound, and scale by ``cap / max(‖∇ℓ_i‖, cap)``.
    mask : ndarray of bool, optional
        Only these rows (a Poisson batch of DP-SGD), selected inside each partition.
    """
    da = require_dask()
    X: Any = loss.data.X
    y: Any = loss.data.y
    args: list[Any] = [X, "ij", y, "i"]
    if mask is not None:
        args += [da.from_array(np.asarray(mask, dtype=bool), chunks=(X.chunks[0],)), "i"]
    d = int(X.shape[1])
    parts = da.blockwise(_clip_block, "ik", *args, new_axes={"k": d + 1}, adjust_chunks={"i": 1},
                         concatenate=True, dtype=np.float64, meta=np.empty((0, 0)), token="dpopt-clipped-sum",
                         theta=np.asarray(theta, dtype=np.float64), link=data_free(loss), order=order, cap=cap,
                         count_bound=count_bound)
    (total,) = compute(parts.sum(axis=0))
    total = np.asarray(total, dtype=np.float64)
    return total[:-1], int(round(float(total[-1])))


def _coefficient_block(Xb: np.ndarray, yb: np.ndarray, *, theta: np.ndarray, link: Loss, order: float,
                       cap: float) -> np.ndarray:
    c = np.asarray(link.dphi(Xb @ theta, yb), dtype=np.float64)
    if not math.isinf(cap):
        size = np.abs(c) * np.linalg.norm(Xb, ord=order, axis=1)
        over = size > cap
        c[over] = c[over] * (cap / size[over])
    return c


def clipped_coefficients(loss: Loss, theta: np.ndarray, *, order: float, cap: float) -> np.ndarray:
    """The clipped scalars c_i of every row, computed (an n-vector: for tests and small n)."""
    da = require_dask()
    X: Any = loss.data.X
    y: Any = loss.data.y
    c = da.blockwise(_coefficient_block, "i", X, "ij", y, "i", concatenate=True, dtype=np.float64,
                     meta=np.empty((0,)), theta=np.asarray(theta, dtype=np.float64), link=data_free(loss),
                     order=order, cap=cap)
    return np.asarray(compute(c)[0], dtype=np.float64)
