"""Scale-out in one script: a table stored as many parquet files, fitted by DP-GD on a Dask
LocalCluster, and OPDisc's grouped oracle with its point MIPs on a pool of two processes.

Run it with ``python examples/scale_out.py`` (it needs ``pip install "dpopt[dask]"``).  Worker
processes start a fresh Python that imports this script again, so everything that runs dpopt
is under ``if __name__ == "__main__":`` — Python's rule for spawned processes (a notebook or
``dpopt solve`` needs nothing).  To use a running cluster instead, pass its scheduler:
``executor=distributed.Client("tcp://scheduler-host:8786")``, or ``--scheduler`` on the CLI.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import dpopt as dp
from dpopt.datasets import load_adult

HERE = Path(__file__).resolve().parent
SCHEMA = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "hours": dp.Numeric(1, 99, grid=1),
                    "sex": dp.Categorical(["Female", "Male"]), "union": dp.Binary()})


def write_parts(folder: Path, parts: int = 4) -> None:
    """examples/people.csv as ``parts`` parquet files (one Dask partition each)."""
    table = pd.read_csv(HERE / "people.csv")
    for k, rows in enumerate(np.array_split(np.arange(len(table)), parts)):
        table.iloc[rows].to_parquet(folder / f"part-{k}.parquet")


def main() -> None:
    """Fit on the files with executor="dask", then run OPDisc with executor="processes"."""
    folder = Path(tempfile.mkdtemp())
    write_parts(folder)
    data = dp.Dataset.from_parquet(folder, SCHEMA, label="income", classes=["<=50K", ">50K"], intercept=True)
    w = dp.Variable(data.n_features)
    problem = dp.Problem(dp.LogisticLoss(data, w), constraint=dp.L2Ball(w, 10.0))
    release = dp.DPGradientDescent(epsilon=1.0, delta=1e-6, steps=50).run(problem, executor="dask")
    coefficients = {name: round(float(v), 3) for name, v in zip(release.feature_names, release.theta, strict=True)}
    print("DP-GD on", data.n, "rows in 4 files:", coefficients)

    adult = load_adult("train", balanced=True, n=2000, seed=0)
    grid = dp.IntegerGrid(step=1, low=-4, high=4, l2_bound=23 ** 0.5)
    halfspace = dp.DiscreteProblem(dp.ZeroOneLoss(adult, dp.Variable(23), grid))
    release = dp.OPDisc(epsilon=1.0, delta=1 / adult.n**2).run(halfspace, executor="processes")
    print("OPDisc with its point MIPs on 2 processes:", release.summary().splitlines()[0])


if __name__ == "__main__":
    main()
