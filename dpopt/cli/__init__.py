"""The ``dpopt`` command line: ``solve`` model scripts, ``doctor``, ``bench``.

The entry point is :func:`dpopt.cli.main.main`; model scripts are loaded by
:mod:`dpopt.cli.model_script`, whose docstring states the parameter contract.
"""

from dpopt.cli.main import main

__all__ = ["main"]
