"""Black-box statistical privacy audits.

An audit runs a randomized mechanism many times on each of two neighbouring
inputs ``D0`` and ``D1``, reduces every output to a scalar statistic ``s`` and
looks for a threshold event ``E`` (``s > t`` or ``s < t``) whose probabilities
under the two inputs are further apart than an (ε, δ) guarantee allows.  If the
mechanism is (ε, δ)-differentially private then for every event

    P[E | D0] ≤ exp(ε) · P[E | D1] + δ        (and the same with D0, D1 swapped),

so one-sided Clopper–Pearson bounds ``p0_lower ≤ P[E | D0]`` and
``p1_upper ≥ P[E | D1]`` give the lower bound

    ε_lower = log((p0_lower − δ) / p1_upper)  (0 when p0_lower − δ ≤ 0)

which holds with the stated confidence.  A claim is refuted when
``ε_lower > claimed ε``.  This is the auditing recipe of Jagielski, Ullman and
Oprea (2020) and Nasr et al. (2021), with the threshold search of Ding et al.
(2018).

Selection and evaluation
------------------------
The runs of each input are split into *selection* runs and fresh *evaluation*
runs.  The event (orientation and threshold) is chosen on the selection runs
only: among thresholds at empirical quantiles of the pooled selection
statistics, both directions (``s > t``, ``s < t``) and both orientations
(``D0`` or ``D1`` in the numerator), it maximises the bound the evaluation
would give if the selection frequencies were exact (a Clopper–Pearson score
rather than a raw frequency ratio, which overfits thin tails).  The bound is
then computed on the evaluation runs only, for that single event.  Because
the choice is independent of the evaluation runs, no multiple-testing
correction (no split of the confidence over orientations) is needed.  The two Clopper–Pearson bounds come
from independent samples, so each is taken at level ``sqrt(confidence)`` and
both hold together with probability ``confidence``.

The audit can only *refute* a privacy claim; a bound at or below the claim is
evidence of nothing beyond "this test found no violation".
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpopt.errors import ModelError, PrivacyParameterError

__all__ = ["AuditResult", "audit", "audit_outputs"]

#: Confidence level (at least) used when scoring candidate events on the selection runs.
_SELECTION_CONFIDENCE = 0.999
#: Number of empirical quantiles of the pooled selection statistics tried as thresholds.
_N_QUANTILES = 199
#: Fewest runs allowed in the selection part and in the evaluation part.
_MIN_PART = 10
#: Fewest runs per dataset.
_MIN_RUNS = 20

Statistic = Callable[[np.ndarray], np.ndarray]

# The four orientations: (name of the numerator dataset, event direction).
_ORIENTATIONS: tuple[tuple[int, str], ...] = ((0, ">"), (0, "<"), (1, ">"), (1, "<"))


@dataclass(frozen=True)
class AuditResult:
    """Outcome of a privacy audit.

    Attributes
    ----------
    epsilon_lower : float
        Clopper–Pearson lower bound on ε at the stated confidence (≥ 0),
        computed on the evaluation runs only.
    claimed_epsilon : float
        The ε the mechanism claims.
    claimed_delta : float
        The δ the mechanism claims (subtracted in the bound).
    confidence : float
        Probability that ``epsilon_lower`` is below the true ε of the mechanism
        (for the audited pair of inputs).
    n_runs : int
        Runs per dataset, selection plus evaluation.
    threshold : float
        The threshold ``t`` of the chosen event.
    orientation : str
        The chosen event, e.g. ``"D0: s > t"``: the event ``s > t``, which is
        more likely under ``D0`` (``D0`` is the numerator of the bound).
    counts : tuple of int
        ``(hits under D0, hits under D1, evaluation runs per dataset)``.
    """

    epsilon_lower: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    n_runs: int
    threshold: float
    orientation: str
    counts: tuple[int, int, int]

    @property
    def violates(self) -> bool:
        """Whether the audit refutes the claim (``epsilon_lower > claimed_epsilon``)."""
        return self.epsilon_lower > self.claimed_epsilon

    def summary(self) -> str:
        """A readable multi-line report of the audit."""
        k0, k1, n_eval = self.counts
        verdict = (
            "VIOLATION: the lower bound exceeds the claimed epsilon"
            if self.violates
            else "no violation found"
        )
        return (
            f"privacy audit: epsilon >= {self.epsilon_lower:.4g} "
            f"({self.confidence:.0%} Clopper-Pearson lower bound) vs claimed "
            f"epsilon = {self.claimed_epsilon:.4g}, delta = {self.claimed_delta:.3g}: {verdict}\n"
            f"  event {self.orientation} with t = {self.threshold:.6g}; hits {k0}/{n_eval} under D0, "
            f"{k1}/{n_eval} under D1 (evaluation runs; {self.n_runs} runs per dataset in all)"
        )


# ----------------------------------------------------------------------------- validation


def _check_claim(claimed_epsilon: float, claimed_delta: float, confidence: float) -> None:
    if not (isinstance(claimed_epsilon, numbers.Real) and math.isfinite(claimed_epsilon)):
        raise PrivacyParameterError("claimed_epsilon must be a finite number > 0")
    if claimed_epsilon <= 0:
        raise PrivacyParameterError(f"claimed_epsilon must be > 0, got {claimed_epsilon}")
    if not isinstance(claimed_delta, numbers.Real) or not 0.0 <= claimed_delta < 1.0:
        raise PrivacyParameterError(f"claimed_delta must be in [0, 1), got {claimed_delta}")
    if not isinstance(confidence, numbers.Real) or not 0.0 < confidence < 1.0:
        raise ModelError(f"confidence must be in (0, 1), e.g. 0.95; got {confidence}")


def _split_sizes(n_runs: int, selection_fraction: float) -> tuple[int, int]:
    if not isinstance(selection_fraction, numbers.Real) or not 0.0 < selection_fraction < 1.0:
        raise ModelError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    n_sel = int(round(selection_fraction * n_runs))
    n_eval = n_runs - n_sel
    if n_sel < _MIN_PART or n_eval < _MIN_PART:
        raise ModelError(
            f"selection_fraction={selection_fraction} splits {n_runs} runs into {n_sel} selection "
            f"and {n_eval} evaluation runs; each part needs at least {_MIN_PART}: "
            "use more runs or a fraction nearer 0.5"
        )
    return n_sel, n_eval


def _check_n_runs(n_runs: object) -> int:
    if isinstance(n_runs, bool) or not isinstance(n_runs, (int, np.integer)):
        raise ModelError(f"n_runs must be an integer, got {type(n_runs).__name__}")
    if n_runs < _MIN_RUNS:
        raise ModelError(f"n_runs must be at least {_MIN_RUNS} per dataset, got {n_runs}")
    return int(n_runs)


def _as_outputs(out: object, name: str) -> np.ndarray:
    """Return outputs as ``(runs,)`` (scalars) or ``(runs, dim)`` (vectors), float64."""
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(
            f"{name} must be numeric: one scalar or one 1-D vector of equal length per run"
        ) from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim not in (1, 2):
        raise ModelError(
            f"{name} must have shape (runs,) or (runs, dim), got shape {arr.shape}; "
            "reduce matrix outputs to vectors or pass a statistic"
        )
    return arr


# ----------------------------------------------------------------------------- statistics


def _apply_statistic(statistic: Statistic, out: np.ndarray, name: str) -> np.ndarray:
    s = np.asarray(statistic(out), dtype=np.float64)
    if s.shape != (out.shape[0],):
        raise ModelError(
            f"statistic must return one scalar per run, shape ({out.shape[0]},); "
            f"got shape {s.shape} for {name}"
        )
    return s


def _statistics(
    out0: np.ndarray, out1: np.ndarray, n_sel: int, statistic: Statistic | None
) -> tuple[np.ndarray, np.ndarray]:
    if statistic is not None:
        s0 = _apply_statistic(statistic, out0, "D0")
        s1 = _apply_statistic(statistic, out1, "D1")
    elif out0.ndim == 1:
        s0, s1 = out0, out1
    else:
        # Project onto the difference of the means, estimated on the selection runs
        # only: the evaluation runs never influence the statistic.
        direction = out1[:n_sel].mean(axis=0) - out0[:n_sel].mean(axis=0)
        s0, s1 = out0 @ direction, out1 @ direction
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ModelError(
            "the audit statistic has NaN or inf values; map outputs to finite scalars "
            "with the statistic argument"
        )
    return s0, s1


# ----------------------------------------------------------------------------- bounds


def _cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper–Pearson lower bound at level ``1 - alpha``."""
    return 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def _cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound at level ``1 - alpha``."""
    return 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def _epsilon_lower(k_num: int, k_den: int, n: int, delta: float, confidence: float) -> float:
    alpha = 1.0 - math.sqrt(confidence)  # two independent bounds, jointly at `confidence`
    num = _cp_lower(k_num, n, alpha) - delta
    den = _cp_upper(k_den, n, alpha)
    if num <= 0.0:
        return 0.0
    return max(0.0, math.log(num / den))


def _hits(sorted_s: np.ndarray, thresholds: np.ndarray, direction: str) -> np.ndarray:
    if direction == ">":
        return sorted_s.size - np.searchsorted(sorted_s, thresholds, side="right")
    return np.searchsorted(sorted_s, thresholds, side="left")


def _count(s: np.ndarray, threshold: float, direction: str) -> int:
    return int(np.count_nonzero(s > threshold if direction == ">" else s < threshold))


def _predicted_bounds(
    hits_num: np.ndarray,
    hits_den: np.ndarray,
    n_sel: int,
    n_eval: int,
    delta: float,
    confidence: float,
) -> np.ndarray:
    """Vectorised Clopper–Pearson ε bounds, with counts rescaled from ``n_sel`` to ``n_eval``."""
    alpha = 1.0 - math.sqrt(confidence)
    k_num = hits_num * (n_eval / n_sel)
    k_den = hits_den * (n_eval / n_sel)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(
            k_num > 0, stats.beta.ppf(alpha, np.maximum(k_num, 1e-12), n_eval - k_num + 1), 0.0
        )
        upper = np.where(
            k_den < n_eval,
            stats.beta.ppf(1.0 - alpha, k_den + 1, np.maximum(n_eval - k_den, 1e-12)),
            1.0,
        )
        num = lower - delta
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / upper), -math.inf)


def _select_event(
    s0: np.ndarray, s1: np.ndarray, n_eval: int, delta: float, confidence: float
) -> tuple[float, int, str]:
    """Choose (threshold, numerator dataset, direction) on the selection runs.

    Candidate thresholds are ``_N_QUANTILES`` empirical quantiles of the pooled
    selection statistics, in both directions and both orientations.  Each
    candidate is scored by the Clopper–Pearson ε bound it would get on
    ``n_eval`` evaluation runs if the selection frequencies were the true
    probabilities, at the stricter level ``max(confidence, 0.999)``.  This
    penalises thin tail cells, where raw frequency ratios are noisiest (and
    needs no pseudo-count: an empty cell gives a finite bound).  Ties go to
    the first candidate, so the choice is deterministic.
    """
    pooled = np.concatenate([s0, s1])
    levels = np.arange(1, _N_QUANTILES + 1) / (_N_QUANTILES + 1)
    thresholds = np.unique(np.quantile(pooled, levels))
    n_sel = s0.size
    level = max(confidence, _SELECTION_CONFIDENCE)
    sorted_s = (np.sort(s0), np.sort(s1))
    best = (-math.inf, float(thresholds[0]), 0, ">")
    for num, direction in _ORIENTATIONS:
        hits_num = _hits(sorted_s[num], thresholds, direction)
        hits_den = _hits(sorted_s[1 - num], thresholds, direction)
        score = _predicted_bounds(hits_num, hits_den, n_sel, n_eval, delta, level)
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), float(thresholds[i]), num, direction)
    return best[1], best[2], best[3]


# ----------------------------------------------------------------------------- public API


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    confidence: float = 0.95,
    selection_fraction: float = 0.5,
    statistic: Statistic | None = None,
) -> AuditResult:
    """Audit a privacy claim from precomputed mechanism outputs.

    Use this when a mechanism can produce many runs in one vectorised call.

    Parameters
    ----------
    out0, out1 : numpy.ndarray
        Outputs of independent runs on ``D0`` and on ``D1``, shape ``(runs,)``
        for scalar outputs or ``(runs, dim)`` for vector outputs; both with the
        same shape.  Rows must be independent and identically distributed (not
        sorted): the first ``round(selection_fraction * runs)`` rows are the
        selection runs, the rest the evaluation runs.
    claimed_epsilon : float
        The ε the mechanism claims (> 0).
    claimed_delta : float, default 0.0
        The δ the mechanism claims, in [0, 1).
    confidence : float, default 0.95
        Confidence level of the lower bound, in (0, 1).
    selection_fraction : float, default 0.5
        Fraction of the runs used to choose the event; each part needs at
        least 10 runs.
    statistic : callable, optional
        Maps an array of outputs (runs × dim, or runs) to one scalar per run.
        It must act row by row (a run's scalar may depend only on that run's
        output) and must not be fitted to these outputs.  It is called once
        on ``out0`` and once on ``out1``.  By default scalar outputs are used
        as they are, and vector outputs are projected onto
        ``mean(D1 outputs) − mean(D0 outputs)`` computed on the selection
        runs only.

    Returns
    -------
    AuditResult
        The lower bound on ε and the event and counts it rests on.

    Raises
    ------
    PrivacyParameterError
        If ``claimed_epsilon`` is not > 0 or ``claimed_delta`` not in [0, 1).
    ModelError
        If the outputs have the wrong shape, there are fewer than 20 runs, the
        confidence or selection fraction is out of range, or the statistic
        does not return one finite scalar per run.
    """
    _check_claim(claimed_epsilon, claimed_delta, confidence)
    a0 = _as_outputs(out0, "out0")
    a1 = _as_outputs(out1, "out1")
    if a0.shape != a1.shape:
        raise ModelError(
            f"out0 and out1 must have the same shape (equal runs per dataset), got {a0.shape} "
            f"and {a1.shape}"
        )
    n_runs = _check_n_runs(a0.shape[0])
    n_sel, n_eval = _split_sizes(n_runs, selection_fraction)
    s0, s1 = _statistics(a0, a1, n_sel, statistic)

    threshold, num, direction = _select_event(
        s0[:n_sel], s1[:n_sel], n_eval, float(claimed_delta), float(confidence)
    )
    k0 = _count(s0[n_sel:], threshold, direction)
    k1 = _count(s1[n_sel:], threshold, direction)
    k_num, k_den = (k0, k1) if num == 0 else (k1, k0)
    eps = _epsilon_lower(k_num, k_den, n_eval, float(claimed_delta), float(confidence))
    return AuditResult(
        epsilon_lower=eps,
        claimed_epsilon=float(claimed_epsilon),
        claimed_delta=float(claimed_delta),
        confidence=float(confidence),
        n_runs=n_runs,
        threshold=threshold,
        orientation=f"D{num}: s {direction} t",
        counts=(k0, k1, n_eval),
    )


def _distinct_seeds(seed: int, count: int) -> list[int]:
    """``count`` distinct 32-bit seeds derived deterministically from ``seed``."""
    ss = np.random.SeedSequence(seed)
    m = count
    while True:
        raw = ss.generate_state(m, dtype=np.uint32)  # prefix-stable in m
        _, first = np.unique(raw, return_index=True)
        if first.size >= count:
            return [int(raw[i]) for i in np.sort(first)[:count]]
        m += count - first.size + 16


def _execute(
    run: Callable[[Any, int], Any], tasks: Sequence[tuple[Any, int]], n_jobs: int
) -> list[Any]:
    if n_jobs == 1:
        return [run(dataset, s) for dataset, s in tasks]
    from joblib import Parallel, delayed  # imported only when asked for parallel runs

    return list(Parallel(n_jobs=n_jobs, backend="loky")(delayed(run)(d, s) for d, s in tasks))


def _stack(outputs: Sequence[Any], name: str) -> np.ndarray:
    arrays = []
    for o in outputs:
        try:
            arrays.append(np.asarray(o, dtype=np.float64))
        except (TypeError, ValueError):
            raise ModelError(
                f"run outputs on {name} must be numeric scalars or 1-D arrays"
            ) from None
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ModelError(
            f"run outputs on {name} must all have the same shape, got shapes {sorted(shapes)}"
        )
    (shape,) = shapes
    if len(shape) > 1:
        raise ModelError(
            f"run outputs must be scalars or 1-D arrays, got shape {shape}; flatten them in run"
        )
    return np.stack(arrays)


def audit(
    run: Callable[[Any, int], Any],
    d0: Any,
    d1: Any,
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    n_runs: int = 1000,
    statistic: Statistic | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    n_jobs: int = 1,
    selection_fraction: float = 0.5,
) -> AuditResult:
    """Audit a mechanism's (ε, δ) claim on a neighbouring pair of inputs.

    Runs ``run(d0, seed_i)`` and ``run(d1, seed_j)`` ``n_runs`` times each with
    ``2 * n_runs`` distinct seeds and analyses the outputs with
    :func:`audit_outputs`: the event is chosen on the selection runs and the
    Clopper–Pearson bound is computed, for that single event, on the
    evaluation runs (so no multiple-testing correction is applied).

    Parameters
    ----------
    run : callable
        ``run(dataset, seed) -> output`` runs the mechanism once on ``dataset``
        with the integer seed ``seed`` (in ``[0, 2**32)``).  The output is a
        scalar or a 1-D array of fixed length.  With ``n_jobs != 1`` it must
        be picklable by cloudpickle.
    d0, d1 : Any
        The neighbouring inputs, passed to ``run`` unchanged.
    claimed_epsilon : float
        The ε the mechanism claims (> 0).
    claimed_delta : float, default 0.0
        The δ the mechanism claims, in [0, 1).
    n_runs : int, default 1000
        Runs per dataset (selection plus evaluation), at least 20.
    statistic : callable, optional
        Maps stacked outputs (runs × dim) to one scalar per run; see
        :func:`audit_outputs` for the default.
    confidence : float, default 0.95
        Confidence level of the lower bound, in (0, 1).
    seed : int, default 0
        Non-negative root seed; every run gets its own seed derived from it
        with :class:`numpy.random.SeedSequence`, and no seed is shared between
        runs (in particular not between ``D0`` and ``D1`` runs).
    n_jobs : int, default 1
        Number of worker processes (joblib, loky backend); 1 runs in this
        process without importing joblib, negative values follow joblib
        (``-1`` = all cores).  Results do not depend on ``n_jobs``.
    selection_fraction : float, default 0.5
        Fraction of the runs used to choose the event.

    Returns
    -------
    AuditResult
        The lower bound on ε and the event and counts it rests on.

    Raises
    ------
    PrivacyParameterError
        If ``claimed_epsilon`` is not > 0 or ``claimed_delta`` not in [0, 1).
    ModelError
        If ``n_runs`` < 20, ``confidence`` or ``selection_fraction`` is out of
        range, ``seed`` or ``n_jobs`` is invalid, or the outputs are not
        scalars or equal-length 1-D arrays.

    Examples
    --------
    >>> import numpy as np
    >>> def laplace_count(data, seed):
    ...     return sum(data) + np.random.default_rng(seed).laplace(scale=1.0)
    >>> result = audit(laplace_count, [1, 0, 1], [1, 1, 1], claimed_epsilon=1.0, n_runs=200)
    >>> result.violates
    False
    """
    _check_claim(claimed_epsilon, claimed_delta, confidence)
    n = _check_n_runs(n_runs)
    _split_sizes(n, selection_fraction)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ModelError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ModelError(f"n_jobs must be a non-zero integer (1 = no parallelism), got {n_jobs!r}")
    if not callable(run):
        raise ModelError("run must be a callable run(dataset, seed) -> output")

    seeds = _distinct_seeds(int(seed), 2 * n)
    tasks = [(d0, s) for s in seeds[:n]] + [(d1, s) for s in seeds[n:]]
    outputs = _execute(run, tasks, int(n_jobs))
    out0 = _stack(outputs[:n], "D0")
    out1 = _stack(outputs[n:], "D1")
    if out0.shape != out1.shape:
        raise ModelError(
            f"run outputs on D0 and D1 differ in shape: {out0.shape[1:]} and {out1.shape[1:]}"
        )
    return audit_outputs(
        out0,
        out1,
        claimed_epsilon=claimed_epsilon,
        claimed_delta=claimed_delta,
        confidence=confidence,
        selection_fraction=selection_fraction,
        statistic=statistic,
    )
