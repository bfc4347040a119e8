"""Backends: registry and conformance, MIP oracles, the solver layer, executors."""
