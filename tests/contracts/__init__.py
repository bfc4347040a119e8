"""Generic guards and contract suites: checks over every mechanism, set, loss, backend and module."""
