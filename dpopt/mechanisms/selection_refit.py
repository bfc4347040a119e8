"""Private model selection by Gaussian noisy max and a refit: :class:`RefitSelection`.

For a declared grid of g candidates (hyperparameter settings, each a Gaussian mechanism
whose zCDP dpopt reads before the charge, e.g. DP-GD), the procedure is

1. every candidate i runs once, θ_i = M_i(T), on the training rows T with the
   per-candidate budget ρ_c (each on a throwaway ledger);
2. each gets one noisy score s_i = score(θ_i; H) + Z_i on the scored rows H (the held-out
   rows, or T itself without a held-out split), Z_i exact discrete Gaussian on the public
   grid γ_s with σ_s ≥ (Δ_s + γ_s)/μ_s, i.e. ρ_s = μ_s²/2-zCDP ([CKS20]: the Rényi curve of
   an integer shift is at most that of the continuous Gaussian);
3. î = argmax_i (s_i + b·[i = 0]) — the first candidate (a default to fall back on) is kept
   unless another one's noisy score beats it by the public margin b = ``prefer_first``·√2·σ_s
   (in whole grid steps), ties to the smaller index;
4. the chosen setting is fitted again on every row D = T ∪ H with the rest of the budget,
   θ = M'_î(D), ρ_f-zCDP.

Released: θ, î (``parameters["selected"]``), its noisy score and every candidate's noisy
score (``parameters["noisy_scores"]``); the candidates' θ_i are not released.

Privacy (replace-one neighbours on D; the split into T and H is by row position, public).
A step that reads the data through a ρ-zCDP mechanism, chosen from the outputs of earlier
steps, composes additively ([BS16] Lemma 2.3, adaptive composition); steps that do not read
the replaced row cost nothing; everything else (3, the index, the copies) is post-processing.
With a held-out split a replaced row lies in T or in H: in T it changes steps 1 and 4,
g·ρ_c + ρ_f; in H steps 2 and 4, g·ρ_s + ρ_f ([McS09] Thm 4's argument: the other part is a
post-processing with the unchanged rows fixed).  Without it, every step reads it:
g(ρ_c + ρ_s) + ρ_f.  :func:`dpopt.privacy.selection.calibrate_refit` splits ρ = zcdp_rho(ε, δ)
so that this is at most ρ, and the whole procedure is (ε, δ)-DP by the [CKS20] conversion of
:mod:`dpopt.privacy.zcdp` — the conversion every single DP-GD fit uses.  The preference b is a
public constant of the grid's order, not of the data, so (3) stays post-processing.

Why not random stopping (:class:`~dpopt.mechanisms.selection.PrivateSelection`)?  There the
released model is one of the candidate runs, so each run needs most of the budget and the
stopping law's overhead (PS22 Thm 2: log E[K]/(λ − 1) and the γ term) leaves each run about
0.6–0.7 of a single fit's μ.  Here the released model is a fit with (1 − share) of ρ
(``selection_share``, default 5 %): a small grid is scored cheaply, the model keeps most of the
budget, and the first candidate is kept unless the evidence is clear.

Checks before the charge (public facts only): every candidate and every refit is built and
planned with its budget, and its μ = √(2ρ) read from its plan is at most the budget's; the
held-out and refit Datasets must be other objects with the training Dataset's columns, and the
refit rows as many as the training and held-out rows together.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.errors import MechanismError, WeakGuaranteeWarning
from dpopt.mechanisms.base import Mechanism, RunOptions
from dpopt.mechanisms.params import Instance, Interval, IsCallable, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import Release
from dpopt.mechanisms.selection import (
    BuildFn,
    PrivateSelection,
    ProblemFn,
    ScoreFn,
    SelectionPlan,
    candidate_options,
    candidates_summary,
    check_grid,
    check_score,
    isolate_candidates,
)
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.problem import Problem
from dpopt.privacy.exact import sampler_for
from dpopt.privacy.grid import GridNoise, gaussian_grid_noise, grid_step
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.selection import CandidateBudget, RefitBudget, calibrate_refit

__all__ = ["PREFER_FIRST", "RESOLUTION", "SELECTION_SHARE", "RefitSelection", "preference_units",
           "refit_score_noise", "resolves"]

#: default fraction of the budget (of ρ) spent choosing
SELECTION_SHARE = 0.05
#: default margin, in standard deviations of the difference of two noisy scores, by which another
#: candidate must beat the first
PREFER_FIRST = 2.0
#: :func:`resolves`: the largest default margin b, as a fraction of the score's range, at which a
#: selection is worth running (a candidate better by this much wins at least half the time)
RESOLUTION = 0.1


def refit_score_noise(budget: RefitBudget, sensitivity: float) -> GridNoise:
    """The noisy score's public law: discrete Gaussian, σ ≥ (Δ_s + γ_s)/μ_s on γ_s = grid_step(Δ_s, 1)."""
    gamma = grid_step(sensitivity, 1.0)
    return gaussian_grid_noise((sensitivity + gamma) / budget.score_mu, gamma)


def resolves(noise: GridNoise, score_range: float) -> bool:
    """Whether a noisy-max selection with this score noise can tell candidates apart: whether the
    default margin b = :data:`PREFER_FIRST`·√2·σ_s is at most :data:`RESOLUTION` of the score's
    range (accuracy: of the scored rows), so that a candidate better by 10 % of the range beats
    the first at least half the time.  Where it cannot, running the candidates only spends budget
    the model could have (public: the noise law and the number of scored rows)."""
    return PREFER_FIRST * math.sqrt(2.0) * noise.scale <= RESOLUTION * score_range


def preference_units(noise: GridNoise, prefer_first: float) -> int:
    """b in grid steps: ⌈``prefer_first``·√2·σ_s/γ_s⌉ (public: the noise law only)."""
    return math.ceil(prefer_first * math.sqrt(2.0 * float(noise.param)))


class RefitSelection(PrivateSelection):
    """Private hyperparameter selection by Gaussian noisy max, then a refit (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The whole procedure's guarantee (charged once; δ > 0).
    candidates : sequence of dict
        The declared grid (public); the first is preferred (``prefer_first``).
    build : callable
        ``build(params, budget) -> Mechanism``, a ρ-zCDP mechanism whose μ = √(2ρ) dpopt reads
        (:func:`~dpopt.mechanisms.selection.candidate_mu`) at most ``budget.mu``; called with the
        per-candidate budget and with the refit budget.
    score : "accuracy" or callable
        As :class:`~dpopt.mechanisms.selection.PrivateSelection`.
    score_sensitivity : float, optional
        The callable's replace-one sensitivity.
    selection_share : float
        The fraction of ρ spent choosing, in (0, 1) (default :data:`SELECTION_SHARE`).
    score_share : float
        Without ``holdout``: the fraction of each candidate's share spent on its score.
    prefer_first : float
        b / (√2·σ_s) ≥ 0: how many standard deviations of the difference of two noisy scores
        another candidate must win by (default :data:`PREFER_FIRST`; 0: a plain noisy max).
    ledger : Ledger, optional
        Where the procedure is charged.
    holdout : Dataset, optional
        The scored rows, disjoint from the candidates' training rows (split by public row positions).
    refit : Problem or callable, optional
        ``refit(params) -> Problem`` on every row (training and held-out), one Dataset shared by
        every candidate; required with ``holdout``, else default the selection's own problems.
    """

    name = "RefitSelection"
    theorem = "noisy max of g zCDP runs, then a refit: BS16 Lemma 2.3 + McS09 Thm 4 + CKS20 (zCDP to (ε, δ))"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="Gaussian scores need δ > 0")],
        "candidates": PrivateSelection._parameter_constraints["candidates"],
        "build": PrivateSelection._parameter_constraints["build"],
        "score": PrivateSelection._parameter_constraints["score"],
        "score_sensitivity": PrivateSelection._parameter_constraints["score_sensitivity"],
        "selection_share": [Interval(Real, 0, 1, closed="neither")],
        "score_share": [Interval(Real, 0, 1, closed="neither")],
        "prefer_first": [Interval(Real, 0, None, closed="left")],
        "holdout": PrivateSelection._parameter_constraints["holdout"],
        "refit": [Instance(Problem, what="a dpopt Problem"), IsCallable("a callable refit(params) -> Problem"),
                  None],
    }

    def __init__(self, epsilon: float, delta: float, *, candidates: Sequence[Mapping[str, Any]], build: BuildFn,
                 score: str | ScoreFn = "accuracy", score_sensitivity: float | None = None,
                 selection_share: float = SELECTION_SHARE, score_share: float = 0.1,
                 prefer_first: float = PREFER_FIRST, ledger: Ledger | None = None, holdout: Dataset | None = None,
                 refit: Problem | ProblemFn | None = None) -> None:
        Mechanism.__init__(self, epsilon, delta, ledger=ledger)
        self.holdout = holdout
        self.refit = refit
        self.favour_first = False
        self.candidates = check_grid(candidates)
        self.build = build
        self.score, self.score_sensitivity = check_score(score, score_sensitivity)
        self.prefer_first = float(prefer_first)
        self.refit_budget = self._calibrate_refit(float(selection_share), float(score_share))
        self.score_noise = refit_score_noise(self.refit_budget, self.score_sensitivity)

    def _calibrate_refit(self, selection_share: float, score_share: float) -> RefitBudget:
        """The split of ρ (a hook for mutation tests)."""
        return calibrate_refit(self.epsilon, self.delta, candidates=len(self.candidates),
                               selection_share=selection_share, score_share=score_share,
                               holdout=self.holdout is not None)

    @property
    def candidate_budget(self) -> CandidateBudget:
        """The budget of each candidate's run while choosing."""
        return self.refit_budget.candidate

    def _check_budget(self, mech: Mechanism, problem: Any, budget: CandidateBudget | None = None) -> None:
        """A run within its budget: its μ (read from its plan) at most the budget's μ."""
        super()._check_budget(mech, problem, self.refit_budget.candidate if budget is None else budget)

    def _parameters(self) -> dict[str, Any]:
        b = self.refit_budget
        return {
            "selection": "noisy max, then a refit", "accounting": self.theorem, "zcdp_rho": b.rho,
            "selection_rho": b.selection_rho, "candidates": [dict(c) for c in self.candidates],
            "n_candidates": len(self.candidates), "candidate_mu": b.candidate.mu, "score_mu": b.score_mu,
            "refit_mu": b.refit.mu, "score": self.score if isinstance(self.score, str) else "user callable",
            "score_sensitivity": self.score_sensitivity, "score_noise": self.score_noise.kind,
            "score_noise_scale": self.score_noise.scale, "score_grid": self.score_noise.gamma,
            "prefer_first": self.prefer_first,
            "preference": preference_units(self.score_noise, self.prefer_first) * self.score_noise.gamma,
            "score_rows": "held-out" if self.holdout is not None else "training",
            "holdout_rows": None if self.holdout is None else self.holdout.n,
        }

    # -- the run ------------------------------------------------------------------
    def plan(self, problem: Problem | ProblemFn, options: RunOptions | None = None) -> RefitPlan:
        """Build and plan every candidate and every refit (before the charge), as
        :meth:`PrivateSelection.plan <dpopt.mechanisms.selection.PrivateSelection.plan>`."""
        options = self._run_options(options)
        built, uses = self._build_all(problem, options, self.refit_budget.candidate)
        data = built[0][1].loss.data
        self._check_holdout(data)
        refit = self.refit if self.refit is not None else problem
        if self.holdout is not None and self.refit is None:
            raise MechanismError("with holdout=, pass refit=: the problems on every row (training and held-out) "
                                 "that the chosen candidate is fitted on again")
        final, final_uses = self._build_all(refit, options, self.refit_budget.refit)
        self._check_refit(data, final[0][1].loss.data)
        self._check_solver_used(options, (*uses, *final_uses))
        first = final[0][1]
        summary = candidates_summary(refit, first)
        return RefitPlan(problem=problem, parameters=self._parameters(), summary=summary, n=first.n,
                         feature_names=first.feature_names, profile=options.solver,
                         trial=isolate_candidates(built), options=tuple(candidate_options(options, u) for u in uses),
                         final=isolate_candidates(final),
                         final_options=tuple(candidate_options(options, u) for u in final_uses))

    def _check_refit(self, data: Dataset, full: Dataset) -> None:
        """The refit rows: the training rows, or (with ``holdout``) another Dataset with the training and
        held-out rows' count and the same columns (public facts)."""
        if self.holdout is None:
            if full is not data:
                raise MechanismError("without holdout=, the refit problems must use the candidates' own Dataset")
            return
        if full is data or full is self.holdout:
            raise MechanismError("refit= must be the problems on every row (training and held-out rows together)")
        if full.n != data.n + self.holdout.n or full.n_features != data.n_features:
            raise MechanismError(f"refit= has {full.n} rows and {full.n_features} columns; the training and held-out "
                                 f"rows are {data.n} + {self.holdout.n} with {data.n_features} columns: build it "
                                 "from the table both were split from")

    def execute(self, plan: Any, rng: np.random.Generator) -> Outcome:
        """Run and score every candidate, choose, refit (everything here touches the data)."""
        assert isinstance(plan, RefitPlan)
        sampler = sampler_for(rng)
        secure = bool(getattr(rng, "secure", False))

        def run(mech: Mechanism, problem: Problem, options: RunOptions) -> Release:
            seed = None if secure else np.random.SeedSequence([int(x) for x in rng.integers(0, 2**63, size=2)])
            with warnings.catch_warnings():  # a run's (ε, δ) is internal: the procedure's own was checked
                warnings.simplefilter("ignore", WeakGuaranteeWarning)
                return mech.run(problem, solver=options.solver, seed=seed,  # type: ignore[arg-type]
                                threads=options.threads, keep_diagnostics=options.keep_diagnostics)

        noisy, trials, private = [], [], True
        for i, ((mech, problem), options) in enumerate(zip(plan.trial, plan.options, strict=True)):
            release = run(mech, problem, options)
            private = private and release.private
            exact, score = self._noisy_score(sampler, release.theta, problem.loss.data if self.holdout is None
                                             else self.holdout)
            noisy.append(score)
            trials.append({"candidate": i, "noisy_score": score, "exact_score": exact})
        bonus = preference_units(self.score_noise, self.prefer_first) * self.score_noise.gamma
        chosen = max(range(len(noisy)), key=lambda i: (noisy[i] + (bonus if i == 0 else 0.0), -i))
        mech, problem = plan.final[chosen]
        final = run(mech, problem, plan.final_options[chosen])
        results: tuple[OracleResult, ...] = ()
        details: dict[str, Any] = {"runs": trials}
        if final.diagnostics is not None:
            results = final.diagnostics.oracle_results
            details["chosen_details"] = dict(final.diagnostics.details)
        finite = [s if math.isfinite(s) else None for s in noisy]
        return Outcome(
            theta=final.theta, calls=final.oracle_calls, results=results, details=details,
            parameters={"selected": dict(self.candidates[chosen]), "selected_index": chosen,
                        "noisy_selected_score": finite[chosen], "noisy_scores": finite,
                        "selected_mechanism": final.mechanism, "selected_parameters": dict(final.parameters)},
            private=private and final.private, notes=final.notes,
        )


@dataclass(frozen=True, kw_only=True)
class RefitPlan(SelectionPlan):
    """A planned noisy-max selection: the candidates' runs and the refits (the run's copies)."""

    final: tuple[tuple[Mechanism, Problem], ...]
    final_options: tuple[RunOptions, ...]

