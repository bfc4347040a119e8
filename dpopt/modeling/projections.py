"""Projections onto pieces of an intersection of public constraints (numpy only).

Closed forms, exact up to rounding, for a box ``[low, high]`` that contains 0 (infinite
bounds allowed, so sign cones and fixed-at-zero coordinates are boxes too) intersected with
one ℓ1 or ℓ2 ball (:func:`box_l1_project`, :func:`box_l2_project`): the KKT conditions
give ``clip(soft_threshold(v, τ), low, high)`` and ``clip(v·s, low, high)`` with a scalar τ ≥ 0
or s ∈ (0, 1] whose defining equation is piecewise linear (ℓ1) or piecewise
quadratic in s (ℓ2) with breakpoints read off the coordinates, so it is solved exactly on the
right piece after a sort, as in the simplex projection (Held et al. 1974; [Con16]).

:func:`dykstra` projects onto any intersection of convex pieces with exact projections
(Boyle and Dykstra 1986, [BD86]); it is the iterative projection of the sets without a closed
form, followed by :func:`pull_inside`, which moves the answer along the segment to a public
interior point until every piece holds, so the returned point is feasible whatever the
number of iterations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["box_l1_lmo", "box_l1_project", "box_l2_lmo", "box_l2_project", "dykstra", "pull_inside"]

Projection = Callable[[np.ndarray], np.ndarray]


def box_l1_project(v: np.ndarray, low: np.ndarray, high: np.ndarray, r: float) -> np.ndarray:
    """Euclidean projection onto ``{low ≤ w ≤ high, ‖w‖₁ ≤ r}`` for ``low ≤ 0 ≤ high``.

    The answer is ``clip(soft_threshold(v, τ), low, high)`` with τ = 0 when that point has
    ‖·‖₁ ≤ r, else the τ > 0 with ``f(τ) = Σ min(max(|v_i| − τ, 0), cap_i) = r`` (cap_i the
    bound on v_i's side); f is continuous, non-increasing and linear between the sorted
    breakpoints ``|v_i|`` and ``|v_i| − cap_i``.
    """
    u = np.clip(v, low, high)
    if float(np.sum(np.abs(u))) <= r:
        return u
    a = np.abs(v)
    cap = np.where(v >= 0, high, -low)

    def f(tau: float) -> float:
        return float(np.sum(np.minimum(np.maximum(a - tau, 0.0), cap)))

    points = np.unique(np.concatenate([a, a - cap, [0.0]]))
    points = points[np.isfinite(points) & (points >= 0.0)]
    values = np.array([f(t) for t in points]) if points.size <= 64 else None
    if values is None:  # bisection over the sorted breakpoints (f is monotone)
        lo_i, hi_i = 0, points.size - 1
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            if f(float(points[mid])) > r:
                lo_i = mid
            else:
                hi_i = mid
        t0, t1 = float(points[lo_i]), float(points[hi_i])
    else:
        above = np.flatnonzero(values > r)
        k = int(above[-1]) if above.size else 0
        t0, t1 = float(points[k]), float(points[min(k + 1, points.size - 1)])
    f0, f1 = f(t0), f(t1)
    tau = t1 if f0 == f1 else t0 + (f0 - r) * (t1 - t0) / (f0 - f1)  # f is linear on [t0, t1]
    w = np.clip(np.sign(v) * np.maximum(a - tau, 0.0), low, high)
    total = float(np.sum(np.abs(w)))
    return w if total <= r else w * (r / total)  # rounding only: a scaling keeps the box (0 inside)


def box_l2_project(v: np.ndarray, low: np.ndarray, high: np.ndarray, r: float) -> np.ndarray:
    """Euclidean projection onto ``{low ≤ w ≤ high, ‖w‖₂ ≤ r}`` for ``low ≤ 0 ≤ high``.

    The answer is ``clip(s·v, low, high)`` with s = 1 when that point has ‖·‖₂ ≤ r, else the
    s ∈ (0, 1) with ``‖clip(s·v)‖² = r²`` (KKT of ½‖w − v‖² + (λ/2)‖w‖², s = 1/(1 + λ)).
    Between the sorted breakpoints ``cap_i/|v_i|`` the left side is ``A s² + B``, so s is a
    square root on the right piece.
    """
    u = np.clip(v, low, high)
    if float(u @ u) <= r * r:
        return u
    a = np.abs(v)
    cap = np.where(v >= 0, high, -low)
    with np.errstate(divide="ignore", invalid="ignore"):
        brk = np.where(a > 0, cap / a, np.inf)  # coordinate i is clipped once s ≥ brk_i
    order = np.argsort(brk)
    brk_sorted = brk[order]
    a2 = a[order] ** 2
    cap2 = np.where(np.isfinite(cap[order]), cap[order], 0.0) ** 2
    free_tail = np.concatenate([np.cumsum(a2[::-1])[::-1], [0.0]])  # Σ a_i² over unclipped (brk > s)
    clipped_head = np.concatenate([[0.0], np.cumsum(cap2)])  # Σ cap_i² over clipped (brk ≤ s)
    s = 1.0
    for k in range(brk_sorted.size + 1):  # piece k: the k smallest breakpoints are clipped
        lo = 0.0 if k == 0 else float(brk_sorted[k - 1])
        hi = float(brk_sorted[k]) if k < brk_sorted.size else np.inf
        A, B = float(free_tail[k]), float(clipped_head[k])
        if A <= 0.0:
            continue
        cand = float(np.sqrt(max(r * r - B, 0.0) / A))
        if lo <= cand <= hi:
            s = cand
            break
    w = np.clip(s * v, low, high)
    norm = float(np.linalg.norm(w))
    return w if norm <= r else w * (r / norm)


def box_l1_lmo(g: np.ndarray, low: np.ndarray, high: np.ndarray, r: float) -> np.ndarray:
    """``argmin ⟨g, w⟩`` over ``{low ≤ w ≤ high, ‖w‖₁ ≤ r}`` (``low ≤ 0 ≤ high``): a fractional
    knapsack — coordinates by decreasing ``|g_i|`` move to the bound against ``g_i`` until the
    ℓ1 budget is spent."""
    c = -g
    cap = np.where(c > 0, high, np.where(c < 0, -low, 0.0))
    w = np.zeros_like(g)
    budget = r
    for i in np.argsort(-np.abs(c), kind="stable"):
        if c[i] == 0.0 or budget <= 0.0:
            break
        step = min(float(cap[i]), budget)
        w[i] = math.copysign(step, c[i]) if step > 0 else 0.0
        budget -= step
    return w


def box_l2_lmo(g: np.ndarray, low: np.ndarray, high: np.ndarray, r: float) -> np.ndarray:
    """``argmin ⟨g, w⟩`` over ``{low ≤ w ≤ high, ‖w‖₂ ≤ r}`` (``low ≤ 0 ≤ high``).

    The KKT point is ``clip(s·(−g), low, high)`` with the largest s the ball allows, the same
    curve as :func:`box_l2_project`: projecting ``−K·g`` with K large enough that every finite
    bound is reached (and every unbounded coordinate alone leaves the ball) gives it exactly.
    """
    c = -g
    nz = c != 0.0
    if not np.any(nz):
        return np.zeros_like(g)
    cap = np.where(c > 0, high, -low)
    reach = np.minimum(cap[nz], r) / np.abs(c[nz])
    K = 2.0 * float(np.max(reach)) + 1.0
    return box_l2_project(K * c, low, high, r)


def dykstra(v: np.ndarray, pieces: Sequence[Projection], *, max_cycles: int = 5000,
            tol: float = 1e-13) -> np.ndarray:
    """Dykstra's alternating projections onto ``∩ pieces`` ([BD86]); converges to the projection.

    Stops after ``max_cycles`` cycles or when a cycle changes no coordinate of the point or of a
    piece's correction by more than ``tol·max(1, ‖v‖∞)``.  The answer may miss the pieces by the last cycle's movement;
    :func:`pull_inside` makes it feasible.
    """
    x = np.asarray(v, dtype=np.float64).copy()
    if len(pieces) == 1:
        return pieces[0](x)
    increments = [np.zeros_like(x) for _ in pieces]
    scale = tol * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    for _ in range(max_cycles):
        moved = 0.0
        for i, proj in enumerate(pieces):
            y = x + increments[i]
            x_new = proj(y)
            step = y - x_new
            moved = max(moved, float(np.max(np.abs(x_new - x))), float(np.max(np.abs(step - increments[i]))))
            increments[i] = step
            x = x_new
        if moved <= scale:
            break
    return x


def pull_inside(x: np.ndarray, center: np.ndarray, fractions: Sequence[Callable[[np.ndarray, np.ndarray], float]],
                ) -> np.ndarray:
    """``center + t·(x − center)`` with t the largest value in [0, 1] every piece allows.

    Each entry of ``fractions`` maps ``(center, direction)`` to the largest such t for one
    piece (1 when the whole segment is inside it); ``center`` must lie in every piece.
    """
    d = x - center
    t = min([1.0, *(frac(center, d) for frac in fractions)])
    return center + max(t, 0.0) * d
