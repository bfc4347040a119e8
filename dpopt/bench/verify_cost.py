"""Cost of cross-verification: OPDisc on balanced Adult with and without the verifier.

Setup: the balanced Adult train split (``--n`` rows, default all 15,682), the 23-feature
encoding and ``IntegerGrid(1, -4, 4, l2_bound=√23)``; ``dp.OPDisc(--epsilon, 1/n²)`` with
the default ``solver="auto"`` (``highs-grouped`` on this schema, verified by
``scip-grouped``).  For each noise seed 0..``--draws``−1 the same draw is run with
``verify=False`` and ``verify=True``; the table shows the wall time of each run, the
verified run's primary and verifier solve times and their sum (the time per verified oracle
call), whether the primary's answer was certified and the verifier confirmed it, and whether
both runs released the same point (they must: verification only confirms).  The last lines
give the median and the maximum time per verified call and how many calls were certified and
verified.  Seeds make the noise reproducible, not secure: this is
a benchmark, and the solve times printed are diagnostics, not private.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import positive_float, positive_int
from dpopt.datasets import load_adult
from dpopt.errors import UncertifiedOracleError
from dpopt.progress import counted

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench verify-cost", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=positive_int, default=None, help="rows of the balanced train split (default all)")
    p.add_argument("--draws", type=positive_int, default=3, help="noise draws (seeds 0..draws-1)")
    p.add_argument("--epsilon", type=positive_float, default=0.5, help="ε of OPDisc")
    return p


def _run(problem: dp.DiscreteProblem, n: int, eps: float, seed: int, verify: bool) -> dict[str, Any]:
    """One draw: wall time, per-role solve times and verdicts, the released point (None: failed closed)."""
    mech = dp.OPDisc(eps, 1.0 / n**2, verify=verify, ledger=dp.Ledger())
    start = time.perf_counter()
    try:
        release = mech.run(problem, seed=seed, keep_diagnostics=True)
    except UncertifiedOracleError as exc:  # a benchmark reports a refusal instead of stopping
        results, theta = (exc.diagnostics.oracle_results if exc.diagnostics is not None else ()), None
    else:
        assert release.diagnostics is not None
        results, theta = release.diagnostics.oracle_results, release.theta
    wall = time.perf_counter() - start
    roles = {("verifier" if getattr(r.recheck, "role", None) == "verifier" else "oracle"): r for r in results}
    primary, check = roles.get("oracle"), roles.get("verifier")
    return {"wall": wall, "primary": primary.solve_time if primary else math.nan,
            "verifier_backend": check.backend if check else "-", "verifier": check.solve_time if check else math.nan,
            "certified": bool(primary and primary.certified), "verified": bool(check and check.certified),
            "theta": theta}


def _summary(totals: list[float], ok: int, draws: int) -> str:
    """The last lines: median and max seconds per verified call, and how many were certified and verified."""
    if not totals:
        return f"certified and verified: {ok} of {draws} calls"
    return (f"per verified call (primary + verifier solve): median {statistics.median(totals):.1f} s, "
            f"max {max(totals):.1f} s\ncertified and verified: {ok} of {draws} calls")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    adult = load_adult("train", balanced=True, n=args.n, seed=0)
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(adult, dp.Variable(23), dp.IntegerGrid(1, -4, 4, l2_bound=23**0.5)))
    print(f"balanced Adult, n = {adult.n}, OPDisc ε = {args.epsilon:g}, δ = 1/n², solver auto")
    print(f"{'seed':>4}  {'off: wall s':>11}  {'on: wall s':>10}  {'primary s':>9}  {'verifier':>14}  "
          f"{'verifier s':>10}  {'total s':>7}  {'certified':>9}  {'verified':>8}  same point")
    ratios, totals, ok, status = [], [], 0, 0
    for seed in counted(args.draws, "verify-cost: draws"):
        off = _run(problem, adult.n, args.epsilon, seed, verify=False)
        on = _run(problem, adult.n, args.epsilon, seed, verify=True)
        same = off["theta"] is not None and on["theta"] is not None and bool(np.array_equal(off["theta"], on["theta"]))
        total = on["primary"] + on["verifier"]
        ratios.append(on["wall"] / off["wall"])
        if on["certified"] and on["verified"]:
            ok += 1
            totals.append(total)
        print(f"{seed:>4}  {off['wall']:>11.1f}  {on['wall']:>10.1f}  {on['primary']:>9.1f}  "
              f"{on['verifier_backend']:>14}  {on['verifier']:>10.1f}  {total:>7.1f}  {on['certified']!s:>9}  "
              f"{on['verified']!s:>8}  {same}", flush=True)
        if not same:
            print("error: verification changed the released point (or a run released nothing)")
            status = 1
    print(f"median time ratio (verified / unverified): {statistics.median(ratios):.2f}")
    print(_summary(totals, ok, args.draws))
    return status
