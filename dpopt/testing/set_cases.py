"""Fixtures of every constraint set and regularizer dpopt defines, for the contract suites.

:data:`SET_FIXTURES` and :data:`REGULARIZER_FIXTURES` hold, per concrete class, named factories
of small instances (the set contract suite fails for a class without one); :class:`ShiftedL2Ball`
is a set written the way a user outside dpopt's modeling layer writes one, registered through
the extension points (its cvxpy encoding with :func:`~dpopt.compile.cvxpy_program.set_constraints`),
so every suite that runs over :data:`SET_CASES` runs it too.  :func:`set_functions` gives one
submodular set function of each family (the submodular norms' and their encodings' tests).  Discovery of dpopt's own sets leaves
this module out (``exclude=("dpopt.testing",)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import cvxpy as cp
import numpy as np

from dpopt.compile.cvxpy_program import set_constraints
from dpopt.modeling.balls import L1Ball, L2Ball, LinfBall
from dpopt.modeling.boxes import Box, NonNegative, Simplex
from dpopt.modeling.constraint_set import ConstraintSet, Norm
from dpopt.modeling.intersection import Intersection
from dpopt.modeling.regularizers import L1Norm, L2Squared, Regularizer
from dpopt.modeling.structured_sets import GroupL1Ball, HPolytope, NuclearNormBall
from dpopt.modeling.submodular import (
    CallableSetFunction,
    Cardinality,
    ChainCut,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
    SetFunction,
)
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
from dpopt.modeling.vertex_polytope import VertexPolytope

__all__ = ["EXTERNAL_FIXTURES", "NORMS", "ORD", "REGULARIZER_FIXTURES", "REG_CASES", "SET_CASES",
           "SET_FIXTURES", "ShiftedL2Ball", "as_generic", "general_F", "hpolytope", "set_functions"]

NORMS: tuple[Norm, ...] = (1, 2, "inf")
ORD = {1: 1, 2: 2, "inf": np.inf}


def general_F() -> CallableSetFunction:
    """A submodular F with no exact cvxpy atom (the cutting-plane encoding)."""
    return CallableSetFunction(4, lambda m: math.sqrt(float(m.sum())) + 0.5 * float(m[0]), name="sqrt+modular")


def hpolytope() -> HPolytope:
    rng = np.random.default_rng(7)
    A = np.vstack([np.eye(3), -np.eye(3), rng.standard_normal((4, 3))])
    b = np.concatenate([np.full(6, 1.0), np.full(4, 1.2)])
    return HPolytope(A, b)


SET_FIXTURES: dict[type, dict[str, Callable[[], ConstraintSet]]] = {
    L1Ball: {"l1": lambda: L1Ball(5, 1.5)},
    L2Ball: {"l2": lambda: L2Ball(4, 2.0)},
    LinfBall: {"linf": lambda: LinfBall(4, 0.7)},
    Box: {"box": lambda: Box(4, np.array([-0.5, 0.0, 0.2, -1.0]), np.array([0.5, 1.5, 0.2, -0.3])),
          "box-scalar": lambda: Box(3, -0.4, 0.9)},
    NonNegative: {"orthant": lambda: NonNegative(4)},
    Simplex: {"simplex": lambda: Simplex(5, 2.5)},
    VertexPolytope: {"vpoly": lambda: VertexPolytope(np.random.default_rng(11).standard_normal((7, 3)))},
    GroupL1Ball: {"group-l1": lambda: GroupL1Ball(6, 1.2, [[0, 1], [2], [3, 4, 5]])},
    NuclearNormBall: {"nuclear": lambda: NuclearNormBall(6, 1.0, shape=(2, 3))},
    HPolytope: {"hpoly": hpolytope},
    Intersection: {
        "orthant-l1": lambda: Intersection(5, 0.0, np.inf, l1=2.0),
        "box-l2": lambda: Intersection(4, [-0.3, -1.0, 0.0, 0.0], [0.8, 0.2, 0.0, 1.0], l2=0.9),
        "sign-l2-fixed": lambda: Intersection(4, [0.0, -np.inf, 0.0, 0.0], [np.inf, 0.0, 0.0, np.inf], l2=1.5),
        "rows-box-l1": lambda: Intersection(4, 0.0, 1.0, G=[[1.0, -2.0, 0.5, 1.0], [0.3, 1.0, 1.0, -1.0]],
                                            h=[0.5, 0.8], l1=1.5),
        "rows-l2": lambda: Intersection(3, -np.inf, np.inf, G=[[1.0, 1.0, 0.0], [0.0, -1.0, 2.0]], h=[0.5, 0.3],
                                        l2=1.0),
        "equality-l1": lambda: Intersection(4, -np.inf, np.inf, E=[[1.0, 1.0, 1.0, 1.0]], e=[1.0], l1=3.0),
        "l1-l2": lambda: Intersection(4, -np.inf, np.inf, l1=1.5, l2=1.0),
    },
    SubmodularNormBall: {
        "omega-cardinality": lambda: SubmodularNormBall(4, Cardinality(4, 2.0), 1.0),
        "omega-indicator": lambda: SubmodularNormBall(3, Indicator(3), 1.0),
        "omega-owl1": lambda: SubmodularNormBall(4, ConcaveCardinality(4, np.sqrt), 1.5),
        "omega-coverage": lambda: SubmodularNormBall(4, GroupCoverage(4, [[0, 1], [1, 2, 3]]), 1.0),
        "omega-general": lambda: SubmodularNormBall(4, general_F(), 1.0),
    },
}

REGULARIZER_FIXTURES: dict[type, dict[str, tuple[Callable[[], Regularizer], bool]]] = {
    # name: (factory, whether a closed-form prox exists)
    L2Squared: {"l2sq": (lambda: L2Squared(4, 0.3), True)},
    L1Norm: {"l1": (lambda: L1Norm(4, 0.2), True)},
    SubmodularNorm: {
        "omega-cardinality": (lambda: SubmodularNorm(4, Cardinality(4), 0.2), True),
        "omega-disjoint-groups": (lambda: SubmodularNorm(4, GroupCoverage(4, [[0, 1], [2, 3]]), 0.3), True),
        "omega-chain": (lambda: SubmodularNorm(4, ChainCut(4), 0.3), False),  # overlapping blocks
        "omega-owl1": (lambda: SubmodularNorm(4, ConcaveCardinality(4, np.sqrt), 0.25), False),
        "omega-general": (lambda: SubmodularNorm(4, general_F(), 0.2), False),
    },
}


# ---------------------------------------------------------------------------
# A set defined outside dpopt, registered through the extension points
# ---------------------------------------------------------------------------


class ShiftedL2Ball(ConstraintSet):
    """``{v : ‖v − c‖₂ ≤ r}``: everything a set must provide, in one class."""

    exact_projection = True

    def __init__(self, c: np.ndarray, r: float) -> None:
        self.c = np.asarray(c, dtype=np.float64)
        self.r = float(r)
        self.dim = self.c.size

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        n = float(np.linalg.norm(g))
        return self.c.copy() if n == 0.0 else self.c - (self.r / n) * g

    def _project(self, v: np.ndarray) -> np.ndarray:
        d = v - self.c
        n = float(np.linalg.norm(d))
        return v.copy() if n <= self.r else self.c + (self.r / n) * d

    def center(self) -> np.ndarray:
        return self.c.copy()

    def _radius(self, norm: Norm) -> float:
        # ‖c + r u‖ ≤ ‖c‖ + r ‖u‖ over unit u in ℓ2, with ‖u‖₁ ≤ √p
        return float(np.linalg.norm(self.c, ORD[norm])) + self.r * (math.sqrt(self.dim) if norm == 1 else 1.0)

    def _diameter(self, norm: Norm) -> float:
        return 2.0 * self.r * (math.sqrt(self.dim) if norm == 1 else 1.0)

    @property
    def is_symmetric(self) -> bool:
        return False

    @property
    def n_vertices(self) -> float:
        return math.inf


@set_constraints.register
def _(constraint: ShiftedL2Ball, theta: cp.Variable) -> list[cp.Constraint]:
    return [cp.norm(theta - constraint.c, 2) <= constraint.r]


EXTERNAL_FIXTURES: dict[str, Callable[[], ConstraintSet]] = {
    "external-shifted-l2": lambda: ShiftedL2Ball(np.array([0.5, -0.2, 0.1]), 0.8),
}

SET_CASES = {name: f for per_class in SET_FIXTURES.values() for name, f in per_class.items()} | EXTERNAL_FIXTURES
REG_CASES = {name: case for per_class in REGULARIZER_FIXTURES.values() for name, case in per_class.items()}


def set_functions(p: int = 6) -> list[SetFunction]:
    """One submodular set function on ``p`` elements of each family, the last one generic."""
    return [
        Cardinality(p, 1.5), Indicator(p, 0.7), ConcaveCardinality(p, np.sqrt(np.arange(p + 1))),
        GroupCoverage(p, [[0, 1, 2], [2, 3], [4, p - 1], [0, p - 1]], [1.0, 2.0, 1.5, 0.5]),
        GroupCoverage(p, [[0, 1], [2, 3, 4], list(range(5, p)) or [4]]), ChainCut(p, 0.5, 0.2),
        CallableSetFunction(p, lambda m: math.sqrt(min(m.sum(), 3)) + float(m[:2].any()), name="mix"),
    ]


def as_generic(F: SetFunction) -> CallableSetFunction:
    """``F`` with no closed form: its values only (the cvxpy compiler's constraint-generation LP)."""
    return CallableSetFunction(F.p, F.value_mask, name="generic")
