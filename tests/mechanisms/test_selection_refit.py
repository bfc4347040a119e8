"""Noisy-max selection with a refit (RefitSelection): accounting, the choice, refusals, audits.

Accounting.  The split of ρ = zcdp_rho(ε, δ) is recomputed independently: dp-accounting's
RDP accountant composes the Gaussian runs (noise multiplier 1/μ each) and converts to (ε, δ)
on a fine grid of orders; the composition must meet ε and use nearly all of it.

Audit design.  θ is the refit's output, so the audit holds the whole procedure to its claim
(ε, δ) on DP-GD's one-step pair (row 0 is (1, ±1), the others have zero gradients).  The
mutation gives the refit four times the μ its share allows (the refit charged as if the
selection's share were not spent, and more) and must be caught by the same audit.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp

import dpopt as dp
from dpopt.errors import MechanismError, PrivacyParameterError
from dpopt.mechanisms.selection_refit import RefitSelection, preference_units, resolves
from dpopt.privacy.selection import CandidateBudget, RefitBudget, calibrate_refit, refit_rho
from dpopt.privacy.zcdp import zcdp_rho
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

# ----------------------------------------------------------------------------- accounting

ORDERS = np.concatenate([np.linspace(1.001, 10.0, 4000), np.linspace(10.0, 2000.0, 8000)])


def _dp_accounting_epsilon(mus: list[float], delta: float) -> float:
    events = [dp_event.GaussianDpEvent(1.0 / mu) for mu in mus]
    accountant = rdp.RdpAccountant(orders=list(ORDERS))
    accountant.compose(dp_event.ComposedDpEvent(events))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("eps,delta,g,share,holdout", [
    (1.0, 5.5e-7, 3, 0.05, True), (0.5, 1e-9, 3, 0.05, False), (2.0, 1e-5, 5, 0.3, True), (4.0, 1e-6, 2, 0.5, False),
])
def test_the_split_composes_to_the_budget_by_an_independent_accountant(eps, delta, g, share, holdout):
    b = calibrate_refit(eps, delta, candidates=g, selection_share=share, holdout=holdout)
    mu_c, mu_s, mu_f = b.candidate.mu, b.score_mu, b.refit.mu
    # a replaced row is read by: held-out split, the runs or the scores (parallel), then the refit
    parts = [[mu_c] * g + [mu_f], [mu_s] * g + [mu_f]] if holdout else [[mu_c] * g + [mu_s] * g + [mu_f]]
    worst = max(_dp_accounting_epsilon(p, delta) for p in parts)
    assert worst <= eps * (1 + 1e-4)  # within the stated ε (dp-accounting's grid of orders only loosens)
    assert worst >= eps * (1 - 1e-2)  # and the split spends (nearly) all of it
    assert 0.5 * mu_f ** 2 == pytest.approx((1 - share) * zcdp_rho(eps, delta), rel=1e-9)
    assert refit_rho(mu_c, mu_s, mu_f, g, holdout=holdout) <= b.rho
    assert g * 0.5 * mu_c ** 2 == pytest.approx(share * b.rho * (1.0 if holdout else 0.9), rel=1e-9)


@pytest.mark.parametrize("kwargs,match", [
    ({"delta": 0.0}, "delta"), ({"selection_share": 1.0}, "selection_share"), ({"candidates": 0}, "candidates"),
    ({"score_share": 0.0}, "score_share"),
])
def test_bad_split_settings_are_refused(kwargs, match):
    settings = {"epsilon": 1.0, "delta": 1e-6, "candidates": 2, **kwargs}
    with pytest.raises(PrivacyParameterError, match=match):
        calibrate_refit(settings.pop("epsilon"), settings.pop("delta"), **settings)


# ----------------------------------------------------------------------------- runs

N = 10


def _pair():
    """Row 0 is (1, +1) or (1, −1); rows 1.. are (0, +1), whose gradients vanish."""
    X = np.zeros((N, 1))
    X[0, 0] = 1.0
    d0 = dp.Dataset(X, np.ones(N), x_bound=1.0)
    return d0, d0.replace_row(0, [1.0], -1.0)


def _problems(data):
    th = dp.Variable(1)
    problem = dp.Problem(dp.LogisticLoss(data, th))
    return lambda params: problem


@functools.lru_cache(maxsize=16)
def _epsilon_of(mu: float, delta: float) -> float:
    """The largest ε whose zcdp_rho(ε, δ) ≤ μ²/2 (bisection): DP-GD built with it has μ ≤ the budget's."""
    lo, hi = 1e-6, 200.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if zcdp_rho(mid, delta) <= 0.5 * mu * mu else (lo, mid)
    return lo


def _gd(params, budget):
    return dp.DPGradientDescent(_epsilon_of(budget.mu, 1e-6), 1e-6, steps=params["steps"], learning_rate=1.0,
                                output="last", clip=0.5, precondition=False)


GRID = [{"steps": 1}, {"steps": 2}]


def test_one_charge_every_candidate_once_and_the_refit_on_every_row():
    d0, _ = _pair()
    ledger = dp.Ledger()
    sel = RefitSelection(2.0, 1e-3, candidates=GRID, build=_gd, ledger=ledger)
    release = sel.run(_problems(d0), seed=0, keep_diagnostics=True)
    assert [(c.epsilon, c.delta) for c in ledger.charges] == [(2.0, 1e-3)]
    runs = release.diagnostics.details["runs"]
    assert [r["candidate"] for r in runs] == [0, 1]  # every candidate once, in order
    params = release.parameters
    assert params["noisy_scores"] == [r["noisy_score"] for r in runs]
    chosen = params["selected_index"]
    assert params["selected"] == GRID[chosen] and params["noisy_selected_score"] == params["noisy_scores"][chosen]
    refit_rho_run = params["selected_parameters"]["zcdp_rho"]  # the refit's own zCDP, at most its share
    assert refit_rho_run <= 0.5 * params["refit_mu"] ** 2 and refit_rho_run >= 0.99 * 0.5 * params["refit_mu"] ** 2


def test_the_first_is_kept_unless_beaten_by_the_margin():
    """b = ⌈2·√2·σ_s/γ⌉ grid steps.  The two candidates score alike here (only row 0 can be
    classified correctly, by either), so a plain noisy max (prefer_first=0) picks either about
    half the time, and the default margin keeps the first nearly always."""
    d0, _ = _pair()
    sel = RefitSelection(1.0, 1e-3, candidates=GRID, build=_gd, ledger=dp.Ledger())
    noise = sel.score_noise
    assert preference_units(noise, 2.0) == math.ceil(2.0 * math.sqrt(2.0 * float(noise.param)))
    assert sel.run(_problems(d0), seed=0).parameters["preference"] == preference_units(noise, 2.0) * noise.gamma
    firsts = {}
    for prefer in (0.0, 2.0):
        picks = [RefitSelection(1.0, 1e-3, candidates=GRID, build=_gd, prefer_first=prefer, ledger=dp.Ledger())
                 .run(_problems(d0), seed=s).parameters["selected_index"] for s in range(60)]
        firsts[prefer] = picks.count(0)
    assert 15 <= firsts[0.0] <= 45 and firsts[2.0] >= 55


def test_resolution_is_a_public_rule_of_the_noise_and_the_rows():
    b = calibrate_refit(1.0, 1e-6, candidates=3, holdout=True)
    from dpopt.mechanisms.selection_refit import refit_score_noise

    noise = refit_score_noise(b, 1.0)
    edge = 2.0 * math.sqrt(2.0) * noise.scale / 0.1  # the number of scored rows at the edge
    assert resolves(noise, 1.01 * edge) and not resolves(noise, 0.99 * edge)


def test_bad_input_is_refused_before_the_charge():
    d0, _ = _pair()
    ledger = dp.Ledger()
    over = RefitSelection(1.0, 1e-3, candidates=GRID, build=lambda p, b: dp.DPGradientDescent(
        10 * b.epsilon, b.delta, steps=p["steps"], precondition=False), ledger=ledger)
    with pytest.raises(MechanismError, match="per-candidate μ|calibrate"):
        over.run(_problems(d0))
    held = d0.subset(np.arange(2))
    with pytest.raises(MechanismError, match="refit="):
        RefitSelection(1.0, 1e-3, candidates=GRID, build=_gd, holdout=held, ledger=ledger).run(_problems(d0))
    other = dp.Dataset(np.zeros((N, 1)), np.ones(N), x_bound=1.0)
    with pytest.raises(MechanismError, match="rows"):  # the refit rows must be the training and held-out rows
        RefitSelection(1.0, 1e-3, candidates=GRID, build=_gd, holdout=held, refit=_problems(other),
                       ledger=ledger).run(_problems(d0))
    with pytest.raises(MechanismError, match="no candidate calls a solver"):
        RefitSelection(1.0, 1e-3, candidates=GRID, build=_gd, ledger=ledger).run(_problems(d0), solver="scipy")
    with pytest.raises(MechanismError, match="δ > 0|delta"):
        RefitSelection(1.0, 0.0, candidates=GRID, build=_gd, ledger=ledger)
    assert ledger.charges == ()


def _classification(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) / math.sqrt(3)
    return X, np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, 1.0, -1.0)


@pytest.mark.parametrize("row", ["outside-bound", "contradiction", "zero-row"])
@covers(RefitSelection, kind="neighbour")
def test_neighbours_see_the_same_public_record(row):
    X, y = _classification()
    d0 = dp.Dataset(X, y, x_bound=1.0, clip=True)
    x, label = {"outside-bound": (np.full(3, 50.0), 1.0), "contradiction": (X[0], -y[0]),
                "zero-row": (np.zeros(3), -1.0)}[row]
    d1 = d0.replace_row(7, x, label)

    def run(data, ledger):
        order = np.random.default_rng(5).permutation(data.n)  # a public split by row position
        train, held = data.subset(np.sort(order[8:])), data.subset(np.sort(order[:8]))
        th = dp.Variable(3)

        def problem(on):
            return lambda p: dp.Problem(dp.LogisticLoss(on, th), constraint=dp.L2Ball(th, 2.0))
        return RefitSelection(1.0, 1e-6, candidates=[{"steps": 4}, {"steps": 16}], ledger=ledger, holdout=held,
                              refit=problem(data), build=lambda h, b: dp.DPGradientDescent(
                                  b.epsilon, b.delta, steps=h["steps"])).run(problem(train), seed=1)

    assert_same_view(run, d0, d1)


# ----------------------------------------------------------------------------- audits


class QuadrupledRefit(RefitSelection):
    """Mutation: the refit gets four times the μ its share of ρ allows."""

    def _calibrate_refit(self, selection_share, score_share):
        b = super()._calibrate_refit(selection_share, score_share)
        mu = 4.0 * b.refit.mu
        return RefitBudget(b.rho, b.selection_rho, b.candidate, b.score_mu, CandidateBudget(mu, b.refit.delta, mu))


def _audit(cls, n_runs, seed=0):
    d0, d1 = _pair()
    cache = {}

    def run(data, s):
        if id(data) not in cache:  # one mechanism per side (planning is public; every run draws afresh)
            cache[id(data)] = (cls(2.0, 1e-3, candidates=GRID, build=_gd, ledger=dp.Ledger()), _problems(data))
        sel, problems = cache[id(data)]
        return sel.run(problems, seed=s).theta

    res = audit(run, d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=n_runs, seed=seed)
    print(f"{cls.__name__}: {res.summary()}")
    return res


@covers(RefitSelection, kind="audit")
@covers(RefitSelection, kind="mutation")
def test_refit_selection_audit_and_quadrupled_refit_mutant():
    ok = _audit(RefitSelection, 700)
    assert not ok.violates, ok.summary()
    assert ok.epsilon_lower > 0.2, ok.summary()  # the pair has power
    bad = _audit(QuadrupledRefit, 400)
    assert bad.violates, bad.summary()
