"""The one run pipeline every mechanism goes through.

    public checks  →  charge (``ledger.spend``)  →  touch the data  →  release

1. *Public checks* (the caller, before :func:`run_private`): the problem's structure,
   calibration from declared constants, backend resolution and compilation limits read
   from declarations.  They may refuse; nothing is charged and the data is not read.
2. *Charge*: :func:`run_private` checks the budget, seeds the generator (OS entropy
   unless the user passes a seed) and charges the ledger in one ``with ledger.spend``.
3. *Touch the data*: the mechanism's ``work(rng)`` draws its noise, calls its oracles
   and returns an :class:`Outcome`.  If it raises, the charge stays spent and is marked
   unreleased.  Private runs are built so that ``work`` does not raise for data reasons
   (convex fallbacks with a-priori bounds, discrete oracles run to completion).
4. *Release*: only the noisy output, the public parameters and the public
   :class:`~dpopt.mechanisms.release.OracleCall` records go into the
   :class:`~dpopt.mechanisms.release.Release`.  The data-dependent solver record is
   kept in a :class:`~dpopt.mechanisms.release.Diagnostics` only when the caller asks
   (``keep_diagnostics=True``); an :class:`~dpopt.errors.UncertifiedOracleError`
   carries it under the same rule.

Putting the order in one function makes the privacy properties hold by construction for
every mechanism, including the next one written.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dpopt.backends.profiles import ExecutorSettings, profile_executor
from dpopt.backends.result import OracleResult
from dpopt.errors import UncertifiedOracleError
from dpopt.executors import DEFAULT, Executor, current_executor, resolve_executor, use_executor
from dpopt.mechanisms.release import Diagnostics, OracleCall, Release
from dpopt.privacy.calibration import Budget
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.rng import make_rng
from dpopt.privacy.strength import warn_weak_guarantee
from dpopt.progress import private_run


class Budgeted(Protocol):
    """What :func:`run_private` reads of the mechanism it runs: its guarantee, its ledger and its
    public names (every :class:`~dpopt.mechanisms.base.Mechanism` has them; typed structurally so
    that this module does not import the mechanisms it serves)."""

    @property
    def epsilon(self) -> float: ...

    @property
    def delta(self) -> float: ...

    @property
    def privacy_level(self) -> Budget: ...

    @property
    def ledger(self) -> Ledger: ...

    @property
    def name(self) -> str: ...

    @property
    def theorem(self) -> str: ...


@dataclass(frozen=True)
class Outcome:
    """What a mechanism's data-touching part returns to the pipeline.

    Attributes
    ----------
    theta : ndarray
        The noisy output.
    calls : tuple of OracleCall
        Public records of the solver calls.
    results : tuple of OracleResult
        The data-dependent solver results (diagnostics only).
    details : dict
        Other data-dependent facts (diagnostics only).
    parameters : dict
        Public parameters known only once the run is set up (added to the plan's).
    private : bool
        False only for an unsafe release (the charge is then marked unreleased).
    notes : tuple of str
        Public remarks.
    """

    theta: np.ndarray
    calls: tuple[OracleCall, ...] = ()
    results: tuple[OracleResult, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    private: bool = True
    notes: tuple[str, ...] = ()


def run_private(mechanism: Budgeted, work: Callable[[np.random.Generator], Outcome], *, problem: str,
                parameters: dict[str, Any], seed: int | None, keep_diagnostics: bool = False,
                notes: tuple[str, ...] = (), feature_names: tuple[str, ...] = (),
                executor: Any = None, solver: Any = None, n: int | None = None) -> Release:
    """Charge, run ``work`` on the data, and build the release (module docstring).

    Parameters
    ----------
    mechanism : Budgeted
        Supplies ε, δ, the ledger, the name and the theorem (a
        :class:`~dpopt.mechanisms.base.Mechanism`).
    work : callable
        ``work(rng) -> Outcome``: everything that touches the data.
    problem : str
        The problem's public summary (also the ledger label).
    parameters : dict
        The public parameters from the plan.
    seed : int, optional
        For reproducible noise only; by default OS entropy.
    keep_diagnostics : bool
        Keep the non-private solver record in ``release.diagnostics`` (and in an
        UncertifiedOracleError's ``diagnostics``).
    notes : tuple of str
        Public notes known before the run (e.g. a time limit's condition).
    feature_names : tuple of str
        Public names of θ's coordinates (``problem.feature_names``), carried into the release.
    executor : str, Executor, ExecutorSettings or dask Client, optional
        Where the parallel work runs (:func:`dpopt.executors.resolve_executor`); None: the
        executor already in use (a caller's ``use_executor``, an outer run's), else the solver
        profile's ``executor`` keys if ``solver`` is a profile, else in-process.  It is
        resolved (a cluster started, a scheduler reached) after the budget check and before
        the charge, so a bad address costs nothing; which worker ran what is never released.
    solver : str, path, SolverProfile or Backend, optional
        The run's solver (best: the profile the mechanism resolved), read only for a profile's
        ``executor``/``scheduler``/``workers``.
    n : int, optional
        The number of rows (public under replace-one): with it, δ ≥ 1/n warns before the charge
        (:func:`~dpopt.privacy.strength.warn_weak_guarantee`; ε > 10 warns in any case).

    Warns
    -----
    WeakGuaranteeWarning
        Before the charge, when ε > 10 or δ ≥ 1/n (the run goes on).
    """
    warn_weak_guarantee(mechanism.epsilon, mechanism.delta, n, stacklevel=5)
    mechanism.ledger.require(mechanism.privacy_level)  # checked at the mechanism's construction
    pool, owned = _executor_for(executor, solver)
    try:
        pool.start()  # before the charge: a pool that cannot start costs nothing
    except BaseException as exc:
        if owned:
            pool.close()
        if not (isinstance(exc, Exception) and _is_fallback(executor, solver)):
            raise
        pool, owned = current_executor(), False  # dpopt's own default pool: the run stays in-process
    rng, seed_info = make_rng(seed)
    closing = pool if owned else nullcontext(pool)  # close only what this run started
    with closing, mechanism.ledger.spend(mechanism.privacy_level, label=problem,
                                         mechanism=mechanism.name, parameters=parameters) as spend:
        try:
            with private_run(mechanism.name, diagnostics=keep_diagnostics), use_executor(pool):
                outcome = work(rng)
        except UncertifiedOracleError as exc:
            if not keep_diagnostics:
                exc.diagnostics = None
            raise
        if not outcome.private:
            spend.withhold()
    diagnostics = Diagnostics(outcome.results, dict(outcome.details)) if keep_diagnostics else None
    return Release(
        theta=np.asarray(outcome.theta, dtype=np.float64), epsilon=mechanism.epsilon, delta=mechanism.delta,
        mechanism=f"{mechanism.name} [{mechanism.theorem}]", parameters={**parameters, **outcome.parameters},
        oracle_calls=outcome.calls, seed=seed_info, private=outcome.private, problem=problem,
        notes=(*notes, *outcome.notes), feature_names=tuple(feature_names), diagnostics=diagnostics,
    )


def _is_fallback(executor: Any, solver: Any) -> bool:
    """Whether the run's pool is a default dpopt chose (``ExecutorSettings.fallback``), not the user's."""
    if executor is not None:
        return False
    settings = profile_executor(solver)
    return bool(settings is not None and settings.fallback)


def _executor_for(executor: Any, solver: Any) -> tuple[Executor, bool]:
    """The run's executor and whether the run owns it (and closes it at the end).

    The argument; else the executor already in use — a caller's
    :func:`~dpopt.executors.use_executor`, or the outer run of a nested one (PrivateSelection's
    candidates): never a second pool per candidate; else a solver profile's ``executor`` keys
    (``solver``: the profile the mechanism resolved, so it is not read again); else in-process.
    """
    if isinstance(executor, Executor):
        return executor, False
    if executor is None:
        current = current_executor()
        if current is not DEFAULT:
            return current, False
        executor = profile_executor(solver)
        if executor is None:
            return current, False
    if isinstance(executor, ExecutorSettings):
        return resolve_executor(executor.executor, scheduler=executor.scheduler, workers=executor.workers), True
    return resolve_executor(executor), True
