"""Fixtures of the unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dpopt.datasets import adult as adult_mod

# the real cached functions, captured before any test monkeypatches them
_ADULT_CACHES = (adult_mod._raw_table, adult_mod._encoded)


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Empty the per-process caches of the Adult loader before and after a test that tampers
    with loading (swaps the raw rows or the checksums)."""
    for function in _ADULT_CACHES:
        function.cache_clear()
    yield
    for function in _ADULT_CACHES:
        function.cache_clear()
