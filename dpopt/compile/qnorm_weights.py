"""The minimal-ℓq signed vertex weights of a point (the q-norm potential's infimum).

:class:`~dpopt.numerics.potentials.QNormPotential` needs ``argmin ‖α‖_q s.t. Vᵀα = θ``
to evaluate Ψ and ∇Ψ at a point it did not produce by a compiled step (its start).
That is a small smooth program solved here with scipy's SLSQP, so
:mod:`dpopt.modeling` imports no solver package; importing this module installs
:func:`slsqp_weights` as the potential's weight solver
(:func:`dpopt.numerics.potentials.install_weight_solver`).  Only public points (the
set's centre, or already-private iterates) are passed to it.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from dpopt.numerics.potentials import install_weight_solver

__all__ = ["slsqp_weights"]


def slsqp_weights(V: np.ndarray, theta: np.ndarray, q: float) -> np.ndarray:
    """Signed weights α minimizing ``Σ|α_i|^q`` subject to ``Vᵀα = θ`` (SLSQP from the
    least-squares weights; small k only)."""
    theta = np.asarray(theta, dtype=np.float64)
    a0 = np.linalg.lstsq(V.T, theta, rcond=None)[0]
    res = optimize.minimize(
        lambda a: float(np.sum(np.abs(a) ** q)), a0, method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda a: V.T @ a - theta}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return np.asarray(res.x)


install_weight_solver(slsqp_weights)
