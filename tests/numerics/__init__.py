"""Tests of dpopt.numerics: the a-priori solver, safe bounds and distributed gradients."""
