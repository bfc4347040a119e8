"""Noise calibration: from (ε, δ) and a sensitivity to a noise scale.

Every function here works on *public* quantities only: privacy parameters and
sensitivities computed from declared bounds.  Messages may therefore print them.

Contents
--------
check_epsilon_delta
    Validate a privacy pair (ε, δ).
laplace_scale
    The Laplace mechanism, ``b = Δ₁ / ε`` (Dwork, McSherry, Nissim, Smith 2006).
gaussian_sigma_classical
    Dwork & Roth (2014), Theorem A.1: ``σ = Δ₂ √(2 ln(1.25/δ)) / ε``, for ε < 1 only.
gaussian_delta
    The exact privacy profile δ(ε) of the Gaussian mechanism
    (Balle & Wang, ICML 2018, Theorem 8).
gaussian_sigma_analytic
    The analytic Gaussian mechanism (Balle & Wang 2018, Algorithm 1): the smallest σ
    whose privacy profile is at most δ at ε.
gaussian_sigma
    Dispatch between the analytic (default) and the classical calibration.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpopt.errors import PrivacyParameterError

__all__ = [
    "Budget",
    "budget_pair",
    "check_epsilon_delta",
    "check_sensitivity",
    "gaussian_delta",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "laplace_scale",
]

_SQRT2 = math.sqrt(2.0)
_LOG_HALF = math.log(0.5)
_SQRT2_OVER_PI = math.sqrt(2.0 / math.pi)
_MACHINE_EPS = float(np.finfo(np.float64).eps)
# log δ used in place of log 0 inside the root finder (δ = e^-1e6 is far below any float).
_LOG_ZERO = -1.0e6


def as_real(value: object, name: str, allowed: str) -> float:
    """Convert ``value`` to a Python float, refusing bools, strings and non-reals.

    NaN and infinities are converted, not refused; callers check the range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(
            f"{name} must be a real number {allowed}, got a value of type {type(value).__name__}"
        )
    return float(value)


def check_epsilon_delta(
    epsilon: float, delta: float, *, allow_zero_delta: bool = True
) -> tuple[float, float]:
    """Validate a privacy pair and return it as Python floats.

    Parameters
    ----------
    epsilon : float
        Must be finite and > 0.
    delta : float
        Must lie in [0, 1), or in (0, 1) when ``allow_zero_delta`` is False.
    allow_zero_delta : bool, default True
        Whether pure ε-DP (δ = 0) is acceptable to the caller.

    Returns
    -------
    tuple of float
        ``(epsilon, delta)``.

    Raises
    ------
    PrivacyParameterError
        If either value is not a real number (bools and strings included), is NaN or
        infinite, or lies outside its range.  The message names the parameter and
        the allowed range.
    """
    eps_range = "in (0, inf)"
    eps = as_real(epsilon, "epsilon", eps_range)
    if not (math.isfinite(eps) and eps > 0.0):
        raise PrivacyParameterError(f"epsilon must be finite and > 0 ({eps_range}), got {eps!r}")
    delta_range = "in [0, 1)" if allow_zero_delta else "in (0, 1)"
    dlt = as_real(delta, "delta", delta_range)
    low_ok = dlt >= 0.0 if allow_zero_delta else dlt > 0.0
    if not (math.isfinite(dlt) and low_ok and dlt < 1.0):
        hint = (
            ""
            if allow_zero_delta
            else " (this mechanism needs delta > 0; use δ = 0 only with pure-DP mechanisms such as Laplace)"
        )
        raise PrivacyParameterError(f"delta must be {delta_range}, got {dlt!r}{hint}")
    return eps, dlt


@dataclass(frozen=True)
class Budget:
    """A privacy level (ε, δ) validated once, at the entry that received it.

    The layers after that entry (a plan's calibration, the ledger) take a Budget as valid
    instead of checking the pair again (:func:`budget_pair`).  :meth:`check` validates a pair
    the caller received, with the user-facing message; a layer builds one directly from values
    it has validated itself (a mechanism from its settings check,
    :class:`~dpopt.mechanisms.base.Mechanism`) or derived from a Budget (a share of it).  Either
    way a Budget never holds an invalid pair: its construction keeps the invariant (floats,
    0 < ε < ∞, 0 ≤ δ < 1), so a ledger that takes one unchecked cannot record NaN or a negative ε.

    Attributes
    ----------
    epsilon : float
        ε > 0, finite.
    delta : float
        δ ∈ [0, 1).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        # the invariant the ledger relies on, whoever built it (not the user-facing check: that is
        # the entry's, with its message); a Budget never holds a pair a charge could not take
        eps, dlt = self.epsilon, self.delta
        if not (isinstance(eps, float) and isinstance(dlt, float) and 0.0 < eps < math.inf and 0.0 <= dlt < 1.0):
            raise PrivacyParameterError(f"a privacy level needs finite ε > 0 and δ in [0, 1) as floats, "
                                        f"got ({eps!r}, {dlt!r})")

    @classmethod
    def check(cls, epsilon: float, delta: float, *, allow_zero_delta: bool = True) -> Budget:
        """The pair validated by :func:`check_epsilon_delta`, as a Budget."""
        return cls(*check_epsilon_delta(epsilon, delta, allow_zero_delta=allow_zero_delta))


def budget_pair(epsilon: float | Budget, delta: float | None = None, *,
                allow_zero_delta: bool = True) -> tuple[float, float]:
    """(ε, δ) as Python floats: a :class:`Budget`'s own (validated where it was built), else the
    pair validated by :func:`check_epsilon_delta`.

    Raises
    ------
    PrivacyParameterError
        For an invalid pair, or a Budget with δ = 0 where ``allow_zero_delta`` is False.
    """
    if not isinstance(epsilon, Budget):
        return check_epsilon_delta(epsilon, delta, allow_zero_delta=allow_zero_delta)  # type: ignore[arg-type]
    if delta is not None:
        raise TypeError("give a Budget or the pair (epsilon, delta), not both")
    if not allow_zero_delta and epsilon.delta == 0.0:
        raise PrivacyParameterError("delta must be in (0, 1), got 0.0 (this mechanism needs delta > 0; "
                                    "use δ = 0 only with pure-DP mechanisms such as Laplace)")
    return epsilon.epsilon, epsilon.delta


def check_sensitivity(sensitivity: float, name: str = "sensitivity") -> float:
    """Validate a sensitivity (finite and ≥ 0) and return it as a Python float.

    Raises
    ------
    PrivacyParameterError
        If the value is not a real number, is NaN, infinite or negative.
    """
    allowed = "in [0, inf)"
    value = as_real(sensitivity, name, allowed)
    if not (math.isfinite(value) and value >= 0.0):
        raise PrivacyParameterError(
            f"{name} must be finite and >= 0 ({allowed}), got {value!r}; "
            "compute it from the declared data bounds"
        )
    return value


def laplace_scale(sensitivity_l1: float, epsilon: float) -> float:
    """Scale of the Laplace mechanism for ε-DP: ``b = Δ₁ / ε``.

    Adding i.i.d. Laplace(0, b) noise to every coordinate of a function with ℓ1
    sensitivity Δ₁ is ε-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth
    2014, Theorem 3.6).

    Parameters
    ----------
    sensitivity_l1 : float
        ℓ1 sensitivity Δ₁ ≥ 0 (from declared bounds).
    epsilon : float
        Privacy parameter ε > 0.

    Returns
    -------
    float
        The scale b (0 when Δ₁ = 0).
    """
    eps, _ = check_epsilon_delta(epsilon, 0.0)
    sens = check_sensitivity(sensitivity_l1, "sensitivity_l1")
    return sens / eps


def gaussian_sigma_classical(sensitivity_l2: float, epsilon: float, delta: float) -> float:
    """Classical Gaussian-mechanism calibration (Dwork & Roth 2014, Theorem A.1).

    ``σ = Δ₂ · √(2 ln(1.25/δ)) / ε`` gives (ε, δ)-DP for ε ∈ (0, 1).  The theorem
    does not hold for ε ≥ 1; use :func:`gaussian_sigma_analytic` there (it is also
    never larger than this σ for ε < 1).

    Parameters
    ----------
    sensitivity_l2 : float
        ℓ2 sensitivity Δ₂ ≥ 0.
    epsilon : float
        Privacy parameter, 0 < ε < 1.
    delta : float
        Privacy parameter, 0 < δ < 1.

    Returns
    -------
    float
        The noise standard deviation σ (0 when Δ₂ = 0).

    Raises
    ------
    PrivacyParameterError
        For ε ≥ 1, δ = 0 or invalid inputs.
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    if eps >= 1.0:
        raise PrivacyParameterError(
            f"the classical Gaussian calibration (Dwork & Roth, Thm A.1) needs epsilon < 1, "
            f"got {eps!r}; use the analytic calibration (method='analytic')"
        )
    sens = check_sensitivity(sensitivity_l2, "sensitivity_l2")
    return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def _profile(mu: float, epsilon: float) -> tuple[float, float, float]:
    """δ(ε) of the Gaussian mechanism with normalised shift ``mu = Δ/σ`` (> 0).

    Returns ``(delta, error, log_delta)``: the value (clamped to [0, 1]), a
    conservative bound on its absolute floating-point error (rounding of the
    special functions and of the arguments a, b, propagated to first order with
    generous constants), and log δ (finite; ``_LOG_ZERO`` stands in for log 0).

    With a = μ/2 − ε/μ and b = −μ/2 − ε/μ we have b² = a² + 2ε, hence
    e^ε Φ(b) = ½ e^{−a²/2} erfcx(−b/√2), where erfcx(x) = e^{x²} erfc(x) is the
    scaled complementary error function.  The factor e^ε cancels analytically, so
    nothing overflows for large ε:

    * a < 0 (the tail): Φ(a) = ½ e^{−a²/2} erfcx(−a/√2) too, so
      δ = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)], relative accuracy in the far
      tail (log δ is computed without forming e^{−a²/2}).
    * a ≥ 0, ε ≤ 1: δ = [Φ(a) − Φ(b)] − (e^ε − 1) Φ(b), where Φ(a) − Φ(b) =
      ½[erf(a/√2) + erf(−b/√2)] is a sum of non-negative terms (accurate for tiny μ)
      and (e^ε − 1) uses expm1.
    * a ≥ 0, ε > 1: δ = Φ(a) − ½ e^{−a²/2} erfcx(−b/√2) (here δ is not small).
    """
    from scipy import special  # imported on first use, not with dpopt

    eps_m = _MACHINE_EPS
    if mu <= 0.0:  # σ = ∞ (or exp underflow in the root finder): no privacy loss
        return 0.0, 0.0, _LOG_ZERO
    a = mu / 2.0 - epsilon / mu
    b = -mu / 2.0 - epsilon / mu
    if not (math.isfinite(a) and math.isfinite(b)):  # ε/μ overflows: δ < 1e-300000
        return 0.0, 0.0, _LOG_ZERO
    scale = mu / 2.0 + epsilon / mu  # ≥ |a|, |b|: size of the rounding in a and b
    half_gauss = 0.5 * math.exp(-0.5 * a * a)  # ½ e^{−a²/2} = √(π/2) φ(a)
    e_b = float(special.erfcx(-b / _SQRT2))
    # First-order effect of the rounding of μ, ε/μ, a and b (each moves a and b by at most
    # 4·eps·scale): ∂δ/∂a = ½e^{−a²/2}(a·erfcx(−b/√2) + √(2/π)), and ∂δ/∂b the same with b
    # (minus sign).  Both are much smaller than φ(a) in the tail, where they nearly cancel.
    shift = 4.0 * eps_m * scale
    grad_a = abs(a * e_b + _SQRT2_OVER_PI) + 4.0 * eps_m * (abs(a) * e_b + _SQRT2_OVER_PI)
    grad_b = abs(b * e_b + _SQRT2_OVER_PI) + 4.0 * eps_m * (abs(b) * e_b + _SQRT2_OVER_PI)
    err_args = half_gauss * shift * (grad_a + grad_b)
    if a < 0.0:
        e_a = float(special.erfcx(-a / _SQRT2))
        diff = e_a - e_b
        value = half_gauss * diff
        err = (
            err_args + 8.0 * eps_m * half_gauss * (e_a + e_b) + 8.0 * eps_m * (1.0 + a * a) * value
        )
        log_value = _LOG_HALF - 0.5 * a * a + math.log(diff) if diff > 0.0 else _LOG_ZERO
    else:
        if epsilon <= 1.0:
            p = 0.5 * (float(special.erf(a / _SQRT2)) + float(special.erf(-b / _SQRT2)))
            q = math.expm1(epsilon) * float(special.ndtr(b))
        else:
            p = float(special.ndtr(a))
            q = half_gauss * e_b
        value = p - q
        err = err_args + 8.0 * eps_m * (p + q)
        log_value = math.log(value) if value > 0.0 else _LOG_ZERO
    value = min(max(value, 0.0), 1.0)
    return value, err, max(min(log_value, 0.0), _LOG_ZERO)


def gaussian_delta(sigma: float, sensitivity_l2: float, epsilon: float) -> float:
    """Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    The mechanism ``f(D) + N(0, σ² I)`` with ℓ2 sensitivity Δ is (ε, δ)-DP exactly for

        δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ),

    and for no smaller δ.  It is evaluated through the scaled complementary error
    function (see ``_profile``), which is stable for large ε (no overflow of
    e^ε) and keeps relative accuracy in the far tail (δ down to ~1e-300).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ ≥ 0.
    sensitivity_l2 : float
        ℓ2 sensitivity Δ ≥ 0.
    epsilon : float
        ε ≥ 0 (ε = 0 gives the total-variation distance of the two Gaussians).

    Returns
    -------
    float
        δ in [0, 1].  It is 0 when Δ = 0 and 1 when σ = 0 < Δ.
    """
    eps = as_real(epsilon, "epsilon", "in [0, inf)")
    if not (math.isfinite(eps) and eps >= 0.0):
        raise PrivacyParameterError(f"epsilon must be finite and >= 0 (in [0, inf)), got {eps!r}")
    sig = as_real(sigma, "sigma", "in [0, inf)")
    if not (math.isfinite(sig) and sig >= 0.0):
        raise PrivacyParameterError(f"sigma must be finite and >= 0 (in [0, inf)), got {sig!r}")
    sens = check_sensitivity(sensitivity_l2, "sensitivity_l2")
    if sens == 0.0:
        return 0.0
    if sig == 0.0:
        return 1.0
    mu = sens / sig
    if not math.isfinite(mu):  # σ so small that Δ/σ overflows: no privacy at all
        return 1.0
    return _profile(mu, eps)[0]


def gaussian_sigma_analytic(
    sensitivity_l2: float, epsilon: float, delta: float, *, tol: float = 1e-12
) -> float:
    """Analytic Gaussian mechanism (Balle & Wang, ICML 2018, Algorithm 1).

    Returns the smallest σ with ``gaussian_delta(σ, Δ, ε) ≤ δ``, up to a relative
    tolerance ``tol``, always rounded to the safe side.  Valid for every ε > 0
    (unlike the classical bound, which needs ε < 1, and is never larger than it).

    The profile depends on σ only through μ = Δ/σ and increases with μ, so the
    root of ``log δ(μ) − log δ`` is bracketed in log μ (the bracket grows from the
    classical guess until it contains the root) and found with Brent's method.
    The result is then checked, and nudged upward until the check passes: the
    profile evaluated at σ *plus a conservative bound on its floating-point error*
    must not exceed δ.  So the returned σ satisfies the exact (real-arithmetic)
    condition δ(σ) ≤ δ, not merely its floating-point evaluation.  Checked against
    60-digit arithmetic: for ε ≥ 1e-6 and δ ≥ 1e-300 the returned σ exceeds the
    exact optimum by less than 1e-8 relative (by about ``tol`` for ε ≥ 0.01); for absurdly small ε (1e-12) the error bound is loose and σ may be
    up to ~1% too large, never too small.

    Parameters
    ----------
    sensitivity_l2 : float
        ℓ2 sensitivity Δ ≥ 0.
    epsilon : float
        ε > 0.
    delta : float
        0 < δ < 1.
    tol : float, default 1e-12
        Relative tolerance on σ.

    Returns
    -------
    float
        σ (0 when Δ = 0).

    Raises
    ------
    PrivacyParameterError
        For invalid inputs, δ = 0, or an invalid ``tol``.
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    sens = check_sensitivity(sensitivity_l2, "sensitivity_l2")
    tol_f = as_real(tol, "tol", "in [1e-15, 0.1]")
    if not (1e-15 <= tol_f <= 0.1):
        raise PrivacyParameterError(f"tol must be in [1e-15, 0.1], got {tol_f!r}")
    if sens == 0.0:
        return 0.0

    log_target = math.log(dlt)

    def excess(log_mu: float) -> float:  # increasing in log μ
        return _profile(math.exp(log_mu), eps)[2] - log_target

    # Classical guess μ0 = ε / √(2 ln(1.25/δ)), then grow the bracket geometrically.
    guess = math.log(eps / math.sqrt(2.0 * math.log(1.25 / dlt)))
    lo, hi, step = guess - 0.5, guess + 0.5, 1.0
    for _ in range(200):
        if excess(lo) < 0.0:
            break
        hi = lo  # excess(lo) ≥ 0: the root is at or below lo
        lo -= step
        step *= 2.0
    else:  # pragma: no cover - unreachable for valid (ε, δ)
        raise PrivacyParameterError(
            f"could not bracket the analytic Gaussian σ for ε={eps!r}, δ={dlt!r}"
        )
    step = 1.0
    for _ in range(200):
        if excess(hi) >= 0.0:
            break
        lo = hi
        hi += step
        step *= 2.0
    else:  # pragma: no cover - unreachable for valid (ε, δ)
        raise PrivacyParameterError(
            f"could not bracket the analytic Gaussian σ for ε={eps!r}, δ={dlt!r}"
        )

    f_hi = excess(hi)
    if f_hi == 0.0:
        log_mu = hi
    else:
        from scipy import optimize

        log_mu = optimize.brentq(excess, lo, hi, xtol=tol_f / 4.0, rtol=4.0 * _MACHINE_EPS)
    sigma = sens * math.exp(-log_mu)

    # Safe side: δ(σ) plus a bound on its floating-point error must not exceed δ.
    nudge = tol_f
    for _ in range(200):
        value, err, _ = _profile(sens / sigma, eps)
        if value + err <= dlt:
            return sigma
        sigma *= 1.0 + nudge
        nudge *= 2.0
    raise PrivacyParameterError(  # pragma: no cover - the profile decreases in σ
        f"the analytic Gaussian σ for ε={eps!r}, δ={dlt!r} failed its safety check"
    )


def gaussian_sigma(
    sensitivity_l2: float,
    epsilon: float,
    delta: float,
    *,
    method: Literal["analytic", "classical"] = "analytic",
) -> float:
    """Noise standard deviation of the Gaussian mechanism for (ε, δ)-DP.

    Parameters
    ----------
    sensitivity_l2 : float
        ℓ2 sensitivity Δ₂ ≥ 0 (from declared bounds).  Δ₂ = 0 gives σ = 0.
    epsilon, delta : float
        ε > 0 and 0 < δ < 1.
    method : {"analytic", "classical"}, default "analytic"
        ``"analytic"``: Balle & Wang (2018), any ε.  ``"classical"``: Dwork & Roth
        (2014) Thm A.1, ε < 1 only.

    Returns
    -------
    float
        σ.
    """
    if method == "analytic":
        return gaussian_sigma_analytic(sensitivity_l2, epsilon, delta)
    if method == "classical":
        return gaussian_sigma_classical(sensitivity_l2, epsilon, delta)
    raise PrivacyParameterError(
        f"unknown Gaussian calibration method {method!r}; use 'analytic' or 'classical'"
    )
