"""Every solver call goes through dpopt.backends.

* dpopt.modeling and dpopt.mechanisms import no solver package (read from the source with ast);
* an HPolytope's LMO, compiled by dpopt.compile and solved by a backend, agrees with a
  brute-force vertex enumeration;
* compiled mirror steps take ``solver=`` as a name, a profile file, a SolverProfile or a Backend;
* a mechanism that calls no solver on a problem refuses an explicit one before the charge.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import programs, registry
from dpopt.backends.profiles import SolverProfile
from dpopt.backends.result import OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError, MechanismError, UnknownSolverError
from dpopt.mechanisms.base import SolverNeed

ROOT = Path(dp.__file__).resolve().parent
DENIED = ("cvxpy", "scipy.optimize", "pyomo", "highspy", "ortools", "pyscipopt", "clarabel", "osqp", "scs")
#: imports of solver packages that remain, with the file's owner to move them
KNOWN: set[tuple[str, str]] = set()


def _denied(module: str) -> str | None:
    return next((d for d in DENIED if module == d or module.startswith(d + ".")), None)


def _solver_imports(path: Path) -> set[str]:
    """The denied packages a file imports: import statements anywhere in it (also inside
    functions), ``from scipy import optimize``, and importlib/__import__ of a literal name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found.update(d for d in map(_denied, names) if d)
    return found


def test_the_ast_scan_sees_every_way_of_importing_a_solver(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    for line, expected in [("import cvxpy as cp", {"cvxpy"}), ("from scipy import optimize, special", {"scipy.optimize"}),
                           ("from scipy.optimize import linprog", {"scipy.optimize"}),
                           ("def f():\n    import pyomo.environ", {"pyomo"}),
                           ("importlib.import_module('highspy')", {"highspy"}),
                           ("from scipy import special, integrate", set()), ("import scsx", set())]:
        src.write_text(line + "\n")
        assert _solver_imports(src) == expected, line


def test_modeling_numerics_and_mechanisms_import_no_solver_package() -> None:
    found = {(str(p.relative_to(ROOT)), d) for layer in ("modeling", "numerics", "mechanisms")
             for p in sorted((ROOT / layer).rglob("*.py")) for d in _solver_imports(p)}
    assert found - KNOWN == set(), "solver calls belong in dpopt.backends (compilation in dpopt.compile)"
    assert KNOWN - found == set(), "a known exception is gone: remove it from KNOWN"


def test_modeling_imports_nothing_from_the_layers_above() -> None:
    for path in sorted((ROOT / "modeling").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("dpopt.numerics", "dpopt.compile", "dpopt.backends",
                                                   "dpopt.mechanisms")), path


# ---------------------------------------------------------------------------------- HPolytope LMO


def _brute_vertices(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Every vertex of {x : A x ≤ b}: each p rows solved as equalities, kept when feasible."""
    p = A.shape[1]
    out = []
    for rows in itertools.combinations(range(A.shape[0]), p):
        sub = A[list(rows)]
        if abs(np.linalg.det(sub)) < 1e-10:
            continue
        x = np.linalg.solve(sub, b[list(rows)])
        if np.all(A @ x <= b + 1e-9):
            out.append(x)
    return np.array(out)


def _random_polytope(seed: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = np.vstack([np.eye(p), -np.eye(p), rng.normal(size=(4, p))])
    b = np.concatenate([rng.uniform(0.5, 2.0, size=2 * p), rng.uniform(0.2, 1.0, size=4)])
    return A, b


LP_BACKENDS = [n for n in ("scipy-lp", "clarabel", "scs") if registry.get(n).available()]


@pytest.mark.parametrize("backend_name", LP_BACKENDS)
@pytest.mark.parametrize("seed,p", [(0, 2), (1, 2), (2, 3), (3, 3)])
def test_polytope_lmo_through_a_backend_matches_vertex_enumeration(backend_name: str, seed: int, p: int) -> None:
    A, b = _random_polytope(seed, p)
    C = dp.sets.HPolytope(A, b)
    V = _brute_vertices(A, b)
    backend, profile = programs.resolve_lp_backend(backend_name)
    prepared = programs.prepare_polytope_lmo(backend, C)
    tol = 1e-4 if backend_name == "scs" else 1e-7
    rng = np.random.default_rng(100 + seed)
    for _ in range(8):
        g = rng.normal(size=p)
        result = backend.solve(prepared, g, SolveOptions(tolerance=1e-9))
        assert result.status is OracleStatus.OPTIMAL and result.certified and result.backend == backend_name
        assert result.solution is not None
        assert result.solution @ g == pytest.approx(float(np.min(V @ g)), abs=tol)
        assert np.max(A @ result.solution - b) <= tol
        assert C.lmo(g) @ g == pytest.approx(float(np.min(V @ g)), abs=1e-7)  # the modeling layer's default


def test_lp_backend_reports_infeasible_and_unbounded_programs() -> None:
    from dpopt.backends.lp import ScipyLPBackend
    from dpopt.compile.polytope_program import lmo_program

    backend = ScipyLPBackend()
    empty = backend.solve(lmo_program(np.array([[1.0], [-1.0]]), np.array([-1.0, -1.0])), np.ones(1), SolveOptions())
    assert empty.status is OracleStatus.INFEASIBLE and not empty.certified and empty.solution is None
    ray = backend.solve(lmo_program(np.array([[1.0, 0.0]]), np.array([1.0])), np.array([1.0, 0.0]), SolveOptions())
    assert ray.status is OracleStatus.UNBOUNDED and not ray.certified
    with pytest.raises(BackendCapabilityError, match="linear programs"):
        backend.check(_l2_problem())


def _data(n: int = 300, p: int = 3, seed: int = 0) -> dp.Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ rng.normal(size=p) * 0.5, -1.0, 1.0)
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)


def _hpolytope_problem() -> dp.Problem:
    A, b = _random_polytope(2, 3)
    th = dp.Variable(3)
    return dp.Problem(dp.SquaredLoss(_data(), th), constraint=dp.sets.HPolytope(A, b, variable=th))


def test_gaussian_frank_wolfe_solves_the_lmo_with_the_named_backend() -> None:
    prob = _hpolytope_problem()
    C = prob.constraint
    assert isinstance(C, dp.sets.HPolytope)
    thetas = {}
    for solver in ["auto", "highs", *LP_BACKENDS]:
        r = dp.GaussianFrankWolfe(1.0, 1e-6, steps=20, ledger=dp.Ledger()).run(prob, solver=solver, seed=4)
        expected = "scipy-lp" if solver in ("auto", "highs") else solver
        assert r.parameters["lmo_backend"] == expected and [c.backend for c in r.oracle_calls] == [expected]
        assert C.contains(r.theta, 1e-6)
        thetas[solver] = r.theta
    assert np.array_equal(thetas["auto"], thetas["scipy-lp"])
    for solver in LP_BACKENDS:  # same noise, a generic gradient: the same vertices up to solver tolerance
        assert thetas[solver] == pytest.approx(thetas["scipy-lp"], abs=1e-3 if solver == "scs" else 1e-5)


@pytest.mark.parametrize("solver,error", [("cpsat", BackendCapabilityError), ("bruteforce", BackendCapabilityError),
                                          ("gurobi-ish", UnknownSolverError)])
def test_gaussian_frank_wolfe_refuses_a_solver_that_cannot_solve_the_lmo(solver: str, error: type) -> None:
    ledger = dp.Ledger()
    with pytest.raises(error):
        dp.GaussianFrankWolfe(1.0, 1e-6, steps=5, ledger=ledger).run(_hpolytope_problem(), solver=solver)
    assert ledger.charges == ()


# ---------------------------------------------------------------------------------- mirror steps


def _qnorm_problem() -> dp.Problem:
    th = dp.Variable(3)
    hull = dp.sets.VertexPolytope(np.vstack([np.eye(3), -np.eye(3)]) * 0.8, variable=th)
    return dp.Problem(dp.SquaredLoss(_data(), th), constraint=hull)


def test_mirror_descent_steps_take_a_name_a_profile_file_or_a_backend(tmp_path: Path) -> None:
    prob = _qnorm_problem()
    profile = tmp_path / "steps.toml"
    profile.write_text('backend = "clarabel"\ntolerance = 1e-9\n')
    runs = {}
    cases: list[tuple[str, programs.SolverSpec]] = [("name", "clarabel"), ("file", str(profile)), ("path", profile),
                        ("profile", SolverProfile("clarabel", SolveOptions(tolerance=1e-9), "inline")),
                        ("backend", registry.get("clarabel"))]
    for key, solver in cases:
        mech = dp.PrivateMirrorDescent(2.0, 1e-6, potential="qnorm", steps=5, ledger=dp.Ledger())
        assert mech.solver_need(prob) is SolverNeed.STEP
        r = mech.run(prob, solver=solver, seed=7, keep_diagnostics=True)
        assert r.parameters["step_backend"] == "clarabel" and r.oracle_calls[0].backend == "clarabel"
        assert r.diagnostics is not None and r.diagnostics.details["compiled_steps"] == 6
        runs[key] = r.theta
    for key in runs:  # the same backend and tolerance: the same steps
        assert runs[key] == pytest.approx(runs["name"], abs=1e-6)
    if registry.get("scs").available():
        scs = tmp_path / "scs.toml"
        scs.write_text('backend = "scs"\ntolerance = 1e-8\n')
        r = dp.PrivateMirrorDescent(2.0, 1e-6, potential="qnorm", steps=5, ledger=dp.Ledger()).run(
            prob, solver=scs, seed=7)
        assert r.parameters["step_backend"] == "scs"
        assert r.theta == pytest.approx(runs["name"], abs=1e-3)


@pytest.mark.parametrize("solver", ["scipy-lp", "highs", "osqp", "scipy"])
def test_mirror_steps_refuse_a_backend_that_cannot_solve_them(solver: str) -> None:
    ledger = dp.Ledger()
    with pytest.raises(BackendCapabilityError, match="mirror steps"):
        dp.PrivateMirrorDescent(2.0, 1e-6, potential="qnorm", steps=3, ledger=ledger).run(_qnorm_problem(),
                                                                                          solver=solver)
    assert ledger.charges == ()


# ---------------------------------------------------------------------------------- refusals


def _l2_problem() -> dp.Problem:
    th = dp.Variable(3)
    return dp.Problem(dp.SquaredLoss(_data(), th), constraint=dp.L2Ball(th, 1.0))


def _simplex_problem() -> dp.Problem:
    th = dp.Variable(3)
    return dp.Problem(dp.SquaredLoss(_data(), th), constraint=dp.Simplex(th))


REFUSALS = [
    ("GaussianFrankWolfe", lambda led: dp.GaussianFrankWolfe(1.0, 1e-6, steps=5, ledger=led), _l2_problem),
    ("PrivateMirrorDescent", lambda led: dp.PrivateMirrorDescent(1.0, 1e-6, steps=5, ledger=led), _simplex_problem),
    ("PolytopeFrankWolfe", lambda led: dp.PolytopeFrankWolfe(1.0, 1e-6, steps=5, ledger=led), _simplex_problem),
]


@pytest.mark.parametrize("name,make,problem", REFUSALS, ids=[r[0] for r in REFUSALS])
@pytest.mark.parametrize("kwargs", [{"solver": "clarabel"}, {"solver": "scipy-lp"}, {"time_limit": 5.0},
                                    {"solver": registry.get("clarabel")}])
def test_an_explicit_solver_is_refused_before_the_charge_when_unused(name, make, problem, kwargs) -> None:
    ledger = dp.Ledger()
    mech = make(ledger)
    prob = problem()
    assert mech.solver_need(prob) is SolverNeed.NONE
    with pytest.raises(MechanismError, match=f"{name} calls no solver on this problem"):
        mech.run(prob, **kwargs)
    assert ledger.charges == () and ledger.spent == (0.0, 0.0)
    release = mech.run(prob, solver="auto", seed=0)  # the default is always accepted
    assert release.oracle_calls == () and len(ledger.charges) == 1
