"""dpopt: differentially private optimization on modeling languages.

>>> import dpopt as dp
>>> data = dp.Dataset(X, y, x_bound=1.0, x_norm=2)               # doctest: +SKIP
>>> theta = dp.Variable(data.n_features)                           # doctest: +SKIP
>>> problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 10.0))  # doctest: +SKIP
>>> release = dp.ObjectivePerturbation(epsilon=1.0, delta=1e-6).run(problem, solver="clarabel")  # doctest: +SKIP

The top level holds what a model uses: the data and its schema, the variable, the losses,
the common constraint sets and regularizers, the problems, every mechanism, the release and
the ledgers.  Specialist names live in sub-namespaces:

``dpopt.sets``
    Every constraint set, with the rarer ones (polytopes, group-ℓ1 and nuclear-norm balls,
    unit balls of submodular norms) and the base class.
``dpopt.submodular``
    Submodular set functions and the norms (regularizer, ball) they define.
``dpopt.losses``
    Every loss and the base class for a loss of one's own.
``dpopt.potentials``
    Mirror-descent potentials (``PrivateMirrorDescent(potential=...)``).
``dpopt.backends``
    Solver backends: ``get(name)``, ``names()`` and the result types.
``dpopt.errors``
    The exception and warning classes.

Names are imported on first use (PEP 562), so ``import dpopt`` loads no solver package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt import _lazy
from dpopt._lazy import attach

__version__ = "0.1.0"  # the one version source: pyproject.toml reads it (tool.setuptools.dynamic)


#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "Limit": "dpopt.backends.result",
    "Mechanism": "dpopt.mechanisms.base",
    "default_ledger": "dpopt.mechanisms.base",
    "AdaSSP": "dpopt.mechanisms.adassp",
    "DiagnosticCounts": "dpopt.mechanisms.diagnostics",
    "WithDiagnostics": "dpopt.mechanisms.diagnostics",
    "DualFrankWolfe": "dpopt.mechanisms.dual_frank_wolfe",
    "GaussianFrankWolfe": "dpopt.mechanisms.gaussian_frank_wolfe",
    "PolytopeFrankWolfe": "dpopt.mechanisms.polytope_frank_wolfe",
    "DPSGD": "dpopt.mechanisms.gradient_descent",
    "DPGradientDescent": "dpopt.mechanisms.gradient_descent",
    "PrivateMirrorDescent": "dpopt.mechanisms.mirror_descent",
    "ObjectivePerturbation": "dpopt.mechanisms.objective_perturbation",
    "OPDisc": "dpopt.mechanisms.opdisc",
    "OPSamp": "dpopt.mechanisms.opsamp",
    "OutputPerturbation": "dpopt.mechanisms.output_perturbation",
    "Release": "dpopt.mechanisms.release",
    "RSPM": "dpopt.mechanisms.rspm",
    "PrivateSelection": "dpopt.mechanisms.selection",
    "RefitSelection": "dpopt.mechanisms.selection_refit",
    "SubmodularOutputPerturbation": "dpopt.mechanisms.submodular_output",
    "Dataset": "dpopt.modeling.dataset",
    "DiscreteProblem": "dpopt.modeling.discrete",
    "IntegerGrid": "dpopt.modeling.domains",
    "norm": "dpopt.modeling.expressions",
    "norm1": "dpopt.modeling.expressions",
    "norm2": "dpopt.modeling.expressions",
    "norm_inf": "dpopt.modeling.expressions",
    "DiscreteDomain": "dpopt.modeling.decision_domain",
    "BinaryChoice": "dpopt.modeling.decision_domain",
    "OneOf": "dpopt.modeling.decision_domain",
    "ScoreIndicator": "dpopt.modeling.row_losses",
    "Ramp": "dpopt.modeling.row_losses",
    "CappedMin": "dpopt.modeling.row_losses",
    "Lookup": "dpopt.modeling.row_losses",
    "ExponentialMechanism": "dpopt.mechanisms.exponential",
    "choose_discrete_mechanism": "dpopt.mechanisms.discrete_advice",
    "discrete_mechanism": "dpopt.mechanisms.discrete_advice",
    "HingeLoss": "dpopt.modeling.losses",
    "HuberLoss": "dpopt.modeling.losses",
    "LogisticLoss": "dpopt.modeling.losses",
    "MultinomialLogisticLoss": "dpopt.modeling.losses",
    "SmoothedHingeLoss": "dpopt.modeling.losses",
    "SquaredLoss": "dpopt.modeling.losses",
    "Problem": "dpopt.modeling.problem",
    "L1Norm": "dpopt.modeling.regularizers",
    "L2Squared": "dpopt.modeling.regularizers",
    "Binary": "dpopt.modeling.schema.specs",
    "Categorical": "dpopt.modeling.schema.specs",
    "Intercept": "dpopt.modeling.schema.specs",
    "Numeric": "dpopt.modeling.schema.specs",
    "Fill": "dpopt.modeling.schema.specs",
    "Schema": "dpopt.modeling.schema.declaration",
    "Box": "dpopt.modeling.boxes",
    "L1Ball": "dpopt.modeling.balls",
    "L2Ball": "dpopt.modeling.balls",
    "LinfBall": "dpopt.modeling.balls",
    "NonNegative": "dpopt.modeling.boxes",
    "Simplex": "dpopt.modeling.boxes",
    "Variable": "dpopt.modeling.variable",
    "ZeroOneLoss": "dpopt.modeling.zero_one",
    "Ledger": "dpopt.privacy.ledger",
    "SQLiteLedger": "dpopt.privacy.sqlite_ledger",
    "show_progress": "dpopt.progress",
}

#: the sub-namespaces (``dp.sets`` is the module ``dpopt.sets``)
_SUBMODULES = ("backends", "errors", "losses", "potentials", "sets", "submodular")

__all__ = sorted([*_EXPORTS, *_SUBMODULES])
__getattr__, __dir__ = attach(__name__, _EXPORTS, submodules=_SUBMODULES)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt import backends as backends
    from dpopt import errors as errors
    from dpopt import losses as losses
    from dpopt import potentials as potentials
    from dpopt import sets as sets
    from dpopt import submodular as submodular
    from dpopt.backends.result import Limit as Limit
    from dpopt.mechanisms.adassp import AdaSSP as AdaSSP
    from dpopt.mechanisms.base import Mechanism as Mechanism
    from dpopt.mechanisms.base import default_ledger as default_ledger
    from dpopt.mechanisms.diagnostics import DiagnosticCounts as DiagnosticCounts
    from dpopt.mechanisms.diagnostics import WithDiagnostics as WithDiagnostics
    from dpopt.mechanisms.discrete_advice import (
        choose_discrete_mechanism as choose_discrete_mechanism,
    )
    from dpopt.mechanisms.discrete_advice import discrete_mechanism as discrete_mechanism
    from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe as DualFrankWolfe
    from dpopt.mechanisms.exponential import ExponentialMechanism as ExponentialMechanism
    from dpopt.mechanisms.gaussian_frank_wolfe import GaussianFrankWolfe as GaussianFrankWolfe
    from dpopt.mechanisms.gradient_descent import DPSGD as DPSGD
    from dpopt.mechanisms.gradient_descent import DPGradientDescent as DPGradientDescent
    from dpopt.mechanisms.mirror_descent import PrivateMirrorDescent as PrivateMirrorDescent
    from dpopt.mechanisms.objective_perturbation import (
        ObjectivePerturbation as ObjectivePerturbation,
    )
    from dpopt.mechanisms.opdisc import OPDisc as OPDisc
    from dpopt.mechanisms.opsamp import OPSamp as OPSamp
    from dpopt.mechanisms.output_perturbation import OutputPerturbation as OutputPerturbation
    from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe as PolytopeFrankWolfe
    from dpopt.mechanisms.release import Release as Release
    from dpopt.mechanisms.rspm import RSPM as RSPM
    from dpopt.mechanisms.selection import PrivateSelection as PrivateSelection
    from dpopt.mechanisms.selection_refit import RefitSelection as RefitSelection
    from dpopt.mechanisms.submodular_output import (
        SubmodularOutputPerturbation as SubmodularOutputPerturbation,
    )
    from dpopt.modeling.balls import L1Ball as L1Ball
    from dpopt.modeling.balls import L2Ball as L2Ball
    from dpopt.modeling.balls import LinfBall as LinfBall
    from dpopt.modeling.boxes import Box as Box
    from dpopt.modeling.boxes import NonNegative as NonNegative
    from dpopt.modeling.boxes import Simplex as Simplex
    from dpopt.modeling.dataset import Dataset as Dataset
    from dpopt.modeling.decision_domain import BinaryChoice as BinaryChoice
    from dpopt.modeling.decision_domain import DiscreteDomain as DiscreteDomain
    from dpopt.modeling.decision_domain import OneOf as OneOf
    from dpopt.modeling.discrete import DiscreteProblem as DiscreteProblem
    from dpopt.modeling.domains import IntegerGrid as IntegerGrid
    from dpopt.modeling.expressions import norm as norm
    from dpopt.modeling.expressions import norm1 as norm1
    from dpopt.modeling.expressions import norm2 as norm2
    from dpopt.modeling.expressions import norm_inf as norm_inf
    from dpopt.modeling.losses import HingeLoss as HingeLoss
    from dpopt.modeling.losses import HuberLoss as HuberLoss
    from dpopt.modeling.losses import LogisticLoss as LogisticLoss
    from dpopt.modeling.losses import MultinomialLogisticLoss as MultinomialLogisticLoss
    from dpopt.modeling.losses import SmoothedHingeLoss as SmoothedHingeLoss
    from dpopt.modeling.losses import SquaredLoss as SquaredLoss
    from dpopt.modeling.problem import Problem as Problem
    from dpopt.modeling.regularizers import L1Norm as L1Norm
    from dpopt.modeling.regularizers import L2Squared as L2Squared
    from dpopt.modeling.row_losses import CappedMin as CappedMin
    from dpopt.modeling.row_losses import Lookup as Lookup
    from dpopt.modeling.row_losses import Ramp as Ramp
    from dpopt.modeling.row_losses import ScoreIndicator as ScoreIndicator
    from dpopt.modeling.schema.declaration import Schema as Schema
    from dpopt.modeling.schema.specs import Binary as Binary
    from dpopt.modeling.schema.specs import Categorical as Categorical
    from dpopt.modeling.schema.specs import Fill as Fill
    from dpopt.modeling.schema.specs import Intercept as Intercept
    from dpopt.modeling.schema.specs import Numeric as Numeric
    from dpopt.modeling.variable import Variable as Variable
    from dpopt.modeling.zero_one import ZeroOneLoss as ZeroOneLoss
    from dpopt.privacy.ledger import Ledger as Ledger
    from dpopt.privacy.sqlite_ledger import SQLiteLedger as SQLiteLedger
    from dpopt.progress import show_progress as show_progress


#: a module of declarations -> the modules of higher layers that register algorithms for its
#: declarations (functools.singledispatch), imported right after it by whoever imports it
#: (docs/design.md, "Layers")
_ALGORITHMS = {
    "dpopt.modeling.structured_sets": ("dpopt.backends.polytope_programs",),
    "dpopt.modeling.submodular": ("dpopt.numerics.submodular_lp",),
    "dpopt.numerics.potentials": ("dpopt.compile.qnorm_weights",),
}
_lazy.import_after(_ALGORITHMS)
