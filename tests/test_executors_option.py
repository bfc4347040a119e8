"""``run(..., executor=)``, the profile keys and the CLI flags that choose it.

What users rely on: every mechanism's ``run`` takes an executor; a wrong name, a scheduler
that cannot be reached or a contradictory profile is refused *before* the charge; the same
seed gives the same release whatever the executor; an executor dpopt starts for a run is
closed after it, one the caller passes is not; and nothing about the executor (its kind,
workers, timing) is in the Release.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.profiles import ExecutorSettings, load_profile, profile_executor
from dpopt.cli.main import main
from dpopt.datasets import make_classification
from dpopt.discovery import subclasses
from dpopt.errors import DpoptError, ModelError
from dpopt.executors import (
    Executor,
    ExecutorError,
    InProcessExecutor,
    current_executor,
    resolve_executor,
    use_executor,
)
from dpopt.mechanisms.base import Mechanism


def _all_mechanisms() -> list[type]:
    return subclasses(Mechanism)


@pytest.fixture(scope="module")
def problem() -> dp.Problem:
    data, _ = make_classification(200, 4, seed=0)
    theta = dp.Variable(4)
    return dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 2.0))


def _profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("cls", _all_mechanisms(), ids=lambda c: c.__name__)
def test_every_mechanism_run_takes_an_executor(cls: type) -> None:
    params = inspect.signature(cls.run).parameters
    assert "executor" in params and params["executor"].default is None


@pytest.mark.parametrize("spec", ["nonsense", 3])
def test_a_bad_executor_is_refused_before_the_charge(problem: dp.Problem, spec: object) -> None:
    ledger = dp.Ledger()
    with pytest.raises(ExecutorError):
        dp.DPGradientDescent(1.0, 1e-5, steps=5, ledger=ledger).run(problem, executor=spec)
    assert ledger.charges == ()


def test_an_unreachable_scheduler_costs_nothing(problem: dp.Problem) -> None:
    pytest.importorskip("distributed")
    ledger = dp.Ledger()
    settings = ExecutorSettings("dask", "tcp://127.0.0.1:9", None)  # port 9 (discard): nobody listens
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler"):
        dp.DPGradientDescent(1.0, 1e-5, steps=5, ledger=ledger).run(problem, executor=settings)
    assert ledger.charges == ()


def test_same_seed_same_release_on_every_executor(problem: dp.Problem) -> None:
    base = dp.DPGradientDescent(1.0, 1e-5, steps=10).run(problem, seed=4)
    for spec in ("inprocess", "processes"):
        other = dp.DPGradientDescent(1.0, 1e-5, steps=10).run(problem, seed=4, executor=spec)
        np.testing.assert_array_equal(other.theta, base.theta)
        assert other.parameters == base.parameters
        text = json.dumps(other.to_dict()).lower()
        assert "executor" not in text and "worker" not in text


class _Counting(InProcessExecutor):
    """An in-process executor that counts how often it is closed and whether runs see it."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0
        self.seen = False

    def close(self) -> None:
        self.closed += 1


def test_a_passed_executor_is_used_and_not_closed(problem: dp.Problem) -> None:
    mine = _Counting()

    class Spy(dp.DPGradientDescent):
        def _iterate(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            mine.seen = current_executor() is mine
            return super()._iterate(*args, **kwargs)

    Spy(1.0, 1e-5, steps=3).run(problem, seed=0, executor=mine)
    assert mine.seen and mine.closed == 0
    assert isinstance(current_executor(), Executor) and current_executor() is not mine


def test_an_executor_started_for_the_run_is_closed(problem: dp.Problem, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[_Counting] = []

    def fake_resolve(spec: object, **kwargs: object) -> Executor:
        started.append(_Counting())
        return started[-1]

    monkeypatch.setattr("dpopt.mechanisms.pipeline.resolve_executor", fake_resolve)
    dp.DPGradientDescent(1.0, 1e-5, steps=3).run(problem, seed=0, executor="processes")
    assert len(started) == 1 and started[0].closed == 1


# ------------------------------------------------------------------ solver profiles


def test_profile_executor_keys(tmp_path: Path) -> None:
    prof = load_profile(_profile(tmp_path, 'backend = "scipy"\nexecutor = "processes"\nworkers = 2\n'))
    assert prof.executor == ExecutorSettings("processes", None, 2)
    assert profile_executor(prof) == prof.executor
    assert profile_executor(str(tmp_path / "p.toml")) == prof.executor
    assert profile_executor("scipy") is None
    implied = load_profile(_profile(tmp_path, 'backend = "scipy"\nscheduler = "tcp://h:8786"\n'))
    assert implied.executor == ExecutorSettings("dask", "tcp://h:8786", None)
    assert load_profile(_profile(tmp_path, 'backend = "scipy"\n')).executor is None


@pytest.mark.parametrize(("text", "words"), [
    ('executor = "dusk"\n', ["executor must be one of", "did you mean 'dask'"]),
    ('executor = "processes"\nscheduler = "tcp://h:1"\n', ["scheduler needs executor"]),
    ('scheduler = ""\n', ["scheduler must be an address"]),
    ('executor = "processes"\nworkers = 0\n', ["workers must be an integer ≥ 1"]),
])
def test_profile_executor_mistakes(tmp_path: Path, text: str, words: list[str]) -> None:
    with pytest.raises(ModelError) as info:
        load_profile(_profile(tmp_path, 'backend = "scipy"\n' + text))
    for word in words:
        assert word in str(info.value)


def test_the_profile_executor_is_used_by_the_run(problem: dp.Problem, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[object, object, object]] = []

    def fake_resolve(spec: object, *, scheduler: object = None, workers: object = None) -> Executor:
        asked.append((spec, scheduler, workers))
        return resolve_executor("inprocess")

    monkeypatch.setattr("dpopt.mechanisms.pipeline.resolve_executor", fake_resolve)
    path = _profile(tmp_path, 'backend = "scipy"\nexecutor = "processes"\nworkers = 2\n')
    dp.ObjectivePerturbation(1.0, 1e-5).run(problem, solver=path, seed=0)
    assert asked == [("processes", None, 2)]
    asked.clear()
    dp.ObjectivePerturbation(1.0, 1e-5).run(problem, solver=path, seed=0, executor="inprocess")
    assert asked == [("inprocess", None, None)]  # the argument wins over the profile
    asked.clear()
    outer = _Counting()
    with use_executor(outer):  # a caller's (or an outer run's) executor: no second pool is started
        dp.ObjectivePerturbation(1.0, 1e-5).run(problem, solver=path, seed=0)
    assert asked == [] and outer.closed == 0


# ------------------------------------------------------------------ the CLI


_MODEL = """
import dpopt as dp
from dpopt.datasets import make_classification

PARAMS = {"epsilon": 1.0, "delta": 1e-6}


def build(params):
    data, _ = make_classification(200, 4, seed=0)
    theta = dp.Variable(4)
    problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 2.0))
    return problem, dp.DPGradientDescent(params["epsilon"], params["delta"], steps=5)
"""


def test_cli_executor_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text(_MODEL)
    assert main(["solve", str(model), "--seed", "1", "--quiet"]) == 0
    plain = capsys.readouterr().out
    assert main(["solve", str(model), "--seed", "1", "--quiet", "--executor", "processes", "--workers", "2"]) == 0
    pooled = capsys.readouterr().out
    assert plain.splitlines()[-1] == pooled.splitlines()[-1]  # the same release line
    code = main(["solve", str(model), "--executor", "processes", "--scheduler", "tcp://h:1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--scheduler needs --executor dask" in err and "Traceback" not in err


def test_executor_errors_are_dpopt_errors() -> None:
    assert issubclass(ExecutorError, DpoptError)


def test_cli_unreachable_scheduler_is_refused_without_a_charge(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

    model = tmp_path / "model.py"
    model.write_text(_MODEL)
    book = tmp_path / "budget.sqlite"
    SQLiteLedger(book, dataset="demo", epsilon_budget=5.0, delta_budget=1e-3, create=True).close()
    code = main(["solve", str(model), "--scheduler", "tcp://127.0.0.1:9", "--ledger", str(book),
                 "--dataset", "demo", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the Dask scheduler" in err and "Traceback" not in err
    reopened = SQLiteLedger.open(book, dataset="demo")
    try:
        assert reopened.charges == ()
    finally:
        reopened.close()
