"""Where the bits of a grid release come from.

An unseeded run (``make_rng()``) must draw every exact noise value from the operating
system's CSPRNG and never from the run's PCG64DXSM stream (a fast statistical generator
whose state could in principle be recovered); a seeded run must be reproducible bit for bit
and say that it is not secure.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from dpopt.privacy.exact import sampler_for
from dpopt.privacy.grid import GridNoise, gaussian_on_grid, laplace_on_grid
from dpopt.privacy.rng import make_rng
from dpopt.testing.entropy import count_os_entropy, refuse_seeded_generators, route_os_entropy

CENTRE = np.array([0.1, -2.5, 3.75, 1e3, 0.0])
LAWS = [gaussian_on_grid(1.0, 1.0, 1e-6, CENTRE.size), laplace_on_grid(1.0, 1.0, CENTRE.size)]


def _on_grid(values: np.ndarray, gamma: float) -> bool:
    units = values / gamma
    return bool(np.all(units == np.rint(units)))


@pytest.mark.parametrize("noise", LAWS, ids=["gaussian", "laplace"])
def test_an_unseeded_release_reads_the_os_and_never_the_pcg64_stream(monkeypatch: pytest.MonkeyPatch,
                                                                     noise: GridNoise) -> None:
    rng, info = make_rng()
    assert not info.user_seeded and getattr(rng, "secure", False)
    assert sampler_for(rng).secure
    before = copy.deepcopy(rng.bit_generator.state)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a seeded or PCG64 stream was used for a secure release")

    for name in ("integers", "random", "bytes", "normal", "laplace", "standard_normal", "choice"):
        monkeypatch.setattr(rng, name, refuse)  # the run's generator is never asked for a draw
    # and no seeded generator is made on the side
    refuse_seeded_generators(monkeypatch, ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "default_rng"),
                             "a seeded or PCG64 stream was used for a secure release")
    read = count_os_entropy(monkeypatch)
    released = noise.release(CENTRE, rng)
    assert _on_grid(released, noise.gamma)
    assert read["bytes"] > 0
    assert rng.bit_generator.state == before  # the PCG64DXSM state did not move


def test_an_unseeded_release_is_a_function_of_the_os_bytes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the OS entropy replaced by a fixed stream, two secure generators of different
    (secret) seeds give the same release: nothing of their PCG64 streams enters it."""
    noise = LAWS[0]

    def release(stream_seed: int) -> bytes:
        rng, _ = make_rng()  # its own 128 bits of OS entropy, drawn before the patch
        route_os_entropy(monkeypatch, random.Random(stream_seed).randbytes)
        try:
            return noise.release(CENTRE, rng).tobytes()
        finally:
            monkeypatch.undo()

    assert release(1) == release(1)
    assert release(1) != release(2)


def test_secure_releases_differ_from_run_to_run() -> None:
    noise = LAWS[0]
    first = noise.release(CENTRE, make_rng()[0])
    second = noise.release(CENTRE, make_rng()[0])
    # five coordinates of σ/γ ≈ 5,000 grid steps each coincide with probability < 1e-18
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("noise", LAWS, ids=["gaussian", "laplace"])
def test_a_seeded_release_is_reproducible_bit_for_bit_and_reads_no_os_entropy(monkeypatch: pytest.MonkeyPatch,
                                                                              noise: GridNoise) -> None:
    def refuse(n: int) -> bytes:
        raise AssertionError("a seeded release read the OS entropy")

    route_os_entropy(monkeypatch, refuse)
    first = noise.release(CENTRE, make_rng(7)[0])
    second = noise.release(CENTRE, make_rng(7)[0])
    assert first.tobytes() == second.tobytes()
    assert _on_grid(first, noise.gamma)
    assert not np.array_equal(first, noise.release(CENTRE, make_rng(8)[0]))
    rng = make_rng(7)[0]
    noise.release(CENTRE, rng)
    assert rng.bit_generator.state != make_rng(7)[0].bit_generator.state  # it consumed the seeded stream


def test_seed_info_says_a_seeded_run_is_not_secure() -> None:
    rng, info = make_rng(7)
    assert info.user_seeded and info.seed == 7
    assert "NOT secure" in info.summary()
    assert not getattr(rng, "secure", False) and not sampler_for(rng).secure
    rng_seq, info_seq = make_rng(np.random.SeedSequence(3))
    assert info_seq.user_seeded and not sampler_for(rng_seq).secure
    secure_rng, secure_info = make_rng()
    assert not secure_info.user_seeded and secure_info.seed is None
    assert "(secure)" in secure_info.summary() and "NOT" not in secure_info.summary()
    assert sampler_for(secure_rng).secure
    assert not sampler_for(np.random.default_rng(0)).secure  # a plain generator is never taken as secure
