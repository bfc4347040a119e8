"""Noise scale of every mechanism's exact grid noise against the continuous calibration it replaced.

Setup
-----
Every additive release is now exact discrete noise on a public grid γℤ^d
(:mod:`dpopt.privacy.grid`), calibrated with the discrete law's own guarantee [CKS20]: the
exact 1-D profile for scalars, zCDP with the [CKS20] conversion for d-dimensional Gaussian
releases and for the gradient mechanisms, the discrete Laplace with ℓ1 sensitivity √d·Δ₂ for
pure-ε output perturbation, and the grid-adjusted sensitivity Δ' = Δ + γ√d (or + γ per
block for selections) everywhere.  For each mechanism on its README (or model script)
example, on Adult subsamples of ``--n`` rows (balanced for OPSamp, the ``standard``
encoding where the README uses it), and for each ε of ``--epsilons``, this prints

* **exact**: the scale the mechanism now uses, read from ``mech.plan(problem)`` (its
  ``parameters``: ``noise_scale``, ``output_noise_scale``, ``recovery_scale``,
  ``laplace_scale``, ``selection_scale``, ``score_noise_scale``, ...);
* **continuous**: the scale the continuous calibration gives for the same public inputs
  (the same sensitivity before the grid's inflation, the same T, ε₀, split of ε),
  computed here from the earlier formulas with the library's continuous calibrations:
  the analytic Gaussian σ (Balle–Wang 2018) of one release, chosen against the ℓ2-Laplace
  Δ/ε by expected norm as before; the exact μ-GDP composition of T Gaussian steps
  (:func:`~dpopt.privacy.accountant.gaussian_sigma_for_composition`, ``"analytic"``) for
  DP-GD, mirror descent and Gaussian Frank–Wolfe; the subsampled Gaussian's PLD for DP-SGD;
  2Δ/ε₀ for a Frank–Wolfe selection; Δ/ε for a Laplace score or output, Δ/μ for a
  Gaussian score;

and their ratio (≥ 1 up to rounding: the exact calibration is never tighter).  Where the
two laws differ (pure-ε output perturbation: ℓ2-Laplace vs discrete Laplace per
coordinate) the column compares expected noise norms E‖v‖: d·Δ/ε for the ℓ2-Laplace
against √(2d)·b for the discrete Laplace (an upper bound, tight for b ≫ γ).  DP-SGD's
proved accounting (the subsampled discrete Gaussian's RDP, :mod:`dpopt.privacy.subsampled_rdp`)
is amplified by sampling too; its conversion from RDP to (ε, δ) costs a little more σ than the
continuous PLD.  Everything here is computed from public declarations (no data value
enters a scale); no mechanism is run.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import dpopt as dp
from dpopt.bench.arguments import parse, positive_floats
from dpopt.datasets import load_adult
from dpopt.privacy.accountant import gaussian_sigma_for_composition, sampled_gaussian_multiplier
from dpopt.privacy.calibration import gaussian_sigma, laplace_scale
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec, choose

__all__ = ["Examples", "Row", "main", "measure", "render"]

#: rows of the balanced Adult training set (the largest --n every example can use)
MAX_ROWS = 15_682
#: the README's DP-SGD sampling rate
SAMPLING_RATE = 0.01


@dataclass(frozen=True)
class Row:
    """One comparison: a scale under the continuous calibration and under the exact one."""

    mechanism: str
    example: str
    epsilon: float
    delta: float
    what: str
    continuous: float
    exact: float
    grid_step: float
    note: str = ""

    @property
    def ratio(self) -> float:
        """exact ÷ continuous."""
        return self.exact / self.continuous


@dataclass(frozen=True)
class Examples:
    """The README examples' problems on Adult subsamples of ``n`` rows (public facts only are read)."""

    n: int
    sampling_rate: float
    ridge: dp.Problem  # paper23 logistic + L2Squared(1e-2): OutputPerturbation
    submodular: dp.Problem  # paper23 logistic + L2Squared(5e-2) + Ω∞ (GroupCoverage)
    logistic: dp.Problem  # standard-encoding logistic over L2Ball(10): DP-GD, DP-SGD, objective perturbation
    lasso: dp.Problem  # paper23 squared loss over L1Ball(1): Frank–Wolfe, mirror descent
    halfspace: dp.DiscreteProblem  # balanced Adult, 0/1 loss on {−4..4}^23, ‖w‖ ≤ √23: OPSamp
    alphas: Callable[[dict[str, Any]], dp.Problem]  # ridge with the candidate's L2Squared weight

    @property
    def delta_standard(self) -> float:
        """δ = 1/n² of the standard-encoding examples."""
        return 1.0 / self.logistic.n**2


def examples(n: int, sampling_rate: float = SAMPLING_RATE) -> Examples:
    """Build the README examples on Adult subsamples of ``n`` rows (seed 0)."""
    train = load_adult("train", n=n, seed=0)
    theta = dp.Variable(train.n_features)
    assert train.schema is not None  # the shipped Adult declares its schema
    groups = [list(b) for b in train.schema.blocks] + [[20], [21], [22]]
    F = dp.submodular.GroupCoverage(23, groups, [len(g) ** 0.5 for g in groups])
    submodular = dp.Problem(dp.LogisticLoss(train, theta), regularizer=(
        dp.L2Squared(theta, 5e-2), dp.submodular.SubmodularNorm(theta, F, 1e-3)))
    std = load_adult("train", n=n, seed=0, encoding="standard")
    w = dp.Variable(std.n_features)
    balanced = load_adult("train", balanced=True, n=n, seed=0)
    v = dp.Variable(balanced.n_features)
    grid = dp.IntegerGrid(step=1, low=-4, high=4, l2_bound=math.sqrt(balanced.n_features))

    def alphas(h: dict[str, Any]) -> dp.Problem:
        return dp.Problem(dp.LogisticLoss(train, theta), regularizer=dp.L2Squared(theta, float(h["alpha"])))

    return Examples(
        n=n, sampling_rate=sampling_rate,
        ridge=dp.Problem(dp.LogisticLoss(train, theta), regularizer=dp.L2Squared(theta, 1e-2)),
        submodular=submodular,
        logistic=dp.Problem(dp.LogisticLoss(std, w), constraint=dp.L2Ball(w, 10.0)),
        lasso=dp.Problem(dp.SquaredLoss(train, theta), constraint=dp.L1Ball(theta, 1.0)),
        halfspace=dp.DiscreteProblem(dp.ZeroOneLoss(balanced, v, grid)),
        alphas=alphas,
    )


# ----------------------------------------------------------------------------- continuous calibrations


def continuous_law(sensitivity: float, epsilon: float, delta: float, dim: int,
                   choice: NoiseChoice = "auto") -> NoiseSpec:
    """The earlier calibration of one release: the ℓ2-Laplace Δ/ε (pure ε), or for δ > 0 the
    analytic Gaussian σ when its expected norm is smaller (or as ``choice`` asks)."""
    laplace = NoiseSpec("l2-laplace", laplace_scale(sensitivity, epsilon))
    if delta == 0.0:
        return laplace
    gauss = NoiseSpec("gaussian", gaussian_sigma(sensitivity, epsilon, delta, method="analytic"))
    return choose(gauss, laplace, dim, choice)


def law_row(mechanism: str, example: str, epsilon: float, delta: float, continuous: NoiseSpec,
            exact: NoiseSpec, dim: int, note: str = "") -> Row:
    """σ against σ when both laws are Gaussian, else the expected norms E‖v‖ in ``dim`` dimensions."""
    assert exact.grid is not None, "a released law is on a grid"
    if continuous.kind == exact.kind == "gaussian":
        return Row(mechanism, example, epsilon, delta, "σ", continuous.scale, exact.scale, exact.grid.gamma, note)
    return Row(mechanism, example, epsilon, delta, "E‖v‖", continuous.expected_norm(dim),
               exact.grid.expected_norm(dim), exact.grid.gamma, note)


def composed_sigma(sensitivity: float, steps: int, epsilon: float, delta: float) -> float:
    """σ of T Gaussian steps of sensitivity Δ composed exactly (μ-GDP; the analytic σ at Δ√T)."""
    return gaussian_sigma_for_composition(sensitivity, steps, epsilon, delta, method="analytic")


# ----------------------------------------------------------------------------- one function per mechanism


def output_perturbation(ex: Examples, eps: float) -> list[Row]:
    """CMS11 output perturbation on the README ridge: discrete Gaussian (δ > 0) and discrete Laplace (δ = 0)."""
    rows = []
    for delta in (1e-6, 0.0):
        mech = dp.OutputPerturbation(eps, delta)
        plan = mech.plan(ex.ridge)
        sens = float(plan.parameters["sensitivity_l2"])
        note = "" if delta else "laws differ: ℓ2-Laplace d·Δ/ε vs discrete Laplace √(2d)·b, b ≈ √d·Δ/ε (≈ √2)"
        rows.append(law_row("OutputPerturbation", "ridge, Adult-23", eps, delta,
                            continuous_law(sens, eps, delta, ex.ridge.dim, mech.noise), plan.output_noise,
                            ex.ridge.dim, note))
    return rows


def submodular_output(ex: Examples, eps: float) -> list[Row]:
    """KD19 Thm. 1 output perturbation on the README GroupCoverage problem."""
    mech = dp.SubmodularOutputPerturbation(eps, 1e-6)
    plan = mech.plan(ex.submodular)
    sens = float(plan.parameters["sensitivity_l2"])
    return [law_row("SubmodularOutputPerturbation", "Ω∞ GroupCoverage, Adult-23", eps, 1e-6,
                    continuous_law(sens, eps, 1e-6, ex.submodular.dim, mech.noise), plan.output_noise,
                    ex.submodular.dim)]


def objective_perturbation(ex: Examples, eps: float) -> list[Row]:
    """Objective perturbation's output noise (sensitivity 2·tolerance at (ε_A, δ_A)); its linear noise is unchanged."""
    delta = ex.delta_standard
    mech = dp.ObjectivePerturbation(eps, delta)
    plan = mech.plan(ex.logistic)
    p = plan.parameters
    cont = continuous_law(2.0 * mech.tolerance, float(p["epsilon_approx"]), float(p["delta_approx"]),
                          ex.logistic.dim)
    return [law_row("ObjectivePerturbation (output)", "logistic, Adult-109, ‖w‖≤10", eps, delta, cont,
                    plan.output_noise, ex.logistic.dim)]


def dual_frank_wolfe(ex: Examples, eps: float) -> list[Row]:
    """KD19 Alg. 2: the primal recovery's noise and, for reference, one selection's scale."""
    mech = dp.DualFrankWolfe(eps, 1e-6)
    plan = mech.plan(ex.submodular)
    p = plan.parameters
    example = "Ω∞ GroupCoverage, Adult-23"
    cont = continuous_law(float(p["theta_sensitivity_l2"]), float(p["epsilon_recovery"]),
                          float(p["delta_recovery"]), ex.submodular.dim, mech.noise)
    recovery = law_row("DualFrankWolfe (recovery)", example, eps, 1e-6, cont, plan.recovery, ex.submodular.dim)
    selection = Row("DualFrankWolfe (selection)", example, eps, 1e-6, "b" if mech.selection == "laplace" else "β",
                    2.0 * float(p["score_sensitivity"]) / float(p["step_epsilon"]), float(p["selection_scale"]),
                    float(p["score_grid"]))
    return [recovery, selection]


def opsamp(ex: Examples, eps: float) -> list[Row]:
    """NRVW19 Alg. 2's Laplace output: λ/ε against the discrete Laplace's b on its grid."""
    delta = 1.0 / ex.halfspace.loss.data.n ** 2
    mech = dp.OPSamp(eps, delta, calls=20)
    c, _ = mech.calibrate(ex.halfspace.with_kind(mech.kind))
    return [Row("OPSamp (output)", "0/1 halfspace, balanced Adult-23", eps, delta, "b",
                laplace_scale(c.sensitivity, eps), c.laplace_scale, c.grid_step)]


def dp_gradient_descent(ex: Examples, eps: float) -> list[Row]:
    """DP-GD with adaptive clipping (the sum in units of C_t, and the count) and with the Lipschitz clip."""
    delta, example = ex.delta_standard, "logistic, Adult-109, ‖w‖≤10"
    plan = dp.DPGradientDescent(eps, delta).plan(ex.logistic)
    p = plan.parameters
    share = float(p["clip_share"])
    unit = composed_sigma(1.0, plan.steps, eps, delta)  # the earlier u: σ of a unit-sensitivity T-fold composition
    rows = [Row("DPGradientDescent (adaptive)", example, eps, delta, "σ (sum)",
                2.0 * unit / math.sqrt(1.0 - share) * plan.clip, float(p["noise_scale"]), float(p["grid_step"]),
                "grid in units of the current clip C_t"),
            Row("DPGradientDescent (adaptive)", example, eps, delta, "σ_b count", unit / math.sqrt(share),
                float(p["count_sigma"]), float(p["count_grid_step"]))]
    plan = dp.DPGradientDescent(eps, delta, clip="lipschitz").plan(ex.logistic)
    p = plan.parameters
    rows.append(Row("DPGradientDescent (lipschitz)", example, eps, delta, "σ (sum)",
                    composed_sigma(2.0 * plan.clip, plan.steps, eps, delta), float(p["noise_scale"]),
                    float(p["grid_step"])))
    return rows


def dpsgd(ex: Examples, eps: float) -> list[Row]:
    """DP-SGD: the proved σ (the subsampled discrete Gaussian's RDP, amplified) against the subsampled
    continuous Gaussian's PLD σ."""
    delta, q = ex.delta_standard, ex.sampling_rate
    plan = dp.DPSGD(eps, delta, sampling_rate=q).plan(ex.logistic)
    p = plan.parameters
    cont = plan.clip * sampled_gaussian_multiplier(q, plan.steps, eps, delta)
    accountant = str(p["accountant"]).split(" ")[0]
    note = ("" if q == 1.0 else "both amplified by sampling; the proved bound is an RDP bound converted to (ε, δ), "
            "the continuous one an exact PLD")
    return [Row(f"DPSGD ({accountant}, q={q:g})", "logistic, Adult-109, ‖w‖≤10", eps, delta, "σ (sum)", cont,
                float(p["noise_scale"]), float(p["grid_step"]), note)]


def mirror_descent(ex: Examples, eps: float) -> list[Row]:
    """TTZ14 Alg. 1 on the README LASSO: σ on the gradient sum, sensitivity 2L, the plan's T."""
    plan = dp.PrivateMirrorDescent(eps, 1e-6).plan(ex.lasso)
    p = plan.parameters
    cont = composed_sigma(float(p["sensitivity_l2_sum"]), plan.steps, eps, 1e-6)
    return [Row("PrivateMirrorDescent", "LASSO, Adult-23, ‖θ‖₁≤1", eps, 1e-6, "σ (sum)", cont,
                float(p["noise_scale_sum"]), float(p["grid_step"]))]


def gaussian_frank_wolfe(ex: Examples, eps: float) -> list[Row]:
    """TTZ14 Alg. 5 on the README LASSO: σ on the gradient sum, sensitivity 2L₂, the plan's T."""
    plan = dp.GaussianFrankWolfe(eps, 1e-6).plan(ex.lasso)
    p = plan.parameters
    cont = composed_sigma(2.0 * float(p["lipschitz_l2"]), plan.steps, eps, 1e-6)
    return [Row("GaussianFrankWolfe", "LASSO, Adult-23, ‖θ‖₁≤1", eps, 1e-6, "σ (sum)", cont,
                float(p["noise_scale_sum"]), float(p["grid_step"]))]


def polytope_frank_wolfe(ex: Examples, eps: float) -> list[Row]:
    """TTZ14 Alg. 4 (the fast LASSO path): a selection's scale 2Δ/ε₀ against 2Δ'/ε₀ on the score grid."""
    mech = dp.PolytopeFrankWolfe(eps, 1e-6)
    p = mech.plan(ex.lasso).parameters
    return [Row("PolytopeFrankWolfe (LASSO, selection)", "LASSO, Adult-23, ‖θ‖₁≤1", eps, 1e-6,
                "b" if mech.selection == "laplace" else "β",
                2.0 * float(p["sensitivity_score"]) / float(p["step_epsilon"]), float(p["noise_scale"]),
                float(p["score_grid"]))]


def private_selection(ex: Examples, eps: float) -> list[Row]:
    """The noisy score: Laplace Δ/ε_s (liu-talwar, the DPSearchCV example) and Gaussian Δ/μ_s
    (papernot-steinke, the README's DP-GD steps grid)."""
    pure = dp.PrivateSelection(eps, candidates=[{"alpha": a} for a in (1e-3, 1e-2, 1e-1)],
                               build=lambda h, b: dp.OutputPerturbation(b.epsilon, b.delta))
    p = pure.plan(ex.alphas).parameters
    rows = [Row("PrivateSelection (liu-talwar)", "ℓ2² weight grid, Adult-23", eps, 0.0, "b (score)",
                laplace_scale(float(p["score_sensitivity"]), float(p["score_epsilon"])),
                float(p["score_noise_scale"]), float(p["score_grid"]))]
    delta = ex.delta_standard
    gdp = dp.PrivateSelection(eps, delta, candidates=[{"steps": t} for t in (10, 40, 160)],
                              stopping="papernot-steinke", expected_trials=3,
                              build=lambda h, b: dp.DPGradientDescent(b.epsilon, b.delta, steps=int(h["steps"])))
    p = gdp.plan(ex.logistic).parameters
    rows.append(Row("PrivateSelection (papernot-steinke)", "DP-GD steps grid, Adult-109", eps, delta, "σ (score)",
                    float(p["score_sensitivity"]) / float(p["score_mu"]), float(p["score_noise_scale"]),
                    float(p["score_grid"])))
    return rows


#: every comparison, in the order of the table
MEASURES: tuple[Callable[[Examples, float], list[Row]], ...] = (
    output_perturbation, submodular_output, objective_perturbation, dual_frank_wolfe, opsamp,
    dp_gradient_descent, dpsgd, mirror_descent, gaussian_frank_wolfe, polytope_frank_wolfe, private_selection,
)


def measure(args: argparse.Namespace) -> list[Row]:
    """Every row of the table for the examples on ``args.n`` rows and every ε of ``args.epsilons``."""
    ex = examples(args.n, args.sampling_rate)
    return [row for eps in args.epsilons for fn in MEASURES for row in fn(ex, eps)]


# ----------------------------------------------------------------------------- output


def render(rows: Sequence[Row], args: argparse.Namespace) -> str:
    """The table, then the notes of the rows that have one."""
    head = (f"{'mechanism':<37} {'example':<33} {'ε':>5} {'δ':>8} {'what':<10} {'continuous':>11} "
            f"{'exact (grid)':>12} {'ratio':>7} {'grid step':>10}")
    lines = [f"Noise scale: continuous calibration vs exact noise on the grid; Adult subsamples of n = {args.n} "
             f"rows; DP-SGD q = {args.sampling_rate:g}", head, "-" * len(head)]
    notes: dict[str, str] = {}
    for r in rows:
        mark = ""
        if r.note:
            key = f"{r.mechanism}, {r.what}"
            notes.setdefault(key, r.note)
            mark = "*"
        lines.append(f"{r.mechanism:<37} {r.example:<33} {r.epsilon:>5g} {r.delta:>8.2g} {r.what:<10} "
                     f"{r.continuous:>11.5g} {r.exact:>12.5g} {r.ratio:>6.3f}{mark:<1} {r.grid_step:>10.3g}")
    if notes:
        lines.append("")
        lines.extend(f"* {key}: {note}" for key, note in notes.items())
    return "\n".join(lines)


def write_csv(path: Path, rows: Sequence[Row]) -> None:
    """``rows`` as CSV with a ``ratio`` column."""
    names = [f.name for f in fields(Row)]
    with path.open("w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=[*names[:-2], "ratio", *names[-2:]])
        out.writeheader()
        for r in rows:
            out.writerow({**asdict(r), "ratio": r.ratio})


def _rows(text: str) -> int:
    """An integer n in [100, 15682] (the balanced Adult training set's size)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer in [100, {MAX_ROWS}], got {text!r}") from None
    if not 100 <= value <= MAX_ROWS:
        raise argparse.ArgumentTypeError(f"expected an integer in [100, {MAX_ROWS}], got {text!r}")
    return value


def _rate(text: str) -> float:
    """A Poisson sampling rate q in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench grid-cost", description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", type=positive_floats, default=[0.1, 1.0], help="ε values (default 0.1,1)")
    p.add_argument("--n", type=_rows, default=2000, help="rows of each Adult subsample (default 2000)")
    p.add_argument("--sampling-rate", type=_rate, default=SAMPLING_RATE,
                   help=f"DP-SGD's Poisson rate q (default {SAMPLING_RATE:g}, the README's; 1 skips the PLD search)")
    p.add_argument("--out", type=Path, default=None, metavar="CSV", help="also write the rows to this CSV file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    rows = measure(args)
    print(render(rows, args))
    if args.out is not None:
        write_csv(args.out, rows)
        print(f"\nwrote {args.out}")
    return 0
