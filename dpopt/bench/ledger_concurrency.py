"""Concurrent processes charging one SQLite ledger file: throughput, no overspending, nothing lost.

Setup
-----
``--processes`` processes (multiprocessing, spawn context) start together and each
attempts ``--charges`` charges of ``--epsilon`` (δ = 0) through
:meth:`dpopt.SQLiteLedger.spend` against one dataset of one fresh ledger file, whose
ε budget (``--budget``, default half of everything attempted) allows only part of them.
Each process reports the row id of every charge it committed, how many were refused, and
any error (a failed transaction counts as a failure of the benchmark).

The table gives the charges attempted, committed and refused, the total wall time and
charges per second (after every process has imported dpopt), the committed sum against
the budget, and ``lost``: committed charges missing from the file plus rows no process
reported.  The exit code is 0 only when the sum is within the budget and nothing is lost.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import queue
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpopt.bench.arguments import parse, positive_float, positive_int
from dpopt.errors import BudgetExceededError
from dpopt.privacy.sqlite_ledger import SQLiteLedger

NAME = "ledger-concurrency"
DEFAULT_PROCESSES = 4
DEFAULT_CHARGES = 25
DEFAULT_EPSILON = 0.01
DATASET = "bench"
_START_TIMEOUT = 120.0


@dataclass(frozen=True)
class Outcome:
    """What one run of the benchmark measured."""

    processes: int
    attempted: int
    committed: int
    refused: int
    errors: tuple[str, ...]
    seconds: float
    committed_epsilon: float
    budget: float
    rows: int
    lost: int

    @property
    def within_budget(self) -> bool:
        """Whether the committed ε sum stays within the budget (Ledger's tolerance)."""
        return self.committed_epsilon <= self.budget * (1.0 + 1e-12)


def worker(ledger: SQLiteLedger, charges: int, epsilon: float, start: Any, results: Any) -> None:
    """Attempt ``charges`` charges on ``ledger``; put (committed ids, refused, error or "") on ``results``."""
    committed: list[int] = []
    refused = 0
    try:
        start.wait(_START_TIMEOUT)
        for k in range(charges):
            try:
                with ledger.spend(epsilon, 0.0, label=f"charge {k}", mechanism=NAME) as handle:
                    pass
            except BudgetExceededError:
                refused += 1
                continue
            committed.append(getattr(handle.charge, "id", -1))
    except Exception as exc:  # noqa: BLE001 — reported to the parent, which counts it as a failure
        results.put((committed, refused, f"{type(exc).__name__}: {exc}"))
        return
    results.put((committed, refused, ""))


def _report(results: Any, procs: Sequence[Any]) -> tuple[list[int], int, str]:
    """The next worker report; fails when the workers died (or hang) without reporting."""
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        alive = any(p.is_alive() for p in procs)
        try:
            report: tuple[list[int], int, str] = results.get(timeout=0.5 if alive else 5.0)
            return report
        except queue.Empty:
            if not alive or time.monotonic() > deadline:
                raise RuntimeError("a benchmark process died or hung without reporting") from None


def run(path: Path, *, processes: int, charges: int, epsilon: float, budget: float) -> Outcome:
    """Charge a fresh dataset of ``path`` from ``processes`` processes at once.

    Parameters
    ----------
    path : Path
        The ledger file (created if missing; the dataset must not exist yet).
    processes, charges : int
        Processes, and charges each attempts.
    epsilon, budget : float
        ε of every charge and the dataset's ε budget.
    """
    ledger = SQLiteLedger(path, dataset=DATASET, epsilon_budget=budget, create=True)
    if ledger.charges:
        raise ValueError(f"dataset {DATASET!r} of {path} already holds charges; use a fresh file")
    ctx = mp.get_context("spawn")
    start, results = ctx.Barrier(processes + 1), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(ledger, charges, epsilon, start, results)) for _ in range(processes)]
    for p in procs:
        p.start()
    start.wait(_START_TIMEOUT)  # every process has imported dpopt and unpickled the ledger
    began = time.perf_counter()
    reports = [_report(results, procs) for _ in procs]
    seconds = time.perf_counter() - began
    for p in procs:
        p.join()
    reported = [rid for ids, _, _ in reports for rid in ids]
    rows = {c.id: c for c in ledger.charges}
    lost = len(set(reported) - set(rows)) + len(set(rows) - set(reported))
    return Outcome(processes=processes, attempted=processes * charges, committed=len(reported),
                   refused=sum(r for _, r, _ in reports), errors=tuple(e for _, _, e in reports if e),
                   seconds=seconds,
                   committed_epsilon=math.fsum(c.epsilon for c in rows.values()), budget=budget,
                   rows=len(rows), lost=lost)


def render(out: Outcome) -> str:
    """The benchmark's report."""
    rate = out.attempted / out.seconds if out.seconds > 0 else math.inf
    check = "ok" if out.lost == 0 else "FAILED"
    budget = "within" if out.within_budget else "OVER"
    return "\n".join([
        f"processes            {out.processes}",
        f"charges attempted    {out.attempted}",
        f"committed            {out.committed} ({out.rows} rows in the file)",
        f"refused              {out.refused}",
        *[f"error                {e}" for e in out.errors],
        f"total time           {out.seconds:.3f} s",
        f"charges/s            {rate:.1f}",
        f"committed ε          {out.committed_epsilon:.6g} of budget {out.budget:.6g} ({budget} budget)",
        f"lost                 {out.lost} ({check})",
    ])


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command-line options."""
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=(__doc__ or "").strip().splitlines()[0])
    p.add_argument("--processes", type=positive_int, default=DEFAULT_PROCESSES,
                   help=f"concurrent processes (default {DEFAULT_PROCESSES})")
    p.add_argument("--charges", type=positive_int, default=DEFAULT_CHARGES,
                   help=f"charges each process attempts (default {DEFAULT_CHARGES})")
    p.add_argument("--epsilon", type=positive_float, default=DEFAULT_EPSILON,
                   help=f"ε of every charge (default {DEFAULT_EPSILON:g})")
    p.add_argument("--budget", type=positive_float, default=None,
                   help="ε budget of the dataset (default: half of all charges attempted)")
    p.add_argument("--file", type=Path, default=None,
                   help="ledger file to create (default: a temporary file, removed afterwards)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns 0 when nothing was lost and the budget held, else 1."""
    parser = build_parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    budget = args.budget if args.budget is not None else args.processes * args.charges * args.epsilon / 2
    if args.file is not None and args.file.exists():
        print(f"error: {args.file} exists; pass a new file name", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dpopt-ledger-") as tmp:
        path = args.file if args.file is not None else Path(tmp) / "ledger.sqlite"
        out = run(path, processes=args.processes, charges=args.charges, epsilon=args.epsilon, budget=budget)
    print(render(out))
    return 0 if out.lost == 0 and out.within_budget and not out.errors else 1
