"""Translate between the rules' records and the gin_arena.v1 messages, both ways.

The one place protobuf meets the rules' records and the bot-facing records of
``gin_arena_core.protocol.records``: the server reads every incoming action here and builds its
messages from these pieces (``arena.server.wire`` puts them together from the match's
messages); the SDK reads what it is sent with the reverse direction, into the same records
an in-process bot is given. Reading raises ``MalformedError`` with a message naming the
bad field, never anything else. Imports the rules and protobuf only: no match layer, no
trio, no structlog.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gin_arena_core.protocol import pb
from gin_arena_core.protocol.records import (
    BotEvent,
    MatchOutcome,
    MatchStarted,
    MoveDefaulted,
    Notice,
    OpponentActed,
    TimeControl,
    clean_fault,
)
from gin_arena_core.rules import (
    CARDS,
    Action,
    BigGin,
    Card,
    Code,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    HandResult,
    Knock,
    KnockInfo,
    MalformedError,
    Meld,
    Pass,
    Phase,
    PlayerView,
    PublicEvent,
    RulesConfig,
    Sheet,
    TakeUpcard,
    parse_card,
)
from gin_arena_core.rules.cards import NAMES

# ---------------------------------------------------------------- cards and melds

_NAMES = NAMES  # index -> "TD" (a Card indexes it directly)


def _cards(items: Iterable[Card]) -> list[str]:
    return [_NAMES[c] for c in items]


_BY_NAME = {str(c): c for c in CARDS}


def _read_cards(items: Iterable[str], where: str) -> tuple[Card, ...]:
    get = _BY_NAME.get
    out = tuple(get(text) for text in items)
    if None in out:  # the rare path: say which one and why
        for text in items:
            try:
                parse_card(text)
            except MalformedError as e:
                raise MalformedError(Code.BAD_CARD, f"{where}: {e.message}") from None
    return out  # type: ignore[return-value]


def _read_card(text: str, where: str) -> Card:
    if not text:
        raise MalformedError(Code.BAD_CARD, f"{where}: no card given")
    return _read_cards([text], where)[0]


def meld_to_pb(meld: Meld) -> pb.Meld:
    return pb.Meld(cards=_cards(meld.cards))


MAX_MELDS = 4
"""Melds one action may carry: eleven cards make at most three; one more is still named
a mistake rather than refused as a flood."""
MAX_MELD_CARDS = 11
MAX_LAYOFFS = 11


def _read_melds(melds: Sequence[pb.Meld], where: str, runs_only: bool) -> tuple[Meld, ...]:
    if len(melds) > MAX_MELDS:
        raise MalformedError(Code.BAD_ACTION, f"{where}: {len(melds)} melds; a hand holds at "
                             f"most three (the arena reads at most {MAX_MELDS})")
    for i, m in enumerate(melds):
        if len(m.cards) > MAX_MELD_CARDS:
            raise MalformedError(Code.NOT_A_MELD, f"{where}[{i}]: {len(m.cards)} cards; a meld "
                                 f"has 3 to {MAX_MELD_CARDS}")
    out = []
    for i, m in enumerate(melds):
        cards = _read_cards(m.cards, f"{where}[{i}]")
        try:
            out.append(Meld.of(cards, runs_only=runs_only))
        except MalformedError as e:
            raise MalformedError(e.code, f"{where}[{i}]: {e.message}") from None
    return tuple(out)


# ---------------------------------------------------------------- actions

_E = pb.Empty


_PB_CACHE: dict[Action, pb.Action] = {}


def action_to_pb(action: Action) -> pb.Action:
    """The protobuf form of ``action`` (plain actions are built once and reused)."""
    hit = _PB_CACHE.get(action)
    if hit is None:
        hit = _build_action(action)
        if len(_PB_CACHE) < 4096 and not isinstance(action, Defend | BigGin):
            _PB_CACHE[action] = hit
    return hit


def _build_action(action: Action) -> pb.Action:
    if isinstance(action, TakeUpcard):
        return pb.Action(take_upcard=_E())
    if isinstance(action, Pass):
        return pb.Action(**{"pass": _E()})  # "pass" is a Python keyword
    if isinstance(action, DrawStock):
        return pb.Action(draw_stock=_E())
    if isinstance(action, DrawDiscard):
        return pb.Action(draw_discard=_E())
    if isinstance(action, Discard):
        return pb.Action(discard=pb.CardMove(card=str(action.card)))
    if isinstance(action, Knock | Gin):
        msg = pb.Knock(discard=str(action.card),
                       melds=[meld_to_pb(m) for m in action.melds or ()])
        return pb.Action(gin=msg) if isinstance(action, Gin) else pb.Action(knock=msg)
    if isinstance(action, BigGin):
        return pb.Action(big_gin=pb.BigGin(melds=[meld_to_pb(m) for m in action.melds or ()]))
    if isinstance(action, Defend):
        if action.melds is None:
            return pb.Action(defend=pb.Defend(best=True))
        return pb.Action(defend=pb.Defend(
            best=False, melds=[meld_to_pb(m) for m in action.melds],
            layoffs=[pb.Layoff(card=str(c), meld_index=i) for c, i in action.layoffs],
        ))
    raise TypeError(f"not an action: {action!r}")


_FROM_CACHE: dict[bytes, Action] = {}


def legal_from_pb(items: Sequence[pb.Action], *, runs_only: bool = False) -> tuple[Action, ...]:
    """The legal list of a request (plain actions are decoded once and reused)."""
    out = []
    for msg in items:
        key = msg.SerializeToString()
        hit = _FROM_CACHE.get(key)
        if hit is None:
            hit = action_from_pb(msg, runs_only=runs_only)
            if len(_FROM_CACHE) < 4096 and not isinstance(hit, Defend | BigGin):
                _FROM_CACHE[key] = hit
        out.append(hit)
    return tuple(out)


_PLAIN: dict[str | None, Action] = {"take_upcard": TakeUpcard(), "pass": Pass(),
                                    "draw_stock": DrawStock(), "draw_discard": DrawDiscard()}
_DISCARDS = {name: Discard(card) for name, card in _BY_NAME.items()}  # actions are immutable


def action_from_pb(msg: pb.Action, *, runs_only: bool = False) -> Action:
    """The action a bot sent; ``MalformedError`` naming the problem if it cannot be read."""
    kind = msg.WhichOneof("kind")
    plain = _PLAIN.get(kind)  # the moves of most decisions, read once per answer
    if plain is not None:
        return plain
    if kind == "discard":
        hit = _DISCARDS.get(msg.discard.card)
        if hit is not None:
            return hit
    if kind is None:
        raise MalformedError(Code.BAD_ACTION, "empty action: set one of take_upcard, pass, "
                             "draw_stock, draw_discard, discard, knock, gin, big_gin, defend")
    if kind == "take_upcard":
        return TakeUpcard()
    if kind == "pass":
        return Pass()
    if kind == "draw_stock":
        return DrawStock()
    if kind == "draw_discard":
        return DrawDiscard()
    if kind == "discard":
        return Discard(_read_card(msg.discard.card, "discard.card"))
    if kind in ("knock", "gin"):
        k = msg.knock if kind == "knock" else msg.gin
        card = _read_card(k.discard, f"{kind}.discard")
        melds = _read_melds(k.melds, f"{kind}.melds", runs_only) if k.melds else None
        return Gin(card, melds) if kind == "gin" else Knock(card, melds)
    if kind == "big_gin":
        bg = msg.big_gin
        return BigGin(_read_melds(bg.melds, "big_gin.melds", runs_only) if bg.melds else None)
    d = msg.defend
    if d.best:
        return Defend()
    melds = _read_melds(d.melds, "defend.melds", runs_only)
    if len(d.layoffs) > MAX_LAYOFFS:
        raise MalformedError(Code.BAD_LAYOFF, f"defend.layoffs: {len(d.layoffs)} layoffs; a "
                             f"hand has at most {MAX_LAYOFFS} cards to lay off")
    layoffs = tuple((_read_card(lo.card, f"defend.layoffs[{i}].card"), int(lo.meld_index))
                    for i, lo in enumerate(d.layoffs))
    return Defend(melds, layoffs)


# ---------------------------------------------------------------- views


def public_event_to_pb(e: PublicEvent) -> pb.PublicAction:
    return pb.PublicAction(seat=e.seat, action=_kind_action(e.kind),
                           card=str(e.card) if e.card is not None else "")


_LINES: dict[PublicEvent, str] = {}
_EVENTS: dict[str, PublicEvent] = {}  # both directions memoized: a few hundred distinct lines


def _history_line(e: PublicEvent) -> str:
    line = _LINES.get(e)
    if line is None:
        line = f"{e.seat} {e.kind}" if e.card is None else f"{e.seat} {e.kind} {e.card}"
        _LINES[e] = line
    return line


_KINDS = frozenset(("take_upcard", "pass", "draw_stock", "draw_discard", "discard", "knock",
                    "gin", "big_gin", "defend"))


def _read_history(line: str) -> PublicEvent:
    hit = _EVENTS.get(line)
    if hit is not None:
        return hit
    parts = line.split()
    if len(parts) not in (2, 3) or parts[0] not in ("0", "1") or parts[1] not in _KINDS:
        raise MalformedError(Code.BAD_ACTION, f"view.history: cannot read {line!r}")
    card = _read_card(parts[2], "view.history") if len(parts) == 3 else None
    event = PublicEvent(int(parts[0]), parts[1], card)
    if len(_EVENTS) < 4096:
        _EVENTS[line] = event
    return event


def _kind_action(kind: str) -> pb.Action:
    if kind in ("knock", "gin"):
        return pb.Action(**{kind: pb.Knock()})
    if kind == "big_gin":
        return pb.Action(big_gin=pb.BigGin())
    if kind == "defend":
        return pb.Action(defend=pb.Defend())
    if kind == "discard":
        return pb.Action(discard=pb.CardMove())
    return pb.Action(**{kind: _E()})


def _revealed(seat: int, melds: Iterable[Meld], deadwood: Iterable[Card], value: int,
              layoffs: Iterable[tuple[Card, int]] = ()) -> pb.RevealedHand:
    return pb.RevealedHand(
        seat=seat, melds=[meld_to_pb(m) for m in melds], deadwood=_cards(deadwood),
        deadwood_value=value, layoffs=[pb.Layoff(card=str(c), meld_index=i) for c, i in layoffs],
    )


_PHASE_NAMES = {p: f"PHASE_{p.name}" for p in Phase}  # the proto enum's names


def view_to_pb(view: PlayerView) -> pb.View:
    """A seat's view as sent to it. Built from ``observe`` only (see gin_arena_core.rules.view)."""
    msg = pb.View()
    fill_view(msg, view)
    return msg


def fill_view(msg: pb.View, view: PlayerView) -> None:
    """Write ``view`` into the empty ``msg`` field by field: filling a message in place
    costs about a third less than building it from keywords and copying it into its
    parent (the request is built once per decision)."""
    seat = view.seat if view.seat is not None else 0
    msg.seat = seat
    msg.phase = _PHASE_NAMES[view.phase]  # type: ignore[assignment]
    msg.turn = view.turn
    msg.dealer = view.dealer
    msg.hand.extend([_NAMES[c] for c in view.hand])
    msg.opponent_hand_size = view.hand_sizes[1 - seat]
    if view.opponent_known:
        msg.opponent_known.extend([_NAMES[c] for c in view.opponent_known])
    if view.known[seat]:
        msg.own_known.extend([_NAMES[c] for c in view.known[seat]])
    msg.discard_pile.extend([_NAMES[c] for c in view.discard_pile])
    msg.stock_count = view.stock_count
    msg.knock_limit = view.knock_limit
    if view.upcard is not None:
        msg.upcard = _NAMES[view.upcard]
    msg.history.extend([_history_line(e) for e in view.history])
    if view.knock is not None:
        k = view.knock
        msg.revealed.append(_revealed(k.knocker, k.melds, k.deadwood_cards, k.deadwood))
    msg.scores.extend(view.scores)
    msg.hand_number = view.hand_number
    if view.taken is not None:
        msg.taken_discard = _NAMES[view.taken]
    msg.multiplier = view.multiplier
    msg.sheets.extend(_sheets_to_pb(view.sheets))


_SHEETS: dict[tuple[Sheet, ...], list[pb.ScoreSheet]] = {}  # they change once a hand


def _sheets_to_pb(sheets: tuple[Sheet, ...]) -> list[pb.ScoreSheet]:
    hit = _SHEETS.get(sheets)
    if hit is None:
        if len(_SHEETS) >= 4096:
            _SHEETS.clear()
        hit = _SHEETS[sheets] = [
            pb.ScoreSheet(points=list(s.points), hands_won=list(s.wins),
                          extra_boxes=list(s.extra_boxes),
                          winner=-1 if s.winner is None else s.winner)
            for s in sheets]
    return hit


def _kind_of(msg: pb.Action) -> str:
    kind = msg.WhichOneof("kind")
    return kind or "unknown"


def view_from_pb(msg: pb.View, legal: Sequence[pb.Action], *, runs_only: bool = False
                 ) -> PlayerView:
    """The SDK's typed view of a request (the inverse of ``view_to_pb``)."""
    seat = msg.seat
    hand = _read_cards(msg.hand, "view.hand")
    opp_known = _read_cards(msg.opponent_known, "view.opponent_known")
    own_known = _read_cards(msg.own_known, "view.own_known")
    history = tuple(_read_history(line) for line in msg.history)
    knock = None
    if msg.revealed:
        r = msg.revealed[0]
        melds = _read_melds(r.melds, "view.revealed.melds", runs_only)
        kind = next((e.kind for e in reversed(history)
                     if e.kind in ("knock", "gin", "big_gin")), "knock")
        knock = KnockInfo(r.seat, None, melds, _read_cards(r.deadwood, "view.revealed.deadwood"),
                          r.deadwood_value, kind)
    sizes = [0, 0]
    sizes[seat], sizes[1 - seat] = len(hand), msg.opponent_hand_size
    known: list[tuple[Card, ...]] = [(), ()]
    known[seat], known[1 - seat] = own_known, opp_known
    return PlayerView(
        seat=seat, phase=Phase(msg.phase), turn=msg.turn, dealer=msg.dealer, hand=hand,
        hand_sizes=(sizes[0], sizes[1]), opponent_known=opp_known, known=(known[0], known[1]),
        discard_pile=_read_cards(msg.discard_pile, "view.discard_pile"),
        stock_count=msg.stock_count, knock_limit=msg.knock_limit,
        upcard=_read_card(msg.upcard, "view.upcard") if msg.upcard else None,
        multiplier=msg.multiplier or 1,
        taken=_read_card(msg.taken_discard, "view.taken") if msg.taken_discard else None,
        history=history, knock=knock, result=None,
        legal=legal_from_pb(legal, runs_only=runs_only),
        scores=(msg.scores[0], msg.scores[1]) if len(msg.scores) == 2 else (0, 0),
        hand_number=msg.hand_number,
        sheets=tuple(_read_sheet(s) for s in msg.sheets),
    )


def _read_sheet(msg: pb.ScoreSheet) -> Sheet:
    def pair(values: Sequence[int], name: str) -> tuple[int, int]:
        if len(values) != 2:
            raise MalformedError(Code.BAD_ACTION, f"view.sheets.{name}: two values, one a seat")
        return (int(values[0]), int(values[1]))

    return Sheet(pair(msg.points, "points"), pair(msg.hands_won, "hands_won"),
                 pair(msg.extra_boxes, "extra_boxes"), None if msg.winner < 0 else msg.winner)


# ---------------------------------------------------------------- results


def hand_result_to_pb(number: int, result: HandResult, scores: tuple[int, int]
                      ) -> pb.HandResult:
    hands = [
        _revealed(s, result.melds[s], result.deadwood_cards[s], result.deadwood[s],
                  result.layoffs if result.knocker is not None and s != result.knocker else ())
        for s in (0, 1)
    ] if result.winner is not None else []
    return pb.HandResult(hand_number=number, winner=-1 if result.winner is None
                         else result.winner, kind=result.kind, points=result.points,
                         hands=hands, scores=list(scores), multiplier=result.multiplier,
                         bonus=result.bonus)


def hand_result_from_pb(msg: pb.HandResult, *, runs_only: bool = False) -> HandResult:
    melds: list[tuple[Meld, ...]] = [(), ()]
    dw_cards: list[tuple[Card, ...]] = [(), ()]
    dw = [0, 0]
    layoffs: tuple[tuple[Card, int], ...] = ()
    for h in msg.hands:
        s = h.seat
        melds[s] = _read_melds(h.melds, "hand_result.melds", runs_only)
        dw_cards[s] = _read_cards(h.deadwood, "hand_result.deadwood")
        dw[s] = h.deadwood_value
        if h.layoffs:
            layoffs = tuple((_read_card(lo.card, "layoff"), lo.meld_index) for lo in h.layoffs)
    winner = None if msg.winner < 0 else msg.winner
    knocker = None
    if winner is not None:
        knocker = winner if msg.kind != "undercut" else 1 - winner
    return HandResult(msg.kind, winner, msg.points, knocker, (dw[0], dw[1]),
                      (melds[0], melds[1]), (dw_cards[0], dw_cards[1]), layoffs,
                      msg.multiplier or 1, msg.bonus)


def time_control_to_pb(tc: TimeControl) -> pb.TimeControl:
    return pb.TimeControl(
        hello_timeout_ms=tc.hello_timeout_ms, decision_ms=tc.decision_ms, bank_ms=tc.bank_ms,
        margin_ms=tc.margin_ms, max_strikes=tc.max_strikes, max_rejections=tc.max_rejections,
        on_illegal=tc.on_illegal, reconnect_grace_ms=tc.reconnect_grace_ms,
    )


def time_control_from_pb(msg: pb.TimeControl) -> TimeControl:
    try:
        return TimeControl(
            hello_timeout_ms=msg.hello_timeout_ms, decision_ms=msg.decision_ms,
            bank_ms=msg.bank_ms, margin_ms=msg.margin_ms, max_strikes=msg.max_strikes,
            max_rejections=msg.max_rejections, on_illegal=msg.on_illegal or "default",
            reconnect_grace_ms=msg.reconnect_grace_ms)
    except ValueError as e:
        raise MalformedError(Code.BAD_ACTION, f"match_start.time_control: {e}") from None


def match_started_from_pb(msg: pb.MatchStart) -> MatchStarted:
    """What ``on_match_start`` is given, from the MatchStart message."""
    try:
        rules = RulesConfig.from_json(msg.rules_json)
    except MalformedError as e:
        raise MalformedError(e.code, f"match_start.rules_json: {e.message}") from None
    return MatchStarted(msg.match_id, msg.seat, rules, time_control_from_pb(msg.time_control),
                        msg.opponent_name)


def _public_event_from_pb(msg: pb.PublicAction, where: str) -> PublicEvent:
    kind = msg.action.WhichOneof("kind")
    if kind is None or msg.seat not in (0, 1):
        raise MalformedError(Code.BAD_ACTION, f"{where}: no seat or no kind of move")
    return PublicEvent(msg.seat, kind, _read_card(msg.card, f"{where}.card") if msg.card
                       else None)


def bot_event_from_pb(msg: pb.Event, *, runs_only: bool = False) -> BotEvent | None:
    """What ``on_event`` is given for an Event (None for a hand result, which goes to
    ``on_hand_end`` instead)."""
    kind = msg.WhichOneof("kind")
    if kind == "opponent_action":
        return OpponentActed(_public_event_from_pb(msg.opponent_action, "opponent_action"))
    if kind == "own_action_defaulted":
        own = msg.own_action_defaulted
        return MoveDefaulted(action_from_pb(own.action, runs_only=runs_only), own.reason,
                             _public_event_from_pb(own, "own_action_defaulted"))
    if kind == "notice":
        return Notice(msg.notice)
    return None


def outcome_from_pb(msg: pb.MatchEnd) -> MatchOutcome:
    """What ``on_match_end`` is given."""
    scores = (msg.scores[0], msg.scores[1]) if len(msg.scores) == 2 else (0, 0)
    return MatchOutcome(msg.match_id, None if msg.winner < 0 else msg.winner, scores,
                        msg.reason, None if msg.blamed_seat < 0 else msg.blamed_seat,
                        msg.detail)


def bot_error_reply(request_id: int, error: str) -> pb.BotMessage:
    """The answer of a bot whose code failed to produce a move (see ActionReply.error)."""
    return pb.BotMessage(action=pb.ActionReply(request_id=request_id, error=clean_fault(error)))


def bot_error_report(error: str) -> pb.BotMessage:
    """A bot error outside a decision (see BotError)."""
    return pb.BotMessage(error=pb.BotError(message=clean_fault(error)))


# ---------------------------------------------------------------- encoding
#
# A decision request is built for every decision, and building it as a protobuf message
# field by field costs more than the rest of the server's work on it. These functions
# write the same bytes directly (the wire format of proto3: fields in number order,
# defaults left out, packed repeated numbers), from parts encoded once and reused: a card
# in a given field, a history line, a legal move. ``tests/test_convert.py`` pins them to
# ``SerializeToString`` of the messages built above.


def _varint_of(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int32/int64: ten bytes of two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = tuple(_varint_of(n) for n in range(1 << 14))


def varint(n: int) -> bytes:
    """``n`` as a protobuf varint (a negative int32 as ten bytes, as protobuf writes it)."""
    return _SMALL[n] if 0 <= n < 16384 else _varint_of(n)


def _key(field: int, wire_type: int) -> bytes:
    return _varint_of(field << 3 | wire_type)


_KEYS2 = tuple(_key(field, 2) for field in range(32))  # a length-delimited field's key


def length_delimited(field: int, body: bytes) -> bytes:
    """Field ``field`` (1-31) holding ``body`` (a string or an encoded message)."""
    n = len(body)
    return _KEYS2[field] + (_SMALL[n] if n < 16384 else _varint_of(n)) + body


def _card_entries(field: int) -> tuple[bytes, ...]:
    """Each card's name as string field ``field``, indexed by the card."""
    return tuple(length_delimited(field, name.encode()) for name in _NAMES)


_HAND5, _OPP7, _PILE8, _UPCARD11, _TAKEN16, _OWN18 = (
    _card_entries(f) for f in (5, 7, 8, 11, 16, 18))
_PHASE2 = {p: _key(2, 0) + varint(pb.Phase.Value(name)) for p, name in _PHASE_NAMES.items()}


class _LineEntries(dict[PublicEvent, bytes]):
    """A history line as field 12 of a View, by event, encoded on first use."""

    def __missing__(self, e: PublicEvent) -> bytes:
        entry = length_delimited(12, _history_line(e).encode())
        if len(self) < 4096:
            self[e] = entry
        return entry


_HISTORY12 = _LineEntries()
_SCORES14: dict[tuple[int, ...], bytes] = {}  # the packed scores, by scores


class HistoryMemo:
    """The last history one seat was sent and its encoding. A hand's history only grows,
    so the next view's is mostly this one: only the events after it are encoded."""

    __slots__ = ("encoded", "history")

    def __init__(self) -> None:
        self.history: tuple[PublicEvent, ...] = ()
        self.encoded = b""

    def encode(self, history: tuple[PublicEvent, ...]) -> bytes:
        """``history`` as field 12 of a View."""
        n = len(self.history)
        if n and len(history) >= n and history[:n] == self.history:
            encoded = self.encoded + b"".join(map(_HISTORY12.__getitem__, history[n:]))
        else:
            encoded = b"".join(map(_HISTORY12.__getitem__, history))
        self.history, self.encoded = history, encoded
        return encoded
_SHEETS19: dict[tuple[Sheet, ...], bytes] = {}


def _uint(field: int, n: int) -> bytes:
    """A varint field, or nothing for 0 (proto3 leaves defaults out)."""
    return _key(field, 0) + varint(n) if n else b""


def encode_view(view: PlayerView, memo: HistoryMemo | None = None) -> bytes:
    """``view_to_pb(view).SerializeToString()``, written directly; ``memo``: the history
    this seat was sent last (see ``HistoryMemo``)."""
    (seat, phase, turn, dealer, hand, hand_sizes, opponent_known, known, pile, stock_count,
     knock_limit, upcard, multiplier, taken, history, knock, _, _, scores, hand_number,
     sheets) = view
    if seat is None:
        seat = 0
    small = _SMALL
    join = b"".join
    parts = [
        b"\x08" + small[seat] if seat else b"",
        _PHASE2[phase],
        b"\x18" + small[turn] if turn else b"",
        b"\x20" + small[dealer] if dealer else b"",
        join(map(_HAND5.__getitem__, hand)),
        b"\x30" + small[hand_sizes[1 - seat]] if hand_sizes[1 - seat] else b"",
        join(map(_OPP7.__getitem__, opponent_known)) if opponent_known else b"",
        join(map(_PILE8.__getitem__, pile)),
        b"\x48" + small[stock_count] if stock_count else b"",
        b"\x50" + varint(knock_limit) if knock_limit else b"",
        _UPCARD11[upcard] if upcard is not None else b"",
        memo.encode(history) if memo is not None else join(map(_HISTORY12.__getitem__, history)),
    ]
    append = parts.append
    if knock is not None:
        append(length_delimited(13, _revealed(knock.knocker, knock.melds, knock.deadwood_cards,
                                              knock.deadwood).SerializeToString()))
    if scores:
        encoded = _SCORES14.get(scores)
        if encoded is None:
            packed = join(map(varint, scores))
            encoded = b"\x72" + varint(len(packed)) + packed
            if len(_SCORES14) < 4096:
                _SCORES14[scores] = encoded
        append(encoded)
    if hand_number:
        append(b"\x78" + varint(hand_number))
    if taken is not None:
        append(_TAKEN16[taken])
    if multiplier:
        append(b"\x88\x01" + varint(multiplier))
    own = known[seat]
    if own:
        append(join(map(_OWN18.__getitem__, own)))
    if sheets:
        encoded = _SHEETS19.get(sheets)
        if encoded is None:
            if len(_SHEETS19) >= 4096:
                _SHEETS19.clear()
            encoded = _SHEETS19[sheets] = join(
                length_delimited(19, s.SerializeToString()) for s in _sheets_to_pb(sheets))
        append(encoded)
    return join(parts)


class _ActionEntries(dict[Action, bytes]):
    """A move as a repeated Action field (``field``), by action, encoded on first use."""

    def __init__(self, field: int) -> None:
        super().__init__()
        self._field = field

    def __missing__(self, action: Action) -> bytes:
        entry = length_delimited(self._field, action_to_pb(action).SerializeToString())
        if len(self) < 4096 and not isinstance(action, Defend | BigGin):
            self[action] = entry
        return entry


_LEGAL3 = _ActionEntries(3)
_DISCARD3 = tuple(_LEGAL3[Discard(c)] for c in CARDS)  # by card: no dataclass hash


def encode_legal(legal: Iterable[Action]) -> bytes:
    """The legal moves as field 3 of a DecisionRequest (``action_to_pb`` of each)."""
    discards, others = _DISCARD3, _LEGAL3
    return b"".join([discards[a.card] if a.__class__ is Discard else others[a]
                     for a in legal])
