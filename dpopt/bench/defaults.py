"""How DP-GD's defaults were chosen: each setting varied alone on public tables other than Adult.

``dpopt bench defaults --epsilons 0.1,1 --seeds 10 --out DIR``

The defaults of :class:`dpopt.DPGradientDescent` (the private preconditioner's share of ρ and
ridge, T, the adaptive clip's quantile and rate, the suffix average) are public constants: they
cost no budget only if they were fixed without looking at the data they are used on.  They
were chosen on the tables below — none of them Adult, on which ``dpopt bench linear`` then
measures them — and this benchmark reruns that comparison: every candidate changes **one**
setting of the default, and a setting is kept when no change beats it by more than the seed
noise on average over the tables and ε.

Tables (binary; train/test 75 % / 25 %, stratified, fixed ``random_state``; every column scaled
onto [−½, ½] by the training split's ranges as in ``dpopt bench tables``, plus an intercept
column; x_bound = √(d/4 + 1); logistic loss over the ℓ2 ball of radius 10, δ = 1/n²):

``synthetic-a`` / ``-b`` / ``-c``
    ``sklearn.datasets.make_classification`` with n = 43,000 (32,250 training rows):
    a: d = 100, 20 informative, 15 % flipped labels, 76 % majority class, class_sep 0.7;
    b: d = 30, 8 informative, 5 % flipped, 60 % majority, class_sep 1.0;
    c: d = 60, 30 informative, 20 % flipped, 85 % majority, class_sep 1.5, 3 clusters per class.
``breast-cancer``, ``digits-parity``
    scikit-learn's bundled tables (``load_breast_cancer``; ``load_digits`` with label digit ≥ 5).
    They have 426 and 1,347 training rows, so they run at the ε that gives the same n·ε as a
    32,250-row table at the ``--epsilons`` (a privacy regime of the same difficulty).

Reading the output: per candidate, the mean over tables and ε of (its accuracy − the default's
accuracy), with its standard error over the table × ε cells; the default is kept when no
candidate's mean is above two standard errors.  Seeds make the noise reproducible, not secure.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import positive_floats, positive_int
from dpopt.bench.output import write_outputs
from dpopt.bench.tables import unit_scaled
from dpopt.progress import counted

__all__ = ["CANDIDATES", "TABLES", "main"]

#: the n·ε reference: the synthetic tables' training rows
REFERENCE_ROWS = 32_250
#: the candidates: the default, then one setting changed at a time (DPGradientDescent keywords)
CANDIDATES: dict[str, dict[str, Any]] = {
    "default": {},
    "steps=25": {"steps": 25},
    "steps=100": {"steps": 100},
    "precondition_share=0.02": {"precondition_share": 0.02},
    "precondition_share=0.2": {"precondition_share": 0.2},
    "precondition_ridge=0.5": {"precondition_ridge": 0.5},
    "precondition_ridge=2": {"precondition_ridge": 2.0},
    "clip_quantile=0.7": {"clip_quantile": 0.7},
    "clip_quantile=0.9": {"clip_quantile": 0.9},
    "clip_rate=0.2": {"clip_rate": 0.2},
    "output=average": {"output": "average"},
    "precondition=False": {"precondition": False},
}
#: make_classification settings of the synthetic tables
SYNTHETIC: dict[str, dict[str, Any]] = {
    "synthetic-a": {"n_features": 100, "n_informative": 20, "n_redundant": 10, "flip_y": 0.15, "weights": [0.76],
                    "class_sep": 0.7, "random_state": 1},
    "synthetic-b": {"n_features": 30, "n_informative": 8, "n_redundant": 4, "flip_y": 0.05, "weights": [0.6],
                    "class_sep": 1.0, "random_state": 2},
    "synthetic-c": {"n_features": 60, "n_informative": 30, "n_redundant": 0, "flip_y": 0.2, "weights": [0.85],
                    "class_sep": 1.5, "n_clusters_per_class": 3, "random_state": 3},
}
TABLES = (*SYNTHETIC, "breast-cancer", "digits-parity")


@dataclass
class Run:
    table: str
    candidate: str
    epsilon: float
    seed: int
    accuracy: float


@dataclass(frozen=True)
class Binary:
    """A binary table with an intercept column, labels ±1 and its declared row bound."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    x_bound: float


def load(name: str, samples: int = 43_000) -> Binary:
    """The table ``name`` (module docstring); ``samples`` rows for a synthetic one (tests use fewer)."""
    from sklearn import datasets

    if name in SYNTHETIC:
        X, y = datasets.make_classification(n_samples=samples, **SYNTHETIC[name])
    elif name == "breast-cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "digits-parity":
        X, y = datasets.load_digits(return_X_y=True)
        y = (y >= 5).astype(int)
    else:
        raise KeyError(name)
    X_tr, y_tr, X_te, y_te = unit_scaled(X, y, stratify=True)

    def ones(Z: np.ndarray) -> np.ndarray:
        return np.hstack([Z, np.ones((Z.shape[0], 1))])

    return Binary(ones(X_tr), np.where(y_tr > 0, 1.0, -1.0), ones(X_te), np.where(y_te > 0, 1.0, -1.0),
                  math.sqrt(X_tr.shape[1] / 4 + 1))


def _accuracy(table: Binary, kw: dict[str, Any], eps: float, seed: int) -> float:
    data = dp.Dataset(table.X_train, table.y_train, x_bound=table.x_bound)
    th = dp.Variable(table.X_train.shape[1])
    problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 10.0))
    n = table.X_train.shape[0]
    theta = dp.DPGradientDescent(eps, 1.0 / n**2, ledger=dp.Ledger(), **kw).run(problem, seed=seed).theta
    return float(np.mean(np.where(table.X_test @ theta > 0, 1.0, -1.0) == table.y_test))


def summarize(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Per candidate: the mean and standard error over (table, ε) cells of its accuracy minus the default's."""
    cells: dict[tuple[str, str, float], list[float]] = {}
    for r in runs:
        cells.setdefault((r.candidate, r.table, r.epsilon), []).append(r.accuracy)
    base = {(t, e): statistics.fmean(v) for (c, t, e), v in cells.items() if c == "default"}
    out = []
    for name in dict.fromkeys(c for c, _, _ in cells):
        diffs = [statistics.fmean(v) - base[(t, e)] for (c, t, e), v in cells.items() if c == name and (t, e) in base]
        se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
        out.append({"candidate": name, "mean_difference": statistics.fmean(diffs), "standard_error": se,
                    "cells": len(diffs), "better": statistics.fmean(diffs) > 2 * se and name != "default"})
    return out


def _table(summary: Sequence[dict[str, Any]]) -> str:
    lines = [f"{'candidate':<28} {'accuracy − default':>19} {'± se':>8}  cells  better?"]
    for s in summary:
        lines.append(f"{s['candidate']:<28} {s['mean_difference']:>+19.4f} {s['standard_error']:>8.4f}  "
                     f"{s['cells']:>5}  {'yes' if s['better'] else 'no'}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench defaults", description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", type=positive_floats, default=[0.1, 1.0],
                   help="ε of the 32,250-row tables (the small ones: the same n·ε)")
    p.add_argument("--seeds", type=positive_int, default=10)
    p.add_argument("--tables", type=lambda s: [t for t in s.split(",") if t], default=list(TABLES))
    p.add_argument("--candidates", type=lambda s: [c for c in s.split(",") if c], default=list(CANDIDATES))
    p.add_argument("--samples", type=positive_int, default=43_000, help="rows of each synthetic table")
    p.add_argument("--out", type=Path, default=Path("bench-defaults"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run every candidate on every table, ε and seed; write runs.csv, summary.json and table.txt."""
    args = build_parser().parse_args(argv)
    unknown = [c for c in args.candidates if c not in CANDIDATES] + [t for t in args.tables if t not in TABLES]
    if unknown:
        print(f"error: unknown candidate(s) or table(s) {unknown}")
        return 2
    from dpopt._threads import blas_threads

    runs: list[Run] = []
    with blas_threads(1):
        for name in counted(args.tables, "defaults: tables"):
            table = load(name, args.samples)
            scale = REFERENCE_ROWS / table.X_train.shape[0] if name not in SYNTHETIC else 1.0
            for candidate in dict.fromkeys(["default", *args.candidates]):
                for eps in args.epsilons:
                    accs = [_accuracy(table, CANDIDATES[candidate], eps * scale, seed) for seed in range(args.seeds)]
                    runs.extend(Run(name, candidate, eps * scale, s, a) for s, a in enumerate(accs))
                    print(f"{name:<14} ε={eps * scale:<8.3g} {candidate:<28} {statistics.fmean(accs):.4f}", flush=True)
    summary = summarize(runs)
    text = _table(summary)
    write_outputs(args.out, Run, runs, {"tables": args.tables, "epsilons": args.epsilons, "seeds": args.seeds,
                                        "candidates": summary}, text)
    print(text)
    print(f"wrote {args.out}/runs.csv, summary.json, table.txt")
    return 0
