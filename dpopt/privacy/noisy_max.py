"""Budget of T adaptive noisy-max selections (report-noisy-max and the exponential mechanism).

Private Frank–Wolfe over a polytope (Talwar–Thakurta–Zhang 2014, Alg. 4)
selects one vertex per step with a noisy argmin of the scores
``⟨s, ∇L(θ_t; D)⟩``.  Every score has sensitivity Δ (from declared bounds), and
the scores of different vertices may move in *opposite* directions between
neighbours (they are not monotone, unlike counting queries).  The scores are
rounded onto a public grid γ and the selection is calibrated to the grid-adjusted
sensitivity Δ' = (⌊Δ/γ⌋ + B)·γ ≤ Δ + B·γ (B blocks; :mod:`dpopt.privacy.exact_selection`,
which also samples both rules exactly and proves their guarantees).  Per step:

``"laplace"`` — report-noisy-min with i.i.d. discrete Laplace noise of scale
    2Δ'/ε₀ on the integer scores, random tie-breaking: ε₀-DP (the threshold a
    candidate must beat moves by up to 2Δ' for non-monotone scores; Dwork & Roth
    2014, Claim 3.9 is the monotone, continuous case).  Pure ε₀-DP implies
    (ε₀²/2)-zCDP (Bun & Steinke 2016, Prop. 3.3).
``"gumbel"`` — the exponential mechanism with weights ``exp(−ε₀·score/(2Δ'))``
    (McSherry & Talwar 2007), sampled exactly by rejection with exact
    Bernoulli(exp(−x)) trials (the name recalls the Gumbel-max form it had).
    It is ε₀-DP and ε₀-bounded-range, hence (ε₀²/8)-zCDP (Durfee & Rogers
    2019; Cesar & Rogers 2021, Lemma 3.2) — four times less zCDP than pure DP.

Default (``"auto"``, :func:`resolve_selection`): Gumbel when δ > 0 — with zCDP
composition its ε₀ is twice Laplace's (ε₀ ∝ 1/√(factor)), and zCDP beats basic
composition once T ≳ 30 at ε = 1, δ = 1e-6; Laplace when δ = 0, where only basic
composition applies and both give ε₀ = ε/T.

Composition over T steps: the largest ε₀ allowed by either basic composition
(``T ε₀ ≤ ε``, the only option for δ = 0) or zCDP composition
(``ρ = T·ρ₀``) with the conversion ρ-zCDP ⇒ ``(ρ + 2√(ρ log(1/δ)), δ)``-DP
(Bun & Steinke 2016, Prop. 1.3).  For pure-DP steps the zCDP route is never
worse than the advanced composition theorem of Dwork, Rothblum and Vadhan
(2010) that the paper cites, since ``ε₀²/2 ≤ ε₀(e^{ε₀} − 1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import Budget, budget_pair

__all__ = ["NoisyMaxBudget", "Selection", "float_up", "noisy_max_budget", "resolve_selection"]

Selection = Literal["laplace", "gumbel"]
#: zCDP of one ε₀ step, as a multiple of ε₀²: pure DP (Laplace) and bounded range (Gumbel).
_ZCDP_FACTOR = {"laplace": 0.5, "gumbel": 0.125}


def resolve_selection(selection: str, delta: float) -> Selection:
    """The selection rule for a requested one: ``"auto"`` is Gumbel when δ > 0, Laplace when δ = 0.

    An explicit ``"laplace"`` or ``"gumbel"`` is returned unchanged.

    Raises
    ------
    PrivacyParameterError
        For an unknown rule.
    """
    if selection == "auto":
        return "gumbel" if delta > 0 else "laplace"
    if selection not in _ZCDP_FACTOR:
        raise PrivacyParameterError(f"unknown selection {selection!r}; use 'auto', 'laplace' or 'gumbel'")
    return selection  # type: ignore[return-value]


@dataclass(frozen=True)
class NoisyMaxBudget:
    """The per-step budget of T noisy-max selections.

    Attributes
    ----------
    step_epsilon : float
        ε₀ of every selection.
    composition : str
        ``"basic"`` or ``"zcdp"``: the composition that allowed the larger ε₀.
    """

    step_epsilon: float
    composition: str

    def scale(self, sensitivity: float) -> float:
        """Noise scale ``2Δ/ε₀`` (Laplace b or the exponential mechanism's β) for score
        sensitivity Δ, rounded up to a float (never below the exact quotient)."""
        return float_up(Fraction(2) * Fraction(sensitivity) / Fraction(self.step_epsilon))


def float_up(value: Fraction) -> float:
    """The smallest float ≥ ``value`` (a rational)."""
    out = float(value)
    return math.nextafter(out, math.inf) if Fraction(out) < value else out


def noisy_max_budget(epsilon: float | Budget, delta: float | None, steps: int, selection: str) -> NoisyMaxBudget:
    """The largest per-step ε₀ whose T-fold composition is (ε, δ)-DP.

    Parameters
    ----------
    epsilon, delta : float, or a Budget and None
        Target guarantee (δ = 0: basic composition, pure ε-DP); a checked
        :class:`~dpopt.privacy.calibration.Budget` (a mechanism's) is not checked again.
    steps : int
        Number of selections T ≥ 1.
    selection : {"laplace", "gumbel"}
        The selection rule (see the module notes).

    Returns
    -------
    NoisyMaxBudget
    """
    eps, dlt = budget_pair(epsilon, delta)
    if selection not in _ZCDP_FACTOR:
        raise PrivacyParameterError(f"unknown selection {selection!r}; use 'laplace' or 'gumbel'")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise PrivacyParameterError(f"steps must be an integer >= 1, got {steps!r}")
    basic = NoisyMaxBudget(eps / steps, "basic")
    if dlt == 0.0:
        return basic
    log_inv = math.log(1.0 / dlt)
    rho = (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2
    zcdp = NoisyMaxBudget(math.sqrt(rho / (steps * _ZCDP_FACTOR[selection])), "zcdp")
    return zcdp if zcdp.step_epsilon > basic.step_epsilon else basic
