"""dpopt's own re-checks of an oracle answer: one frozen dataclass per problem family.

A backend's claim "optimal" is never the verdict (``docs/design.md``, *Oracle contract and
certification*): dpopt re-checks every answer itself and records what it checked in
:attr:`OracleResult.recheck <dpopt.backends.result.OracleResult.recheck>`.  The record is
typed, one class per problem family:

:class:`ConvexCheck`
    The gradient-mapping certificate of a strongly convex (perturbed) problem
    (:func:`dpopt.numerics.certificates.certify`): a proven bound on ‖x⁺ − θ*‖₂ against the
    tolerance the mechanism's analysis allows.  Set by the convex mechanisms.
:class:`GridCheck`
    The discrete mechanisms' verdict (:mod:`dpopt.mechanisms.discrete_base`): the point lies
    on the grid, and is certified optimal or proven within the declared α
    (``proven_gap``).  Its subclasses carry a MIP backend's own re-check of the point:
:class:`DiscreteCheck`
    The pyomo MIP family and ``highs-grouped`` (:func:`dpopt.backends.pyomo_mip.point_recheck`):
    the numpy objective at w = τk against the solver's value, and the compiled program's
    exact integer loss against ``ZeroOneLoss.values``.
:class:`CpSatCheck`
    CP-SAT (:mod:`dpopt.backends.cpsat`): the exact objective against the one with integer
    margins, and the objective rounding (Q, E, 2E/Q) with the two phases' counts.
:class:`VerifierCheck`
    An independent backend's cross-check of an accepted answer (:mod:`dpopt.backends.verify`),
    holding the verifier's own check of its point (if any).

Every record is a computation on the data without noise: a **diagnostic**, never part of a
release.  :meth:`Check.to_dict` gives the JSON form (the keys of the fields that are set;
nan and ±inf become None; a nested check is merged in), the same keys earlier versions wrote
as plain dictionaries.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dpopt.numerics.prox import Certificate

__all__ = ["Check", "ConvexCheck", "CpSatCheck", "DiscreteCheck", "GridCheck", "VerifierCheck", "json_value"]


def json_value(value: Any) -> Any:
    """``value`` as JSON can hold it: numpy scalars to Python, nan/±inf to None, enums to their value."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, kw_only=True)
class Check:
    """A re-check dpopt made of an oracle answer (base of every family's record)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields that are set (not None), nan/inf as None; a nested check merged in."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Check):
                out.update(value.to_dict())
            else:
                out[f.name] = json_value(value)
        return out

    def summary_parts(self) -> list[str]:
        """``name=value`` items for :meth:`OracleResult.summary` (none by default)."""
        return []


@dataclass(frozen=True, kw_only=True)
class ConvexCheck(Check):
    """The gradient-mapping certificate of a convex mechanism's solve.

    Attributes
    ----------
    distance_bound : float or None
        Proven bound on ‖x⁺ − θ*‖₂, θ* the exact minimizer (None: no point to certify).
    gradient_mapping_norm : float or None
        ‖G‖ at the solver's point.
    strong_convexity, smoothness : float or None
        The μ and β the bound used.
    tolerance : float
        The distance the mechanism's analysis allows.
    reason : str or None
        Why nothing was certified, when there was no point (e.g. ``"no solution"``).
    """

    distance_bound: float | None = None
    gradient_mapping_norm: float | None = None
    strong_convexity: float | None = None
    smoothness: float | None = None
    tolerance: float
    reason: str | None = None

    @classmethod
    def from_certificate(cls, cert: Certificate, tolerance: float) -> ConvexCheck:
        """The record of :func:`dpopt.numerics.certificates.certify`'s certificate against ``tolerance``."""
        return cls(distance_bound=float(cert.distance_bound), gradient_mapping_norm=float(cert.gradient_mapping_norm),
                   strong_convexity=float(cert.strong_convexity), smoothness=float(cert.smoothness),
                   tolerance=float(tolerance))

    @property
    def within_tolerance(self) -> bool:
        """Whether the proven distance is at most the tolerance (False without a point)."""
        return self.distance_bound is not None and bool(self.distance_bound <= self.tolerance)

    def summary_parts(self) -> list[str]:
        if self.distance_bound is None:
            return []
        return [f"distance_bound={self.distance_bound:.3g}", f"tolerance={self.tolerance:.3g}"]


@dataclass(frozen=True, kw_only=True)
class GridCheck(Check):
    """A discrete answer's re-check: on the grid, and the mechanism's verdict.

    Attributes
    ----------
    on_grid : bool
        w is a point of the declared grid (``IntegerGrid.contains``).
    proven_gap : float or None
        f(w) − the solver's proven lower bound (set by the mechanism; nan when unknown).
    accepted : bool or None
        The mechanism's verdict: certified optimal, or proven within its declared α
        (None until a mechanism has judged the answer).
    """

    on_grid: bool
    proven_gap: float | None = None
    accepted: bool | None = None


@dataclass(frozen=True, kw_only=True)
class DiscreteCheck(GridCheck):
    """A pyomo MIP backend's (or ``highs-grouped``'s) re-check of w = τk.

    Attributes
    ----------
    objective : float
        ``DiscreteProblem.objective(w)`` recomputed in numpy with the same η.
    mismatch : float
        |objective − the solver's primal bound|.
    numpy_loss : float
        ``ZeroOneLoss.value(w)``.
    exact_loss : float
        The compiled program's loss from its exact integer rows (nan off the grid).
    resolution : float
        The smallest objective difference the compiled program can resolve.
    """

    objective: float
    mismatch: float
    numpy_loss: float
    exact_loss: float
    resolution: float

    def point_agrees(self, tolerance: float) -> bool:
        """On the grid and the numpy objective within ``tolerance`` of the solver's value."""
        return bool(self.on_grid and self.mismatch <= tolerance)

    @property
    def loss_disagrees(self) -> bool:
        """On the grid but the compiled loss differs from ``ZeroOneLoss.values`` (a compiler bug)."""
        return bool(self.on_grid and self.numpy_loss != self.exact_loss)


@dataclass(frozen=True, kw_only=True)
class CpSatCheck(GridCheck):
    """CP-SAT's re-check of w = τk and its objective rounding.

    Attributes
    ----------
    objective : float
        ``DiscreteProblem.objective(w)``.
    objective_integer_margins : float
        The exact objective from the program's integer margins.
    objective_agrees : bool
        The two agree within 1e-9 relative.
    objective_scale : int
        Q, the scale of the rounded objective F.
    rounding_error_units : float
        E, with |F(k) − Q f(k)| ≤ E at every grid point.
    rounding_alpha : float
        2E/Q: the approximation of the rounded objective alone.
    phase1_time : float or None
        Seconds of phase 1 (minimize F).
    phase2_solves : int or None
        Exactness solves of phase 2.
    candidates : int or None
        Grid points evaluated exactly.
    """

    objective: float
    objective_integer_margins: float
    objective_agrees: bool
    objective_scale: int
    rounding_error_units: float
    rounding_alpha: float
    phase1_time: float | None = None
    phase2_solves: int | None = None
    candidates: int | None = None


@dataclass(frozen=True, kw_only=True)
class VerifierCheck(Check):
    """An independent backend's cross-check of an accepted discrete answer.

    Attributes
    ----------
    point : Check or None
        The verifier backend's own re-check of the point it found (merged into
        :meth:`to_dict`).
    role : str
        ``"verifier"``.
    threshold : float
        f(ŵ) − tol: no grid point may lie below it.
    lower_bound : float
        The verifier's proven lower bound (nan when it proved none).
    found_better_point : bool
        The verifier returned a grid point below the threshold.
    confirmed : bool
        The verdict.
    """

    point: Check | None = None
    role: str = "verifier"
    threshold: float
    lower_bound: float
    found_better_point: bool
    confirmed: bool
