"""Tests of dpopt.sklearn: the scikit-learn estimators, search and the schema encoder."""
