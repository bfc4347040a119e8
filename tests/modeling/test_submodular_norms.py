"""The submodular norm ball (:mod:`dpopt.modeling.submodular_norms`): its geometry against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from dpopt.modeling.submodular import dual_norm
from dpopt.modeling.submodular_norms import SubmodularNormBall
from dpopt.testing.set_cases import set_functions

P = 6


# ----------------------------------------------------------------------------- the norm ball


@pytest.mark.parametrize("F", set_functions(5), ids=lambda F: F.describe())
def test_norm_ball_geometry(F):
    C = SubmodularNormBall(5, F, 2.0)
    V = C.vertices()
    rng = np.random.default_rng(4)
    for _ in range(5):
        g = rng.normal(size=5)
        assert C.lmo(g) @ g == pytest.approx(float(np.min(V @ g)), rel=1e-7)
        assert C.support(g) == pytest.approx(2.0 * dual_norm(F, g), rel=1e-9)
        v = 3 * rng.normal(size=5)
        pv = C.project(v)
        assert C.contains(pv, tol=1e-7)
        assert np.all((V - pv) @ (v - pv) <= 1e-6 * (1 + np.linalg.norm(v)))  # obtuse-angle test
    for norm in (1, 2, "inf"):
        assert C.radius(norm) >= np.max(np.linalg.norm(V, ord={1: 1, 2: 2, "inf": np.inf}[norm], axis=1)) - 1e-9
