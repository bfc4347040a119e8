"""OPDisc (NRVW19 Alg. 1) with the exact brute-force oracle: noise scale, validation,
fail-closed behaviour, audit and mutation test."""

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, ModelError, UncertifiedOracleError
from dpopt.mechanisms.opdisc import DEFAULT_ALPHA, opdisc_shift, opdisc_sigma
from dpopt.modeling.discrete import brute_force
from dpopt.privacy.profiles import chi_profile_delta, chi_shift_sigma
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.neighbours import discrete_backends, discrete_problem
from dpopt.testing.pairs import grid_label_pair, random_grid_pair, zero_one_problem
from dpopt.testing.views import assert_same_view


def _pair():
    return grid_label_pair(5)


GRID = dp.IntegerGrid(1, -2, 2, l2_bound=2.0)


def _problem(data, grid=GRID):
    return zero_one_problem(data, grid)


def test_sigma_is_the_smallest_meeting_the_chi_profile():
    """Adult (d = 23, D = √23, τ = 1, G = 1, δ = 1/n²): σ is the smallest scale whose
    χ_{d+1} profile E[(1 − e^{ε − aR − a²/2})₊], a = Δ/σ, is ≤ δ (Δ = 4GD²/τ)."""
    delta = 1 / 15682**2
    shift = 4 * 23
    for eps in (0.1, 1.0):
        s = opdisc_sigma(1.0, math.sqrt(23), 1.0, 23, eps, delta)
        assert chi_profile_delta(shift / s, eps, 24) <= delta
        assert chi_profile_delta(shift / (0.999 * s), eps, 24) > delta
        # the Borell–TIS cutoff is still available and is larger: Δ/(√(c² + 2ε) − c)
        c = math.sqrt(24) + math.sqrt(2 * math.log(1 / delta))
        old = opdisc_sigma(1.0, math.sqrt(23), 1.0, 23, eps, delta, calibration="borell-tis")
        assert old == pytest.approx(shift / (math.sqrt(c * c + 2 * eps) - c))
        assert 0.7 < s / old < 0.85
    paper = 7 * 1.0 * 23 * math.sqrt(math.log(15682**2)) / 1.0
    assert 1.0 < s / paper < 1.3  # still above the paper's (its Lemma 3 is not uniform in ŵ)
    assert opdisc_sigma(1.0, 2.0, 1.0, 1, 2.0, 1e-3) > opdisc_sigma(1.0, 2.0, 1.0, 1, 4.0, 1e-3)
    with pytest.raises(MechanismError, match="calibration"):
        opdisc_sigma(1.0, 2.0, 1.0, 1, 2.0, 1e-3, calibration="rdp")


def test_alpha_enters_the_shift():
    # Δ = 4GD²/τ + 4αD²/τ², and σ is linear in Δ
    assert opdisc_shift(0.5, 3.0, 0.5, alpha=0.2) == pytest.approx(4 * 0.5 * 9 / 0.5 + 4 * 0.2 * 9 / 0.25)
    base = opdisc_sigma(0.5, 3.0, 0.5, 2, 1.0, 1e-4)
    assert opdisc_sigma(0.5, 3.0, 0.5, 2, 1.0, 1e-4, alpha=0.2) == pytest.approx(
        base * opdisc_shift(0.5, 3.0, 0.5, alpha=0.2) / opdisc_shift(0.5, 3.0, 0.5), rel=1e-6)


def _alpha_margin_failures(shift_of, alpha: float, trials: int, seed: int) -> int:
    """Pairs (ŵ, v) on random neighbours where the α-robust step of the proof fails.

    With ŵ α-optimal on D at η (F_D(v) − F_D(ŵ) ≥ −α) and η' = η + cπ(ŵ),
    F'_{D'}(v) − F'_{D'}(ŵ) = [F_D(v) − F_D(ŵ)] + Δloss(v, ŵ) + c⟨π(ŵ), π(ŵ) − π(v)⟩, so ŵ is
    the only α-optimal point on D' for *every* such η iff Δloss + c⟨π(ŵ), π(ŵ) − π(v)⟩ ≥ 2α
    for all v ≠ ŵ.  Checked exhaustively over the grid for each random neighbouring pair.
    """
    rng = np.random.default_rng(seed)
    failures = 0
    for t in range(trials):
        d = 1 + t % 2
        d0, d1 = random_grid_pair(rng, d)
        p0, p1 = _problem(d0), _problem(d1)
        W = GRID.enumerate(d)
        Pi = GRID.normalize(W)
        c = shift_of(p0.loss.lipschitz)
        change = p1.loss.values(W) - p0.loss.values(W)  # Δloss(v, ŵ) = change[v] − change[ŵ]
        margin = change[None, :] - change[:, None] + c * (1.0 - Pi @ Pi.T)  # rows ŵ, columns v
        np.fill_diagonal(margin, np.inf)
        failures += int(np.sum(margin < 2 * alpha - 1e-9))  # = 2α is the tight case, still fine
    return failures


def test_alpha_optimal_answers_keep_the_coupling():
    """Item 4 of the module docstring: the shift 4GD²/τ + 4αD²/τ² makes an α-optimal ŵ the
    only α-optimal point on every neighbour; without the α term (or with half of it) it fails."""
    alpha, D, tau = 0.3, GRID.bound(1), GRID.step
    assert _alpha_margin_failures(lambda G: opdisc_shift(G, D, tau, alpha=alpha), alpha, 300, seed=0) == 0
    assert _alpha_margin_failures(lambda G: opdisc_shift(G, D, tau), alpha, 300, seed=0) >= 1
    half = lambda G: opdisc_shift(G, D, tau) + 2 * alpha * D**2 / tau**2  # noqa: E731
    assert _alpha_margin_failures(half, alpha, 300, seed=0) >= 1


def test_bad_input_is_refused_before_solving():
    d0, _ = _pair()
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="delta > 0"):
        dp.OPDisc(1.0, 0.0)
    th = dp.Variable(1)
    convex = dp.Problem(dp.LogisticLoss(d0, th))
    with pytest.raises(MechanismError, match="continuous variable"):
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(convex, solver="bruteforce")
    with pytest.raises(ModelError, match="IntegerGrid"):
        dp.ZeroOneLoss(d0, th, None)
    with pytest.raises(ModelError):
        dp.IntegerGrid(0.0, -1, 1)
    with pytest.raises(dp.errors.BackendCapabilityError):
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_problem(d0), solver="clarabel")
    assert ledger.charges == ()


def test_release_is_a_grid_point_and_reproducible():
    d0, _ = _pair()
    r1 = dp.OPDisc(2.0, 1e-3, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=5, diagnostics=False)
    r2 = dp.OPDisc(2.0, 1e-3, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=5, diagnostics=False)
    assert np.array_equal(r1.theta, r2.theta) and GRID.contains(r1.theta)
    assert r1.private and r1.parameters["noise_scale"] == pytest.approx(
        opdisc_sigma(1.0, 2.0, 1.0, 1, 2.0, 1e-3, alpha=DEFAULT_ALPHA))
    assert r1.parameters["calibration"] == "chi2-profile" and r1.parameters["alpha"] == DEFAULT_ALPHA


def test_uncertified_oracle_fails_closed(monkeypatch):
    from dpopt.backends.bruteforce import BruteForceBackend

    real = BruteForceBackend.solve

    def tie(self, prepared, b, options):  # a solver that stops on a limit without a proof
        import math
        from dataclasses import replace

        from dpopt.backends.result import Limit, OracleStatus

        return replace(real(self, prepared, b, options), status=OracleStatus.LIMIT, limit=Limit.TIME,
                       solver_certified=False, certified=False, dual_bound=-math.inf)

    monkeypatch.setattr(BruteForceBackend, "solve", tie)
    ledger = dp.Ledger()
    d0, _ = _pair()
    with pytest.raises(UncertifiedOracleError) as e:
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_problem(d0), solver="bruteforce", seed=0, time_limit=10)
    assert ledger.spent == (1.0, 1e-3) and not ledger.charges[0].released
    assert "limit" in str(e.value) and "not covered" in str(e.value) and e.value.diagnostics is None


def _runner(scale=1.0):
    class Scaled(dp.OPDisc):
        def sigma(self, problem):
            return super().sigma(problem) * scale

    def run(data, seed):
        return Scaled(4.0, 1e-3, ledger=dp.Ledger()).run(_problem(data), solver="bruteforce", seed=seed).theta

    return run


@covers(dp.OPDisc, kind="audit")
def test_opdisc_audit_no_violation():
    d0, d1 = _pair()
    res = audit(_runner(), d0, d1, claimed_epsilon=4.0, claimed_delta=1e-3, n_runs=3000, seed=1)
    assert not res.violates, res.summary()


@covers(dp.OPDisc, kind="mutation")
def test_opdisc_mutation_without_enough_noise_is_caught():
    """OPDisc's σ protects the worst grid geometry; on any concrete pair its real loss is
    far below ε (measured: a lower bound of 0.04 for ε = 4 with 200,000 runs, 0.52 even at σ/10),
    so halving σ cannot be caught at the full claim. The mutation a black-box audit can
    catch is a gross one: σ/1000 makes the output nearly a function of the data.  Half the
    noise is caught by the white-box coupling test below."""
    d0, d1 = _pair()
    res = audit(_runner(1e-3), d0, d1, claimed_epsilon=4.0, claimed_delta=1e-3, n_runs=3000, seed=1)
    assert res.violates, res.summary()


@pytest.mark.parametrize("name", ["highs", "highs-grouped"])
@covers(dp.OPDisc, kind="audit")
def test_opdisc_small_audit_through_a_mip_backend(name):
    """The same audit with a HiGHS MIP oracle instead of enumeration (fewer runs)."""
    if not dp.backends.get(name).available():
        pytest.skip(f"{name}: highspy not installed")
    d0, d1 = _pair()

    def run(data, seed):
        return dp.OPDisc(4.0, 1e-3, ledger=dp.Ledger()).run(_problem(data), solver=name, seed=seed).theta

    res = audit(run, d0, d1, claimed_epsilon=4.0, claimed_delta=1e-3, n_runs=300, seed=2)
    assert not res.violates, res.summary()
    # and it agrees with enumeration draw for draw
    for s in range(20):
        a = dp.OPDisc(4.0, 1e-3, ledger=dp.Ledger()).run(_problem(d0), solver=name, seed=s).theta
        b = dp.OPDisc(4.0, 1e-3, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=s).theta
        assert np.array_equal(a, b)


@pytest.mark.slow
def test_opdisc_real_loss_is_far_below_its_claim():
    """The figures behind the mutation test's docstring (pytest -m slow tests/mechanisms/test_opdisc.py -s):
    vectorised exact argmins over the 1-d grid, 200,000 runs per dataset."""
    from dpopt.testing import audit_outputs

    d0, d1 = _pair()
    p0, p1 = _problem(d0), _problem(d1)
    W = GRID.enumerate(1)
    Pi = GRID.normalize(W)
    sigma = opdisc_sigma(1.0, 2.0, 1.0, 1, 4.0, 1e-3)
    rng = np.random.default_rng(0)
    bounds = {}
    for f in (1.0, 0.5, 0.1):
        E = rng.normal(scale=sigma * f, size=(200_000, 2))
        o0 = W[np.argmin(p0.loss.values(W)[None, :] - E @ Pi.T, axis=1)]
        o1 = W[np.argmin(p1.loss.values(W)[None, :] - E @ Pi.T, axis=1)]
        res = audit_outputs(o0, o1, claimed_epsilon=4.0, claimed_delta=1e-3)
        print(f"σ×{f}: {res.summary()}")
        bounds[f] = res.epsilon_lower
    assert bounds[1.0] < 0.5 and bounds[0.5] < 4.0 and bounds[0.1] < 4.0


def _shift_coupling_failures(mechanism: dp.OPDisc, trials: int, seed: int) -> int:
    """How often the coupling behind OPDisc's proof (Lemma 4) fails on random neighbours.

    For η yielding ŵ on D, the proof maps η to η + Δ·π(ŵ) and needs ŵ to stay the argmin on
    every neighbour D'.  Δ is read back from the mechanism's own σ (σ is linear in Δ: the
    χ_{d+1} profile's σ for a unit shift), so a mechanism with less noise is checked with
    the smaller shift its σ pays for.
    """
    rng = np.random.default_rng(seed)
    failures = 0
    for t in range(trials):
        d = 1 + t % 2
        d0, d1 = random_grid_pair(rng, d)
        p0, p1 = _problem(d0), _problem(d1)
        shift = mechanism.sigma(p0.with_kind("normalized")) / chi_shift_sigma(1.0, mechanism.epsilon,
                                                                               mechanism.delta, d + 1)
        eta = rng.normal(0.0, 2.0, size=d + 1)
        w0, _ = brute_force(p0.with_eta(eta))
        W = GRID.enumerate(d)
        f = p1.with_eta(eta + shift * GRID.normalize(w0)).objectives(W)
        at_w0 = np.all(W == w0, axis=1)
        failures += int(f[at_w0][0] > f[~at_w0].min() + 1e-9)
    return failures


def test_opdisc_mutation_with_half_the_noise_breaks_the_proof_coupling():
    """Half the noise, caught where a black-box audit cannot see it (see the test above).

    OPDisc's σ is linear in the shift Δ = 4GD²/τ of Lemma 4's coupling η ↦ η + Δπ(ŵ).  With
    the mechanism's σ the coupling keeps ŵ the argmin on every sampled neighbour; with σ/2
    (Δ/2, the paper's 2GD²/τ) it fails on some (measured: 11 of 4,000 at seed 0, 2 at 3σ/4),
    so the privacy argument no longer covers the mutant."""
    class Half(dp.OPDisc):
        def sigma(self, problem):
            return super().sigma(problem) / 2

    assert _shift_coupling_failures(dp.OPDisc(4.0, 1e-3), 4000, seed=0) == 0
    assert _shift_coupling_failures(Half(4.0, 1e-3), 4000, seed=0) >= 1


def test_the_grouped_oracle_runs_on_two_processes_by_default_from_public_facts(monkeypatch):
    """highs-grouped with n ≥ PARALLEL_MIN_ROWS on a machine with two cores gets a two-process pool
    (a fallback default); fewer rows, one core, another backend or the user's own executor: none."""
    from dpopt.backends.profiles import ExecutorSettings, SolverProfile
    from dpopt.mechanisms import discrete_base
    from dpopt.mechanisms.discrete_base import PARALLEL_MIN_ROWS, parallel_default

    class Sized:  # the rule reads n only (public under replace-one)
        def __init__(self, n):
            self.n = n

    monkeypatch.setattr(discrete_base.os, "cpu_count", lambda: 2)
    plain = SolverProfile("highs-grouped")
    chosen = parallel_default(plain, "highs-grouped", Sized(PARALLEL_MIN_ROWS))
    assert chosen.executor == ExecutorSettings("processes", workers=2, fallback=True)
    assert parallel_default(plain, "highs-grouped", Sized(PARALLEL_MIN_ROWS - 1)).executor is None
    assert parallel_default(plain, "highs", Sized(10 * PARALLEL_MIN_ROWS)).executor is None
    own = SolverProfile("highs-grouped", executor=ExecutorSettings("inprocess"))
    assert parallel_default(own, "highs-grouped", Sized(PARALLEL_MIN_ROWS)) is own
    monkeypatch.setattr(discrete_base.os, "cpu_count", lambda: 1)
    assert parallel_default(plain, "highs-grouped", Sized(PARALLEL_MIN_ROWS)).executor is None


def test_a_default_pool_that_cannot_start_leaves_the_run_in_process(monkeypatch):
    """dpopt's own default pool failing to start (a script without a __main__ guard) costs nothing and
    the run releases in-process; the user's explicit executor failing still refuses, before the charge."""
    from dpopt.backends.profiles import ExecutorSettings, SolverProfile
    from dpopt.errors import ExecutorError
    from dpopt.executors import ProcessExecutor

    def broken(self):
        raise ExecutorError("the process pool could not start")

    monkeypatch.setattr(ProcessExecutor, "start", broken)
    d0, _ = _pair()
    fallback = SolverProfile("bruteforce", executor=ExecutorSettings("processes", workers=2, fallback=True))
    ledger = dp.Ledger()
    release = dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_problem(d0), solver=fallback, seed=0)
    assert release.private and ledger.spent == (1.0, 1e-3)
    explicit = SolverProfile("bruteforce", executor=ExecutorSettings("processes", workers=2))
    ledger = dp.Ledger()
    with pytest.raises(ExecutorError):
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_problem(d0), solver=explicit, seed=0)
    assert ledger.spent == (0.0, 0.0)


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", discrete_backends())
@covers(dp.OPDisc, kind="neighbour")
def test_opdisc_looks_the_same_on_neighbours(discrete_pair: tuple[dp.Dataset, dp.Dataset], solver: str) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.OPDisc(1.0, 1e-3, ledger=ledger).run(discrete_problem(data), solver=solver, seed=0)

    assert_same_view(run, *discrete_pair)
