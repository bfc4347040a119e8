"""Exact private selection on a public score grid: the exponential mechanism and report-noisy-min.

A noisy argmin over floating-point scores with floating-point noise (a Gumbel or Laplace
draw per candidate) has output probabilities that depend on the bits of the scores in ways
the analysis does not cover (Mironov, CCS 2012, for the additive case).  dpopt therefore
decides every selection on *integers*:

1. **Scores on a public grid.**  With Δ the sensitivity of every score (replace-one, either
   direction: the scores need not be monotone) and B the number of independent blocks a
   candidate's score is the sum of (B = 1 for a plain vertex list), the grid is the power of
   two γ = :func:`dpopt.privacy.grid.grid_step` (min(Δ, 2Δ/ε₀), B) (γ·B ≤ Δ/256, and γ at most
   1/256 of the noise scale; public constants only),
   and the integer score of candidate i is k_i = round(s_i/γ) (half to even, clamped to
   ±2^52; NaN counts as the clamp's top, never preferred).  Rounding moves each block's score
   by ≤ γ/2, so the integer scores of neighbours differ by at most
   D = ⌊Δ/γ⌋ + B grid units (an integer): the selection is calibrated to the grid-adjusted
   sensitivity Δ' = D·γ ≤ Δ + B·γ ≤ Δ(1 + 2^-8) (:func:`grid_sensitivity`).

2. **"gumbel": the exponential mechanism, sampled exactly** (McSherry & Talwar 2007, [MT07]).
   With the public temperature β = 2Δ'/ε₀ (value units) and η = γ/β rounded *down* to a
   dyadic rational (relative error ≤ 2^-24; smaller η only adds noise), candidate i is
   chosen with probability

       P[i] = exp(−η k_i) / Σ_j exp(−η k_j).

   It is sampled by rejection from a power-of-two envelope: with d_i = k_i − k_min,
   x_i = η d_i and e_i = min(⌊x_i log2 e⌋, T) (computed from below, so 2^{−e_i} ≥ e^{−x_i}),
   candidate i is proposed with probability c_i/C, c_i = 2^{T−e_i} an integer and C = Σ c_j
   (one exact uniform integer below C, located in the cumulative sums), and accepted with
   probability e^{−x_i}·2^{e_i} ≤ 1, one exact trial U < e^{−x_i}·2^{e_i}
   (:func:`dpopt.privacy.exp_trials.below_exp`: float bounds with a proved error decide it,
   exact rational bounds and further bits of U decide what they leave open).  Each round
   accepts i with probability (c_i/C)·e^{−x_i}2^{e_i} = 2^T e^{−x_i}/C, proportional to
   exp(−η k_i) and independent of earlier rounds, so the accepted index has exactly the law
   above; a round accepts with probability at least about 1/2 (for e_i < T the acceptance is
   above 1/2), whatever the scores.  T = 62 − ⌈log2(rows·n)⌉ keeps every sum below 2^62.
   Proposals are drawn in batches and the *first* accepted proposal of the batch is returned,
   which is the same sequential procedure.  Rows of a 2-D score array (independent blocks)
   are sampled independently, which samples the exponential mechanism over tuples, whose
   weight exp(−η Σ_b k_{b,v_b}) factorizes.

   *Privacy.*  For neighbours with integer scores k, k′ (|k_i − k′_i| ≤ D for every
   candidate, a tuple's total included), log P[i] − log P′[i] = −η(k_i − k′_i) + log(Z′/Z),
   and log(Z′/Z) ∈ [−ηD, ηD]; so the mechanism is 2ηD ≤ ε₀-DP ([MT07] Thm. 6).  The same
   identity shows the log-ratio ranges over an interval of width
   max_i η(k′_i − k_i) − min_i η(k′_i − k_i) ≤ 2ηD ≤ ε₀: the mechanism is ε₀-bounded-range
   (Durfee & Rogers 2019, Def. 3 / Lemma 3.1), hence (ε₀²/8)-zCDP (Cesar & Rogers 2021,
   Lemma 3.2) — the accounting factor 1/8 of :mod:`dpopt.privacy.noisy_max`.

   *Running time* is O(rows·n) for the envelope plus a random number of proposals (about 2
   per row at most in expectation; it depends on the scores); the output law does not.

3. **"laplace": report-noisy-min with exact discrete Laplace noise.**  With the public
   scale t = β/γ (grid units, the same β), the output is argmin_i (k_i + L_i), L_i i.i.d.
   discrete Laplace P[L = l] ∝ exp(−|l|/t) ([CKS20] Alg. 2, exact), ties broken uniformly at
   random among the minimisers with exact uniform integers.

   *Privacy* (ε₀ = 2D/t).  Random tie-breaking is the same as adding to every candidate an
   independent U_j ~ Uniform[0, 1) and taking argmin_j (k_j + L_j + U_j): since k_j + L_j is
   an integer, the order of the sums is the lexicographic order of (k_j + L_j, U_j), and U
   picks a uniform minimiser; ties of the sums have probability 0.  N_j = L_j + U_j has the
   density f(z) = P[L = ⌊z⌋].  Fix i and the others' noise; i wins iff N_i < c with
   c = min_{j≠i}(k_j + N_j) − k_i.  On a neighbour, c′ ≥ c − 2D (k′_i ≤ k_i + D and each
   k′_j ≥ k_j − D).  Since 2D is an integer and |l − 2D| ≤ |l| + 2D,
   f(z − 2D) = P[L = ⌊z⌋ − 2D] ≥ e^{−2D/t} f(z), so
   P[N_i < c′] ≥ P[N_i < c − 2D] = ∫_{z<c} f(z − 2D) dz ≥ e^{−2D/t} P[N_i < c].  Integrating
   over the others' noise, P′[i] ≥ e^{−ε₀} P[i], and symmetrically: ε₀-DP (the continuous
   argument of Dwork & Roth 2014, Claim 3.9, made exact for integer noise; non-monotone
   scores cost the factor 2), hence (ε₀²/2)-zCDP (Bun & Steinke 2016, Prop. 3.3).

Everything computed from the selected index afterwards (the Frank–Wolfe step, the next
gradient) is post-processing.  All randomness comes from one
:class:`dpopt.privacy.exact.ExactSampler` (:func:`dpopt.privacy.exact.sampler_for` of the
run's generator): an unseeded run reads the OS CSPRNG and draws nothing from the
generator's PCG64 stream.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.bits import BitStream
from dpopt.privacy.exact import ExactSampler, sampler_for
from dpopt.privacy.exp_trials import below_exp, below_exp_one
from dpopt.privacy.grid import grid_step

__all__ = [
    "BoundSelector",
    "ExactSelector",
    "bernoulli_exp_dyadic",
    "dyadic_ceil",
    "dyadic_floor",
    "exponential_mechanism",
    "grid_sensitivity",
    "report_noisy_min",
    "report_noisy_min_rows",
    "score_units",
    "selection_grid",
    "uniform_index",
]

Rule = Literal["laplace", "gumbel"]
_LIMIT = 2**52
#: x = η·d is split at this many nats: numpy handles exp(−min(x, 32)), Python ints the rest
_SPLIT = 32
#: η is rounded down to a multiple of 2^-m with η·2^m ≥ 2^_ETA_BITS (relative error ≤ 2^-24)
_ETA_BITS = 24
_MAX_DYADIC = 50
#: η above this is clamped (a smaller η is always private; such an η is a noiseless argmin)
_MAX_ETA = 2**30
#: proposals per rejection round, in total over the pending rows
_ROUND = 4096
#: a double below log2(e)·(1 − 2^-46) (float(log2 e) is within 2^-52 of it)
_LOG2E_BELOW = 1.4426950408889634 * (1.0 - 2.0**-45)


# ----------------------------------------------------------------------------- the grid


def selection_grid(sensitivity: float, blocks: int = 1, scale: float | None = None) -> float:
    """The public score grid γ = ``grid_step(min(Δ, β), B)``: rounding B block scores adds
    ≤ B·γ ≤ Δ/256 to the sensitivity, and with the (pre-grid) noise scale β = 2Δ/ε₀ given,
    γ ≤ β/256 too, so that a nearly noiseless selection (ε₀ > 2) still tells apart scores
    much closer than Δ/256."""
    reach = sensitivity if scale is None else min(sensitivity, scale)
    return grid_step(reach, float(blocks))


def grid_sensitivity(sensitivity: float, gamma: float, blocks: int = 1) -> int:
    """D = ⌊Δ/γ⌋ + B: the integer sensitivity (grid units) of rounded scores whose exact values
    move by ≤ Δ, each the sum of B rounded block scores (module notes, item 1)."""
    return math.floor(Fraction(sensitivity) / Fraction(gamma)) + int(blocks)


def score_units(scores: np.ndarray, gamma: float) -> np.ndarray:
    """Integer scores round(s/γ) (half to even) as int64, clamped to ±2^52; NaN maps to +2^52."""
    s = np.asarray(scores, dtype=np.float64)
    units = np.rint(s / gamma)
    np.fmin(units, float(_LIMIT), out=units)  # fmin(NaN, L) = L
    np.fmax(units, -float(_LIMIT), out=units)
    return units.astype(np.int64)


# ----------------------------------------------------------------------------- exact trials


def uniform_index(sampler: ExactSampler, n: int) -> int:
    """One exactly uniform index in {0, …, n − 1} from ``sampler``'s bits."""
    return int(sampler.uniform(int(n), 1)[0])


def bernoulli_exp_dyadic(sampler: ExactSampler, num: np.ndarray, bits: int) -> np.ndarray:
    """Exact Bernoulli(exp(−num/2^bits)) per entry of an int64 array num ≥ 0 (bits ≤ 50): one
    exact trial U < e^{−x} each (:func:`dpopt.privacy.exp_trials.below_exp`)."""
    num = np.asarray(num, dtype=np.int64)
    return below_exp(sampler.bits, num.astype(np.float64) * 2.0**-bits, lambda i: Fraction(int(num[i]), 1 << bits))


def dyadic_floor(value: Fraction) -> tuple[int, int]:
    """(a, m) with a/2^m ≤ ``value`` the largest such with m chosen so that a ≥ 2^24 when
    possible (m ≤ 50); ``value`` is first clamped to 2^30.  The last value's result is kept
    (a selector passes the same η at every step; hashing a Fraction would cost more)."""
    global _LAST_DYADIC
    last = _LAST_DYADIC
    if last[0] is value:
        return last[1]
    out = _dyadic_floor(value)
    _LAST_DYADIC = (value, out)  # one rebinding: a concurrent reader sees the old pair or the new
    return out


_LAST_DYADIC: tuple[object, tuple[int, int]] = (None, (0, 0))


def _dyadic_floor(value: Fraction) -> tuple[int, int]:
    v = min(Fraction(value), Fraction(_MAX_ETA))
    if v <= 0:
        return 0, 0
    m = min(_MAX_DYADIC, max(0, _ETA_BITS - math.floor(math.log2(v))))
    return math.floor(v * (1 << m)), m


def dyadic_ceil(value: Fraction, bits: int = 32) -> Fraction:
    """The smallest multiple of 2^-m that is ≥ ``value`` > 0, with m chosen so that its
    numerator has about ``bits`` bits (so the discrete Laplace sampler stays vectorised)."""
    v = Fraction(value)
    m = min(39, max(0, bits - 1 - math.floor(math.log2(v))))
    return Fraction(math.ceil(v * (1 << m)), 1 << m)


# ----------------------------------------------------------------------------- the rules


def _envelope(d: np.ndarray, eta: float, top: int, y: np.ndarray | None = None,
              e: np.ndarray | None = None) -> np.ndarray:
    """e_i = min(⌊η·d_i·log2(e)⌋, top) as int64 for integers 0 ≤ d_i ≤ 2^53 (int64 or float64),
    computed from below: the two rounded products stay below η·d_i·log2(e) because the constant
    is below log2(e)·(1 − 2^-46).  Written into ``e`` when given, with ``y`` (float64) as scratch."""
    y = np.multiply(d, eta * _LOG2E_BELOW, out=y, dtype=np.float64)  # d as a double is exact: d ≤ 2^53
    np.minimum(y, float(top), out=y)
    if e is None:
        return y.astype(np.int64)
    np.copyto(e, y, casting="unsafe")  # y ≥ 0: truncation is ⌊y⌋
    return e


def _cumulative(e: np.ndarray, top: int, out: np.ndarray | None = None) -> np.ndarray:
    """The cumulative sums of c_j = 2^(top − e_j) ≥ e^{−x_j}·2^top (int64; into ``out`` when given)."""
    out = np.right_shift(np.int64(1 << top), e, out=out)
    return np.cumsum(out, out=out)


def _exponent(a: int, d: int, m: int) -> Fraction:
    """x = η'·d exactly, η' = a/2^m."""
    return Fraction(a * d, 1 << m)


def _top(candidates: int) -> int:
    """T = 62 − ⌈log2(candidates)⌉: Σ c ≤ candidates·2^T ≤ 2^62."""
    return 62 - (candidates - 1).bit_length()


def _draw_one(bits: BitStream, cum: np.ndarray, d: np.ndarray, e: np.ndarray, a: int, m: int) -> int:
    """The rejection rounds of one row (module notes, item 2), one proposal at a time in Python:
    propose j with probability c_j/C (a uniform integer below C = cum[−1] located in the
    cumulative sums), accept it with probability e^{−x_j}·2^{e_j}, x_j = d_j·a/2^m."""
    total, eta_f = int(cum[-1]), a / 2.0**m
    while True:
        j = int(cum.searchsorted(bits.below(total), "right"))
        u = bits.word64() >> 11
        dj = int(d[j])  # exact: an integer ≤ 2^53 (int64 or float64)
        if below_exp_one(bits, u, dj * eta_f, int(e[j]), functools.partial(_exponent, a, dj, m)):
            return j


def exponential_mechanism(sampler: ExactSampler, units: np.ndarray, eta: Fraction) -> np.ndarray:
    """One exact exponential-mechanism draw per row: P[j] ∝ exp(−η'·units[r, j]) (module notes).

    Parameters
    ----------
    sampler : ExactSampler
        The bit source.
    units : ndarray of int64, shape (rows, n) or (n,)
        Integer scores (smaller is better).
    eta : Fraction
        η ≥ 0; the draw uses η' = η rounded down to a dyadic rational (:func:`dyadic_floor`).

    Returns
    -------
    ndarray of int64, shape (rows,)
        The chosen column of every row (shape (1,) for a 1-D input).
    """
    k = np.atleast_2d(np.asarray(units, dtype=np.int64))
    rows, n = k.shape
    a, m = dyadic_floor(eta)
    d = (k - k.min(axis=1, keepdims=True)).ravel()  # 0 ≤ d ≤ 2^53: exact as a double
    eta_f = a / 2.0**m  # η' = a/2^m, an exact double: x_j = d_j·η' is one rounding
    top = _top(rows * n)
    e = _envelope(d, eta_f, top)
    cum = _cumulative(e, top)

    if rows == 1:  # one proposal at a time, in Python: the common case, and the cheapest
        return np.array([_draw_one(sampler.bits, cum, d, e, a, m)], dtype=np.int64)

    def trials(flat: np.ndarray) -> np.ndarray:  # accept proposal j w.p. e^{−x_j}·2^{e_j} ≤ 1
        return below_exp(sampler.bits, d[flat] * eta_f, lambda i: Fraction(a * int(d[flat[i]]), 1 << m), e[flat])

    ends = cum[n - 1::n]
    starts = np.concatenate(([0], ends[:-1]))
    out = np.full(rows, -1, dtype=np.int64)
    pending = np.arange(rows)
    width = 4
    while pending.size:
        rr = np.repeat(pending, width)
        flat = np.searchsorted(cum, starts[rr] + sampler.bits.below_array(ends[rr] - starts[rr], rr.size),
                               side="right")
        acc = trials(flat).reshape(pending.size, width)
        has = acc.any(axis=1)
        first = flat.reshape(pending.size, width)[has, np.argmax(acc[has], axis=1)]
        out[pending[has]] = first - pending[has] * n
        pending = pending[~has]
        width = max(1, min(2 * width, _ROUND // max(pending.size, 1)))
    return out


def report_noisy_min_rows(sampler: ExactSampler, units: np.ndarray, t: Fraction) -> np.ndarray:
    """One independent :func:`report_noisy_min` per row of a 2-D int64 array (vectorised)."""
    k = np.atleast_2d(np.asarray(units, dtype=np.int64))
    noise = sampler.discrete_laplace(t, k.size)
    if noise.dtype == object or int(np.max(np.abs(noise), initial=0)) > 2**62:
        return np.array([report_noisy_min(sampler, row, t) for row in k], dtype=np.int64)
    noisy = k + noise.reshape(k.shape)
    winners = noisy == noisy.min(axis=1, keepdims=True)
    out = np.argmax(winners, axis=1)
    for r in np.flatnonzero(winners.sum(axis=1) > 1).tolist():  # ties: a uniform minimiser
        tied = np.flatnonzero(winners[r])
        out[r] = tied[uniform_index(sampler, tied.size)]
    return out.astype(np.int64)


def report_noisy_min(sampler: ExactSampler, units: np.ndarray, t: Fraction) -> int:
    """argmin_i (units_i + L_i), L_i exact discrete Laplace of scale t, ties uniformly at random."""
    k = np.asarray(units, dtype=np.int64).ravel()
    noise = sampler.discrete_laplace(t, k.size)
    if noise.dtype == object or int(np.max(np.abs(noise))) > 2**62:
        noisy = k.astype(object) + noise
        best = min(noisy.tolist())
        winners = np.flatnonzero(np.array([v == best for v in noisy.tolist()]))
    else:
        noisy = k + noise  # |k| ≤ 2^52, |noise| ≤ 2^62: no overflow
        winners = np.flatnonzero(noisy == noisy.min())
    if winners.size == 1:
        return int(winners[0])
    return int(winners[uniform_index(sampler, winners.size)])


@dataclass(frozen=True)
class ExactSelector:
    """A public, calibrated noisy-argmin rule on the score grid γ (module notes).

    Attributes
    ----------
    rule : {"gumbel", "laplace"}
        The exponential mechanism (weights exp(−s/scale)) or report-noisy-min with discrete
        Laplace noise of scale ``scale`` (value units).
    gamma : float
        The public score grid (a power of two).
    scale : float
        β = 2Δ'/ε₀ in the units of the scores (Δ' the grid-adjusted sensitivity).
    """

    rule: Rule
    gamma: float
    scale: float

    def __post_init__(self) -> None:
        if self.rule not in ("gumbel", "laplace"):
            raise PrivacyParameterError(f"unknown selection rule {self.rule!r}; use 'gumbel' or 'laplace'")
        for name in ("gamma", "scale"):
            value = getattr(self, name)
            if not (isinstance(value, float) and math.isfinite(value) and value > 0.0):
                raise PrivacyParameterError(f"{name} must be a finite float > 0, got {value!r}")

    @functools.cached_property
    def eta(self) -> Fraction:
        """η = γ/β exactly (the draw rounds it down, :func:`dyadic_floor`)."""
        return Fraction(self.gamma) / Fraction(self.scale)

    @functools.cached_property
    def t(self) -> Fraction:
        """The discrete Laplace scale in grid units: β/γ rounded *up* to a dyadic rational
        with a ~32-bit numerator (:func:`dyadic_ceil`; more noise, relative ≤ 2^-31)."""
        return dyadic_ceil(Fraction(self.scale) / Fraction(self.gamma))

    def argmin(self, sampler: ExactSampler, scores: np.ndarray) -> int:
        """The private argmin of a 1-D score vector."""
        units = score_units(scores, self.gamma)
        if self.rule == "gumbel":
            return int(exponential_mechanism(sampler, units, self.eta)[0])
        return report_noisy_min(sampler, units, self.t)

    def argmin_rows(self, sampler: ExactSampler, scores: np.ndarray) -> np.ndarray:
        """One independent private argmin per row of a 2-D score array."""
        units = score_units(np.atleast_2d(scores), self.gamma)
        if self.rule == "gumbel":
            return exponential_mechanism(sampler, units, self.eta)
        return report_noisy_min_rows(sampler, units, self.t)

    def bind(self, rng: np.random.Generator) -> Callable[[np.ndarray], int]:
        """``scores ↦ index`` drawing from the run's exact sampler (one :func:`sampler_for` call):
        a :class:`BoundSelector`, which reuses its work arrays from one call to the next."""
        return BoundSelector(self, sampler_for(rng))

    def bind_rows(self, rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
        """``scores (rows, n) ↦ indices (rows,)`` drawing from the run's exact sampler."""
        sampler = sampler_for(rng)
        return lambda scores: self.argmin_rows(sampler, scores)


class BoundSelector:
    """:meth:`ExactSelector.argmin` on one sampler, for many 1-D score vectors of one length.

    The exponential mechanism's steps (integer scores, differences to the minimum, envelope,
    cumulative sums) run in place in work arrays kept from call to call, with the integer
    scores held as float64 (exact: integers of magnitude ≤ 2^52, differences ≤ 2^53).  Every
    step computes the same values as :func:`score_units` and :func:`exponential_mechanism` and
    reads the bit stream in the same order, so a call returns what
    ``selector.argmin(sampler, scores)`` returns, draw for draw (the same law, and a seeded
    stream gives the same indices).  Report-noisy-min calls :meth:`ExactSelector.argmin`.

    Parameters
    ----------
    selector : ExactSelector
        The rule, grid and scale.
    sampler : ExactSampler
        The bit source.
    """

    def __init__(self, selector: ExactSelector, sampler: ExactSampler) -> None:
        self.selector, self.sampler = selector, sampler
        self._size = -1
        self._eta = dyadic_floor(selector.eta) if selector.rule == "gumbel" else (0, 0)

    def _arrays(self, size: int) -> None:
        self._size, self._top = size, _top(size)
        self._d, self._y = np.empty(size), np.empty(size)
        self._e, self._cum = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)

    def __call__(self, scores: np.ndarray) -> int:
        """The private argmin of a 1-D score vector."""
        s = np.asarray(scores, dtype=np.float64)
        if self.selector.rule != "gumbel" or s.ndim != 1 or s.size == 0:
            return self.selector.argmin(self.sampler, s)
        if s.size != self._size:
            self._arrays(s.size)
        a, m = self._eta
        d = self._d
        np.divide(s, self.selector.gamma, out=d)  # score_units, in float64
        np.rint(d, out=d)
        low = np.minimum.reduce(d)
        if not (-_LIMIT <= low and np.maximum.reduce(d) <= _LIMIT):  # a NaN fails both; else no clamp needed
            np.fmin(d, float(_LIMIT), out=d)  # fmin(NaN, L) = L
            np.fmax(d, -float(_LIMIT), out=d)
            low = np.minimum.reduce(d)
        np.subtract(d, low, out=d)  # d = k − k_min, exact
        _envelope(d, a / 2.0**m, self._top, self._y, self._e)
        return _draw_one(self.sampler.bits, _cumulative(self._e, self._top, self._cum), d, self._e, a, m)
