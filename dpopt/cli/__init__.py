"""The ``dpopt`` command line: ``solve`` model scripts, ``doctor``, ``bench``.

The entry point is :func:`dpopt.cli.main.main` (``dpopt = "dpopt.cli.main:main"``
in pyproject.toml); model scripts are loaded by :mod:`dpopt.cli.model_script`,
whose docstring states the parameter contract.
"""
