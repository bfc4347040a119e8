"""The 0/1 loss (:mod:`dpopt.modeling.zero_one`): exact integer margins, every discrete backend against exact
enumeration on exact-zero margins, and neighbours with rows the old compilers refused.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ModelError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.schema import Binary, Numeric, Schema

# ---------------------------------------------------------------------------------------------
# the 0/1 loss: exact integer margins
# ---------------------------------------------------------------------------------------------

THIRDS = Schema.uniform(3, Numeric(-1, 1, grid="1/3"))


def _zero_margin_data(seed: int, n: int = 12) -> dp.Dataset:
    """Rows in thirds whose entries mostly sum to 0: y⟨x, w⟩ = 0 exactly at every w ∝ (1, 1, 1) and
    many other grid points, while the float products give ±1e-17."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, 3)) / 3.0
    X[:, 2] = np.clip(-(X[:, 0] + X[:, 1]), -1, 1)
    X[0] = [1 / 3, -1 / 3, 0.0]
    return dp.Dataset(X, rng.choice([-1.0, 1.0], size=n), schema=THIRDS)


def _exact_loss(data: dp.Dataset, weights: np.ndarray, w: np.ndarray, tau: Fraction) -> Fraction:
    """Σ c_i 1[y_i⟨x_i, w⟩ ≤ 0] in rationals (an independent reference: features read as thirds)."""
    k = [int(round(float(v) / float(tau))) for v in w]
    total = Fraction(0)
    for x, y, c in zip(data.X, data.y, weights, strict=True):
        margin = sum(Fraction(round(float(v) * 3), 3) * kj * tau for v, kj in zip(x, k, strict=True)) * int(y)
        total += Fraction(c) if margin <= 0 else 0
    return total


def test_zero_one_loss_needs_a_schema():
    data = dp.Dataset(np.zeros((2, 2)), np.ones(2), x_bound=1.0)
    with pytest.raises(ModelError, match="schema"):
        dp.ZeroOneLoss(data, dp.Variable(2), dp.IntegerGrid(1, -1, 1))


@pytest.mark.parametrize("step", [0.1, 1 / 3, 1.0])
def test_values_use_exact_integer_margins(step):
    data = _zero_margin_data(0)
    grid = dp.IntegerGrid(step, -2 * step, 2 * step)
    loss = dp.ZeroOneLoss(data, dp.Variable(3), grid)
    W = grid.enumerate(3)
    tau = Fraction(step).limit_denominator(1000)
    exact = [float(_exact_loss(data, loss.weights, w, tau)) for w in W]
    np.testing.assert_array_equal(loss.values(W), exact)
    np.testing.assert_array_equal([loss.value(w) for w in W[:20]], exact[:20])  # alone as in a batch
    A = loss.integer_rows()
    assert A.dtype == np.int64 and not A.flags.writeable
    np.testing.assert_array_equal(A, THIRDS.to_integers(data.X))
    if step == 0.1:  # the instance stresses floats: their signs disagree somewhere
        floats = ((W @ data.X.T) * data.y <= 0).astype(float).sum(axis=1)
        assert np.any(floats != np.asarray(exact))


# ---------------------------------------------------------------------------------------------
# every discrete backend, exact-zero margins, against exact enumeration
# ---------------------------------------------------------------------------------------------

BACKENDS = ["bruteforce", "highs", "highs-grouped", "cpsat"]


def _backend(name: str):
    backend = dp.backends.get(name)
    if not backend.available():
        pytest.skip(f"{name} is not installed")
    return backend


def _exact_argmin(problem: DiscreteProblem) -> tuple[np.ndarray, float]:
    """argmin over W_τ of the exact rational loss plus the float perturbation (independent of loss.values)."""
    W = problem.domain.enumerate(problem.dim)
    tau = Fraction(float(problem.domain.step)).limit_denominator(1000)
    loss = np.array([float(_exact_loss(problem.loss.data, problem.loss.weights, w, tau)) for w in W])
    f = loss + problem.perturbation_values(W)
    return W[int(np.argmin(f))], float(f.min())


@pytest.mark.parametrize("kind", ["normalized", "linear", "levels"])
@pytest.mark.parametrize("name", BACKENDS)
def test_every_backend_matches_exact_enumeration_on_exact_zero_margins(name, kind):
    from dpopt.backends.result import SolveOptions

    backend = _backend(name)
    rng = np.random.default_rng(hash((name, kind)) % 2**32)
    opts = SolveOptions(time_limit=60, threads=1, seed=0)
    for idx, step in enumerate((0.1, 1 / 3)):
        grid = dp.IntegerGrid(step, -2 * step, 2 * step, l2_bound=2.5 * step if idx else None)
        weights = None if idx == 0 else rng.integers(1, 3, size=12).astype(float)
        problem = DiscreteProblem(dp.ZeroOneLoss(_zero_margin_data(idx), dp.Variable(3), grid, weights=weights),
                                  kind=kind)
        prepared = backend.prepare(problem)
        for _ in range(3):
            eta = rng.normal(0.0, 0.5, size=problem.noise_size)
            res = backend.solve(prepared, eta, opts)
            w_ref, v_ref = _exact_argmin(problem.with_eta(eta))
            assert res.certified, res.summary()
            np.testing.assert_allclose(res.solution, w_ref, atol=1e-12)
            assert problem.with_eta(eta).objective(res.solution) == pytest.approx(v_ref, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# neighbours: rows the old compilers refused, and public splits
# ---------------------------------------------------------------------------------------------


def _neighbours() -> tuple[dp.Dataset, dp.Dataset]:
    """D has 0/1 values in a column declared Numeric; D' replaces one row by an unscalable one."""
    schema = Schema([("a", Numeric(0, 1, grid="1/2")), ("b", Binary()), ("c", Numeric(-1, 1, grid="1/4"))])
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 2, 10), rng.integers(0, 2, 10), rng.integers(-4, 5, 10) / 4])
    d0 = dp.Dataset(X.astype(float), rng.choice([-1.0, 1.0], size=10), schema=schema)
    d1 = d0.replace_row(0, [np.sqrt(2) / 3, 1 / 999_983, 0.123456789], 1.0)  # off the grid, huge denominator
    return d0, d1


@pytest.mark.parametrize("name", BACKENDS)
def test_a_row_the_old_compilers_refused_now_compiles_everywhere(name):
    from dpopt.backends.result import SolveOptions

    backend = _backend(name)
    grid = dp.IntegerGrid(0.5, -1, 1)
    eta = np.array([0.3, -0.4, 0.2, 0.1])
    for data in _neighbours():
        problem = DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), grid))
        res = backend.solve(backend.prepare(problem), eta, SolveOptions(time_limit=60, threads=1, seed=0))
        assert res.certified, res.summary()
        np.testing.assert_allclose(res.solution, _exact_argmin(problem.with_eta(eta))[0], atol=1e-12)


def test_grouped_split_and_limits_are_the_same_on_neighbours():
    pytest.importorskip("highspy")
    from dpopt.compile import mip_grouped as mg

    grid = dp.IntegerGrid(1, -2, 2)
    progs, sizes = [], []
    for data in _neighbours():
        problem = DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), grid))
        prog = mg.compile_grouped(problem)
        progs.append(prog)
        sizes.append(mg.declared_size(problem, prog.enumerated))
    assert progs[0].enumerated.tolist() == progs[1].enumerated.tolist() == [0, 2]  # declared numeric
    assert sizes[0] == sizes[1]
    assert all(p.size.columns <= s.columns for p, s in zip(progs, sizes, strict=True))


def test_grouped_limit_refuses_on_the_declaration_for_every_dataset(monkeypatch):
    pytest.importorskip("highspy")
    from dpopt.backends.highs_grouped import HighsGroupedBackend
    from dpopt.compile import mip_grouped as mg
    from dpopt.errors import BackendCapabilityError

    monkeypatch.setattr(mg, "MAX_COLUMNS", 10)  # the declared bound here is 1·5 + 2·5 + 3 = 18
    for data in _neighbours():  # both refused, with the same message
        problem = DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), dp.IntegerGrid(1, -2, 2)))
        with pytest.raises(BackendCapabilityError, match="more than 10 binaries") as e:
            HighsGroupedBackend().prepare(problem)
        assert "schema, n and domain" in str(e.value)
