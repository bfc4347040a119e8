"""The modeling layer: data, variables, losses, sets, regularizers, problems.

It never imports a solver package.  The package re-exports nothing: users read its names from
the public namespaces (``dpopt``, ``dpopt.sets``, ``dpopt.losses``, ``dpopt.submodular``), and
dpopt's own code imports each from its defining module (``dpopt.modeling.balls``), so importing
one module of the layer does not load the others.
"""
