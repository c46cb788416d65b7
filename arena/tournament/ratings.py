"""Standings' ratings: a batch Bradley-Terry fit over duplicate deals, with honest intervals.

(Live openskill ratings, updated as each match is recorded, are ``arena.series.ratings``.)

Final standings: a Bradley-Terry model fitted to all results at once (Newton's method on
the likelihood with a weak prior, draws as half a win each), shown on the Elo scale (400
log10 of the strength, centred on the field's mean). The unit of play is the *duplicate
deal*: both matches of a deal, which share their cards; a deal whose partner match was not
played (or was voided) is left out of the fit and counted apart.

Uncertainty is a quasi-likelihood (Laplace) approximation, so it is honest at every
density: the curvature of the penalised log-likelihood, with the data's part divided by a
dispersion factor ``phi`` estimated from the Pearson residuals of every deal in the field
(duplicate deals vary less than independent games: phi < 1 for real bots), shrunk toward
1 when there are few degrees of freedom to estimate it from. 95% intervals are estimate
± 1.96 standard errors; the likelihood of superiority (LOS) of a bot over the next one down
is the normal probability that their difference is positive, from the same covariance.
Nothing is resampled, so the same matches give the same numbers in any order. Coverage is
checked by simulation in tests/tournament/test_ratings.py. A bot's Elo is relative to this
field only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.store.base import MatchRow

# ---------------------------------------------------------------- batch Bradley-Terry

# Each bot plays this many virtual games (half won) against a fixed average opponent,
# so a perfect record gives a large but finite rating and a disconnected field still fits.
PRIOR_GAMES = 1.0


def fit_bradley_terry(n: int, wins: Mapping[tuple[int, int], float],
                      start: Sequence[float] | None = None, *, tol: float = 1e-9,
                      max_iter: int = 100) -> list[float]:
    """Strengths ``gamma`` (Elo = 400 log10 gamma) maximising the Bradley-Terry likelihood.

    ``wins[(i, j)]`` is what ``i`` scored against ``j`` (a draw counts half to each side);
    games between i and j are ``wins[(i, j)] + wins[(j, i)]``. Newton's method on
    ``log gamma`` (the log-likelihood is concave, and strictly so with the prior games),
    with step halving; a handful of iterations reach ``tol``.
    """
    games: dict[tuple[int, int], float] = defaultdict(float)
    total = [PRIOR_GAMES / 2] * n
    for (i, j), w in wins.items():
        if i != j and w:
            games[(min(i, j), max(i, j))] += w
            total[i] += w
    pairs = [(i, j, g) for (i, j), g in games.items() if g > 0]
    theta = [math.log(g) for g in start] if start is not None else [0.0] * n

    def loglik(t: Sequence[float]) -> float:
        ll = sum(total[i] * t[i] - PRIOR_GAMES * _log1pexp(t[i]) for i in range(n))
        for i, j, g in pairs:
            m = max(t[i], t[j])
            ll -= g * (m + math.log(math.exp(t[i] - m) + math.exp(t[j] - m)))
        return ll

    current = loglik(theta)
    for _ in range(max_iter):
        grad = [total[i] - PRIOR_GAMES * _sigmoid(theta[i]) for i in range(n)]
        # the negated Hessian (positive definite)
        h = [[0.0] * n for _ in range(n)]
        for i in range(n):
            s = _sigmoid(theta[i])
            h[i][i] = PRIOR_GAMES * s * (1 - s)
        for i, j, g in pairs:
            s = _sigmoid(theta[i] - theta[j])
            grad[i] -= g * s
            grad[j] -= g * (1 - s)
            v = g * s * (1 - s)
            h[i][i] += v
            h[j][j] += v
            h[i][j] -= v
            h[j][i] -= v
        step = _solve(h, grad)
        scale = 1.0
        while True:
            trial = [t + scale * d for t, d in zip(theta, step, strict=True)]
            value = loglik(trial)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, current = trial, value
        if max(abs(scale * d) for d in step) < tol:
            break
    return [math.exp(t) for t in theta]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def _log1pexp(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve ``a x = b`` for a symmetric positive definite ``a`` (Cholesky)."""
    n = len(b)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                low[i][i] = math.sqrt(max(s, 1e-300))
            else:
                low[i][j] = s / low[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def to_elo(gamma: Sequence[float]) -> list[float]:
    """Elo-scale ratings centred on the mean."""
    elo = [400 * math.log10(g) for g in gamma]
    mean = sum(elo) / len(elo) if elo else 0.0
    return [e - mean for e in elo]


@dataclass(frozen=True, slots=True)
class Unit:
    """One duplicate deal of a pairing: what ``pair[0]`` scored over its counted matches."""

    pair: tuple[str, str]
    score: float
    games: int


def units_from_matches(matches: Iterable[MatchRow]) -> list[Unit]:
    """Group counted (non-void) matches into duplicate-deal units, in a canonical order
    (pair, deal), so the result does not depend on the order matches were recorded in.
    A unit with ``games == 1`` is an unpaired half-deal."""
    acc: dict[tuple[tuple[str, str], int], list[float]] = {}
    for m in matches:
        pair = m.pair
        s = m.score_of(pair[0])
        if s is None:
            continue
        acc.setdefault((pair, m.deal), []).append(s)
    return [Unit(pair, sum(v), len(v)) for (pair, _), v in sorted(acc.items())]


@dataclass(frozen=True, slots=True)
class Fit:
    bot: str
    elo: float
    low: float  # 95% interval
    high: float
    los_next: float | None  # P(this bot is stronger than the next one down); None for last
    se: float = 0.0  # standard error of the Elo


DISPERSION_PRIOR_DF = 4.0
"""How many degrees of freedom the assumption phi = 1 (binomial variance) is worth: with
few deals in the field phi stays near 1; with many, the data decide."""

Z95 = 1.959963984540054


def _wins(units_by_pair: Mapping[tuple[str, str], Sequence[tuple[float, int]]],
          index: Mapping[str, int]) -> dict[tuple[int, int], float]:
    wins: dict[tuple[int, int], float] = defaultdict(float)
    for (a, b), items in units_by_pair.items():
        i, j = index[a], index[b]
        for score, games in items:
            wins[(i, j)] += score
            wins[(j, i)] += games - score
    return wins


def dispersion(units: Sequence[Unit], index: Mapping[str, int], theta: Sequence[float]
               ) -> tuple[float, int]:
    """The estimated dispersion of the deal scores about the fit (Pearson chi-square over
    its degrees of freedom) shrunk toward 1, and those degrees of freedom."""
    chi2 = 0.0
    for u in units:
        p = _sigmoid(theta[index[u.pair[0]]] - theta[index[u.pair[1]]])
        chi2 += (u.score - u.games * p) ** 2 / (u.games * p * (1 - p))
    df = len(units) - (len(index) - 1)
    if df <= 0:
        return 1.0, 0
    return (chi2 + DISPERSION_PRIOR_DF) / (df + DISPERSION_PRIOR_DF), df


def standings_fit(bots: Sequence[str], units: Sequence[Unit]) -> list[Fit]:
    """Bradley-Terry Elo with 95% intervals and neighbour LOS, best first, over the paired
    deals in ``units`` (half-deals are left out: see ``units_from_matches``)."""
    paired = sorted((u for u in units if u.games == 2), key=lambda u: (u.pair, u.score))
    index = {b: i for i, b in enumerate(bots)}
    n = len(bots)
    by_pair: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    for u in paired:
        by_pair[u.pair].append((u.score, u.games))
    gamma = fit_bradley_terry(n, _wins(by_pair, index))
    theta = [math.log(g) for g in gamma]
    phi, _ = dispersion(paired, index, theta)
    # precision: the data's curvature over phi, plus the prior's
    h = [[0.0] * n for _ in range(n)]
    for i in range(n):
        s = _sigmoid(theta[i])
        h[i][i] = PRIOR_GAMES * s * (1 - s)
    for (a, b), items in by_pair.items():
        i, j = index[a], index[b]
        games = sum(g for _, g in items)
        p = _sigmoid(theta[i] - theta[j])
        v = games * p * (1 - p) / phi
        h[i][i] += v
        h[j][j] += v
        h[i][j] -= v
        h[j][i] -= v
    cov = _inverse(h)
    # covariance of the centred strengths (Elo is centred on the field's mean)
    mean_row = [sum(cov[i][k] for i in range(n)) / n for k in range(n)]
    grand = sum(mean_row) / n
    centred = [[cov[i][j] - mean_row[i] - mean_row[j] + grand for j in range(n)]
               for i in range(n)]
    scale = 400 / math.log(10)
    point = to_elo(gamma)
    order = sorted(range(n), key=lambda i: (-point[i], bots[i]))
    out = []
    for rank, i in enumerate(order):
        se = math.sqrt(max(0.0, centred[i][i])) * scale
        los: float | None = None
        if rank + 1 < n:
            j = order[rank + 1]
            var = (cov[i][i] + cov[j][j] - 2 * cov[i][j]) * scale * scale
            diff = point[i] - point[j]
            los = 0.5 if var <= 0 and diff == 0 else (
                1.0 if var <= 0 else _normal_cdf(diff / math.sqrt(var)))
        out.append(Fit(bots[i], point[i], point[i] - Z95 * se, point[i] + Z95 * se, los, se))
    return out


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of a symmetric positive definite matrix (column by column)."""
    n = len(a)
    cols = [_solve(a, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[cols[c][r] for c in range(n)] for r in range(n)]


__all__ = ["Fit", "Unit", "dispersion", "fit_bradley_terry", "standings_fit", "to_elo",
           "units_from_matches"]
