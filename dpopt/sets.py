"""Every constraint set, for ``Problem(..., constraint=...)``.

The common ones (``L1Ball``, ``L2Ball``, ``LinfBall``, ``Box``, ``NonNegative``,
``Simplex``) are also at the top level (``dp.L2Ball``); this namespace adds the rarer
ones — polytopes given by vertices or by inequalities, group-ℓ1 and nuclear-norm balls, the
unit ball of a submodular norm, the :class:`Intersection` a constraint list becomes — and the
base class :class:`ConstraintSet` with its
:class:`GaussianWidth` (the width bound each set reports).

>>> import dpopt as dp
>>> C = dp.sets.VertexPolytope(V, variable=theta)                  # doctest: +SKIP
>>> C = dp.sets.GroupL1Ball(theta, 1.0, [[0, 1], [2, 3, 4]])       # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "Box": "dpopt.modeling.boxes",
    "ConstraintSet": "dpopt.modeling.constraint_set",
    "GaussianWidth": "dpopt.modeling.constraint_set",
    "Intersection": "dpopt.modeling.intersection",
    "L1Ball": "dpopt.modeling.balls",
    "L2Ball": "dpopt.modeling.balls",
    "LinfBall": "dpopt.modeling.balls",
    "NonNegative": "dpopt.modeling.boxes",
    "Simplex": "dpopt.modeling.boxes",
    "VertexPolytope": "dpopt.modeling.vertex_polytope",
    "GroupL1Ball": "dpopt.modeling.structured_sets",
    "HPolytope": "dpopt.modeling.structured_sets",
    "NuclearNormBall": "dpopt.modeling.structured_sets",
    "SubmodularNormBall": "dpopt.modeling.submodular_norms",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.modeling.balls import L1Ball as L1Ball
    from dpopt.modeling.balls import L2Ball as L2Ball
    from dpopt.modeling.balls import LinfBall as LinfBall
    from dpopt.modeling.boxes import Box as Box
    from dpopt.modeling.boxes import NonNegative as NonNegative
    from dpopt.modeling.boxes import Simplex as Simplex
    from dpopt.modeling.constraint_set import ConstraintSet as ConstraintSet
    from dpopt.modeling.constraint_set import GaussianWidth as GaussianWidth
    from dpopt.modeling.intersection import Intersection as Intersection
    from dpopt.modeling.structured_sets import GroupL1Ball as GroupL1Ball
    from dpopt.modeling.structured_sets import HPolytope as HPolytope
    from dpopt.modeling.structured_sets import NuclearNormBall as NuclearNormBall
    from dpopt.modeling.submodular_norms import SubmodularNormBall as SubmodularNormBall
    from dpopt.modeling.vertex_polytope import VertexPolytope as VertexPolytope
