"""How a table fits its declaration, counted per column (:meth:`Schema.check`): **reads the data,
NOT private** — a tool for the data's curator, never part of a private run."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.modeling.schema.specs import Categorical, Numeric, Spec, is_missing, same_value
from dpopt.modeling.schema.suggest import did_you_mean


@dataclass(frozen=True)
class ColumnCheck:
    """One declared column of a table against its declaration (:meth:`Schema.check`; **NOT private**).

    Attributes
    ----------
    name, spec : str
        The column and its declaration (``repr``).
    present : bool
        Whether the table has the column (False: ``suggestion`` lists close names).
    missing : int
        Missing entries (NaN, None, pandas' NA).
    clipped : int
        Entries outside the declared range (the mapping clips them onto it).
    off_grid : int
        Entries in range but off the declared grid (rounded to the nearest grid point).
    unseen : int
        Categorical entries that are not declared categories (the all-zero block).
    not_numeric : int
        Entries of a numeric or 0/1 column that are not finite numbers (refused).
    """

    name: str
    spec: str
    present: bool = True
    missing: int = 0
    clipped: int = 0
    off_grid: int = 0
    unseen: int = 0
    not_numeric: int = 0
    missing_policy: bool = True
    suggestion: str = ""

    @property
    def refused(self) -> str:
        """Why :meth:`Dataset.from_frame` refuses this column, or ``""``."""
        if not self.present:
            return f"the table has no column {self.name!r}{self.suggestion}"
        if self.not_numeric:
            return f"column {self.name!r} holds entries that are not finite numbers"
        if self.missing and not self.missing_policy:
            return f"column {self.name!r} has missing entries and declares no missing-value policy"
        return ""


@dataclass(frozen=True)
class SchemaCheck:
    """How a table fits a schema: exact counts per column (:meth:`Schema.check`).

    **NOT PRIVATE**: every count is read from the data, without noise.  It is a tool for the
    data's curator (is my declaration right? what will be clipped, rounded, refused?); never
    publish it or use it to choose anything in a private run.  Nothing is charged.
    """

    n: int
    columns: tuple[ColumnCheck, ...]

    def __getitem__(self, name: str) -> ColumnCheck:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"no declared column {name!r}{did_you_mean(name, (c.name for c in self.columns))}")

    def __iter__(self) -> Iterator[ColumnCheck]:
        return iter(self.columns)

    @property
    def refusals(self) -> list[str]:
        """What :meth:`Dataset.from_frame` would refuse, one line per column (empty: it builds)."""
        return [c.refused for c in self.columns if c.refused]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (with ``"private": False``)."""
        return {"private": False, "n": self.n,
                "columns": [{**{k: getattr(c, k) for k in ColumnCheck.__dataclass_fields__}, "refused": c.refused}
                            for c in self.columns]}

    def summary(self) -> str:
        """A readable table of the counts, headed NOT PRIVATE."""
        head = ("NOT PRIVATE: exact counts read from the data (for its curator; never publish them)\n"
                f"{'column':<20} {'missing':>8} {'clipped':>8} {'off-grid':>8} {'unseen':>8} {'not-num':>8}  refused")
        lines = [head]
        for c in self.columns:
            if not c.present:
                lines.append(f"{c.name:<20} {'absent':>8}{'':>36}  {c.refused}")
                continue
            lines.append(f"{c.name:<20} {c.missing:>8} {c.clipped:>8} {c.off_grid:>8} {c.unseen:>8} "
                         f"{c.not_numeric:>8}  {c.refused}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"SchemaCheck(NOT PRIVATE: counts read from the data; n={self.n}, columns={len(self.columns)}, "
                f"refusals={len(self.refusals)})")


def check_column(name: str, spec: Spec, col: np.ndarray) -> ColumnCheck:
    """The counts of one present column (Schema.check; reads the values)."""
    policy = getattr(spec, "missing", None) is not None
    if isinstance(spec, Categorical):
        values = col.tolist()
        found = [any(same_value(v, c) for c in spec.categories) for v in values]
        absent = [not f and is_missing(v) for v, f in zip(values, found, strict=True)]
        unseen = sum(1 for f, g in zip(found, absent, strict=True) if not f and not g)
        return ColumnCheck(name, repr(spec), missing=sum(absent), unseen=unseen, missing_policy=policy)
    numbers = np.full(col.shape[0], np.nan)
    bad = np.zeros(col.shape[0], dtype=bool)
    gaps = np.zeros(col.shape[0], dtype=bool)
    for i, v in enumerate(col.tolist()):
        if is_missing(v):
            gaps[i] = True
            continue
        try:
            numbers[i] = float(v)
        except (TypeError, ValueError):
            bad[i] = True
    bad |= np.isinf(numbers)
    ok = np.isfinite(numbers)
    low, high, grid = (float(spec.low), float(spec.high), float(spec.grid)) if isinstance(spec, Numeric) \
        else (0.0, 1.0, 1.0)
    clipped = ok & ((numbers < low) | (numbers > high))
    index = (np.where(ok, numbers, low) - low) / grid
    off = ok & ~clipped & (np.abs(index - np.rint(index)) > 1e-9 * np.maximum(1.0, np.abs(index)))
    return ColumnCheck(name, repr(spec), missing=int(gaps.sum()), clipped=int(clipped.sum()), off_grid=int(off.sum()),
                       not_numeric=int(bad.sum()), missing_policy=policy)
