"""Tests of dpopt.mechanisms: one file per mechanism (calibration, refusals, neighbour tests, audits, mutants)."""
