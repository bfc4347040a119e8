"""Submodular set functions (:mod:`dpopt.modeling.submodular`): the greedy algorithm, the Lovász
extension, Ω∞ / Ω*, the LMO of |P|(F), closed forms and widths, against brute force.

Brute force over all 2^p subsets and all p! orders (p ≤ 8) checks the greedy algorithm, the
Lovász extension, the dual norm and the LMO; every family is also wrapped as a
:class:`CallableSetFunction` (no closed forms, :func:`dpopt.testing.set_cases.as_generic`).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ModelError
from dpopt.modeling.submodular import (
    CallableSetFunction,
    Cardinality,
    ChainCut,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
    check_submodular,
    dual_norm,
    dual_norm_argmax,
    greedy,
    lovasz,
    omega,
    polyhedron_lmo,
    subset_masks,
)
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.submodular_lp import (
    polyhedron_gaussian_width,
    polyhedron_l2_radius,
    polyhedron_vertices,
)
from dpopt.testing.set_cases import as_generic, set_functions

P = 6


# ----------------------------------------------------------------------------- set functions


@pytest.mark.parametrize("F", set_functions(), ids=lambda F: F.describe())
def test_greedy_lovasz_lmo_dual_against_brute_force(F):
    p = F.p
    masks = subset_masks(p)
    vals = np.array([F.value_mask(m) for m in masks])
    bases = np.array([_perm_base(F, o) for o in itertools.permutations(range(p))])
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=p)))
    rng = np.random.default_rng(0)
    for _ in range(8):
        w = rng.normal(size=p)
        s = greedy(F, w)
        assert np.all(masks @ s <= vals + 1e-9) and s.sum() == pytest.approx(vals[-1])  # s ∈ B(F)
        assert lovasz(F, w) == pytest.approx(np.max(bases @ w))  # f = support function of B(F)
        # Ω∞(θ) = max over the vertices of |P|(F) (signed bases), Eq. (5)
        theta = rng.normal(size=p)
        brute = max(float(np.max(bases @ (sg * theta))) for sg in signs)
        assert omega(F, theta) == pytest.approx(brute)
        v = polyhedron_lmo(F, theta)
        assert v @ theta == pytest.approx(-omega(F, theta))
        assert np.all(masks @ np.abs(v) <= vals + 1e-9)  # v ∈ |P|(F)
        # Ω*(s) = max_A |s|(A)/F(A) and its maximiser lies in the Ω∞ unit ball
        assert dual_norm(F, theta) == pytest.approx(float(np.max(masks @ np.abs(theta) / vals)), rel=1e-7)
        arg = dual_norm_argmax(F, theta)
        assert omega(F, arg) <= 1 + 1e-7 and arg @ theta == pytest.approx(dual_norm(F, theta), rel=1e-7)


def _perm_base(F, order):
    s = np.empty(F.p)
    s[list(order)] = F.gains(np.array(order))
    return s


@pytest.mark.parametrize("F", set_functions(), ids=lambda F: F.describe())
def test_dual_norm_inequality_and_equality(F):
    rng = np.random.default_rng(1)
    for _ in range(10):
        theta, s = rng.normal(size=(2, F.p))
        assert abs(theta @ s) <= omega(F, theta) * dual_norm(F, s) * (1 + 1e-9)
        # equality: the LMO vertex of |P|(F) has Ω* = 1 and attains Ω∞(θ)
        v = polyhedron_lmo(F, theta, maximize=True)
        assert dual_norm(F, v) == pytest.approx(1.0, rel=1e-7)
        assert v @ theta == pytest.approx(omega(F, theta) * dual_norm(F, v), rel=1e-7)
        # and the dual-norm maximiser attains Ω*(s) with Ω∞ = 1
        u = dual_norm_argmax(F, s)
        assert u @ s == pytest.approx(omega(F, u) * dual_norm(F, s), rel=1e-6)


def test_closed_forms_and_widths():
    p = 7
    rng = np.random.default_rng(2)
    th = rng.normal(size=p)
    assert omega(Cardinality(p), th) == pytest.approx(np.abs(th).sum())
    assert omega(Indicator(p), th) == pytest.approx(np.abs(th).max())
    assert dual_norm(Cardinality(p), th) == pytest.approx(np.abs(th).max())
    assert dual_norm(Indicator(p), th) == pytest.approx(np.abs(th).sum())
    groups = [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    G = GroupCoverage(p, groups, [1.0, 2.0, 3.0])
    assert omega(G, th) == pytest.approx(sum(w * np.abs(th[g]).max() for w, g in zip([1, 2, 3], groups, strict=True)))
    assert polyhedron_gaussian_width(Cardinality(p)).value == pytest.approx(p * math.sqrt(2 / math.pi))
    for F in (Indicator(p), G, ChainCut(p, 0.5, 0.1)):  # quadrature against Monte Carlo
        exact = polyhedron_gaussian_width(F)
        mc = polyhedron_gaussian_width(as_generic(F), n_samples=20_000, seed=3)
        assert mc.method == "monte-carlo" and mc.low - 0.02 <= exact.value <= mc.high + 0.02
    assert polyhedron_l2_radius(Cardinality(p)) == pytest.approx(math.sqrt(p))
    for F in set_functions(5):
        V = polyhedron_vertices(F)
        assert polyhedron_l2_radius(F) >= np.linalg.norm(V, axis=1).max() - 1e-9
    assert len(polyhedron_vertices(Indicator(p))) == 2 * p
    assert len(polyhedron_vertices(Cardinality(p))) == 2**p


def test_greedy_is_p_log_p_fast():
    for F in (ChainCut(100_000, 1.0, 0.5), Cardinality(100_000)):
        w = np.random.default_rng(0).normal(size=F.p)
        start = time.perf_counter()
        for _ in range(5):
            polyhedron_lmo(F, w)
        assert (time.perf_counter() - start) / 5 < 0.5  # vectorised: tens of ms on a laptop


def test_checks_refuse_bad_set_functions():
    with pytest.raises(ModelError, match="not submodular"):
        CallableSetFunction(4, lambda m: float(m.sum()) ** 2)
    with pytest.raises(ModelError, match="non-decreasing"):
        CallableSetFunction(4, lambda m: float(m.sum() % 2) + 1.0 * m.any())
    with pytest.raises(ModelError, match="positive"):
        CallableSetFunction(3, lambda m: float(m[:2].any()))
    with pytest.raises(ModelError, match="F\\(∅\\)"):
        CallableSetFunction(3, lambda m: 1.0 + m.sum())
    cut = lambda m: float(np.sum(m[1:] != m[:-1]))  # noqa: E731 — the raw chain cut is not monotone
    with pytest.raises(ModelError):
        CallableSetFunction(5, cut)
    with pytest.raises(ModelError, match="trusted"):
        CallableSetFunction(20, lambda m: float(m.any()))
    with pytest.raises(ModelError, match="concave"):
        ConcaveCardinality(4, [0, 1, 3, 4, 5])
    with pytest.raises(ModelError, match="no group"):
        GroupCoverage(4, [[0, 1], [2]])
    check_submodular(ChainCut(6, 1.0, 0.0))  # the monotone chain cut passes
    th = dp.Variable(3)
    with pytest.raises(ModelError, match="λ > 0"):
        SubmodularNorm(th, Cardinality(3), 0.0)
    with pytest.raises(ModelError, match="p=4"):
        SubmodularNorm(th, Cardinality(4), 1.0)
