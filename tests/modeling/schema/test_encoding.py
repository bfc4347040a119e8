"""Public schema declarations, row-by-row mapping and exact integer margins."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.schema import Binary, Categorical, Numeric, Schema

# ---------------------------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, kwargs", [
    ((1, 0), {"grid": 0.5}),  # low ≥ high
    ((0, 1), {"grid": 0}),  # grid ≤ 0
    ((0, 1), {"grid": -0.25}),
    ((0, 1), {"grid": 3.14159265358979e-3}),  # not a small-denominator rational
    ((float("nan"), 1), {"grid": 0.5}),
    ((0, float("inf")), {"grid": 0.5}),
    ((0, 1), {"grid": "abc"}),
    ((0, 1), {"grid": 2}),  # wider than the range: a constant column
])
def test_bad_numeric_declarations_are_refused(args, kwargs):
    with pytest.raises(ModelError):
        Numeric(*args, **kwargs)


def test_declarations_are_read_as_exact_rationals():
    for grid in (1 / 90, "1/90", Fraction(1, 90)):
        assert Numeric(0, 1, grid=grid).grid == Fraction(1, 90)
    assert Numeric(-0.1, 0.3, grid=0.1).low == Fraction(-1, 10)
    s = Schema({"a": Numeric(0, 1, grid="1/90"), "b": Numeric(-1, 1, grid="1/16"), "c": Binary()})
    assert s.scale == 720 and s.feature_names == ["a", "b", "c"] and s.n_features == 3
    with pytest.raises(ModelError):
        Categorical([])
    with pytest.raises(ModelError):
        Categorical(["a", "a"])
    with pytest.raises(ModelError):
        Schema([("a", Binary()), ("a", Binary())])
    with pytest.raises(ModelError):
        Schema({"a": "numeric"})  # type: ignore[dict-item]


def test_categoricals_expand_and_bounds_come_from_the_declaration():
    s = Schema([("sex", Categorical(["F", "M"])), ("age", Numeric(0, 1, grid="1/90")), ("z", Numeric(-2, 1, grid=1))])
    assert s.feature_names == ["sex=F", "sex=M", "age", "z"]
    assert s.binary_columns.tolist() == [0, 1] and s.is_binary(1) and not s.is_binary(2)
    assert [s.integer_bound(j) for j in range(4)] == [90, 90, 90, 180]
    assert s.row_norm_bound(1) == pytest.approx(1 + 1 + 2)  # one 1 per block
    assert s.row_norm_bound(2) == pytest.approx(np.sqrt(1 + 1 + 4))
    assert s.row_norm_bound("inf") == 2.0
    assert s.value_count([0, 1, 2]) == 3 * 91
    assert "Categorical" in repr(s) and "grid=1/90" in repr(s)
    u = Schema.uniform(3, Binary(), prefix="b")
    assert u.feature_names == ["b0", "b1", "b2"] and u.scale == 1


# ---------------------------------------------------------------------------------------------
# mapping row by row
# ---------------------------------------------------------------------------------------------

SCHEMA = Schema([("a", Numeric(-1, 1, grid="1/4")), ("b", Binary()), ("c", Categorical(["x", "y", "z"]))])


def test_rows_are_clipped_rounded_and_one_hot_blocks_repaired():
    X = np.array([
        [0.3, 0.7, 1.0, 0.0, 0.0],  # round 0.3 → 0.25, binary 0.7 → 1
        [-5.0, -2.0, 0.2, 0.9, 0.6],  # clip to −1 and 0; block → one-hot of its largest
        [7.0, 3.0, 0.1, 0.2, 0.3],  # clip to 1 and 1; block below 1/2 → zeros
        [0.125, 0.5, 1.0, 1.0, 0.0],  # a tie on the grid → the even index; a tie in a block → the first
    ])
    M = SCHEMA.map_rows(X)
    np.testing.assert_array_equal(M, [
        [0.25, 1.0, 1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
    ])
    for i in range(X.shape[0]):  # row by row: a row maps alone as it maps in a batch
        np.testing.assert_array_equal(SCHEMA.map_rows(X[i:i + 1]), M[i:i + 1])
    np.testing.assert_array_equal(SCHEMA.map_rows(M), M)  # idempotent


def test_mapping_is_the_identity_on_data_on_the_grid():
    s = Schema({"a": Numeric(0, 1, grid="1/90"), "b": Numeric(-1, 1, grid="1/99"), "c": Numeric(-5, 5, grid=0.1)})
    k = np.arange(91)
    X = np.column_stack([k / 90, (k - 45) / 99, (k - 45) / 10])  # the doubles nearest to the grid values
    np.testing.assert_array_equal(s.map_rows(X), X)


def test_scale_and_to_integers_are_exact():
    s = Schema({"a": Numeric(0, 1, grid="1/90"), "b": Numeric(-1, 1, grid="1/16"), "c": Numeric(-0.5, 2, grid="1/3")})
    assert s.scale == 720
    rng = np.random.default_rng(0)
    ka, kb, kc = rng.integers(0, 91, 50), rng.integers(0, 33, 50), rng.integers(0, 8, 50)
    exact = [[Fraction(int(a), 90), Fraction(-1) + Fraction(int(b), 16), Fraction(-1, 2) + Fraction(int(c), 3)]
             for a, b, c in zip(ka, kb, kc, strict=True)]
    X = np.array([[float(v) for v in row] for row in exact])
    A = s.to_integers(X)
    assert A.dtype == np.int64
    assert A.tolist() == [[int(v * 720) for v in row] for row in exact]
    assert np.abs(A).max() <= max(s.integer_bound(j) for j in range(3))


@pytest.mark.parametrize("bad, other", [  # a NaN or inf in the same column, different values elsewhere
    (np.array([[np.nan, 0.0, 1.0, 0.0, 0.0]]), np.array([[np.nan, 0.7, 0.0, 0.2, 0.0]])),
    (np.array([[0.5, 0.0, 1.0, np.inf, 0.0]]), np.array([[0.3, 1.0, 0.0, -np.inf, 0.5]])),
    (np.zeros((2, 4)), np.ones((2, 4))),  # wrong width
    (np.zeros(5), np.full(5, 0.25)),  # not 2-D
    (np.array([["a", "b", "c", "d", "e"]]), np.array([["v", "w", "x", "y", "z"]])),  # not numeric
])
def test_only_nan_shape_and_dtype_are_refused_and_messages_name_no_value(bad, other):
    """A NaN (no missing-value policy declared), an inf, a wrong shape or dtype: the message names
    the column at most, so it is the same for any values of the same shape and column."""
    messages = []
    for X in (bad, other):
        with pytest.raises(DataError) as e:
            SCHEMA.map_rows(X)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_encode_tables_and_undeclared_categories():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": ["y", "w", "v"], "a": [0.3, -2.0, 0.5], "b": [1, 0, 1], "extra": [1, 2, 3]})
    expected = [[0.25, 1.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 0.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(SCHEMA.encode(frame), expected)
    np.testing.assert_array_equal(SCHEMA.encode({k: frame[k].to_numpy() for k in ("a", "b", "c")}), expected)
    with pytest.raises(DataError, match="column 'c' has missing values"):  # missing is not undeclared
        SCHEMA.encode(frame.assign(c=["y", "w", None]))
    with pytest.raises(DataError, match="no column 'b'"):
        SCHEMA.encode({"a": [0.0], "c": ["x"]})
    with pytest.raises(DataError, match="not numeric"):
        SCHEMA.encode({"a": ["high"], "b": [1], "c": ["x"]})
    data = dp.Dataset.from_frame(frame.assign(label=["yes", "no", "yes"]), SCHEMA, "label", positive="yes",
                                 scale=False)
    assert data.y.tolist() == [1.0, -1.0, 1.0] and data.schema is SCHEMA


# ---------------------------------------------------------------------------------------------
# Dataset with a schema
# ---------------------------------------------------------------------------------------------


def test_dataset_maps_rows_and_defaults_the_bound_from_the_schema():
    X = np.array([[0.3, 0.7, 1.0, 0.0, 0.0], [-5.0, 0.0, 0.0, 0.0, 0.2]])
    data = dp.Dataset(X, np.array([1.0, -1.0]), schema=SCHEMA)
    np.testing.assert_array_equal(data.X, SCHEMA.map_rows(X))
    assert data.x_bound == pytest.approx(SCHEMA.row_norm_bound(2)) and data.x_norm == 2
    assert dp.Dataset(X, np.ones(2), schema=SCHEMA, x_norm=1).x_bound == pytest.approx(3.0)
    assert dp.Dataset(X, np.ones(2), schema=SCHEMA, x_bound=10.0).x_bound == 10.0
    nb = data.replace_row(0, [0.61, 0.2, 0.0, 0.9, 0.0], 1.0)  # the neighbour's row is mapped too
    assert nb.schema is SCHEMA and nb.X[0].tolist() == [0.5, 0.0, 0.0, 1.0, 0.0]
    assert data.subset([1]).schema is SCHEMA and "schema=" in repr(data)
    with pytest.raises(ModelError, match="x_bound must be declared"):
        dp.Dataset(X, np.ones(2))  # still required without a schema


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


# ---------------------------------------------------------------------------------------------
# Adult
# ---------------------------------------------------------------------------------------------


def test_adult_schema_maps_the_shipped_data_onto_itself():
    from dpopt.datasets import adult_features, adult_schema
    from dpopt.datasets.adult import ADULT_X_BOUND, _encoded

    schema = adult_schema()
    assert schema.feature_names == adult_features() and schema.scale == 7920
    assert schema.binary_columns.tolist() == list(range(20))
    assert schema.row_norm_bound(2) == pytest.approx(ADULT_X_BOUND)
    for name in ("adult.data", "adult.test"):
        X, _ = _encoded(name)
        np.testing.assert_array_equal(schema.map_rows(X), X)
    from dpopt.datasets import load_adult

    data = load_adult(n=50, seed=0)
    assert data.schema == schema and data.x_bound == pytest.approx(ADULT_X_BOUND)


def test_all_points_of_small_grids_round_trip_exactly():
    s = Schema({"p": Numeric(-1, 1, grid="1/3"), "q": Numeric(0, 2, grid="2/5")})
    pts = np.array(list(itertools.product([(i - 3) / 3 for i in range(7)], [2 * j / 5 for j in range(6)])))
    assert s.scale == 15
    np.testing.assert_array_equal(s.map_rows(pts), pts)
    i, j = np.meshgrid(np.arange(7), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(s.to_integers(pts), np.column_stack([-15 + 5 * i.ravel(), 6 * j.ravel()]))
