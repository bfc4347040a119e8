"""``dpopt solve``: run the mechanism of a model script once and print the release.

Checks before the charge
------------------------
``dpopt solve`` checks everything it can before the privacy ledger is charged, in this
order, and refuses with one line on stderr and exit code 2 (:mod:`dpopt.cli.checks`): the
arguments (``--threads`` ≥ 1, ``--time-limit`` > 0, ``--ledger`` together with
``--dataset``: the parser, :mod:`dpopt.cli.main`); the ``--json`` path (not a directory, its
folder exists and is writable; no folder is ever created); the solver and its profile,
including the profile's ``[options]`` against the solver's own settings
(:mod:`dpopt.backends.options`); the ledger file and dataset; the script's parameters and
(ε, δ); the budget (``ledger.require``) before the script builds its data; then, with the
mechanism built, that an explicit ``--solver``/``--threads``/``--time-limit`` is not given to
a mechanism that calls no solver (``Mechanism.solver_need`` is ``SolverNeed.NONE``), and the budget again.

An ε above :data:`~dpopt.privacy.strength.LARGE_EPSILON` (10) runs, with ``warning: ε = ...
gives no meaningful privacy`` on stderr: at such ε the guarantee ``e^ε`` bounds nothing an
analyst would notice; a δ ≥ 1/n runs with ``warning: δ = ... is at least 1/n``
(:mod:`dpopt.privacy.strength`; the Python API raises the same sentences as
``WeakGuaranteeWarning``).

The JSON record (``--json OUT``)
--------------------------------
A released run writes ``release.to_dict()`` (theta, guarantee, parameters, feature names,
...) plus ``"run"``: the dpopt version, the model path, the final params dict, the UTC start
time (ISO 8601; taken before the data is touched, so it says nothing about the run's
duration), the command line and ``"status": "released"``; and, when the script defines
``evaluate(release)``, its result under ``"evaluation_not_private"`` (below), so runs can be
compared from their records.  A run that fails *after* the
charge writes ``{"status": "withheld" | "failed", "mechanism", "epsilon", "delta",
"charge_ids", "error": {"type", "message"}, "run"}``: the budget was spent, nothing was
released; ``charge_ids`` are the ledger row ids of the run's own charge (its ``spend``,
made through the run's ledger object; absent for an in-memory ledger), never another
process's charge of the same mechanism.  The message is the dpopt error's (public by
design); other exceptions keep only their type.

The ledger
----------
The run's charge records the model (the script path as given), the mechanism, the solver as
given (``--solver``, ``auto`` by default) and the command line
(:func:`~dpopt.privacy.ledger.charge_context`): ``dpopt ledger history`` shows them for an
``--ledger`` file.  All are the user's own inputs, nothing computed from data.  Without
``--ledger`` the run is charged to the process's default ledger; its once-per-process
:class:`~dpopt.errors.SpendingWarning` is not shown, since one ``dpopt solve`` makes one run and
an ε above 10 already gets its ``warning:`` line.

Privacy of the output
---------------------
Everything ``dpopt solve`` prints or writes by default is public: the release's summary
and JSON (noisy output, guarantee, public parameters and solver names), messages that
name no data values.  ``--diagnostics`` adds the solvers' record and the wall time —
computed from the data without noise, printed to stderr under a NOT PRIVATE banner.

A run over an in-memory Dataset spends 2 % of ε on *private* counts of what the declarations
did to the data (rows clipped, entries clipped, rounded, unseen or missing per column,
unmatched or missing labels; :mod:`dpopt.mechanisms.diagnostics`): noisy, part of the release,
printed in its summary under ``diagnostics:``, and, when one is clearly large, a ``warning:``
line on stderr naming the fix.  ``--no-counts`` spends nothing on them.

The script's ``evaluate(release)`` is the exception, and is marked as one.  It receives only
the release (public), but it is the script's own code and may read anything, the private
training data included (``models/private_mirror_descent.py`` computes the training loss and
the exact non-private optimum), so dpopt cannot tell a held-out score from a statistic of the
private data.  Every evaluation is therefore treated as NOT private: printed after the
release under an ``evaluation (NOT PRIVATE ...)`` heading, and written to ``--json`` only
under the key ``"evaluation_not_private"``, never among the release's own fields.  Share it
only if what it read may be shared.
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dpopt import __version__
from dpopt.cli.checks import (
    check_output_path,
    check_solver_use,
    executor_settings,
    open_ledger,
    warn_weak_guarantee,
)
from dpopt.cli.console import err, out
from dpopt.cli.exits import EXIT_OK, EXIT_UNCERTIFIED
from dpopt.cli.model_script import build_model, load_model_script, parse_set, resolve_params
from dpopt.errors import (
    AfterCharge,
    DiagnosticsWarning,
    DpoptError,
    ScriptFailure,
    SpendingWarning,
    UncertifiedOracleError,
    WeakGuaranteeWarning,
)
from dpopt.privacy.ledger import charge_context

__all__ = ["EVALUATION_KEY", "run"]

#: the ``--json`` key of the script's ``evaluate(release)``: not private (module docstring)
EVALUATION_KEY = "evaluation_not_private"


def run(args: argparse.Namespace) -> int:
    """``dpopt solve`` with the parsed ``args``; returns the exit code (errors raise)."""
    from dpopt.backends.profiles import resolve

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")  # before the data is touched
    # Public checks first, before the script loads any data; nothing is charged.
    if args.json is not None:
        check_output_path(args.json)
    parse_set(args.set)  # malformed items fail here
    executor_settings(args)  # --scheduler without dask fails here
    if args.solver.lower() != "auto":
        backend, _ = resolve(args.solver)  # unknown names, bad profiles and options fail here
        backend.require()
    ledger = open_ledger(args)
    try:
        return _solve_with(args, ledger, started)
    finally:
        if ledger is not None:
            ledger.close()


def _solve_with(args: argparse.Namespace, ledger: Any, started: str) -> int:
    """``dpopt solve`` from the script on (the cheap checks are done, ``ledger`` is open or None)."""
    script = load_model_script(args.model)
    params = resolve_params(script, parse_set(args.set), epsilon=args.epsilon, delta=args.delta)
    warned = warn_weak_guarantee(float(params["epsilon"]), 0.0) if "epsilon" in params else []
    if ledger is not None and "epsilon" in params:
        ledger.require(float(params["epsilon"]), float(params.get("delta", 0.0)))  # before build()
    if params:
        out(f"model: {script.path}  params: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    else:
        out(f"model: {script.path}")
    problem, mechanism = build_model(script, params)
    check_solver_use(mechanism, problem, args)
    warn_weak_guarantee(mechanism.epsilon, mechanism.delta, _rows(problem), already=warned)
    if ledger is not None:
        mechanism.ledger = ledger
    mechanism.ledger.require(mechanism.epsilon, mechanism.delta)
    run_info = {"dpopt_version": __version__, "model": str(script.path), "params": params,
                "timestamp": started, "command": shlex.join(["dpopt", *args.argv])}

    release, elapsed, warned_counts = _run(mechanism, problem, args, run_info)
    out(release.summary())
    for line in warned_counts:
        err(f"warning: {line}")
    if release.diagnostics is not None:
        err(release.diagnostics.summary())
        err(f"  wall time: {elapsed:.3f}s (NOT private)")
    metrics, failure = _evaluate(script, release)  # printed last; a failure raises once the release is saved
    if args.json is not None:
        record = {**release.to_dict(), "run": {**run_info, "status": "released"}}
        if script.evaluate is not None and failure is None:
            record[EVALUATION_KEY] = _plain(metrics)
        _write_json(args.json, record)
        out(f"release written to {args.json}")
    if ledger is not None:
        eps, dlt = ledger.remaining
        out(f"charged to dataset {args.dataset!r} in {args.ledger}; remaining: ε={_budget(eps)}, "
            f"δ={_budget(dlt)}")
    if failure is not None:
        raise failure
    if script.evaluate is not None:
        _print_evaluation(metrics)
    if not release.private:
        err("warning: this release carries NO privacy guarantee: its oracle call was NOT certified "
            "(on_uncertified='release-unsafe')")
        return EXIT_UNCERTIFIED
    return EXIT_OK


def _rows(problem: Any) -> int | None:
    """n of a model's problem (public under replace-one), None when the problem does not say."""
    n = getattr(problem, "n", None)
    return int(n) if isinstance(n, int) else None


def _budget(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:.6g}"


def _run(mechanism: Any, problem: Any, args: argparse.Namespace,
         run_info: dict[str, Any]) -> tuple[Any, float, list[str]]:
    """``mechanism.run`` once, its wall time and the private diagnostics' warnings (noisy counts
    only); a failure after the charge writes its record to ``--json``."""
    before = _own_count(mechanism.ledger)
    start = time.perf_counter()
    try:
        executor = executor_settings(args)  # passed only when asked for: a script's own Mechanism may not take it
        extra: dict[str, Any] = {} if executor is None else {"executor": executor}
        if getattr(args, "no_counts", False):
            extra["diagnostics"] = False
        with warnings.catch_warnings(record=True) as caught, charge_context(
                model=run_info["model"], solver=args.solver, command=run_info["command"]):
            warnings.simplefilter("ignore", WeakGuaranteeWarning)  # printed above as warning: lines
            warnings.simplefilter("ignore", SpendingWarning)  # one run per process (module docstring)
            warnings.simplefilter("always", DiagnosticsWarning)  # printed after the release as warning: lines
            release = mechanism.run(problem, solver=args.solver, time_limit=args.time_limit, seed=args.seed,
                                    threads=args.threads, keep_diagnostics=args.diagnostics, **extra)
        for w in caught:  # any other warning as Python shows it
            if not issubclass(w.category, DiagnosticsWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    except Exception as exc:
        ids = _run_charge_ids(mechanism.ledger, before)
        if ids == ():
            raise  # refused before the charge: nothing was spent
        status = "withheld" if isinstance(exc, UncertifiedOracleError) else "failed"
        public = isinstance(exc, DpoptError)
        written = ""
        if args.json is not None:
            _write_json(args.json, {
                "status": status, "mechanism": mechanism.name, "epsilon": mechanism.epsilon,
                "delta": mechanism.delta, **({} if not ids else {"charge_ids": list(ids)}),
                "error": {"type": type(exc).__name__,
                          "message": str(exc) if public else "(not shown: not a dpopt error)"},
                "run": {**run_info, "status": status},
            })
            written = f"; the record is in {args.json}"
        if isinstance(exc, UncertifiedOracleError):
            if written:
                err(f"note: the charge was recorded{written}")
            raise
        if not public:
            raise
        raise AfterCharge(
            f"{exc} (the budget ε={mechanism.epsilon:g}, δ={mechanism.delta:g} was charged and nothing "
            f"was released{_charge_ref(ids)}{written})"
        ) from exc
    counted = [str(w.message) for w in caught if issubclass(w.category, DiagnosticsWarning)]
    return release, time.perf_counter() - start, counted


def _own_count(ledger: Any) -> int:
    """How many charges ``ledger`` has made through this object (:attr:`Ledger.own_charges`)."""
    try:
        return len(ledger.own_charges)
    except DpoptError:  # unreadable now: the run's own charge is looked for again after it
        return 0


def _run_charge_ids(ledger: Any, before: int) -> tuple[int, ...] | None:
    """The row ids of the charges the run made through its own ledger object since it had ``before``.

    ``()``: the run charged nothing (it was refused before the charge).  None: the run
    charged its ledger but the charges have no row ids (an in-memory ledger), or the ledger
    cannot be read (then assume the worst: charged).  Charges that other objects or
    processes made on the same SQLite file are never counted: only this object's own rows.
    """
    try:
        made = ledger.own_charges[before:]
    except DpoptError:
        return None
    if not made:
        return ()
    ids = tuple(int(c.id) for c in made if isinstance(getattr(c, "id", None), int))
    return ids if len(ids) == len(made) else None


def _charge_ref(ids: tuple[int, ...] | None) -> str:
    """``; ledger charge #12`` for the run's own rows, empty without row ids."""
    if not ids:
        return ""
    return "; ledger charge " + ", ".join(f"#{i}" for i in ids)


def _write_json(path: Path, record: dict[str, Any]) -> None:
    """Write the run's record (only ever after the charge: a failure here exits 1)."""
    try:
        path.write_text(json.dumps(record, indent=2, default=repr) + "\n")
    except OSError as exc:
        raise AfterCharge(f"cannot write {str(path)!r}: {exc.strerror or exc} (the budget was "
                          "charged)") from None


def _evaluate(script: Any, release: Any) -> tuple[Any, Exception | None]:
    """The script's ``evaluate(release)`` (None without one), or the error to raise once the release is saved."""
    if script.evaluate is None:
        return None, None
    try:
        return script.evaluate(release), None
    except Exception as exc:
        if isinstance(exc, DpoptError):
            return None, exc
        failure = ScriptFailure(script.path, "running evaluate(release)")
        failure.__cause__ = exc
        return None, failure


def _print_evaluation(metrics: Any) -> None:
    """Print ``evaluate(release)``'s result under its NOT PRIVATE heading (module docstring)."""
    out("evaluation (NOT PRIVATE: the script's evaluate(release) may read any data, the private "
        f"training data included; not part of the release; --json key {EVALUATION_KEY!r}):")
    if isinstance(metrics, dict):
        for k, v in metrics.items():
            out(f"  {k}: {v:.6g}" if isinstance(v, float) else f"  {k}: {v}")
    else:
        out(f"  {metrics}")


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as plain Python values, for JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value
