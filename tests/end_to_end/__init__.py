"""Whole programs: the CLI on model scripts, the README and docs examples, newcomers' mistakes."""
