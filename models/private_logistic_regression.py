"""Private logistic regression on UCI Adult with objective perturbation.

Run it with::

    dpopt solve models/private_logistic_regression.py --epsilon 1.0 --delta 1e-6
    dpopt solve models/private_logistic_regression.py --set n=2000 --seed 3 --json out.json

Model-script contract (see ``dpopt/cli/model_script.py``): ``dpopt solve``
calls ``build(params)`` with a copy of ``PARAMS`` updated by ``--set
key=value`` and by ``--epsilon``/``--delta`` (stored as ``params["epsilon"]``
and ``params["delta"]``); ``build`` must construct its mechanism with exactly
those two values (``dpopt solve`` checks it) and returns ``(problem,
mechanism)``.  ``evaluate(release)`` is optional; ``dpopt solve`` prints it.

Parameters
----------
epsilon, delta
    The privacy guarantee, (ε, δ)-DP under replace-one neighbours; δ = 0 gives
    pure ε-DP with ℓ2-Laplace noise.
lam
    Weight λ of the (λ/2)‖θ‖² regularizer.  Kept small (1e-4) so the model
    stays close to the unregularized fit (the non-private test accuracy barely
    moves), yet it gives the strong convexity μ = λ that objective perturbation
    needs: the Jacobian part of ε is log(1 + c‖x‖²/(nμ)) with c = 1/4 and
    ‖x‖² ≤ 7, about 0.43 at n = 32,561.  When that would exceed ε/2 (small ε or
    small n) the mechanism adds its own quadratic term ζ, so a tiny λ is never
    unsafe, only noisier.  Chosen a priori, not tuned on test data.
n
    Size of a uniform subsample of the training split (None: all 32,561 rows).
seed
    Seed of that *data* subsample.  The noise seed is ``dpopt solve --seed``.

The data: the 23-feature ``paper23`` encoding of Neel et al. (2019), rows with
‖x‖₂ ≤ √7 by construction, labels ±1.  No intercept: the one-hot blocks already
span the constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets import adult_train_test, load_adult

PARAMS: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "lam": 1e-4, "n": None, "seed": 0}


def build(params: dict[str, Any]) -> tuple[dp.Problem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    train, _ = adult_train_test(n=params["n"], seed=params["seed"])
    theta = dp.Variable(train.n_features, name="theta")
    problem = dp.Problem(
        dp.LogisticLoss(train, theta),
        regularizer=dp.L2Squared(theta, params["lam"]),
    )
    mechanism = dp.ObjectivePerturbation(params["epsilon"], params["delta"])
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Accuracy of the released parameters on the Adult test split (16,281 rows).

    The test split is not the private training data; this number is for the
    user's information and is not part of the release.
    """
    test = load_adult("test")
    pred = np.where(test.X @ release.theta > 0.0, 1.0, -1.0)
    return {"test_accuracy": float(np.mean(pred == test.y)), "n_test": test.n}
