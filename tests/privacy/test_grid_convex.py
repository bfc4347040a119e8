"""Exact grid releases of the convex additive mechanisms and OPSamp's Laplace output.

What users rely on: every released coordinate is an integer multiple of the public grid step
the release declares; the set of reachable outputs does not depend on the centre's position
inside one grid step (so no low-order float bit of the un-noised value leaks); the discrete
laws cost little noise against the analytic Gaussian; an unseeded run's noise never comes
from the generator's PCG64 stream.
"""

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.privacy.calibration import gaussian_sigma
from dpopt.privacy.exact import sampler_for
from dpopt.privacy.grid import grid_step
from dpopt.privacy.noise_spec import NoiseSpec
from dpopt.privacy.rng import SecureGenerator
from dpopt.privacy.sampling import gaussian_noise
from dpopt.submodular import Cardinality
from dpopt.testing.pairs import grid_label_pair, zero_one_problem


def _on_grid(values: np.ndarray, gamma: float) -> bool:
    """Whether every value is exactly an integer multiple of γ (γ a power of two: the division is exact)."""
    units = np.asarray(values, dtype=np.float64) / gamma
    return bool(np.all(np.isfinite(units)) and np.all(units == np.round(units)))


def _logistic(n=60, d=3, lam=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / math.sqrt(d)
    data = dp.Dataset(X, np.sign(rng.standard_normal(n)), x_bound=1.0, x_norm=2, y_bound=1.0, clip=True)
    th = dp.Variable(d)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 2.0), regularizer=dp.L2Squared(th, lam))


def _submodular(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / math.sqrt(d)
    data = dp.Dataset(X, rng.uniform(-1, 1, n), x_bound=1.0, x_norm=2, y_bound=1.0, clip=True)
    th = dp.Variable(d)
    return dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.5), SubmodularNorm(th, Cardinality(d), 0.01)))


CONVEX_RUNS = {
    "output-gaussian": (lambda: dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger(), noise="gaussian",
                                                            project=False), _logistic),
    "output-laplace": (lambda: dp.OutputPerturbation(1.0, 0.0, ledger=dp.Ledger(), project=False), _logistic),
    "submodular-output": (lambda: dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()), _submodular),
    "objective-gaussian": (lambda: dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()), _logistic),
    "objective-laplace": (lambda: dp.ObjectivePerturbation(1.0, 0.0, ledger=dp.Ledger()), _logistic),
}


@pytest.mark.parametrize("name", sorted(CONVEX_RUNS))
def test_convex_releases_are_exact_multiples_of_the_declared_grid_step(name):
    make, problem = CONVEX_RUNS[name]
    for seed in range(3):
        r = make().run(problem(), solver="scipy" if "submodular" not in name else "auto", seed=seed)
        gamma = r.parameters["grid_step"]
        assert gamma > 0 and math.log2(gamma).is_integer()  # a public power of two
        assert _on_grid(r.theta, gamma), name
        assert not _on_grid(r.theta + gamma / 3, gamma)  # the check can fail


def test_objective_perturbation_grid_comes_from_the_declared_tolerance_and_dimension_only():
    """γ = grid_step(2·tolerance, √d): the grid of every additive release of sensitivity 2·tolerance."""
    problem = _logistic()
    for tolerance in (1e-6, 3e-5, 2.0**-12):
        r = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger(), tolerance=tolerance).run(
            problem, solver="scipy", seed=1)
        gamma = r.parameters["grid_step"]
        assert gamma == grid_step(min(2 * tolerance, 2 * tolerance / r.parameters["epsilon_approx"]), math.sqrt(problem.dim)) and _on_grid(r.theta, gamma)


def test_output_perturbation_projection_is_a_post_processing_of_the_grid_values():
    mech = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger(), project=True)
    plain = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger(), project=False)
    problem = _logistic(lam=0.01)
    projected, raw = mech.run(problem, solver="scipy", seed=4), plain.run(problem, solver="scipy", seed=4)
    assert _on_grid(raw.theta, raw.parameters["grid_step"])
    assert np.array_equal(projected.theta, problem.constraint.project(raw.theta))


def test_opsamp_release_is_an_exact_multiple_of_its_grid_step():
    d0, _ = grid_label_pair(5)
    for seed in range(3):
        r = dp.OPSamp(2.0, 1e-3, calls=3, ledger=dp.Ledger()).run(zero_one_problem(d0, dp.IntegerGrid(1, -2, 2, l2_bound=2.0)),
                                                                   solver="bruteforce", seed=seed)
        gamma = r.parameters["grid_step"]
        assert math.log2(gamma).is_integer() and _on_grid(r.theta, gamma)
        assert r.parameters["laplace_scale"] >= r.parameters["sensitivity"] / 2.0  # b ≥ λ/ε


# --- the release function: reachable sets do not depend on the centre inside a grid step ----

LAWS = {
    "gaussian": NoiseSpec.for_sensitivity(0.3, 1.0, 1e-6, 4, "gaussian"),
    "laplace": NoiseSpec.for_sensitivity(0.3, 1.0, 0.0, 4),
    "gaussian-1d": NoiseSpec.for_sensitivity(0.3, 1.0, 1e-6, 1, "gaussian"),
}


def _grid_release_holds(release, gamma: float, dim: int) -> bool:
    """The check: for centres inside one grid step of each other, with the same seed, outputs
    are multiples of γ and identical (bit for bit) whenever the centres round to the same point."""
    base = np.random.default_rng(11).normal(size=dim)
    centre = np.rint(base / gamma) * gamma  # a grid point
    offsets = np.array([0.0, 0.25, -0.49, 0.1])  # all round to the same grid point
    outs = [release(centre + off * gamma, np.random.default_rng(5)) for off in offsets]
    same = all(o.tobytes() == outs[0].tobytes() for o in outs)
    return same and all(_on_grid(o, gamma) for o in outs)


@pytest.mark.parametrize("law", sorted(LAWS))
def test_release_reachable_values_do_not_depend_on_the_centre_within_a_step(law):
    spec = LAWS[law]
    dim = 1 if law.endswith("1d") else 4
    assert _grid_release_holds(spec.release, spec.grid_step, dim)
    # across a rounding boundary the output moves by whole steps: still on the same lattice
    near = spec.release(np.full(dim, 0.51 * spec.grid_step), np.random.default_rng(5))
    far = spec.release(np.full(dim, 0.49 * spec.grid_step), np.random.default_rng(5))
    assert _on_grid(near - far, spec.grid_step) and np.all(np.abs(near - far) == spec.grid_step)


@pytest.mark.parametrize("law", sorted(LAWS))
def test_float_noise_fails_the_same_check(law):
    """Mutant: today's float sampler, centre + σ·Z, leaks the centre's low-order bits."""
    spec = LAWS[law]
    dim = 1 if law.endswith("1d") else 4

    def float_release(centre, rng):
        return np.asarray(centre) + gaussian_noise(rng, spec.scale, np.size(centre))

    assert not _grid_release_holds(float_release, spec.grid_step, dim)


# --- calibration: the discrete laws cost little against the analytic Gaussian --------------

@pytest.mark.parametrize("sensitivity,epsilon,delta,dim", [
    (0.04, 2.0, 1e-3, 1), (1.0, 1.0, 1e-6, 1), (1.0, 1.0, 1e-6, 2), (1.0, 1.0, 1e-6, 10),
    (0.1, 3.0, 1e-6, 20), (1.0, 0.5, 1e-5, 50), (1.0, 0.1, 1e-6, 5), (1.0, 8.0, 1e-6, 5),
])
def test_discrete_gaussian_scale_is_within_ten_percent_of_the_analytic_gaussian(sensitivity, epsilon, delta, dim):
    analytic = gaussian_sigma(sensitivity, epsilon, delta, method="analytic")
    spec = NoiseSpec.for_sensitivity(sensitivity, epsilon, delta, dim, "gaussian")
    assert analytic * (1 - 1e-9) <= spec.scale <= 1.1 * analytic


@pytest.mark.parametrize("dim", [1, 2, 10])
def test_discrete_laplace_scale_matches_the_l1_calibration(dim):
    """b ≥ √d·Δ/ε (ℓ1 sensitivity √d·Δ₂), within the grid's 2^-8 plus one step; E‖v‖ ≤ √2·d·Δ/ε·(1 + 2^-7)."""
    spec = NoiseSpec.for_sensitivity(1.0, 1.0, 0.0, dim)
    assert spec.kind == "laplace"
    assert math.sqrt(dim) <= spec.scale <= math.sqrt(dim) * (1 + 2**-8) + spec.grid_step * (dim + 1)
    assert spec.expected_norm(dim) <= math.sqrt(2.0) * dim * (1 + 2**-7)


# --- secure runs: the noise never reads the PCG64 stream ----------------------------------

def _forbid(monkeypatch, *names):
    def refuse(self, *args, **kwargs):
        raise AssertionError("a secure run drew noise from the generator's PCG64 stream")

    for name in names:
        monkeypatch.setattr(SecureGenerator, name, refuse)


def test_secure_output_perturbation_never_calls_the_generator(monkeypatch):
    _forbid(monkeypatch, "integers", "normal", "standard_normal", "laplace", "random", "exponential", "gamma")
    with pytest.raises(AssertionError, match="PCG64"):  # the patch catches a float draw
        gaussian_noise(SecureGenerator(np.random.PCG64DXSM(0)), 1.0, 3)
    r = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(_logistic(), solver="scipy")
    assert r.private and _on_grid(r.theta, r.parameters["grid_step"])
    assert sampler_for(SecureGenerator(np.random.PCG64DXSM(0))).secure


def test_secure_objective_and_opsamp_output_noise_never_seed_from_the_generator(monkeypatch):
    """Their un-released perturbations (β, the σ_k) are float draws of the run's generator, as
    before; the released output noise must come from the OS CSPRNG, never from ``integers``
    (the seed of a reproducible sampler)."""
    _forbid(monkeypatch, "integers")
    r = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(_logistic(), solver="scipy")
    assert _on_grid(r.theta, r.parameters["grid_step"])
    d0, _ = grid_label_pair(5)
    r = dp.OPSamp(2.0, 1e-3, calls=2, ledger=dp.Ledger()).run(
        zero_one_problem(d0, dp.IntegerGrid(1, -2, 2, l2_bound=2.0)), solver="bruteforce")
    assert _on_grid(r.theta, r.parameters["grid_step"])
