"""The privacy layer: calibration, noise sampling, secure generators, the ledger.

Everything here handles public quantities only (privacy parameters, declared
sensitivities, noise scales); no function in this package sees data.  Names are imported on
first use (PEP 562): reading the ledger or the strength warnings loads no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
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
    "Charge": "dpopt.privacy.ledger_store",
    "Ledger": "dpopt.privacy.ledger",
    "SeedInfo": "dpopt.privacy.rng",
    "make_rng": "dpopt.privacy.rng",
    "gaussian_noise": "dpopt.privacy.sampling",
    "gumbel_noise": "dpopt.privacy.sampling",
    "l2_laplace_noise": "dpopt.privacy.sampling",
    "laplace_noise": "dpopt.privacy.sampling",
    "SQLiteLedger": "dpopt.privacy.sqlite_ledger",
    "StoredCharge": "dpopt.privacy.sqlite_store",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.privacy.accountant import (
        gaussian_sigma_for_composition as gaussian_sigma_for_composition,
    )
    from dpopt.privacy.accountant import paper_sigma as paper_sigma
    from dpopt.privacy.calibration import check_epsilon_delta as check_epsilon_delta
    from dpopt.privacy.calibration import check_sensitivity as check_sensitivity
    from dpopt.privacy.calibration import gaussian_delta as gaussian_delta
    from dpopt.privacy.calibration import gaussian_sigma as gaussian_sigma
    from dpopt.privacy.calibration import gaussian_sigma_analytic as gaussian_sigma_analytic
    from dpopt.privacy.calibration import gaussian_sigma_classical as gaussian_sigma_classical
    from dpopt.privacy.calibration import laplace_scale as laplace_scale
    from dpopt.privacy.exact import ExactSampler as ExactSampler
    from dpopt.privacy.grid import GridNoise as GridNoise
    from dpopt.privacy.grid import gaussian_on_grid as gaussian_on_grid
    from dpopt.privacy.grid import grid_step as grid_step
    from dpopt.privacy.grid import laplace_on_grid as laplace_on_grid
    from dpopt.privacy.grid import on_grid as on_grid
    from dpopt.privacy.ledger import Ledger as Ledger
    from dpopt.privacy.ledger_store import Charge as Charge
    from dpopt.privacy.rng import SeedInfo as SeedInfo
    from dpopt.privacy.rng import make_rng as make_rng
    from dpopt.privacy.sampling import gaussian_noise as gaussian_noise
    from dpopt.privacy.sampling import gumbel_noise as gumbel_noise
    from dpopt.privacy.sampling import l2_laplace_noise as l2_laplace_noise
    from dpopt.privacy.sampling import laplace_noise as laplace_noise
    from dpopt.privacy.sqlite_ledger import SQLiteLedger as SQLiteLedger
    from dpopt.privacy.sqlite_store import StoredCharge as StoredCharge
    from dpopt.privacy.zcdp import zcdp_delta as zcdp_delta
    from dpopt.privacy.zcdp import zcdp_rho as zcdp_rho
