"""The plug-in slots of dpopt.plugins: a lower layer names a slot, a higher one fills it.

* a slot loads its registered default once, on first use, and an install replaces it;
* an empty slot with no default is refused with one line (ModelError);
* ``import dpopt`` registers a default for every slot, and each default works;
* the submodular dual norm beyond its closed forms really goes through its slot (a
  replacement installed there is what ``dual_norm`` returns), and the default program
  agrees with an independent enumeration of every subset.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dpopt  # noqa: F401 - the package root registers the defaults
from dpopt import plugins
from dpopt.errors import ModelError
from dpopt.modeling.submodular import ENUMERATE_MAX_P, CallableSetFunction, dual_norm


@pytest.fixture
def empty_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_INSTALLED", {})
    monkeypatch.setattr(plugins, "_LOADERS", {})


@pytest.mark.usefixtures("empty_slots")
def test_a_slot_loads_its_default_once_and_an_install_replaces_it() -> None:
    calls: list[str] = []

    def load() -> None:
        calls.append("loaded")
        plugins.install("a slot", "the default")

    plugins.on_first_use("a slot", load)
    assert calls == []  # registering imports nothing
    assert plugins.routine("a slot") == "the default" and plugins.routine("a slot") == "the default"
    assert calls == ["loaded"]
    plugins.install("a slot", "mine")
    assert plugins.routine("a slot") == "mine" and calls == ["loaded"]


@pytest.mark.usefixtures("empty_slots")
def test_an_empty_slot_is_refused_with_one_line() -> None:
    with pytest.raises(ModelError, match="no a slot is installed") as caught:
        plugins.routine("a slot")
    assert "\n" not in str(caught.value)
    plugins.on_first_use("a slot", lambda: None)  # a default that installs nothing is refused too
    with pytest.raises(ModelError):
        plugins.routine("a slot")


@pytest.mark.parametrize("slot", [plugins.POLYTOPE_SOLVER, plugins.SUBMODULAR_DUAL_LP, plugins.QNORM_WEIGHTS])
def test_the_package_root_registers_a_default_for_every_slot(slot: str) -> None:
    assert plugins.routine(slot) is not None


def test_the_qnorm_weights_default_solves_its_program() -> None:
    V = np.vstack([np.eye(2), -np.eye(2)])
    theta = np.array([0.3, -0.2])
    alpha = plugins.routine(plugins.QNORM_WEIGHTS)(V, theta, 2.0)
    assert V.T @ alpha == pytest.approx(theta, abs=1e-6)


def _sqrt_cardinality(p: int) -> CallableSetFunction:
    """F(A) = √|A|: non-decreasing and submodular, with no closed-form dual norm."""
    return CallableSetFunction(p, lambda mask: float(np.sqrt(mask.sum())), name="sqrt")


def _dual_norm_by_enumeration(F: CallableSetFunction, s: np.ndarray) -> float:
    """``max_{A≠∅} |s|(A)/F(A)`` over every subset (independent of dpopt's program)."""
    a = np.abs(s)
    return max(a[list(A)].sum() / F.value_mask(np.isin(np.arange(F.p), A))
               for k in range(1, F.p + 1) for A in itertools.combinations(range(F.p), k))


def test_the_dual_norm_beyond_closed_forms_goes_through_its_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    p = ENUMERATE_MAX_P + 1  # beyond enumeration: the cutting-plane program
    F = _sqrt_cardinality(p)
    s = np.random.default_rng(0).normal(size=p)
    assert dual_norm(F, s) == pytest.approx(_dual_norm_by_enumeration(F, s), rel=1e-7)
    monkeypatch.setitem(plugins._INSTALLED, plugins.SUBMODULAR_DUAL_LP, lambda F, a: (42.0, np.zeros(F.p), True))
    assert dual_norm(F, s) == 42.0
