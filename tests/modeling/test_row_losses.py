"""Every discrete domain and row-loss atom against brute force, in exact arithmetic.

The reference computations here are written from the definitions alone (Python Fractions,
one row at a time, itertools over the box), independent of the code under test: the atoms'
exact totals, the domains' point sets, and the argmin every MIP backend returns under each
perturbation kind.  ``ATOM_CASES`` and ``DOMAIN_CASES`` are the guard's lists: a new atom or
domain class without a case here fails :func:`test_every_atom_and_domain_has_a_differential_case`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, ModelError
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.discrete import DiscreteProblem, brute_force
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.row_losses import Atom, RowLoss

SITES = np.array([[0, 0], [3, 1], [1, 4], [4, 4]], dtype=float)
PRICES = np.array([1.0, 2.0, 3.0])


def _schema_data(rng: np.random.Generator, n: int = 14) -> dp.Dataset:
    X = np.column_stack([rng.integers(-4, 5, size=(n, 2)) / 4.0, rng.integers(0, 2, size=n)])
    y = rng.choice([-1.0, 1.0], size=n)
    X[-1], y[-1] = X[0], -y[0]  # an opposite pair: the compiled models add a cut for it
    schema = dp.Schema([("a", dp.Numeric(-1, 1, grid="1/4")), ("b", dp.Numeric(-1, 1, grid="1/4")),
                        ("c", dp.Binary())])
    return dp.Dataset(X, y, schema=schema)


def _points(rng: np.random.Generator, n: int = 16) -> dp.Dataset:
    X = rng.integers(0, 5, size=(n, 2)).astype(float)
    return dp.Dataset(X, np.zeros(n), x_bound=10.0, x_norm=2, clip=True)


def _manhattan(row: np.ndarray) -> np.ndarray:
    return np.abs(SITES - row).sum(axis=1)


def _price_table(row: np.ndarray) -> np.ndarray:
    return PRICES.max() - PRICES * (row[0] >= PRICES)


def _score(x: np.ndarray, y: float, w: np.ndarray, signed: bool) -> Fraction:
    s = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, w, strict=True)), Fraction(0))
    return s * (1 if y > 0 else -1) if signed else s


# -- the reference values, one row at a time --------------------------------------------------------
def _ref_indicator(t: float, sense: str, signed: bool) -> Callable[[dp.Dataset, np.ndarray], Fraction]:
    def f(data: dp.Dataset, w: np.ndarray) -> Fraction:
        tt = Fraction(t)
        hits = [(_score(x, y, w, signed) <= tt) if sense == "<=" else (_score(x, y, w, signed) >= tt)
                for x, y in zip(data.X, data.y, strict=True)]
        return Fraction(sum(hits))
    return f


def _weights(n: int) -> np.ndarray:
    return (np.arange(n) % 5) / 4.0  # 0 … 1 in quarters; the bound 0.75 clips the largest


def _ref_zero_one(data: dp.Dataset, w: np.ndarray) -> Fraction:
    c = np.minimum(_weights(data.n), 0.75)
    return sum((Fraction(float(ci)) for x, y, ci in zip(data.X, data.y, c, strict=True)
                if _score(x, y, w, True) <= 0), Fraction(0))


def _ref_ramp(lo: float, hi: float, signed: bool) -> Callable[[dp.Dataset, np.ndarray], Fraction]:
    def f(data: dp.Dataset, w: np.ndarray) -> Fraction:
        a, b = Fraction(lo), Fraction(hi)
        return sum((min(max((b - _score(x, y, w, signed)) / (b - a), Fraction(0)), Fraction(1))
                    for x, y in zip(data.X, data.y, strict=True)), Fraction(0))
    return f


def _ref_capped(cap: float) -> Callable[[dp.Dataset, np.ndarray], Fraction]:
    def f(data: dp.Dataset, w: np.ndarray) -> Fraction:
        total = Fraction(0)
        for x in data.X:
            costs = [Fraction(float(c)) for c, on in zip(_manhattan(x), w, strict=True) if on > 0.5]
            total += min([Fraction(cap), *costs])
        return total
    return f


def _ref_lookup(data: dp.Dataset, w: np.ndarray) -> Fraction:
    return sum((Fraction(float(t)) * Fraction(float(v)) for x in data.X
                for t, v in zip(_price_table(x), w, strict=True)), Fraction(0))


#: (name, data maker, domain, loss maker, reference): one case per atom class at least
def _cases() -> list[tuple[str, type, Callable, object, Callable, Callable]]:
    grid = dp.IntegerGrid(1, -2, 2, l2_bound=3.0)
    sparse = dp.DiscreteDomain(3, -2, 2, max_nonzero=2)
    two = dp.BinaryChoice(4, at_most=2)
    return [
        ("indicator", dp.ScoreIndicator, _schema_data, grid,
         lambda d, w, g: dp.ScoreIndicator(d, w, g), _ref_indicator(0.0, "<=", True)),
        ("indicator-ge", dp.ScoreIndicator, _schema_data, sparse,
         lambda d, w, g: dp.ScoreIndicator(d, w, g, threshold=0.5, sense=">=", signed=False),
         _ref_indicator(0.5, ">=", False)),
        ("zero-one-weighted", dp.ZeroOneLoss, _schema_data, grid,  # 1.0 × : through the general model
         lambda d, w, g: 1.0 * dp.ZeroOneLoss(d, w, g, weights=_weights(d.n), weight_bound=0.75), _ref_zero_one),
        ("ramp", dp.Ramp, _schema_data, sparse,
         lambda d, w, g: dp.Ramp(d, w, g, low=-0.75, high=1.25), _ref_ramp(-0.75, 1.25, True)),
        ("ramp-side", dp.Ramp, _schema_data,
         dp.DiscreteDomain(3, -1, 1, step=0.5, A_ub=[[1, 1, 1], [1, -1, 0]], b_ub=[0.5, 0.0], min_nonzero=1),
         lambda d, w, g: dp.Ramp(d, w, g, low=-0.5, high=0.5, signed=False), _ref_ramp(-0.5, 0.5, False)),
        ("capped-min", dp.CappedMin, _points, two,
         lambda d, w, g: dp.CappedMin(d, w, g, _manhattan, cap=4.0), _ref_capped(4.0)),
        ("lookup", dp.Lookup, _points, dp.OneOf(3),
         lambda d, w, g: dp.Lookup(d, w, g, _price_table, bound=3.0), _ref_lookup),
    ]


ATOM_CASES = _cases()


def _domain_points(dom: object, dim: int) -> np.ndarray:
    return dom.enumerate(dim) if isinstance(dom, IntegerGrid) else dom.enumerate()  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", ATOM_CASES, ids=[c[0] for c in ATOM_CASES])
def test_atom_totals_are_the_exact_sums_of_their_definition(case) -> None:
    _, _, make_data, dom, make_loss, reference = case
    for seed in range(3):
        data = make_data(np.random.default_rng(seed))
        dim = data.n_features if not isinstance(dom, DiscreteDomain) else dom.dim
        loss = make_loss(data, dp.Variable(dim), dom)
        for w in _domain_points(dom, dim):
            assert loss.exact_value(w) == reference(loss.data, w)
        # and the range B holds row by row: one row's loss never exceeds it
        assert all(0 <= reference(loss.data.subset([i]), w) <= loss.exact_bound
                   for i in range(min(4, data.n)) for w in _domain_points(dom, dim)[:10])


def test_sums_and_scalings_add_exactly_and_add_their_bounds() -> None:
    data = _schema_data(np.random.default_rng(5))
    grid = dp.DiscreteDomain(3, -1, 1)
    w = dp.Variable(3)
    a, b = dp.ScoreIndicator(data, w, grid), dp.Ramp(data, w, grid, low=0.0, high=0.5)
    loss = a + 2.5 * b
    assert loss.exact_bound == a.exact_bound + Fraction(5, 2) * b.exact_bound
    for v in grid.enumerate():
        assert loss.exact_value(v) == a.exact_value(v) + Fraction(5, 2) * b.exact_value(v)
    with pytest.raises(ModelError, match="non-negative"):
        _ = -1.0 * a
    other = dp.Variable(3)
    with pytest.raises(ModelError, match="share"):
        _ = a + dp.ScoreIndicator(data, other, grid)


# -- domains ---------------------------------------------------------------------------------------
def _ref_domain(lows, highs, *, step=1.0, l2=None, most=None, least=None, A_ub=None, b_ub=None,
                A_eq=None, b_eq=None) -> set[tuple[Fraction, ...]]:
    out = set()
    for k in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(lows, highs, strict=True))):
        w = [Fraction(step) * v for v in k]
        nz = sum(v != 0 for v in k)
        if most is not None and nz > most or least is not None and nz < least:
            continue
        if l2 is not None and sum(x * x for x in w) > Fraction(l2) ** 2:
            continue
        if A_ub is not None and any(sum(Fraction(float(a)) * x for a, x in zip(row, w, strict=True)) > Fraction(float(b))
                                    for row, b in zip(A_ub, b_ub, strict=True)):
            continue
        if A_eq is not None and any(sum(Fraction(float(a)) * x for a, x in zip(row, w, strict=True)) != Fraction(float(b))
                                    for row, b in zip(A_eq, b_eq, strict=True)):
            continue
        out.add(tuple(w))
    return out


DOMAIN_CASES = [
    ("box", DiscreteDomain, dict(dim=3, low=[-1, 0, -2], high=[1, 2, 0]), dict(lows=[-1, 0, -2], highs=[1, 2, 0])),
    ("sparse-l2", DiscreteDomain, dict(dim=4, low=-2, high=2, max_nonzero=2, l2_bound=2.5),
     dict(lows=[-2] * 4, highs=[2] * 4, most=2, l2=2.5)),
    ("step-side", DiscreteDomain, dict(dim=3, low=-1, high=1, step=0.5, A_ub=[[1, 1, 1], [1, -1, 0]], b_ub=[0.5, 0.0],
                                       min_nonzero=1),
     dict(lows=[-2] * 3, highs=[2] * 3, step=0.5, A_ub=[[1, 1, 1], [1, -1, 0]], b_ub=[0.5, 0.0], least=1)),
    ("equality", DiscreteDomain, dict(dim=4, low=0, high=2, A_eq=[[1, 1, 1, 1]], b_eq=[3]),
     dict(lows=[0] * 4, highs=[2] * 4, A_eq=[[1, 1, 1, 1]], b_eq=[3])),
    ("binary", DiscreteDomain, "binary", dict(lows=[0] * 5, highs=[1] * 5, most=3, least=2)),
    ("one-of", DiscreteDomain, "one-of", dict(lows=[0] * 4, highs=[1] * 4, most=1, least=1)),
    ("grid", IntegerGrid, "grid", dict(lows=[-2] * 3, highs=[2] * 3, l2=3.0)),
]


def _make_domain(spec: object) -> object:
    if spec == "binary":
        return dp.BinaryChoice(5, at_most=3, at_least=2)
    if spec == "one-of":
        return dp.OneOf(4)
    if spec == "grid":
        return dp.IntegerGrid(1, -2, 2, l2_bound=3.0)
    return dp.DiscreteDomain(**spec)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", DOMAIN_CASES, ids=[c[0] for c in DOMAIN_CASES])
def test_domains_hold_exactly_the_points_of_their_declaration(case) -> None:
    _, _, spec, ref = case
    dom = _make_domain(spec)
    dim = len(ref["lows"])
    got = {tuple(Fraction(float(v)) for v in row) for row in _domain_points(dom, dim)}
    assert got == _ref_domain(**ref)
    # the radius D bounds every point (OPDisc's normalization needs it), and the separation τ holds
    D = dom.bound(dim)
    assert all(sum(x * x for x in p) <= Fraction(D) ** 2 * (1 + Fraction(1, 10**9)) for p in got)
    assert all(dom.contains(np.array([float(x) for x in p])) for p in got)


def test_bad_declarations_are_refused_in_one_line() -> None:
    data = _points(np.random.default_rng(0))
    w = dp.Variable(4)
    with pytest.raises(ModelError, match="finite"):
        dp.DiscreteDomain(3, -np.inf, 1)  # no finite radius
    with pytest.raises(ModelError, match="bound"):
        dp.CappedMin(data, w, dp.BinaryChoice(4), _manhattan, cap=float("inf"))  # unbounded loss
    with pytest.raises(ModelError, match="public"):
        dp.DiscreteDomain(2, 0, 1, A_ub=data, b_ub=[1.0])  # a side constraint that reads data
    with pytest.raises(ModelError, match="empty"):
        dp.DiscreteDomain(3, 0, 1, max_nonzero=1, min_nonzero=2)
    with pytest.raises(ModelError, match="no solution"):
        dp.DiscreteDomain(2, 0, 2, A_eq=[[2, 2]], b_eq=[3])
    for err in (ModelError,):
        with pytest.raises(err, match="binary"):
            dp.CappedMin(data, w, dp.DiscreteDomain(4, -1, 1), _manhattan, cap=2.0)


def test_a_cost_function_is_probed_when_declared_and_mapped_on_the_data() -> None:
    """A function that fails on the public probe row is refused at once; one that fails on a data
    row (after the charge) maps that row to the bound, like a non-finite cost."""
    data = _points(np.random.default_rng(1))
    w = dp.Variable(4)
    with pytest.raises(ModelError, match="row of zeros"):
        dp.CappedMin(data, w, dp.BinaryChoice(4), lambda r: np.ones(3), cap=4.0)
    with pytest.raises(ModelError, match="failed on a row of zeros"):
        dp.CappedMin(data, w, dp.BinaryChoice(4), lambda r: 1 / 0, cap=4.0)

    def fragile(row: np.ndarray) -> np.ndarray:
        if row[0] == 4:
            raise ValueError("a value the function cannot take")
        return _manhattan(row)

    loss = dp.CappedMin(data, w, dp.BinaryChoice(4), fragile, cap=4.0)
    for v in dp.BinaryChoice(4).enumerate():
        expected = sum((Fraction(4) if x[0] == 4 else min([Fraction(4), *[Fraction(float(c)) for c, on in
                        zip(_manhattan(x), v, strict=True) if on]]) for x in data.X), Fraction(0))
        assert loss.exact_value(v) == expected


def test_the_exponential_mechanism_refuses_a_lattice_read_from_weights() -> None:
    data = _schema_data(np.random.default_rng(2))
    grid = dp.IntegerGrid(1, -1, 1)
    weighted = dp.ZeroOneLoss(data, dp.Variable(3), grid, weights=_weights(data.n), weight_bound=1.0)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="weights"):
        dp.ExponentialMechanism(1.0, ledger=ledger).run(DiscreteProblem(weighted))
    assert ledger.spent == (0.0, 0.0)
    plain = DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), grid))
    assert grid.contains(dp.ExponentialMechanism(1.0, ledger=ledger).run(plain, seed=0).theta)


def test_declared_groups_bound_the_groups_from_the_schema_alone() -> None:
    """A public bound: the same on neighbours, at least the groups the data make, at most n."""
    rng = np.random.default_rng(3)
    d0 = _schema_data(rng, n=200)
    d1 = d0.replace_row(0, [0.3, -0.9, 1.0], 1.0)
    grid = dp.DiscreteDomain(3, -1, 1)
    a0, a1 = dp.ScoreIndicator(d0, dp.Variable(3), grid), dp.ScoreIndicator(d1, dp.Variable(3), grid)
    assert a0.declared_groups() == a1.declared_groups() == min(200, 9 * 9 * 2 * 2)
    assert a0.groups[0].shape[0] <= a0.declared_groups()
    w = dp.Variable(3)
    both = dp.ScoreIndicator(d0, w, grid) + dp.Ramp(d0, w, grid)
    assert both.declared_groups() == 2 * a0.declared_groups()
    loose = dp.CappedMin(_points(rng, n=30), dp.Variable(4), dp.BinaryChoice(4), _manhattan, cap=4.0)
    assert loose.declared_groups() == 30  # no schema: n


def test_an_empty_domain_is_refused_before_the_charge() -> None:
    """Side constraints no point meets: found from the declaration, nothing charged."""
    data = _points(np.random.default_rng(0))
    dom = dp.BinaryChoice(4, at_least=1, A_ub=[[1, 1, 1, 1]], b_ub=[0.5])
    problem = DiscreteProblem(dp.CappedMin(data, dp.Variable(4), dom, _manhattan, cap=4.0))
    for mech in (dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()), dp.RSPM(1.0, ledger=dp.Ledger()),
                 dp.ExponentialMechanism(1.0, ledger=dp.Ledger())):
        with pytest.raises(MechanismError, match="empty"):
            mech.run(problem, solver="highs" if mech.name != "ExponentialMechanism" else "auto")
        assert mech.ledger.spent == (0.0, 0.0)


# -- every backend's argmin is the brute-force argmin, for every perturbation kind -------------------
def _mip_backends() -> list[str]:
    names = ["highs", "cpsat", "scip"]
    return [n for n in names if dp.backends.get(n).available()]


@pytest.mark.parametrize("kind", ["normalized", "linear", "levels"])
@pytest.mark.parametrize("case", ATOM_CASES, ids=[c[0] for c in ATOM_CASES])
def test_every_backend_finds_the_brute_force_argmin(case, kind) -> None:
    _, _, make_data, dom, make_loss, _ = case
    rng = np.random.default_rng(7)
    data = make_data(rng)
    dim = data.n_features if not isinstance(dom, DiscreteDomain) else dom.dim
    problem = DiscreteProblem(make_loss(data, dp.Variable(dim), dom)).with_kind(kind)
    for draw in range(2):
        eta = rng.normal(scale=2.0, size=problem.noise_size)
        noisy = problem.with_eta(eta)
        w_ref, f_ref = brute_force(noisy)
        for name in _mip_backends():
            res = dp.backends.get(name).solve_problem(noisy)
            assert res.certified, (name, res.message)
            assert np.array_equal(res.solution, w_ref), (name, draw)
            assert abs(res.primal_bound - f_ref) <= 1e-6 * max(1.0, abs(f_ref))


def _concrete(cls: type) -> set[type]:
    out: set[type] = set()
    for sub in cls.__subclasses__():
        if not sub.__name__.startswith("_"):
            out.add(sub)
        out |= _concrete(sub)
    return out


def test_every_atom_and_domain_has_a_differential_case() -> None:
    """The guard: a new atom (subclass of Atom) or domain class must get a case above."""
    atoms = {c for c in _concrete(Atom)}
    assert atoms <= {case[1] for case in ATOM_CASES}, atoms - {case[1] for case in ATOM_CASES}
    assert {DiscreteDomain, IntegerGrid} == {case[1] for case in DOMAIN_CASES}
    assert issubclass(Atom, RowLoss)
