"""Each bot's record over a series, from the stored per-seat results: one tally for all.

``tally(rows)`` sums the result rows of a scope into a ``Tally`` per bot (wins, draws,
losses, points, hands, gins, undercuts, timeouts, illegal moves, bot errors with the
first one, forfeits); ``crosstable(rows)`` gives each bot's W-D-L against each other;
``wilson`` is the score's 95% interval. ``arena play``'s table and the standings of
tournaments and the ladder are all read from these.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.store.base import ResultRow


def wilson(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (``successes`` may count draws as half)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    """One bot's record over a series."""

    bot: str
    games: int = 0  # counted matches (voids excluded)
    wins: int = 0
    draws: int = 0  # played out with no winner (level scores, or the hand cap)
    losses: int = 0
    voids: int = 0  # not counted: the arena's own fault, or neither bot came
    points: int = 0  # sum of final match scores (net, with bonuses)
    hand_points: int = 0  # net points over hands
    hands: int = 0
    hands_won: int = 0
    gins: int = 0
    undercuts: int = 0
    timeouts: int = 0
    illegal: int = 0
    errors: int = 0  # bot errors: its code raised, or answered with something not a move
    first_error: str = ""
    forfeits: int = 0

    def add(self, r: ResultRow) -> None:
        """Count one of this bot's result rows."""
        if r.outcome == "void":
            self.voids += 1
        else:
            self.games += 1
            self.wins += r.outcome == "win"
            self.draws += r.outcome == "draw"
            self.losses += r.outcome == "loss"
        self.points += r.points
        self.hand_points += r.hand_points
        self.hands += r.hands
        self.hands_won += r.hands_won
        self.gins += r.gins
        self.undercuts += r.undercuts
        self.timeouts += r.timeouts
        self.illegal += r.illegal
        self.errors += r.errors
        self.first_error = self.first_error or r.first_error
        self.forfeits += r.forfeit

    @property
    def score_rate(self) -> float:
        """(wins + draws / 2) / games."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def score_interval(self) -> tuple[float, float]:
        return wilson(self.wins + self.draws / 2, self.games)

    @property
    def points_per_hand(self) -> float:
        return self.hand_points / self.hands if self.hands else 0.0

    @property
    def gin_rate(self) -> float:
        return self.gins / self.hands if self.hands else 0.0

    @property
    def undercut_rate(self) -> float:
        return self.undercuts / self.hands if self.hands else 0.0


def tally(rows: Iterable[ResultRow], bots: Sequence[str] = ()) -> dict[str, Tally]:
    """Each bot's tally, ``bots`` first in their order (even with no results), then any
    other bot in the order it appears."""
    out = {b: Tally(b) for b in bots}
    for r in rows:
        if r.bot not in out:
            out[r.bot] = Tally(r.bot)
        out[r.bot].add(r)
    return out


def crosstable(rows: Iterable[ResultRow]) -> dict[tuple[str, str], list[int]]:
    """(bot, opponent) -> [wins, draws, losses] of bot against opponent (voids left out)."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        if r.outcome != "void":
            cells[(r.bot, r.opponent)][{"win": 0, "draw": 1, "loss": 2}[r.outcome]] += 1
    return dict(cells)


__all__ = ["Tally", "crosstable", "tally", "wilson"]
