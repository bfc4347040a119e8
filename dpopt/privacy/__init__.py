"""The privacy layer: calibration, noise sampling, secure generators, the ledger.

Everything here handles public quantities only (privacy parameters, declared
sensitivities, noise scales); no function in this package sees data.
"""

from __future__ import annotations

from dpopt.privacy.accountant import gaussian_sigma_for_composition, paper_sigma
from dpopt.privacy.calibration import (
    check_epsilon_delta,
    check_sensitivity,
    gaussian_delta,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    laplace_scale,
)
from dpopt.privacy.ledger import Charge, Ledger
from dpopt.privacy.rng import SeedInfo, make_rng
from dpopt.privacy.sampling import gaussian_noise, gumbel_noise, l2_laplace_noise, laplace_noise
from dpopt.privacy.sqlite_ledger import SQLiteLedger, StoredCharge

__all__ = [
    "Charge",
    "Ledger",
    "SQLiteLedger",
    "SeedInfo",
    "StoredCharge",
    "check_epsilon_delta",
    "check_sensitivity",
    "gaussian_delta",
    "gaussian_noise",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "gumbel_noise",
    "l2_laplace_noise",
    "laplace_noise",
    "laplace_scale",
    "make_rng",
]
__all__ += ["gaussian_sigma_for_composition", "paper_sigma"]
