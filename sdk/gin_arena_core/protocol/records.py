"""What a bot's hooks are given: the same records in-process and over gRPC.

The bot contract (docs/protocol.md, "The bot contract"): ``decide`` gets a
``gin_arena_core.rules.PlayerView``; ``on_match_start`` a ``MatchStarted``; ``on_event`` an
``OpponentActed``, a ``MoveDefaulted`` or a ``Notice``; ``on_hand_end`` an
``gin_arena_core.rules.HandResult`` and the scores; ``on_match_end`` a ``MatchOutcome``. The host
builds them from the match's messages, the SDK from protobuf (``gin_arena_core.protocol.convert``),
and a conformance test checks that a bot sees equal records either way.

A bot's own failure (it raised, or answered with something that is not a move) is a *bot
error*: ``describe_fault`` and ``answer_problem`` say it in one line, the same in both
modes, naming the line of the bot's code it came from. Standard library and the rules only.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from dataclasses import dataclass
from types import TracebackType

from gin_arena_core.rules import Action, PublicEvent, RulesConfig
from gin_arena_core.rules.actions import ACTION_TYPES


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

    def to_dict(self) -> dict[str, int | str]:
        """Every limit by name (``TimeControl(**d)`` reads it back)."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class MatchStarted:
    """A match begins: its id, the bot's seat (0 or 1), the rules, the time control and
    the opponent's name."""

    match_id: str
    seat: int
    rules: RulesConfig
    time_control: TimeControl
    opponent: str


@dataclass(frozen=True, slots=True)
class OpponentActed:
    """The opponent's move as the bot may see it (a stock draw carries no card)."""

    event: PublicEvent


@dataclass(frozen=True, slots=True)
class MoveDefaulted:
    """The arena played ``action`` for the bot (no answer in time, or too many refused
    answers: ``reason`` says which); ``event`` is that move as the opponent saw it."""

    action: Action
    reason: str
    event: PublicEvent


@dataclass(frozen=True, slots=True)
class Notice:
    """A line from the arena for the bot (for instance: a reply to an old request ignored)."""

    text: str


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """How a match ended: the winning seat (None: a draw or void), the final scores with
    bonuses, why it ended (a ``Termination`` value such as "completed" or
    "forfeit_timeout"), the seat blamed for a forfeit, and a line of detail."""

    match_id: str
    winner: int | None
    scores: tuple[int, int]
    reason: str
    blamed: int | None
    detail: str


BotEvent = OpponentActed | MoveDefaulted | Notice
"""What ``on_event`` is given."""

BOT_ERROR = "bot_error"
"""The refusal code of an answer that is a bot error rather than a move."""

MAX_FAULT_CHARS = 500
"""The longest bot error text the arena keeps (the rest is cut, marked with "...")."""

_LIBRARY_MODULES = ("arena", "gin_arena_core", "gin_arena_sdk")
_LIBRARY_PATHS = tuple(
    os.path.normpath(p) + os.sep
    for p in {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib",
                                                          "platlib")} if p)


def clean_fault(text: str) -> str:
    """``text`` as one printable line of at most MAX_FAULT_CHARS characters: it comes from
    a bot and ends up in tables, logs and terminals."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(line) > MAX_FAULT_CHARS:
        line = line[:MAX_FAULT_CHARS - 3] + "..."
    return line or "(no message)"


def fault_origin(tb: TracebackType | None) -> str:
    """Where in the bot's own code a failure happened, as ``file.py:LINE in FUNC``: the
    innermost frame that is neither this package, the SDK, nor the Python library."""
    frames = [(frame, line) for frame, line in traceback.walk_tb(tb)]
    mine = [(frame, line) for frame, line in frames
            if str(frame.f_globals.get("__name__", "")).partition(".")[0]
            not in _LIBRARY_MODULES
            and not os.path.normpath(frame.f_code.co_filename).startswith(_LIBRARY_PATHS)]
    if not mine:
        return ""
    frame, line = mine[-1]
    return f"{os.path.basename(frame.f_code.co_filename)}:{line} in {frame.f_code.co_name}"


def describe_fault(where: str, error: BaseException) -> str:
    """A bot error in one line: ``where`` (e.g. "decide()") raised what, from which line."""
    origin = fault_origin(error.__traceback__)
    at = f" at {origin}" if origin else ""
    return clean_fault(f"{where} raised {type(error).__name__}: {error}{at}")


def answer_problem(where: str, answer: object) -> str:
    """Why ``answer`` is not a move ("" if it is one), naming what it is."""
    if isinstance(answer, ACTION_TYPES):
        return ""
    if answer is None:
        return clean_fault(f"{where} returned None, not a move")
    shown = repr(answer)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return clean_fault(f"{where} returned {type(answer).__name__} {shown}, not a move "
                       "(return one of view.legal, e.g. Discard(card))")


__all__ = ["BOT_ERROR", "MAX_FAULT_CHARS", "BotEvent", "MatchOutcome", "MatchStarted",
           "MoveDefaulted", "Notice", "OpponentActed", "TimeControl", "answer_problem",
           "clean_fault", "describe_fault", "fault_origin"]
