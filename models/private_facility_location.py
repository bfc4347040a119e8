"""Private facility location: open k of m public candidate sites to serve private client locations.

Run it with::

    dpopt solve models/private_facility_location.py --solver highs --seed 1
    dpopt solve models/private_facility_location.py --solver cpsat --set n=2000 --epsilon 0.5
    dpopt solve models/private_facility_location.py --solver scip --set mechanism=rspm

Clients (:func:`dpopt.datasets.decisions.make_clients`, generated reproducibly) live on the
public grid {0, …, 49}², their coordinates declared as two integer schema columns; the m = 50
candidate sites are public (a fixed draw on the same grid, :func:`candidate_sites`).  The decision
is which sites to open, w ∈ {0, 1}^m with exactly k ones (``dp.BinaryChoice``); a client's loss is
its distance to the nearest open site, capped at ``cap`` (``dp.CappedMin``), so each row's loss
lies in [0, cap]: B = cap is the sensitivity, from the declaration alone.  The objective
reported is the mean capped distance (the total divided by the public n).

With m = 50 and k = 5 the domain has C(50, 5) = 2,118,760 points: too many for the exponential
mechanism's enumeration, which is the point of an oracle-efficient mechanism.  Set ``m=12``
(792 points at k = 5) to compare with ``mechanism=exponential``.

Parameters
----------
n
    Clients.
epsilon, delta
    The (ε, δ)-DP guarantee (the exponential mechanism is ε-DP, which implies it for every δ).
mechanism
    ``opdisc`` (default), ``opsamp`` (its release is a noisy average of open-site vectors, not a
    set of sites), ``rspm``, ``exponential`` or ``auto`` (``dp.choose_discrete_mechanism``: the
    exponential mechanism where the domain is enumerable, else OPDisc, or RSPM when δ = 0).
m, k, cap, grid
    Candidate sites, sites to open, the distance cap and the side of the public grid.
data_seed
    Seed of the generated clients (the noise seed is ``dpopt solve --seed``).
calls
    OPSamp's oracle calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets.decisions import candidate_sites, make_clients

PARAMS: dict[str, Any] = {"n": 10_000, "epsilon": 1.0, "delta": 1e-8, "mechanism": "opdisc", "m": 50, "k": 5,
                          "cap": 10.0, "grid": 50, "data_seed": 0, "calls": 5}
#: the geometry of the last build (evaluate sees only the release)
_BUILT: dict[str, Any] = dict(PARAMS)


def make_loss(params: dict[str, Any]) -> dp.RowLoss:
    """Σ_i min(cap, distance from client i to its nearest open site) (module docstring)."""
    grid = int(params["grid"])
    clients = make_clients(int(params["n"]), grid, seed=int(params["data_seed"]))
    sites = candidate_sites(int(params["m"]), grid)
    opened = dp.Variable(sites.shape[0], name="open")
    domain = dp.BinaryChoice(sites.shape[0], exactly=int(params["k"]))

    def distances(row: np.ndarray) -> np.ndarray:  # one client's (x, y) → its distance to every site
        return np.hypot(sites[:, 0] - row[0], sites[:, 1] - row[1])

    return dp.CappedMin(clients, opened, domain, cost=distances, cap=float(params["cap"]))


def build(params: dict[str, Any]) -> tuple[dp.DiscreteProblem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    problem = dp.DiscreteProblem(make_loss(params))
    _BUILT.update(params)
    mechanism = dp.discrete_mechanism(params["mechanism"], problem, float(params["epsilon"]),
                                      float(params["delta"]), calls=int(params["calls"]))
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """The open sites and the mean capped distance of a fresh draw of clients (held out, not the private rows)."""
    params = _BUILT
    theta = np.asarray(release.theta)
    sites = candidate_sites(theta.shape[0], int(params["grid"]))
    chosen = np.flatnonzero(np.rint(theta) == 1)
    if chosen.size == 0:
        return {}
    fresh = make_clients(20_000, int(params["grid"]), seed=10_007)
    d = np.hypot(fresh.X[:, :1] - sites[chosen, 0], fresh.X[:, 1:2] - sites[chosen, 1]).min(axis=1)
    return {"open_sites": float(chosen.size), "heldout_mean_capped_distance":
            float(np.minimum(d, float(params["cap"])).mean())}
