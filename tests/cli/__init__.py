"""Tests of dpopt.cli: solve, doctor, ledger and the checks before the charge."""
