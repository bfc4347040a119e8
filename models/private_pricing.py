"""Private posted pricing: choose one price from a public grid to maximise revenue from private valuations.

Run it with::

    dpopt solve models/private_pricing.py --solver highs --seed 1
    dpopt solve models/private_pricing.py --solver cpsat --epsilon 0.5
    dpopt solve models/private_pricing.py --set mechanism=exponential

Each row is one buyer's valuation v, declared ``dp.Numeric(0, 100, grid=1)`` in the schema
(:func:`dpopt.datasets.decisions.make_valuations`, generated reproducibly).  The decision is one
of m public prices p_j = 100·j/m (``dp.OneOf(m)``); a buyer pays p_j when v ≥ p_j.  Revenue is
a gain, so the loss is the revenue lost against the top price, T_j(v) = p_max − p_j·1[v ≥ p_j]
∈ [0, p_max] (``dp.Lookup``, linear in the one-hot decision): B = p_max bounds what one buyer can
change, from the declaration alone, and minimising Σ_i T(v_i) maximises the revenue
Σ_i p·1[v_i ≥ p].  With m prices the domain has m points: the exponential mechanism is the
natural yardstick here, and OPDisc's oracle is a small MIP.

Parameters
----------
n
    Buyers.
epsilon, delta
    The (ε, δ)-DP guarantee (the exponential mechanism is ε-DP, which implies it for every δ).
mechanism
    ``opdisc`` (default), ``opsamp`` (its release is a noisy average of one-hot vectors, not a
    price), ``rspm``, ``exponential`` or ``auto`` (``dp.choose_discrete_mechanism``: here the
    exponential mechanism, 20 points).
m, top
    Number of prices on the grid and the top price (valuations are declared on {0, …, top}).
data_seed
    Seed of the generated valuations (the noise seed is ``dpopt solve --seed``).
calls
    OPSamp's oracle calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets.decisions import make_valuations, price_grid

PARAMS: dict[str, Any] = {"n": 10_000, "epsilon": 1.0, "delta": 1e-8, "mechanism": "opdisc", "m": 20, "top": 100,
                          "data_seed": 0, "calls": 5}
#: the price grid of the last build (evaluate sees only the release)
_BUILT: dict[str, Any] = dict(PARAMS)


def make_loss(params: dict[str, Any]) -> dp.RowLoss:
    """Σ_i (p_max − p·1[v_i ≥ p]): revenue lost against the top price (module docstring)."""
    top = int(params["top"])
    buyers = make_valuations(int(params["n"]), top, seed=int(params["data_seed"]))
    prices = price_grid(int(params["m"]), top)
    choice = dp.Variable(prices.shape[0], name="price")

    def lost_revenue(row: np.ndarray) -> np.ndarray:  # one buyer's valuation → the loss at every price
        return prices[-1] - prices * (row[0] >= prices)

    return dp.Lookup(buyers, choice, dp.OneOf(prices.shape[0]), table=lost_revenue, bound=float(prices[-1]))


def build(params: dict[str, Any]) -> tuple[dp.DiscreteProblem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    problem = dp.DiscreteProblem(make_loss(params))
    _BUILT.update(params)
    mechanism = dp.discrete_mechanism(params["mechanism"], problem, float(params["epsilon"]),
                                      float(params["delta"]), calls=int(params["calls"]))
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """The posted price and its revenue per buyer on a fresh sample of buyers (held out, not the private rows)."""
    theta = np.asarray(release.theta)
    prices = price_grid(theta.shape[0], int(_BUILT["top"]))
    chosen = np.flatnonzero(np.rint(theta) == 1)
    if chosen.size != 1:
        return {}
    price = float(prices[chosen[0]])
    fresh = make_valuations(20_000, int(_BUILT["top"]), seed=10_007)
    return {"price": price, "heldout_revenue_per_buyer": float(np.mean(price * (fresh.X[:, 0] >= price)))}
