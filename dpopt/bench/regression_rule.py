"""How DPRidge's automatic rule was fixed: AdaSSP against DP-GD on regression tables no report uses.

``dpopt bench regression-rule --epsilons 0.05,0.1,0.25,0.5,1,2,4 --seeds 3 --out DIR``

:class:`dpopt.sklearn.DPRidge`'s ``mechanism="auto"`` chooses between AdaSSP and preconditioned
DP-GD from public facts only, by the statistic s = n·√ρ/(d·B) (:func:`dpopt.sklearn.linear.regression_rule`:
n training rows, ρ = zcdp_rho(ε, δ), d design columns with the intercept, B the declared ℓ2 row
bound).  Its threshold is a public constant, and so are AdaSSP's own rules read from n·ε (the
share of ε on the label's mean, :func:`dpopt.mechanisms.adassp.mean_share`, and the factor on
its ridge threshold, :func:`~dpopt.mechanisms.adassp.ridge_scale`); all were fixed on these
tables, which neither ``dpopt bench tables`` (diabetes, Adult's hours per week, the generated
regression table) nor any reported figure uses.  This benchmark reruns the comparison.  Per
table and ε it prints both mechanisms' test R² (mean over seeds), s, the rule's choice and its
regret (the better mechanism's R² minus the chosen one's).

Tables (train/test 75 % / 25 %, fixed ``random_state``; δ = 1/n²; DPRidge defaults otherwise):

``adult-age``
    The shipped UCI Adult training and test files, standard encoding
    (:func:`dpopt.bench.tables.adult_label_split`), with ``age`` (declared [0, 90]) taken out of
    the features as the label, in years; the other 108 columns (one-hot categories, scaled
    numerics, the encoding's own intercept) keep the encoding's public row bound √15.  It
    shares Adult's rows with ``bench tables``' ``adult-hours`` (whose label, hours per week, is
    one of its features here), not its label.
``friedman1`` / ``friedman2``
    ``sklearn.datasets.make_friedman1`` (n = 5,000, d = 10, noise 1; label declared [−5, 35])
    and ``make_friedman2`` (n = 3,000, d = 4, noise 50; label declared [−200, 1800]).
``gen-small`` / ``gen-mid`` / ``gen-wide`` / ``gen-large``
    ``sklearn.datasets.make_regression`` with (n, d, noise, bias) = (1,000, 5, 10, 50),
    (3,000, 15, 20, 20), (5,000, 50, 30, 0), (40,000, 20, 50, −100), half the columns
    informative; each label declared on bias ± 5 standard deviations of its construction.

The non-Adult tables' features are scaled onto [−½, ½] by the training split's ranges (standing
in for declared public ranges, as in ``dpopt bench tables``) with x_bound = √d/2.  Seeds make the
noise reproducible, not secure.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpopt.bench.arguments import parse, positive_floats, positive_int
from dpopt.bench.output import write_outputs
from dpopt.progress import counted

__all__ = ["MECHANISMS", "TABLES", "RuleRun", "build_parser", "load", "main"]

#: the two mechanisms the rule chooses between (DPRidge's names)
MECHANISMS = ("adassp", "dp-gd")
#: make_regression tables: (n, d, noise, bias)
GENERATED: dict[str, tuple[int, int, float, float]] = {
    "gen-small": (1000, 5, 10.0, 50.0), "gen-mid": (3000, 15, 20.0, 20.0),
    "gen-wide": (5000, 50, 30.0, 0.0), "gen-large": (40000, 20, 50.0, -100.0),
}
TABLES: tuple[str, ...] = ("adult-age", "friedman1", "friedman2", *GENERATED)
RANDOM_STATE = 1


@dataclass
class RuleRun:
    """One fit (a row of runs.csv)."""

    table: str
    mechanism: str
    epsilon: float
    seed: int
    r2: float


@dataclass(frozen=True)
class _Table:
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    x_bound: float
    fit_intercept: bool
    label: tuple[float, float]


def _adult(column: str, top: float) -> _Table:
    from dpopt.bench.tables import adult_label_split
    from dpopt.datasets import STANDARD_X_BOUND

    X_tr, y_tr, X_te, y_te = adult_label_split(column, top)
    return _Table(X_tr, y_tr, X_te, y_te, float(STANDARD_X_BOUND), False, (0.0, top))


def load(name: str) -> _Table:
    """The table ``name`` (one of :data:`TABLES`), split and declared as the module docstring says."""
    from sklearn import datasets

    from dpopt.bench.tables import unit_scaled

    if name == "adult-age":
        return _adult("age", 90.0)
    if name == "friedman1":
        X, y = datasets.make_friedman1(n_samples=5000, n_features=10, noise=1.0, random_state=RANDOM_STATE)
        label = (-5.0, 35.0)
    elif name == "friedman2":
        X, y = datasets.make_friedman2(n_samples=3000, noise=50.0, random_state=RANDOM_STATE)
        label = (-200.0, 1800.0)
    else:
        n, d, noise, bias = GENERATED[name]
        X, y = datasets.make_regression(n_samples=n, n_features=d, n_informative=max(2, d // 2), noise=noise,
                                        bias=bias, random_state=RANDOM_STATE)
        spread = float(np.std(y))
        label = (math.floor(bias - 5 * spread), math.ceil(bias + 5 * spread))
    X_tr, y_tr, X_te, y_te = unit_scaled(np.asarray(X, dtype=np.float64), np.asarray(y), stratify=False)
    return _Table(X_tr, y_tr.astype(np.float64), X_te, y_te.astype(np.float64), math.sqrt(X_tr.shape[1]) / 2,
                  True, label)


def _r2(y: np.ndarray, predicted: np.ndarray) -> float:
    return 1.0 - float(np.sum((y - predicted) ** 2)) / float(np.sum((y - y.mean()) ** 2))


def _fit(table: _Table, mechanism: str, epsilon: float, seed: int) -> tuple[float, Any]:
    import dpopt as dp
    from dpopt.sklearn import DPRidge

    low, high = table.label
    est = DPRidge(epsilon, mechanism=mechanism, label_spec=dp.Numeric(low, high, grid=1), x_bound=table.x_bound,
                  fit_intercept=table.fit_intercept, random_state=seed, ledger=dp.Ledger())
    est.fit(table.X_train, table.y_train)
    return _r2(table.y_test, est.predict(table.X_test)), est


def _statistic(table: _Table, epsilon: float) -> tuple[float, str]:
    """s and the rule's choice, from the table's public shape and declarations."""
    from dpopt.privacy.zcdp import zcdp_rho
    from dpopt.sklearn.linear import regression_rule

    n, d = table.X_train.shape
    d += 1 if table.fit_intercept else 0
    bound = math.hypot(table.x_bound, 1.0) if table.fit_intercept else table.x_bound
    s = n * math.sqrt(zcdp_rho(epsilon, 1.0 / n**2)) / (d * bound)
    return s, regression_rule(n, d, bound, epsilon, 1.0 / n**2)[0]


def build_parser() -> Any:
    """The argument parser of ``dpopt bench regression-rule``."""
    import argparse

    p = argparse.ArgumentParser(prog="dpopt bench regression-rule", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--tables", type=lambda t: [v for v in t.split(",") if v], default=list(TABLES),
                   help=f"comma-separated tables (default all: {','.join(TABLES)})")
    p.add_argument("--epsilons", type=positive_floats, default=[0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0],
                   help="ε values (default 0.05,0.1,0.25,0.5,1,2,4)")
    p.add_argument("--seeds", type=positive_int, default=3, help="noise seeds per (table, mechanism, ε) (default 3)")
    p.add_argument("--out", type=Path, default=Path("bench-regression-rule"), help="output folder")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison; print one line per (table, ε) and write runs.csv, summary.json, table.txt."""
    args = parse(build_parser(), argv)
    if isinstance(args, int):
        return args
    unknown = [t for t in args.tables if t not in TABLES]
    if unknown:
        print(f"unknown table(s) {unknown}; choose from {', '.join(TABLES)}", file=sys.stderr)
        return 2
    runs: list[RuleRun] = []
    cells: list[dict[str, Any]] = []
    lines: list[str] = []
    for name in counted(args.tables, "tables"):
        table = load(name)
        n, d = table.X_train.shape
        lines.append(f"{name}: n_train={n}, d={d}")
        for eps in args.epsilons:
            mean: dict[str, float] = {}
            for mechanism in MECHANISMS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scores = [_fit(table, mechanism, eps, seed)[0] for seed in range(args.seeds)]
                runs.extend(RuleRun(name, mechanism, eps, seed, r) for seed, r in enumerate(scores))
                mean[mechanism] = float(np.mean(scores))
            s, chosen = _statistic(table, eps)
            best = max(mean.values())
            cell = {"table": name, "epsilon": eps, "statistic": s, "chosen": chosen, **mean,
                    "regret": best - mean[chosen]}
            cells.append(cell)
            lines.append(f"  ε={eps:<5g} adassp {mean['adassp']:8.3f}  dp-gd {mean['dp-gd']:8.3f}  "
                         f"s={s:8.1f}  rule: {chosen:<7} regret {cell['regret']:.3f}")
            print(lines[-1], flush=True)
    regrets = [c["regret"] for c in cells]
    lines.append(f"mean regret {np.mean(regrets):.3f}, largest {max(regrets):.3f} over {len(cells)} (table, ε) cells")
    text = "\n".join(lines)
    write_outputs(args.out, RuleRun, runs, {"cells": cells, "epsilons": args.epsilons, "seeds": args.seeds,
                                             "tables": args.tables}, text)
    print()
    print(text)
    return 0
