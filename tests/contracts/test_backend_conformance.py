"""Backends: the registry, the conformance suite for every registered backend,
and the one-process import of every solver package."""

import subprocess
import sys

import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.conformance import case_names, run_case
from dpopt.errors import BackendUnavailableError, UnknownSolverError

#: the backends this test module covers; the guard test below keeps it complete
COVERED = {"clarabel", "scs", "osqp", "scipy", "bruteforce", "highs", "highs-grouped", "cpsat", "scip",
           "scipy-lp"}


def test_every_registered_backend_is_covered():
    assert set(registry.names()) == COVERED, "add new backends to COVERED (and to the conformance run)"


def test_unknown_solver_fails_at_once_and_lists_known_ones():
    with pytest.raises(UnknownSolverError) as e:
        registry.get("gurobi-ish")
    msg = str(e.value)
    for name in COVERED:
        assert name in msg


@pytest.mark.parametrize("backend", sorted(COVERED))
@pytest.mark.parametrize("case", case_names())
def test_conformance(backend, case):
    if not registry.get(backend).available():
        pytest.skip(f"{backend}: solver package not installed")
    outcome = run_case(backend, case)
    if outcome.verdict == "skipped":
        # a skip must be a clear refusal or a case that does not apply: say why
        assert outcome.detail
        pytest.skip(outcome.detail)
    assert outcome.verdict == "passed", outcome.detail


def test_missing_solver_package_is_a_clear_error(monkeypatch):
    b = registry.get("clarabel")
    monkeypatch.setattr(type(b), "module", "no_such_solver_package_xyz")
    monkeypatch.setattr(type(b), "distribution", "no-such-solver-package-xyz")
    assert not b.available()
    with pytest.raises(BackendUnavailableError, match="pip install no-such-solver-package-xyz"):
        b.require()


def test_all_solver_packages_import_in_one_process():
    """highspy ≥ 1.15 and ortools 9.15 clash (or-tools issue 5246); the pin keeps them apart."""
    code = (
        "import highspy, ortools, pyomo.environ, cvxpy, clarabel, scs, osqp\n"
        "from ortools.sat.python import cp_model\n"
        "h = highspy.Highs(); h.setOptionValue('output_flag', False)\n"
        "m = cp_model.CpModel(); x = m.new_int_var(0, 3, 'x'); m.maximize(x)\n"
        "s = cp_model.CpSolver(); assert s.solve(m) == cp_model.OPTIMAL\n"
        "import dpopt; print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_profiles_resolve(tmp_path):
    from dpopt.backends.profiles import load_profile, resolve

    f = tmp_path / "p.toml"
    f.write_text('backend = "clarabel"\ntolerance = 1e-9\n[options]\nmax_iter = 50\n')
    backend, prof = resolve(str(f))
    assert backend.name == "clarabel" and prof.options.tolerance == 1e-9
    assert prof.options.extra == {"max_iter": 50}
    f.write_text('backend = "nope"\n')
    with pytest.raises(UnknownSolverError):
        load_profile(f)
    f.write_text('backend = "scipy"\ncolour = 1\n')
    with pytest.raises(dp.errors.ModelError, match="unknown keys"):
        load_profile(f)


def test_third_party_backends_register_through_entry_points(monkeypatch):
    import importlib.metadata as md

    class Plugin(registry.get("scipy").__class__):
        name = "plugin-solver"

    ep = md.EntryPoint(name="plugin-solver", value="x:y", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(md.EntryPoint, "load", lambda self: Plugin)
    monkeypatch.setattr(md, "entry_points", lambda group=None: [ep] if group == registry.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(registry, "_ENTRY_POINTS_LOADED", False)
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    assert "plugin-solver" in registry.names()
    assert isinstance(registry.get("plugin-solver"), Plugin)


def test_rechecks_compose_and_never_recertify():
    from dpopt.backends.certificates import ConvexCheck, GridCheck
    from dpopt.backends.result import OracleResult, OracleStatus

    r = OracleResult(None, OracleStatus.OPTIMAL, True, 0.0, "x", "1", "ok")
    failed = r.with_recheck(ConvexCheck(distance_bound=1.0, tolerance=1e-6), False)
    assert not failed.certified
    assert not failed.with_recheck(GridCheck(on_grid=True), True).certified
    assert r.with_recheck(GridCheck(on_grid=True), True).certified


def test_builtins_are_entries_loaded_like_plugins():
    assert {name for name, _ in registry.BUILTINS} == COVERED
    assert registry.failures() == {}  # every built-in loads (a missing solver package is not a load failure)


def _with_entry_points(monkeypatch, eps):
    import importlib.metadata as md

    monkeypatch.setattr(md, "entry_points", lambda group=None: eps if group == registry.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(registry, "_ENTRY_POINTS_LOADED", False)
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    monkeypatch.setattr(registry, "_FAILURES", {})


def test_a_plugin_that_fails_to_import_is_recorded_and_doctor_prints_it(monkeypatch, capsys):
    import importlib.metadata as md

    from dpopt.cli import doctor
    from dpopt.cli.main import main

    def broken(self):
        raise ImportError("No module named 'gurobipy'\nsecond line")

    monkeypatch.setattr(md.EntryPoint, "load", broken)
    _with_entry_points(monkeypatch, [
        md.EntryPoint(name="broken-solver", value="broken_pkg.backend:Backend", group=registry.ENTRY_POINT_GROUP),
        md.EntryPoint(name="highs", value="other_pkg:Highs", group=registry.ENTRY_POINT_GROUP),
    ])
    assert "broken-solver" not in registry.names() and "highs" in registry.names()
    failures = registry.failures()
    assert failures["broken-solver"] == ("plug-in 'broken_pkg.backend:Backend' failed to load: "
                                         "ImportError: No module named 'gurobipy'")
    assert "already registered" in failures["highs"]  # a built-in wins, and the clash is reported
    with pytest.raises(UnknownSolverError, match="broken-solver.*failed to load"):
        registry.get("broken-solver")

    monkeypatch.setattr(doctor, "highs_ortools_check", lambda: (True, "not checked in this test"))
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    line = next(li for li in out.splitlines() if li.startswith("broken-solver"))
    assert "failed to load: ImportError: No module named 'gurobipy'" in line and "second line" not in out
    assert any(li.startswith("scip ") for li in out.splitlines())  # the SCIP backend comes from the registry


def test_a_plugin_that_is_not_a_factory_is_recorded(monkeypatch):
    import importlib.metadata as md

    monkeypatch.setattr(md.EntryPoint, "load", lambda self: 42)
    _with_entry_points(monkeypatch, [md.EntryPoint(name="num", value="x:y", group=registry.ENTRY_POINT_GROUP)])
    assert "num" not in registry.names()
    assert "not a backend factory" in registry.failures()["num"]


def test_every_pyomo_termination_condition_maps_to_a_documented_pair():
    from pyomo.contrib.solver.common import results as pr

    from dpopt.backends import termination as t
    from dpopt.backends.result import OracleStatus

    assert [c.name for c in pr.TerminationCondition] == [c.name for c in t.TerminationCondition]
    assert [s.name for s in pr.SolutionStatus] == [s.name for s in t.SolutionStatus]
    doc = t.__doc__ or ""
    for tc in pr.TerminationCondition:
        for ss in pr.SolutionStatus:
            fake = type("R", (), {"termination_condition": tc, "solution_status": ss})()
            term = t.Termination.from_pyomo(fake)
            status, limit = term.oracle_status()
            assert isinstance(status, OracleStatus)
            assert (status is OracleStatus.OPTIMAL) == (tc.name == "convergenceCriteriaSatisfied"
                                                        and ss.name == "optimal")
            assert (limit is not None) == (status is OracleStatus.LIMIT)
        assert f"``{tc.name}``" in doc, f"{tc.name} is not documented"
        assert t.CONDITIONS[t.TerminationCondition(tc.name)][2]  # a reason in the table

    S = t.SolutionStatus
    assert t.oracle_status(t.TC.objectiveLimit, S.feasible) == (OracleStatus.LIMIT, "objective")
    assert t.oracle_status(t.TC.interrupted, S.feasible) == (OracleStatus.ERROR, None)
    assert t.oracle_status(t.TC.infeasibleOrUnbounded, S.noSolution) == (OracleStatus.INFEASIBLE, None)
    assert t.oracle_status(t.TC.maxTimeLimit, S.feasible) == (OracleStatus.LIMIT, "time")
    assert t.oracle_status(t.TC.iterationLimit, S.feasible, node_limit=True) == (OracleStatus.LIMIT, "nodes")
    assert t.oracle_status(t.TC.iterationLimit, S.feasible) == (OracleStatus.LIMIT, "iterations")
    assert t.oracle_status(t.TC.convergenceCriteriaSatisfied, S.feasible) == (OracleStatus.INACCURATE, None)
    assert t.oracle_status(t.TC.convergenceCriteriaSatisfied, S.noSolution) == (OracleStatus.ERROR, None)


def test_solve_problem_is_one_function_for_every_backend():
    from dpopt.backends.base import Backend

    for name in COVERED:
        assert type(registry.get(name)).solve_problem is Backend.solve_problem, name


def test_scip_imports_with_the_other_solver_packages_in_one_process():
    pytest.importorskip("pyscipopt", reason="pyscipopt is not installed (pip install 'dpopt[scip]')")
    code = (
        "import highspy, pyscipopt\n"
        "from ortools.sat.python import cp_model\n"
        "m = pyscipopt.Model(); m.hideOutput(); x = m.addVar(vtype='I', ub=3); m.setObjective(-x); m.optimize()\n"
        "assert m.getStatus() == 'optimal'\n"
        "import dpopt; print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]
