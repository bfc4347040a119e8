"""Warnings for privacy parameters that are valid but protect no one.

Two public facts make a guarantee empty although (ε, δ) is in range:

- **ε above** :data:`LARGE_EPSILON` (10): e^ε > 22,000 bounds no change in any
  probability an analyst would notice.
- **δ ≥ 1/n**: the mechanism that publishes one uniformly chosen row verbatim is
  (0, 1/n)-DP (Dwork & Roth 2014, Sec. 2.3: δ "much smaller than 1/n" is needed for the
  definition to mean anything), so such a δ allows releasing a whole record.

Both read only the parameters and n, which is public under replace-one neighbours.  They
warn (:class:`~dpopt.errors.WeakGuaranteeWarning`) and never refuse: the user may want such a
run on purpose; the CLI prints the same sentences as ``warning:`` lines.
"""

from __future__ import annotations

import warnings

from dpopt.errors import WeakGuaranteeWarning

__all__ = ["LARGE_EPSILON", "warn_weak_guarantee", "weak_guarantee_reasons"]

#: above this ε a guarantee bounds nothing an analyst would notice
LARGE_EPSILON = 10.0


def weak_guarantee_reasons(epsilon: float, delta: float, n: int | None = None) -> list[str]:
    """Why (ε, δ) on ``n`` rows protects no one, one sentence each (empty: nothing to say).

    Parameters
    ----------
    epsilon, delta : float
        A valid privacy pair (checked elsewhere).
    n : int, optional
        The number of rows (public under replace-one); None skips the δ check.
    """
    reasons = []
    if epsilon > LARGE_EPSILON:
        text = f"{epsilon:g}".replace("e+0", "e").replace("e+", "e")
        reasons.append(f"ε = {text} gives no meaningful privacy (above {LARGE_EPSILON:g}, e^ε bounds "
                       "nothing an analyst would notice); running anyway")
    if n is not None and n > 0 and delta >= 1.0 / n:
        reasons.append(f"δ = {delta:g} is at least 1/n = 1/{n}: a mechanism that publishes one random row "
                       f"verbatim satisfies (0, 1/n)-DP, so this δ protects no record; choose δ well below "
                       f"1/n (e.g. 1/n² = {1.0 / n**2:.3g}); running anyway")
    return reasons


def warn_weak_guarantee(epsilon: float, delta: float, n: int | None = None, *, stacklevel: int = 3) -> None:
    """Issue a :class:`~dpopt.errors.WeakGuaranteeWarning` per reason of :func:`weak_guarantee_reasons`."""
    for reason in weak_guarantee_reasons(epsilon, delta, n):
        warnings.warn(reason, WeakGuaranteeWarning, stacklevel=stacklevel)
