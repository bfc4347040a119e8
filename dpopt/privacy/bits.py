"""Uniform random bits for the exact samplers: the OS CSPRNG by default, a seeded stream on request.

:class:`BitStream` serves 32-bit words from a buffer refilled in growing blocks, and exact
uniform integers built on them: :meth:`BitStream.below` (one Python int in {0, …, n − 1},
any n ≥ 1) and :meth:`BitStream.below_array` (a numpy array of them, one bound per entry,
bounds below 2^63; small bounds read 8- or 16-bit words).  Both reject the values that would bias the result, so every output is
exactly uniform given uniform words.

The secure stream reads ``os.urandom`` (the same source as :mod:`secrets`); the seeded one
reads the raw output of ``numpy.random.PCG64DXSM(seed)``, reproducible bit for bit and
**not cryptographically secure**.
"""

from __future__ import annotations

import os
import sys

import numpy as np

__all__ = ["BitStream"]

_FIRST_BLOCK = 1 << 10
_LARGEST_BLOCK = 1 << 14
_TWO32 = np.uint64(1 << 32)
_NARROW = {8: np.uint8, 16: np.uint16, 32: np.uint32}
#: a uint64 view of two uint32 words [a, b] is a | b << 32 on a little-endian machine
_LITTLE = sys.byteorder == "little"


class BitStream:
    """A buffered source of uniform 32-bit words.

    Parameters
    ----------
    seed : int, optional
        None (default): ``os.urandom``.  An integer: PCG64DXSM(seed), reproducible, not secure.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.secure = seed is None
        self._generator = None if seed is None else np.random.PCG64DXSM(int(seed))
        self._buffer = np.empty(0, dtype=np.uint32)
        self._used = 0
        self._block = _FIRST_BLOCK

    def _fill(self, count: int) -> np.ndarray:
        if self._generator is None:
            return np.frombuffer(os.urandom(4 * count), dtype=np.uint32)
        return np.asarray(self._generator.random_raw((count + 1) // 2), dtype=np.uint64).view(np.uint32)[:count]

    def words(self, count: int) -> np.ndarray:
        """``count`` uniform uint32 words (a fresh array), served from the buffer in stream order.

        A request larger than the current block is read from the source directly (after what is
        left in the buffer); smaller ones refill the buffer with a block that doubles up to 64 KB,
        small enough for the allocator to reuse its memory instead of mapping fresh pages."""
        left = self._buffer.size - self._used
        if left >= count:
            out = self._buffer[self._used:self._used + count].copy()
            self._used += count
            return out
        rest = self._buffer[self._used:]
        need = count - left
        if need >= self._block:
            self._used = self._buffer.size
            fresh = self._fill(need)
            return np.concatenate([rest, fresh]) if left else fresh.copy()
        self._block = min(2 * self._block, _LARGEST_BLOCK)
        fresh = self._fill(self._block)
        out = np.concatenate([rest, fresh[:need]])
        self._buffer, self._used = fresh, need
        return out

    def words64(self, count: int) -> np.ndarray:
        """``count`` uniform uint64 words."""
        return self.words(2 * count).view(np.uint64)

    def word_list(self, count: int) -> list[int]:
        """``count`` uniform 32-bit words as Python ints: the values of :meth:`words`, read
        straight from the buffer (no array) when it holds them."""
        start = self._used
        if self._buffer.size - start >= count:
            self._used = start + count
            return self._buffer[start:start + count].tolist()
        return self.words(count).tolist()

    def word64(self) -> int:
        """One uniform 64-bit word as a Python int: the value ``int(words64(1)[0])``."""
        first, second = self.word_list(2)
        return first | (second << 32) if _LITTLE else (first << 32) | second

    def below(self, n: int) -> int:
        """One exactly uniform Python int in {0, …, n − 1} (n ≥ 1, any size)."""
        k = (n - 1).bit_length()
        if k == 0:
            return 0
        count = (k + 31) // 32
        while True:
            value = 0
            for word in self.word_list(count):
                value = (value << 32) | word
            value >>= 32 * count - k
            if value < n:
                return value

    def below_array(self, bounds: np.ndarray | int, size: int) -> np.ndarray:
        """``size`` exactly uniform int64 values, entry i in {0, …, bounds[i] − 1} (1 ≤ bounds < 2^63).

        Lemire's rejection: a word u is kept when u ≥ 2^w mod m, then u mod m is uniform
        (the kept range holds each residue equally often); w = 32 when every bound fits.  A
        scalar power-of-two bound takes the low bits of a word directly.
        """
        if isinstance(bounds, int):
            return self._below_scalar(bounds, size) if bounds <= 1 << 32 else self._below_wide(bounds, size)
        m = np.broadcast_to(np.asarray(bounds, dtype=np.uint64), (size,))
        out = np.empty(size, dtype=np.uint64)
        todo = np.arange(size)
        small = size == 0 or int(m.max()) <= 1 << 32
        while todo.size:
            mm = m[todo]
            if small:
                u = self.words(todo.size).astype(np.uint64)
                floor = (_TWO32 - mm) % mm
            else:
                u = self.words64(todo.size)
                floor = (np.uint64(0) - mm) % mm
            keep = u >= floor
            out[todo[keep]] = u[keep] % mm[keep]
            todo = todo[~keep]
        return out.astype(np.int64)

    def narrow(self, width: int, count: int) -> np.ndarray:
        """``count`` uniform words of ``width`` ∈ {8, 16, 32} bits (views of fresh 32-bit words)."""
        per = 32 // width
        return self.words((count + per - 1) // per).view(_NARROW[width])[:count]

    def _below_scalar(self, bound: int, size: int) -> np.ndarray:
        """``size`` uniform values in {0, …, bound − 1} for one bound ≤ 2^32 (Lemire's rejection on
        the narrowest words that hold the bound, so small bounds spend few bits)."""
        width = 8 if bound <= 1 << 8 else 16 if bound <= 1 << 16 else 32
        if bound & (bound - 1) == 0:
            return (self.narrow(width, size) & _NARROW[width](bound - 1)).astype(np.int64)
        floor = ((1 << width) - bound) % bound
        u = self.narrow(width, size)
        bad = np.flatnonzero(u < floor)
        while bad.size:
            fresh = self.narrow(width, bad.size)
            u[bad] = fresh
            bad = bad[fresh < floor]
        return (u.astype(np.int64) % bound)

    def _below_wide(self, bound: int, size: int) -> np.ndarray:
        """``size`` uniform values in {0, …, bound − 1} for one bound in (2^32, 2^63) (Lemire's
        rejection on 64-bit words: a word u is kept when u ≥ 2^64 mod bound)."""
        m = np.uint64(bound)
        floor = np.uint64((1 << 64) % bound)
        u = self.words64(size)
        bad = np.flatnonzero(u < floor)
        while bad.size:
            fresh = self.words64(bad.size)
            u[bad] = fresh
            bad = bad[fresh < floor]
        return (u % m).astype(np.int64)

    def unit32(self, size: int) -> np.ndarray:
        """``size`` uniform integers in [0, 2^32) as exact float64 values."""
        return self.words(size).astype(np.float64)
