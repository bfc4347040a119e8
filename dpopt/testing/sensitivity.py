"""White-box sensitivity checks: the gradient a mechanism adds noise to, over neighbours.

A mechanism's noise covers the sensitivity ``max ‖∇̃(θ; D) − ∇̃(θ; D')‖`` over
replace-one neighbours D, D'.  :func:`neighbour_gradient_gap` evaluates it at a given
iterate θ over a list of candidate rows for one position, and :func:`extreme_rows`
lists rows on the declared bounds that make a generalized linear loss's per-example
gradients as large and as opposed as the bounds allow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations

import numpy as np

from dpopt.modeling.dataset import Dataset

__all__ = ["extreme_rows", "neighbour_gradient_gap"]

Row = tuple[np.ndarray, float]


def extreme_rows(theta: np.ndarray, *, x_bound: float, y_bound: float) -> list[Row]:
    """Rows (x, y) with ‖x‖₂ ∈ {0, x_bound} along ±θ and across it, and y ∈ {−y_bound, 0, y_bound}."""
    theta = np.asarray(theta, dtype=np.float64)
    u = theta / np.linalg.norm(theta) if np.any(theta) else np.eye(theta.size)[0]
    across = np.zeros_like(u)
    if u.size > 1:
        j = int(np.argmin(np.abs(u)))
        across[j] = 1.0
        across -= (across @ u) * u
        across /= np.linalg.norm(across)
    directions = [np.zeros_like(u), u, -u] + ([across] if u.size > 1 else [])
    return [(x_bound * x, y) for x in directions for y in (-y_bound, 0.0, y_bound)]


def neighbour_gradient_gap(gradient_for: Callable[[Dataset], Callable[[np.ndarray], np.ndarray]],
                           data: Dataset, theta: np.ndarray, rows: Sequence[Row], *,
                           measure: Callable[[np.ndarray], float], position: int = 0) -> float:
    """max over ordered pairs of candidate rows (a, b) of ``measure(∇̃_a(θ) − ∇̃_b(θ))``.

    Parameters
    ----------
    gradient_for : callable
        ``gradient_for(dataset)`` returns the mechanism's gradient oracle θ ↦ ∇̃(θ; dataset).
    data : Dataset
        The other rows of the neighbours.
    theta : ndarray
        The iterate to evaluate at (it may lie outside the constraint set).
    rows : sequence of (x, y)
        Candidate rows for ``position``.
    measure : callable
        The sensitivity's norm of a gradient difference (e.g. ℓ2, or max_s |⟨s, ·⟩|).
    position : int
        Which row the neighbours replace.
    """
    grads = [np.asarray(gradient_for(data.replace_row(position, x, y))(theta)) for x, y in rows]
    return max(float(measure(a - b)) for a, b in permutations(grads, 2))
