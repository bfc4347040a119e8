"""Cost of cross-verification: OPDisc on balanced Adult with and without the verifier.

Setup: the balanced Adult train split (``--n`` rows, default all 15,682), the 23-feature
encoding and ``IntegerGrid(1, -4, 4, l2_bound=√23)``; ``dp.OPDisc(--epsilon, 1/n²)`` with
the default ``solver="auto"`` (``highs-grouped`` on this schema, verified by
``scip-grouped``).  For each noise seed 0..``--draws``−1 the same draw is run with
``verify=False`` and ``verify=True``; the table shows the wall time of each run, the
primary's and the verifier's solve times, and whether both released the same point (they
must: verification only confirms).  Seeds make the noise reproducible, not secure: this is
a benchmark, and the solve times printed are diagnostics, not private.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import positive_float, positive_int
from dpopt.datasets import load_adult
from dpopt.progress import counted

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench verify-cost", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=positive_int, default=None, help="rows of the balanced train split (default all)")
    p.add_argument("--draws", type=positive_int, default=3, help="noise draws (seeds 0..draws-1)")
    p.add_argument("--epsilon", type=positive_float, default=0.5, help="ε of OPDisc")
    return p


def _run(problem: dp.DiscreteProblem, n: int, eps: float, seed: int, verify: bool) -> dict[str, Any]:
    mech = dp.OPDisc(eps, 1.0 / n**2, verify=verify, ledger=dp.Ledger())
    start = time.perf_counter()
    release = mech.run(problem, seed=seed, keep_diagnostics=True)
    wall = time.perf_counter() - start
    assert release.diagnostics is not None
    solves = dict(zip([c.role for c in release.oracle_calls],
                      [r.solve_time for r in release.diagnostics.oracle_results], strict=False))
    verifier = next((c.backend for c in release.oracle_calls if c.role == "verifier"), "-")
    return {"wall": wall, "primary": solves.get("oracle", float("nan")), "verifier_backend": verifier,
            "verifier": solves.get("verifier", float("nan")), "theta": release.theta}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    adult = load_adult("train", balanced=True, n=args.n, seed=0)
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(adult, dp.Variable(23), dp.IntegerGrid(1, -4, 4, l2_bound=23**0.5)))
    print(f"balanced Adult, n = {adult.n}, OPDisc ε = {args.epsilon:g}, δ = 1/n², solver auto")
    print(f"{'seed':>4}  {'off: wall s':>11}  {'on: wall s':>10}  {'primary s':>9}  {'verifier':>14}  "
          f"{'verifier s':>10}  same point")
    ratios = []
    for seed in counted(args.draws, "verify-cost: draws"):
        off = _run(problem, adult.n, args.epsilon, seed, verify=False)
        on = _run(problem, adult.n, args.epsilon, seed, verify=True)
        same = bool(np.array_equal(off["theta"], on["theta"]))
        ratios.append(on["wall"] / off["wall"])
        print(f"{seed:>4}  {off['wall']:>11.1f}  {on['wall']:>10.1f}  {on['primary']:>9.1f}  "
              f"{on['verifier_backend']:>14}  {on['verifier']:>10.1f}  {same}")
        if not same:
            print("error: verification changed the released point")
            return 1
    print(f"median time ratio (verified / unverified): {statistics.median(ratios):.2f}")
    return 0
