"""Regret and oracle time of the private decision models: OPDisc, OPSamp, RSPM and the exponential mechanism.

The three problems of ``models/private_scoring_system.py``, ``models/private_facility_location.py``
and ``models/private_pricing.py`` (declared again here, with their default settings, so that the
benchmark runs from an installed package; a test checks they are the same problems):

* ``scoring`` — 0/1 loss of a score w ∈ {−3, …, 3}^7 with at most 4 nonzero entries on the
  generated risk table (:func:`dpopt.datasets.decisions.make_risk_table`); 53,719 points.
* ``facility`` — mean distance to the nearest of k = 5 open sites out of m = 50, capped at 10,
  clients on a public 50 × 50 grid; C(50, 5) = 2,118,760 points (not enumerable).
* ``pricing`` — revenue lost against the top price, one of m = 20 posted prices; 20 points.

For each model, n (``--n``), ε (``--epsilons``, δ = 1/n²) and noise seed 0..``--seeds``−1 every
mechanism (``--mechanisms``) releases a decision ŵ on the same table, and its objective
f(ŵ) (the mean per-row loss, exact) is compared with the non-private optimum f(opt) and with
f(random), the mean objective over uniformly random feasible decisions, as the normalised
regret r = (f(ŵ) − f(opt)) / (f(random) − f(opt)): 0 is optimal, 1 is no better than a random
decision.  f(opt) and f(random) are computed by enumerating the domain where it is enumerable
(scoring, pricing: exact), else f(opt) by a certified MIP solve and f(random) as the mean
over 2,000 uniform draws of k of the m sites (facility; the header says which).  OPSamp's
release is a noisy average, not a domain point: its regret is that of the domain point
nearest to it in ℓ2 (post-processing: the top-k coordinates for a k-of-m choice, else by
enumeration), marked ``*``.  The exponential mechanism runs where the domain is enumerable.

Time: the wall-clock seconds of each run divided by its number of oracle calls — each call
compiled, solved to certified optimality and cross-verified by a second engine (OPDisc: 1
call, RSPM: 1, OPSamp: ``--opsamp-calls``); the table gives the median and the maximum over
seeds.  The oracle is CP-SAT for the scoring system and HiGHS for the others (``--solver``
changes it; ``auto``, the model scripts' default, solves a domain it can enumerate exactly by
enumeration, which needs no second engine).  The exponential mechanism has no oracle; its column shows the seconds per run.  Seeds
make the noise reproducible, not secure; every number printed here is a diagnostic of a
benchmark, not a private release.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import int_list, parse, positive_floats, positive_int
from dpopt.bench.output import write_outputs
from dpopt.datasets.decisions import (
    candidate_sites,
    make_clients,
    make_risk_table,
    make_valuations,
    price_grid,
)
from dpopt.errors import MechanismError, UncertifiedOracleError

__all__ = ["LOSSES", "baselines", "main", "nearest_point", "normalised_regret"]

MODELS = ("scoring", "facility", "pricing")
MECHANISMS = ("opdisc", "opsamp", "rspm", "exponential")
#: the oracle each model's runs use by default (CP-SAT solves the big-M 0/1-loss model fastest)
DEFAULT_SOLVER = {"scoring": "cpsat", "facility": "highs", "pricing": "highs"}
#: draws of the sampled random-decision baseline (non-enumerable domains)
RANDOM_DRAWS = 2_000
#: the largest candidate set enumerated for the baselines and the projections
ENUMERATE_MAX = 1_000_000


def scoring_loss(n: int, data_seed: int = 0) -> dp.RowLoss:
    """The scoring system's 0/1 loss (``models/private_scoring_system.py`` defaults)."""
    data = make_risk_table(n, seed=data_seed)
    d = data.n_features
    return dp.ScoreIndicator(data, dp.Variable(d, name="points"), dp.DiscreteDomain(d, -3, 3, step=1, max_nonzero=4))


def facility_loss(n: int, data_seed: int = 0) -> dp.RowLoss:
    """Facility location's capped distance (``models/private_facility_location.py`` defaults)."""
    clients = make_clients(n, 50, seed=data_seed)
    sites = candidate_sites(50, 50)

    def distances(row: np.ndarray) -> np.ndarray:
        return np.hypot(sites[:, 0] - row[0], sites[:, 1] - row[1])

    return dp.CappedMin(clients, dp.Variable(50, name="open"), dp.BinaryChoice(50, exactly=5), cost=distances, cap=10.0)


def pricing_loss(n: int, data_seed: int = 0) -> dp.RowLoss:
    """Posted pricing's lost revenue (``models/private_pricing.py`` defaults)."""
    buyers = make_valuations(n, 100, seed=data_seed)
    prices = price_grid(20, 100)

    def lost_revenue(row: np.ndarray) -> np.ndarray:
        return prices[-1] - prices * (row[0] >= prices)

    return dp.Lookup(buyers, dp.Variable(20, name="price"), dp.OneOf(20), table=lost_revenue, bound=float(prices[-1]))


LOSSES: dict[str, Callable[[int], dp.RowLoss]] = {"scoring": scoring_loss, "facility": facility_loss,
                                                  "pricing": pricing_loss}


@dataclass(frozen=True)
class Baselines:
    """f(opt), f(random) (mean per-row loss), how they were computed, and the enumerated points (or None)."""

    opt: float
    random: float
    how: str
    points: np.ndarray | None


@dataclass
class Run:
    """One release: its objective, normalised regret and seconds per oracle call."""

    model: str
    n: int
    epsilon: float
    mechanism: str
    seed: int
    objective: float
    regret: float
    projected: bool
    seconds: float
    calls: int
    status: str


def _enumerable(domain: dp.DiscreteDomain) -> np.ndarray | None:
    """Every integer point of ``domain`` when its candidate box is small enough, else None."""
    if domain.box_count() > ENUMERATE_MAX:
        return None
    return domain.enumerate_indices(ENUMERATE_MAX)


def _exact_k(domain: dp.DiscreteDomain) -> int | None:
    """k when the domain is 'exactly k of m' (binary, no side constraints), else None."""
    if domain.binary and not domain.side and domain.max_nonzero is not None and domain.max_nonzero == domain.min_nonzero:
        return int(domain.max_nonzero)
    return None


def baselines(loss: dp.RowLoss, solver: str) -> Baselines:
    """f(opt) and f(random) of ``loss`` (module docstring: enumeration, or a certified solve and sampling)."""
    n = loss.data.n
    domain = loss.domain
    assert isinstance(domain, dp.DiscreteDomain)
    K = _enumerable(domain)
    if K is not None:
        totals = np.array([float(v) for v in loss.exact_totals(K)]) / n
        return Baselines(float(totals.min()), float(totals.mean()), f"enumerated ({K.shape[0]:,} points)", K)
    k = _exact_k(domain)
    if k is None:
        raise MechanismError("the random baseline needs an enumerable domain or an exactly-k-of-m choice")
    backend = dp.backends.get("highs" if solver == "auto" else solver)
    problem = dp.DiscreteProblem(loss)
    result = backend.solve(backend.prepare(problem), np.zeros(problem.noise_size), dp.backends.SolveOptions())
    if not result.certified or result.solution is None:
        raise MechanismError(f"the non-private optimum was not certified by {solver}")
    rng = np.random.default_rng(12345)
    draws = np.zeros((RANDOM_DRAWS, domain.dim), dtype=np.int64)
    for row in draws:
        row[rng.choice(domain.dim, size=k, replace=False)] = 1
    random = float(np.mean([float(v) for v in loss.exact_totals(draws)])) / n
    return Baselines(float(loss.exact_value(result.solution)) / n, random,
                     f"optimum by a certified {backend.name} solve, random mean over {RANDOM_DRAWS:,} uniform draws", None)


def nearest_point(theta: np.ndarray, domain: dp.DiscreteDomain, points: np.ndarray | None) -> np.ndarray | None:
    """The domain point nearest to ``theta`` in ℓ2 (top-k coordinates of a k-of-m choice, else by enumeration)."""
    k = _exact_k(domain)
    if k is not None:
        out = np.zeros(domain.dim)
        out[np.argsort(-np.asarray(theta), kind="stable")[:k]] = 1.0
        return out
    if points is None:
        return None
    W = domain.step * points.astype(np.float64)
    return W[int(np.argmin(((W - np.asarray(theta)[None, :]) ** 2).sum(axis=1)))]


def normalised_regret(f: float, base: Baselines) -> float:
    """r = (f − f(opt)) / (f(random) − f(opt))."""
    gap = base.random - base.opt
    return (f - base.opt) / gap if gap > 0 else math.nan


def _mechanism(kind: str, eps: float, n: int, opsamp_calls: int) -> dp.Mechanism:
    delta = 1.0 / n**2
    if kind == "opdisc":
        return dp.OPDisc(eps, delta, ledger=dp.Ledger())
    if kind == "opsamp":
        return dp.OPSamp(eps, delta, calls=opsamp_calls, ledger=dp.Ledger())
    if kind == "rspm":
        return dp.RSPM(eps, delta, ledger=dp.Ledger())
    return dp.ExponentialMechanism(eps, max_points=ENUMERATE_MAX, ledger=dp.Ledger())


def run_one(model: str, loss: dp.RowLoss, base: Baselines, kind: str, eps: float, seed: int, solver: str,
            opsamp_calls: int) -> Run:
    """One release of ``kind`` on ``loss``: its objective, regret and seconds per oracle call."""
    n = loss.data.n
    domain = loss.domain
    assert isinstance(domain, dp.DiscreteDomain)
    mech = _mechanism(kind, eps, n, opsamp_calls)
    if kind == "exponential" and base.points is None:
        return Run(model, n, eps, kind, seed, math.nan, math.nan, False, math.nan, 0, "not enumerable")
    start = time.perf_counter()
    try:
        problem = dp.DiscreteProblem(loss)
        release = mech.run(problem, seed=seed) if kind == "exponential" else mech.run(problem, solver=solver, seed=seed)
    except UncertifiedOracleError:
        return Run(model, n, eps, kind, seed, math.nan, math.nan, False, time.perf_counter() - start, 0, "uncertified")
    except MechanismError as exc:
        return Run(model, n, eps, kind, seed, math.nan, math.nan, False, math.nan, 0, f"refused: {exc}")
    wall = time.perf_counter() - start
    calls = sum(1 for c in release.oracle_calls if c.role == "oracle")
    theta = np.asarray(release.theta)
    projected = kind == "opsamp"
    point = nearest_point(theta, domain, base.points) if projected else theta
    if point is None:
        return Run(model, n, eps, kind, seed, math.nan, math.nan, projected, wall / max(calls, 1), calls, "no projection")
    f = float(loss.exact_value(point)) / n
    return Run(model, n, eps, kind, seed, f, normalised_regret(f, base), projected, wall / max(calls, 1), calls, "ok")


def _cell(runs: list[Run]) -> tuple[str, str]:
    """(median regret, 'median/max s') of one table cell."""
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        return (runs[0].status.split(":")[0] if runs else "-"), "-"
    reg = statistics.median(r.regret for r in ok)
    mark = "*" if ok[0].projected else ""
    failed = f" ({len(runs) - len(ok)} failed)" if len(ok) < len(runs) else ""
    secs = [r.seconds for r in ok]
    return f"{reg:.3f}{mark}{failed}", f"{statistics.median(secs):.1f}/{max(secs):.1f}"


def table(runs: list[Run], mechanisms: Sequence[str]) -> str:
    """The summary: per model, n and ε, each mechanism's median regret and median/max seconds per call."""
    head = f"{'model':<9} {'n':>6} {'ε':>4}  " + "  ".join(f"{m + ' r':>14} {'s/call':>10}" for m in mechanisms)
    lines = [head]
    keys = sorted({(r.model, r.n, r.epsilon) for r in runs}, key=lambda t: (MODELS.index(t[0]), t[1], t[2]))
    for model, n, eps in keys:
        cells = []
        for m in mechanisms:
            reg, secs = _cell([r for r in runs if (r.model, r.n, r.epsilon, r.mechanism) == (model, n, eps, m)])
            cells.append(f"{reg:>14} {secs:>10}")
        lines.append(f"{model:<9} {n:>6} {eps:>4g}  " + "  ".join(cells))
    return "\n".join(lines)


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in known]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(known)}")
    return names


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench discrete-models", description=__doc__.splitlines()[0])
    p.add_argument("--models", type=lambda s: _names(s, MODELS, "model"), default=list(MODELS),
                   help=f"comma-separated, from {', '.join(MODELS)} (default all)")
    p.add_argument("--n", type=int_list(2), default=[1000, 10_000], help="rows, comma-separated (default 1000,10000)")
    p.add_argument("--epsilons", type=positive_floats, default=[0.1, 0.5, 1.0, 2.0], help="ε values (δ = 1/n²)")
    p.add_argument("--seeds", type=positive_int, default=5, help="noise seeds 0..seeds-1 (default 5)")
    p.add_argument("--mechanisms", type=lambda s: _names(s, MECHANISMS, "mechanism"), default=list(MECHANISMS),
                   help=f"comma-separated, from {', '.join(MECHANISMS)} (default all)")
    p.add_argument("--solver", default=None,
                   help="oracle backend for every model (default: cpsat for scoring, highs for the others; "
                        "'auto' is the model scripts' default rule)")
    p.add_argument("--opsamp-calls", type=positive_int, default=5, help="OPSamp's oracle calls (default 5)")
    p.add_argument("--out", type=Path, default=None, help="folder for runs.csv, summary.json and table.txt")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    runs: list[Run] = []
    headers: dict[str, Any] = {}
    for model in args.models:
        solver = args.solver or DEFAULT_SOLVER[model]
        for n in args.n:
            loss = LOSSES[model](n)
            base = baselines(loss, solver)
            headers[f"{model} n={n}"] = {"opt": base.opt, "random": base.random, "how": base.how, "solver": solver}
            print(f"{model}, n = {n}: f(opt) = {base.opt:.4f}, f(random) = {base.random:.4f} ({base.how}); "
                  f"oracle {solver}", flush=True)
            for eps in args.epsilons:
                for kind in args.mechanisms:
                    for seed in range(args.seeds):
                        r = run_one(model, loss, base, kind, eps, seed, solver, args.opsamp_calls)
                        runs.append(r)
                        print(f"  ε={eps:g} {kind:<11} seed {seed}: f = {r.objective:.4f}, r = {r.regret:.3f}"
                              f"{'*' if r.projected else ''}, {r.seconds:.1f} s/call ({r.calls} calls), {r.status}",
                              flush=True)
    text = table(runs, args.mechanisms)
    print("\nnormalised regret r (median over seeds; * = OPSamp's nearest domain point) and seconds per "
          "certified, cross-verified oracle call (median/max; exponential: seconds per run)")
    print(text)
    if args.out is not None:
        write_outputs(args.out, Run, runs, {"baselines": headers, "argv": list(argv or [])}, text)
    return 0 if all(r.status in ("ok", "not enumerable") for r in runs) else 1
