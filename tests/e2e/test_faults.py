"""Faults against a real arena: each gets its documented outcome, and the others play on.

Every test starts a real ``Arena`` on 127.0.0.1 port 0 in trio. Well-behaved seats are real
SDK bots (``gin_arena_sdk.run`` in worker threads, or a bot process); misbehaving ones are
hand-written synchronous grpc clients (in worker threads, each call with a gRPC deadline so
nothing can hang). While the fault plays out, a *good match* between two SDK bots runs on
the same arena: it is started first, one of its bots pauses mid-match until the fault is
over, and it must still end ``completed`` with no timeout and no refusal. Time controls are
small (decisions of 150-250 ms) and nothing asserts on speed, only on outcomes.
"""

from __future__ import annotations

import itertools
import os
import queue
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import gin_arena_sdk as sdk
import grpc
import pytest
import trio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_core.protocol.convert import action_to_pb, view_from_pb
from gin_arena_core.rules import Discard, Gin, Knock, PlayerView, RulesConfig, min_deadwood
from gin_arena_core.rules.cards import CARDS, to_mask
from gin_arena_core.rules.melds import deadwood_after_discard
from gin_arena_sdk import Action, Bot

from arena.match.driver import MatchDriver
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.serve import serve_open
from arena.server.arena import Arena, start_arena

pytestmark = pytest.mark.timeout(60)

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]
TEST_TIMEOUT = 25.0  # seconds, whole scenario (trio.fail_after)
RPC_TIMEOUT = 20.0  # gRPC deadline of every raw client call
SHOW_UP_S = 10.0  # how long arena.play waits for a seat (bots connect in milliseconds)
CLIENT_GRACE_S = 2.0  # how long clients may take to finish after their match ended
RULES = RulesConfig()
GOOD_TC = TimeControl(decision_ms=20_000, reconnect_grace_ms=0)  # its bot pauses on purpose
GOOD_KEYS = ("good-a", "good-b")
GOOD_TOKENS = {"tok-good-a": "good-a", "tok-good-b": "good-b"}
GATE = 30  # the good match's seat 0 pauses at its 30th decision until the fault is over
PACE_S = 0.005  # until then its bots think this long per decision: play overlaps the fault

T = TypeVar("T")


# ------------------------------------------------------------------------------ bots


def greedy_action(view: PlayerView) -> Action:
    """A simple legal policy: gin or knock when possible, else keep deadwood low."""
    return Greedy().decide(view)


class Greedy(Bot):
    """Takes a card that lowers its deadwood, goes out as soon as it may."""

    name = "greedy"

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


class GoodBot(Greedy):
    """A well-behaved SDK bot; it may pause once (``gate``) so its match spans a fault."""

    def __init__(self, name: str, *, gate: int = 0, release: threading.Event | None = None
                 ) -> None:
        self.name = name
        self.gate = gate
        self.release = release
        self.decisions = 0
        self.playing = threading.Event()  # set at its 3rd decision: the match is under way
        self.gated = threading.Event()  # set when it reached the gate
        self.rejected: list[str] = []

    def decide(self, view: PlayerView) -> Action:
        self.decisions += 1
        if self.decisions == 3:
            self.playing.set()
        if self.release is not None and not self.release.is_set():
            if self.decisions == self.gate:
                self.gated.set()
                self.release.wait(timeout=TEST_TIMEOUT)
            else:
                time.sleep(PACE_S)
        return super().decide(view)

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Action | None:
        self.rejected.append(f"{code}: {reason}")
        return None


async def in_thread(fn: Callable[[], T]) -> T:
    return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)


async def run_sdk_bot(bot: Bot, port: int, *, token: str = "", matches: int = 1) -> int:
    """``gin_arena_sdk.run`` in a worker thread; returns the number of matches it played."""
    return await in_thread(partial(sdk.run, bot, f"{HOST}:{port}", token=token, matches=matches))


# ------------------------------------------------------------------------------ raw clients


@dataclass
class Stream:
    """What one raw Play stream saw, and how it ended."""

    messages: list[pb.ServerMessage] = field(default_factory=list)
    code: grpc.StatusCode | None = None
    details: str = ""

    def of(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.messages if m.WhichOneof("kind") == kind]

    def all_events(self) -> list[pb.Event]:
        """Every event, in order: alone, or riding in a request (before it, in time)."""
        out: list[pb.Event] = []
        for m in self.messages:
            kind = m.WhichOneof("kind")
            if kind == "event":
                out.append(m.event)
            elif kind == "request":
                out.extend(m.request.events)
        return out

    def events(self, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in self.all_events() if e.WhichOneof("kind") == kind]

    @property
    def requests(self) -> list[pb.DecisionRequest]:
        return self.of("request")

    @property
    def rejections(self) -> list[pb.ActionRejected]:
        return self.of("rejected")

    @property
    def match_start(self) -> pb.MatchStart:
        [start] = self.of("match_start")
        message: pb.MatchStart = start
        return message

    @property
    def match_end(self) -> pb.MatchEnd:
        [end] = self.of("match_end")
        message: pb.MatchEnd = end
        return message


class Raw:
    """A hand-written client's side of one call (used by a ``react`` function)."""

    def __init__(self, outbox: queue.SimpleQueue[pb.BotMessage | None], stream: Stream) -> None:
        self._outbox = outbox
        self.stream = stream
        self.request: pb.DecisionRequest | None = None  # the last request received
        self.answered = 0  # requests seen so far (react functions count them)

    def send(self, message: pb.BotMessage) -> None:
        self._outbox.put(message)

    def answer(self, request_id: int, action: pb.Action) -> None:
        self.send(pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action)))

    def play_greedy(self) -> None:
        """Answer the last request with a legal, sensible move."""
        assert self.request is not None
        req = self.request
        self.answer(req.request_id, action_to_pb(greedy_action(view_from_pb(req.view,
                                                                             req.legal))))


CANCEL = "cancel"  # a react function returns this to cancel the call (the bot "crashes")
React = Callable[[Raw, pb.ServerMessage], "str | None"]


def hello(name: str, *, token: str = "", resume: str = "",
          version: int = PROTOCOL_VERSION) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(name=name, protocol_version=version, token=token,
                                        resume=resume))


def _outgoing(outbox: queue.SimpleQueue[pb.BotMessage | None]) -> Iterator[pb.BotMessage]:
    while (item := outbox.get()) is not None:
        yield item


def raw_call(channel: grpc.Channel, first: pb.BotMessage | None, react: React | None, *,
             timeout: float = RPC_TIMEOUT) -> Stream:
    """One Play call (blocking): send ``first``, hand each message to ``react``, to the end.

    Synchronous grpcio on purpose: grpc.aio clients in other threads' event loops would
    share the server's completion queue (grpc/grpc#25364)."""
    stream = Stream()
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    if first is not None:
        outbox.put(first)
    raw = Raw(outbox, stream)
    stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
    responses = stub.Play(_outgoing(outbox), timeout=timeout)
    try:
        for message in responses:
            stream.messages.append(message)
            if message.WhichOneof("kind") == "request":
                raw.request = message.request
            if react is not None and react(raw, message) == CANCEL:
                responses.cancel()
                break
    except grpc.RpcError:
        pass
    finally:
        outbox.put(None)
    stream.code = responses.code()
    stream.details = responses.details() or ""
    return stream


def channel_to(port: int) -> grpc.Channel:
    return grpc.insecure_channel(f"{HOST}:{port}")


async def raw_bot(port: int, first: pb.BotMessage | None, react: React | None = None
                  ) -> Stream:
    """A raw client in a worker thread, awaited from trio."""

    def client() -> Stream:
        with channel_to(port) as channel:
            return raw_call(channel, first, react)

    return await in_thread(client)


def greedy_react(inject: Callable[[Raw, pb.DecisionRequest], bool] | None = None
                 ) -> React:
    """Play legally; ``inject(raw, request)`` may misbehave first (True: it answered)."""

    def react(raw: Raw, message: pb.ServerMessage) -> str | None:
        kind = message.WhichOneof("kind")
        if kind == "request":
            raw.answered += 1
            if inject is not None and inject(raw, message.request):
                return None
            raw.play_greedy()
        elif kind == "rejected":
            raw.play_greedy()
        return None

    return react


# ------------------------------------------------------------------------------ harness


@dataclass
class GoodMatch:
    """Two SDK bots on the arena under test. Until released they think ``PACE_S`` per
    decision, and seat 0 waits at its ``GATE``-th decision: the match outlasts the fault."""

    release: threading.Event = field(default_factory=threading.Event)
    result: MatchResult | None = None
    overlapped: bool = False  # still under way when the fault was over
    bots: tuple[GoodBot, GoodBot] = field(init=False)
    played: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bots = (GoodBot(GOOD_KEYS[0], gate=GATE, release=self.release),
                     GoodBot(GOOD_KEYS[1], release=self.release))

    async def run(self, arena: Arena, port: int) -> None:
        tokens = list(GOOD_TOKENS) if arena.tokens is not None else ["", ""]
        keys = tuple(tokens) if arena.tokens is not None else GOOD_KEYS
        driver = MatchDriver("good", RULES, GOOD_KEYS, seed="good-7", time_control=GOOD_TC)

        async def bot(i: int) -> None:
            self.played.append(await run_sdk_bot(self.bots[i], port, token=tokens[i]))

        async with trio.open_nursery() as nursery:
            for i in (0, 1):
                nursery.start_soon(bot, i)
            self.result = await arena.play(driver, (keys[0], keys[1]), show_up_s=SHOW_UP_S)

    def check(self) -> None:
        """It was under way during the fault, and ended normally."""
        assert self.overlapped, "the good match ended before the fault was over"
        r = self.result
        assert r is not None
        assert r.termination == Termination.COMPLETED, r
        assert r.winner in (0, 1)
        assert [s.timeouts for s in r.stats] == [0, 0]
        assert [s.rejections for s in r.stats] == [0, 0]
        assert self.played == [1, 1]
        assert self.bots[0].rejected == self.bots[1].rejected == []


Body = Callable[[Arena, int], Awaitable[None]]


def run_with_good_match(body: Body, *, tokens: dict[str, str] | None = None,
                        hello_timeout_s: float = 5.0,
                        arena_options: dict[str, Any] | None = None) -> None:
    """Serve an arena, start the good match, run ``body(arena, port)`` during it, stop.

    With ``tokens`` the arena requires them (the good bots' tokens are added).
    """
    good = GoodMatch()

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            all_tokens = None if tokens is None else {**tokens, **GOOD_TOKENS}
            arena = Arena(tokens=all_tokens, hello_timeout_s=hello_timeout_s,
                          **(arena_options or {}))
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                async with trio.open_nursery() as matches:
                    matches.start_soon(good.run, arena, port)
                    assert await in_thread(partial(good.bots[0].playing.wait, TEST_TIMEOUT))
                    try:
                        await body(arena, port)
                    finally:
                        good.overlapped = good.result is None
                        good.release.set()
                nursery.cancel_scope.cancel()

    trio.run(main)
    good.check()


async def play_against_sdk(arena: Arena, port: int, client: Callable[[], Awaitable[Stream]],
                           tc: TimeControl, *, raw_key: str = "raw", raw_seat: int = 0,
                           sdk_token: str = "", sdk_key: str = "sdk-opp"
                           ) -> tuple[MatchResult, Stream | None, int | None]:
    """A match between a raw client (``raw_key``, in ``raw_seat``) and an SDK bot."""
    out: dict[str, Any] = {}
    keys = [sdk_token or sdk_key] * 2
    keys[raw_seat] = raw_key
    names = ["sdk-opp"] * 2
    names[raw_seat] = "raw"
    driver = MatchDriver("fault", RULES, (names[0], names[1]), seed="fault-3", time_control=tc)

    async def raw() -> None:
        out["stream"] = await client()

    async def opponent() -> None:
        out["played"] = await run_sdk_bot(GoodBot("sdk-opp"), port, token=sdk_token)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(raw)
        nursery.start_soon(opponent)
        out["result"] = await arena.play(driver, (keys[0], keys[1]), show_up_s=SHOW_UP_S)
        # the clients end with the match; one that does not is abandoned (and checked)
        nursery.cancel_scope.deadline = trio.current_time() + CLIENT_GRACE_S
    return out["result"], out.get("stream"), out.get("played")


def assert_forfeit(result: MatchResult, seat: int, termination: Termination) -> None:
    assert result.termination == termination, result
    assert result.blamed == seat
    assert result.winner == 1 - seat


def assert_match_end(stream: Stream, reason: str, blamed: int) -> None:
    end = stream.match_end
    assert end.reason == reason
    assert end.blamed_seat == blamed
    assert end.winner == 1 - blamed
    assert stream.code == grpc.StatusCode.OK  # a game fault is a result, not a status


# ------------------------------------------------------------------------------ time


def test_slow_bot_is_defaulted_then_forfeits_on_time() -> None:
    tc = TimeControl(decision_ms=200, margin_ms=50, max_strikes=2, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    def slow(raw: Raw, message: pb.ServerMessage) -> str | None:
        if message.WhichOneof("kind") == "request":
            time.sleep(0.4)  # always past decision_ms + margin_ms
            raw.play_greedy()
        return None

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), slow), tc)

    run_with_good_match(body)
    result, stream, played = seen["out"]
    assert_forfeit(result, 0, Termination.FORFEIT_TIMEOUT)
    assert result.stats[0].timeouts == tc.max_strikes + 1
    assert result.stats[0].defaulted == tc.max_strikes
    assert result.stats[1].timeouts == 0
    defaulted = stream.events("own_action_defaulted")
    assert len(defaulted) == tc.max_strikes
    assert all(d.action.WhichOneof("kind") for d in defaulted)
    requests = stream.requests
    assert not requests[0].previous_defaulted
    assert all(r.previous_defaulted for r in requests[1:])  # each one after a timeout
    assert_match_end(stream, "forfeit_timeout", 0)
    assert played == 1  # the opponent's SDK saw its match end and stopped


def test_time_bank_is_spent_then_exhausted() -> None:
    tc = TimeControl(decision_ms=150, bank_ms=600, margin_ms=50, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    def banker(raw: Raw, message: pb.ServerMessage) -> str | None:
        if message.WhichOneof("kind") != "request":
            return None
        raw.answered += 1
        if raw.answered == 1:
            time.sleep(0.35)  # over decision_ms, well within decision + bank
            raw.play_greedy()
        elif raw.answered == 2:
            raw.play_greedy()
        # from the third request on: never answers, so decision + bank run out
        return None

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), banker), tc)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    first, second, third = stream.requests
    assert first.bank_left_ms == tc.bank_ms
    assert 0 < second.bank_left_ms < tc.bank_ms  # some bank was used ...
    assert not second.previous_defaulted  # ... and the slow move was played, not defaulted
    assert third.bank_left_ms <= second.bank_left_ms
    assert stream.events("own_action_defaulted") == []
    assert_forfeit(result, 0, Termination.FORFEIT_TIMEOUT)
    assert "bank" in result.detail
    assert result.stats[0].timeouts == 1
    assert result.stats[0].decisions == 2
    assert_match_end(stream, "forfeit_timeout", 0)


def test_hung_bot_forfeits_after_max_strikes_plus_one_timeouts() -> None:
    tc = TimeControl(decision_ms=150, margin_ms=50, max_strikes=2, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        # seat 1: it acts first (the dealer is seat 0), so the hang starts at once
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw")), tc, raw_seat=1)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    assert_forfeit(result, 1, Termination.FORFEIT_TIMEOUT)
    assert result.stats[1].timeouts == tc.max_strikes + 1
    assert result.stats[1].decisions == tc.max_strikes  # the defaulted ones
    assert len(stream.events("own_action_defaulted")) == tc.max_strikes
    assert_match_end(stream, "forfeit_timeout", 1)


# ------------------------------------------------------------------------------ leaving


def crash_after(requests: int) -> React:
    """Play greedy, then cancel the call on receiving request number ``requests``."""

    def react(raw: Raw, message: pb.ServerMessage) -> str | None:
        if message.WhichOneof("kind") == "request":
            raw.answered += 1
            if raw.answered == requests:
                return CANCEL
            raw.play_greedy()
        elif message.WhichOneof("kind") == "rejected":
            raw.play_greedy()
        return None

    return react


def test_cancelled_stream_without_grace_forfeits_as_disconnect() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), crash_after(3)), tc)

    run_with_good_match(body)
    result, stream, played = seen["out"]
    assert stream.code == grpc.StatusCode.CANCELLED
    assert len(stream.requests) == 3
    assert_forfeit(result, 0, Termination.DISCONNECT)
    assert result.stats[0].timeouts == 0
    assert played == 1


CRASHING_BOT = """
import os, sys, threading, grpc
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
def messages():
    yield pb.BotMessage(hello=pb.Hello(name="crash", protocol_version=PROTOCOL_VERSION))
    threading.Event().wait()  # keep its side open (a half-close would look like leaving)
channel = grpc.insecure_channel(sys.argv[1])
for message in pb_grpc.ArenaStub(channel).Play(messages(), timeout=20):
    if message.WhichOneof("kind") == "request":
        os._exit(3)  # dies holding an unanswered request: no goodbye, no cancel
"""


def test_crashing_bot_process_forfeits_as_disconnect() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}

        async def client() -> Stream:
            proc = await trio.run_process([sys.executable, "-c", CRASHING_BOT, f"{HOST}:{port}"],
                                          env=env, check=False, capture_stderr=True)
            seen["rc"] = proc.returncode
            return Stream()

        seen["out"] = await play_against_sdk(arena, port, client, tc, raw_key="crash",
                                             raw_seat=1)

    run_with_good_match(body)
    result, _, _ = seen["out"]
    assert seen["rc"] == 3
    assert_forfeit(result, 1, Termination.DISCONNECT)
    assert result.stats[1].decisions == 0


RECON_TOKENS = {"tok-recon": "recon", "tok-opp": "sdk-opp"}


def reconnecting_client(port: int, drops: int, streams: list[Stream]
                        ) -> Callable[[], Awaitable[Stream]]:
    """Plays greedy; drops its stream at its 3rd request ``drops`` times, each time coming
    back with Hello(resume=its seat's resume key, same token). Every stream it used goes in
    ``streams``."""

    def client() -> Stream:
        with channel_to(port) as channel:
            streams.append(raw_call(channel, hello("recon", token="tok-recon"),
                                    crash_after(3)))
            key = streams[0].match_start.resume_key
            for n in range(drops):
                react = crash_after(3) if n < drops - 1 else greedy_react()
                streams.append(raw_call(
                    channel, hello("recon", token="tok-recon", resume=key), react))
        return streams[-1]

    return lambda: in_thread(client)


def run_reconnection(drops: int) -> tuple[MatchResult, list[Stream], int | None]:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=1000)
    streams: list[Stream] = []
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, reconnecting_client(port, drops, streams), tc, raw_key="tok-recon",
            sdk_token="tok-opp")

    run_with_good_match(body, tokens=RECON_TOKENS)
    result, _, played = seen["out"]
    return result, streams, played


def check_reconnection(result: MatchResult, streams: list[Stream], played: int | None,
                       drops: int) -> None:
    assert result.termination == Termination.COMPLETED, result
    assert len(streams) == drops + 1
    for before, after in itertools.pairwise(streams):
        assert before.code == grpc.StatusCode.CANCELLED
        assert after.of("match_start") == []  # the same match goes on
        # the arena asks again what was pending when the bot left
        assert after.requests[0].request_id == before.requests[-1].request_id
    assert result.stats[0].timeouts == 0
    assert streams[-1].match_end.reason == "completed"
    assert streams[-1].code == grpc.StatusCode.OK
    assert played == 1


def test_dropped_bot_reconnects_within_the_grace_and_the_match_completes() -> None:
    check_reconnection(*run_reconnection(drops=1), drops=1)


def test_dropped_bot_reconnects_twice_in_one_match() -> None:
    check_reconnection(*run_reconnection(drops=2), drops=2)


def test_resuming_on_a_new_stream_before_the_old_one_ends_takes_over() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=1000)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        def client() -> Stream:
            with channel_to(port) as channel:
                def react(raw: Raw, message: pb.ServerMessage) -> str | None:
                    kind = message.WhichOneof("kind")
                    if kind == "request":
                        raw.answered += 1
                        if raw.answered == 3:  # its link "looks dead": resume on a new stream
                            key = raw.stream.match_start.resume_key
                            seen["new"] = raw_call(channel, hello("recon", token="tok-recon",
                                                                  resume=key), greedy_react())
                            return None
                        raw.play_greedy()
                    elif kind == "rejected":
                        raw.play_greedy()
                    return None

                return raw_call(channel, hello("recon", token="tok-recon"), react)

        seen["out"] = await play_against_sdk(arena, port, lambda: in_thread(client), tc,
                                             raw_key="tok-recon", sdk_token="tok-opp")

    run_with_good_match(body, tokens=RECON_TOKENS)
    result, old, _ = seen["out"]
    new: Stream = seen["new"]
    assert result.termination == Termination.COMPLETED, result
    assert new.requests and new.requests[0].request_id == old.requests[-1].request_id
    assert new.match_end.reason == "completed"
    # the stream that lost the seat is told so, not left hanging or ended OK
    assert old.code == grpc.StatusCode.ABORTED
    assert old.of("match_end") == []


def test_reconnect_with_another_token_does_not_take_the_seat() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=400)
    seen: dict[str, Any] = {}
    tokens = {**RECON_TOKENS, "tok-thief": "thief"}

    async def body(arena: Arena, port: int) -> None:
        def client() -> Stream:
            with channel_to(port) as channel:
                first = raw_call(channel, hello("recon", token="tok-recon"), crash_after(3))
                key = first.match_start.resume_key
                # another entrant's token, even with the seat's resume key: refused at once
                seen["thief"] = raw_call(
                    channel, hello("thief", token="tok-thief", resume=key), greedy_react(),
                    timeout=1.5)
                return first

        seen["out"] = await play_against_sdk(arena, port, lambda: in_thread(client), tc,
                                             raw_key="tok-recon", sdk_token="tok-opp")

    run_with_good_match(body, tokens=tokens)
    result, _, _ = seen["out"]
    assert_forfeit(result, 0, Termination.DISCONNECT)
    thief: Stream = seen["thief"]
    assert thief.messages == []  # it never saw the match
    assert thief.code == grpc.StatusCode.NOT_FOUND


def test_a_bot_cannot_take_a_seat_by_its_name_and_match_id() -> None:
    """Without tokens a seat is resumed by its secret resume key only: another client that
    says the victim's name and guesses the match id (or any key) is refused, sees nothing,
    and the victim's match plays on."""
    tc = TimeControl(decision_ms=2000, reconnect_grace_ms=1000)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        def client() -> Stream:
            with channel_to(port) as channel:
                def react(raw: Raw, message: pb.ServerMessage) -> str | None:
                    if message.WhichOneof("kind") in ("request", "rejected"):
                        raw.answered += 1
                        if raw.answered == 3:
                            match_id = raw.stream.match_start.match_id
                            seen["attempts"] = [
                                raw_call(channel, hello("victim", resume=guess), greedy_react(),
                                         timeout=5)
                                for guess in (match_id, "m00001", "x" * 24)]
                        raw.play_greedy()
                    return None

                return raw_call(channel, hello("victim"), react)

        seen["out"] = await play_against_sdk(arena, port, lambda: in_thread(client), tc,
                                             raw_key="victim")

    run_with_good_match(body)
    result, victim, _ = seen["out"]
    assert result.termination == Termination.COMPLETED, result
    assert victim is not None and victim.code == grpc.StatusCode.OK
    assert victim.match_end.reason == "completed"
    attempts: list[Stream] = seen["attempts"]
    assert len(attempts) == 3
    for attempt in attempts:
        assert attempt.messages == []
        assert attempt.code == grpc.StatusCode.NOT_FOUND
    assert result.stats[0].timeouts == 0


# ------------------------------------------------------------------------------ refusals


def not_held(request: pb.DecisionRequest) -> pb.Action:
    """A well-formed discard of a card the bot does not hold: illegal in every phase."""
    held = set(request.view.hand)
    card = next(str(c) for c in CARDS if str(c) not in held)
    return pb.Action(discard=pb.CardMove(card=card))


def always_illegal() -> React:
    def react(raw: Raw, message: pb.ServerMessage) -> str | None:
        if message.WhichOneof("kind") in ("request", "rejected"):
            assert raw.request is not None
            raw.answer(raw.request.request_id, not_held(raw.request))
        return None

    return react


def check_rejections(stream: Stream, tc: TimeControl) -> None:
    by_request: dict[int, list[pb.ActionRejected]] = {}
    for rej in stream.rejections:
        assert rej.code in ("not_held", "wrong_phase"), rej
        assert rej.reason
        by_request.setdefault(rej.request_id, []).append(rej)
    for refusals in by_request.values():
        countdown = list(range(tc.max_rejections - 1, -1, -1))
        assert [r.rejections_left for r in refusals[:tc.max_rejections]] == countdown
        # another answer is wanted: the legal moves; the policy's own refusal: none
        assert all(len(r.legal) > 0 for r in refusals[:tc.max_rejections])
        assert all(len(r.legal) == 0 for r in refusals[tc.max_rejections:])


def test_illegal_moves_are_refused_then_defaulted_then_forfeit() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, max_rejections=2, max_strikes=1,
                     on_illegal="default", reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), always_illegal()), tc)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    check_rejections(stream, tc)
    decisions = tc.max_strikes + 1
    per_decision = tc.max_rejections + 1
    # each refused decision: max_rejections countdown refusals, then the policy's own with 0
    # left (and no legal moves: no answer is wanted); the strike that forfeits ends the match
    assert [r.rejections_left for r in stream.rejections] == [1, 0, 0] * tc.max_strikes + [1, 0]
    assert len(stream.events("own_action_defaulted")) == tc.max_strikes
    assert stream.requests[1].previous_defaulted
    assert_forfeit(result, 0, Termination.FORFEIT_ILLEGAL)
    assert result.stats[0].rejections == per_decision * decisions
    assert result.stats[0].defaulted == tc.max_strikes
    assert result.stats[0].timeouts == 0
    assert_match_end(stream, "forfeit_illegal", 0)


def test_illegal_moves_forfeit_at_once_with_the_forfeit_policy() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, max_rejections=2, on_illegal="forfeit",
                     reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), always_illegal()), tc)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    check_rejections(stream, tc)
    assert [r.rejections_left for r in stream.rejections] == [1, 0]
    assert stream.events("own_action_defaulted") == []
    assert_forfeit(result, 0, Termination.FORFEIT_ILLEGAL)
    assert result.stats[0].rejections == tc.max_rejections + 1
    assert_match_end(stream, "forfeit_illegal", 0)


def test_malformed_empty_and_second_hello_are_refused_and_play_goes_on() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    def inject(raw: Raw, request: pb.DecisionRequest) -> bool:
        if raw.answered == 2:  # an unknown card
            raw.answer(request.request_id, pb.Action(discard=pb.CardMove(card="ZZ")))
            return True
        if raw.answered == 4:  # an empty BotMessage
            raw.send(pb.BotMessage())
            return True
        if raw.answered == 6:  # an ActionReply with an empty Action
            raw.answer(request.request_id, pb.Action())
            return True
        if raw.answered == 8:  # a second Hello in the middle of the match
            raw.send(hello("raw"))
            return True
        return False

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), greedy_react(inject)), tc)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    bad_card, empty_message, empty_action, second_hello = stream.rejections
    requests = stream.requests
    assert bad_card.request_id == requests[1].request_id
    assert bad_card.code == "malformed"
    assert "discard.card" in bad_card.reason and "ZZ" in bad_card.reason
    assert empty_message.request_id == requests[3].request_id
    assert empty_message.code == "malformed"
    assert "protocol" in empty_message.reason and "empty" in empty_message.reason
    assert empty_action.request_id == requests[5].request_id
    assert empty_action.code == "malformed"
    assert "empty action" in empty_action.reason
    assert second_hello.request_id == requests[7].request_id
    assert second_hello.code == "malformed"
    assert "protocol" in second_hello.reason and "Hello" in second_hello.reason
    for rej in (bad_card, empty_message, empty_action, second_hello):
        assert rej.rejections_left == tc.max_rejections - 1
        assert len(rej.legal) > 0
    assert result.termination == Termination.COMPLETED, result
    assert result.stats[0].rejections == 4
    assert result.stats[0].timeouts == 0
    assert stream.events("own_action_defaulted") == []
    assert stream.match_end.reason == "completed"


def test_reply_to_a_stale_request_is_ignored_with_a_notice() -> None:
    tc = TimeControl(decision_ms=250, margin_ms=50, reconnect_grace_ms=0)
    seen: dict[str, Any] = {}

    def inject(raw: Raw, request: pb.DecisionRequest) -> bool:
        if raw.answered != 3:
            return False
        old = raw.stream.requests[0].request_id
        raw.answer(old, pb.Action(draw_stock=pb.Empty()))  # answers an old request
        raw.play_greedy()  # then the right one
        return True

    async def body(arena: Arena, port: int) -> None:
        seen["out"] = await play_against_sdk(
            arena, port, lambda: raw_bot(port, hello("raw"), greedy_react(inject)), tc)

    run_with_good_match(body)
    result, stream, _ = seen["out"]
    old, current = stream.requests[0].request_id, stream.requests[2].request_id
    notices = stream.events("notice")
    assert len(notices) == 1
    assert str(old) in notices[0] and str(current) in notices[0]
    assert stream.rejections == []
    assert result.termination == Termination.COMPLETED, result
    assert result.stats[0].rejections == 0
    assert stream.match_end.reason == "completed"


# ------------------------------------------------------------------------------ hello


def test_sessions_refused_before_a_match() -> None:
    seen: dict[str, Stream] = {}
    action = pb.BotMessage(action=pb.ActionReply(request_id=1,
                                                 action=pb.Action(draw_stock=pb.Empty())))

    async def body(arena: Arena, port: int) -> None:
        async def one(name: str, first: pb.BotMessage | None) -> None:
            seen[name] = await raw_bot(port, first)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "no_hello", action)
            nursery.start_soon(one, "silent", None)
            nursery.start_soon(one, "version", hello("v2", token="tok-x", version=2))
            nursery.start_soon(one, "token", hello("thief", token="wrong"))
            nursery.start_soon(one, "no_token", hello("thief"))
            nursery.start_soon(one, "no_name", hello(" ", token="tok-x"))

    run_with_good_match(body, tokens={"tok-x": "x"}, hello_timeout_s=0.4)
    for name, stream in seen.items():
        assert stream.messages == [], name
    assert seen["no_hello"].code == grpc.StatusCode.FAILED_PRECONDITION
    assert "Hello" in seen["no_hello"].details
    assert seen["silent"].code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert seen["silent"].details == "no Hello within 400 ms"  # the arena's, not gRPC's
    assert seen["version"].code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"version {PROTOCOL_VERSION}" in seen["version"].details
    assert "version 2" in seen["version"].details
    assert seen["token"].code == grpc.StatusCode.UNAUTHENTICATED
    assert seen["no_token"].code == grpc.StatusCode.UNAUTHENTICATED
    assert seen["no_name"].code == grpc.StatusCode.INVALID_ARGUMENT
    assert "name" in seen["no_name"].details


def test_no_show_forfeits_the_missing_seat() -> None:
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        driver = MatchDriver("noshow", RULES, ("here", "absent"), seed=5,
                             time_control=TimeControl(decision_ms=250))

        async def present() -> None:
            seen["played"] = await run_sdk_bot(GoodBot("here"), port, matches=0)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(present)
            seen["result"] = await arena.play(driver, ("here", "absent"), show_up_s=0.5)
            await trio.sleep(0.05)
            arena.close_lobby()  # no more matches: the present bot is let go

    run_with_good_match(body)
    result: MatchResult = seen["result"]
    assert_forfeit(result, 1, Termination.NO_SHOW)
    assert "absent" in result.detail
    assert result.hands == ()
    assert seen["played"] == 0  # it waited in the lobby, then was let go without a match


# ------------------------------------------------------------------------------ shutdown


@dataclass
class Shutdown:
    """What one shutdown round saw."""

    streams: dict[str, Stream]  # the match players' calls, by name
    lobby: Stream  # a bot that was waiting in the lobby
    results: list[MatchResult]
    records: dict[str, list[dict[str, Any]]]  # each match's record (what its replay holds)


def shutdown_round(matches: int) -> Shutdown:
    """Serve ``matches`` matches of raw bots (answering legally after 20 ms), plus one bot
    waiting in the lobby; once every player has answered twice, cancel the nursery that
    serves the arena and runs the matches (what ``arena serve`` does on a signal)."""
    tc = TimeControl(decision_ms=5000, reconnect_grace_ms=0)
    streams: dict[str, Stream] = {}
    lobby: list[Stream] = []
    under_way = threading.Semaphore(0)
    arena = Arena(hello_timeout_s=5)
    records: dict[str, list[dict[str, Any]]] = {}

    def slow_greedy(raw: Raw, message: pb.ServerMessage) -> str | None:
        kind = message.WhichOneof("kind")
        if kind == "request":
            raw.answered += 1
            if raw.answered == 2:
                under_way.release()
            time.sleep(0.02)
            raw.play_greedy()
        return None

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            async with trio.open_nursery() as clients, trio.open_nursery() as serving:
                port = await start_arena(serving, arena)

                async def player(name: str) -> None:
                    streams[name] = await raw_bot(port, hello(name), slow_greedy)

                async def waiter() -> None:
                    lobby.append(await raw_bot(port, hello("waiter")))

                clients.start_soon(waiter)
                for i in range(matches):
                    keys = (f"p{i}a", f"p{i}b")
                    for name in keys:
                        clients.start_soon(player, name)
                    driver = MatchDriver(f"m{i}", RULES, keys, seed=i, time_control=tc)
                    records[driver.match_id] = driver.record
                    serving.start_soon(partial(arena.play, driver, keys,
                                               show_up_s=SHOW_UP_S))
                for _ in range(2 * matches):
                    assert await in_thread(partial(under_way.acquire, timeout=TEST_TIMEOUT))
                serving.cancel_scope.cancel()

    trio.run(main)
    return Shutdown(streams, lobby[0], list(arena.recent), records)


def test_shutdown_mid_match_ends_every_call_unavailable_and_records_shutdown() -> None:
    seen = shutdown_round(2)
    for stream in [*seen.streams.values(), seen.lobby]:
        assert stream.code == grpc.StatusCode.UNAVAILABLE
        assert stream.details == "server shutting down"
    for name, stream in seen.streams.items():
        assert len(stream.requests) >= 2, name  # it was mid-match
        ends = stream.of("match_end")
        assert all(end.reason == "shutdown" for end in ends)  # if told at all (see below)
    assert seen.lobby.messages == []
    assert sorted(r.match_id for r in seen.results) == ["m0", "m1"]
    for r in seen.results:
        assert r.termination == Termination.SHUTDOWN
        assert r.winner is None and r.blamed is None
    for match_id in ("m0", "m1"):
        assert seen.records[match_id][-1]["termination"] == "shutdown"


def test_shutdown_tells_every_player_match_end_before_unavailable() -> None:
    for _ in range(5):  # the loss depends on trio's run order: several rounds make it certain
        seen = shutdown_round(6)
        for name, stream in seen.streams.items():
            assert stream.messages[-1].WhichOneof("kind") == "match_end", name
            assert stream.match_end.reason == "shutdown"
            assert stream.match_end.winner == -1 and stream.match_end.blamed_seat == -1
            assert stream.code == grpc.StatusCode.UNAVAILABLE


def test_a_stream_that_stops_parsing_is_logged_with_its_bots_name() -> None:
    """The bridge's log line for undecodable bytes names the bot (known from its Hello),
    not only its address, so an operator can tell which bot misbehaves."""
    from structlog.testing import capture_logs

    go = threading.Event()
    outcome: dict[str, Any] = {}

    def client(port: int) -> None:
        def messages() -> Iterator[bytes]:
            yield hello("garbler").SerializeToString()
            go.wait(TEST_TIMEOUT)
            yield b"\x0a\x05\x0a"  # truncated: does not parse

        with channel_to(port) as channel:
            call = channel.stream_stream("/gin_arena.v1.Arena/Play")(
                messages(), timeout=RPC_TIMEOUT)
            try:
                for _ in call:
                    pass
            except grpc.RpcError as e:
                outcome["code"] = e.code()

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            arena = Arena()
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                async with trio.open_nursery() as clients:
                    clients.start_soon(in_thread, partial(client, port))
                    while ("garbler", "garbler") not in arena.waiting():
                        await trio.sleep(0.01)
                    go.set()
                nursery.cancel_scope.cancel()

    with capture_logs() as logs:
        trio.run(main)
    assert outcome["code"] == grpc.StatusCode.INVALID_ARGUMENT
    [line] = [e for e in logs if e["event"] == "malformed_message"]
    assert line["bot"] == "garbler" and line["peer"].startswith("ipv4:127.0.0.1:")


# ------------------------------------------------------------------------------ hostile bots


def test_an_oversized_message_ends_only_its_own_stream() -> None:
    seen: dict[str, Stream] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["big"] = await raw_bot(port, hello("x" * 20_000))

    run_with_good_match(body)
    big = seen["big"]
    assert big.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "a message of 20" in big.details and "at most 16384" in big.details


def test_a_name_with_a_terminal_escape_is_refused() -> None:
    seen: dict[str, Stream] = {}

    async def body(arena: Arena, port: int) -> None:
        seen["esc"] = await raw_bot(port, hello("evil\x1b[2J"))
        seen["zw"] = await raw_bot(port, hello("zero\u200bwidth"))

    run_with_good_match(body)
    assert seen["esc"].code == grpc.StatusCode.INVALID_ARGUMENT
    assert "U+001B" in seen["esc"].details
    assert seen["zw"].code == grpc.StatusCode.INVALID_ARGUMENT
    assert "U+200B" in seen["zw"].details


def test_past_the_session_limit_a_stream_is_refused_with_a_retry_hint() -> None:
    from arena.server.bridge import StreamLimits

    seen: dict[str, Any] = {}
    limits = StreamLimits(max_streams=3, retry_after_s=0.2)

    async def body(arena: Arena, port: int) -> None:
        # the good match holds two streams; a third waits in the lobby; a fourth is refused
        waiting = trio.Event()

        async def third() -> None:
            seen["third"] = await raw_bot(port, hello("third"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(third)
            while not arena.waiting():
                await trio.sleep(0.01)
            waiting.set()

            def fourth() -> tuple[grpc.StatusCode, str, dict[str, str]]:
                with channel_to(port) as ch:
                    call = pb_grpc.ArenaStub(ch).Play(iter([hello("fourth")]),
                                                      timeout=RPC_TIMEOUT)
                    try:
                        for _ in call:
                            pass
                    except grpc.RpcError as e:
                        return e.code(), e.details(), dict(e.trailing_metadata() or ())
                return grpc.StatusCode.OK, "", {}

            seen["fourth"] = await in_thread(fourth)
            arena.close_lobby()

    run_with_good_match(body, arena_options={"limits": limits})
    code, details, trailers = seen["fourth"]
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "arena full: 3 sessions open (limit 3)" in details
    assert trailers.get("grpc-retry-pushback-ms") == "200"


def test_a_full_arena_is_retried_by_the_sdk_until_it_has_room() -> None:
    from arena.server.bridge import StreamLimits

    tc = TimeControl(decision_ms=2000)
    limits = StreamLimits(max_streams=2, retry_after_s=0.2)
    got: dict[str, Any] = {}

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            arena = Arena(limits=limits)
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                nursery.start_soon(serve_open, arena, RULES, tc, "full")
                async with trio.open_nursery() as bots:
                    for name in ("a", "b", "c", "d"):  # only two fit at a time
                        bots.start_soon(lambda n=name: _count(got, n, run_sdk_bot(
                            GoodBot(n), port, matches=1)))
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert got == {"a": 1, "b": 1, "c": 1, "d": 1}


def test_grpc_load_shedding_without_a_hint_is_retried_by_the_sdk() -> None:
    """gRPC core refuses new calls RESOURCE_EXHAUSTED, with no trailer, when its queue of
    calls not yet taken up is full (docs/protocol.md, "Limits"). The SDK tries again
    instead of giving up. The server here is a plain gRPC server that sheds the first
    call as core does and ends the second without a match (no more matches: the bot
    stops)."""
    from concurrent import futures

    calls: list[str] = []

    class Shedding(pb_grpc.ArenaServicer):
        def Play(self, request_iterator: Any, context: grpc.ServicerContext) -> Any:
            first = next(request_iterator)
            calls.append(first.hello.name)
            if len(calls) == 1:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "Too many pending requests")
            return iter(())

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_ArenaServicer_to_server(Shedding(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port(f"{HOST}:0")
    server.start()
    try:
        played = sdk.run(GoodBot("shed"), f"{HOST}:{port}")
    finally:
        server.stop(0)
    assert calls == ["shed", "shed"]
    assert played == 0


async def _count(into: dict[str, Any], key: str, played: Awaitable[int]) -> None:
    into[key] = await played


def _prompt_match(stall: Callable[[Arena], Awaitable[None]]) -> MatchResult:
    """Two prompt SDK bots play with 300 ms decisions while ``stall(arena)`` runs."""
    tc = TimeControl(decision_ms=300, margin_ms=20, max_strikes=0)
    out: dict[str, MatchResult] = {}

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            arena = Arena()
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                driver = MatchDriver("stalled", RULES, ("a", "b"), seed="stall-1",
                                     time_control=tc)
                async with trio.open_nursery() as match:
                    for _ in range(2):  # both say Hello as "greedy": seated by that name
                        match.start_soon(run_sdk_bot, Greedy(), port)
                    match.start_soon(stall, arena)
                    out["result"] = await arena.play(driver, ("greedy", "greedy"))
                nursery.cancel_scope.cancel()

    trio.run(main)
    return out["result"]


async def _under_way(arena: Arena) -> None:
    """Wait until the match has played a few decisions (a decision is always pending)."""
    while arena.playing == 0:
        await trio.sleep(0.005)
    await trio.sleep(0.1)


def test_a_blocked_match_loop_charges_no_bot() -> None:
    """The match loop does nothing for 1.5 s (as a synchronous database write did) while
    both bots answer at once: no decision is timed out."""

    async def block(arena: Arena) -> None:
        await _under_way(arena)
        time.sleep(1.5)  # the trio thread itself, blocked

    result = _prompt_match(block)
    assert result.termination == Termination.COMPLETED, result
    assert [s.timeouts for s in result.stats] == [0, 0]


def test_a_stalled_grpc_loop_is_credited_to_the_bots() -> None:
    """The gRPC loop (reading answers, writing requests) stalls for 1 s: the arena measures
    its own lag and credits it back, so no decision is timed out."""

    async def block(arena: Arena) -> None:
        await _under_way(arena)
        bridge = arena.bridge
        assert bridge is not None and bridge._loop is not None
        bridge._loop.call_soon_threadsafe(time.sleep, 1.0)

    result = _prompt_match(block)
    assert result.termination == Termination.COMPLETED, result
    assert [s.timeouts for s in result.stats] == [0, 0]


def test_status_reports_the_arenas_load() -> None:
    seen: dict[str, Any] = {}

    async def body(arena: Arena, port: int) -> None:
        def ask() -> pb.StatusReply:
            with channel_to(port) as ch:
                return pb_grpc.ArenaStub(ch).Status(pb.StatusRequest(), timeout=RPC_TIMEOUT)

        seen["status"] = await in_thread(ask)

    run_with_good_match(body)
    status = seen["status"]
    assert status.matches_running == 1 and status.sessions_open == 2
    assert status.sessions_waiting == 0 and status.admitting
    assert status.max_message_bytes == 16384 and status.uptime_s > 0


def test_past_capacity_matches_wait_in_the_lobby_and_are_told_their_place() -> None:
    """One match at a time: the third and fourth bots wait, hear LobbyStatus, then play."""
    tc = TimeControl(decision_ms=2000)
    got: dict[str, Any] = {}

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            arena = Arena(max_matches=1)
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                nursery.start_soon(serve_open, arena, RULES, tc, "capacity")
                async with trio.open_nursery() as bots:
                    for name in ("a", "b"):
                        bots.start_soon(_count, got, name, run_sdk_bot(GoodBot(name), port))
                    while arena.playing == 0:
                        await trio.sleep(0.005)

                    def waiter(name: str) -> Stream:
                        with channel_to(port) as ch:
                            return raw_call(ch, hello(name), _play_greedy)

                    for name in ("c", "d"):
                        bots.start_soon(_count, got, name, in_thread(partial(waiter, name)))
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert got["a"] == got["b"] == 1
    for name in ("c", "d"):
        stream: Stream = got[name]
        kinds = [m.WhichOneof("kind") for m in stream.messages]
        assert kinds[0] == "lobby" and "match_start" in kinds, kinds
        lobby = stream.messages[0].lobby
        assert lobby.place >= 1 and lobby.max_matches == 1 and lobby.matches_running == 1
        assert stream.match_end.reason == "completed"


def _play_greedy(raw: Raw, message: pb.ServerMessage) -> str | None:
    if message.WhichOneof("kind") == "request":
        raw.play_greedy()
    return None
