"""Rényi DP of Poisson-subsampled discrete Gaussian sums under replace-one neighbours.

DP-SGD's step (:class:`dpopt.DPSGD`) puts every row in the batch independently with
probability q, rounds the batch's clipped-gradient sum onto γℤ^d and adds an exact discrete
Gaussian vector K ~ N_ℤ(0, s²)^d in grid units ([CKS20], Alg. 3).  Fix the history and the
batch R of the rows other than the replaced one, and let a, b, c ∈ ℤ^d be the rounded sums
of R, of R plus the row of D and of R plus the row of D'.  The step's law on D and D' is then

    P = (1 − q)·N_ℤ(a) + q·N_ℤ(b),    Q = (1 − q)·N_ℤ(a) + q·N_ℤ(c),

with ‖b − a‖, ‖c − a‖ ≤ ``one`` = C/γ + √d and ‖b − c‖ ≤ ``two`` = 2C/γ + √d (a clipped
gradient is at most C long; two roundings differ by at most one grid step per coordinate).
For every integer order α ≥ 2 (docs/exact-noise.md, "Amplification by sampling" has the
proof)

    E_Q[(P/Q)^α] ≤ 1 + Σ_{j=2}^{α} C(α, j) q^j [(1 − q)·2^j·m̄_j(one²/s²) + q·m̄_j(two²/s²)],

where m_j(τ) = Σ_{i=0}^{j} C(j, i)(−1)^{j−i} e^{i(i−1)τ/2} for even j and
m̄_j = m_j (even j), √(m_{j−1} m_{j+1}) (odd j).  In each j-th bracket 2^j·m̄_j(one²/s²) may
be replaced by 2e^{j(j−1)one²/(2s²)}, and the bracket by (1 − q)^{1−j} times that first term;
the smallest is used.  The proof expands (P/Q)^α
binomially around 1 (as [ZW19] and [WBK19] do), bounds Q^{1−j} by the convex combination
(1 − q)μ_a^{1−j} + q μ_c^{1−j}, or by ((1 − q)μ_a)^{1−j}, and |L_b − L_c|^j by
2^{j−1}(|L_b − 1|^j + |L_c − 1|^j) (the ternary-divergence step of [WBK19]) or by
L_b^j + L_c^j, and uses that for integer shifts the discrete
Gaussian's likelihood ratio L has E[L^i] = e^{i(i−1)τ/2} at every integer i, the continuous
Gaussian's value ([CKS20]), so m_j(τ) = E|L − 1|^j exactly for even j, increasing in τ.
The bound is symmetric in D and D'; the unamplified α·two²/(2s²) ([CKS20]) also holds, and
the smaller of the two is used at each order.  Over T adaptive steps the orders' bounds
add ([Mir17] Prop. 1), and (α, ε_α)-RDP implies (ε, δ)-DP for

    ε = ε_α + log(1 − 1/α) − (log δ + log α)/(α − 1)       ([CKS20] Prop. 12),

minimised over the orders of :data:`ORDERS`.

Numerics.  m_j (j ≤ :data:`EXACT_MOMENTS`) is an alternating sum with heavy cancellation:
each e^{i(i−1)τ/2} is enclosed by mpmath's interval arithmetic, scaled to integers and summed
exactly, upper ends on the + terms, which is an upper bound at any precision (the precision
is raised until the enclosure is narrow, which only makes it tight).  Above that j the bounds
of :func:`_tail_bounds` have no cancellation.  The sum over j has positive terms only; it is
taken in float64 in the log domain, each logarithm raised by :func:`_pad` and each order's bound
by the factor 1 + :data:`RELATIVE_SLACK`, far above float64's relative error (below 10⁻¹¹ here).

Why by hand: dp-accounting's RDP accountant amplifies Poisson sampling under add/remove only,
and its sampled-Gaussian orders are the continuous law's, evaluated in float64 without a bound
on their rounding; no library bounds the replace-one pair above for the discrete law.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpopt.errors import PrivacyParameterError

__all__ = [
    "EXACT_MOMENTS",
    "ORDERS",
    "SubsampledGrid",
    "epsilon_from_rdp",
    "moment_bounds",
    "subsampled_rdp",
    "subsampled_variance",
]

#: the integer Rényi orders the accountant evaluates (any set gives a valid bound)
ORDERS: tuple[int, ...] = (tuple(range(2, 65)) + tuple(range(68, 129, 4)) + tuple(range(144, 257, 16))
                           + (320, 384, 448, 512, 640, 768, 1024, 1280, 1536, 2048, 3072, 4096, 6144, 8192))
#: m̄_j is computed exactly (interval and integer arithmetic) for j ≤ this; _tail_bounds above it
EXACT_MOMENTS = 64
#: relative allowance for the float64 rounding of the positive sums (module docstring)
RELATIVE_SLACK = 1e-7
#: added to every log-moment: covers the float rounding of a logarithm of magnitude < 10⁶
LOG_MARGIN = 1e-9
_START_BITS, _MAX_BITS = 64, 8192


@dataclass(frozen=True)
class SubsampledGrid:
    """The public facts of one Poisson-subsampled discrete Gaussian step, in grid units.

    Attributes
    ----------
    rate : float
        q, the probability that a row is in the batch.
    one : float
        A bound on ‖b − a‖: the rounded sums with and without one row (C/γ + √d).
    two : float
        A bound on ‖b − c‖: the rounded sums with either of two rows (2C/γ + √d).
    """

    rate: float
    one: float
    two: float

    def __post_init__(self) -> None:
        if not (0.0 < self.rate <= 1.0):
            raise PrivacyParameterError(f"the sampling rate must be in (0, 1], got {self.rate!r}")
        if not (0.0 < self.one <= self.two <= 2.0 * self.one) or not math.isfinite(self.two):
            raise PrivacyParameterError(f"need 0 < one ≤ two ≤ 2·one, got one={self.one!r}, two={self.two!r}")


def moment_bounds(shift: float, variance: float, top: int) -> np.ndarray:
    """Upper bounds on log m̄_j(τ), τ = shift²/variance, for j = 0..``top`` (float64; −inf for j < 2).

    j ≤ :data:`EXACT_MOMENTS`: the exact alternating sum, bounded above in integer arithmetic;
    above: the smaller of the two bounds of :func:`_tail_bounds`.  Every logarithm computed in
    float64 is padded (:func:`_pad`) for its rounding.
    """
    out = np.full(top + 1, -np.inf)
    tau = float(shift) ** 2 / float(variance) * (1.0 + 1e-12)
    exact = min(top, EXACT_MOMENTS, _exact_reach(tau))
    even = _log_even_moments(float(shift), float(variance), exact + (exact % 2))
    for j in range(2, exact + 1):
        out[j] = even[j] if j % 2 == 0 else 0.5 * (even[j - 1] + even[j + 1])  # Cauchy–Schwarz
    if top > exact:
        out[exact + 1:] = _tail_bounds(tau, exact + 1, top)
    return out


def _tail_bounds(tau: float, first: int, top: int) -> np.ndarray:
    """Upper bounds on log E|L − 1|^j for j = first..top, without cancellation.

    (a) |L − 1|^j ≤ max(L, 1)^j ≤ L^j + 1, so E|L − 1|^j ≤ e^{j(j−1)τ/2} + 1 (any j).
    (b) For even j, m_j(τ) is also the continuous Gaussian's E(L − 1)^j with L = e^X,
    X ~ N(−τ/2, τ).  |e^x − 1| ≤ |x|·max(1, e^x), and tilting by e^{jX} gives
    m_j ≤ E|X|^j + e^{j(j−1)τ/2} E|X_j|^j with X_j ~ N((j − ½)τ, τ), where by Minkowski
    E|N(μ, τ)|^j ≤ (|μ| + √τ ‖Z‖_j)^j and ‖Z‖_j^j = 2^{j/2} Γ((j+1)/2)/√π.  Odd j takes the
    geometric mean of its even neighbours' (b) (Cauchy–Schwarz).
    """
    from scipy.special import gammaln  # imported on first use, not with dpopt

    j = np.arange(first - 1, top + 2, dtype=np.float64)  # one more on each side: odd j's neighbours
    root = math.sqrt(tau)
    norm_z = np.exp((0.5 * j * math.log(2.0) + gammaln((j + 1.0) / 2.0) - 0.5 * math.log(math.pi)) / j)
    centred = j * np.log(tau / 2.0 + root * norm_z)
    tilted = j * (j - 1.0) * tau / 2.0 + j * np.log((j - 0.5) * tau + root * norm_z)
    even = np.logaddexp(centred, tilted)  # (b), valid at even j only
    odd = 0.5 * (np.roll(even, 1) + np.roll(even, -1))  # at odd j: the even neighbours' mean
    tilt = np.where(j % 2 == 0, even, odd)[1:-1]
    j = j[1:-1]
    crude = np.logaddexp(j * (j - 1.0) * tau / 2.0, 0.0)
    return _pad(np.minimum(crude, tilt))


def _pad(log: np.ndarray) -> np.ndarray:
    """A float64 logarithm raised past its rounding error: + 10⁻⁹ + 10⁻¹²·|log|."""
    return log + LOG_MARGIN + 1e-12 * np.abs(log)


def _exact_reach(tau: float) -> int:
    """The largest even j whose top term e^{j(j−1)τ/2} stays below e^4096: beyond it the
    integers grow large and the crude bound has little to cancel."""
    j = 2
    while j + 2 <= EXACT_MOMENTS and (j + 2) * (j + 1) * tau / 2.0 <= 4096.0:
        j += 2
    return j


def _log_even_moments(shift: float, variance: float, top: int) -> dict[int, float]:
    """Upper bounds on log m_j(τ) for even j ≤ ``top``.

    Each e^{i(i−1)τ/2} is enclosed by mpmath's interval arithmetic and scaled to integers
    ⌊lower·2^b⌋ ≤ 2^b e^{i(i−1)τ/2} ≤ ⌈upper·2^b⌉; the alternating sum is then exact integer
    arithmetic with the upper integer on the + terms and the lower on the − terms.  b doubles
    until the enclosure of every m_j is narrower than 2⁻⁴⁰ of it (at any b the upper sum is a
    valid bound; the doubling only makes it tight).
    """
    from mpmath import iv

    # the cancellation costs about log2 C(j, j/2) + (j/2)·log2(1/τ) bits at the top j: start there
    bits = _START_BITS + top + max(0, math.ceil(top / 2 * math.log2(variance / shift**2)))
    saved = iv.prec
    try:
        return _integer_sums(shift, variance, top, bits)
    finally:
        iv.prec = saved  # mpmath's interval context is global: leave it as found


def _integer_sums(shift: float, variance: float, top: int, bits: int) -> dict[int, float]:
    """The body of :func:`_log_even_moments` at a starting precision of ``bits``."""
    from mpmath import iv

    while True:
        iv.prec = bits + 64
        tau = (iv.mpf(shift) ** 2) / iv.mpf(variance)
        lows, highs = [], []
        for i in range(top + 1):
            power = iv.exp(tau * (i * (i - 1)) / 2)
            low, high = power._mpi_  # raw (sign, mantissa, exponent, bits) of the interval's ends
            lows.append(_scaled(low, bits, up=False))
            highs.append(_scaled(high, bits, up=True))
        upper, lower = {}, {}
        for j in range(2, top + 1, 2):
            plus = [math.comb(j, i) for i in range(j + 1)]
            upper[j] = sum(c * (highs[i] if (j - i) % 2 == 0 else -lows[i]) for i, c in enumerate(plus))
            lower[j] = sum(c * (lows[i] if (j - i) % 2 == 0 else -highs[i]) for i, c in enumerate(plus))
        tight = all(lower[j] > 0 and upper[j] - lower[j] <= upper[j] >> 40 for j in upper)
        if tight or bits >= _MAX_BITS:
            return {j: (math.log(u) - bits * math.log(2.0) + LOG_MARGIN if u > 0 else -math.inf)
                    for j, u in upper.items()}
        bits *= 2


def _scaled(raw: tuple[int, int, int, int], bits: int, up: bool) -> int:
    """⌊x·2^bits⌋ (or ⌈·⌉ with ``up``) of a positive finite raw mpmath float x = mantissa·2^exponent."""
    sign, mantissa, exponent, _ = raw
    if sign or mantissa <= 0:
        raise PrivacyParameterError("an exponential's enclosure was not positive and finite")
    shift = exponent + bits
    if shift >= 0:
        return mantissa << shift
    return -((-mantissa) >> -shift) if up else mantissa >> -shift


def subsampled_rdp(step: SubsampledGrid, variance: float, orders: tuple[int, ...] = ORDERS) -> np.ndarray:
    """ε_α of one step at every order (module docstring): the amplified bound or, where smaller,
    the unamplified α·two²/(2s²); ``variance`` is s² in grid units."""
    from scipy.special import gammaln  # imported on first use, not with dpopt

    q, variance = step.rate, float(variance)
    unamplified = np.array([alpha * step.two**2 / (2.0 * variance) for alpha in orders]) * (1.0 + RELATIVE_SLACK)
    if q == 1.0:  # no sampling: the discrete Gaussian's own bound ([CKS20])
        return unamplified
    top = max(orders)
    log_one = moment_bounds(step.one, variance, top)
    log_two = moment_bounds(step.two, variance, top)
    j = np.arange(top + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        tau = step.one**2 / variance * (1.0 + 1e-12)
        # E_{μ_a}|L_b − L_c|^j ≤ 2^j m̄_j(one²/s²), and ≤ E L_b^j + E L_c^j ≤ 2e^{j(j−1)τ/2} (|x − y| ≤ max(x, y))
        split = np.minimum(j * math.log(2.0) + log_one, _pad(math.log(2.0) + j * (j - 1.0) * tau / 2.0))
        convex = np.logaddexp(math.log1p(-q) + split, math.log(q) + log_two)  # Q^{1−j} ≤ (1−q)μ_a^{1−j} + qμ_c^{1−j}
        floor = (1.0 - j) * math.log1p(-q) + split  # Q^{1−j} ≤ ((1−q)μ_a)^{1−j}
        inner = np.minimum(convex, floor) + j * math.log(q)
    out = np.empty(len(orders))
    for k, alpha in enumerate(orders):
        jj = j[2:alpha + 1]
        binom = gammaln(alpha + 1.0) - gammaln(jj + 1.0) - gammaln(alpha - jj + 1.0)
        terms = binom + inner[2:alpha + 1]
        peak = float(np.max(terms))
        log_sum = peak + math.log(float(np.sum(np.exp(terms - peak))))
        amplified = float(np.logaddexp(0.0, log_sum)) * (1.0 + RELATIVE_SLACK) / (alpha - 1)
        out[k] = min(amplified, unamplified[k])
    return out


def epsilon_from_rdp(rdp: np.ndarray, orders: tuple[int, ...], steps: int, delta: float) -> tuple[float, int]:
    """(ε, α): the smallest [CKS20] Prop. 12 conversion of T steps' RDP ``steps``·ε_α at δ, and its order."""
    best, order = math.inf, orders[0]
    for alpha, value in zip(orders, rdp, strict=True):
        eps = steps * float(value) + math.log1p(-1.0 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1)
        if eps < best:
            best, order = eps, alpha
    return max(best, 0.0), order


def _epsilon(step: SubsampledGrid, variance: float, steps: int, delta: float) -> tuple[float, int]:
    return epsilon_from_rdp(subsampled_rdp(step, variance), ORDERS, steps, delta)


@functools.lru_cache(maxsize=256)
def subsampled_variance(step: SubsampledGrid, steps: int, epsilon: float,
                        delta: float) -> tuple[int, float, int] | None:
    """The smallest integer s² (grid units, to 2⁻²² relative) whose T steps are (ε, δ)-DP by this bound.

    Returns ``(s², ε, α)``: the variance, the ε its bound certifies (≤ ``epsilon``) and the order
    that certifies it; None when no order of :data:`ORDERS` can certify ε (the conversion's
    log(1/δ)/(α − 1) alone exceeds it), where the caller's unamplified zCDP calibration applies.
    The bound decreases in s² (m̄_j is increasing in τ), so a bracketing search (Illinois regula
    falsi on log s²) finds it; the returned s² is certified by a final evaluation.
    """
    if not (math.isfinite(epsilon) and epsilon > 0 and 0 < delta < 1 and steps >= 1):
        raise PrivacyParameterError(f"need ε > 0, δ in (0, 1), T ≥ 1; got {epsilon!r}, {delta!r}, {steps!r}")

    floor = min(math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1) for a in ORDERS)
    if floor >= epsilon:  # the conversion alone spends ε at every order, however large s² is
        return None

    def excess(s2: int) -> float:  # decreasing in s²
        return _epsilon(step, s2, steps, delta)[0] - epsilon

    # a first guess from the leading term 2q²ατ₁ per step: ε ≈ √(8Tq²τ₁ log(1/δ)), capped by the unamplified
    tau = min(epsilon**2 / (8.0 * steps * step.rate**2 * math.log(1.0 / delta)), epsilon**2 / (steps * 4.0))
    hi = max(1, math.ceil(step.one**2 / tau))
    lo, f_lo = hi, 0.0
    f_hi = excess(hi)
    while f_hi > 0:
        lo, f_lo, hi = hi, f_hi, 2 * hi
        f_hi = excess(hi)
    if lo == hi:
        lo = max(1, hi // 2)
        f_lo = excess(lo)
        while f_lo <= 0 and lo > 1:
            hi, f_hi, lo = lo, f_lo, max(1, lo // 2)
            f_lo = excess(lo)
        if f_lo <= 0:
            hi, f_hi = lo, f_lo
    side = 0
    while hi - lo > max(1, hi >> 22):  # Illinois regula falsi in log s², to 2⁻²² relative
        x_lo, x_hi = math.log(lo), math.log(hi)
        x = x_hi - f_hi * (x_hi - x_lo) / (f_hi - f_lo)
        mid = min(max(lo + 1, round(math.exp(x))), hi - 1)
        f_mid = excess(mid)
        if f_mid <= 0:
            hi, f_hi = mid, f_mid
            f_lo, side = (f_lo / 2, -1) if side == -1 else (f_lo, -1)
        else:
            lo, f_lo = mid, f_mid
            f_hi, side = (f_hi / 2, 1) if side == 1 else (f_hi, 1)
    eps, order = _epsilon(step, hi, steps, delta)
    if eps > epsilon:  # unreachable by monotonicity; the certificate is checked all the same
        raise PrivacyParameterError("the subsampled-RDP calibration failed to certify its own variance")
    return hi, eps, order
