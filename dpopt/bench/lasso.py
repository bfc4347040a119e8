"""Private Frank-Wolfe LASSO: incremental O(p) steps vs full-gradient steps, and memory bandwidth.

Setup
-----
Synthetic LASSO data with the declared bounds of TTZ14 Sec. 5.3: entries of X
uniform on [−1, 1] (so ‖x‖∞ ≤ 1), y = clip(Xθ* + noise, −1, 1) with a
5-sparse θ*, ℓ1 ball of radius 1.  Two cases: dense X (default n = 100,000,
p = 1,000) and scipy CSR X with ``--density`` non-zeros per entry.

For each case, in one process and with the same noise (same seed):

* **fast** — :class:`~dpopt.mechanisms.polytope_frank_wolfe.PolytopeFrankWolfe`'s
  incremental path (:class:`~dpopt.numerics.lasso_fast.IncrementalLassoGradient`
  under the same noisy-max loop the mechanism runs): setup (``Xᵀy`` and, dense,
  the Gram matrix ``XᵀX``) timed separately, then ``--iters`` steps;
* **straightforward** — the same loop with the full gradient
  ``(2/n)Xᵀ(Xθ − y)`` recomputed each step (two passes over X), timed over
  ``--baseline-iters`` steps and scaled to 1,000.

The two paths' iterates after ``--baseline-iters`` steps are compared (they
must agree to rounding).  Each path's CPU time (this process, all threads) is printed
too: on a shared machine a loop of many short steps loses more wall time to other
processes than a few long BLAS calls, so the CPU ratio is the steadier figure (it favours
the straightforward path's count where BLAS runs several threads).  Machine bandwidth: the best of five ``np.copyto``
of a 256 MB array (bytes read + written per second).  Bandwidth fraction =
(bytes a path must stream per step × steps per second) / machine bandwidth,
with per-step bytes modelled as: fast dense 8·(3p + 2·2p) (Gram row, read and
write of u, Xᵀy, and the 2p noises and scores); fast sparse the same with the
Gram column's non-zeros (12 bytes each) in place of p; straightforward
8·2·nnz(X) (dense: 16np).  The fast path's working set (a few p-vectors) sits
in cache, so its fraction says how far it is from streaming, not that it is
memory bound: at p = 1,000 each step is dominated by the exact selection's few
passes over the 2p scores (grid units, envelope, cumulative sums) and numpy's
per-call overhead.

Seeds make the noise reproducible and are not secure: this is a benchmark.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpopt.bench.arguments import positive_int
from dpopt.bench.output import write_outputs
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe, noisy_max_frank_wolfe
from dpopt.numerics.fw_oracles import CoordinateGradient, L1BallScorer
from dpopt.numerics.lasso_fast import DirectLassoGradient, IncrementalLassoGradient
from dpopt.privacy.exact_selection import ExactSelector
from dpopt.privacy.ledger import Ledger

NAME = "lasso"


@dataclass
class Run:
    """One timed path (a CSV row)."""

    case: str
    path: str
    n: int
    p: int
    nnz: int
    iterations_timed: int
    setup_seconds: float
    loop_seconds: float
    seconds_per_1000: float
    bytes_per_step: float
    bandwidth_fraction: float
    cpu_seconds_per_1000: float = float("nan")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--n", type=positive_int, default=100_000, help="rows (default 100,000)")
    p.add_argument("--p", type=positive_int, default=1_000, help="features (default 1,000)")
    p.add_argument("--iters", type=positive_int, default=1_000, help="fast-path steps timed (default 1,000)")
    p.add_argument("--baseline-iters", type=positive_int, default=20,
                   help="straightforward steps timed, scaled to 1,000 (default 20)")
    p.add_argument("--density", type=float, default=0.01, help="non-zero fraction of the sparse case (default 0.01)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", default="dense,sparse", help="comma-separated subset of dense,sparse")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="write runs.csv, summary.json, table.txt")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def memory_bandwidth(megabytes: int = 256, repeats: int = 5) -> float:
    """Bytes per second of the best ``np.copyto`` of a large array (read + write)."""
    src = np.ones(megabytes * (1 << 20) // 8)
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2.0 * src.nbytes / best


def make_data(n: int, p: int, density: float | None, seed: int) -> tuple[Any, np.ndarray]:
    """X with entries in [−1, 1] (dense, or CSR with ``density``) and y = clip(Xθ* + noise, −1, 1)."""
    rng = np.random.default_rng(seed)
    if density is None:
        X: Any = rng.uniform(-1.0, 1.0, size=(n, p))
    else:
        X = sp.random(n, p, density=density, format="csr", random_state=seed,
                      data_rvs=lambda k: rng.uniform(-1.0, 1.0, size=k))
    theta = np.zeros(p)
    theta[:5] = [0.4, -0.3, 0.2, -0.1, 0.05]
    y = np.clip(np.asarray(X @ theta).ravel() + 0.1 * rng.standard_normal(n), -1.0, 1.0)
    return X, y


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _timed_cpu(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, its wall time and its CPU time (this process, all threads)."""
    cpu = time.process_time()
    out, wall = _timed(fn)
    return out, wall, time.process_time() - cpu


def _loop(oracle: Any, scorer: L1BallScorer, steps: int, selector: ExactSelector, seed: int) -> np.ndarray:
    return noisy_max_frank_wolfe(CoordinateGradient(oracle), scorer, steps,
                                 selector.bind(np.random.default_rng(seed)), "standard")


def run_case(case: str, X: Any, y: np.ndarray, args: argparse.Namespace, bandwidth: float,
             progress: Callable[[str], None]) -> tuple[list[Run], dict[str, Any]]:
    """Time the fast and the straightforward path on one dataset."""
    n, p = X.shape
    nnz = int(X.nnz) if sp.issparse(X) else n * p
    mech = PolytopeFrankWolfe(args.epsilon, args.delta, steps=args.iters, ledger=Ledger())
    plan = mech._calibrate(L1BallScorer(p, 1.0), n, 4.0, 8.0, True)  # L₁ = 2(r + 1), Γ = 8 for r = 1
    scorer, scale, selector = L1BallScorer(p, 1.0), plan.scale, mech.selector(plan)
    progress(f"[{case}] fast path: setup")
    fast, setup = _timed(lambda: IncrementalLassoGradient(X, y, np.zeros(p)))
    progress(f"[{case}] fast path: {args.iters} steps")
    _, loop, loop_cpu = _timed_cpu(lambda: _loop(fast, scorer, args.iters, selector, args.seed))
    if sp.issparse(X):
        cols = [c for c in fast._cache.values()]
        col_nnz = float(np.mean([c[0].size if isinstance(c, tuple) else p for c in cols])) if cols else 0.0
        fast_bytes = 8.0 * (2 * p + 2 * 2 * p) + 12.0 * col_nnz * 1.0 + 8.0 * p
    else:
        fast_bytes = 8.0 * (3 * p + 2 * 2 * p)
    k = min(args.baseline_iters, args.iters)
    progress(f"[{case}] straightforward path: {k} steps")
    direct = DirectLassoGradient(X, y, np.zeros(p))
    theta_direct, direct_loop, direct_cpu = _timed_cpu(lambda: _loop(direct, scorer, k, selector, args.seed))
    check = IncrementalLassoGradient(X, y, np.zeros(p))
    theta_fast_k = _loop(check, scorer, k, selector, args.seed)
    agree = float(np.max(np.abs(theta_fast_k - theta_direct)))
    direct_bytes = 16.0 * nnz
    runs = [
        Run(case, "fast", n, p, nnz, args.iters, setup, loop, 1000.0 * loop / args.iters, fast_bytes,
            fast_bytes * args.iters / loop / bandwidth, 1000.0 * loop_cpu / args.iters),
        Run(case, "straightforward", n, p, nnz, k, 0.0, direct_loop, 1000.0 * direct_loop / k, direct_bytes,
            direct_bytes * k / direct_loop / bandwidth, 1000.0 * direct_cpu / k),
    ]
    info = {"speedup_per_1000": runs[1].seconds_per_1000 / runs[0].seconds_per_1000,
            "speedup_incl_setup": runs[1].seconds_per_1000 / (runs[0].seconds_per_1000 + setup),
            "cpu_speedup_per_1000": runs[1].cpu_seconds_per_1000 / max(runs[0].cpu_seconds_per_1000, 1e-12),
            "max_iterate_difference": agree, "noise_scale": scale, "step_epsilon": plan.budget.step_epsilon}
    return runs, info


def format_table(runs: list[Run], infos: dict[str, dict[str, Any]], bandwidth: float) -> str:
    lines = [f"machine bandwidth (np.copyto, read+write): {bandwidth / 1e9:.2f} GB/s", "",
             f"{'case':7} {'path':16} {'n':>8} {'p':>6} {'nnz':>11} {'setup s':>8} {'s/1000 it':>10} "
             f"{'bytes/it':>10} {'BW frac':>8} {'cpu s/1000':>10}"]
    for r in runs:
        lines.append(f"{r.case:7} {r.path:16} {r.n:>8} {r.p:>6} {r.nnz:>11} {r.setup_seconds:>8.3f} "
                     f"{r.seconds_per_1000:>10.3f} {r.bytes_per_step:>10.3g} {r.bandwidth_fraction:>8.3f} "
                     f"{r.cpu_seconds_per_1000:>10.3f}")
    lines.append("")
    for case, info in infos.items():
        lines.append(f"{case}: straightforward/fast per 1,000 steps = {info['speedup_per_1000']:.1f}x "
                     f"({info['speedup_incl_setup']:.1f}x counting the fast path's setup once); "
                     f"max |θ_fast − θ_straightforward| = {info['max_iterate_difference']:.2e}")
        lines.append(f"{case}: by CPU time {info['cpu_speedup_per_1000']:.1f}x (steadier on a shared machine; "
                     "the straightforward path's CPU time counts every BLAS thread)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)

    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if not cases or any(c not in ("dense", "sparse") for c in cases):
        print("error: --cases must list dense and/or sparse", file=sys.stderr)
        return 2
    progress("measuring memory bandwidth")
    bandwidth = memory_bandwidth()
    runs: list[Run] = []
    infos: dict[str, dict[str, Any]] = {}
    for case in cases:
        progress(f"[{case}] generating data")
        X, y = make_data(args.n, args.p, None if case == "dense" else args.density, args.seed)
        case_runs, infos[case] = run_case(case, X, y, args, bandwidth, progress)
        runs.extend(case_runs)
        del X
    text = format_table(runs, infos, bandwidth)
    print(text)
    if args.out is not None:
        summary = {"benchmark": NAME, "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                   "bandwidth_bytes_per_second": bandwidth, "cases": infos, "runs": [asdict(r) for r in runs],
                   "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine()}
        write_outputs(args.out, Run, runs, summary, text)
    return 0
