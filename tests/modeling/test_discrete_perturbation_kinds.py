"""The linear (OPSamp) and separable "levels" (RSPM) perturbations of DiscreteProblem:
every installed MIP backend against exhaustive enumeration."""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.result import OracleStatus, SolveOptions
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem, brute_force

FAST = SolveOptions(time_limit=30, threads=1, seed=0)
GRIDS = [
    dp.IntegerGrid(1.0, -2, 2),
    dp.IntegerGrid(0.5, -1, 1, l2_bound=1.2),
    dp.IntegerGrid(1.0, -1, 2, l2_bound=2.0),
]


def _instance(rng: np.random.Generator, idx: int, kind: str) -> DiscreteProblem:
    d = 1 + idx % 3
    n = int(rng.integers(8, 25))
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    y = rng.choice([-1.0, 1.0], size=n)
    data = dp.Dataset(X, y, schema=dp.Schema.uniform(d, dp.Numeric(-1, 1, grid="1/4")))
    loss = dp.ZeroOneLoss(data, dp.Variable(d), GRIDS[idx % len(GRIDS)])
    return DiscreteProblem(loss, kind=kind)  # type: ignore[arg-type]


def _mip_backends() -> list[str]:
    return [n for n in ("highs", "cpsat") if dp.backends.get(n).available()]


@pytest.mark.parametrize("kind", ["linear", "levels"])
@pytest.mark.parametrize("name", _mip_backends())
def test_mip_argmin_equals_enumeration(name: str, kind: str) -> None:
    rng = np.random.default_rng(7 if kind == "linear" else 8)
    backend = dp.backends.get(name)
    draws = 0
    for idx in range(6):
        problem = _instance(rng, idx, kind)
        prepared = backend.prepare(problem)  # once per instance; only the noise changes
        for _ in range(6 if name == "cpsat" else 12):
            eta = rng.normal(0.0, 3.0, size=problem.noise_size)
            res = backend.solve(prepared, eta, FAST)
            w_bf, v_bf = brute_force(problem.with_eta(eta))
            assert res.status is OracleStatus.OPTIMAL and res.certified, res.summary()
            np.testing.assert_allclose(res.solution, w_bf, atol=1e-12)
            assert abs(problem.with_eta(eta).objective(res.solution) - v_bf) <= 1e-9
            draws += 1
    assert draws >= 36


def test_perturbation_values_follow_the_kind() -> None:
    grid = dp.IntegerGrid(1.0, -1, 1)
    data = dp.Dataset(np.array([[1.0, 0.0]]), np.array([1.0]), schema=dp.Schema.uniform(2, dp.Numeric(-1, 1, grid="1/4")))
    base = DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(2), grid))
    W = np.array([[-1.0, 0.0], [1.0, 1.0]])
    lin = base.with_kind("linear", np.array([2.0, 3.0]))
    np.testing.assert_allclose(lin.perturbation_values(W), [2.0, -5.0])
    table = np.arange(6.0)  # T[0] = (0, 1, 2), T[1] = (3, 4, 5) for k = -1, 0, 1
    lev = base.with_kind("levels", table)
    np.testing.assert_allclose(lev.perturbation_values(W), [0.0 + 4.0, 2.0 + 5.0])
    assert lev.noise_size == 6 and lin.noise_size == 2 and base.noise_size == 3
    with pytest.raises(ModelError, match="length 6"):
        base.with_kind("levels", np.zeros(3))
    with pytest.raises(ModelError, match="unknown perturbation kind"):
        DiscreteProblem(base.loss, kind="quadratic")  # type: ignore[arg-type]
