"""Data-parallel gradients on Dask-backed datasets.

A dataset read from several parquet files is the same dataset as the concatenated table
read in memory; DP-GD, DP-SGD, Frank–Wolfe and mirror descent give the same θ for the
same seed, on Dask's synchronous scheduler and on a small LocalCluster; rows outside the
declared bounds are clipped lazily, per partition; the Release says nothing about
workers, partitions or timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, ModelError
from dpopt.modeling import readers
from dpopt.numerics.clipping import ClippedGradient

da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
dask = pytest.importorskip("dask")

SCHEMA = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "hours": dp.Numeric(0, 99, grid=1),
                    "sex": dp.Categorical(["F", "M"]), "union": dp.Binary()})
CLASSES = ["<=50K", ">50K"]
SIZES = (70, 110, 1, 99)  # uneven files; one holds a single row


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    age = rng.integers(10, 100, n).astype(float)  # some below/above the declared [17, 90]
    hours = rng.integers(0, 99, n).astype(float)
    sex = rng.choice(["F", "M", "?"], n)
    union = rng.integers(0, 2, n)
    score = 0.04 * (age - 40) + 0.03 * (hours - 40) + 0.5 * (sex == "M") + rng.normal(0, 1, n)
    return pd.DataFrame({"age": age, "hours": hours, "sex": sex, "union": union,
                         "income": np.where(score > 0, ">50K", "<=50K"), "target": np.tanh(score)})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("parts")
    rng = np.random.default_rng(14)
    parts = [_table(rng, k) for k in SIZES]
    for i, part in enumerate(parts):
        part.to_parquet(folder / f"part-{i:02d}.parquet", index=False)
        part.to_csv(folder / f"part-{i:02d}.csv", index=False)
    return folder, pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def cluster_client() -> Iterator[Any]:
    distributed_pkg = pytest.importorskip("distributed")
    cluster = distributed_pkg.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                           dashboard_address=None)
    client = distributed_pkg.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def _on(where: str, client: Any) -> AbstractContextManager[Any]:
    """Run on dask's synchronous scheduler, or on the LocalCluster through the current executor."""
    if where == "synchronous":
        return dask.config.set(scheduler="synchronous")
    from dpopt.executors import DaskExecutor, use_executor

    return use_executor(DaskExecutor(client))


@pytest.fixture(params=["synchronous", "cluster"])
def where(request: pytest.FixtureRequest) -> Iterator[str]:
    client = request.getfixturevalue("cluster_client") if request.param == "cluster" else None
    with _on(request.param, client):
        if client is not None:
            assert readers.dask_client() is client  # the executor's client computes the reductions
        yield request.param


def _pair(files: tuple[Path, pd.DataFrame], **kw: Any) -> tuple[dp.Dataset, dp.Dataset]:
    folder, table = files
    lazy = dp.Dataset.from_parquet(str(folder / "part-*.parquet"), SCHEMA, **kw)
    return lazy, dp.Dataset.from_frame(table, SCHEMA, **kw)


def test_from_parquet_equals_from_frame_on_the_concatenation(files: tuple[Path, pd.DataFrame]) -> None:
    lazy, eager = _pair(files, label="income", classes=CLASSES, intercept=True)
    assert lazy.is_distributed and not eager.is_distributed
    assert lazy.X.chunks[0] == SIZES  # one partition per file, sizes from the parquet metadata
    assert lazy.n == eager.n == sum(SIZES) and lazy.feature_names == eager.feature_names
    assert lazy.x_bound == eager.x_bound and lazy.schema == eager.schema
    assert lazy.labels_are_binary()
    with dask.config.set(scheduler="synchronous"):
        X, y = readers.materialize([lazy.X, lazy.y])
    np.testing.assert_array_equal(X, eager.X)
    np.testing.assert_array_equal(y, eager.y)
    assert repr(lazy) == repr(eager)


def test_from_csv_with_a_glob_or_a_list_is_dask_backed(files: tuple[Path, pd.DataFrame]) -> None:
    folder, table = files
    eager = dp.Dataset.from_frame(table, SCHEMA, label="target", y_bound=0.5)
    listed = sorted(str(p) for p in folder.glob("part-*.csv"))
    for source in (str(folder / "part-*.csv"), listed):
        lazy = dp.Dataset.from_csv(source, SCHEMA, label="target", y_bound=0.5)
        assert lazy.is_distributed and lazy.n == eager.n and lazy.X.chunks[0] == SIZES
        with dask.config.set(scheduler="synchronous"):
            X, y = readers.materialize([lazy.X, lazy.y])
        np.testing.assert_allclose(X, eager.X, rtol=0, atol=1e-15)
        np.testing.assert_allclose(y, eager.y, rtol=0, atol=1e-15)  # clipped to y_bound as in memory
    single = dp.Dataset.from_csv(listed[0], SCHEMA, label="target", y_bound=1.0)
    assert not single.is_distributed  # one file stays in memory


def test_dask_arrays_in_the_constructor_are_clipped_lazily_like_in_memory() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(0, 1, (60, 4))  # many rows above the declared norm bound
    y = rng.normal(0, 2, 60)
    eager = dp.Dataset(X, y, x_bound=1.0, y_bound=1.5)
    lazy = dp.Dataset(da.from_array(X, chunks=(25, 2)), da.from_array(y, chunks=20), x_bound=1.0, y_bound=1.5)
    assert lazy.is_distributed and lazy.X.chunks == ((25, 25, 10), (4,)) and lazy.y.chunks == ((25, 25, 10),)
    with dask.config.set(scheduler="synchronous"):
        Xl, yl = readers.materialize([lazy.X, lazy.y])
    np.testing.assert_array_equal(Xl, eager.X)
    np.testing.assert_array_equal(yl, eager.y)
    assert np.linalg.norm(Xl, axis=1).max() <= 1.0 + 1e-12
    # a partition is first read inside a run, after the charge: NaN/inf are read as 0 there, never refused
    X[40, 1], X[41, 2], y[42] = np.nan, np.inf, -np.inf
    bad = dp.Dataset(da.from_array(X, chunks=(25, 4)), da.from_array(y, chunks=25), x_bound=1.0, y_bound=1.5)
    with dask.config.set(scheduler="synchronous"):
        Xb, yb = readers.materialize([bad.X, bad.y])
    zeroed = dp.Dataset(np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0), np.nan_to_num(y, neginf=0.0),
                        x_bound=1.0, y_bound=1.5)
    np.testing.assert_array_equal(Xb, zeroed.X)
    np.testing.assert_array_equal(yb, zeroed.y)
    with pytest.raises(ModelError, match="clip=False"):  # it could only refuse after the charge
        dp.Dataset(da.from_array(X, chunks=(25, 4)), da.from_array(y, chunks=25), x_bound=1.0, clip=False)
    # unknown chunk sizes are counted once; n is then known
    unknown = da.from_array(X[:40], chunks=(10, 4))
    unknown = unknown[unknown[:, 0] > -np.inf]  # a boolean mask: dask no longer knows the chunk sizes
    assert np.isnan(unknown.shape[0])
    with dask.config.set(scheduler="synchronous"):
        counted = dp.Dataset(unknown, da.from_array(y[:40], chunks=10), x_bound=1.0)
    assert counted.n == 40


def test_subset_and_replace_row_stay_lazy(files: tuple[Path, pd.DataFrame]) -> None:
    lazy, eager = _pair(files, label="target", y_bound=1.0)
    rows = np.arange(0, eager.n, 3)
    x = np.full(eager.n_features, 0.5)
    with dask.config.set(scheduler="synchronous"):
        for a, b in ((lazy.subset(rows), eager.subset(rows)), (lazy.replace_row(5, x, 0.3),
                                                               eager.replace_row(5, x, 0.3))):
            assert a.is_distributed and a.n == b.n
            Xa, ya = readers.materialize([a.X, a.y])
            np.testing.assert_array_equal(Xa, b.X)
            np.testing.assert_array_equal(ya, b.y)


def _problems(files: tuple[Path, pd.DataFrame]) -> dict[str, tuple[dp.Problem, dp.Problem]]:
    """name → (Dask-backed problem, in-memory problem)."""
    logistic = _pair(files, label="income", classes=CLASSES, intercept=True)
    squared = _pair(files, label="target", y_bound=1.0)
    out = {}
    for name, (lazy, eager), make in (
        ("logistic-l2", logistic, lambda d: dp.Problem(dp.LogisticLoss(d, dp.Variable(d.n_features)),
                                                       constraint=dp.L2Ball(d.n_features, 2.0),
                                                       regularizer=dp.L2Squared(d.n_features, 0.01))),
        ("squared-l1", squared, lambda d: dp.Problem(dp.SquaredLoss(d, dp.Variable(d.n_features)),
                                                     constraint=dp.L1Ball(d.n_features, 1.0))),
    ):
        out[name] = (make(lazy), make(eager))
    return out


MECHANISMS = {
    "dpgd-adaptive": ("logistic-l2", lambda: dp.DPGradientDescent(1.0, 1e-6, steps=6)),
    "dpgd-fixed": ("squared-l1", lambda: dp.DPGradientDescent(1.0, 1e-6, steps=6, clip=1.0)),
    "dpsgd": ("logistic-l2", lambda: dp.DPSGD(1.0, 1e-6, steps=5, sampling_rate=0.3)),
    "frank-wolfe-l1": ("squared-l1", lambda: dp.PolytopeFrankWolfe(1.0, 1e-6, steps=6, fast=False)),
    "frank-wolfe-gauss": ("logistic-l2", lambda: dp.GaussianFrankWolfe(1.0, 1e-6, steps=6)),
    "mirror-descent": ("squared-l1", lambda: dp.PrivateMirrorDescent(1.0, 1e-6, steps=6)),
}


@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
@pytest.mark.parametrize("diagnostics", [True, False])
def test_same_seed_same_theta_as_in_memory(files: tuple[Path, pd.DataFrame], where: str, mechanism: str,
                                           diagnostics: bool) -> None:
    problem_name, make = MECHANISMS[mechanism]
    lazy, eager = _problems(files)[problem_name]
    # the same mechanism on both: the model with 98 % of ε and the diagnostic counts (the same
    # counts, marked where each partition is mapped) with 2 %, or the model alone when opted out
    options = {} if diagnostics else {"diagnostics": False}
    r_lazy = make().run(lazy, seed=11, **options)
    r_eager = make().run(eager, seed=11, **options)
    np.testing.assert_allclose(r_lazy.theta, r_eager.theta, rtol=0, atol=1e-8)
    assert not np.allclose(r_eager.theta, 0.0)  # the runs moved: the comparison is not vacuous
    # the Release holds the same public facts (and the same noisy counts): nothing about workers,
    # partitions or timing
    d_lazy, d_eager = r_lazy.to_dict(), r_eager.to_dict()
    d_lazy.pop("theta"), d_eager.pop("theta")
    assert d_lazy == d_eager
    assert ("noisy_diagnostic_counts" in r_lazy.parameters) == diagnostics
    text = json.dumps(d_lazy, default=str).lower()
    assert not any(word in text for word in ("worker", "partition", "chunk", "dask", "seconds"))


def test_gradient_and_value_match_in_memory(files: tuple[Path, pd.DataFrame], where: str) -> None:
    lazy, eager = _problems(files)["logistic-l2"]
    theta = np.linspace(-1.0, 1.0, eager.dim)
    for norm, bound in ((2, 0.3), ("inf", 0.05), (2, float("inf"))):
        a = ClippedGradient(lazy.loss, norm=norm, bound=bound)
        b = ClippedGradient(eager.loss, norm=norm, bound=bound)
        np.testing.assert_allclose(a(theta), b(theta), rtol=0, atol=1e-12)
        raw = ClippedGradient(eager.loss, norm=norm, bound=float("inf")).per_example(theta)
        median = float(np.median(np.linalg.norm(raw, ord=2 if norm == 2 else np.inf, axis=1)))
        sa, ca = a.sum_and_count(theta, median)
        sb, cb = b.sum_and_count(theta, median)
        np.testing.assert_allclose(sa, sb, rtol=0, atol=1e-10)
        assert ca == cb and 0 < cb < eager.n  # some rows clipped, some not
        rows = np.arange(3, eager.n, 7)
        np.testing.assert_allclose(a.sum_over(theta, rows), b.sum_over(theta, rows), rtol=0, atol=1e-10)
    assert lazy.loss.value(theta) == pytest.approx(eager.loss.value(theta), rel=1e-12)
    np.testing.assert_allclose(lazy.loss.gradient(theta), eager.loss.gradient(theta), rtol=0, atol=1e-12)


def test_frank_wolfe_fast_lasso_declines_or_is_refused_before_the_charge(files: tuple[Path, pd.DataFrame]) -> None:
    lazy, eager = _problems(files)["squared-l1"]
    assert dp.PolytopeFrankWolfe(1.0, 1e-6, steps=3).plan(eager).fast
    assert not dp.PolytopeFrankWolfe(1.0, 1e-6, steps=3).plan(lazy).fast  # "auto" declines on Dask data
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="in memory"):
        dp.PolytopeFrankWolfe(1.0, 1e-6, steps=3, fast=True, ledger=ledger).run(lazy, seed=0)
    assert ledger.spent == (0.0, 0.0) and not ledger.charges


def test_dask_stays_optional_for_in_memory_data() -> None:
    """With dask unimportable, in-memory datasets and gradient mechanisms work as before."""
    code = (
        "import sys\n"
        "for name in ('dask', 'dask.array', 'dask.dataframe', 'distributed'): sys.modules[name] = None\n"
        "import numpy as np, dpopt as dp\n"
        "from dpopt.modeling.readers import is_dask_array\n"
        "rng = np.random.default_rng(0)\n"
        "data = dp.Dataset(rng.uniform(-0.5, 0.5, (30, 3)), rng.uniform(-1, 1, 30), x_bound=1.0, y_bound=1.0)\n"
        "assert not data.is_distributed and not is_dask_array(data.X)\n"
        "p = dp.Problem(dp.SquaredLoss(data, dp.Variable(3)), constraint=dp.L1Ball(3, 1.0))\n"
        "r = dp.DPGradientDescent(1.0, 1e-6, steps=3, clip=1.0).run(p, seed=0)\n"
        "print(r.theta.shape)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "(3,)"


def test_a_bad_row_in_a_file_never_fails_a_private_run(tmp_path: Path) -> None:
    """Missing, infinite or non-numeric entries and unknown labels in one file are mapped onto the
    declaration when the partition is read (inside the run), so the run releases; the policies that
    refuse rows by their values are refused when the dataset is built, before any charge."""
    schema = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "sex": dp.Categorical(["F", "M"])})
    rng = np.random.default_rng(0)
    for k in range(3):
        frame = pd.DataFrame({"age": rng.integers(17, 90, 40).astype(object), "sex": rng.choice(["F", "M"], 40),
                              "y": rng.choice(["a", "b"], 40)})
        if k == 1:
            frame.loc[3, "age"], frame.loc[4, "age"], frame.loc[5, "age"] = np.nan, np.inf, "old"
            frame.loc[6, "y"], frame.loc[7, "sex"] = "unknown", "?"
        frame.astype({"age": str}).to_parquet(tmp_path / f"part-{k}.parquet")
    data = dp.Dataset.from_parquet(tmp_path, schema, label="y", classes=["a", "b"])
    w = dp.Variable(data.n_features)
    ledger = dp.Ledger()
    with dask.config.set(scheduler="synchronous"):
        release = dp.DPGradientDescent(1.0, 1e-5, steps=3, ledger=ledger).run(
            dp.Problem(dp.LogisticLoss(data, w), constraint=dp.L2Ball(w, 2.0)), seed=0)
    assert np.all(np.isfinite(release.theta)) and len(ledger.charges) == 1
    for policy in ({"unseen": "error"}, {"unknown_label": "error"}):
        with pytest.raises(ModelError, match="after the charge"):
            dp.Dataset.from_parquet(tmp_path, schema, label="y", classes=["a", "b"], **policy)
