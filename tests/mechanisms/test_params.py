"""Declarative settings of the mechanisms (dpopt.mechanisms.params).

Every Mechanism subclass in dpopt declares a constraint for each keyword of its ``__init__``;
a wrong value is refused with one message naming the setting and the value, before any
charge; values inside the declared ranges are accepted.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from typing import Any

import pytest

import dpopt as dp
import dpopt.mechanisms
from dpopt.discovery import subclasses
from dpopt.errors import InvalidParameterError, MechanismError, PrivacyParameterError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.params import (
    Boolean,
    Instance,
    Integral,
    Interval,
    IsCallable,
    NoneConstraint,
    Options,
    Real,
    Vector,
    make_constraint,
    validate_params,
)

for _mod in pkgutil.iter_modules(dpopt.mechanisms.__path__):  # every mechanism module, imported or not
    importlib.import_module(f"dpopt.mechanisms.{_mod.name}")


from dpopt.mechanisms.diagnostics import CountQuery, DiagnosticCounts, WithDiagnostics  # noqa: E402

MECHANISMS = subclasses(Mechanism, concrete=False)
CONCRETE = subclasses(Mechanism)


def _keywords(cls: type) -> list[str]:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # drop self
    return [p.name for p in params]


def _base_kwargs(cls: type) -> dict[str, Any]:
    """Settings that construct ``cls`` (a fresh Ledger each time)."""
    kwargs: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-5, "ledger": dp.Ledger()}
    if cls is dp.PrivateSelection:
        kwargs.update(delta=0.0, candidates=[{"lam": 0.1}, {"lam": 1.0}], build=lambda params, budget: None)
    if cls.__name__ == "RefitSelection":
        kwargs.update(candidates=[{"lam": 0.1}, {"lam": 1.0}], build=lambda params, budget: None)
    if "delta" in cls._parameter_constraints and any(i.right == 0 for i in _intervals(cls, "delta")):
        kwargs["delta"] = 0.0  # a pure ε-DP mechanism declares δ ∈ [0, 0]
    if cls is WithDiagnostics:  # a composition: its settings are the two mechanisms and the query
        ledger = kwargs["ledger"]
        kwargs = {"inner": dp.OutputPerturbation(1.0, 1e-5, ledger=ledger),
                  "counts": DiagnosticCounts(0.1, ledger=ledger),
                  "query": CountQuery(names=("labels",), n=10, count=lambda: [0])}
    return kwargs


#: other settings a value needs to be valid together with (checks across two settings)
CONTEXT: dict[tuple[str, str], dict[str, Any]] = {
    ("PrivateSelection", "delta"): {"stopping": "papernot-steinke"},
    ("PrivateSelection", "score_sensitivity"): {"score": lambda theta, data: 0.0},
    ("RefitSelection", "score_sensitivity"): {"score": lambda theta, data: 0.0},
}


def _intervals(cls: type, name: str) -> list[Interval]:
    return [c for c in cls._parameter_constraints[name] if isinstance(c, Interval)]


def _bad_numbers(interval: Interval, constraints: list[Any]) -> list[object]:
    """Values outside a numeric setting's declared range (from the declaration, not the validator)."""
    bad: list[object] = [True, math.nan, "not-a-number"]
    if interval.left is not None:
        bad.append(interval.left - 1 if interval.closed in ("left", "both") else interval.left)
    if interval.right is not None:
        bad.append(interval.right + 1 if interval.closed in ("right", "both") else interval.right)
    if interval.right is None or interval.right != math.inf:
        bad.append(math.inf)
    if interval.kind is Integral:
        bad.append(float((interval.left or 0) + 1.5))
    strings = {o for c in constraints if isinstance(c, Options) for o in c.options if isinstance(o, str)}
    return [b for b in bad if b not in strings]


def _good_number(interval: Interval) -> float | int:
    lo, hi = interval.left, interval.right
    if lo is not None and hi is not None:
        return (lo + hi) / 2 if interval.kind is Real else int(lo) + 1
    if lo is not None:
        return lo + 1
    return (hi or 0) - 1


NUMERIC = [(cls, name) for cls in CONCRETE for name in _keywords(cls) if _intervals(cls, name)]
OPTIONS = [(cls, name) for cls in CONCRETE for name in _keywords(cls)
           if any(isinstance(c, Options) for c in cls._parameter_constraints[name])]


def _id(case: tuple[type, str]) -> str:
    return f"{case[0].__name__}-{case[1]}"


def test_every_mechanism_is_discovered():
    names = {c.__name__ for c in MECHANISMS}
    assert {"ObjectivePerturbation", "OutputPerturbation", "SubmodularOutputPerturbation", "PolytopeFrankWolfe",
            "GaussianFrankWolfe", "DualFrankWolfe", "PrivateMirrorDescent", "DPGradientDescent", "DPSGD",
            "OPDisc", "OPSamp", "RSPM", "PrivateSelection"} <= names


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_constraints_cover_every_init_keyword(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert all(p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params), "no **kwargs swallowing"
    declared = cls._parameter_constraints
    assert set(_keywords(cls)) == set(declared), f"{cls.__name__}: declared {sorted(declared)}"
    for name, specs in declared.items():
        assert specs, f"{cls.__name__}.{name} declares no constraint"
        for spec in specs:
            make_constraint(spec)  # a known constraint (TypeError otherwise)


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda c: c.__name__)
def test_defaults_construct(cls):
    mech = cls(**_base_kwargs(cls))
    assert mech.ledger.spent == (0.0, 0.0)


@pytest.mark.parametrize("case", NUMERIC, ids=_id)
def test_numeric_setting_refuses_bad_values_before_any_charge(case):
    cls, name = case
    constraints = cls._parameter_constraints[name]
    for bad in _bad_numbers(_intervals(cls, name)[0], constraints):
        kwargs = _base_kwargs(cls)
        ledger = kwargs["ledger"]
        kwargs[name] = bad
        with pytest.raises(MechanismError) as info:
            cls(**kwargs)
        message = str(info.value)
        assert f"{name} must be" in message and repr(bad)[:20] in message, message
        assert ledger.spent == (0.0, 0.0) and not ledger.charges


@pytest.mark.parametrize("case", NUMERIC, ids=_id)
def test_numeric_setting_accepts_values_in_range(case):
    cls, name = case
    good = _good_number(_intervals(cls, name)[0])
    kwargs = {**_base_kwargs(cls), **CONTEXT.get((cls.__name__, name), {}), name: good}
    if name == "iterations":
        with pytest.warns(FutureWarning):
            cls(**kwargs)
        return
    mech = cls(**kwargs)
    if hasattr(mech, name):
        assert getattr(mech, name) == pytest.approx(good)


@pytest.mark.parametrize("case", OPTIONS, ids=_id)
def test_choice_setting_refuses_unknown_values(case):
    cls, name = case
    numeric = bool(_intervals(cls, name))
    bools = any(isinstance(o, bool) for c in cls._parameter_constraints[name] if isinstance(c, Options)
                for o in c.options)
    for bad in ["no-such-choice", *([] if numeric else [1]), *([] if numeric or bools else [True])]:
        kwargs = {**_base_kwargs(cls), name: bad}
        with pytest.raises(MechanismError, match=f"{name} must be .*got {bad!r}"):
            cls(**kwargs)


def test_message_names_owner_setting_value_and_range():
    with pytest.raises(InvalidParameterError) as info:
        dp.DPGradientDescent(1.0, 1e-5, clip_quantile=1.0)
    assert str(info.value) == "DPGradientDescent: clip_quantile must be a number in (0, 1), got 1.0"
    with pytest.raises(MechanismError, match=r"steps must be an integer ≥ 1 or None, got 2\.0"):
        dp.DPSGD(1.0, 1e-5, steps=2.0)
    with pytest.raises(MechanismError, match=r"clip must be a finite number > 0, 'lipschitz', 'adaptive' or None"):
        dp.DPGradientDescent(1.0, 1e-5, clip=-1.0)
    with pytest.raises(MechanismError, match=r"OPDisc: delta .*got 0\.0 \(OPDisc needs delta > 0"):
        dp.OPDisc(1.0, 0.0)


def test_privacy_settings_raise_an_error_of_both_families():
    for call in (lambda: dp.ObjectivePerturbation(-1.0), lambda: dp.PrivateMirrorDescent(1.0, 0.0)):
        with pytest.raises(PrivacyParameterError):
            call()
        with pytest.raises(MechanismError):
            call()


def test_bools_are_not_numbers_and_numbers_are_not_bools():
    with pytest.raises(MechanismError, match="max_vertices"):
        dp.PolytopeFrankWolfe(1.0, max_vertices=True)
    with pytest.raises(MechanismError, match="verify must be True or False, got 1"):
        dp.OPDisc(1.0, 1e-6, verify=1)
    assert dp.PolytopeFrankWolfe(1.0, fast=True).fast is True
    with pytest.raises(MechanismError, match="fast"):
        dp.PolytopeFrankWolfe(1.0, fast=1)


def test_validate_params_rules():
    spec = {"x": [Interval(Real, 0, None, closed="neither")], "y": [Interval(Real, 0, math.inf, closed="both")],
            "k": [Interval(Integral, 1, 10, closed="both"), None], "f": [IsCallable()], "b": [Boolean()],
            "v": [Vector()], "i": [Instance(dp.Ledger)]}
    validate_params("T", spec, {"x": 0.5, "y": math.inf, "k": None, "f": len, "b": False, "v": [1.0, 2.0],
                                "i": dp.Ledger()})
    for name, bad in [("x", math.inf), ("x", 0), ("y", math.nan), ("k", 11), ("k", 3.0), ("f", 3), ("b", 0),
                      ("v", [[1.0]]), ("v", [math.nan]), ("i", "ledger")]:
        with pytest.raises(InvalidParameterError, match=f"^T: {name} must be"):
            validate_params("T", spec, {name: bad})
    with pytest.raises(TypeError, match="no declared constraints"):
        validate_params("T", spec, {"undeclared": 1})
    assert isinstance(make_constraint(None), NoneConstraint)
