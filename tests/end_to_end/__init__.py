"""End to end: the CLI, model scripts, README and docs, scikit-learn, benchmarks."""
