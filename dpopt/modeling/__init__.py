"""The modeling layer: data, variables, losses, sets, regularizers, problems.

It never imports a solver package.  Names are imported on first use (PEP 562), so importing
one module of the layer (``dpopt.modeling.dataset``) does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "Dataset": "dpopt.modeling.dataset",
    "HingeLoss": "dpopt.modeling.losses",
    "HuberLoss": "dpopt.modeling.losses",
    "LogisticLoss": "dpopt.modeling.losses",
    "MultinomialLogisticLoss": "dpopt.modeling.losses",
    "Loss": "dpopt.modeling.losses",
    "LossConstants": "dpopt.modeling.losses",
    "SmoothedHingeLoss": "dpopt.modeling.losses",
    "SquaredLoss": "dpopt.modeling.losses",
    "Linear": "dpopt.modeling.perturbation",
    "Perturbation": "dpopt.modeling.perturbation",
    "Quadratic": "dpopt.modeling.perturbation",
    "Problem": "dpopt.modeling.problem",
    "L1Norm": "dpopt.modeling.regularizers",
    "L2Squared": "dpopt.modeling.regularizers",
    "Binary": "dpopt.modeling.schema",
    "Categorical": "dpopt.modeling.schema",
    "Numeric": "dpopt.modeling.schema",
    "Fill": "dpopt.modeling.schema",
    "Schema": "dpopt.modeling.schema",
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
    "CallableSetFunction": "dpopt.modeling.submodular",
    "Cardinality": "dpopt.modeling.submodular",
    "ChainCut": "dpopt.modeling.submodular",
    "ConcaveCardinality": "dpopt.modeling.submodular",
    "GroupCoverage": "dpopt.modeling.submodular",
    "Indicator": "dpopt.modeling.submodular",
    "SetFunction": "dpopt.modeling.submodular",
    "SubmodularNorm": "dpopt.modeling.submodular_norms",
    "SubmodularNormBall": "dpopt.modeling.submodular_norms",
    "Variable": "dpopt.modeling.variable",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.modeling.constraint_set import ConstraintSet as ConstraintSet
    from dpopt.modeling.constraint_set import GaussianWidth as GaussianWidth
    from dpopt.modeling.dataset import Dataset as Dataset
    from dpopt.modeling.losses import HingeLoss as HingeLoss
    from dpopt.modeling.losses import HuberLoss as HuberLoss
    from dpopt.modeling.losses import LogisticLoss as LogisticLoss
    from dpopt.modeling.losses import Loss as Loss
    from dpopt.modeling.losses import LossConstants as LossConstants
    from dpopt.modeling.losses import MultinomialLogisticLoss as MultinomialLogisticLoss
    from dpopt.modeling.losses import SmoothedHingeLoss as SmoothedHingeLoss
    from dpopt.modeling.losses import SquaredLoss as SquaredLoss
    from dpopt.modeling.perturbation import Linear as Linear
    from dpopt.modeling.perturbation import Perturbation as Perturbation
    from dpopt.modeling.perturbation import Quadratic as Quadratic
    from dpopt.modeling.problem import Problem as Problem
    from dpopt.modeling.regularizers import L1Norm as L1Norm
    from dpopt.modeling.regularizers import L2Squared as L2Squared
    from dpopt.modeling.schema import Binary as Binary
    from dpopt.modeling.schema import Categorical as Categorical
    from dpopt.modeling.schema import Fill as Fill
    from dpopt.modeling.schema import Numeric as Numeric
    from dpopt.modeling.schema import Schema as Schema
    from dpopt.modeling.sets import Box as Box
    from dpopt.modeling.sets import L1Ball as L1Ball
    from dpopt.modeling.sets import L2Ball as L2Ball
    from dpopt.modeling.sets import LinfBall as LinfBall
    from dpopt.modeling.sets import NonNegative as NonNegative
    from dpopt.modeling.sets import Simplex as Simplex
    from dpopt.modeling.sets import VertexPolytope as VertexPolytope
    from dpopt.modeling.structured_sets import GroupL1Ball as GroupL1Ball
    from dpopt.modeling.structured_sets import HPolytope as HPolytope
    from dpopt.modeling.structured_sets import NuclearNormBall as NuclearNormBall
    from dpopt.modeling.submodular import CallableSetFunction as CallableSetFunction
    from dpopt.modeling.submodular import Cardinality as Cardinality
    from dpopt.modeling.submodular import ChainCut as ChainCut
    from dpopt.modeling.submodular import ConcaveCardinality as ConcaveCardinality
    from dpopt.modeling.submodular import GroupCoverage as GroupCoverage
    from dpopt.modeling.submodular import Indicator as Indicator
    from dpopt.modeling.submodular import SetFunction as SetFunction
    from dpopt.modeling.submodular_norms import SubmodularNorm as SubmodularNorm
    from dpopt.modeling.submodular_norms import SubmodularNormBall as SubmodularNormBall
    from dpopt.modeling.variable import Variable as Variable
