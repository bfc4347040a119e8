"""How a convex mechanism meets the declared constraint set: the superset it solves over, the
sentence its release carries about the projection, and the refusal of an unbounded domain.

A set without a closed-form projection is solved over its declared closed-form superset
(:meth:`~dpopt.modeling.constraint_set.ConstraintSet.relaxation`) and the release projected
onto the set: a function of the noisy output only, so the relaxed run's guarantee holds for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpopt.errors import MechanismError
from dpopt.modeling.problem import Problem

__all__ = ["relaxed_problem", "release_projection", "unbounded_lipschitz"]


def relaxed_problem(problem: Problem) -> tuple[Problem, bool]:
    """``(problem to solve, relaxed)``: the problem over its set's :meth:`~ConstraintSet.relaxation`
    when the set has no closed-form projection but a superset with one (public: the set's
    declarations only).  Solving over a superset and projecting the release onto the set is
    post-processing, so the guarantee of the relaxed run holds for the projected release."""
    c = problem.constraint
    if c is None or c.exact_projection:
        return problem, False
    relaxed = c.relaxation()
    if relaxed is None or relaxed is c or not relaxed.exact_projection:
        return problem, False
    return replace(problem, constraint=relaxed), True


def release_projection(c: Any) -> str | None:
    """The public sentence a release carries about its projection onto the declared set."""
    if c is None:
        return None
    where = ("clipped to the grid points inside its bounds" if c.grid_projection
             else "Euclidean projection of the grid values")
    return f"onto the declared {type(c).__name__} after the noise ({where}; post-processing)"


def unbounded_lipschitz(problem: Problem, name: str) -> MechanismError:
    """The refusal of a loss without a Lipschitz constant on the problem's domain, keeping the
    constraints the user declared and naming the missing upper bound."""
    c = problem.constraint
    if c is None:
        return MechanismError(
            f"the {problem.loss.name} loss is not Lipschitz on an unbounded domain, so {name} has no finite "
            "sensitivity; add an upper bound: constraint=dp.norm2(w) <= R (or dp.L2Ball(w, R))")
    return MechanismError(
        f"the {problem.loss.name} loss is not Lipschitz on {type(c).__name__}, which is unbounded, so {name} has no "
        "finite sensitivity; keep it and add the missing upper bound: constraint=[..., dp.norm2(w) <= R] or "
        "[..., w <= u] (estimators: bounds=(0, u) or radius=R)")
