"""The UCI Adult (Census Income) data set, shipped inside the package, in two encodings.

The original files ``adult.data`` and ``adult.test`` (Becker & Kohavi, 1996,
UCI Machine Learning Repository, CC BY 4.0; see ``data/ADULT_LICENSE.txt``)
are stored gzip-compressed in ``dpopt/datasets/data`` and read through
:mod:`importlib.resources`; the SHA-256 of the decompressed bytes is checked
on every first read in a process.  Nothing outside the installed package is
read.  ``adult.names`` is not shipped: its level lists are constants below.

``"paper23"`` (the default) follows Section 5 of Neel, Roth, Vietri and Wu
(2019): one-hot marital-status (7 levels), relationship (6), race (5) and
sex (2), then age, education-num and hours-per-week, each divided by a
public maximum and clipped to ``[0, 1]``.  That gives d = 23 features and rows
with ℓ2 norm at most √7 by construction.

``"standard"`` is the encoding of the Iyengar et al. (2019) benchmark used by
Yu et al. (IJCAI 2020, Table 2): every categorical column one-hot, every
numeric column scaled.  In column order:

* one-hot workclass (8 levels + ``unknown``), education (16), marital-status (7),
  occupation (14 + ``unknown``), relationship (6), race (5), sex (2) and
  native-country (41 + ``unknown``), levels in the order ``adult.names`` lists
  them: 102 columns;
* age / 90, fnlwgt / 1,500,000, education-num / 16, capital-gain / 99,999,
  capital-loss / 4,356 and hours-per-week / 99, each clipped to ``[0, 1]``;
* a constant ``intercept`` column 1.0;

so d = 109 and every row has exactly nine ones (eight one-hot, the intercept)
plus six numbers in ``[0, 1]``: ``‖x‖₂ ≤ √15`` (:data:`STANDARD_X_BOUND`) by
construction, a fact of the encoding, not of the data.

Decisions of the ``standard`` encoding, and why:

* **Public maxima.**  age is top-coded at 90, education-num runs 1..16,
  capital-gain is top-coded at 99,999 and hours-per-week at 99 in the Census
  extract.  capital-loss has no documented top code; 4,356 is the largest value
  in the published UCI files (the 1994 extract), fixed here as a constant.
  fnlwgt (a CPS sampling weight) has no documented maximum; 1,500,000 is a round
  public constant above every weight in the published files.  Both constants are
  properties of the public benchmark, written into the code once; loading never
  recomputes a maximum from the rows it reads, and a larger value is clipped to 1
  (a per-row map), which changes utility, never the privacy analysis.
* **Grids.**  Raw values are integers, so each scaled column lies on the grid
  ``1/maximum`` and the discrete oracles can read it exactly — except fnlwgt:
  a :class:`~dpopt.modeling.schema.Schema` grid has a denominator of at most 10⁶,
  so fnlwgt is declared on the grid ``1/15000``, i.e. read to the nearest 100
  people (far below the sampling error of a CPS weight).  The common denominator
  is s = lcm(90, 15000, 16, 99999, 4356, 99) = 120,998,790,000; the encoding is
  meant for convex mechanisms, whose sensitivities use only the row bound.
* **Missing values.**  ``?`` occurs only in workclass, occupation and
  native-country (2,399 train / 1,221 test rows).  The benchmark drops those rows
  (30,162 / 15,060 remain); here ``?`` is read as its own level ``unknown``.
  Dropping a row for its content makes n depend on the data: replacing one kept
  row by a row with ``?`` changes n, so the two files are no longer replace-one
  neighbours of the same public size and every mechanism's guarantee (stated for
  replace-one with a public n) stops applying.  Mapping ``?`` to a level is a
  per-row map, keeps n the public file size (32,561 / 16,281) and every one-hot
  block complete.  A ``?`` (or any level ``adult.names`` does not list) in any
  other column is a :class:`~dpopt.errors.DataError` at load, as in ``paper23``.
* **Intercept.**  Included.  The blocks are complete, so a constant is already
  in the span of the columns, but every private fit is regularized or
  constrained: a bias b costs at least ‖θ‖² = b² / Σₖ(1/mₖ) ≈ 0.79 b² through the
  eight blocks (sizes mₖ) alone and b² / (1 + Σₖ(1/mₖ)) ≈ 0.44 b² with the
  intercept.  The price is √15 instead of √14 for the row bound (3.5 % more
  noise at equal ε).  Measured (non-private ℓ2-regularized logistic regression,
  rows divided by the bound, λ = 10⁻³ and 10⁻⁴): test accuracy about 0.001
  higher with the intercept; at λ = 10⁻² the two agree within 0.001.
* **Row bound.**  The datasets carry the declared bound √15 = ``schema.row_norm_bound(2)``,
  not a smaller ``x_bound`` such as 1 with ``clip=True``: a row scaled onto the
  unit ball leaves the schema's grid, and a :class:`Dataset` rebuilt from it
  (``subset``, ``replace_row``) maps it back onto the grid, which rounds its
  one-hot entries (about 0.27) to zero.  Since every row has norm in [3, √15],
  the bound is nearly tight.  Unit-ball rows are a *uniform* public rescaling,
  which keeps the geometry (a linear classifier's predictions do not change)::

      Dataset(train.X / STANDARD_X_BOUND, train.y, x_bound=1.0, y_bound=1.0)

References: Iyengar, Near, Song, Thakkar, Thakurta and Wang, "Towards practical
differentially private convex optimization", IEEE S&P 2019 (≈104 features after
dropping the ``?`` rows); Yu, Zhang, Chen, Yin and Liu, "Gradient perturbation is
underrated for differentially private convex optimization", IJCAI 2020.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import math
import operator
from dataclasses import dataclass
from importlib import resources
from typing import Literal

import numpy as np

from dpopt.errors import DataError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.schema import Binary, Categorical, Numeric, Schema

__all__ = [
    "ADULT_X_BOUND",
    "STANDARD_X_BOUND",
    "adult_features",
    "adult_schema",
    "adult_train_test",
    "load_adult",
]

Split = Literal["train", "test"]
Encoding = Literal["paper23", "standard"]

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
_LEVELS: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
        "Without-pay", "Never-worked",
    ),
    "education": (
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc",
        "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool",
    ),
    "marital-status": (
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv", "Armed-Forces",
    ),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
        "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
        "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
        "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
        "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands",
    ),
}  # fmt: skip

#: The raw missing-value marker of the files, and the level the standard encoding reads it as.
_MISSING = "?"
UNKNOWN = "unknown"

_PAPER23_CATEGORICAL = ("marital-status", "relationship", "race", "sex")
_CATEGORICAL: tuple[tuple[str, tuple[str, ...]], ...] = tuple((c, _LEVELS[c]) for c in _PAPER23_CATEGORICAL)

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

#: Declared ℓ2 bound of an encoded row: four one-hot ones plus three numbers in [0, 1].
ADULT_X_BOUND = math.sqrt(7.0)
#: The declared grids of the numeric columns: the raw values are integers, divided by the
#: public maxima above (age/90, education-num/16, hours-per-week/99).
_GRIDS: dict[str, str] = {"age": "1/90", "education-num": "1/16", "hours-per-week": "1/99"}

#: Declared ℓ2 bound of a ``standard`` row: eight one-hot ones, the intercept 1 and six
#: numbers in [0, 1], so ‖x‖₂² ≤ 8 + 1 + 6 = 15.
STANDARD_X_BOUND = math.sqrt(15.0)


@dataclass(frozen=True)
class _Encoding:
    """What an encoding reads and how: public declarations only.

    ``numeric`` holds (column, public maximum, declared grid of value / maximum);
    ``unknown`` the columns whose ``?`` is read as the level ``unknown``; ``drop_missing``
    whether a row with ``?`` in a used column is dropped (paper23) instead.
    """

    categorical: tuple[tuple[str, tuple[str, ...]], ...]
    numeric: tuple[tuple[str, float, str], ...]
    unknown: frozenset[str]
    drop_missing: bool
    intercept: bool
    x_bound: float

    @property
    def used(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.categorical) + tuple(c for c, _, _ in self.numeric)


_STANDARD_UNKNOWN = frozenset({"workclass", "occupation", "native-country"})
_STANDARD_CATEGORICAL = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
    "native-country",
)  # fmt: skip

_ENCODINGS: dict[str, _Encoding] = {
    "paper23": _Encoding(
        categorical=_CATEGORICAL,
        numeric=tuple((c, m, _GRIDS[c]) for c, m in _NUMERIC),
        unknown=frozenset(),
        drop_missing=True,
        intercept=False,
        x_bound=ADULT_X_BOUND,
    ),
    "standard": _Encoding(
        categorical=tuple(
            (c, _LEVELS[c] + ((UNKNOWN,) if c in _STANDARD_UNKNOWN else ())) for c in _STANDARD_CATEGORICAL
        ),
        # fnlwgt: a Schema grid has denominator ≤ 10⁶, so fnlwgt/1.5e6 is declared on
        # 1/15000 (fnlwgt to the nearest 100); every other raw value is an integer.
        numeric=(
            ("age", 90.0, "1/90"),
            ("fnlwgt", 1_500_000.0, "1/15000"),
            ("education-num", 16.0, "1/16"),
            ("capital-gain", 99_999.0, "1/99999"),
            ("capital-loss", 4_356.0, "1/4356"),
            ("hours-per-week", 99.0, "1/99"),
        ),
        unknown=_STANDARD_UNKNOWN,
        drop_missing=False,
        intercept=True,
        x_bound=STANDARD_X_BOUND,
    ),
}

#: Name of the constant column of the ``standard`` encoding.
INTERCEPT = "intercept"


def _encoding(encoding: object) -> _Encoding:
    """The declarations of a named encoding, or DataError listing the known ones."""
    if not isinstance(encoding, str) or encoding not in _ENCODINGS:
        raise DataError(f"unknown Adult encoding {encoding!r}: use one of {sorted(_ENCODINGS)}")
    return _ENCODINGS[encoding]


def adult_features(encoding: Encoding = "paper23") -> list[str]:
    """The feature names of an Adult encoding, in column order.

    Parameters
    ----------
    encoding : {"paper23", "standard"}
        ``"paper23"``: ``"marital-status=<level>"`` (7), ``"relationship=<level>"`` (6),
        ``"race=<level>"`` (5), ``"sex=<level>"`` (2), then ``"age"``,
        ``"education-num"``, ``"hours-per-week"`` (23 names).  ``"standard"``: the eight
        one-hot blocks (workclass, education, marital-status, occupation, relationship,
        race, sex, native-country; ``"<column>=unknown"`` last in the workclass,
        occupation and native-country blocks), then ``"age"``, ``"fnlwgt"``,
        ``"education-num"``, ``"capital-gain"``, ``"capital-loss"``,
        ``"hours-per-week"`` and ``"intercept"`` (109 names).  Levels appear in the
        order ``adult.names`` lists them.

    Returns
    -------
    list of str
        A new list on every call (callers may mutate it).

    Raises
    ------
    DataError
        If ``encoding`` is not one of the two names.

    Examples
    --------
    >>> from dpopt.datasets import adult_features
    >>> len(adult_features()), len(adult_features("standard"))
    (23, 109)
    """
    return list(_schema(_encoding(encoding)).feature_names)


def adult_schema(encoding: Encoding = "paper23") -> Schema:
    """The public :class:`~dpopt.modeling.schema.Schema` of an Adult encoding.

    ``"paper23"``: four :class:`Categorical` columns with the levels ``adult.names`` lists
    (one-hot, so every one-hot column is binary; their expanded names are
    :func:`adult_features`), then ``Numeric(0, 1, grid="1/90")`` (age),
    ``Numeric(0, 1, grid="1/16")`` (education-num) and ``Numeric(0, 1, grid="1/99")``
    (hours-per-week): the raw values are integers divided by the public maxima.  The
    common denominator is s = lcm(90, 16, 99) = 7920, the declared ℓ2 row bound √7.
    Categorical (rather than 20 separate Binary columns) also declares that each block
    holds at most one 1, which the grouped oracle's public size bound uses (at most
    8·7·6·3 = 1008 row patterns over the one-hot columns instead of 2²⁰).

    ``"standard"``: eight :class:`Categorical` blocks (102 columns), six
    ``Numeric(0, 1, grid=1/maximum)`` columns (fnlwgt on ``1/15000``, see the module
    notes), and ``intercept`` declared :class:`Binary` (always 1).  Its
    ``row_norm_bound(2)`` is √15 = :data:`STANDARD_X_BOUND`.

    Mapping the shipped rows onto either schema is the identity.

    Raises
    ------
    DataError
        If ``encoding`` is not one of the two names.
    """
    return _schema(_encoding(encoding))


@functools.cache
def _schema(spec: _Encoding) -> Schema:
    columns: list[tuple[str, Categorical | Numeric | Binary]] = [
        (name, Categorical(levels)) for name, levels in spec.categorical
    ]
    columns += [(name, Numeric(0, 1, grid=grid)) for name, _, grid in spec.numeric]
    if spec.intercept:
        columns.append((INTERCEPT, Binary()))
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


def _onehot(table: np.ndarray, column: str, levels: tuple[str, ...], filename: str) -> np.ndarray:
    """The one-hot block of ``column`` over the declared ``levels``; DataError on another level."""
    values = table[:, _COL[column]]
    onehot = values[:, None] == np.array(levels)[None, :]
    if not np.all(onehot.any(axis=1)):
        raise DataError(
            f"{filename}: column {column!r} has a level not listed in adult.names; "
            "the shipped file does not match the expected format"
        )
    return onehot.astype(np.float64)


def _scaled(table: np.ndarray, column: str, maximum: float, filename: str) -> np.ndarray:
    """``value / maximum`` clipped to [0, 1], as a column; the maximum is a public constant."""
    try:
        values = table[:, _COL[column]].astype(np.float64)
    except ValueError:
        raise DataError(f"{filename}: column {column!r} is not numeric") from None
    return np.clip(values / maximum, 0.0, 1.0)[:, None]


@functools.cache
def _encoded(filename: str, encoding: Encoding = "paper23") -> tuple[np.ndarray, np.ndarray]:
    """Encode the raw rows of ``filename`` as read-only (X, y); cached per process.

    ``paper23`` drops rows with ``?`` in a used column (the shipped files have none
    there); ``standard`` reads ``?`` in workclass, occupation and native-country as the
    level ``unknown`` and drops nothing.  X is on the schema's grid (mapping it is the
    identity).
    """
    spec = _encoding(encoding)
    table = np.array(_raw_table(filename), dtype=str)
    if table.ndim != 2 or table.shape[0] == 0:
        raise DataError(f"{filename} contains no rows; reinstall dpopt")
    if spec.drop_missing:
        keep = ~np.any(table[:, [_COL[c] for c in spec.used]] == _MISSING, axis=1)
        table = table[keep]
    for column in spec.unknown:
        j = _COL[column]
        table[:, j] = np.where(table[:, j] == _MISSING, UNKNOWN, table[:, j])

    blocks = [_onehot(table, column, levels, filename) for column, levels in spec.categorical]
    blocks += [_scaled(table, column, maximum, filename) for column, maximum, _ in spec.numeric]
    if spec.intercept:
        blocks.append(np.ones((table.shape[0], 1)))
    X = _schema(spec).map_rows(np.hstack(blocks))

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
    encoding: Encoding = "paper23",
) -> Dataset:
    """Load the UCI Adult data set with the ``paper23`` or the ``standard`` encoding.

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
    encoding : {"paper23", "standard"}
        The feature encoding (see the module notes).  Both keep every row of
        the files, so ``balanced``, ``n`` and ``seed`` select the same rows
        in either encoding.

    Returns
    -------
    Dataset
        ``paper23``: ``X`` of shape (rows, 23), declared ``x_bound = √7``
        (:data:`ADULT_X_BOUND`).  ``standard``: ``X`` of shape (rows, 109),
        declared ``x_bound = √15`` (:data:`STANDARD_X_BOUND`).  Columns are
        :func:`adult_features` of the encoding, labels ``y`` in {−1, +1} (+1 for
        ``>50K``), the bound is in the ℓ2 norm, ``y_bound = 1`` and the schema is
        :func:`adult_schema` of the encoding.  Rows keep the order of the file.

    Raises
    ------
    DataError
        If ``split`` or ``encoding`` is unknown, ``balanced=True`` is asked for
        the test split, ``n`` is not a positive integer or exceeds the rows
        available, the packaged file is missing or fails its SHA-256 check,
        or a categorical column holds a level ``adult.names`` does not list.

    Notes
    -----
    ``paper23``: one-hot marital-status (7 levels), relationship (6), race (5)
    and sex (2), levels in the order ``adult.names`` lists them (not taken
    from the data); then age / 90, education-num / 16 and
    hours-per-week / 99, each clipped to ``[0, 1]``.  The divisors are
    *public* maxima — Adult's documented and top-coded ranges — not maxima
    read off the data: a scale computed from the data would be a
    data-dependent bound, which dpopt's privacy rules forbid.  Every row thus
    has exactly four ones in the one-hot block and three numbers in
    ``[0, 1]``, so ``‖x‖₂ ≤ √(4 + 3) = √7``; this bound is a fact of the
    encoding, not of the data.  Rows with a missing value (``?``) in one of
    the seven columns used would be dropped; the shipped files have none
    there (``?`` occurs only in workclass, occupation and native-country),
    so all 32,561 train and 16,281 test rows are kept.

    ``standard``: all eight categorical columns one-hot (``?`` read as the
    level ``unknown``), the six numeric columns divided by public maxima and
    clipped to ``[0, 1]``, and an intercept column; ``‖x‖₂ ≤ √15`` by
    construction.  The module docstring gives each choice and its reason.

    Examples
    --------
    >>> from dpopt.datasets import load_adult
    >>> data = load_adult(balanced=True, seed=0)
    >>> data.n, data.n_features
    (15682, 23)
    >>> load_adult("test", encoding="standard").X.shape
    (16281, 109)
    """
    if split not in _FILES:
        raise DataError(f"unknown split {split!r}: use 'train' or 'test'")
    spec = _encoding(encoding)
    if balanced and split != "train":
        raise DataError(
            "balanced=True is only defined for the train split; load the test split unbalanced"
        )
    count = _check_count(n)
    filename = _FILES[split]
    X, y = _encoded(filename, encoding)
    idx = _rows(y, balanced=balanced, count=count, seed=seed, what=f"the {split} split", filename=filename)
    if idx is not None:
        X, y = X[idx], y[idx]
    return Dataset(X, y, x_bound=spec.x_bound, x_norm=2, y_bound=1.0, schema=_schema(spec))


def _rows(
    y: np.ndarray, *, balanced: bool, count: int | None, seed: int, what: str, filename: str
) -> np.ndarray | None:
    """The sorted row indices kept by balancing and subsampling, or None for all rows.

    Only the labels are read (balancing), exactly as documented in :func:`load_adult`.
    """
    if not balanced and count is None:
        return None
    rng = np.random.default_rng(seed)
    idx = np.arange(y.shape[0])
    if balanced:
        positives = idx[y > 0]
        negatives = idx[y < 0]
        if negatives.shape[0] < positives.shape[0]:
            raise DataError(f"{filename} has fewer '<=50K' than '>50K' rows; cannot balance")
        drawn = rng.choice(negatives, size=positives.shape[0], replace=False)
        idx = np.sort(np.concatenate([positives, drawn]))
    if count is not None:
        available = idx.shape[0]
        if count > available:
            where = "the balanced train split" if balanced else what
            raise DataError(f"n={count} exceeds the {available} rows of {where}; pass n <= {available}")
        idx = np.sort(rng.choice(idx, size=count, replace=False))
    return idx if idx.shape[0] != y.shape[0] else None


def adult_train_test(
    *,
    balanced_train: bool = False,
    n: int | None = None,
    seed: int = 0,
    encoding: Encoding = "paper23",
) -> tuple[Dataset, Dataset]:
    """The Adult train and test splits (the shipped ``adult.data`` / ``adult.test``), encoded alike.

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
    encoding : {"paper23", "standard"}
        The feature encoding of both splits (see :func:`load_adult`).

    Returns
    -------
    (Dataset, Dataset)
        ``(train, test)`` with the same columns, labels in {−1, +1},
        ``y_bound = 1`` and the encoding's ℓ2 ``x_bound``: 23 features and
        √7 for ``paper23``, 109 features and √15 for ``standard``.

    Raises
    ------
    DataError
        As :func:`load_adult`.

    Examples
    --------
    >>> from dpopt.datasets import adult_train_test
    >>> train, test = adult_train_test(encoding="standard")
    >>> train.n, test.n, train.n_features
    (32561, 16281, 109)
    """
    train = load_adult("train", balanced=balanced_train, n=n, seed=seed, encoding=encoding)
    test = load_adult("test", encoding=encoding)
    return train, test
