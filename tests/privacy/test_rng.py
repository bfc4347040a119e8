"""The generators of :mod:`dpopt.privacy.rng`: reproducible with a user seed, secure by default."""

from __future__ import annotations

import numpy as np
import pytest

from dpopt.errors import PrivacyParameterError
from dpopt.privacy import SeedInfo, make_rng

# ---------------------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------------------


def test_make_rng_user_seed_is_reproducible() -> None:
    g1, info = make_rng(42)
    g2, _ = make_rng(np.int64(42))
    assert np.array_equal(g1.normal(size=8), g2.normal(size=8))
    assert info == SeedInfo(user_seeded=True, seed=42, bit_generator="PCG64DXSM")
    assert info.to_dict() == {
        "user_seeded": True,
        "seed": 42,
        "bit_generator": "PCG64DXSM",
        "spawn_key": [],
    }
    assert type(g1.bit_generator).__name__ == "PCG64DXSM"
    assert "NOT secure" in info.summary()
    assert not np.array_equal(make_rng(43)[0].normal(size=8), make_rng(42)[0].normal(size=8))


def test_make_rng_secure_default() -> None:
    g1, i1 = make_rng()
    g2, i2 = make_rng(None)
    assert not np.array_equal(g1.normal(size=8), g2.normal(size=8))
    for info in (i1, i2):
        assert info.user_seeded is False and info.seed is None
        assert info.bit_generator == "PCG64DXSM"
        assert "secure" in info.summary()
    assert type(g1.bit_generator).__name__ == "PCG64DXSM"


def test_make_rng_seed_sequence() -> None:
    child = np.random.SeedSequence(7).spawn(2)[1]
    g, info = make_rng(child)
    assert info.user_seeded is True and info.seed == 7 and info.spawn_key == (1,)
    again = np.random.SeedSequence(info.seed, spawn_key=info.spawn_key)
    assert np.array_equal(g.normal(size=5), make_rng(again)[0].normal(size=5))


@pytest.mark.parametrize(
    "seed",
    [True, False, -1, 1.0, 1.5, "3", np.random.default_rng(0), np.random.PCG64(0), np.bool_(True)],
    ids=lambda seed: type(seed).__name__ if isinstance(seed, (np.random.Generator, np.random.PCG64)) else repr(seed),
)
def test_make_rng_refusals(seed: object) -> None:
    with pytest.raises(PrivacyParameterError, match="seed"):
        make_rng(seed)  # type: ignore[arg-type]
