"""Errors raised by dpopt.

Every error derives from :class:`DpoptError` and from the built-in type a user
would expect (``ValueError``, ``ImportError``, ...), so ``except ValueError``
keeps working.  Messages name shapes, settings and bounds, never data values.

Every exception class of dpopt is defined here (``tests/contracts/test_layers.py`` checks it), also
the signals of dpopt's own tools, which are control flow rather than user errors and derive
from ``Exception`` only: :class:`AfterCharge` and :class:`ScriptFailure` (the command line)
and :class:`ChargeReached` (the harness of :mod:`dpopt.testing.declarations`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "AfterCharge",
    "BackendCapabilityError",
    "BackendUnavailableError",
    "BudgetExceededError",
    "BudgetWarning",
    "ChargeReached",
    "CliUsageError",
    "DataError",
    "DiagnosticsWarning",
    "DpoptError",
    "ExecutorError",
    "InvalidParameterError",
    "LedgerError",
    "LedgerProcessError",
    "MechanismError",
    "ModelError",
    "ModelScriptError",
    "PrivacyParameterError",
    "ScriptFailure",
    "SearchWarning",
    "SolverError",
    "SolverOptionError",
    "SpendingWarning",
    "UncertifiedOracleError",
    "UnknownBenchmarkError",
    "UnknownSolverError",
    "WeakGuaranteeWarning",
]


class DpoptError(Exception):
    """Root of every error dpopt raises."""


class ModelError(DpoptError, ValueError):
    """A problem, dataset, loss, set or regularizer is malformed."""


class DataError(ModelError):
    """Data has the wrong shape, non-finite entries or violates declared bounds."""


class PrivacyParameterError(DpoptError, ValueError):
    """epsilon, delta or another privacy setting is out of range."""


class MechanismError(DpoptError, ValueError):
    """A mechanism cannot be applied to the given problem (a missing constant, ...)."""


class UnknownSolverError(DpoptError, KeyError):
    """A solver name that no registered backend answers to."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the sentence readable
        return str(self.args[0]) if self.args else ""


class BackendUnavailableError(DpoptError, ImportError):
    """A backend is registered but its solver package is not installed or not usable."""


class BackendCapabilityError(DpoptError, ValueError):
    """A backend cannot solve this kind of problem (e.g. a non-smooth term for L-BFGS-B)."""


class SolverError(DpoptError, RuntimeError):
    """A solver failed in a way that yields no result at all."""


class BudgetExceededError(DpoptError, RuntimeError):
    """A release would spend more privacy budget than the ledger allows."""


class UncertifiedOracleError(DpoptError, RuntimeError):
    """An oracle call was not certified; nothing is released, the budget is spent.

    The message says what failed and how to fix it, never a number computed from the
    data.  Whether a run ends here can itself depend on the data, so such a run is not
    covered by the privacy guarantee unless the mechanism says otherwise (private runs
    of dpopt's mechanisms end here only on an opted-in time limit or a solver failure).

    Parameters
    ----------
    message : str
        What happened and what to do about it.
    diagnostics : Diagnostics, optional
        The solver diagnostics (**not private**): attached only when the run was asked
        for them (``keep_diagnostics=True``), else None.
    """

    def __init__(self, message: str, diagnostics: Any = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


class LedgerError(DpoptError, ValueError):
    """A ledger file is missing, is not a dpopt ledger, lacks the dataset, or cannot be used."""


class LedgerProcessError(LedgerError):
    """A ledger that cannot be charged from the current process: a copy of an in-memory
    :class:`~dpopt.privacy.ledger.Ledger` sent to (or forked into) another process, or the
    default ledger inside a worker process.  Raised before anything is charged or read."""


class ExecutorError(DpoptError, ValueError):
    """An executor name, option or scheduler address that cannot be used, or a worker pool that
    cannot start (:mod:`dpopt.executors`); raised before any budget is charged."""


class BudgetWarning(UserWarning):
    """A fit was refused because the ledger's budget is exhausted.

    scikit-learn's model selection (``cross_val_score``, ``GridSearchCV``, ...) catches a
    failed fit and records a NaN score unless it is given ``error_score="raise"``; this
    warning makes the refusal visible before the :class:`BudgetExceededError` is raised.
    """


class DiagnosticsWarning(UserWarning):
    """A fit's private diagnostic count is clearly large: the declaration probably does not fit
    the table (:mod:`dpopt.sklearn.diagnostics`; the message names the setting to check)."""


class SpendingWarning(BudgetWarning):
    """The default ledger's total spending in this process passed a public threshold.

    :class:`~dpopt.privacy.ledger.DefaultLedger` (no budget) warns once per process when the ε
    it has charged passes :data:`~dpopt.privacy.ledger.SPENDING_WARNING_EPSILON`; it depends only
    on the amounts charged, never on data.  Fix a budget with ``dp.Ledger(epsilon_budget=...)``.
    """


class SearchWarning(UserWarning):
    """A private search declined to search: at its budget the noisy scores cannot tell the candidates
    apart, so it fitted the estimator as given (:class:`dpopt.sklearn.DPSearchCV`; public facts only)."""


class WeakGuaranteeWarning(UserWarning):
    """(ε, δ) valid but too weak to protect anyone: ε above 10, or δ ≥ 1/n
    (:mod:`dpopt.privacy.strength`).  The run goes on; the warning is raised before the charge."""


# -- mechanism settings, solver profiles, benchmarks, the command line, the test harness --


class InvalidParameterError(MechanismError, PrivacyParameterError):
    """A mechanism setting of the wrong type or out of range (raised before anything is charged)."""


class SolverOptionError(ModelError):
    """A solver profile's ``[options]`` entry that the solver does not know or cannot take."""


class UnknownBenchmarkError(DpoptError, KeyError):
    """A benchmark name that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the sentence readable
        return str(self.args[0]) if self.args else ""


class CliUsageError(ModelError):
    """A command-line value that ``dpopt solve`` refuses before anything is charged."""


class ModelScriptError(ModelError):
    """A model script is missing, malformed, or breaks the parameter contract."""


class ScriptFailure(Exception):
    """User code in a model script raised a non-dpopt exception.

    The original exception is ``__cause__``; the CLI prints its traceback.
    """

    def __init__(self, path: Path, stage: str) -> None:
        super().__init__(f"model script {path.name} raised an exception while {stage}")
        self.path = path
        self.stage = stage


class AfterCharge(Exception):
    """A run that failed after the ledger was charged (the record is written); exit 1."""


class ChargeReached(Exception):  # noqa: N818 — a signal, not an error
    """Raised by :class:`~dpopt.testing.declarations.StopAtCharge` where a run would be charged; holds the charge."""

    def __init__(self, epsilon: float, delta: float, label: str, mechanism: str,
                 parameters: Mapping[str, Any] | None) -> None:
        super().__init__("the run reached its charge")
        self.charge = {"epsilon": epsilon, "delta": delta, "label": label, "mechanism": mechanism,
                       "parameters": dict(parameters or {})}
