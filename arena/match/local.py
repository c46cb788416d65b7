"""In-process play: Python bots called directly, no network, no trio, same bot contract.

For fast iteration on a laptop, and trusted bots only (a bot's code runs in this process).
The bot meets the same judgement as over gRPC (``arena.match.policy``): a refused move is
reported to ``on_rejected`` with the legal moves and asked again up to ``max_rejections``
times, then ``on_illegal`` applies; an answer that took longer than the decision's budget
is a timeout (a direct call cannot be cut off, so the judgement comes after the fact: the
answer is dropped and the default move played, and the time the bot ran past its deadline,
less the opponent's thinking meanwhile, is charged to its next decision, as over the
network, where that next request waits while the bot is still busy); the hooks are given
the records of ``gin_arena_core.protocol.records``. A bot's own failure is a bot error, never a
crash of the match: a ``decide`` or ``on_rejected`` that raises, or answers with something
that is not a move, has that answer refused with code ``bot_error``; a notification hook
that raises is counted and the match goes on. The arena's own failures still raise.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol

from gin_arena_core.protocol.records import BOT_ERROR, answer_problem, describe_fault
from gin_arena_core.rules import Action, RuleError
from gin_arena_core.rules.view import PlayerView

from arena.match.driver import MatchDriver
from arena.match.messages import (
    Defaulted,
    HandFinished,
    MatchEnded,
    MatchResult,
    MatchStarted,
    Outgoing,
    Rejected,
)
from arena.match.policy import Forfeit, SeatPolicy, refused_default_reason


class LocalBot(Protocol):
    """What an in-process bot offers (``gin_arena_sdk.Bot`` has all of it)."""

    name: str

    def decide(self, view: Any) -> Action: ...
    def on_match_start(self, info: Any) -> None: ...
    def on_event(self, event: Any) -> None: ...
    def on_hand_end(self, result: Any, scores: tuple[int, int]) -> None: ...
    def on_match_end(self, result: Any) -> None: ...
    def on_rejected(self, view: Any, code: str, reason: str) -> Action | None: ...


def _deliver(driver: MatchDriver, bots: tuple[LocalBot, LocalBot], seat: int,
             message: Outgoing) -> None:
    """Hand a notification to ``seat``'s hooks as the bot-facing record; a hook that
    raises is a bot error (counted, the match goes on)."""
    bot = bots[seat]
    hook = "on_event()"
    try:
        if isinstance(message, HandFinished):
            hook = "on_hand_end()"
            bot.on_hand_end(message.result, message.scores)
        elif isinstance(message, MatchStarted):
            hook = "on_match_start()"
            bot.on_match_start(message)
        elif isinstance(message, MatchEnded):
            hook = "on_match_end()"
            try:
                bot.on_match_end(message.result.for_bot())
            except Exception as e:  # the match is over: stderr is the only place left
                print(f"[{bot.name}] bot error: {describe_fault(hook, e)}", file=sys.stderr)
        elif isinstance(message, Defaulted):
            bot.on_event(message.for_bot())
        elif not isinstance(message, Rejected):
            bot.on_event(message)
    except Exception as e:
        driver.note_error(seat, describe_fault(hook, e))


def _flush(driver: MatchDriver, bots: tuple[LocalBot, LocalBot]) -> None:
    for to, message in driver.drain():
        _deliver(driver, bots, to, message)


def _answer(where: str, call: Any, *args: Any, none: Action | None = None
            ) -> tuple[Action | None, str]:
    """Call the bot for a move: (the move, "") or (None, the bot error). ``none``: the
    move a None answer stands for, where the contract gives one."""
    try:
        answer = call(*args)
    except Exception as e:
        return None, describe_fault(where, e)
    if answer is None and none is not None:
        return none, ""
    problem = answer_problem(where, answer)
    return (None, problem) if problem else (answer, "")


def play_local(driver: MatchDriver, bots: tuple[LocalBot, LocalBot]) -> MatchResult:
    """Play the whole match by calling the bots directly; returns the result. A bot's
    fault is a result (see the module's doc), never an exception."""
    policy = SeatPolicy(driver.time_control)
    try:
        _play(driver, bots, policy)
    except Forfeit as f:
        driver.forfeit(f.seat, f.termination, f.detail)
    _flush(driver, bots)
    assert driver.result is not None
    return driver.result


def _play(driver: MatchDriver, bots: tuple[LocalBot, LocalBot], policy: SeatPolicy) -> None:
    perf = time.perf_counter
    tc = driver.time_control
    owed = [0.0, 0.0]  # ms a seat ran past its last deadline, not yet covered by the other's
    while not driver.is_over:
        seat = driver.seat_to_act()
        request = driver.next_request(tc.decision_ms, policy.bank[seat])
        _flush(driver, bots)
        if driver.is_over:
            return
        bot = bots[seat]
        view: PlayerView = request.view
        budget_ms = policy.budget_ms(seat)
        late, owed[seat] = owed[seat], 0.0
        started = perf()
        action, error = _answer("decide()", bot.decide, view)
        rejections = 0
        while True:
            elapsed_ms = (perf() - started) * 1000 + late
            if elapsed_ms > budget_ms:  # judged after the fact: the answer is dropped
                driver.note_timeout(seat)
                owed[seat] = elapsed_ms - budget_ms
                why = policy.missed(seat)
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms, defaulted=why)
                break
            if action is None:
                driver.note_error(seat, error)
                code, reason = BOT_ERROR, error
            else:
                try:
                    driver.submit(action, elapsed_ms=elapsed_ms)
                except RuleError as err:
                    code, reason = str(err.code), err.message
                else:
                    policy.answered(seat, elapsed_ms)
                    owed[1 - seat] = max(0.0, owed[1 - seat] - elapsed_ms)
                    break
            rejections += 1
            driver.note_rejection(seat, action, f"{code}: {reason}", illegal=code != BOT_ERROR)
            left = policy.refused(seat, rejections, code, reason)
            if left is None:
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms,
                              defaulted=refused_default_reason(rejections))
                break
            action, error = _answer("on_rejected()", bot.on_rejected, view, code, reason,
                                    none=view.legal[0])
        _flush(driver, bots)


__all__ = ["LocalBot", "play_local"]
