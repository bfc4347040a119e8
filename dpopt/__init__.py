"""dpopt: differentially private optimization on modeling languages.

>>> import dpopt as dp
>>> data = dp.Dataset(X, y, x_bound=1.0, x_norm=2)               # doctest: +SKIP
>>> theta = dp.Variable(data.n_features)                           # doctest: +SKIP
>>> problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 10.0))  # doctest: +SKIP
>>> release = dp.ObjectivePerturbation(epsilon=1.0, delta=1e-6).run(problem, solver="clarabel")  # doctest: +SKIP
"""

from dpopt import errors
from dpopt.backends.registry import get as get_backend
from dpopt.backends.registry import names as backend_names
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.mechanisms import (
    RSPM,
    GaussianFrankWolfe,
    Mechanism,
    ObjectivePerturbation,
    OPDisc,
    OPSamp,
    OutputPerturbation,
    PolytopeFrankWolfe,
    PrivateMirrorDescent,
    Release,
    default_ledger,
)
from dpopt.modeling import *  # noqa: F403
from dpopt.modeling import __all__ as _modeling_all
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.zero_one import ZeroOneLoss
from dpopt.privacy.ledger import Ledger

__version__ = "0.1.0"  # the one version source: pyproject.toml reads it (tool.setuptools.dynamic)

__all__ = [
    *_modeling_all, "DiscreteProblem", "IntegerGrid", "Ledger", "ZeroOneLoss", "Mechanism", "OPDisc", "OPSamp", "ObjectivePerturbation", "OracleResult", "OracleStatus",
    "OutputPerturbation", "RSPM", "Release", "SolveOptions", "backend_names", "default_ledger", "errors",
    "get_backend",
]
__all__ += ["PrivateMirrorDescent"]
__all__ += ["GaussianFrankWolfe", "PolytopeFrankWolfe"]
from dpopt.mechanisms import DualFrankWolfe, SubmodularOutputPerturbation  # noqa: E402

__all__ += ["DualFrankWolfe", "SubmodularOutputPerturbation"]
from dpopt.mechanisms.release import Diagnostics, OracleCall  # noqa: E402

__all__ += ["Diagnostics", "OracleCall"]
from dpopt.mechanisms import DPSGD, DPGradientDescent, PrivateSelection  # noqa: E402

__all__ += ["DPGradientDescent", "DPSGD", "PrivateSelection"]
from dpopt.privacy.sqlite_ledger import SQLiteLedger  # noqa: E402

__all__ += ["SQLiteLedger"]
from dpopt.progress import show_progress  # noqa: E402

__all__ += ["show_progress"]
