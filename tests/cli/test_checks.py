"""``dpopt solve`` checks every option before the ledger is charged.

Each user mistake must end with one line on stderr, exit code 2, no charge in the ledger
(an SQLite ledger file, read back) and, where the mistake is visible before the script
builds its data, no call to ``build`` at all (the test model writes a marker file when
``build`` runs).  A run that fails *after* the charge writes its record to ``--json``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import dpopt
from dpopt.backends.options import check_solver_options
from dpopt.backends.profiles import load_profile
from dpopt.errors import SolverOptionError
from dpopt.privacy.sqlite_ledger import SQLiteLedger
from dpopt.testing.cli import run_cli as run

REPO = Path(__file__).resolve().parents[2]

_MODEL = """
from pathlib import Path

import dpopt as dp
from dpopt.datasets import make_classification
from dpopt.errors import SolverError
from dpopt.mechanisms.base import Plan

PARAMS = {"epsilon": 1.0, "delta": 1e-6, "mechanism": "op"}
MARKER = Path(__file__).with_name("built")


class Crashing(dp.Mechanism):
    '''A mechanism whose data-touching part fails: its solver crashes without a result
    (or, with bug=True, a bug raises a plain exception whose message could hold data).'''

    name = "Crashing"
    bug = False

    def plan(self, problem, options=None):
        return Plan(problem=problem)

    def execute(self, plan, rng):
        if self.bug:
            raise RuntimeError("secret value 0.123")
        raise SolverError("the solver crashed without a result; try another solver")


def build(params):
    MARKER.write_text("build ran")
    data, _ = make_classification(300, 4, seed=0)
    theta = dp.Variable(4)
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    eps, delta = params["epsilon"], params["delta"]
    if params["mechanism"] == "dpgd":
        return problem, dp.DPGradientDescent(eps, delta, steps=20)
    if params["mechanism"] in ("mirror", "gaussian-fw"):
        ball = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 1.0))
        cls = dp.PrivateMirrorDescent if params["mechanism"] == "mirror" else dp.GaussianFrankWolfe
        return ball, cls(eps, delta)
    if params["mechanism"] in ("crash", "bug"):
        mech = Crashing(eps, delta)
        mech.bug = params["mechanism"] == "bug"
        return problem, mech
    return problem, dp.ObjectivePerturbation(eps, delta)
"""


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(_MODEL))
    return path


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "budget.sqlite"
    SQLiteLedger(path, dataset="demo", epsilon_budget=5.0, delta_budget=1e-3, create=True).close()
    return path


def charges(path: Path) -> tuple[Any, ...]:
    book = SQLiteLedger.open(path, dataset="demo")
    try:
        return book.charges
    finally:
        book.close()


def assert_refused(code: int, err: str, *words: str) -> None:
    """Exit 2 with exactly one line on stderr naming ``words``, no traceback."""
    assert code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "error:" in err and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(textwrap.dedent(text))
    return path


# ----------------------------------------------------------------- mistakes refused before the charge


@pytest.mark.parametrize(("text", "words"), [
    ('backend = "clarabel"\n[options]\nmax_itr = 200\n', ["unknown clarabel option 'max_itr'", "'max_iter'"]),
    ('backend = "clarabel"\n[options]\nmax_iter = "lots"\n', ["max_iter", "lots"]),
    ('backend = "scs"\n[options]\nmax_iter = 5\n', ["unknown scs option 'max_iter'", "'max_iters'"]),
    ('backend = "osqp"\n[options]\npolish_refine = 3\n', ["unknown osqp option", "'polish_refine_iter'"]),
    ('backend = "scipy"\nmax_iterations = "lots"\n', ["max_iterations must be an integer ≥ 1", "lots"]),
    ('backend = "scipy"\nthreads = 0\n', ["threads must be an integer ≥ 1"]),
    ('backend = "scipy"\n[options]\nmaxiter = 5\n', ["'scipy' reads no [options]"]),
    pytest.param('backend = "scip"\n[options]\n"limits/nodez" = 3\n', ["unknown SCIP parameter", "'limits/nodes'"],
                 marks=pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None, reason="no pyscipopt")),
    pytest.param('backend = "scip"\n[options]\n"limits/nodes" = "lots"\n', ["'limits/nodes' cannot take"],
                 marks=pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None, reason="no pyscipopt")),
    ('backend = "scipy"\ntolerence = 1e-9\n', ["unknown keys", "did you mean 'tolerance'"]),
])
def test_profile_mistakes_are_refused_before_the_script_runs(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, ledger: Path,
        text: str, words: list[str]) -> None:
    code, out, err = run(capsys, "solve", model, "--solver", profile(tmp_path, text),
                         "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "profile.toml", *words)
    assert not (tmp_path / "built").exists() and out == ""
    assert charges(ledger) == ()


def test_json_to_a_directory_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path,
                                        ledger: Path) -> None:
    code, _, err = run(capsys, "solve", model, "--json", tmp_path, "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "is a directory", "release.json")
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_json_into_a_missing_folder_is_refused_and_creates_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, ledger: Path) -> None:
    target = tmp_path / "nonexistent" / "dir" / "out.json"
    code, _, err = run(capsys, "solve", model, "--json", target, "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "does not exist", "does not create folders")
    assert not (tmp_path / "nonexistent").exists()
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


@pytest.mark.parametrize("flag", [["--solver", "clarabel"], ["--threads", "2"], ["--time-limit", "5"]])
def test_solver_settings_for_a_mechanism_without_a_solver_are_refused(
        capsys: pytest.CaptureFixture[str], model: Path, ledger: Path, flag: list[str]) -> None:
    code, _, err = run(capsys, "solve", model, "--set", "mechanism='dpgd'", *flag,
                       "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "DPGradientDescent calls no solver", flag[0])
    assert charges(ledger) == ()


@pytest.mark.parametrize(("mechanism", "name"), [("mirror", "PrivateMirrorDescent"),
                                               ("gaussian-fw", "GaussianFrankWolfe")])
def test_a_solver_for_a_problem_whose_steps_are_closed_form_is_refused(
        capsys: pytest.CaptureFixture[str], model: Path, ledger: Path, mechanism: str, name: str) -> None:
    """Mirror descent and Gaussian Frank–Wolfe call a solver only for some sets (a potential
    without a closed-form step, an HPolytope); on an ℓ2 ball an explicit --solver is refused."""
    code, _, err = run(capsys, "solve", model, "--set", f"mechanism={mechanism!r}", "--solver", "clarabel",
                       "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, f"{name} calls no solver on this problem", "--solver")
    assert charges(ledger) == ()


def test_a_mechanism_without_a_solver_runs_without_solver_settings(
        capsys: pytest.CaptureFixture[str], model: Path, ledger: Path) -> None:
    code, out, err = run(capsys, "solve", model, "--set", "mechanism='dpgd'", "--seed", "0",
                         "--ledger", ledger, "--dataset", "demo")
    assert code == 0, err
    assert "Release from DPGradientDescent" in out
    assert [c.released for c in charges(ledger)] == [True]


@pytest.mark.parametrize(("argv", "words"), [
    (["--threads", "0"], ["argument --threads", "expected an integer ≥ 1"]),
    (["--threads", "two"], ["argument --threads"]),
    (["--time-limit", "0"], ["argument --time-limit", "positive number of seconds"]),
    (["--time-limit", "-3"], ["argument --time-limit"]),
    (["--time-limit", "nan"], ["argument --time-limit"]),
])
def test_bad_numbers_are_one_line_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                model: Path, ledger: Path, argv: list[str],
                                                words: list[str]) -> None:
    code, _, err = run(capsys, "solve", model, *argv, "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "dpopt solve: error:", *words)
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_ledger_needs_a_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path,
                                ledger: Path) -> None:
    code, _, err = run(capsys, "solve", model, "--ledger", ledger)
    assert_refused(code, err, "--ledger FILE and --dataset NAME go together")
    code, _, err = run(capsys, "solve", model, "--dataset", "demo")
    assert_refused(code, err, "--ledger FILE and --dataset NAME go together")
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_missing_ledger_file_or_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path,
                                        ledger: Path) -> None:
    code, _, err = run(capsys, "solve", model, "--ledger", tmp_path / "none.sqlite", "--dataset", "demo")
    assert_refused(code, err, "none.sqlite", "dpopt ledger init")
    assert not (tmp_path / "none.sqlite").exists()
    code, _, err = run(capsys, "solve", model, "--ledger", ledger, "--dataset", "other")
    assert_refused(code, err, "'other'")
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_budget_is_checked_before_the_data_is_built(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    model: Path, ledger: Path) -> None:
    code, _, err = run(capsys, "solve", model, "--epsilon", "6", "--ledger", ledger, "--dataset", "demo")
    assert_refused(code, err, "would exceed the privacy budget")
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_unknown_solver_and_bad_epsilon_charge_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      model: Path, ledger: Path) -> None:
    for argv, word in ((["--solver", "gurobi"], "unknown solver 'gurobi'"),
                       (["--epsilon", "0"], "epsilon must be finite and > 0"),
                       (["--set", "lam=1"], "unknown parameter lam")):
        code, _, err = run(capsys, "solve", model, *argv, "--ledger", ledger, "--dataset", "demo")
        assert_refused(code, err, word)
    assert not (tmp_path / "built").exists() and charges(ledger) == ()


def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path) -> None:
    code, _, err = run(capsys, "solve", model, "--solver", "gurobi", "--debug")
    assert code == 2
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith("error: unknown solver")


# ---------------------------------------------------------------------------------- large ε


def test_large_epsilon_warns_and_runs(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    code, out, err = run(capsys, "solve", model, "--epsilon", "1e9", "--seed", "0")
    assert code == 0, err
    assert "warning: ε = 1e9 gives no meaningful privacy" in err
    assert "Release from ObjectivePerturbation" in out
    assert err.count("gives no meaningful privacy") == 1  # once, before the charge (not again from the run)
    code, _, err = run(capsys, "solve", model, "--epsilon", "10", "--seed", "0")
    assert code == 0 and "warning" not in err


def test_delta_of_at_least_one_over_n_warns_once_and_runs(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    """n = 300 in the model: δ = 1/300 warns (the model's n is public), δ = 1/301 does not."""
    code, out, err = run(capsys, "solve", model, "--delta", str(1 / 300), "--seed", "0")
    assert code == 0, err
    assert err.count("is at least 1/n = 1/300") == 1 and err.startswith("warning: δ = ")
    assert "Release from ObjectivePerturbation" in out
    code, _, err = run(capsys, "solve", model, "--delta", str(1 / 301), "--seed", "0")
    assert code == 0 and "warning" not in err


# ------------------------------------------------------------------------------- the JSON record


def test_json_record_of_a_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path,
                              ledger: Path) -> None:
    out_json = tmp_path / "out.json"
    argv = ["solve", str(model), "--epsilon", "0.5", "--seed", "3", "--json", str(out_json),
            "--ledger", str(ledger), "--dataset", "demo"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "charged to dataset 'demo'" in out and "remaining: ε=4.5" in out
    record = json.loads(out_json.read_text())
    assert record["epsilon"] == 0.5 and len(record["theta"]) == 4  # the release, as before
    info = record["run"]
    assert info["dpopt_version"] == dpopt.__version__
    assert info["model"] == str(model)
    assert info["params"] == {"epsilon": 0.5, "delta": 1e-6, "mechanism": "op"}
    assert info["command"].startswith("dpopt solve ") and "--epsilon 0.5" in info["command"]
    assert info["status"] == "released"
    offset = datetime.fromisoformat(info["timestamp"]).utcoffset()
    assert offset is not None and offset.total_seconds() == 0  # UTC
    assert [(c.epsilon, c.released) for c in charges(ledger)] == [(0.5, True)]


def test_failure_after_the_charge_writes_its_record(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   model: Path, ledger: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = run(capsys, "solve", model, "--set", "mechanism='crash'", "--epsilon", "0.25",
                         "--json", out_json, "--ledger", ledger, "--dataset", "demo")
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("error: the solver crashed without a result")
    assert "was charged and nothing was released" in err and str(out_json) in err
    assert "Traceback" not in err and "Release" not in out
    record = json.loads(out_json.read_text())
    assert record["status"] == "failed" and "theta" not in record
    assert (record["mechanism"], record["epsilon"], record["delta"]) == ("Crashing", 0.25, 1e-6)
    assert record["error"] == {"type": "SolverError",
                               "message": "the solver crashed without a result; try another solver"}
    assert record["run"]["status"] == "failed" and record["run"]["params"]["mechanism"] == "crash"
    (charge,) = charges(ledger)
    assert charge.epsilon == 0.25 and not charge.released  # spent, withheld


def test_a_bug_after_the_charge_keeps_its_traceback_but_not_its_message_in_the_record(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, ledger: Path) -> None:
    out_json = tmp_path / "out.json"
    code, _, err = run(capsys, "solve", model, "--set", "mechanism='bug'", "--json", out_json,
                       "--ledger", ledger, "--dataset", "demo")
    assert code == 1
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith("error: internal error (RuntimeError)")
    record = json.loads(out_json.read_text())
    assert record["status"] == "failed" and record["error"]["type"] == "RuntimeError"
    assert "0.123" not in out_json.read_text()
    assert [c.released for c in charges(ledger)] == [False]


# ------------------------------------------------------------------------ option checks by backend


def test_highs_options_are_checked_against_highs() -> None:
    pytest.importorskip("highspy")
    check_solver_options("highs", {"mip_rel_gap": 0, "mip_max_nodes": 10, "presolve": "off"}, where="p")
    with pytest.raises(SolverOptionError, match="unknown HiGHS option 'mip_max_node'; did you mean 'mip_max_nodes'"):
        check_solver_options("highs", {"mip_max_node": 10}, where="p")
    for bad in ("lots", 2.5, True, -1):
        with pytest.raises(SolverOptionError, match="'mip_max_nodes' must be an integer"):
            check_solver_options("highs", {"mip_max_nodes": bad}, where="p")
    check_solver_options("highs-grouped", {"enumerate": [20, 21]}, where="p")
    with pytest.raises(SolverOptionError, match="enumerate"):
        check_solver_options("highs-grouped", {"enumerate": "all"}, where="p")


def test_cpsat_options_are_checked_against_sat_parameters() -> None:
    pytest.importorskip("ortools")
    check_solver_options("cpsat", {"num_workers": 4, "max_time_in_seconds": 3, "subsolvers": ["max_lp"],
                                   "search_branching": "FIXED_SEARCH", "log_search_progress": False}, where="p")
    with pytest.raises(SolverOptionError, match="unknown CP-SAT parameter 'num_worker'; did you mean 'num_workers'"):
        check_solver_options("cpsat", {"num_worker": 4}, where="p")
    for name, bad, word in (("num_workers", "lots", "an integer"), ("num_workers", True, "an integer"),
                            ("log_search_progress", 1, "true or false"), ("subsolvers", "max_lp", "a list"),
                            ("search_branching", "FIXED", "one of AUTOMATIC_SEARCH")):
        with pytest.raises(SolverOptionError, match=word):
            check_solver_options("cpsat", {name: bad}, where="p")


def test_shipped_profiles_pass_their_checks() -> None:
    for path in sorted((REPO / "solvers").glob("*.toml")):
        assert load_profile(path).backend


def test_unknown_plugin_backends_are_not_checked() -> None:
    check_solver_options("some-plugin", {"anything": object()}, where="p")


# ------------------------------------------------------------------------------ doctor, bench, -m


def test_doctor_lists_the_optional_extras(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert "Optional extras" in out
    for word in ("matplotlib", "diffprivlib", "scikit-learn", "pip install 'dpopt[bench]'", "adult-halfspace"):
        assert word in out


@pytest.mark.parametrize("bench", ["adult-halfspace", "rates"])
def test_plotting_benchmarks_say_which_extra_they_need(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, bench: str) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, out, err = run(capsys, "bench", bench, "--out", tmp_path / "o")
    assert code == 2 and out == ""
    assert err == "error: --out writes a plot, which needs matplotlib: pip install 'dpopt[bench]'\n"
    assert not (tmp_path / "o").exists()


def test_python_dash_m_dpopt() -> None:
    proc = subprocess.run([sys.executable, "-m", "dpopt", "--version"], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"dpopt {dpopt.__version__}"
    proc = subprocess.run([sys.executable, "-m", "dpopt", "solve", "--threads", "0", "x.py"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--threads" in proc.stderr


def test_ledger_command_is_wired(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path,
                                 ledger: Path) -> None:
    code, out, err = run(capsys, "solve", model, "--epsilon", "0.5", "--seed", "0", "--ledger", ledger,
                         "--dataset", "demo")
    assert code == 0, err
    code, out, err = run(capsys, "ledger", "history", ledger)
    assert code == 0, err
    assert "ObjectivePerturbation" in out and "released" in out
    code, _, err = run(capsys, "ledger", "show", tmp_path / "missing.sqlite")
    assert_refused(code, err, "missing.sqlite")
