"""The model-script contract of ``dpopt solve`` (:mod:`dpopt.cli.model_script`): what a script defines, and ``--set`` values."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dpopt.cli.model_script import parse_set
from dpopt.testing.cli import run_cli as run

# ---------------------------------------------------------------------------
# the model-script contract
# ---------------------------------------------------------------------------

_MODULE_LEVEL = """
import dpopt as dp
from dpopt.datasets import make_classification

data, _ = make_classification(300, 4, seed=0)
theta = dp.Variable(4)
problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
mechanism = dp.ObjectivePerturbation(0.5, 1e-6)
"""


def _script(tmp_path: Path, body: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_module_level_problem_and_mechanism(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, _MODULE_LEVEL)
    code, out, err = run(capsys, "solve", path, "--seed", "1")
    assert code == 0, err
    assert "(0.5, 1e-06)-DP" in out


def test_module_level_script_refuses_parameters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, _MODULE_LEVEL)
    code, _, err = run(capsys, "solve", path, "--epsilon", "2")
    assert code == 2
    assert "takes no parameters" in err and "build(params)" in err


def test_build_must_use_epsilon(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, _MODULE_LEVEL + textwrap.dedent("""
        PARAMS = {"epsilon": 1.0, "delta": 1e-6}

        def build(params):
            return problem, mechanism   # ignores params["epsilon"]: refused
    """))
    code, _, err = run(capsys, "solve", path, "--epsilon", "1.0")
    assert code == 2
    assert "epsilon=0.5" in err and "params['epsilon']" in err


def test_build_may_return_a_pure_mechanism_but_not_a_larger_delta(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    """δ = 0 is a stronger guarantee than any δ asked for; another δ is refused, nothing charged."""
    body = _MODULE_LEVEL + textwrap.dedent("""
        PARAMS = {"epsilon": 1.0, "delta": 1e-6, "pure": True}

        def build(params):
            mech = (dp.OutputPerturbation(params["epsilon"], 0.0, noise="l2-laplace") if params["pure"]
                    else dp.ObjectivePerturbation(params["epsilon"], 1e-3))
            return problem, mech
    """)
    path = _script(tmp_path, body)
    code, _, _ = run(capsys, "solve", path, "--seed", "1")
    assert code == 0
    code, _, err = run(capsys, "solve", path, "--set", "pure=False")
    assert code == 2 and "delta=0.001" in err


def test_build_returning_wrong_types(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, "def build(params):\n    return 1, 2\n")
    code, _, err = run(capsys, "solve", path)
    assert code == 2
    assert "must be a dpopt Problem" in err


def test_script_without_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, "x = 1\n")
    code, _, err = run(capsys, "solve", path)
    assert code == 2
    assert "neither build(params) nor module-level problem and mechanism" in err


def test_script_bug_shows_its_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, """
        PARAMS = {"epsilon": 1.0}

        def build(params):
            return 1 / 0
    """, name="buggy.py")
    code, _, err = run(capsys, "solve", path)
    assert code == 2
    assert "ZeroDivisionError" in err and "buggy.py" in err
    assert "error: model script buggy.py raised an exception while running build(params)" in err


def test_dpopt_error_inside_build_is_clean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _script(tmp_path, """
        import dpopt as dp
        PARAMS = {"epsilon": 1.0, "lam": 1e-3}

        def build(params):
            theta = dp.Variable(3)
            return None, dp.L2Squared(theta, params["lam"])
    """)
    code, _, err = run(capsys, "solve", path, "--set", "lam=-1")
    assert code == 2
    assert "L2Squared weight must be positive" in err
    assert "Traceback" not in err


def test_parse_set_values() -> None:
    parsed = parse_set(["n=2000", "lam=1e-4", "name=adult", "flag=True", "n2=None", "xs=[1, 2]", "e= 0.5 "])
    assert parsed == {"n": 2000, "lam": 1e-4, "name": "adult", "flag": True, "n2": None, "xs": [1, 2],
                      "e": 0.5}
