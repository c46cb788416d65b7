"""No bot ever receives a card it may not know, checked on every message over real gRPC.

Two spy bots (SDK ``Bot`` subclasses run by ``gin_arena_sdk.run``) play each other on a real arena
for several matches under several rule sets (over 40 hands). ``gin_arena_sdk.client``'s stub is
wrapped so every ``ServerMessage`` a spy receives is kept, in order. After the matches,
the truth comes from the replay records the arena wrote: the deck of every hand and every
action, re-applied through the rules engine. Each received message is placed at its point
in the hand (a request by the length of its history; events at the end of their hand), and
every string in it (protobuf fields walked recursively, so views, legal moves, events in
requests, hand results and notices alike) must name only cards the spy may know by then:
cards it has held this hand, cards that were face up (upcard, discards, cards taken from
the pile), the knocker's spread once made, and both hands once the hand is over. Anything
else (the opponent's hidden cards, the stock, the knocker's face-down discard) is a leak.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import gin_arena_sdk as sdk
import gin_arena_sdk.client
import grpc
import pytest
import trio
from gin_arena_core.protocol import pb, pb_grpc
from gin_arena_core.rules import (
    CARDS,
    Discard,
    GameState,
    Gin,
    HandState,
    Knock,
    PlayerView,
    RulesConfig,
    apply_action,
    deal_hand,
    min_deadwood,
    new_game,
    parse_action,
)
from gin_arena_core.rules.cards import to_mask
from gin_arena_core.rules.melds import deadwood_after_discard
from gin_arena_sdk import Action, Bot
from google.protobuf.descriptor import FieldDescriptor  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]

from arena.match.driver import MatchDriver
from arena.match.messages import Termination, TimeControl
from arena.match.replay import load_record, write_replay
from arena.server.arena import Arena, start_arena

pytestmark = pytest.mark.timeout(90)

HOST = "127.0.0.1"
TEST_TIMEOUT = 60.0
NAMES = frozenset(str(c) for c in CARDS)
TOKEN = re.compile(r"[0-9A-Za-z]+")
# one match per rule set: the classic rules, Oklahoma (the upcard sets the limit), the
# 11-card deal with a knock deck, a hidden discard pile and taking at the wall, and GRA rules
PRESETS = ("standard", "oklahoma", "knock_deck", "gin20")
MIN_HANDS = 40
PROBE_EVERY = 9


# ------------------------------------------------------------------------------ spies


_local = threading.local()


class _RecordingCall:
    """A Play call's response iterator that keeps every message it yields."""

    def __init__(self, call: Any, sink: list[pb.ServerMessage]) -> None:
        self._call = call
        self._sink = sink

    def __iter__(self) -> Iterator[pb.ServerMessage]:
        return self

    def __next__(self) -> pb.ServerMessage:
        message: pb.ServerMessage = next(self._call)
        self._sink.append(message)
        return message

    def cancel(self) -> bool:
        return bool(self._call.cancel())


class _RecordingStub:
    def __init__(self, channel: grpc.Channel) -> None:
        self._stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        self._sink: list[pb.ServerMessage] = _local.sink  # set by the spy's thread

    def Play(self, requests: Any, **kwargs: Any) -> _RecordingCall:  # the RPC's name
        return _RecordingCall(self._stub.Play(requests, **kwargs), self._sink)


class _RecordingGrpc:
    """Stands in for ``gin_arena_core.protocol.pb_grpc`` inside ``gin_arena_sdk.client`` only."""

    ArenaStub = _RecordingStub


class Spy(Bot):
    """Plays greedy (gin or knock at once, else keep deadwood low) and keeps what it gets.

    Every ``PROBE_EVERY``-th decision it first tries to discard a card it does not hold
    (cycling through the deck, so mostly hidden ones): the refusal it gets is checked too.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.received: list[pb.ServerMessage] = []
        self.probes: dict[str, list[str]] = {}  # match id -> cards it probed, in order
        self._match = ""
        self._decisions = 0

    def on_match_start(self, info: Any) -> None:
        self._match = info.match_id
        self.probes[self._match] = []

    def decide(self, view: PlayerView) -> Action:
        self._decisions += 1
        if self._decisions % PROBE_EVERY == 0:
            step = self._decisions
            while (card := CARDS[step * 7 % 52]) in view.hand:
                step += 1
            self.probes[self._match].append(str(card))
            return Discard(card)
        return super().decide(view)

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Action | None:
        return super().decide(view)

    def _improves(self, view: PlayerView) -> bool:
        top = view.discard_top
        if top is None:
            return False
        after = deadwood_after_discard(to_mask(view.hand) | 1 << top)
        return min(v for c, v in after.items() if c != top) < min_deadwood(view.hand)

    def take_upcard(self, view: PlayerView) -> bool:
        return self._improves(view)

    def draw_discard(self, view: PlayerView) -> bool:
        return self._improves(view)

    def discard(self, view: PlayerView) -> Action:
        outs: list[Action] = [a for a in view.legal if isinstance(a, Gin)]
        outs = outs or [a for a in view.legal if isinstance(a, Knock)]
        if outs:
            return outs[0]
        after = deadwood_after_discard(to_mask(view.hand))
        discards = [a for a in view.legal if isinstance(a, Discard)]
        return min(discards, key=lambda a: (after[a.card], -a.card.value, a.card))

    def run(self, port: int, matches: int) -> int:
        """``gin_arena_sdk.run`` with this thread's messages recorded."""
        _local.sink = self.received
        return sdk.run(self, f"{HOST}:{port}", matches=matches)


# ------------------------------------------------------------------------------ the truth


@dataclass
class HandTruth:
    """One hand as it really went: the state after each action (``states[t]``: t actions)."""

    number: int
    states: list[HandState] = field(default_factory=list)

    def allowed(self, seat: int, t: int, *, hand_over: bool = False) -> set[str]:
        """The cards ``seat`` may know after ``t`` actions (at the end: both hands too)."""
        states = self.states[: t + 1]
        now = states[-1]
        mask = 0
        for state in states:  # every card it has held this hand
            mask |= state.hands[seat]
        known = {str(c) for c in CARDS if mask >> c & 1}
        if now.upcard is not None:
            known.add(str(now.upcard))
        known.update(str(e.card) for e in now.public if e.card is not None)  # face up
        known.update(str(c) for c in now.discard)
        if now.knock is not None:  # the knocker's spread
            known.update(str(c) for m in now.knock.melds for c in m.cards)
            known.update(str(c) for c in now.knock.deadwood_cards)
        if hand_over and now.result is not None:  # both hands, laid out
            r = now.result
            for who in (0, 1):
                known.update(str(c) for m in r.melds[who] for c in m.cards)
                known.update(str(c) for c in r.deadwood_cards[who])
            known.update(str(c) for c, _ in r.layoffs)
        return known


def replay_truth(record: list[dict[str, Any]]) -> list[HandTruth]:
    """Every hand of a match record, re-applied through the engine."""
    head = record[0]
    rules = RulesConfig.from_spec(head["rules"])
    game: GameState = new_game(rules, int(head["first_dealer"]))
    hands: list[HandTruth] = []
    for item in record[1:]:
        if item["type"] == "deal":
            game = deal_hand(game, item["deck"], item.get("knock_card"))
            assert game.hand is not None
            hands.append(HandTruth(game.hand_number, [game.hand]))
        elif item["type"] == "action":
            game = apply_action(game, int(item["seat"]),
                                parse_action(item["action"], runs_only=rules.runs_only))
            assert game.hand is not None
            hands[-1].states.append(game.hand)
    for h in hands:  # one public event per action: a history's length is its position
        assert [len(s.public) for s in h.states] == list(range(len(h.states)))
    return hands


# ------------------------------------------------------------------------------ checking


def strings(message: Message) -> Iterator[str]:
    """Every string anywhere in ``message`` (set fields, recursively)."""
    for fd, value in message.ListFields():
        items = value if fd.is_repeated else [value]
        for item in items:
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                yield from strings(item)
            elif fd.type == FieldDescriptor.TYPE_STRING:
                yield item


def cards_named(message: Message) -> set[str]:
    return {tok for s in strings(message) for tok in TOKEN.findall(s) if tok in NAMES}


@dataclass
class Coverage:
    hands: int = 0
    messages: int = 0
    requests: int = 0
    defences: int = 0  # requests that showed a knocker's spread
    revealed_results: int = 0  # hand results that laid out both hands
    refusals: int = 0
    forbidden_checked: int = 0  # (message, hidden card) pairs checked


def check_match(messages: list[pb.ServerMessage], record: list[dict[str, Any]],
                probes: list[str], cover: Coverage) -> None:
    """Place each message of one match in its hand and check every card it names (a
    refusal may also name the card the spy probed with)."""
    hands = replay_truth(record)
    probes = list(probes)
    allowed: set[str] = set()
    start = messages[0].match_start
    seat = start.seat
    assert start.match_id == record[0]["match_id"]
    opening = pb.ServerMessage()
    opening.CopyFrom(messages[0])
    opening.match_start.resume_key = ""  # random letters: "4D" may occur in it by chance
    assert cards_named(opening) == set()
    index = 0  # the hand the next messages belong to (the next hand_result ends it)
    for n, message in enumerate(messages[1:], 1):
        kind = message.WhichOneof("kind")
        where = f"{start.match_id} seat {seat} message {n} ({kind})"
        if kind == "request":
            req = message.request
            hand = hands[index]
            assert req.view.hand_number == hand.number, where
            t = len(req.view.history)
            truth = hand.states[t]
            # the placement is right: the view is the true state at this point
            assert set(req.view.hand) == {str(c) for c in truth.hand(seat)}, where
            assert req.view.stock_count == truth.stock_count, where
            allowed = hand.allowed(seat, t)
            cover.requests += 1
            cover.defences += bool(req.view.revealed)
        elif kind == "rejected":  # at the same point as the request it refuses an answer to
            assert message.rejected.code in ("not_held", "wrong_phase"), where
            allowed = allowed | {probes.pop(0)}
            cover.refusals += 1
        else:
            # events belong to the hand the next hand_result ends; match_end to the last
            hand = hands[min(index, len(hands) - 1)]
            allowed = hand.allowed(seat, len(hand.states) - 1, hand_over=True)
            if kind == "event" and message.event.WhichOneof("kind") == "hand_result":
                result = message.event.hand_result
                assert result.hand_number == hand.number, where
                cover.revealed_results += bool(result.hands)
                index += 1
        named = cards_named(message)
        leaked = named - allowed
        assert not leaked, (f"{where} names {sorted(leaked)}, which seat {seat} may not "
                            f"know yet:\n{message}")
        cover.forbidden_checked += len(NAMES - allowed)
        cover.messages += 1
    assert messages[-1].WhichOneof("kind") == "match_end"
    assert index == len(hands)
    assert probes == []  # every probe was refused
    cover.hands += len(hands)


def split_matches(received: list[pb.ServerMessage]) -> dict[str, list[pb.ServerMessage]]:
    out: dict[str, list[pb.ServerMessage]] = {}
    current: list[pb.ServerMessage] | None = None
    for message in received:
        if message.WhichOneof("kind") == "match_start":
            current = out.setdefault(message.match_start.match_id, [])
        assert current is not None, "a message before any match_start"
        current.append(message)
    return out


# ------------------------------------------------------------------------------ the test


def test_no_message_names_a_card_the_bot_may_not_know(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gin_arena_sdk.client, "pb_grpc", _RecordingGrpc)
    spies = (Spy("spy-a"), Spy("spy-b"))
    tc = TimeControl(decision_ms=3000, reconnect_grace_ms=0)
    results = []

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            arena = Arena(hello_timeout_s=10)
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                async with trio.open_nursery() as bots:
                    for spy in spies:
                        bots.start_soon(partial(trio.to_thread.run_sync,
                                                partial(spy.run, port, len(PRESETS)),
                                                abandon_on_cancel=True))
                    for n, preset in enumerate(PRESETS):
                        seats = (0, 1) if n % 2 == 0 else (1, 0)  # each spy in both seats
                        names = (spies[seats[0]].name, spies[seats[1]].name)
                        driver = MatchDriver(f"r{n}-{preset}", RulesConfig.from_spec(preset),
                                             names, seed=f"redaction-{n}", first_dealer=n % 2,
                                             time_control=tc)
                        results.append(await arena.play(driver, names, show_up_s=10))
                        write_replay(tmp_path / f"{driver.match_id}.jsonl", driver.record)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert [r.termination for r in results] == [Termination.COMPLETED] * len(PRESETS)
    cover = Coverage()
    for spy in spies:
        matches = split_matches(spy.received)
        assert sorted(matches) == sorted(r.match_id for r in results)
        for match_id, messages in matches.items():
            check_match(messages, load_record(tmp_path / f"{match_id}.jsonl"),
                        spy.probes[match_id], cover)
    # the check saw enough to mean something
    assert cover.hands >= 2 * MIN_HANDS  # each hand checked from both seats
    assert cover.requests > 500
    assert cover.defences > 0 and cover.revealed_results > 0 and cover.refusals > 50
    assert cover.forbidden_checked > 10_000
