"""Local search on the grouped per-point problem: a cheap incumbent for the grouped oracle.

Within one oracle call (one η), a good feasible point found early lets every per-point MIP
of :mod:`dpopt.backends.highs_grouped` run with a tight objective cutoff, which is what
makes the exact search fast.  This module only *proposes* points; the oracle's answer is
still the proven minimum, so the search never changes what is released, only how fast the
proof finishes.  Nothing here is carried from one oracle call to another.
"""

from __future__ import annotations

import numpy as np

from dpopt.compile.mip_grouped import GroupedProgram

#: improve by single-coordinate moves, then by pairs of coordinates while |C|·levels ≤ this
PAIR_MOVE_LIMIT = 400
#: strict improvement needed to accept a move
IMPROVEMENT = 1e-9


class GroupedObjective:
    """The per-point objective over k_C at one enumerated k_S, from the MIP's column costs."""

    def __init__(self, prog: GroupedProgram, costs: np.ndarray, z_upper: np.ndarray, const: float,
                 t_s: int) -> None:
        self.prog = prog
        m = prog.levels.size
        self.ucost = costs[: prog.n_u].reshape(prog.grouped.size, m)
        self.table = costs[prog.n_u: prog.n_u + prog.n_v]
        zcost = costs[prog.n_u + prog.n_v:]
        self.zfull = np.full(prog.tmax + 1, np.inf)
        ok = z_upper > 0
        self.zfull[prog.t_values[ok]] = zcost[ok]
        self.const = float(const)
        self.t_s = int(t_s)

    def values(self, K: np.ndarray) -> np.ndarray:
        """The objective at each row of ``K`` (candidates k_C); inf outside the domain."""
        p = self.prog
        K = np.atleast_2d(K).astype(np.int64)
        klow = int(p.levels[0])
        out = np.full(K.shape[0], self.const)
        if p.grouped.size:
            out += self.ucost[np.arange(p.grouped.size)[None, :], K - klow].sum(axis=1)
        t = (K * K).sum(axis=1)
        ok = t <= p.tmax
        out[ok] += self.zfull[t[ok]]
        out[~ok] = np.inf
        score = K @ p.patterns.T  # (m, G)
        inside = np.all((score >= p.cmin) & (score <= p.cmax), axis=1)
        idx = p.offsets[:-1][None, :] + np.clip(score, p.cmin, p.cmax) - p.cmin[None, :]
        out += self.table[idx].sum(axis=1)
        out[~inside] = np.inf
        return out


def repair(prog: GroupedProgram, k_c: np.ndarray, t_s: int) -> np.ndarray:
    """Move coordinates of ``k_c`` towards 0 until ‖k_S‖² + ‖k_C‖² ≤ tmax."""
    k = np.asarray(k_c, dtype=np.int64).copy()
    lo, hi = int(prog.levels[0]), int(prog.levels[-1])
    while k.size and int(k @ k) + t_s > prog.tmax:
        j = int(np.argmax(np.abs(k)))
        if k[j] == 0:
            break
        step = -int(np.sign(k[j]))
        if not lo <= k[j] + step <= hi:
            break
        k[j] += step
    return k


def local_search(objective: GroupedObjective, start: np.ndarray, *, max_sweeps: int = 200) -> tuple[np.ndarray, float]:
    """Best-improvement descent from ``start`` by one-coordinate, then two-coordinate moves.

    Returns
    -------
    (k_C, value)
        A local minimum and its objective (inf if no feasible point was reached).
    """
    prog = objective.prog
    levels = prog.levels
    nc = prog.grouped.size
    k = np.asarray(start, dtype=np.int64).copy()
    f = float(objective.values(k[None])[0])
    if nc == 0:
        return k, f
    singles = [(j, v) for j in range(nc) for v in levels]
    for _ in range(max_sweeps):
        K = np.repeat(k[None], len(singles), axis=0)
        for r, (j, v) in enumerate(singles):
            K[r, j] = v
        F = objective.values(K)
        i = int(np.argmin(F))
        if F[i] < f - IMPROVEMENT:
            k, f = K[i].copy(), float(F[i])
            continue
        if nc * levels.size > PAIR_MOVE_LIMIT:
            break
        moved = _best_pair_move(objective, k, f)
        if moved is None:
            break
        k, f = moved
    return k, f


def _best_pair_move(objective: GroupedObjective, k: np.ndarray, f: float) -> tuple[np.ndarray, float] | None:
    levels = objective.prog.levels
    nc, m = k.size, levels.size
    best: tuple[np.ndarray, float] | None = None
    v1, v2 = np.meshgrid(levels, levels, indexing="ij")
    v1, v2 = v1.reshape(-1), v2.reshape(-1)
    for j1 in range(nc):
        for j2 in range(j1 + 1, nc):
            K = np.repeat(k[None], m * m, axis=0)
            K[:, j1], K[:, j2] = v1, v2
            F = objective.values(K)
            i = int(np.argmin(F))
            if F[i] < (f if best is None else best[1]) - IMPROVEMENT:
                best = (K[i].copy(), float(F[i]))
    return best
