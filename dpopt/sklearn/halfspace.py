"""The oracle-efficient 0/1-loss mechanisms (NRVW19) as a scikit-learn classifier."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from dpopt.errors import ModelError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.rspm import RSPM
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.schema import Schema
from dpopt.modeling.variable import Variable
from dpopt.modeling.zero_one import ZeroOneLoss
from dpopt.privacy.ledger import Ledger
from dpopt.sklearn._base import DPClassifierBase


class DPHalfspaceClassifier(DPClassifierBase):
    """A private halfspace x ↦ sign⟨w, x⟩ minimizing the 0/1 loss over an integer grid.

    ``w`` ranges over {τk : k ∈ ℤᵈ, ``grid_low`` ≤ τkⱼ ≤ ``grid_high``, ‖w‖₂ ≤ ``l2_bound``}
    (:class:`dpopt.IntegerGrid`); every oracle call is an exact MIP solve, certified (NRVW19:
    RSPM, Alg. 3, ``mechanism="rspm"``, default; OPDisc, Alg. 1, ``"opdisc"``, needs δ > 0).
    The 0/1 loss needs a ``schema`` (margins are exact integers from the declared grids);
    ``fit`` takes the raw table.  Each fit solves MIPs: keep d and the grid small.

    Parameters
    ----------
    epsilon : float, default 1.0
    delta : float or None, default None
        None: 1/n² (n public).  RSPM also takes δ = 0 (pure ε-DP).
    mechanism : {"rspm", "opdisc"}
    schema : dpopt.Schema
        Required.
    grid_step, grid_low, grid_high : float, default 1, -1, 1
        The grid τ and per-coordinate bounds of w.
    l2_bound : float, optional
        The ℓ2 bound D of w (default: the box's own).
    fit_intercept : bool, default True
        Append the schema's constant-1 column (:meth:`dpopt.Schema.with_intercept`).
    classes, unknown_label, unseen, random_state, ledger, mechanism_options, diagnostics
        As in :class:`~dpopt.sklearn.DPLogisticRegression`.
    solver : str, default "auto"
        The MIP oracle (``"highs"``, ``"highs-grouped"``, ``"cpsat"``, ``"bruteforce"``, ...).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_coefficients)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    release_ : dpopt.Release

    Notes
    -----
    As for :class:`~dpopt.sklearn.DPLogisticRegression`: ``score()`` and scikit-learn's
    model-selection scores on private rows are exact, not private, and each fit costs (ε, δ).
    :class:`~dpopt.sklearn.DPSearchCV` does not search this estimator (its problem is not
    convex); choose its settings from public facts or spend budget on it knowingly.
    """

    _mechanisms: ClassVar[dict[str, type[Mechanism]]] = {"rspm": RSPM, "opdisc": OPDisc}
    _requires_schema = True

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *, mechanism: str = "rspm",
                 schema: Schema | None = None, grid_step: float = 1.0, grid_low: float = -1.0,
                 grid_high: float = 1.0, l2_bound: float | None = None, fit_intercept: bool = True,
                 classes: Any = None, unknown_label: str = "negative", unseen: str = "zero",
                 solver: Any = "auto", random_state: Any = None, ledger: Ledger | None = None,
                 mechanism_options: dict[str, Any] | None = None, diagnostics: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.schema = schema
        self.grid_step = grid_step
        self.grid_low = grid_low
        self.grid_high = grid_high
        self.l2_bound = l2_bound
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.unknown_label = unknown_label
        self.unseen = unseen
        self.solver = solver
        self.random_state = random_state
        self.ledger = ledger
        self.mechanism_options = mechanism_options
        self.diagnostics = diagnostics

    # the 0/1 loss reads the schema's grid; no separate row bound is declared
    x_bound = None
    x_norm = 2

    def _grid(self) -> IntegerGrid:
        values = (self.grid_step, self.grid_low, self.grid_high)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in values):
            raise ModelError("grid_step, grid_low and grid_high must be finite numbers")
        return IntegerGrid(step=float(self.grid_step), low=float(self.grid_low), high=float(self.grid_high),
                           l2_bound=None if self.l2_bound is None else float(self.l2_bound))

    def _check_settings(self) -> None:
        self._grid()
        self._check_classes()
        declared = self._declared_classes()
        if declared is not None and len(declared) != 2:
            raise ModelError(f"{type(self).__name__} is binary (a halfspace): declare classes=[negative, positive], "
                             f"not {len(declared)} classes; for several classes use DPLogisticRegression")

    def _targets(self, y: Any, n: int) -> tuple[Any, float | None]:
        labels, bound = super()._targets(y, n)
        if len(self.classes_) != 2:
            raise ValueError(f"{type(self).__name__} is binary: y holds {len(self.classes_)} classes; "
                             "for several classes use DPLogisticRegression")
        return labels, bound

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"binary_only": True, "poor_score": True}

    def _problem(self, data: Dataset) -> DiscreteProblem:
        return DiscreteProblem(ZeroOneLoss(data, Variable(data.n_features), self._grid()))
