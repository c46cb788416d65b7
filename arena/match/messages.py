"""What the match says to a seat and hears back, as plain records (no gRPC).

The server translates these to and from protobuf in one place (arena.protocol.convert);
in-process seats use them as they are. Every view inside comes from ``observe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from arena.rules import Action, HandResult, PlayerView, PublicEvent, RulesConfig


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
class TimeControl:
    """Per-match time limits, all measured on the server (milliseconds)."""

    hello_timeout_ms: int = 10_000
    decision_ms: int = 1_000
    bank_ms: int = 0  # 0: no bank; otherwise time over decision_ms comes off the bank
    margin_ms: int = 50  # jitter allowance added to every deadline
    max_strikes: int = 3  # missed decisions allowed; one more forfeits
    max_rejections: int = 3  # refused answers per decision before the policy applies
    on_illegal: str = "default"  # "default": play the default move (a strike); or "forfeit"
    reconnect_grace_ms: int = 5_000  # 0: a disconnect forfeits at once

    def __post_init__(self) -> None:
        for name in ("hello_timeout_ms", "decision_ms", "bank_ms", "margin_ms", "max_strikes",
                     "max_rejections", "reconnect_grace_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"time control {name} must be a whole number >= 0, not {value!r}")
        if self.decision_ms < 1:
            raise ValueError("time control decision_ms must be >= 1")
        if self.on_illegal not in ("default", "forfeit"):
            raise ValueError(f"time control on_illegal must be 'default' or 'forfeit', "
                             f"not {self.on_illegal!r}")


@dataclass(frozen=True, slots=True)
class MatchStarted:
    match_id: str
    seat: int
    rules: RulesConfig
    time_control: TimeControl
    opponent: str


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
class OpponentActed:
    event: PublicEvent


@dataclass(frozen=True, slots=True)
class Defaulted:
    """The arena played ``action`` for this seat (timeout or too many refusals); ``event``
    is the move as the opponent saw it (its seat, kind and the card that moved face up)."""

    request_id: int
    action: Action
    reason: str
    event: PublicEvent


@dataclass(frozen=True, slots=True)
class HandFinished:
    hand_number: int
    result: HandResult
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Notice:
    text: str


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


@dataclass(slots=True)
class SeatStats:
    """Per-seat counters over a match (mutable while the match runs)."""

    decisions: int = 0
    timeouts: int = 0
    rejections: int = 0
    defaulted: int = 0
    think_ms_total: float = 0.0
    think_ms_max: float = 0.0


@dataclass(frozen=True, slots=True)
class MatchEnded:
    result: MatchResult


Outgoing = (MatchStarted | DecisionRequest | Rejected | OpponentActed | Defaulted | HandFinished
            | Notice | MatchEnded)


@dataclass(frozen=True, slots=True)
class Reply:
    """A seat's answer. ``action`` is None when the message could not be read (``error``).
    ``arrived``: when it reached the arena (trio clock), and ``lag``: the arena's lag
    measure (``run_match``'s ``lag()``) at that moment, if the seat knows them; else the
    runner takes both when it reads the answer."""

    request_id: int
    action: Action | None
    error: str = ""
    arrived: float | None = None
    lag: float | None = None
