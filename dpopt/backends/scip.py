"""SCIP (branch and cut, via PySCIPOpt) through pyomo: a second exact MIP oracle.

A member of the pyomo MIP family (:mod:`dpopt.backends.pyomo_mip`, which holds the
compilation, the solve and the certification rule, the same as ``highs``): pyomo's
``pyomo.contrib.solver`` interface ``scip_direct`` (pyomo ≥ 6.10) on PySCIPOpt, whose
wheels bundle SCIP (``pip install 'dpopt[scip]'``), a fresh SCIP model per call.

SCIP options of every solve: ``limits/gap = 0`` and ``limits/absgap = 1e-12`` (pyomo's
``rel_gap``/``abs_gap``), feasibility tolerance ``numerics/feastol = 1e-9`` (the compiled
margins are integers ≥ 1, so this is far from blurring a unit margin), ``display/verblevel = 0``
(no solver output: pyomo captures it through a pipe that a full buffer can deadlock),
``randomization/randomseedshift = options.seed`` (a fixed constant), ``max_iterations`` →
``limits/nodes`` (a deterministic work limit), ``time_limit`` → ``limits/time``, threads →
``lp/threads``, plus ``options.extra`` as raw SCIP parameters (``"limits/nodes"`` style
names).  Runs to completion unless a limit is set.

pyomo hands SCIP the model's mutable noise parameters as fixed variables and the objective
through an epigraph constraint; SCIP's presolve removes both, and the certificate reads
SCIP's own primal and dual bounds (``getObjVal``, ``getDualbound``) and re-checks the point
in exact arithmetic, so nothing is taken on trust.
"""

from __future__ import annotations

from typing import Any

from dpopt.backends.options import check_scip
from dpopt.backends.pyomo_mip import PyomoMipBackend


class ScipBackend(PyomoMipBackend):
    """Exact MIP oracle for :class:`DiscreteProblem` (0/1 loss over an IntegerGrid) with SCIP."""

    name = "scip"
    module = "pyscipopt"
    distribution = "pyscipopt"
    description = "SCIP branch-and-cut MIP solver (PySCIPOpt via pyomo): exact OPDisc/RSPM/OPSamp oracle"
    pyomo_solver = "scip_direct"
    verifier_rank = 0  # the first verifier of another engine's big-M answers (dpopt.backends.verify)
    interface_module = "pyomo.contrib.solver.solvers.scip.scip_direct"
    label = "SCIP"
    #: verblevel 0: SCIP writes nothing.  pyomo's scip_direct captures SCIP's output through a pipe
    #: read by a thread of this process while SCIP holds the interpreter lock; a full pipe
    #: deadlocked both (seen on big-M Adult models), so there must be no output to capture.
    base_options = {"numerics/feastol": 1e-9, "display/verblevel": 0}
    seed_option = "randomization/randomseedshift"
    node_limit_option = "limits/nodes"
    abs_gap_option = "limits/absgap"

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """SCIP's own parameter list, set on an empty model (:func:`dpopt.backends.options.check_scip`)."""
        check_scip(self.name, options, where)
