"""Testing utilities for dpopt: black-box statistical privacy audits.

See :mod:`dpopt.testing.audit`.
"""

from dpopt.testing.audit import AuditResult, audit, audit_outputs

__all__ = ["AuditResult", "audit", "audit_outputs"]
