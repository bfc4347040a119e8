"""Guard: every concrete Mechanism has a whole-program neighbour test, an audit and a mutation test.

docs/design.md ("Privacy rules") asks for all three per mechanism.  No list here says which
tests exist: each test states what it covers with a ``covers`` mark
(:mod:`dpopt.testing.coverage`), the guard reads those marks statically from the test modules
(so it sees them when this file runs alone) and finds the mechanisms with
:func:`dpopt.discovery.subclasses` (every module of ``dpopt.mechanisms`` imported).  A new mechanism therefore fails this guard until its three
tests exist and run by default.
"""

from __future__ import annotations

import gc
import types
from pathlib import Path
from typing import Any

import pytest

import dpopt as dp
from dpopt.errors import ModelError
from dpopt.mechanisms.base import Mechanism
from dpopt.testing.coverage import (
    KINDS,
    concrete_mechanisms,
    coverage_of,
    covers,
    describe_gaps,
    import_test_modules,
    missing_kinds,
)

TESTS = Path(__file__).resolve().parents[1]  # the tests folder, searched recursively


@pytest.fixture(scope="module")
def modules() -> list[types.ModuleType]:
    return import_test_modules(TESTS, exclude=[Path(__file__).name])


@pytest.fixture(scope="module")
def covered(modules: list[types.ModuleType]) -> dict[tuple[type, str], list[str]]:
    return coverage_of(modules)


def test_every_mechanism_has_a_neighbour_test_an_audit_and_a_mutation_test(covered: Any) -> None:
    gaps = missing_kinds(concrete_mechanisms(), covered)
    assert not gaps, "\n" + describe_gaps(gaps)


def test_the_guard_finds_every_exported_mechanism() -> None:
    """Discovery is not vacuous: every Mechanism class dpopt exports is found, no abstract or
    private base and no test mutant is."""
    found = concrete_mechanisms()
    exported = {getattr(dp, n) for n in dir(dp) if isinstance(getattr(dp, n), type)}
    public = {c for c in exported if issubclass(c, Mechanism) and c is not Mechanism
              and not getattr(c, "__abstractmethods__", None)}
    assert public and public <= found
    assert all(c.__module__.startswith("dpopt.") and not c.__name__.startswith("_") for c in found)
    assert dp.mechanisms.ConvexMechanism not in found  # abstract


def test_marks_name_mechanisms_only_and_slow_tests_cover_nothing(modules: Any, covered: Any) -> None:
    """Every recorded pair is (a Mechanism class, a known kind); the slow large audits are marked
    but do not count: the default run must hold the coverage."""
    assert covered
    assert all(issubclass(m, Mechanism) and k in KINDS for m, k in covered)
    tests = {t.split("[")[0] for ids in covered.values() for t in ids}
    slow = {f"{m.__name__}::{name}" for m in modules for name, fn in vars(m).items()
            if name.startswith("test") and {"slow", "covers"} <= {k.name for k in getattr(fn, "pytestmark", [])}}
    assert slow and not slow & tests, sorted(slow & tests)


def test_a_new_mechanism_without_tests_is_reported_missing_all_three_kinds(covered: Any) -> None:
    class Unaudited(Mechanism):
        """A throwaway concrete mechanism that no test covers."""

        def plan(self, problem: Any, options: Any = None) -> Any:
            raise NotImplementedError

        def execute(self, plan: Any, rng: Any) -> Any:
            raise NotImplementedError

    here = concrete_mechanisms(within=__name__, package=None)
    assert here == {Unaudited}
    gaps = missing_kinds(here | concrete_mechanisms(), covered)
    assert gaps == {Unaudited: KINDS}
    message = describe_gaps(gaps)
    assert "Unaudited" in message and all(k in message for k in KINDS)
    del Unaudited, here, gaps
    gc.collect()  # the class is gone from __subclasses__ again
    assert not concrete_mechanisms(within=__name__, package=None)


def _module(**tests: Any) -> types.ModuleType:
    module = types.ModuleType("synthetic_tests")
    for name, fn in tests.items():
        setattr(module, name, fn)
    return module


def _noop() -> None:
    pass


def _fn() -> Any:
    return types.FunctionType(_noop.__code__, {})


def test_the_reader_sees_function_parameter_class_and_module_marks() -> None:
    """A covering mark counts wherever pytest would apply it, and only when the test runs by default."""
    audit_op = covers(dp.OPDisc, kind="audit")
    module = _module(
        test_fn=audit_op(_fn()),
        test_params=pytest.mark.parametrize("m", [
            pytest.param("a", marks=covers(dp.RSPM, kind="neighbour")),
            pytest.param("b", marks=covers(dp.OPSamp, dp.OPDisc, kind="neighbour"))])(_fn()),
        test_slow=pytest.mark.slow(covers(dp.RSPM, kind="mutation")(_fn())),
        test_slow_param=pytest.mark.parametrize("m", [
            pytest.param(1, marks=[covers(dp.DPSGD, kind="mutation"), pytest.mark.slow])])(_fn()),
        test_skipped=pytest.mark.skipif(True, reason="x")(covers(dp.DPSGD, kind="audit")(_fn())),
        helper_not_a_test=covers(dp.DPSGD, kind="neighbour")(_fn()),
        TestGroup=type("TestGroup", (), {"pytestmark": [covers(dp.RSPM, kind="audit").mark],
                                         "test_method": _fn()}),
    )
    got = coverage_of([module])
    assert set(got) == {(dp.OPDisc, "audit"), (dp.RSPM, "neighbour"), (dp.OPSamp, "neighbour"),
                        (dp.OPDisc, "neighbour"), (dp.RSPM, "audit")}
    assert got[(dp.RSPM, "neighbour")] == ["synthetic_tests::test_params[a]"]

    module.pytestmark = covers(dp.DPGradientDescent, kind="mutation")  # module-wide mark
    assert (dp.DPGradientDescent, "mutation") in coverage_of([module])
    module.pytestmark = [pytest.mark.slow, covers(dp.DPGradientDescent, kind="mutation")]
    assert coverage_of([module]) == {}


@pytest.mark.parametrize("args,kind", [((dp.OPDisc,), "audits"), ((), "audit"), ((object,), "audit"),
                                        ((dp.Ledger,), "mutation")])
def test_a_wrong_mark_fails_at_import(args: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ModelError):
        covers(*args, kind=kind)
