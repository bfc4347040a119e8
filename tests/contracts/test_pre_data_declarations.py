"""Every pre-data decision reads declarations only, checked by construction.

The privacy rules (docs/design.md) require that everything a mechanism decides before the
charge — its plan and calibration, the solver it resolves and the rule it states, size limits,
the public parameters it charges and releases, and whether it refuses — is a function of
public declarations (the loss type, declared bounds, schema, n, d, ε, δ, the sets), never of a
data value.  This module checks it without a hand-written list of mechanisms, losses or sets:

* every concrete :class:`~dpopt.mechanisms.base.Mechanism` subclass defined in dpopt is found
  by :func:`dpopt.discovery.subclasses` after importing :mod:`dpopt.mechanisms`, and built with
  (ε, δ) = (1, 0) and (1, 1e-5) (a setting its constructor refuses is skipped: the constructor
  sees no data);
* every concrete :class:`~dpopt.modeling.losses.Loss` subclass in dpopt, and the 0/1 loss;
* every constraint set fixture of the set contracts suite (``tests/contracts/test_set_contracts.py``,
  whose guard requires one per set), none, and three regularizer choices;

and for each combination runs the whole pre-charge path up to the charge
(:func:`dpopt.testing.declarations.run_to_charge`) on a dataset and again with every data value
hidden (:func:`~dpopt.testing.declarations.hide_data_values`): the two must end the same way
(the same charge, or the same refusal) and the hidden run must not have tried to read a value.
Label and row neighbours then check that the charge (and, where cheap, the released
parameters) are identical on D and D′ for every mechanism × loss.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import numpy as np
import pytest

import dpopt as dp
import dpopt.mechanisms
from dpopt.discovery import import_package, subclasses
from dpopt.mechanisms.base import Mechanism
from dpopt.modeling.losses import Loss
from dpopt.modeling.regularizers import L2Squared
from dpopt.modeling.submodular import Cardinality
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.testing.declarations import PreCharge, canonical, hide_data_values, run_to_charge
from dpopt.testing.set_cases import SET_CASES

N = 12
Y_BOUND = 2.0
GRID = "1/4"
PRIVACY = ((1.0, 0.0), (1.0, 1e-5))


# ----------------------------------------------------------------------------- discovery


def _concrete(base: type) -> list[type]:
    """Every concrete subclass of ``base`` defined in the dpopt package (not its test harness)."""
    return subclasses(base, exclude=("dpopt.testing",))


assert dpopt.mechanisms  # imported so that every mechanism module is loaded
import_package("dpopt.modeling")  # and every loss module
#: every mechanism built from (ε, δ) and run on a Problem; the diagnostics' counts (a CountQuery,
#: not a Problem) and their composition with a model's mechanism have their own pre-charge tests
#: in tests/mechanisms/test_diagnostics.py
MECHANISMS = [m for m in _concrete(Mechanism) if m not in (dp.DiagnosticCounts, dp.WithDiagnostics)]
LOSSES: list[Any] = [*_concrete(Loss), dp.ZeroOneLoss, dp.ScoreIndicator, dp.CappedMin]


def _selection_build(params: dict[str, Any], budget: Any) -> Mechanism:
    noise = "gaussian" if budget.delta > 0 else "l2-laplace"
    return dp.OutputPerturbation(budget.epsilon, budget.delta, tolerance=params["tolerance"], noise=noise)


#: how to fill a *required* keyword of a mechanism's constructor, by the keyword's name and δ (a
#: new mechanism with a new required keyword fails the guard below until it is added here)
REQUIRED_ARGUMENTS: dict[str, Callable[[float], Any]] = {
    "candidates": lambda delta: [{"tolerance": 1e-6}, {"tolerance": 1e-5}],
    "build": lambda delta: _selection_build,
}
#: optional keywords whose valid value depends on δ (so that both privacy settings are covered)
FOR_DELTA: dict[str, Callable[[float], Any]] = {
    "stopping": lambda delta: "papernot-steinke" if delta > 0 else "liu-talwar",
}


def _settings(cls: type) -> dict[str, Callable[[float], Any]] | None:
    """The keywords beyond (ε, δ) to pass, as functions of δ; None if a required one is unknown."""
    out: dict[str, Callable[[float], Any]] = {}
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name in ("self", "epsilon", "delta") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        if p.default is inspect.Parameter.empty:
            if name not in REQUIRED_ARGUMENTS:
                return None
            out[name] = REQUIRED_ARGUMENTS[name]
        elif name in FOR_DELTA:
            out[name] = FOR_DELTA[name]
    return out


def _mechanisms(cls: type) -> list[tuple[str, Mechanism]]:
    """``cls`` built with each privacy setting its constructor accepts."""
    settings = _settings(cls)
    assert settings is not None
    built = []
    for eps, delta in PRIVACY:
        extra = {name: fill(delta) for name, fill in settings.items()}
        try:
            built.append((f"eps={eps},delta={delta}", cls(eps, delta, **extra)))
        except (dp.errors.DpoptError, ValueError, TypeError):
            continue  # the constructor sees only settings: no data is involved
    return built


def test_every_mechanism_can_be_built_by_the_generic_factory():
    assert {"ObjectivePerturbation", "OPDisc", "PrivateSelection", "DPGradientDescent"} <= {
        c.__name__ for c in MECHANISMS}
    for cls in MECHANISMS:
        assert _settings(cls) is not None, f"{cls.__name__} has a required keyword not in REQUIRED_ARGUMENTS"
        assert _mechanisms(cls), f"{cls.__name__} accepts neither (1, 0) nor (1, 1e-5)"


# ----------------------------------------------------------------------------- public fixtures


def _features(d: int, seed: int = 0) -> np.ndarray:
    """Rows on the declared grid of [−1, 1]^d."""
    return np.round(np.random.default_rng(seed).uniform(-1, 1, (N, d)) * 4) / 4


def _labels() -> np.ndarray:
    return np.where(np.arange(N) % 3 == 0, -1.0, 1.0)  # ±1: admissible for every loss


def _dataset(X: np.ndarray, y: np.ndarray) -> dp.Dataset:
    d = X.shape[1]
    return dp.Dataset(X, y, schema=dp.Schema.uniform(d, dp.Numeric(-1, 1, grid=GRID)), y_bound=Y_BOUND)


def _regularizers(d: int) -> dict[str, Callable[[], tuple[Any, ...]]]:
    return {
        "none": lambda: (),
        "l2sq": lambda: (L2Squared(d, 0.5),),
        "l2sq+omega": lambda: (L2Squared(d, 0.5), SubmodularNorm(d, Cardinality(d), 0.1)),
    }


#: the structure of a problem without its data: (loss class, set fixture name or None, regularizers)
Shape = tuple[Any, "str | None", str]


#: classes of the multinomial loss here: its θ is d×2, so it runs without a set of dimension d
CLASSES = 2


def _shapes() -> Iterator[Shape]:
    for loss in LOSSES:
        if loss in (dp.ZeroOneLoss, dp.ScoreIndicator, dp.CappedMin):
            yield loss, None, "none"
            continue
        if loss is dp.MultinomialLogisticLoss:
            yield from ((loss, None, reg) for reg in ("none", "l2sq"))
            continue
        for reg in _regularizers(2):
            yield loss, None, reg
        for set_name in SET_CASES:
            for reg in ("none", "l2sq"):
                yield loss, set_name, reg


SHAPES = list(_shapes())


@cache
def _set(name: str) -> Any:
    """One instance per set fixture (immutable; shared by the problems)."""
    return SET_CASES[name]()


def _dim(shape: Shape) -> int:
    return 2 if shape[1] is None else int(_set(shape[1]).dim)


def _problem(shape: Shape, data: dp.Dataset) -> Any:
    """The problem of ``shape`` on ``data`` (whose d fits the set)."""
    loss_cls, set_name, reg = shape
    d = data.n_features
    theta = dp.Variable(d)
    if loss_cls is dp.ZeroOneLoss:
        return dp.DiscreteProblem(dp.ZeroOneLoss(data, theta, dp.IntegerGrid(1, -1, 1, l2_bound=math.sqrt(d))))
    if loss_cls is dp.ScoreIndicator:  # a sparse integer score with a side constraint
        domain = dp.DiscreteDomain(d, -1, 1, max_nonzero=1, A_ub=[[1.0] * d], b_ub=[0.0])
        return dp.DiscreteProblem(dp.ScoreIndicator(data, theta, domain) + dp.Ramp(data, theta, domain))
    if loss_cls is dp.CappedMin:  # one of d sites at the corners of the declared box
        sites = np.eye(d)
        return dp.DiscreteProblem(dp.CappedMin(data, theta, dp.OneOf(d), lambda r: np.abs(sites - r).sum(axis=1), cap=2.0))
    if loss_cls is dp.MultinomialLogisticLoss:
        wide = dp.Variable(d * CLASSES)
        return dp.Problem(loss_cls(data, wide, classes=CLASSES), regularizer=_regularizers(d * CLASSES)[reg]() or None)
    constraint = None if set_name is None else _set(set_name)
    regs = _regularizers(d)[reg]()
    return dp.Problem(loss_cls(data, theta), constraint=constraint, regularizer=regs or None)


def _base(shape: Shape) -> dp.Dataset:
    return _dataset(_features(_dim(shape)), _labels())


def _id(shape: Shape) -> str:
    return f"{shape[0].__name__} over {shape[1] or 'R^d'} + {shape[2]}"


@pytest.fixture(autouse=True, scope="module")
def _public_calibrations_stand_in() -> Iterator[None]:
    """Fast stand-ins, in this module only, for two pre-charge computations that take no data
    argument and cost seconds: a set's Monte Carlo Gaussian width (a function of the set alone,
    thousands of LPs for a polytope) and DP-SGD's PLD multiplier (a function of q, T, ε, δ).
    They cannot read a data value, so replacing them by deterministic functions of the same
    public arguments keeps every check below meaningful and the module fast."""
    from dpopt.modeling.constraint_set import ConstraintSet, GaussianWidth

    def width(self: Any, *, n_samples: int = 2_000, confidence: float = 0.95, seed: int | None = 0) -> Any:
        w = float(self.radius(2)) * math.sqrt(self.dim)
        return GaussianWidth(value=w, low=w, high=w, method="monte-carlo", n_samples=n_samples,
                             confidence=float(confidence))

    def multiplier(sampling_rate: float, steps: int, epsilon: float, delta: float, **_: Any) -> float:
        return 1.0 + sampling_rate * math.sqrt(steps * math.log(1.0 / delta)) / epsilon

    patch = pytest.MonkeyPatch()
    for cls in [ConstraintSet, *subclasses(ConstraintSet, within=None, concrete=False)]:
        if "gaussian_width_monte_carlo" in cls.__dict__:
            patch.setattr(cls, "gaussian_width_monte_carlo", width)
    patch.setattr("dpopt.mechanisms.gradient_descent.sampled_gaussian_multiplier", multiplier)
    yield
    patch.undo()


@cache
def _built(cls: type) -> tuple[tuple[str, Mechanism], ...]:
    return tuple(_mechanisms(cls))


@cache
def _outcome(cls: type, setting: int, shape: Shape) -> PreCharge:
    """How the pre-charge path of the ``setting``-th build of ``cls`` ends on the base data."""
    return run_to_charge(_built(cls)[setting][1], _problem(shape, _base(shape)))


def _run_hidden(monkeypatch: pytest.MonkeyPatch, mechanism: Mechanism, problem: Any, what: str) -> PreCharge:
    with monkeypatch.context() as m:
        reads = hide_data_values(m)
        try:
            hidden = run_to_charge(mechanism, problem)
        except AssertionError as exc:
            raise AssertionError(f"{what} read a data value before the charge") from exc
    assert not reads, f"{what} read a data value before the charge (and caught the error)"
    return hidden


# ----------------------------------------------------------------------------- D vs hidden D


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_pre_charge_path_reads_no_data_value(monkeypatch, cls):
    """Every loss × set × regularizer: the run up to the charge ends the same way (the same
    charge and parameters, or the same refusal) on D and with every value of D hidden."""
    reached = 0
    for setting, (label, mechanism) in enumerate(_built(cls)):
        for shape in SHAPES:
            real = _outcome(cls, setting, shape)
            what = f"{cls.__name__} ({label}) on {_id(shape)}"
            hidden = _run_hidden(monkeypatch, mechanism, _problem(shape, _base(shape)), what)
            assert hidden == real, f"{what}: {real} on D but {hidden} on hidden D"
            reached += real.outcome == "charge"
    if not cls.__name__.startswith("_"):  # a private base class may refuse everything
        assert reached, f"{cls.__name__} reached the charge on no fixture: the check would be vacuous"


def test_a_read_of_a_data_value_is_caught(monkeypatch):
    """The harness itself: a mechanism whose plan reads a label is caught, even when the read's
    error is swallowed (the mutant must fail the check above)."""

    class ReadsLabels(dp.OutputPerturbation):
        def plan(self, problem, options=None):
            try:
                float(np.max(problem.loss.data.y))
            except AssertionError:
                pass
            return super().plan(problem, options)

    shape = (dp.LogisticLoss, None, "l2sq")
    problem = _problem(shape, _base(shape))
    mutant = ReadsLabels(1.0, 1e-5)
    assert run_to_charge(mutant, problem).outcome == "charge"
    with pytest.raises(AssertionError, match="read a data value"):
        _run_hidden(monkeypatch, mutant, problem, "the mutant")


# ----------------------------------------------------------------------------- neighbours


def _neighbours(data: dp.Dataset) -> dict[str, dp.Dataset]:
    """D′ for D: one label changed to another admissible or inadmissible value, one row replaced."""
    pos = int(np.flatnonzero(_labels() == 1.0)[0])
    neg = int(np.flatnonzero(_labels() == -1.0)[0])
    X, y = np.array(_features(data.n_features)), _labels()
    out = {}
    for name, (i, value) in {"1→0.5": (pos, 0.5), "1→7": (pos, 7.0), "1→0": (pos, 0.0), "−1→0": (neg, 0.0),
                             "1→−1": (pos, -1.0), "−1→3": (neg, 3.0)}.items():
        y2 = y.copy()
        y2[i] = value
        out[name] = _dataset(X, y2)
    X2, y2 = X.copy(), y.copy()
    X2[pos], y2[pos] = -X[pos][::-1], -0.5
    out["row replaced"] = _dataset(X2, y2)
    return out


def _spread(items: list[Shape], k: int) -> list[Shape]:
    """Up to ``k`` evenly spaced items (first and last included)."""
    if len(items) <= k:
        return items
    return [items[round(j * (len(items) - 1) / (k - 1))] for j in range(k)]


def _neighbour_shapes(cls: type, setting: int, loss: Any) -> list[Shape]:
    """A few charged shapes of ``loss`` (unconstrained and constrained) and one refused one."""
    mine = [s for s in SHAPES if s[0] is loss]
    charged = [s for s in mine if _outcome(cls, setting, s).outcome == "charge"]
    refused = [s for s in mine if _outcome(cls, setting, s).outcome == "refused"]
    return _spread(charged, 3) + refused[:1]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_pre_charge_path_is_the_same_on_label_and_row_neighbours(cls, loss):
    """What is charged (ε, δ, label, public parameters) — or the refusal — is the same on D and
    on every D′ with one label changed (admissible or not) or one row replaced."""
    for setting, (label, mechanism) in enumerate(_built(cls)):
        for shape in _neighbour_shapes(cls, setting, loss):
            base = _outcome(cls, setting, shape)
            for name, other in _neighbours(_base(shape)).items():
                got = run_to_charge(mechanism, _problem(shape, other))
                assert got == base, f"{cls.__name__} ({label}) on {_id(shape)}, label {name}: {base} vs {got}"


def _first_charged(cls: type, loss: Any) -> tuple[int, Shape] | None:
    for setting in range(len(_built(cls))):
        for shape in SHAPES:
            if shape[0] is loss and _outcome(cls, setting, shape).outcome == "charge":
                return setting, shape
    return None


def _released(mechanism: Mechanism, problem: Any, planned: dict[str, Any]) -> Any:
    """What a real run shows besides its noisy output: the parameter names, the planned
    (pre-charge) parameters' values, the guarantee, the notes, the number of oracle calls and
    the ledger entry — or the exception's type and message."""
    ledger = dp.Ledger()
    run = copy.copy(mechanism)
    run.ledger = ledger
    try:
        r = run.run(problem, seed=0)
    except Exception as exc:  # noqa: BLE001 — compared across neighbours
        return ("raised", type(exc).__name__, str(exc), canonical([(c.epsilon, c.delta, c.label) for c in ledger.charges]))
    assert all(r.parameters[k] == v or canonical(r.parameters[k]) == canonical(v) for k, v in planned.items())
    return canonical({"names": sorted(r.parameters), "planned": {k: r.parameters[k] for k in planned},
                      "guarantee": (r.epsilon, r.delta, r.private, r.mechanism, r.problem), "notes": r.notes,
                      "features": r.feature_names, "calls": len(r.oracle_calls),
                      "ledger": [(c.epsilon, c.delta, c.label, c.mechanism, c.released) for c in ledger.charges]})


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_released_parameters_are_the_same_on_neighbours(cls):
    """For every loss the mechanism accepts, a real run on D and on D′ (a label 1 → 0.5, a row
    replaced) shows the same public facts: the same parameter names, planned parameters, notes,
    number of oracle calls and ledger entry (the noisy θ and noisy scores of course differ)."""
    for loss in LOSSES:
        found = _first_charged(cls, loss)
        if found is None:
            continue  # refused on every fixture: the same refusal on D′ is checked above
        setting, shape = found
        mechanism = _built(cls)[setting][1]
        planned = dict(dict(_outcome(cls, setting, shape).details)["parameters"])
        data = _base(shape)
        others = _neighbours(data)
        views = [_released(mechanism, _problem(shape, d), planned)
                 for d in (data, others["1→0.5"], others["row replaced"])]
        assert views[0] == views[1] == views[2], f"{cls.__name__} on {_id(shape)}"


# ----------------------------------------------------------------------------- the reproduced finding


def _omega_problem(y: np.ndarray, loss: Any = dp.SquaredLoss, ridge: float = 0.5) -> dp.Problem:
    d = 4
    X = np.round(np.random.default_rng(3).uniform(-1, 1, (N, d)) * 2) / 4
    data = dp.Dataset(X, y, x_bound=1.0, y_bound=Y_BOUND)
    theta = dp.Variable(d)
    return dp.Problem(loss(data, theta), regularizer=(L2Squared(d, ridge), SubmodularNorm(d, Cardinality(d), 0.1)))


def _calibrations(problem: dp.Problem) -> tuple[Any, ...]:
    plan = dp.SubmodularOutputPerturbation(1.0, 1e-5).plan(problem)
    norm = next(r for r in problem.regularizers if isinstance(r, SubmodularNorm))
    dual = dp.DualFrankWolfe(1.0, 1e-5)
    return (plan.parameters["noise_scale"], plan.parameters["domain_radius_l2"], plan.parameters["sensitivity_l2"],
            dual.theta_sensitivity(problem, norm), canonical(dual.plan(problem).parameters))


def test_squared_loss_calibration_reads_y_bound_not_the_labels():
    """SubmodularOutputPerturbation and DualFrankWolfe, squared loss, y_bound = 2: changing one
    label 1 → 0.5 changes no noise scale, radius or sensitivity; the radius is the one the
    declaration implies, √(2 φ₀/Λ) + tolerance with φ₀ = sup_{|y|≤2} (0 − y)² = 4."""
    y = _labels()
    y2 = y.copy()
    y2[np.flatnonzero(y == 1.0)[0]] = 0.5
    on_d, on_d2 = _calibrations(_omega_problem(y)), _calibrations(_omega_problem(y2))
    assert on_d == on_d2
    assert on_d[1] == pytest.approx(math.sqrt(2.0 * Y_BOUND**2 / 0.5) + 1e-4)
    smax = 0.1 * 2.0  # lam · the ℓ2 radius of |P|(F) for F = |A| in d = 4: ‖(1, 1, 1, 1)‖₂
    ridge_radius = (smax + math.sqrt(smax**2 + 2 * 0.5 * Y_BOUND**2)) / 0.5 + 1e-9
    assert on_d[3][2] == pytest.approx(ridge_radius)


def test_a_calibration_from_the_labels_is_caught(monkeypatch):
    """The mutant that reads the labels (φ₀ over {±1} when they happen to be binary, the old
    rule) gives different calibrations on the same neighbours: the check above would catch it."""

    def from_labels(self):
        ys = np.array([-1.0, 1.0]) if np.all(np.abs(self.data.y) == 1.0) else self.declared_labels()
        return float(np.max(self.phi(np.zeros(ys.size), ys)))

    monkeypatch.setattr(Loss, "value_at_zero_bound", from_labels)
    y = _labels()
    y2 = y.copy()
    y2[np.flatnonzero(y == 1.0)[0]] = 0.5
    assert _calibrations(_omega_problem(y)) != _calibrations(_omega_problem(y2))


@pytest.mark.parametrize("value", [0.5, 3.0, 0.0, -2.0])
def test_classification_losses_map_labels_and_release(value):
    """A label that is not ±1 is mapped by the public rule (y > 0 ↦ +1, otherwise −1), never
    refused: the run releases, and charges what it charges on the mapped labels."""
    y = _labels()
    i = int(np.flatnonzero(y == 1.0)[0])
    y_odd = y.copy()
    y_odd[i] = value
    mapped = y.copy()
    mapped[i] = 1.0 if value > 0 else -1.0
    for loss in (c for c in LOSSES if getattr(c, "label_domain", "classes") == "classes"):
        shape = (loss, None, "l2sq") if loss is not dp.ZeroOneLoss else (loss, None, "none")
        odd = _problem(shape, _dataset(_features(2), y_odd))
        assert np.array_equal(np.asarray(odd.loss.data.y), mapped), loss.__name__
        charged = 0
        # every mechanism as the generic factory builds it, and DP-GD with an explicit step size (the
        # hinge loss declares no smoothness, so no default-built mechanism accepts it unconstrained)
        mechanisms = [m for cls in MECHANISMS for _, m in _built(cls)]
        mechanisms.append(dp.DPGradientDescent(1.0, 1e-5, learning_rate=0.1, ledger=dp.Ledger()))
        for mechanism in mechanisms:
            reference = run_to_charge(mechanism, _problem(shape, _dataset(_features(2), mapped)))
            assert run_to_charge(mechanism, odd) == reference, (type(mechanism).__name__, loss.__name__)
            charged += reference.outcome == "charge"
        assert charged, f"no mechanism accepts {_id(shape)}"
    release = dp.ObjectivePerturbation(1.0, 1e-5, ledger=dp.Ledger()).run(
        _problem((dp.LogisticLoss, None, "l2sq"), _dataset(_features(2), y_odd)), seed=1)
    assert release.private and np.all(np.isfinite(release.theta))


def test_regression_labels_are_clipped_to_the_declared_bound_when_the_dataset_is_built():
    """A regression loss reads labels within ±y_bound: a label outside is clipped when the dataset
    is built (clip=True, the default); clip=False refuses it there, before any run, and says that
    this check of one's own table is not private (and quotes no value)."""
    y = _labels()
    y[0] = 7.25
    data = _dataset(_features(2), y)
    assert data.y[0] == Y_BOUND and np.array_equal(data.y[1:], y[1:])
    for loss in (c for c in LOSSES if getattr(c, "label_domain", None) == "bounded"):
        assert loss(data, dp.Variable(2)).data is data
    with pytest.raises(dp.errors.DataError, match="not private") as refused:
        dp.Dataset(_features(2), y, x_bound=2.0, y_bound=Y_BOUND, clip=False)
    assert "7.25" not in str(refused.value)


def test_every_loss_shares_one_dataset_so_selection_accepts_it():
    """Losses built on one Dataset share one (mapped) dataset, as PrivateSelection requires of its
    candidates' problems; mapping twice is the identity."""
    data = _dataset(_features(2), _labels())
    for loss in (c for c in LOSSES if c not in (dp.ZeroOneLoss, dp.ScoreIndicator, dp.CappedMin)):
        if loss is dp.MultinomialLogisticLoss:
            first, second = (loss(data, dp.Variable(2 * CLASSES), classes=CLASSES) for _ in range(2))
        else:
            first, second = loss(data, dp.Variable(2)), loss(data, dp.Variable(2))
        assert first.data is second.data
        assert first.data.with_class_labels() is first.data.with_class_labels()

    def problem(params):
        theta = dp.Variable(2)
        return dp.Problem(dp.LogisticLoss(data, theta), regularizer=L2Squared(theta, params["ridge"]))

    selection = dp.PrivateSelection(1.0, 0.0, candidates=[{"ridge": 0.5}, {"ridge": 1.0}],
                                    build=lambda params, budget: dp.OutputPerturbation(budget.epsilon, 0.0))
    assert run_to_charge(selection, problem).outcome == "charge"


def test_nan_label_of_a_dask_dataset_maps_to_the_negative_class():
    """On a Dask-backed dataset (read inside the run), a NaN label is read as 0 and a classification
    loss maps it to −1, lazily."""
    da = pytest.importorskip("dask.array")
    y = _labels()
    y[0], y[1] = np.nan, 0.5
    data = dp.Dataset(da.from_array(_features(2), chunks=(6, 2)), da.from_array(y, chunks=6), x_bound=2.0)
    mapped = dp.LogisticLoss(data, dp.Variable(2)).data
    assert mapped.is_distributed
    expected = _labels()
    expected[0], expected[1] = -1.0, 1.0
    assert np.array_equal(np.asarray(mapped.y.compute()), expected)
