"""The match's messages to one seat as protobuf, for the gRPC adapter.

Built from the pieces in ``gin_arena_core.protocol.convert`` (the one place protobuf meets the
records); this module only knows which message of the match becomes which ServerMessage.
"""

from __future__ import annotations

from collections.abc import Sequence

from gin_arena_core.protocol import PROTOCOL_VERSION, pb
from gin_arena_core.protocol.convert import (
    HistoryMemo,
    action_to_pb,
    encode_legal,
    encode_view,
    fill_view,
    hand_result_to_pb,
    length_delimited,
    public_event_to_pb,
    time_control_to_pb,
    varint,
)
from gin_arena_core.rules import PublicEvent

from arena.match.messages import (
    DecisionRequest,
    Defaulted,
    HandFinished,
    MatchEnded,
    MatchStarted,
    Notice,
    OpponentActed,
    Outgoing,
    Rejected,
)


def is_move_event(message: Outgoing) -> bool:
    """True for the events that ride in the next DecisionRequest (see the proto)."""
    return isinstance(message, OpponentActed | Defaulted)


_EVENT_PB: dict[PublicEvent, pb.Event] = {}  # a few hundred distinct (seat, kind, card)


def event_to_pb(message: OpponentActed | Defaulted) -> pb.Event:
    """The protobuf form of a move event. An opponent's move is built once and shared:
    callers copy it into a message (``extend``, a constructor) and never change it."""
    if isinstance(message, OpponentActed):
        hit = _EVENT_PB.get(message.event)
        if hit is None:
            hit = pb.Event(opponent_action=public_event_to_pb(message.event))
            if len(_EVENT_PB) < 4096:
                _EVENT_PB[message.event] = hit
        return hit
    e = message.event  # the same seat and card fields as an opponent's move; the full action
    return pb.Event(own_action_defaulted=pb.PublicAction(
        seat=e.seat, action=action_to_pb(message.action),
        card=str(e.card) if e.card is not None else "", reason=message.reason))


_EVENT_BYTES: dict[PublicEvent, bytes] = {}


def encode_event(message: OpponentActed | Defaulted) -> bytes:
    """``event_to_pb(message).SerializeToString()`` (an opponent's move encoded once)."""
    if isinstance(message, OpponentActed):
        hit = _EVENT_BYTES.get(message.event)
        if hit is None:
            hit = event_to_pb(message).SerializeToString()
            if len(_EVENT_BYTES) < 4096:
                _EVENT_BYTES[message.event] = hit
        return hit
    return bytes(event_to_pb(message).SerializeToString())


def encode_request(message: DecisionRequest, events: Sequence[bytes] = (),
                   memo: HistoryMemo | None = None) -> bytes:
    """``server_message(message, events).SerializeToString()`` with ``events`` given
    encoded (``encode_event``), written directly: the request of every decision. ``memo``:
    the seat's (see ``HistoryMemo``)."""
    view = encode_view(message.view, memo)
    parts = [
        b"\x08" + varint(message.request_id) if message.request_id else b"",
        b"\x12" + varint(len(view)), view,
        encode_legal(message.view.legal),
        b"\x20" + varint(message.time_left_ms) if message.time_left_ms else b"",
        b"\x28" + varint(message.bank_left_ms) if message.bank_left_ms else b"",
        b"\x30" + varint(message.last_latency_ms) if message.last_latency_ms else b"",
        b"\x38\x01" if message.previous_defaulted else b"",
    ]
    parts.extend(length_delimited(8, e) for e in events)
    body = b"".join(parts)
    return b"\x12" + varint(len(body)) + body


def encode_events(events: Sequence[bytes]) -> list[bytes]:
    """Each encoded event (``encode_event``) as a ServerMessage of its own."""
    return [length_delimited(3, e) for e in events]


def server_message(message: Outgoing, events: Sequence[pb.Event] = ()) -> pb.ServerMessage:
    """The protobuf form of a message from the match layer to one seat; ``events`` ride
    along in a DecisionRequest."""
    if isinstance(message, DecisionRequest):
        out = pb.ServerMessage()
        request = out.request  # filled in place: no nested message is built and copied
        request.request_id = message.request_id
        fill_view(request.view, message.view)
        request.legal.extend([action_to_pb(a) for a in message.view.legal])
        request.time_left_ms = message.time_left_ms
        request.bank_left_ms = message.bank_left_ms
        request.last_latency_ms = message.last_latency_ms
        request.previous_defaulted = message.previous_defaulted
        if events:
            request.events.extend(events)
        return out
    if isinstance(message, OpponentActed | Defaulted):
        return pb.ServerMessage(event=event_to_pb(message))
    if isinstance(message, HandFinished):
        return pb.ServerMessage(event=pb.Event(hand_result=hand_result_to_pb(
            message.hand_number, message.result, message.scores)))
    if isinstance(message, Notice):
        return pb.ServerMessage(event=pb.Event(notice=message.text))
    if isinstance(message, Rejected):
        return pb.ServerMessage(rejected=pb.ActionRejected(
            request_id=message.request_id, code=message.code, reason=message.reason,
            legal=[action_to_pb(a) for a in message.legal],
            rejections_left=message.rejections_left,
        ))
    if isinstance(message, MatchStarted):
        return pb.ServerMessage(match_start=pb.MatchStart(
            match_id=message.match_id, seat=message.seat, rules_preset=message.rules.preset,
            rules_json=message.rules.to_json(),
            time_control=time_control_to_pb(message.time_control),
            opponent_name=message.opponent, protocol_version=PROTOCOL_VERSION,
        ))
    if isinstance(message, MatchEnded):
        r = message.result
        return pb.ServerMessage(match_end=pb.MatchEnd(
            match_id=r.match_id, winner=-1 if r.winner is None else r.winner,
            scores=list(r.scores), reason=str(r.termination),
            blamed_seat=-1 if r.blamed is None else r.blamed, detail=r.detail,
        ))
    raise TypeError(f"not an outgoing message: {message!r}")
