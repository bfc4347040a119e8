"""AdaSSP: sufficient-statistics perturbation with a privately chosen ridge (Wang 2018, Alg. 2).

For linear regression with the squared loss, ``(1/n) Σ (θᵀx_i − y_i)²``, the mechanism
releases three noisy sufficient statistics and solves a ridge regression on them; it calls
no solver:

1. the smallest eigenvalue λ_min(XᵀX), a scalar;
2. XᵀX, released as its upper triangle (diagonal included, k = d(d+1)/2 values) and mirrored;
3. Xᵀy, a d-vector;
4. with a declared intercept column, Σy (below);

then (Wan18 Alg. 2, lines 2, 3 and 6)

    λ̃_min = max(λ̂_min − shift, 0),    λ = max(0, τ − λ̃_min),    θ = (XᵀX^ + λI)⁻¹ Xᵀy^,

where hats are the noisy releases.  Everything after the three releases is post-processing.

Privacy (replace-one neighbours)
--------------------------------
Every row has ‖x‖₂ ≤ B (the dataset's declared x bound, in ℓ2 through
:meth:`~dpopt.modeling.dataset.Dataset.x_bound_in`) and |y| ≤ Y (its declared ``y_bound``);
rows outside are mapped onto the bounds when the dataset is built.  Replacing the row (x, y)
by (x', y') changes XᵀX by E = x'x'ᵀ − xxᵀ and Xᵀy by x'y' − xy.  The paper's neighbours
are add/remove-one; dpopt's are replace-one, and the sensitivities are derived for that:

* **λ_min(XᵀX)**: E is a difference of two PSD rank-one matrices, −xxᵀ ⪯ E ⪯ x'x'ᵀ, so its
  eigenvalues lie in [−‖x‖², ‖x'‖²] and ‖E‖_op ≤ B².  Weyl's inequality gives
  |λ_min(A + E) − λ_min(A)| ≤ ‖E‖_op, so **Δ₁ = B²** — the paper's add/remove value, *not*
  twice it (the two rank-one changes have opposite signs).  The centre is clamped to
  [0, nB²] (a 1-Lipschitz map; λ_min of a PSD matrix with trace ≤ nB² lies there), so a
  floating-point eigenvalue slightly below 0 changes nothing.
* **The upper triangle of XᵀX** (the ℓ2 norm of the released k-vector):
  ‖triu(E)‖₂² = ½(‖E‖_F² + Σ_i E_ii²), with ‖E‖_F² = ‖x‖⁴ + ‖x'‖⁴ − 2(xᵀx')² ≤ 2B⁴ and
  Σ_i E_ii² = Σ_i (x'_i² − x_i²)² ≤ Σ_i (x'_i⁴ + x_i⁴) ≤ ‖x'‖⁴ + ‖x‖⁴ ≤ 2B⁴ (the cross terms
  are ≤ 0, and Σ a_i² ≤ (Σ a_i)² for a_i ≥ 0).  So **Δ₂ = √2·B²** for d ≥ 2, attained by
  x = B·e₁, x' = B·e₂; for d = 1 the triangle is the single entry x'² − x², so Δ₂ = B².
  Under add/remove ‖triu(xxᵀ)‖₂ ≤ ‖x‖² ≤ B²: replace-one costs √2, not 2.  Mirroring the
  noisy triangle gives the paper's symmetric noise Z_ij = Z_ji (post-processing).
* **Xᵀy**: ‖x'y' − xy‖₂ ≤ ‖x'‖|y'| + ‖x‖|y| ≤ **Δ₃ = 2·B·Y**, twice the paper's add/remove
  B·Y (attained by x' = x, y' = −y).

The budget is composed in **zCDP** ([CKS20]; Bun & Steinke 2016): ρ = zcdp_rho(ε', δ) is the
largest ρ whose [CKS20] conversion gives δ(ε') ≤ δ (:func:`dpopt.privacy.zcdp.zcdp_rho`), and
the three releases get the shares :data:`SHARES` of it (0.1 for the scalar λ_min, 0.45 each
for XᵀX and Xᵀy); zCDP adds up, so the triple is ρ-zCDP and hence (ε', δ)-DP.  ε' = ε without
a declared intercept; with one, a fourth release — Σy, one value of ℓ1 sensitivity 2Y under
replace-one, with exact discrete Laplace noise on its grid (:func:`~dpopt.privacy.grid.laplace_on_grid`)
— is ε_mean-DP with ε_mean = :func:`mean_share` (n, ε)·ε, ε' = ε − ε_mean, and basic composition
(DR14 Thm. 3.16) makes the four (ε, δ)-DP.  (The paper splits
(ε, δ) into three equal parts by basic composition; at δ = 1/n² the zCDP split draws about
1.7× less noise on the two large releases.)

Each release is exact on its own public grid ([CKS20]; :mod:`dpopt.privacy.grid`): the centre
is rounded onto γ_iℤ^{k_i}, γ_i = ``grid_step(Δ_i, √k_i)`` (a power of two read from Δ_i and
k_i only; ``parameters["grid_step_…"]``), and exact discrete Gaussian noise is added in grid
units (:func:`~dpopt.privacy.accountant.zcdp_gaussian_steps`).  Rounded neighbours differ by
at most Δ'_i = Δ_i + γ_i√k_i in ℓ2, and the calibration pays for exactly that:
ρ_i = Δ'_i²/(2σ_i²) ≤ share_i·ρ with σ_i²/γ_i² an integer (``parameters["zcdp_rho_…"]``).
Every noisy statistic is an integer multiple of its γ_i, and which multiples are reachable
does not depend on the data.

The ridge (post-processing)
---------------------------
Wan18 Alg. 2 releases its statistics with σ_paper(Δ) = √(log(6/δ))·Δ/(ε/3) and sets (line 2)
λ̃_min = max(λ_min + σ_paper(B²)·Z − σ_paper(B²)·√(log(6/δ)), 0) and (line 3)
λ = max(0, √(d·log(6/δ)·log(2d²/δ))·B²/(ε/3) − λ̃_min), i.e. τ = σ_paper(B²)·√(d·log(2d²/δ)),
a high-probability bound on the operator norm of the symmetric noise matrix.  dpopt keeps the
rule and its constants with σ_paper replaced by the σ it actually draws: the shift is
σ₁·√(log(6/δ)) (σ₁ of the λ_min release) and τ = c·σ₂·√(d·log(2d²/δ)) (σ₂ of the XᵀX release);
with the paper's σ and c = 1 both are exactly lines 2 and 3.  The factor c = :func:`ridge_scale` (n, ε)
= √(RIDGE_SCALE/(n·ε)) clipped to [¼, 1] is a public function of n and ε: the operator norm's
typical size is about 2σ₂√d, a fraction √(4/log(2d²/δ)) ≈ 0.3–0.5 of τ, so the full τ is a
strongly shrunk fit, which pays where n·ε is small and the slopes' signal weak, and needlessly
biases the slopes where n·ε is large.  (Fixed on the tables of ``dpopt bench regression-rule``:
over their 49 (table, ε) cells at ε from 0.05 to 4 the mean R² of AdaSSP with the mean's share
below was 0.191 with c = 1 and 0.276 with this c; the cells' shortfall below R² = 0, averaged
over all cells, 0.011 and 0.012.)

A declared ``L2Squared`` term of weight Λ makes the objective
(1/n)Σ(θᵀx − y)² + (Λ/2)‖θ‖², whose normal equations are (XᵀX + (nΛ/2)I)θ = Xᵀy; the ridge
is then max(nΛ/2, λ): line 3 asks for λ_min(XᵀX) + ridge ≳ τ, and the declared ridge counts
toward it.  θ solves (XᵀX^ + λI)θ = Xᵀy^ by least squares (:func:`numpy.linalg.lstsq`: the
minimum-norm solution when the noisy matrix is singular, so no noisy value — and no row —
can make the solve fail), and is projected onto the ``L2Ball`` when one is declared.  The
release's ``noisy_min_eigenvalue`` (λ̂_min as released) and ``noisy_ridge`` (λ) are further
noisy outputs covered by the guarantee.

The intercept (post-processing)
-------------------------------
When the declarations name a constant-1 column — a schema's :class:`~dpopt.modeling.schema.Intercept`,
or a feature named ``"intercept"`` (what the estimators append) — the private ridge λ is not
applied to it, and its diagonal entry of XᵀX^ (Σ 1² = n) is replaced by the public n.  The
solve is then a ridge regression on data centred by the noisy means that the released
statistics already hold (that column's row of XᵀX^ is the noisy Σx, its entry of Xᵀy^ the noisy
Σy), so the ridge shrinks the slopes towards 0 and the prediction towards the noisy mean of y —
not towards 0, the middle of the declared label range, which is where an intercept shrunk with
the slopes pulled every prediction.  The mean of y has two noisy estimates, (Xᵀy^)_j/n and the
Laplace Σy^/n (a pure-DP scalar needs far less noise than a Gaussian at δ = 1/n²: the intercept
is what a few hundred rows can estimate), averaged with inverse-variance weights.  Each noisy
mean is then shrunk linearly towards the middle of its declared range by w = v/(v + s²), s² the
public variance of the estimate and v the variance of a mean spread evenly over the declared
range (Y²/3 for y, B²/(3(d − 1)) per coordinate of x): w ≈ 1 wherever the noise is small, and a
mean the noise would swamp is damped rather than trusted.

The Laplace release gets the share :func:`mean_share` (n, ε) = MEAN_SCALE/(n·ε) of ε, clipped
to [0.02, 0.95]: at n·ε ≳ 4,000 the noisy mean is already far below the label's spread with 2 %,
and the slopes get the rest; at n·ε ≲ 85 (diabetes' 331 rows at ε = 0.1) the slopes' statistics
drown in their noise whatever they get, the error is the intercept's, and nearly all of ε goes
to the label's mean.  (Fixed on the tables of ``dpopt bench regression-rule``: over their 49
(table, ε) cells at ε from 0.05 to 4, with c = 1, the mean R² of AdaSSP was 0.143 with the
earlier constant share ¼ and 0.191 with this rule; the cells' shortfall below R² = 0, averaged
over all cells, 0.039 and 0.011.)  With nothing but
the label's mean, no ε-DP release can do much better: for labels in [−Y, Y] a replace-one
neighbour moves Σy by 2Y, and the geometric (discrete Laplace) mechanism, optimal for a count
[GRS12], has variance ≈ 2·(2Y/ε)² at small ε, so the mean's squared error is ≈ 8Y²/(nε)² on
some table of n rows in the declared range, whatever mechanism released it (docs/choosing.md
works this out for diabetes).

The rule stays conservative: for the centred Gram matrix S (the Schur complement of the
intercept's entry), λ_min(XᵀX) ≤ λ_min(S) (for v with Sv = λ_min(S)v, the vector (v, −x̄ᵀv) has
Rayleigh quotient ≤ λ_min(S) on XᵀX), so λ̃_min still bounds λ_min(S) from below.  A declared
``L2Squared`` term counts toward the slopes' ridge only: as in scikit-learn's ``Ridge``, the
intercept is not penalized.  The release records ``intercept_column``, ``epsilon_mean`` and the
Laplace release's ``sensitivity_l1_label_sum``, ``noise_scale_label_sum`` and ``grid_step_label_sum``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.params import Interval, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.losses import SquaredLoss
from dpopt.modeling.problem import Problem
from dpopt.modeling.readers import compute
from dpopt.modeling.schema import INTERCEPT, Intercept
from dpopt.privacy.accountant import GridSteps, zcdp_gaussian_steps
from dpopt.privacy.grid import laplace_on_grid
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseSpec
from dpopt.privacy.zcdp import zcdp_rho

__all__ = ["AdaSSP", "AdaSSPPlan", "adassp_ridge", "gram_sensitivity", "intercept_column", "sufficient_statistics"]

#: the shares of ρ(ε, δ) of the three releases: λ_min(XᵀX), XᵀX, Xᵀy (module docstring)
SHARES = (0.1, 0.45, 0.45)
#: with a declared intercept, the share of ε spent on the pure-DP Laplace release of Σy is
#: MEAN_SCALE/(n·ε) clipped to MEAN_SHARES (:func:`mean_share`)
MEAN_SCALE = 80.0
MEAN_SHARES = (0.02, 0.95)
#: the factor on Wan18's ridge threshold τ is √(RIDGE_SCALE/(n·ε)) clipped to RIDGE_SCALES (:func:`ridge_scale`)
RIDGE_SCALE = 200.0
RIDGE_SCALES = (0.25, 1.0)
#: what AdaSSP accepts (the one-line refusal of anything else names it)
ACCEPTS = ("AdaSSP accepts the squared loss (SquaredLoss) with no constraint set or an L2Ball, "
           "and at most an L2Squared regularizer")


def mean_share(n: int, epsilon: float) -> float:
    """The share of ε that AdaSSP spends on the Laplace Σy with a declared intercept (public facts only).

    MEAN_SCALE/(n·ε), clipped to :data:`MEAN_SHARES`: the noisy mean's sd is 2√2·Y/(share·n·ε),
    so the share keeps it near 2√2·Y/MEAN_SCALE ≈ 0.035·Y while that costs the slopes little,
    and gives the mean most of ε where n·ε is so small that the slopes' statistics are swamped
    anyway (module docstring, "The intercept").

    Parameters
    ----------
    n : int
        Rows (public under replace-one).
    epsilon : float
        ε of the run.

    Returns
    -------
    float
        A share in MEAN_SHARES.
    """
    low, high = MEAN_SHARES
    return min(max(MEAN_SCALE / (n * epsilon), low), high)


def ridge_scale(n: int, epsilon: float) -> float:
    """The factor on Wan18's threshold τ (Alg. 2 line 3) from public facts: √(RIDGE_SCALE/(n·ε)) in [RIDGE_SCALES].

    τ bounds the noise matrix's operator norm with high probability; its typical size is
    about 2σ₂√d, a fraction √(4/log(2d²/δ)) of τ.  Where n·ε is small the slopes' signal is
    weak and the full τ (a strongly shrunk fit) pays; where it is large the conservative τ
    only biases the slopes towards 0.  The factor falls from 1 to RIDGE_SCALES[0] as n·ε grows
    (module docstring, "The ridge").

    Parameters
    ----------
    n : int
        Rows (public under replace-one).
    epsilon : float
        ε of the run.

    Returns
    -------
    float
    """
    low, high = RIDGE_SCALES
    return min(max(math.sqrt(RIDGE_SCALE / (n * epsilon)), low), high)


def gram_sensitivity(x_bound: float, dim: int) -> float:
    """ℓ2 sensitivity of the upper triangle of XᵀX under replace-one (module docstring).

    Parameters
    ----------
    x_bound : float
        B, the declared bound on ‖x‖₂.
    dim : int
        d, the number of features.

    Returns
    -------
    float
        √2·B² for d ≥ 2 (rounded up), B² for d = 1.
    """
    square = x_bound * x_bound
    return square if dim == 1 else math.nextafter(math.sqrt(2.0) * square, math.inf)


def intercept_column(data: Dataset) -> int | None:
    """The index of the column the declarations name the intercept (constant 1), or None.

    A schema's :class:`~dpopt.modeling.schema.Intercept` column, else a feature named
    ``"intercept"`` (what the :mod:`dpopt.sklearn` estimators append).  Declarations only: the
    column's values are never read.

    Parameters
    ----------
    data : Dataset
        The dataset whose declarations are read.

    Returns
    -------
    int or None
    """
    if data.schema is not None:
        start = 0
        for _, spec in data.schema.columns:
            if isinstance(spec, Intercept):
                return start
            start += spec.width
    names = tuple(data.feature_names)
    return names.index(INTERCEPT) if INTERCEPT in names else None


def adassp_ridge(noisy_min_eigenvalue: float, *, shift: float, threshold: float, floor: float = 0.0) -> float:
    """The ridge λ of Wan18 Alg. 2, lines 2–3, from the noisy λ̂_min (post-processing).

    Parameters
    ----------
    noisy_min_eigenvalue : float
        λ̂_min, the released noisy smallest eigenvalue of XᵀX.
    shift : float
        σ₁·√(log(6/δ)): λ̃_min = max(λ̂_min − shift, 0) is a high-probability lower bound on λ_min.
    threshold : float
        τ = σ₂·√(d·log(2d²/δ)), the bound on the noise matrix's operator norm.
    floor : float
        nΛ/2 of a declared L2Squared term (0 without one).

    Returns
    -------
    float
        max(floor, τ − λ̃_min, 0).
    """
    lower = max(noisy_min_eigenvalue - shift, 0.0)
    return max(floor, threshold - lower, 0.0)


@dataclass(frozen=True, kw_only=True)
class AdaSSPPlan(Plan):
    """A calibrated AdaSSP run: the three exact laws and the ridge rule's public constants."""

    eigen_noise: NoiseSpec  # λ_min(XᵀX): one value
    gram_noise: NoiseSpec  # the upper triangle of XᵀX: d(d+1)/2 values
    moment_noise: NoiseSpec  # Xᵀy: d values
    eigen_cap: float  # n·B², the public upper end of the λ_min centre's clamp
    shift: float  # σ₁·√(log(6/δ)) (Alg. 2 line 2)
    threshold: float  # τ = σ₂·√(d·log(2d²/δ)) (Alg. 2 line 3)
    floor: float  # n·Λ/2 of a declared L2Squared term
    intercept: int | None = None  # the declared constant-1 column: not ridged, its diagonal entry is n
    mean_noise: NoiseSpec | None = None  # Σy (with an intercept): exact discrete Laplace, pure ε_mean


class AdaSSP(Mechanism):
    """AdaSSP (Wan18 Alg. 2): noisy XᵀX, Xᵀy and λ_min(XᵀX) on public grids, then a ridge
    regression on them with a privately chosen ridge (module docstring).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1) (the releases are discrete Gaussian); ρ = zcdp_rho(ε, δ) is split by :data:`SHARES`.
    ledger : Ledger, optional
        As in :class:`~dpopt.mechanisms.base.Mechanism`.

    Notes
    -----
    Accepts the squared loss over ℝ^d or an ``L2Ball`` (the released θ is projected onto it),
    with at most an ``L2Squared`` regularizer; anything else is refused before the charge.  It
    calls no solver (``solver`` must stay ``"auto"``).  Release parameters: per statistic
    (suffix ``_min_eigenvalue``, ``_gram``, ``_moment``) ``sensitivity_l2_…``, ``noise_scale_…``
    (σ as drawn), ``grid_step_…`` (γ) and ``zcdp_rho_…``; ``zcdp_rho`` (their sum);
    ``intercept_column`` (the declared intercept, or None); ``ridge_shift``, ``ridge_threshold``,
    ``ridge_floor`` and ``ridge_scale`` (the rule's public constants); ``epsilon_mean`` (ε of the
    label's mean, :func:`mean_share`); ``noisy_min_eigenvalue`` and ``noisy_ridge`` (noisy outputs,
    covered by the guarantee).

    Examples
    --------
    >>> import numpy as np, dpopt as dp
    >>> from dpopt.mechanisms.adassp import AdaSSP
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (2000, 3)) / 2
    >>> data = dp.Dataset(X, np.clip(X @ [1.0, -0.5, 0.2], -1, 1), x_bound=1.0, y_bound=1.0)
    >>> problem = dp.Problem(dp.SquaredLoss(data, dp.Variable(3)))
    >>> release = AdaSSP(1.0, 1e-6, ledger=dp.Ledger()).run(problem, seed=0)
    >>> release.theta.shape
    (3,)
    """

    name = "AdaSSP"
    theorem = ("Wan18 Alg. 2 with replace-one sensitivities; exact discrete Gaussian on grids [CKS20], "
               "three releases composed in zCDP at shares of ρ(ε, δ)")
    needs = SolverNeed.NONE  # a d×d least-squares solve in numpy
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="AdaSSP's releases are Gaussian: δ > 0")],
    }

    def __init__(self, epsilon: float, delta: float, *, ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)

    # -- public checks and calibration ------------------------------------------------
    def _check_problem(self, problem: Problem) -> None:
        """Refuse, before the charge, what AdaSSP does not solve (from declarations only)."""
        if not isinstance(problem, Problem):
            raise MechanismError(f"run() needs a dpopt Problem, got {type(problem).__name__}")
        if problem.perturbation is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        if not isinstance(problem.loss, SquaredLoss):
            raise MechanismError(f"{ACCEPTS}; got the {problem.loss.name} loss")
        c = problem.constraint
        if c is not None and c.norm_ball != 2:  # declared: {θ : ‖θ‖₂ ≤ r}, centred at 0
            raise MechanismError(f"{ACCEPTS}; got the constraint set {type(c).__name__}")
        if not problem.elastic or problem.l1_weight != 0.0:
            names = ", ".join(type(r).__name__ for r in problem.regularizers)
            raise MechanismError(f"{ACCEPTS}; got the regularizers {names}")

    def plan(self, problem: Problem, options: RunOptions | None = None) -> AdaSSPPlan:
        """Check the problem and calibrate the releases (n, d, B, Y, ε, δ and the declared intercept only)."""
        self._check_problem(problem)
        data = problem.loss.data
        n, d = problem.n, problem.dim
        x_bound = float(data.x_bound_in(2))
        y_bound = float(data.y_bound)  # type: ignore[arg-type]  # SquaredLoss requires it
        intercept = intercept_column(data)
        mean_eps = mean_share(n, self.epsilon) * self.epsilon if intercept is not None else 0.0
        rho = zcdp_rho(self.epsilon - mean_eps, self.delta)
        sens = (x_bound * x_bound, gram_sensitivity(x_bound, d), 2.0 * x_bound * y_bound)
        dims = (1, d * (d + 1) // 2, d)
        steps = tuple(zcdp_gaussian_steps(s, k, 1, share * rho) for s, k, share in zip(sens, dims, SHARES, strict=True))
        laws = tuple(NoiseSpec.on_grid(step.noise) for step in steps)
        shift = laws[0].scale * math.sqrt(math.log(6.0 / self.delta))
        threshold = ridge_scale(n, self.epsilon) * laws[1].scale * math.sqrt(d * math.log(2.0 * d * d / self.delta))
        floor = 0.5 * n * problem.l2_weight
        params = self._parameters(x_bound, y_bound, sens, steps, (shift, threshold, floor), problem)
        params.update(intercept_column=intercept, zcdp_rho=sum(step.rho for step in steps), epsilon_mean=mean_eps,
                      epsilon_zcdp=self.epsilon - mean_eps, ridge_scale=ridge_scale(n, self.epsilon))
        mean_noise = None
        if mean_eps > 0:  # Σy, one value of ℓ1 sensitivity 2Y, pure mean_eps-DP
            mean_noise = NoiseSpec.on_grid(laplace_on_grid(2.0 * y_bound, mean_eps, 1))
            params.update(sensitivity_l1_label_sum=2.0 * y_bound, noise_scale_label_sum=mean_noise.scale,
                          grid_step_label_sum=mean_noise.grid_step)
        return AdaSSPPlan(problem=problem, parameters=params, eigen_noise=laws[0], gram_noise=laws[1],
                          moment_noise=laws[2], eigen_cap=n * x_bound * x_bound, shift=shift,
                          threshold=threshold, floor=floor, intercept=intercept, mean_noise=mean_noise)

    def _parameters(self, x_bound: float, y_bound: float, sens: tuple[float, ...], steps: tuple[GridSteps, ...],
                    rule: tuple[float, float, float], problem: Problem) -> dict[str, Any]:
        """The public record: bounds, split, and per statistic its sensitivity, σ, grid and ρ."""
        params: dict[str, Any] = {
            "noise": "discrete-gaussian", "neighbouring": "replace-one",
            "accountant": ("basic composition of a pure ε_mean Laplace Σy (with an intercept) and zcdp: three "
                           "releases at shares " + ", ".join(f"{s:g}" for s in SHARES) + " of ρ(ε − ε_mean, δ)"),
            "x_bound_l2": x_bound, "y_bound": y_bound,
            "ridge_shift": rule[0], "ridge_threshold": rule[1], "ridge_floor": rule[2],
            "projected": problem.constraint is not None,
        }
        for suffix, s, step in zip(("min_eigenvalue", "gram", "moment"), sens, steps, strict=True):
            params.update({f"sensitivity_l2_{suffix}": s, f"noise_scale_{suffix}": step.sigma,
                           f"grid_step_{suffix}": step.gamma, f"zcdp_rho_{suffix}": step.rho})
        return params

    # -- the run ----------------------------------------------------------------------
    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Release the statistics on their grids (Σy too with an intercept), choose the ridge, solve, project."""
        assert isinstance(plan, AdaSSPPlan)
        problem = plan.problem
        d = problem.dim
        gram, moment = sufficient_statistics(problem.loss.data)
        upper = np.triu_indices(d)
        eigen = min(max(_min_eigenvalue(gram), 0.0), plan.eigen_cap)
        noisy_eigen = float(plan.eigen_noise.release(np.array([eigen]), rng)[0])
        noisy_gram = _mirror(plan.gram_noise.release(gram[upper], rng), d)
        noisy_moment = plan.moment_noise.release(moment, rng)
        noisy_sum = None
        if plan.mean_noise is not None:
            noisy_sum = float(plan.mean_noise.release(np.array([label_sum(problem.loss.data)]), rng)[0])
        ridge = adassp_ridge(noisy_eigen, shift=plan.shift, threshold=plan.threshold, floor=plan.floor)
        if plan.intercept is None:
            theta = _ridge_solve(noisy_gram, ridge, noisy_moment)
        else:
            data = problem.loss.data
            laplace = None if plan.mean_noise is None or noisy_sum is None else (noisy_sum, plan.mean_noise.scale)
            mean_y = _label_mean(noisy_moment[plan.intercept], plan.moment_noise.scale, laplace, problem.n,
                                 float(data.y_bound))
            theta = _centred_solve(noisy_gram, noisy_moment, ridge, plan.intercept, problem.n,
                                   float(data.x_bound_in(2)), plan.gram_noise.scale, mean_y)
        if problem.constraint is not None:
            theta = np.asarray(problem.constraint.project(theta), dtype=np.float64)
        return Outcome(theta, parameters={"noisy_min_eigenvalue": noisy_eigen, "noisy_ridge": ridge})


def sufficient_statistics(data: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """(XᵀX, Xᵀy) of a dataset (a Dask-backed one is reduced on the executor's client)."""
    X, y = data.X, data.y
    if data.is_distributed:
        gram, moment = compute(X.T @ X, X.T @ y)
    else:
        gram, moment = X.T @ X, X.T @ y
    return np.asarray(gram, dtype=np.float64), np.asarray(moment, dtype=np.float64)


def _min_eigenvalue(gram: np.ndarray) -> float:
    """λ_min of the symmetric matrix read from the upper triangle of ``gram`` (the released part)."""
    return float(np.linalg.eigvalsh(gram, UPLO="U")[0])


def _mirror(upper: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d×d matrix whose upper triangle (row-major, diagonal included) is ``upper``."""
    out = np.zeros((d, d))
    out[np.triu_indices(d)] = upper
    return out + np.triu(out, 1).T


def _label_mean(moment_sum: float, moment_sigma: float, laplace: tuple[float, float] | None, n: int,
                y_bound: float) -> float:
    """The noisy mean of y from its two releases (module docstring; post-processing).

    (Xᵀy^)_j/n (Gaussian, σ₃/n) and the Laplace Σy^/n (variance 2b²/n²) are averaged with
    inverse-variance weights, shrunk by w = v/(v + s²) (s² the average's variance, v = Y²/3) and
    clipped to [−Y, Y].
    """
    weights, sums = [(moment_sigma / n) ** -2], [moment_sum]
    if laplace is not None:  # (Σy^, b): variance 2b²
        weights.append(0.5 * (laplace[1] / n) ** -2)
        sums.append(laplace[0])
    spread = 1.0 / sum(weights)
    combined = spread * sum(w * t for w, t in zip(weights, sums, strict=True)) / n
    prior = y_bound * y_bound / 3.0
    return float(np.clip(prior / (prior + spread) * combined, -y_bound, y_bound))


def label_sum(data: Dataset) -> float:
    """Σy of a dataset (its labels as stored, within ±Y; a Dask-backed one reduced on its client)."""
    y = data.y
    total = compute(y.sum())[0] if data.is_distributed else y.sum()
    return float(total)


def _centred_solve(gram: np.ndarray, moment: np.ndarray, ridge: float, j: int, n: int, x_bound: float,
                   gram_sigma: float, mean_y: float) -> np.ndarray:
    """θ from the noisy statistics with column ``j`` the intercept (module docstring; post-processing).

    The noisy mean m_x = w·(XᵀX^)_{·j}/n (projected onto the ℓ2 ball of radius B) and the
    noisy mean m_y (:func:`_label_mean`) centre the statistics: S = G − n·m_x m_xᵀ, its
    negative eigenvalues set to 0, and c = Xᵀy^ − n·m_x m_y over the other columns; the slopes
    solve (S + λI)β = c and the intercept is m_y − m_xᵀβ.  w = v/(v + (σ₂/n)²), with
    v = B²/(3(d − 1)), shrinks the mean towards the middle of the declared ball by its public
    noise.  No value can make it fail.
    """
    d = moment.shape[0]
    keep = np.delete(np.arange(d), j)
    spread = x_bound * x_bound / (3.0 * max(d - 1, 1))  # per coordinate: ‖m_x‖² ≤ B² spread over d − 1
    mean_x = spread / (spread + (gram_sigma / n) ** 2) * gram[keep, j] / n
    norm = float(np.linalg.norm(mean_x))
    if norm > x_bound:
        mean_x = mean_x * (x_bound / norm)
    centred = gram[np.ix_(keep, keep)] - n * np.outer(mean_x, mean_x)
    values, vectors = np.linalg.eigh(centred)
    centred = (vectors * np.maximum(values, 0.0)) @ vectors.T
    slopes = _ridge_solve(centred, ridge, moment[keep] - n * mean_x * mean_y)
    theta = np.empty(d)
    theta[keep] = slopes
    theta[j] = mean_y - float(mean_x @ slopes)
    return theta if np.all(np.isfinite(theta)) else np.zeros(d)


def _ridge_solve(gram: np.ndarray, ridge: float, moment: np.ndarray) -> np.ndarray:
    """The minimum-norm least-squares solution of (gram + ridge·I)θ = moment; 0 if it is not finite.

    Post-processing of noisy values: lstsq never refuses a singular matrix, and the inputs are
    finite multiples of the grids, so no value can make it raise.
    """
    d = moment.shape[0]
    theta = np.linalg.lstsq(gram + ridge * np.eye(d), moment, rcond=None)[0]
    return theta if np.all(np.isfinite(theta)) else np.zeros(d)
