"""Testing utilities for dpopt: black-box statistical privacy audits and a checker of losses.

See :mod:`dpopt.testing.audit` and :mod:`dpopt.testing.check_loss`.
"""

from dpopt.testing.audit import AuditResult, audit, audit_outputs
from dpopt.testing.check_loss import LossCheck, LossCheckReport, check_loss
from dpopt.testing.pairs import one_point_pair

__all__ = ["AuditResult", "LossCheck", "LossCheckReport", "audit", "audit_outputs", "check_loss",
           "one_point_pair"]
