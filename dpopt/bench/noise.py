"""Time of drawing a DP-GD fit's noise with the exact discrete Gaussian vs numpy's float sampler.

Setup
-----
The problem is the logistic loss over an ℓ2 ball of radius ``--radius`` (default 10, as in
``dpopt bench linear``) on ``--data adult`` (UCI Adult train split, ``standard`` encoding:
n = 32,561, d = 109) or ``--data synthetic`` (``--n`` rows shaped like it, d = 104; see
``dpopt bench speed``).  ``dp.DPGradientDescent(--epsilon, δ = 1/n²)`` with its defaults
plans the fit: T steps (``--steps`` overrides the default T), noise σ on each clipped
gradient sum (d coordinates a step) and, with adaptive clipping, σ_b on each step's count.

Every noisy sum of the fit is rounded onto a public grid and gets exact discrete Gaussian
noise ([CKS20], Alg. 3; :mod:`dpopt.privacy.grid`).  For the median over ``--repeats`` runs,
this measures

(a) the **fit**: ``mech.run(problem)`` without a seed — the default, secure run, whose
    exact noise reads the OS CSPRNG;
(b) **exact, secure**: drawing that fit's noise alone, as the fit draws it
    (``plan.noise.draws`` and the count's, T steps, from an unseeded run's generator);
(c) **exact, seeded**: the same from a seeded (reproducible, not secure) generator;
(d) **numpy**: the float sampler the fit used before (:func:`dpopt.privacy.sampling.gaussian_noise`
    on a PCG64DXSM generator), the same number of values;

and prints each as a share of (a): (b)/(a) is the part of a default fit's time spent
drawing its exact noise.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import dpopt as dp
from dpopt.bench.arguments import parse, positive_float, positive_int
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise

__all__ = ["NoiseTimes", "main", "measure", "render"]


@dataclass(frozen=True)
class NoiseTimes:
    """Median seconds of the fit and of drawing its noise with each sampler."""

    steps: int
    dim: int
    sigma: float
    count_sigma: float | None
    fit_s: float
    numpy_s: float
    exact_s: float
    exact_seeded_s: float

    @property
    def draws(self) -> int:
        return self.steps * (self.dim + (1 if self.count_sigma is not None else 0))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench noise", description=__doc__.splitlines()[0])
    p.add_argument("--data", choices=("adult", "synthetic"), default="adult")
    p.add_argument("--n", type=positive_int, default=30_000, help="rows of --data synthetic (default 30000)")
    p.add_argument("--epsilon", type=positive_float, default=1.0, help="ε of the fit (default 1)")
    p.add_argument("--steps", type=positive_int, default=None, help="T (default: DP-GD's own choice)")
    p.add_argument("--radius", type=positive_float, default=10.0, help="ℓ2 radius of the constraint set")
    p.add_argument("--repeats", type=positive_int, default=3, help="timed runs of each (default 3)")
    return p


def _median(fn: Callable[[int], Any], repeats: int) -> float:
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        fn(r)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _problem(args: argparse.Namespace) -> dp.Problem:
    if args.data == "adult":
        from dpopt.datasets import load_adult

        data = load_adult(encoding="standard")
    else:
        from dpopt.bench.speed import synthetic_onehot

        data = synthetic_onehot(args.n)
    th = dp.Variable(data.n_features)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, args.radius))


def measure(args: argparse.Namespace) -> NoiseTimes:
    """Plan the fit, then time it and its noise (see the module docstring)."""
    problem = _problem(args)

    def mech() -> dp.DPGradientDescent:
        return dp.DPGradientDescent(args.epsilon, 1.0 / problem.n**2, steps=args.steps, ledger=dp.Ledger())

    plan = mech().plan(problem)
    steps, dim = plan.steps, problem.dim
    count = plan.adaptive.count if plan.adaptive is not None else None

    def numpy_noise(r: int) -> None:
        rng = np.random.Generator(np.random.PCG64DXSM(r))
        for _ in range(steps):
            gaussian_noise(rng, plan.sigma, dim)
            if count is not None:
                gaussian_noise(rng, count.sigma, 1)

    def exact_noise(seed: int | None) -> None:
        rng = make_rng(seed)[0]
        draws = plan.noise.draws(rng, dim)
        counts = count.draws(rng, 1) if count is not None else None
        for _ in range(steps):
            next(draws)
            if counts is not None:
                next(counts)

    fit_s = _median(lambda r: mech().run(problem), args.repeats)
    return NoiseTimes(steps, dim, plan.sigma, count.sigma if count is not None else None, fit_s,
                      _median(numpy_noise, args.repeats),
                      _median(lambda r: exact_noise(None), args.repeats),
                      _median(exact_noise, args.repeats))


def render(t: NoiseTimes, args: argparse.Namespace) -> str:
    """The table of medians, ratios to the fit time and per-draw costs."""
    count = "none" if t.count_sigma is None else f"{t.count_sigma:.6g}"
    lines = [f"DP-GD on {args.data} (d = {t.dim}), ε = {args.epsilon:g}, δ = 1/n²: T = {t.steps}, "
             f"σ = {t.sigma:.6g}, count σ_b = {count}; {t.draws} noise values; "
             f"median of {args.repeats} run{'s' if args.repeats > 1 else ''}",
             f"{'what':<28} {'seconds':>9} {'÷ fit':>8} {'µs/draw':>8}",
             f"{'fit (exact noise, secure)':<28} {t.fit_s:>9.4f} {1.0:>8.3f} {'':>8}"]
    for label, secs in (("its noise, exact, secure", t.exact_s), ("exact, seeded (not secure)", t.exact_seeded_s),
                        ("numpy float Gaussian", t.numpy_s)):
        lines.append(f"{label:<28} {secs:>9.4f} {secs / t.fit_s:>8.3f} {1e6 * secs / max(t.draws, 1):>8.2f}")
    lines.append(f"exact ÷ numpy: {t.exact_s / t.numpy_s:.1f}×")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    print(render(measure(args), args))
    return 0
