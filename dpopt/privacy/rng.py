"""Random generators for private mechanisms.

By default dpopt seeds its generators from the operating system's
cryptographically secure random source.  A user seed makes a run reproducible
and is recorded as such in the release: reproducible noise is *known* noise to
anyone who knows the seed, so a seeded release is for testing and experiments,
not for publishing.
"""

from __future__ import annotations

import numbers
import secrets
from dataclasses import asdict, dataclass

import numpy as np

from dpopt.errors import PrivacyParameterError

__all__ = ["NoiseGenerator", "SecureGenerator", "SeedInfo", "make_rng"]

_BIT_GENERATOR = "PCG64DXSM"


class NoiseGenerator(np.random.Generator):
    """The generator a run draws from: a numpy ``Generator`` that can also hold the run's
    exact noise streams (:meth:`dpopt.privacy.grid.GridNoise.units` buffers its draws here,
    one stream per law, so a mechanism that draws a few values per step pays for large
    vectorised batches).  A seeded run's exact draws are seeded from it, reproducibly."""

    secure = False


class SecureGenerator(NoiseGenerator):
    """The generator of an unseeded run: float work that is never released (e.g. a solver's
    start) uses its PCG64DXSM stream, and it marks the run as secure, so that every exact
    noise draw (:func:`dpopt.privacy.exact.sampler_for`) reads the operating system's
    CSPRNG instead of that stream."""

    secure = True


@dataclass(frozen=True)
class SeedInfo:
    """How a mechanism's generator was seeded (recorded in every release).

    Attributes
    ----------
    user_seeded : bool
        True when the user supplied the seed: the noise is reproducible by anyone
        who knows the seed, so the release is not secure.
    seed : int or None
        The user's integer seed (the entropy of a user-supplied
        ``numpy.random.SeedSequence`` when that is an integer), or None.  None when
        securely seeded: the OS entropy is never stored.
    bit_generator : str
        Name of the numpy bit generator, e.g. ``"PCG64DXSM"``.
    spawn_key : tuple of int
        The ``spawn_key`` of a user-supplied ``SeedSequence`` (empty otherwise);
        ``SeedSequence(seed, spawn_key=spawn_key)`` reproduces the stream.
    """

    user_seeded: bool
    seed: int | None
    bit_generator: str
    spawn_key: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable dict of the fields."""
        out = asdict(self)
        out["spawn_key"] = list(self.spawn_key)
        return out

    def summary(self) -> str:
        """One line for reports."""
        if not self.user_seeded:
            return f"{self.bit_generator}, seeded from OS entropy (secure)"
        seed = "a SeedSequence" if self.seed is None else f"seed {self.seed}"
        key = f", spawn_key {self.spawn_key}" if self.spawn_key else ""
        return f"{self.bit_generator}, user {seed}{key} (reproducible, NOT secure)"


def make_rng(
    seed: int | np.random.SeedSequence | None = None,
) -> tuple[np.random.Generator, SeedInfo]:
    """Create the generator a mechanism draws its noise from.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or None, default None
        None (the default): seed from 128 bits of OS entropy
        (:func:`secrets.randbits`, i.e. the OS CSPRNG), and record no seed.
        A non-negative int or a ``SeedSequence``: reproducible noise, recorded as
        ``user_seeded=True``; for tests and experiments only.

    Returns
    -------
    tuple
        ``(generator, seed_info)``: a ``numpy.random.Generator`` over
        ``PCG64DXSM`` and the :class:`SeedInfo` describing how it was seeded.

    Raises
    ------
    PrivacyParameterError
        For bools, negative ints, floats, strings, and ``numpy.random.Generator`` or
        ``BitGenerator`` instances.  A generator must not be passed in: it may be
        shared with code that already drew from it or will draw from it later, and
        its outputs would then be correlated with (or predictable from) the noise.

    Notes
    -----
    The *seed* is cryptographically random, but PCG64DXSM itself is **not** a
    cryptographically secure PRNG: it is a fast statistical generator whose
    internal state (128-bit state and increment) could in principle be recovered
    from enough of its raw outputs, after which all its outputs are predictable.
    dpopt never releases raw generator outputs, only noise added to values an
    adversary does not know, and each generator is fresh per run and not shared,
    which is the usual assumption in DP libraries.  Against an adversary that can
    observe the process's memory or many raw draws, this is not enough; use an
    OS- or hardware-backed sampler in that setting.
    """
    if seed is None:
        entropy = secrets.randbits(128)
        gen = SecureGenerator(np.random.PCG64DXSM(np.random.SeedSequence(entropy)))
        del entropy
        return gen, SeedInfo(user_seeded=False, seed=None, bit_generator=_BIT_GENERATOR)
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        raise PrivacyParameterError(
            "seed must be a non-negative int, a numpy.random.SeedSequence or None, "
            f"not a {type(seed).__name__}: a shared generator could correlate the noise "
            "with other draws; pass an int seed for reproducibility or None for secure noise"
        )
    if isinstance(seed, np.random.SeedSequence):
        user_int = seed.entropy if isinstance(seed.entropy, int) else None
        info = SeedInfo(
            user_seeded=True,
            seed=user_int,
            bit_generator=_BIT_GENERATOR,
            spawn_key=tuple(int(k) for k in seed.spawn_key),
        )
        return NoiseGenerator(np.random.PCG64DXSM(seed)), info
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise PrivacyParameterError(
            "seed must be a non-negative int, a numpy.random.SeedSequence or None, "
            f"got a value of type {type(seed).__name__}"
        )
    value = int(seed)
    if value < 0:
        raise PrivacyParameterError(f"seed must be a non-negative int, got {value}")
    gen = NoiseGenerator(np.random.PCG64DXSM(np.random.SeedSequence(value)))
    return gen, SeedInfo(user_seeded=True, seed=value, bit_generator=_BIT_GENERATOR)
