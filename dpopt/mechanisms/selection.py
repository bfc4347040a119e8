"""Private hyperparameter selection by random stopping (Liu & Talwar 2019; Papernot & Steinke 2022).

:class:`PrivateSelection` runs one randomized procedure Q a random number K of times
and releases the output of the best run:

    Q:  i ~ Uniform(grid);  θ ← M_i(D) (a copy of the candidate mechanism built for
        hyperparameters i, on its own throwaway ledger);  s ← score(θ; D) + noise;  output (i, θ, s)

(with ``favour_first``, i = 0 with probability ½ and i ~ Uniform(grid) otherwise: public weights)

and the selection outputs (i, θ, s) of the run with the largest s.  The noisy scores lie on a
grid, so ties have positive probability: they go to the smaller grid index i, then to the
larger θ in the lexicographic order of its float64 bytes — a total order on Q's outputs, as
the theorems require (two outputs equal in it are the same output).
K is drawn from the public stopping law before any run and is **not released** (neither
are the other runs' scores): only the chosen θ, its noisy score s
(``parameters["noisy_selected_score"]``, part of Q's output, so covered by the theorems),
the chosen hyperparameters, the chosen candidate's public parameters and oracle-call
records, which are functions of (i, public facts).

The inputs stay untouched.  Every run works on a copy of its candidate mechanism (with a
fresh throwaway ledger) and on a copy of its problem over a copy of the Dataset object
(sharing the arrays), all made before the charge and dropped after the run: the user's
mechanism objects, their ledgers, the problems and the Dataset hold nothing afterwards that
depends on K or on which candidates ran (caches filled during a run land on the copies).

Accounting (:mod:`dpopt.privacy.selection`; the whole procedure is charged once, as the
selection's (ε, δ), on the selection's ledger before the data is touched):

* ``stopping="liu-talwar"`` (LT19 Thm 3.2, geometric K, pure DP): Q is ε₀-DP with
  ε₀ = ε/3, split by basic composition into the candidate's ε_t = (1 − s)ε₀ and the
  Laplace noisy score's ε_s = s·ε₀ (s = ``score_share``).  Candidates must be pure DP.
* ``stopping="papernot-steinke"`` (PS22 Thm 2, truncated negative binomial K, RDP → (ε, δ)
  by CKS20 Prop. 12): Q is μ₀-GDP, split into a μ_t-GDP candidate and a Gaussian score with
  μ_s, μ_t² + μ_s² = μ₀² (Dong, Roth & Su 2022, Cor. 3.3).  Candidates must be Gaussian
  mechanisms whose μ dpopt can read before the charge: :class:`OutputPerturbation` with
  ``noise="gaussian"`` (μ = (sensitivity + γ√d)/σ from its plan: its discrete Gaussian on the
  grid γ has the Rényi curve of μ-GDP, which is what this accounting uses), or any mechanism with a
  ``gdp_mu(problem) -> float`` method.

Exact randomness.  Every random choice of the selection reads one exact sampler
(:func:`dpopt.privacy.exact.sampler_for` of the run's generator; an unseeded run's reads the
OS CSPRNG and draws nothing from the generator's PCG64 stream): K (:func:`sample_trials`:
exact Bernoulli(γ) trials for the geometric law), the candidate index (an exactly uniform
integer) and the score noise.  The noisy score is an additive release on a public grid
(:mod:`dpopt.privacy.grid`): γ_s = ``grid_step(Δ_s, 1)``, the exact score rounded onto γ_sℤ
plus exact integer noise — discrete Laplace of scale t = ⌈(Δ_s/γ_s + 1)/ε_s⌉ (pure ε_s-DP,
[CKS20]; ``laplace_on_grid``) under ``"liu-talwar"``, discrete Gaussian with
σ ≥ (Δ_s + γ_s)/μ_s under ``"papernot-steinke"``, whose Rényi curve is at most
λ((Δ_s + γ_s)/σ)²/2 ≤ λμ_s²/2 ([CKS20]: ρ = shift²/(2σ²) for integer shifts), that of a
μ_s-GDP mechanism, which is all the Rényi accounting of PS22 Thm 2 uses.  So
``noisy_selected_score`` is an integer multiple of ``parameters["score_grid"]``, and the
comparison of the noisy scores, the choice of the best run and everything after it are
post-processing.  Under ``"papernot-steinke"`` the candidates of an unseeded selection run
unseeded too (their own noise from the CSPRNG); in a seeded one each gets a seed drawn from
the selection's generator.

Held-out scores (``holdout=``, a second :class:`~dpopt.modeling.dataset.Dataset`).  The
protected table is then the candidates' training Dataset and the held-out one together, split
by row position before anything is read (public).  Q trains on the first and scores on the
second only; a replaced row lies in exactly one of them, so Q is as private as the less
private of its two parts (parallel composition, [McS09] Thm 4: the other part is a
post-processing with the unchanged rows fixed) and each part gets Q's whole budget,
ε_t = ε_s = ε₀ or μ_t = μ_s = μ₀ (:func:`dpopt.privacy.selection.calibrate_selection`,
``holdout=True``); ``score_share`` is then unused.

Scores.  ``score="accuracy"``: the number of rows with y·⟨x, θ⟩ > 0 (labels ±1), which
changes by at most 1 when one row is replaced (sensitivity 1).  A user callable
``score(theta, data) -> float`` must declare its replace-one ``score_sensitivity``; a
non-finite value is treated as −∞ (never preferred), which is only private if the
declared sensitivity holds for what the callable returns.

Bad input (a grid that is empty, has duplicates or non-finite values; a candidate that
``build`` refuses or builds with more than the per-candidate budget; a rule that does
not fit δ; an ``expected_trials`` < 1) is refused before the ledger is charged: every
candidate mechanism is built, and planned where it has a plan, from public facts first.

Failures.  dpopt's private mechanisms do not raise for data reasons, so
a candidate run that raises is a bug or an opted-in limit: the exception propagates,
the charge stays spent, nothing is released (an ``UncertifiedOracleError`` keeps its
diagnostics only with ``keep_diagnostics=True``).  No time limit is offered here (it would
make the guarantee conditional).  If a candidate release is not private (a
``release-unsafe`` mechanism), neither is the selection's.
"""

from __future__ import annotations

import copy
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.programs import is_explicit
from dpopt.backends.result import OracleResult
from dpopt.errors import DpoptError, MechanismError, WeakGuaranteeWarning
from dpopt.mechanisms.base import Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.params import Instance, Interval, IsCallable, Options, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import Release
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.problem import Problem
from dpopt.privacy.exact import ExactSampler, sampler_for
from dpopt.privacy.exact_selection import uniform_index
from dpopt.privacy.grid import GridNoise, gaussian_grid_noise, grid_step, laplace_on_grid
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.selection import (
    STOPPING_RULES,
    CandidateBudget,
    SelectionBudget,
    calibrate_selection,
    sample_trials,
)

Params = dict[str, float | int | str]
ScoreFn = Callable[[np.ndarray, Dataset], float]
BuildFn = Callable[[Params, CandidateBudget], Mechanism]
ProblemFn = Callable[[Params], Problem]
#: relative slack when comparing a built candidate's (ε, δ) to its budget (floating-point only)
_BUDGET_RTOL = 1e-12


def check_grid(candidates: object) -> tuple[Params, ...]:
    """Validate the declared grid: a nonempty sequence of distinct dicts of finite numbers or strings.

    Raises
    ------
    MechanismError
        Naming the offending candidate and key (grid values are public declarations).
    """
    if isinstance(candidates, (str, bytes, Mapping)) or not isinstance(candidates, Sequence):
        raise MechanismError("candidates must be a list of dicts of hyperparameters, e.g. [{'lam': 0.1}, {'lam': 1.0}]")
    if len(candidates) == 0:
        raise MechanismError("candidates is empty: declare at least one dict of hyperparameters")
    grid: list[Params] = []
    seen: set[tuple[tuple[str, Any], ...]] = set()
    for i, cand in enumerate(candidates):
        if not isinstance(cand, Mapping):
            raise MechanismError(f"candidate {i} must be a dict of hyperparameters, got {type(cand).__name__}")
        params: Params = {}
        for key, value in cand.items():
            if not isinstance(key, str):
                raise MechanismError(f"candidate {i}: hyperparameter names must be strings, got {key!r}")
            params[key] = _check_value(value, i, key)
        canon = tuple(sorted(params.items()))
        if canon in seen:
            raise MechanismError(f"candidate {i} repeats an earlier candidate {params}: remove the duplicate")
        seen.add(canon)
        grid.append(params)
    return tuple(grid)


def _check_value(value: object, i: int, key: str) -> float | int | str:
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v):
            raise MechanismError(f"candidate {i}: hyperparameter {key!r} is {value!r}; use finite values")
        return v
    raise MechanismError(f"candidate {i}: hyperparameter {key!r} must be a number or a string, "
                         f"got {type(value).__name__}")


def accuracy_count(theta: np.ndarray, data: Dataset) -> float:
    """Number of rows classified correctly (replace-one sensitivity 1): y·⟨x, θ⟩ > 0 for ±1
    labels, or argmax_c (Θᵀx)_c = y for a d×k Θ (flattened row-major) and class indices y."""
    X = np.asarray(data.X, dtype=np.float64)
    y = np.asarray(data.y, dtype=np.float64)
    if theta.size != X.shape[1]:  # a multinomial Θ: the class of the largest score
        return float(np.count_nonzero(np.argmax(X @ theta.reshape(X.shape[1], -1), axis=1) == y))
    return float(np.count_nonzero(y * (X @ theta) > 0.0))


def candidate_mu(mechanism: Mechanism, problem: Any) -> float:
    """A candidate's Gaussian-DP μ, from public facts (its plan), before the charge.

    Raises
    ------
    MechanismError
        If the mechanism is not one whose μ dpopt can read (module docstring).
    """
    gdp = getattr(mechanism, "gdp_mu", None)
    if callable(gdp):
        return float(gdp(problem))
    if isinstance(mechanism, OutputPerturbation):
        plan = mechanism.plan(problem)
        if plan.output_noise.kind == "gaussian" and plan.linear_noise.kind == "none":
            return plan.output_noise.zcdp_mu(float(plan.parameters["sensitivity_l2"]), plan.problem.dim)
        raise MechanismError("stopping='papernot-steinke' needs Gaussian candidates: build "
                             "OutputPerturbation(budget.epsilon, budget.delta, noise='gaussian')")
    raise MechanismError(
        f"stopping='papernot-steinke' needs candidates that are Gaussian-DP with a known μ; "
        f"{type(mechanism).__name__} is not (use OutputPerturbation(..., noise='gaussian'), a mechanism "
        "with a gdp_mu(problem) method, or stopping='liu-talwar' with pure-DP candidates)")


class PrivateSelection(Mechanism):
    """Private hyperparameter selection over a declared grid (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The whole selection's guarantee (charged once).
    candidates : sequence of dict
        The declared grid: distinct dicts of finite numbers or strings (public).
    build : callable
        ``build(params, budget) -> Mechanism``: the candidate mechanism for ``params``,
        built with (at most) ``budget.epsilon``, ``budget.delta`` (a :class:`CandidateBudget`).
        Hyperparameters of the problem (e.g. an ``L2Squared`` weight) go through ``run``'s
        ``problem(params)`` callable instead.
    score : "accuracy" or callable
        The private score; a callable ``score(theta, data) -> float`` needs ``score_sensitivity``.
    score_sensitivity : float, optional
        The callable's replace-one sensitivity (declared; > 0).
    score_share : float
        Fraction of each run's budget spent on the noisy score, in (0, 1).
    stopping : {"liu-talwar", "papernot-steinke"}
        The accounting rule; ``"liu-talwar"`` needs δ = 0, ``"papernot-steinke"`` δ > 0.
    expected_trials : float, optional
        E[K] ≥ 1; default the number of candidates.
    shape : float, optional
        η of the truncated negative binomial (``"papernot-steinke"``; default 1, geometric).
    ledger : Ledger, optional
        Where the selection is charged.
    holdout : Dataset, optional
        Held-out rows the scores are computed on (module docstring): disjoint from the
        candidates' training Dataset (split by public row positions), same columns.
    favour_first : bool
        Draw the first candidate (a default to fall back on) with probability ½ + ½g instead
        of 1/g (:func:`draw_candidate`; public weights: a mixture with public, data-independent
        weights keeps Q's guarantee, :mod:`dpopt.privacy.selection`).
    """

    name = "PrivateSelection"
    theorem = "random-stopping selection: LT19 Thm 3.2 / PS22 Thm 2"
    problem_type = (Problem, Callable)
    rebudgets = False  # its budget is calibrated in __init__: no diagnostics share is taken out of ε
    #: the candidates are checked one by one (``check_problem``) before the charge
    multi_output = True
    problem_refusal = "run() needs a dpopt Problem or a callable problem(params) -> Problem, got {got}"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "candidates": [Instance(Sequence, what="a list of dicts of hyperparameters, e.g. "
                                                "[{'lam': 0.1}, {'lam': 1.0}]")],
        "build": [IsCallable("a callable build(params, budget) -> Mechanism")],
        "score": [Options(("accuracy",)), IsCallable("a callable score(theta, data) -> float")],
        "score_sensitivity": [Interval(Real, 0, None, closed="neither"), None],
        "score_share": [Interval(Real, 0, 1, closed="neither")],
        "stopping": [Options(STOPPING_RULES)],
        "expected_trials": [Interval(Real, 1, None, closed="left"), None],
        "shape": [Interval(Real, 0, None, closed="left", why="1 = geometric"), None],
        "holdout": [Instance(Dataset, what="a dpopt Dataset of held-out rows"), None],
        "favour_first": [Instance(bool, what="True or False")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, candidates: Sequence[Mapping[str, Any]],
                 build: BuildFn, score: str | ScoreFn = "accuracy", score_sensitivity: float | None = None,
                 score_share: float = 0.1, stopping: str = "liu-talwar", expected_trials: float | None = None,
                 shape: float | None = None, ledger: Ledger | None = None,
                 holdout: Dataset | None = None, favour_first: bool = False) -> None:
        self.holdout = holdout
        self.favour_first = bool(favour_first)
        super().__init__(epsilon, delta, ledger=ledger)
        self.candidates = check_grid(candidates)
        self.build = build
        self.score, self.score_sensitivity = check_score(score, score_sensitivity)
        self.stopping = stopping
        trials = len(self.candidates) if expected_trials is None else expected_trials
        self.budget = self._calibrate(trials, shape, score_share)
        self.score_noise = score_noise_law(self.budget, self.score_sensitivity)

    @property
    def candidate_budget(self) -> CandidateBudget:
        """The budget of each candidate run (what ``build`` receives)."""
        return self.budget.candidate

    def _calibrate(self, expected_trials: float, shape: float | None, score_share: float) -> SelectionBudget:
        """The per-run budget (a hook for mutation tests)."""
        return calibrate_selection(self.epsilon, self.delta, stopping=self.stopping,
                                   expected_trials=expected_trials, shape=shape, score_share=score_share,
                                   holdout=self.holdout is not None)

    # -- public checks ------------------------------------------------------------
    def _build_all(self, problem: Problem | ProblemFn, options: RunOptions, budget: CandidateBudget | None = None,
                   ) -> tuple[tuple[tuple[Mechanism, Problem], ...], tuple[bool, ...]]:
        """Build and plan every candidate and its problem from public facts, before the charge (each
        candidate's :meth:`~Mechanism.plan` is its whole pre-charge path); all problems must share one
        Dataset (the data the selection protects).  Also returns which candidates call a solver.
        ``budget``: the per-candidate budget (default the selection's)."""
        budget = self.budget.candidate if budget is None else budget
        built, uses = [], []
        for i, params in enumerate(self.candidates):
            try:
                prob = problem(dict(params)) if callable(problem) else problem
                if not isinstance(prob, Problem):
                    raise MechanismError(f"the problem for it is a {type(prob).__name__}, not a dpopt Problem")
                mech = self.build(dict(params), budget)
                if not isinstance(mech, Mechanism):
                    raise MechanismError(f"build returned {type(mech).__name__}, not a dpopt Mechanism")
                self._check_budget(mech, prob, budget)
                mech.check_problem(prob)
                use = mech.solver_need(prob) is not SolverNeed.NONE
                mech.plan(prob, candidate_options(options, use))
            except (DpoptError, ValueError, TypeError) as exc:
                raise MechanismError(f"candidate {i} {params} cannot run with the per-candidate budget "
                                     f"(ε={budget.epsilon:.6g}, δ={budget.delta:.3g}): {exc}") from exc
            built.append((mech, prob))
            uses.append(use)
        if any(prob.loss.data is not built[0][1].loss.data for _, prob in built):
            raise MechanismError("every candidate's problem must use the same Dataset object: the selection "
                                 "protects one dataset; build the problems from one dp.Dataset")
        return tuple(built), tuple(uses)

    def _check_holdout(self, data: Dataset) -> None:
        """The held-out Dataset must be another object with the training Dataset's columns (public)."""
        held = self.holdout
        if held is None:
            return
        if held is data or (not held.is_distributed and not data.is_distributed
                            and np.may_share_memory(np.asarray(held.X), np.asarray(data.X))):
            raise MechanismError("holdout is the candidates' own Dataset: pass the held-out rows as a separate "
                                 "dp.Dataset (split the table by row position before building either)")
        if held.n_features != data.n_features:
            raise MechanismError(f"holdout has {held.n_features} columns, the candidates' Dataset "
                                 f"{data.n_features}: encode both parts with the same declarations")

    def _check_budget(self, mech: Mechanism, problem: Any, budget: CandidateBudget | None = None) -> None:
        """A candidate within the per-candidate budget (default the selection's): its (ε, δ) under
        ``"liu-talwar"``; its μ alone under ``"papernot-steinke"``, whose accounting reads only the
        candidates' Rényi curve λμ²/2 (a candidate calibrated to a μ below μ_t may state a larger
        nominal (ε, δ))."""
        budget = self.budget.candidate if budget is None else budget
        if budget.mu is None and (mech.epsilon > budget.epsilon * (1 + _BUDGET_RTOL)
                                  or mech.delta > budget.delta * (1 + _BUDGET_RTOL)):
            raise MechanismError(f"build made a mechanism with ε={mech.epsilon:.6g}, δ={mech.delta:.3g}, above "
                                 "the per-candidate budget: build it with budget.epsilon and budget.delta")
        if budget.mu is not None and not candidate_mu(mech, problem) <= budget.mu:
            raise MechanismError("the candidate's Gaussian noise is below the per-candidate μ: calibrate it "
                                 "with the analytic Gaussian to budget.epsilon, budget.delta")

    def _parameters(self) -> dict[str, Any]:
        b = self.budget
        params: dict[str, Any] = {
            "stopping": b.stopping, "accounting": _ACCOUNTING[b.stopping], "expected_trials": b.law.mean,
            "stopping_gamma": b.law.gamma, "stopping_shape": b.law.shape,
            "candidates": [dict(c) for c in self.candidates], "n_candidates": len(self.candidates),
            "candidate_epsilon": b.candidate.epsilon, "candidate_delta": b.candidate.delta,
            "score": self.score if isinstance(self.score, str) else "user callable",
            "score_sensitivity": self.score_sensitivity,
        }
        if b.stopping == "liu-talwar":
            params.update(trial_epsilon=b.trial_epsilon, score_epsilon=b.score_epsilon)
        else:
            params.update(trial_mu=b.trial_mu, candidate_mu=b.candidate.mu, score_mu=b.score_mu)
        params.update(score_noise=self.score_noise.kind, score_noise_scale=self.score_noise.scale,
                      score_grid=self.score_noise.gamma,
                      score_rows="held-out" if self.holdout is not None else "training",
                      holdout_rows=None if self.holdout is None else self.holdout.n,
                      candidate_law="the first with probability 1/2 + 1/(2g), else uniform" if self.favour_first
                      else "uniform")
        return params

    # -- the run ------------------------------------------------------------------
    def _run_options(self, options: RunOptions | None) -> RunOptions:
        """The run's options, refusing a ``time_limit`` (a stopped candidate would void the guarantee)."""
        options = options or RunOptions()
        if options.time_limit is not None:
            raise MechanismError(f"{self.name} takes no time_limit: a stopped candidate would void the "
                                 "guarantee; run without one")
        return options

    @staticmethod
    def _check_solver_used(options: RunOptions, uses: Sequence[bool]) -> None:
        """Refuse an explicit ``solver`` that no candidate would call."""
        if is_explicit(options.solver) and not any(uses):
            raise MechanismError(f"no candidate calls a solver on its problem, so solver={options.solver!r} would "
                                 "have no effect; drop it")

    def plan(self, problem: Problem | ProblemFn, options: RunOptions | None = None) -> SelectionPlan:
        """Build and plan every candidate (before the charge) and fix the candidates' run options.

        ``options.solver`` and ``threads`` go to every candidate that calls a solver on its
        problem; a ``time_limit`` is refused (a stopped candidate would void the guarantee);
        ``seed`` seeds the selection's generator, from which every candidate run is seeded;
        ``keep_diagnostics`` keeps K, the trials' candidates, noisy and exact scores and the
        chosen run's solver record (**not private**).  The release's ``parameters["selected"]``
        holds the chosen hyperparameters.
        """
        options = self._run_options(options)
        built, uses = self._build_all(problem, options)
        self._check_holdout(built[0][1].loss.data)
        trial = isolate_candidates(built)
        self._check_solver_used(options, uses)
        first = built[0][1]
        summary = candidates_summary(problem, first)
        return SelectionPlan(problem=problem, parameters=self._parameters(), summary=summary, n=first.n,
                             feature_names=first.feature_names, profile=options.solver,
                             trial=trial, options=tuple(candidate_options(options, use) for use in uses))

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Draw K, run the candidates, keep the best noisy score (everything here touches the data)."""
        assert isinstance(plan, SelectionPlan)
        return self._select(rng, plan.trial, plan.options)

    def _noisy_score(self, sampler: ExactSampler, theta: np.ndarray, data: Dataset) -> tuple[float, float]:
        """(exact, noisy) score of one run: the noisy one is the exact score rounded onto the
        public grid plus exact discrete noise (Q's score share); a non-finite exact score
        counts as −∞, which the grid clamps to −2^52·γ_s."""
        score_fn: ScoreFn = accuracy_count if self.score == "accuracy" else self.score  # type: ignore[assignment]
        exact = float(score_fn(np.asarray(theta, dtype=np.float64), data))
        if not math.isfinite(exact):
            exact = -math.inf
        law = self.score_noise
        units = np.clip(np.rint(np.array([exact]) / law.gamma), -2.0**52, 2.0**52)
        if law.kind == "laplace":
            noise = sampler.discrete_laplace(law.param, 1)
        else:
            noise = sampler.discrete_gaussian(law.param, 1)
        return exact, float(np.clip(units + noise.astype(np.float64), -2.0**52, 2.0**52)[0]) * law.gamma

    def _select(self, rng: np.random.Generator, built: tuple[tuple[Mechanism, Problem], ...],
                options: tuple[RunOptions, ...]) -> Outcome:
        """Draw K, run Q K times, keep the best run (everything here touches the data).  ``built``
        holds the run's own copies (:func:`isolate_candidates`), never the user's objects.  A
        candidate that calls no solver on its problem gets ``"auto"`` (:func:`candidate_options`),
        never a solver it would refuse: nothing here may raise for a setting checked before the charge."""
        sampler = sampler_for(rng)
        secure = bool(getattr(rng, "secure", False))
        k = sample_trials(sampler, self.budget.law)
        best: tuple[float, int, bytes] | None = None
        best_noisy = math.nan
        best_release: Release | None = None
        trials: list[dict[str, Any]] = []
        private = True
        for _ in range(k):
            i = draw_candidate(sampler, len(built), self.favour_first)
            mech, problem = built[i]
            sub_seed = None if secure else np.random.SeedSequence([int(x) for x in rng.integers(0, 2**63, size=2)])
            with warnings.catch_warnings():  # a candidate's (ε, δ) is internal: the selection's own was checked
                warnings.simplefilter("ignore", WeakGuaranteeWarning)
                o = options[i]
                release = mech.run(problem, solver=o.solver, seed=sub_seed,  # type: ignore[arg-type]
                                   threads=o.threads, keep_diagnostics=o.keep_diagnostics)
            private = private and release.private
            scored = problem.loss.data if self.holdout is None else self.holdout
            exact, noisy = self._noisy_score(sampler, release.theta, scored)
            trials.append({"candidate": i, "noisy_score": noisy, "exact_score": exact})
            key = (noisy, -i, np.ascontiguousarray(release.theta, dtype=np.float64).tobytes())
            if best is None or key > best:
                best, best_release, best_noisy = key, release, noisy
        assert best is not None and best_release is not None
        chosen = -best[1]
        details: dict[str, Any] = {"trials": k, "runs": trials}
        results: tuple[OracleResult, ...] = ()
        if best_release.diagnostics is not None:
            results = best_release.diagnostics.oracle_results
            details["chosen_details"] = dict(best_release.diagnostics.details)
        return Outcome(
            theta=best_release.theta, calls=best_release.oracle_calls, results=results, details=details,
            parameters={"selected": dict(self.candidates[chosen]), "selected_index": chosen,
                        "noisy_selected_score": best_noisy if math.isfinite(best_noisy) else None,
                        "selected_mechanism": best_release.mechanism,
                        "selected_parameters": dict(best_release.parameters)},
            private=private, notes=best_release.notes,
        )


@dataclass(frozen=True, kw_only=True)
class SelectionPlan(Plan):
    """A planned selection: the run's copies of the candidates and each one's run options."""

    trial: tuple[tuple[Mechanism, Problem], ...]
    options: tuple[RunOptions, ...]


def draw_candidate(sampler: ExactSampler, g: int, favour_first: bool = False) -> int:
    """The candidate of one run of Q: exactly uniform on {0, …, g − 1}, or with ``favour_first`` an
    exact fair coin that picks 0 on heads and a uniform index on tails (P[0] = ½ + ½g).  The law
    is public and does not depend on the data: a mixture with public weights keeps Q's guarantee
    (:mod:`dpopt.privacy.selection`), and the index is part of Q's output."""
    if favour_first and uniform_index(sampler, 2) == 0:
        return 0
    return uniform_index(sampler, g)


def candidate_options(options: RunOptions, uses_solver: bool) -> RunOptions:
    """A candidate's run options: the selection's solver and threads when the candidate calls a
    solver, else ``"auto"``; no seed (drawn from the selection's generator), no executor (the
    selection's own is in use)."""
    return RunOptions(solver=options.solver if uses_solver else "auto", threads=options.threads,
                      keep_diagnostics=options.keep_diagnostics)


def candidates_summary(problem: Problem | ProblemFn, first: Problem) -> str:
    """The plan's summary: the problem's own, or the first candidate's "(per candidate)" when each
    candidate builds its problem from its settings."""
    return problem.summary() if isinstance(problem, Problem) else first.summary() + " (per candidate)"


def isolate_candidates(built: Sequence[tuple[Mechanism, Problem]]) -> tuple[tuple[Mechanism, Problem], ...]:
    """The copies a selection runs on, so that nothing reachable from its inputs changes.

    Each mechanism becomes a shallow copy with a fresh throwaway :class:`Ledger` (the
    selection's own ledger carries the whole charge); each problem a copy whose loss is a
    shallow copy over one shallow copy of the shared Dataset (the arrays are shared, read
    only).  Problems and losses shared by several candidates stay shared among the copies.
    Made before the charge, from public structure only.

    Raises
    ------
    MechanismError
        If a candidate's mechanism or loss cannot be copied.
    """
    data = copy.copy(built[0][1].loss.data)
    problems: dict[int, Problem] = {}
    out = []
    for i, (mech, prob) in enumerate(built):
        try:
            twin = copy.copy(mech)
            twin.ledger = Ledger()
            if id(prob) not in problems:
                loss = copy.copy(prob.loss)
                loss.data = data
                problems[id(prob)] = replace(prob, loss=loss)
        except (TypeError, AttributeError, copy.Error) as exc:
            raise MechanismError(f"candidate {i}: its mechanism or loss cannot be copied for the run "
                                 f"({type(exc).__name__}); the selection never runs the user's own objects") from exc
        out.append((twin, problems[id(prob)]))
    return tuple(out)


def score_noise_law(budget: SelectionBudget, sensitivity: float) -> GridNoise:
    """The public law of the noisy score (module notes): discrete Laplace for ε_s-DP
    (``"liu-talwar"``) or a discrete Gaussian with σ ≥ (Δ_s + γ_s)/μ_s (``"papernot-steinke"``),
    on the grid γ_s = ``grid_step(Δ_s, 1)``."""
    if budget.score_epsilon is not None:
        return laplace_on_grid(sensitivity, budget.score_epsilon, 1)
    assert budget.score_mu is not None
    gamma = grid_step(sensitivity, 1.0)
    return gaussian_grid_noise((sensitivity + gamma) / budget.score_mu, gamma)


_ACCOUNTING = {
    "liu-talwar": "LT19 Thm 3.2: geometric K, ε₀-DP runs give 3ε₀-DP",
    "papernot-steinke": "PS22 Thm 2 (μ-GDP runs, RDP) + CKS20 Prop. 12 (RDP to (ε, δ))",
}


def check_score(score: str | ScoreFn, sensitivity: float | None) -> tuple[str | ScoreFn, float]:
    """The score and its sensitivity (each setting already validated; this checks the pair)."""
    if isinstance(score, str):
        if sensitivity is not None:
            raise MechanismError("score='accuracy' has sensitivity 1; pass score_sensitivity only with a callable")
        return score, 1.0
    if sensitivity is None:
        raise MechanismError("a score callable needs score_sensitivity: its declared replace-one "
                             "sensitivity, a finite number > 0")
    return score, float(sensitivity)
