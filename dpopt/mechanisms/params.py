"""Declarative validation of mechanism settings, in the style of scikit-learn's ``_parameter_constraints``.

Every mechanism class declares, for each keyword of its ``__init__``, the list of
constraints a value may satisfy (a value is valid when it satisfies *any* of them)::

    class OPSamp(DiscreteMechanism):
        _parameter_constraints = {
            **DiscreteMechanism._parameter_constraints,
            "calls": [Interval(Integral, 1, None, closed="left"), None],
            "beta": [Interval(Real, 0, 1, closed="neither")],
        }

and the construction checks every argument of its ``__init__`` once, before ``__init__`` runs
(:meth:`dpopt.mechanisms.base.Mechanism.__new__`, through :func:`init_arguments`).  A
setting is a public declaration, so the check runs before anything is charged and its
message may quote the value.  Rules (scikit-learn's, made stricter for privacy settings):

* ``bool`` is never a number: ``True`` is refused wherever a number is expected;
* NaN is refused everywhere, ±inf unless an interval's bound is ``±math.inf`` and closed;
* ``Integral`` refuses floats (``3.0``); ``Real`` accepts Python and NumPy ints and floats;
* ``None`` in a list means the value may be ``None`` (the mechanism then picks a default).

Checks that involve two settings (Gaussian noise needs δ > 0, ...) stay in ``__init__``,
after the declarative check, as in scikit-learn.

The error, :class:`InvalidParameterError`, is both a
:class:`~dpopt.errors.MechanismError` and a :class:`~dpopt.errors.PrivacyParameterError`
(ε, δ and the selection shares are privacy settings; callers catching either keep working),
the way scikit-learn's ``InvalidParameterError`` is both a ``ValueError`` and a ``TypeError``.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from dpopt.errors import InvalidParameterError

__all__ = [
    "Boolean",
    "Constraint",
    "Instance",
    "Integral",
    "Interval",
    "IsCallable",
    "NoneConstraint",
    "Options",
    "Real",
    "Vector",
    "check_param",
    "init_arguments",
    "make_constraint",
    "validate_params",
]

#: markers of the number kind of an :class:`Interval` (the ``numbers`` ABCs)
Real = numbers.Real
Integral = numbers.Integral

Closed = Literal["left", "right", "both", "neither"]
#: the longest repr of a refused value quoted in a message
_REPR_LIMIT = 80


class Constraint(ABC):
    """One allowed kind of value for a setting."""

    #: appended to the refusal message (why the rule holds), empty for none
    why: str = ""

    @abstractmethod
    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` satisfies the constraint."""

    @abstractmethod
    def describe(self) -> str:
        """The allowed values in words (``"an integer ≥ 1"``)."""

    def parts(self) -> list[str]:
        """The allowed values as items of one list in a message (one per option for :class:`Options`)."""
        return [self.describe()]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _is_number(value: object) -> bool:
    """A real number that is not a bool (NumPy scalars included)."""
    if type(value) in (float, int):  # the common case, without the ABC checks (bool is not int here)
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _fmt(bound: float) -> str:
    if math.isinf(bound):
        return "inf" if bound > 0 else "-inf"
    return f"{bound:g}"


class Interval(Constraint):
    """Numbers of one kind in an interval.

    Parameters
    ----------
    kind : numbers.Real or numbers.Integral
        :data:`Real` (ints and floats) or :data:`Integral` (ints only; bools never).
    left, right : float or None
        The bounds; None is unbounded on that side (±inf still refused: pass ``math.inf``
        with a closed side to allow it).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    why : str
        Why the rule holds, appended to the refusal message.
    """

    def __init__(self, kind: type, left: float | None, right: float | None, *,
                 closed: Closed = "both", why: str = "") -> None:
        if kind not in (Real, Integral):
            raise TypeError(f"Interval kind must be Real or Integral, got {kind!r}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got {closed!r}")
        if left is not None and right is not None and not left <= right:
            raise ValueError(f"empty interval: left={left} > right={right}")
        self.kind, self.left, self.right, self.closed, self.why = kind, left, right, closed, why

    def _closed_left(self) -> bool:
        return self.closed in ("left", "both")

    def _closed_right(self) -> bool:
        return self.closed in ("right", "both")

    def is_satisfied_by(self, value: object) -> bool:
        if not _is_number(value) or (self.kind is Integral and not isinstance(value, numbers.Integral)):
            return False
        v = float(value)  # type: ignore[arg-type]
        if math.isnan(v):
            return False
        if math.isinf(v):  # only where a closed bound is that infinity
            bound, closed = (self.right, self._closed_right()) if v > 0 else (self.left, self._closed_left())
            return bool(closed and bound == v)
        if self.left is not None and (v < self.left or (v == self.left and not self._closed_left())):
            return False
        return not (self.right is not None and (v > self.right or (v == self.right and not self._closed_right())))

    def describe(self) -> str:
        noun = "an integer" if self.kind is Integral else "a number"
        if self.left is not None and self.right is not None:
            lb, rb = "[" if self._closed_left() else "(", "]" if self._closed_right() else ")"
            return f"{noun} in {lb}{_fmt(self.left)}, {_fmt(self.right)}{rb}"
        finite = "" if self.kind is Integral else "finite "
        noun = "an integer" if self.kind is Integral else f"a {finite}number"
        if self.left is not None:
            return f"{noun} {'≥' if self._closed_left() else '>'} {_fmt(self.left)}"
        if self.right is not None:
            return f"{noun} {'≤' if self._closed_right() else '<'} {_fmt(self.right)}"
        return noun


class Options(Constraint):
    """One of a fixed set of values (strings, or ``True``/``False`` matched by identity)."""

    def __init__(self, options: Iterable[object], *, why: str = "") -> None:
        self.options = tuple(options)
        self.why = why

    def is_satisfied_by(self, value: object) -> bool:
        for option in self.options:
            if isinstance(option, bool) or isinstance(value, (bool, np.bool_)):
                if value is option:  # True is not 1, 'auto' is not np.True_
                    return True
            elif isinstance(value, type(option)) and value == option:
                return True
        return False

    def describe(self) -> str:
        return _either(self.parts())

    def parts(self) -> list[str]:
        return [repr(o) for o in self.options]


class Instance(Constraint):
    """An instance of a class (``what`` names it in messages, default the class name)."""

    def __init__(self, cls: type | tuple[type, ...], *, what: str | None = None, why: str = "") -> None:
        self.cls = cls
        names = [c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,))]
        self.what = what or f"an instance of {' or '.join(names)}"
        self.why = why

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, self.cls)

    def describe(self) -> str:
        return self.what


class Boolean(Constraint):
    """``True`` or ``False`` (``numpy.bool_`` included; 0 and 1 refused)."""

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, (bool, np.bool_))

    def describe(self) -> str:
        return "True or False"


class IsCallable(Constraint):
    """A callable (``what`` says which signature is expected)."""

    def __init__(self, what: str = "a callable") -> None:
        self.what = what

    def is_satisfied_by(self, value: object) -> bool:
        return callable(value)

    def describe(self) -> str:
        return self.what


class Vector(Constraint):
    """A one-dimensional array-like of finite numbers (its length is checked with the problem)."""

    def is_satisfied_by(self, value: object) -> bool:
        if isinstance(value, (str, bytes, Mapping)):
            return False
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        return arr.ndim == 1 and bool(np.all(np.isfinite(arr)))

    def describe(self) -> str:
        return "a vector of finite numbers"


class NoneConstraint(Constraint):
    """``None`` (written as ``None`` in a constraint list)."""

    def is_satisfied_by(self, value: object) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


def make_constraint(spec: Constraint | None) -> Constraint:
    """A constraint object from a list entry (``None`` → :class:`NoneConstraint`)."""
    if spec is None:
        return NoneConstraint()
    if isinstance(spec, Constraint):
        return spec
    raise TypeError(f"unknown parameter constraint {spec!r}")


def _either(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _REPR_LIMIT else f"{text[:_REPR_LIMIT - 3]}..."


def check_param(owner: str, name: str, specs: Iterable[Constraint | None], value: object) -> None:
    """Raise :class:`InvalidParameterError` unless ``value`` satisfies one of ``specs``."""
    constraints = [make_constraint(s) for s in specs]
    for c in constraints:
        if c.is_satisfied_by(value):
            return
    why = "; ".join(c.why for c in constraints if c.why)
    raise InvalidParameterError(
        f"{owner}: {name} must be {_either([p for c in constraints for p in c.parts()])}, got {_short_repr(value)}"
        + (f" ({why})" if why else ""))


def validate_params(owner: str, constraints: Mapping[str, list[Any]], values: Mapping[str, object]) -> None:
    """Check every setting in ``values`` against its declared constraints.

    Parameters
    ----------
    owner : str
        The mechanism's name, first in the message.
    constraints : mapping
        Setting name → list of :class:`Constraint` (or ``None``); a value is valid when it
        satisfies any of them.
    values : mapping
        Setting name → value (every name must be declared).

    Raises
    ------
    InvalidParameterError
        For the first setting (in ``values`` order) that satisfies none of its constraints:
        one message naming the setting, the value and what is allowed.
    TypeError
        For a setting without declared constraints (a programming error of the class).
    """
    for name, value in values.items():
        if name not in constraints:
            raise TypeError(f"{owner}: the setting {name!r} has no declared constraints")
        check_param(owner, name, constraints[name], value)


@functools.cache
def _init_signature(cls: type) -> inspect.Signature:
    return inspect.signature(cls.__init__)  # type: ignore[misc]


def init_arguments(cls: type, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, object] | None:
    """The arguments of ``cls(*args, **kwargs)`` by name, defaults included, as its ``__init__``
    receives them; None when they do not bind (the call's own ``TypeError`` then says why).

    A ``**kwargs`` parameter contributes its items by their names.
    """
    signature = _init_signature(cls)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    values: dict[str, object] = {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        kind = signature.parameters[name].kind
        if i == 0:
            continue  # self
        if kind is inspect.Parameter.VAR_KEYWORD:
            values.update(value)
        else:
            values[name] = value
    return values
