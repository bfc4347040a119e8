"""Differentially private logistic regression on UCI Adult, in a dozen lines.

Run: python examples/logistic_regression.py
"""

import numpy as np

import dpopt as dp
from dpopt.datasets import adult_train_test

# Adult ships with dpopt: 23 features with ‖x‖₂ ≤ √7 by construction, labels ±1.
train, test = adult_train_test()

# The model: average logistic loss + (λ/2)‖θ‖², λ chosen a priori (never on test data).
theta = dp.Variable(train.n_features, name="theta")
problem = dp.Problem(dp.LogisticLoss(train, theta), regularizer=dp.L2Squared(theta, 1e-4))

# (1, 1e-6)-DP by objective perturbation.  Omit seed= in real use: noise is then
# drawn from OS entropy; a seed only makes a run reproducible.
mechanism = dp.ObjectivePerturbation(epsilon=1.0, delta=1e-6)
try:
    release = mechanism.run(problem, solver="auto", seed=1)
except dp.errors.UncertifiedOracleError as exc:
    # The solver could not prove its answer optimal: nothing is released (budget spent).
    raise SystemExit(f"not released: {exc}") from None

print(release.summary())
accuracy = np.mean(np.where(test.X @ release.theta > 0, 1.0, -1.0) == test.y)
print(f"test accuracy: {accuracy:.4f}")
print(f"privacy spent so far: {dp.default_ledger().spent}")
