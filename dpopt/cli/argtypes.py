"""argparse types shared by the ``dpopt`` command and the benchmarks (one message per rule).

Each type takes the option's text and returns the value or raises
``argparse.ArgumentTypeError``, which argparse turns into ``argument --X: <message>``
on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["int_list", "positive_float", "positive_floats", "positive_int", "positive_seconds"]


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer ≥ 1, got {text!r}")
    return value


def _positive_number(what: str) -> Callable[[str], float]:
    """An argparse type for one finite number > 0, described as ``what`` in its message."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


#: one finite number > 0
positive_float = _positive_number("a positive number")
#: a finite number of seconds > 0 (``--time-limit``)
positive_seconds = _positive_number("a positive number of seconds")


def positive_floats(text: str) -> list[float]:
    """Comma-separated finite numbers > 0 (at least one)."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers such as 0.1,1, got {text!r}")
    return values


def int_list(minimum: int) -> Callable[[str], list[int]]:
    """Comma-separated integers ≥ ``minimum`` (``1e5`` is accepted)."""

    def parse(text: str) -> list[int]:
        try:
            values = [int(float(v)) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
        if not values or min(values) < minimum:
            raise argparse.ArgumentTypeError(f"expected integers >= {minimum}, got {text!r}")
        return values

    return parse
