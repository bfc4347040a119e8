"""Exact discrete Laplace and discrete Gaussian samplers on ℤ, and their privacy profiles.

The samplers follow Canonne, Kamath and Steinke [CKS20] (Algorithms 1–3): a Bernoulli trial
with success probability exp(−γ) for a rational γ (Algorithm 1), the discrete Laplace
distribution P[X = x] ∝ exp(−|x|/t) for a rational scale t (Algorithm 2) and the discrete
Gaussian P[X = x] ∝ exp(−x²/(2σ²)) for a rational σ² (Algorithm 3).  The sampling path uses
Python integers only (parameters are converted once, exactly, to ``fractions.Fraction`` and
then to integer numerators and denominators): no floating-point operation decides any
draw, so the output distribution is exactly the stated one, given a uniform bit source.

The bit source is the operating system's cryptographically secure generator
(``secrets``, read in blocks) unless a seed is given; a seeded sampler draws from
``random.Random(seed)`` (Mersenne Twister), which is reproducible and **not secure**: use it
for tests and benchmarks, never for a release meant to protect anyone.

:func:`discrete_gaussian_delta` evaluates the exact (ε, δ) profile of the discrete Gaussian
mechanism ([CKS20], Theorem 7) numerically, with an explicit bound on the truncated tail;
:func:`discrete_laplace_epsilon` gives the discrete Laplace mechanism's pure ε.
"""

from __future__ import annotations

import math
import numbers
import random
import secrets
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpopt.errors import InvalidParameterError

__all__ = [
    "ExactSampler",
    "bernoulli_exp",
    "discrete_gaussian_delta",
    "discrete_gaussian_pmf",
    "discrete_laplace_epsilon",
    "discrete_laplace_pmf",
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


def bernoulli_exp(gamma: object, *, seed: int | None = None) -> int:
    """One exact Bernoulli(exp(−γ)) trial for a rational γ ≥ 0 ([CKS20] Alg. 1): 1 or 0.

    A float γ is converted exactly.  Without a seed the bits come from ``secrets``; a seed
    gives a reproducible, not secure, ``random.Random(seed)`` stream.
    """
    g = _rational(gamma, "gamma", zero=True)
    return _bern_exp(ExactSampler(seed)._below, g.numerator, g.denominator)


class _SecureBits:
    """``below(n)`` from the operating system's CSPRNG, buffered.

    Bits are fetched 32,768 at a time with ``secrets.token_bytes`` and served as 64-bit words;
    ``below(n)`` takes k = bit_length(n − 1) fresh bits and rejects values ≥ n (exactly
    uniform).  Bits left in a word too short for a request are discarded, which leaves the
    served bits independent and uniform (the choice to discard does not look at them).
    """

    __slots__ = ("_bits", "_left", "_words")

    def __init__(self) -> None:
        self._words: list[int] = []
        self._bits = 0
        self._left = 0

    def _word(self) -> int:
        if not self._words:
            self._words = np.frombuffer(secrets.token_bytes(4096), dtype=np.uint64).tolist()
        return self._words.pop()

    def below(self, n: int) -> int:
        k = (n - 1).bit_length()
        if k > 64:
            while True:
                r = secrets.randbits(k)
                if r < n:
                    return r
        mask = (1 << k) - 1
        while True:
            if self._left < k:
                self._bits, self._left = self._word(), 64
            r = self._bits & mask
            self._bits >>= k
            self._left -= k
            if r < n:
                return r


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
        generator (``secrets.token_bytes``, buffered; ``secrets.randbits`` for draws of more
        than 64 bits).  An integer: bits come from
        ``random.Random(seed)``, reproducible bit for bit and **not cryptographically
        secure** — for tests and benchmarks only.

    Notes
    -----
    Parameters are converted exactly to fractions once per call; the draws themselves use
    integer comparisons only.  Results are numpy int64 arrays, or object arrays of Python
    ints when a value exceeds the int64 range.
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is None:
            self._below: Below = _SecureBits().below
        else:
            if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
                raise InvalidParameterError(f"seed must be an integer or None, got a value of type "
                                            f"{type(seed).__name__}")
            self._below = random.Random(int(seed)).randrange
        self.secure = seed is None

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
        below, num, den = self._below, scale.numerator, scale.denominator
        return _as_array([_discrete_laplace(below, num, den) for _ in range(n)])

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
        t = math.isqrt(a // b) + 1  # ⌊σ⌋ + 1, exactly: ⌊√x⌋ = isqrt(⌊x⌋)
        bt, den, below = b * t, 2 * a * b * t * t, self._below
        return _as_array([_discrete_gaussian(below, a, b, t, bt, den) for _ in range(n)])


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
