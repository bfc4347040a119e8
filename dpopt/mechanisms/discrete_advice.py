"""``mechanism="auto"`` for discrete problems: a mechanism chosen from public facts only.

The rule reads the declaration — the domain's size bound, n (public under replace-one), the loss's
range B, ε and δ — never a data value, so neighbouring tables get the same mechanism, and the rule
is stated with the choice (as ``DPLogisticRegression``'s ``mechanism_rule_``):

1. **The exponential mechanism** when the domain is enumerable: at most ``max_points`` points
   (:data:`dpopt.mechanisms.exponential.MAX_POINTS`) and points × the declared row groups
   (:meth:`RowLoss.declared_groups`) ≤ :data:`EM_WORK` exact evaluations.  It samples the exact softmax of the loss ([MT07]); its expected excess loss is at
   most (2B/ε)·ln|W| (+ a term decaying in the tail), the benchmark the oracle mechanisms are
   measured against in NRVW19, and it needs no solver.
2. When δ > 0, **OPDisc** (NRVW19 Alg. 1) or **RSPM** (Alg. 3), whichever perturbs the ranking of
   two decisions one grid step apart less (:func:`neighbour_spreads`): one certified oracle call.
3. **RSPM** with Laplace separator weights when δ = 0: pure ε-DP, one oracle call.

OPSamp is never chosen: its constants need n far beyond practical sizes before its averaged,
Laplace-noised output beats the others (NRVW19 Sec. 4; :mod:`dpopt.mechanisms.opsamp`).
"""

from __future__ import annotations

from dpopt.backends.bruteforce import grid_points
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.exponential import MAX_POINTS, ExponentialMechanism
from dpopt.mechanisms.opdisc import OPDisc
from dpopt.mechanisms.opsamp import OPSamp
from dpopt.mechanisms.rspm import RSPM
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.row_losses import RowLoss
from dpopt.modeling.schema.suggest import did_you_mean
from dpopt.privacy.ledger import Ledger

#: the discrete mechanisms by the names model scripts and benchmarks use
DISCRETE_MECHANISMS = ("opdisc", "opsamp", "rspm", "exponential", "auto")

#: largest points × declared row groups the rule sends to the exponential mechanism (exact evaluations of row losses)
EM_WORK = 200_000_000


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
    size = grid_points(problem)  # a declared bound on |W| (the box, or its supports under a cardinality bound)
    loss = problem.loss
    if (isinstance(loss, RowLoss) and loss.public_lattice and size <= MAX_POINTS
            and size * loss.declared_groups() <= EM_WORK):
        return (ExponentialMechanism(epsilon, ledger=ledger),
                f"auto: the domain has at most {size} points (≤ {MAX_POINTS}) and {size} × the declared row groups "
                f"≤ {EM_WORK}: the exponential mechanism samples the exact softmax of the loss, no oracle")
    if delta <= 0:
        return (RSPM(epsilon, ledger=ledger),
                f"auto: the domain has up to {size} points, too many to enumerate; δ = 0: RSPM with Laplace "
                "separator weights (pure ε-DP), one certified oracle call")
    opdisc, rspm = OPDisc(epsilon, delta, ledger=ledger), RSPM(epsilon, delta, ledger=ledger)
    spread_o, spread_r = neighbour_spreads(problem, opdisc, rspm)
    why = (f"auto: the domain has up to {size} points, too many to enumerate; the noise between two decisions one "
           f"grid step apart has standard deviation {spread_o:.4g} under OPDisc and {spread_r:.4g} under RSPM")
    if spread_r < spread_o:
        return rspm, why + ": RSPM, one certified oracle call"
    return opdisc, why + ": OPDisc, one certified oracle call"


def neighbour_spreads(problem: DiscreteProblem, opdisc: OPDisc, rspm: RSPM) -> tuple[float, float]:
    """The standard deviation of the perturbation's difference between two decisions one step apart.

    Each oracle mechanism decides between close competitors by its noise: OPDisc's term
    ⟨η, π(w)⟩ differs between w and w ± τe_j by about σ·τ/D (π moves by τ/D; NRVW19 Sec. 3),
    RSPM's separator term by one separator weight (standard deviation √2·b for Laplace weights,
    σ for Gaussian ones).  The smaller spread perturbs the ranking of near-optimal decisions
    less.  Public: σ, b, τ and D come from the declarations and (ε, δ).  (On the decision models of
    ``dpopt bench discrete-models`` the rule picks what was measured better at n = 10,000: RSPM on
    the sparse scoring system, OPDisc on facility location.)
    """
    template = problem.with_kind("normalized")
    tau, D = float(problem.domain.step), float(problem.domain.bound(problem.dim))
    spread_o = opdisc.sigma(template) * tau / D
    law, scale = rspm.noise_law(problem.with_kind("levels"))
    spread_r = scale * (2.0**0.5 if law == "laplace" else 1.0)
    return spread_o, spread_r


def discrete_mechanism(name: str, problem: DiscreteProblem, epsilon: float, delta: float = 0.0, *,
                       calls: int | None = None, ledger: Ledger | None = None) -> Mechanism:
    """The discrete mechanism called ``name`` (:data:`DISCRETE_MECHANISMS`) at (ε, δ).

    ``"auto"`` is :func:`choose_discrete_mechanism`; ``calls`` is OPSamp's number of oracle calls;
    the exponential mechanism is pure ε-DP, a stronger guarantee than any δ asked for.

    Raises
    ------
    MechanismError
        For an unknown name (with the closest known ones), before anything is charged.
    """
    kind = str(name).lower()
    if kind == "auto":
        return choose_discrete_mechanism(problem, epsilon, delta, ledger=ledger)[0]
    if kind == "opdisc":
        return OPDisc(epsilon, delta, ledger=ledger)
    if kind == "opsamp":
        return OPSamp(epsilon, delta, calls=calls, ledger=ledger)
    if kind == "rspm":
        return RSPM(epsilon, delta, ledger=ledger)
    if kind == "exponential":
        return ExponentialMechanism(epsilon, ledger=ledger)
    raise MechanismError(f"unknown discrete mechanism {name!r}: use one of {', '.join(DISCRETE_MECHANISMS)}"
                         f"{did_you_mean(kind, DISCRETE_MECHANISMS)}")
