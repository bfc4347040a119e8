"""What a mechanism returns: :class:`Release`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.privacy.rng import SeedInfo


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


@dataclass(frozen=True)
class Release:
    """Private parameters with their guarantee and the record behind them.

    Attributes
    ----------
    theta : ndarray
        The released parameters.
    epsilon, delta : float
        The privacy guarantee under the replace-one neighbouring relation.
    mechanism : str
        Mechanism name and the theorem it relies on.
    parameters : dict
        Public settings of the run: noise scales, budget split, ζ, tolerance, ...
    oracle_calls : tuple of OracleResult
        Every solver call behind the release, with dpopt's re-check.  Their objective
        bounds, residuals and times are functions of the data, so ``summary()`` and
        ``to_json()`` show only the data-independent part unless ``diagnostics=True``.
    seed : SeedInfo
        How the noise was seeded (a user seed is reproducible but not secure).
    private : bool
        False only for ``on_uncertified="release-unsafe"`` releases whose oracle was
        not certified: then **no privacy guarantee holds**.
    problem : str
        A summary of the problem (no data values).
    """

    theta: np.ndarray
    epsilon: float
    delta: float
    mechanism: str
    parameters: dict[str, Any]
    oracle_calls: tuple[OracleResult, ...]
    seed: SeedInfo
    private: bool = True
    problem: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def guarantee(self) -> str:
        """The privacy statement in words."""
        if not self.private:
            return "NONE: an oracle call was not certified; this output carries no privacy guarantee"
        kind = f"({self.epsilon:g}, {self.delta:g})-DP" if self.delta > 0 else f"{self.epsilon:g}-DP (pure)"
        return f"{kind}, replace-one neighbouring datasets"

    def summary(self, *, diagnostics: bool = False) -> str:
        """A readable multi-line summary.

        Parameters
        ----------
        diagnostics : bool
            Also show the solver's data-dependent numbers (objective bounds, residuals,
            times).  They are for the data curator: **not covered by the privacy
            guarantee**, so never publish them with the release.
        """
        lines = [
            f"Release from {self.mechanism}",
            f"  problem:   {self.problem}",
            f"  guarantee: {self.guarantee}",
            f"  seed:      {'user seed ' + str(self.seed.seed) + ' (reproducible, not secure)' if self.seed.user_seeded else 'secure (OS entropy)'}",
            f"  theta:     {np.array2string(self.theta, precision=4, threshold=12)}",
        ]
        for k, v in self.parameters.items():
            if isinstance(v, float):
                lines.append(f"  {k}: {v:.6g}")
            elif isinstance(v, (int, str, bool)):
                lines.append(f"  {k}: {v}")
        for i, call in enumerate(self.oracle_calls):
            lines.append(f"  oracle[{i}]: {call.summary() if diagnostics else call.public_summary()}")
        if diagnostics:
            lines.append("  WARNING: solver diagnostics above depend on the data and are not private")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def to_dict(self, *, diagnostics: bool = False) -> dict[str, Any]:
        """JSON-ready dictionary; data-dependent solver diagnostics only on request."""
        return _jsonable({
            "theta": self.theta,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "private": self.private,
            "guarantee": self.guarantee,
            "mechanism": self.mechanism,
            "parameters": self.parameters,
            "problem": self.problem,
            "seed": self.seed.to_dict(),
            "oracle_calls": [c.to_dict() if diagnostics else c.public_dict() for c in self.oracle_calls],
            "diagnostics_included": diagnostics,
            "notes": list(self.notes),
        })

    def to_json(self, *, diagnostics: bool = False, **kwargs: Any) -> str:
        """The release as a JSON string (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(diagnostics=diagnostics), **kwargs)
