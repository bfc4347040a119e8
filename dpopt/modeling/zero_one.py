"""The 0/1 loss of a linear classifier over a discrete domain (NRVW19 Sec. 5, App. D).

Margins are evaluated exactly, in integers: the data carry a declared
:class:`~dpopt.modeling.schema.Schema`, so A = s·X is an integer matrix
(:meth:`ZeroOneLoss.integer_rows`), and at a grid point w = τk

    y_i⟨x_i, w⟩ = (τ/s)·y_i⟨A_i, k⟩,    so    error_i ⟺ y_i⟨A_i, k⟩ ≤ 0.

The paper states the loss with real margins; floating point can call a margin that is
exactly zero (a point on the hyperplane, an error) slightly positive or negative.  Every
discrete backend, their re-checks and :meth:`ZeroOneLoss.values` use these same integers,
so they agree exactly (no floating-point margin can differ between them).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.row_losses import ScoreIndicator
from dpopt.modeling.variable import Variable


class ZeroOneLoss(ScoreIndicator):
    """ℓ_i(w) = c_i · 1[y_i ⟨x_i, w⟩ ≤ 0]: a point on the hyperplane counts as an error.

    The weighted instance of :class:`~dpopt.modeling.row_losses.ScoreIndicator` (signed, ≤ 0): it
    sums and scales with the other row losses and compiles through the general model
    (:mod:`dpopt.compile.discrete_ir`); alone over an IntegerGrid it keeps its own encodings (the
    merged primitive-direction MIPs and the grouped decomposition, :mod:`dpopt.compile.mip_pyomo`,
    :mod:`dpopt.compile.mip_grouped`).  Its unit is the gcd of the (clipped) weights, and a group's
    multiplicity is its rows' total weight in that unit, so totals stay exact integers of the unit.

    Parameters
    ----------
    data : Dataset
        Labels must be ±1, and the dataset must carry a :class:`~dpopt.modeling.schema.Schema`
        (the declared grid makes the margins exact integers).
    variable : Variable
        The classifier w; its size must equal the number of features.
    domain : IntegerGrid
        The discrete domain W_τ.
    weights : array_like, optional
        Non-negative per-row weights c_i (default 1): the weighted 0/1 loss.
    weight_bound : float, optional
        The declared, public bound B on the weights (default 1 without ``weights``).  The
        mechanisms' constants (G = B/τ, losses in [0, B]) use it, never the weights' values;
        weights above it are clipped to it (mapped, not refused).  Without it, weighted
        losses still compile (for the oracles), but the private mechanisms refuse them.

    Raises
    ------
    ModelError
        If the data have no schema, the sizes disagree, the weights are malformed or the
        domain is not an IntegerGrid (public facts: no value decides a refusal).

    Notes on labels
    ---------------
    Labels are mapped onto {−1, +1} row by row (y > 0 ↦ +1, otherwise −1) rather than
    refused, so one row's label cannot make the loss refuse a dataset.

    Notes
    -----
    Each ℓ_i takes values in {0, c_i} and W_τ is τ-separated, so ℓ_i is
    (max c_i / τ)-Lipschitz on W_τ in the ℓ2 norm (NRVW19 Sec. 3.1): that is the G
    of OPDisc.  Unlike the convex losses this is the *sum* Σ ℓ_i (the paper's L(D, w)).
    """

    name = "zero-one"

    def __init__(self, data: Dataset, variable: Variable, domain: IntegerGrid,
                 weights: np.ndarray | None = None, *, weight_bound: float | None = None) -> None:
        if not isinstance(data, Dataset) or not isinstance(variable, Variable):
            raise ModelError("ZeroOneLoss needs a dpopt Dataset and Variable")
        if variable.size != data.n_features:
            raise ModelError(f"variable has size {variable.size} but the data has {data.n_features} features")
        if not isinstance(domain, IntegerGrid):
            raise ModelError("ZeroOneLoss needs an IntegerGrid domain (a continuous w is not supported)")
        if data.schema is None:
            raise ModelError("ZeroOneLoss needs data with a declared schema: build the Dataset with "
                             "schema=dp.Schema(...) (e.g. dp.Schema.uniform(d, dp.Numeric(-1, 1, grid='1/100'))) "
                             "so that margins are exact integers on the declared grid")
        data = data.with_class_labels()  # mapped row by row, never refused for a value
        w = np.ones(data.n) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (data.n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ModelError(f"weights must be {data.n} finite non-negative numbers")
        if weight_bound is None and weights is None:
            weight_bound = 1.0
        if weight_bound is not None:
            if isinstance(weight_bound, bool) or not (isinstance(weight_bound, (int, float))
                                                      and np.isfinite(weight_bound) and weight_bound > 0):
                raise ModelError("weight_bound must be a positive finite number (a declared bound)")
            w = np.minimum(w, float(weight_bound))
        super().__init__(data, variable, domain)  # signed ⟨x, w⟩ ≤ 0, labels mapped to ±1
        self.weight_bound = None if weight_bound is None else float(weight_bound)
        self.data, self.variable, self.domain, self.weights = data, variable, domain, w
        self.unit = _weight_unit(w)
        self.public_unit = weights is None  # per-row weights are data: their gcd is not public
        self.row_bound = Fraction(self._bound)
        self.terms = ((Fraction(1), self),)

    @functools.cached_property
    def groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(unique signed integer rows, first row of each, total weight of each in units of :attr:`unit`)."""
        keys = self.group_keys()
        uniq, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        mult = [0] * uniq.shape[0]
        for i, c in zip(inverse.tolist(), self.weights.tolist(), strict=True):
            mult[i] += int(Fraction(c) / self.unit)  # exact: every weight is a multiple of the unit
        big = max(mult, default=0) * max(1, len(mult)) >= 2**62
        return uniq, first, np.array(mult, dtype=object if big else np.int64)

    @property
    def declared(self) -> bool:
        """Whether the weights' bound is declared (public), as the private mechanisms need."""
        return self.weight_bound is not None

    @property
    def _bound(self) -> float:
        return self.weight_bound if self.weight_bound is not None else float(self.weights.max())

    @property
    def lipschitz(self) -> float:
        """G = B / τ on the τ-separated grid (B the declared weight bound)."""
        return self._bound / self.domain.step

    @property
    def lipschitz_l1(self) -> float:
        """G₁ = B / τ: Lipschitz in the ℓ1 norm on the grid (what OPSamp needs).

        |ℓ_i(w) − ℓ_i(w')| ≤ c_i ≤ c_i ‖w − w'‖_∞ / τ ≤ c_i ‖w − w'‖₁ / τ for w ≠ w' in W_τ.
        """
        return self._bound / self.domain.step

    @property
    def value_bound(self) -> float:
        """B, the declared weight bound: each ℓ_i takes values in [0, B] (a bounded loss)."""
        return self._bound

    @functools.cached_property
    def _integers(self) -> np.ndarray:
        assert self.data.schema is not None
        A = self.data.schema.to_integers(self.data.X)
        A.setflags(write=False)
        return A

    def integer_rows(self) -> np.ndarray:
        """A = s·X (n × d, int64, read-only): the exact integer features (cached).

        s is :attr:`Schema.scale`; A is computed from the grid indices of the mapped rows.
        """
        return self._integers

    @property
    def scale(self) -> int:
        """s: the schema's common denominator (A = s·X)."""
        assert self.data.schema is not None
        return self.data.schema.scale

    def grid_indices(self, W: np.ndarray) -> np.ndarray:
        """k = rint(W/τ) (int64) for each row of ``W``."""
        return np.rint(np.atleast_2d(np.asarray(W, dtype=np.float64)) / self.domain.step).astype(np.int64)

    def margins(self, K: np.ndarray) -> np.ndarray:
        """y_i⟨A_i, k⟩ exactly, for each row k of ``K`` (m × n).

        float64 BLAS when a public bound (declared |A_ij| times max|k|, summed over j) is
        below 2⁵³ (every product and partial sum is then an exactly representable integer),
        int64 below 2⁶², Python integers beyond that.
        """
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        A = self._integers
        assert self.data.schema is not None
        kmax = int(np.abs(K).max(initial=0))
        bound = int(self.data.schema.integer_bounds().astype(object).sum()) * kmax
        y = self.data.y
        if bound < 2**53:
            return (K.astype(np.float64) @ A.T.astype(np.float64)) * y
        if bound < 2**62:
            return (K @ A.T) * y.astype(np.int64)
        return (K.astype(object) @ A.T.astype(object)) * y.astype(np.int64).astype(object)

    def values(self, W: np.ndarray) -> np.ndarray:
        """L(D, w) = Σ_i c_i 1[y_i⟨A_i, k⟩ ≤ 0] for each row w = τk of ``W`` (m × d).

        Exact integer margins (module docstring); ``W`` is read as the grid points
        τ·rint(W/τ).
        """
        errors = np.asarray(self.margins(self.grid_indices(W)) <= 0, dtype=np.float64)
        return errors @ self.weights

    def value(self, w: np.ndarray) -> float:
        return float(self.values(np.asarray(w)[None, :])[0])


def _weight_unit(weights: np.ndarray) -> Fraction:
    """The gcd of the positive weights as exact rationals (1 when all weights are 0)."""
    pos = [Fraction(float(c)) for c in np.unique(weights[weights > 0])]
    if not pos:
        return Fraction(1)
    den = math.lcm(*(f.denominator for f in pos))
    return Fraction(math.gcd(*(int(f * den) for f in pos)), den)
