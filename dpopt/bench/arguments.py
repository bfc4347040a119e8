"""Command-line argument types shared by the benchmarks."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["int_list", "positive_float", "positive_floats", "positive_int"]


def int_list(minimum: int) -> Callable[[str], list[int]]:
    """An argparse type for comma-separated integers ≥ ``minimum`` (``1e5`` is accepted)."""

    def parse(text: str) -> list[int]:
        try:
            values = [int(float(v)) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
        if not values or min(values) < minimum:
            raise argparse.ArgumentTypeError(f"expected integers >= {minimum}, got {text!r}")
        return values

    return parse


def positive_int(text: str) -> int:
    """An argparse type for one integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """An argparse type for one finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def positive_floats(text: str) -> list[float]:
    """An argparse type for comma-separated finite numbers > 0 (at least one)."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers such as 0.1,1, got {text!r}")
    return values
