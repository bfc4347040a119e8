"""Fit time of private logistic regression: dpopt's solver and objective perturbation vs diffprivlib.

Setup
-----
Up to three data sets, each fitted with ``LogisticLoss + L2Squared(λ)`` (``--lam``, default
1e-4), in a second row with an added ``L2Ball(--radius)`` constraint, and in a third on the
ball alone (no ℓ2² term: with collinear columns the Hessian is singular, the case that
needs the Newton method's floored model, see :mod:`dpopt.backends.scipy_backend`):

* ``adult-paper23``: UCI Adult train split, the 23-feature ``paper23`` encoding of
  :func:`dpopt.datasets.load_adult` (n = 32,561, ‖x‖₂ ≤ √7);
* ``adult-standard``: the same rows in the ``standard`` encoding (n = 32,561, d = 109:
  one-hot blocks that sum to the intercept column, ‖x‖₂ ≤ √15); ``--encoding`` picks
  which Adult encodings are run (default both);
* ``synthetic-104``: n = ``--n`` (default 30,000) rows shaped like the standard Adult
  encoding — 8 one-hot blocks (98 columns) and 6 numeric columns uniform on [0, 1],
  each row divided by its ℓ2 norm (so ‖x‖₂ ≤ 1, d = 104), labels from a noisy linear rule.

For each, the median over ``--repeats`` runs (after one untimed warm-up) of

(a) the **non-private solve**: the backend ``--solver`` picks, on the unperturbed problem
    (``backend.solve_problem``: compile, solve, the backend's own certificate);
(b) **dpopt private**: ``dp.ObjectivePerturbation(--epsilon, --delta).run(problem)``, the
    whole program (calibration, fallback planning, ledger, noise, solve, dpopt's own
    certificate, release);
(c) **diffprivlib** 0.6.6 ``LogisticRegression(epsilon, data_norm=x_bound,
    C=1/(n·λ), fit_intercept=False)`` (the same regularized objective; pure ε-DP), when
    it imports — one fit per data set, the same number on all its rows (the unregularized
    row has no diffprivlib counterpart: it is compared with the regularized fit);

and the ratios (b)/(c) and (a)/(c).  Every method runs in this process with the BLAS
threads it would use by default (dpopt's scipy backend limits itself to one thread
unless told otherwise; ``--blas-threads`` limits everyone).  Seeds make the noise
reproducible and are not secure: this is a benchmark.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

import dpopt as dp
from dpopt.backends.profiles import resolve
from dpopt.bench.arguments import parse, positive_float, positive_int

NAME = "speed"
DEFAULT_REPEATS = 7
DEFAULT_EPSILON = 0.1
DEFAULT_DELTA = 1e-9
DEFAULT_LAM = 1e-4
DEFAULT_RADIUS = 10.0
DEFAULT_N = 30_000
ENCODINGS: tuple[Literal["paper23", "standard"], ...] = ("paper23", "standard")
#: one-hot block sizes of the standard Adult encoding (98 columns) plus 6 numeric columns
ONEHOT_BLOCKS = (9, 16, 16, 7, 15, 6, 5, 24)
NUMERIC_COLUMNS = 6


@dataclass
class Row:
    """Median fit seconds of one problem (a row of the table)."""

    data: str
    problem: str
    n: int
    d: int
    backend: str
    nonprivate_s: float
    private_s: float
    diffprivlib_s: float
    private_over_diffprivlib: float
    nonprivate_over_diffprivlib: float


def synthetic_onehot(n: int, *, seed: int = 0) -> dp.Dataset:
    """Rows shaped like the standard Adult encoding (see the module docstring), ‖x‖₂ ≤ 1.

    Parameters
    ----------
    n : int
        Number of rows.
    seed : int
        Seed of the generator (features, weights and label noise).
    """
    rng = np.random.default_rng(seed)
    blocks = []
    for k in ONEHOT_BLOCKS:
        B = np.zeros((n, k))
        B[np.arange(n), rng.integers(0, k, n)] = 1.0
        blocks.append(B)
    blocks.append(rng.random((n, NUMERIC_COLUMNS)))
    X = np.hstack(blocks)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    score = X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=n)
    y = np.where(score > np.median(score), 1.0, -1.0)
    return dp.Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command-line options."""
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=(__doc__ or "").strip().splitlines()[0])
    p.add_argument("--repeats", type=positive_int, default=DEFAULT_REPEATS,
                   help=f"timed runs per method; the median is reported (default {DEFAULT_REPEATS})")
    p.add_argument("--epsilon", type=positive_float, default=DEFAULT_EPSILON,
                   help=f"ε of the private fits (default {DEFAULT_EPSILON:g})")
    p.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                   help=f"δ of dpopt's fit (default {DEFAULT_DELTA:g}; diffprivlib is pure ε-DP)")
    p.add_argument("--lam", type=positive_float, default=DEFAULT_LAM,
                   help=f"L2Squared weight λ (default {DEFAULT_LAM:g}); diffprivlib gets C = 1/(nλ)")
    p.add_argument("--radius", type=positive_float, default=DEFAULT_RADIUS,
                   help=f"radius of the L2Ball rows (default {DEFAULT_RADIUS:g})")
    p.add_argument("--encoding", choices=[*ENCODINGS, "both"], default="both",
                   help="Adult encoding(s) to time: paper23, standard or both (default both)")
    p.add_argument("--n", type=positive_int, default=DEFAULT_N,
                   help=f"rows of the synthetic data set (default {DEFAULT_N})")
    p.add_argument("--solver", default="auto", help="dpopt backend name or profile (default auto)")
    p.add_argument("--blas-threads", type=positive_int, default=None,
                   help="limit BLAS threads for every method (default: each method's own choice)")
    p.add_argument("--no-diffprivlib", action="store_true", help="skip the diffprivlib baseline")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the rows as JSON")
    return p


def _median_seconds(fn: Callable[[int], Any], repeats: int) -> float:
    fn(-1)  # warm-up: imports, caches, BLAS start-up
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _load_diffprivlib() -> Any | None:
    try:
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LogisticRegression
    except Exception as exc:  # noqa: BLE001 — ImportError, or AttributeError with scikit-learn >= 1.8
        print(f"note: diffprivlib baseline skipped ({type(exc).__name__}); pip install -e '.[bench]'",
              file=sys.stderr)
        return None
    return LogisticRegression, BudgetAccountant


def _diffprivlib_seconds(dpl: Any, data: dp.Dataset, args: argparse.Namespace) -> float:
    LogisticRegression, BudgetAccountant = dpl
    X = np.array(data.X, dtype=np.float64)  # writable copies for scikit-learn
    y = np.array(data.y, dtype=np.float64)

    def fit(seed: int) -> None:
        model = LogisticRegression(epsilon=args.epsilon, data_norm=data.x_bound, C=1.0 / (data.n * args.lam),
                                   fit_intercept=False, random_state=max(seed, 0),
                                   accountant=BudgetAccountant())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)

    return _median_seconds(fit, args.repeats)


def _problems(data: dp.Dataset, args: argparse.Namespace) -> dict[str, dp.Problem]:
    theta = dp.Variable(data.n_features, name="theta")
    loss, reg = dp.LogisticLoss(data, theta), dp.L2Squared(theta, args.lam)
    ball = dp.L2Ball(theta, args.radius)
    return {"L2Squared": dp.Problem(loss, regularizer=reg),
            f"L2Ball({args.radius:g}) + L2Squared": dp.Problem(loss, constraint=ball, regularizer=reg),
            f"L2Ball({args.radius:g})": dp.Problem(loss, constraint=ball)}


def _timings(problem: dp.Problem, args: argparse.Namespace) -> tuple[str, float, float]:
    """(backend name, median non-private seconds, median private seconds) for one problem."""
    backend, profile = resolve(args.solver, problem)
    backend.require()
    nonpriv = _median_seconds(lambda _: backend.solve_problem(problem, profile.options), args.repeats)
    mech = dp.ObjectivePerturbation(args.epsilon, args.delta, ledger=dp.Ledger())
    private = _median_seconds(lambda s: mech.run(problem, solver=args.solver, seed=max(s, 0)), args.repeats)
    return backend.name, nonpriv, private


def _rows_for(name: str, data: dp.Dataset, dpl: Any | None, args: argparse.Namespace) -> list[Row]:
    dpl_s = _diffprivlib_seconds(dpl, data, args) if dpl is not None else math.nan
    rows = []
    for label, problem in _problems(data, args).items():
        backend, nonpriv, private = _timings(problem, args)
        rows.append(Row(name, label, data.n, data.n_features, backend, nonpriv, private, dpl_s,
                        private / dpl_s, nonpriv / dpl_s))
    return rows


def render(rows: Sequence[Row], args: argparse.Namespace) -> str:
    """The table of median seconds and ratios."""
    head = ["data", "problem", "n", "d", "backend", "non-private s", "dpopt private s", "diffprivlib s",
            "private/dpl", "non-private/dpl"]
    cells = [[r.data, r.problem, str(r.n), str(r.d), r.backend, f"{r.nonprivate_s:.4f}", f"{r.private_s:.4f}",
              "-" if math.isnan(r.diffprivlib_s) else f"{r.diffprivlib_s:.4f}",
              "-" if math.isnan(r.private_over_diffprivlib) else f"{r.private_over_diffprivlib:.2f}",
              "-" if math.isnan(r.nonprivate_over_diffprivlib) else f"{r.nonprivate_over_diffprivlib:.2f}"]
             for r in rows]
    widths = [max(len(c) for c in col) for col in zip(head, *cells, strict=True)]
    lines = [f"Median fit seconds over {args.repeats} runs; ε={args.epsilon:g}, dpopt δ={args.delta:g}, "
             f"λ={args.lam:g}; BLAS threads: {args.blas_threads or 'each method its own'}"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *cells]]
    return "\n".join(lines)


@contextlib.contextmanager
def _limited(threads: int | None) -> Iterator[None]:
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        yield


def datasets(args: argparse.Namespace) -> list[tuple[str, dp.Dataset]]:
    """The (name, data set) pairs the benchmark times, in table order.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options (``encoding`` and ``n`` are read).
    """
    from dpopt.datasets import load_adult

    chosen = [e for e in ENCODINGS if args.encoding in (e, "both")]
    out = [(f"adult-{e}", load_adult(encoding=e)) for e in chosen]
    return [*out, ("synthetic-104", synthetic_onehot(args.n))]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns an exit code (0 on success)."""
    parser = build_parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    if not (0.0 <= args.delta < 1.0):
        print("error: --delta must lie in [0, 1)", file=sys.stderr)
        return 2
    dpl = None if args.no_diffprivlib else _load_diffprivlib()
    rows: list[Row] = []
    with _limited(args.blas_threads):
        for name, data in datasets(args):
            rows += _rows_for(name, data, dpl, args)
    print(render(rows, args))
    if args.json is not None:
        records = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(r).items()}
                   for r in rows]
        args.json.write_text(json.dumps(records, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
