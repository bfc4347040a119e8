"""Every shipped model script runs end to end through ``dpopt solve`` (small sizes)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dpopt as dp
from dpopt.cli.main import main

MODELS = Path(__file__).resolve().parents[2] / "models"

CASES = {
    "adult_halfspace.py[opdisc]": ("adult_halfspace.py", ["--solver", "highs", "--set", "n=60", "--delta", "1e-4"]),
    "adult_halfspace.py[rspm]": ("adult_halfspace.py", ["--solver", "highs", "--set", "n=60", "--set",
                                                        "mechanism='rspm'", "--delta", "1e-4"]),
    "adult_halfspace.py[opsamp]": ("adult_halfspace.py", ["--solver", "highs", "--set", "n=60", "--set",
                                                          "mechanism='opsamp'", "--set", "calls=2", "--delta", "1e-4"]),
    "adult_halfspace.py[highs-grouped]": ("adult_halfspace.py", ["--solver", "highs-grouped", "--set", "n=60",
                                                                 "--delta", "1e-4"]),
    "adult_halfspace.py[cpsat]": ("adult_halfspace.py", ["--solver", "cpsat", "--set", "n=60", "--delta", "1e-4"]),
    "own_csv.py": ("own_csv.py", ["--epsilon", "2.0"]),
    "private_group_logistic.py": ("private_group_logistic.py", ["--set", "n=2000", "--set", "steps=50"]),
    "private_lasso.py": ("private_lasso.py", ["--set", "n=2000", "--set", "d=10", "--set", "steps=30"]),
    "private_logistic_regression.py": ("private_logistic_regression.py", ["--set", "n=2000"]),
    "private_mirror_descent.py": ("private_mirror_descent.py", ["--set", "n=2000", "--set", "max_steps=200"]),
    "private_ridge_regression.py": ("private_ridge_regression.py", ["--set", "n=2000"]),
    "private_scoring_system.py": ("private_scoring_system.py", ["--solver", "cpsat", "--set", "n=150"]),
    "private_scoring_system.py[ramp]": ("private_scoring_system.py", ["--solver", "scip", "--set", "n=150", "--set",
                                                                     "loss='ramp'"]),
    "private_scoring_system.py[exponential]": ("private_scoring_system.py", ["--set", "n=150", "--set",
                                                                            "mechanism='exponential'"]),
    "private_facility_location.py": ("private_facility_location.py", ["--solver", "highs", "--set", "n=150"]),
    "private_pricing.py": ("private_pricing.py", ["--solver", "highs", "--set", "n=150"]),
    "private_pricing.py[rspm]": ("private_pricing.py", ["--solver", "highs", "--set", "n=150", "--set",
                                                        "mechanism='rspm'"]),
    "private_pricing.py[opsamp]": ("private_pricing.py", ["--solver", "highs", "--set", "n=150", "--set",
                                                          "mechanism='opsamp'", "--set", "calls=2"]),
    "private_sparse_group_logistic.py[output]": ("private_sparse_group_logistic.py", ["--set", "n=2000"]),
    "private_sparse_group_logistic.py[dual-fw,chain]": (
        "private_sparse_group_logistic.py",
        ["--set", "n=2000", "--set", "mechanism='dual-fw'", "--set", "norm='chain'"],
    ),
}


def test_every_model_script_has_a_case() -> None:
    assert {p.name for p in MODELS.glob("*.py")} == {v[0] for v in CASES.values()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_script_runs(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    script, args = CASES[case]
    if "--solver" in args:
        name = args[args.index("--solver") + 1]
        if not dp.backends.get(name).available():
            pytest.skip(f"{name} not installed")
    code = main(["solve", str(MODELS / script), "--seed", "1", *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Release from" in out.out and "NOT certified" not in out.out
    assert "evaluation (NOT PRIVATE" in out.out
