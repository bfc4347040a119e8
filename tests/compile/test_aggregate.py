"""Exact row aggregation (:mod:`dpopt.compile.aggregate`) and its per-dataset cache of the GLM design."""

import numpy as np
import pytest

from dpopt.compile import aggregate
from dpopt.compile.aggregate import aggregate_rows, glm_design
from dpopt.testing.tables import onehot_table

# -- aggregation ------------------------------------------------------------------------


def test_aggregation_merges_exactly_equal_rows_and_keeps_the_objective():
    data = onehot_table()
    Xu, yu, c = aggregate_rows(data.X, data.y)
    assert c.sum() == data.n and len(c) < data.n
    assert len({(*r, label) for r, label in zip(map(tuple, Xu), yu, strict=True)}) == len(c)  # all distinct
    t = np.random.default_rng(3).normal(size=data.n_features)
    full = np.logaddexp(0, -data.y * (data.X @ t)).sum()
    assert (c * np.logaddexp(0, -yu * (Xu @ t))).sum() == pytest.approx(full, rel=1e-12)


def test_sorted_aggregation_equals_numpy_unique():
    data = onehot_table(seed=11)
    uniq, counts = np.unique(np.column_stack([data.X, data.y]), axis=0, return_counts=True)
    Xu, yu, c = aggregate_rows(data.X, data.y)
    assert np.array_equal(Xu, uniq[:, :-1]) and np.array_equal(yu, uniq[:, -1]) and np.array_equal(c, counts)


def test_aggregation_treats_negative_zero_as_zero():
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 0.0]])
    _, _, c = aggregate_rows(X, np.array([1.0, 1.0, 1.0]))
    assert sorted(c) == [1.0, 2.0]


def test_hash_collisions_fall_back_to_the_exact_grouping(monkeypatch):
    data = onehot_table(n=200, seed=5)
    expected = np.unique(np.column_stack([data.X, data.y]), axis=0, return_counts=True)[1]
    monkeypatch.setattr(aggregate, "_row_keys", lambda Z: np.zeros(Z.shape[0], dtype=np.uint64))
    _, _, c = aggregate_rows(data.X, data.y)
    assert sorted(c) == sorted(expected.astype(float))


def test_design_is_cached_per_dataset_and_products_match_the_rows():
    data = onehot_table(seed=2)
    d1, d2 = glm_design(data.X, data.y), glm_design(data.X, data.y)
    assert d1 is d2
    t = np.random.default_rng(0).normal(size=data.n_features)
    r = np.random.default_rng(1).normal(size=d1.n_rows)
    assert np.allclose(d1.matvec(t), d1.X @ t) and np.allclose(d1.rmatvec(r), d1.X.T @ r)
    w = np.random.default_rng(2).random(d1.n_rows)
    assert np.allclose(d1.gram_model(w), (d1.X * w[:, None]).T @ d1.X, rtol=1e-5, atol=1e-6)


def test_cache_entry_goes_with_its_data():
    import gc

    data = onehot_table(seed=12)  # many duplicate rows: the design holds copies, not data.X
    key = (id(data.X), id(data.y))
    glm_design(data.X, data.y)
    assert key in aggregate._cache
    del data
    gc.collect()
    assert key not in aggregate._cache


def test_writable_arrays_are_not_cached():
    X = np.eye(3)
    y = np.ones(3)
    assert glm_design(X, y) is not glm_design(X, y)
