"""Private mirror descent (Talwar–Thakurta–Zhang 2014, Alg. 1) on synthetic regression data.

Run it with::

    dpopt solve models/private_mirror_descent.py --epsilon 1.0 --delta 1e-6 --seed 0
    dpopt solve models/private_mirror_descent.py --set set="'l1'" --set mode="'paper'"
    dpopt solve models/private_mirror_descent.py --set set="'polytope'" --set steps=200 --solver clarabel

Model-script contract: see ``dpopt/cli/model_script.py`` (``build(params)``
builds the mechanism with ``params["epsilon"]`` and ``params["delta"]``).

The problem: minimize (1/n) Σ (⟨x_i, θ⟩ − y_i)² over a constraint set C with
declared bounds ‖x‖₂ ≤ 1, |y| ≤ 1, so the squared loss is L-Lipschitz in ℓ2
on C with L = 2(‖C‖₂ + 1).  The mechanism perturbs each full gradient with
N(0, σ²I) (sensitivity 2L/n, replace-one) and steps with the potential Sec. 3.2
pairs with C: entropy (multiplicative weights) on the simplex, the BTN13
group-ℓ1 potential on the ℓ1 ball, the Euclidean potential on the ℓ2 ball,
and the q-norm potential of Claim 3.5 on a polytope given by vertices (its
mirror step is a conic program solved by ``--solver``, default clarabel).

Parameters
----------
epsilon, delta
    The guarantee ((ε, δ)-DP, δ > 0).
set
    ``"simplex"`` (default), ``"l1"``, ``"l2"`` or ``"polytope"`` (the hull of
    ``k`` random points on the unit sphere).
potential
    ``"auto"`` or a potential name (``"euclidean"`` fits every set).
mode
    ``"accountant"`` (σ from an accountant) or ``"paper"`` (Alg. 1's σ).
accountant
    ``"zcdp"`` (default: zCDP of T exact discrete Gaussian steps on a grid) or ``"rdp"``.
steps
    T (``None``: Thm 3.2's T, capped at ``max_steps``).
n, d, k, noise, data_seed
    Synthetic data: rows, features, polytope vertices, label noise, data seed
    (the noise seed is ``dpopt solve --seed``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets import make_regression

PARAMS: dict[str, Any] = {
    "epsilon": 1.0, "delta": 1e-6, "set": "simplex", "potential": "auto", "mode": "accountant",
    "accountant": "zcdp", "steps": None, "max_steps": 5000, "n": 20_000, "d": 20, "k": 12,
    "noise": 0.1, "data_seed": 0,
}

_STATE: dict[str, Any] = {}


def _constraint(name: str, theta: dp.Variable, k: int, seed: int) -> dp.sets.ConstraintSet:
    if name == "simplex":
        return dp.Simplex(theta)
    if name == "l1":
        return dp.L1Ball(theta, 1.0)
    if name == "l2":
        return dp.L2Ball(theta, 1.0)
    if name == "polytope":
        V = np.random.default_rng(seed + 1).normal(size=(k, theta.size))
        return dp.sets.VertexPolytope(V / np.linalg.norm(V, axis=1, keepdims=True), variable=theta)
    raise dp.errors.ModelError(f"unknown set {name!r}: use 'simplex', 'l1', 'l2' or 'polytope'")


def build(params: dict[str, Any]) -> tuple[dp.Problem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    data, _ = make_regression(int(params["n"]), int(params["d"]), x_bound=1.0, y_bound=1.0,
                              noise=params["noise"], seed=params["data_seed"])
    theta = dp.Variable(data.n_features, name="theta")
    constraint = _constraint(params["set"], theta, int(params["k"]), int(params["data_seed"]))
    problem = dp.Problem(dp.SquaredLoss(data, theta), constraint=constraint)
    mechanism = dp.PrivateMirrorDescent(
        params["epsilon"], params["delta"], potential=params["potential"], mode=params["mode"],
        accountant=params["accountant"], steps=params["steps"], max_steps=int(params["max_steps"]),
    )
    _STATE["problem"] = problem
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Excess empirical risk against the non-private optimum (computed here, not private)."""
    problem: dp.Problem = _STATE["problem"]
    best_theta = dp.backends.get("clarabel").solve_problem(problem).solution  # the exact optimum over C
    assert best_theta is not None
    best = problem.loss.value(best_theta)
    return {
        "loss_private": problem.loss.value(release.theta),
        "loss_nonprivate_optimum": best,
        "excess_empirical_risk": problem.loss.value(release.theta) - best,
        "theorem_bound_on_expected_excess": float(release.parameters["excess_risk_bound"]),
    }
