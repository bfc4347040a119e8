"""Private mechanisms: each returns a :class:`~dpopt.mechanisms.release.Release`."""

from dpopt.mechanisms.base import ConvexMechanism, Mechanism, default_ledger
from dpopt.mechanisms.objective_perturbation import ObjectivePerturbation
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.release import Release

__all__ = ["ConvexMechanism", "Mechanism", "OPDisc", "ObjectivePerturbation", "OutputPerturbation", "Release", "default_ledger"]
