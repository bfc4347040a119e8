"""Mirror-descent potentials Ψ (talwar-thakurta-zhang-2014, Sec. 3.2).

:class:`~dpopt.mechanisms.mirror_descent.PrivateMirrorDescent` takes one by name
(``potential="entropy"``) or ``"auto"``, which pairs each constraint set with the potential
the paper gives it; these classes are the potentials themselves, for inspecting their
constants or passing one explicitly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

if TYPE_CHECKING:
    from dpopt.numerics.potentials import (
        EntropyPotential,
        EuclideanPotential,
        GroupL1Potential,
        NuclearPotential,
        Potential,
        QNormPotential,
    )

__all__ = [
    "EntropyPotential",
    "EuclideanPotential",
    "GroupL1Potential",
    "NuclearPotential",
    "Potential",
    "QNormPotential",
]

_EXPORTS = {
    "EntropyPotential": "dpopt.numerics.potentials",
    "EuclideanPotential": "dpopt.numerics.potentials",
    "GroupL1Potential": "dpopt.numerics.potentials",
    "NuclearPotential": "dpopt.numerics.potentials",
    "Potential": "dpopt.numerics.potentials",
    "QNormPotential": "dpopt.numerics.potentials",
}

__getattr__, __dir__ = attach(__name__, _EXPORTS)
