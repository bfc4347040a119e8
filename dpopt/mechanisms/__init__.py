"""Private mechanisms: each returns a :class:`~dpopt.mechanisms.release.Release`."""

from dpopt.mechanisms.base import ConvexMechanism, Mechanism, default_ledger
from dpopt.mechanisms.frank_wolfe import GaussianFrankWolfe, PolytopeFrankWolfe
from dpopt.mechanisms.mirror_descent import PrivateMirrorDescent
from dpopt.mechanisms.objective_perturbation import ObjectivePerturbation
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.opsamp import OPSamp
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.release import Release
from dpopt.mechanisms.rspm import RSPM

__all__ = ["ConvexMechanism", "Mechanism", "OPDisc", "OPSamp", "ObjectivePerturbation", "OutputPerturbation", "RSPM", "Release", "default_ledger"]
__all__ += ["PrivateMirrorDescent"]
__all__ += ["GaussianFrankWolfe", "PolytopeFrankWolfe"]
from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe  # noqa: E402
from dpopt.mechanisms.submodular_output import SubmodularOutputPerturbation  # noqa: E402

__all__ += ["DualFrankWolfe", "SubmodularOutputPerturbation"]
from dpopt.mechanisms.selection import PrivateSelection  # noqa: E402

__all__ += ["PrivateSelection"]
from dpopt.mechanisms.gradient_descent import DPSGD, DPGradientDescent  # noqa: E402

__all__ += ["DPGradientDescent", "DPSGD"]
