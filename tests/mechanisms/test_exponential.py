"""OPDisc, RSPM, OPSamp and the exponential mechanism on problems that are not a halfspace.

For each: a statistical audit (no violation of the claim), a mutation test (the same audit
catches a variant with too little noise) and a neighbour test (the same public view on
neighbouring tables, with rows that stress the declaration).  The problems are a posted price
(a one-of-m decision with a Lookup loss, where one row can move one option's loss by the whole
bound B, so the audit pair is tight) and a facility choice (CappedMin over a binary domain).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.mechanisms.exponential import ExponentialMechanism
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

PRICES = np.array([1.0, 2.0, 3.0])


def _chosen(out: np.ndarray) -> np.ndarray:
    """The audit statistic: which price was posted (the index of the released one-hot)."""
    return np.atleast_2d(out) @ np.arange(3.0)
SITES = np.array([[0, 0], [3, 1], [1, 4], [4, 4]], dtype=float)


def _price_table(row: np.ndarray) -> np.ndarray:
    """Revenue lost against the top price when posting each price to a buyer of value row[0]."""
    return PRICES.max() - PRICES * (row[0] >= PRICES)


def _pricing(data: dp.Dataset) -> DiscreteProblem:
    w = dp.Variable(3)
    return DiscreteProblem(dp.Lookup(data, w, dp.OneOf(3), _price_table, bound=3.0))


def _price_pair(n: int = 1) -> tuple[dp.Dataset, dp.Dataset]:
    """n − 1 buyers of value 3 and one of value 0, or of value 3: price 3's loss moves by B = 3."""
    X = np.full((n, 1), 3.0)
    X[-1] = 0.0
    d0 = dp.Dataset(X, np.zeros(n), x_bound=3.0, clip=True)
    return d0, d0.replace_row(n - 1, [3.0], 0.0)


def _manhattan(row: np.ndarray) -> np.ndarray:
    """Distances to the sites; site 0 unreachable (inf, mapped to the cap) from x ≥ 4."""
    cost = np.abs(SITES - row).sum(axis=1)
    if row[0] >= 4:
        cost[0] = np.inf
    return cost


def _facility(data: dp.Dataset) -> DiscreteProblem:
    w = dp.Variable(4)
    return DiscreteProblem(dp.CappedMin(data, w, dp.BinaryChoice(4, exactly=2), _manhattan, cap=4.0))


def _clients() -> dp.Dataset:
    rng = np.random.default_rng(3)
    return dp.Dataset(rng.integers(0, 5, size=(10, 2)).astype(float), np.zeros(10), x_bound=10.0, clip=True)


#: rows that stress the declaration: far outside the bounds (clipped), a non-finite cost, a duplicate
STRESS = {
    "outside": [40.0, -7.0],
    "infinite-cost": [4.0, 1.0],
    "duplicate": [0.0, 0.0],
}


# -- the exponential mechanism ----------------------------------------------------------------------
def _em(scale: float = 1.0):
    class Scaled(ExponentialMechanism):
        def plan(self, problem, options=None):  # type: ignore[no-untyped-def]
            from dataclasses import replace

            plan = super().plan(problem, options)
            return replace(plan, eta=plan.eta * Fraction(scale))  # type: ignore[attr-defined]

    def run(data: dp.Dataset, seed: int) -> np.ndarray:
        return Scaled(1.0, ledger=dp.Ledger()).run(_pricing(data), seed=seed).theta

    return run


@covers(ExponentialMechanism, kind="audit")
def test_exponential_mechanism_audit_no_violation() -> None:
    d0, d1 = _price_pair()
    res = audit(_em(), d0, d1, claimed_epsilon=1.0, n_runs=1500, seed=1, statistic=_chosen)
    assert not res.violates, res.summary()


@covers(ExponentialMechanism, kind="mutation")
def test_exponential_mechanism_mutation_with_too_little_noise_is_caught() -> None:
    """η ten times too large (the temperature of ε = 10) against the claimed ε = 1."""
    d0, d1 = _price_pair()
    res = audit(_em(10.0), d0, d1, claimed_epsilon=1.0, n_runs=1500, seed=1, statistic=_chosen)
    assert res.violates, res.summary()


def test_exponential_mechanism_law_is_the_softmax_of_the_exact_losses() -> None:
    """Frequencies over many seeded draws match P[w] ∝ exp(−ε L(w)/(2B)) (χ² at 0.1 %)."""
    from scipy.stats import chisquare

    d0, _ = _price_pair(4)
    problem = _pricing(d0)
    losses = np.array([float(problem.loss.exact_value(e)) for e in np.eye(3)])
    eps = 2.0
    p = np.exp(-eps * (losses - losses.min()) / (2 * 3.0))
    p /= p.sum()
    mech = ExponentialMechanism(eps, ledger=dp.Ledger())
    draws = [int(np.argmax(mech.run(problem, seed=s).theta)) for s in range(3000)]
    counts = np.bincount(draws, minlength=3)
    assert chisquare(counts, 3000 * p).pvalue > 1e-3


# -- OPDisc, RSPM and OPSamp (enumeration as the oracle: fast, exact) ---------------------------------
def _oracle_runner(kind: str, scale: float = 1.0):
    if kind == "OPDisc":
        class Mech(dp.OPDisc):
            def sigma(self, problem):  # type: ignore[no-untyped-def]
                return super().sigma(problem) * scale

        def make() -> dp.Mechanism:
            return Mech(4.0, 1e-3, ledger=dp.Ledger())
    elif kind == "RSPM":
        class Mech(dp.RSPM):  # type: ignore[no-redef]
            def noise_law(self, problem):  # type: ignore[no-untyped-def]
                law, s = super().noise_law(problem)
                return law, s * scale

        def make() -> dp.Mechanism:
            return Mech(2.0, ledger=dp.Ledger())
    else:
        class Mech(dp.OPSamp):  # type: ignore[no-redef]
            def constants(self, problem):  # type: ignore[no-untyped-def]
                from dataclasses import replace

                c = super().constants(problem)
                return replace(c, laplace_scale=c.laplace_scale * scale)

        def make() -> dp.Mechanism:
            return Mech(2.0, 1e-3, calls=2, rate=100.0, ledger=dp.Ledger())  # the data, not σ, decide each call

    def run(data: dp.Dataset, seed: int) -> np.ndarray:
        return make().run(_pricing(data), solver="bruteforce", seed=seed).theta

    return run


#: OPDisc and RSPM release one-hot prices (which one); OPSamp a noisy average (the audit's default statistic)
_STATISTIC = {"OPDisc": _chosen, "RSPM": _chosen, "OPSamp": None}
CLAIMS = {"OPDisc": (4.0, 1e-3), "RSPM": (2.0, 0.0), "OPSamp": (2.0, 1e-3)}


def _kinds(kind: str) -> list[object]:
    """One parameter per oracle mechanism, each marked as covering it (``kind``)."""
    mechs = {"OPDisc": dp.OPDisc, "RSPM": dp.RSPM, "OPSamp": dp.OPSamp}
    return [pytest.param(name, marks=covers(cls, kind=kind)) for name, cls in mechs.items()]


@pytest.mark.parametrize("kind", _kinds("audit"))
def test_oracle_mechanisms_audit_on_a_pricing_problem(kind: str) -> None:
    d0, d1 = _price_pair()
    eps, delta = CLAIMS[kind]
    res = audit(_oracle_runner(kind), d0, d1, claimed_epsilon=eps, claimed_delta=delta, n_runs=800, seed=3,
                statistic=_STATISTIC[kind])
    assert not res.violates, res.summary()


@pytest.mark.parametrize("kind", _kinds("mutation"))
def test_oracle_mechanisms_mutation_on_a_pricing_problem_is_caught(kind: str) -> None:
    """Noise scaled by 1/1000: the output is nearly a function of the data."""
    d0, d1 = _price_pair()
    eps, delta = CLAIMS[kind]
    res = audit(_oracle_runner(kind, 1e-3), d0, d1, claimed_epsilon=eps, claimed_delta=delta, n_runs=800, seed=3,
                statistic=_STATISTIC[kind])
    assert res.violates, res.summary()


# -- neighbours: the same public view, every backend ------------------------------------------------
def _mip_solvers() -> list[str]:
    return [n for n in ("bruteforce", "highs", "cpsat", "scip") if dp.backends.get(n).available()]


@pytest.mark.parametrize("stress", sorted(STRESS))
@pytest.mark.parametrize("solver", _mip_solvers())
@pytest.mark.parametrize("mechanism", [*_kinds("neighbour"),
                                       pytest.param("EM", marks=covers(ExponentialMechanism, kind="neighbour"))])
def test_row_loss_mechanisms_look_the_same_on_neighbours(mechanism: str, solver: str, stress: str) -> None:
    if mechanism == "EM" and solver != "bruteforce":
        pytest.skip("the exponential mechanism calls no solver")
    d0 = _clients()
    d1 = d0.replace_row(2, STRESS[stress], 0.0)

    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        if mechanism == "OPDisc":
            mech: dp.Mechanism = dp.OPDisc(1.0, 1e-3, ledger=ledger)
        elif mechanism == "RSPM":
            mech = dp.RSPM(1.0, ledger=ledger)
        elif mechanism == "OPSamp":
            mech = dp.OPSamp(1.0, 1e-3, calls=2, ledger=ledger)
        else:
            return ExponentialMechanism(1.0, ledger=ledger).run(_facility(data), seed=0)
        return mech.run(_facility(data), solver=solver, seed=0)

    assert_same_view(run, d0, d1)


def test_releases_are_points_of_the_declared_domain_and_agree_across_engines() -> None:
    """OPDisc, RSPM and the exponential mechanism release domain points; the MIP engines give the same one."""
    problem = _facility(_clients())
    for make in (lambda: dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()), lambda: dp.RSPM(1.0, ledger=dp.Ledger())):
        thetas = [make().run(problem, solver=s, seed=4).theta for s in _mip_solvers()]
        assert all(problem.domain.contains(t) for t in thetas)
        assert all(np.array_equal(thetas[0], t) for t in thetas)
    em = ExponentialMechanism(1.0, ledger=dp.Ledger()).run(problem, seed=4)
    assert problem.domain.contains(em.theta) and em.epsilon == 1.0 and em.delta == 0.0


def test_exponential_mechanism_refuses_a_domain_too_large_before_the_charge() -> None:
    rng = np.random.default_rng(0)
    data = dp.Dataset(rng.integers(0, 5, size=(8, 2)).astype(float), np.zeros(8), x_bound=10.0, clip=True)
    sites = rng.integers(0, 5, size=(30, 2)).astype(float)
    problem = DiscreteProblem(dp.CappedMin(data, dp.Variable(30), dp.BinaryChoice(30, at_most=10),
                                           lambda r: np.abs(sites - r).sum(axis=1), cap=4.0))
    ledger = dp.Ledger()
    with pytest.raises(dp.errors.MechanismError, match="OPDisc"):
        ExponentialMechanism(1.0, max_points=10_000, ledger=ledger).run(problem)
    assert ledger.spent == (0.0, 0.0)


def test_auto_advice_reads_declarations_only_and_names_its_rule() -> None:
    """Enumerable → the exponential mechanism; else OPDisc (δ > 0) or RSPM (δ = 0); the same on neighbours."""
    d0 = _clients()
    d1 = d0.replace_row(1, [40.0, 40.0], 0.0)
    small = [dp.choose_discrete_mechanism(_facility(d), 1.0, 1e-5) for d in (d0, d1)]
    assert [type(m) for m, _ in small] == [ExponentialMechanism] * 2 and small[0][1] == small[1][1]
    rng = np.random.default_rng(0)
    sites = rng.integers(0, 5, size=(40, 2)).astype(float)
    big = DiscreteProblem(dp.CappedMin(d0, dp.Variable(40), dp.BinaryChoice(40, at_most=8),
                                       lambda r: np.abs(sites - r).sum(axis=1), cap=4.0))
    mech, rule = dp.choose_discrete_mechanism(big, 1.0, 1e-5)
    assert isinstance(mech, dp.OPDisc) and "too many" in rule
    mech, rule = dp.choose_discrete_mechanism(big, 1.0, 0.0)
    assert isinstance(mech, dp.RSPM) and mech.delta == 0.0


def test_auto_advice_between_the_oracles_compares_their_noise_on_close_decisions() -> None:
    """A wide integer range (D large, τ/D small for OPDisc's σ): RSPM's one separator weight is the
    smaller spread; a sparse binary choice: OPDisc's.  The choice follows the public spreads."""
    from dpopt.mechanisms.discrete_advice import neighbour_spreads

    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(50, 4)).astype(float)
    data = dp.Dataset(X, rng.choice([-1.0, 1.0], size=50), schema=dp.Schema.uniform(4, dp.Binary()))
    wide = DiscreteProblem(dp.ScoreIndicator(data, dp.Variable(4), dp.DiscreteDomain(4, -20, 20)))
    sites = rng.integers(0, 5, size=(40, 2)).astype(float)
    sparse = DiscreteProblem(dp.CappedMin(_clients(), dp.Variable(40), dp.BinaryChoice(40, at_most=8),
                                          lambda r: np.abs(sites - r).sum(axis=1), cap=4.0))
    for problem, expected in ((wide, dp.RSPM), (sparse, dp.OPDisc)):
        mech, rule = dp.choose_discrete_mechanism(problem, 1.0, 1e-6)
        spread_o, spread_r = neighbour_spreads(problem, dp.OPDisc(1.0, 1e-6), dp.RSPM(1.0, 1e-6))
        assert type(mech) is (dp.RSPM if spread_r < spread_o else dp.OPDisc) is expected
        assert f"{spread_o:.4g}" in rule and f"{spread_r:.4g}" in rule


def test_discrete_mechanisms_by_name_and_a_mistyped_one_refused_with_the_closest() -> None:
    problem = _pricing(_price_pair()[0])
    ledger = dp.Ledger()
    built = {name: dp.discrete_mechanism(name, problem, 1.0, 1e-6, calls=3, ledger=ledger)
             for name in ("opdisc", "OPSamp", "rspm", "exponential", "auto")}
    assert [type(m) for m in built.values()] == [dp.OPDisc, dp.OPSamp, dp.RSPM, ExponentialMechanism,
                                                  type(dp.choose_discrete_mechanism(problem, 1.0, 1e-6)[0])]
    assert built["OPSamp"].calls == 3 and built["exponential"].delta == 0.0
    with pytest.raises(dp.errors.MechanismError, match="did you mean 'opdisc'"):
        dp.discrete_mechanism("opdsic", problem, 1.0, 1e-6)
    assert ledger.spent == (0.0, 0.0)
