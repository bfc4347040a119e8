"""Exact trials "U < e^{−x}" in vector form: the Bernoulli(exp(−x)) step of the exact samplers.

[CKS20] decide a Bernoulli(exp(−x)) trial (their Algorithm 1) by a chain of Bernoulli(x/k)
trials on uniform integers.  Here the same law is decided by *one* uniform real U ∈ [0, 1),
accepted iff U < e^{−x}; the event has probability e^{−x} exactly, so any procedure that
decides it without error draws the same law.  The procedure:

1. **Float bounds decide almost every trial.**  U is read as a 53-bit prefix u (U lies in
   [u/2^53, (u + 1)/2^53)), and e^{−x} is evaluated by :func:`exp_neg` with a proved relative
   error below 2^-40 (see its notes, for an x whose float value is within relative 2^-50 of
   the exact one).  With the guard G = 2^-36 ≫ 2^-40 the trial is accepted when
   (u + 1)/2^53 ≤ ẽ·(1 − G) and rejected when u/2^53 ≥ ẽ·(1 + G); both comparisons are exact
   (products of floats with powers of two and one correctly rounded product, whose rounding
   the guard covers).
2. **The rest exactly.**  An undecided trial (probability about 2G + 2^-52 per trial) goes to
   :class:`LazyUniform`: U's further bits are drawn 64 at a time and e^{−x} is bracketed by
   rational bounds of growing precision (:func:`exp_neg_bounds`, from :mod:`decimal`'s
   correctly rounded ``exp``) until the bracket and U's interval are disjoint, which happens
   with probability 1 (U ≠ e^{−x} almost surely).

:func:`below_exp` runs (1)–(2) on arrays; :func:`geometric` draws Z with
P[Z ≥ z] = e^{−z·r} for a rational r by inversion, Z = max{z : U < e^{−z r}}, whose two
bracketing events are decided the same way.  Both consume the bit stream in a fixed order,
so a seeded stream gives the same draws every time.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpopt.privacy.bits import BitStream

__all__ = ["LazyUniform", "below_exp", "below_exp_one", "exp_neg", "exp_neg_bounds", "exp_neg_one", "geometric"]

#: :func:`exp_neg` is evaluated on [0, EXP_DOMAIN]; beyond, e^{−x} ≤ e^{−EXP_DOMAIN} serves as a bound
EXP_DOMAIN = 64
#: relative guard between a float bound and the uniform's interval (≫ the proved error 2^-44)
GUARD = 2.0**-36
_TWO53 = 2.0**-53
#: a rational below log2(e) = 1.4426950408889634074…
_LOG2E_BELOW = Fraction(1442695040888963, 10**15)
#: up to this many trials :func:`below_exp` runs them one by one in Python floats
_SMALL = 8
_STEPS = 256  # e^{−x} = e^{−k/256}·e^{−r}, r ∈ [0, 1/256)
#: Taylor coefficients (−1)^k/k!, k = 4, …, 1, for Horner's rule on e^{−r}
_TAYLOR = tuple((-1.0) ** k / math.factorial(k) for k in range(4, 0, -1))


@functools.cache
def _table() -> np.ndarray:
    """e^{−k/256} for k = 0, …, 256·EXP_DOMAIN, each the product of e^{−n} and e^{−j/256}
    (k = 256n + j), both doubles within (1 + 2^-60)·2^-53 relative; so each entry is within
    3.0001·2^-53 relative.

    The factors are powers of e^{−1} and e^{−1/256} (:mod:`decimal`'s ``exp``, correctly rounded)
    formed at 40 digits: at most 255 products, each rounded by ≤ 10^-39 relative, leave a factor
    within 3·10^-37 of the exact value before it is rounded to the nearest double.  Two calls
    to ``exp`` keep the first use of the table well under a millisecond."""
    ctx = decimal.Context(prec=40, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX)

    def powers(base: decimal.Decimal, count: int) -> np.ndarray:
        out = [decimal.Decimal(1)]
        for _ in range(count - 1):
            out.append(ctx.multiply(out[-1], base))
        return np.array([float(v) for v in out])

    whole = powers(ctx.exp(decimal.Decimal(-1)), EXP_DOMAIN + 1)
    frac = powers(ctx.exp(ctx.divide(decimal.Decimal(-1), _STEPS)), _STEPS)
    return np.outer(whole, frac).ravel()[:_STEPS * EXP_DOMAIN + 1].copy()


def exp_neg(x: np.ndarray) -> np.ndarray:
    """e^{−x} for float64 x ∈ [0, EXP_DOMAIN], with relative error below 2^-46.

    Notes
    -----
    With y = 256·x (exact), k = ⌊y⌋ and r = (y − k)/256 ∈ [0, 1/256) (exact: Sterbenz's lemma
    for k ≥ 1, and scaling by a power of two), e^{−x} = e^{−k/256}·e^{−r}: a table entry (within
    3.0001·2^-53, :func:`_table`) times Horner's rule on the degree-4 Taylor polynomial of e^{−r}
    (truncation r^5/5! < 2^-46.9; the final addition of 1 rounds by ≤ 2^-53 and the earlier terms,
    all below r ≤ 2^-8 in size, add < 0.1·2^-53), and one product (2^-53): below 5.2·2^-53 +
    2^-46.9 < 2^-46.  An input x̃ within relative 4·2^-53 of the exact x ≤ 64 moves e^{−x} by a
    further factor e^{256·2^-53} − 1 < 2^-44.9, so the value is within 2^-44 of e^{−x}: far inside
    the :data:`GUARD` :func:`below_exp` keeps.
    """
    y = x * float(_STEPS)
    k = y.astype(np.intp)
    r = (y - k) * (1.0 / _STEPS)
    p = _TAYLOR[0] * r
    for c in _TAYLOR[1:]:
        p += c
        p *= r
    p += 1.0
    p *= _table()[k]
    return p


def exp_neg_one(x: float) -> float:
    """:func:`exp_neg` of one Python float, by the same operations in the same order (so the same
    double and the same error bound), without numpy's per-call overhead."""
    y = x * float(_STEPS)
    k = int(y)
    r = (y - k) * (1.0 / _STEPS)
    p = _TAYLOR[0] * r
    for c in _TAYLOR[1:]:
        p += c
        p *= r
    p += 1.0
    return p * _table_list()[k]


@functools.cache
def _table_list() -> list[float]:
    return _table().tolist()


def exp_neg_bounds(x: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    """Rational lo ≤ e^{−x} ≤ hi for a rational x ≥ 0, about ``digits`` significant digits apart.

    For a moderate x: the bounds are exact fractions (at x = 10^6 they have some 430,000 digits);
    :class:`LazyUniform` decides a large x without them.

    x is bracketed by decimals x_lo ≤ x ≤ x_hi (10^-(digits+2) apart, built exactly from strings:
    no operation rounds them), and e^{−x_hi} ≤ e^{−x} ≤ e^{−x_lo}; each is computed by
    :mod:`decimal`'s ``exp`` correctly rounded (half even) to ``digits`` digits, so the true
    values lie between the neighbouring representable numbers (``next_minus``, ``next_plus``).
    """
    ctx = decimal.Context(prec=digits, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX,
                          rounding=decimal.ROUND_HALF_EVEN)
    scale = digits + 2
    num = x.numerator * 10**scale
    neg_hi = decimal.Decimal(f"-{-(-num // x.denominator)}E-{scale}")  # −x_hi: built from a string, exactly
    neg_lo = decimal.Decimal(f"-{num // x.denominator}E-{scale}")
    lo = ctx.next_minus(ctx.exp(neg_hi))
    hi = ctx.next_plus(ctx.exp(neg_lo))
    return Fraction(max(lo, decimal.Decimal(0))), Fraction(hi)


class LazyUniform:
    """A uniform real U ∈ [0, 1) known by a prefix of its bits, extended 64 bits at a time on demand.

    Parameters
    ----------
    bits : BitStream
        Where further bits come from.
    prefix, width : int
        U ∈ [prefix/2^width, (prefix + 1)/2^width).
    """

    __slots__ = ("_bits", "prefix", "width")

    def __init__(self, bits: BitStream, prefix: int, width: int) -> None:
        self._bits, self.prefix, self.width = bits, int(prefix), int(width)

    def below_exp(self, x: Fraction, shift: int = 0) -> bool:
        """Whether U < e^{−x}·2^shift, decided exactly (x ≥ 0 rational).

        While e^{−x}·2^shift ≤ 2^-k (k = ⌊x·L⌋ − shift with a rational L < log2 e) lies below U's
        known resolution 2^-width, a non-zero prefix decides it (U ≥ 2^-width > 2^-k) and a zero
        prefix is extended: so the rational bounds below are only ever needed for an x of a few
        hundred at most, whatever x is (an x of 2^80 would make them numbers of 2^80 digits)."""
        k = math.floor(x * _LOG2E_BELOW) - shift
        while k > self.width:
            if self.prefix > 0:
                return False
            self._extend()
        digits = 30
        scale = Fraction(2) ** shift
        while True:
            lo, hi = exp_neg_bounds(x, digits)
            if Fraction(self.prefix + 1, 1 << self.width) <= lo * scale:
                return True
            if Fraction(self.prefix, 1 << self.width) >= hi * scale:
                return False
            self._extend()
            digits += 20

    def _extend(self) -> None:
        """Read 64 more bits of U."""
        self.prefix = (self.prefix << 64) | int(self._bits.words64(1)[0])
        self.width += 64


def _prefixes(bits: BitStream, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` uniforms as 53-bit prefixes (uint64) and their low bits (uint64 < 2^11, independent)."""
    words = bits.words64(size)
    return words >> np.uint64(11), words & np.uint64(0x7FF)


def below_exp(bits: BitStream, x: np.ndarray, exact: Callable[[int], Fraction],
              shift: np.ndarray | None = None) -> np.ndarray:
    """Exact trials U_i < e^{−x_i}·2^{shift_i}, one fresh uniform each (module notes).

    Parameters
    ----------
    bits : BitStream
        The bit source.
    x : ndarray of float64
        x_i ≥ 0 within relative 4·2^-53 of the exact exponent (:func:`exp_neg`'s notes).
    exact : callable
        ``exact(i)`` is the exact exponent of entry i (a Fraction); called only for the rare
        trials the float bounds leave undecided.
    shift : ndarray of int, optional
        Powers of two (0 … 62) scaling the probability, which must stay ≤ 1.

    Returns
    -------
    ndarray of bool
    """
    if x.size <= _SMALL:  # the same trials one by one in Python floats: less overhead
        words = bits.words64(x.size).tolist()
        shifts = [0] * x.size if shift is None else [int(v) for v in shift.tolist()]
        return np.array([below_exp_one(bits, w >> 11, xi, s, functools.partial(exact, i))
                         for i, (w, xi, s) in enumerate(zip(words, x.tolist(), shifts, strict=True))], dtype=bool)
    u, _ = _prefixes(bits, x.size)
    return _decide(bits, u, x, exact, shift)


def below_exp_one(bits: BitStream, u: int, x: float, shift: int, exact: Callable[[], Fraction]) -> bool:
    """One trial U < e^{−x}·2^shift for U with the 53-bit prefix u (see :func:`below_exp`)."""
    p = math.ldexp(exp_neg_one(min(x, float(EXP_DOMAIN))), shift)
    low = u * _TWO53
    if x <= EXP_DOMAIN and low + _TWO53 <= p * (1.0 - GUARD):
        return True
    if low >= p * (1.0 + GUARD):
        return False
    return LazyUniform(bits, u, 53).below_exp(exact(), shift)


def _decide(bits: BitStream, u: np.ndarray, x: np.ndarray, exact: Callable[[int], Fraction],
            shift: np.ndarray | None) -> np.ndarray:
    """U < e^{−x}·2^shift for U with 53-bit prefixes u (see :func:`below_exp`)."""
    huge = x > EXP_DOMAIN
    p = exp_neg(np.minimum(x, float(EXP_DOMAIN)))
    if shift is not None:
        p = np.ldexp(p, shift)
    low = u.astype(np.float64) * _TWO53
    accept = (low + _TWO53 <= p * (1.0 - GUARD)) & ~huge
    reject = low >= p * (1.0 + GUARD)
    for i in np.flatnonzero(~(accept | reject)).tolist():
        s = 0 if shift is None else int(shift[i])
        accept[i] = LazyUniform(bits, int(u[i]), 53).below_exp(exact(i), s)
    return accept


def geometric(bits: BitStream, num: int, den: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` draws of Z with P[Z ≥ z] = e^{−z·den/num} (z ∈ ℕ), and a fair sign bit for each.

    Inversion: Z = max{z : U < e^{−z·den/num}} for one uniform U per draw.  A float estimate
    ẑ = ⌊−ln(U)·num/den⌋ is certified by deciding U < e^{−ẑ·den/num} and U ≥ e^{−(ẑ+1)·den/num}
    as in :func:`below_exp` (same uniform); a draw the bounds leave undecided is found exactly
    by :class:`LazyUniform`, searching from ẑ.  Needs num < 2^40 (so z·den, at most about 38·num
    for the z a 53-bit prefix reaches, is an exact double and z·den/num one correctly rounded
    division).  The sign is bit 0 of the uniform's 11 unused low bits.
    """
    u, low_bits = _prefixes(bits, size)
    uf = u.astype(np.float64)
    z = np.floor(np.log((uf + 0.5) * _TWO53) * -(num / den))
    lower = z * den / num
    inside = lower <= EXP_DOMAIN
    p = exp_neg(np.minimum(lower, float(EXP_DOMAIN)))
    low = uf * _TWO53
    below = (low + _TWO53 <= p * (1.0 - GUARD)) & inside
    above = low >= p * (_step(den, num) * (1.0 + GUARD))
    out = z.astype(np.int64)
    r = Fraction(den, num)
    for i in np.flatnonzero(~(below & above)).tolist():
        out[i] = _geometric_exact(LazyUniform(bits, int(u[i]), 53), r, int(out[i]))
    return out, (low_bits & np.uint64(1)).astype(bool)


@functools.cache
def _step(den: int, num: int) -> float:
    """A double ≥ e^{−den/num}: if p ≥ e^{−z·den/num}·(1 − 2^-44), then p·_step·(1 + GUARD), rounded
    twice, is ≥ e^{−(z+1)·den/num} (the roundings and 2^-44 are far inside the guard)."""
    lo, hi = exp_neg_bounds(min(Fraction(den, num), Fraction(EXP_DOMAIN)), 30)  # e^{−64} bounds any smaller one
    return math.nextafter(float(hi), math.inf)


def _geometric_exact(uniform: LazyUniform, r: Fraction, start: int) -> int:
    """max{z ≥ 0 : U < e^{−z·r}}, searching from ``start`` (each step an exact comparison)."""
    z = max(start, 0)
    while z > 0 and not uniform.below_exp(z * r):
        z -= 1
    while uniform.below_exp((z + 1) * r):
        z += 1
    return z
