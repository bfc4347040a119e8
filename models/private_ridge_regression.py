"""Private ridge regression on synthetic data with output perturbation.

Run it with::

    dpopt solve models/private_ridge_regression.py --epsilon 1.0 --delta 1e-6
    dpopt solve models/private_ridge_regression.py --set n=20000 --set lam=0.01 --solver clarabel

Model-script contract (see ``dpopt/cli/model_script.py``): ``dpopt solve``
calls ``build(params)`` with a copy of ``PARAMS`` updated by ``--set
key=value`` and by ``--epsilon``/``--delta`` (as ``params["epsilon"]`` and
``params["delta"]``); ``build`` must construct its mechanism with exactly
those values (``dpopt solve`` checks it).

The problem: minimize (1/n) Σ (⟨x_i, θ⟩ − y_i)² + (λ/2)‖θ‖² over the ℓ2 ball
‖θ‖₂ ≤ radius.  The squared loss is not Lipschitz on ℝ^d; over the ball its
gradient 2(⟨x, θ⟩ − y)x is bounded by 2‖x‖(‖x‖·radius + |y|), so with the
declared bounds ‖x‖₂ ≤ 1, |y| ≤ 1 the constant is finite: L = 2(radius + 1).  Output perturbation
(Chaudhuri–Monteleoni–Sarwate 2011, Alg. 1) then adds noise with ℓ2
sensitivity 2L/(nλ) to the certified minimizer and projects the result back
onto the ball (post-processing).

Parameters
----------
epsilon, delta
    The privacy guarantee (δ = 0: ℓ2-Laplace noise, pure ε-DP).
lam
    Ridge weight λ: the strong convexity in the sensitivity 2L/(nλ).  Larger λ
    means less noise and more shrinkage.
radius
    Radius of the ℓ2 ball.  The generator's true θ* has ‖θ*‖₂ = 1, so 1 keeps
    it feasible; a larger radius raises the Lipschitz constant and the noise.
n, d
    Training rows and features of the synthetic data.
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
    "epsilon": 1.0, "delta": 1e-6, "lam": 0.05, "radius": 1.0,
    "n": 5000, "d": 10, "noise": 0.1, "data_seed": 0,
}
N_TEST = 5000

# Filled by build() so that evaluate() can score the release on held-out rows.
_HELD_OUT: dict[str, Any] = {}


def build(params: dict[str, Any]) -> tuple[dp.Problem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    n = int(params["n"])
    data, theta_true = make_regression(n + N_TEST, int(params["d"]), x_bound=1.0, y_bound=1.0,
                                       noise=params["noise"], seed=params["data_seed"])
    train, test = data.subset(np.arange(n)), data.subset(np.arange(n, n + N_TEST))
    _HELD_OUT.update(test=test, theta_true=theta_true)
    theta = dp.Variable(train.n_features, name="theta")
    problem = dp.Problem(
        dp.SquaredLoss(train, theta),
        constraint=dp.L2Ball(theta, params["radius"]),
        regularizer=dp.L2Squared(theta, params["lam"]),
    )
    mechanism = dp.OutputPerturbation(params["epsilon"], params["delta"], project=True)
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Held-out mean squared error and distance to the generator's θ*."""
    test, theta_true = _HELD_OUT["test"], _HELD_OUT["theta_true"]
    resid = test.X @ release.theta - test.y
    baseline = test.y - np.mean(test.y)
    return {
        "test_mse": float(np.mean(resid**2)),
        "test_mse_predict_mean": float(np.mean(baseline**2)),
        "distance_to_true_theta": float(np.linalg.norm(release.theta - theta_true)),
    }
