"""Every loss, and the base class for a loss of one's own.

The losses a model uses are also at the top level (``dp.LogisticLoss``).  A new loss
subclasses :class:`Loss` and declares its constants (:class:`LossConstants`: Lipschitz
constants in ℓ1/ℓ2, smoothness, curvature, strong convexity) from the declared bounds of the
data, never from its values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
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
    "RowLoss": "dpopt.modeling.row_losses",
    "ScoreIndicator": "dpopt.modeling.row_losses",
    "Ramp": "dpopt.modeling.row_losses",
    "CappedMin": "dpopt.modeling.row_losses",
    "Lookup": "dpopt.modeling.row_losses",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.modeling.losses import HingeLoss as HingeLoss
    from dpopt.modeling.losses import HuberLoss as HuberLoss
    from dpopt.modeling.losses import LogisticLoss as LogisticLoss
    from dpopt.modeling.losses import Loss as Loss
    from dpopt.modeling.losses import LossConstants as LossConstants
    from dpopt.modeling.losses import MultinomialLogisticLoss as MultinomialLogisticLoss
    from dpopt.modeling.losses import SmoothedHingeLoss as SmoothedHingeLoss
    from dpopt.modeling.losses import SquaredLoss as SquaredLoss
    from dpopt.modeling.row_losses import CappedMin as CappedMin
    from dpopt.modeling.row_losses import Lookup as Lookup
    from dpopt.modeling.row_losses import Ramp as Ramp
    from dpopt.modeling.row_losses import RowLoss as RowLoss
    from dpopt.modeling.row_losses import ScoreIndicator as ScoreIndicator
    from dpopt.modeling.zero_one import ZeroOneLoss as ZeroOneLoss
