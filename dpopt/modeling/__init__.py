"""The modeling layer: data, variables, losses, sets, regularizers, problems.

It never imports a solver package.
"""

from dpopt.modeling.dataset import Dataset
from dpopt.modeling.losses import (
    HingeLoss,
    HuberLoss,
    LogisticLoss,
    Loss,
    LossConstants,
    SmoothedHingeLoss,
    SquaredLoss,
)
from dpopt.modeling.perturbation import Linear, Perturbation, Quadratic
from dpopt.modeling.potentials import (
    EntropyPotential,
    EuclideanPotential,
    GroupL1Potential,
    NuclearPotential,
    Potential,
    QNormPotential,
)
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm, L2Squared
from dpopt.modeling.schema import Binary, Categorical, Numeric, Schema
from dpopt.modeling.sets import (
    ConstraintSet,
    GaussianWidth,
    L1Ball,
    L2Ball,
    LinfBall,
    Simplex,
    VertexPolytope,
)
from dpopt.modeling.structured_sets import GroupL1Ball, HPolytope, NuclearNormBall
from dpopt.modeling.variable import Variable

__all__ = [
    "ConstraintSet", "Dataset", "GaussianWidth", "HingeLoss", "HuberLoss", "L1Ball", "L1Norm",
    "L2Ball", "L2Squared", "Linear", "LinfBall", "LogisticLoss", "Loss", "LossConstants",
    "Perturbation", "Problem", "Quadratic", "Simplex", "SmoothedHingeLoss", "SquaredLoss",
    "Variable", "VertexPolytope",
    "GroupL1Ball", "HPolytope", "NuclearNormBall",
]
__all__ += ["Binary", "Categorical", "Numeric", "Schema"]
__all__ += [
    "EntropyPotential", "EuclideanPotential", "GroupL1Potential", "NuclearPotential", "Potential",
    "QNormPotential",
]
from dpopt.modeling.submodular import (  # noqa: E402
    CallableSetFunction,
    Cardinality,
    ChainCut,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
    SetFunction,
)
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall  # noqa: E402

__all__ += [
    "CallableSetFunction", "Cardinality", "ChainCut", "ConcaveCardinality", "GroupCoverage", "Indicator",
    "SetFunction", "SubmodularNorm", "SubmodularNormBall",
]
