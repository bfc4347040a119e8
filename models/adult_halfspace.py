"""Private 0/1-loss halfspaces on balanced Adult with OPDisc, RSPM or OPSamp (Neel et al. 2019, Sec. 5).

Run it with::

    dpopt solve models/adult_halfspace.py --solver highs-grouped --set n=None --delta 4.07e-9
    dpopt solve models/adult_halfspace.py --solver highs --set n=500
    dpopt solve models/adult_halfspace.py --solver cpsat --set n=500 --epsilon 0.5
    dpopt solve models/adult_halfspace.py --solver highs --set mechanism=rspm

The paper's setting: the balanced Adult training subset (all 7,841 positives and as
many negatives, n = 15,682), the 23-feature encoding, a classifier w on the grid
τ = 1 with coordinates in {−4, …, 4} and ‖w‖₂ ≤ √23, the 0/1 loss
1[y⟨x, w⟩ ≤ 0], and δ = 1/n².  ``n`` subsamples the balanced set.  Every oracle call
runs to completion (private mode); ``--time-limit`` is an opt-in that makes the guarantee
conditional, and a call it stops releases nothing (exit code 3 from ``dpopt solve``, which
says that outcome is not private).  ``highs-grouped`` (the columns the schema declares
numeric enumerated, rows grouped by their one-hot pattern) solves the full n = 15,682 in
about 10–25 s (median; minutes for hard draws) per oracle call on 2 cores; the big-M
``highs`` and ``cpsat`` oracles take minutes to hours beyond n ≈ 500–1000.

Parameters
----------
epsilon
    ε of the (ε, δ)-DP guarantee.
delta
    δ; the default 4e-6 is the paper's 1/n² at the default n = 500 — pass
    ``--delta`` with 1/n² when you change n (e.g. 4.07e-9 for n = 15,682).
n
    Subsample size of the balanced training set (None: all 15,682 rows).
data_seed
    Seed of the *data* subsample (the noise seed is ``dpopt solve --seed``).
mechanism
    ``opdisc`` (Alg. 1, the default), ``rspm`` (Alg. 3 over {−1, 0, 1}^23, the paper's
    RSPM domain) or ``opsamp`` (Alg. 2; ``calls`` oracle calls, default 20).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets import load_adult

PARAMS: dict[str, Any] = {"epsilon": 1.0, "delta": 1.0 / 500**2, "n": 500, "data_seed": 0, "mechanism": "opdisc",
                          "calls": 20}


def build(params: dict[str, Any]) -> tuple[dp.DiscreteProblem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    train = load_adult("train", balanced=True, n=params["n"], seed=params["data_seed"])
    d = train.n_features
    w = dp.Variable(d, name="w")
    eps, delta, kind = params["epsilon"], params["delta"], str(params["mechanism"]).lower()
    if kind == "rspm":
        grid = dp.IntegerGrid(step=1, low=-1, high=1)
        return dp.DiscreteProblem(dp.ZeroOneLoss(train, w, grid)), dp.RSPM(eps, delta)
    grid = dp.IntegerGrid(step=1, low=-4, high=4, l2_bound=math.sqrt(d))
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(train, w, grid))
    if kind == "opsamp":
        return problem, dp.OPSamp(eps, delta, calls=int(params["calls"]))
    if kind != "opdisc":
        raise dp.errors.ModelError(f"mechanism must be opdisc, rspm or opsamp, got {kind!r}")
    return problem, dp.OPDisc(eps, delta)


def evaluate(release: dp.Release) -> dict[str, float]:
    """0/1 accuracy of the released halfspace on the Adult test split (not the private data)."""
    test = load_adult("test")
    pred = np.where(test.X @ release.theta > 0.0, 1.0, -1.0)
    return {"test_accuracy": float(np.mean(pred == test.y)), "n_test": test.n}
