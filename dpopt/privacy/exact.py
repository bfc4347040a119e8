"""Exact discrete Laplace and discrete Gaussian samplers on ℤ, and their privacy profiles.

The samplers follow Canonne, Kamath and Steinke [CKS20] (Algorithms 1–3): a Bernoulli trial
with success probability exp(−γ) for a rational γ (Algorithm 1), the discrete Laplace
distribution P[X = x] ∝ exp(−|x|/t) for a rational scale t (Algorithm 2) and the discrete
Gaussian P[X = x] ∝ exp(−x²/(2σ²)) for a rational σ² (Algorithm 3).  The sampling path uses
Python integers only (parameters are converted once, exactly, to ``fractions.Fraction`` and
then to integer numerators and denominators): no floating-point operation decides any
draw, so the output distribution is exactly the stated one, given a uniform bit source.

The bit source (:class:`dpopt.privacy.bits.BitStream`) is the operating system's
cryptographically secure generator unless a seed is given; a seeded sampler draws from
``numpy.random.PCG64DXSM(seed)``, which is reproducible and **not secure**: use it for
tests and benchmarks, never for a release meant to protect anyone.  The draws are
vectorised over numpy integer arrays (fast enough to be every mechanism's noise), with
the scalar forms of the algorithms kept for parameters beyond 2^40.

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


# --- vectorised forms of Algorithms 1–3 (numpy integer arithmetic on arrays of draws) -------
#
# Every Bernoulli trial below is decided exactly: on integers by a uniform integer compared
# with an integer numerator, and on the discrete Gaussian's acceptance probability (whose
# numerator and denominator can exceed 64 bits) by a float64 comparison whose error is
# bounded far below the guard, with the rare undecided trial resolved in Python integers.
# Rejected draws are redrawn, so each output has exactly the target law.

#: relative guard around a float64 evaluation of a probability whose error is below 2^-49
_GUARD = 2.0**-40
_EXACT_FLOAT = 2**53
#: acceptance exponents at or beyond this are decided by the scalar algorithm (no int64 overflow)
_HUGE_EXPONENT = 2.0**40
#: the vectorised paths' parameter limits: a discrete Laplace scale num/den with num < 2^40 keeps
#: u + t·v in int64; a discrete Gaussian σ² = a/b with a < 2^53 keeps the acceptance's float
#: evaluation exact in its inputs; denominators stay below 2^20
_LAPLACE_LIMIT = 1 << 40
_GAUSS_LIMIT = 1 << 53
_DEN_LIMIT = 1 << 20
#: up to this many draws the scalar algorithms are faster than the vectorised loops' overhead
_SCALAR_AT_MOST = 24


def _bern_exp_frac_vec(bits: BitStream, num: np.ndarray, den: int) -> np.ndarray:
    """Bernoulli(exp(−num/den)) per entry, 0 ≤ num ≤ den ([CKS20] Alg. 1, vectorised).

    Trial K is Bernoulli(num/(den·K)) = Bernoulli(num/den) ∧ Bernoulli(1/K) (independent);
    every live entry is at the same K, so the bounds are scalars.
    """
    result = np.empty(num.size, dtype=bool)
    k = 1
    alive = np.arange(num.size)
    while alive.size:
        hit = bits.below_array(den, alive.size) < num[alive]
        if k > 1:
            hit &= bits.below_array(k, alive.size) == 0
        stop = alive[~hit]
        result[stop] = (k & 1) == 1
        alive = alive[hit]
        k += 1
    return result


def _bern_exp_one_vec(bits: BitStream, size: int) -> np.ndarray:
    """Bernoulli(exp(−1)) × ``size`` ([CKS20] Alg. 1 with γ = 1: trial K succeeds w.p. 1/K)."""
    result = np.empty(size, dtype=bool)
    k = 2
    alive = np.arange(size)
    while alive.size:
        hit = bits.below_array(k, alive.size) == 0
        stop = alive[~hit]
        result[stop] = (k & 1) == 1
        alive = alive[hit]
        k += 1
    return result


def _geometric_vec(bits: BitStream, size: int) -> np.ndarray:
    """The number of Bernoulli(exp(−1)) successes before the first failure, × ``size``."""
    v = np.zeros(size, dtype=np.int64)
    alive = np.arange(size)
    while alive.size:
        alive = alive[_bern_exp_one_vec(bits, alive.size)]
        v[alive] += 1
    return v


def _first_accepted(draw: Callable[[int], np.ndarray], size: int, rate: float) -> np.ndarray:
    """The first ``size`` accepted values of a rejection sampler, drawn in oversized batches.

    ``draw(m)`` returns the accepted values among m independent candidates (in order);
    accepted values are i.i.d. from the target law, so keeping the first ``size`` by position
    (a choice that never looks at a value) leaves them so.  Batches of ~need/rate + 64
    candidates make one round enough almost always, instead of a round per straggler.
    """
    parts: list[np.ndarray] = []
    have = 0
    while have < size:
        batch = draw(int((size - have) / rate) + 64)
        parts.append(batch)
        have += batch.size
    return np.concatenate(parts)[:size] if parts else np.empty(0, dtype=np.int64)


def _discrete_laplace_vec(bits: BitStream, t: int, s: int, size: int) -> np.ndarray:
    """``size`` draws with P[x] ∝ exp(−|x|·s/t) ([CKS20] Alg. 2, vectorised; t < 2^40)."""

    def draw(m: int) -> np.ndarray:
        u = bits.below_array(t, m)
        u = u[_bern_exp_frac_vec(bits, u, t)]
        y = (u + np.int64(t) * _geometric_vec(bits, u.size)) // s
        negative = bits.below_array(2, u.size) == 1
        return np.where(negative, -y, y)[~(negative & (y == 0))]

    return _first_accepted(draw, size, 0.55)


def _resolve(bits: BitStream, p: Fraction, u: int) -> bool:
    """Exactly: is the uniform real (u + V)/2^32 below p, V uniform on [0, 1) drawn lazily?"""
    q = p * (1 << 32) - u
    while True:
        if q <= 0:
            return False
        if q >= 1:
            return True
        v = int(bits.words64(1)[0])
        q = q * (1 << 64) - v
        if q >= 1:
            return True
        if q <= 0:
            return False


def _bern_guarded(bits: BitStream, p_float: np.ndarray, trusted: np.ndarray,
                  exact: Callable[[int], Fraction]) -> np.ndarray:
    """Bernoulli(p) per entry from a uniform real U: decided by float64 bounds on U and p
    where ``trusted`` says p_float is within relative 2^-49 of p, else in exact arithmetic."""
    u = bits.unit32(p_float.size)
    low, high = u * 2.0**-32, (u + 1.0) * 2.0**-32
    below = high <= p_float * (1.0 - _GUARD)
    above = low >= p_float * (1.0 + _GUARD)
    result = below & trusted
    for i in np.flatnonzero(~trusted | ~(below | above)).tolist():
        result[i] = _resolve(bits, exact(i), int(u[i]))
    return result


def _gauss_accept_vec(bits: BitStream, y: np.ndarray, a: int, b: int, t: int) -> np.ndarray:
    """Bernoulli(exp(−(|y|·b·t − a)²/(2·a·b·t²))) per entry ([CKS20] Alg. 3's acceptance).

    x = w²/D (w = |y|·b·t − a, D = 2abt²) may exceed 1: the trial is split into m = ⌊x̃⌋ + 2
    trials of Bernoulli(exp(−x/m)) (x̃ the float value, |x − x̃| < 1, so x/m ≤ 1), each by
    Alg. 1 with Bernoulli(x/(m·K)) decided by :func:`_bern_guarded`; x̃ ≥ 2^40 (a far tail)
    goes to the scalar algorithm.
    """
    trusted = (np.abs(y) < _EXACT_FLOAT // (b * t)) & (a < _EXACT_FLOAT)
    w = np.abs(y).astype(np.float64) * float(b * t) - float(a)  # exact where trusted
    x = w * w / float(2 * a * b * t * t)
    for i in np.flatnonzero(~trusted).tolist():  # rare: x correctly rounded from integers
        wi = abs(int(y[i])) * b * t - a
        x[i] = float(Fraction(wi * wi, 2 * a * b * t * t))
    accepted = np.ones(y.size, dtype=bool)
    huge = x >= _HUGE_EXPONENT
    for i in np.flatnonzero(huge).tolist():  # far tails: the scalar Alg. 1 in Python integers
        wi = abs(int(y[i])) * b * t - a
        accepted[i] = bool(_bern_exp(bits.below, wi * wi, 2 * a * b * t * t))
    m = np.where(huge, 0, np.floor(np.where(huge, 0.0, x)).astype(np.int64) + 2)
    alive = np.arange(y.size)
    step = 0
    while alive.size:
        alive = alive[m[alive] > step]
        if not alive.size:
            break
        k = 1
        odd = np.zeros(alive.size, dtype=bool)
        live = np.arange(alive.size)
        while live.size:  # Alg. 1 on x/m for the entries still in this factor's loop
            ids = alive[live]
            p = x[ids] / (m[ids] * float(k))

            def exact(i: int, ids: np.ndarray = ids, k: int = k) -> Fraction:
                j = int(ids[i])
                wi = abs(int(y[j])) * b * t - a
                return Fraction(wi * wi, 2 * a * b * t * t * int(m[j]) * k)

            hit = _bern_guarded(bits, p, trusted[ids], exact)
            stop = live[~hit]
            odd[stop] = (k & 1) == 1
            live = live[hit]
            k += 1
        accepted[alive[~odd]] = False
        alive = alive[odd]
        step += 1
    return accepted


def _discrete_gaussian_vec(bits: BitStream, a: int, b: int, size: int) -> np.ndarray:
    """``size`` draws with P[x] ∝ exp(−x²·b/(2a)) ([CKS20] Alg. 3, vectorised)."""
    t = math.isqrt(a // b) + 1

    def draw(m: int) -> np.ndarray:
        y = _discrete_laplace_vec(bits, t, 1, m)
        return y[_gauss_accept_vec(bits, y, a, b, t)]

    return _first_accepted(draw, size, 0.7)


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
    Parameters are converted exactly to fractions once per call.  More than a couple of
    dozen draws are vectorised over numpy integer arrays when the parameters are within the
    limits above (a discrete
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
