"""Redaction: the one function that decides what a seat (or a spectator) may see.

``observe(state, seat)`` builds a ``PlayerView`` from the hand state; ``seat=None`` is a
spectator with public rights only. Everything the arena sends to a bot is built from this
view, never from the state itself. Hidden: the opponent's cards other than those seen taken
from the discard pile, the stock order, the card discarded face down at a knock, and (when
the pile may not be looked through) every discard under the top one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from gin_arena_core.rules.actions import (
    Action,
)
from gin_arena_core.rules.cards import Card, from_mask
from gin_arena_core.rules.game import Sheet
from gin_arena_core.rules.hand import (
    HandResult,
    HandState,
    KnockInfo,
    Phase,
    PublicEvent,
    legal_actions,
)


class PlayerView(NamedTuple):
    """What one seat may see (built only by ``observe``). Immutable."""

    seat: int | None  # None: spectator
    phase: Phase
    turn: int
    dealer: int
    hand: tuple[Card, ...]  # own cards (empty for a spectator)
    hand_sizes: tuple[int, int]
    opponent_known: tuple[Card, ...]  # the opponent's cards seen taken from the pile, still held
    known: tuple[tuple[Card, ...], tuple[Card, ...]]  # per seat: cards seen taken, still held
    discard_pile: tuple[Card, ...]  # bottom to top; only the top unless the pile is visible
    stock_count: int
    knock_limit: int  # 0 = gin only
    upcard: Card | None
    multiplier: int
    taken: Card | None  # the card this seat took from the pile this turn (own view only)
    history: tuple[PublicEvent, ...]
    knock: KnockInfo | None  # the knocker's spread, once made (face-down discard removed)
    result: HandResult | None  # when the hand is over: both hands revealed
    legal: tuple[Action, ...]
    scores: tuple[int, int] = (0, 0)  # points toward the target on the first open sheet
    hand_number: int = 0
    sheets: tuple[Sheet, ...] = ()  # the whole score sheet (three games under Hollywood)

    @property
    def discard_top(self) -> Card | None:
        return self.discard_pile[-1] if self.discard_pile else None


def observe(
    state: HandState, seat: int | None, *, scores: tuple[int, int] = (0, 0), hand_number: int = 0,
    sheets: tuple[Sheet, ...] = (),
) -> PlayerView:
    """What ``seat`` may see now (``None``: a spectator, public information only). The game
    context (``scores``, ``hand_number``, ``sheets``) is public and passed in as it is."""
    pile = state.discard if state.config.discard_pile_visible else state.discard[-1:]
    history = state.public
    k0, k1 = state.known
    known = (from_mask(k0) if k0 else (), from_mask(k1) if k1 else ())
    knock = state.knock
    if knock is not None:
        knock = KnockInfo(knock.knocker, None, knock.melds, knock.deadwood_cards,
                          knock.deadwood, knock.kind)
    if seat is None:
        own: tuple[Card, ...] = ()
        opp_known: tuple[Card, ...] = ()
        legal: tuple[Action, ...] = ()
        taken = None
    else:
        own = from_mask(state.hands[seat])
        opp_known = known[1 - seat]
        legal = tuple(legal_actions(state, seat))
        taken = state.taken if state.turn == seat else None
    # positional, in PlayerView's field order (a view is built for every decision)
    return _new_view(PlayerView, (
        seat, state.phase, state.turn, state.dealer, own,
        (state.hands[0].bit_count(), state.hands[1].bit_count()), opp_known, known, pile,
        52 - state.stock_pos, state.knock_limit, state.upcard, state.multiplier, taken,
        history, knock, state.result, legal, scores, hand_number, sheets,
    ))


_new_view: Callable[[type[PlayerView], tuple[Any, ...]], PlayerView] = tuple.__new__
assert PlayerView._fields == (
    "seat", "phase", "turn", "dealer", "hand", "hand_sizes", "opponent_known", "known",
    "discard_pile", "stock_count", "knock_limit", "upcard", "multiplier", "taken", "history",
    "knock", "result", "legal", "scores", "hand_number", "sheets",
)
