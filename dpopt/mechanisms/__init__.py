"""Private mechanisms: each returns a :class:`~dpopt.mechanisms.release.Release`.

Importing this package imports every module of it (:func:`dpopt.discovery.import_package`), so
every mechanism class is loaded and found by :func:`dpopt.discovery.subclasses` (the refusals
that name alternatives and the guard tests rely on it); each concrete mechanism is an
attribute of the package under its class name, with no list to keep here.  A mechanism's one
registration is its line in ``dpopt/__init__.py``'s ``_EXPORTS`` (``dp.ObjectivePerturbation``).
No mechanism module imports a solver package at import time: each backend loads its own when
first used.
"""

from dpopt.discovery import import_package, subclasses
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.base import default_ledger as default_ledger
from dpopt.mechanisms.convex import ConvexMechanism as ConvexMechanism
from dpopt.mechanisms.release import Release as Release

import_package(__name__)

#: every concrete mechanism class of the package, by name (``dpopt.mechanisms.OPDisc``)
_MECHANISMS = {cls.__name__: cls for cls in subclasses(Mechanism, within=__name__, public=True)}
globals().update(_MECHANISMS)

__all__ = sorted(["ConvexMechanism", "Mechanism", "Release", "default_ledger", *_MECHANISMS])
