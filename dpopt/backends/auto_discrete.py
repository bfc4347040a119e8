"""``solver="auto"`` for the discrete (0/1-loss) mechanisms: the oracle chosen from declarations.

OPDisc, RSPM and OPSamp call an exact MIP oracle on a
:class:`~dpopt.modeling.discrete.DiscreteProblem`.  Which backend answers fastest depends on
the problem's structure, and the choice is part of what an analyst observes (the release
names the backend), so it is a pure function of public declarations: the data's
:class:`~dpopt.modeling.schema.Schema`, n (public in the replace-one model), the grid
(step, levels, ℓ2 bound) and the dimension d.  It never reads a value of the data, and it
never falls back on what a solver did.

The rule (:func:`discrete_candidates`, in order; :func:`choose_discrete` takes the first
whose package is installed):

1. ``bruteforce`` when the grid is tiny: its K^d points (K levels per coordinate) are
   within the brute-force backend's own limit (:data:`dpopt.backends.bruteforce.MAX_POINTS`)
   and K^d·n ≤ :data:`BRUTEFORCE_WORK` (the size of the exact margin matrix it evaluates per
   call, about 80 MB).  Exhaustive enumeration is exact by construction and takes about a
   second even at twice the bound, where a MIP solver may need minutes (measured: d = 10,
   K = 3, n = 300, low noise: 0.6–1.4 s against > 60 s for ``highs`` and ``cpsat``).  A row loss
   (:mod:`dpopt.modeling.row_losses`) evaluates groups of identical rows in chunks of points, so
   its bound is points × the declared row groups (``RowLoss.declared_groups``: n, or fewer when
   the schema allows fewer distinct rows) ≤ :data:`ROW_LOSS_WORK`, on any domain: measured, a
   sparse scoring domain of 53,719 points over 256 declared groups takes 1.3 s per call against
   22 s for ``cpsat`` verified by ``scip``.
2. ``highs-grouped`` when the schema makes the grouped decomposition applicable within its
   declared size limits: the automatic split (the columns the schema declares non-binary
   are enumerated, :func:`~dpopt.compile.mip_grouped.auto_split`) passes
   :func:`~dpopt.compile.mip_grouped.declared_size` and
   :func:`~dpopt.compile.mip_grouped.check_declared_size` — the same public checks the
   backend makes before it reads the data.  On one-hot data such as Adult it certifies the
   full n = 15,682 in seconds per call where the big-M models do not finish in minutes.
3. Otherwise the per-row big-M formulations, in their declared ``auto_rank``
   (:func:`auto_ranked`): ``cpsat`` first, then ``highs``. Measured on problems without
   grouped structure (d = 10 or 16 numeric columns, K = 3, n = 100–1000, OPDisc noise at
   0.05–1× its scale, 27 draws, 60 s per call, 1 thread): CP-SAT proved every draw HiGHS
   proved plus two more (n = 300 at low noise; n = 1000 at the mechanism's noise, 39 s) and
   found better incumbents on three draws where neither finished; HiGHS was faster only on
   easy draws, by seconds at most. Private mode runs every call to completion, so finishing
   hard draws matters more than shaving easy ones (and HiGHS 1.14 once reported a wrong
   "optimal" on a big-M Adult model, README).

Availability of a package is a fact about the installation, not the data.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpopt.backends.base import Backend
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.discrete import DiscreteProblem

#: largest K^d · n for which ``auto`` enumerates the grid (K^d points × n exact margins per call)
BRUTEFORCE_WORK = 10_000_000
#: the same for a row loss, whose exact evaluation runs over declared row groups in chunks of points
#: (no points × n matrix): points × groups integer scores, about a second at this size
ROW_LOSS_WORK = 200_000_000


@dataclass(frozen=True)
class DiscreteChoice:
    """A backend chosen by ``solver="auto"`` and the public reason for it."""

    backend: str
    reason: str


def bruteforce_reason(problem: DiscreteProblem) -> str | None:
    """Why enumeration applies (module docstring, item 1), or None when the grid is too large."""
    from dpopt.backends.bruteforce import MAX_POINTS, grid_points

    points = grid_points(problem)
    rows, what, work = int(problem.loss.data.n), "n", BRUTEFORCE_WORK
    if not problem.halfspace:  # row losses evaluate groups of identical rows: a declared bound on them
        rows, what, work = problem.loss.declared_groups(), "declared row groups", ROW_LOSS_WORK
    if points > MAX_POINTS or points * rows > work:
        return None
    return (f"bruteforce: the grid has {points} points and {points} × {what} = {points * rows} ≤ {work} "
            "(exhaustive enumeration, exact by construction)")


def grouped_reason(problem: DiscreteProblem) -> tuple[str | None, str]:
    """(why the grouped decomposition applies or None, why not) from the schema, n and the grid.

    The checks are those :func:`~dpopt.compile.mip_grouped.compile_grouped` makes before it
    reads the data (module docstring, item 2).
    """
    from dpopt.compile.mip_grouped import auto_split, check_declared_size, declared_size

    if not problem.halfspace:
        return None, "the grouped decomposition is for the 0/1-loss halfspace only"
    schema = problem.loss.data.schema
    try:
        S = auto_split(schema)  # type: ignore[arg-type]
        size = declared_size(problem, S)
        check_declared_size(size)
    except ModelError as exc:
        return None, f"the grouped decomposition does not apply ({exc})"
    return (f"highs-grouped: the schema declares {S.size} non-binary columns ({size.points} enumerated grid "
            f"points) and bounds the per-point MIP at {size.columns} binaries, within the grouped limits"), ""


def discrete_candidates(problem: DiscreteProblem) -> tuple[DiscreteChoice, ...]:
    """The backends ``auto`` considers for ``problem``, best first (module docstring).

    A pure function of the declarations (schema, n, grid, d): neighbouring datasets, which
    share them, get the same tuple.

    Raises
    ------
    BackendCapabilityError
        If ``problem`` is not a :class:`~dpopt.modeling.discrete.DiscreteProblem`.
    """
    if not isinstance(problem, DiscreteProblem):
        raise BackendCapabilityError(f"the discrete 'auto' rule needs a DiscreteProblem, got {type(problem).__name__}")
    brute = bruteforce_reason(problem)
    grouped, why_not = grouped_reason(problem)
    why = ([] if brute is not None else ["the grid is too large to enumerate"]) + ([why_not] if why_not else [])
    because = "; ".join(why) if why else "the preferred backends are not installed"
    model = "the per-row big-M MIP" if problem.halfspace else "the integer model of the row loss"
    rules = {"enumeration": brute, "grouped": grouped}  # items 1 and 2: where their rule applies
    out: list[DiscreteChoice] = []
    for backend in auto_ranked():
        reason = rules.get(backend.formulation, f"{backend.name}: {model}, since {because}")
        if reason is not None:
            out.append(DiscreteChoice(backend.name, reason))
    return tuple(out)


def auto_ranked() -> list[Backend]:
    """The MIP backends ``auto`` may choose, in their declared order (``auto_rank``): the enumeration
    and the grouped decomposition where their rule applies, then the big-M fallbacks (module
    docstring, item 3)."""
    from dpopt.backends import registry

    return registry.ranked(lambda b: b.auto_rank if b.kind == "mip" else None)


def choose_discrete(problem: DiscreteProblem) -> DiscreteChoice:
    """The first of :func:`discrete_candidates` whose solver package is installed.

    Raises
    ------
    BackendCapabilityError
        If none is installed (the message lists what is missing).
    """
    from dpopt.backends import registry

    missing = []
    for choice in discrete_candidates(problem):
        if choice.backend in registry.names() and registry.get(choice.backend).available():
            return choice
        missing.append(choice.backend)
    raise BackendCapabilityError("no installed backend can solve this discrete problem; install highspy or "
                                 f"ortools (not installed: {', '.join(missing)})")
