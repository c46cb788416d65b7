"""Run one match under the time model and fault policy, in trio.

``run_match(driver, seats)`` asks each seat for its decisions through the small ``Seat``
protocol (the gRPC adapter implements it; tests use in-process seats), measures every
answer on the arena's clock, and applies the policy in docs/protocol.md: a missed decision
is played by default and counts a strike (past ``max_strikes``, or with the bank empty, the
seat forfeits); a refused answer is told why with the legal moves (past ``max_rejections``
the default is played and a strike counted, or the seat forfeits, per ``on_illegal``); a
seat that leaves forfeits unless it comes back within the reconnect grace. The match never
raises for a seat's fault; our own errors end it as ``arena_error`` (void, not rated).
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import structlog
import trio

from arena.match.driver import MatchDriver
from arena.match.messages import (
    MatchResult,
    Notice,
    Outgoing,
    Rejected,
    Reply,
    Termination,
)
from arena.rules import RuleError

log = structlog.get_logger("arena.match")


class Seat(Protocol):
    """A bot as the match sees it."""

    name: str

    def send(self, message: Outgoing) -> None:
        """Queue a message for the bot; never blocks."""

    async def receive(self) -> Reply | None:
        """The bot's next answer; None once the bot is gone (disconnected, closed).
        Cancelling it loses nothing."""

    async def wait_back(self, grace_s: float) -> bool:
        """Wait up to ``grace_s`` for a gone bot to reconnect; True if it did."""


class _Forfeit(Exception):
    def __init__(self, seat: int, termination: Termination, detail: str) -> None:
        super().__init__(detail)
        self.seat = seat
        self.termination = termination
        self.detail = detail


async def run_match(driver: MatchDriver, seats: tuple[Seat, Seat]) -> MatchResult:
    """Play the match to its end and return the result (also in ``driver.result``).

    Cancellation (arena shutdown) ends the match as ``shutdown``, tells both seats, and
    re-raises. A seat's fault is a result, never an exception.
    """
    bound = log.bind(match_id=driver.match_id)
    try:
        _flush(driver, seats)
        await _play(driver, seats, bound)
    except _Forfeit as f:
        bound.info("forfeit", seat=f.seat, bot=seats[f.seat].name, reason=str(f.termination),
                   detail=f.detail)
        driver.forfeit(f.seat, f.termination, f.detail)
    except trio.Cancelled:
        driver.abort(Termination.SHUTDOWN, "the arena is shutting down")
        _flush(driver, seats)
        _log_end(bound, driver)
        raise
    except Exception as e:  # our own bug: void this match, never the others
        bound.exception("arena_error")
        driver.abort(Termination.ARENA_ERROR, f"{type(e).__name__}: {e}")
    _flush(driver, seats)
    assert driver.result is not None
    _log_end(bound, driver)
    return driver.result


def _log_end(bound: structlog.typing.FilteringBoundLogger, driver: MatchDriver) -> None:
    r = driver.result
    assert r is not None
    names = driver.names
    bound.info("match_end", bots=list(names), reason=str(r.termination),
               winner=None if r.winner is None else names[r.winner],
               blamed=None if r.blamed is None else names[r.blamed],
               scores=r.scores, hands=len(r.hands), detail=r.detail or None)


def _flush(driver: MatchDriver, seats: tuple[Seat, Seat]) -> None:
    for seat, message in driver.drain():
        seats[seat].send(message)


async def _play(driver: MatchDriver, seats: tuple[Seat, Seat],
                bound: structlog.typing.FilteringBoundLogger) -> None:
    tc = driver.time_control
    bank = [tc.bank_ms, tc.bank_ms]
    strikes = [0, 0]
    while not driver.is_over:
        seat = driver.seat_to_act()
        request = driver.next_request(tc.decision_ms, bank[seat])
        _flush(driver, seats)
        conn = seats[seat]
        conn.send(request)
        started = trio.current_time()
        deadline = started + (tc.decision_ms + bank[seat] + tc.margin_ms) / 1000
        rejections = 0
        while True:
            reply: Reply | None = None
            with trio.move_on_at(deadline) as scope:
                reply = await conn.receive()
            elapsed_ms = (trio.current_time() - started) * 1000
            if scope.cancelled_caught:
                driver.note_timeout(seat)
                strikes[seat] += 1
                bound.info("timeout", seat=seat, bot=conn.name, ms=round(elapsed_ms),
                           strikes=strikes[seat])
                if tc.bank_ms:
                    bank[seat] = 0
                    raise _Forfeit(seat, Termination.FORFEIT_TIMEOUT,
                                   f"time bank exhausted ({tc.bank_ms} ms)")
                if strikes[seat] > tc.max_strikes:
                    raise _Forfeit(seat, Termination.FORFEIT_TIMEOUT,
                                   f"{strikes[seat]} missed decisions (limit {tc.max_strikes})")
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms,
                              defaulted=f"no answer within {tc.decision_ms} ms")
                break
            if reply is None:
                bound.info("seat_gone", seat=seat, bot=conn.name)
                if not await conn.wait_back(tc.reconnect_grace_ms / 1000):
                    raise _Forfeit(seat, Termination.DISCONNECT,
                                   f"disconnected (reconnect grace {tc.reconnect_grace_ms} ms)")
                # the clock ran while the bot was away (dropping must not buy thinking time):
                # ask again with the time actually left; if none is, the timeout policy acts
                used_ms = round((trio.current_time() - started) * 1000)
                if used_ms < tc.decision_ms + bank[seat] + tc.margin_ms:
                    conn.send(dataclasses.replace(
                        request, time_left_ms=max(0, tc.decision_ms - used_ms),
                        bank_left_ms=max(0, bank[seat] - max(0, used_ms - tc.decision_ms))))
                continue
            if reply.request_id != request.request_id:
                conn.send(Notice(f"reply to request {reply.request_id} ignored: "
                                 f"waiting for request {request.request_id}"))
                continue
            if reply.action is None:
                code, reason = "malformed", reply.error or "unreadable action"
            else:
                try:
                    driver.submit(reply.action, elapsed_ms=elapsed_ms)
                except RuleError as err:
                    code, reason = str(err.code), err.message
                else:
                    over = elapsed_ms - tc.decision_ms
                    if over > 0 and tc.bank_ms:
                        bank[seat] = max(0, bank[seat] - round(over))
                    break
            rejections += 1
            driver.note_rejection(seat, reply.action, f"{code}: {reason}")
            legal = tuple(request.view.legal)
            bound.info("rejected", seat=seat, bot=conn.name, code=code, reason=reason)
            if rejections > tc.max_rejections:
                if tc.on_illegal == "forfeit":
                    raise _Forfeit(seat, Termination.FORFEIT_ILLEGAL,
                                   f"{rejections} refused answers ({code}: {reason})")
                conn.send(Rejected(request.request_id, code, reason, legal, 0))
                strikes[seat] += 1
                if strikes[seat] > tc.max_strikes:
                    raise _Forfeit(seat, Termination.FORFEIT_ILLEGAL,
                                   f"{strikes[seat]} strikes; last: {code}: {reason}")
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms,
                              defaulted=f"{rejections} refused answers")
                break
            conn.send(Rejected(request.request_id, code, reason, legal,
                               tc.max_rejections - rejections))
        _flush(driver, seats)
