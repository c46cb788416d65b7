"""The gRPC adapter's sessions: bots say Hello, wait in the lobby, and are seated in matches.

A Play stream is a *session*: the bot must say Hello first (within the hello timeout,
with protocol version 1, a printable name and, where tokens are required, a known token);
then it waits in the lobby (``arena.server.lobby``) until a match takes it as a seat.
Matches are run by whoever owns the arena (a worker, the ladder, ``arena serve``): they
ask for a seat by entrant key (``seat_for``), for any two (``any_two``) or for one of each
of two (``take_two``), and play it with ``run_seated``; what a finished match becomes
(scores, ratings, replays) is theirs to commit. A bot that drops mid-match may come back
within the grace by saying Hello again with ``resume`` = the secret ``resume_key`` its
MatchStart gave that seat (and the same token, where tokens are required). Protocol
errors map to status codes in one table (``STATUS``); a game fault is a match result,
never a status.

The arena measures how late its two loops run (``arena.match.lag``): the gRPC loop's lag is
credited to bots' clocks, both are reported by Arena.Status and gate admission.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
import time
import unicodedata
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import grpc
import structlog
import trio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb
from gin_arena_core.protocol.convert import HistoryMemo, action_from_pb
from gin_arena_core.protocol.records import clean_fault
from gin_arena_core.rules import MalformedError

from arena.match.driver import MatchDriver
from arena.match.lag import LagTracker, watch
from arena.match.messages import (
    DecisionRequest,
    MatchResult,
    MatchStarted,
    Outgoing,
    Reply,
    Termination,
)
from arena.match.runner import run_match
from arena.match.timers import TIMED_OUT, TimedOut
from arena.server.admission import Admission
from arena.server.bridge import (
    Bridge,
    Connection,
    LeaderboardHandler,
    StreamLimits,
    format_address,
    serve_grpc,
)
from arena.server.lobby import Lobby
from arena.server.wire import (
    encode_event,
    encode_events,
    encode_request,
    is_move_event,
    server_message,
)

log = structlog.get_logger("arena.server")


class ProtocolError(Exception):
    """The bot broke the protocol (the bot's fault, judged by us)."""

    def __init__(self, status: grpc.StatusCode, detail: str, retry_after_s: float = 0.0
                 ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after_s = retry_after_s  # > 0: the bot may try again that much later


# The one table from our judgements to gRPC status codes (gRPC itself never emits
# INVALID_ARGUMENT or FAILED_PRECONDITION, so a bot can tell them from network failures).
STATUS = {
    "no_hello": grpc.StatusCode.FAILED_PRECONDITION,
    "hello_timeout": grpc.StatusCode.DEADLINE_EXCEEDED,
    "bad_version": grpc.StatusCode.FAILED_PRECONDITION,
    "bad_hello": grpc.StatusCode.INVALID_ARGUMENT,
    "bad_token": grpc.StatusCode.UNAUTHENTICATED,
    "replaced": grpc.StatusCode.ABORTED,
    "no_seat": grpc.StatusCode.NOT_FOUND,
    "shutdown": grpc.StatusCode.UNAVAILABLE,
}


SEAT_EARLY_S = 3.0
"""How long a Hello with a seat key waits for its seat to be kept here (a redirected bot
may arrive before this front end has read the pairing that sends it)."""


SHUTDOWN_FLUSH_S = 1.0
"""On shutdown, how long a seated session waits for its match to say ``match_end``."""


MAX_NAME = 64


def name_problem(name: str) -> str:
    """Why ``name`` cannot be a bot's name ("" if it can): 1-64 characters, none of them a
    control, format or line-breaking character (so no terminal escape or invisible
    character reaches an opponent, a table or a log line)."""
    if not name:
        return "hello.name is empty: give the bot a name (1-64 printable characters)"
    if len(name) > MAX_NAME:
        return f"hello.name has {len(name)} characters: at most {MAX_NAME}"
    for c in name:
        kind = unicodedata.category(c)
        if kind[0] == "C" or kind in ("Zl", "Zp") or (kind == "Zs" and c != " "):
            return (f"hello.name may not hold U+{ord(c):04X} ({unicodedata.name(c, kind)}): "
                    "use printable characters")
    return ""


@dataclass(eq=False)
class Entry:
    """A bot that said Hello and waits for (or plays) a match."""

    conn: Connection
    name: str
    token: str
    resume: str  # a seat's resume key, or empty
    key: str  # the lobby key: the token if any, else the name
    seat_key: str = ""  # a Redirect's seat key: the seat kept for it here, or empty
    done: trio.Event = field(default_factory=trio.Event)
    seated: bool = False  # taken by a match (which then ends its call)
    in_lobby: bool = False  # waiting in the lobby (see arena.server.lobby)
    told: bool = False  # was sent a LobbyStatus (at capacity)
    arrival: int = field(default_factory=itertools.count().__next__)

    @property
    def is_gone(self) -> bool:
        return self.conn.is_gone


@dataclass(eq=False)
class _Kept:
    """A seat kept for a bot a Redirect sends here (``Arena.expect``)."""

    name: str
    entry: Entry | None = None
    arrived: trio.Event = field(default_factory=trio.Event)


class GrpcSeat:
    """A match seat backed by a Play stream (implements ``arena.match.runner.Seat``).

    A reconnecting bot's new stream takes the seat over (``attach``), as often as it drops;
    a ``receive`` that was waiting on the stream it replaced returns None, and the
    ``wait_back`` that follows returns True at once, so the runner re-sends what is pending.
    """

    def __init__(self, entry: Entry, *, runs_only: bool) -> None:
        self.entry = entry
        entry.seated = True
        self.name = entry.name
        self.runs_only = runs_only
        self.resume_key = secrets.token_urlsafe(18)  # told to this seat's bot only
        self.match_id = ""
        self.seat = -1
        self._last_request = 0
        self._back = trio.Event()
        self._lost: Entry | None = None  # the session a receive() last found gone
        self._events: list[bytes] = []  # move events (encoded) waiting for the next request
        self._history = HistoryMemo()  # what this seat's last request said of the hand

    def send(self, message: Outgoing) -> None:
        if isinstance(message, DecisionRequest):  # most messages: one each decision
            self._last_request = message.request_id
            self._push(encode_request(message, self._events, self._history))
            self._events = []
            return
        if is_move_event(message):  # rides in the next request
            self._events.append(encode_event(message))  # type: ignore[arg-type]
            return
        if isinstance(message, MatchStarted):
            start = server_message(message)
            start.match_start.resume_key = self.resume_key
            self._push(start)
            return
        if self._events:  # a hand or match end: the moves before it go first
            self._push(*encode_events(self._events))
            self._events = []
        self._push(server_message(message))

    def _push(self, *messages: pb.ServerMessage | bytes) -> None:
        conn = self.entry.conn
        if not conn.is_gone:
            with contextlib.suppress(trio.ClosedResourceError):
                for m in messages:
                    conn.send(m)

    async def receive(self, deadline: float) -> Reply | TimedOut | None:
        entry = self.entry
        try:
            msg = await entry.conn.receive_by(deadline)
        except trio.ClosedResourceError:
            msg = None
        if msg is None:
            self._lost = entry
            return None
        if msg is TIMED_OUT:
            return msg
        return self._reply(msg, entry.conn)

    def poll(self) -> Reply | None:
        conn = self.entry.conn
        try:
            msg = conn.receive_nowait()
        except trio.ClosedResourceError:
            return None
        return None if msg is None else self._reply(msg, conn)

    def _reply(self, msg: pb.BotMessage, conn: Connection) -> Reply:
        kind = msg.WhichOneof("kind")
        arrived, lag = conn.arrived, conn.arrived_lag
        if kind == "action":
            answer = msg.action
            if answer.error:  # the bot's own code failed: a bot error, not a malformed move
                return Reply(answer.request_id, None, clean_fault(answer.error), arrived, lag,
                             bot_error=True)
            try:
                action = action_from_pb(answer.action, runs_only=self.runs_only)
            except MalformedError as e:
                return Reply(answer.request_id, None, e.message, arrived, lag)
            return Reply(answer.request_id, action, "", arrived, lag)
        if kind == "error":
            return Reply(self._last_request, None, clean_fault(msg.error.message), arrived, lag,
                         report=True)
        what = "a second Hello" if kind == "hello" else "an empty message"
        return Reply(self._last_request, None, f"protocol: {what} in a match; send ActionReply",
                     arrived, lag)

    async def wait_back(self, grace_s: float) -> bool:
        if self.entry is not self._lost:
            return True  # a new stream took the seat over while the old one was read
        if grace_s <= 0:
            return False
        self._back = trio.Event()
        with trio.move_on_after(grace_s):
            await self._back.wait()
            return True
        return False

    def attach(self, entry: Entry) -> None:
        """A reconnected session takes over this seat; the stream it replaces (if still
        open) ends ABORTED, so a bot can tell which of its streams lost the seat."""
        old = self.entry
        self.entry = entry
        entry.seated = True
        old.conn.abort(STATUS["replaced"], "this seat was resumed on another stream")
        old.done.set()
        self._back.set()

    def redirect(self, address: str, seat_key: str, valid_s: float) -> None:
        """Send the bot to the front end at ``address``, where a seat is kept for it under
        ``seat_key``; its stream here then ends OK."""
        self._push(pb.ServerMessage(redirect=pb.Redirect(
            address=address, seat_key=seat_key, valid_ms=round(valid_s * 1000))))
        self.finish()

    def finish(self) -> None:
        """The match is over: end the call OK and release the session."""
        conn = self.entry.conn
        conn.close()
        self.entry.done.set()


Authenticate = Callable[[str], Awaitable[str | None]]
"""token -> the bot's name, or None if the token is unknown (runs on the trio thread; a
lookup that may block, e.g. a database, runs itself on a worker thread)."""

DEFAULT_MAX_LAG_MS = 100.0
"""No new match starts while either loop lags more than this (``arena serve``, ladder)."""


class Arena:
    """Sessions, the lobby and the matches of one server."""

    def __init__(
        self,
        *,
        tokens: Mapping[str, str] | None = None,
        authenticate: Authenticate | None = None,
        hello_timeout_s: float = 10.0,
        limits: StreamLimits | None = None,
        max_matches: int = 0,
        max_lag_ms: float = DEFAULT_MAX_LAG_MS,
        paced: bool = False,
    ) -> None:
        """``tokens`` (token -> bot name, read at each Hello) or ``authenticate`` require a
        known token; with neither, any bot may connect and is known by its name. Admission
        (``max_matches``, ``max_lag_ms``) paces ``arena serve`` and the ladder; ``paced``:
        the owner starts matches through it, so a session that arrives at capacity is
        told its place (``LobbyStatus``)."""
        self.tokens = tokens
        if authenticate is None and tokens is not None:
            book = tokens

            async def authenticate(token: str) -> str | None:
                return book.get(token)

        self.authenticate = authenticate
        self.hello_timeout_s = hello_timeout_s
        self.limits = limits or StreamLimits()
        self.lobby: Lobby[Entry] = Lobby()
        self._reconnect: dict[str, GrpcSeat] = {}  # resume key -> seat of a running match
        self._expected: dict[str, _Kept] = {}  # seat key -> the seat kept for a redirect
        self._early: dict[str, set[trio.Event]] = {}  # seat key -> Hellos waiting for it
        self.closed = False
        self.recent: deque[MatchResult] = deque(maxlen=256)  # the last results, for tests
        self.finished = 0
        self.trio_lag = LagTracker()  # started by serve()
        self.bridge: Bridge | None = None
        self.admission = Admission(max_matches=max_matches, max_lag_ms=max_lag_ms,
                                   lag_ms=self.typical_lag_ms)
        self.playing = 0  # matches in play (admitted or seated by an owner)
        self.started_at = time.monotonic()
        self.paced = paced
        self.on_refused: Callable[[str, str, str], None] | None = None
        """Called with (peer, hello name, why) when a session is refused at Hello."""

    # ------------------------------------------------------------------ serving

    async def serve(self, *, host: str = "127.0.0.1", port: int = 0,
                    tls: tuple[bytes, bytes] | None = None,
                    leaderboard: LeaderboardHandler | None = None,
                    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve this arena over gRPC, and measure the match loop's lag, until cancelled;
        reports the bound port."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, self.trio_lag, self.admission.tick)
            bound: int = await nursery.start(partial(
                serve_grpc, self.session, host=host, port=port, tls=tls,
                leaderboard=leaderboard, limits=self.limits, status=self.status,
                on_bridge=self._set_bridge))
            task_status.started(bound)

    def _set_bridge(self, bridge: Bridge) -> None:
        self.bridge = bridge

    def lag(self) -> float:
        """The arena's lag credited to bots' clocks: how long the gRPC loop, which reads
        their answers and writes their requests, has run late in all (seconds)."""
        return self.bridge.aio_stalled_s() if self.bridge is not None else 0.0

    def lag_ms(self) -> float:
        """The worse of the two loops' recent lateness (milliseconds). Any thread."""
        perf = time.perf_counter()
        bridge = self.bridge
        if bridge is None:
            return self.trio_lag.recent_ms
        return max(self.trio_lag.lag_ms(perf + bridge.clock_offset),
                   bridge.aio_lag.lag_ms(perf))

    def typical_lag_ms(self) -> float:
        """What admission follows (milliseconds): the worst of the two loops' median
        lateness over the last second and the average time a message to a bot takes from
        the match loop to the network (the arena's own share of each decision)."""
        perf = time.perf_counter()
        bridge = self.bridge
        if bridge is None:
            return self.trio_lag.typical_ms
        return max(self.trio_lag.typical_lag_ms(perf + bridge.clock_offset),
                   bridge.aio_lag.typical_lag_ms(perf), bridge.out_delay.average_ms(perf))

    def status(self) -> pb.StatusReply:
        """Arena.Status, built on the gRPC thread from plain figures (no trio calls)."""
        a = self.admission
        return pb.StatusReply(
            matches_running=self.playing, sessions_waiting=len(self.lobby),
            matches_finished=self.finished, loop_lag_ms=self.trio_lag.recent_ms,
            max_matches=a.max_matches, max_lag_ms=a.max_lag_ms,
            uptime_s=time.monotonic() - self.started_at, admitting=not a.is_full,
            admission_window=a.window)

    # ------------------------------------------------------------------ sessions

    async def session(self, conn: Connection) -> None:
        """Run one Play stream: Hello, then wait in the lobby until a match releases it."""
        try:
            entry = await self._hello(conn)
        except ProtocolError as e:
            log.info("session_refused", peer=conn.peer, status=e.status.name, detail=e.detail)
            conn.abort(e.status, e.detail, retry_after_s=e.retry_after_s)
            return
        if entry is None:
            log.info("session_gone", peer=conn.peer, detail="the stream ended before Hello")
            return
        conn.bot = entry.name
        bound = log.bind(bot=entry.name, peer=conn.peer)
        if entry.seat_key:
            kept = await self._kept_seat(entry.seat_key)
            if kept is None or kept.name != entry.name or kept.entry is not None:
                bound.info("session_refused", status=STATUS["no_seat"].name)
                conn.abort(STATUS["no_seat"], "no seat is kept here for this key (it is "
                           "used, expired or another bot's); say Hello where you came from")
                return
            bound.info("redirected_in", seat_key_for=kept.name)
            kept.entry = entry
            entry.seated = True
            kept.arrived.set()
        elif entry.resume:
            seat = self._reconnect.get(entry.resume)
            if seat is None or seat.entry.key != entry.key:
                bound.info("session_refused", status=STATUS["no_seat"].name)
                conn.abort(STATUS["no_seat"], "no seat to resume with this key (its match "
                           "may have ended); say Hello without resume for a new match")
                return
            bound.info("reconnected", match_id=seat.match_id, seat=seat.seat)
            seat.attach(entry)
        else:
            if self.closed:
                conn.close()  # no more matches: the SDK ends its loop
                return
            self.lobby.add(entry)
            bound.info("waiting", waiting=len(self.lobby))
            if self.paced and self.admission.is_full:
                self._tell_lobby(entry)
        try:
            await entry.done.wait()
        except trio.Cancelled:
            if entry.seated and not conn.is_gone:
                # shutdown: the match is being cancelled too; it tells the bot (match_end,
                # then UNAVAILABLE) and releases this session. Give it a moment to.
                with trio.move_on_after(SHUTDOWN_FLUSH_S, shield=True):
                    await entry.done.wait()
            raise
        finally:
            self.lobby.remove(entry)

    def _tell_lobby(self, entry: Entry) -> None:
        """Tell a waiting session (once) why no match starts yet, and its place."""
        a = self.admission
        entry.told = True
        with contextlib.suppress(trio.ClosedResourceError):
            entry.conn.send(pb.ServerMessage(lobby=pb.LobbyStatus(
                place=len(self.lobby), waiting=len(self.lobby), matches_running=self.playing,
                max_matches=a.max_matches,
                detail="the arena is at capacity: you are seated when a match ends")))

    async def _hello(self, conn: Connection) -> Entry | None:
        first = None
        refuse = self.on_refused
        with trio.move_on_after(self.hello_timeout_s):
            first = await conn.receive()
            if first is None:
                return None
            if first.WhichOneof("kind") != "hello":
                raise ProtocolError(STATUS["no_hello"], "the first message must be Hello")
            hello = first.hello
            if hello.protocol_version != PROTOCOL_VERSION:
                raise ProtocolError(
                    STATUS["bad_version"],
                    f"protocol version {hello.protocol_version} is not supported; "
                    f"this arena speaks version {PROTOCOL_VERSION}",
                )
            name = hello.name.strip()
            problem = name_problem(name)
            if problem:
                raise ProtocolError(STATUS["bad_hello"], problem)
            if self.authenticate is not None:
                known = await self.authenticate(hello.token) if hello.token else None
                if known is None:
                    why = ("unknown or missing token: send the token you were given in "
                           "Hello.token (launched bots get it in ARENA_TOKEN)")
                    if refuse is not None:
                        refuse(conn.peer, name, "bad_token")
                    raise ProtocolError(STATUS["bad_token"], why)
                name = known
            key = hello.token or name
            return Entry(conn, name, hello.token, hello.resume, key, seat_key=hello.seat_key)
        raise ProtocolError(STATUS["hello_timeout"],
                            f"no Hello within {round(self.hello_timeout_s * 1000)} ms")

    # ------------------------------------------------------------------ seats

    async def seat_for(self, key: str, timeout_s: float, runs_only: bool) -> GrpcSeat | None:
        """The next waiting session of entrant ``key`` (None if none arrives in time)."""
        with trio.move_on_after(timeout_s):
            while True:
                entry = self.lobby.pop_key(key)
                if entry is not None:
                    return GrpcSeat(entry, runs_only=runs_only)
                await self.lobby.wait_change()
        return None

    async def any_two(self, runs_only: bool) -> tuple[GrpcSeat, GrpcSeat]:
        """The two oldest waiting sessions, whoever they are (open play)."""
        while True:
            pair = self.lobby.pop_two()
            if pair is not None:
                a, b = pair
                return (GrpcSeat(a, runs_only=runs_only), GrpcSeat(b, runs_only=runs_only))
            await self.lobby.wait_change()

    async def _kept_seat(self, seat_key: str) -> _Kept | None:
        """The seat kept for ``seat_key``, waiting up to ``SEAT_EARLY_S`` for it to be kept:
        the bot's own front end may send it here before this one has read the pairing."""
        if seat_key not in self._expected:
            kept = trio.Event()  # set by expect() for this key only, so that thousands
            waiting = self._early.setdefault(seat_key, set())  # of early Hellos cost
            waiting.add(kept)  # nothing when other seats are kept
            try:
                with trio.move_on_after(SEAT_EARLY_S):
                    await kept.wait()
            finally:
                waiting.discard(kept)
                if not waiting and self._early.get(seat_key) is waiting:
                    del self._early[seat_key]
        return self._expected.get(seat_key)

    async def expect(self, seat_key: str, bot: str, timeout_s: float, runs_only: bool
                     ) -> GrpcSeat | None:
        """Keep a seat for ``bot`` arriving with ``seat_key`` (a Redirect sent it here) for
        ``timeout_s``: its seat, or None if it did not come. The key works once."""
        kept = _Kept(bot)
        self._expected[seat_key] = kept
        for early in self._early.pop(seat_key, ()):
            early.set()
        try:
            with trio.move_on_after(timeout_s):
                await kept.arrived.wait()
        finally:
            self._expected.pop(seat_key, None)
        if kept.entry is None or kept.entry.is_gone:
            if kept.entry is not None:
                kept.entry.done.set()
            return None
        return GrpcSeat(kept.entry, runs_only=runs_only)

    def pop_waiting(self, key: str, runs_only: bool) -> GrpcSeat | None:
        """A waiting session of entrant ``key`` taken for a match now, or None."""
        entry = self.lobby.pop_key(key)
        return None if entry is None else GrpcSeat(entry, runs_only=runs_only)

    def put_back(self, seat: GrpcSeat) -> None:
        """A seat taken for a match that did not start waits in the lobby again."""
        entry = seat.entry
        entry.seated = False
        if not entry.is_gone:
            self.lobby.put_back(entry)

    def waiting(self) -> list[tuple[str, str]]:
        """(key, bot name) of every live session waiting in the lobby, oldest first."""
        return [(e.key, e.name) for e in self.lobby.live()]

    async def wait_arrival(self) -> None:
        """Wait until a session joins the lobby. Cancellation: just stops waiting."""
        await self.lobby.wait_change()

    def take_two(self, keys: tuple[str, str], runs_only: bool
                 ) -> tuple[GrpcSeat, GrpcSeat] | None:
        """Seat a waiting session of each of ``keys`` at once (the ladder's pairing), or
        None if either has none; then the lobby is left unchanged."""
        pair = self.lobby.take_two(keys)
        if pair is None:
            return None
        return (GrpcSeat(pair[0], runs_only=runs_only), GrpcSeat(pair[1], runs_only=runs_only))

    def drop_waiting(self, keys: set[str], status: grpc.StatusCode, detail: str) -> int:
        """End the waiting sessions of entrants ``keys`` with ``status``; how many."""
        dropped = 0
        for entry in self.lobby.live():
            if entry.key in keys:
                self.lobby.remove(entry)
                entry.conn.abort(status, detail)
                entry.done.set()
                dropped += 1
        return dropped

    def close_lobby(self) -> None:
        """No more matches: every waiting session ends OK (the SDK then stops)."""
        self.closed = True
        for entry in self.lobby.live():
            self.lobby.remove(entry)
            entry.conn.close()
            entry.done.set()

    # ------------------------------------------------------------------ matches

    async def play(
        self, driver: MatchDriver, keys: tuple[str, str], *, show_up_s: float | None = None
    ) -> MatchResult:
        """Seat the entrants ``keys`` and play ``driver``'s match; a no-show forfeits."""
        runs_only = driver.rules.runs_only
        wait = self.hello_timeout_s if show_up_s is None else show_up_s
        seats: list[GrpcSeat | None] = [None, None]

        async def take(i: int) -> None:
            seats[i] = await self.seat_for(keys[i], wait, runs_only)

        async with trio.open_nursery() as nursery:
            for i in (0, 1):
                nursery.start_soon(take, i)
        missing = [i for i in (0, 1) if seats[i] is None]
        if missing:
            for s in seats:
                if s is not None:  # back to the lobby for a later match
                    s.entry.seated = False
                    self.lobby.put_back(s.entry)
            if len(missing) == 2:
                result = driver.abort(Termination.NO_SHOW, "neither bot connected")
            else:
                result = driver.forfeit(missing[0], Termination.NO_SHOW,
                                        f"bot {driver.names[missing[0]]!r} did not connect "
                                        f"within {wait:.1f} s")
            await self._done(driver, result)
            return result
        a, b = seats
        assert a is not None and b is not None
        return await self.run_seated(driver, (a, b))

    async def run_seated(self, driver: MatchDriver, seats: tuple[GrpcSeat, GrpcSeat]
                         ) -> MatchResult:
        """Play a match between two seated sessions. On cancellation (shutdown) the match
        ends ``shutdown``, is recorded, and both calls end UNAVAILABLE."""
        for i, seat in enumerate(seats):
            seat.match_id, seat.seat = driver.match_id, i
            self._reconnect[seat.resume_key] = seat
        self.playing += 1
        try:
            result = await run_match(driver, seats, lag=self.lag)
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                if driver.result is not None:
                    await self._done(driver, driver.result)
            for seat in seats:
                seat.entry.conn.abort(STATUS["shutdown"], "server shutting down")
                seat.entry.done.set()
            raise
        finally:
            self.playing -= 1
            for seat in seats:
                self._reconnect.pop(seat.resume_key, None)
        for seat in seats:
            seat.finish()
        await self._done(driver, result)
        return result

    async def _done(self, driver: MatchDriver, result: MatchResult) -> None:
        """Count the result (the owner commits it)."""
        self.finished += 1
        self.recent.append(result)

    def tell_capacity(self) -> None:
        """Tell every waiting session that has not heard it why no match starts yet (the
        arena is at capacity) and its place."""
        for entry in self.lobby.live():
            if not entry.told:
                self._tell_lobby(entry)


async def start_arena(nursery: trio.Nursery, arena: Arena, *, host: str = "127.0.0.1",
                      port: int = 0) -> int:
    """Serve ``arena`` over gRPC in ``nursery``; returns the bound port."""
    port_bound: int = await nursery.start(partial(arena.serve, host=host, port=port))
    return port_bound


__all__ = ["STATUS", "Arena", "Entry", "GrpcSeat", "ProtocolError", "format_address",
           "name_problem", "start_arena"]
