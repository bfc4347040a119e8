"""The dual-norm linear program and the vertices of a submodular polyhedron.

For a non-decreasing submodular F (:mod:`dpopt.modeling.submodular`), the dual norm
``Ω*(s) = max_{A≠∅} |s|(A)/F(A)`` has closed forms for the families and is computed by
enumeration for small p; otherwise :func:`cutting_plane_dual` solves the exact linear
program by constraint generation over greedy bases (the linear programs go to
:func:`dpopt.modeling.structured_sets.minimize_linear`).
This module also lists the vertices of ``|P|(F)`` (:func:`polyhedron_vertices`), bounds
its ℓ2 radius (:func:`polyhedron_l2_radius`) and estimates its Gaussian width
``G_{|P|(F)} = E Ω∞(g)`` (:func:`polyhedron_gaussian_width`), the quantity of
Thm. 1 and Lemma 1 of Kumar and Deisenroth (2019).

The module registers :func:`cutting_plane_dual` for every
:class:`~dpopt.modeling.submodular.SetFunction` with
:func:`dpopt.modeling.submodular.dual_norm_program`, which
:func:`~dpopt.modeling.submodular.dual_norm` calls beyond its closed forms (the package root
imports this module right after :mod:`dpopt.modeling.submodular`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import GaussianWidth
from dpopt.modeling.submodular import (
    ENUMERATE_MAX_P,
    SetFunction,
    VertexBlocks,
    dual_norm_program,
    greedy,
    lovasz,
    nonnegative_lp,
)

__all__ = [
    "cutting_plane_dual",
    "polyhedron_gaussian_width",
    "polyhedron_l2_radius",
    "polyhedron_vertices",
]


def polyhedron_l2_radius(F: SetFunction) -> float:
    """``R₂ = max_{s∈|P|(F)} ‖s‖₂``: exact for the families, else the bound ``‖(F({i}))_i‖₂``.

    The bound holds because ``|s_i| ≤ F({i})`` on |P|(F); it is exact when the
    singleton vector is itself a vertex (cardinality, disjoint groups).
    """
    r = F._l2_radius()
    if r is not None:
        return r
    if F.p <= 6:  # 720 orders at most
        return float(np.max(np.linalg.norm(_base_vertices(F), axis=1)))
    return float(np.linalg.norm(F.singletons()))


def cutting_plane_dual(F: SetFunction, a: np.ndarray, *, tol: float = 1e-10,
                        max_rounds: int = 500) -> tuple[float, np.ndarray, bool]:
    """``max ⟨a, θ⟩ s.t. θ ≥ 0, ⟨u, θ⟩ ≤ 1 ∀u ∈ P₊(F)`` by constraint generation over greedy bases.

    Every greedy base u of P₊(F) gives a valid cut ``⟨u, θ⟩ ≤ f(θ) ≤ 1``; at an
    LP solution θ̂ the most violated cut is the greedy base of θ̂ (its value is
    f(θ̂)).  The loop stops when ``f(θ̂) ≤ 1 + tol``; there are finitely many
    bases, so it terminates with the exact LP.  Returns ``(value, θ, converged)``
    where ``value`` is the LP bound (an upper bound on Ω*(a) at every round) and
    θ is scaled into the unit ball.
    """
    cuts = [np.diag(F.singletons())]
    theta = np.zeros(F.p)
    for _ in range(max_rounds):
        A = np.vstack(cuts)
        res = nonnegative_lp(-a, A, np.ones(A.shape[0]), "dual-norm")
        assert res.x is not None
        theta = np.maximum(np.asarray(res.x), 0.0)
        u = greedy(F, theta)
        fval = float(theta @ u)
        if fval <= 1.0 + tol:
            return -res.value, theta / max(1.0, fval), True
        cuts.append(u[None, :])
    return -res.value, theta / max(1.0, float(theta @ greedy(F, theta))), False


def _base_vertices(F: SetFunction) -> np.ndarray:
    """The distinct greedy bases over all p! orders (small p only)."""
    rows = {tuple(np.round(_perm_base(F, np.array(o)), 12)) for o in itertools.permutations(range(F.p))}
    return np.array(sorted(rows))


def _perm_base(F: SetFunction, order: np.ndarray) -> np.ndarray:
    s = np.empty(F.p)
    s[order] = F.gains(order)
    return s


def _signed(V: np.ndarray) -> np.ndarray:
    out = set()
    for v in V:
        nz = np.flatnonzero(v)
        for signs in itertools.product((1.0, -1.0), repeat=nz.size):
            w = np.zeros_like(v)
            w[nz] = v[nz] * np.array(signs)
            out.add(tuple(w + 0.0))
    return np.array(sorted(out))


def _n_product(blocks: list[VertexBlocks]) -> float:
    return float(np.prod([float(b.V.shape[0]) ** b.n_blocks for b in blocks]))


def polyhedron_vertices(F: SetFunction, max_count: int = 100_000) -> np.ndarray:
    """The vertices of |P|(F) as rows, when there are at most ``max_count``.

    From a single vertex block (indicator), the product of the segments
    (cardinality, ``2^p``), or, for p ≤ 8, every signed greedy base over all
    orders.  Coverage functions with several groups list the product of their
    groups' vertices (every vertex appears; some rows may be interior points).

    Raises
    ------
    ModelError
        If the list is longer than ``max_count`` or cannot be enumerated.
    """
    blocks = F._blocks()
    if blocks is not None and _n_product(blocks) <= max_count:
        pts = np.zeros((1, F.p))
        for b in blocks:
            for j in range(b.n_blocks):
                local = np.zeros((b.V.shape[0], F.p))
                local[:, b.idx[j]] = b.weights[j] * b.V
                pts = (pts[:, None, :] + local[None, :, :]).reshape(-1, F.p)
        return np.unique(pts + 0.0, axis=0)
    if F.p <= ENUMERATE_MAX_P:
        V = _signed(_base_vertices(F))
        if V.shape[0] <= max_count:
            return V
    raise ModelError(
        f"|P|(F) for {F.describe()} has too many vertices to list (more than max_count={max_count}); "
        "use polyhedron_lmo() (greedy) instead"
    )


def polyhedron_gaussian_width(F: SetFunction, *, n_samples: int = 4000, confidence: float = 0.95,
                              seed: int | None = 0) -> GaussianWidth:
    """``G_{|P|(F)} = E_g sup_{s∈|P|(F)} ⟨s, g⟩ = E Ω∞(g)``, ``g ~ N(0, I_p)``.

    Closed form for cardinality (ℓ∞ ball: ``p√(2/π)``), exact quadrature for the
    indicator (ℓ1 ball: ``E max|g_i|``) and coverage/chain cut (by linearity,
    ``Σ_G w_G E max_{i∈G}|g_i|``); otherwise a Monte Carlo t-interval of Ω∞(g).
    """
    closed = F._width()
    if closed is not None:
        return closed
    from scipy import stats

    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 2:
        raise ModelError("n_samples must be an integer ≥ 2")
    if not (0.0 < confidence < 1.0):
        raise ModelError("confidence must lie strictly between 0 and 1")
    rng = np.random.default_rng(seed)
    G = np.abs(rng.standard_normal((n_samples, F.p)))
    if F._is_cardinality_based():  # the gains do not depend on the order
        inc = F.gains(np.arange(F.p))
        vals = -np.sort(-G, axis=1) @ inc
    else:
        vals = np.array([lovasz(F, row) for row in G])
    mean, sd = float(vals.mean()), float(vals.std(ddof=1))
    half = float(stats.t.ppf(0.5 * (1 + confidence), n_samples - 1)) * sd / math.sqrt(n_samples)
    return GaussianWidth(mean, mean - half, mean + half, "monte-carlo", n_samples, float(confidence))



@dual_norm_program.register
def _dual_norm_by_cutting_planes(F: SetFunction, a: np.ndarray) -> tuple[float, np.ndarray, bool]:
    """The dual-norm program of every set function: :func:`cutting_plane_dual`."""
    return cutting_plane_dual(F, a)
