"""The orders dpopt needs are derived from the backends' declared capabilities (registry.ranked).

No table of backend names is kept: the ``auto`` orders, the verifiers and the step and LP
backends come from the classes' declarations, so a backend registered with a rank takes its
place in them, and a profile's ``[options]`` are checked by the backend's own ``check_options``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.auto_discrete import auto_ranked
from dpopt.backends.clarabel import ClarabelBackend
from dpopt.backends.cpsat import CpSatBackend
from dpopt.backends.options import check_solver_options
from dpopt.backends.profiles import auto_order
from dpopt.backends.programs import lp_backends, resolve_step_backend, step_backends
from dpopt.backends.verify import verifier_order
from dpopt.errors import BackendCapabilityError, SolverOptionError


def names(backends: list[Any]) -> list[str]:
    return [b.name for b in backends]


def test_the_derived_orders_are_the_documented_ones():
    theta = dp.Variable(3)
    data = dp.Dataset(np.zeros((4, 3)), np.ones(4), x_bound=1.0)
    smooth = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 1.0))
    polytope = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L1Ball(theta, 1.0))
    assert names(auto_order(None)) == ["scipy", "clarabel", "scs"]
    assert names(auto_order(smooth)) == ["scipy", "clarabel", "scs"]  # its projected Newton method
    assert names(auto_order(polytope)) == ["clarabel", "scipy", "scs"]  # interior point first
    assert names(auto_ranked()) == ["bruteforce", "highs-grouped", "cpsat", "highs"]
    assert verifier_order("highs") == ("scip", "cpsat")
    assert verifier_order("scip") == ("cpsat", "highs")
    assert verifier_order("cpsat") == ("scip", "highs")
    assert verifier_order("a-plug-in") == ("scip", "cpsat", "highs")
    assert names(step_backends()) == ["clarabel", "scs"]  # osqp solves QPs only: no mirror steps
    assert names(lp_backends()) == ["scipy-lp"]


class Preferred(CpSatBackend):
    name = "preferred-cpsat"
    verifier_rank = -1
    auto_rank = None


class Fussy(ClarabelBackend):
    name = "fussy-clarabel"
    auto_rank = 1  # before scipy
    seen: list[dict[str, Any]] = []

    def check_options(self, options: dict[str, Any], where: str) -> None:
        type(self).seen.append(options)
        if "bad" in options:
            raise SolverOptionError(f"{where}: no 'bad'")


@pytest.fixture
def plug_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.names()  # the built-ins first, then two plug-ins, removed after the test
    monkeypatch.setitem(registry._FACTORIES, "preferred-cpsat", Preferred)
    monkeypatch.setitem(registry._FACTORIES, "fussy-clarabel", Fussy)


def test_a_registered_backend_takes_the_place_its_declarations_give(plug_ins):
    assert verifier_order("highs")[0] == "preferred-cpsat"
    assert "preferred-cpsat" not in names(auto_ranked())  # it declares no auto rank
    assert names(auto_order(None))[:2] == ["fussy-clarabel", "scipy"]
    assert names(step_backends())[0] == "fussy-clarabel"
    check_solver_options("fussy-clarabel", {"good": 1}, where="p")
    with pytest.raises(SolverOptionError, match="no 'bad'"):
        check_solver_options("FUSSY-clarabel", {"bad": 1}, where="p")
    assert Fussy.seen == [{"good": 1}, {"bad": 1}]


def test_a_backend_without_the_capability_is_refused_by_name():
    with pytest.raises(BackendCapabilityError, match="'clarabel' or 'scs'"):
        resolve_step_backend("osqp")
    with pytest.raises(SolverOptionError, match="reads no"):
        check_solver_options("bruteforce", {"anything": 1}, where="p")


def test_each_lp_backend_compiles_the_lmo_its_own_way():
    from dpopt.compile.cvxpy_program import CvxpyProgram
    from dpopt.compile.polytope_program import LinearProgram

    A, b = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]), np.array([1.0, 1.0, 1.0])
    assert isinstance(registry.get("scipy-lp").prepare_lmo(A, b), LinearProgram)
    assert isinstance(registry.get("clarabel").prepare_lmo(A, b), CvxpyProgram)
    with pytest.raises(BackendCapabilityError, match="linear minimization"):
        registry.get("cpsat").prepare_lmo(A, b)  # it declares no solves_lp
    assert all(b.solves_lp for b in lp_backends())

