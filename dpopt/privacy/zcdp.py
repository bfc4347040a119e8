"""Zero-concentrated DP of discrete Gaussian noise, and its conversion to (ε, δ)-DP.

Adding independent discrete Gaussian noise N_ℤ(0, σ²) to each coordinate of an
integer-valued query whose values on neighbours differ by a vector μ ∈ ℤ^d satisfies
ρ-zCDP with ρ = ‖μ‖₂²/(2σ²): the Rényi divergence of two discrete Gaussians with integer
centres is at most that of the continuous ones ([CKS20], Prop. 5), and Rényi divergences
of independent coordinates add.  Composition adds ρ (Bun & Steinke 2016, Lemma 2.3).

:func:`zcdp_delta` converts ρ-zCDP to (ε, δ)-DP with the conversion of [CKS20]
(Prop. 12 / Cor. 13 of the arXiv version): for every α > 1

    δ ≤ exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α,

minimised over α numerically; any α gives a valid bound, so an imprecise minimiser only
makes δ larger.  :func:`zcdp_rho` inverts it: the largest ρ whose δ(ε) ≤ δ.
"""

from __future__ import annotations

import functools
import math

from dpopt.privacy.calibration import Budget, budget_pair

__all__ = ["zcdp_delta", "zcdp_rho"]

_ITERATIONS = 200


def _log_delta(rho: float, epsilon: float, alpha: float) -> float:
    """log of the [CKS20] bound at order α."""
    return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The δ at which ρ-zCDP implies (ε, δ)-DP ([CKS20], conversion from concentrated DP).

    Parameters
    ----------
    rho : float
        ρ ≥ 0.
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    float
        δ in [0, 1].
    """
    if rho <= 0.0:
        return 0.0
    lo, hi = 1.0 + 1e-9, max((epsilon + 1.0) / (2.0 * rho) + 2.0, 2.0)
    for _ in range(_ITERATIONS):  # the bound's log is convex in α: bisect on its derivative
        alpha = 0.5 * (lo + hi)
        slope = (2.0 * alpha - 1.0) * rho - epsilon + math.log1p(-1.0 / alpha)
        if slope < 0.0:
            lo = alpha
        else:
            hi = alpha
    alpha = 0.5 * (lo + hi)
    return min(1.0, math.exp(_log_delta(rho, epsilon, alpha)))


@functools.lru_cache(maxsize=512)
def _rho(epsilon: float, delta: float) -> float:
    lo, hi = 0.0, epsilon + 1.0
    for _ in range(_ITERATIONS):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def zcdp_rho(epsilon: float | Budget, delta: float | None = None) -> float:
    """The largest ρ such that ρ-zCDP implies (ε, δ)-DP by :func:`zcdp_delta` (bisection from below).

    ``epsilon`` may be a :class:`~dpopt.privacy.calibration.Budget` (validated where it was
    built: a mechanism's settings), then without ``delta``.

    Raises
    ------
    PrivacyParameterError
        For ε ≤ 0 or δ outside (0, 1).
    """
    eps, dlt = budget_pair(epsilon, delta, allow_zero_delta=False)
    return _rho(eps, dlt)
