"""Shipped data (UCI Adult, encodings ``paper23`` and ``standard``) and synthetic generators.

Every loader returns a :class:`~dpopt.modeling.dataset.Dataset` whose bounds are
facts of the encoding or of the construction, never read off the data.
"""

from dpopt.datasets.adult import (
    ADULT_X_BOUND,
    STANDARD_X_BOUND,
    adult_features,
    adult_schema,
    adult_train_test,
    load_adult,
)
from dpopt.datasets.synthetic import make_classification, make_regression

__all__ = [
    "ADULT_X_BOUND",
    "STANDARD_X_BOUND",
    "adult_features",
    "adult_schema",
    "adult_train_test",
    "load_adult",
    "make_classification",
    "make_regression",
]
