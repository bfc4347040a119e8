"""The UCI Adult (Census Income) data set, shipped inside the package.

The original files ``adult.data`` and ``adult.test`` (Becker & Kohavi, 1996,
UCI Machine Learning Repository, CC BY 4.0; see ``data/ADULT_LICENSE.txt``)
are stored gzip-compressed in ``dpopt/datasets/data`` and read through
:mod:`importlib.resources`; the SHA-256 of the decompressed bytes is checked
on every first read in a process.  Nothing outside the installed package is
read.

The encoding (``"paper23"``) follows Section 5 of Neel, Roth, Vietri and Wu
(2019): one-hot marital-status (7 levels), relationship (6), race (5) and
sex (2), then age, education-num and hours-per-week, each divided by a
public maximum and clipped to ``[0, 1]``.  That gives d = 23 features and rows
with ℓ2 norm at most √7 by construction.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import math
import operator
from importlib import resources
from typing import Literal

import numpy as np

from dpopt.errors import DataError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.schema import Categorical, Numeric, Schema

__all__ = ["adult_features", "adult_schema", "adult_train_test", "load_adult"]

Split = Literal["train", "test"]

_PACKAGE = "dpopt.datasets"
_FILES: dict[str, str] = {"train": "adult.data", "test": "adult.test"}
#: SHA-256 of the *decompressed* original files (data/README of the project).
_SHA256: dict[str, str] = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}

_COLUMNS: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)  # fmt: skip
_COL = {name: i for i, name in enumerate(_COLUMNS)}

# Levels in the order adult.names lists them (public, not read off the data).
_CATEGORICAL: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "marital-status",
        (
            "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
            "Married-spouse-absent", "Married-AF-spouse",
        ),
    ),
    ("relationship", ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried")),
    ("race", ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black")),
    ("sex", ("Female", "Male")),
)  # fmt: skip

# Public maxima: Adult's documented / capped ranges (age is top-coded at 90,
# education-num runs 1..16, hours-per-week is top-coded at 99).  Fixed here,
# never read off the data.
_NUMERIC: tuple[tuple[str, float], ...] = (
    ("age", 90.0),
    ("education-num", 16.0),
    ("hours-per-week", 99.0),
)

_POSITIVE = ">50K"
_NEGATIVE = "<=50K"
_USED = tuple(name for name, _ in _CATEGORICAL) + tuple(name for name, _ in _NUMERIC)

#: Declared ℓ2 bound of an encoded row: four one-hot ones plus three numbers in [0, 1].
ADULT_X_BOUND = math.sqrt(7.0)
#: The declared grids of the numeric columns: the raw values are integers, divided by the
#: public maxima above (age/90, education-num/16, hours-per-week/99).
_GRIDS: dict[str, str] = {"age": "1/90", "education-num": "1/16", "hours-per-week": "1/99"}


def adult_features() -> list[str]:
    """The 23 feature names of the ``paper23`` Adult encoding, in column order.

    Returns
    -------
    list of str
        ``"marital-status=<level>"`` (7), ``"relationship=<level>"`` (6),
        ``"race=<level>"`` (5), ``"sex=<level>"`` (2), then ``"age"``,
        ``"education-num"``, ``"hours-per-week"``.  Levels appear in the order
        ``adult.names`` lists them.

    Examples
    --------
    >>> from dpopt.datasets import adult_features
    >>> len(adult_features())
    23
    """
    names = [f"{column}={level}" for column, levels in _CATEGORICAL for level in levels]
    names.extend(column for column, _ in _NUMERIC)
    return names


@functools.cache
def adult_schema() -> Schema:
    """The public :class:`~dpopt.modeling.schema.Schema` of the ``paper23`` encoding.

    Four :class:`Categorical` columns with the levels ``adult.names`` lists (one-hot, so
    every one-hot column is binary; their expanded names are :func:`adult_features`), then
    ``Numeric(0, 1, grid="1/90")`` (age), ``Numeric(0, 1, grid="1/16")`` (education-num) and
    ``Numeric(0, 1, grid="1/99")`` (hours-per-week): the raw values are integers divided by
    the public maxima.  The common denominator is s = lcm(90, 16, 99) = 7920, the declared
    ℓ2 row bound √7.  Mapping the shipped rows onto it is the identity.

    Categorical (rather than 20 separate Binary columns) also declares that each block
    holds at most one 1, which the grouped oracle's public size bound uses (at most
    8·7·6·3 = 1008 row patterns over the one-hot columns instead of 2²⁰).
    """
    columns: list[tuple[str, Categorical | Numeric]] = [(name, Categorical(levels)) for name, levels in _CATEGORICAL]
    columns += [(name, Numeric(0, 1, grid=_GRIDS[name])) for name, _ in _NUMERIC]
    return Schema(columns)


@functools.cache
def _raw_table(filename: str) -> tuple[tuple[str, ...], ...]:
    """Read, verify and split one shipped file; cached per process.

    Comment lines (starting with ``|``) and blank lines are skipped, and the
    trailing ``.`` of the labels in ``adult.test`` is removed.
    """
    resource = resources.files(_PACKAGE) / "data" / f"{filename}.gz"
    try:
        compressed = resource.read_bytes()
    except (FileNotFoundError, OSError):
        raise DataError(
            f"the packaged copy of {filename} (dpopt/datasets/data/{filename}.gz) is missing; "
            "reinstall dpopt"
        ) from None
    try:
        raw = gzip.decompress(compressed)
    except (OSError, EOFError):
        raise DataError(
            f"the packaged copy of {filename} is not a valid gzip file; reinstall dpopt"
        ) from None
    if hashlib.sha256(raw).hexdigest() != _SHA256[filename]:
        raise DataError(
            f"the packaged copy of {filename} failed its sha256 check (expected "
            f"{_SHA256[filename]}); the file is corrupted or modified, reinstall dpopt"
        )
    rows: list[tuple[str, ...]] = []
    for lineno, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("|"):
            continue
        fields = tuple(line.split(", "))
        if len(fields) != len(_COLUMNS):
            raise DataError(
                f"{filename} line {lineno} has {len(fields)} fields, expected {len(_COLUMNS)}"
            )
        label = fields[-1].removesuffix(".")
        rows.append(fields[:-1] + (label,))
    return tuple(rows)


@functools.cache
def _encoded(filename: str) -> tuple[np.ndarray, np.ndarray]:
    """Encode the raw rows of ``filename`` as read-only (X, y); cached per process.

    Rows with ``?`` in a used column are dropped.
    """
    table = np.array(_raw_table(filename), dtype=str)
    if table.ndim != 2 or table.shape[0] == 0:
        raise DataError(f"{filename} contains no rows; reinstall dpopt")
    keep = ~np.any(table[:, [_COL[c] for c in _USED]] == "?", axis=1)
    table = table[keep]

    blocks: list[np.ndarray] = []
    for column, levels in _CATEGORICAL:
        values = table[:, _COL[column]]
        onehot = values[:, None] == np.array(levels)[None, :]
        if not np.all(onehot.any(axis=1)):
            raise DataError(
                f"{filename}: column {column!r} has a level not listed in adult.names; "
                "the shipped file does not match the expected format"
            )
        blocks.append(onehot.astype(np.float64))
    for column, maximum in _NUMERIC:
        try:
            values = table[:, _COL[column]].astype(np.float64)
        except ValueError:
            raise DataError(f"{filename}: column {column!r} is not numeric") from None
        blocks.append(np.clip(values / maximum, 0.0, 1.0)[:, None])
    X = np.hstack(blocks)

    labels = table[:, _COL["income"]]
    positive = labels == _POSITIVE
    if not np.all(positive | (labels == _NEGATIVE)):
        raise DataError(f"{filename}: income labels must be {_NEGATIVE!r} or {_POSITIVE!r}")
    y = np.where(positive, 1.0, -1.0)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def _check_count(n: int | None) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool):
        raise DataError(f"n must be a positive integer or None, got {n!r}")
    try:
        value = operator.index(n)
    except TypeError:
        raise DataError(f"n must be a positive integer or None, got {n!r}") from None
    if value <= 0:
        raise DataError(f"n must be a positive integer or None, got {n!r}")
    return value


def load_adult(
    split: Split = "train",
    *,
    balanced: bool = False,
    n: int | None = None,
    seed: int = 0,
) -> Dataset:
    """Load the UCI Adult data set with the 23-feature ``paper23`` encoding.

    The data ship inside the package (gzip-compressed original files, read via
    :mod:`importlib.resources`); the SHA-256 of the decompressed bytes is
    checked against the published constants.

    Parameters
    ----------
    split : {"train", "test"}
        ``"train"`` reads ``adult.data`` (32,561 rows), ``"test"`` reads
        ``adult.test`` (16,281 rows; its comment line and the trailing ``.``
        of its labels are removed).
    balanced : bool
        Train split only.  Keep every row labelled ``>50K`` plus the same
        number of ``<=50K`` rows drawn without replacement with
        ``np.random.default_rng(seed)``, as in Neel et al. (2019, Sec. 5):
        n = 15,682 with exactly half positives.
    n : int, optional
        Keep a subsample of ``n`` rows drawn without replacement with the same
        generator (after balancing).  Must not exceed the rows available.
    seed : int
        Seed of the generator for ``balanced`` and ``n``.  Loading is
        deterministic for a given seed; with neither option set no
        randomness is used.

    Returns
    -------
    Dataset
        ``X`` of shape (rows, 23) with columns :func:`adult_features`, labels
        ``y`` in {−1, +1} (+1 for ``>50K``), declared ``x_bound = √7`` in the
        ℓ2 norm, ``y_bound = 1`` and the schema :func:`adult_schema`.  Rows keep
        the order of the file.

    Raises
    ------
    DataError
        If ``split`` is unknown, ``balanced=True`` is asked for the test
        split, ``n`` is not a positive integer or exceeds the rows available,
        or the packaged file is missing or fails its SHA-256 check.

    Notes
    -----
    Encoding: one-hot marital-status (7 levels), relationship (6), race (5)
    and sex (2), levels in the order ``adult.names`` lists them (not taken
    from the data); then age / 90, education-num / 16 and
    hours-per-week / 99, each clipped to ``[0, 1]``.  The divisors are
    *public* maxima — Adult's documented and top-coded ranges — not maxima
    read off the data: a scale computed from the data would be a
    data-dependent bound, which dpopt's privacy rules forbid.  Every row thus
    has exactly four ones in the one-hot block and three numbers in
    ``[0, 1]``, so ``‖x‖₂ ≤ √(4 + 3) = √7``; this bound is a fact of the
    encoding, not of the data.

    Rows with a missing value (``?``) in one of the seven columns used would
    be dropped; the shipped files have none there (``?`` occurs only in
    workclass, occupation and native-country), so all 32,561 train and
    16,281 test rows are kept.

    Examples
    --------
    >>> from dpopt.datasets import load_adult
    >>> data = load_adult(balanced=True, seed=0)
    >>> data.n, data.n_features
    (15682, 23)
    """
    if split not in _FILES:
        raise DataError(f"unknown split {split!r}: use 'train' or 'test'")
    if balanced and split != "train":
        raise DataError(
            "balanced=True is only defined for the train split; load the test split unbalanced"
        )
    count = _check_count(n)
    filename = _FILES[split]
    X, y = _encoded(filename)

    rng = np.random.default_rng(seed) if (balanced or count is not None) else None
    idx = np.arange(y.shape[0])
    if balanced:
        assert rng is not None
        positives = idx[y > 0]
        negatives = idx[y < 0]
        if negatives.shape[0] < positives.shape[0]:
            raise DataError(f"{filename} has fewer '<=50K' than '>50K' rows; cannot balance")
        drawn = rng.choice(negatives, size=positives.shape[0], replace=False)
        idx = np.sort(np.concatenate([positives, drawn]))
    if count is not None:
        assert rng is not None
        available = idx.shape[0]
        if count > available:
            what = "the balanced train split" if balanced else f"the {split} split"
            raise DataError(
                f"n={count} exceeds the {available} rows of {what}; pass n <= {available}"
            )
        idx = np.sort(rng.choice(idx, size=count, replace=False))
    if idx.shape[0] != y.shape[0]:
        X, y = X[idx], y[idx]
    return Dataset(X, y, x_bound=ADULT_X_BOUND, x_norm=2, y_bound=1.0, schema=adult_schema())


def adult_train_test(
    *,
    balanced_train: bool = False,
    n: int | None = None,
    seed: int = 0,
) -> tuple[Dataset, Dataset]:
    """The Adult train and test splits, encoded alike.

    Parameters
    ----------
    balanced_train : bool
        Balance the train split as in :func:`load_adult` (``balanced=True``).
        The test split is never balanced.
    n : int, optional
        Subsample the *train* split to ``n`` rows (see :func:`load_adult`).
        The test split is always returned in full (16,281 rows).
    seed : int
        Seed for balancing and subsampling the train split.

    Returns
    -------
    (Dataset, Dataset)
        ``(train, test)``, both with 23 features, labels in {−1, +1},
        ``x_bound = √7`` (ℓ2) and ``y_bound = 1``.

    Raises
    ------
    DataError
        As :func:`load_adult`.
    """
    train = load_adult("train", balanced=balanced_train, n=n, seed=seed)
    test = load_adult("test")
    return train, test
