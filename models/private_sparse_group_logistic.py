"""Logistic regression on Adult regularized by a group norm Ω∞ from a submodular function (Kumar–Deisenroth 2019).

Run it with::

    dpopt solve models/private_sparse_group_logistic.py --epsilon 1.0 --delta 1e-6
    dpopt solve models/private_sparse_group_logistic.py --set mechanism='"dual-fw"' --seed 3
    dpopt solve models/private_sparse_group_logistic.py --set norm='"chain"' --set n=5000

The regularizer is Ω∞(θ) = f(|θ|) for the weighted coverage function
F(A) = Σ_G √|G|·1[A ∩ G ≠ ∅] over the feature blocks of Adult's ``paper23``
encoding (marital status, relationship, race, sex, and one group per numeric
feature), i.e. Ω∞(θ) = Σ_G √|G|·‖θ_G‖∞; ``norm="chain"`` takes the chain cut
function instead (equal neighbouring magnitudes).  An ℓ2² term of weight
``ridge`` is required by both mechanisms (Ω∞ is not strongly convex):

* ``mechanism="output"``: :class:`dpopt.SubmodularOutputPerturbation` (Thm. 1),
  Clarabel as the oracle, the release reports G_{|P|(F)} and the Lemma 1 bound;
* ``mechanism="dual-fw"``: :class:`dpopt.DualFrankWolfe` (Alg. 2) over
  K = lam·|P|(F), the exponential mechanism factorized over the groups.

Parameters
----------
epsilon, delta
    The (ε, δ)-DP guarantee under replace-one neighbours.
mechanism
    ``"output"`` or ``"dual-fw"``.
norm
    ``"group"`` or ``"chain"``.
lam, ridge
    Weight of Ω∞ (the paper's λ/n) and of (Λ/2)‖θ‖².
tolerance
    Proven distance of the output mechanism's pre-noise point to the exact
    optimum (its duality-gap certificate converges like the square root of
    the solver's accuracy; 2·tolerance is added to the sensitivity).
n
    Training rows (default 5,000; None: all 32,561, where Clarabel stops "inaccurate" on the
    exponential cones and the output mechanism fails closed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets import adult_train_test

PARAMS: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "mechanism": "output", "norm": "group",
                          "lam": 1e-3, "ridge": 5e-2, "tolerance": 1e-3, "n": 5000}
#: the one-hot blocks and numeric columns of adult_features(), in column order
GROUPS = [list(range(0, 7)), list(range(7, 13)), list(range(13, 18)), list(range(18, 20)), [20], [21], [22]]
_HELD_OUT: dict[str, Any] = {}


def set_function(norm: str, p: int) -> dp.submodular.SetFunction:
    """The submodular function behind the norm."""
    if norm == "group":
        return dp.submodular.GroupCoverage(p, GROUPS, [len(g) ** 0.5 for g in GROUPS])
    if norm == "chain":
        return dp.submodular.ChainCut(p, weight=0.5, eta=0.1)
    raise dp.errors.ModelError(f"norm must be 'group' or 'chain', got {norm!r}")


def build(params: dict[str, Any]) -> tuple[dp.Problem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    train, test = adult_train_test(n=params["n"])
    _HELD_OUT["test"] = test
    theta = dp.Variable(train.n_features, name="theta")
    F = set_function(params["norm"], train.n_features)
    problem = dp.Problem(dp.LogisticLoss(train, theta),
                         regularizer=(dp.L2Squared(theta, params["ridge"]), dp.submodular.SubmodularNorm(theta, F, params["lam"])))
    mechanism: dp.Mechanism
    if params["mechanism"] == "output":
        mechanism = dp.SubmodularOutputPerturbation(params["epsilon"], params["delta"], tolerance=params["tolerance"])
    elif params["mechanism"] == "dual-fw":
        mechanism = dp.DualFrankWolfe(params["epsilon"], params["delta"])
    else:
        raise dp.errors.ModelError(f"mechanism must be 'output' or 'dual-fw', got {params['mechanism']!r}")
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Accuracy on Adult's test split (not the private data)."""
    test = _HELD_OUT["test"]
    return {"test_accuracy": float(np.mean(np.where(test.X @ release.theta > 0, 1.0, -1.0) == test.y))}
