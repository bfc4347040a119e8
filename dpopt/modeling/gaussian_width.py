"""The expected maximum of p iid standard normals, plain and in absolute value, by exact
quadrature with a bound on the error: the Gaussian widths of the ℓ1 ball and the simplex (and of
the submodular norms' blocks) are these numbers times the set's scale.

scipy is imported when a width is computed, not with dpopt.
"""

from __future__ import annotations

import math

#: the tolerances of every width quadrature
QUAD = {"epsabs": 1e-13, "epsrel": 1e-12, "limit": 500}


def expected_max_abs_gaussian(p: int) -> tuple[float, float, float]:
    """``E max_i |g_i|`` for p iid standard normals by exact quadrature.

    ``E M = ∫₀^∞ P(M > t) dt = ∫₀^∞ 1 − (2Φ(t) − 1)^p dt``, integrated on
    ``[0, T]`` with ``T = √(2 log 2p) + 12`` and the integrand evaluated as
    ``−expm1(p · log1p(−2Φ(−t)))`` (no cancellation for large p).  The tail
    beyond T is at most ``∫_T^∞ 2p Φ(−t) dt ≤ 2p φ(T)`` (below 1e-30).

    Returns ``(value, low, high)``.
    """
    from scipy import integrate, special  # imported when a width is computed, not with dpopt

    t_mid = math.sqrt(2.0 * math.log(2.0 * p))
    upper = t_mid + 12.0

    def integrand(t: float) -> float:
        return -math.expm1(p * math.log1p(-2.0 * special.ndtr(-t)))

    value, err = integrate.quad(integrand, 0.0, upper, points=[t_mid], **QUAD)
    tail = 2.0 * p * math.exp(-0.5 * upper * upper) / math.sqrt(2.0 * math.pi)
    return value, value - err, value + err + tail


def expected_max_gaussian(p: int) -> tuple[float, float, float]:
    """``E max_i g_i`` for p iid standard normals by exact quadrature.

    Integrating ``E M = ∫ t · p φ(t) Φ(t)^{p−1} dt`` by parts gives
    ``E M = ∫₀^∞ (1 − Φ(t)^p) dt − ∫_{−∞}^0 Φ(t)^p dt`` whose integrands are
    smooth and monotone; they are evaluated through ``log Φ`` (``log_ndtr``).
    The positive part is cut at ``T = √(2 log p) + 12`` (tail ≤ ``p φ(T)``), the
    negative part at ``−12`` (tail ≤ ``φ(12)`` ≈ 5e-32).

    Returns ``(value, low, high)``.
    """
    from scipy import integrate, special  # imported when a width is computed, not with dpopt

    if p == 1:
        return 0.0, 0.0, 0.0
    t_mid = math.sqrt(2.0 * math.log(p))
    upper = t_mid + 12.0
    lower = 12.0

    def pos(t: float) -> float:
        return -math.expm1(p * float(special.log_ndtr(t)))

    def neg(t: float) -> float:
        return math.exp(p * float(special.log_ndtr(t)))

    v_pos, e_pos = integrate.quad(pos, 0.0, upper, points=[t_mid], **QUAD)
    v_neg, e_neg = integrate.quad(neg, -lower, 0.0, **QUAD)
    tail_pos = p * math.exp(-0.5 * upper * upper) / math.sqrt(2.0 * math.pi)
    tail_neg = math.exp(-0.5 * lower * lower) / math.sqrt(2.0 * math.pi)
    value = v_pos - v_neg
    return value, value - e_pos - e_neg - tail_neg, value + e_pos + e_neg + tail_pos
