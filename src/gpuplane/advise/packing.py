"""Exact "fewest bins" for a demand vector and a small set of bin patterns.

The problem (a configuration integer program, as in cutting stock):

    minimise  sum(x_p)  subject to  sum_p x_p * c_p >= d,  x_p >= 0 integer,
              and, per group g with a cap, sum of x_p over g's patterns <= cap_g

where ``c_p`` is a pattern (what one bin can hold of each item type), ``d`` the demand and a
group is a bin type (a GPU model) with an optional count limit. Patterns must be downward
closed in meaning (any part of a pattern is itself packable), which holds for MIG mixes.

Method, exact by construction:

1. **Lower bound from LP duality.** The dual of the LP relaxation,
   ``max d.y - cap.v - u.w  s.t.  c_p.y - v_g(p) - w_p <= 1``, has the origin as a feasible
   point, so a one-phase simplex solves it. ANY dual-feasible point bounds the optimum from
   below; the float solution is turned into exact fractions and scaled until it is feasible
   in exact arithmetic, so the bound ``ceil(d.y - ...)`` never depends on rounding luck.
2. **Upper bounds** from rounding the primal LP solution (read off the optimal tableau):
   ``ceil(x*)`` and ``floor(x*)`` completed greedily or, when small, by dynamic programming.
3. **Branch and bound** on a fractional ``x_p`` (``x_p >= ceil`` commits that many bins,
   ``x_p <= floor`` adds an upper bound) until the bound meets the best solution.
4. **Dynamic programming** over residual demand vectors (memoised) once a subproblem's state
   space is small. Its answer ignores branching bounds, which is safe: it is an achievable
   solution no worse than anything in that subtree.

Proof of exactness in tests: hypothesis compares against brute force (tests/advise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

DP_STATE_LIMIT = 4000
"""Largest residual state space solved by dynamic programming instead of branching."""
DP_DEPTH_LIMIT = 300
"""Largest residual item count for dynamic programming (its recursion depth is at most this)."""

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Pattern:
    """What one bin of ``group`` can hold: ``counts[i]`` items of type ``i``."""

    group: int
    counts: tuple[int, ...]


@dataclass(slots=True)
class _Node:
    demand: tuple[int, ...]
    caps: tuple[int | None, ...]
    upper: dict[int, int] = field(default_factory=dict)
    used: tuple[int, ...] = ()


def _simplex_max(a: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """max c.z s.t. a z <= 1, z >= 0. Returns (z, row duals) or None when unbounded.

    Bland's rule: degenerate pivots are frequent on these 0/1-heavy matrices and Bland never
    cycles. Problems are tiny (tens of rows), so a dense tableau is the fastest option.
    """
    rows, cols = a.shape
    tab = np.zeros((rows + 1, cols + rows + 1))
    tab[:rows, :cols] = a
    tab[:rows, cols : cols + rows] = np.eye(rows)
    tab[:rows, -1] = 1.0
    tab[rows, :cols] = -c
    basis = list(range(cols, cols + rows))
    for _ in range(50 * (rows + cols) + 100):
        obj = tab[rows, :-1]
        entering = -1
        for j in range(cols + rows):
            if obj[j] < -_EPS:
                entering = j
                break
        if entering < 0:
            break
        column = tab[:rows, entering]
        positive = column > _EPS
        if not positive.any():
            return None
        ratios = np.full(rows, np.inf)
        ratios[positive] = tab[:rows, -1][positive] / column[positive]
        best = ratios.min()
        ties = np.flatnonzero(ratios <= best + _EPS)
        leave = min(ties, key=lambda r: basis[r])
        tab[leave] /= tab[leave, entering]
        pivot_row = tab[leave]
        factors = tab[:, entering].copy()
        factors[leave] = 0.0
        tab -= np.outer(factors, pivot_row)
        basis[leave] = entering
    z = np.zeros(cols)
    for r, b in enumerate(basis):
        if b < cols:
            z[b] = tab[r, -1]
    return z, tab[rows, cols : cols + rows].copy()


class _Solver:
    def __init__(self, patterns: Sequence[Pattern], dp_limit: int) -> None:
        self.patterns = list(patterns)
        self.dp_limit = dp_limit
        self.best_total = math.inf
        self.best: tuple[int, ...] | None = None
        self.memo: dict[tuple, tuple[float, int]] = {}

    # -- bounds -----------------------------------------------------------------------------
    def lp(self, node: _Node) -> tuple[int, np.ndarray] | None:
        """(exact lower bound, primal x*) of the node's LP relaxation; None if infeasible."""
        k = len(node.demand)
        capped = [g for g, cap in enumerate(node.caps) if cap is not None]
        bounded = sorted(node.upper)
        ncols = k + len(capped) + len(bounded)
        a = np.zeros((len(self.patterns), ncols))
        for p, pat in enumerate(self.patterns):
            a[p, :k] = pat.counts
            if pat.group in capped:
                a[p, k + capped.index(pat.group)] = -1.0
            if p in node.upper:
                a[p, k + len(capped) + bounded.index(p)] = -1.0
        cost = np.concatenate(
            [
                np.asarray(node.demand, dtype=float),
                -np.asarray([node.caps[g] for g in capped], dtype=float),
                -np.asarray([node.upper[p] for p in bounded], dtype=float),
            ]
        )
        solved = _simplex_max(a, cost)
        if solved is None:
            return None
        z, x = solved
        # Exact, verified dual bound: rationalise, clip, scale into feasibility.
        zq = [Fraction(float(v)).limit_denominator(1 << 20) if v > _EPS else Fraction(0) for v in z]
        worst = Fraction(1)
        for p in range(len(self.patterns)):
            lhs = sum(
                (Fraction(int(a[p, j])) * zq[j] for j in range(ncols) if zq[j] and a[p, j]), Fraction(0)
            )
            if lhs > worst:
                worst = lhs
        costq = [Fraction(int(v)) for v in cost]
        value = sum((cq * v for cq, v in zip(costq, zq, strict=True) if v), Fraction(0)) / worst
        return max(0, math.ceil(value)), np.maximum(x, 0.0)

    # -- upper bounds -----------------------------------------------------------------------
    def _covers(self, demand: tuple[int, ...], x: Sequence[int]) -> bool:
        for i, need in enumerate(demand):
            if need and sum(x[p] * pat.counts[i] for p, pat in enumerate(self.patterns) if x[p]) < need:
                return False
        return True

    def _within_caps(self, caps: tuple[int | None, ...], x: Sequence[int]) -> bool:
        used = [0] * len(caps)
        for p, n in enumerate(x):
            used[self.patterns[p].group] += n
        return all(cap is None or u <= cap for u, cap in zip(used, caps, strict=True))

    def _greedy(
        self, demand: tuple[int, ...], caps: tuple[int | None, ...], x: list[int]
    ) -> list[int] | None:
        """Complete ``x`` to cover ``demand``: each new bin takes the pattern covering most."""
        left = list(demand)
        for p, n in enumerate(x):
            if n:
                counts = self.patterns[p].counts
                left = [max(0, r - n * c) for r, c in zip(left, counts, strict=True)]
        room = list(caps)
        for p, n in enumerate(x):
            g = self.patterns[p].group
            spare = room[g]
            if spare is not None:
                room[g] = spare - n
        if any(r is not None and r < 0 for r in room):
            return None
        while any(left):
            best_p, best_gain = -1, 0
            for p, pat in enumerate(self.patterns):
                if room[pat.group] == 0:
                    continue
                gain = sum(min(c, r) for c, r in zip(pat.counts, left, strict=True))
                if gain > best_gain:
                    best_p, best_gain = p, gain
            if best_p < 0:
                return None
            x[best_p] += 1
            counts = self.patterns[best_p].counts
            left = [max(0, r - c) for r, c in zip(left, counts, strict=True)]
            g = self.patterns[best_p].group
            spare = room[g]
            if spare is not None:
                room[g] = spare - 1
        return x

    def _offer(self, node: _Node, x: Sequence[int] | None) -> None:
        if x is None:
            return
        total = sum(node.used) + sum(x)
        if total < self.best_total:
            self.best_total = total
            self.best = tuple(u + v for u, v in zip(node.used, x, strict=True))

    # -- dynamic programming ----------------------------------------------------------------
    def _dp_size(self, node: _Node) -> int:
        if sum(node.demand) > DP_DEPTH_LIMIT:
            return self.dp_limit + 1
        size = 1
        for d in node.demand:
            size *= d + 1
        for cap in node.caps:
            if cap is not None:
                size *= cap + 1
        return size

    def _dp(self, demand: tuple[int, ...], caps: tuple[int | None, ...]) -> float:
        """Fewest bins for ``demand`` under ``caps`` (inf if impossible); memoised."""
        if not any(demand):
            return 0
        key = (demand, caps)
        hit = self.memo.get(key)
        if hit is not None:
            return hit[0]
        best, choice = math.inf, -1
        seen: set[tuple] = set()
        for p, pat in enumerate(self.patterns):
            cap = caps[pat.group]
            if cap == 0:
                continue
            nxt = tuple(max(0, r - c) for r, c in zip(demand, pat.counts, strict=True))
            if nxt == demand:
                continue
            ncaps = caps if cap is None else (*caps[: pat.group], cap - 1, *caps[pat.group + 1 :])
            sig = (nxt, ncaps)
            if sig in seen:
                continue
            seen.add(sig)
            value = 1 + self._dp(nxt, ncaps)
            if value < best:
                best, choice = value, p
        self.memo[key] = (best, choice)
        return best

    def _dp_solution(self, demand: tuple[int, ...], caps: tuple[int | None, ...]) -> list[int] | None:
        if self._dp(demand, caps) == math.inf:
            return None
        x = [0] * len(self.patterns)
        while any(demand):
            _, p = self.memo[(demand, caps)]
            x[p] += 1
            pat = self.patterns[p]
            demand = tuple(max(0, r - c) for r, c in zip(demand, pat.counts, strict=True))
            cap = caps[pat.group]
            if cap is not None:
                caps = (*caps[: pat.group], cap - 1, *caps[pat.group + 1 :])
        return x

    # -- branch and bound -------------------------------------------------------------------
    def solve(self, demand: tuple[int, ...], caps: tuple[int | None, ...]) -> tuple[int, ...] | None:
        stack = [_Node(demand, caps, {}, (0,) * len(self.patterns))]
        while stack:
            node = stack.pop()
            base = sum(node.used)
            if base >= self.best_total:
                continue
            if not any(node.demand):
                self._offer(node, [0] * len(self.patterns))
                continue
            if self._dp_size(node) <= self.dp_limit:
                self._offer(node, self._dp_solution(node.demand, node.caps))
                continue
            bound = self.lp(node)
            if bound is None:
                continue
            lower, xf = bound
            if base + lower >= self.best_total:
                continue
            ceil_x = [math.ceil(v - 1e-7) for v in xf]
            if self._covers(node.demand, ceil_x) and self._within_caps(node.caps, ceil_x):
                self._offer(node, ceil_x)
            self._offer(node, self._greedy(node.demand, node.caps, [math.floor(v + 1e-7) for v in xf]))
            if base + lower >= self.best_total:
                continue
            frac = [
                (abs(v - math.floor(v) - 0.5), p)
                for p, v in enumerate(xf)
                if 1e-7 < v - math.floor(v) < 1 - 1e-7
            ]
            if not frac:
                continue  # LP optimum integral: rounding already offered it
            _, p = min(frac)
            v = float(xf[p])
            down = _Node(node.demand, node.caps, {**node.upper, p: math.floor(v)}, node.used)
            stack.append(down)
            commit = math.ceil(v)
            if node.upper.get(p, commit) >= commit:
                pat = self.patterns[p]
                cap = node.caps[pat.group]
                if cap is None or cap >= commit:
                    ncaps = (
                        node.caps
                        if cap is None
                        else (*node.caps[: pat.group], cap - commit, *node.caps[pat.group + 1 :])
                    )
                    nd = tuple(max(0, r - commit * c) for r, c in zip(node.demand, pat.counts, strict=True))
                    upper = {q: u - commit if q == p else u for q, u in node.upper.items()}
                    used = tuple(u + commit if q == p else u for q, u in enumerate(node.used))
                    stack.append(_Node(nd, ncaps, upper, used))
        return self.best


def min_bins(
    demand: Sequence[int],
    patterns: Sequence[Pattern],
    caps: Sequence[int | None] | None = None,
    *,
    dp_limit: int = DP_STATE_LIMIT,
) -> tuple[int, ...] | None:
    """Optimal multiplicity of each pattern (fewest bins in total), or None if impossible.

    ``caps[g]`` limits how many bins of group ``g`` may be used (``None``: unlimited).
    ``dp_limit`` is exposed so tests can force the LP / branch-and-bound path.
    """
    d = tuple(int(v) for v in demand)
    groups = 1 + max((p.group for p in patterns), default=-1)
    cap_t: tuple[int | None, ...] = tuple(caps) if caps is not None else (None,) * groups
    useful = [p for p in patterns if any(c and n for c, n in zip(p.counts, d, strict=True))]
    if not any(d):
        return (0,) * len(patterns)
    for i, need in enumerate(d):
        if need and not any(p.counts[i] for p in useful):
            return None
    solver = _Solver(useful, dp_limit)
    x = solver.solve(d, cap_t)
    if x is None:
        return None
    out = [0] * len(patterns)
    index = {id(p): i for i, p in enumerate(patterns)}
    for p, n in zip(useful, x, strict=True):
        out[index[id(p)]] += n
    return tuple(out)
