"""The modeling layer: data, variables, losses, sets, regularizers, problems.

It never imports a solver package.  Names are imported on first use (PEP 562), so importing
one module of the layer (``dpopt.modeling.dataset``) does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

if TYPE_CHECKING:
    from dpopt.modeling.constraint_set import ConstraintSet, GaussianWidth
    from dpopt.modeling.dataset import Dataset
    from dpopt.modeling.losses import (
        HingeLoss,
        HuberLoss,
        LogisticLoss,
        Loss,
        LossConstants,
        MultinomialLogisticLoss,
        SmoothedHingeLoss,
        SquaredLoss,
    )
    from dpopt.modeling.perturbation import Linear, Perturbation, Quadratic
    from dpopt.modeling.problem import Problem
    from dpopt.modeling.regularizers import L1Norm, L2Squared
    from dpopt.modeling.schema import Binary, Categorical, Fill, Numeric, Schema
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
    from dpopt.modeling.submodular import (
        CallableSetFunction,
        Cardinality,
        ChainCut,
        ConcaveCardinality,
        GroupCoverage,
        Indicator,
        SetFunction,
    )
    from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
    from dpopt.modeling.variable import Variable

__all__ = [
    "Binary",
    "Box",
    "CallableSetFunction",
    "Cardinality",
    "Categorical",
    "ChainCut",
    "ConcaveCardinality",
    "ConstraintSet",
    "Dataset",
    "Fill",
    "GaussianWidth",
    "GroupCoverage",
    "GroupL1Ball",
    "HPolytope",
    "HingeLoss",
    "HuberLoss",
    "Indicator",
    "L1Ball",
    "L1Norm",
    "L2Ball",
    "L2Squared",
    "Linear",
    "LinfBall",
    "LogisticLoss",
    "Loss",
    "LossConstants",
    "MultinomialLogisticLoss",
    "NonNegative",
    "NuclearNormBall",
    "Numeric",
    "Perturbation",
    "Problem",
    "Quadratic",
    "Schema",
    "SetFunction",
    "Simplex",
    "SmoothedHingeLoss",
    "SquaredLoss",
    "SubmodularNorm",
    "SubmodularNormBall",
    "Variable",
    "VertexPolytope",
]

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

__getattr__, __dir__ = attach(__name__, _EXPORTS)
