"""NRVW19 Figure 1 on balanced Adult: OPDisc and RSPM (MIP oracles) against private logistic regression.

Setup
-----
Data: the balanced Adult training subsample ``load_adult("train", balanced=True, n=n,
seed=0)`` (23 features, ``paper23`` encoding, declared ‖x‖₂ ≤ √7), and for held-out
accuracy the test split balanced the same way (all positives, as many negatives).  For each ε in ``--epsilons`` (default
0.1, 0.3, 0.5, 0.7, 1.0), δ = 1/n², and noise seeds 0..runs−1 (reproducible, not
secure: this is a benchmark) every mechanism is run once per seed:

* **OPDisc** (Alg. 1, dpopt's corrected σ): the 0/1 loss over
  ``IntegerGrid(1, -4, 4, l2_bound=√23)``, the exact MIP oracle (``--solver``).
* **RSPM** (Alg. 3, threshold separator set, dpopt's noise choice — Laplace weights
  at this size, see :mod:`dpopt.mechanisms.rspm`): the 0/1 loss over {−1, 0, 1}^23
  (``IntegerGrid(1, -1, 1)``), as in the paper.
* **LR**: :class:`~dpopt.mechanisms.ObjectivePerturbation` on ``LogisticLoss +
  L2Squared(λ)`` (λ = ``--lam``, fixed a priori), solver ``--lr-solver``.

Reported: classification accuracy (a margin of 0 is an error) on the training
sample (as in the paper) and on the held-out test split — mean and standard
deviation over the certified runs — the number of certified runs (by default every oracle
runs to completion, the private mode; with the opt-in ``--time-limit`` a call stopped by
it releases nothing and is counted, not averaged, and the guarantee is conditional), and the distribution of per-call oracle times (Figure 1b; for LR the
solver time).  A non-private reference: logistic regression without noise.
Outputs: a table, runs.csv / summary.json / table.txt and ``figure1.png`` in ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import parse
from dpopt.bench.output import write_outputs
from dpopt.datasets import load_adult
from dpopt.errors import UncertifiedOracleError
from dpopt.progress import counted, is_enabled, show_progress

NAME = "adult-halfspace"
DEFAULT_EPSILONS = (0.1, 0.3, 0.5, 0.7, 1.0)
MECHANISMS = ("OPDisc", "RSPM", "LR")


@dataclass
class Run:
    """One mechanism run (a CSV row)."""

    mechanism: str
    epsilon: float
    seed: int
    certified: bool
    train_acc: float
    test_acc: float
    oracle_s: float  # solver time of the call(s); data-dependent, a benchmark diagnostic
    wall_s: float
    noise: str


@dataclass(frozen=True)
class Labeled:
    """Features and ±1 labels to score a classifier on."""

    X: np.ndarray
    y: np.ndarray


def accuracy(w: np.ndarray, data: dp.Dataset | Labeled) -> float:
    """Fraction of rows with y⟨x, w⟩ > 0."""
    return float(np.mean((data.X @ w) * data.y > 0))


def balanced_test() -> Labeled:
    """The Adult test split balanced like the training set: all positives and as many
    negatives (a fixed seeded choice)."""
    test = load_adult("test")
    pos, neg = np.flatnonzero(test.y > 0), np.flatnonzero(test.y < 0)
    neg = np.random.default_rng(0).choice(neg, size=min(len(pos), len(neg)), replace=False)
    idx = np.sort(np.concatenate([pos, neg]))
    return Labeled(test.X[idx], test.y[idx])


def problems(n: int, lam: float) -> dict[str, Any]:
    """The three problems on the n-row balanced training sample, and the test set."""
    train = load_adult("train", balanced=True, n=n, seed=0)
    test = balanced_test()
    d = train.n_features
    w = dp.Variable(d, name="w")
    theta = dp.Variable(d, name="theta")
    return {
        "train": train, "test": test,
        "OPDisc": dp.DiscreteProblem(dp.ZeroOneLoss(train, w, dp.IntegerGrid(1, -4, 4, l2_bound=math.sqrt(d)))),
        "RSPM": dp.DiscreteProblem(dp.ZeroOneLoss(train, w, dp.IntegerGrid(1, -1, 1))),
        "LR": dp.Problem(dp.LogisticLoss(train, theta), regularizer=dp.L2Squared(theta, lam)),
    }


def _mechanism(name: str, eps: float, delta: float) -> dp.Mechanism:
    ledger = dp.Ledger()
    if name == "OPDisc":
        return dp.OPDisc(eps, delta, ledger=ledger)
    if name == "RSPM":
        return dp.RSPM(eps, delta, ledger=ledger)
    return dp.ObjectivePerturbation(eps, delta, ledger=ledger)


def run_one(name: str, problem: Any, eps: float, delta: float, seed: int, args: argparse.Namespace,
            train: dp.Dataset, test: Labeled) -> Run:
    """One run; an uncertified oracle call is recorded with nan accuracies."""
    mech = _mechanism(name, eps, delta)
    solver = args.lr_solver if name == "LR" else args.solver
    t0 = time.perf_counter()
    try:
        rel = mech.run(problem, solver=solver, seed=seed, time_limit=args.time_limit, threads=args.threads,
                       keep_diagnostics=True)
    except UncertifiedOracleError as exc:
        diag = exc.diagnostics
        spent = sum(r.solve_time for r in diag.oracle_results) if diag is not None else math.nan
        return Run(name, eps, seed, False, math.nan, math.nan, float(spent), time.perf_counter() - t0, "-")
    wall = time.perf_counter() - t0
    assert rel.diagnostics is not None  # the benchmark is the data curator: it may look
    oracle = sum(r.solve_time for r in rel.diagnostics.oracle_results)
    return Run(name, eps, seed, True, accuracy(rel.theta, train), accuracy(rel.theta, test), oracle, wall,
               str(rel.parameters.get("noise", rel.parameters.get("linear_noise", "-"))))


def _nonprivate(problem: dp.Problem, train: dp.Dataset, test: Labeled, solver: str) -> dict[str, float]:
    res = dp.backends.get(solver).solve_problem(problem)
    w = np.zeros(problem.dim) if res.solution is None else np.asarray(res.solution)
    return {"train_acc": accuracy(w, train), "test_acc": accuracy(w, test)}


def _stats(values: Sequence[float]) -> dict[str, float]:
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return {"mean": math.nan, "sd": math.nan}
    return {"mean": statistics.fmean(v), "sd": statistics.stdev(v) if len(v) > 1 else 0.0}


def summarize(runs: list[Run], args: argparse.Namespace, extra: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for name in args.mechanisms:
        for eps in args.epsilons:
            group = [r for r in runs if r.mechanism == name and r.epsilon == eps]
            if not group:
                continue
            rows.append({
                "mechanism": name, "epsilon": eps, "certified": sum(r.certified for r in group), "runs": len(group),
                "train": _stats([r.train_acc for r in group]), "test": _stats([r.test_acc for r in group]),
                "noise": sorted({r.noise for r in group if r.certified}),
            })
    times = {}
    for name in args.mechanisms:
        t = sorted(r.oracle_s for r in runs if r.mechanism == name and math.isfinite(r.oracle_s))
        if t:
            times[name] = {"median": statistics.median(t), "p90": t[min(len(t) - 1, int(0.9 * len(t)))],
                           "max": t[-1], "calls": len(t)}
    return {
        "benchmark": NAME,
        "setup": {
            "n": args.n, "delta": 1.0 / args.n**2, "epsilons": list(args.epsilons), "runs": args.runs,
            "solver": args.solver, "lr_solver": args.lr_solver, "time_limit": args.time_limit,
            "threads": args.threads, "lam": args.lam,
            "versions": {b: dp.backends.get(b).version() for b in {args.solver, args.lr_solver}},
            "python": platform.python_version(), "machine": platform.machine(),
        },
        "rows": rows, "oracle_times": times, **extra,
    }


def _pm(st: dict[str, float]) -> str:
    return "-" if not math.isfinite(st["mean"]) else f"{st['mean']:.4f} ± {st['sd']:.4f}"


def render(summary: dict[str, Any]) -> str:
    su = summary["setup"]
    lines = [
        f"dpopt bench {NAME}: NRVW19 Figure 1 on balanced Adult, n = {su['n']}, d = 23, δ = 1/n² = {su['delta']:.3g}",
        f"  OPDisc: IntegerGrid(1, -4, 4, ‖w‖ ≤ √23), RSPM: {{-1,0,1}}^23, both via {su['solver']} "
        f"({su['threads']} threads, "
        f"{'run to completion (private mode)' if su['time_limit'] is None else format(su['time_limit'], 'g') + ' s per oracle call (conditional guarantee)'}); "
        f"LR: objective perturbation, LogisticLoss + L2Squared({su['lam']:g}) via {su['lr_solver']}",
        f"  {su['runs']} runs per (mechanism, ε), noise seeds 0..{su['runs'] - 1}; accuracy mean ± sd over certified runs",
        "",
    ]
    headers = ["mechanism", "ε", "certified", "train acc", "test acc", "noise"]
    trows = [[r["mechanism"], f"{r['epsilon']:g}", f"{r['certified']}/{r['runs']}", _pm(r["train"]), _pm(r["test"]),
              ",".join(r["noise"])] for r in summary["rows"]]
    widths = [max(len(h), *(len(t[i]) for t in trows)) for i, h in enumerate(headers)] if trows else []
    if trows:
        lines.append("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.rjust(w) for c, w in zip(t, widths, strict=True)) for t in trows]
    np_ = summary.get("nonprivate")
    if np_:
        lines.append(f"\nnon-private logistic regression: train {np_['train_acc']:.4f}, test {np_['test_acc']:.4f}")
    lines.append("\nOracle time per call (Figure 1b; seconds, certified or not):")
    for name, t in summary["oracle_times"].items():
        lines.append(f"  {name}: median {t['median']:.3f}, 90th pct {t['p90']:.3f}, max {t['max']:.3f} "
                     f"over {t['calls']} runs")
    return "\n".join(lines)


def plot(runs: list[Run], summary: dict[str, Any], path: Path) -> None:
    """figure1.png: accuracy vs ε with sd error bars (a) and oracle-time histograms (b)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name in dict.fromkeys(r["mechanism"] for r in summary["rows"]):
        rows = [r for r in summary["rows"] if r["mechanism"] == name]
        ax1.errorbar([r["epsilon"] for r in rows], [r["train"]["mean"] for r in rows],
                     yerr=[r["train"]["sd"] for r in rows], marker="o", capsize=3, label=name)
    ax1.set_xlabel("ε")
    ax1.set_ylabel("training accuracy")
    ax1.set_title(f"(a) balanced Adult, n = {summary['setup']['n']}, δ = 1/n²")
    ax1.legend()
    for name in dict.fromkeys(r.mechanism for r in runs):
        t = [r.oracle_s for r in runs if r.mechanism == name and math.isfinite(r.oracle_s) and r.oracle_s > 0]
        if t:
            ax2.hist(t, bins=np.logspace(math.log10(min(t)), math.log10(max(t)) + 1e-9, 20), alpha=0.5, label=name)
    ax2.set_xscale("log")
    ax2.set_xlabel("oracle time per run (s)")
    ax2.set_ylabel("runs")
    ax2.set_title("(b) oracle time")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _run(args: argparse.Namespace) -> int:
    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    probs = problems(args.n, args.lam)
    train, test = probs["train"], probs["test"]
    delta = 1.0 / args.n**2
    runs: list[Run] = []
    for name in counted(args.mechanisms, f"{NAME}: mechanisms"):
        for eps in counted(args.epsilons, f"{name}: ε values"):
            for seed in counted(args.runs, f"{name} ε={eps:g}: runs"):
                progress(f"[{NAME}] {name} ε={eps:g} run {seed + 1}/{args.runs}")
                runs.append(run_one(name, probs[name], eps, delta, seed, args, train, test))
    extra = {"nonprivate": _nonprivate(probs["LR"], train, test, args.lr_solver)}
    return _report(runs, args, extra)


def read_runs(folder: Path) -> list[Run]:
    """The runs a previous ``--out`` folder holds (its runs.csv)."""
    with (folder / "runs.csv").open(newline="") as fh:
        return [Run(mechanism=r["mechanism"], epsilon=float(r["epsilon"]), seed=int(r["seed"]),
                    certified=r["certified"] == "True", train_acc=float(r["train_acc"]),
                    test_acc=float(r["test_acc"]), oracle_s=float(r["oracle_s"]), wall_s=float(r["wall_s"]),
                    noise=r["noise"]) for r in csv.DictReader(fh)]


def _merge(args: argparse.Namespace) -> int:
    """One table and plot from the runs of earlier ``--out`` folders (e.g. one run per ε)."""
    runs = [r for folder in args.merge for r in read_runs(folder)]
    args.epsilons = sorted({r.epsilon for r in runs})
    args.mechanisms = [m for m in MECHANISMS if any(r.mechanism == m for r in runs)]
    first = json.loads((args.merge[0] / "summary.json").read_text())
    return _report(runs, args, {"nonprivate": first.get("nonprivate", {}), "merged_from": [str(f) for f in args.merge]})


def _report(runs: list[Run], args: argparse.Namespace, extra: dict[str, Any]) -> int:
    """Summarize, print, and (with ``--out``) write runs.csv, summary.json, table.txt and figure1.png."""
    summary = summarize(runs, args, extra)
    text = render(summary)
    print(text)
    if args.out is not None:
        write_outputs(args.out, Run, runs, summary, text)
        plot(runs, summary, args.out / "figure1.png")
        print(f"\nwrote {args.out / 'runs.csv'}, summary.json, table.txt, figure1.png")
    return 0


def _list(kind: Callable[[str], Any], what: str) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}")
        return values
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=500, help="balanced-Adult training sample size (default %(default)s)")
    p.add_argument("--epsilons", type=_list(float, "numbers"), default=list(DEFAULT_EPSILONS))
    p.add_argument("--runs", type=int, default=10, help="noise seeds per (mechanism, ε) (default %(default)s)")
    p.add_argument("--mechanisms", type=_list(str, "names"), default=list(MECHANISMS),
                   help="subset of OPDisc,RSPM,LR")
    p.add_argument("--solver", default="highs", help="MIP backend for OPDisc and RSPM (default %(default)s)")
    p.add_argument("--lr-solver", default="scipy", help="convex backend for LR (default %(default)s)")
    p.add_argument("--lam", type=float, default=1e-4, help="L2Squared weight of LR (default %(default)s)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds per oracle call (opt-in; default: run to completion, the private mode)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=None, help="write runs.csv, summary.json, table.txt, figure1.png here")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--merge", type=Path, nargs="+", default=None, metavar="DIR",
                   help="run nothing: merge the runs.csv of earlier --out folders (same --n and --solver) "
                        "into one table and plot")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns an exit code (0 on success)."""
    parser = build_parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    bad = [m for m in args.mechanisms if m not in MECHANISMS]
    if bad:
        print(f"error: unknown mechanism(s) {', '.join(bad)}; choose from {', '.join(MECHANISMS)}", file=sys.stderr)
        return 2
    if args.n < 2 or args.runs < 1 or args.threads < 1 or (args.time_limit is not None and not args.time_limit > 0):
        print("error: --n ≥ 2, --runs ≥ 1, --threads ≥ 1 and a positive --time-limit (if given) are required",
              file=sys.stderr)
        return 2
    if any(not (math.isfinite(e) and e > 0) for e in args.epsilons):
        print("error: every ε must be a positive number", file=sys.stderr)
        return 2
    for b in {args.solver, args.lr_solver}:
        if b not in dp.backends.names():
            print(f"error: unknown backend {b!r}; registered: {', '.join(dp.backends.names())}", file=sys.stderr)
            return 2
    if args.out is not None and importlib.util.find_spec("matplotlib") is None:  # before any work
        print("error: --out writes a plot, which needs matplotlib: pip install 'dpopt[bench]'", file=sys.stderr)
        return 2
    if args.merge is not None:
        missing = [str(f) for f in args.merge if not (f / "runs.csv").is_file() or not (f / "summary.json").is_file()]
        if missing:
            print(f"error: no runs.csv and summary.json in {', '.join(missing)}", file=sys.stderr)
            return 2
        return _merge(args)
    with show_progress(is_enabled() and not args.quiet):  # the benchmark's --quiet silences the display too
        return _run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
