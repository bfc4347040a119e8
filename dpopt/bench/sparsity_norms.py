"""Sparsity-inducing norms (KD19): excess risk of output perturbation and dual Frank–Wolfe vs Gaussian width; greedy LMO time vs p.

Setup
-----
Synthetic regression with structured sparse truth: p features in groups of
``--group`` consecutive coordinates; θ* is constant (0.6) on the first group
and zero elsewhere (sparse *and* with equal values, which the group and
chain-cut norms favour).  Rows x uniform on [−1, 1]^p scaled to ‖x‖₂ ≤ 1,
y = clip(⟨x, θ*⟩ + 0.1·noise, −1, 1).  Objective, for every norm:

    P(θ) = (1/n)Σ(⟨x_i, θ⟩ − y_i)² + (Λ/2)‖θ‖² + lam·Ω∞(θ),
    lam = c·√p / (G_{|P|(F)} √n)   (Thm. 1's λ ∝ √n/G, i.e. lam·G the same for every norm)

for the ℓ1 (Cardinality), ℓ∞ (Indicator), group (disjoint GroupCoverage) and
chain-cut (ChainCut) norms.  The non-private optimum P(θ̂) is measured in the
same run by Clarabel (the baseline); the table reports the mean excess risk
``P(θ^priv) − P(θ̂)`` over ``--reps`` noise seeds for
:class:`SubmodularOutputPerturbation` (with its corrected Lemma 1 bound) and
:class:`DualFrankWolfe` (release of θ(ŝ) + noise), both at (ε, δ), next to
G_{|P|(F)}.

Second table: seconds per greedy linear minimization over |P|(F) against p
(median of repeats), and that time divided by p·log p (flat if the greedy is
O(p log p)).

Seeds make the noise reproducible and are not secure: this is a benchmark.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpopt.backends.registry import get as get_backend
from dpopt.backends.result import SolveOptions
from dpopt.bench.arguments import int_list
from dpopt.bench.output import write_outputs
from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe
from dpopt.mechanisms.submodular_output import SubmodularOutputPerturbation
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.losses import SquaredLoss
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L2Squared
from dpopt.modeling.submodular import (
    Cardinality,
    ChainCut,
    GroupCoverage,
    Indicator,
    SetFunction,
    polyhedron_lmo,
)
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.modeling.variable import Variable
from dpopt.numerics.apg import fallback_supported
from dpopt.numerics.submodular_lp import polyhedron_gaussian_width
from dpopt.privacy.ledger import Ledger

NAME = "sparsity-norms"
NORMS = ("l1", "linf", "group", "chain")


@dataclass
class Run:
    """One (norm, n) cell (a CSV row)."""

    norm: str
    n: int
    p: int
    width: float
    lam: float
    optimum: float
    output_excess: float
    output_bound: float
    dual_fw_excess: float
    dual_fw_iterations: int
    seconds: float


_ints = int_list(1)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--ns", type=_ints, default=[1_000, 10_000, 100_000], help="sample sizes (default 1e3,1e4,1e5)")
    p.add_argument("--p", type=int, default=40, help="features (default 40)")
    p.add_argument("--group", type=int, default=5, help="group size (default 5)")
    p.add_argument("--reps", type=int, default=3, help="noise seeds per cell (default 3)")
    p.add_argument("--norms", default=",".join(NORMS), help=f"subset of {','.join(NORMS)}")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--ridge", type=float, default=0.2, help="Λ of the required ℓ2² term (default 0.2)")
    p.add_argument("--c", type=float, default=0.5, help="lam = c·√p/(G·√n) (default 0.5)")
    p.add_argument("--lmo-ps", type=_ints, default=[100, 1_000, 10_000, 100_000],
                   help="p values of the LMO timing (default 1e2..1e5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="write runs.csv, summary.json, table.txt")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def set_function(norm: str, p: int, group: int) -> SetFunction:
    """The set function of a norm name."""
    if norm == "l1":
        return Cardinality(p)
    if norm == "linf":
        return Indicator(p)
    if norm == "group":
        return GroupCoverage(p, [list(range(i, min(i + group, p))) for i in range(0, p, group)],
                             [math.sqrt(min(group, p - i)) for i in range(0, p, group)])
    return ChainCut(p, weight=0.5, eta=0.1)


def make_data(n: int, p: int, group: int, seed: int) -> Dataset:
    """Structured sparse truth: θ* = 0.6 on the first group, 0 elsewhere."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    theta = np.zeros(p)
    theta[:group] = 0.6
    y = np.clip(X @ theta + 0.1 * rng.standard_normal(n), -1, 1)
    return Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)


def run_cell(norm: str, n: int, args: argparse.Namespace) -> Run:
    start = time.perf_counter()
    F = set_function(norm, args.p, args.group)
    width = polyhedron_gaussian_width(F).value
    lam = args.c * math.sqrt(args.p) / (width * math.sqrt(n))
    data = make_data(n, args.p, args.group, args.seed)
    th = Variable(args.p)
    prob = Problem(SquaredLoss(data, th), regularizer=(L2Squared(th, args.ridge), SubmodularNorm(th, F, lam)))
    exact = get_backend("clarabel").solve_problem(prob, SolveOptions(tolerance=1e-10)).solution
    assert exact is not None
    optimum = prob.objective(exact)
    out, dual, bound, iters = [], [], math.nan, 0
    for rep in range(args.reps):
        if fallback_supported(prob):  # overlapping blocks (chain cut): output perturbation refuses F
            r = SubmodularOutputPerturbation(args.epsilon, args.delta, ledger=Ledger()).run(prob, seed=rep)
            out.append(prob.objective(r.theta) - optimum)
            bound = float(r.parameters["excess_risk_bound"])
        d = DualFrankWolfe(args.epsilon, args.delta, ledger=Ledger()).run(prob, seed=rep)
        dual.append(prob.objective(d.theta) - optimum)
        iters = int(d.parameters["steps"])
    return Run(norm, n, args.p, width, lam, optimum, float(np.mean(out)) if out else math.nan, bound, float(np.mean(dual)), iters,
               time.perf_counter() - start)


def lmo_times(ps: Sequence[int], norms: Sequence[str], group: int) -> dict[str, list[float]]:
    """Median seconds per greedy LMO over |P|(F) for every p."""
    out: dict[str, list[float]] = {}
    rng = np.random.default_rng(0)
    for norm in norms:
        times = []
        for p in ps:
            F = set_function(norm, p, group)
            g = rng.standard_normal(p)
            reps = max(3, min(200, 2_000_000 // p))
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    polyhedron_lmo(F, g)
                samples.append((time.perf_counter() - t0) / reps)
            times.append(float(np.median(samples)))
        out[norm] = times
    return out


def render(runs: list[Run], lmo: dict[str, list[float]], ps: Sequence[int], args: argparse.Namespace) -> str:
    lines = [f"sparsity-norms: p={args.p}, group={args.group}, ε={args.epsilon:g}, δ={args.delta:g}, Λ={args.ridge:g}, "
             f"lam = {args.c:g}·√p/(G√n), {args.reps} noise seeds per cell; baseline P(θ̂) by Clarabel in this run",
             "",
             f"{'norm':<6} {'n':>7} {'G_|P|(F)':>9} {'lam':>9} {'P(θ̂)':>8} {'outpert':>10} {'Lemma1':>10} "
             f"{'dualFW':>10} {'T':>4} {'out/dual':>9} {'sec':>6}"]
    for r in runs:
        ratio = r.output_excess / r.dual_fw_excess if r.dual_fw_excess > 0 else math.nan
        lines.append(f"{r.norm:<6} {r.n:>7d} {r.width:>9.3g} {r.lam:>9.3g} {r.optimum:>8.4f} {r.output_excess:>10.3g} "
                     f"{r.output_bound:>10.3g} {r.dual_fw_excess:>10.3g} {r.dual_fw_iterations:>4d} {ratio:>9.3g} "
                     f"{r.seconds:>6.1f}")
    lines += ["", "greedy LMO over |P|(F): microseconds per call (and per p·log p, ×1e3)",
              f"{'norm':<6} " + " ".join(f"{p:>16d}" for p in ps)]
    for norm, times in lmo.items():
        cells = [f"{1e6 * t:>8.1f} ({1e9 * t / (p * math.log(p)):>5.2f})" for t, p in zip(times, ps, strict=True)]
        lines.append(f"{norm:<6} " + " ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    norms = [t for t in args.norms.split(",") if t]
    if not norms or any(t not in NORMS for t in norms):
        print(f"error: --norms must list some of {', '.join(NORMS)}", file=sys.stderr)
        return 2
    log: Callable[[str], Any] = (lambda msg: None) if args.quiet else (
        lambda msg: print(msg, file=sys.stderr, flush=True))
    runs = []
    for n in args.ns:
        for norm in norms:
            runs.append(run_cell(norm, n, args))
            log(f"[{NAME}] {norm} n={n}: {runs[-1].seconds:.1f}s")
    lmo = lmo_times(args.lmo_ps, norms, args.group)
    text = render(runs, lmo, args.lmo_ps, args)
    print(text)
    if args.out is not None:
        summary = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                   "lmo_seconds": {k: dict(zip(map(str, args.lmo_ps), v, strict=True)) for k, v in lmo.items()}}
        write_outputs(args.out, Run, runs, summary, text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
