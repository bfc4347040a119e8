"""Tests of dpopt.modeling.schema: specs, label maps, encodings and the schema check."""
