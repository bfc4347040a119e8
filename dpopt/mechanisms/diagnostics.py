"""Private diagnostics: noisy counts of what a declaration did to a table.

A private run cannot look at its table for free, but it can count privately.  The counts are
of the kind "rows whose label matched no declared class", "rows clipped to the declared
bound", "entries of column c clipped, rounded, unseen or missing": each row adds at most one
to each of the m declared counts, so replacing one row moves the vector by at most one per
coordinate, ℓ1 sensitivity m.  Which counts are taken is a function of the declarations only.

:class:`DiagnosticCounts` releases them with exact discrete Laplace noise on the integers
(CKS20: the discrete Laplace of scale t on ℤ^m is (m/t)-DP for integer vectors at ℓ1 distance
m; t = m/ε here, rounded up onto 2⁻¹⁰ℤ: a larger t only adds noise), pure ε-DP, drawn by dpopt's exact
sampler (:class:`dpopt.privacy.grid.GridNoise` with γ = 1: counts are on the grid already).

:class:`WithDiagnostics` runs a mechanism and the counts as one release and one charge: the
mechanism keeps (1 − s)ε and δ, the counts get sε (s = :data:`DIAGNOSTICS_SHARE`), and basic
composition gives (ε, δ) — the ledger row and the release state the share
(``parameters["diagnostics"]``); the noisy counts are ``parameters["noisy_diagnostic_counts"]``
(a further noisy output, covered by the same (ε, δ)).  The budget check, the charge and every
public check happen before either part reads the data; the counts are computed after the
charge by the query's own function.

Two front ends build the query.  ``Mechanism.run`` on a problem over a
:class:`~dpopt.modeling.dataset.Dataset` (:meth:`WithDiagnostics.around`, unless
``run(..., diagnostics=False)``): the counts are the dataset's own
:class:`~dpopt.modeling.changes.TableChanges`, marked while its rows were mapped onto the
declarations (for a Dask-backed dataset lazily, by each partition's map call:
:mod:`dpopt.modeling.lazy_marks`; summed per partition by the query's function), and the model's
mechanism is a copy of the caller's with (1 − s)ε.  The estimators
(:mod:`dpopt.sklearn.diagnostics`) declare theirs from their settings.  Not wrapped:
a run inside another private run (a selection's candidates: the outer run's data), a
mechanism that derives its calibration from ε when it is built (``rebudgets = False``), a
problem without a dataset (a callable).

Once both parts have run, :func:`warn_if_large` raises one :class:`~dpopt.errors.DiagnosticsWarning`
for the largest count that is clearly large: its noisy value, less ten noise scales (a margin a
count of zero exceeds with probability below e⁻¹⁰), is at least :data:`ALARM_SHARE` of the rows.
The message reads only noisy counts and declarations (post-processing).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from dpopt.errors import DiagnosticsWarning, MechanismError
from dpopt.mechanisms.base import Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.params import Instance, Interval, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.privacy.calibration import Budget
from dpopt.privacy.grid import GridNoise

__all__ = ["ALARM_SCALES", "ALARM_SHARE", "DIAGNOSTICS_SHARE", "CountQuery", "DiagnosticCounts", "WithDiagnostics",
           "counts_law", "data_query", "split_budget", "warn_if_large"]

#: the share of a fit's ε its diagnostics spend (the rest goes to the model)
DIAGNOSTICS_SHARE = 0.02
#: the noise scale is rounded up onto 1/_T_GRID
_T_GRID = 1024
#: a noisy count warns when its value less ALARM_SCALES noise scales is at least this share of n
ALARM_SHARE = 0.1
ALARM_SCALES = 10.0
#: per count name, (what it counts, the fix): the wording of :func:`warn_if_large`
Wording = Mapping[str, tuple[str, str]]


@dataclass(frozen=True)
class CountQuery:
    """The declared counts of a table: their public names and the function that takes them.

    Attributes
    ----------
    names : tuple of str
        One public name per count (from the declarations only).
    n : int
        The number of rows (public under replace-one); each count lies in [0, n].
    count : callable
        ``count() -> array of m integers``, each a number of rows (a row adds at most one to
        each); called after the charge only.
    """

    names: tuple[str, ...]
    n: int
    count: Callable[[], Any]

    def summary(self) -> str:
        """The public description (the ledger label)."""
        return f"{len(self.names)} diagnostic counts over n={self.n} rows"


def data_query(problem: Any) -> tuple[CountQuery, dict[str, tuple[str, str]]] | None:
    """The counts of what the declarations did to a problem's dataset, and their wording.

    Reads the dataset's public count names only; the counts themselves are read by the query's
    function, after the charge (a Dask-backed dataset's marks are then summed per partition).
    None when the problem holds no dataset (a callable) or it declares nothing to count.
    """
    data = getattr(getattr(problem, "loss", None), "data", None)
    changes = getattr(data, "declaration_changes", None)
    if data is None or changes is None or not changes.names:
        return None
    return CountQuery(tuple(changes.names), int(data.n), changes.counts), dict(zip(changes.names, changes.wording,
                                                                                   strict=True))


def warn_if_large(owner: str, counts: Mapping[str, float], noise_scale: float, share: float, wording: Wording,
                  n: int) -> None:
    """One :class:`DiagnosticsWarning` for the largest clearly large noisy count (module docstring)."""
    if not counts or n <= 0:
        return
    margin = ALARM_SCALES * float(noise_scale)
    large = {name: v for name, v in counts.items() if v - margin >= ALARM_SHARE * n}
    if not large:
        return
    name = max(large, key=lambda k: large[k])
    what, fix = wording.get(name, (name, "check the declarations"))
    percent = min(100, max(0, round(100 * large[name] / n)))
    warnings.warn(f"{owner}: about {percent} % of {what} (a noisy count, {100 * float(share):.3g} % of ε): {fix}",
                  DiagnosticsWarning, stacklevel=2)


def counts_law(m: int, epsilon: float) -> GridNoise:
    """Exact discrete Laplace noise on ℤ^m for m counts of ℓ1 sensitivity m: scale t = m/ε rounded up
    onto the dyadic grid 2⁻¹⁰ℤ (a rational with a small denominator for the exact sampler)."""
    if m < 1:
        raise MechanismError("a diagnostics query needs at least one count")
    return GridNoise("laplace", 1.0, Fraction(math.ceil(Fraction(m) / Fraction(epsilon) * _T_GRID), _T_GRID))


def split_budget(epsilon: float, share: float = DIAGNOSTICS_SHARE) -> tuple[float, float]:
    """(the model's ε, the diagnostics' ε): (1 − s)ε and the rest, summing to at most ε."""
    counts = share * float(epsilon)
    model = float(epsilon) - counts
    while model + counts > float(epsilon):
        model = math.nextafter(model, 0.0)
    return model, counts


@dataclass(frozen=True, kw_only=True)
class CountsPlan(Plan):
    """A planned diagnostics release: the noise law of the counts."""

    law: GridNoise


class DiagnosticCounts(Mechanism):
    """Noisy counts of a :class:`CountQuery`, pure ε-DP (module docstring).

    Parameters
    ----------
    epsilon : float
        ε > 0 of the counts.
    ledger : Ledger, optional
        Where a standalone run is charged.
    """

    name = "DiagnosticCounts"
    theorem = "discrete Laplace on integer counts of ℓ1 sensitivity m (CKS20)"
    problem_type = CountQuery
    problem_refusal = "run() needs a dpopt CountQuery, got {got}"
    needs = SolverNeed.NONE

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 0, closed="both", why="the counts are pure ε-DP: delta is 0")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Any = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)

    def law(self, query: CountQuery) -> GridNoise:
        """The noise law of the counts (a hook for mutation tests)."""
        return counts_law(len(query.names), self.epsilon)

    def plan(self, problem: CountQuery, options: RunOptions | None = None) -> CountsPlan:
        """The noise law from the number of counts and ε (public)."""
        law = self.law(problem)
        params = {"counts": list(problem.names), "noise": "discrete-laplace", "noise_scale": float(law.param),
                  "l1_sensitivity": len(problem.names), "neighbouring": "replace-one"}
        return CountsPlan(problem=problem, parameters=params, summary=problem.summary(), n=problem.n,
                          feature_names=problem.names, law=law)

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Take the exact counts, clip them to [0, n], add the noise."""
        assert isinstance(plan, CountsPlan)
        query: CountQuery = plan.problem
        exact = np.clip(np.rint(np.asarray(query.count(), dtype=np.float64)), 0, query.n)
        if exact.shape != (len(query.names),):
            exact = np.zeros(len(query.names))  # never for the queries dpopt builds; the shape is public
        return Outcome(theta=plan.law.release(exact, rng))


@dataclass(frozen=True, kw_only=True)
class DiagnosedPlan(Plan):
    """A mechanism's plan and its diagnostics' plan, released together."""

    inner: Plan
    counts: CountsPlan


class WithDiagnostics(Mechanism):
    """A mechanism and its table's :class:`DiagnosticCounts` in one release and one charge.

    Parameters
    ----------
    inner : Mechanism
        The model's mechanism, built with its share of ε (:func:`split_budget`); its δ and
        ledger are the release's.
    counts : DiagnosticCounts
        The diagnostics, with the rest of ε.
    query : CountQuery
        The declared counts.
    wording : mapping, optional
        Per count name, (what it counts, the fix): with it, one warning after the run when a noisy
        count is clearly large (:func:`warn_if_large`); without it, none.
    owner : str, optional
        Who the warning names (default the inner mechanism's name).

    The release's ε is the sum of the two (basic composition), its δ the inner mechanism's,
    and its ``mechanism`` the inner mechanism's name; θ is the inner mechanism's output.
    """

    name = "WithDiagnostics"
    theorem = "basic composition of the model's mechanism and DiagnosticCounts"
    problem_type = object
    multi_output = True  # the inner mechanism's check_problem decides
    #: its own settings only: ε, δ and the ledger are the inner mechanism's and the counts'
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "inner": [Instance(Mechanism, what="a dpopt Mechanism")],
        "counts": [Instance(DiagnosticCounts, what="a DiagnosticCounts")],
        "query": [Instance(CountQuery, what="a CountQuery")],
        "wording": [Instance(Mapping, what="a mapping of count name to (what, fix)"), None],
        "owner": [Instance(str, what="a name"), None],
    }

    def __init__(self, inner: Mechanism, counts: DiagnosticCounts, query: CountQuery, *,
                 wording: Wording | None = None, owner: str | None = None) -> None:
        # ε, δ and the ledger come from the two mechanisms, each validated when it was built
        self._privacy_level = Budget(inner.epsilon + counts.epsilon, inner.delta)  # basic composition
        self.ledger = inner.ledger
        self.inner, self.counts, self.query = inner, counts, query
        self.wording, self.owner = wording, owner if owner is not None else inner.name
        # the release and the ledger row name the model's mechanism; the theorem adds the composition
        self.__dict__["name"] = inner.name
        self.__dict__["theorem"] = f"{inner.theorem}; with DiagnosticCounts (basic composition)"

    @classmethod
    def around(cls, mechanism: Mechanism, problem: Any) -> Mechanism:
        """``mechanism`` with its problem's data diagnostics, or itself (module docstring).

        A copy of ``mechanism`` with (1 − s)ε runs the model; the counts get sε
        (:func:`split_budget`), so the release and the charge keep the caller's (ε, δ).  Public
        facts only: the classes, the problem's declared count names.
        """
        if isinstance(mechanism, cls) or not mechanism.rebudgets:
            return mechanism
        found = data_query(problem)
        if found is None:
            return mechanism
        query, wording = found
        model, counts = split_budget(mechanism.epsilon)
        # its settings are read in plan(); ε is the one that changes.  Built from the checked
        # mechanism and shares of its checked ε: nothing to check again
        twin = mechanism.with_privacy_level(Budget(model, mechanism.delta))
        return cls.prevalidated(twin, DiagnosticCounts.prevalidated(counts), query, wording=wording,
                                owner=mechanism.name)

    def solver_need(self, problem: Any) -> SolverNeed:
        """The inner mechanism's."""
        return self.inner.solver_need(problem)

    def plan(self, problem: Any, options: RunOptions | None = None) -> DiagnosedPlan:
        """Both plans (public checks and calibration of each, before the charge)."""
        self.inner.check_problem(problem)
        inner = self.inner.plan(problem, options)
        counts = self.counts.plan(self.query)
        summary, n, names = inner.described()
        share = self.counts.epsilon / self.epsilon
        params = {**inner.parameters,
                  "diagnostics": {"epsilon": self.counts.epsilon, "share": share, **counts.parameters}}
        return DiagnosedPlan(problem=problem, parameters=params,
                             summary=f"{summary} + diagnostics ({100 * share:.3g} % of ε)", n=n,
                             feature_names=names, notes=inner.notes, profile=inner.profile,
                             needs=inner.needs if inner.needs is not None else self.inner.solver_need(problem),
                             inner=inner, counts=counts)

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """The counts, then the inner mechanism, on the same generator; then the warning (noisy
        counts only) when a count is clearly large."""
        assert isinstance(plan, DiagnosedPlan)
        noisy = self.counts.execute(plan.counts, rng).theta
        out = self.inner.execute(plan.inner, rng)
        counts = {name: float(v) for name, v in zip(self.query.names, noisy, strict=True)}
        if self.wording is not None:
            warn_if_large(self.owner, counts, float(plan.counts.law.param), self.counts.epsilon / self.epsilon,
                          self.wording, self.query.n)
        return replace(out, parameters={**out.parameters, "noisy_diagnostic_counts": counts})
