"""Accounting for private selection by random stopping (hyperparameter tuning).

A selection runs one randomized procedure Q — "pick a candidate from the declared grid
uniformly at random, run its private mechanism, compute a noisy score" — a random
number K of times and outputs only the best run (largest noisy score).  K is drawn
from a public *stopping distribution*; it is never released.  Two published bounds
turn a per-run guarantee of Q into one for the whole selection:

``"liu-talwar"`` (Liu & Talwar, STOC 2019, §3, the random-stopping theorem: Thm 3.2 of
    arXiv:1811.07971, stated as Thm 1.3 in its introduction)
    K is geometric on {1, 2, ...} with halting probability γ (after every run, stop with
    probability γ), E[K] = 1/γ.  If Q is ε₀-DP (pure) the selection is 3ε₀-DP, for every
    γ.  The same figure is the λ → ∞ limit of Papernot & Steinke's Thm 2 below with
    η = 1 ((2 + η)ε₀ = 3ε₀), which is how it was cross-checked.  Liu & Talwar's
    approximate-DP variant (candidates with δ₀ > 0, a cap on K) could not be verified
    against the paper here and is **not implemented**: candidates in this mode must be
    pure ε₀-DP (δ₀ = 0).

``"papernot-steinke"`` (Papernot & Steinke, ICLR 2022, "Hyperparameter tuning with
    Rényi differential privacy", Thm 2; arXiv:2110.03620v2)
    K follows the truncated negative binomial D_{η,γ} (Def. 1):
    P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · Π_{ℓ<k} (ℓ + η)/(ℓ + 1), k ≥ 1, for η > 0;
    the logarithmic law P[K = k] = (1 − γ)^k / (k log(1/γ)) for η = 0; η = 1 is the
    geometric law.  If Q is (λ, ε(λ))-RDP and (λ̂, ε(λ̂))-RDP, the selection is
    (λ, ε')-RDP with

        ε' = ε(λ) + (1 + η)(1 − 1/λ̂) ε(λ̂) + (1 + η) log(1/γ)/λ̂ + log E[K]/(λ − 1),

    for any λ > 1, λ̂ ≥ 1.  This module uses it for Q that is μ-GDP (a Gaussian mechanism
    for training plus a Gaussian noisy score: Dong, Roth & Su 2022, Cor. 3.3 composes them
    to √(μ_t² + μ_s²)-GDP), whose RDP curve is exactly ε(λ) = λμ²/2 (Mironov 2017,
    Prop. 7).  The minimum over λ̂ is then in closed form (see :func:`ps22_rdp`), and the
    RDP guarantee is converted to (ε, δ) by Canonne, Kamath & Steinke 2020, Prop. 12:
    ε = ε'(λ) + log(1 − 1/λ) − (log δ + log λ)/(λ − 1), minimized over λ > 1 — the same
    formulas as dp-accounting's ``RepeatAndSelectDpEvent`` with its RDP accountant,
    against which the tests check these values.

A third rule, used by :class:`~dpopt.mechanisms.selection_refit.RefitSelection`, runs every
candidate once instead of a random number of times and refits the choice: it is accounted in
zCDP, where adaptive composition adds ρ ([BS16] Lemma 2.3) and a public split by row position
lets the runs and the scores each take the selection's whole share ([McS09] Thm 4), then
converted to (ε, δ) by [CKS20] as one zCDP fit (:func:`calibrate_refit`, :func:`refit_rho`).

Every bound holds for *each* λ, λ̂; a numerical minimization can only make the bound
looser than its true minimum, never invalid.  Calibrations search the per-candidate
budget by bisection and return the end of the bracket that meets the target.

A uniformly random choice of candidate keeps Q's guarantee: the Rényi divergence (or the
hockey-stick divergence) of a mixture with public, data-independent weights is at most the
largest one of its components, and the index is part of Q's output.

Sampling K (:func:`sample_trials`) reads the exact sampler's bits
(:func:`dpopt.privacy.exact.sampler_for`; an unseeded run's are the OS CSPRNG's): the
geometric law by exact Bernoulli(γ) trials (γ is a float, i.e. an exact dyadic rational,
compared bit by bit with uniform integers), so K has exactly the law the bounds use; the
other truncated negative binomial laws by inversion of their float64 CDF at an exact
53-bit uniform, whose law differs from D_{η,γ} only by float64 rounding of the CDF (K is
not released, and its law does not depend on the data).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import check_epsilon_delta
from dpopt.privacy.exact import ExactSampler, sampler_for
from dpopt.privacy.zcdp import zcdp_rho

__all__ = [
    "CandidateBudget", "RefitBudget", "STOPPING_RULES", "Stopping", "StoppingLaw", "bernoulli_dyadic",
    "calibrate_refit", "calibrate_selection", "refit_rho",
    "liu_talwar_epsilon", "ps22_candidate_mu", "ps22_epsilon", "ps22_rdp", "sample_trials",
    "stopping_law", "tnb_mean",
]

Stopping = Literal["liu-talwar", "papernot-steinke"]
#: the accounting rules a selection can use
STOPPING_RULES: tuple[str, ...] = ("liu-talwar", "papernot-steinke")
#: relative accuracy of the bisections (on γ and on μ)
_RTOL = 1e-10
#: relative margin between a GDP candidate's μ and the (ε, δ) point it is built for
_POINT_MARGIN = 1e-9


@dataclass(frozen=True)
class StoppingLaw:
    """The public law of the number of runs K (truncated negative binomial, PS22 Def. 1).

    Attributes
    ----------
    gamma : float
        γ ∈ (0, 1]: the halting probability of the geometric law (η = 1).
    shape : float
        η ≥ 0: 0 logarithmic, 1 geometric, otherwise truncated negative binomial.
    mean : float
        E[K], computed from (γ, η) (the value every bound uses).
    """

    gamma: float
    shape: float
    mean: float


@dataclass(frozen=True)
class CandidateBudget:
    """The budget one candidate run may spend, handed to ``build(params, budget)``.

    Attributes
    ----------
    epsilon, delta : float
        The candidate mechanism's (ε, δ): build it with exactly these (or less).  Under
        ``"papernot-steinke"`` this is a point on the μ-GDP curve (ε = μ, δ = δ_μ(μ)):
        a Gaussian mechanism calibrated by the analytic Gaussian (Balle & Wang 2018) to
        it has noise σ = Δ/μ, i.e. it is μ-GDP.
    mu : float or None
        The candidate's Gaussian-DP parameter under ``"papernot-steinke"``; None otherwise.
    """

    epsilon: float
    delta: float
    mu: float | None = None


@dataclass(frozen=True)
class SelectionBudget:
    """A calibrated selection: the budget of each run of Q and its split.

    Attributes
    ----------
    stopping : str
        The accounting rule.
    law : StoppingLaw
        The law of K.
    trial_epsilon, trial_delta : float
        Q's (ε₀, δ₀) under ``"liu-talwar"`` (δ₀ = 0); NaN under ``"papernot-steinke"``.
    trial_mu : float or None
        Q's GDP μ₀ under ``"papernot-steinke"``.
    candidate : CandidateBudget
        The training part of Q (what ``build`` receives).
    score_epsilon : float or None
        ε of the Laplace noisy score (``"liu-talwar"``).
    score_mu : float or None
        μ of the Gaussian noisy score (``"papernot-steinke"``).
    """

    stopping: str
    law: StoppingLaw
    trial_epsilon: float
    trial_delta: float
    trial_mu: float | None
    candidate: CandidateBudget
    score_epsilon: float | None
    score_mu: float | None


# ----------------------------------------------------------------------------- the law of K


def _check_real(value: object, name: str, *, low: float, low_open: bool, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a number {what}, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < low or (low_open and v == low):
        raise PrivacyParameterError(f"{name} must be a finite number {what}, got {value!r}")
    return v


def tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial D_{η,γ} (PS22 Def. 1 and §3).

    Parameters
    ----------
    gamma : float
        γ ∈ (0, 1].
    shape : float
        η ≥ 0.

    Returns
    -------
    float
        1/γ for η = 1; (1 − γ)/(γ log(1/γ)) for η = 0; η(1 − γ)/(γ(1 − γ^η)) otherwise
        (1 at γ = 1).
    """
    if gamma >= 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / gamma
    if shape == 0.0:
        return -math.expm1(math.log(gamma)) / (gamma * -math.log(gamma))
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def stopping_law(expected_trials: float, shape: float = 1.0) -> StoppingLaw:
    """The law of K with the given mean: γ by bisection (E[K] decreases in γ).

    Parameters
    ----------
    expected_trials : float
        E[K] ≥ 1.
    shape : float
        η ≥ 0 (1: geometric).

    Returns
    -------
    StoppingLaw
        γ and the mean recomputed from it (sampling and accounting use the same γ).

    Raises
    ------
    PrivacyParameterError
        If ``expected_trials`` < 1 or ``shape`` < 0 or either is not finite.
    """
    mean = _check_real(expected_trials, "expected_trials", low=1.0, low_open=False, what="≥ 1")
    eta = _check_real(shape, "shape", low=0.0, low_open=False, what="≥ 0 (1 = geometric)")
    if mean == 1.0:
        return StoppingLaw(1.0, eta, 1.0)
    if eta == 1.0:
        gamma = 1.0 / mean
    else:
        lo, hi = 0.0, 1.0
        while hi - lo > _RTOL * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if tnb_mean(mid, eta) < mean else (mid, hi)
        gamma = hi if hi < 1.0 else lo
    return StoppingLaw(gamma, eta, tnb_mean(gamma, eta))


def sample_trials(source: ExactSampler | np.random.Generator, law: StoppingLaw) -> int:
    """Draw K ~ D_{η,γ} (PS22 Def. 1) on {1, 2, ...} from an exact sampler's bits.

    η = 1: geometric, exactly (K = the index of the first success of Bernoulli(γ) trials,
    each decided by :func:`bernoulli_dyadic`); other η: inversion of the CDF
    P[K = 1] = (1 − γ)η/(γ^{−η} − 1) (η = 0: (1 − γ)/log(1/γ)),
    P[K = k + 1] = P[K = k]·(1 − γ)(k + η)/(k + 1), in float64 at an exact 53-bit uniform.
    A numpy Generator is first turned into its sampler (:func:`sampler_for`).
    """
    sampler = source if isinstance(source, ExactSampler) else sampler_for(source)
    if law.gamma >= 1.0:
        return 1
    if law.shape == 1.0:
        g = Fraction(law.gamma)
        exponent = g.denominator.bit_length() - 1  # a float's denominator is a power of two
        if exponent <= 62:  # 64 trials per call: the index of the first success
            k = 0
            while True:
                hits = np.flatnonzero(sampler.uniform(1 << exponent, 64) < g.numerator)
                if hits.size:
                    return k + int(hits[0]) + 1
                k += 64
        k = 1
        while not bernoulli_dyadic(sampler, g.numerator, exponent):
            k += 1
        return k
    return _tnb_inverse(int(sampler.uniform(1 << 53, 1)[0]) * 2.0**-53, law)


def bernoulli_dyadic(sampler: ExactSampler, num: int, exponent: int) -> bool:
    """Exactly Bernoulli(num/2^e) for 0 ≤ num ≤ 2^e: is an e-bit uniform integer U < num?
    U is drawn 62 bits at a time, most significant first, stopping once the comparison is decided."""
    left = exponent
    while left > 0:
        k = min(left, 62)
        left -= k
        u = int(sampler.uniform(1 << k, 1)[0])
        chunk = (num >> left) & ((1 << k) - 1) if num < (1 << exponent) else (1 << k)
        if u != chunk:
            return u < chunk
    return False


def _tnb_inverse(u: float, law: StoppingLaw) -> int:
    """The smallest k with P[K ≤ k] > u under D_{η,γ} (float64; stops where the mass underflows)."""
    q, eta = 1.0 - law.gamma, law.shape
    if eta == 0.0:
        p = q / -math.log(law.gamma)
    else:
        p = q * eta / math.expm1(-eta * math.log(law.gamma))
    k, cdf = 1, p
    while cdf <= u and p > 0.0:
        p *= q * (k + eta) / (k + 1)
        k += 1
        cdf += p
    return k


# ----------------------------------------------------------------------------- Liu & Talwar


def liu_talwar_epsilon(trial_epsilon: float) -> float:
    """ε of the geometric random-stopping selection of ε₀-DP runs: 3ε₀ (LT19 Thm 3.2)."""
    return 3.0 * trial_epsilon


def _liu_talwar_trial_epsilon(epsilon: float) -> float:
    """The largest ε₀ with 3ε₀ ≤ ε in floating point."""
    eps0 = epsilon / 3.0
    while liu_talwar_epsilon(eps0) > epsilon:
        eps0 = math.nextafter(eps0, 0.0)
    return eps0


# ----------------------------------------------------------------------------- Papernot & Steinke


def _hat_term(mu: float, gamma: float) -> float:
    """min over λ̂ ≥ 1 of (1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂ for ε(λ) = λμ²/2.

    The function is (λ̂ − 1)μ²/2 + log(1/γ)/λ̂, convex in λ̂ > 0 with minimizer
    λ̂* = √(2 log(1/γ))/μ; when λ̂* < 1 the constraint binds and the value is log(1/γ).
    """
    log_inv_gamma = -math.log(gamma)
    if log_inv_gamma == 0.0:
        return 0.0
    root = math.sqrt(2.0 * log_inv_gamma)
    if root >= mu:  # λ̂* ≥ 1
        return mu * root - 0.5 * mu * mu
    return log_inv_gamma


def ps22_rdp(order: float, mu: float, law: StoppingLaw) -> float:
    """RDP of the selection at order λ > 1 for μ-GDP runs (PS22 Thm 2, λ̂ optimized).

    Parameters
    ----------
    order : float
        λ > 1.
    mu : float
        Q's Gaussian-DP parameter (ε(λ) = λμ²/2).
    law : StoppingLaw
        The law of K.

    Returns
    -------
    float
        λμ²/2 + (1 + η)·min_λ̂[(1 − 1/λ̂)λ̂μ²/2 + log(1/γ)/λ̂] + log E[K]/(λ − 1).
    """
    return (0.5 * order * mu * mu + (1.0 + law.shape) * _hat_term(mu, law.gamma)
            + math.log(law.mean) / (order - 1.0))


def _dp_from_rdp(order: float, rdp: float, delta: float) -> float:
    """ε of an (λ, rdp)-RDP mechanism at δ (Canonne, Kamath & Steinke 2020, Prop. 12)."""
    return rdp + math.log1p(-1.0 / order) - (math.log(delta) + math.log(order)) / (order - 1.0)


def ps22_epsilon(mu: float, delta: float, law: StoppingLaw) -> float:
    """ε at δ of the selection of μ-GDP runs (PS22 Thm 2 + CKS20 Prop. 12), min over λ.

    The objective is minimized over log(λ − 1) on a grid and then by bounded Brent
    search; each λ gives a valid bound, so the value is an upper bound on the optimum.

    Parameters
    ----------
    mu : float
        Q's Gaussian-DP parameter, > 0.
    delta : float
        δ ∈ (0, 1).
    law : StoppingLaw
        The law of K.

    Returns
    -------
    float
        ε ≥ 0.
    """
    def objective(t: float) -> float:
        order = 1.0 + math.exp(t)
        return _dp_from_rdp(order, ps22_rdp(order, mu, law), delta)

    grid = np.linspace(-12.0, 16.0, 113)
    values = [objective(float(t)) for t in grid]
    i = int(np.argmin(values))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    best = values[i]
    if hi > lo:
        from scipy.optimize import minimize_scalar  # imported on first use, not with dpopt

        res = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        best = min(best, float(res.fun))
    return max(best, 0.0)


def ps22_candidate_mu(epsilon: float, delta: float, law: StoppingLaw) -> float:
    """The largest μ₀ (found by bisection) with ``ps22_epsilon(μ₀, δ, law) ≤ ε``.

    Returns
    -------
    float
        μ₀ > 0, the lower end of the final bracket (it meets the target).
    """
    lo, hi = 0.0, 1.0
    while ps22_epsilon(hi, delta, law) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > _RTOL * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ps22_epsilon(mid, delta, law) <= epsilon else (lo, mid)
    if lo == 0.0:  # pragma: no cover - ε > 0 always admits some μ > 0
        raise PrivacyParameterError(f"no per-run budget meets ε={epsilon:g}, δ={delta:g}")
    return lo


def gaussian_curve_delta(mu: float, epsilon: float) -> float:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the μ-GDP curve (Dong, Roth & Su 2022, Cor. 2.13)."""
    from dpopt.privacy.calibration import gaussian_delta

    return gaussian_delta(1.0, mu, epsilon)


# ----------------------------------------------------------------------------- calibration


def calibrate_selection(epsilon: float, delta: float, *, stopping: str = "liu-talwar",
                        expected_trials: float, shape: float | None = None,
                        score_share: float = 0.1, holdout: bool = False) -> SelectionBudget:
    """Per-run budget of a selection whose whole procedure is (ε, δ)-DP (public inputs only).

    Parameters
    ----------
    epsilon, delta : float
        The selection's total guarantee.  ``"liu-talwar"`` needs δ = 0 (pure DP);
        ``"papernot-steinke"`` needs δ > 0.
    stopping : {"liu-talwar", "papernot-steinke"}
        The accounting rule (module docstring).
    expected_trials : float
        E[K] ≥ 1 (γ = 1/E[K] for the geometric law).
    shape : float, optional
        η ≥ 0 of the truncated negative binomial (``"papernot-steinke"`` only; default 1,
        the geometric law).
    score_share : float
        The fraction of Q's budget spent on the noisy score, in (0, 1): ε_s = share·ε₀
        (basic composition, ε_t + ε_s = ε₀) under ``"liu-talwar"``, μ_s² = share·μ₀²
        (GDP composition, μ_t² + μ_s² = μ₀²) under ``"papernot-steinke"``.  Ignored with
        ``holdout``.
    holdout : bool
        The score reads only rows the candidate was not trained on (a public split by row
        position): a replaced row lies in one of the two parts, so Q is as private as the
        less private of its training and its score (parallel composition, [McS09] Thm 4),
        and each gets Q's whole budget: ε_t = ε_s = ε₀, or μ_t = μ_s = μ₀.

    Returns
    -------
    SelectionBudget
        The calibrated split.

    Raises
    ------
    PrivacyParameterError
        For settings out of range or a δ that does not fit the rule.
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=True)
    share = _check_real(score_share, "score_share", low=0.0, low_open=True, what="in (0, 1)")
    if share >= 1.0:
        raise PrivacyParameterError(f"score_share must be in (0, 1), got {score_share!r}")
    if stopping == "liu-talwar":
        if shape not in (None, 1, 1.0):
            raise PrivacyParameterError("stopping='liu-talwar' uses the geometric law; leave shape unset "
                                        "(or use stopping='papernot-steinke' for other shapes)")
        if dlt != 0.0:
            raise PrivacyParameterError(
                "stopping='liu-talwar' gives pure ε-DP (3ε₀ for ε₀-DP candidates); pass delta=0, or use "
                "stopping='papernot-steinke' with Gaussian candidates for an (ε, δ) guarantee")
        law = stopping_law(expected_trials, 1.0)
        eps0 = _liu_talwar_trial_epsilon(eps)
        eps_s = eps0 if holdout else share * eps0
        eps_t = eps0 if holdout else math.nextafter(eps0 - eps_s, 0.0)
        return SelectionBudget("liu-talwar", law, eps0, 0.0, None, CandidateBudget(eps_t, 0.0),
                               eps_s, None)
    if stopping == "papernot-steinke":
        if dlt == 0.0:
            raise PrivacyParameterError("stopping='papernot-steinke' converts Rényi DP to (ε, δ): pass delta > 0")
        law = stopping_law(expected_trials, 1.0 if shape is None else shape)
        mu0 = ps22_candidate_mu(eps, dlt, law)
        mu_s = mu0 if holdout else math.sqrt(share) * mu0
        mu_t = math.nextafter(mu0 if holdout else math.sqrt(1.0 - share) * mu0, 0.0)
        while not holdout and math.hypot(mu_t, mu_s) > mu0:  # GDP composition must stay within μ₀
            mu_t = math.nextafter(mu_t, 0.0)
        # the (ε, δ) point sits on the curve of a hair smaller μ, so that an analytic-Gaussian
        # calibration to it (rounded to the safe side) yields σ ≥ Δ/μ_t despite rounding in δ
        point = mu_t * (1.0 - _POINT_MARGIN)
        cand = CandidateBudget(point, gaussian_curve_delta(point, point), mu_t)
        return SelectionBudget("papernot-steinke", law, math.nan, math.nan, mu0, cand, None, mu_s)
    raise PrivacyParameterError(f"stopping must be one of {', '.join(map(repr, STOPPING_RULES))}, got {stopping!r}")


# ----------------------------------------------------------------------------- noisy max and refit


@dataclass(frozen=True)
class RefitBudget:
    """A calibrated noisy-max selection with a refit (:func:`calibrate_refit`).

    Attributes
    ----------
    rho : float
        The whole procedure's zCDP, ``zcdp_rho(ε, δ)``.
    selection_rho : float
        The part spent choosing: every candidate's run and noisy score together.
    candidate : CandidateBudget
        Each candidate's run while choosing (its ``mu`` = √(2ρ_c)).
    score_mu : float
        μ_s = √(2ρ_s) of each Gaussian noisy score.
    refit : CandidateBudget
        The final fit of the chosen candidate (its ``mu`` = √(2ρ_f)).
    """

    rho: float
    selection_rho: float
    candidate: CandidateBudget
    score_mu: float
    refit: CandidateBudget


def _mu_budget(rho: float) -> CandidateBudget:
    """The budget of a ρ-zCDP Gaussian run: μ = √(2ρ) (a candidate is checked by its μ), and the
    (ε, δ) point on the μ-GDP curve of a hair smaller μ it is built from (as :func:`calibrate_selection`)."""
    mu = math.sqrt(2.0 * rho)
    while 0.5 * mu * mu > rho:
        mu = math.nextafter(mu, 0.0)
    point = mu * (1.0 - _POINT_MARGIN)
    return CandidateBudget(point, gaussian_curve_delta(point, point), mu)


def refit_rho(candidate_mu: float, score_mu: float, refit_mu: float, candidates: int, *, holdout: bool) -> float:
    """The zCDP of the noisy-max selection with a refit, from its parts (:func:`calibrate_refit`).

    ``candidates`` runs of ρ_c = μ_c²/2 and as many noisy scores of ρ_s = μ_s²/2, then one
    refit of ρ_f = μ_f²/2 on every row: g(ρ_c + ρ_s) + ρ_f ([BS16] Lemma 2.3, adaptive
    composition), or with held-out scores g·max(ρ_c, ρ_s) + ρ_f (a replaced row changes
    either the runs' training rows or the scored rows, [McS09] Thm 4, and the refit reads it).
    """
    rc, rs, rf = 0.5 * candidate_mu ** 2, 0.5 * score_mu ** 2, 0.5 * refit_mu ** 2
    return candidates * (max(rc, rs) if holdout else rc + rs) + rf


def calibrate_refit(epsilon: float, delta: float, *, candidates: int, selection_share: float = 0.05,
                    score_share: float = 0.1, holdout: bool = False) -> RefitBudget:
    """The split of a noisy-max selection with a refit whose whole procedure is (ε, δ)-DP.

    Every one of the g candidates runs once (ρ_c-zCDP) and gets one Gaussian noisy score
    (ρ_s); the chosen one is fitted again on every row (ρ_f).  Composed in zCDP
    (:func:`refit_rho`), the procedure is ρ-zCDP with ρ = ``zcdp_rho(ε, δ)``, hence (ε, δ)-DP
    by the same [CKS20] conversion as one zCDP fit (:mod:`dpopt.privacy.zcdp`).

    Parameters
    ----------
    epsilon, delta : float
        The whole procedure's guarantee (δ > 0).
    candidates : int
        g ≥ 1.
    selection_share : float
        The fraction of ρ spent choosing, in (0, 1): ρ_f = (1 − share)ρ; each candidate's run and
        score share ρ_sel = share·ρ equally, g·ρ_c = ρ_sel (held-out scores: g·ρ_s = ρ_sel too,
        in parallel), or without held-out rows g·(ρ_c + ρ_s) = ρ_sel with ρ_s = ``score_share``·ρ_sel/g.
    score_share : float
        In (0, 1); unused with ``holdout``.
    holdout : bool
        Whether the scores read rows the candidates were not trained on (a public split).

    Returns
    -------
    RefitBudget
        Whose parts compose (:func:`refit_rho`) to at most ρ.

    Raises
    ------
    PrivacyParameterError
        For settings out of range, or δ = 0.
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    share = _check_real(selection_share, "selection_share", low=0.0, low_open=True, what="in (0, 1)")
    split = _check_real(score_share, "score_share", low=0.0, low_open=True, what="in (0, 1)")
    if share >= 1.0 or split >= 1.0:
        raise PrivacyParameterError(f"selection_share and score_share must be in (0, 1), got {selection_share!r} "
                                    f"and {score_share!r}")
    if isinstance(candidates, bool) or not isinstance(candidates, numbers.Integral) or candidates < 1:
        raise PrivacyParameterError(f"candidates must be an integer ≥ 1, got {candidates!r}")
    rho = zcdp_rho(eps, dlt)
    selection = share * rho
    per_run = selection / candidates
    score_rho = per_run if holdout else split * per_run
    run_rho = per_run if holdout else per_run - score_rho
    cand, score, refit = _mu_budget(run_rho), math.sqrt(2.0 * score_rho), _mu_budget(rho - selection)
    while refit_rho(cand.mu or 0.0, score, refit.mu or 0.0, candidates, holdout=holdout) > rho:
        score = math.nextafter(score, 0.0)  # floating point only: the parts must stay within ρ
        refit = _mu_budget(math.nextafter(0.5 * (refit.mu or 0.0) ** 2, 0.0))
    return RefitBudget(rho, selection, cand, score, refit)
