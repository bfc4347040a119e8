"""Typed oracle outcomes: Limit, the re-check classes of dpopt.backends.certificates, Backend[Prepared].

Every registered backend is run through a mechanism on a small problem of its kind; its
results must carry a :class:`Limit` (or None) and, after the mechanism's re-check, the typed
check of its problem family, and their ``to_dict()`` must survive a JSON round trip with the
keys earlier versions wrote.
"""

from __future__ import annotations

import json
import typing
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.base import Backend
from dpopt.backends.certificates import (
    Check,
    ConvexCheck,
    CpSatCheck,
    DiscreteCheck,
    GridCheck,
    VerifierCheck,
)
from dpopt.backends.conformance import discrete_problem, ridge
from dpopt.backends.pyomo_mip import PyomoMipBackend
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.polytope_program import lmo_program
from dpopt.modeling.domains import IntegerGrid

NAMES = sorted(registry.names())
#: the keys of the JSON re-check each family wrote before it was typed
CONVEX_KEYS = {"distance_bound", "gradient_mapping_norm", "strong_convexity", "smoothness", "tolerance"}
VERDICT_KEYS = {"on_grid", "proven_gap", "accepted"}
DISCRETE_KEYS = VERDICT_KEYS | {"objective", "mismatch", "numpy_loss", "exact_loss", "resolution"}
CPSAT_KEYS = VERDICT_KEYS | {"objective", "objective_integer_margins", "objective_agrees", "objective_scale",
                             "rounding_error_units", "rounding_alpha", "phase1_time", "phase2_solves", "candidates"}
VERIFIER_KEYS = {"role", "threshold", "lower_bound", "found_better_point", "confirmed"}


def _installed(name: str) -> Backend[Any]:
    backend = registry.get(name)
    if not backend.available():
        pytest.skip(f"backend {name!r}: its solver package is not installed")
    return backend


def _template() -> dp.DiscreteProblem:
    """A tiny OPDisc problem (27 grid points: the verifier is enumeration)."""
    problem = discrete_problem(20, 3, IntegerGrid(1.0, -1.0, 1.0), seed=3)
    return problem.with_eta(None)


def _convex() -> dp.Problem:
    """Squared loss over an ℓ∞ ball with ℓ2²: a QP every convex backend (osqp too) accepts."""
    data = ridge()[0].loss.data
    th = dp.Variable(data.n_features)
    return dp.Problem(dp.SquaredLoss(data, th), constraint=dp.LinfBall(th, 1.0), regularizer=dp.L2Squared(th, 0.1))


def _family_check(backend: Backend[Any]) -> type[GridCheck]:
    """The GridCheck subclass a discrete backend's own re-check has (bruteforce: none)."""
    if isinstance(backend, PyomoMipBackend) or backend.name == "highs-grouped":
        return DiscreteCheck
    if backend.name == "cpsat":
        return CpSatCheck
    return GridCheck


def _round_trip(result: OracleResult) -> dict[str, Any]:
    d = result.to_dict(include_solution=True)
    assert json.loads(json.dumps(d, allow_nan=False)) == d  # JSON-ready: no nan, no enum, no numpy
    assert d["limit"] is None or d["limit"] in {m.value for m in Limit}
    return d


def _limit_matches_status(result: OracleResult) -> None:
    assert result.limit is None or isinstance(result.limit, Limit)
    assert (result.limit is not None) == (result.status is OracleStatus.LIMIT), result.summary()


@pytest.mark.parametrize("name", NAMES)
def test_every_backend_gives_a_typed_limit_and_check_after_the_mechanisms_recheck(name: str) -> None:
    backend = _installed(name)
    if backend.kind == "convex":
        release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(
            _convex(), solver=name, seed=0, keep_diagnostics=True)
        (result,) = release.diagnostics.oracle_results
        _limit_matches_status(result)
        assert isinstance(result.recheck, ConvexCheck) and result.recheck.distance_bound is not None
        assert result.certified == result.recheck.within_tolerance
        assert set(_round_trip(result)["recheck"]) == CONVEX_KEYS
        assert "distance_bound=" in result.summary()
    elif backend.kind == "mip":
        release = dp.OPDisc(2.0, 1e-3, ledger=dp.Ledger()).run(_template(), solver=name, seed=0,
                                                               keep_diagnostics=True)
        oracle, *checks = release.diagnostics.oracle_results
        _limit_matches_status(oracle)
        assert type(oracle.recheck) is _family_check(backend)
        assert oracle.recheck.on_grid and oracle.recheck.accepted is True and oracle.certified
        keys = {DiscreteCheck: DISCRETE_KEYS, CpSatCheck: CPSAT_KEYS, GridCheck: VERDICT_KEYS}[_family_check(backend)]
        assert set(_round_trip(oracle)["recheck"]) == keys
        for c in checks:  # the independent verifier (enumeration on this tiny grid)
            assert isinstance(c.recheck, VerifierCheck) and c.recheck.confirmed and c.certified
            assert VERIFIER_KEYS <= set(_round_trip(c)["recheck"])
    elif backend.kind == "lp":  # an LMO: no mechanism re-checks it, so no check either
        result = backend.solve(backend.prepare(lmo_program(np.eye(2), np.ones(2))), np.array([1.0, -1.0]),
                               SolveOptions(max_iterations=1))
        _limit_matches_status(result)
        assert result.recheck is None and _round_trip(result)["recheck"] is None
    else:
        pytest.skip(f"backend {name!r} is of kind {backend.kind!r}, which no dpopt mechanism calls")


@pytest.mark.parametrize("name", ["scipy", "clarabel", "scipy-lp"])
def test_a_limit_stop_names_its_limit(name: str) -> None:
    backend = _installed(name)
    if backend.kind == "mip":
        problem = discrete_problem(20, 3, IntegerGrid(1.0, -1.0, 1.0), seed=3)
        result = backend.solve(backend.prepare(problem), problem.eta, SolveOptions(time_limit=0.0, threads=1))
        expected = {Limit.TIME}
    elif backend.kind == "lp":
        A = np.vstack([np.eye(30), -np.eye(30), np.ones((1, 30))])
        result = backend.solve(backend.prepare(lmo_program(A, np.ones(61))), -np.arange(30.0),
                               SolveOptions(max_iterations=1))
        expected = {Limit.ITERATIONS}
    else:
        problem = _convex()
        result = backend.solve(backend.prepare(problem), np.ones(problem.dim),
                               SolveOptions(max_iterations=1, tolerance=1e-14))
        expected = {Limit.ITERATIONS, Limit.PRECISION}
    if result.status is not OracleStatus.LIMIT:
        pytest.skip(f"{name} finished within the limit ({result.summary()})")
    assert result.limit in expected and not result.certified
    assert f"limit={result.limit.value}" in result.summary()


def test_limit_is_a_string_enum_that_prints_its_value() -> None:
    assert [m.value for m in Limit] == ["time", "iterations", "nodes", "objective", "precision"]
    assert str(Limit.TIME) == f"{Limit.TIME}" == "time" and Limit.NODES == "nodes"
    r = OracleResult(None, OracleStatus.LIMIT, False, 0.0, "x", "1", "stopped", limit="nodes")  # type: ignore[arg-type]
    assert r.limit is Limit.NODES and r.to_dict()["limit"] == "nodes"
    with pytest.raises(ValueError, match="unknown solver limit 'fuel'.*'time'"):
        OracleResult(None, OracleStatus.LIMIT, False, 0.0, "x", "1", "stopped", limit="fuel")  # type: ignore[arg-type]


def test_a_recheck_must_be_a_check() -> None:
    with pytest.raises(TypeError, match="Check or None, not dict"):
        OracleResult(None, OracleStatus.OPTIMAL, True, 0.0, "x", "1", "ok", recheck={"on_grid": True})  # type: ignore[arg-type]


CHECKS: list[Check] = [
    ConvexCheck(distance_bound=1e-9, gradient_mapping_norm=1e-8, strong_convexity=0.1, smoothness=2.0, tolerance=1e-6),
    ConvexCheck(tolerance=1e-6, reason="no solution"),
    GridCheck(on_grid=True, proven_gap=float("nan"), accepted=True),
    DiscreteCheck(on_grid=True, objective=0.5, mismatch=0.0, numpy_loss=0.25, exact_loss=0.25, resolution=1e-3),
    CpSatCheck(on_grid=True, objective=0.5, objective_integer_margins=0.5, objective_agrees=True,
               objective_scale=2 ** 30, rounding_error_units=3.0, rounding_alpha=6.0 / 2 ** 30),
    VerifierCheck(point=GridCheck(on_grid=False), threshold=0.4, lower_bound=float("-inf"),
                  found_better_point=False, confirmed=False),
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: type(c).__name__)
def test_with_recheck_never_turns_uncertified_into_certified(check: Check) -> None:
    uncertified = OracleResult(np.zeros(2), OracleStatus.LIMIT, False, 0.0, "x", "1", "stopped", limit=Limit.TIME)
    assert not uncertified.with_recheck(check, True).certified
    certified = OracleResult(np.zeros(2), OracleStatus.OPTIMAL, True, 0.0, "x", "1", "ok")
    assert certified.with_recheck(check, True).certified and not certified.with_recheck(check, False).certified
    assert certified.with_recheck(check, True).recheck is check


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: type(c).__name__)
def test_check_to_dict_is_json_ready_and_omits_unset_fields(check: Check) -> None:
    d = check.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert all(v is not None or k in {"proven_gap", "lower_bound"} for k, v in d.items())  # only nan/inf → None
    r = OracleResult(np.array([0.5, np.nan]), OracleStatus.OPTIMAL, True, 0.0, "x", "1", "ok", recheck=check)
    assert _round_trip(r)["recheck"] == d


def test_check_dicts_keep_the_keys_of_the_former_plain_dicts() -> None:
    convex, no_point, grid, discrete, cpsat, verifier = (c.to_dict() for c in CHECKS)
    assert set(convex) == CONVEX_KEYS and no_point == {"tolerance": 1e-6, "reason": "no solution"}
    assert grid == {"on_grid": True, "proven_gap": None, "accepted": True}
    assert set(discrete) == DISCRETE_KEYS - {"proven_gap", "accepted"}
    assert set(cpsat) == CPSAT_KEYS - {"proven_gap", "accepted", "phase1_time", "phase2_solves", "candidates"}
    assert verifier == {"on_grid": False, "role": "verifier", "threshold": 0.4, "lower_bound": None,
                        "found_better_point": False, "confirmed": False}
    marked = replace(CHECKS[3], proven_gap=0.0, accepted=True)  # what discrete mechanisms add
    assert isinstance(marked, DiscreteCheck) and set(marked.to_dict()) == DISCRETE_KEYS


def _prepared_type(cls: type) -> Any:
    """The argument of the ``Backend[...]`` base in ``cls``'s MRO (None when none is named)."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(base) is Backend:
                (arg,) = typing.get_args(base)
                return arg
    return None


@pytest.mark.parametrize("name", NAMES)
def test_each_backend_names_its_prepared_type_and_prepare_returns_it(name: str) -> None:
    backend = registry.get(name)
    prepared_type = _prepared_type(type(backend))
    assert isinstance(prepared_type, type), f"{type(backend).__name__} does not subclass Backend[<prepared type>]"
    backend = _installed(name)
    if backend.kind == "convex":
        problem: Any = _convex()
    elif backend.kind == "mip":
        problem = _template()
    elif backend.kind == "lp":
        problem = lmo_program(np.eye(2), np.ones(2))
    else:
        pytest.skip(f"backend {name!r} is of kind {backend.kind!r}")
    assert isinstance(backend.prepare(problem), prepared_type)
    assert isinstance(backend.prepare_for(problem, SolveOptions()), prepared_type)
