"""Loading model scripts for ``dpopt solve``.

A *model script* is a plain Python file (see ``models/`` in the repository)
that declares a private optimization problem.  It defines **either**

* (preferred) a function ``build(params: dict) -> (problem, mechanism)`` and,
  optionally, a module-level dict ``PARAMS`` of defaults, e.g.
  ``PARAMS = {"epsilon": 1.0, "delta": 1e-6, "lam": 1e-4, "n": None, "data_seed": 0}``
  (name a seed of the data ``data_seed``: ``dpopt solve --seed`` is the *noise* seed, and
  ``dpopt solve`` prints the params next to the release); **or**
* module-level ``problem`` (a :class:`~dpopt.modeling.problem.Problem`) and
  ``mechanism`` (a :class:`~dpopt.mechanisms.base.Mechanism`).

It may also define ``evaluate(release) -> dict`` (e.g. test accuracy), whose
result ``dpopt solve`` prints after the release and writes to ``--json`` under
``"evaluation_not_private"``.  ``evaluate`` receives only the
:class:`~dpopt.mechanisms.release.Release` (public: the noisy output, the guarantee, public
parameters), but it is the script's own code and may read anything else, the private
training data included (``models/private_mirror_descent.py`` reports the training loss), so
``dpopt solve`` marks every evaluation NOT private (:mod:`dpopt.cli.solve`).  Evaluate on
held-out or public data when the numbers are to be shared.

The parameter contract
----------------------
``dpopt solve`` calls ``build(params)`` with ``params`` built as follows:

1. a copy of ``PARAMS`` (an empty dict when the script has none);
2. ``--set key=value`` overrides: ``key`` must be a key of ``PARAMS`` (unknown
   keys are refused, listing the known ones); ``value`` is parsed with
   :func:`ast.literal_eval` (``2000``, ``1e-4``, ``None``, ``"text"``,
   ``[1, 2]``), falling back to the raw string;
3. ``--epsilon E`` / ``--delta D`` set ``params["epsilon"]`` /
   ``params["delta"]`` (validated first: ε > 0 finite, δ ∈ [0, 1)).

``build`` **must** construct its mechanism with ``params["epsilon"]`` and
``params["delta"]``.  The loader checks this: when ``params`` holds
``"epsilon"`` or ``"delta"``, the returned mechanism's ``epsilon`` must equal
``params["epsilon"]`` and its ``delta`` must equal ``params["delta"]`` or be 0 (a pure
ε-DP mechanism, such as the exponential mechanism, keeps a stronger guarantee than the
δ asked for); otherwise the run is refused (a script that ignored ``--epsilon`` would
silently release under another guarantee).  A script with
module-level ``problem`` and ``mechanism`` takes no parameters: ``--epsilon``,
``--delta`` and ``--set`` are refused for it (write a ``build`` function).

Scripts are imported with :func:`importlib.util.spec_from_file_location` under
a fresh, unique module name (``dpopt_model_<stem>_<n>``), never as
``models.<stem>``: ``models/`` is a folder of user content, not a package.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import math
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dpopt.errors import ModelScriptError, ScriptFailure

if TYPE_CHECKING:  # imported when a script is built: `dpopt --help` loads no mechanism
    from dpopt.mechanisms.base import Mechanism
    from dpopt.modeling.discrete import DiscreteProblem
    from dpopt.modeling.problem import Problem

__all__ = [
    "ModelScript",
    "build_model",
    "load_model_script",
    "parse_set",
    "resolve_params",
]

_counter = itertools.count()
PRIVACY_KEYS = ("epsilon", "delta")


@dataclass
class ModelScript:
    """A loaded model script.

    Attributes
    ----------
    path : Path
        The script file.
    module : ModuleType
        The executed module.
    defaults : dict
        ``PARAMS`` (empty when absent).
    build : callable or None
        ``build(params) -> (problem, mechanism)`` when defined.
    evaluate : callable or None
        ``evaluate(release) -> dict`` when defined; its result is treated as not private
        (it may read the private data, see the module docstring).
    """

    path: Path
    module: ModuleType
    defaults: dict[str, Any] = field(default_factory=dict)
    build: Callable[[dict[str, Any]], Any] | None = None
    evaluate: Callable[[Any], Any] | None = None

    @property
    def takes_params(self) -> bool:
        """Whether the script has a ``build(params)`` function."""
        return self.build is not None


def load_model_script(path: str | Path) -> ModelScript:
    """Import a model script from a file path under a unique module name.

    Raises
    ------
    ModelScriptError
        The file does not exist, is not a ``.py`` file, or defines neither
        ``build`` nor ``problem`` and ``mechanism``; ``PARAMS`` is not a dict
        with string keys.
    ScriptFailure
        Executing the script raised a non-dpopt exception (its traceback is the cause).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelScriptError(f"model script {str(p)!r} does not exist")
    if p.suffix != ".py":
        raise ModelScriptError(f"model script {str(p)!r} must be a Python file ending in .py")
    stem = "".join(c if c.isalnum() else "_" for c in p.stem)
    name = f"dpopt_model_{stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:  # pragma: no cover - .py files always have a loader
        raise ModelScriptError(f"cannot import model script {str(p)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling in the script need it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        if _is_dpopt_usage_error(exc):
            raise
        raise ScriptFailure(p, "being imported") from exc

    build = getattr(module, "build", None)
    if build is not None and not callable(build):
        raise ModelScriptError(f"model script {p.name}: 'build' must be a function build(params)")
    defaults = getattr(module, "PARAMS", None)
    if defaults is None:
        defaults = {}
    if not isinstance(defaults, Mapping) or not all(isinstance(k, str) for k in defaults):
        raise ModelScriptError(f"model script {p.name}: PARAMS must be a dict with string keys")
    if build is None:
        missing = [a for a in ("problem", "mechanism") if not hasattr(module, a)]
        if missing:
            raise ModelScriptError(
                f"model script {p.name} defines neither build(params) nor module-level "
                f"problem and mechanism (missing: {', '.join(missing)})"
            )
        if defaults:
            raise ModelScriptError(
                f"model script {p.name}: PARAMS needs a build(params) function to use them"
            )
    evaluate = getattr(module, "evaluate", None)
    if evaluate is not None and not callable(evaluate):
        raise ModelScriptError(f"model script {p.name}: 'evaluate' must be a function evaluate(release)")
    return ModelScript(p, module, dict(defaults), build, evaluate)


def parse_value(text: str) -> Any:
    """``ast.literal_eval(text)``, or ``text`` itself when it is not a literal."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def parse_set(items: Iterable[str]) -> dict[str, Any]:
    """Parse ``--set key=value`` items into a dict (later items win).

    Raises
    ------
    ModelScriptError
        An item has no ``=`` or an empty key.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ModelScriptError(f"--set expects key=value, got {item!r}")
        out[key] = parse_value(value.strip())
    return out


def resolve_params(
    script: ModelScript,
    overrides: Mapping[str, Any] | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
) -> dict[str, Any]:
    """The ``params`` dict passed to ``build`` (see the module docstring).

    Raises
    ------
    ModelScriptError
        Unknown ``--set`` keys (the message lists the known ones), ε/δ given
        both through ``--set`` and ``--epsilon``/``--delta``, or any
        parameter given to a script without ``build``.
    PrivacyParameterError
        ε or δ out of range.
    """
    overrides = dict(overrides or {})
    if not script.takes_params:
        given = sorted(overrides) + [k for k, v in (("epsilon", epsilon), ("delta", delta)) if v is not None]
        if given:
            raise ModelScriptError(
                f"model script {script.path.name} defines module-level problem and mechanism, "
                f"so it takes no parameters (got {', '.join(given)}); define "
                "build(params) -> (problem, mechanism) to accept --epsilon, --delta and --set"
            )
        return {}
    known = sorted(script.defaults)
    unknown = sorted(set(overrides) - set(script.defaults))
    if unknown:
        raise ModelScriptError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for "
            f"{script.path.name}; known parameters: {', '.join(known) if known else '(none)'}"
        )
    params = dict(script.defaults)
    params.update(overrides)
    for key, value in (("epsilon", epsilon), ("delta", delta)):
        if value is None:
            continue
        if key in overrides:
            raise ModelScriptError(f"{key} given twice: use --{key} or --set {key}=..., not both")
        params[key] = value
    if "epsilon" in params or "delta" in params:
        from dpopt.privacy.calibration import check_epsilon_delta

        eps = params.get("epsilon", 1.0)
        dlt = params.get("delta", 0.0)
        check_epsilon_delta(eps, dlt)  # raises PrivacyParameterError (a ValueError)
    return params


def build_model(script: ModelScript, params: Mapping[str, Any]) -> tuple[Problem | DiscreteProblem, Mechanism]:
    """Call ``build(params)`` (or read module-level objects) and check the contract.

    Raises
    ------
    ModelScriptError
        ``build`` did not return ``(Problem, Mechanism)``, or the mechanism's
        ε/δ differ from ``params["epsilon"]``/``params["delta"]``.
    ScriptFailure
        ``build`` raised a non-dpopt exception.
    """
    from dpopt.mechanisms.base import Mechanism
    from dpopt.modeling.discrete import DiscreteProblem
    from dpopt.modeling.problem import Problem

    name = script.path.name
    if script.build is not None:
        try:
            out = script.build(dict(params))
        except Exception as exc:
            if _is_dpopt_usage_error(exc):
                raise
            raise ScriptFailure(script.path, "running build(params)") from exc
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ModelScriptError(f"{name}: build(params) must return a tuple (problem, mechanism)")
        problem, mechanism = out
    else:
        problem, mechanism = script.module.problem, script.module.mechanism
    if not isinstance(problem, (Problem, DiscreteProblem)):
        raise ModelScriptError(
            f"{name}: problem must be a dpopt Problem or DiscreteProblem, got {type(problem).__name__}"
        )
    if not isinstance(mechanism, Mechanism):
        raise ModelScriptError(
            f"{name}: mechanism must be a dpopt Mechanism (e.g. dp.ObjectivePerturbation), "
            f"got {type(mechanism).__name__}"
        )
    for key in PRIVACY_KEYS:
        if key == "delta" and float(mechanism.delta) == 0.0:
            continue  # pure ε-DP: a stronger guarantee than any δ asked for
        if key in params and not math.isclose(float(getattr(mechanism, key)), float(params[key]),
                                              rel_tol=1e-12, abs_tol=0.0):
            raise ModelScriptError(
                f"{name}: build(params) returned a mechanism with {key}={getattr(mechanism, key)!r} "
                f"but params[{key!r}] is {params[key]!r}; construct the mechanism with "
                f"params['epsilon'] and params['delta']"
            )
    return problem, mechanism


def _is_dpopt_usage_error(exc: BaseException) -> bool:
    """dpopt errors that the CLI reports as usage/model/input errors (exit 2)."""
    from dpopt.errors import DpoptError

    return isinstance(exc, DpoptError) and isinstance(exc, (ValueError, KeyError, ImportError))
