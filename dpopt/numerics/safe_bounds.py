"""Safe lower bounds of a linear program from an approximate dual vector (Neumaier–Shcherbina 2004).

For the LP ``min cᵀx s.t. A x = b, 0 ≤ x ≤ u`` and *any* vector y (NS04 Sec. 2),

    cᵀx = yᵀb + (c − Aᵀy)ᵀx ≥ yᵀb + Σ_j min(0, (c − Aᵀy)_j · u_j)    for every feasible x,

so the right-hand side is a lower bound whatever y is: an LP solver only *proposes* y (its
dual solution), and a wrong y can only give a weak bound, never a false one.  The bound is
sound only if it is evaluated without rounding error, which :class:`SafeDualBound` does:

1. y is rounded to a dyadic vector Y·2^-k with integer Y (any y is allowed, so rounding
   it is too), k chosen from |y| and the matrix so that every integer below stays < 2^53;
2. Aᵀ Y and bᵀY are computed in int64 (A and b must be integral, which the grouped
   decomposition's rows are): exact, and exactly representable as doubles;
3. the sign of each reduced cost c_j − (AᵀY)_j·2^-k is an exact comparison of two doubles,
   and the final sum ``yᵀb + Σ (negative reduced costs) + const − threshold`` is a sum of
   doubles, whose sign :func:`math.fsum` (a correctly rounded sum) returns exactly.

So :meth:`SafeDualBound.proves` decides "the LP's minimum, plus ``const``, is at least
``threshold``" exactly for the given double costs and bounds; it answers False (not proven)
for anything it cannot evaluate exactly (a non-integral matrix, a non-finite y, bounds other
than 0/1).  Nothing here imports a solver.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

__all__ = ["SafeDualBound"]

#: every integer of the computation stays below 2^INTEGER_BITS (exact in int64 and in a double)
INTEGER_BITS = 51
#: largest exponent k of the dual's rounding grid 2^-k (keeps every 2^-k·integer a normal double)
MAX_EXPONENT = 600
#: largest |entry| of A and b accepted (integers)
MAX_ENTRY = 2**31


class SafeDualBound:
    """Exact lower bounds of ``min cᵀx + const s.t. A x = b, 0 ≤ x ≤ u`` (u_j ∈ {0, 1}) from a dual y.

    Parameters
    ----------
    starts, index, value : ndarray
        The rows of A in CSR form (row r holds ``value[starts[r]:starts[r+1]]`` at columns
        ``index[...]``).
    rhs : ndarray
        b.
    n_columns : int
        Columns of A.

    Notes
    -----
    NS04 Sec. 2; the module docstring explains why the evaluation is exact.  A matrix or
    right-hand side that is not integral (or too large) makes every :meth:`proves` False.
    """

    def __init__(self, starts: np.ndarray, index: np.ndarray, value: np.ndarray, rhs: np.ndarray,
                 n_columns: int) -> None:
        value = np.asarray(value, dtype=np.float64)
        rhs = np.asarray(rhs, dtype=np.float64)
        self.n_rows, self.n_columns = int(rhs.size), int(n_columns)
        self.usable = bool(_integral(value) and _integral(rhs))
        ints = value.astype(np.int64) if self.usable else np.zeros(value.size, dtype=np.int64)
        # copies: scipy may sort a CSR matrix's indices in place, and the caller's rows must not change
        matrix = sp.csr_matrix((ints, np.array(index, dtype=np.int64), np.array(starts, dtype=np.int64)),
                               shape=(self.n_rows, self.n_columns))
        self.transposed = matrix.T.tocsr()  # Aᵀ in int64
        self.rhs = rhs.astype(np.int64) if self.usable else np.zeros(self.n_rows, dtype=np.int64)
        column_sums = np.asarray(abs(matrix).sum(axis=0)).reshape(-1)
        self.weight = int(max(1, int(column_sums.max(initial=0)), int(np.abs(self.rhs).sum())))

    def proves(self, costs: np.ndarray, upper: np.ndarray, const: float, y: np.ndarray, threshold: float) -> bool:
        """Whether the dual ``y`` proves ``min cᵀx + const ≥ threshold`` (exactly; False when it cannot)."""
        return self.check(costs, upper, const, y, threshold)[1]

    def bound(self, costs: np.ndarray, upper: np.ndarray, const: float, y: np.ndarray) -> float:
        """The safe bound yᵀb + Σ_j min(0, (c − Aᵀy)_j u_j) + const, rounded to the nearest double
        (−inf when it cannot be evaluated exactly); for reports and ordering, :meth:`proves` decides."""
        return self.check(costs, upper, const, y, -math.inf)[0]

    def check(self, costs: np.ndarray, upper: np.ndarray, const: float, y: np.ndarray,
              threshold: float) -> tuple[float, bool]:
        """(:meth:`bound`, :meth:`proves`) from one exact evaluation of the dual's terms."""
        terms = self._terms(costs, upper, y)
        if terms is None or not math.isfinite(const):
            return -math.inf, False
        value = math.fsum([*terms, float(const)])
        return value, math.isfinite(threshold) and math.fsum([*terms, float(const), -float(threshold)]) >= 0.0

    def _terms(self, costs: np.ndarray, upper: np.ndarray, y: np.ndarray) -> list[float] | None:
        """Doubles whose exact sum is the bound without ``const`` (None: not exactly evaluable)."""
        costs = np.asarray(costs, dtype=np.float64)
        upper = np.asarray(upper, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if (not self.usable or costs.shape != (self.n_columns,) or upper.shape != (self.n_columns,)
                or y.shape != (self.n_rows,) or not np.all(np.isfinite(costs)) or not np.all(np.isfinite(y))
                or not np.all((upper == 0.0) | (upper == 1.0))):
            return None
        k = _exponent(float(np.abs(y).max(initial=0.0)), self.weight)
        Y = np.rint(np.ldexp(y, k)).astype(np.int64)  # |Y| ≤ 2^INTEGER_BITS / weight
        q = np.ldexp((self.transposed @ Y).astype(np.float64), -k)  # (AᵀY)·2^-k, exact
        yb = math.ldexp(float(int(self.rhs @ Y)), -k)  # bᵀY·2^-k, exact
        if not (np.all(np.isfinite(q)) and math.isfinite(yb)):
            return None
        negative = (upper == 1.0) & (costs < q)  # exact comparison of doubles
        return [yb, *costs[negative].tolist(), *(-q[negative]).tolist()]


def _integral(a: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(a)) and np.all(a == np.rint(a)) and np.all(np.abs(a) <= MAX_ENTRY))


def _exponent(largest: float, weight: int) -> int:
    """k with largest·2^k·weight ≤ 2^INTEGER_BITS − weight (so rounding keeps every sum below 2^INTEGER_BITS)."""
    if largest == 0.0:
        return 0
    k = math.floor(math.log2((2.0**INTEGER_BITS / weight - 1.0) / largest))
    while largest * 2.0**k * weight + weight > 2.0**INTEGER_BITS:  # guard log2's rounding
        k -= 1
    return min(k, MAX_EXPONENT)
