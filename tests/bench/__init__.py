"""Tests of dpopt.bench: each benchmark runs on a small setting and writes what it documents."""
