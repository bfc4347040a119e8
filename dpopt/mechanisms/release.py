"""What a mechanism returns: :class:`Release`, its public :class:`OracleCall` records and the
opt-in, non-private :class:`Diagnostics`.

The whole program is the mechanism (docs/design.md, "Privacy rules"): a :class:`Release` holds
only the noisy output, the guarantee, the mechanism's public parameters (functions of
declared constants, ε, δ and n) and the public facts of each oracle call (which backend
and version, in which role, under which acceptance rule).  Everything a solver computed
from the data without noise — solutions (for output perturbation the exact un-noised
optimum), objective bounds, gaps, losses, residuals, times, re-checks, which of two
solvers answered — lives in a separate :class:`Diagnostics` object.  It exists only when
the caller asks for it (``run(..., keep_diagnostics=True)``), says NOT PRIVATE in its
repr, and is never part of the release's repr, pickle, :meth:`Release.to_dict` or JSON.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.backends.certificates import Check
from dpopt.backends.result import OracleResult
from dpopt.privacy.rng import SeedInfo


def _diagnostics_lines(parameters: dict[str, Any]) -> list[str]:
    """The noisy diagnostic counts of a release (:mod:`dpopt.mechanisms.diagnostics`), one line each."""
    counts, info = parameters.get("noisy_diagnostic_counts"), parameters.get("diagnostics")
    if not counts or not isinstance(info, dict):
        return []
    head = (f"  diagnostics: noisy counts ({100 * float(info['share']):.3g} % of ε, discrete Laplace of scale "
            f"{float(info['noise_scale']):g}):")
    return [head, *(f"    {name}: {value:g}" for name, value in counts.items())]


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Check):  # an oracle re-check kept in Diagnostics.details
        return v.to_dict()
    if isinstance(v, enum.Enum):  # OracleStatus, Limit: their string values
        return _jsonable(v.value)
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
class OracleCall:
    """The public facts of one oracle (solver) call behind a release.

    Attributes
    ----------
    backend, backend_version : str
        Who was asked (chosen before the data was touched).
    role : str
        ``"oracle"`` (its answer is the mechanism's argmin), ``"accelerator"`` (a convex
        solver whose answer is used only when dpopt proves it; otherwise a fallback with
        an a-priori bound is), ``"step solver"``.
    acceptance : str
        The rule an answer had to meet to be used (public: set by the mechanism).
    certified : bool
        True in every private release (an answer that did not meet ``acceptance`` is
        never released as private).  False only in a ``release-unsafe`` release.
    """

    backend: str
    backend_version: str
    role: str
    acceptance: str
    certified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "backend_version": self.backend_version, "role": self.role,
                "acceptance": self.acceptance, "certified": self.certified}

    def summary(self) -> str:
        verdict = "accepted" if self.certified else "NOT accepted"
        return f"{self.backend} {self.backend_version} ({self.role}): {self.acceptance}; {verdict}"


@dataclass(frozen=True, eq=False)
class Diagnostics:
    """Solver diagnostics computed from the data WITHOUT noise: **not private**.

    Kept only on request (``run(..., keep_diagnostics=True)``), for the data curator's
    eyes: solutions (the un-noised optimum), objective bounds, gaps, losses, residuals,
    times and dpopt's re-checks of every solver call, plus mechanism-specific details.
    Never publish any of it with a release.

    Attributes
    ----------
    oracle_results : tuple of OracleResult
        Every solver answer, with dpopt's re-check.
    details : dict
        Other data-dependent facts (which of accelerator and fallback answered, counts).
    """

    oracle_results: tuple[OracleResult, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        lines = ["Diagnostics — NOT PRIVATE: computed from the data without noise; never publish"]
        lines += [f"  oracle[{i}]: {r.summary()}" for i, r in enumerate(self.oracle_results)]
        lines += [f"  {k}: {v}" for k, v in self.details.items()]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (solutions included): **not private**."""
        return _jsonable({
            "warning": "NOT PRIVATE: computed from the data without noise",
            "oracle_results": [r.to_dict(include_solution=True) for r in self.oracle_results],
            "details": self.details,
        })

    def __repr__(self) -> str:
        return (f"Diagnostics(NOT PRIVATE, {len(self.oracle_results)} solver result(s); "
                "call .summary() to see them — never publish them)")


@dataclass(frozen=True)
class Release:
    """Private parameters with their guarantee and the public record behind them.

    Attributes
    ----------
    theta : ndarray
        The released parameters.
    epsilon, delta : float
        The privacy guarantee under the replace-one neighbouring relation.
    mechanism : str
        Mechanism name and the theorem it relies on.
    parameters : dict
        Public settings of the run: noise scales, budget split, ζ, tolerance, ... (functions
        of declared constants, ε, δ and n only).  One vocabulary across mechanisms:

        * ``noise`` — the noise law ("gaussian", "laplace", "l2-laplace", "gumbel", ...) and
          ``noise_scale`` — its scale as the privacy proof calibrates it (Gaussian σ,
          Laplace b) on the quantity the mechanism's docstring names; variants carry a
          suffix (``noise_scale_paper``, ``noise_scale_accountant``);
        * ``steps`` — the number of iterations T of an iterative mechanism;
        * ``lipschitz_l2`` / ``lipschitz_l1`` — declared Lipschitz constants by norm;
          ``sensitivity_l2`` — the ℓ2 sensitivity the noise covers;
        * ``accountant``, ``calibration``, ``neighbouring`` (always "replace-one"), and
          ``solver_rule`` when ``solver="auto"`` chose the oracle;
        * ``noisy_…`` — the one exception to "functions of public facts": a further noisy output
          covered by the guarantee like θ (PrivateSelection's ``noisy_selected_score``).  Such a
          key differs between neighbouring datasets, as θ does; every other key is identical.
    oracle_calls : tuple of OracleCall
        The public record of every solver call behind the release.
    seed : SeedInfo
        How the noise was seeded (a user seed is reproducible but not secure).
    private : bool
        False only for ``on_uncertified="release-unsafe"`` releases whose oracle was
        not certified, or runs stopped by a time limit: then **no privacy guarantee holds**.
    problem : str
        A summary of the problem (shapes and declarations, no data values).
    notes : tuple of str
        Public remarks (conditions of the guarantee).
    feature_names : tuple of str
        The public names of θ's coordinates (from the dataset's schema or declared names;
        empty when there are none), in ``to_dict()`` when non-empty.
    diagnostics : Diagnostics or None
        Only with ``keep_diagnostics=True``: **not private**.  Excluded from the repr,
        equality, pickling, :meth:`to_dict` and :meth:`to_json`.
    """

    theta: np.ndarray
    epsilon: float
    delta: float
    mechanism: str
    parameters: dict[str, Any]
    oracle_calls: tuple[OracleCall, ...]
    seed: SeedInfo
    private: bool = True
    problem: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    feature_names: tuple[str, ...] = ()
    diagnostics: Diagnostics | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["diagnostics"] = None  # never pickled: not private
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    @property
    def guarantee(self) -> str:
        """The privacy statement in words."""
        if not self.private:
            return "NONE: an oracle call was not certified; this output carries no privacy guarantee"
        kind = f"({self.epsilon:g}, {self.delta:g})-DP" if self.delta > 0 else f"{self.epsilon:g}-DP (pure)"
        return f"{kind}, replace-one neighbouring datasets"

    def summary(self) -> str:
        """A readable multi-line summary (public facts only)."""
        lines = [
            f"Release from {self.mechanism}",
            f"  problem:   {self.problem}",
            f"  guarantee: {self.guarantee}",
            f"  seed:      {self.seed.summary()}",
            f"  theta:     {np.array2string(self.theta, precision=4, threshold=12)}",
        ]
        for k, v in self.parameters.items():
            if isinstance(v, float):
                lines.append(f"  {k}: {v:.6g}")
            elif isinstance(v, (int, str, bool)):
                lines.append(f"  {k}: {v}")
        lines.extend(_diagnostics_lines(self.parameters))
        lines.extend(f"  oracle[{i}]: {call.summary()}" for i, call in enumerate(self.oracle_calls))
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of the public record (never the diagnostics)."""
        names = {"feature_names": list(self.feature_names)} if self.feature_names else {}
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
            "oracle_calls": [c.to_dict() for c in self.oracle_calls],
            "notes": list(self.notes),
            **names,
        })

    def to_json(self, **kwargs: Any) -> str:
        """The release as a JSON string (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), **kwargs)
