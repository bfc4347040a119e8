"""Test that a pre-data decision reads declarations only (docs/design.md, "Privacy rules").

A decision dpopt takes before the charge (which backend ``solver="auto"`` picks, which
verifier cross-checks it, the calibration, size limits, a refusal, ...) may read the data's
*shape* (n and d are public under replace-one) but no value.  :func:`hide_data_values` swaps
the data of every :class:`~dpopt.modeling.dataset.Dataset` (and a 0/1 loss's weights) for
:class:`ShapeOnly` stand-ins that keep the shape and raise on any read of a value, so a test
can run the decision again and require the same answer.

:func:`run_to_charge` runs a mechanism's whole pre-charge path — plan, calibration, solver
resolution, size limits, release parameters — and stops it exactly at the charge
(:class:`StopAtCharge`), returning what would have been charged (:class:`PreCharge`) or the
refusal.  Run on a dataset and on its hidden twin, or on two neighbouring datasets, the two
answers must be equal: that is the "whole program is the mechanism" rule for everything
before the data is touched.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from dpopt.errors import ChargeReached
from dpopt.privacy.calibration import Budget, budget_pair
from dpopt.privacy.ledger import Ledger

__all__ = [
    "PreCharge",
    "ShapeOnly",
    "StopAtCharge",
    "canonical",
    "hide_data_values",
    "run_to_charge",
]

#: what a read of a hidden value raises (tests match on it)
READ_MESSAGE = "a pre-data decision read a data value"


class ShapeOnly:
    """An array stand-in with a public shape; reading any value raises AssertionError.

    Parameters
    ----------
    shape : tuple of int
        The public shape.
    reads : list, optional
        Every read appends to it before raising, so a read that some code catches and
        swallows is still seen by the test.
    """

    def __init__(self, shape: tuple[int, ...], reads: list[str] | None = None) -> None:
        self.shape, self.ndim = shape, len(shape)
        self._reads = reads

    def __len__(self) -> int:
        return self.shape[0]

    def _read(self, *args: Any, **kwargs: Any) -> Any:
        if self._reads is not None:
            self._reads.append(f"a value of an array of shape {self.shape}")
        raise AssertionError(READ_MESSAGE)

    __array__ = __getitem__ = __iter__ = __float__ = _read


def hide_data_values(monkeypatch: Any, problem: Any = None) -> list[str]:
    """Replace the X and y of every Dataset by :class:`ShapeOnly` stand-ins and make every 0/1
    loss's ``weights`` and ``integer_rows`` unreadable, for the rest of the test.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        Undoes the change when the test ends.
    problem : Problem or DiscreteProblem, optional
        Kept for the callers that name the problem; the attributes are shadowed by properties
        on the classes, so every dataset is hidden, including one a loss derived from it.

    Returns
    -------
    list of str
        Filled with one entry per attempted read (a read raises, but code may catch it).
    """
    import dpopt as dp

    reads: list[str] = []

    def stand_in(name: str) -> property:
        return property(lambda self: ShapeOnly(tuple(self.__dict__[name].shape), reads))

    def unreadable(self: Any) -> NoReturn:
        reads.append("the weights or rows of a 0/1 loss")
        raise AssertionError(READ_MESSAGE)

    for name in ("X", "y"):
        monkeypatch.setattr(dp.Dataset, name, stand_in(name), raising=False)
    for name in ("weights", "integer_rows"):
        monkeypatch.setattr(dp.ZeroOneLoss, name, property(unreadable), raising=False)
    return reads


class StopAtCharge(Ledger):
    """A ledger with no budget whose charge raises :class:`ChargeReached`: the run stops exactly
    where the data would first be touched, and nothing after the charge runs."""

    def spend(self, epsilon: float | Budget, delta: float | None = None, *, label: str = "", mechanism: str = "",
              parameters: Mapping[str, Any] | None = None) -> NoReturn:
        raise ChargeReached(*budget_pair(epsilon, delta), label, mechanism, parameters)

    def charge(self, epsilon: float | Budget, delta: float | None = None, *, label: str = "", mechanism: str = "",
               released: bool = True, parameters: Mapping[str, Any] | None = None) -> NoReturn:
        raise ChargeReached(*budget_pair(epsilon, delta), label, mechanism, parameters)


@dataclass(frozen=True)
class PreCharge:
    """How a run's pre-charge path ended: ``"charge"`` with what would be charged (ε, δ, label,
    mechanism, public parameters, in :func:`canonical` form), or ``"refused"`` with the
    exception's type and message."""

    outcome: str
    details: Any


def run_to_charge(mechanism: Any, problem: Any, **run_options: Any) -> PreCharge:
    """Run ``mechanism.run(problem, **run_options)`` on a copy of the mechanism charged to a
    :class:`StopAtCharge` ledger, and say how its pre-charge path ended.

    An AssertionError (a hidden value was read, see :func:`hide_data_values`) propagates; any
    other exception is a refusal.  A run that returns without reaching a charge is an error of
    the mechanism (every release is charged).
    """
    probe = copy.copy(mechanism)
    probe.ledger = StopAtCharge()
    try:
        probe.run(problem, **run_options)
    except ChargeReached as reached:
        return PreCharge("charge", canonical(reached.charge))
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001 — a refusal, compared by type and message
        return PreCharge("refused", (type(exc).__name__, str(exc)))
    raise AssertionError(f"{type(mechanism).__name__}.run returned without a charge")


def canonical(value: Any) -> Any:
    """``value`` as nested tuples of plain Python values, comparable with ``==`` (arrays become
    tuples, mappings sorted items, NaN the string ``"nan"``)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, canonical(value.tolist()))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, np.generic):
        return canonical(value.item())
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value
