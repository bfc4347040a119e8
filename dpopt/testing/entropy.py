"""Test that secure noise reads the operating system's entropy and no seeded stream.

:func:`route_os_entropy` sends every OS entropy entry point through a function of the test's
choice (a fixed stream, a counter, a refusal); :func:`count_os_entropy` counts the bytes read;
:func:`refuse_seeded_generators` makes building a seeded generator fail the test.  They patch
through pytest's ``monkeypatch``, so every change is undone when the test ends.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import numpy as np

__all__ = ["count_os_entropy", "refuse_seeded_generators", "route_os_entropy"]


def route_os_entropy(monkeypatch: Any, source: Callable[[int], bytes]) -> None:
    """Route every OS entropy entry point through ``source(n) -> bytes``: ``os.urandom`` and the
    ``_urandom`` behind ``random.SystemRandom`` (hence :mod:`secrets`)."""
    monkeypatch.setattr(os, "urandom", source)
    monkeypatch.setattr(random, "_urandom", source)


def count_os_entropy(monkeypatch: Any) -> dict[str, int]:
    """Count the OS entropy read from now on (real bytes still flow); returns ``{"bytes": n}``,
    updated as bytes are read."""
    read = {"bytes": 0}
    real = os.urandom

    def counted(n: int) -> bytes:
        read["bytes"] += n
        return real(n)

    route_os_entropy(monkeypatch, counted)
    return read


def refuse_seeded_generators(monkeypatch: Any, names: Iterable[str], message: str) -> None:
    """Make ``numpy.random.<name>`` for each of ``names``, and ``random.Random``, raise
    ``AssertionError(message)`` when called: no seeded generator can be built on the side."""
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError(message)

    for name in names:
        monkeypatch.setattr(np.random, name, refuse)
    monkeypatch.setattr(random, "Random", refuse)
