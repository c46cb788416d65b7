"""Serve the Arena gRPC service from a trio program ("design f" of the grpc-trio note).

grpcio has no trio support, so the gRPC server is a grpc.aio server on an asyncio loop that
runs in one helper thread. trio stays the root: the thread is a trio task, started with
``trio.to_thread.run_sync`` inside :func:`serve_grpc`'s nursery, so a crash of the asyncio
side lands in trio as an exception and tears the tree down the structured way.

Exactly two calls cross between the loops:

* asyncio -> trio: ``TrioToken.run_sync_soon`` (FIFO, so the messages of a stream arrive in
  order and before the stream's end);
* trio -> asyncio: ``loop.call_soon_threadsafe``.

Both only schedule a callback; every callback is wrapped so it never raises (an exception
escaping a ``run_sync_soon`` callback would kill the whole trio run). grpc objects are
touched only on the asyncio thread; trio objects only on the trio thread (a
:class:`Connection` is built on the asyncio thread but used only from trio afterwards).

Per Play stream the asyncio side runs a writer loop (outbox -> write / finish) and a reader
task (each message -> the connection's inbox); the trio side runs ``handler(conn)`` as a new
task in a sessions nursery, inside the connection's own cancel scope.

Everything a bot sends is bounded before any work is done on it (``StreamLimits``): the
size of one message (gRPC refuses a bigger one with RESOURCE_EXHAUSTED), the messages and
bytes a stream may have waiting unread, and the streams open at once, in all and per client
address (a stream past either is refused RESOURCE_EXHAUSTED at once, with a
``grpc-retry-pushback-ms`` hint). Each message is stamped with the time it was read, on
the asyncio thread, so a busy trio loop never makes a bot's answer look late; and a
``LagTracker`` on the asyncio loop measures how late that loop runs (``aio_lag``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeAlias, TypeVarTuple

import grpc
import grpc.aio
import structlog
import trio
from gin_arena_core.protocol import pb, pb_grpc
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.match.lag import DelayAverage, LagTracker
from arena.match.timers import TIMED_OUT, Mailbox, TimedOut, TimerService

__all__ = [
    "ARENA_SERVICE",
    "INTERNAL_DETAILS",
    "MALFORMED_DETAILS",
    "MAX_UNREAD_MESSAGES",
    "SHUTDOWN_DETAILS",
    "Bridge",
    "Connection",
    "Handler",
    "LeaderboardHandler",
    "StatusHandler",
    "StreamLimits",
    "check_bindable",
    "format_address",
    "peer_host",
    "serve_grpc",
]

log = structlog.get_logger(__name__)

_Ts = TypeVarTuple("_Ts")

ARENA_SERVICE: Final[str] = pb.DESCRIPTOR.services_by_name["Arena"].full_name
"""Full name of the Arena service, ``"gin_arena.v1.Arena"``."""

MAX_UNREAD_MESSAGES: Final = 64
"""Messages a bot may send ahead of the session reading them. The protocol is strictly
request / reply, so more means a flooding bot: its call ends with RESOURCE_EXHAUSTED and
the session sees it as gone (cancelled), instead of the inbox growing without bound."""

HARD_MAX_MESSAGE_BYTES: Final = 256 * 1024
"""What gRPC itself reads of one message at most; a bigger one ends the stream
RESOURCE_EXHAUSTED inside gRPC (the arena sees only the stream end)."""

RETRY_PUSHBACK_KEY: Final = "grpc-retry-pushback-ms"
"""Trailing metadata of a refused stream: how long the client should wait before trying
again (the key of gRPC's retry design)."""


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """What one server accepts (docs/protocol.md, "Limits"). 0: no limit."""

    max_message_bytes: int = 16 * 1024  # a Gin Rummy message fits in a few hundred bytes
    max_unread_messages: int = MAX_UNREAD_MESSAGES
    max_unread_bytes: int = 64 * 1024  # per stream, waiting for its session to read them
    max_streams: int = 5000  # open Play streams in all
    max_streams_per_address: int = 256  # from one client address (loopback: no limit)
    retry_after_s: float = 5.0  # the pushback a refused stream is given

ACCEPT_WAIT_S: Final = 3600
"""How long a new call may wait in gRPC's queue for the arena to take it up.

grpc.aio takes up one new call per turn of its event loop. Under load (hundreds of matches
on that loop) a turn takes tens of milliseconds, so a burst of a thousand connections
waits in gRPC core's queue for many seconds. Core cancels a call that waited longer than
``grpc.server_max_unrequested_time_in_server`` (30 s by default) with CANCELLED, before
the arena ever sees it: no log line, no status the arena chose. That was how ~750 of
1,500 bots vanished (issue 17). A call waiting in that queue is a bot waiting for the
lobby, so it may wait as long as the lobby would let it."""


def _accept_options(limits: StreamLimits) -> list[tuple[str, int]]:
    """gRPC server options that leave refusing calls to the arena (see ACCEPT_WAIT_S):
    core neither cancels a waiting call nor starts refusing waiting calls (at 1,000 by
    default, RESOURCE_EXHAUSTED chosen at random) below the arena's own stream limit."""
    pending = max(limits.max_streams, 1000) if limits.max_streams else 1 << 30
    return [("grpc.server_max_unrequested_time_in_server", ACCEPT_WAIT_S),
            ("grpc.server.max_pending_requests", pending),
            ("grpc.server.max_pending_requests_hard_limit", pending)]


SWITCH_INTERVAL_S: Final = 0.0005
"""The interpreter's thread switch interval while a server runs (Python's default: 5 ms).

The server is two threads on one GIL: trio (the matches) and asyncio (gRPC). When one
wants the GIL the other holds, it waits up to a switch interval, and under load the two
hand it back and forth on nearly every wake-up, so each hop between the loops can cost
5 ms and a decision a few of them. Measured with 1,500 bots on 2 cores (issue 17): at
5 ms the arena charged a median 40 ms per decision, defaulted 10 moves and took up a
third of the new calls too late; at 0.5 ms, 13 ms, none, and all of them. With 2,000
bots and admission's window, 5 ms took three minutes to take up the new calls (0.5 ms:
7 s) for 14% more decisions/s: the cost of more, shorter GIL hand-offs
(docs/benchmarks.md, "One arena under load")."""

_switch_lock = threading.Lock()
_switch_users = 0
_switch_saved = 0.0


@contextlib.contextmanager
def _switch_interval(seconds: float) -> Iterator[None]:
    """Lower ``sys.setswitchinterval`` to at most ``seconds`` while any server in this
    process runs; the last one to stop puts back what was there before the first."""
    global _switch_users, _switch_saved
    with _switch_lock:
        if _switch_users == 0:
            _switch_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved, seconds))
        _switch_users += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_users -= 1
            if _switch_users == 0:
                sys.setswitchinterval(_switch_saved)


SHUTDOWN_DETAILS: Final = "server shutting down"
"""Status details of the UNAVAILABLE that ends each open stream when the server stops."""

INTERNAL_DETAILS: Final = "internal error"
"""Status details of the INTERNAL that ends a stream whose session crashed."""

MALFORMED_DETAILS: Final = "malformed message: not a gin_arena.v1.BotMessage"
"""Status details of the INVALID_ARGUMENT that ends a stream whose bytes do not parse. The
session sees such a bot as gone (its scope is cancelled)."""


@dataclass(frozen=True, slots=True)
class _Finish:
    """Outbox item: end the call with this status (OK = finish normally); a retry hint."""

    code: grpc.StatusCode
    details: str
    retry_after_s: float = 0.0


_Outgoing: TypeAlias = "pb.ServerMessage | bytes | _Finish"


def _run_guarded(fn: Callable[[*_Ts], object], *args: *_Ts) -> None:
    """Run a cross-loop callback; log instead of raising (a raise would kill the loop)."""
    try:
        fn(*args)
    except Exception:
        log.exception("bridge_callback_failed", callback=getattr(fn, "__qualname__", repr(fn)))


class Connection:
    """One Play stream, as the trio side sees it.

    All methods must be called from the trio thread. The bridge runs the handler inside
    :attr:`cancel_scope`; when the call ends from the client's side (cancel, disconnect,
    or EOF followed by the call ending) before the session closed or aborted it, that scope
    is cancelled, so whatever the session is waiting on raises :class:`trio.Cancelled`.
    """

    def __init__(
        self,
        *,
        peer: str,
        metadata: Mapping[str, str | bytes],
        post: Callable[[_Outgoing], None],
        limits: StreamLimits | None = None,
        clock_offset: float = 0.0,
        drain: Callable[[], None] | None = None,
        timers: TimerService | None = None,
    ) -> None:
        """Built by the bridge on the asyncio thread; ``post`` hands an item to its writer.
        ``clock_offset`` turns ``time.perf_counter()`` into trio's clock; ``drain`` runs on
        the trio thread whatever the asyncio side has already handed over (messages read,
        streams ended) but trio has not run yet; ``timers`` serve :meth:`receive_by`'s
        deadlines."""
        self.peer: Final = peer
        """The client's address as gRPC reports it, e.g. ``"ipv4:127.0.0.1:53422"``."""
        self.metadata: Final = MappingProxyType(dict(metadata))
        """The call's invocation metadata (read-only; for a repeated key, the last value)."""
        self.cancel_scope: Final = trio.CancelScope()
        """The scope the session runs in; cancelled when the client goes away."""
        self.bot = ""
        """The bot's name once its session knows it (after Hello), for the bridge's logs;
        set on the trio thread, only read elsewhere."""
        self.arrived = 0.0
        """When the message last returned by :meth:`receive` or :meth:`receive_nowait`
        was read from the network, on trio's clock."""
        self.arrived_lag = 0.0
        """The asyncio loop's total lag (``Bridge.aio_stalled_s``) at that moment."""
        self._post = post
        self._drain = drain
        self._limits = limits or StreamLimits()
        self._clock_offset = clock_offset
        self._inbox = Mailbox[tuple[pb.BotMessage, float, float, int]](timers)
        self._unread_bytes = 0
        self._is_finished = False  # close() or abort() was called
        self._is_gone = False  # the call is over

    @property
    def is_gone(self) -> bool:
        """True once the call is over: nothing sent from now on reaches the bot.

        It becomes True when the client cancels or disconnects, and also shortly after
        :meth:`close` or :meth:`abort` once gRPC has ended the call.
        """
        return self._is_gone

    def send(self, message: pb.ServerMessage | bytes) -> None:
        """Queue ``message`` for the bot without blocking (``bytes``: a ServerMessage
        already encoded, written as they are).

        Messages are written in order, and before any status set by :meth:`abort`. If the
        bot is already gone the message is dropped silently (the session's scope is being
        cancelled anyway). Raises :class:`trio.ClosedResourceError` after :meth:`close` or
        :meth:`abort`, and :class:`TypeError` for anything but a ``pb.ServerMessage`` or
        ``bytes``.
        """
        if not isinstance(message, bytes | pb.ServerMessage):
            raise TypeError(f"send() takes a pb.ServerMessage, not {type(message).__name__}")
        if self._is_finished:
            raise trio.ClosedResourceError("send() after close() or abort()")
        if not self._is_gone:
            self._post_item(message)

    async def receive(self) -> pb.BotMessage | None:
        """Wait for the bot's next message; None once the bot half-closed (EOF) or left.

        Messages sent before the EOF are all returned first. Cancellation (e.g. a
        ``trio.fail_after`` move deadline) loses nothing: a message that arrives later is
        returned by the next call. Raises :class:`trio.ClosedResourceError` after
        :meth:`close` or :meth:`abort`.
        """
        item = await self._inbox.get()
        if item is None or item is TIMED_OUT:
            return None
        return self._took(item)

    async def receive_by(self, deadline: float) -> pb.BotMessage | TimedOut | None:
        """:meth:`receive`, or ``TIMED_OUT`` if trio's clock reaches ``deadline`` first
        (a timer of the bridge's, not a cancel scope: a match waits so for every decision)."""
        item = await self._inbox.get(deadline)
        if item is None or item is TIMED_OUT:
            return item
        return self._took(item)

    def receive_nowait(self) -> pb.BotMessage | None:
        """The bot's next message if one has already been read from the network (even if
        the trio loop, busy, has not taken it in yet), else None, at once. Raises
        :class:`trio.ClosedResourceError` after :meth:`close` or :meth:`abort`."""
        if self._drain is not None:
            self._drain()
        item = self._inbox.get_nowait()
        return None if item is None else self._took(item)

    def _took(self, item: tuple[pb.BotMessage, float, float, int]) -> pb.BotMessage:
        message, stamp, lag, size = item
        self._unread_bytes -= size
        self.arrived = stamp + self._clock_offset
        self.arrived_lag = lag
        return message

    def abort(self, code: grpc.StatusCode, details: str, *, retry_after_s: float = 0.0
              ) -> None:
        """End the call with status ``code`` after the messages already sent; send no more.

        Does not block. For a timeout, :meth:`send` a last message saying why and then
        ``abort(grpc.StatusCode.DEADLINE_EXCEEDED, ...)``: the bot receives both, in order.
        ``retry_after_s`` > 0 tells the client it may try again that much later (the
        ``grpc-retry-pushback-ms`` trailer). A no-op if the call is already closed, aborted
        or gone.
        """
        if code == grpc.StatusCode.OK:
            raise ValueError("abort() needs an error code; use close() to finish with OK")
        self._finish(_Finish(code, details, retry_after_s))

    def close(self) -> None:
        """Finish the call with status OK after the messages already sent; send no more.

        Does not block. A no-op if the call is already closed, aborted or gone.
        """
        self._finish(_Finish(grpc.StatusCode.OK, ""))

    def __repr__(self) -> str:
        return f"<Connection peer={self.peer!r} gone={self._is_gone}>"

    def _finish(self, item: _Finish) -> None:
        if self._is_finished:
            return
        self._is_finished = True
        self._inbox.close()
        if not self._is_gone:
            self._post_item(item)

    def _post_item(self, item: _Outgoing) -> None:
        try:
            self._post(item)
        except RuntimeError:  # the asyncio loop is closed: the server is gone
            self._on_call_ended()

    # ---- called on the trio thread through run_sync_soon (wrapped in _run_guarded) ----

    def _deliver(self, message: pb.BotMessage, stamp: float, lag: float, size: int) -> None:
        """A message from the bot, read at ``stamp`` (``time.perf_counter()``) when the
        asyncio loop's total lag was ``lag``; ``size`` bytes on the wire."""
        if self._is_finished or self._is_gone:
            return
        limits = self._limits
        unread = len(self._inbox)
        if unread >= limits.max_unread_messages or (
                limits.max_unread_bytes and self._unread_bytes + size > limits.max_unread_bytes):
            log.warning("bot_flooding", bot=self.bot or None, peer=self.peer,
                        unread=unread, unread_bytes=self._unread_bytes + size,
                        limit=limits.max_unread_messages, limit_bytes=limits.max_unread_bytes)
            self.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {limits.max_unread_messages} messages or "
                f"{limits.max_unread_bytes} bytes sent ahead of the server",
            )
            self.cancel_scope.cancel()
            return
        self._unread_bytes += size
        self._inbox.put((message, stamp, lag, size))

    def _deliver_eof(self) -> None:
        """The bot half-closed its side: receive() returns None after the buffered messages."""
        self._inbox.end()

    def _on_call_ended(self) -> None:
        """The call is over (ended by us, by the client, or by the server stopping)."""
        self._is_gone = True
        self._inbox.end()
        if not self._is_finished:
            self.cancel_scope.cancel()


Handler: TypeAlias = Callable[[Connection], Awaitable[None]]
"""A session: runs for one Play stream (see :func:`serve_grpc`)."""

LeaderboardHandler: TypeAlias = Callable[[pb.LeaderboardRequest], Awaitable[pb.LeaderboardReply]]
"""Answers Arena.Leaderboard; runs on the trio side (see :func:`serve_grpc`)."""

StatusHandler: TypeAlias = Callable[[], pb.StatusReply]
"""Answers Arena.Status on the asyncio thread, from what the trio side last published
(it must only read: no trio calls). The bridge fills in its own figures (streams, the
asyncio loop's lag)."""


def peer_host(peer: str) -> str:
    """The client's address without its port, from gRPC's peer string
    (``"ipv4:127.0.0.1:53422"`` -> ``"127.0.0.1"``, ``"ipv6:[::1]:5"`` -> ``"::1"``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    return peer  # unix sockets and the like: one "address" each


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.startswith("unix:")


def format_address(host: str, port: int) -> str:
    """``host:port`` as a client dials it (an IPv6 literal in brackets: ``[::1]:50051``)."""
    host = host.strip("[]")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _Batch:
    """Calls for the other thread, run in order; calls queued before it wakes share one wakeup.

    Every message crossing costs a thread wakeup (a self-pipe write, an epoll return, a GIL
    hand-off); a decision moves several messages, so batching them is most of the bridge's
    cost under load. Thread-safe; ``wake`` is the other loop's thread-safe scheduler.
    """

    def __init__(self, wake: Callable[[Callable[[], None]], object]) -> None:
        self._wake = wake
        self._calls: list[tuple[Callable[..., object], tuple[object, ...]]] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., object], *args: object) -> None:
        with self._lock:
            self._calls.append((fn, args))
            if len(self._calls) > 1:
                return  # a wakeup for this batch is already scheduled
        try:
            self._wake(self._run)
        except BaseException:
            with self._lock:
                self._calls.clear()
            raise

    def _run(self) -> None:
        """Run the calls queued so far (on the other thread; also called there directly to
        take in what is already queued, ahead of the scheduled wakeup)."""
        with self._lock:
            calls, self._calls = self._calls, []
        for fn, args in calls:
            _run_guarded(fn, *args)


class _Outbox:
    """What one stream's writer is to write, in order (asyncio thread only): items are
    added without blocking, the writer waits for the next."""

    __slots__ = ("_items", "_loop", "_waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._items: deque[tuple[_Outgoing, float]] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: tuple[_Outgoing, float]) -> None:
        """Add ``item`` (the item and when it was posted, ``time.perf_counter()``)."""
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def get(self) -> tuple[_Outgoing, float]:
        """The next item, waiting for one. Cancelling it loses nothing."""
        items = self._items
        while not items:
            self._waiter = waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return items.popleft()


@dataclass(frozen=True, slots=True)
class _Oversized:
    """A message bigger than the arena accepts, in place of its decoded form."""

    size: int


def _bounded_reader(limit: int) -> Callable[[bytes], pb.BotMessage | _Oversized]:
    """Decode a BotMessage, or note its size if it is over ``limit`` bytes (0: no limit),
    before any work is spent on it."""
    decode = pb.BotMessage.FromString

    def read(data: bytes) -> pb.BotMessage | _Oversized:
        if limit and len(data) > limit:
            return _Oversized(len(data))
        message: pb.BotMessage = decode(data)
        return message

    return read


def _serialize(message: pb.ServerMessage | bytes) -> bytes:
    """A Play message's bytes (one the session encoded itself passes as it is)."""
    if isinstance(message, bytes):
        return message
    encoded: bytes = message.SerializeToString()
    return encoded


def _add_arena_service(servicer: _ArenaServicer, server: grpc.aio.Server, limit: int) -> None:
    """Register the Arena service as the generated code does, but with Play's messages
    decoded by ``_bounded_reader(limit)``."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play, request_deserializer=_bounded_reader(limit),
            response_serializer=_serialize),
        "Leaderboard": grpc.unary_unary_rpc_method_handler(
            servicer.Leaderboard, request_deserializer=pb.LeaderboardRequest.FromString,
            response_serializer=pb.LeaderboardReply.SerializeToString),
        "Status": grpc.unary_unary_rpc_method_handler(
            servicer.Status, request_deserializer=pb.StatusRequest.FromString,
            response_serializer=pb.StatusReply.SerializeToString),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(ARENA_SERVICE,
                                                                          handlers),))
    server.add_registered_method_handlers(ARENA_SERVICE, handlers)


class Bridge:
    """The state shared by the two sides of one server; each attribute has one owner thread."""

    def __init__(
        self,
        handler: Handler,
        *,
        host: str,
        port: int,
        extra_servicers: Callable[[grpc.aio.Server], Iterable[str]] | None,
        grace: float,
        leaderboard: LeaderboardHandler | None = None,
        tls: tuple[bytes, bytes] | None = None,
        limits: StreamLimits | None = None,
        status: StatusHandler | None = None,
    ) -> None:
        self._handler = handler
        self.leaderboard = leaderboard  # read-only after construction (both threads)
        self.status = status  # read-only after construction (both threads)
        self.limits = limits or StreamLimits()  # read-only after construction
        self._tls = tls
        # trio's clock is perf_counter plus a fixed offset (trio.lowlevel SystemClock)
        self.clock_offset = trio.current_time() - time.perf_counter()
        self.aio_lag = LagTracker(time.perf_counter())  # ticked on the asyncio thread
        # asyncio thread: how long a message takes from the match loop's send to gRPC
        # having written it (both loops' queues and the write): the arena's own share of
        # every decision's time, which loop lag alone does not show (issue 17)
        self.out_delay = DelayAverage()
        # asyncio thread only: open streams, by client address
        self.streams = 0
        self.by_address: Counter[str] = Counter()
        self.refused = 0
        self._refusal_logged: dict[str, float] = {}
        self.sessions: trio.Nursery | None = None  # set before the loop thread starts
        self.timers = TimerService()  # trio thread: the sessions' deadlines (run by serve_grpc)
        self._token = trio.lowlevel.current_trio_token()
        self._to_trio = _Batch(self._token.run_sync_soon)
        self._to_aio: _Batch | None = None  # made with the loop
        self._host = host
        self._port = port
        self._extra_servicers = extra_servicers
        self._grace = grace
        # trio thread only:
        self._ready = trio.Event()
        self._bound_port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None  # set (on its loop) to stop the server
        self._is_stop_requested = False

    # ---- trio side --------------------------------------------------------------

    async def run_loop_thread(self) -> None:
        """Run the asyncio loop and the gRPC server in a helper thread until stopped.

        Not cancellable: it returns after :meth:`request_stop` once the server has stopped
        (the helper thread cannot be interrupted, only asked to stop). Raises whatever
        ended the asyncio side, e.g. a failure to bind the port.
        """
        with _switch_interval(SWITCH_INTERVAL_S):
            await trio.to_thread.run_sync(self._run_loop)
        if not self._is_stop_requested:
            raise RuntimeError("the gRPC event loop stopped unexpectedly")

    async def wait_ready(self) -> int:
        """Wait until the server accepts calls; return the bound port. Cancellable."""
        await self._ready.wait()
        return self._bound_port

    def request_stop(self) -> None:
        """Ask the asyncio side to stop the server (grace period) and end its loop."""
        self._is_stop_requested = True
        if self._loop is None or self._stop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self._loop.call_soon_threadsafe(self._stop.set)

    def _on_ready(self, loop: asyncio.AbstractEventLoop, stop: asyncio.Event, port: int) -> None:
        self._loop = loop
        self._stop = stop
        self._bound_port = port
        self._ready.set()
        if self._is_stop_requested:  # cancelled while starting: stop right away
            self.request_stop()

    def spawn(self, conn: Connection) -> None:
        """Start a session for a new call; refuse it if the sessions nursery is closed."""
        if self.sessions is not None:
            try:
                self.sessions.start_soon(self._run_session, conn, name=f"session {conn.peer}")
                return
            except RuntimeError:  # the nursery is closed: we are shutting down
                pass
        conn.abort(grpc.StatusCode.UNAVAILABLE, SHUTDOWN_DETAILS)

    async def _run_session(self, conn: Connection) -> None:
        """Run the handler for one call, and make sure the call ends however it returns.

        Returning ends the call OK (if the handler did not end it), an exception ends it
        with INTERNAL and is logged, not propagated (one broken session must not stop the
        server). Cancellation from outside (shutdown) ends it with UNAVAILABLE and
        propagates; the client going away cancels only ``conn.cancel_scope``.
        """
        try:
            try:
                with conn.cancel_scope:
                    await self._handler(conn)
            except* Exception as crashed:  # also the errors in a group mixed with Cancelled
                errors = crashed.exceptions
                log.error(
                    "session_crashed",
                    bot=conn.bot or None,
                    peer=conn.peer,
                    exc_info=errors[0] if len(errors) == 1 else crashed,
                )
                conn.abort(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
            conn.close()  # a no-op if the handler or the crash ended the call
        finally:
            # only still open if cancelled from outside (shutdown), or KeyboardInterrupt
            conn.abort(grpc.StatusCode.UNAVAILABLE, SHUTDOWN_DETAILS)

    def spawn_call(self, request: pb.LeaderboardRequest,
                   post: Callable[[pb.LeaderboardReply | _Finish], None]) -> None:
        """Answer a unary Leaderboard call in a trio task; ``post`` carries the answer back."""
        if self.sessions is not None and self.leaderboard is not None:
            try:
                self.sessions.start_soon(self._run_call, self.leaderboard, request, post,
                                         name="leaderboard call")
                return
            except RuntimeError:  # the nursery is closed: we are shutting down
                pass
        post(_Finish(grpc.StatusCode.UNAVAILABLE, SHUTDOWN_DETAILS))

    async def _run_call(self, answer: LeaderboardHandler, request: pb.LeaderboardRequest,
                        post: Callable[[pb.LeaderboardReply | _Finish], None]) -> None:
        """Run ``answer``; an error ends the call INTERNAL, cancellation UNAVAILABLE."""
        reply: pb.LeaderboardReply | _Finish = _Finish(grpc.StatusCode.UNAVAILABLE,
                                                      SHUTDOWN_DETAILS)
        try:
            reply = await answer(request)
        except Exception:
            log.exception("leaderboard_failed")
            reply = _Finish(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
        finally:
            post(reply)

    def drain_to_trio(self) -> None:
        """On the trio thread: run the asyncio -> trio calls already queued, now."""
        self._to_trio._run()

    def to_trio(self, fn: Callable[[*_Ts], object], *args: *_Ts) -> None:
        """Schedule ``fn(*args)`` on the trio thread (the one asyncio -> trio crossing)."""
        with contextlib.suppress(trio.RunFinishedError):  # the trio run is over
            self._to_trio.submit(fn, *args)

    # ---- asyncio side -----------------------------------------------------------

    def _run_loop(self) -> None:
        """The helper thread's body."""
        asyncio.run(self._aio_main())

    async def _aio_main(self) -> None:
        """The helper thread's loop: serve until :meth:`request_stop`, then stop gRPC."""
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        lag_task = asyncio.create_task(self._tick_aio_lag())
        options: list[tuple[str, int]] = [
            ("grpc.so_reuseport", 0),  # a second server on a port in use must fail
            # gRPC's own cap bounds what it buffers; the arena's smaller limit is checked
            # (and logged, with the peer) when a message is decoded: _bounded_reader
            ("grpc.max_receive_message_length", HARD_MAX_MESSAGE_BYTES),
            *_accept_options(self.limits),
        ]
        server = grpc.aio.server(options=options)
        _add_arena_service(_ArenaServicer(self, loop), server, self.limits.max_message_bytes)
        names = [ARENA_SERVICE]
        if self._extra_servicers is not None:
            names.extend(self._extra_servicers(server))
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        for name in names:
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        reflection.enable_server_reflection(
            [*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server
        )
        address = format_address(self._host, self._port)
        if self._tls is not None:  # raises RuntimeError if it cannot bind
            key, chain = self._tls
            port = server.add_secure_port(address, grpc.ssl_server_credentials([(key, chain)]))
        else:
            port = server.add_insecure_port(address)
        await server.start()
        try:
            self.to_trio(self._on_ready, loop, stop, port)
            # not server.wait_for_termination(): cancelling that breaks a later stop()
            await stop.wait()
            await health_servicer.enter_graceful_shutdown()
        finally:
            lag_task.cancel()
            await server.stop(self._grace)

    async def _tick_aio_lag(self) -> None:
        """Tick the asyncio loop's lag tracker (on its own clock: perf_counter)."""
        tracker = self.aio_lag
        while True:
            await asyncio.sleep(tracker.tick_s)
            tracker.tick(time.perf_counter())

    def aio_stalled_s(self) -> float:
        """How long the asyncio loop has run late in all (any thread may ask)."""
        return self.aio_lag.stalled_s(time.perf_counter())

    def admit(self, peer: str) -> str:
        """On the asyncio thread, for a new Play stream: "" to serve it (counted), else why
        it is refused (RESOURCE_EXHAUSTED). Pair with :meth:`release`."""
        limits = self.limits
        host = peer_host(peer)
        why = ""
        if limits.max_streams and self.streams >= limits.max_streams:
            why = (f"arena full: {self.streams} sessions open (limit {limits.max_streams}); "
                   f"retry after {limits.retry_after_s:g} s")
        elif (limits.max_streams_per_address and not _is_loopback(host)
              and self.by_address[host] >= limits.max_streams_per_address):
            why = (f"too many sessions from {host}: {self.by_address[host]} open (limit "
                   f"{limits.max_streams_per_address}); retry after {limits.retry_after_s:g} s")
        if why:
            self.refused += 1
            now = time.monotonic()
            if now - self._refusal_logged.get(host, -math.inf) >= 10.0:  # one line per 10 s
                self._refusal_logged[host] = now
                log.warning("session_refused", peer=peer, status="RESOURCE_EXHAUSTED",
                            detail=why, refused_so_far=self.refused)
            return why
        self.streams += 1
        self.by_address[host] += 1
        return ""

    def release(self, peer: str) -> None:
        """On the asyncio thread: a stream :meth:`admit` served has ended."""
        host = peer_host(peer)
        self.streams -= 1
        self.by_address[host] -= 1
        if self.by_address[host] <= 0:
            del self.by_address[host]

    def make_post(
        self, loop: asyncio.AbstractEventLoop, outbox: _Outbox
    ) -> Callable[[_Outgoing], None]:
        """A thread-safe way to put into ``outbox`` (the one trio -> asyncio crossing)."""

        if self._to_aio is None:
            self._to_aio = _Batch(loop.call_soon_threadsafe)
        batch = self._to_aio

        def post(item: _Outgoing) -> None:
            batch.submit(outbox.put_nowait, (item, time.perf_counter()))

        return post


class _ArenaServicer(pb_grpc.ArenaServicer):
    """The Arena service on the asyncio side: each Play call becomes a trio session."""

    def __init__(self, bridge: Bridge, loop: asyncio.AbstractEventLoop) -> None:
        self._bridge = bridge
        self._loop = loop

    async def Leaderboard(  # CamelCase: the RPC name in the service
        self, request: pb.LeaderboardRequest, context: grpc.aio.ServicerContext
    ) -> pb.LeaderboardReply:
        """Ask the trio side for the standings (UNIMPLEMENTED if the server has none)."""
        if self._bridge.leaderboard is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this arena has no leaderboard")
        answer: asyncio.Future[pb.LeaderboardReply | _Finish] = self._loop.create_future()

        def deliver(item: pb.LeaderboardReply | _Finish) -> None:
            if not answer.done():  # the client may have gone (the future is cancelled)
                answer.set_result(item)

        def post(item: pb.LeaderboardReply | _Finish) -> None:  # on the trio thread
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                self._loop.call_soon_threadsafe(_run_guarded, deliver, item)

        self._bridge.to_trio(self._bridge.spawn_call, request, post)
        reply = await answer
        if isinstance(reply, _Finish):
            await context.abort(reply.code, reply.details)
        assert isinstance(reply, pb.LeaderboardReply)
        return reply

    async def Status(  # CamelCase: the RPC name in the service
        self, request: pb.StatusRequest, context: grpc.aio.ServicerContext
    ) -> pb.StatusReply:
        """The arena's load, answered here on the asyncio thread (never waits for trio)."""
        bridge = self._bridge
        reply = bridge.status() if bridge.status is not None else pb.StatusReply()
        reply.sessions_open = bridge.streams
        reply.sessions_refused = bridge.refused
        reply.grpc_loop_lag_ms = bridge.aio_lag.lag_ms(time.perf_counter())
        reply.max_message_bytes = bridge.limits.max_message_bytes
        return reply

    async def Play(  # CamelCase: the RPC name in the service
        self, request_iterator: Any, context: grpc.aio.ServicerContext
    ) -> None:
        """Bridge one call: start its session in trio, then write what the session sends.

        Ends when the session closes or aborts the call; if the client cancels (or the
        server stops) grpc cancels this task, and the session's scope is cancelled.
        """
        bridge = self._bridge
        peer = context.peer()
        refused = bridge.admit(peer)
        if refused:
            context.set_trailing_metadata(
                ((RETRY_PUSHBACK_KEY, str(round(bridge.limits.retry_after_s * 1000))),))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        try:
            await self._serve(context, peer)
        finally:
            bridge.release(peer)

    async def _serve(self, context: grpc.aio.ServicerContext, peer: str) -> None:
        bridge = self._bridge
        outbox = _Outbox(self._loop)
        metadata = {m.key: m.value for m in context.invocation_metadata() or ()}
        conn = Connection(
            peer=peer,
            metadata=metadata,
            post=bridge.make_post(self._loop, outbox),
            limits=bridge.limits,
            clock_offset=bridge.clock_offset,
            drain=bridge.drain_to_trio,
            timers=bridge.timers,
        )
        bridge.to_trio(bridge.spawn, conn)
        reader = asyncio.create_task(self._read(context, conn, outbox))
        try:
            out_delay = bridge.out_delay
            free_at = time.perf_counter()  # when this writer was last ready for an item
            while True:
                item, posted = await outbox.get()
                if isinstance(item, _Finish):
                    if item.retry_after_s > 0:
                        context.set_trailing_metadata(
                            ((RETRY_PUSHBACK_KEY, str(round(item.retry_after_s * 1000))),))
                    if item.code != grpc.StatusCode.OK:
                        context.set_code(item.code)
                        context.set_details(item.details)
                    return
                ready = max(posted, free_at)
                await context.write(item)
                # the wait the arena caused: from the later of the send and this writer
                # being free (a bot that stops reading holds up its own later writes,
                # not the arena) to gRPC having written it; a write held up by the bot's
                # flow control counts at most DelayAverage.clip_s
                free_at = time.perf_counter()
                out_delay.record(free_at, free_at - ready)
        except Exception as exc:  # a write failed: the call is broken
            log.debug("write_failed", bot=conn.bot or None, peer=conn.peer, error=repr(exc))
        finally:
            reader.cancel()
            self._bridge.to_trio(conn._on_call_ended)

    async def _read(
        self,
        context: grpc.aio.ServicerContext,
        conn: Connection,
        outbox: _Outbox,
    ) -> None:
        """Forward every message from the bot to the session, then the EOF."""
        to_trio = self._bridge.to_trio
        try:
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    to_trio(conn._deliver_eof)
                    return
                if isinstance(message, _Oversized):
                    limit = self._bridge.limits.max_message_bytes
                    log.warning("message_too_large", bot=conn.bot or None, peer=conn.peer,
                                size=message.size, limit=limit)
                    outbox.put_nowait((_Finish(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"a message of {message.size} bytes; the arena accepts at most {limit} "
                        "(docs/protocol.md, Limits)"), time.perf_counter()))
                    to_trio(conn._on_call_ended)
                    return
                now = time.perf_counter()
                to_trio(conn._deliver, message, now, self._bridge.aio_lag.stalled_s(now),
                        message.ByteSize())
        except DecodeError as exc:
            log.info("malformed_message", bot=conn.bot or None, peer=conn.peer, error=str(exc))
            outbox.put_nowait((_Finish(grpc.StatusCode.INVALID_ARGUMENT, MALFORMED_DETAILS),
                               time.perf_counter()))
        except Exception:
            log.exception("read_failed", bot=conn.bot or None, peer=conn.peer)
            outbox.put_nowait((_Finish(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS),
                               time.perf_counter()))


def check_bindable(host: str, port: int) -> None:
    """``OSError`` with a one-line message if a server cannot listen on ``host:port`` (in
    use, not an address of this machine, unresolvable). Servers call it before gRPC binds,
    which would log its own error lines; a port taken between the two fails there instead."""
    if port == 0:
        return
    where = f"cannot serve on {host}:{port}"
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise OSError(f"{where}: {e.strerror}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC does
            try:
                probe.bind(address)
            except OSError as e:
                raise OSError(f"{where}: {e.strerror or e}") from None


async def serve_grpc(
    handler: Handler,
    *,
    host: str,
    port: int,
    extra_servicers: Callable[[grpc.aio.Server], Iterable[str]] | None = None,
    grace: float = 1.0,
    leaderboard: LeaderboardHandler | None = None,
    tls: tuple[bytes, bytes] | None = None,
    limits: StreamLimits | None = None,
    status: StatusHandler | None = None,
    on_bridge: Callable[[Bridge], None] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the Arena service on ``host:port`` and run ``handler(conn)`` for each Play call.

    Use it with ``port = await nursery.start(serve_grpc, handler, host=..., port=0)``: the
    bound port is reported through ``task_status.started(port)`` once calls are accepted.
    Besides Arena, the server offers gRPC health checking (SERVING for ``""``, Arena and the
    extra services) and server reflection. ``extra_servicers(server)``, if given, runs on the
    asyncio thread before the server starts; it adds more grpc.aio servicers and returns
    their full service names (for health and reflection). Arena.Leaderboard is answered by
    ``await leaderboard(request)`` in a trio task of the sessions nursery (an exception
    ends the call INTERNAL); without it, UNIMPLEMENTED. ``tls`` = (private key PEM,
    certificate chain PEM) serves over TLS instead of plaintext.

    Each ``handler(conn)`` runs as its own trio task inside ``conn.cancel_scope``; see
    :class:`Connection`. When it returns the call finishes OK (unless the handler ended it);
    if it raises, the error is logged and the call ends INTERNAL, and the server goes on.

    Runs until cancelled. Cancellation shuts down: every session is cancelled and its call
    ends with UNAVAILABLE ``"server shutting down"``, calls arriving meanwhile get the same,
    health turns NOT_SERVING, gRPC stops with ``grace`` seconds for calls in flight, and
    the helper thread ends; only then does this return (raising the Cancelled). A failure
    of the asyncio side (e.g. the port cannot be bound) propagates as an exception (in an
    exception group, as trio nurseries raise).

    ``limits`` bounds what bots may send and how many streams are served
    (:class:`StreamLimits`). Arena.Status is answered on the asyncio thread by
    ``status()`` plus the bridge's own figures. ``on_bridge(bridge)`` is called once the
    bridge exists (its ``aio_stalled_s`` is the asyncio loop's lag, for the match clock).
    """
    bridge = Bridge(handler, host=host, port=port, extra_servicers=extra_servicers, grace=grace,
                     leaderboard=leaderboard, tls=tls, limits=limits, status=status)
    if on_bridge is not None:
        on_bridge(bridge)
    async with trio.open_nursery() as root:
        try:
            async with trio.open_nursery() as sessions:
                bridge.sessions = sessions
                root.start_soon(bridge.timers.run, name="session timers")
                root.start_soon(bridge.run_loop_thread, name="grpc.aio loop thread")
                bound = await bridge.wait_ready()
                log.info("grpc_serving", host=host, port=bound)
                task_status.started(bound)
                await trio.sleep_forever()
        finally:
            # every session has ended and posted its status before this (FIFO crossing)
            bridge.request_stop()
