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
COVERED = {"clarabel", "scs", "osqp", "scipy", "bruteforce", "highs", "highs-grouped", "cpsat"}


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
    from dpopt.backends.result import OracleResult, OracleStatus

    r = OracleResult(None, OracleStatus.OPTIMAL, True, 0.0, "x", "1", "ok")
    failed = r.with_recheck({"a": 1}, False)
    assert not failed.certified
    assert not failed.with_recheck({"b": 2}, True).certified
    assert r.with_recheck({}, True).certified
