"""Column declarations (:mod:`dpopt.modeling.schema.specs`): refused when malformed, read as exact rationals, categoricals expanded."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpopt.errors import ModelError
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
