"""GreedyBot: plays for the lowest deadwood now, and goes out at the first chance.

- Takes the upcard (or the top discard) only if that card ends up in a meld of the best
  arrangement of hand + card.
- Discards the card that leaves the least deadwood in the remaining ten, ties to the highest
  card (value, then rank, then suit).
- Goes out as soon as it may: big gin over gin over knock; the knock discard by the same
  rule; at the wall it always takes the last discard when that lets it go out.
- Defends with ``Defend()`` (the engine's best melds and layoffs).
"""

from __future__ import annotations

from gin_arena_core.rules import (
    Action,
    BigGin,
    Discard,
    Gin,
    Knock,
    PlayerView,
)
from gin_arena_core.rules.melds import best_melds_of_mask, deadwood_after_discard, meldable_mask
from gin_arena_sdk import Bot, MatchStarted


def hand_mask(view: PlayerView) -> int:
    m = 0
    for c in view.hand:
        m |= 1 << c
    return m


def card_key(card: int) -> tuple[int, int, int]:
    """Orders cards by deadwood value, then rank, then suit ("the highest card" last)."""
    rank = card % 13
    return (min(rank + 1, 10), rank, card // 13)


def melds_with(mask: int, card: int, runs_only: bool) -> bool:
    """True if ``card`` lies in a meld of the best arrangement of ``mask`` plus ``card``."""
    bit = 1 << card
    if not meldable_mask(mask | bit, runs_only) & bit:
        return False  # in no meld at all (a few bit operations decide most offers)
    return any(m & bit for m in best_melds_of_mask(mask | bit, runs_only))


class GreedyBot(Bot):
    """Lowest deadwood now; knock or gin at the first chance."""

    name = "greedy"

    def __init__(self) -> None:
        self.runs_only = False

    def on_match_start(self, info: MatchStarted) -> None:
        self.runs_only = info.rules.runs_only

    # ---------------------------------------------------------------- drawing

    def take_upcard(self, view: PlayerView) -> bool:
        card = view.discard_top
        return card is not None and melds_with(hand_mask(view), card, self.runs_only)

    def draw_discard(self, view: PlayerView) -> bool:
        return self.take_upcard(view)

    # ---------------------------------------------------------------- discarding

    def discard(self, view: PlayerView) -> Action:
        return self._best_out(view) or self._best_discard(view)

    def knock_at_wall(self, view: PlayerView) -> Action:
        return self._best_out(view) or view.legal[0]

    def _best_out(self, view: PlayerView) -> Action | None:
        """Big gin, else a gin, else the knock leaving the least deadwood; None if none."""
        best: Action | None = None
        best_key: tuple[int, int, tuple[int, int, int]] | None = None
        dw: dict[int, int] | None = None
        for a in view.legal:
            if isinstance(a, BigGin):
                return a
            if isinstance(a, Gin):
                key = (0, 0, _neg(card_key(a.card)))
            elif isinstance(a, Knock):
                if dw is None:
                    dw = deadwood_after_discard(hand_mask(view), self.runs_only)
                key = (1, dw[a.card], _neg(card_key(a.card)))
            else:
                continue
            if best_key is None or key < best_key:
                best, best_key = a, key
        return best

    def _best_discard(self, view: PlayerView) -> Action:
        dw = deadwood_after_discard(hand_mask(view), self.runs_only)
        best: Action | None = None
        best_key = (1 << 30, 0)
        for a in view.legal:
            if type(a) is Discard:
                key = (dw[a.card], _SHED_ORDER[a.card])
                if key < best_key:
                    best, best_key = a, key
        assert best is not None
        return best


def _neg(key: tuple[int, int, int]) -> tuple[int, int, int]:
    return (-key[0], -key[1], -key[2])


# per card: lower sheds first at equal deadwood (the highest value, then rank, then suit)
_SHED_ORDER: tuple[int, ...] = tuple(
    sorted(range(52), key=lambda c: _neg(card_key(c)), reverse=False).index(c)
    for c in range(52))


if __name__ == "__main__":
    from sample_bots import main

    main(GreedyBot())
