"""Every constraint set, for ``Problem(..., constraint=...)``.

The common ones (``L1Ball``, ``L2Ball``, ``LinfBall``, ``Box``, ``NonNegative``,
``Simplex``) are also at the top level (``dp.L2Ball``); this namespace adds the rarer
ones — polytopes given by vertices or by inequalities, group-ℓ1 and nuclear-norm balls, the
unit ball of a submodular norm — and the base class :class:`ConstraintSet` with its
:class:`GaussianWidth` (the width bound each set reports).

>>> import dpopt as dp
>>> C = dp.sets.VertexPolytope(V, variable=theta)                  # doctest: +SKIP
>>> C = dp.sets.GroupL1Ball(theta, 1.0, [[0, 1], [2, 3, 4]])       # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

if TYPE_CHECKING:
    from dpopt.modeling.constraint_set import ConstraintSet, GaussianWidth
    from dpopt.modeling.sets import (
        Box,
        L1Ball,
        L2Ball,
        LinfBall,
        NonNegative,
        Simplex,
        VertexPolytope,
    )
    from dpopt.modeling.structured_sets import GroupL1Ball, HPolytope, NuclearNormBall
    from dpopt.modeling.submodular_norms import SubmodularNormBall

__all__ = [
    "Box",
    "ConstraintSet",
    "GaussianWidth",
    "GroupL1Ball",
    "HPolytope",
    "L1Ball",
    "L2Ball",
    "LinfBall",
    "NonNegative",
    "NuclearNormBall",
    "Simplex",
    "SubmodularNormBall",
    "VertexPolytope",
]

_EXPORTS = {
    "Box": "dpopt.modeling.sets",
    "ConstraintSet": "dpopt.modeling.constraint_set",
    "GaussianWidth": "dpopt.modeling.constraint_set",
    "L1Ball": "dpopt.modeling.sets",
    "L2Ball": "dpopt.modeling.sets",
    "LinfBall": "dpopt.modeling.sets",
    "NonNegative": "dpopt.modeling.sets",
    "Simplex": "dpopt.modeling.sets",
    "VertexPolytope": "dpopt.modeling.sets",
    "GroupL1Ball": "dpopt.modeling.structured_sets",
    "HPolytope": "dpopt.modeling.structured_sets",
    "NuclearNormBall": "dpopt.modeling.structured_sets",
    "SubmodularNormBall": "dpopt.modeling.submodular_norms",
}

__getattr__, __dir__ = attach(__name__, _EXPORTS)
