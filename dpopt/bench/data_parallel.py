"""Data-parallel DP-GD on a Dask LocalCluster over partitioned parquet files larger than a worker's memory.

Setup
-----
A synthetic table of ``--rows`` (default 10⁷) rows × ``--features`` (default 100) numeric
columns on the grid ``k/1000`` of [−1, 1] and a 0/1 label from a noisy linear rule is
written as parquet files of ``--rows-per-file`` rows (default 100,000) into ``--data``
(reused when a previous run wrote the same shape and seed).  It is read with
:meth:`dpopt.Dataset.from_parquet` (declared schema, unit scaling, classes ``[0, 1]``):
one partition per file, n from the files' metadata, nothing read up front.

``dp.DPGradientDescent(--epsilon, --delta, steps=--steps)`` (adaptive clipping, the
default) fits a logistic loss over an ℓ2 ball on a ``distributed.LocalCluster`` of
``--workers`` worker processes with one thread each and ``--memory-limit`` each (default
2 GiB, smaller than the 8 GB of float64 data at the default size).  Every step is one pass
over the files: each partition's clipped gradient sum and count are computed on a worker
and summed on the cluster; the noise is drawn on the client.

Reported: the run's wall time per step, the peak resident memory of every worker process
(sampled every ``--sample-interval`` seconds with ``client.run`` and psutil) and of the
client, and a check on a subsample: the first ``--subsample`` rows of the same files, run
with the same seed through the Dask path (on the cluster) and in memory (NumPy), with the
largest |θ_dask − θ_numpy|.  Seeds make the noise reproducible and are not secure: this is a
benchmark.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpopt.bench.arguments import parse, positive_float, positive_int

NAME = "data-parallel"
GRID = 1000  # entries are k/GRID on [-1, 1]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"dpopt bench {NAME}", description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=positive_int, default=10_000_000)
    p.add_argument("--features", type=positive_int, default=100)
    p.add_argument("--rows-per-file", type=positive_int, default=100_000)
    p.add_argument("--data", type=Path, default=None,
                   help="folder of the parquet files (default: ~/.cache/dpopt/data-parallel-ROWSxFEATURES)")
    p.add_argument("--steps", type=positive_int, default=10)
    p.add_argument("--workers", type=positive_int, default=2)
    p.add_argument("--memory-limit", default="2GiB", help="per worker (dask notation)")
    p.add_argument("--subsample", type=positive_int, default=200_000)
    p.add_argument("--epsilon", type=positive_float, default=1.0)
    p.add_argument("--delta", type=positive_float, default=1e-9)
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--sample-interval", type=positive_float, default=0.5)
    p.add_argument("--json", type=Path, default=None, help="write the summary as JSON here")
    return p


# ---------------------------------------------------------------------------
# the data
# ---------------------------------------------------------------------------


def _manifest(rows: int, features: int, rows_per_file: int, seed: int) -> dict[str, int]:
    return {"rows": rows, "features": features, "rows_per_file": rows_per_file, "seed": seed, "version": 1}


def write_data(folder: Path, rows: int, features: int, rows_per_file: int, seed: int) -> tuple[list[Path], float]:
    """The parquet files (written unless a manifest says they are there); and the seconds spent writing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    want = _manifest(rows, features, rows_per_file, seed)
    count = math.ceil(rows / rows_per_file)
    files = [folder / f"part-{i:05d}.parquet" for i in range(count)]
    marker = folder / "manifest.json"
    if marker.exists() and json.loads(marker.read_text()) == want and all(f.exists() for f in files):
        return files, 0.0
    start = time.perf_counter()
    w = np.random.default_rng(seed).normal(0.0, 1.0, features) / math.sqrt(features)
    for i, path in enumerate(files):
        k = min(rows_per_file, rows - i * rows_per_file)
        rng = np.random.default_rng([seed, i])
        X = rng.integers(-GRID, GRID + 1, (k, features)) / GRID
        y = (X @ w * 4.0 + rng.logistic(0.0, 1.0, k) > 0).astype(np.int64)
        table = pa.table({**{f"f{j}": X[:, j] for j in range(features)}, "label": y})
        pq.write_table(table, path, row_group_size=rows_per_file)
    marker.write_text(json.dumps(want))
    return files, time.perf_counter() - start


def schema(features: int) -> Any:
    import dpopt as dp

    return dp.Schema.uniform(features, dp.Numeric(-1, 1, grid=f"1/{GRID}"), prefix="f")


# ---------------------------------------------------------------------------
# memory sampling
# ---------------------------------------------------------------------------


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


class WorkerMemory:
    """Peak resident memory of every worker process, sampled with ``client.run`` in a thread."""

    def __init__(self, client: Any, interval: float) -> None:
        self.client = client
        self.interval = interval
        self.peak: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                for worker, rss in self.client.run(_rss).items():
                    self.peak[worker] = max(self.peak.get(worker, 0), int(rss))
            except Exception:  # noqa: BLE001 — a worker restarting; the next sample counts
                pass
            self._stop.wait(self.interval)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------
# the runs
# ---------------------------------------------------------------------------


def _problem(data: Any) -> Any:
    import dpopt as dp

    d = data.n_features
    return dp.Problem(dp.LogisticLoss(data, dp.Variable(d)), constraint=dp.L2Ball(d, 1.0))


def _fit(data: Any, args: argparse.Namespace) -> tuple[np.ndarray, float]:
    import dpopt as dp

    mech = dp.DPGradientDescent(args.epsilon, args.delta, steps=args.steps)
    start = time.perf_counter()
    release = mech.run(_problem(data), seed=args.seed)
    return np.asarray(release.theta), (time.perf_counter() - start) / args.steps


def _subsample_pair(files: list[Path], m: int, rows_per_file: int, sch: Any) -> tuple[Any, Any]:
    """The first m rows of the files: Dask-backed (lazy subset) and in memory (pandas)."""
    import pandas as pd

    import dpopt as dp

    k = math.ceil(m / rows_per_file)
    first = [str(f) for f in files[:k]]
    lazy = dp.Dataset.from_parquet(first, sch, label="label", classes=[0, 1])
    total = lazy.n
    if m < total:
        lazy = lazy.subset(np.arange(m))
    frame = pd.concat([pd.read_parquet(f) for f in first], ignore_index=True).iloc[:m]
    eager = dp.Dataset.from_frame(frame, sch, label="label", classes=[0, 1])
    return lazy, eager


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write or reuse the files, run the full-size and the subsample comparison; the summary."""
    import dask
    from distributed import Client, LocalCluster

    import dpopt as dp
    from dpopt.executors import DaskExecutor, use_executor

    folder = args.data or Path.home() / ".cache" / "dpopt" / f"data-parallel-{args.rows}x{args.features}"
    files, write_seconds = write_data(folder, args.rows, args.features, args.rows_per_file, args.seed)
    sch = schema(args.features)
    m = min(args.subsample, args.rows)
    summary: dict[str, Any] = {
        "rows": args.rows, "features": args.features, "files": len(files), "rows_per_file": args.rows_per_file,
        "data_gb_float64": args.rows * args.features * 8 / 1e9, "write_seconds": write_seconds,
        "workers": args.workers, "memory_limit": args.memory_limit, "steps": args.steps, "subsample": m,
        "dask": dask.__version__, "folder": str(folder),
    }
    with dask.config.set({"distributed.worker.memory.spill": False}), \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit,
                         processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client, use_executor(DaskExecutor(client)):
        data = dp.Dataset.from_parquet(str(folder / "part-*.parquet"), sch, label="label", classes=[0, 1])
        with WorkerMemory(client, args.sample_interval) as memory:
            theta_full, full_step = _fit(data, args)
        summary.update(full_seconds_per_step=full_step, worker_peak_rss_gb=sorted(
            v / 1e9 for v in memory.peak.values()), theta_full_norm=float(np.linalg.norm(theta_full)))
        lazy, eager = _subsample_pair(files, m, args.rows_per_file, sch)
        theta_dask, sub_dask_step = _fit(lazy, args)
    theta_numpy, sub_numpy_step = _fit(eager, args)
    summary.update(subsample_dask_seconds_per_step=sub_dask_step, subsample_numpy_seconds_per_step=sub_numpy_step,
                   max_abs_theta_difference=float(np.max(np.abs(theta_dask - theta_numpy))),
                   client_peak_rss_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9)
    return summary


def render(s: dict[str, Any]) -> str:
    peaks = ", ".join(f"{v:.2f}" for v in s["worker_peak_rss_gb"])
    rows = [
        ("data", f"{s['rows']:,} rows × {s['features']} features = {s['data_gb_float64']:.1f} GB float64, "
                 f"{s['files']} parquet files of {s['rows_per_file']:,} rows"),
        ("cluster", f"LocalCluster, {s['workers']} worker processes × 1 thread, memory limit {s['memory_limit']} "
                    f"each (dask {s['dask']})"),
        ("DP-GD full size", f"{s['steps']} steps, {s['full_seconds_per_step']:.1f} s per step"),
        ("peak RSS per worker", f"{peaks} GB"),
        ("peak RSS client", f"{s['client_peak_rss_gb']:.2f} GB"),
        (f"subsample {s['subsample']:,} rows", f"dask {s['subsample_dask_seconds_per_step']:.2f} s/step, "
                                               f"numpy {s['subsample_numpy_seconds_per_step']:.3f} s/step"),
        ("max |θ_dask − θ_numpy|", f"{s['max_abs_theta_difference']:.2e}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table; 0 when the subsample runs agree to 1e-8."""
    parser = build_parser()
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        print(f"error: this benchmark needs dask[distributed,dataframe] and pyarrow ({exc})", file=sys.stderr)
        return 2
    summary = run(args)
    print(render(summary))
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if summary["max_abs_theta_difference"] <= 1e-8 else 1
