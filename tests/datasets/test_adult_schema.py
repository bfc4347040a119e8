"""The Adult schema (:mod:`dpopt.datasets.adult`): it maps the shipped data onto itself, and small grids round-trip exactly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpopt.modeling.schema import Numeric, Schema

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
