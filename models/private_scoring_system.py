"""A private sparse integer scoring system (a clinical risk score) with OPDisc, OPSamp, RSPM or the exponential mechanism.

Run it with::

    dpopt solve models/private_scoring_system.py --solver cpsat --seed 1
    dpopt solve models/private_scoring_system.py --solver highs --set n=2000 --epsilon 2
    dpopt solve models/private_scoring_system.py --set mechanism=exponential
    dpopt solve models/private_scoring_system.py --solver scip --set loss=ramp

The table (:func:`dpopt.datasets.decisions.make_risk_table`, generated reproducibly, nothing
downloaded) has six risk factors declared in a :class:`~dpopt.modeling.schema.Schema` — an age
band in {0, …, 4} and five 0/1 factors (smoker, diabetes, hypertension, prior event, family
history) — an intercept column, and an adverse-outcome label ±1.  The decision is a score
w ∈ {−3, …, 3}^7 (six points and an intercept) with at most ``k`` nonzero entries
(``dp.DiscreteDomain``), predicting an adverse outcome when ⟨x, w⟩ > 0.  The loss is the 0/1
loss 1[y⟨x, w⟩ ≤ 0] (``dp.ScoreIndicator``) or the ramp that is 1 at y⟨x, w⟩ ≤ −1 and 0 at
y⟨x, w⟩ ≥ 1 (``dp.Ramp``): either way each row's loss lies in [0, 1], so B = 1 bounds what one
patient can change, from the declaration alone.  The domain has 53,719 points at k = 4
(Σ_r C(7, r)·6^r), so the exponential mechanism applies too.

Parameters
----------
n
    Rows of the generated table (patients).
epsilon, delta
    The (ε, δ)-DP guarantee (the exponential mechanism is ε-DP, which implies it for every δ).
mechanism
    ``opdisc`` (NRVW19 Alg. 1, the default), ``opsamp`` (Alg. 2, ``calls`` oracle calls; its
    release is a noisy average, not a score), ``rspm`` (Alg. 3 over the threshold separators
    of each coordinate), ``exponential`` (enumerates the domain; no solver) or ``auto``
    (``dp.choose_discrete_mechanism``: here the exponential mechanism, 53,719 points).
k
    At most this many nonzero points (the intercept counts).
loss
    ``zero-one`` or ``ramp``.
data_seed
    Seed of the generated table (the noise seed is ``dpopt solve --seed``).
calls
    OPSamp's oracle calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dpopt as dp
from dpopt.datasets.decisions import make_risk_table

PARAMS: dict[str, Any] = {"n": 10_000, "epsilon": 1.0, "delta": 1e-8, "mechanism": "opdisc", "k": 4,
                          "loss": "zero-one", "data_seed": 0, "calls": 5}


def make_loss(params: dict[str, Any]) -> dp.RowLoss:
    """The bounded loss of a score on the generated table (module docstring)."""
    data = make_risk_table(int(params["n"]), seed=int(params["data_seed"]))
    d = data.n_features
    w = dp.Variable(d, name="points")
    domain = dp.DiscreteDomain(d, low=-3, high=3, step=1, max_nonzero=int(params["k"]))
    kind = str(params["loss"]).lower()
    if kind == "ramp":
        return dp.Ramp(data, w, domain, low=-1.0, high=1.0)
    if kind != "zero-one":
        raise dp.errors.ModelError(f"loss must be 'zero-one' or 'ramp', got {kind!r}")
    return dp.ScoreIndicator(data, w, domain)


def build(params: dict[str, Any]) -> tuple[dp.DiscreteProblem, dp.Mechanism]:
    """(problem, mechanism) for ``params`` (see the module docstring)."""
    problem = dp.DiscreteProblem(make_loss(params))
    mechanism = dp.discrete_mechanism(params["mechanism"], problem, float(params["epsilon"]),
                                      float(params["delta"]), calls=int(params["calls"]))
    return problem, mechanism


def evaluate(release: dp.Release) -> dict[str, float]:
    """Error rate of the released score on a fresh table from the same recipe (held out, not the private rows)."""
    test = make_risk_table(20_000, seed=10_007)
    theta = np.asarray(release.theta)
    if theta.shape != (test.n_features,):
        return {}
    pred = np.where(test.X @ theta > 0.0, 1.0, -1.0)
    return {"test_error": float(np.mean(pred != test.y)), "nonzero_points": float(np.count_nonzero(theta))}
