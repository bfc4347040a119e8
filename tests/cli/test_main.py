"""The dpopt command line (:mod:`dpopt.cli.main`): `dpopt solve`, the version and the entry point.

Commands are run in-process through ``dpopt.cli.main.main(argv)`` (faster than a
subprocess); one test runs the installed entry point through ``python -m``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpopt.testing.cli import run_cli as run

REPO = Path(__file__).resolve().parents[2]
LOGREG = REPO / "models" / "private_logistic_regression.py"
RIDGE = REPO / "models" / "private_ridge_regression.py"
SMALL = ["--set", "n=2000"]


# ---------------------------------------------------------------------------
# dpopt solve
# ---------------------------------------------------------------------------


def test_solve_writes_release_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = run(capsys, "solve", LOGREG, *SMALL, "--epsilon", "1", "--delta", "1e-6",
                         "--seed", "3", "--json", out_json)
    assert code == 0, err
    assert "Release from ObjectivePerturbation" in out
    assert "(1, 1e-06)-DP" in out
    assert "accepted" in out and "NOT accepted" not in out
    assert "wall time" not in out + err and "primal_bound" not in out + err  # public output only
    assert "test_accuracy" in out  # the script's evaluate(release)
    data = json.loads(out_json.read_text())
    assert len(data["theta"]) == 23
    assert data["epsilon"] == 1.0
    assert data["delta"] == 1e-6
    assert data["private"] is True
    assert data["seed"]  # the user seed is recorded
    # the script was not imported as a package module
    assert "models.private_logistic_regression" not in sys.modules


def test_same_seed_same_theta(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    thetas = []
    for i in range(2):
        path = tmp_path / f"r{i}.json"
        code, _, err = run(capsys, "solve", LOGREG, *SMALL, "--seed", "11", "--json", path)
        assert code == 0, err
        thetas.append(json.loads(path.read_text())["theta"])
    assert thetas[0] == thetas[1]


def test_defaults_come_from_params(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    code, out, err = run(capsys, "solve", LOGREG, *SMALL, "--set", "lam=1e-2", "--seed", "1",
                         "--json", path)
    assert code == 0, err
    data = json.loads(path.read_text())
    assert (data["epsilon"], data["delta"]) == (1.0, 1e-6)  # PARAMS defaults
    assert "lam=0.01" in out and "L2Squared(0.01)" in out
    assert data["run"]["params"] == {"epsilon": 1.0, "delta": 1e-6, "lam": 0.01, "n": 2000, "data_seed": 0,
                                     "encoding": "paper23"}


def test_unknown_set_key_lists_known_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "solve", LOGREG, "--set", "lambda=1")
    assert code == 2
    assert "error:" in err and "lambda" in err
    assert "known parameters: data_seed, delta, encoding, epsilon, lam, n" in err
    assert "Traceback" not in err


def test_malformed_set_item(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, "--set", "n2000")
    assert code == 2
    assert "key=value" in err


def test_epsilon_given_twice(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, "--set", "epsilon=0.5", "--epsilon", "1")
    assert code == 2
    assert "epsilon given twice" in err


def test_unknown_solver_lists_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, *SMALL, "--solver", "gurobi-9000")
    assert code == 2
    assert "unknown solver 'gurobi-9000'" in err
    for name in ("clarabel", "osqp", "scipy", "scs"):
        assert name in err
    assert "Traceback" not in err


def test_missing_profile_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, "--solver", "solvers/nope.toml")
    assert code == 2
    assert "nope.toml" in err and "does not exist" in err


@pytest.mark.parametrize("eps", ["0", "-1", "inf"])
def test_bad_epsilon_is_a_usage_error(capsys: pytest.CaptureFixture[str], eps: str) -> None:
    code, _, err = run(capsys, "solve", LOGREG, *SMALL, f"--epsilon={eps}")
    assert code == 2
    assert "epsilon must be finite and > 0" in err
    assert "Traceback" not in err


def test_bad_delta_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, *SMALL, "--delta", "1.5")
    assert code == 2
    assert "delta" in err


def test_profile_toml_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "solve", LOGREG, *SMALL, "--solver", REPO / "solvers" / "scipy.toml",
                         "--seed", "2")
    assert code == 0, err
    assert "backend: scipy" in out
    assert "oracle[0]: scipy" in out


def test_every_profile_loads() -> None:
    from dpopt.backends import registry
    from dpopt.backends.profiles import load_profile

    profiles = sorted((REPO / "solvers").glob("*.toml"))
    assert {p.stem for p in profiles} >= {"clarabel", "osqp", "scipy", "scs"}
    for path in profiles:
        prof = load_profile(path)
        assert prof.backend in registry.names()
        assert path.read_text().startswith("#"), f"{path.name} should open with a comment"


def test_ridge_model_with_clarabel_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "solve", RIDGE, "--solver", REPO / "solvers" / "clarabel.toml",
                         "--set", "n=1000", "--epsilon", "2", "--delta", "0", "--seed", "0")
    assert code == 0, err
    assert "Release from OutputPerturbation" in out
    assert "2-DP (pure)" in out
    assert "test_mse" in out


def test_a_convex_run_releases_even_when_its_solver_is_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    """No success bit: the accelerator's time limit cannot stop a convex mechanism (the fallback answers)."""
    code, out, err = run(capsys, "solve", LOGREG, *SMALL, "--solver", "scipy", "--time-limit", "1e-6",
                         "--seed", "0")
    assert code == 0, err
    code2, out2, _ = run(capsys, "solve", LOGREG, *SMALL, "--solver", "scipy", "--seed", "0")
    assert code2 == 0 and out.splitlines()[2:-3] == out2.splitlines()[2:-3]


def test_discrete_run_stopped_by_its_time_limit_exits_3_and_says_it_is_not_private(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "never.json"
    model = REPO / "models" / "adult_halfspace.py"
    code, out, err = run(capsys, "solve", model, "--set", "n=400", "--solver", "highs", "--time-limit", "0.001",
                         "--seed", "0", "--json", out_json)
    assert code == 3
    assert "nothing is released" in err and "limit" in err
    assert "NOT private" in err
    assert "primal_bound" not in out + err and "gap" not in out + err  # no data-dependent numbers
    record = json.loads(out_json.read_text())  # the charge is recorded, nothing released
    assert record["status"] == "withheld" and "theta" not in record
    assert record["epsilon"] == 1.0 and record["mechanism"] == "OPDisc"
    assert record["error"]["type"] == "UncertifiedOracleError" and "nothing is released" in record["error"]["message"]
    assert "primal_bound" not in out_json.read_text() and "gap" not in out_json.read_text()
    code, out, err = run(capsys, "solve", model, "--set", "n=400", "--solver", "highs", "--time-limit", "0.001",
                         "--seed", "0", "--diagnostics")
    assert code == 3 and "NOT PRIVATE" in err and "status=limit" in err


def test_bad_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve", LOGREG, "--time-limit", "0")
    assert code == 2
    assert "time-limit" in err


def test_missing_model_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "solve", tmp_path / "nope.py")
    assert code == 2
    assert "does not exist" in err


def test_argparse_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "solve")
    assert code == 2
    assert err.count("\n") == 1  # one line
    assert "dpopt solve: error: the following arguments are required: MODEL.py" in err
    assert "see 'dpopt solve --help'" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import dpopt

    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"dpopt {dpopt.__version__}"


def test_entry_point_subprocess() -> None:
    proc = subprocess.run([sys.executable, "-m", "dpopt.cli.main", "bench", "--list"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "objective-perturbation" in proc.stdout


def test_demo_beats_the_majority_class(capsys: pytest.CaptureFixture[str]) -> None:
    """`make demo` (all training rows, ε = 1) and the README's ε = 0.5 command reach > 0.80 test accuracy."""
    for argv in (["--epsilon", "1.0", "--delta", "1e-6", "--seed", "0"],
                 ["--solver", "clarabel", "--epsilon", "0.5", "--seed", "3"]):
        code, out, err = run(capsys, "solve", LOGREG, *argv)
        assert code == 0, err
        accuracy = float(out.split("test_accuracy:")[1].split()[0])
        majority = float(out.split("majority_class_rate:")[1].split()[0])
        assert majority == pytest.approx(0.7638, abs=1e-3)
        assert accuracy > 0.80
        assert "data_seed=0" in out and "seed=0" not in out.replace("data_seed=0", "")
