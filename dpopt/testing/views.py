"""What an analyst observes of a run besides its noisy output, for neighbour tests.

The whole program is the mechanism (docs/design.md, "Privacy rules"): on neighbouring datasets a
private run must release on both sides, with the same public record (every field of the release
but θ and ``noisy_…`` parameters) and the same charges.  :func:`observe` reads that view and
:func:`assert_same_view` compares it on a pair; :func:`assert_no_private_bytes` checks that no
number of the data appears in what a release prints, serialises or pickles.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from dpopt.mechanisms.release import Release
from dpopt.privacy.ledger import Ledger

__all__ = ["Run", "assert_no_private_bytes", "assert_same_view", "observe"]

#: ``run(data, ledger) -> Release``: one run of a mechanism on ``data``, charged to ``ledger``
Run = Callable[[Any, Ledger], Release]


def _charges(ledger: Ledger) -> tuple[tuple[float, float, bool], ...]:
    return tuple((c.epsilon, c.delta, c.released) for c in ledger.charges)


def observe(run: Run, data: Any) -> tuple[tuple[Any, ...], Release | None]:
    """What an analyst sees besides the noisy output: outcome kind, public record, charges."""
    ledger = Ledger()
    try:
        release = run(data, ledger)
    except Exception as exc:  # noqa: BLE001 — the error type is part of the observation
        return ("error", type(exc).__name__, _charges(ledger)), None
    public = release.to_dict()
    public.pop("theta")  # the noisy outputs: θ and any ``noisy_…`` parameter (Release docstring)
    public["parameters"] = {k: v for k, v in public["parameters"].items() if not k.startswith("noisy_")}
    return ("released", json.dumps(public, sort_keys=True), _charges(ledger)), release


def assert_same_view(run: Run, d0: Any, d1: Any) -> None:
    """Both runs release, with the same public record and charges, and keep no diagnostics."""
    v0, r0 = observe(run, d0)
    v1, r1 = observe(run, d1)
    assert v0 == v1
    assert v0[0] == "released", v0  # private runs release on both sides
    assert r0 is not None and r1 is not None and r0.diagnostics is None and r1.diagnostics is None


def assert_no_private_bytes(release: Release, secret: np.ndarray) -> None:
    """None of ``secret``'s numbers in the release's repr, summary, JSON or pickle."""
    texts = (repr(release), release.summary(), release.to_json())
    blob = pickle.dumps(release)
    for v in np.asarray(secret, dtype=np.float64).ravel():
        if v == 0.0 or float(v).is_integer():
            continue  # 0 and integers appear in any record; they are not what leaks
        assert np.float64(v).tobytes() not in blob
        for text in texts:
            assert repr(float(v)) not in text and f"{v:.6g}" not in text
