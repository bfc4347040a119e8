"""OPDisc's exact MIP oracle on balanced Adult: dpopt's fast formulation vs a naive one, same solver.

Setup
-----
For every n in ``--ns`` (default 500, 1000, 2000, 4000, 8000, 15682) the balanced
Adult subsample ``load_adult("train", balanced=True, n=n, seed=0)`` (23 features,
``paper23`` encoding, half positives), the domain ``IntegerGrid(1, -4, 4,
l2_bound=√23)``, the :class:`~dpopt.modeling.zero_one.ZeroOneLoss` and the
:class:`~dpopt.modeling.discrete.DiscreteProblem`.  OPDisc's noise with ε = 1,
δ = 1/n²: σ = ``OPDisc(1, 1/n²).sigma(problem)``, η ~ N(0, σ²)^{d+1} drawn as the
mechanism draws it (``make_rng(seed)`` + ``gaussian_noise``) with noise seeds
0..draws−1 (reproducible, not secure: this is a benchmark).  Every draw is one
oracle call: argmin_{w ∈ W_τ} L(D, w) − ⟨η, π(w)⟩.

Three exact oracles on the same solver (HiGHS):

* **grouped** (backend ``highs-grouped``, :mod:`dpopt.compile.mip_grouped`): the three
  numeric columns (age, education-num, hours-per-week) are enumerated over the grid
  (461 points in the ℓ2 ball) and the rows are grouped by their one-hot pattern over the
  other 20 columns (174 groups at n = 15,682); every point is a small MIP with exact
  step-function group costs, pruned by its LP bound against a local-search incumbent or
  solved with the incumbent as cutoff.  Decomposed once per n (``prepare``, not timed per
  draw); each call builds a fresh HiGHS instance (timed).
* **fast** — :func:`dpopt.compile.mip_pyomo.compile_pyomo` as OPDisc uses it:
  exact rational margins, rows merged by primitive direction (identical and
  proportional rows share one binary, weights summed; constant rows removed),
  a per-row big-M from the box ∩ ℓ2 ball, the cuts e_b + e_{−b} ≥ 1 on opposite
  pairs, and a model built **once per n** (``backend.prepare``, timed separately
  and *not* included in the per-draw time) whose mutable η is reset per draw;
  each draw times ``backend.solve`` only.
* **naive** — built here (:func:`compile_naive`), the paper's App. D.2 model with
  its λ relaxation replaced by the same exact one-hot normalization: one binary
  per data row (no aggregation, no removal of constant rows, no cuts), the
  integer margins a_i = s·y_i·x_i (the paper's y_i⟨x_i, w⟩ scaled by s/τ, not
  reduced by their gcd), one global big-M = 1 + ⌊s · x_bound · D / τ⌋ (the
  paper's c > max‖x‖‖w‖ with the *declared* ℓ2 bound ‖x‖ ≤ √7), and a model
  **rebuilt for every call**: each draw times build + solve.  It reuses the
  HiGHS backend's solve and certificate (the program is a
  :class:`~dpopt.compile.mip_pyomo.PyomoProgram`), so the only differences from
  the fast variant are the speed ideas.  HiGHS only (other backends compile
  their own models).

The big-M variants (``highs`` fast and naive, and ``cpsat``) are the baselines: by default
they run at n ∈ {500, 1000} only, with a 60 s cap (``--baseline-ns``,
``--baseline-time-limit``), since past n = 1000 they do not certify within minutes.

Executors: ``--executor processes|dask --workers 1,2`` runs the grouped oracle
once per worker count — 1 worker is the sequential in-process search, more workers the
parallel search of :mod:`dpopt.backends.grouped_parallel` on a local process pool or a Dask
``LocalCluster`` of that many single-threaded workers (started once, warmed up, not timed) —
and checks that every executor returns the same point for every draw.

Reported per (n, variant, backend, executor): certified draws, median and maximum time to a
certified optimum over draws — an uncertified draw (time limit, …) counts as
``--time-limit`` — and the worst relative gap (primal − dual)/max(1, |primal|) an
uncertified draw left (∞ without an incumbent).  When both variants certify a
draw their optimal objective values must agree (checked, reported in the notes).
Solver settings: the backend's own (HiGHS: fresh instance per call, zero gap,
``random_seed`` 0), ``--threads`` threads, ``--time-limit`` seconds per call.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpopt.backends import registry
from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.bench.arguments import int_list, parse
from dpopt.bench.output import write_outputs
from dpopt.compile.mip_pyomo import (
    MAX_COEFFICIENT,
    PyomoProgram,
    build_program,
    loss_resolution,
)
from dpopt.datasets import load_adult
from dpopt.errors import ModelError
from dpopt.executors import Executor, resolve_executor, use_executor
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.variable import Variable
from dpopt.modeling.zero_one import ZeroOneLoss
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise
from dpopt.progress import counted, is_enabled, show_progress

NAME = "opdisc"
DEFAULT_NS = (500, 1000, 2000, 4000, 8000, 15682)
DEFAULT_DRAWS = 5
DEFAULT_TIME_LIMIT = 600.0
#: where the big-M baselines run by default, and their cap: past n = 1000 they do not certify
#: within minutes (measured), so a default run would otherwise spend hours on time-outs
DEFAULT_BASELINE_NS = (500, 1000)
DEFAULT_BASELINE_TIME_LIMIT = 60.0
#: the grouped-decomposition backend; every other backend (and the naive model) is a baseline
GROUPED = "highs-grouped"
EPSILON = 1.0
#: relative agreement required between the oracles' certified optimal values of one draw
AGREE_TOLERANCE = 1e-6


def adult_problem(n: int) -> DiscreteProblem:
    """The benchmark's problem: balanced Adult subsample of n rows, 0/1 loss on the grid."""
    data = load_adult("train", balanced=True, n=n, seed=0)
    grid = IntegerGrid(1, -4, 4, l2_bound=math.sqrt(23))
    return DiscreteProblem(ZeroOneLoss(data, Variable(data.n_features), grid))


# ---------------------------------------------------------------------------
# the naive formulation
# ---------------------------------------------------------------------------


def compile_naive(problem: DiscreteProblem) -> PyomoProgram:
    """The naive exact MIP: one binary per row, one global big-M, no aggregation.

    minimize Σ_i c_i e_i − Σ_j η_j τ k_j / D − η_{d+1} Σ_t (√(D² − τ²t)/D) z_t   s.t.
    ⟨a_i, k⟩ + M e_i ≥ 1 for every row i (a_i = s·y_i·x_i ∈ ℤ^d), and the same
    one-hot encoding of k and of ‖k‖² as :func:`~dpopt.compile.mip_pyomo.compile_pyomo`.
    M = 1 + ⌊s·B·D/τ⌋ with B the larger of the declared ℓ2 bound on x and the schema's
    (every mapped row is within the schema's), so |⟨a_i, k⟩| ≤ M − 1 on the ℓ2 ball; s and
    a_i come from the schema (``ZeroOneLoss.integer_rows``).
    """
    loss, grid, d = problem.zero_one(), problem.domain, problem.dim
    y = loss.data.y
    weights = np.asarray(loss.weights, dtype=np.float64)
    s, A = loss.scale, loss.integer_rows()
    rows = A * y.astype(np.int64)[:, None]  # integer margins, one per data row, not reduced
    assert loss.data.schema is not None  # ZeroOneLoss requires it
    xb = max(float(loss.data.x_bound_in(2)), loss.data.schema.row_norm_bound(2))
    big_m = 1 + int(math.floor(s * xb * grid.bound(d) / grid.step * (1 + 1e-12) + 1e-9))
    if big_m > MAX_COEFFICIENT:
        raise ModelError(f"the global big-M {big_m} exceeds {MAX_COEFFICIENT:g}")
    return build_program(problem, rows, weights, np.full(rows.shape[0], big_m, dtype=np.int64), scale=int(s),
                         resolution=loss_resolution(weights), opposite_cuts=False, name="opdisc_zero_one_naive")


# ---------------------------------------------------------------------------
# runs
# ---------------------------------------------------------------------------


@dataclass
class Run:
    """One oracle call (a CSV row)."""

    n: int
    variant: str  # "fast" or "naive"
    backend: str
    draw: int
    certified: bool
    time_s: float  # time counted: the oracle call (naive: build + solve); the cap when uncertified
    wall_s: float  # measured wall time of the call
    build_s: float  # naive: model build inside the call; fast: 0 (prepared once per n)
    solver_s: float  # the backend's own solve_time
    status: str
    primal: float
    dual: float
    rel_gap: float  # (primal − dual)/max(1, |primal|); inf without an incumbent
    executor: str = "inprocess×1"  # where the grouped oracle's point solves ran (kind×workers)
    point: str = ""  # the returned integer point k (grouped oracle), to compare across executors


def _rel_gap(res: OracleResult) -> float:
    p, d = res.primal_bound, res.dual_bound
    if not (math.isfinite(p) and math.isfinite(d)):
        return math.inf
    return max(0.0, p - d) / max(1.0, abs(p))


def _record(n: int, variant: str, backend: str, draw: int, res: OracleResult, wall: float,
            build: float, cap: float) -> Run:
    ok = bool(res.certified)
    return Run(n=n, variant=variant, backend=backend, draw=draw, certified=ok,
               time_s=wall if ok else cap, wall_s=wall, build_s=build, solver_s=float(res.solve_time),
               status=res.raw_status or res.status.name, primal=float(res.primal_bound),
               dual=float(res.dual_bound), rel_gap=0.0 if ok else _rel_gap(res))


def draw_eta(seed: int, sigma: float, dim: int) -> np.ndarray:
    """η for noise seed ``seed``, drawn exactly as OPDisc draws it."""
    rng, _ = make_rng(seed)
    return np.asarray(gaussian_noise(rng, sigma, dim + 1), dtype=np.float64)


def _executors(args: argparse.Namespace) -> list[tuple[str, Executor]]:
    """(label, executor) per ``--workers`` count: 1 → sequential in-process, more → ``--executor``."""
    out: list[tuple[str, Executor]] = []
    for w in args.workers:
        ex = resolve_executor("inprocess") if w == 1 else resolve_executor(args.executor, workers=w)
        out.append((f"{ex.name}×{w}", ex))
    return out


def _where(backend: str, executors: list[tuple[str, Executor]]) -> list[tuple[str, Executor]]:
    """The executors a backend is measured on: all for the grouped oracle, in-process for the baselines."""
    return executors if backend == GROUPED else [("inprocess×1", resolve_executor("inprocess"))]


def _point(res: OracleResult, step: float) -> str:
    if res.solution is None:
        return ""
    return " ".join(str(int(v)) for v in np.rint(np.asarray(res.solution) / step))


def _warm_up(backend: Any, naive: bool, options: SolveOptions) -> None:
    """Imports and first-call costs on a tiny instance (not timed)."""
    problem = adult_problem(60)
    eta = draw_eta(0, OPDisc(EPSILON, 1.0 / 60**2).sigma(problem), problem.dim)
    options = SolveOptions(time_limit=min(10.0, options.time_limit or 10.0), threads=options.threads, seed=0)
    backend.solve(backend.prepare(problem), eta, options)
    if naive:
        backend.solve(compile_naive(problem), eta, options)


def _run(args: argparse.Namespace) -> int:
    backends = {name: registry.get(name) for name in args.backends}
    for b in backends.values():
        b.require()
    options = SolveOptions(time_limit=args.time_limit, threads=args.threads, seed=0)
    baseline_options = SolveOptions(time_limit=args.baseline_time_limit, threads=args.threads, seed=0)
    executors = _executors(args) if GROUPED in backends else []
    try:
        for name, b in backends.items():
            for _, ex in _where(name, executors):
                with use_executor(ex):  # starts the workers and imports the solver in each (not timed)
                    _warm_up(b, not args.no_naive and name == "highs", options)
        return _measure(args, backends, options, baseline_options, executors)
    finally:
        for _, ex in executors:
            ex.close()


def _measure(args: argparse.Namespace, backends: dict[str, Any], options: SolveOptions,
             baseline_options: SolveOptions, executors: list[tuple[str, Executor]]) -> int:
    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    runs: list[Run] = []
    info: dict[str, Any] = {}
    for n in counted(args.ns, f"{NAME}: sample sizes"):
        problem = adult_problem(n)
        sigma = OPDisc(EPSILON, 1.0 / n**2).sigma(problem)
        etas = [draw_eta(seed, sigma, problem.dim) for seed in range(args.draws)]
        info[str(n)] = {"sigma": sigma}
        for name, b in backends.items():
            baseline = name != GROUPED
            if baseline and n not in args.baseline_ns:
                continue
            call_options = baseline_options if baseline else options
            limit = float(call_options.time_limit or args.time_limit)
            t0 = time.perf_counter()
            prepared = b.prepare(problem)
            info[str(n)][f"prepare_{name}_s"] = time.perf_counter() - t0
            prog = getattr(prepared, "program", None)
            if prog is not None and hasattr(prog, "size"):
                info[str(n)][f"model_{name}"] = prog.size.summary()
            for label, ex in _where(name, executors):
                for i, eta in enumerate(counted(etas, f"n={n} {name} {label}: draws")):
                    progress(f"[{NAME}] n={n} fast {name} {label} draw {i + 1}/{args.draws}")
                    with use_executor(ex):
                        t0 = time.perf_counter()
                        res = b.solve(prepared, eta, call_options)
                        wall = time.perf_counter() - t0
                    run = _record(n, "grouped" if name == GROUPED else "fast", name, i, res, wall, 0.0, limit)
                    run.executor, run.point = label, _point(res, problem.domain.step)
                    runs.append(run)
            del prepared
            if args.no_naive or name != "highs":
                continue
            for i, eta in enumerate(counted(etas, f"n={n} naive {name}: draws")):
                progress(f"[{NAME}] n={n} naive {name} draw {i + 1}/{args.draws}")
                t0 = time.perf_counter()
                prog = compile_naive(problem.with_eta(eta))
                build = time.perf_counter() - t0
                res = b.solve(prog, eta, call_options)
                wall = time.perf_counter() - t0
                info[str(n)]["model_naive"] = prog.size.summary()
                runs.append(_record(n, "naive", name, i, res, wall, build, limit))
                del prog

    summary = summarize(runs, args, info, {k: b.version() for k, b in backends.items()})
    text = render(summary)
    print(text)
    if args.out is not None:
        write_outputs(args.out, Run, runs, summary, text)
        print(f"\nwrote {args.out / 'runs.csv'}, {args.out / 'summary.json'}, {args.out / 'table.txt'}")
    return 0


# ---------------------------------------------------------------------------
# summary and output
# ---------------------------------------------------------------------------


def summarize(runs: list[Run], args: argparse.Namespace, info: dict[str, Any],
              versions: dict[str, str | None]) -> dict[str, Any]:
    rows = []
    keys = sorted({(r.n, r.backend, r.variant, r.executor) for r in runs},
                  key=lambda k: (k[0], {"grouped": 0, "fast": 1}.get(k[2], 2), k[1], k[3]))
    for n, backend, variant, executor in keys:
        group = [r for r in runs if (r.n, r.backend, r.variant, r.executor) == (n, backend, variant, executor)]
        times = [r.time_s for r in group]
        gaps = [r.rel_gap for r in group if not r.certified]
        rows.append({
            "n": n, "variant": variant, "backend": backend,
            "certified": sum(r.certified for r in group), "draws": len(group),
            "median_s": statistics.median(times), "max_s": max(times),
            "build_median_s": statistics.median(r.build_s for r in group),
            "worst_gap": max(gaps) if gaps else None, "executor": executor,
        })
    disagreements = []
    both = 0
    for n in args.ns:
        for draw in range(args.draws):
            done = [r for r in runs if (r.n, r.draw) == (n, draw) and r.certified]
            both += max(len(done) - 1, 0)
            if done and max(r.primal for r in done) - min(r.primal for r in done) > \
                    AGREE_TOLERANCE * max(1.0, abs(done[0].primal)):
                disagreements.append({"n": n, "draw": draw,
                                      **{f"{r.variant}/{r.backend}": r.primal for r in done}})
    different = []  # the grouped oracle's certified points must be identical across executors
    for n in args.ns:
        for draw in range(args.draws):
            pts = {r.executor: r.point for r in runs
                   if (r.n, r.draw, r.backend) == (n, draw, GROUPED) and r.certified}
            if len(set(pts.values())) > 1:
                different.append({"n": n, "draw": draw, **pts})
    return {
        "benchmark": NAME,
        "setup": {
            "data": "UCI Adult paper23, balanced train subsample load_adult('train', balanced=True, n, seed=0)",
            "domain": "IntegerGrid(1, -4, 4, l2_bound=sqrt(23))",
            "epsilon": EPSILON, "delta": "1/n^2", "draws": args.draws, "noise_seeds": f"0..{args.draws - 1}",
            "time_limit": args.time_limit, "threads": args.threads, "executor": args.executor,
            "workers": args.workers,
            "baseline_ns": args.baseline_ns, "baseline_time_limit": args.baseline_time_limit,
            "backends": versions, "naive": not args.no_naive,
            "python": platform.python_version(), "machine": platform.machine(),
        },
        "per_n": info,
        "rows": rows,
        "agreement": {"both_certified": both, "disagreements": disagreements},
        "executors": {"labels": sorted({r.executor for r in runs}), "different_points": different},
    }


def _sec(v: float) -> str:
    return f"{v:.2f}" if math.isfinite(v) else "-"


def _gap(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.2f}%" if math.isfinite(v) else "no incumbent"


def _format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def render(summary: dict[str, Any]) -> str:
    su = summary["setup"]
    cap = su["time_limit"]
    versions = ", ".join(f"{k} {v}" for k, v in su["backends"].items())
    lines = [
        f"dpopt bench {NAME}: OPDisc's exact MIP oracle on balanced Adult (d=23, {su['domain']})",
        f"  ε={su['epsilon']:g}, δ={su['delta']}, η ~ N(0, σ²)^24 with σ = OPDisc(ε, δ).sigma(problem); "
        f"noise seeds {su['noise_seeds']} (reproducible, not secure)",
        f"  backends: {versions}; {su['threads']} thread(s); time limit {cap:g} s per oracle call "
        f"(baselines: {su['baseline_time_limit']:g} s, n in {su['baseline_ns']})",
        "  grouped = highs-grouped: numeric columns enumerated (461 points), rows grouped by one-hot pattern,",
        "          one small MIP per point, LP-bound pruning and an incumbent cutoff; time = backend.solve per draw",
        "  fast  = dpopt's compile_pyomo (aggregated rows, per-row big-M, opposite-pair cuts); the model is",
        "          built ONCE per n by backend.prepare (not counted, see below); time = backend.solve per draw",
        "  naive = one binary per row, one global big-M (declared ‖x‖ ≤ √7 times D), no aggregation or cuts,",
        "          same exact normalization; model rebuilt per call; time = build + solve per draw",
        "  an uncertified draw counts as its cap; 'worst gap' = largest relative gap",
        "  (primal − dual)/max(1, |primal|) an uncertified draw left ('-': all certified)",
        "",
    ]
    headers = ["n", "variant", "backend", "certified", "median s", "max s", "worst gap", "build s (med)", "executor"]
    trows = [[str(r["n"]), r["variant"], r["backend"], f"{r['certified']}/{r['draws']}",
              _sec(r["median_s"]), _sec(r["max_s"]), _gap(r["worst_gap"]),
              _sec(r["build_median_s"]) if r["variant"] == "naive" else "-", r["executor"]]
             for r in summary["rows"]]
    lines.append(_format_table(headers, trows) if trows else "(no runs)")
    lines += ["", "Per n (grouped, fast: prepare once, not in the times above):"]
    for n, inf in summary["per_n"].items():
        parts = [f"σ={inf['sigma']:.1f}"]
        parts += [f"prepare[{k[len('prepare_'):-2]}]={v:.2f}s" for k, v in inf.items() if k.startswith("prepare_")]
        lines.append(f"  n={n}: " + ", ".join(parts))
        for k, v in inf.items():
            if k.startswith("model_"):
                lines.append(f"      {k[len('model_'):]}: {v}")
    ag = summary["agreement"]
    if ag["disagreements"]:
        lines.append(f"\nWARNING: {len(ag['disagreements'])} draw(s) where oracles certified "
                     f"different optimal values: {ag['disagreements']}")
    else:
        lines.append(f"\nEvery draw certified by more than one oracle has one optimal value "
                     f"({ag['both_certified']} cross-checks).")
    ex = summary.get("executors", {"labels": [], "different_points": []})
    if len(ex["labels"]) > 1:
        if ex["different_points"]:
            lines.append(f"WARNING: executors returned different points: {ex['different_points']}")
        else:
            lines.append(f"The grouped oracle returned the identical point on every certified draw with every "
                         f"executor ({', '.join(ex['labels'])}).")
    return "\n".join(lines)



# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


_ints = int_list(2)


def _names(text: str) -> list[str]:
    values = [v.strip().lower() for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected backend names such as highs or highs,cpsat")
    return list(dict.fromkeys(values))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", type=_ints, default=list(DEFAULT_NS),
                   help="balanced-Adult sample sizes (default %(default)s; at most 15682)")
    p.add_argument("--draws", type=int, default=DEFAULT_DRAWS, help="noise draws (seeds 0..draws-1) per n")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds per oracle call")
    p.add_argument("--backends", type=_names, default=[GROUPED, "highs"],
                   help="MIP backends, comma-separated (default highs-grouped,highs; cpsat when registered)")
    p.add_argument("--baseline-ns", type=_ints, default=list(DEFAULT_BASELINE_NS),
                   help="sample sizes for the baselines (big-M highs, naive, cpsat); default %(default)s")
    p.add_argument("--baseline-time-limit", type=float, default=DEFAULT_BASELINE_TIME_LIMIT,
                   help="seconds per oracle call for the baselines (default %(default)s)")
    p.add_argument("--threads", type=int, default=2, help="solver threads")
    p.add_argument("--executor", choices=("inprocess", "processes", "dask"), default="inprocess",
                   help="where the grouped oracle's point solves run for worker counts above 1 (default %(default)s)")
    p.add_argument("--workers", type=int_list(1), default=[1],
                   help="worker counts to measure the grouped oracle with, e.g. 1,2 (1 = sequential in-process)")
    p.add_argument("--no-naive", action="store_true", help="skip the naive formulation")
    p.add_argument("--out", type=Path, default=None, help="write runs.csv, summary.json, table.txt here")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns an exit code (0 on success)."""
    parser = build_parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.draws < 1 or args.threads < 1:
        print("error: --draws and --threads must be at least 1", file=sys.stderr)
        return 2
    if min(args.workers) < 1 or (args.executor == "inprocess" and max(args.workers) > 1):
        print("error: --workers must be positive; more than 1 worker needs --executor processes or dask",
              file=sys.stderr)
        return 2
    if not all(math.isfinite(t) and t > 0 for t in (args.time_limit, args.baseline_time_limit)):
        print("error: --time-limit and --baseline-time-limit must be positive numbers of seconds", file=sys.stderr)
        return 2
    known = registry.names()
    unknown = [b for b in args.backends if b not in known]
    if unknown:
        print(f"error: unknown backend(s) {', '.join(unknown)}; registered: {', '.join(known)}", file=sys.stderr)
        return 2
    not_mip = [b for b in args.backends if getattr(registry.get(b), "kind", None) != "mip"]
    if not_mip:
        print(f"error: {', '.join(not_mip)} is not a MIP backend; use highs (or cpsat when installed)",
              file=sys.stderr)
        return 2
    with show_progress(is_enabled() and not args.quiet):  # the benchmark's --quiet silences the display too
        return _run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
