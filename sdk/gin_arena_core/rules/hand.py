"""One hand of two-player Gin Rummy as a pure state machine.

``deal(config, deck, dealer)`` makes the first state from a 52-card order (the runner owns
the shuffle); ``legal_actions(state, seat)`` lists what that seat may do now (empty when it
is not its turn); ``apply(state, seat, action)`` returns the next state or raises a
``RuleError`` and leaves the state as it was (states are immutable). All transitions are in
this file; ``PHASE_ACTIONS`` is the table of which action kinds each phase allows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from gin_arena_core.rules.actions import (
    ACTION_TYPES,
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
from gin_arena_core.rules.cards import (
    CARDS,
    FULL_MASK,
    VALUES,
    Card,
    CardLike,
    from_mask,
    mask_value,
    parse_card,
    parse_cards,
)
from gin_arena_core.rules.config import KnockScore, RulesConfig
from gin_arena_core.rules.errors import Code, IllegalActionError, MalformedError, RuleError
from gin_arena_core.rules.melds import (
    _DAD_CACHE,
    Meld,
    _best,
    _extends,
    best_defence,
    deadwood_after_discard,
    meld_kind,
    meldable_mask,
    sequence_bonus,
)

WALL = 2  # the last two stock cards are never drawn (seeds 000, 001, 004)
MAX_ACTIONS_PER_HAND = 400  # turn cap: a hand this long is void (pathological discard swaps)


class Phase(IntEnum):
    """Numbers match the protocol's ``Phase`` enum."""

    UPCARD_OFFER = 1
    DRAW = 2
    DISCARD = 3
    WALL_OFFER = 4
    WALL_DISCARD = 5
    DEFEND = 6
    HAND_OVER = 7


# Module aliases: on Python 3.11 ``Phase.DRAW`` is a descriptor lookup (~5x a global).
_UPCARD_OFFER, _DRAW, _DISCARD, _WALL_OFFER, _WALL_DISCARD, _DEFEND, _HAND_OVER = tuple(Phase)


PHASE_ACTIONS: dict[Phase, tuple[type, ...]] = {
    Phase.UPCARD_OFFER: (TakeUpcard, Pass),
    Phase.DRAW: (DrawStock, DrawDiscard),
    Phase.DISCARD: (Discard, Knock, Gin, BigGin),
    Phase.WALL_OFFER: (DrawDiscard, Pass),
    Phase.WALL_DISCARD: (Knock, Gin, BigGin),
    Phase.DEFEND: (Defend,),
    Phase.HAND_OVER: (),
}


class PublicEvent(NamedTuple):
    """One action as everyone saw it. ``card`` is the card that moved face up, if any
    (a taken upcard or discard, a discarded card); stock draws and knock discards carry none."""

    seat: int
    kind: str
    card: Card | None = None

    def __str__(self) -> str:
        return f"{self.seat}:{self.kind}" + (f" {self.card}" if self.card is not None else "")


_KIND = {TakeUpcard: "take_upcard", Pass: "pass", DrawStock: "draw_stock",
         DrawDiscard: "draw_discard", Discard: "discard", Knock: "knock", Gin: "gin",
         BigGin: "big_gin", Defend: "defend"}


@dataclass(frozen=True, slots=True)
class KnockInfo:
    """What the knocker spread (public once made)."""

    knocker: int
    discard: Card | None  # face down; None for big gin
    melds: tuple[Meld, ...]
    deadwood_cards: tuple[Card, ...]
    deadwood: int
    kind: str  # "knock", "gin", "big_gin"


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended. ``winner`` is None for a void hand (the wall, or the turn cap)."""

    kind: str  # "knock", "undercut", "gin", "big_gin", "wall", "cap"
    winner: int | None
    points: int
    knocker: int | None = None
    deadwood: tuple[int, int] = (0, 0)
    melds: tuple[tuple[Meld, ...], tuple[Meld, ...]] = ((), ())
    deadwood_cards: tuple[tuple[Card, ...], tuple[Card, ...]] = ((), ())
    layoffs: tuple[tuple[Card, int], ...] = ()
    multiplier: int = 1
    bonus: int = 0  # Sequence Gin bonuses included in ``points``

    @property
    def is_void(self) -> bool:
        return self.winner is None


class HandState(NamedTuple):
    """Everything about a hand, hidden parts included (never sent to a bot: see ``observe``).

    Immutable. A ``NamedTuple`` rather than a frozen dataclass because a new state is made
    on every action and a tuple copies in one C call (the engine's speed target needs it).
    """

    config: RulesConfig
    deck: tuple[Card, ...]
    dealer: int
    hands: tuple[int, int]
    stock_pos: int
    discard: tuple[Card, ...]
    phase: Phase
    turn: int
    upcard: Card | None
    knock_card: Card | None
    knock_limit: int
    multiplier: int
    taken: Card | None = None
    upcard_passes: int = 0
    stock_only: bool = False
    log: tuple[tuple[int, Action], ...] = ()
    public: tuple[PublicEvent, ...] = ()  # the log as everyone saw it
    known: tuple[int, int] = (0, 0)  # per seat: cards seen taken from the pile, still held
    knock: KnockInfo | None = None
    result: HandResult | None = None

    @property
    def stock_count(self) -> int:
        return 52 - self.stock_pos

    @property
    def is_over(self) -> bool:
        return self.phase is _HAND_OVER

    def hand(self, seat: int) -> tuple[Card, ...]:
        return from_mask(self.hands[seat])

    def stock(self) -> tuple[Card, ...]:
        """The stock, top first (hidden information)."""
        return self.deck[self.stock_pos:]


# ---------------------------------------------------------------- dealing


def validate_deck(deck: Iterable[CardLike]) -> tuple[Card, ...]:
    cards = tuple(c if type(c) is Card else parse_card(c) for c in deck)
    mask = 0
    for c in cards:
        mask |= 1 << c
    if len(cards) != 52 or mask != FULL_MASK:
        missing = sorted(set(CARDS) - set(cards))
        raise MalformedError(
            Code.BAD_DECK,
            f"a deck is 52 distinct cards; got {len(cards)} cards, {len(set(cards))} distinct"
            + (f", missing {' '.join(str(c) for c in missing[:8])}" if missing else ""),
        )
    return cards


def knock_limit_for(config: RulesConfig, card: Card | None) -> int:
    """The knock limit for a hand: from the upcard (Oklahoma) or knock card, else the option."""
    if (config.oklahoma or config.knock_deck) and card is not None:
        if card.rank == 1 and config.oklahoma_ace_gin_only:
            return 0
        return VALUES[card]
    return config.knock_limit


def deal(
    config: RulesConfig,
    deck: Iterable[CardLike],
    dealer: int,
    knock_card: CardLike | None = None,
) -> HandState:
    """The first state of a hand. The dealer deals 10 each one at a time, opponent first;
    the 21st card is the upcard (or the non-dealer's 11th card in the 11-card deal)."""
    cards = validate_deck(deck)
    if dealer not in (0, 1):
        raise MalformedError(Code.BAD_OPTION, f"dealer must be seat 0 or 1, not {dealer!r}")
    kc: Card | None = None
    if config.knock_deck:
        if knock_card is None:
            raise MalformedError(Code.BAD_OPTION, "knock_deck rules need a knock card per hand")
        kc = parse_cards([knock_card])[0]
    elif knock_card is not None:
        raise MalformedError(Code.BAD_OPTION, "a knock card was given but knock_deck is off")
    other = 1 - dealer
    masks = [0, 0]
    for i in range(20):
        seat = other if i % 2 == 0 else dealer
        masks[seat] |= 1 << cards[i]
    if config.eleven_card_deal:
        masks[other] |= 1 << cards[20]
        upcard = None
        discard: tuple[Card, ...] = ()
        phase = _DISCARD
    else:
        upcard = cards[20]
        discard = (upcard,)
        phase = _UPCARD_OFFER
    limit_card = kc if config.knock_deck else upcard
    multiplier = 1
    if (config.oklahoma and upcard is not None and upcard.suit == 3
            and config.oklahoma_spade_doubles):
        multiplier = 2
    return HandState(
        config=config, deck=cards, dealer=dealer, hands=(masks[0], masks[1]), stock_pos=21,
        discard=discard, phase=phase, turn=other, upcard=upcard, knock_card=kc,
        knock_limit=knock_limit_for(config, limit_card), multiplier=multiplier,
    )


# ---------------------------------------------------------------- legal actions


def _after_discard(mask: int, runs_only: bool) -> dict[int, int]:
    """``deadwood_after_discard`` without the copy (read only; memoized there)."""
    key = (mask, runs_only)
    hit = _DAD_CACHE.get(key)
    if hit is None:
        deadwood_after_discard(mask, runs_only)
        hit = _DAD_CACHE[key]
    return hit


# Actions are frozen values, so the common ones are made once.
_DISCARDS = tuple(Discard(c) for c in CARDS)
_KNOCKS = tuple(Knock(c) for c in CARDS)
_GINS = tuple(Gin(c) for c in CARDS)
# 13-bit suit pattern -> the Discard actions of its cards, per suit.
_SUIT_DISCARDS: tuple[tuple[tuple[Discard, ...], ...], ...] = tuple(
    tuple(tuple(_DISCARDS[13 * s + r] for r in range(13) if bits >> r & 1)
          for bits in range(8192))
    for s in range(4)
)
_DRAWS: list[Action] = [DrawStock(), DrawDiscard()]
_STOCK_ONLY: list[Action] = [DrawStock()]
_OFFER: list[Action] = [TakeUpcard(), Pass()]


def _going_out(state: HandState, seat: int, mask: int, back_ok: bool) -> list[Action]:
    """Knock / gin / big gin options for ``seat`` holding ``mask`` (11 cards)."""
    cfg = state.config
    limit = state.knock_limit
    # Removing one card lowers the least deadwood by at most its value (10), and cards in
    # no meld are always deadwood: skip the search when even that bound is over the limit.
    if mask_value(mask & ~meldable_mask(mask, cfg.runs_only)) - 10 > limit:
        return []
    whole = _best(mask, cfg.runs_only)[0]
    if whole - 10 > limit:
        return []
    out: list[Action] = []
    gins: list[Action] = []
    for c, dw in _after_discard(mask, cfg.runs_only).items():
        if c == state.taken and not back_ok:
            continue
        if dw == 0:
            gins.append(_GINS[c])
        elif dw <= limit:
            out.append(_KNOCKS[c])
    out.extend(gins)
    if cfg.big_gin and whole == 0 and state.log:  # after a draw (not the 11-card first turn)
        out.append(BigGin())
    return out


def legal_actions(state: HandState, seat: int) -> list[Action]:
    """Every legal action for ``seat`` now; empty when it is not that seat's turn.

    Knock and gin are listed with their discard and no melds (the best arrangement);
    other arrangements are legal too and ``apply`` validates them. In the defence phase
    ``Defend()`` stands for the best spread; other spreads are validated likewise.
    """
    if seat != state.turn or state.phase is _HAND_OVER:
        return []
    phase = state.phase
    if phase is _UPCARD_OFFER:
        return list(_OFFER)
    if phase is _DRAW:
        if state.stock_only or not state.discard:
            return list(_STOCK_ONLY)
        return list(_DRAWS)
    mask = state.hands[seat]
    if phase is _DISCARD:
        back_ok = state.config.allow_take_back
        taken = state.taken
        pool = mask if back_ok or taken is None else mask & ~(1 << taken)
        t = _SUIT_DISCARDS
        acts: list[Action] = [
            *t[0][pool & 0x1FFF], *t[1][(pool >> 13) & 0x1FFF],
            *t[2][(pool >> 26) & 0x1FFF], *t[3][(pool >> 39) & 0x1FFF],
        ]
        acts.extend(_going_out(state, seat, mask, back_ok))
        return acts
    if phase is _WALL_OFFER:
        top = state.discard[-1]
        probe = _evolve(state, {"taken": top})
        if _going_out(probe, seat, mask | 1 << top, state.config.wall_take_back):
            return [DrawDiscard(), Pass()]
        return [Pass()]
    if phase is _WALL_DISCARD:
        return _going_out(state, seat, mask, state.config.wall_take_back)
    return [Defend()]  # _DEFEND


def is_legal(state: HandState, seat: int, action: Action) -> bool:
    try:
        apply(state, seat, action)
    except RuleError:
        return False
    return True


# ---------------------------------------------------------------- apply


def apply(state: HandState, seat: int, action: Action) -> HandState:
    """The state after ``seat`` plays ``action``.

    Raises ``MalformedError`` / ``IllegalActionError`` carrying the seat, phase, action and
    the legal alternatives; ``state`` is immutable, so it is unchanged after an error.
    """
    try:
        return _apply(state, seat, action)
    except RuleError as err:
        legal = legal_actions(state, seat) if seat in (0, 1) else []
        raise err.with_context(seat=seat, phase=state.phase, action=action, legal=legal) from None


def _apply(state: HandState, seat: int, action: Action) -> HandState:
    phase = state.phase
    if phase is _HAND_OVER:
        raise IllegalActionError(Code.HAND_OVER, "the hand is over")
    if seat != state.turn:
        if seat not in (0, 1):
            raise MalformedError(Code.BAD_ACTION, f"seat must be 0 or 1, not {seat!r}")
        raise IllegalActionError(Code.NOT_YOUR_TURN, f"it is seat {state.turn}'s turn")
    handler = _BY_PHASE[phase].get(type(action))
    if handler is None:
        if not isinstance(action, ACTION_TYPES):
            raise MalformedError(Code.BAD_ACTION, f"{action!r} is not an action")
        allowed = ", ".join(t.__name__ for t in PHASE_ACTIONS[state.phase])
        raise IllegalActionError(
            Code.WRONG_PHASE,
            f"{type(action).__name__} is not allowed in phase {state.phase.name} "
            f"(allowed: {allowed})",
        )
    if type(action) in _WITH_FIELDS:
        _check_fields(action)
    new = handler(state, seat, action)
    # the cap voids a hand only between turns: never a knock or its defence in progress
    if new.phase is _DRAW and len(new.log) >= MAX_ACTIONS_PER_HAND:
        return _end(new, HandResult("cap", None, 0))
    return new


_WITH_FIELDS = frozenset({Discard, Knock, Gin, BigGin, Defend})


def _is_card(x: object) -> bool:
    return type(x) is Card  # a Card is always 0..51 (Card.__new__ checks)


def _check_fields(action: Action) -> None:
    """``MalformedError`` unless every card in ``action`` is a ``Card``, its melds are
    ``Meld`` records of cards and its layoffs (card, meld index) pairs: hand-built Python
    actions (in-process bots) are checked as strictly as ones read off the wire."""
    cards: list[object] = []
    melds: object = None
    if isinstance(action, Discard):
        cards.append(action.card)
    elif isinstance(action, Knock | Gin):
        cards.append(action.card)
        melds = action.melds
    elif isinstance(action, BigGin):
        melds = action.melds
    elif isinstance(action, Defend):
        melds = action.melds
        if not isinstance(action.layoffs, tuple | list):
            raise MalformedError(Code.BAD_LAYOFF, f"layoffs must be (card, meld index) pairs, "
                                 f"not {action.layoffs!r}")
        for item in action.layoffs:
            ok = isinstance(item, tuple) and len(item) == 2 and type(item[1]) is int
            if not ok:
                raise MalformedError(Code.BAD_LAYOFF, f"a layoff is (card, meld index), not "
                                     f"{item!r}")
            cards.append(item[0])
    if melds is not None:
        if not isinstance(melds, tuple | list):
            raise MalformedError(Code.NOT_A_MELD, f"melds must be a sequence, not {melds!r}")
        for meld in melds:
            if not isinstance(meld, Meld) or not isinstance(meld.cards, tuple | list):
                raise MalformedError(Code.NOT_A_MELD, f"{meld!r} is not a Meld")
            cards.extend(meld.cards)
    for card in cards:
        if not _is_card(card):
            raise MalformedError(Code.BAD_CARD, f"{card!r} is not a card (use Card objects, "
                                 "e.g. parse_card('TD'))")


_INDEX = {name: i for i, name in enumerate(HandState._fields)}
_new_state: Callable[[type[HandState], list[Any]], HandState] = tuple.__new__
(_I_HANDS, _I_STOCK_POS, _I_DISCARD, _I_PHASE, _I_TURN, _I_TAKEN, _I_STOCK_ONLY, _I_LOG,
 _I_PUBLIC, _I_KNOWN) = (
    _INDEX[n] for n in ("hands", "stock_pos", "discard", "phase", "turn", "taken", "stock_only",
                        "log", "public", "known")
)


def _evolve(state: HandState, changes: dict[str, object]) -> HandState:
    """A copy of ``state`` with ``changes`` (a state is never mutated once made)."""
    items: list[object] = list(state)
    for name, value in changes.items():
        items[_INDEX[name]] = value
    return _new_state(HandState, items)


def _logged(state: HandState, seat: int, action: Action, **changes: object) -> HandState:
    changes["log"] = (*state.log, (seat, action))
    changes["public"] = (*state.public, PublicEvent(seat, _KIND[type(action)]))
    return _evolve(state, changes)


def _end(state: HandState, result: HandResult) -> HandState:
    return _evolve(state, {"phase": _HAND_OVER, "result": result})


def _take_upcard(state: HandState, seat: int, action: Action) -> HandState:
    card = state.discard[-1]
    hands = _with(state.hands, seat, state.hands[seat] | 1 << card)
    known = _with(state.known, seat, state.known[seat] | 1 << card)
    return _evolve(state, {
        "hands": hands, "discard": state.discard[:-1], "taken": card, "phase": _DISCARD,
        "known": known, "log": (*state.log, (seat, action)),
        "public": (*state.public, PublicEvent(seat, "take_upcard", card)),
    })


def _pass_upcard(state: HandState, seat: int, action: Action) -> HandState:
    if state.upcard_passes == 0:
        return _logged(state, seat, action, upcard_passes=1, turn=state.dealer)
    return _logged(state, seat, action, upcard_passes=2, turn=1 - state.dealer,
                   phase=_DRAW, stock_only=True)


def _draw_stock(state: HandState, seat: int, action: Action) -> HandState:
    if state.stock_pos >= 52 - WALL:
        raise IllegalActionError(Code.EMPTY_STOCK, "the last two stock cards are never drawn")
    card = state.deck[state.stock_pos]
    items = list(state)
    items[_I_HANDS] = _with(state.hands, seat, state.hands[seat] | 1 << card)
    items[_I_STOCK_POS] = state.stock_pos + 1
    items[_I_TAKEN] = None
    items[_I_STOCK_ONLY] = False
    items[_I_PHASE] = _DISCARD
    items[_I_LOG] = (*state.log, (seat, action))
    items[_I_PUBLIC] = (*state.public, PublicEvent(seat, "draw_stock"))
    return _new_state(HandState, items)


def _draw_discard(state: HandState, seat: int, action: Action) -> HandState:
    if state.stock_only:
        raise IllegalActionError(
            Code.WRONG_PHASE, "both players passed the upcard: the non-dealer draws from the stock"
        )
    if not state.discard:
        raise IllegalActionError(Code.EMPTY_DISCARD, "the discard pile is empty")
    card = state.discard[-1]
    hands = _with(state.hands, seat, state.hands[seat] | 1 << card)
    if state.phase is _WALL_OFFER:
        if DrawDiscard() not in legal_actions(state, seat):
            raise IllegalActionError(
                Code.WRONG_PHASE, f"at the wall {card} may be taken only to knock or gin, "
                "and no knock or gin is possible with it",
            )
        phase = _WALL_DISCARD
    else:
        phase = _DISCARD
    items = list(state)
    items[_I_HANDS] = hands
    items[_I_DISCARD] = state.discard[:-1]
    items[_I_TAKEN] = card
    items[_I_PHASE] = phase
    items[_I_LOG] = (*state.log, (seat, action))
    items[_I_PUBLIC] = (*state.public, PublicEvent(seat, "draw_discard", card))
    items[_I_KNOWN] = _with(state.known, seat, state.known[seat] | 1 << card)
    return _new_state(HandState, items)


def _check_discard(state: HandState, seat: int, card: Card, back_ok: bool) -> int:
    mask = state.hands[seat]
    if not mask >> card & 1:
        raise IllegalActionError(Code.NOT_HELD, f"seat {seat} does not hold {card}")
    if card == state.taken and not back_ok:
        raise IllegalActionError(
            Code.TAKEN_CARD_BACK, f"{card} was just taken from the discard pile; discard another"
        )
    return mask & ~(1 << card)


def _discard(state: HandState, seat: int, action: Action) -> HandState:
    card = action.card  # type: ignore[union-attr]
    rest = _check_discard(state, seat, card, state.config.allow_take_back)
    items = list(state)
    items[_I_HANDS] = _with(state.hands, seat, rest)
    items[_I_DISCARD] = (*state.discard, card)
    items[_I_TAKEN] = None
    items[_I_TURN] = 1 - seat
    items[_I_PHASE] = _DRAW
    items[_I_LOG] = (*state.log, (seat, action))
    items[_I_PUBLIC] = (*state.public, PublicEvent(seat, "discard", card))
    if state.known[seat] >> card & 1:
        items[_I_KNOWN] = _with(state.known, seat, state.known[seat] & ~(1 << card))
    new: HandState = _new_state(HandState, items)
    if state.stock_pos >= 52 - WALL:
        if state.config.wall_take_discard:
            return _evolve(new, {"phase": _WALL_OFFER})
        return _end(new, HandResult("wall", None, 0))
    return new


def _check_melds(
    melds: Sequence[Meld], mask: int, runs_only: bool, who: str
) -> tuple[int, tuple[Meld, ...]]:
    """Union mask of ``melds`` after checking each is a meld of held cards, all disjoint."""
    used = 0
    checked: list[Meld] = []
    for meld in melds:
        if not isinstance(meld, Meld):
            raise MalformedError(Code.NOT_A_MELD, f"{meld!r} is not a Meld")
        m = meld.mask
        kind = meld_kind(m, runs_only=runs_only)
        if kind is None:
            raise MalformedError(Code.NOT_A_MELD, f"{meld} is not a meld under these rules")
        if m & ~mask:
            missing = " ".join(str(c) for c in from_mask(m & ~mask))
            raise IllegalActionError(Code.NOT_HELD, f"{who} does not hold {missing}")
        if m & used:
            twice = " ".join(str(c) for c in from_mask(m & used))
            raise MalformedError(Code.DUPLICATE_CARD, f"{twice} used in two melds")
        used |= m
        checked.append(Meld(from_mask(m), kind == "run"))
    return used, tuple(checked)


def _spread(state: HandState, mask: int, melds: tuple[Meld, ...] | None, who: str
            ) -> tuple[tuple[Meld, ...], int]:
    """(melds, deadwood mask) for a knocker's spread of ``mask``."""
    runs_only = state.config.runs_only
    if melds is None:
        best = _best(mask, runs_only)[1]
        return tuple(Meld(from_mask(m), meld_kind(m) == "run") for m in best), _dw_mask(mask, best)
    used, checked = _check_melds(melds, mask, runs_only, who)
    return checked, mask & ~used


def _dw_mask(mask: int, melds: Iterable[int]) -> int:
    for m in melds:
        mask &= ~m
    return mask


def _go_out(state: HandState, seat: int, action: Action) -> HandState:
    assert isinstance(action, Knock | Gin)
    back_ok = (state.config.wall_take_back if state.phase is _WALL_DISCARD
               else state.config.allow_take_back)
    rest = _check_discard(state, seat, action.card, back_ok)
    melds, dw_mask = _spread(state, rest, action.melds, f"seat {seat}")
    dw = mask_value(dw_mask)
    if isinstance(action, Gin) and dw:
        best = _best(rest, state.config.runs_only)[0]
        hint = "" if action.melds is None else f" (best arrangement leaves {best})"
        raise IllegalActionError(Code.NOT_GIN, f"{dw} deadwood is not gin{hint}")
    if dw > state.knock_limit:
        limit = "gin only" if state.knock_limit == 0 else f"the limit is {state.knock_limit}"
        raise IllegalActionError(
            Code.OVER_KNOCK_LIMIT, f"deadwood {dw} after discarding {action.card}: {limit}"
        )
    info = KnockInfo(seat, action.card, melds, from_mask(dw_mask), dw,
                     "gin" if dw == 0 else "knock")
    hands = _with(state.hands, seat, rest)
    known = _with(state.known, seat, state.known[seat] & ~(1 << action.card))
    return _logged(state, seat, action, hands=hands, knock=info, taken=None, known=known,
                   turn=1 - seat, phase=_DEFEND)


def _big_gin(state: HandState, seat: int, action: Action) -> HandState:
    assert isinstance(action, BigGin)
    if not state.config.big_gin:
        raise IllegalActionError(Code.VARIANT_OFF, "big gin is not played under these rules")
    if not state.log:
        raise IllegalActionError(Code.WRONG_PHASE, "big gin is made after drawing (seed 003); "
                                 "the 11-card deal's first turn draws nothing")
    mask = state.hands[seat]
    melds, dw_mask = _spread(state, mask, action.melds, f"seat {seat}")
    if dw_mask:
        raise IllegalActionError(
            Code.NOT_GIN, f"big gin needs all 11 cards melded; {mask_value(dw_mask)} deadwood"
        )
    info = KnockInfo(seat, None, melds, (), 0, "big_gin")
    return _logged(state, seat, action, knock=info, taken=None, turn=1 - seat,
                   phase=_DEFEND)


def _defend(state: HandState, seat: int, action: Action) -> HandState:
    assert isinstance(action, Defend) and state.knock is not None
    knock = state.knock
    cfg = state.config
    mask = state.hands[seat]
    targets = [(m.mask, m.is_run) for m in knock.melds]
    may_lay_off = knock.kind == "knock"
    if action.melds is None:
        if action.layoffs:
            raise MalformedError(Code.BAD_LAYOFF, "layoffs need the defender's melds too")
        dw, own_masks, plan = best_defence(mask, targets, cfg.runs_only, may_lay_off,
                                           with_bonus=cfg.sequence_bonuses)
        own = tuple(Meld(from_mask(m), meld_kind(m) == "run") for m in own_masks)
        layoffs = tuple((CARDS[c], i) for c, i in plan)
        laid = 0
        for c, _ in plan:
            laid |= 1 << c
        dw_mask = _dw_mask(mask, own_masks) & ~laid
    else:
        used, own = _check_melds(action.melds, mask, cfg.runs_only, f"seat {seat}")
        if action.layoffs and not may_lay_off:
            raise IllegalActionError(Code.BAD_LAYOFF, f"no layoffs on a {knock.kind}")
        current = [m for m, _ in targets]
        free = mask & ~used
        for card, index in action.layoffs:
            if not 0 <= index < len(targets):
                raise MalformedError(
                    Code.BAD_LAYOFF, f"meld index {index} out of range 0..{len(targets) - 1}"
                )
            if not free >> card & 1:
                raise IllegalActionError(
                    Code.NOT_HELD, f"{card} is not a free card of seat {seat} to lay off"
                )
            if not _extends(current[index], targets[index][1], card):
                shown = " ".join(str(c) for c in from_mask(current[index]))
                raise IllegalActionError(Code.BAD_LAYOFF, f"{card} does not extend {shown}")
            current[index] |= 1 << card
            free &= ~(1 << card)
        layoffs = tuple((CARDS[c], i) for c, i in action.layoffs)
        dw_mask = free
    dw = mask_value(dw_mask)
    result = _score(state, knock, seat, own, dw, from_mask(dw_mask), layoffs)
    return _end(_logged(state, seat, action), result)


def _score(
    state: HandState, knock: KnockInfo, defender: int, own: tuple[Meld, ...], dw: int,
    dw_cards: tuple[Card, ...], layoffs: tuple[tuple[Card, int], ...],
) -> HandResult:
    cfg = state.config
    k = knock.knocker
    kd = knock.deadwood
    if knock.kind == "gin":
        kind, winner, points = "gin", k, cfg.gin_bonus + dw
    elif knock.kind == "big_gin":
        kind, winner, points = "big_gin", k, cfg.big_gin_bonus + dw
    elif kd < dw:
        base = dw if cfg.knock_score is KnockScore.DEFENDER_DEADWOOD else dw - kd
        kind, winner, points = "knock", k, base
    else:
        kind, winner, points = "undercut", defender, kd - dw + cfg.undercut_bonus
    melds_by_seat = [(), ()]  # type: list[tuple[Meld, ...]]
    melds_by_seat[k] = knock.melds
    melds_by_seat[defender] = own
    bonus = sequence_bonus(m.mask for m in melds_by_seat[winner]) if cfg.sequence_bonuses else 0
    points = (points + bonus) * state.multiplier
    deadwood = [0, 0]
    deadwood[k], deadwood[defender] = kd, dw
    cards: list[tuple[Card, ...]] = [(), ()]
    cards[k], cards[defender] = knock.deadwood_cards, dw_cards
    return HandResult(
        kind=kind, winner=winner, points=points, knocker=k,
        deadwood=(deadwood[0], deadwood[1]), melds=(melds_by_seat[0], melds_by_seat[1]),
        deadwood_cards=(cards[0], cards[1]), layoffs=layoffs, multiplier=state.multiplier,
        bonus=bonus * state.multiplier,
    )


def _with(pair: tuple[int, int], seat: int, value: int) -> tuple[int, int]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


_Handler = Callable[[HandState, int, Action], HandState]
_HANDLERS: dict[tuple[Phase, type], _Handler] = {
    (_UPCARD_OFFER, TakeUpcard): _take_upcard,
    (_UPCARD_OFFER, Pass): _pass_upcard,
    (_DRAW, DrawStock): _draw_stock,
    (_DRAW, DrawDiscard): _draw_discard,
    (_DISCARD, Discard): _discard,
    (_DISCARD, Knock): _go_out,
    (_DISCARD, Gin): _go_out,
    (_DISCARD, BigGin): _big_gin,
    (_WALL_OFFER, DrawDiscard): _draw_discard,
    (_WALL_OFFER, Pass): lambda s, seat, a: _end(_logged(s, seat, a),
                                                     HandResult("wall", None, 0)),
    (_WALL_DISCARD, Knock): _go_out,
    (_WALL_DISCARD, Gin): _go_out,
    (_WALL_DISCARD, BigGin): _big_gin,
    (_DEFEND, Defend): _defend,
}
assert {(p, t) for p, ts in PHASE_ACTIONS.items() for t in ts} == set(_HANDLERS)
# The same table indexed by phase number (hashing an enum member costs a Python call).
_BY_PHASE: tuple[dict[type, _Handler], ...] = tuple(
    {t: h for (p, t), h in _HANDLERS.items() if p == n} for n in range(len(Phase) + 1)
)
