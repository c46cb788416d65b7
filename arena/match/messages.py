"""What the match says to a seat and hears back, as plain records (no gRPC).

The gRPC adapter translates these to protobuf (``arena.server.wire``); in-process seats
hand them to the bot's hooks as the records of ``gin_arena_core.protocol.records`` (the ones a bot
is given in every mode, some of which are used here as they are). Every view inside comes
from ``observe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gin_arena_core.protocol.records import (
    MatchOutcome,
    MatchStarted,
    MoveDefaulted,
    Notice,
    OpponentActed,
    TimeControl,
)
from gin_arena_core.rules import Action, HandResult, PlayerView, PublicEvent


class Termination(StrEnum):
    """Why a match ended (recorded with every result)."""

    COMPLETED = "completed"
    FORFEIT_TIMEOUT = "forfeit_timeout"  # too many missed decisions, or the bank ran out
    FORFEIT_ILLEGAL = "forfeit_illegal"  # too many refused answers (policy: forfeit)
    DISCONNECT = "disconnect"  # left and did not come back within the grace
    NO_SHOW = "no_show"  # never said hello in time
    SHUTDOWN = "shutdown"  # the arena stopped
    ARENA_ERROR = "arena_error"  # our fault: voided, not rated
    CAPPED = "capped"  # the game hit max_hands undecided


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    request_id: int
    view: PlayerView
    time_left_ms: int
    bank_left_ms: int
    last_latency_ms: int
    previous_defaulted: bool


@dataclass(frozen=True, slots=True)
class Rejected:
    request_id: int
    code: str
    reason: str
    legal: tuple[Action, ...]
    rejections_left: int


@dataclass(frozen=True, slots=True)
class Defaulted:
    """The arena played ``action`` for this seat (timeout or too many refusals); ``event``
    is the move as the opponent saw it (its seat, kind and the card that moved face up)."""

    request_id: int
    action: Action
    reason: str
    event: PublicEvent

    def for_bot(self) -> MoveDefaulted:
        """The record the bot's ``on_event`` is given."""
        return MoveDefaulted(self.action, self.reason, self.event)


@dataclass(frozen=True, slots=True)
class HandFinished:
    hand_number: int
    result: HandResult
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MatchResult:
    match_id: str
    winner: int | None
    termination: Termination
    blamed: int | None = None
    scores: tuple[int, int] = (0, 0)  # final totals with bonuses (net, per seat)
    detail: str = ""
    hands: tuple[HandResult, ...] = ()
    stats: tuple[SeatStats, SeatStats] = field(default_factory=lambda: (SeatStats(), SeatStats()))

    def for_bot(self) -> MatchOutcome:
        """The record the bot's ``on_match_end`` is given."""
        return MatchOutcome(self.match_id, self.winner, self.scores, str(self.termination),
                            self.blamed, self.detail)


@dataclass(slots=True)
class SeatStats:
    """Per-seat counters over a match (mutable while the match runs)."""

    decisions: int = 0
    timeouts: int = 0
    rejections: int = 0
    defaulted: int = 0
    think_ms_total: float = 0.0
    think_ms_max: float = 0.0
    errors: int = 0  # bot errors: its code raised, or answered with something not a move
    first_error: str = ""  # the first one, in a line (records.describe_fault)


@dataclass(frozen=True, slots=True)
class MatchEnded:
    result: MatchResult


__all__ = ["DecisionRequest", "Defaulted", "HandFinished", "MatchEnded", "MatchResult",
           "MatchStarted", "Notice", "OpponentActed", "Outgoing", "Rejected", "Reply",
           "SeatStats", "Termination", "TimeControl"]

Outgoing = (MatchStarted | DecisionRequest | Rejected | OpponentActed | Defaulted | HandFinished
            | Notice | MatchEnded)


@dataclass(frozen=True, slots=True)
class Reply:
    """A seat's answer. ``action`` is None when the message could not be read (``error``).
    ``arrived``: when it reached the arena (trio clock), and ``lag``: the arena's lag
    measure (``run_match``'s ``lag()``) at that moment, if the seat knows them; else the
    runner takes both when it reads the answer. ``bot_error``: the bot said its own code
    failed to produce a move (``error`` says how). ``report``: not an answer at all but a
    bot error outside a decision, to count."""

    request_id: int
    action: Action | None
    error: str = ""
    arrived: float | None = None
    lag: float | None = None
    bot_error: bool = False
    report: bool = False
