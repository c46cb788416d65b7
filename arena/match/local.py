"""In-process play: Python bots called directly, no network, no trio, same bot code.

For fast iteration on a laptop. The rules are enforced exactly as in the arena (a refused
move is reported to the bot and retried up to ``max_rejections`` times, then the default
move is played); time is measured but not enforced, since a direct call cannot be cut off.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, cast

from arena.match.driver import MatchDriver
from arena.match.messages import (
    DecisionRequest,
    HandFinished,
    MatchEnded,
    MatchResult,
    MatchStarted,
    Outgoing,
    Termination,
)
from arena.rules import Action, RuleError
from arena.rules.actions import ACTION_TYPES


class LocalBot(Protocol):
    name: str

    def decide(self, view: Any) -> Action: ...
    def on_match_start(self, info: Any) -> None: ...
    def on_event(self, event: Any) -> None: ...
    def on_hand_end(self, result: Any, scores: tuple[int, int]) -> None: ...
    def on_match_end(self, result: Any) -> None: ...
    def on_rejected(self, view: Any, code: str, reason: str) -> Action | None: ...


def deliver(bot: LocalBot, message: Outgoing) -> None:
    """Hand a notification to an in-process bot's hooks."""
    if isinstance(message, HandFinished):
        bot.on_hand_end(message.result, message.scores)
    elif isinstance(message, MatchStarted):
        bot.on_match_start(message)
    elif isinstance(message, MatchEnded):
        bot.on_match_end(message.result)
    elif not isinstance(message, DecisionRequest):
        bot.on_event(message)


class BotCrashed(Exception):
    """An in-process bot raised: its seat forfeits."""

    def __init__(self, seat: int, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.seat = seat


class GuardedBot:
    """An in-process bot seen through ``play_local``: its exceptions become BotCrashed,
    and an answer that is not an action is refused like a bad move."""

    def __init__(self, bot: Any, seat: int) -> None:
        self._bot = bot
        self._seat = seat
        self.name: str = bot.name

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._bot, method)(*args)
        except Exception as e:
            raise BotCrashed(self._seat, e) from e

    def decide(self, view: Any) -> Action:
        action = self._call("decide", view)
        # anything but an action becomes None, which play_local refuses like a bad move
        return cast(Action, action if isinstance(action, ACTION_TYPES) else None)

    def on_match_start(self, info: Any) -> None:
        self._call("on_match_start", info)

    def on_event(self, event: Any) -> None:
        self._call("on_event", event)

    def on_hand_end(self, result: Any, scores: tuple[int, int]) -> None:
        self._call("on_hand_end", result, scores)

    def on_match_end(self, result: Any) -> None:
        self._call("on_match_end", result)

    def on_rejected(self, view: Any, code: str, reason: str) -> Action | None:
        action = self._call("on_rejected", view, code, reason)
        return cast(Action, action) if isinstance(action, ACTION_TYPES) else None


def play_guarded(driver: MatchDriver, bots: tuple[LocalBot, LocalBot]) -> MatchResult:
    """``play_local`` for bots that may be buggy: one that raises forfeits its seat
    (``disconnect``, "bot crashed: ..."), as a crashing bot process would."""
    try:
        return play_local(driver, (GuardedBot(bots[0], 0), GuardedBot(bots[1], 1)))
    except BotCrashed as crash:
        return driver.forfeit(crash.seat, Termination.DISCONNECT, f"bot crashed: {crash}")


def play_local(driver: MatchDriver, bots: tuple[LocalBot, LocalBot]) -> MatchResult:
    """Play the whole match by calling the bots directly; returns the result."""
    max_rejections = driver.time_control.max_rejections
    perf = time.perf_counter
    while not driver.is_over:
        for to, message in driver.drain():
            deliver(bots[to], message)
        request = driver.next_request()
        seat = driver.pending[0]
        bot = bots[seat]
        started = perf()
        action: Action | None = bot.decide(request.view)
        for attempt in range(max_rejections + 1):
            try:
                if action is None:
                    raise TypeError("decide() returned None")
                driver.submit(action, elapsed_ms=(perf() - started) * 1000)
                break
            except (RuleError, TypeError) as err:
                code = str(getattr(err, "code", "malformed"))
                reason = getattr(err, "message", str(err))
                driver.note_rejection(seat, action, f"{code}: {reason}")
                if attempt == max_rejections:
                    driver.submit(driver.default_action(), elapsed_ms=(perf() - started) * 1000,
                                  defaulted=f"{attempt + 1} refused answers")
                    break
                action = bot.on_rejected(request.view, code, reason) or request.view.legal[0]
    for to, message in driver.drain():
        deliver(bots[to], message)
    assert driver.result is not None
    return driver.result
