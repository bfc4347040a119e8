"""Tests of dpopt.compile: the declarations compiled to solver programs."""
