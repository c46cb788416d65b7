"""Run a bot against an arena over gRPC (synchronous grpcio: no asyncio, no trio).

One Play stream per match: Hello, then answer every DecisionRequest with an ActionReply.
After a match the bot says Hello again for the next one; it stops when the arena ends a
stream without starting a match (no more matches for it), after ``matches`` matches, or on
a refusal it cannot fix (bad token, bad protocol version). A dropped connection in the
middle of a match is retried with ``resume`` = the seat's secret resume key from
MatchStart, within the arena's grace.
"""

from __future__ import annotations

import queue
import sys
import time
from collections.abc import Iterator
from typing import Any

import grpc

from arena.protocol import PROTOCOL_VERSION, pb, pb_grpc
from arena.protocol.convert import (
    action_to_pb,
    hand_result_from_pb,
    view_from_pb,
)
from arena.rules import MalformedError, RulesConfig
from sdk.bot import Bot

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


def _play_stream(bot: Bot, stub: Any, hello: pb.Hello, seen: list[str], heard: list[int]
                 ) -> bool:
    """One stream; True once a MatchEnd arrived. The seat's resume key, once known, goes
    in ``seen``; ``heard[0]`` counts the messages the stream brought."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
    outbox.put(pb.BotMessage(hello=hello))
    runs_only = False
    last_view: Any = None
    last_request = -1
    responses = stub.Play(_requests(outbox))
    try:
        for msg in responses:
            heard[0] += 1
            kind = msg.WhichOneof("kind")
            if kind == "match_start":
                ms = msg.match_start
                seen.append(ms.resume_key)
                try:
                    runs_only = RulesConfig.from_json(ms.rules_json).runs_only
                except MalformedError:
                    runs_only = False
                bot.on_match_start(ms)
            elif kind == "request":
                req = msg.request
                for ev in req.events:
                    bot.on_event(ev)
                view = view_from_pb(req.view, req.legal, runs_only=runs_only)
                try:
                    action = bot.decide(view)
                    answer = action_to_pb(action)
                except Exception as e:  # a bot bug: answer legally rather than time out
                    print(f"[{bot.name}] decide() raised {e!r}; playing the first legal move",
                          file=sys.stderr)
                    answer = req.legal[0]
                outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=req.request_id,
                                                               action=answer)))
                last_view = view
                last_request = req.request_id
            elif kind == "rejected":
                rej = msg.rejected
                if rej.request_id == last_request and rej.legal:
                    retry = bot.on_rejected(last_view, rej.code, rej.reason)
                    answer = action_to_pb(retry) if retry is not None else rej.legal[0]
                    outbox.put(pb.BotMessage(action=pb.ActionReply(
                        request_id=rej.request_id, action=answer)))
            elif kind == "event":
                ev = msg.event
                if ev.WhichOneof("kind") == "hand_result":
                    hr = ev.hand_result
                    bot.on_hand_end(hand_result_from_pb(hr, runs_only=runs_only),
                                    (hr.scores[0], hr.scores[1]) if len(hr.scores) == 2
                                    else (0, 0))
                else:
                    bot.on_event(ev)
            elif kind == "match_end":
                bot.on_match_end(msg.match_end)
                return True
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


def run(bot: Bot, address: str, *, token: str = "", resume: str = "", matches: int = 0,
        retry_s: float = 5.0, tls: bool = False, tls_ca: bytes | None = None,
        connect_timeout_s: float = 30.0) -> int:
    """Play matches at ``address`` until the arena has none left; returns how many ended.
    Waits up to ``connect_timeout_s`` for the arena to be reachable (it may be starting).
    ``tls`` / ``tls_ca``: connect over TLS (see ``open_channel``)."""
    played = 0
    with open_channel(address, tls=tls, tls_ca=tls_ca) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=connect_timeout_s)
        except grpc.FutureTimeoutError:
            hint = " (over TLS: is its certificate trusted?)" if tls or tls_ca else ""
            raise SystemExit(f"[{bot.name}] cannot reach an arena at {address} within "
                             f"{connect_timeout_s:g} s{hint}") from None
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        deadline = 0.0
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
            if finished:
                played += 1
                resume = ""
                continue
            if not seen:
                return played  # the arena closed the stream without a match: none left
            resume = seen[-1]  # the stream ended mid-match: try to resume within the grace
            deadline = time.monotonic() + retry_s
    return played
