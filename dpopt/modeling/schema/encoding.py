"""The integer and table encodings a :class:`~dpopt.modeling.schema.Schema` implies: the exact
integer grid of every expanded column (:func:`build_columns`, ``A = s·X``), a table's column read
as numbers (:func:`column_numbers`) or as its expanded one-hot block (:func:`encode_column`), and
the entries a missing value reads as (:func:`missing_row`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema.specs import (
    Binary,
    Categorical,
    Fill,
    Intercept,
    Numeric,
    Spec,
    is_missing,
    same_value,
)

#: largest |s·x| a declaration may imply (integers and their float quotients stay exact)
MAX_INTEGER = 2**53
#: the policies of :meth:`Schema.encode` for a categorical value outside the declared categories
UNSEEN_POLICIES = ("zero", "error")


def missing_row(spec: Spec) -> np.ndarray | None:
    """The expanded entries (in X's units) a missing entry of a column declared ``spec`` reads as;
    None without a policy (an :class:`Intercept` is 1 whatever the input holds)."""
    if isinstance(spec, Intercept):
        return np.ones(1)
    if spec.missing is None:
        return None
    if isinstance(spec, Numeric):
        value = spec.fill_value
        assert value is not None
        x = (value - spec.low) / (spec.high - spec.low) if spec.unit else value
        return np.array([float(x)] + [1.0] * spec.indicator)
    if isinstance(spec, Binary):
        return np.array([float(spec.fill_value or 0)] + [1.0] * spec.indicator)
    row = np.zeros(spec.width)
    if isinstance(spec.missing, Fill):
        row[next(i for i, c in enumerate(spec.categories) if same_value(spec.missing.value, c))] = 1.0
    elif spec.missing == "indicator":
        row[-1] = 1.0
    return row


def column_numbers(name: str, kind: str, col: Any) -> np.ndarray:
    """A 1-D column as float64 (a copy), every missing entry (None, NaN, pandas' NA) as NaN.

    Raises DataError (naming the column, no value) for an entry that is not a number.
    """
    values = np.asarray(col)
    try:
        return np.array(values, dtype=np.float64).reshape(-1)  # None reads as NaN
    except (TypeError, ValueError):
        pass
    out = np.empty(values.size, dtype=np.float64)
    for i, v in enumerate(values.reshape(-1).tolist()):
        if is_missing(v):
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            hint = ("; dp.Binary() reads 0/1 numbers: declare a column of words such as yes/no as "
                    "dp.Categorical([...its values...])" if kind == "binary" else "")
            raise DataError(f"column {name!r} is declared {kind} but is not numeric (an entry is not a number)"
                            f"{hint}") from None
    return out


@dataclass(frozen=True)
class Columns:
    """Per expanded column: exact integer grid a = offset + k·step, k = 0..steps (times s)."""

    offset: np.ndarray  # int64: s·low
    step: np.ndarray  # int64: s·grid
    steps: np.ndarray  # int64: K
    low: np.ndarray  # float64
    grid: np.ndarray  # float64
    high: np.ndarray  # float64: the declared top (≥ the largest grid point)
    binary: np.ndarray  # bool: declared 0/1
    blocks: tuple[np.ndarray, ...]  # index arrays of the one-hot blocks
    free: np.ndarray  # indices of the columns outside one-hot blocks
    owner: tuple[str, ...]  # the declared column each expanded column belongs to
    fills: tuple[tuple[str, int, int, np.ndarray | None], ...]  # (name, start, stop, missing row or None)


def build_columns(items: Sequence[tuple[str, Spec]]) -> tuple[int, Columns]:
    """The common denominator s of the declarations and their expanded columns' integer grids.

    Raises ModelError when s·|x| could exceed 2⁵³.
    """
    lows: list[Fraction] = []
    grids: list[Fraction] = []
    steps: list[int] = []
    highs: list[Fraction] = []
    binary: list[bool] = []
    owner: list[str] = []
    blocks: list[np.ndarray] = []
    fills: list[tuple[str, int, int, np.ndarray | None]] = []

    def column(low: Fraction, grid: Fraction, k: int, high: Fraction, is_binary: bool) -> None:
        lows.append(low)
        grids.append(grid)
        steps.append(k)
        highs.append(high)
        binary.append(is_binary)

    for name, spec in items:
        start = len(lows)
        if isinstance(spec, Numeric):
            column(spec.value_low, spec.value_grid, spec.steps, spec.value_high, False)
        elif isinstance(spec, Intercept):  # the single grid point 1: mapping sets it to 1
            column(Fraction(1), Fraction(1), 0, Fraction(1), True)
        else:
            for _ in range(spec.width - spec.indicator):
                column(Fraction(0), Fraction(1), 1, Fraction(1), True)
        if spec.indicator:  # a public 0/1 column; a categorical's is a member of its block
            column(Fraction(0), Fraction(1), 1, Fraction(1), True)
        if isinstance(spec, Categorical):
            blocks.append(np.arange(start, len(lows)))
        owner += [name] * (len(lows) - start)
        fills.append((name, start, len(lows), missing_row(spec)))
    s = math.lcm(*(f.denominator for f in lows + grids))
    offset = [int(lo * s) for lo in lows]
    step = [int(g * s) for g in grids]
    top = max(max(abs(o), abs(o + k * st)) for o, k, st in zip(offset, steps, step, strict=True))
    if top > MAX_INTEGER:
        raise ModelError("the declared grids need a common denominator s with s·|x| above 2^53; "
                         "declare coarser grids or grids with a common denominator")
    in_block = np.zeros(len(lows), dtype=bool)
    for b in blocks:
        in_block[b] = True
    cols = Columns(
        offset=np.array(offset, dtype=np.int64), step=np.array(step, dtype=np.int64),
        steps=np.array(steps, dtype=np.int64),
        low=np.array([float(v) for v in lows]), grid=np.array([float(v) for v in grids]),
        high=np.array([float(v) for v in highs]), binary=np.array(binary, dtype=bool),
        blocks=tuple(blocks), free=np.flatnonzero(~in_block), owner=tuple(owner), fills=tuple(fills),
    )
    return s, cols


def encode_column(name: str, spec: Spec, col: np.ndarray, unseen: str = "zero") -> np.ndarray:
    """One declared column's expanded block; a missing entry is NaN across the block."""
    if isinstance(spec, Categorical):
        values = col.tolist()
        hits = [np.array([same_value(v, cat) for v in values], dtype=bool) for cat in spec.categories]
        block = np.column_stack(hits)
        found = np.asarray(block.any(axis=1), dtype=bool)
        gaps = np.array([not f and is_missing(v) for v, f in zip(values, found.tolist(), strict=True)],
                        dtype=np.bool_)
        if unseen == "error" and not (found | gaps).all():
            raise DataError(f"column {name!r} holds a value that is not one of its declared categories "
                            "(unseen='error' is a check of your own table, not private; a private run "
                            "uses unseen='zero', which maps it to the all-zero block)")
        out = block.astype(np.float64)
    else:
        raw = column_numbers(name, spec.kind, col)
        gaps = np.isnan(raw)
        out = (spec.to_values(raw) if isinstance(spec, Numeric) else raw)[:, None]
    if spec.indicator:
        out = np.hstack([out, np.zeros((out.shape[0], 1))])
    out[gaps] = np.nan
    return out
