"""Tests of dpopt.testing: the audit harness and the generated constraint table."""
