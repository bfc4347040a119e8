"""Unit tests: declarations, sets, datasets, compilation, privacy primitives, the API."""
