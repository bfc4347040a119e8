"""The exact samplers' bit source: exactly uniform integers, secure by default, reproducible when seeded."""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy import stats

from dpopt.privacy import bits as bits_module
from dpopt.privacy.bits import BitStream


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _uniform_p_value(values: np.ndarray, bound: int, bins: int) -> float:
    """χ² p-value of ``values`` against the uniform law on {0, …, bound − 1}, grouped by ⌊v·bins/bound⌋
    (group j holds ⌈(j+1)·bound/bins⌉ − ⌈j·bound/bins⌉ integers, computed exactly)."""
    groups = [int(v) * bins // bound for v in values.tolist()]
    counts = np.bincount(groups, minlength=bins)
    sizes = np.array([_ceil_div((j + 1) * bound, bins) - _ceil_div(j * bound, bins) for j in range(bins)],
                     dtype=float)
    return float(stats.chisquare(counts, sizes / sizes.sum() * counts.sum()).pvalue)


@pytest.mark.parametrize("bound", [2, 3, 7, 200, 1 << 16, 65_537, 3 * (1 << 20) + 1, (1 << 33) + 5])
def test_below_array_is_uniform_for_scalar_bounds(bound: int) -> None:
    values = BitStream(seed=1).below_array(bound, 60_000)
    assert values.dtype == np.int64 and values.min() >= 0 and values.max() < bound
    assert _uniform_p_value(values, bound, min(bound, 16)) > 1e-4


def test_below_array_with_one_bound_per_entry_respects_each() -> None:
    bounds = np.tile(np.array([3, 5, 1 << 40, 1], dtype=np.int64), 20_000)
    values = BitStream(seed=2).below_array(bounds, bounds.size)
    assert ((values >= 0) & (values < bounds)).all()
    for bound in (3, 5):
        picked = values[bounds == bound]
        assert _uniform_p_value(picked, bound, bound) > 1e-4
    assert (values[bounds == 1] == 0).all()


def test_a_biased_modulo_is_caught_by_the_same_check() -> None:
    """Mutant: u mod m on 8-bit words without rejection favours small residues (256 = 85·3 + 1)."""
    u = BitStream(seed=3).narrow(8, 200_000).astype(np.int64)
    biased = u % 85
    assert _uniform_p_value(biased, 85, 85) < 1e-4


def test_python_int_draws_are_uniform_beyond_64_bits() -> None:
    stream = BitStream(seed=4)
    bound = (1 << 70) + 12345
    values = [stream.below(bound) for _ in range(4000)]
    assert all(0 <= v < bound for v in values)
    top = np.array([v * 8 // bound for v in values])
    assert stats.chisquare(np.bincount(top, minlength=8)).pvalue > 1e-4


def test_seeded_streams_repeat_and_secure_streams_read_the_os(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = BitStream(seed=9), BitStream(seed=9)
    assert np.array_equal(a.below_array(1000, 500), b.below_array(1000, 500))
    assert not a.secure and BitStream().secure
    calls: list[int] = []
    real = os.urandom

    def counting(n: int) -> bytes:
        calls.append(n)
        return real(n)

    monkeypatch.setattr(bits_module.os, "urandom", counting)
    BitStream().below_array(7, 10)
    assert calls
    calls.clear()
    BitStream(seed=1).below_array(7, 10)
    assert not calls


def test_python_int_words_read_the_stream_like_the_arrays() -> None:
    """word_list and word64 return the values words and words64 return, in stream order, across the
    buffer's refills (so a seeded run reads the same bits whichever form a sampler uses)."""
    a, b = BitStream(seed=5), BitStream(seed=5)
    for i in range(12_000):  # ≈ 40,000 words: several refills of the growing buffer
        if i % 3 == 0:
            assert a.word_list(3) == b.words(3).tolist()
        assert a.word64() == int(b.words64(1)[0])
    assert a.words(5).tolist() == b.words(5).tolist()
