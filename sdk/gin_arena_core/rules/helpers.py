"""Helpers for bot authors (the SDK re-exports them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gin_arena_core.rules.cards import CARDS, Card, CardLike, parse_cards
from gin_arena_core.rules.melds import Meld, max_layoff


def layoff_cards(cards: Iterable[CardLike] | str, melds: Sequence[Meld]) -> list[tuple[Card, int]]:
    """Which of ``cards`` can be laid off on ``melds`` (chains included), as an ordered plan
    of (card, meld index) that can be applied one by one."""
    mask = 0
    for c in parse_cards(cards):
        mask |= 1 << c
    targets = [(m.mask, m.is_run) for m in melds]
    return [(CARDS[c], i) for c, i in max_layoff(mask, targets)]
