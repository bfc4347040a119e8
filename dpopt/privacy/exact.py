"""Exact discrete Laplace and discrete Gaussian samplers on ℤ, and their privacy profiles.

The samplers follow Canonne, Kamath and Steinke [CKS20] (Algorithms 1–3): a Bernoulli trial
with success probability exp(−γ) for a rational γ (Algorithm 1), the discrete Laplace
distribution P[X = x] ∝ exp(−|x|/t) for a rational scale t (Algorithm 2) and the discrete
Gaussian P[X = x] ∝ exp(−x²/(2σ²)) for a rational σ² (Algorithm 3).  Parameters are
converted once, exactly, to ``fractions.Fraction`` and then to integer numerators and
denominators; the output distribution is exactly the stated one, given a uniform bit source.

Two forms draw the same laws:

* the **vectorised** form (more than a handful of draws, parameters within the limits below:
  every grid calibration's are) draws numpy arrays.  Its discrete Laplace is |x| = Z, the
  geometric law [CKS20] Alg. 2 builds, drawn by exact inversion with a fair sign, and its
  discrete Gaussian is Alg. 3's rejection from it.  Every Bernoulli(exp(−x)) step is one
  uniform U tested for U < e^{−x}: float64 bounds with a proved error decide it when they
  can (all but about 2^-35 of the trials), and exact rational bounds with further bits of U
  decide the rest (:mod:`dpopt.privacy.exp_trials`), so no rounding ever decides a draw;
* the **scalar** form (a few draws, or parameters beyond 2^40) runs Algorithms 1–3 as
  written, in Python integers.

The bit source (:class:`dpopt.privacy.bits.BitStream`) is the operating system's
cryptographically secure generator unless a seed is given; a seeded sampler draws from
``numpy.random.PCG64DXSM(seed)``, which is reproducible and **not secure**: use it for
tests and benchmarks, never for a release meant to protect anyone.

:func:`discrete_gaussian_delta` evaluates the exact (ε, δ) profile of the discrete Gaussian
mechanism ([CKS20], Theorem 7) numerically, with an explicit bound on the truncated tail;
:func:`discrete_laplace_epsilon` gives the discrete Laplace mechanism's pure ε.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpopt.errors import InvalidParameterError
from dpopt.privacy.bits import BitStream
from dpopt.privacy.exp_trials import below_exp, geometric

__all__ = [
    "ExactSampler",
    "bernoulli_exp",
    "discrete_gaussian_delta",
    "discrete_gaussian_pmf",
    "discrete_laplace_epsilon",
    "discrete_laplace_pmf",
    "sampler_for",
]

#: ``below(n)``: a uniform integer in {0, ..., n − 1} (n ≥ 1)
Below = Callable[[int], int]

_INT64_MAX = int(np.iinfo(np.int64).max)
#: the truncation point of the profile's sums, in standard deviations beyond the threshold:
#: the neglected tail is below erfc(37/√2)/2 ≈ 1e-300 of the total mass
_TAIL_SIGMAS = 37.0
_CHUNK = 1 << 20


def _rational(value: object, name: str, *, zero: bool = False) -> Fraction:
    """``value`` as an exact positive (or, with ``zero``, non-negative) Fraction (floats are converted exactly), or a one-line refusal."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"{name} must be a positive real number, got a value of type "
                                    f"{type(value).__name__}")
    if isinstance(value, numbers.Rational):
        out = Fraction(int(value.numerator), int(value.denominator))
    else:
        real = float(value)
        if not math.isfinite(real):
            raise InvalidParameterError(f"{name} must be a finite positive number, got {real!r}")
        out = Fraction(real)
    if out < 0 or (out == 0 and not zero):
        raise InvalidParameterError(f"{name} must be {'>=' if zero else '>'} 0, got {value!r}")
    return out


def _size(size: object) -> int:
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral):
        raise InvalidParameterError(f"size must be an integer >= 0, got a value of type {type(size).__name__}")
    if int(size) < 0:
        raise InvalidParameterError(f"size must be >= 0, got {int(size)}")
    return int(size)


# --- CKS20 Algorithm 1: Bernoulli(exp(−γ)) -------------------------------------------------

def _bern_exp_frac(below: Below, num: int, den: int) -> int:
    """Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den ([CKS20] Alg. 1, γ ∈ [0, 1]).

    K counts the trials A_K ~ Bernoulli(γ/K) until the first failure; the result is 1 iff
    K is odd.  Bernoulli(num/(den·K)) is the exact comparison below(den·K) < num.
    """
    k = 1
    while below(den * k) < num:
        k += 1
    return k & 1


def _bern_exp_one(below: Below) -> int:
    """Bernoulli(exp(−1)) ([CKS20] Alg. 1 with γ = 1; its first trial always succeeds)."""
    k = 2
    while below(k) == 0:
        k += 1
    return k & 1


def _bern_exp(below: Below, num: int, den: int) -> int:
    """Bernoulli(exp(−num/den)) for num ≥ 0, den ≥ 1 ([CKS20] Alg. 1, γ > 1 split as
    ⌊γ⌋ trials of Bernoulli(exp(−1)) and one of Bernoulli(exp(−(γ − ⌊γ⌋))))."""
    whole, rest = divmod(num, den)
    for _ in range(whole):
        if not _bern_exp_one(below):
            return 0
    return _bern_exp_frac(below, rest, den)


# --- CKS20 Algorithm 2: discrete Laplace ---------------------------------------------------

def _discrete_laplace(below: Below, t: int, s: int) -> int:
    """One draw with P[x] ∝ exp(−|x|·s/t), for integers s, t ≥ 1 ([CKS20] Alg. 2)."""
    while True:
        u = below(t)
        if not _bern_exp_frac(below, u, t):
            continue
        v = 0
        while _bern_exp_one(below):
            v += 1
        y = (u + t * v) // s
        if below(2):
            if y == 0:
                continue
            return -y
        return y


# --- CKS20 Algorithm 3: discrete Gaussian --------------------------------------------------

def _discrete_gaussian(below: Below, a: int, b: int, t: int, bt: int, den: int) -> int:
    """One draw with P[x] ∝ exp(−x²/(2σ²)), σ² = a/b ([CKS20] Alg. 3).

    Y ~ discrete Laplace of scale t = ⌊σ⌋ + 1 is accepted with probability
    exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y|·b·t − a)² / (2·a·b·t²)); ``bt`` = b·t and
    ``den`` = 2·a·b·t² are precomputed.
    """
    while True:
        y = _discrete_laplace(below, t, 1)
        if _bern_exp(below, (abs(y) * bt - a) ** 2, den):
            return y


# --- vectorised forms of Algorithms 2–3 (numpy arrays of draws) ----------------------------
#
# Each Bernoulli(exp(−x)) step is one exact trial U < e^{−x} on a fresh uniform
# (:mod:`dpopt.privacy.exp_trials`): float bounds decide all but about 2^-35 of the trials and
# the rest are decided exactly.  Rejected candidates are redrawn, so each output has exactly
# the target law.

_EXACT_FLOAT = 2**53
#: the vectorised paths' parameter limits: a discrete Laplace scale num/den with num < 2^40 (the
#: inversion's z·den stays an exact double); a discrete Gaussian σ² = a/b with a < 2^53 (its
#: acceptance exponent is evaluated from exact doubles); denominators below 2^20
_LAPLACE_LIMIT = 1 << 40
_GAUSS_LIMIT = 1 << 53
_DEN_LIMIT = 1 << 20
#: up to this many draws the scalar algorithms are faster than the vectorised path's overhead
_SCALAR_AT_MOST = 8
_BATCH = 1 << 13


def _first_accepted(draw: Callable[[int], np.ndarray], size: int, rate: float) -> np.ndarray:
    """The first ``size`` accepted values of a rejection sampler, drawn in oversized batches.

    ``draw(m)`` returns the accepted values among m independent candidates (in order);
    accepted values are i.i.d. from the target law, so keeping the first ``size`` by position
    (a choice that never looks at a value) leaves them so.  Batches of ~need/rate + 16
    candidates make one round enough almost always, instead of a round per straggler; a batch
    holds at most 2^13 candidates: its arrays (64 KB each) stay in cache and below the allocator's
    threshold for fresh pages.
    """
    parts: list[np.ndarray] = []
    have = 0
    while have < size:
        batch = draw(min(int((size - have) / rate) + 16, _BATCH))
        parts.append(batch)
        have += batch.size
    return np.concatenate(parts)[:size] if parts else np.empty(0, dtype=np.int64)


def _discrete_laplace_vec(bits: BitStream, t: int, s: int, size: int) -> np.ndarray:
    """``size`` draws with P[x] ∝ exp(−|x|·s/t) (t < 2^40).

    |x| is the geometric Z with P[Z ≥ z] = e^{−z·s/t}, drawn by exact inversion
    (:func:`dpopt.privacy.exp_trials.geometric`, the law [CKS20] Alg. 2 builds from Bernoulli
    trials), with a fair sign; a negative zero is rejected, which leaves P[x] ∝ e^{−|x|·s/t}.
    """

    def draw(m: int) -> np.ndarray:
        z, negative = geometric(bits, t, s, m)
        return np.where(negative, -z, z)[~(negative & (z == 0))]

    return _first_accepted(draw, size, (1.0 + math.exp(-s / t)) / 2.0)  # 1 − P[Z = 0]/2


def _gauss_exponents(y: np.ndarray, a: int, b: int, t: int) -> tuple[np.ndarray, Callable[[int], Fraction]]:
    """x = (|y|·b·t − a)²/(2·a·b·t²) per entry as float64 within relative 4·2^-53, and x exactly.

    Where |y|·b·t < 2^53 (and a < 2^53) the difference w is an exact double and x costs three
    correctly rounded operations; elsewhere x is the correctly rounded value of the fraction.
    """
    den = 2 * a * b * t * t
    trusted = np.abs(y) < _EXACT_FLOAT // (b * t)
    w = np.abs(y).astype(np.float64) * float(b * t) - float(a)
    x = w * w / float(den)

    def exact(i: int) -> Fraction:
        wi = abs(int(y[i])) * b * t - a
        return Fraction(wi * wi, den)

    for i in np.flatnonzero(~trusted).tolist():
        x[i] = float(exact(i))
    return x, exact


def _discrete_gaussian_vec(bits: BitStream, a: int, b: int, size: int) -> np.ndarray:
    """``size`` draws with P[x] ∝ exp(−x²·b/(2a)) ([CKS20] Alg. 3, vectorised).

    Y ~ discrete Laplace of scale t = ⌊σ⌋ + 1 is accepted with probability
    exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y|·b·t − a)²/(2·a·b·t²)), one exact trial each.
    """
    t = math.isqrt(a // b) + 1

    def draw(m: int) -> np.ndarray:
        y = _discrete_laplace_vec(bits, t, 1, m)
        x, exact = _gauss_exponents(y, a, b, t)
        return y[below_exp(bits, x, exact)]

    return _first_accepted(draw, size, 0.55)


def bernoulli_exp(gamma: object, *, seed: int | None = None) -> int:
    """One exact Bernoulli(exp(−γ)) trial for a rational γ ≥ 0 ([CKS20] Alg. 1): 1 or 0.

    A float γ is converted exactly.  Without a seed the bits come from the OS CSPRNG; a seed
    gives a reproducible, not secure, stream.
    """
    g = _rational(gamma, "gamma", zero=True)
    return _bern_exp(BitStream(seed).below, g.numerator, g.denominator)


def _as_array(values: list[int]) -> np.ndarray:
    """int64 when every value fits, else an object array of Python ints (nothing is rounded)."""
    if all(-_INT64_MAX <= v <= _INT64_MAX for v in values):
        return np.array(values, dtype=np.int64)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class ExactSampler:
    """Exact discrete Laplace and discrete Gaussian draws on ℤ ([CKS20], Algs. 1–3).

    Parameters
    ----------
    seed : int, optional
        None (default): every bit comes from the operating system's cryptographically secure
        generator (``os.urandom``, buffered).  An integer: bits come from
        ``numpy.random.PCG64DXSM(seed)``, reproducible bit for bit and **not
        cryptographically secure** — for tests and benchmarks only.

    Notes
    -----
    Parameters are converted exactly to fractions once per call.  More than eight draws are
    vectorised (module notes) when the parameters are within the limits above (a discrete
    Gaussian σ² below 2^53, a Laplace scale below 2^40, denominators below 2^20: every grid
    calibration's are), and otherwise use the scalar algorithms in Python integers; both are
    exact.  Results are numpy int64 arrays, or object arrays of Python
    ints when a value exceeds the int64 range.
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise InvalidParameterError(f"seed must be an integer or None, got a value of type "
                                        f"{type(seed).__name__}")
        self._bits = BitStream(None if seed is None else int(seed))
        self.secure = seed is None

    def uniform(self, n: int, size: int) -> np.ndarray:
        """``size`` exactly uniform int64 values in {0, …, n − 1} (1 ≤ n < 2^63)."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= int(n) < 2**63:
            raise InvalidParameterError(f"n must be an integer in [1, 2^63), got {n!r}")
        return self._bits.below_array(int(n), _size(size))

    @property
    def bits(self) -> BitStream:
        """The uniform bit source every draw of this sampler reads (shared, in stream order)."""
        return self._bits

    def discrete_laplace(self, t: object, size: object = 1) -> np.ndarray:
        """``size`` independent draws with P[x] = (1 − e^{−1/t})/(1 + e^{−1/t})·e^{−|x|/t}.

        Parameters
        ----------
        t : int, Fraction or float
            The scale t > 0 (rational; a float is taken at its exact binary value).
        size : int
            Number of draws, ≥ 0.
        """
        scale = _rational(t, "t")
        n = _size(size)
        num, den = scale.numerator, scale.denominator
        if n > _SCALAR_AT_MOST and num < _LAPLACE_LIMIT and den < _DEN_LIMIT:
            return _discrete_laplace_vec(self._bits, num, den, n)
        return _as_array([_discrete_laplace(self._bits.below, num, den) for _ in range(n)])

    def discrete_gaussian(self, sigma2: object, size: object = 1) -> np.ndarray:
        """``size`` independent draws with P[x] ∝ exp(−x²/(2σ²)) on ℤ ([CKS20] Alg. 3).

        Parameters
        ----------
        sigma2 : int, Fraction or float
            The variance parameter σ² > 0 (rational; a float is taken at its exact binary value).
        size : int
            Number of draws, ≥ 0.
        """
        var = _rational(sigma2, "sigma2")
        n = _size(size)
        a, b = var.numerator, var.denominator
        if n > _SCALAR_AT_MOST and a < _GAUSS_LIMIT and b < _DEN_LIMIT:
            return _discrete_gaussian_vec(self._bits, a, b, n)
        t = math.isqrt(a // b) + 1  # ⌊σ⌋ + 1, exactly: ⌊√x⌋ = isqrt(⌊x⌋)
        bt, den, below = b * t, 2 * a * b * t * t, self._bits.below
        return _as_array([_discrete_gaussian(below, a, b, t, bt, den) for _ in range(n)])


def sampler_for(rng: np.random.Generator) -> ExactSampler:
    """The exact sampler a mechanism's generator stands for.

    A :class:`dpopt.privacy.rng.SecureGenerator` (what an unseeded run gets) gives a secure
    sampler that reads the operating system's CSPRNG and never the generator's stream; any
    other generator (a seeded run) gives a reproducible, not secure, sampler seeded from one
    64-bit draw of that generator, so a seeded run is reproducible bit for bit.
    """
    if getattr(rng, "secure", False):
        return ExactSampler(None)
    return ExactSampler(int(rng.integers(0, 2**63)))


# --- probability mass functions (floating point; for tests and reports, not for sampling) ---

def discrete_laplace_pmf(x: np.ndarray, t: float) -> np.ndarray:
    """P[X = x] of the discrete Laplace distribution of scale t."""
    q = math.exp(-1.0 / float(t))
    return (1.0 - q) / (1.0 + q) * np.exp(-np.abs(np.asarray(x, dtype=float)) / float(t))


def discrete_gaussian_pmf(x: np.ndarray, sigma2: float) -> np.ndarray:
    """P[X = x] of the discrete Gaussian with parameter σ² (normaliser summed to 1e-300 relative)."""
    s2 = float(sigma2)
    reach = math.ceil(_TAIL_SIGMAS * math.sqrt(s2)) + 1
    norm = 1.0 + 2.0 * _gauss_sum(1, reach, s2)
    return np.exp(-np.asarray(x, dtype=float) ** 2 / (2.0 * s2)) / norm


# --- privacy profiles ----------------------------------------------------------------------

def discrete_laplace_epsilon(sensitivity: object, t: object) -> float:
    """Pure ε of adding discrete Laplace noise of scale t to an integer query of ℓ1
    sensitivity Δ: ε = Δ / t (exactly tight for integer Δ)."""
    return float(_rational(sensitivity, "sensitivity") / _rational(t, "t"))


def _gauss_sum(lo: int, hi: int, sigma2: float) -> float:
    """Σ_{y=lo}^{hi} exp(−y²/(2σ²)) (0 when lo > hi), summed in chunks."""
    total = 0.0
    for start in range(lo, hi + 1, _CHUNK):
        y = np.arange(start, min(start + _CHUNK, hi + 1), dtype=float)
        total += float(np.sum(np.exp(-(y * y) / (2.0 * sigma2))))
    return total


def _gauss_tail_bound(m: int, sigma2: float) -> float:
    """An upper bound on Σ_{y>m} exp(−y²/(2σ²)) for m ≥ 0: ∫_m^∞ exp(−x²/(2σ²)) dx."""
    sigma = math.sqrt(sigma2)
    return sigma * math.sqrt(math.pi / 2.0) * math.erfc(m / (sigma * math.sqrt(2.0)))


def _upper_mass(c: float, reach: int, sigma2: float) -> float:
    """Σ_{y > c, |y| ≤ reach} exp(−y²/(2σ²)), for |c| < reach."""
    lo = math.floor(c) + 1
    if lo > 0:
        return _gauss_sum(lo, reach, sigma2)
    return 1.0 + _gauss_sum(1, reach, sigma2) + _gauss_sum(1, -lo, sigma2)


def discrete_gaussian_delta(epsilon: object, sensitivity: object, sigma2: object) -> float:
    """δ(ε) of the discrete Gaussian mechanism ([CKS20], Theorem 7), evaluated numerically.

    Adding X ~ N_ℤ(0, σ²) to an integer-valued query of sensitivity Δ (|q(D) − q(D′)| ≤ Δ)
    is (ε, δ)-DP for

        δ = P[X > εσ²/Δ − Δ/2] − e^ε · P[X > εσ²/Δ + Δ/2],

    tight when the two queries differ by exactly Δ.  Both probabilities are sums of
    exp(−y²/(2σ²)) over the integers, normalised by the sum over ℤ; all sums stop at
    |y| ≤ |threshold| + 37σ.  Truncation can only make δ larger except in the first tail,
    to which the bound ∫_M^∞ exp(−x²/(2σ²)) dx (≤ 1e-300 of the total) is added, so the
    result is an upper bound up to float64 rounding.  The cost is O(εσ/Δ·σ + σ) terms.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    sensitivity : float
        Δ > 0 (an integer for the profile to be tight; any positive value is an upper bound
        only if Δ is the largest shift, which for integer queries is an integer).
    sigma2 : float
        σ² > 0.

    Returns
    -------
    float
        δ in [0, 1].
    """
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise InvalidParameterError(f"epsilon must be a real number >= 0, got a value of type "
                                    f"{type(epsilon).__name__}")
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps >= 0.0):
        raise InvalidParameterError(f"epsilon must be finite and >= 0, got {eps!r}")
    delta_q = float(_rational(sensitivity, "sensitivity"))
    s2 = float(_rational(sigma2, "sigma2"))
    a = eps * s2 / delta_q - delta_q / 2.0
    b = eps * s2 / delta_q + delta_q / 2.0
    reach = math.ceil(max(abs(a), abs(b)) + _TAIL_SIGMAS * math.sqrt(s2)) + 1
    norm = 1.0 + 2.0 * _gauss_sum(1, reach, s2)
    first = _upper_mass(a, reach, s2) + _gauss_tail_bound(reach, s2)
    second = _upper_mass(b, reach, s2)
    subtracted = math.exp(eps) * second if second > 0.0 else 0.0
    return min(1.0, max(0.0, (first - subtracted) / norm))
