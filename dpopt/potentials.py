"""Mirror-descent potentials Ψ (talwar-thakurta-zhang-2014, Sec. 3.2).

:class:`~dpopt.mechanisms.mirror_descent.PrivateMirrorDescent` takes one by name
(``potential="entropy"``) or ``"auto"``, which pairs each constraint set with the potential
the paper gives it; these classes are the potentials themselves, for inspecting their
constants or passing one explicitly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "EntropyPotential": "dpopt.numerics.potentials",
    "EuclideanPotential": "dpopt.numerics.potentials",
    "GroupL1Potential": "dpopt.numerics.potentials",
    "NuclearPotential": "dpopt.numerics.potentials",
    "Potential": "dpopt.numerics.potentials",
    "QNormPotential": "dpopt.numerics.potentials",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.numerics.potentials import EntropyPotential as EntropyPotential
    from dpopt.numerics.potentials import EuclideanPotential as EuclideanPotential
    from dpopt.numerics.potentials import GroupL1Potential as GroupL1Potential
    from dpopt.numerics.potentials import NuclearPotential as NuclearPotential
    from dpopt.numerics.potentials import Potential as Potential
    from dpopt.numerics.potentials import QNormPotential as QNormPotential
