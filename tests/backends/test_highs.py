"""The exact MIP oracle (pyomo + HiGHS) for OPDisc's 0/1-loss problem."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pyomo.environ", reason="pyomo is not installed")
pytest.importorskip("highspy", reason="highspy is not installed")

import dpopt.backends.highs  # noqa: E402,F401 — registers "highs"
from dpopt.backends import registry  # noqa: E402
from dpopt.backends.highs import HighsBackend  # noqa: E402
from dpopt.backends.result import Limit, OracleStatus, SolveOptions  # noqa: E402
from dpopt.compile.mip_pyomo import compile_pyomo  # noqa: E402
from dpopt.errors import BackendCapabilityError, ModelError  # noqa: E402
from dpopt.modeling.dataset import Dataset  # noqa: E402
from dpopt.modeling.discrete import DiscreteProblem, brute_force  # noqa: E402
from dpopt.modeling.domains import IntegerGrid  # noqa: E402
from dpopt.modeling.schema import Numeric, Schema  # noqa: E402
from dpopt.modeling.variable import Variable  # noqa: E402
from dpopt.modeling.zero_one import ZeroOneLoss  # noqa: E402

FAST = SolveOptions(time_limit=20, threads=1, seed=0)


def _problem(X: np.ndarray, y: np.ndarray, grid: IntegerGrid, weights: np.ndarray | None = None,
             eta: np.ndarray | None = None, schema: Schema | None = None) -> DiscreteProblem:
    """Features declared as multiples of 1/4 in [−1, 1] unless ``schema`` says otherwise."""
    schema = schema or Schema.uniform(X.shape[1], Numeric(-1, 1, grid="1/4"))
    data = Dataset(X, y, schema=schema)
    return DiscreteProblem(ZeroOneLoss(data, Variable(X.shape[1]), grid, weights=weights), eta=eta)


def _tiny_instance(rng: np.random.Generator, idx: int) -> DiscreteProblem:
    """d ≤ 3, ≤ 5 levels per coordinate, n ≤ 30, entries multiples of 1/4, duplicate rows."""
    d = 1 + idx % 3
    n = int(rng.integers(8, 31))
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    y = rng.choice([-1.0, 1.0], size=n)
    dup = min(4, n // 3)
    X[-dup:], y[-dup:] = X[:dup], y[:dup]  # some duplicate (x, y) rows
    X[1] = X[0]
    y[1] = -y[0]  # and an identical x with the opposite label
    grids = [
        IntegerGrid(1.0, -2, 2),  # 5 levels, D = box radius
        IntegerGrid(0.5, -1, 1, l2_bound=1.2),  # 5 levels, the ℓ2 bound cuts corners
        IntegerGrid(1.0, -1, 2, l2_bound=2.0),  # 4 levels, asymmetric
        IntegerGrid(0.25, 0, 1),  # 5 levels, non-negative orthant
    ]
    weights = None if idx % 2 == 0 else rng.integers(0, 4, size=n).astype(float)  # zero weights too
    return _problem(X, y, grids[idx % len(grids)], weights=weights)


def _relaxed_objectives(problem: DiscreteProblem, W: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """The paper's relaxation λ² + ‖w‖² ≤ D² (λ free) minimised over λ at each grid point."""
    D = problem.domain.bound(problem.dim)
    lam = np.sqrt(np.maximum(D * D - np.einsum("ij,ij->i", W, W), 0.0))
    return problem.loss.values(W) - W @ eta[:-1] / D - abs(eta[-1]) * lam / D


def test_differential_against_brute_force_for_both_signs_of_eta_last():
    rng = np.random.default_rng(20240611)
    backend = HighsBackend()
    draws = negative = relaxation_wrong = 0
    for idx in range(10):
        problem = _tiny_instance(rng, idx)
        prepared = backend.prepare(problem)  # compiled once per instance
        W = problem.domain.enumerate(problem.dim)
        for t in range(22):
            eta = rng.normal(0.0, 2.0, size=problem.dim + 1)
            if t % 2:
                eta[-1] = -abs(eta[-1])
            res = backend.solve(prepared, eta, FAST)
            p = problem.with_eta(eta)
            w_bf, v_bf = brute_force(p)
            assert res.status is OracleStatus.OPTIMAL, res.summary()
            assert res.certified, res.summary() + " " + res.message
            np.testing.assert_allclose(res.solution, w_bf, atol=1e-12)
            assert abs(res.primal_bound - v_bf) <= 1e-6
            assert abs(p.objective(res.solution) - v_bf) <= 1e-9
            draws += 1
            if eta[-1] < 0:
                negative += 1
                relaxed = _relaxed_objectives(problem, W, eta)
                if not np.allclose(W[int(np.argmin(relaxed))], w_bf):
                    relaxation_wrong += 1
            else:  # for η_{d+1} ≥ 0 the relaxation is exact
                relaxed = _relaxed_objectives(problem, W, eta)
                np.testing.assert_allclose(W[int(np.argmin(relaxed))], w_bf)
    assert draws >= 200 and negative >= 100
    # the paper's relaxation picks the wrong point for some η_{d+1} < 0: the exact encoding matters
    assert relaxation_wrong >= 1


def test_point_on_the_hyperplane_is_an_error():
    # x = (1, -1), y = +1: every w with w1 = w2 puts x on the hyperplane
    X = np.array([[1.0, -1.0], [1.0, 1.0]])
    y = np.array([1.0, 1.0])
    grid = IntegerGrid(1.0, 0, 1)
    eta = np.array([5.0, 5.0, 0.0])  # pulls towards w = (1, 1), where row 0 has margin 0
    problem = _problem(X, y, grid, eta=eta)
    res = HighsBackend().solve_problem(problem, FAST)
    w_bf, v_bf = brute_force(problem)
    assert res.certified
    np.testing.assert_allclose(res.solution, w_bf)
    prog = compile_pyomo(problem)
    assert prog.exact_loss(np.array([1, 1])) == 1.0
    assert prog.exact_loss(np.array([1, 0])) == 0.0


def test_model_is_built_once_and_set_eta_changes_parameters_only():
    import pyomo.environ as pyo

    rng = np.random.default_rng(3)
    problem = _tiny_instance(rng, 0)
    backend = HighsBackend()
    prepared = backend.prepare(problem)
    model = prepared.program.model

    def census() -> tuple[int, ...]:
        return (
            sum(1 for _ in model.component_objects()),
            sum(1 for _ in model.component_data_objects(pyo.Var)),
            sum(1 for _ in model.component_data_objects(pyo.Constraint)),
            sum(1 for _ in model.component_data_objects(pyo.Param)),
        )

    before = census()
    d = problem.dim
    e1 = np.zeros(d + 1)
    e1[0] = 50.0  # strongly rewards w_0 > 0
    e2 = -e1
    r1 = backend.solve(prepared, e1, FAST)
    r2 = backend.solve(prepared, e2, FAST)
    assert census() == before
    assert prepared.program.model is model
    assert r1.certified and r2.certified
    assert r1.solution[0] > 0 > r2.solution[0]
    for eta, r in ((e1, r1), (e2, r2)):
        np.testing.assert_allclose(r.solution, brute_force(problem.with_eta(eta))[0])
    assert list(prepared.program.eta) == list(e2)
    D = problem.domain.bound(d)
    tau = problem.domain.step
    assert [model.kc[j].value for j in range(d)] == pytest.approx(list(e2[:d] * tau / D))
    assert model.normc.value == e2[d]


def test_time_limit_is_reported_and_not_certified():
    rng = np.random.default_rng(5)
    n, d = 2000, 10
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    y = np.where(X @ rng.normal(size=d) + rng.normal(0.0, 1.0, n) > 0, 1.0, -1.0)
    problem = _problem(X, y, IntegerGrid(1.0, -4, 4), eta=rng.normal(0.0, 2.0, d + 1))
    res = HighsBackend().solve_problem(problem, SolveOptions(time_limit=0.5, threads=1))
    assert res.status is OracleStatus.LIMIT and res.limit is Limit.TIME
    assert res.certified is False and res.solver_certified is False
    if res.solution is not None:
        assert math.isfinite(res.primal_bound) and math.isfinite(res.dual_bound)
        assert res.primal_bound >= res.dual_bound
        assert problem.domain.contains(res.solution)
    assert "NOT certified" in res.summary()


def test_features_off_the_declared_grid_are_mapped_not_refused():
    # the old compiler refused √2/3 ("not a small-denominator rational"): a data-dependent refusal
    X = np.array([[np.sqrt(2.0) / 3.0, 0.5], [0.25, -1.0], [1.7, -0.3]])
    problem = _problem(X, np.array([1.0, -1.0, 1.0]), IntegerGrid(1.0, -1, 1), eta=np.array([0.3, -0.2, 0.1]))
    np.testing.assert_array_equal(problem.loss.data.X, [[0.5, 0.5], [0.25, -1.0], [1.0, -0.25]])
    prog = compile_pyomo(problem)
    assert prog.scale == 4
    res = HighsBackend().solve_problem(problem, FAST)
    assert res.certified
    np.testing.assert_array_equal(res.solution, brute_force(problem)[0])


def test_coefficient_limit_is_decided_by_the_declaration_alone():
    # two large prime denominators: s = 999983·999979 > MAX_COEFFICIENT, whatever the values
    schema = Schema([("a", Numeric(0, 1, grid="1/999983")), ("b", Numeric(0, 1, grid="1/999979"))])
    for X in (np.zeros((2, 2)), np.array([[1 / 999_983, 0.0], [0.0, 1 / 999_979]])):
        with pytest.raises(ModelError, match="declared schema"):
            compile_pyomo(_problem(X, np.array([1.0, -1.0]), IntegerGrid(1.0, -1, 1), schema=schema))


def test_adult_scale_and_formulation_size(adult_300):
    data = adult_300
    grid = IntegerGrid(1, -4, 4, l2_bound=23**0.5)
    prog = compile_pyomo(DiscreteProblem(ZeroOneLoss(data, Variable(23), grid)))
    assert prog.scale == 7920  # lcm of 90, 16, 99 and the one-hot denominators
    size = prog.size
    assert size.levels == 9 and size.norm_values == 24  # ‖k‖² ∈ {0..23}
    assert size.integer_vars == 23
    assert size.binary_vars == 23 * 9 + 24 + size.rows
    assert size.constraints == 2 * 23 + 2 + size.rows + size.pairs
    assert size.rows <= data.n
    assert prog.resolution == 1.0


def test_aggregation_merges_rows_and_keeps_the_objective():
    X = np.array([[0.5, 0.25], [0.5, 0.25], [1.0, 0.5], [-0.5, -0.25], [0.0, 0.0], [0.5, 0.25]])
    y = np.array([1.0, 1.0, 1.0, -1.0, 1.0, -1.0])
    problem = _problem(X, y, IntegerGrid(1.0, -2, 2), weights=np.array([1.0, 2.0, 0.5, 1.0, 3.0, 0.0]))
    prog = compile_pyomo(problem)
    # (0.5, .25, +), its duplicate, 2× it and its negation with y = −1 share one direction;
    # x = 0 is an error everywhere; the zero-weight row is dropped
    assert prog.rows.shape[0] == 1 and prog.row_weights.tolist() == [4.5]
    assert prog.constant == 3.0
    assert prog.size.pairs == 0
    W = problem.domain.enumerate(2)
    k = np.rint(W / problem.domain.step).astype(np.int64)
    np.testing.assert_allclose([prog.exact_loss(ki) for ki in k], problem.loss.values(W))


def test_check_refuses_continuous_problems_and_registers():
    from dpopt.modeling.losses import LogisticLoss
    from dpopt.modeling.problem import Problem

    data = Dataset(np.array([[0.5, 0.5], [-0.5, 0.25]]), np.array([1.0, -1.0]), x_bound=1.0)
    with pytest.raises(BackendCapabilityError):
        HighsBackend().check(Problem(LogisticLoss(data, Variable(2))))
    backend = registry.get("highs")
    assert isinstance(backend, HighsBackend) and backend.kind == "mip" and backend.available()
