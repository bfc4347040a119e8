"""Command-line argument types shared by the benchmarks."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["int_list"]


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
