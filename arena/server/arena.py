"""The arena server: bot sessions over gRPC, a lobby, and matches run on the trio side.

A Play stream is a *session*: the bot must say Hello first (within the hello timeout,
with protocol version 1 and, where tokens are required, a known token); then it waits in
the lobby until a match takes it as a seat. Matches are run by whoever owns the arena: the
local player and tournaments ask for a seat by entrant key (``seat_for``); ``serve_open``
pairs any two waiting bots. A bot that drops mid-match may come back within the grace by
saying Hello again with ``resume`` = the secret ``resume_key`` its MatchStart gave that
seat (and the same token, where tokens are required). Protocol errors map to status codes
in one table (``STATUS``); a game fault is a match result, never a status.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from arena.match.driver import MatchDriver, derive_seed, new_seed
from arena.match.messages import (
    DecisionRequest,
    MatchResult,
    MatchStarted,
    Outgoing,
    Reply,
    Termination,
    TimeControl,
)
from arena.match.runner import run_match
from arena.protocol import PROTOCOL_VERSION, pb
from arena.protocol.convert import (
    action_from_pb,
    event_to_pb,
    is_move_event,
    server_message,
)
from arena.rules import MalformedError, RulesConfig
from arena.server.bridge import Connection, serve_grpc

log = structlog.get_logger("arena.server")


class ProtocolError(Exception):
    """The bot broke the protocol (the bot's fault, judged by us)."""

    def __init__(self, status: grpc.StatusCode, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


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


SHUTDOWN_FLUSH_S = 1.0
"""On shutdown, how long a seated session waits for its match to say ``match_end``."""


@dataclass(eq=False)
class Entry:
    """A bot that said Hello and waits for (or plays) a match."""

    conn: Connection
    name: str
    token: str
    resume: str  # a seat's resume key, or empty
    key: str  # the lobby key: the token if any, else the name
    done: trio.Event = field(default_factory=trio.Event)
    seated: bool = False  # taken by a match (which then ends its call)
    arrival: int = field(default_factory=itertools.count().__next__)


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
        self._events: list[pb.Event] = []  # move events waiting for the next request

    def send(self, message: Outgoing) -> None:
        if is_move_event(message):
            self._events.append(event_to_pb(message))  # type: ignore[arg-type]
            return
        if isinstance(message, MatchStarted):
            start = server_message(message)
            start.match_start.resume_key = self.resume_key
            self._push(start)
            return
        if isinstance(message, DecisionRequest):
            self._last_request = message.request_id
            out = server_message(message, self._events)
            self._events = []
        else:
            out = None
            if self._events:  # a hand or match end: the moves before it go first
                self._push(*(pb.ServerMessage(event=e) for e in self._events))
                self._events = []
        self._push(out if out is not None else server_message(message))

    def _push(self, *messages: pb.ServerMessage) -> None:
        conn = self.entry.conn
        if not conn.is_gone:
            with contextlib.suppress(trio.ClosedResourceError):
                for m in messages:
                    conn.send(m)

    async def receive(self) -> Reply | None:
        entry = self.entry
        try:
            msg = await entry.conn.receive()
        except trio.ClosedResourceError:
            msg = None
        if msg is None:
            self._lost = entry
            return None
        kind = msg.WhichOneof("kind")
        if kind == "action":
            try:
                action = action_from_pb(msg.action.action, runs_only=self.runs_only)
            except MalformedError as e:
                return Reply(msg.action.request_id, None, e.message)
            return Reply(msg.action.request_id, action)
        what = "a second Hello" if kind == "hello" else "an empty message"
        return Reply(self._last_request, None, f"protocol: {what} in a match; send ActionReply")

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

    def finish(self) -> None:
        """The match is over: end the call OK and release the session."""
        conn = self.entry.conn
        conn.close()
        self.entry.done.set()


class Arena:
    """Sessions, the lobby and the matches of one server."""

    def __init__(
        self,
        *,
        tokens: Mapping[str, str] | None = None,
        hello_timeout_s: float = 10.0,
        replay_dir: Path | None = None,
    ) -> None:
        # token -> bot name; None: no authentication. Any mapping: the ladder's looks the
        # token's hash up in its database, so bots registered later are known at once.
        self.tokens = tokens
        self.hello_timeout_s = hello_timeout_s
        self.replay_dir = replay_dir
        self._waiting: dict[str, list[Entry]] = {}
        self._arrived = trio.Condition()
        self._reconnect: dict[str, GrpcSeat] = {}  # resume key -> seat of a running match
        self.closed = False
        self.results: list[MatchResult] = []
        self.on_result: Callable[[MatchResult, MatchDriver], None] | None = None

    # ------------------------------------------------------------------ sessions

    async def session(self, conn: Connection) -> None:
        """Run one Play stream: Hello, then wait in the lobby until a match releases it."""
        try:
            entry = await self._hello(conn)
        except ProtocolError as e:
            log.info("session_refused", peer=conn.peer, status=e.status.name, detail=e.detail)
            conn.abort(e.status, e.detail)
            return
        if entry is None:
            return
        conn.bot = entry.name
        bound = log.bind(bot=entry.name, peer=conn.peer)
        if entry.resume:
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
            self._waiting.setdefault(entry.key, []).append(entry)
            async with self._arrived:
                self._arrived.notify_all()
            bound.info("waiting")
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
            queue = self._waiting.get(entry.key, [])
            if entry in queue:
                queue.remove(entry)

    async def _hello(self, conn: Connection) -> Entry | None:
        first = None
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
            if not name or len(name) > 64:
                raise ProtocolError(STATUS["bad_hello"], "hello.name must be 1-64 characters")
            if self.tokens is not None:
                expected = self.tokens.get(hello.token)
                if expected is None:
                    raise ProtocolError(STATUS["bad_token"], "unknown or missing token")
                name = expected
            key = hello.token or name
            return Entry(conn, name, hello.token, hello.resume, key)
        raise ProtocolError(STATUS["hello_timeout"],
                            f"no Hello within {round(self.hello_timeout_s * 1000)} ms")

    # ------------------------------------------------------------------ seats

    async def seat_for(self, key: str, timeout_s: float, runs_only: bool) -> GrpcSeat | None:
        """The next waiting session of entrant ``key`` (None if none arrives in time)."""
        with trio.move_on_after(timeout_s):
            async with self._arrived:
                while True:
                    queue = self._waiting.get(key)
                    while queue:
                        entry = queue.pop(0)
                        if not entry.conn.is_gone:
                            return GrpcSeat(entry, runs_only=runs_only)
                    await self._arrived.wait()
        return None

    async def any_two(self, runs_only: bool) -> tuple[GrpcSeat, GrpcSeat]:
        """The first two waiting sessions, whoever they are (open play)."""
        async with self._arrived:
            while True:
                live = [e for q in self._waiting.values() for e in q if not e.conn.is_gone]
                if len(live) >= 2:
                    live.sort(key=lambda e: e.arrival)
                    a, b = live[0], live[1]
                    for e in (a, b):
                        self._waiting[e.key].remove(e)
                    return (GrpcSeat(a, runs_only=runs_only), GrpcSeat(b, runs_only=runs_only))
                await self._arrived.wait()

    def waiting(self) -> list[tuple[str, str]]:
        """(key, bot name) of every live session waiting in the lobby, oldest first."""
        live = [e for q in self._waiting.values() for e in q if not e.conn.is_gone]
        live.sort(key=lambda e: e.arrival)
        return [(e.key, e.name) for e in live]

    async def wait_arrival(self) -> None:
        """Wait until a session joins the lobby. Cancellation: just stops waiting."""
        async with self._arrived:
            await self._arrived.wait()

    def take_two(self, keys: tuple[str, str], runs_only: bool
                 ) -> tuple[GrpcSeat, GrpcSeat] | None:
        """Seat a waiting session of each of ``keys`` at once (the ladder's pairing), or
        None if either has none; then the lobby is left unchanged."""
        found: list[Entry] = []
        for key in keys:
            entry = next((e for e in self._waiting.get(key, [])
                          if not e.conn.is_gone and e not in found), None)
            if entry is None:
                return None
            found.append(entry)
        for e in found:
            self._waiting[e.key].remove(e)
        return (GrpcSeat(found[0], runs_only=runs_only), GrpcSeat(found[1], runs_only=runs_only))

    def close_lobby(self) -> None:
        """No more matches: every waiting session ends OK (the SDK then stops)."""
        self.closed = True
        for queue in self._waiting.values():
            for entry in queue:
                entry.conn.close()
                entry.done.set()
            queue.clear()

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
                    self._waiting.setdefault(s.entry.key, []).insert(0, s.entry)
            if len(missing) == 2:
                result = driver.abort(Termination.NO_SHOW, "neither bot connected")
            else:
                result = driver.forfeit(missing[0], Termination.NO_SHOW,
                                        f"bot {driver.names[missing[0]]!r} did not connect "
                                        f"within {wait:.1f} s")
            self._done(driver, result)
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
        try:
            result = await run_match(driver, seats)
        except trio.Cancelled:
            if driver.result is not None:
                self._done(driver, driver.result)
            for seat in seats:
                seat.entry.conn.abort(STATUS["shutdown"], "server shutting down")
                seat.entry.done.set()
            raise
        finally:
            for seat in seats:
                self._reconnect.pop(seat.resume_key, None)
        for seat in seats:
            seat.finish()
        self._done(driver, result)
        return result

    async def _run_guarded(self, driver: MatchDriver, seats: tuple[GrpcSeat, GrpcSeat]
                           ) -> None:
        """``run_seated`` for a background match: an error there is logged, never raised
        into the server (one match must not stop the others)."""
        try:
            await self.run_seated(driver, seats)
        except Exception:
            log.exception("match_task_failed", match_id=driver.match_id)
            for seat in seats:
                seat.entry.conn.abort(grpc.StatusCode.INTERNAL, "internal error")
                seat.entry.done.set()

    def _done(self, driver: MatchDriver, result: MatchResult) -> None:
        self.results.append(result)
        if self.replay_dir is not None:
            try:
                write_replay(self.replay_dir / f"{driver.match_id}.jsonl", driver.record)
            except OSError as e:  # a full disk must not take the server down
                log.error("replay_write_failed", match_id=driver.match_id, error=str(e))
        if self.on_result is not None:
            self.on_result(result, driver)

    async def serve_open(self, rules: RulesConfig, time_control: TimeControl,
                         seed: int | str | None = None) -> None:
        """Pair waiting bots two by two and play matches forever (``arena serve``)."""
        base = str(seed) if seed is not None else new_seed()
        async with trio.open_nursery() as nursery:
            for n in itertools.count(1):
                a, b = await self.any_two(rules.runs_only)
                driver = MatchDriver(f"m{n:05d}", rules, (a.name, b.name),
                                     seed=derive_seed(base, f"match:{n}"),
                                     first_dealer=n % 2, time_control=time_control)
                nursery.start_soon(self._run_guarded, driver, (a, b))


def write_replay(path: Path, record: list[dict[str, Any]]) -> None:
    """Write a match record as JSON lines (atomically: a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for item in record:
            f.write(json.dumps(item, separators=(",", ":")) + "\n")
    tmp.replace(path)


async def start_arena(nursery: trio.Nursery, arena: Arena, *, host: str = "127.0.0.1",
                      port: int = 0) -> int:
    """Serve ``arena`` over gRPC in ``nursery``; returns the bound port."""
    port_bound: int = await nursery.start(_serve, arena, host, port)
    return port_bound


async def _serve(arena: Arena, host: str, port: int,
                 task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    await serve_grpc(arena.session, host=host, port=port, task_status=task_status)


__all__ = ["STATUS", "Arena", "GrpcSeat", "ProtocolError", "start_arena", "write_replay"]
