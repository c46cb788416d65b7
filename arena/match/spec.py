"""Which match to play: its id, its two bots, its deal and seat order (``MatchSpec``).

A series (a tournament, an ``arena play`` run, the ladder) is a list of these; a store
queues and records them; a worker plays one by seating ``seats`` and dealing from
``seed``. The two matches of a duplicate deal share ``deal`` and ``seed`` and differ in
``order``, so each bot holds each hand once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match of a series."""

    match_id: str
    pair: tuple[str, str]  # the two bots, in canonical (sorted) order
    deal: int  # deal index: the two matches of a deal share its seed
    order: int  # 0: pair[0] sits in seat 0; 1: the seats are swapped
    seed: str  # the deal seed

    @property
    def seats(self) -> tuple[str, str]:
        """The bot in seat 0 and the bot in seat 1."""
        a, b = self.pair
        return (a, b) if self.order == 0 else (b, a)


def canonical(a: str, b: str) -> tuple[str, str]:
    """A pair of bots in the one order a series keys it by."""
    return (a, b) if a <= b else (b, a)


__all__ = ["MatchSpec", "canonical"]
