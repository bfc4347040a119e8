"""Algorithms a declaration needs from a higher layer: dispatch registered by that layer.

* importing a module of declarations alone (no ``dp.`` name read) registers the higher layer's
  algorithms for its declarations, and loads no solver package with them;
* a program or declaration type nothing is registered for is refused with one line;
* the submodular dual norm beyond its closed forms goes through its dispatch (a registration
  for a subclass is what ``dual_norm`` returns for it, while the default program agrees with an
  independent enumeration of every subset);
* the q-norm potential's default weights solve their program;
* a module loaded with its followers keeps its source (tracebacks, ``inspect``).
"""

from __future__ import annotations

import inspect
import itertools
import subprocess
import sys

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ModelError
from dpopt.modeling import structured_sets
from dpopt.modeling.submodular import (
    ENUMERATE_MAX_P,
    CallableSetFunction,
    dual_norm,
    dual_norm_program,
)
from dpopt.numerics.potentials import QNormPotential, vertex_weights

_PROBE = """
import sys
from dpopt.modeling.structured_sets import PolytopeLP, PolytopeProjection, solve_polytope_program as s
from dpopt.modeling.submodular import SetFunction, dual_norm_program as d
from dpopt.numerics.potentials import QNormPotential, vertex_weights as w
base = [f.dispatch(object) for f in (s, d, w)]
found = [s.dispatch(PolytopeLP), s.dispatch(PolytopeProjection), d.dispatch(SetFunction), w.dispatch(QNormPotential)]
print(sum(f not in base for f in found), [m for m in ("scipy.optimize", "cvxpy") if m in sys.modules])
"""


def test_importing_the_declarations_registers_their_algorithms_and_no_solver_package() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True).stdout
    assert out.split(maxsplit=1) == ["4", "[]\n"]


def test_an_unregistered_type_is_refused_in_one_line() -> None:
    for call in (lambda: structured_sets.solve_polytope_program(object()),
                 lambda: dual_norm_program(object(), np.ones(2)),
                 lambda: vertex_weights(object(), np.ones(2))):
        with pytest.raises(ModelError, match=r"^no .* is registered for a object: register one with @dpopt\.") as err:
            call()
        assert "\n" not in str(err.value)


def _sqrt_cardinality(p: int, cls: type[CallableSetFunction] = CallableSetFunction) -> CallableSetFunction:
    """F(A) = √|A|: non-decreasing and submodular, with no closed-form dual norm."""
    return cls(p, lambda mask: float(np.sqrt(mask.sum())), name="sqrt")


def _dual_norm_by_enumeration(F: CallableSetFunction, s: np.ndarray) -> float:
    """``max_{A≠∅} |s|(A)/F(A)`` over every subset (independent of dpopt's program)."""
    a = np.abs(s)
    return max(a[list(A)].sum() / F.value_mask(np.isin(np.arange(F.p), A))
               for k in range(1, F.p + 1) for A in itertools.combinations(range(F.p), k))


class _Answers42(CallableSetFunction):
    """A set function type with an algorithm of its own registered for it."""


@dual_norm_program.register
def _(F: _Answers42, a: np.ndarray) -> tuple[float, np.ndarray, bool]:
    return 42.0, np.zeros(F.p), True


def test_the_dual_norm_beyond_closed_forms_dispatches_on_the_set_functions_type() -> None:
    p = ENUMERATE_MAX_P + 1  # beyond enumeration: the registered program
    s = np.random.default_rng(0).normal(size=p)
    assert dual_norm(_sqrt_cardinality(p), s) == pytest.approx(_dual_norm_by_enumeration(_sqrt_cardinality(p), s),
                                                              rel=1e-7)
    assert dual_norm(_sqrt_cardinality(p, _Answers42), s) == 42.0
    assert dual_norm(_sqrt_cardinality(ENUMERATE_MAX_P, _Answers42), s[:-1]) != 42.0  # enumeration first


def test_the_qnorm_weights_default_solves_its_program() -> None:
    V = np.vstack([np.eye(2), -np.eye(2)])
    theta = np.array([0.3, -0.2])
    alpha = vertex_weights(QNormPotential(dp.sets.VertexPolytope(V)), theta)
    assert V.T @ alpha == pytest.approx(theta, abs=1e-6)
    assert np.sum(alpha**2) <= np.sum(np.linalg.lstsq(V.T, theta, rcond=None)[0] ** 2) + 1e-9  # q = 2: minimal


def test_a_module_imported_with_its_followers_keeps_its_source() -> None:
    assert "def solve_polytope_program" in inspect.getsource(structured_sets)
