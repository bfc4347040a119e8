"""The argmin releases (OPDisc, RSPM) release a point of the declared discrete domain, as the
canonical double τ·k: their noise stays inside the objective, and the output space is the
grid itself (the mechanisms' module docstrings say why the continuous proof covers it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.bruteforce import BruteForceBackend
from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.mechanisms.opdisc import canonical_grid_point
from dpopt.testing.pairs import grid_label_pair, zero_one_problem

GRIDS = [dp.IntegerGrid(0.5, -1, 1), dp.IntegerGrid(0.1, -0.3, 0.3), dp.IntegerGrid(1, -2, 2, l2_bound=2.0)]
MECHANISMS = [lambda: dp.OPDisc(1.0, 1e-5, ledger=dp.Ledger()),
              lambda: dp.RSPM(1.0, ledger=dp.Ledger(), noise="laplace"),
              lambda: dp.RSPM(1.0, 1e-5, ledger=dp.Ledger(), noise="gaussian")]
IDS = ["opdisc", "rspm-laplace", "rspm-gaussian"]


def _canonical(theta: np.ndarray, grid: dp.IntegerGrid) -> bool:
    """θ is, bit for bit, τ·k for integers k of the domain (the double every backend computes)."""
    k = np.rint(theta / grid.step)
    return (np.array_equal(theta, grid.step * k) and bool(np.all((k >= grid.klow) & (k <= grid.khigh)))
            and grid.contains(theta))


@pytest.mark.parametrize("make", MECHANISMS, ids=IDS)
@pytest.mark.parametrize("grid", GRIDS, ids=["step-1/2", "step-0.1", "step-1"])
def test_the_released_point_is_a_grid_point_of_the_declared_domain(make: object, grid: dp.IntegerGrid) -> None:
    data, _ = grid_label_pair(6)
    problem = zero_one_problem(data, grid)
    for seed in range(4):
        theta = make().run(problem, solver="bruteforce", seed=seed).theta  # type: ignore[operator]
        assert _canonical(theta, grid)
        if grid.step in (0.5, 1.0):  # a power-of-two step: θ/τ is an integer exactly
            assert np.all(theta / grid.step == np.rint(theta / grid.step))


class _ArtefactBackend(BruteForceBackend):
    """Brute force whose answer carries a float artefact within ``IntegerGrid.contains``'s
    tolerance (what a custom Backend computing w in its own arithmetic could return)."""

    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        res = super().solve(prepared, b, options)
        assert res.solution is not None
        return replace(res, solution=res.solution * (1 + 1e-12) + 1e-13)


@pytest.mark.parametrize("make", MECHANISMS, ids=IDS)
def test_a_backends_float_artefact_is_rounded_onto_the_grid_before_release(make: object) -> None:
    """The artefact passes the re-check (it is within 1e-9 steps of τk) and is released as τk
    exactly, the same bits as the honest backend's: its low-order bits never leave."""
    grid = dp.IntegerGrid(0.1, -0.3, 0.3)
    data, _ = grid_label_pair(6)
    problem = zero_one_problem(data, grid)
    for seed in range(3):
        honest = make().run(problem, solver="bruteforce", seed=seed).theta  # type: ignore[operator]
        noisy = make().run(problem, solver=_ArtefactBackend(), seed=seed).theta  # type: ignore[operator]
        assert noisy.tobytes() == honest.tobytes() and _canonical(noisy, grid)


def test_canonical_grid_point_is_the_identity_on_grid_points() -> None:
    for step in (0.1, 0.3, 1 / 3, 0.5, 2.0**-7, 7.0):
        k = np.arange(-10**6, 10**6 + 1, 997, dtype=np.float64)
        w = step * k
        assert canonical_grid_point(w, step).tobytes() == w.tobytes()
