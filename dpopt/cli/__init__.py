"""The ``dpopt`` command line: ``solve`` model scripts, ``ledger``, ``doctor``, ``bench``.

The entry point is :func:`dpopt.cli.main.main` (``dpopt = "dpopt.cli.main:main"`` in
pyproject.toml), which holds the parser and dispatches to one module per command:
:mod:`dpopt.cli.solve` (with the checks before the charge in :mod:`dpopt.cli.checks`),
:mod:`dpopt.cli.ledger_cmd`, :mod:`dpopt.cli.doctor` and :mod:`dpopt.cli.bench_cmd`.
:mod:`dpopt.cli.exits` turns errors into exit codes, :mod:`dpopt.cli.console` prints, and
model scripts are loaded by :mod:`dpopt.cli.model_script`, whose docstring states the
parameter contract.
"""
