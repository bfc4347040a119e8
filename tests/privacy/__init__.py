"""Tests of dpopt.privacy: calibration, exact samplers, grids, accountants, ledgers."""
