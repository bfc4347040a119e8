"""solver="auto" for OPDisc, RSPM and OPSamp: the oracle is chosen from public declarations only.

The rule (dpopt/backends/auto_discrete.py): bruteforce for a tiny grid (K^d ≤ its limit and
K^d·n ≤ BRUTEFORCE_WORK), highs-grouped when the schema makes the grouped decomposition
applicable within its declared limits, else cpsat (then highs).
"""

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.auto_discrete import (
    BRUTEFORCE_WORK,
    auto_ranked,
    choose_discrete,
    discrete_candidates,
)
from dpopt.backends.highs_grouped import HighsGroupedBackend
from dpopt.backends.profiles import resolve
from dpopt.datasets import load_adult
from dpopt.errors import ModelError
from dpopt.testing.declarations import hide_data_values
from dpopt.testing.pairs import zero_one_problem

HIGHSPY = registry.get("highs-grouped").available()
needs_highspy = pytest.mark.skipif(not HIGHSPY, reason="highspy is not installed (highs-grouped, highs)")


@pytest.fixture(scope="module")
def adult():
    return load_adult("train", balanced=True, n=2000, seed=0)


def _problem(data, grid):
    return zero_one_problem(data, grid)


def _numeric(n, d, seed=0, grid="1/10"):
    """n rows of d numeric columns on [−1, 1] (no binary column: nothing to group)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return dp.Dataset(X, y, schema=dp.Schema.uniform(d, dp.Numeric(-1, 1, grid=grid)))


def _tiny():
    X = np.zeros((6, 1))
    X[-2:] = 1.0
    data = dp.Dataset(X, np.array([1.0, 1, 1, -1, 1, 1]), schema=dp.Schema.uniform(1, dp.Numeric(-1, 1, grid="1/2")))
    return _problem(data, dp.IntegerGrid(1, -2, 2, l2_bound=2.0))


# -- the rule --------------------------------------------------------------------------------

@needs_highspy
def test_adult_schema_picks_grouped(adult):
    assert adult.schema is not None and adult.n_features == 23
    for grid in (dp.IntegerGrid(1, -1, 1), dp.IntegerGrid(1, -4, 4, l2_bound=23 ** 0.5)):
        problem = _problem(adult, grid)
        choice = choose_discrete(problem)
        assert choice.backend == "highs-grouped"
        assert "3 non-binary columns" in choice.reason
        assert resolve("auto", problem)[0].name == "highs-grouped"  # the one rule, also for resolve()


def test_no_grouped_structure_falls_back_to_big_m():
    """All columns numeric: the grouped split enumerates 3^10 > 50,000 points, and 3^10·n is too
    much to enumerate, so auto takes the documented big-M fallback."""
    problem = _problem(_numeric(300, 10), dp.IntegerGrid(1, -1, 1))
    names = [c.backend for c in discrete_candidates(problem)]
    fallback = [b.name for b in auto_ranked() if b.formulation == "big-m"]
    assert names == fallback == ["cpsat", "highs"]  # the declared auto_rank of the big-M backends
    assert "grouped decomposition does not apply" in discrete_candidates(problem)[0].reason
    if registry.get("cpsat").available():
        assert choose_discrete(problem).backend == "cpsat"


def test_tiny_grid_is_enumerated_and_the_bound_counts_n():
    grid = dp.IntegerGrid(1, -1, 1)  # 3^6 = 729 points
    small = _problem(_numeric(BRUTEFORCE_WORK // 729, 6), grid)
    large = _problem(_numeric(BRUTEFORCE_WORK // 729 + 1, 6), grid)
    assert choose_discrete(small).backend == "bruteforce"
    assert discrete_candidates(large)[0].backend != "bruteforce"  # same grid, n over the bound


def test_zero_one_loss_has_a_schema():
    """There is no schema-less DiscreteProblem: the 0/1 loss refuses data without one."""
    data = dp.Dataset(np.zeros((3, 2)), np.ones(3), x_bound=1.0)
    with pytest.raises(ModelError, match="schema"):
        dp.ZeroOneLoss(data, dp.Variable(2), dp.IntegerGrid(1, -1, 1))


@needs_highspy
def test_first_installed_candidate(monkeypatch, adult):
    problem = _problem(adult, dp.IntegerGrid(1, -1, 1))
    monkeypatch.setattr(HighsGroupedBackend, "available", lambda self: False)
    fallback = [b.name for b in auto_ranked() if b.formulation == "big-m"]
    assert choose_discrete(problem).backend == next(n for n in fallback if registry.get(n).available())


# -- it reads no values ----------------------------------------------------------------------

@pytest.mark.parametrize("case", ["adult", "numeric", "tiny"])
def test_choice_reads_no_values(monkeypatch, adult, case):
    problem = {"adult": lambda: _problem(adult, dp.IntegerGrid(1, -1, 1)),
               "numeric": lambda: _problem(_numeric(300, 10), dp.IntegerGrid(1, -1, 1)),
               "tiny": _tiny}[case]()
    before = discrete_candidates(problem)
    hide_data_values(monkeypatch, problem)
    with pytest.raises(AssertionError, match="read a data value"):  # the garbage is in place
        np.asarray(problem.loss.data.X)
    assert discrete_candidates(problem) == before


def test_choice_is_the_same_on_neighbours_and_on_garbage(adult):
    base = _problem(adult, dp.IntegerGrid(1, -4, 4, l2_bound=23 ** 0.5))
    x_other = np.zeros(23)
    x_other[[0, 1, 2, 3, 10, 15, 20]] = 1.0
    neighbour = _problem(adult.replace_row(7, x_other, -float(adult.y[7])), base.domain)
    garbage = dp.Dataset(np.random.default_rng(1).normal(size=(adult.n, 23)) * 50, -adult.y, schema=adult.schema)
    assert discrete_candidates(base) == discrete_candidates(neighbour) == discrete_candidates(_problem(garbage, base.domain))


# -- the mechanisms --------------------------------------------------------------------------

def test_default_run_is_certified_and_names_the_backend():
    release = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(_tiny(), seed=0)
    assert release.private and [c.backend for c in release.oracle_calls] == ["bruteforce"]
    assert all(c.certified for c in release.oracle_calls)
    assert release.parameters["backend"] == "bruteforce"
    assert release.parameters["solver_rule"].startswith("auto: bruteforce")


def test_opsamp_default_is_auto():
    release = dp.OPSamp(1.0, 1e-3, calls=3, ledger=dp.Ledger()).run(_tiny(), seed=0)
    assert [c.backend for c in release.oracle_calls] == ["bruteforce"] * 3
    assert all(c.certified for c in release.oracle_calls)


@needs_highspy
def test_default_rspm_on_adult_uses_grouped():
    small = load_adult("train", balanced=True, n=200, seed=0)
    release = dp.RSPM(1.0, ledger=dp.Ledger()).run(_problem(small, dp.IntegerGrid(1, -1, 1)), seed=0)
    # (the default cross-verification adds a call with role "verifier": tests/backends/test_verify.py)
    assert release.private and [c.backend for c in release.oracle_calls if c.role == "oracle"] == ["highs-grouped"]
    assert release.oracle_calls[0].certified
    assert "highs-grouped" in release.parameters["solver_rule"]


@needs_highspy
def test_explicit_solver_wins():
    release = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(_tiny(), solver="highs-grouped", seed=0)
    assert [c.backend for c in release.oracle_calls if c.role == "oracle"] == ["highs-grouped"]
    assert "solver_rule" not in release.parameters
    auto = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(_tiny(), solver="AUTO", seed=0)
    assert [c.backend for c in auto.oracle_calls] == ["bruteforce"]
