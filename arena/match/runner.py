"""Run one match under the time model and fault policy, in trio.

``run_match(driver, seats)`` asks each seat for its decisions through the small ``Seat``
protocol (the gRPC adapter implements it; tests use in-process seats), measures every
answer on the arena's clock, and applies the policy in docs/protocol.md: a missed decision
is played by default and counts a strike (past ``max_strikes``, or with the bank empty, the
seat forfeits); a refused answer is told why with the legal moves (past ``max_rejections``
the default is played and a strike counted, or the seat forfeits, per ``on_illegal``); a
seat that leaves forfeits unless it comes back within the reconnect grace. The match never
raises for a seat's fault; our own errors end it as ``arena_error`` (void, not rated).

A bot is charged only for its own time: an answer is timed by when it reached the arena
(``Reply.arrived``, stamped by the gRPC reader) rather than when this loop got to it, an
answer that arrived in time while this loop was busy is still taken, and the time the
arena's loops ran late during a decision (``lag``, see ``arena.match.lag``) is credited
back: it extends the deadline and comes off the time charged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

import structlog
import trio
from gin_arena_core.protocol.records import BOT_ERROR
from gin_arena_core.rules import RuleError

from arena.match.driver import MatchDriver
from arena.match.messages import (
    MatchResult,
    Notice,
    Outgoing,
    Rejected,
    Reply,
    Termination,
)
from arena.match.policy import Forfeit, SeatPolicy, refused_default_reason
from arena.match.timers import TIMED_OUT, TimedOut

log = structlog.get_logger("arena.match")


class Seat(Protocol):
    """A bot as the match sees it."""

    name: str

    def send(self, message: Outgoing) -> None:
        """Queue a message for the bot; never blocks."""

    async def receive(self, deadline: float) -> Reply | TimedOut | None:
        """The bot's next answer; None once the bot is gone (disconnected, closed);
        ``TIMED_OUT`` if trio's clock reaches ``deadline`` first (see
        ``arena.match.timers``: a seat with no timers of its own waits with ``receive_by``).
        Cancelling it loses nothing."""

    def poll(self) -> Reply | None:
        """An answer that has already arrived, without waiting; None if there is none."""

    async def wait_back(self, grace_s: float) -> bool:
        """Wait up to ``grace_s`` for a gone bot to reconnect; True if it did."""


MAX_STALE = 3
"""Replies to an old request a seat may send per decision; each one past this counts as a
refused answer (a stale reply costs its sender, not the arena)."""

MAX_REPORTS = 3
"""Bot error reports (``Reply.report``) a seat may send per decision; each one past this
counts as a refused answer, like a stale reply."""


def _no_lag() -> float:
    return 0.0


async def run_match(driver: MatchDriver, seats: tuple[Seat, Seat], *,
                    lag: Callable[[], float] = _no_lag) -> MatchResult:
    """Play the match to its end and return the result (also in ``driver.result``).

    ``lag()`` is the arena's own accumulated lag in seconds (non-decreasing); its growth
    during a decision is credited to the bot. Cancellation (arena shutdown) ends the match
    as ``shutdown``, tells both seats, and re-raises. A seat's fault is a result, never an
    exception.
    """
    bound = log.bind(match_id=driver.match_id)
    try:
        _flush(driver, seats)
        await _play(driver, seats, bound, lag)
    except Forfeit as f:
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
                bound: structlog.typing.FilteringBoundLogger, lag: Callable[[], float]) -> None:
    tc = driver.time_control
    policy = SeatPolicy(tc)
    now = trio.current_time
    while not driver.is_over:
        seat = driver.seat_to_act()
        request = driver.next_request(tc.decision_ms, policy.bank[seat])
        _flush(driver, seats)
        conn = seats[seat]
        conn.send(request)
        started = now()
        lag_mark = lag()
        budget_s = policy.budget_ms(seat) / 1000
        rejections = stale = reports = 0
        while True:
            credit_s = lag() - lag_mark
            got = await conn.receive(started + budget_s + credit_s)
            timed_out = got is TIMED_OUT
            if got is TIMED_OUT:
                reply = conn.poll()  # it may have arrived while this loop was busy
                credit_s = lag() - lag_mark
                if reply is None and now() < started + budget_s + credit_s:
                    continue  # the arena ran late meanwhile: that time is the bot's
            else:
                reply = got
            if reply is not None and reply.arrived is not None:
                # timed by when it reached the arena, with the lag up to that moment
                if reply.lag is not None:
                    credit_s = reply.lag - lag_mark
                elapsed_ms = max(0.0, (reply.arrived - started - credit_s) * 1000)
            else:
                elapsed_ms = max(0.0, (now() - started - credit_s) * 1000)
            if (reply is None and timed_out) or elapsed_ms > budget_s * 1000:
                driver.note_timeout(seat)
                bound.info("timeout", seat=seat, bot=conn.name, ms=round(elapsed_ms),
                           credited_ms=round(credit_s * 1000), strikes=policy.strikes[seat] + 1)
                why = policy.missed(seat)
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms, defaulted=why)
                break
            if reply is None:
                bound.info("seat_gone", seat=seat, bot=conn.name)
                if not await conn.wait_back(tc.reconnect_grace_ms / 1000):
                    raise Forfeit(seat, Termination.DISCONNECT,
                                  f"disconnected (reconnect grace {tc.reconnect_grace_ms} ms)")
                # the clock ran while the bot was away (dropping must not buy thinking time):
                # ask again with the time actually left; if none is, the timeout policy acts
                used_ms = round((now() - started - (lag() - lag_mark)) * 1000)
                if used_ms < budget_s * 1000:
                    conn.send(dataclasses.replace(
                        request, time_left_ms=max(0, tc.decision_ms - used_ms),
                        bank_left_ms=max(0, policy.bank[seat]
                                         - max(0, used_ms - tc.decision_ms))))
                continue
            if reply.report:
                reports += 1
                driver.note_error(seat, reply.error)
                bound.info("bot_error", seat=seat, bot=conn.name, error=reply.error)
                if reports <= MAX_REPORTS:
                    continue
                code, reason = "flood", (f"{reports} bot error reports while request "
                                         f"{request.request_id} waits (at most {MAX_REPORTS})")
            elif reply.request_id != request.request_id:
                stale += 1
                if stale == 1:
                    conn.send(Notice(f"reply to request {reply.request_id} ignored: "
                                     f"waiting for request {request.request_id}"))
                if stale <= MAX_STALE:
                    continue
                code, reason = "stale", (f"{stale} replies to old requests while request "
                                         f"{request.request_id} waits (at most {MAX_STALE})")
            elif reply.action is None:
                if reply.bot_error:
                    driver.note_error(seat, reply.error)
                    code, reason = BOT_ERROR, reply.error
                else:
                    code, reason = "malformed", reply.error or "unreadable action"
            else:
                try:
                    driver.submit(reply.action, elapsed_ms=elapsed_ms)
                except RuleError as err:
                    code, reason = str(err.code), err.message
                else:
                    policy.answered(seat, elapsed_ms)
                    break
            rejections += 1
            driver.note_rejection(seat, reply.action, f"{code}: {reason}",
                                  illegal=code != BOT_ERROR)
            bound.info("rejected", seat=seat, bot=conn.name, code=code, reason=reason)
            left = policy.refused(seat, rejections, code, reason)
            if left is None:
                conn.send(Rejected(request.request_id, code, reason, (), 0))
                driver.submit(driver.default_action(), elapsed_ms=elapsed_ms,
                              defaulted=refused_default_reason(rejections))
                break
            conn.send(Rejected(request.request_id, code, reason, tuple(request.view.legal),
                               left))
        _flush(driver, seats)
