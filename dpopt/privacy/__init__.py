"""The privacy layer: calibration, noise sampling, secure generators, the ledger.

Everything here handles public quantities only (privacy parameters, declared
sensitivities, noise scales); no function in this package sees data.  Names are imported on
first use (PEP 562): reading the ledger or the strength warnings loads no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

if TYPE_CHECKING:
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
    "gaussian_sigma_for_composition",
    "gumbel_noise",
    "l2_laplace_noise",
    "laplace_noise",
    "laplace_scale",
    "make_rng",
    "paper_sigma",
]

_EXPORTS = {
    "gaussian_sigma_for_composition": "dpopt.privacy.accountant",
    "paper_sigma": "dpopt.privacy.accountant",
    "check_epsilon_delta": "dpopt.privacy.calibration",
    "check_sensitivity": "dpopt.privacy.calibration",
    "gaussian_delta": "dpopt.privacy.calibration",
    "gaussian_sigma": "dpopt.privacy.calibration",
    "gaussian_sigma_analytic": "dpopt.privacy.calibration",
    "gaussian_sigma_classical": "dpopt.privacy.calibration",
    "laplace_scale": "dpopt.privacy.calibration",
    "Charge": "dpopt.privacy.ledger",
    "Ledger": "dpopt.privacy.ledger",
    "SeedInfo": "dpopt.privacy.rng",
    "make_rng": "dpopt.privacy.rng",
    "gaussian_noise": "dpopt.privacy.sampling",
    "gumbel_noise": "dpopt.privacy.sampling",
    "l2_laplace_noise": "dpopt.privacy.sampling",
    "laplace_noise": "dpopt.privacy.sampling",
    "SQLiteLedger": "dpopt.privacy.sqlite_ledger",
    "StoredCharge": "dpopt.privacy.sqlite_ledger",
}

__getattr__, __dir__ = attach(__name__, _EXPORTS)
