"""The minimal-ℓq signed vertex weights of a point (the q-norm potential's infimum).

:class:`~dpopt.numerics.potentials.QNormPotential` needs ``argmin ‖α‖_q s.t. Vᵀα = θ``
to evaluate Ψ and ∇Ψ at a point it did not produce by a compiled step (its start).
That is a small smooth program solved here with scipy's SLSQP, so the numerics layer imports
no solver package; this module registers :func:`slsqp_weights` for
:class:`~dpopt.numerics.potentials.QNormPotential` with
:func:`dpopt.numerics.potentials.vertex_weights` (the package root imports it right after
:mod:`dpopt.numerics.potentials`, so scipy.optimize is imported at the first solve only).  Only
public points (the set's centre, or already-private iterates) are passed to it.
"""

from __future__ import annotations

import numpy as np

from dpopt.numerics.potentials import QNormPotential, vertex_weights

__all__ = ["slsqp_weights"]


def slsqp_weights(V: np.ndarray, theta: np.ndarray, q: float) -> np.ndarray:
    """Signed weights α minimizing ``Σ|α_i|^q`` subject to ``Vᵀα = θ`` (SLSQP from the
    least-squares weights; small k only)."""
    from scipy import optimize

    theta = np.asarray(theta, dtype=np.float64)
    a0 = np.linalg.lstsq(V.T, theta, rcond=None)[0]
    res = optimize.minimize(
        lambda a: float(np.sum(np.abs(a) ** q)), a0, method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda a: V.T @ a - theta}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return np.asarray(res.x)


@vertex_weights.register
def _qnorm_weights(potential: QNormPotential, theta: np.ndarray) -> np.ndarray:
    """The weights of a :class:`QNormPotential`: :func:`slsqp_weights` over its vertices."""
    return slsqp_weights(potential.V, theta, potential.q)
