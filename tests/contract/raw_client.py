"""A bot client written from the proto and docs/protocol.md alone, without the SDK.

What an author in another language writes: one Play stream, Hello, then answer each
DecisionRequest; a refusal that lists legal moves wants another answer, one that lists none
does not; if the bot's own code fails, say so in ``ActionReply.error`` (or in a
``BotError`` outside a decision). It hands the bot the protocol's records (read with
``gin_arena_core.protocol.convert``, the readers any client may use) so the conformance suite can
give it the same bot as the other seatings. No resume, no retries: short test matches.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import grpc
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_core.protocol.convert import (
    action_to_pb,
    bot_event_from_pb,
    hand_result_from_pb,
    match_started_from_pb,
    outcome_from_pb,
    view_from_pb,
)
from gin_arena_core.rules.actions import ACTION_TYPES


def _sent(outbox: queue.SimpleQueue[pb.BotMessage | None]) -> Iterator[pb.BotMessage]:
    while (item := outbox.get()) is not None:
        yield item


def _reply(request_id: int, bot: Any, method: str, *args: Any) -> pb.BotMessage:
    try:
        answer = getattr(bot, method)(*args)
    except Exception as e:
        return pb.BotMessage(action=pb.ActionReply(
            request_id=request_id, error=f"{method}() raised {type(e).__name__}: {e}"))
    if method == "on_rejected" and answer is None:
        answer = args[0].legal[0]
    if not isinstance(answer, ACTION_TYPES):
        return pb.BotMessage(action=pb.ActionReply(
            request_id=request_id, error=f"{method}() returned {type(answer).__name__}"))
    return pb.BotMessage(action=pb.ActionReply(request_id=request_id,
                                               action=action_to_pb(answer)))


def _notify(outbox: queue.SimpleQueue[pb.BotMessage | None], method: Any, *args: Any) -> None:
    try:
        method(*args)
    except Exception as e:
        outbox.put(pb.BotMessage(error=pb.BotError(
            message=f"{method.__name__}() raised {type(e).__name__}: {e}")))


def run_raw(bot: Any, address: str) -> None:
    """Play one match at ``address`` as ``bot.name``."""
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(name=bot.name, protocol_version=PROTOCOL_VERSION)))
    with grpc.insecure_channel(address) as channel:
        stream = pb_grpc.ArenaStub(channel).Play(_sent(outbox))  # type: ignore[no-untyped-call]
        runs_only, view = False, None
        try:
            for msg in stream:
                kind = msg.WhichOneof("kind")
                if kind == "match_start":
                    info = match_started_from_pb(msg.match_start)
                    runs_only = info.rules.runs_only
                    _notify(outbox, bot.on_match_start, info)
                elif kind == "request":
                    req = msg.request
                    for event in req.events:
                        _notify(outbox, bot.on_event, bot_event_from_pb(event,
                                                                         runs_only=runs_only))
                    view = view_from_pb(req.view, req.legal, runs_only=runs_only)
                    outbox.put(_reply(req.request_id, bot, "decide", view))
                elif kind == "rejected" and msg.rejected.legal:  # another answer is wanted
                    rej = msg.rejected
                    outbox.put(_reply(rej.request_id, bot, "on_rejected", view, rej.code,
                                      rej.reason))
                elif kind == "event" and msg.event.WhichOneof("kind") == "hand_result":
                    hr = msg.event.hand_result
                    _notify(outbox, bot.on_hand_end, hand_result_from_pb(hr, runs_only=runs_only),
                            (hr.scores[0], hr.scores[1]))
                elif kind == "event":
                    _notify(outbox, bot.on_event, bot_event_from_pb(msg.event,
                                                                     runs_only=runs_only))
                elif kind == "match_end":
                    bot.on_match_end(outcome_from_pb(msg.match_end))
                    return
        finally:
            outbox.put(None)
            stream.cancel()
