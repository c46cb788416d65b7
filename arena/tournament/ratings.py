"""Ratings: live openskill updates per match, and a batch Bradley-Terry fit for standings.

Live: every counted match updates both bots' openskill (Weng-Lin Plackett-Luce) rating
``(mu, sigma)``; a draw is a tie; a voided match changes nothing. Live ratings depend on the
order matches finished in; they are for watching a run and pairing the ladder.

Final standings: a Bradley-Terry model fitted to all results at once (maximum likelihood
by Newton's method, draws as half a win each), shown on the Elo scale (400 log10 of the strength,
centred on the field's mean). Uncertainty comes from a bootstrap over *duplicate deals*,
the independent unit of play (both seat orders of a deal are resampled together, within
each pairing, so the pairing of statistics is kept): 95% percentile intervals, and the
likelihood of superiority (LOS) of each bot over the next one down = the share of
bootstrap fits in which it stays ahead. A bot's Elo is relative to this field only.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from arena.tournament.store import MatchRow, Rating

# ---------------------------------------------------------------- live (openskill)


class LiveRatings:
    """Openskill ratings of a set of bots, updated one match at a time."""

    def __init__(self, ratings: Mapping[str, Rating] | None = None) -> None:
        self._model = PlackettLuce()
        self._ratings: dict[str, Rating] = dict(ratings or {})

    @property
    def initial(self) -> Rating:
        return Rating(self._model.mu, self._model.sigma, 0)

    def get(self, bot: str) -> Rating:
        return self._ratings.get(bot, self.initial)

    def all(self) -> dict[str, Rating]:
        return dict(self._ratings)

    def after(self, a: str, b: str, score_a: float) -> dict[str, Rating]:
        """Both bots' ratings after a match in which ``a`` scored ``score_a`` (1, 0.5, 0)."""
        ra, rb = self.get(a), self.get(b)
        pa = self._model.create_rating([ra.mu, ra.sigma], name=a)
        pb = self._model.create_rating([rb.mu, rb.sigma], name=b)
        ranks = [0.0, 0.0] if score_a == 0.5 else ([0.0, 1.0] if score_a > 0.5 else [1.0, 0.0])
        [[na], [nb]] = self._model.rate([[pa], [pb]], ranks=ranks)
        return {a: Rating(na.mu, na.sigma, ra.games + 1), b: Rating(nb.mu, nb.sigma,
                                                                     rb.games + 1)}

    def apply(self, new: Mapping[str, Rating]) -> None:
        self._ratings.update(new)

    def win_probability(self, a: str, b: str) -> float:
        """Openskill's predicted chance that ``a`` beats ``b``."""
        ra, rb = self.get(a), self.get(b)
        pa = self._model.create_rating([ra.mu, ra.sigma], name=a)
        pb = self._model.create_rating([rb.mu, rb.sigma], name=b)
        return float(self._model.predict_win([[pa], [pb]])[0])


def ordinal(r: Rating) -> float:
    """A conservative single number for ranking: mu - 3 sigma."""
    return r.mu - 3 * r.sigma


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
    """Group counted (non-void) matches into duplicate-deal units."""
    acc: dict[tuple[tuple[str, str], int], list[float]] = {}
    for m in matches:
        pair = m.pair
        s = m.score_of(pair[0])
        if s is None:
            continue
        acc.setdefault((pair, m.deal), []).append(s)
    return [Unit(pair, sum(v), len(v)) for (pair, _), v in acc.items()]


@dataclass(frozen=True, slots=True)
class Fit:
    bot: str
    elo: float
    low: float  # bootstrap 95% interval
    high: float
    los_next: float | None  # P(this bot is stronger than the next one down); None for last


def _wins(units_by_pair: Mapping[tuple[str, str], Sequence[tuple[float, int]]],
          index: Mapping[str, int]) -> dict[tuple[int, int], float]:
    wins: dict[tuple[int, int], float] = defaultdict(float)
    for (a, b), items in units_by_pair.items():
        i, j = index[a], index[b]
        for score, games in items:
            wins[(i, j)] += score
            wins[(j, i)] += games - score
    return wins


def standings_fit(bots: Sequence[str], units: Sequence[Unit], *, samples: int = 1000,
                  seed: int = 0) -> list[Fit]:
    """Bradley-Terry Elo with bootstrap intervals and neighbour LOS, best first."""
    index = {b: i for i, b in enumerate(bots)}
    by_pair: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    for u in units:
        by_pair[u.pair].append((u.score, u.games))
    point_gamma = fit_bradley_terry(len(bots), _wins(by_pair, index))
    point = to_elo(point_gamma)
    rng = random.Random(seed)
    grouped = {pair: Counter(items) for pair, items in by_pair.items()}
    draws: list[list[float]] = []
    for _ in range(samples):
        resampled: dict[tuple[str, str], list[tuple[float, int]]] = {}
        for pair, counter in grouped.items():
            keys = list(counter)
            resampled[pair] = rng.choices(keys, weights=list(counter.values()),
                                          k=len(by_pair[pair]))
        gamma = fit_bradley_terry(len(bots), _wins(resampled, index), point_gamma,
                                  tol=1e-6)
        draws.append(to_elo(gamma))
    order = sorted(range(len(bots)), key=lambda i: (-point[i], bots[i]))
    out = []
    for rank, i in enumerate(order):
        column = sorted(d[i] for d in draws)
        low, high = (_percentile(column, 0.025), _percentile(column, 0.975)) if draws \
            else (point[i], point[i])
        los: float | None = None
        if rank + 1 < len(order) and draws:
            j = order[rank + 1]
            ahead = sum(1.0 if d[i] > d[j] else 0.5 if d[i] == d[j] else 0.0 for d in draws)
            los = ahead / len(draws)
        out.append(Fit(bots[i], point[i], low, high, los))
    return out


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile of already sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


__all__ = ["Fit", "LiveRatings", "Unit", "fit_bradley_terry", "ordinal", "standings_fit",
           "to_elo", "units_from_matches"]
