"""Checking a solver profile's ``[options]`` before anything is charged.

A profile's ``[options]`` table is passed to the solver as is (``SolveOptions.extra``).  A
misspelt name or a value of the wrong type used to surface only inside the solver, after the
privacy budget was charged.  :func:`check_solver_options` finds both up front, from the
solver's own declaration of its settings, without touching any data.  Each backend class
declares its checker (:meth:`~dpopt.backends.base.Backend.check_options`, calling one of the
functions here); what is reliable differs per package, so each is checked the way it allows:

``highs``, ``highs-grouped``
    HiGHS declares its options: ``highspy.Highs().getOptionType(name)`` says whether a name
    exists, and ``setOptionValue`` on a fresh, silent ``Highs`` instance refuses a value of
    the wrong type or out of range, exactly as the solve would.  ``highs-grouped`` reads
    ``enumerate`` itself (``"auto"`` or a list of column indices).
``cpsat``
    The fields of ``ortools.sat.sat_parameters_pb2.SatParameters`` (its protobuf
    descriptor): the name must be a field; the value must match the field's type strictly
    (no booleans for numbers, an enum by its name or number, a list for a repeated field),
    then it is assigned to a fresh ``SatParameters`` (range checks).
``clarabel``, ``scs``, ``osqp`` (through cvxpy)
    These packages do not all expose a complete list of settings with types, so the
    authority is a *trial*: a two-variable public problem (no data) is solved through
    cvxpy with the options, and an error raised for a name or a type is reported.  The
    names suggested for a misspelling come from ``clarabel.DefaultSettings``, OSQP's
    ``OSQPSettings`` and SCS's documented settings, plus cvxpy's own ``solve`` keywords.
``scipy``, ``bruteforce``
    They read no backend-specific options: any ``[options]`` entry is refused (their
    settings are the profile's top-level ``tolerance``, ``time_limit``, ``threads``,
    ``max_iterations``).
other (plug-in) backends
    Not checked: dpopt knows nothing of their settings.

A backend whose package is not installed is not checked either: using it fails anyway,
before any charge, with :class:`~dpopt.errors.BackendUnavailableError`.

Unknown names are refused with the closest known names (:func:`dpopt.modeling.schema.suggest.did_you_mean`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from dpopt.errors import SolverOptionError
from dpopt.modeling.schema.suggest import did_you_mean

__all__ = [
    "check_cpsat",
    "check_cvxpy_solver",
    "check_highs",
    "check_scip",
    "check_solver_options",
    "refuse_options",
    "suggest",
]


#: SCS's documented settings (https://www.cvxgrid.org/scs/api/settings.html) and the
#: aliases cvxpy's SCS interface accepts; used for suggestions only (the trial decides)
SCS_SETTINGS = (
    "normalize", "scale", "adaptive_scale", "rho_x", "max_iters", "eps_abs", "eps_rel", "eps_infeas",
    "alpha", "time_limit_secs", "verbose", "warm_start", "acceleration_lookback",
    "acceleration_interval", "write_data_filename", "log_csv_filename", "linear_solver", "eps",
    "use_indirect",
)
#: keywords of ``cvxpy.Problem.solve`` itself (accepted next to any solver's settings)
CVXPY_SOLVE_KEYWORDS = ("verbose", "warm_start", "ignore_dpp", "canon_backend", "enforce_dpp",
                        "use_quad_obj", "accept_unknown")
#: options of ``[options]`` that highs-grouped reads itself
GROUPED_OWN = ("enumerate",)


def suggest(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the close matches of ``name`` (empty if none):
    :func:`dpopt.modeling.schema.suggest.did_you_mean`, the one suggestion rule for every public name."""
    return did_you_mean(name, known)


def check_solver_options(backend: str, options: Mapping[str, Any], *, where: str) -> None:
    """Refuse ``options`` (a profile's ``[options]``) that ``backend`` does not accept: the
    registered backend's own :meth:`~dpopt.backends.base.Backend.check_options`.

    Parameters
    ----------
    backend : str
        The registered backend name.
    options : mapping
        Option name -> value, as read from the TOML file.
    where : str
        Names the source in messages (e.g. ``"solver profile fast.toml"``).

    Raises
    ------
    SolverOptionError
        An unknown name (with close matches) or a value the solver refuses.
    """
    if not options:
        return
    from dpopt.backends import registry

    if backend.lower() not in registry.names():
        return  # not a registered backend: dpopt knows nothing of its settings
    registry.get(backend).check_options(dict(options), where)


# ---------------------------------------------------------------------------------- backends


def refuse_options(backend: str, options: dict[str, Any], where: str) -> None:
    """Refuse every ``[options]`` entry: ``backend`` reads no solver-specific settings."""
    raise SolverOptionError(
        f"{where}: backend {backend!r} reads no [options] (got {', '.join(sorted(options))}); its "
        "settings are the top-level keys tolerance, time_limit, threads and max_iterations"
    )


def check_highs(backend: str, options: dict[str, Any], where: str, *, own: tuple[str, ...] = ()) -> None:
    """HiGHS options, by HiGHS's own declaration; ``own``: the options the backend reads itself
    (``highs-grouped``: :data:`GROUPED_OWN`)."""
    try:
        import highspy
    except Exception:  # noqa: BLE001 — not installed: the run fails on require() anyway
        return
    if "enumerate" in own and "enumerate" in options:
        _check_enumerate(options["enumerate"], where)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    known = [n for n in dir(h.getOptions()) if not n.startswith("_")] + list(own)
    for name, value in options.items():
        if name in own:
            continue
        status, kind = h.getOptionType(name)
        if status != highspy.HighsStatus.kOk:
            raise SolverOptionError(f"{where}: unknown HiGHS option {name!r}{suggest(name, known)}")
        expected = _HIGHS_TYPES.get(str(kind).rsplit(".", 1)[-1], "a valid value")
        if _wrong_python_type(value, expected) or h.setOptionValue(name, value) != highspy.HighsStatus.kOk:
            raise SolverOptionError(
                f"{where}: HiGHS option {name!r} must be {expected} in its allowed range, got {value!r}"
            )


def check_scip(backend: str, options: dict[str, Any], where: str) -> None:
    """SCIP parameters (``limits/nodes``, ``numerics/feastol``, …): names from SCIP's own list,
    values set on a fresh, empty model (no data)."""
    try:
        import pyscipopt
    except Exception:  # noqa: BLE001 — not installed: the run fails on require() anyway
        return
    model = pyscipopt.Model()
    model.hideOutput()
    known = list(model.getParams())
    for name, value in options.items():
        if name not in known:
            raise SolverOptionError(f"{where}: unknown SCIP parameter {name!r}{suggest(name, known)}")
        try:
            if isinstance(value, bool) != isinstance(model.getParam(name), bool):
                raise ValueError
            model.setParam(name, value)
        except (ValueError, TypeError, KeyError, LookupError):
            raise SolverOptionError(f"{where}: SCIP parameter {name!r} cannot take {value!r}") from None


_HIGHS_TYPES = {"kBool": "true or false", "kInt": "an integer", "kDouble": "a number", "kString": "a string"}


def _wrong_python_type(value: Any, expected: str) -> bool:
    """Whether ``value``'s Python type contradicts ``expected`` (booleans are not numbers)."""
    if expected == "true or false":
        return not isinstance(value, bool)
    if expected == "an integer":
        return isinstance(value, bool) or not isinstance(value, int)
    if expected == "a number":
        return isinstance(value, bool) or not isinstance(value, (int, float))
    if expected == "a string":
        return not isinstance(value, str)
    return False


def _check_enumerate(value: Any, where: str) -> None:
    ok = value == "auto" or (isinstance(value, list)
                             and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value))
    if not ok:
        raise SolverOptionError(
            f"{where}: option 'enumerate' of highs-grouped must be \"auto\" or a list of column indices, "
            f"got {value!r}"
        )


def check_cpsat(backend: str, options: dict[str, Any], where: str) -> None:
    """CP-SAT parameters, by the fields of ``SatParameters`` (strict types, then its range checks)."""
    try:
        from google.protobuf.descriptor import FieldDescriptor as FD
        from ortools.sat import sat_parameters_pb2
    except Exception:  # noqa: BLE001 — not installed: the run fails on require() anyway
        return
    fields = sat_parameters_pb2.SatParameters.DESCRIPTOR.fields_by_name
    for name, value in options.items():
        field = fields.get(name)
        if field is None:
            raise SolverOptionError(f"{where}: unknown CP-SAT parameter {name!r}{suggest(name, fields)}")
        repeated = bool(field.is_repeated if hasattr(field, "is_repeated") else field.label == FD.LABEL_REPEATED)
        expected = _cpsat_expected(field, FD)
        items = value if repeated and isinstance(value, list) else [value]
        bad = (repeated and not isinstance(value, list)) or any(_cpsat_wrong(v, field, FD) for v in items)
        if not bad:
            params = sat_parameters_pb2.SatParameters()
            try:
                if repeated:
                    getattr(params, name).extend(items)
                else:
                    setattr(params, name, value)
            except (TypeError, ValueError):
                bad = True
        if bad:
            what = f"a list, each entry {expected}" if repeated else expected
            raise SolverOptionError(f"{where}: CP-SAT parameter {name!r} must be {what}, got {value!r}")


def _cpsat_expected(field: Any, FD: Any) -> str:
    if field.cpp_type == FD.CPPTYPE_ENUM:
        return "one of " + ", ".join(v.name for v in field.enum_type.values)
    if field.cpp_type == FD.CPPTYPE_BOOL:
        return "true or false"
    if field.cpp_type in (FD.CPPTYPE_DOUBLE, FD.CPPTYPE_FLOAT):
        return "a number"
    if field.cpp_type == FD.CPPTYPE_STRING:
        return "a string"
    return "an integer"


def _cpsat_wrong(value: Any, field: Any, FD: Any) -> bool:
    if field.cpp_type == FD.CPPTYPE_ENUM:
        names = {v.name for v in field.enum_type.values}
        numbers = {v.number for v in field.enum_type.values}
        return not (value in names if isinstance(value, str)
                    else isinstance(value, int) and not isinstance(value, bool) and value in numbers)
    return _wrong_python_type(value, _cpsat_expected(field, FD))


def check_cvxpy_solver(backend: str, options: dict[str, Any], where: str) -> None:
    """A solver reached through cvxpy: a trial solve of a public two-variable problem decides."""
    known = _cvxpy_known(backend)
    if known is None:  # the package is not installed
        return
    for name, value in options.items():  # one at a time, to name the culprit
        error = _trial(backend, {name: value})
        if error is None:
            continue
        if name not in known or any(w in error for w in ("nrecognized", "invalid keyword")):
            raise SolverOptionError(f"{where}: unknown {backend} option {name!r}{suggest(name, known)}")
        raise SolverOptionError(
            f"{where}: {backend} refused option {name!r} = {value!r} ({_first_line(error)}); check its "
            "type and range in the solver's documentation"
        )
    error = _trial(backend, options)
    if error is not None:
        raise SolverOptionError(f"{where}: {backend} refused the options together ({_first_line(error)})")


def _trial(backend: str, options: dict[str, Any]) -> str | None:
    """Solve a two-variable public problem (no data) with ``options``; the error text, or None."""
    import cvxpy as cp

    x = cp.Variable(2)
    trial = cp.Problem(cp.Minimize(cp.sum_squares(x - 1.0)), [x >= 0, cp.sum(x) <= 1.0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial.solve(solver=getattr(cp, backend.upper()), **options)
    except Exception as exc:  # noqa: BLE001 — any refusal of the options is what we look for
        return f"{type(exc).__name__}: {exc}"
    return None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    line = line.split(". The following")[0].rstrip(":. ")
    return line if len(line) <= 160 else line[:157] + "..."


def _cvxpy_known(backend: str) -> set[str] | None:
    """The settings names of a cvxpy-reached solver, or None if it is not installed."""
    names: list[str] = list(CVXPY_SOLVE_KEYWORDS)
    try:
        if backend == "clarabel":
            import clarabel

            names += [n for n in dir(clarabel.DefaultSettings()) if not n.startswith("_") and n != "default"]
        elif backend == "osqp":
            import osqp  # noqa: F401

            with contextlib.suppress(Exception):
                from osqp.ext_builtin import OSQPSettings

                names += [n for n in dir(OSQPSettings()) if not n.startswith("_")]
            names += ["polish"]  # a deprecated alias OSQP still accepts
        else:
            import scs  # noqa: F401

            names += list(SCS_SETTINGS)
    except Exception:  # noqa: BLE001 — not installed
        return None
    return set(names)
