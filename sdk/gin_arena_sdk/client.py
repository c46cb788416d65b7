"""Run a bot against an arena over gRPC (synchronous grpcio: no asyncio, no trio).

One Play stream per match: Hello, then answer every DecisionRequest with an ActionReply.
After a match the bot says Hello again for the next one; it stops when the arena ends a
stream without starting a match (no more matches for it), after ``matches`` matches, or on
a refusal it cannot fix (bad token, bad protocol version). A dropped connection in the
middle of a match is retried with ``resume`` = the seat's secret resume key from
MatchStart, within the arena's grace. A stream the arena refuses with a retry hint (the
``grpc-retry-pushback-ms`` trailer: the arena is full, its database is busy; or a
RESOURCE_EXHAUSTED before any answer, gRPC's own queue being full) is tried again
after that long, with jitter and growing waits, for up to ``busy_retry_s``. If the arena
cannot be reached, the client checks whether it speaks TLS while the bot does not (or the
reverse) and says so.
"""

from __future__ import annotations

import queue
import random
import socket
import ssl
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any, cast

import grpc
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_core.protocol.convert import (
    action_to_pb,
    bot_error_reply,
    bot_error_report,
    bot_event_from_pb,
    hand_result_from_pb,
    match_started_from_pb,
    outcome_from_pb,
    view_from_pb,
)
from gin_arena_core.protocol.records import answer_problem, describe_fault
from gin_arena_core.rules import Action, PlayerView

from gin_arena_sdk.bot import Bot

_FATAL = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION,
          grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.PERMISSION_DENIED}


class MatchOver(Exception):
    pass


def _requests(outbox: queue.Queue[pb.BotMessage | None]) -> Iterator[pb.BotMessage]:
    while True:
        item = outbox.get()
        if item is None:
            return
        yield item


def _hook(bot: Bot, outbox: queue.Queue[pb.BotMessage | None], where: str,
          call: Callable[..., object], *args: object) -> None:
    """Call a notification hook; if it raises, that is a bot error: written to stderr (the
    bot's log) with its traceback and reported to the arena, and play goes on."""
    try:
        call(*args)
    except Exception as e:
        text = describe_fault(where, e)
        traceback.print_exc(file=sys.stderr)
        print(f"[{bot.name}] bot error: {text}", file=sys.stderr)
        outbox.put(bot_error_report(text))


def _answer(bot: Bot, request_id: int, where: str, call: Callable[..., object],
            *args: object, none: pb.Action | None = None) -> pb.BotMessage:
    """The reply to a request: the bot's move, or the bot error that stood in its way
    (its code raised, or gave something that is not a move); ``none``: what a None
    answer stands for, where the contract gives one."""
    try:
        answer = call(*args)
    except Exception as e:
        text = describe_fault(where, e)
        traceback.print_exc(file=sys.stderr)
        print(f"[{bot.name}] bot error: {text}", file=sys.stderr)
        return bot_error_reply(request_id, text)
    if answer is None and none is not None:
        move = none
    else:
        problem = answer_problem(where, answer)
        if problem:
            print(f"[{bot.name}] bot error: {problem}", file=sys.stderr)
            return bot_error_reply(request_id, problem)
        move = action_to_pb(cast(Action, answer))
    return pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=move))


def _play_stream(bot: Bot, stub: Any, hello: pb.Hello, seen: list[str], heard: list[int]
                 ) -> bool | pb.Redirect:
    """One stream; True once a MatchEnd arrived, or the Redirect that sent the bot
    elsewhere. The seat's resume key, once known, goes in ``seen``; ``heard[0]`` counts
    the messages the stream brought. The bot's hooks are given the records of
    ``gin_arena_core.protocol.records``, as in-process."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
    outbox.put(pb.BotMessage(hello=hello))
    runs_only = False
    last_view: PlayerView | None = None
    last_request = -1
    responses = stub.Play(_requests(outbox))
    try:
        for msg in responses:
            heard[0] += 1
            kind = msg.WhichOneof("kind")
            if kind == "match_start":
                ms = msg.match_start
                seen.append(ms.resume_key)
                info = match_started_from_pb(ms)
                runs_only = info.rules.runs_only
                _hook(bot, outbox, "on_match_start()", bot.on_match_start, info)
            elif kind == "request":
                req = msg.request
                for ev in req.events:
                    event = bot_event_from_pb(ev, runs_only=runs_only)
                    if event is not None:
                        _hook(bot, outbox, "on_event()", bot.on_event, event)
                view = view_from_pb(req.view, req.legal, runs_only=runs_only)
                outbox.put(_answer(bot, req.request_id, "decide()", bot.decide, view))
                last_view = view
                last_request = req.request_id
            elif kind == "rejected":
                rej = msg.rejected
                # an empty legal list: no answer is wanted (the policy applies now)
                if rej.request_id == last_request and rej.legal and last_view is not None:
                    outbox.put(_answer(bot, rej.request_id, "on_rejected()", bot.on_rejected,
                                       last_view, rej.code, rej.reason, none=rej.legal[0]))
            elif kind == "event":
                ev = msg.event
                if ev.WhichOneof("kind") == "hand_result":
                    hr = ev.hand_result
                    _hook(bot, outbox, "on_hand_end()", bot.on_hand_end,
                          hand_result_from_pb(hr, runs_only=runs_only),
                          (hr.scores[0], hr.scores[1]) if len(hr.scores) == 2 else (0, 0))
                else:
                    event = bot_event_from_pb(ev, runs_only=runs_only)
                    if event is not None:
                        _hook(bot, outbox, "on_event()", bot.on_event, event)
            elif kind == "match_end":
                try:
                    bot.on_match_end(outcome_from_pb(msg.match_end))
                except Exception as e:  # the match is over: the log is the only place left
                    traceback.print_exc(file=sys.stderr)
                    print(f"[{bot.name}] bot error: {describe_fault('on_match_end()', e)}",
                          file=sys.stderr)
                return True
            elif kind == "redirect":
                return cast(pb.Redirect, msg.redirect)
            elif kind == "lobby":
                lobby = msg.lobby
                print(f"[{bot.name}] waiting in the arena's lobby: place {lobby.place} of "
                      f"{lobby.waiting}, {lobby.matches_running} matches running "
                      f"({lobby.detail})", file=sys.stderr)
        return False
    finally:
        outbox.put(None)
        responses.cancel()


def open_channel(address: str, *, tls: bool = False, tls_ca: bytes | None = None
                 ) -> grpc.Channel:
    """A channel to an arena: plaintext, or TLS (``tls_ca``: the CA certificate in PEM to
    trust; without it, the system's roots)."""
    if tls or tls_ca is not None:
        return grpc.secure_channel(address, grpc.ssl_channel_credentials(tls_ca))
    return grpc.insecure_channel(address)


PUSHBACK_KEY = "grpc-retry-pushback-ms"
SHED_RETRY_S = 1.0
"""The first wait after a RESOURCE_EXHAUSTED without a hint, before the arena answered
anything: gRPC's own queue of new calls was full (docs/protocol.md, "Limits")."""
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def speaks_tls(address: str, timeout_s: float = 2.0) -> bool | None:
    """Whether the server at ``address`` completes a TLS handshake (True) or answers a
    plaintext HTTP/2 preface (False); None if neither shows."""
    host, _, port = address.rpartition(":")
    target = (host.strip("[]"), int(port)) if port.isdigit() else None
    if target is None:
        return None
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # only asking whether it speaks TLS at all
    context.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection(target, timeout=timeout_s) as raw, \
                context.wrap_socket(raw, server_hostname=target[0]):
            return True
    except (OSError, ssl.SSLError):
        pass
    try:
        with socket.create_connection(target, timeout=timeout_s) as raw:
            raw.sendall(_PREFACE)
            first = raw.recv(16)
    except OSError:
        return None
    if len(first) >= 4 and first[3] == 0x04:  # an HTTP/2 SETTINGS frame
        return False
    return None


def _pushback_s(error: grpc.RpcError) -> float | None:
    """The retry hint the arena put on a refused stream, in seconds; None if none."""
    trailing = getattr(error, "trailing_metadata", None)
    items = trailing() if callable(trailing) else None
    for key, value in items or ():
        if key == PUSHBACK_KEY:
            try:
                return max(0.0, int(value) / 1000)
            except ValueError:
                return None
    return None


def _wait_ready(channel: grpc.Channel, bot: Bot, address: str, timeout_s: float,
                use_tls: bool) -> None:
    """Wait until the arena is reachable (it may be starting); exit with a reason if not,
    telling a TLS mismatch as soon as it shows."""
    started = time.monotonic()
    probed = False
    while True:
        left = timeout_s - (time.monotonic() - started)
        try:
            grpc.channel_ready_future(channel).result(timeout=max(0.0, min(2.0, left)))
            return
        except grpc.FutureTimeoutError:
            pass
        if not probed:
            probed = True
            tls = speaks_tls(address)
            if tls is True and not use_tls:
                raise SystemExit(f"[{bot.name}] the arena at {address} expects TLS: connect "
                                 "with --tls-ca CA.pem (or --tls to trust the system's CAs)")
            if tls is False and use_tls:
                raise SystemExit(f"[{bot.name}] the arena at {address} serves plaintext, not "
                                 "TLS: connect without --tls / --tls-ca")
        if time.monotonic() - started >= timeout_s:
            hint = " (over TLS: is its certificate trusted?)" if use_tls else ""
            raise SystemExit(f"[{bot.name}] cannot reach an arena at {address} within "
                             f"{timeout_s:g} s{hint}")


def _follow(bot: Bot, redirect: pb.Redirect, token: str, *, tls: bool,
            tls_ca: bytes | None, retry_s: float = 5.0) -> bool:
    """Play the match a Redirect sends the bot to (at another front end of the same
    ladder, where a seat is kept for it); True if it was played to its end. A stream that
    fails is tried again as over the bot's own arena: before the match, with the seat key
    while the seat is kept (``valid_ms``); once MatchStart gave a resume key, resumed
    within ``retry_s``. A seat no longer kept there (NOT_FOUND), or a front end out of
    reach, is given up: the bot then waits at its own arena again."""
    print(f"[{bot.name}] redirected to {redirect.address} for a match", file=sys.stderr)
    seen: list[str] = []
    deadline = time.monotonic() + max(1.0, redirect.valid_ms / 1000)
    try:
        with open_channel(redirect.address, tls=tls, tls_ca=tls_ca) as channel:
            stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            while True:
                resume = seen[-1] if seen else ""
                hello = pb.Hello(name=bot.name, protocol_version=PROTOCOL_VERSION,
                                 token=token, resume=resume,
                                 seat_key="" if resume else redirect.seat_key)
                heard = [0]
                try:
                    grpc.channel_ready_future(channel).result(
                        timeout=max(0.0, deadline - time.monotonic()))
                    finished = _play_stream(bot, stub, hello, seen, heard)
                except grpc.RpcError as e:
                    code = e.code() if hasattr(e, "code") else None
                    if code == grpc.StatusCode.NOT_FOUND and resume:
                        return True  # the match ended while the bot was away
                    if code in _FATAL or code == grpc.StatusCode.NOT_FOUND:
                        raise
                    if seen and (heard[0] or seen[-1] != resume):
                        deadline = time.monotonic() + retry_s  # it was playing: resume
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                    continue
                if finished is True:
                    return True
                if isinstance(finished, pb.Redirect) or not seen:
                    return False  # sent on again, or closed without a match
                deadline = time.monotonic() + retry_s  # ended mid-match: resume it
    except (grpc.RpcError, grpc.FutureTimeoutError) as e:
        detail = e.details() if isinstance(e, grpc.RpcError) and hasattr(e, "details") else e
        print(f"[{bot.name}] the redirect to {redirect.address} failed ({detail!s}); "
              "back to the arena", file=sys.stderr)
        return False


def run(bot: Bot, address: str, *, token: str = "", resume: str = "", matches: int = 0,
        retry_s: float = 5.0, tls: bool = False, tls_ca: bytes | None = None,
        connect_timeout_s: float = 30.0, busy_retry_s: float = 600.0) -> int:
    """Play matches at ``address`` until the arena has none left; returns how many ended.
    Waits up to ``connect_timeout_s`` for the arena to be reachable (it may be starting).
    ``tls`` / ``tls_ca``: connect over TLS (see ``open_channel``). A stream refused with a
    retry hint is tried again for up to ``busy_retry_s`` in all."""
    played = 0
    secure = tls or tls_ca is not None
    print(f"[{bot.name}] waiting for the arena at {address}{' over TLS' if secure else ''} "
          f"(up to {connect_timeout_s:g} s)", file=sys.stderr, flush=True)
    with open_channel(address, tls=tls, tls_ca=tls_ca) as channel:
        _wait_ready(channel, bot, address, connect_timeout_s, secure)
        print(f"[{bot.name}] connected to {address}", file=sys.stderr, flush=True)
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        deadline = 0.0
        busy_since: float | None = None
        busy_tries = 0
        while matches <= 0 or played < matches:
            hello = pb.Hello(name=bot.name, protocol_version=PROTOCOL_VERSION, token=token,
                             resume=resume)
            seen: list[str] = [resume] if resume else []
            heard = [0]
            opened = time.monotonic()
            try:
                finished = _play_stream(bot, stub, hello, seen, heard)
            except grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                pushback = _pushback_s(e) if heard[0] == 0 else None
                if pushback is None and heard[0] == 0 \
                        and code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    pushback = SHED_RETRY_S  # gRPC's own load shedding gives no hint
                if pushback is not None and code not in _FATAL:
                    # the arena said "not now" (full, or its database is busy): wait and
                    # try again, longer each time, with jitter so refused bots spread out
                    now = time.monotonic()
                    busy_since = now if busy_since is None else busy_since
                    if now - busy_since > busy_retry_s:
                        raise SystemExit(f"[{bot.name}] the arena at {address} kept refusing "
                                         f"for {busy_retry_s:g} s: {code}: "
                                         f"{e.details() if hasattr(e, 'details') else e}"
                                         ) from None
                    wait = min(60.0, pushback * 1.5 ** min(busy_tries, 8))
                    busy_tries += 1
                    print(f"[{bot.name}] {code.name if code else 'refused'}: "
                          f"{e.details() if hasattr(e, 'details') else e}; trying again in "
                          f"{wait:.1f} s", file=sys.stderr)
                    time.sleep(wait * random.uniform(0.5, 1.0))
                    continue
                if code in _FATAL:
                    raise SystemExit(f"[{bot.name}] refused by the arena: {code}: "
                                     f"{e.details() if hasattr(e, 'details') else e}") from None
                if code == grpc.StatusCode.NOT_FOUND and resume:
                    played += 1  # the match ended while we were away; ask for a new one
                    resume = ""
                    continue
                working = heard[0] > 0 or time.monotonic() - opened > 0.5
                if seen and (working or not resume):
                    # a stream that was playing dropped mid-match (the first time or again):
                    # resume it within the grace
                    resume = seen[-1]
                    deadline = time.monotonic() + retry_s
                    continue
                if not resume or time.monotonic() > deadline:
                    if code == grpc.StatusCode.UNAVAILABLE and played:
                        return played
                    raise
                time.sleep(0.05)
                continue
            busy_since, busy_tries = None, 0
            if isinstance(finished, pb.Redirect):
                if not _follow(bot, finished, token, tls=tls, tls_ca=tls_ca,
                               retry_s=retry_s):
                    continue  # no match there after all: wait at this arena again
                finished = True
            if finished:
                played += 1
                resume = ""
                continue
            if not seen:
                return played  # the arena closed the stream without a match: none left
            resume = seen[-1]  # the stream ended mid-match: try to resume within the grace
            deadline = time.monotonic() + retry_s
    return played
