"""Every loss, and the base class for a loss of one's own.

The losses a model uses are also at the top level (``dp.LogisticLoss``).  A new loss
subclasses :class:`Loss` and declares its constants (:class:`LossConstants`: Lipschitz
constants in ℓ1/ℓ2, smoothness, curvature, strong convexity) from the declared bounds of the
data, never from its values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

if TYPE_CHECKING:
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
    from dpopt.modeling.zero_one import ZeroOneLoss

__all__ = [
    "HingeLoss",
    "HuberLoss",
    "LogisticLoss",
    "Loss",
    "LossConstants",
    "MultinomialLogisticLoss",
    "SmoothedHingeLoss",
    "SquaredLoss",
    "ZeroOneLoss",
]

_EXPORTS = {
    "HingeLoss": "dpopt.modeling.losses",
    "HuberLoss": "dpopt.modeling.losses",
    "LogisticLoss": "dpopt.modeling.losses",
    "MultinomialLogisticLoss": "dpopt.modeling.losses",
    "Loss": "dpopt.modeling.losses",
    "LossConstants": "dpopt.modeling.losses",
    "SmoothedHingeLoss": "dpopt.modeling.losses",
    "SquaredLoss": "dpopt.modeling.losses",
    "ZeroOneLoss": "dpopt.modeling.zero_one",
}

__getattr__, __dir__ = attach(__name__, _EXPORTS)
