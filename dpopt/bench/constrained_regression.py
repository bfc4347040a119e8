"""Constrained regression in real units: test R² of every dpopt mechanism on non-negative slopes, per ε.

``dpopt bench constrained-regression --epsilons 0.5,1,2 --seeds 5 --out DIR``

The table is generated here (nothing is downloaded): house prices in dollars from 26 encoded
features — five numeric columns in their own units (floor area in m², rooms, bathrooms,
lot in m², year built), a 12-way district, eight binary amenities and the intercept — with
non-negative slopes on every feature (a few of them zero), noise of $40,000, and prices clipped
to the declared range [$0, $1,500,000].  30,000 training rows and 10,000 test rows.

Each candidate is a :class:`dpopt.sklearn.DPRidge` (or :class:`~dpopt.sklearn.DPLasso`) fitted with
``positive=True`` on the declared schema (numeric columns scaled onto [0, 1] by their declared
bounds) and ``label_spec=dp.Numeric(0, 1_500_000)``; its test R² is computed in dollars.  The
``default`` row is ``mechanism="auto"``.  Baselines measured in the same run: scikit-learn's
non-private ``LinearRegression(positive=True)`` on the same encoded columns, and AdaSSP without the
constraint (it takes none; its negative slopes are what the constraint prevents).  Seeds make the
noise reproducible, not secure.

Reading the output: R² mean ± standard deviation over the seeds per candidate and ε; the line
below the table compares the default with the best dpopt mechanism at ε = 1.
"""

from __future__ import annotations

import argparse
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import positive_floats, positive_int
from dpopt.bench.output import write_outputs
from dpopt.progress import counted

__all__ = ["CANDIDATES", "main", "make_table"]

#: candidate name -> (estimator class name, keyword arguments); all but "adassp (unconstrained)" are positive
CANDIDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "default (auto)": ("DPRidge", {"positive": True}),
    "dp-gd": ("DPRidge", {"positive": True, "mechanism": "dp-gd"}),
    "objective-perturbation": ("DPRidge", {"positive": True, "mechanism": "objective-perturbation"}),
    "output-perturbation": ("DPRidge", {"positive": True, "mechanism": "output-perturbation"}),
    "dp-sgd": ("DPRidge", {"positive": True, "mechanism": "dp-sgd"}),
    "lasso frank-wolfe": ("DPLasso", {"positive": True}),
    "adassp (unconstrained)": ("DPRidge", {"mechanism": "adassp"}),
}
#: numeric columns: (name, low, high, grid, slope in $ per unit)
NUMERIC = (("area_m2", 30.0, 300.0, 1.0, 2_500.0), ("rooms", 1.0, 8.0, 1.0, 8_000.0),
           ("bathrooms", 1.0, 4.0, 1.0, 15_000.0), ("lot_m2", 0.0, 2_000.0, 10.0, 40.0),
           ("year_built", 1900.0, 2025.0, 1.0, 600.0))
#: the district premium in $ (12 districts, non-negative)
DISTRICTS = (0.0, 20_000.0, 35_000.0, 50_000.0, 0.0, 80_000.0, 120_000.0, 10_000.0, 65_000.0, 150_000.0,
             25_000.0, 0.0)
#: the binary amenities' premium in $ (non-negative; two are worth nothing)
AMENITIES = (("garage", 25_000.0), ("garden", 15_000.0), ("pool", 40_000.0), ("balcony", 8_000.0),
             ("renovated", 30_000.0), ("basement", 0.0), ("elevator", 12_000.0), ("solar", 0.0))
PRICE = (0.0, 1_500_000.0)
BASE = -1_150_000.0  # the intercept (year_built's slope makes it negative): never constrained
NOISE = 40_000.0


@dataclass
class Run:
    candidate: str
    epsilon: float
    seed: int
    r2: float


def make_table(n: int, seed: int = 0) -> tuple[Any, np.ndarray, Any]:
    """``(frame, price in $, schema)``: n rows of the generated table (module docstring)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {}
    price = np.full(n, BASE)
    for name, low, high, grid, slope in NUMERIC:
        v = np.round(rng.uniform(low, high, n) / grid) * grid
        cols[name] = v
        price += slope * v
    district = rng.integers(0, len(DISTRICTS), n)
    cols["district"] = np.array([f"d{k}" for k in district], dtype=object)
    price += np.asarray(DISTRICTS)[district]
    for name, value in AMENITIES:
        flag = rng.random(n) < 0.35
        cols[name] = flag.astype(int)
        price += value * flag
    price = np.clip(price + NOISE * rng.standard_normal(n), *PRICE)
    schema = dp.Schema({
        **{name: dp.Numeric(low, high, grid=grid, unit=True) for name, low, high, grid, _ in NUMERIC},
        "district": dp.Categorical([f"d{k}" for k in range(len(DISTRICTS))]),
        **{name: dp.Binary() for name, _ in AMENITIES},
    })
    return pd.DataFrame(cols), price, schema


def _estimator(name: str, schema: Any, epsilon: float, seed: int) -> Any:
    from dpopt import sklearn as dps

    cls_name, kw = CANDIDATES[name]
    cls = getattr(dps, cls_name)
    return cls(epsilon, schema=schema, label_spec=dp.Numeric(*PRICE, grid=1.0), random_state=seed,
               ledger=dp.Ledger(), **kw)


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    """The coefficient of determination on the test rows."""
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - np.mean(y)) ** 2))


def summarize(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Per candidate and ε: mean, standard deviation and count of R² over the seeds."""
    cells: dict[tuple[str, float], list[float]] = {}
    for r in runs:
        cells.setdefault((r.candidate, r.epsilon), []).append(r.r2)
    return [{"candidate": c, "epsilon": e, "r2_mean": statistics.fmean(v),
             "r2_sd": statistics.stdev(v) if len(v) > 1 else 0.0, "seeds": len(v)} for (c, e), v in cells.items()]


def verdict(summary: Sequence[dict[str, Any]], epsilon: float = 1.0) -> str:
    """The default's R² at ``epsilon`` against the best dpopt mechanism's (constrained candidates)."""
    at = {s["candidate"]: s["r2_mean"] for s in summary if s["epsilon"] == epsilon and s["candidate"] in CANDIDATES
          and CANDIDATES[s["candidate"]][1].get("positive")}
    if "default (auto)" not in at:
        return f"(no default run at ε = {epsilon:g})"
    best = max(at, key=at.__getitem__)
    gap = at[best] - at["default (auto)"]
    return (f"ε = {epsilon:g}: default R² {at['default (auto)']:.4f}, best {best} {at[best]:.4f} "
            f"(gap {gap:.4f}, {'within' if gap <= 0.05 else 'NOT within'} 0.05)")


def render(summary: Sequence[dict[str, Any]], epsilons: Sequence[float], baseline: float) -> str:
    """The R² table: one row per candidate, one column per ε (mean ± sd)."""
    head = f"{'candidate':<26}" + "".join(f"{'ε=' + format(e, 'g'):>18}" for e in epsilons)
    lines = [head]
    for name in CANDIDATES:
        cells = {s["epsilon"]: s for s in summary if s["candidate"] == name}
        if not cells:
            continue
        lines.append(f"{name:<26}" + "".join(
            f"{cells[e]['r2_mean']:>10.4f} ± {cells[e]['r2_sd']:<5.3f}" if e in cells else f"{'—':>18}"
            for e in epsilons))
    lines.append(f"{'non-private (sklearn)':<26}{baseline:>10.4f}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench constrained-regression", description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", type=positive_floats, default=[0.5, 1.0, 2.0])
    p.add_argument("--seeds", type=positive_int, default=5)
    p.add_argument("--train", type=positive_int, default=30_000, help="training rows")
    p.add_argument("--test", type=positive_int, default=10_000, help="test rows")
    p.add_argument("--candidates", type=lambda s: [c for c in s.split(",") if c], default=list(CANDIDATES))
    p.add_argument("--out", type=Path, default=Path("bench-constrained-regression"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Fit every candidate at every ε and seed; write runs.csv, summary.json and table.txt."""
    args = build_parser().parse_args(argv)
    unknown = [c for c in args.candidates if c not in CANDIDATES]
    if unknown:
        print(f"error: unknown candidate(s) {unknown}; known: {', '.join(CANDIDATES)}")
        return 2
    from sklearn.linear_model import LinearRegression

    from dpopt._threads import blas_threads
    from dpopt.sklearn import SchemaEncoder

    frame, price, schema = make_table(args.train + args.test, seed=0)
    train, test = frame.iloc[: args.train], frame.iloc[args.train:]
    y_train, y_test = price[: args.train], price[args.train:]
    encoder = SchemaEncoder(schema)
    baseline = r2(y_test, LinearRegression(positive=True).fit(encoder.fit_transform(train), y_train).predict(
        encoder.transform(test)))
    runs: list[Run] = []
    with blas_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weak-guarantee and spending warnings of many seeded runs
        for name in counted(list(dict.fromkeys(["default (auto)", *args.candidates])), "constrained-regression"):
            for eps in args.epsilons:
                scores = [r2(y_test, _estimator(name, schema, eps, seed).fit(train, y_train).predict(test))
                          for seed in range(args.seeds)]
                runs.extend(Run(name, eps, s, v) for s, v in enumerate(scores))
                print(f"{name:<26} ε={eps:<6g} R² {statistics.fmean(scores):.4f}", flush=True)
    summary = summarize(runs)
    text = render(summary, args.epsilons, baseline) + "\n" + verdict(summary)
    write_outputs(args.out, Run, runs, {"epsilons": args.epsilons, "seeds": args.seeds, "train": args.train,
                                        "test": args.test, "non_private_r2": baseline, "cells": summary}, text)
    print(text)
    print(f"wrote {args.out}/runs.csv, summary.json, table.txt")
    return 0
