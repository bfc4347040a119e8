"""The one final ``Mechanism.run``: no mechanism overrides it, its options are validated once
(before anything is charged), and an explicit solver is refused where no solver is called."""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ExecutorError, MechanismError, PrivacyParameterError
from dpopt.mechanisms.base import Mechanism, RunOptions, SolverNeed
from dpopt.testing.coverage import concrete_mechanisms


def _problem() -> dp.Problem:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 2)) / 2
    data = dp.Dataset(X, np.where(X[:, 0] > 0, 1.0, -1.0), x_bound=1.0, y_bound=1.0)
    theta = dp.Variable(2)
    return dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.5))


def test_no_concrete_mechanism_overrides_run() -> None:
    mechanisms = concrete_mechanisms()
    assert len(mechanisms) >= 10  # the discovery found the mechanisms (a guard that checks nothing fails)
    overriding = [m.__name__ for m in mechanisms if any("run" in vars(k) for k in m.__mro__ if k is not Mechanism)]
    assert overriding == []


def test_a_subclass_overriding_run_is_caught() -> None:
    """The mutant the guard above must catch."""

    class Rogue(dp.DPGradientDescent):
        def run(self, problem, **kwargs):  # type: ignore[override]
            return super().run(problem, **kwargs)

    assert any("run" in vars(k) for k in Rogue.__mro__ if k is not Mechanism)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"time_limit": 0}, MechanismError, "time_limit must be a positive number"),
    ({"time_limit": True}, MechanismError, "time_limit must be a positive number"),
    ({"threads": 0}, MechanismError, "threads must be a positive integer"),
    ({"threads": 1.5}, MechanismError, "threads must be a positive integer"),
    ({"seed": 1.5}, PrivacyParameterError, "seed must be"),
    ({"seed": np.random.default_rng(0)}, PrivacyParameterError, "seed must be"),
    ({"executor": "gpu"}, ExecutorError, "unknown executor"),
])
def test_run_options_are_refused_before_the_charge(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        RunOptions(**kwargs)
    ledger = dp.Ledger()
    with pytest.raises(error, match=match):
        dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger).run(_problem(), **kwargs)
    assert ledger.charges == ()


def test_run_options_are_frozen_and_say_whether_a_solver_was_chosen() -> None:
    assert not RunOptions().explicit
    assert RunOptions(solver="clarabel").explicit and RunOptions(time_limit=1.0).explicit
    with pytest.raises(AttributeError):
        RunOptions().seed = 3  # type: ignore[misc]


def test_an_explicit_solver_is_refused_where_none_is_called() -> None:
    ledger = dp.Ledger()
    mech = dp.DPGradientDescent(1.0, 1e-6, steps=3, ledger=ledger)
    assert mech.solver_need(_problem()) is SolverNeed.NONE
    with pytest.raises(MechanismError, match="DPGradientDescent calls no solver on this problem"):
        mech.run(_problem(), solver="clarabel", seed=0)
    assert ledger.charges == ()
    assert mech.run(_problem(), seed=0).private  # "auto" runs


def test_a_wrong_problem_type_is_refused_before_the_charge() -> None:
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="needs a DiscreteProblem"):
        dp.OPDisc(1.0, 1e-6, ledger=ledger).run(_problem())
    with pytest.raises(MechanismError, match="run\\(\\) needs a dpopt Problem"):
        dp.DPGradientDescent(1.0, 1e-6, ledger=ledger).run("not a problem")
    assert ledger.charges == ()
