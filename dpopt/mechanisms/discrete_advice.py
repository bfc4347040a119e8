"""``mechanism="auto"`` for discrete problems: a mechanism chosen from public facts only.

The rule reads the declaration — the domain's size bound, n (public under replace-one), the loss's
range B, ε and δ — never a data value, so neighbouring tables get the same mechanism, and the rule
is stated with the choice (as ``DPLogisticRegression``'s ``mechanism_rule_``):

1. **The exponential mechanism** when the domain is enumerable: at most ``max_points`` points
   (:data:`dpopt.mechanisms.exponential.MAX_POINTS`) and points × the declared row groups
   (:meth:`RowLoss.declared_groups`) ≤ :data:`EM_WORK` exact evaluations.  It samples the exact softmax of the loss ([MT07]); its expected excess loss is at
   most (2B/ε)·ln|W| (+ a term decaying in the tail), the benchmark the oracle mechanisms are
   measured against in NRVW19, and it needs no solver.
2. **OPDisc** (NRVW19 Alg. 1) when δ > 0: one certified oracle call.
3. **RSPM** (NRVW19 Alg. 3, Laplace separator weights) when δ = 0: pure ε-DP, one oracle call.

OPSamp is never chosen: its constants need n far beyond practical sizes before its averaged,
Laplace-noised output beats the others (NRVW19 Sec. 4; :mod:`dpopt.mechanisms.opsamp`).
"""

from __future__ import annotations

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.exponential import MAX_POINTS, ExponentialMechanism
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.rspm import RSPM
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.row_losses import RowLoss
from dpopt.privacy.ledger import Ledger

#: largest points × declared row groups the rule sends to the exponential mechanism (exact evaluations of row losses)
EM_WORK = 200_000_000


def domain_size_bound(problem: DiscreteProblem) -> int:
    """An upper bound on |W| from the declaration (the box, or its supports under a cardinality bound)."""
    dom = problem.domain
    if isinstance(dom, DiscreteDomain):
        return dom.box_count()
    return int((int(dom.khigh) - int(dom.klow) + 1) ** problem.dim)


def choose_discrete_mechanism(problem: DiscreteProblem, epsilon: float, delta: float = 0.0, *,
                              ledger: Ledger | None = None) -> tuple[Mechanism, str]:
    """The mechanism for ``problem`` at (ε, δ), and the public rule that chose it (module docstring).

    Raises
    ------
    MechanismError
        If ``problem`` is not a DiscreteProblem (nothing is charged).
    """
    if not isinstance(problem, DiscreteProblem):
        raise MechanismError(f"choose_discrete_mechanism needs a DiscreteProblem, got {type(problem).__name__}")
    size = domain_size_bound(problem)
    loss = problem.loss
    if (isinstance(loss, RowLoss) and loss.public_lattice and size <= MAX_POINTS
            and size * loss.declared_groups() <= EM_WORK):
        return (ExponentialMechanism(epsilon, ledger=ledger),
                f"auto: the domain has at most {size} points (≤ {MAX_POINTS}) and {size} × the declared row groups "
                f"≤ {EM_WORK}: the exponential mechanism samples the exact softmax of the loss, no oracle")
    if delta > 0:
        return (OPDisc(epsilon, delta, ledger=ledger),
                f"auto: the domain has up to {size} points, too many to enumerate; δ > 0: OPDisc, one certified "
                "oracle call")
    return (RSPM(epsilon, ledger=ledger),
            f"auto: the domain has up to {size} points, too many to enumerate; δ = 0: RSPM with Laplace "
            "separator weights (pure ε-DP), one certified oracle call")
