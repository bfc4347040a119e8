"""Tests of dpopt.backends: the registry's backends, the MIP oracles, certificates and verification."""
