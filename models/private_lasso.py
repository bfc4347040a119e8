"""Private LASSO with private Frank–Wolfe over the ℓ1 ball (Talwar–Thakurta–Zhang 2014, Alg. 4).

Run it with::

    dpopt solve models/private_lasso.py --epsilon 1.0 --delta 1e-6
    dpopt solve models/private_lasso.py --set n=50000 --set selection='"gumbel"' --seed 3

Model-script contract (see ``dpopt/cli/model_script.py``): ``dpopt solve``
calls ``build(params)`` with a copy of ``PARAMS`` updated by ``--set
key=value`` and by ``--epsilon``/``--delta``; ``build`` constructs its
mechanism with exactly those values (``dpopt solve`` checks it).

The problem (TTZ14 Sec. 5.3): minimize (1/n) Σ (⟨x_i, θ⟩ − y_i)² over
‖θ‖₁ ≤ radius, with the declared bounds ‖x‖∞ ≤ 1 and |y| ≤ 1.  The squared
loss is then ℓ1-Lipschitz over the ball with L₁ = 2(radius + 1), and each
Frank–Wolfe step picks one of the 2p vertices ±radius·e_j by a noisy argmin
of the gradient scores (Laplace report-noisy-max, or the exponential
mechanism with ``selection="gumbel"``).  The fast path keeps XᵀXθ up to date,
so a step costs O(p).

Parameters
----------
epsilon, delta
    The privacy guarantee under replace-one neighbours (δ = 0: pure ε-DP).
radius
    Radius of the ℓ1 ball; the generator's θ* has ‖θ*‖₁ = 1.
steps
    T, the number of noisy selections; None takes the T that minimizes the bound
    2Γ/(T+2) + (selection error at T steps' noise) from the declared bounds
    (``PolytopeFrankWolfe``'s default; the paper's Thm. 5.5 T is 6–40× larger here).
selection
    ``"auto"`` (default: Gumbel, the bounded-range exponential mechanism, when δ > 0;
    Laplace for δ = 0), ``"laplace"`` or ``"gumbel"``.
n, d, sparsity
    Training rows, features and non-zeros of the generator's θ*.
noise
    Label noise of the generator.
data_seed
    Seed of the synthetic *data* (the noise seed is ``dpopt solve --seed``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets import make_regression

PARAMS: dict[str, Any] = {
    "epsilon": 1.0, "delta": 1e-6, "radius": 1.0, "steps": None, "selection": "auto",
    "n": 100_000, "d": 50, "sparsity": 5, "noise": 0.1, "data_seed": 0,
}
N_TEST = 5000

# Filled by build() so that evaluate() can score the release on held-out rows.
_HELD_OUT: dict[str, Any] = {}


def build(params: dict[str, Any]) -> tuple[dp.Problem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    n = int(params["n"])
    data, theta_true = make_regression(n + N_TEST, int(params["d"]), x_bound=1.0, x_norm="inf", y_bound=1.0,
                                       noise=params["noise"], sparsity=params["sparsity"], seed=params["data_seed"])
    train, test = data.subset(np.arange(n)), data.subset(np.arange(n, n + N_TEST))
    _HELD_OUT.update(test=test, theta_true=theta_true)
    theta = dp.Variable(train.n_features, name="theta")
    problem = dp.Problem(dp.SquaredLoss(train, theta), constraint=dp.L1Ball(theta, params["radius"]))
    mechanism = dp.PolytopeFrankWolfe(params["epsilon"], params["delta"], steps=params["steps"],
                                      selection=params["selection"])
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Held-out mean squared error, distance to θ* and support overlap."""
    test, theta_true = _HELD_OUT["test"], _HELD_OUT["theta_true"]
    resid = test.X @ release.theta - test.y
    k = int(np.count_nonzero(theta_true))
    top = set(np.argsort(-np.abs(release.theta))[:k].tolist())
    return {
        "test_mse": float(np.mean(resid**2)),
        "test_mse_predict_zero": float(np.mean(test.y**2)),
        "l1_distance_to_true_theta": float(np.abs(release.theta - theta_true).sum()),
        "true_support_in_top_k": float(len(top & set(np.flatnonzero(theta_true).tolist())) / k),
    }
