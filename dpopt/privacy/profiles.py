"""Privacy profiles of shift couplings, and the smallest noise scale that meets one.

Several dpopt mechanisms are proved private by a *coupling*: the noise ξ that yields
the output o on D is mapped, by a translation ξ ↦ ξ + v(o) (injective, Jacobian 1),
to a noise that yields the same o on the neighbour D'.  With Gaussian noise
N(0, σ²I) the log density ratio at ξ is

    L(ξ) = ln p(ξ)/p(ξ + v) = (2⟨ξ, v⟩ + ‖v‖²)/(2σ²),

and summing over outputs o ∈ S (the sets {ξ : o(ξ) = o} are disjoint)

    P_D(S) − e^ε P_{D'}(S) ≤ Σ_o ∫_{o(ξ)=o} (p(ξ) − e^ε p(ξ + v(o)))₊ dξ = E[(1 − e^{ε − L(ξ)})₊],

the *privacy profile* of the coupling (the hockey-stick divergence bound of Balle,
Barthe & Gaboardi 2018, Thm. 1, applied through the coupling).  v depends on the
output, hence on ξ, so ⟨ξ, v⟩ is not Gaussian; when ‖v‖ ≤ Δ and v ranges in a fixed
k-dimensional subspace S (k = d + 1 for OPDisc, k = 2 for GLM objective perturbation),
⟨ξ, v⟩ ≤ Δ‖P_S ξ‖ and ‖P_S ξ‖/σ ~ χ_k, so with a = Δ/σ

    L ≤ a R + a²/2,   R ~ χ_k,   δ(ε) ≤ E[(1 − e^{ε − aR − a²/2})₊]   (1)

because (1 − e^{ε − L})₊ increases with L.  This module evaluates (1) by quadrature
(:func:`chi_profile_delta`) and finds the smallest σ with (1) ≤ δ
(:func:`chi_shift_sigma`, via the generic :func:`smallest_scale`).  It replaces the
"bad set" cutoff P(R > c) ≤ δ, L ≤ ac + a²/2 ≤ ε, which spends all of δ on the tail
and then asks for the worst loss elsewhere.

Only public quantities enter (ε, δ, shift bounds, dimensions): messages may print them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import Budget, budget_pair, check_sensitivity

__all__ = ["chi_expectation", "chi_logpdf", "chi_profile_delta", "chi_shift_sigma", "cutoff_shift_sigma",
           "smallest_scale"]

#: relative accuracy asked of the quadrature (its reported error is added on the safe side)
_QUAD_RTOL = 1e-10
#: the χ_k log density is concave with curvature ≤ −1, so 40 past its peak it is below e^{−800}
_TAIL_WIDTH = 40.0


def _check_dof(dof: object) -> int:
    if isinstance(dof, bool) or not isinstance(dof, int) or dof < 1:
        raise PrivacyParameterError(f"dof (degrees of freedom) must be an integer >= 1, got {dof!r}")
    return dof


def chi_logpdf(r: float, dof: int) -> float:
    """log density of the χ distribution with ``dof`` degrees of freedom at r > 0."""
    k = dof
    return (k - 1) * math.log(r) - 0.5 * r * r - (0.5 * k - 1.0) * math.log(2.0) - math.lgamma(0.5 * k)


def chi_expectation(fn: Callable[[float], float], dof: int, *, lower: float = 0.0) -> tuple[float, float]:
    """``E[fn(R); R ≥ lower]`` for R ~ χ_dof, by adaptive quadrature, with its error.

    ``fn`` must be bounded by 1 in absolute value on [lower, ∞) (profiles are).  The
    density is scaled by its value at ``max(lower, mode)`` so that tiny results (δ down
    to 1e-300) keep their relative accuracy; the integral stops 40 past that point,
    where the density has fallen by more than e^{−800} (log-concavity with curvature ≤ −1).

    Returns
    -------
    tuple of float
        ``(value, error)``: the expectation and a bound on the quadrature error.
    """
    k = _check_dof(dof)
    mode = math.sqrt(k - 1.0)
    start = max(lower, 0.0)
    peak = max(start, mode)
    ref = chi_logpdf(max(peak, 1e-300), k)  # χ₁ (mode 0) has a finite density at 0

    def integrand(r: float) -> float:
        return fn(r) * math.exp(chi_logpdf(max(r, 1e-300), k) - ref) if r > 0.0 or k == 1 else 0.0

    points = [p for p in (mode, peak) if start < p < peak + _TAIL_WIDTH]
    from scipy import integrate  # imported on first use, not with dpopt

    value, err = integrate.quad(integrand, start, peak + _TAIL_WIDTH, points=points or None,
                                epsabs=0.0, epsrel=_QUAD_RTOL, limit=400)
    scale = math.exp(ref)
    return value * scale, (abs(err) + 1e-14 * abs(value)) * scale


def _cutoff(a: float, epsilon: float) -> float:
    """The R below which a R + a²/2 ≤ ε (the profile's integrand vanishes there)."""
    return max((epsilon - 0.5 * a * a) / a, 0.0)


def chi_profile_delta(a: float, epsilon: float, dof: int, *, with_error: bool = False) -> float | tuple[float, float]:
    """δ(ε) = E[(1 − e^{ε − aR − a²/2})₊], R ~ χ_dof: equation (1) of the module notes.

    Parameters
    ----------
    a : float
        Shift over noise scale, ``Δ/σ`` ≥ 0.
    epsilon : float
        ε ≥ 0.
    dof : int
        Degrees of freedom k of the χ variable (the dimension the shift ranges in).
    with_error : bool
        Also return a bound on the quadrature error.

    Returns
    -------
    float or tuple of float
        δ in [0, 1] (and its error bound).
    """
    k = _check_dof(dof)
    if not (math.isfinite(a) and a >= 0.0):
        raise PrivacyParameterError(f"a = shift/sigma must be finite and >= 0, got {a!r}")
    if not (math.isfinite(epsilon) and epsilon >= 0.0):
        raise PrivacyParameterError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    if a == 0.0:
        return (0.0, 0.0) if with_error else 0.0
    half_a2 = 0.5 * a * a

    def loss_gap(r: float) -> float:  # 1 − e^{ε − L}, ≥ 0 above the cutoff
        return -math.expm1(epsilon - a * r - half_a2)

    value, err = chi_expectation(loss_gap, k, lower=_cutoff(a, epsilon))
    value = min(max(value, 0.0), 1.0)
    return (value, err) if with_error else value


def smallest_scale(excess: Callable[[float], float], guess: float, *, rtol: float = 1e-9,
                   safe: Callable[[float], bool] | None = None) -> float:
    """Smallest σ > 0 with ``excess(σ) ≤ 0``, for ``excess`` decreasing in σ.

    The root is bracketed in log σ by doubling steps from ``guess`` and found with
    Brent's method to relative tolerance ``rtol``; the answer is then moved up until
    ``safe(σ)`` holds (default: ``excess(σ) ≤ 0``), so it is always on the safe side.
    """
    if not (math.isfinite(guess) and guess > 0.0):
        raise PrivacyParameterError(f"the initial noise scale must be positive and finite, got {guess!r}")
    ok = safe if safe is not None else (lambda s: excess(s) <= 0.0)

    def f(log_s: float) -> float:
        return excess(math.exp(log_s))

    hi, step = math.log(guess), 0.5
    for _ in range(200):  # hi: a safe scale
        if f(hi) <= 0.0:
            break
        hi, step = hi + step, 2.0 * step
    else:  # pragma: no cover - excess must become ≤ 0 for large σ
        raise PrivacyParameterError("could not bracket the noise scale: the profile does not vanish")
    lo, step = hi - 0.5, 0.5
    for _ in range(200):  # lo: an unsafe scale
        if f(lo) > 0.0:
            break
        hi, lo, step = lo, lo - step, 2.0 * step
    else:  # pragma: no cover - excess must become > 0 for small σ
        raise PrivacyParameterError("could not bracket the noise scale from below")
    from scipy import optimize

    sigma = math.exp(optimize.brentq(f, lo, hi, xtol=rtol / 4.0, rtol=1e-15))
    nudge = rtol
    for _ in range(200):
        if ok(sigma):
            return sigma
        sigma *= 1.0 + nudge
        nudge *= 2.0
    raise PrivacyParameterError("the noise scale failed its safety check")  # pragma: no cover


def cutoff_shift_sigma(shift: float, epsilon: float, cutoff: float) -> float:
    """The σ of the older "bad set" argument: a c + a²/2 = ε with a = Δ/σ, i.e.
    ``σ = Δ/(√(c² + 2ε) − c)`` for a cutoff c on R (kept for comparison and the old modes)."""
    x = 2.0 * epsilon / (math.sqrt(cutoff * cutoff + 2.0 * epsilon) + cutoff)  # √(c²+2ε) − c, stably
    return shift / x


def chi_shift_sigma(shift: float, epsilon: float | Budget, delta: float | None, dof: int, *,
                    rtol: float = 1e-9) -> float:
    """Smallest σ whose χ_dof shift profile (1) is at most δ at ε.

    Parameters
    ----------
    shift : float
        Δ, the largest norm of the coupling's translation (from declared bounds).
    epsilon, delta : float, or a Budget and None
        Target ε > 0, 0 < δ < 1; a checked :class:`~dpopt.privacy.calibration.Budget` is not
        checked again (a mechanism's calibration search calls this once per candidate).
    dof : int
        Dimension k of the subspace the translation ranges in.
    rtol : float
        Relative tolerance on σ (the result is rounded up, never down).

    Returns
    -------
    float
        σ (0 when Δ = 0).  The profile at σ, plus the quadrature's error bound, is ≤ δ.
    """
    eps, dlt = budget_pair(epsilon, delta, allow_zero_delta=False)
    sens = check_sensitivity(shift, "shift")
    k = _check_dof(dof)
    if sens == 0.0:
        return 0.0
    return sens * _unit_sigma(eps, dlt, k, rtol)


@functools.lru_cache(maxsize=256)
def _unit_sigma(epsilon: float, delta: float, dof: int, rtol: float) -> float:
    """σ for Δ = 1 (the profile depends on Δ/σ only; cached: public inputs, ~10 ms each)."""
    log_target = math.log(delta)

    def excess(sigma: float) -> float:  # decreasing in σ
        value = chi_profile_delta(1.0 / sigma, epsilon, dof)
        assert isinstance(value, float)
        return (math.log(value) if value > 0.0 else -1e6) - log_target

    def safe(sigma: float) -> bool:
        value, err = chi_profile_delta(1.0 / sigma, epsilon, dof, with_error=True)  # type: ignore[misc]
        return value + err <= delta

    # The cutoff argument's σ (c from a Gaussian-concentration tail bound) is a valid start.
    c = math.sqrt(dof) + math.sqrt(2.0 * math.log(1.0 / delta))
    return smallest_scale(excess, cutoff_shift_sigma(1.0, epsilon, c), rtol=rtol, safe=safe)

