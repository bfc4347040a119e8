"""Reproducible tables for the discrete decision models (``models/private_*.py``): nothing is downloaded.

Each generator draws a synthetic table from a fixed public recipe and returns it as a
:class:`~dpopt.modeling.dataset.Dataset` with a :class:`~dpopt.modeling.schema.Schema` that
declares every column's range and grid, so the losses of :mod:`dpopt.modeling.row_losses` read
exact integers.  The public side of each decision (candidate sites, the price grid) is a fixed
function of the declarations, never of the rows.  Synthetic data are not private data: ``seed``
only makes them reproducible; the models treat the rows as if they were private.

* :func:`make_risk_table` — a clinical-style table of binary and small-integer risk factors and
  an adverse-outcome label (a sparse integer scoring system is what generated it, plus noise).
* :func:`make_clients` and :func:`candidate_sites` — client locations on a public square grid
  (clustered around towns) and the public candidate sites of facility location.
* :func:`make_valuations` and :func:`price_grid` — buyers' valuations on a public grid and the
  posted prices to choose from.
"""

from __future__ import annotations

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.schema import Binary, Intercept, Numeric, Schema

__all__ = [
    "RISK_FACTORS",
    "candidate_sites",
    "client_schema",
    "make_clients",
    "make_risk_table",
    "make_valuations",
    "price_grid",
    "risk_schema",
]

#: the risk factors of :func:`make_risk_table`: name → (declared low, high) of an integer column
RISK_FACTORS: dict[str, tuple[int, int]] = {
    "age_band": (0, 4),         # < 45, 45–54, 55–64, 65–74, ≥ 75
    "smoker": (0, 1),
    "diabetes": (0, 1),
    "hypertension": (0, 1),
    "prior_event": (0, 1),
    "family_history": (0, 1),
}

#: the score that generates the label (per risk factor, then the intercept), logistic noise on top
_TRUE_POINTS = {"age_band": 1, "smoker": 2, "diabetes": 1, "hypertension": 0, "prior_event": 3, "family_history": 0}
_TRUE_INTERCEPT = -3
#: the scale of the logistic noise on the generating score (smaller: a cleaner rule)
_NOISE = 0.6


def _positive(n: object, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or int(n) < 1:
        raise ModelError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def risk_schema() -> Schema:
    """The public schema of :func:`make_risk_table`: each risk factor on its integer grid, then an intercept."""
    cols: dict[str, Binary | Numeric | Intercept] = {
        name: Binary() if (lo, hi) == (0, 1) else Numeric(lo, hi, grid=1) for name, (lo, hi) in RISK_FACTORS.items()}
    cols["intercept"] = Intercept()
    return Schema(cols)


def make_risk_table(n: int, *, seed: int = 0) -> Dataset:
    """n patients: integer risk factors (:data:`RISK_FACTORS`), an intercept column, labels ±1 (adverse outcome).

    The label is +1 when ``Σ points·factor + intercept + 0.6·Logistic`` is positive, with a
    sparse integer rule (age band 1 point per band, smoker 2, diabetes 1, prior event 3,
    intercept −3), so a sparse scoring system in {−3, …, 3} fits it well but not perfectly.

    Examples
    --------
    >>> from dpopt.datasets.decisions import make_risk_table
    >>> data = make_risk_table(200, seed=1)
    >>> data.n, data.feature_names[-1], data.schema.scale
    (200, 'intercept', 1)
    """
    n = _positive(n, "n")
    rng = np.random.default_rng(seed)
    age = rng.choice(5, size=n, p=[0.25, 0.25, 0.2, 0.18, 0.12])
    cols = {
        "age_band": age,
        "smoker": rng.random(n) < 0.25,
        "diabetes": rng.random(n) < 0.1 + 0.04 * age,
        "hypertension": rng.random(n) < 0.15 + 0.08 * age,
        "prior_event": rng.random(n) < 0.04 + 0.03 * age,
        "family_history": rng.random(n) < 0.2,
    }
    X = np.column_stack([np.asarray(cols[name], dtype=np.float64) for name in RISK_FACTORS] + [np.ones(n)])
    score = sum(_TRUE_POINTS[name] * X[:, j] for j, name in enumerate(RISK_FACTORS)) + _TRUE_INTERCEPT
    noisy = score + _NOISE * rng.logistic(size=n)
    y = np.where(noisy > 0, 1.0, -1.0)
    return Dataset(X, y, y_bound=1.0, schema=risk_schema())


def candidate_sites(m: int, grid: int, *, seed: int = 1) -> np.ndarray:
    """m public candidate sites (rows (x, y)) on the grid {0, …, grid − 1}², distinct, from a public seed.

    Sites are a function of (m, grid, seed) only — public declarations, never the clients.
    """
    m, grid = _positive(m, "m"), _positive(grid, "grid")
    if m > grid * grid:
        raise ModelError(f"m = {m} sites do not fit on a {grid} × {grid} grid")
    rng = np.random.default_rng(seed)
    cells = rng.choice(grid * grid, size=m, replace=False)
    return np.column_stack([cells % grid, cells // grid]).astype(np.float64)


def client_schema(grid: int) -> Schema:
    """Client coordinates declared on the public grid {0, …, grid − 1}² (integers)."""
    return Schema({"x": Numeric(0, grid - 1, grid=1), "y": Numeric(0, grid - 1, grid=1)})


def make_clients(n: int, grid: int = 50, *, towns: int = 8, spread: float = 4.0, seed: int = 0,
                 geography_seed: int = 7) -> Dataset:
    """n client locations on {0, …, grid − 1}², clustered around ``towns`` centres.

    The towns (centres and sizes) are drawn from ``geography_seed``, the clients from
    ``seed``: two seeds give two samples of the same region.  Each client is drawn from a
    Gaussian of standard deviation ``spread`` around a town, rounded to the grid and clipped
    into it.  The label column is unused (zeros).
    """
    n, grid, towns = _positive(n, "n"), _positive(grid, "grid"), _positive(towns, "towns")
    if grid < 2:
        raise ModelError("grid must be at least 2")
    geo = np.random.default_rng(geography_seed)
    centres = geo.uniform(0.1 * grid, 0.9 * grid, size=(towns, 2))
    weights = geo.dirichlet(np.full(towns, 2.0))
    rng = np.random.default_rng(seed)
    town = rng.choice(towns, size=n, p=weights)
    X = np.rint(centres[town] + spread * rng.standard_normal((n, 2)))
    return Dataset(np.clip(X, 0, grid - 1), np.zeros(n), schema=client_schema(grid))


def price_grid(m: int, top: float) -> np.ndarray:
    """The m public prices top/m, 2·top/m, …, top."""
    m = _positive(m, "m")
    return float(top) * np.arange(1, m + 1, dtype=np.float64) / m


def make_valuations(n: int, top: int = 100, *, seed: int = 0) -> Dataset:
    """n buyers' valuations on the public grid {0, 1, …, top} (a two-segment mixture), label unused.

    Most buyers value the good around 35% of ``top``, a minority around 75%, so revenue
    p·P[v ≥ p] has two local maxima over the price grid.
    """
    n, top = _positive(n, "n"), _positive(top, "top")
    rng = np.random.default_rng(seed)
    high = rng.random(n) < 0.3
    v = np.where(high, rng.normal(0.75, 0.08, n), rng.normal(0.35, 0.12, n)) * top
    schema = Schema({"valuation": Numeric(0, top, grid=1)})
    return Dataset(np.clip(np.rint(v), 0, top)[:, None], np.zeros(n), schema=schema)
