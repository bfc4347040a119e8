"""Cross-verification of discrete oracle answers by an independent backend (dpopt.backends.verify)."""

import json

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.bruteforce import BruteForceBackend
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.backends.verify import (
    SCIP_GROUPED,
    ScipGroupedVerifier,
    Verifier,
    VerifierChoice,
    choose_verifier,
    threshold,
)
from dpopt.errors import MechanismError, ModelError, UncertifiedOracleError
from dpopt.modeling.discrete import brute_force
from dpopt.testing.declarations import hide_data_values

BIG_M = [n for n in ("highs", "scip", "cpsat") if registry.get(n).available()]
SCIP = ScipGroupedVerifier.available()
needs_scip = pytest.mark.skipif(not SCIP, reason="pyscipopt is not installed (scip-grouped)")
ALPHA = 1e-3


def _numeric(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return dp.Dataset(X, y, schema=dp.Schema.uniform(d, dp.Numeric(-1, 1, grid="1/4")))


def _problem(data, grid):
    return dp.DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(data.n_features), grid)).with_kind("normalized")


def _small(seed):
    return _problem(_numeric(12, 2, seed), dp.IntegerGrid(1, -2, 2, l2_bound=2.5))


@pytest.fixture(scope="module")
def adult(adult_300):
    return adult_300


def _second_best(problem):
    """(optimum, the second-smallest objective value) by enumeration."""
    vals = np.sort(problem.objectives(problem.domain.enumerate(problem.dim)))
    return float(vals[0]), float(vals[vals > vals[0] + 1e-9][0])


# -- agreement on small random problems, bruteforce as ground truth ---------------------------

@pytest.mark.parametrize("verifier", ["bruteforce", *BIG_M])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_verifiers_confirm_the_optimum_and_refuse_a_worse_point(verifier, seed):
    template = _small(seed)
    eta = np.random.default_rng(seed).normal(size=template.noise_size) * 0.3
    problem = template.with_eta(eta)
    best, second = _second_best(problem)
    assert brute_force(problem)[1] == pytest.approx(best)
    v = Verifier.start(VerifierChoice(verifier, "test"), template, None)
    ok = v.confirm(problem, eta, best, ALPHA, SolveOptions(), 2)
    assert ok.certified and ok.recheck.confirmed and ok.backend == verifier
    bad = v.confirm(problem, eta, second + 2 * ALPHA, ALPHA, SolveOptions(), 2)  # a claim above the optimum
    assert not bad.certified and not bad.recheck.confirmed


@needs_scip
def test_scip_grouped_agrees_with_highs_grouped(adult):
    template = _problem(adult, dp.IntegerGrid(1, -1, 1))
    assert choose_verifier("highs-grouped", template).backend == SCIP_GROUPED
    primary = registry.get("highs-grouped")
    prepared = primary.prepare(template)
    v = Verifier.start(VerifierChoice(SCIP_GROUPED, "test"), template, prepared)
    eta = np.random.default_rng(3).normal(size=template.noise_size) * 0.5
    res = primary.solve(prepared, eta, SolveOptions())
    assert res.certified
    problem = template.with_eta(eta)
    value = problem.objective(res.solution)
    assert v.confirm(problem, eta, value, ALPHA, SolveOptions(), 2).certified
    worse = v.confirm(problem, eta, value + 0.05, ALPHA, SolveOptions(), 2)  # 15 rows of 300 too many
    assert not worse.certified and worse.recheck.found_better_point


def test_threshold_is_alpha_or_a_relative_slack():
    assert threshold(2.0, 0.1) == pytest.approx(1.9)
    assert threshold(2.0, 0.0) == pytest.approx(2.0 - 2e-6)


# -- a mutant primary that claims optimality for a suboptimal point ---------------------------

class _Mutant(BruteForceBackend):
    """Returns the second-best grid point and claims it optimal with a zero gap."""

    name = "mutant"

    def solve(self, prepared, b, options):
        problem, W = prepared.problem, prepared.points
        p = problem.with_eta(b)
        vals = p.objectives(W)
        i = int(np.argsort(vals, kind="stable")[1])
        v = float(vals[i])
        return OracleResult(solution=W[i].copy(), status=OracleStatus.OPTIMAL, solver_certified=True,
                            solve_time=0.0, backend=self.name, backend_version="0", raw_status="optimal",
                            primal_bound=v, dual_bound=v, gap=0.0)


def _opdisc(**kw):
    return dp.OPDisc(2.0, 1e-3, alpha=1e-6, ledger=dp.Ledger(), **kw)


def test_mutant_is_caught_nothing_released_budget_spent():
    ledger = dp.Ledger()
    mech = dp.OPDisc(2.0, 1e-3, alpha=1e-6, ledger=ledger)
    with pytest.raises(UncertifiedOracleError, match="independent verifier \\(bruteforce\\)") as info:
        mech.run(_small(0), solver=_Mutant(), seed=1)
    assert ledger.spent == (2.0, 1e-3) and not ledger.charges[0].released
    assert info.value.diagnostics is None  # diagnostics only when asked
    with pytest.raises(UncertifiedOracleError) as asked:
        mech.run(_small(0), solver=_Mutant(), seed=1, keep_diagnostics=True)
    roles = [getattr(r.recheck, "role", None) for r in asked.value.diagnostics.oracle_results]
    assert roles == [None, "verifier"]


def test_mutant_unsafe_release_records_the_failed_check():
    release = _opdisc(on_uncertified="release-unsafe").run(_small(0), solver=_Mutant(), seed=1)
    assert not release.private
    assert [(c.role, c.certified) for c in release.oracle_calls] == [("oracle", False), ("verifier", False)]


def test_verify_false_skips_the_check():
    release = _opdisc(verify=False).run(_small(0), solver=_Mutant(), seed=1)  # the mutant goes through
    assert release.private and [c.role for c in release.oracle_calls] == ["oracle"]
    assert release.parameters["verifier_rule"].startswith("off")
    with pytest.raises(MechanismError, match="verify"):
        dp.OPDisc(1.0, 1e-3, verify="no")


def test_profile_verify_false_skips_the_check(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('backend = "bruteforce"\nverify = false\n')
    mech = _opdisc()
    session = mech._session(mech._template(_small(0)), path, None, None)
    assert session.verifier is None
    path.write_text('backend = "bruteforce"\nverify = "no"\n')
    with pytest.raises(ModelError, match="verify must be true or false"):
        mech._session(mech._template(_small(0)), path, None, None)


# -- the public records -----------------------------------------------------------------------

@pytest.mark.skipif(not BIG_M, reason="no big-M MIP backend installed")
def test_oracle_call_records_the_verifier_and_no_numbers():
    release = dp.OPSamp(2.0, 1e-3, calls=2, ledger=dp.Ledger()).run(_small(1), solver=BIG_M[0], seed=0)
    assert release.private
    roles = [(c.backend, c.role) for c in release.oracle_calls]
    assert roles == [(BIG_M[0], "oracle")] * 2 + [("bruteforce", "verifier")] * 2
    check = release.oracle_calls[-1]
    assert check.acceptance.startswith("independent check: no grid point below f(ŵ) − max(α=")
    assert release.parameters["verifier_rule"].startswith("the grid is small enough")
    text = json.dumps(release.to_dict())
    assert "lower_bound" not in text and "confirmed" not in text  # the check's numbers stay in diagnostics
    other = dp.OPSamp(2.0, 1e-3, calls=2, ledger=dp.Ledger()).run(_small(2), solver=BIG_M[0], seed=5)
    assert other.oracle_calls == release.oracle_calls  # the same public record on other data and noise


def test_bruteforce_primary_needs_no_verifier_and_no_note():
    release = _opdisc().run(_small(0), seed=0)
    assert [c.backend for c in release.oracle_calls] == ["bruteforce"]
    assert "exact by construction" in release.parameters["verifier_rule"]
    assert not any("cross-verified" in n for n in release.notes)


def test_no_installed_verifier_is_said_in_a_note(monkeypatch):
    import dpopt.backends.verify as verify

    monkeypatch.setattr(verify, "bruteforce_reason", lambda p: None, raising=False)
    monkeypatch.setattr("dpopt.backends.auto_discrete.bruteforce_reason", lambda p: None)
    monkeypatch.setattr(verify, "_installed", lambda name: False)
    release = _opdisc().run(_small(0), solver=_Mutant(), seed=1)
    assert [c.role for c in release.oracle_calls] == ["oracle"]
    assert any("not cross-verified" in n for n in release.notes)


@needs_scip
@pytest.mark.skipif(not registry.get("highs-grouped").available(), reason="highspy is not installed")
def test_default_run_on_adult_is_verified_by_scip_grouped(adult):
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(adult, dp.Variable(23), dp.IntegerGrid(1, -1, 1)))
    release = dp.OPDisc(1.0, 1e-4, ledger=dp.Ledger()).run(problem, seed=0)
    assert release.private
    assert [(c.backend, c.role) for c in release.oracle_calls] == [("highs-grouped", "oracle"),
                                                                    (SCIP_GROUPED, "verifier")]


# -- the choice reads no data values ----------------------------------------------------------

@pytest.mark.parametrize("primary", ["highs-grouped", "highs", "cpsat", "scip", "bruteforce", "third-party"])
@pytest.mark.parametrize("case", ["adult", "numeric", "small"])
def test_choice_reads_no_values(monkeypatch, adult, primary, case):
    problem = {"adult": lambda: _problem(adult, dp.IntegerGrid(1, -1, 1)),
               "numeric": lambda: _problem(_numeric(300, 10), dp.IntegerGrid(1, -1, 1)),
               "small": lambda: _small(0)}[case]()
    before = choose_verifier(primary, problem)
    hide_data_values(monkeypatch, problem)
    with pytest.raises(AssertionError, match="read a data value"):
        np.asarray(problem.loss.data.X)
    assert choose_verifier(primary, problem) == before
    assert before.backend != primary



# -- a crashed verifier call is retried like a crashed primary call ---------------------------

class _Honest(BruteForceBackend):
    """An exact primary under another name, so that a verifier (bruteforce on a small grid) runs."""

    name = "honest-primary"


class _CrashingVerifier(BruteForceBackend):
    """The bruteforce verifier, crashing on its first ``crashes`` calls (raising, or reporting ERROR)."""

    name = "bruteforce"

    def __init__(self, crashes, how):
        self.crashes, self.how, self.calls = crashes, how, 0

    def solve(self, prepared, b, options):
        self.calls += 1
        if self.calls <= self.crashes:
            if self.how == "raise":
                raise RuntimeError("solver crashed")
            return OracleResult(solution=None, status=OracleStatus.ERROR, solver_certified=False, solve_time=0.0,
                                backend=self.name, backend_version="0", raw_status="crash")
        return super().solve(prepared, b, options)


def _with_verifier(monkeypatch, stub):
    """Every run's verifier is ``stub`` (the public choice stays bruteforce)."""
    def start(cls, choice, problem, primary_prepared):
        return Verifier(stub.name, "0", stub.prepare(problem), stub)

    monkeypatch.setattr(Verifier, "start", classmethod(start))


@pytest.mark.parametrize("how", ["raise", "error"])
def test_a_verifier_that_crashes_once_is_retried_and_the_run_releases(monkeypatch, how):
    from dpopt.mechanisms.discrete_base import CRASH_RETRIES

    assert CRASH_RETRIES >= 1
    stub = _CrashingVerifier(crashes=1, how=how)
    _with_verifier(monkeypatch, stub)
    ledger = dp.Ledger()
    release = dp.OPDisc(2.0, 1e-3, alpha=1e-6, ledger=ledger).run(_small(0), solver=_Honest(), seed=1)
    assert release.private and stub.calls == 2  # the crash, then the same η again: confirmed
    assert [(c.role, c.certified) for c in release.oracle_calls] == [("oracle", True), ("verifier", True)]
    honest = dp.OPDisc(2.0, 1e-3, alpha=1e-6, ledger=dp.Ledger(), verify=False).run(_small(0), solver=_Honest(),
                                                                                       seed=1)
    np.testing.assert_array_equal(release.theta, honest.theta)  # the retry draws no new noise


@pytest.mark.parametrize("how", ["raise", "error"])
def test_a_verifier_that_always_crashes_fails_closed_after_the_fixed_tries(monkeypatch, how):
    from dpopt.mechanisms.discrete_base import CRASH_RETRIES

    stub = _CrashingVerifier(crashes=10 ** 6, how=how)
    _with_verifier(monkeypatch, stub)
    ledger = dp.Ledger()
    with pytest.raises(UncertifiedOracleError, match="independent verifier \\(bruteforce\\)") as info:
        dp.OPDisc(2.0, 1e-3, alpha=1e-6, ledger=ledger).run(_small(0), solver=_Honest(), seed=1)
    assert stub.calls == 1 + CRASH_RETRIES  # a fixed, public number of tries: no more, no fewer
    assert ledger.spent == (2.0, 1e-3) and not ledger.charges[0].released
    assert "solver crashed" not in str(info.value)


@needs_scip
@pytest.mark.parametrize("crashes", [1, 10 ** 6])
def test_scip_grouped_verifier_retries_a_crash_like_the_primary(monkeypatch, crashes):
    import dpopt.backends.scip_points as scip_points
    from dpopt.mechanisms.discrete_base import CRASH_RETRIES

    template = _small(0)
    v = Verifier.start(VerifierChoice(SCIP_GROUPED, "test"), template, None)
    eta = np.random.default_rng(0).normal(size=template.noise_size) * 0.3
    problem = template.with_eta(eta)
    best = brute_force(problem)[1]
    real, calls = scip_points.scip_model, []

    def flaky(prog, options):
        calls.append(1)
        if len(calls) <= crashes:
            raise RuntimeError("SCIP crashed")
        return real(prog, options)

    monkeypatch.setattr(scip_points, "scip_model", flaky)
    res = v.confirm(problem, eta, best, ALPHA, SolveOptions(), CRASH_RETRIES)
    if crashes > 1:
        assert not res.certified and res.status is OracleStatus.ERROR and len(calls) == 1 + CRASH_RETRIES
        assert res.raw_status == "exception RuntimeError"  # the type only, never the message
        return
    assert res.certified and res.recheck.confirmed and len(calls) == 2
    worse = v.confirm(problem, eta, _second_best(problem)[1] + 2 * ALPHA, ALPHA, SolveOptions(), CRASH_RETRIES)
    assert not worse.certified and worse.recheck.found_better_point
    assert len(calls) == 3  # a disagreement is judged once, never retried
