"""Noise for T adaptive compositions of a Gaussian mechanism: accountant and paper calibration.

Iterative Gaussian methods (private mirror descent, Talwar–Thakurta–Zhang 2014,
Alg. 1; private Frank–Wolfe over a general set, Alg. 5) release T noisy
gradients, each the output of a Gaussian mechanism ``g_t + N(0, σ² I)`` whose
ℓ2 sensitivity Δ is computed from declared bounds.  This module gives σ in two
ways.

:func:`gaussian_sigma_for_composition`
    The smallest σ (to a relative tolerance, rounded up) whose T-fold adaptive
    composition meets (ε, δ) under a privacy accountant from Google's
    ``dp-accounting``: Rényi DP (``method="rdp"``, Mironov 2017) or the privacy
    loss distribution (``method="pld"``, Koskela et al. 2020; Doroshenko et al.
    2022, pessimistic discretization).  ``method="analytic"`` is the exact value:
    T Gaussian mechanisms with noise multiplier z compose to one Gaussian
    mechanism with multiplier z/√T (Dong, Roth and Su 2022, Cor. 3.3 of GDP), so
    σ is the analytic Gaussian σ (Balle–Wang 2018) at sensitivity Δ√T.  The PLD
    answer approaches it from above as the discretization shrinks.
:func:`paper_sigma`
    The paper's calibration, Alg. 1 line 1: ``σ² = 32 L² T log²(T/δ) / (εn)²``.

Sensitivity convention
----------------------
Alg. 1 perturbs the gradient of the *average* loss ``(1/n) Σ ℓ(θ; d_i)`` with
every ℓ(·; d) L-Lipschitz in ℓ2.  Under dpopt's replace-one relation that
gradient has ℓ2 sensitivity ``Δ = 2L/n``, so the paper's σ is
``σ = √(8T) · log(T/δ) · Δ / ε`` in terms of Δ (under add/remove-one, Δ = L/n
and the same σ reads ``√(32T) log(T/δ) Δ / ε``).  The paper cites the strong
composition theorem (Dwork–Rothblum–Vadhan 2010) and BST14 Thm 2.1 for it; it is
valid (every accountant here certifies it for the grid tested in
``tests/privacy/test_accountant.py``) but loose: the RDP σ is several times smaller,
mostly because log²(T/δ) stands where √(log(1/δ)) suffices.

The accountants are called with their default add/remove-one relation and the
Gaussian event's noise multiplier ``z = σ/Δ``: the privacy loss of a Gaussian
mechanism depends only on Δ/σ, so with Δ the sensitivity under replace-one the
result is the replace-one guarantee.

Exact noise on a grid (:class:`GridSteps`)
------------------------------------------
The iterative mechanisms release every noisy sum as ``(round(S/γ) + K)·γ`` with γ a public
power of two (:func:`dpopt.privacy.grid.grid_step`) and K an exact discrete Gaussian vector
on ℤ^d ([CKS20], Alg. 3).  The continuous Gaussian's exact analyses (``"analytic"``,
``"pld"``) do not cover that law.  What does ([CKS20]): rounded neighbours differ by an
integer vector of ℓ2 norm at most Δ' = Δ + γ√d in value units, and the discrete Gaussian
with such a centre shift is ρ-zCDP with ρ = Δ'²/(2σ²); T adaptive steps add their ρ, and
:func:`dpopt.privacy.zcdp.zcdp_rho` converts the total to (ε, δ).  Its Rényi divergences
are also at most the continuous Gaussian's at every order, so an RDP accountant of the
*unsampled* Gaussian (``"rdp"``, which reads only that curve) evaluated at Δ' is valid too.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import (
    Budget,
    as_real,
    budget_pair,
    check_epsilon_delta,
    check_sensitivity,
    gaussian_sigma_analytic,
)
from dpopt.privacy.grid import GridNoise, gaussian_grid_noise, grid_step, on_grid

__all__ = [
    "CONTINUOUS_ONLY",
    "NOISE_BLOCK",
    "AccountantMethod",
    "GridSteps",
    "grid_gaussian_steps",
    "grid_reach",
    "zcdp_gaussian_steps",
    "check_sampling_rate",
    "composed_epsilon",
    "gaussian_sigma_for_composition",
    "paper_sigma",
    "sampled_gaussian_epsilon",
    "sampled_gaussian_multiplier",
]

AccountantMethod = Literal["rdp", "pld", "analytic"]
_METHODS = ("rdp", "pld", "analytic")
#: default relative tolerance on σ (the returned σ exceeds the optimum by at most this, relatively)
DEFAULT_RTOL = 1e-5
#: PLD discretization of the privacy loss (dp-accounting's default 1e-4 is pessimistic and fine)
_PLD_DISCRETIZATION = 1e-4


def check_steps(steps: object, name: str = "steps") -> int:
    """Validate a count such as the number of compositions T (an integer ≥ 1).

    Raises
    ------
    PrivacyParameterError
        If the value is not an integer (bools and floats refused) or is below 1.
    """
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer)):
        raise PrivacyParameterError(
            f"{name} must be an integer >= 1, got a value of type {type(steps).__name__}"
        )
    if steps < 1:
        raise PrivacyParameterError(f"{name} must be an integer >= 1 (T <= 0 runs nothing), got {int(steps)}")
    return int(steps)


def _check_method(method: object) -> AccountantMethod:
    if method not in _METHODS:
        raise PrivacyParameterError(f"unknown accountant method {method!r}; use one of {', '.join(_METHODS)}")
    return method  # type: ignore[return-value]


def composed_epsilon(noise_multiplier: float, steps: int, delta: float, method: str = "rdp") -> float:
    """ε of ``steps`` compositions of a Gaussian mechanism with multiplier ``z = σ/Δ`` at δ.

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ > 0``.
    steps : int
        Number of adaptive compositions T ≥ 1.
    delta : float
        δ in (0, 1).
    method : {"rdp", "pld"}
        The dp-accounting accountant.

    Returns
    -------
    float
        The accountant's ε (an upper bound on the true ε).
    """
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), steps)
    accountant: dp_accounting.PrivacyAccountant
    if method == "rdp":
        accountant = rdp_privacy_accountant.RdpAccountant()
    elif method == "pld":
        accountant = pld_privacy_accountant.PLDAccountant(
            value_discretization_interval=_PLD_DISCRETIZATION
        )
    else:
        raise PrivacyParameterError(f"composed_epsilon supports 'rdp' and 'pld', got {method!r}")
    return float(accountant.compose(event).get_epsilon(delta))


def _smallest_multiplier(excess: Callable[[float], float], guess: float, rtol: float) -> float:
    """Smallest z > 0 with ``excess(log z) ≤ 0`` (excess decreasing), to relative ``rtol``, rounded up."""
    lo, hi, step = math.log(guess) - 0.5, math.log(guess) + 0.5, 1.0
    for _ in range(100):  # grow the bracket: excess(lo) > 0 ≥ excess(hi)
        if excess(hi) <= 0.0:
            break
        lo, hi, step = hi, hi + step, 2.0 * step
    for _ in range(100):
        if excess(lo) > 0.0:
            break
        hi, lo, step = lo, lo - step, 2.0 * step
    from scipy import optimize  # imported on first use, not with dpopt

    log_z = optimize.brentq(excess, lo, hi, xtol=rtol / 4.0)
    z = math.exp(log_z)
    nudge = rtol / 4.0
    while excess(math.log(z)) > 0.0:  # the safe side: the accountant must certify z itself
        z *= 1.0 + nudge
        nudge *= 2.0
    return z


def gaussian_sigma_for_composition(
    sensitivity: float,
    steps: int,
    epsilon: float,
    delta: float,
    method: str = "rdp",
    *,
    rtol: float = DEFAULT_RTOL,
) -> float:
    """Smallest σ whose ``steps``-fold adaptive Gaussian composition is (ε, δ)-DP.

    Each of the T steps releases ``f_t(D) + N(0, σ² I)`` with ``f_t`` (chosen
    adaptively from earlier outputs) of ℓ2 sensitivity ``sensitivity``.

    Parameters
    ----------
    sensitivity : float
        ℓ2 sensitivity Δ ≥ 0 of each step (from declared bounds; 2L/n for the
        average gradient of an L-Lipschitz loss under replace-one).
    steps : int
        Number of compositions T ≥ 1.
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    method : {"rdp", "pld", "analytic"}, default "rdp"
        ``"rdp"``: dp-accounting's RDP accountant (default orders);
        ``"pld"``: its PLD accountant (pessimistic, discretization 1e-4);
        ``"analytic"``: the exact σ of the composition (a single Gaussian with
        sensitivity Δ√T, Balle–Wang 2018).
    rtol : float, default 1e-5
        Relative tolerance: the returned σ is certified by the chosen accountant
        (its ε at δ is ≤ ε) and exceeds the smallest certified σ by at most a
        factor ``1 + rtol`` (up to the accountant's own resolution).  It is also
        never below the exact (analytic) σ, which guards against the PLD
        accountant's slight optimism from tail truncation at tiny δ.

    Returns
    -------
    float
        σ (0 when Δ = 0).

    Raises
    ------
    PrivacyParameterError
        If ε ≤ 0, δ ∉ (0, 1), ``steps`` < 1, Δ < 0, ``rtol`` ∉ [1e-12, 0.1] or
        ``method`` is unknown.
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    sens = check_sensitivity(sensitivity)
    t = check_steps(steps)
    meth = _check_method(method)
    tol = as_real(rtol, "rtol", "in [1e-12, 0.1]")
    if not (1e-12 <= tol <= 0.1):
        raise PrivacyParameterError(f"rtol must be in [1e-12, 0.1], got {tol!r}")
    if sens == 0.0:
        return 0.0
    return sens * _noise_multiplier(t, eps, dlt, meth, tol)


@functools.lru_cache(maxsize=256)
def _noise_multiplier(steps: int, epsilon: float, delta: float, method: str, rtol: float) -> float:
    """z = σ/Δ for validated public inputs (cached: mechanisms re-plan on every run)."""
    if method == "analytic":
        return gaussian_sigma_analytic(math.sqrt(steps), epsilon, delta)
    exact = gaussian_sigma_analytic(math.sqrt(steps), epsilon, delta)  # a lower bound on every accountant's z

    def excess(log_z: float) -> float:  # decreasing in z
        return composed_epsilon(math.exp(log_z), steps, delta, method) - epsilon

    # Never below the exact value: dp-accounting's PLD (tail truncation) can be a hair
    # optimistic for tiny δ (seen at ε = 5, δ = 1e-10: 1e-6 relative below the exact z).
    return max(_smallest_multiplier(excess, exact, rtol), exact)


def paper_sigma(lipschitz: float, n: int, steps: int, epsilon: float | Budget, delta: float | None) -> float:
    """The noise of Talwar–Thakurta–Zhang (2014), Alg. 1 line 1.

    ``σ = √(32 T) · L · log(T/δ) / (ε n)``, i.e. ``σ² = 32 L² T log²(T/δ) / (εn)²``,
    for the gradient of the average loss of an L-Lipschitz (ℓ2) per-example loss
    over n rows.  In terms of the replace-one sensitivity ``Δ = 2L/n`` of that
    gradient this is ``√(8T) log(T/δ) Δ / ε`` (see the module notes).

    Parameters
    ----------
    lipschitz : float
        ℓ2 Lipschitz constant L ≥ 0 of ℓ(·; d).
    n : int
        Number of rows (≥ 1).
    steps : int
        Number of iterations T ≥ 1.
    epsilon, delta : float, or a Budget and None
        ε > 0 and δ in (0, 1) (a mechanism's checked Budget is not checked again).

    Returns
    -------
    float
        σ.

    Raises
    ------
    PrivacyParameterError
        For invalid inputs.
    """
    eps, dlt = budget_pair(epsilon, delta, allow_zero_delta=False)
    lip = check_sensitivity(lipschitz, "lipschitz")
    t = check_steps(steps)
    rows = check_steps(n, "n")
    return math.sqrt(32.0 * t) * lip * math.log(t / dlt) / (eps * rows)


def sampled_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float) -> float:
    """ε at δ of T Poisson-subsampled Gaussian steps under *replace-one* neighbours (PLD).

    Each step releases ``Σ_{i ∈ B} clip_C(g_i) + N(0, (zC)² I)`` where every row enters B
    independently with probability q.  dp-accounting's PLD accountant with
    ``NeighboringRelation.REPLACE_ONE`` evaluates the dominating pair
    ``q·N(+C) + (1−q)·N(0)`` vs ``q·N(−C) + (1−q)·N(0)`` (its
    ``privacy_loss_mechanism`` REPLACE adjacency, after Zhu, Dong and Wang 2022), which
    covers a row replaced by any other row of clip norm ≤ C.  At q = 1 it is the
    Gaussian mechanism with sensitivity 2C, i.e. (2/z)-GDP.

    Parameters
    ----------
    noise_multiplier : float
        z = σ/C > 0, the noise standard deviation over the per-row clip norm.
    sampling_rate : float
        q in (0, 1].
    steps : int
        T ≥ 1 adaptive steps.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The accountant's ε (pessimistic discretization: an upper bound).
    """
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps)
    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE,
        value_discretization_interval=_PLD_DISCRETIZATION,
    )
    return float(accountant.compose(event).get_epsilon(delta))


def check_sampling_rate(rate: object) -> float:
    """Validate a Poisson sampling rate q ∈ (0, 1].

    Raises
    ------
    PrivacyParameterError
        If q is not a real number in (0, 1].
    """
    q = as_real(rate, "sampling_rate", "in (0, 1]")
    if not (0.0 < q <= 1.0):
        raise PrivacyParameterError(f"sampling_rate (the Poisson rate q) must be in (0, 1], got {q!r}")
    return q


def sampled_gaussian_multiplier(sampling_rate: float, steps: int, epsilon: float, delta: float, *,
                                rtol: float = 1e-3) -> float:
    """Smallest z = σ/C whose T Poisson-subsampled Gaussian steps are (ε, δ)-DP (replace-one, PLD).

    Parameters
    ----------
    sampling_rate : float
        q in (0, 1] (each row enters each batch independently with probability q).
    steps : int
        T ≥ 1.
    epsilon, delta : float
        Target ε > 0 and δ in (0, 1).
    rtol : float
        Relative tolerance of the search; the returned z is certified by the accountant.

    Returns
    -------
    float
        z (σ = z·C for per-row clip norm C).
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    q = check_sampling_rate(sampling_rate)
    t = check_steps(steps)
    tol = as_real(rtol, "rtol", "in [1e-12, 0.1]")
    if not (1e-12 <= tol <= 0.1):
        raise PrivacyParameterError(f"rtol must be in [1e-12, 0.1], got {tol!r}")
    return _sampled_multiplier(q, t, eps, dlt, tol)


@functools.lru_cache(maxsize=256)
def _sampled_multiplier(q: float, steps: int, epsilon: float, delta: float, rtol: float) -> float:
    """z for validated public inputs (cached: PLD composition is the slow part)."""
    full = 2.0 * gaussian_sigma_analytic(math.sqrt(steps), epsilon, delta)  # q = 1: (2/z)-GDP, exact

    def excess(log_z: float) -> float:
        return sampled_gaussian_epsilon(math.exp(log_z), q, steps, delta) - epsilon

    if q == 1.0:
        return full
    return _smallest_multiplier(excess, max(full * q * math.sqrt(1.0 / q), 1e-3), rtol)


#: why the continuous Gaussian's exact accountants are refused for noise on a grid (a settings refusal's reason)
CONTINUOUS_ONLY = ("the noise is an exact discrete Gaussian on a grid; 'analytic' and 'pld' analyse the continuous "
                   "Gaussian's privacy loss and do not cover it, zCDP does [CKS20]")
#: noise values drawn per call of the exact sampler (:meth:`GridSteps.draws`): whole steps per block
NOISE_BLOCK = 1 << 16


def grid_reach(sensitivity: float, dim: int) -> tuple[float, float]:
    """(γ, Δ'): the public grid γ = grid_step(Δ, √d) and the ℓ2 distance Δ' = Δ + γ√d
    between two neighbours' centres after rounding onto it (each coordinate moves ≤ γ/2).

    Δ is checked once, by :func:`~dpopt.privacy.grid.grid_step`."""
    spread = math.sqrt(int(dim))
    gamma = grid_step(sensitivity, spread)  # refuses a negative, NaN or infinite Δ
    return gamma, float(sensitivity) + gamma * spread


@dataclass(frozen=True)
class GridSteps:
    """T adaptive releases of a sum with exact discrete Gaussian noise on a public grid.

    Step t releases ``(round(S_t/γ) + K_t)·γ`` with K_t ~ N_ℤ(0, param)^d exact ([CKS20]).
    When the S_t of neighbours differ by at most Δ in ℓ2 (whatever was released before),
    the rounded centres differ by an integer vector (grid units) of norm ≤ ``reach``/γ,
    so each step is ρ-zCDP with ρ = reach²/(2σ²), σ² = γ²·param as drawn, and the T steps
    are (T·ρ)-zCDP ([CKS20]; zCDP composes adaptively by adding ρ).

    Attributes
    ----------
    noise : GridNoise
        The law of each step's noise (a discrete Gaussian on γℤ).
    reach : float
        Δ', the ℓ2 distance of rounded neighbouring centres (value units).
    steps : int
        T.
    """

    noise: GridNoise
    reach: float
    steps: int

    @property
    def gamma(self) -> float:
        """The public grid step γ."""
        return self.noise.gamma

    @property
    def sigma(self) -> float:
        """σ of the noise as drawn (value units)."""
        return self.noise.scale

    @property
    def rho_step(self) -> float:
        """ρ = Δ'²/(2σ²) of one step, with σ² = γ²·param exactly as drawn."""
        return (self.reach / self.noise.gamma) ** 2 / (2.0 * float(self.noise.param))

    @property
    def rho(self) -> float:
        """ρ of the T steps together."""
        return self.steps * self.rho_step

    def scaled(self, factor: float | Fraction) -> GridSteps:
        """The same grid with σ multiplied by ``factor`` (σ²/γ² times factor², exactly)."""
        param = self.noise.param * Fraction(factor) ** 2
        return GridSteps(GridNoise(self.noise.kind, self.noise.gamma, param), self.reach, self.steps)

    def release(self, centre: np.ndarray, units: np.ndarray) -> np.ndarray:
        """``centre`` rounded onto γℤ plus ``units`` (integers, one step of :meth:`draws`) grid steps.

        Every value returned is an exact float multiple of γ (integers clamped to ±2^52,
        a 1-Lipschitz map before the noise, post-processing after it).
        """
        gamma = self.noise.gamma
        return on_grid(on_grid(centre, gamma) / gamma + units, 1.0) * gamma

    def draws(self, rng: np.random.Generator, dim: int) -> Iterator[np.ndarray]:
        """The T steps' noise in grid units, ``dim`` integers (as float64) per step.

        The noise is data-independent, so it is drawn ahead in blocks of whole steps (about
        :data:`NOISE_BLOCK` values per call of the exact sampler, one draw of ``rng`` each,
        see :func:`dpopt.privacy.exact.sampler_for`).
        """
        per_block = max(1, NOISE_BLOCK // max(1, dim))
        left = self.steps
        while left > 0:
            block = min(per_block, left)
            units = self.noise.units(rng, block * dim).reshape(block, dim)
            yield from units
            left -= block


def zcdp_gaussian_steps(sensitivity: float, dim: int, steps: int, rho: float) -> GridSteps:
    """T grid steps whose zCDP adds up to at most ρ: σ = Δ'·√(T/(2ρ)) ([CKS20]).

    Parameters
    ----------
    sensitivity : float
        Δ > 0, the ℓ2 sensitivity of each step's sum (replace-one, from declared bounds).
    dim : int
        d, the length of the sum.
    steps : int
        T ≥ 1.
    rho : float
        The budget ρ > 0 of the T steps (e.g. :func:`dpopt.privacy.zcdp.zcdp_rho` (ε, δ)).

    Returns
    -------
    GridSteps
        σ²/γ² rounded up to an integer, so ``.rho`` ≤ ρ.
    """
    t = check_steps(steps)
    gamma, reach = grid_reach(sensitivity, dim)
    if not (math.isfinite(rho) and rho > 0.0):
        raise PrivacyParameterError(f"rho must be finite and > 0, got {rho!r}")
    return GridSteps(gaussian_grid_noise(reach * math.sqrt(t / (2.0 * rho)), gamma), reach, t)


def grid_gaussian_steps(sigma: float, sensitivity: float, dim: int, steps: int) -> GridSteps:
    """T grid steps with noise of scale at least ``sigma`` (from an accountant evaluated at Δ')."""
    gamma, reach = grid_reach(sensitivity, dim)
    return GridSteps(gaussian_grid_noise(sigma, gamma), reach, check_steps(steps))

