"""Private mechanisms: each returns a :class:`~dpopt.mechanisms.release.Release`."""

from dpopt.mechanisms.base import Mechanism, default_ledger
from dpopt.mechanisms.objective_perturbation import ObjectivePerturbation
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.release import Release

__all__ = ["Mechanism", "ObjectivePerturbation", "OutputPerturbation", "Release", "default_ledger"]
