"""The SCIP oracle (pyomo + PySCIPOpt): differential against enumeration, mechanisms, conformance."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyomo.environ", reason="pyomo is not installed")
pytest.importorskip("pyscipopt", reason="pyscipopt is not installed (pip install 'dpopt[scip]')")

import dpopt as dp  # noqa: E402
from dpopt.backends import registry  # noqa: E402
from dpopt.backends.conformance import DISCRETE_CASES, run_case  # noqa: E402
from dpopt.backends.pyomo_mip import PyomoMipBackend  # noqa: E402
from dpopt.backends.result import OracleStatus, SolveOptions  # noqa: E402
from dpopt.backends.scip import ScipBackend  # noqa: E402
from dpopt.modeling.dataset import Dataset  # noqa: E402
from dpopt.modeling.discrete import DiscreteProblem, PerturbationKind  # noqa: E402
from dpopt.modeling.domains import IntegerGrid  # noqa: E402
from dpopt.modeling.schema import Numeric, Schema  # noqa: E402
from dpopt.modeling.variable import Variable  # noqa: E402
from dpopt.modeling.zero_one import ZeroOneLoss  # noqa: E402

if not ScipBackend().available():
    pytest.skip("pyomo's scip_direct interface is missing (pyomo >= 6.10 needed)", allow_module_level=True)

SCIP = ScipBackend()
BRUTE = registry.get("bruteforce")
OPTS = SolveOptions(threads=1)
GRIDS = [
    IntegerGrid(1.0, -2, 2),  # 5 levels, D = box radius
    IntegerGrid(0.5, -1, 1, l2_bound=1.2),  # the ℓ2 bound cuts corners
    IntegerGrid(1.0, -1, 2, l2_bound=2.0),  # asymmetric
    IntegerGrid(0.25, 0, 1),  # non-negative orthant
]


def _instance(rng: np.random.Generator, idx: int, kind: PerturbationKind) -> DiscreteProblem:
    """d ≤ 3, n ≤ 30, features multiples of 1/4, duplicate rows, an identical x with both labels."""
    d = 1 + idx % 3
    n = int(rng.integers(8, 31))
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    y = rng.choice([-1.0, 1.0], size=n)
    X[-3:], y[-3:] = X[:3], y[:3]
    X[1], y[1] = X[0], -y[0]
    weights = None if idx % 2 == 0 else rng.integers(0, 4, size=n).astype(float)  # zero weights too
    data = Dataset(X, y, schema=Schema.uniform(d, Numeric(-1, 1, grid="1/4")))
    return DiscreteProblem(ZeroOneLoss(data, Variable(d), GRIDS[idx % len(GRIDS)], weights=weights)).with_kind(kind)


@pytest.mark.parametrize("kind", ["normalized", "linear", "levels"])
def test_differential_against_bruteforce(kind):
    """OPDisc (normalized, both signs of η_{d+1}), OPSamp (linear) and RSPM (levels) draws."""
    rng = np.random.default_rng({"normalized": 11, "linear": 12, "levels": 13}[kind])
    draws = 0
    for idx in range(6):
        problem = _instance(rng, idx, kind)
        prepared, reference = SCIP.prepare(problem), BRUTE.prepare(problem)  # compiled once per instance
        for t in range(5):
            eta = rng.normal(0.0, 2.0, problem.noise_size)
            if kind == "normalized" and t % 2:
                eta[-1] = -abs(eta[-1])
            res, ref = SCIP.solve(prepared, eta, OPTS), BRUTE.solve(reference, eta, OPTS)
            if not ref.certified:  # a tie between grid points (probability zero): nothing to compare
                continue
            assert res.status is OracleStatus.OPTIMAL and res.certified, res.summary() + " " + res.message
            np.testing.assert_array_equal(res.solution, ref.solution)
            assert abs(res.primal_bound - ref.primal_bound) <= 1e-6
            assert res.primal_bound - res.dual_bound <= 1e-9 * max(1.0, abs(res.primal_bound))  # read from SCIP
            assert res.recheck.on_grid and not res.recheck.loss_disagrees
            draws += 1
    assert draws >= 25


def test_scip_is_a_member_of_the_pyomo_family_and_registered():
    backend = registry.get("scip")
    assert isinstance(backend, ScipBackend) and isinstance(backend, PyomoMipBackend)
    assert backend.kind == "mip" and backend.available() and backend.version() is not None


@pytest.mark.parametrize("case", [*DISCRETE_CASES, "discrete-time-limit"])
def test_conformance_discrete_cases_run_on_scip(case):
    outcome = run_case("scip", case)
    assert outcome.verdict == "passed", outcome.detail  # executed, not skipped


def test_mechanisms_release_with_scip():
    rng = np.random.default_rng(21)
    problem = _instance(rng, 0, "normalized").with_kind("normalized")
    ledger = dp.Ledger()
    for mechanism in (dp.OPDisc(1.0, 1e-3, ledger=ledger), dp.RSPM(1.0, 1e-3, ledger=ledger),
                      dp.OPSamp(1.0, 1e-3, calls=2, ledger=ledger)):
        release = mechanism.run(problem, solver="scip", seed=3)
        assert release.private
        oracle = [c for c in release.oracle_calls if c.role == "oracle"]  # (+ the default "verifier" calls)
        assert oracle and all(c.backend == "scip" and c.certified for c in oracle)
        assert release.parameters["private_mode"] == "run to completion"
    # the same noise through enumeration gives the same OPDisc release
    a = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="scip", seed=5)
    b = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=5)
    np.testing.assert_array_equal(a.theta, b.theta)


def test_unknown_raw_option_fails_closed():
    problem = _instance(np.random.default_rng(4), 1, "normalized")
    eta = np.zeros(problem.noise_size)
    res = SCIP.solve(SCIP.prepare(problem), eta, SolveOptions(extra={"limits/nodez": 1}))
    assert res.status is OracleStatus.ERROR and not res.certified and res.solution is None


def test_time_limit_is_opt_in_and_not_certified():
    from dpopt.backends.conformance import discrete_problem

    problem = discrete_problem(1500, 10, IntegerGrid(1.0, -4.0, 4.0), seed=15)
    with pytest.raises(dp.errors.UncertifiedOracleError):
        dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger(), alpha=0.0).run(problem.with_eta(None), solver="scip",
                                                                time_limit=0.05, seed=0)


def test_scip_writes_nothing_for_pyomo_to_capture():
    """pyomo's scip_direct reads SCIP's output through a pipe from a thread of this process while
    SCIP holds the interpreter lock: a full pipe deadlocked both on big-M Adult models.  With the
    backend's own options SCIP writes no log at all, so the pipe can never fill."""
    problem = _instance(np.random.default_rng(5), 0, "normalized")
    prog = SCIP.prepare(problem).program
    prog.set_eta(np.random.default_rng(6).normal(0.0, 2.0, problem.noise_size))
    quiet = SCIP.new_solver().solve(prog.model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                    solver_options=SCIP.solver_options(OPTS))
    assert quiet.solver_log.strip() == ""
    loud = dict(SCIP.solver_options(OPTS), **{"display/verblevel": 4})  # the check sees a log when there is one
    verbose = SCIP.new_solver().solve(prog.model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                      solver_options=loud)
    assert verbose.solver_log.strip() != ""
