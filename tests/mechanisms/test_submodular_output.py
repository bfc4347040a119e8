"""Output perturbation with a submodular norm (KD19 Thm. 1): releases, refusals, audit, mutant, neighbours.

Audit pair for :class:`SubmodularOutputPerturbation` (as in tests/mechanisms/test_objective_perturbation_audits.py):
θ ∈ ℝ¹, nine rows with x = 0 and the tenth (1, +1) in D0, (1, −1) in D1 under a
Huber loss (h = 0.1), with (Λ/2)θ² + lam|θ| (F = Cardinality).  The exact
minimizers are ±(h/n − lam)/Λ, 2(h/n − lam)/Λ apart, against the sensitivity
2h/(nΛ) + 2·tolerance the mechanism assumes (ratio ≈ 0.9), so the audit is
nearly tight.  A one-dimensional exact backend (bounded Brent) keeps the runs
cheap; dpopt's certificate still re-checks every answer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import optimize

import dpopt as dp
from dpopt.backends.base import Backend
from dpopt.backends.result import OracleResult, OracleStatus
from dpopt.errors import MechanismError
from dpopt.mechanisms.submodular_output import SubmodularOutputPerturbation, lemma1_excess_risk
from dpopt.modeling.submodular import Cardinality, GroupCoverage
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.submodular_lp import polyhedron_gaussian_width
from dpopt.privacy.noise_spec import NoiseSpec
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers
from dpopt.testing.tables import regression_table
from dpopt.testing.views import assert_same_view

P = 6


# ----------------------------------------------------------------------------- output perturbation


N, H = 10, 0.1


class ExactScalar(Backend):
    """θ ∈ ℝ¹: the perturbed objective minimised by bounded Brent (an exact 1-D oracle)."""

    name, module, distribution = "exact-1d", "scipy", "scipy"

    def version(self):
        return "1"

    def check(self, problem):
        assert problem.dim == 1

    def prepare(self, problem):
        return problem

    def solve(self, prepared, b, options):
        prob = prepared.with_perturbation(prepared.perturbation.with_noise(b))
        res = optimize.minimize_scalar(lambda t: prob.objective(np.array([t])), bounds=(-5, 5), method="bounded",
                                       options={"xatol": 1e-13})
        return OracleResult(np.array([res.x]), OracleStatus.OPTIMAL, True, 0.0, self.name, "1", "ok")


def _pair():
    return one_point_pair(N)


def _huber_problem(data, lam=0.5, omega_weight=1e-3):
    th = dp.Variable(1)
    return dp.Problem(dp.HuberLoss(data, th, h=H),
                      regularizer=(dp.L2Squared(th, lam), SubmodularNorm(th, Cardinality(1), omega_weight)))


class ThirdNoiseSubmodular(SubmodularOutputPerturbation):
    """Mutation: the same mechanism with a third of the output noise."""

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        o = p.output_noise
        return dataclasses.replace(p, output_noise=o.scaled(1 / 3))


def _output_runner(cls):
    def run(data, seed):
        mech = cls(2.0, 1e-3, ledger=dp.Ledger(), noise="gaussian")
        return mech.run(_huber_problem(data), solver=ExactScalar(), seed=seed).theta
    return run


def test_output_perturbation_release_and_refusals():
    data = regression_table(n=400)
    th = dp.Variable(P)
    F = GroupCoverage(P, [[0, 1, 2], [3, 4, 5]])
    prob = dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.01)))
    r = SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=0)
    assert r.private and r.oracle_calls[0].certified and r.theta.shape == (P,)
    assert r.parameters["gaussian_width"] == pytest.approx(polyhedron_gaussian_width(F).value)
    L, lam = r.parameters["lipschitz_l2"], r.parameters["strong_convexity"]
    assert r.parameters["sensitivity_l2"] == pytest.approx(2 * L / (400 * lam) + 2e-4)
    terms = lemma1_excess_risk(prob, NoiseSpec("gaussian", 1.0), 1.0)
    assert terms["total"] == pytest.approx(terms["loss_term"] + terms["regularizer_term"] + terms["ridge_term"])
    no_ridge = dp.Problem(dp.SquaredLoss(data, th), regularizer=SubmodularNorm(th, F, 0.01))
    with pytest.raises(MechanismError, match="L2Squared"):
        SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(no_ridge)
    with pytest.raises(MechanismError, match="SubmodularNorm"):
        SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(
            dp.Problem(dp.SquaredLoss(data, th), regularizer=dp.L2Squared(th, 0.1)))


@covers(SubmodularOutputPerturbation, kind="audit")
def test_output_perturbation_audit():
    d0, d1 = _pair()
    res = audit(_output_runner(SubmodularOutputPerturbation), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                n_runs=2000, seed=0)
    print(res.summary())
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.4, res.summary()


@covers(SubmodularOutputPerturbation, kind="mutation")
def test_output_perturbation_mutation_is_caught():
    d0, d1 = _pair()
    res = audit(_output_runner(ThirdNoiseSubmodular), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                n_runs=2000, seed=0)
    print(res.summary())
    assert res.violates, res.summary()


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@covers(dp.SubmodularOutputPerturbation, dp.DualFrankWolfe, kind="neighbour")
def test_submodular_mechanisms_look_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset]) -> None:
    """Both mechanisms of a submodular-norm problem (DualFrankWolfe's other tests are in
    test_dual_frank_wolfe.py)."""

    def problem(data: dp.Dataset) -> dp.Problem:
        th = dp.Variable(data.n_features)
        F = GroupCoverage(data.n_features, [[0, 1], [2]])
        return dp.Problem(dp.SquaredLoss(data, th),
                          regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.01)))

    def output(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=ledger).run(problem(data), seed=2)

    def dual_fw(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.DualFrankWolfe(1.0, 1e-6, steps=5, ledger=ledger).run(problem(data), seed=2)

    assert_same_view(output, *convex_pair)
    assert_same_view(dual_fw, *convex_pair)
