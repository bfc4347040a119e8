"""Tests of dpopt.modeling: data, schema, losses, sets, domains and problems."""
