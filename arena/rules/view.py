"""Redaction: the one function that decides what a seat (or a spectator) may see.

``observe(state, seat)`` builds a ``PlayerView`` from the hand state; ``seat=None`` is a
spectator with public rights only. Everything the arena sends to a bot is built from this
view, never from the state itself. Hidden: the opponent's cards other than those seen taken
from the discard pile, the stock order, the card discarded face down at a knock, and (when
the pile may not be looked through) every discard under the top one.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.actions import (
    Action,
    BigGin,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    Knock,
    Pass,
    TakeUpcard,
)
from arena.rules.cards import Card, from_mask
from arena.rules.hand import HandResult, HandState, KnockInfo, Phase, legal_actions


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """One action as everyone saw it. ``card`` is the card that moved face up, if any
    (a taken upcard or discard, a discarded card); stock draws and knock discards carry none."""

    seat: int
    kind: str
    card: Card | None = None

    def __str__(self) -> str:
        return f"{self.seat}:{self.kind}" + (f" {self.card}" if self.card is not None else "")


@dataclass(frozen=True, slots=True)
class PlayerView:
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
    scores: tuple[int, int] = (0, 0)
    hand_number: int = 0

    @property
    def discard_top(self) -> Card | None:
        return self.discard_pile[-1] if self.discard_pile else None


def _public(state: HandState) -> tuple[tuple[PublicEvent, ...], tuple[int, int]]:
    """The public history, and per seat the cards seen taken from the pile and still held."""
    events: list[PublicEvent] = []
    known = [0, 0]
    pile: list[Card] = [state.upcard] if state.upcard is not None else []
    for seat, action in state.log:
        if isinstance(action, TakeUpcard | DrawDiscard):
            card = pile.pop() if pile else None
            if card is not None:
                known[seat] |= 1 << card
            events.append(PublicEvent(seat, "take_upcard" if isinstance(action, TakeUpcard)
                                      else "draw_discard", card))
        elif isinstance(action, Discard):
            pile.append(action.card)
            known[seat] &= ~(1 << action.card)
            events.append(PublicEvent(seat, "discard", action.card))
        elif isinstance(action, DrawStock):
            events.append(PublicEvent(seat, "draw_stock"))
        elif isinstance(action, Pass):
            events.append(PublicEvent(seat, "pass"))
        elif isinstance(action, Knock | Gin):
            known[seat] &= ~(1 << action.discard)
            events.append(PublicEvent(seat, "gin" if isinstance(action, Gin) else "knock"))
        elif isinstance(action, BigGin):
            events.append(PublicEvent(seat, "big_gin"))
        elif isinstance(action, Defend):
            events.append(PublicEvent(seat, "defend"))
    return tuple(events), (known[0], known[1])


def observe(
    state: HandState, seat: int | None, *, scores: tuple[int, int] = (0, 0), hand_number: int = 0
) -> PlayerView:
    """What ``seat`` may see now (``None``: a spectator, public information only)."""
    pile = state.discard if state.config.discard_pile_visible else state.discard[-1:]
    history, known_masks = _public(state)
    known = (from_mask(known_masks[0]), from_mask(known_masks[1]))
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
    return PlayerView(
        seat=seat, phase=state.phase, turn=state.turn, dealer=state.dealer, hand=own,
        hand_sizes=(state.hands[0].bit_count(), state.hands[1].bit_count()),
        opponent_known=opp_known, known=known, discard_pile=pile,
        stock_count=state.stock_count, knock_limit=state.knock_limit, upcard=state.upcard,
        multiplier=state.multiplier, taken=taken, history=history, knock=knock,
        result=state.result, legal=legal, scores=scores, hand_number=hand_number,
    )
