"""Private mechanisms: each returns a :class:`~dpopt.mechanisms.release.Release`.

Importing this package imports every mechanism module (discovery by ``__subclasses__()``,
:func:`dpopt.testing.coverage.concrete_mechanisms`, relies on it); no mechanism module
imports a solver package at import time: each backend loads its own when first used.
"""

from dpopt.mechanisms.adassp import AdaSSP
from dpopt.mechanisms.base import ConvexMechanism, Mechanism, default_ledger
from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe
from dpopt.mechanisms.gaussian_frank_wolfe import GaussianFrankWolfe
from dpopt.mechanisms.gradient_descent import DPSGD, DPGradientDescent
from dpopt.mechanisms.mirror_descent import PrivateMirrorDescent
from dpopt.mechanisms.objective_perturbation import ObjectivePerturbation
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.opsamp import OPSamp
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.mechanisms.release import Release
from dpopt.mechanisms.rspm import RSPM
from dpopt.mechanisms.selection import PrivateSelection
from dpopt.mechanisms.submodular_output import SubmodularOutputPerturbation

__all__ = [
    "AdaSSP",
    "ConvexMechanism",
    "DPGradientDescent",
    "DPSGD",
    "DualFrankWolfe",
    "GaussianFrankWolfe",
    "Mechanism",
    "OPDisc",
    "OPSamp",
    "ObjectivePerturbation",
    "OutputPerturbation",
    "PolytopeFrankWolfe",
    "PrivateMirrorDescent",
    "PrivateSelection",
    "RSPM",
    "Release",
    "SubmodularOutputPerturbation",
    "default_ledger",
]
