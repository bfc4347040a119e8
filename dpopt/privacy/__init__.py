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
    from dpopt.privacy.exact import ExactSampler
    from dpopt.privacy.grid import GridNoise, gaussian_on_grid, grid_step, laplace_on_grid, on_grid
    from dpopt.privacy.ledger import Charge, Ledger
    from dpopt.privacy.rng import SeedInfo, make_rng
    from dpopt.privacy.sampling import gaussian_noise, gumbel_noise, l2_laplace_noise, laplace_noise
    from dpopt.privacy.sqlite_ledger import SQLiteLedger, StoredCharge
    from dpopt.privacy.zcdp import zcdp_delta, zcdp_rho

__all__ = [
    "Charge",
    "ExactSampler",
    "GridNoise",
    "Ledger",
    "SQLiteLedger",
    "SeedInfo",
    "StoredCharge",
    "check_epsilon_delta",
    "check_sensitivity",
    "gaussian_delta",
    "gaussian_noise",
    "gaussian_on_grid",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "gaussian_sigma_for_composition",
    "grid_step",
    "gumbel_noise",
    "l2_laplace_noise",
    "laplace_noise",
    "laplace_on_grid",
    "laplace_scale",
    "make_rng",
    "on_grid",
    "paper_sigma",
    "zcdp_delta",
    "zcdp_rho",
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
    "ExactSampler": "dpopt.privacy.exact",
    "GridNoise": "dpopt.privacy.grid",
    "gaussian_on_grid": "dpopt.privacy.grid",
    "grid_step": "dpopt.privacy.grid",
    "laplace_on_grid": "dpopt.privacy.grid",
    "on_grid": "dpopt.privacy.grid",
    "zcdp_delta": "dpopt.privacy.zcdp",
    "zcdp_rho": "dpopt.privacy.zcdp",
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
