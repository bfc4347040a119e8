"""Testing utilities for dpopt: black-box statistical privacy audits.

See :mod:`dpopt.testing.audit`.
"""

from dpopt.testing.audit import AuditResult, audit, audit_outputs
from dpopt.testing.pairs import one_point_pair

__all__ = ["AuditResult", "audit", "audit_outputs", "one_point_pair"]
