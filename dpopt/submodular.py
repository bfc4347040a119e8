"""Submodular set functions and the sparsity-inducing norms they define (kumar-deisenroth-2019).

A :class:`SetFunction` F on {0, ..., p−1} (``Cardinality`` gives ℓ1, ``GroupCoverage``
group norms, ``ChainCut`` a total-variation-like norm, ``CallableSetFunction`` one of one's
own) defines the norm Ω∞ (its Lovász extension of |θ|): :class:`SubmodularNorm` is that
norm as a regularizer and :class:`SubmodularNormBall` its unit ball as a constraint set
(also in :mod:`dpopt.sets`).

>>> import dpopt as dp
>>> F = dp.submodular.GroupCoverage(6, [[0, 1], [2, 3, 4], [5]], [1.0, 1.5, 1.0])  # doctest: +SKIP
>>> problem = dp.Problem(loss, regularizer=dp.submodular.SubmodularNorm(theta, F, 1e-3))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "CallableSetFunction": "dpopt.modeling.submodular",
    "Cardinality": "dpopt.modeling.submodular",
    "ChainCut": "dpopt.modeling.submodular",
    "ConcaveCardinality": "dpopt.modeling.submodular",
    "GroupCoverage": "dpopt.modeling.submodular",
    "Indicator": "dpopt.modeling.submodular",
    "SetFunction": "dpopt.modeling.submodular",
    "SubmodularNorm": "dpopt.modeling.submodular_norms",
    "SubmodularNormBall": "dpopt.modeling.submodular_norms",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.modeling.submodular import CallableSetFunction as CallableSetFunction
    from dpopt.modeling.submodular import Cardinality as Cardinality
    from dpopt.modeling.submodular import ChainCut as ChainCut
    from dpopt.modeling.submodular import ConcaveCardinality as ConcaveCardinality
    from dpopt.modeling.submodular import GroupCoverage as GroupCoverage
    from dpopt.modeling.submodular import Indicator as Indicator
    from dpopt.modeling.submodular import SetFunction as SetFunction
    from dpopt.modeling.submodular_norms import SubmodularNorm as SubmodularNorm
    from dpopt.modeling.submodular_norms import SubmodularNormBall as SubmodularNormBall
