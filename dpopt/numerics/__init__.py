"""The numerics layer: the numerical routines between the declarations and the solvers.

:mod:`dpopt.modeling` declares a problem (data, schema, variables, losses, sets,
regularizers, perturbations); this package computes with those declarations without a
solver package: the a-priori accelerated proximal gradient fallback (:mod:`~dpopt.numerics.apg`),
proximal maps and optimality certificates (:mod:`~dpopt.numerics.prox`,
:mod:`~dpopt.numerics.certificates`), per-example gradient clipping
(:mod:`~dpopt.numerics.clipping`) and its Dask reductions (:mod:`~dpopt.numerics.distributed`),
mirror-descent potentials (:mod:`~dpopt.numerics.potentials`), the vertex scorers and gradient
oracles of Frank–Wolfe (:mod:`~dpopt.numerics.fw_oracles`) with the incremental LASSO gradients
(:mod:`~dpopt.numerics.lasso_fast`), and the dual-norm linear program and vertex enumeration of
submodular polyhedra (:mod:`~dpopt.numerics.submodular_lp`).

It imports :mod:`dpopt.modeling` and nothing above it (:mod:`dpopt.compile`,
:mod:`dpopt.backends`, :mod:`dpopt.mechanisms`); a routine that needs a solver (the q-norm
potential's weights) names it as a ``functools.singledispatch`` function that the higher layer
registers its algorithm with (:func:`~dpopt.numerics.potentials.vertex_weights`).  Nothing here knows about privacy: the mechanisms calibrate
and charge, these routines compute.
"""
