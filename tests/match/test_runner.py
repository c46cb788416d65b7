"""The time model and fault policy of ``run_match``, with in-process seats on a virtual clock.

No network and no threads: each seat is a scripted ``Seat`` whose answers arrive after a
chosen (virtual) delay, so trio's ``autojump_clock`` makes every deadline exact and the
tests instant. The same policy over real gRPC is in tests/e2e/test_faults.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import trio
import trio.testing
from gin_arena_core.rules import (
    Action,
    Discard,
    DrawStock,
    Phase,
    PlayerView,
    RulesConfig,
)
from gin_arena_core.rules.cards import CARDS

from arena.match.driver import MatchDriver
from arena.match.messages import (
    DecisionRequest,
    Defaulted,
    MatchEnded,
    MatchResult,
    Notice,
    Outgoing,
    Rejected,
    Reply,
    Termination,
    TimeControl,
)
from arena.match.runner import MAX_STALE, run_match
from arena.match.timers import TimedOut, receive_by
from sample_bots import GreedyBot

pytestmark = pytest.mark.timeout(60)

RULES = RulesConfig()
NEVER = float("inf")


@dataclass
class Answer:
    """What a scripted seat does with one request: answer ``action`` (None: its own
    policy) after ``delay_s``, under ``request_id`` (None: the request's); or not at all."""

    delay_s: float = 0.0
    action: Action | None = None
    request_id: int | None = None
    silent: bool = False
    leave: bool = False  # the connection drops instead (receive() returns None)
    held_s: float = 0.0  # it reaches the arena at delay_s, but its loop reads it this later


Script = Callable[[int, DecisionRequest], Answer]  # (n-th request, request) -> answer


def prompt(n: int, request: DecisionRequest) -> Answer:
    return Answer()


@dataclass(eq=False)
class ScriptedSeat:
    """A ``Seat`` answering by script; records everything it was sent."""

    name: str
    script: Script = prompt
    back_after_s: float | None = None  # after leaving: reconnect this much later
    sent: list[Outgoing] = field(default_factory=list)
    requests: list[DecisionRequest] = field(default_factory=list)
    bot: GreedyBot = field(default_factory=GreedyBot)
    _inbox: list[tuple[float, Reply | None]] = field(default_factory=list)  # (readable at, ..)
    _wake: trio.Event = field(default_factory=trio.Event)

    def send(self, message: Outgoing) -> None:
        self.sent.append(message)
        if isinstance(message, Rejected):
            fixed = Answer(action=self.bot.decide(self._last_view))
            self._queue(fixed, message.request_id)
        if not isinstance(message, DecisionRequest):
            return
        self.requests.append(message)
        self._last_view: PlayerView = message.view
        answer = self.script(len(self.requests), message)
        if answer.silent:
            return
        if answer.leave:
            self._inbox.append((trio.current_time(), None))
            self._wake.set()
            return
        if answer.action is None:
            answer.action = self.bot.decide(message.view)
        self._queue(answer, message.request_id)

    def _queue(self, answer: Answer, request_id: int) -> None:
        rid = request_id if answer.request_id is None else answer.request_id
        arrived = trio.current_time() + answer.delay_s
        self._inbox.append((arrived + answer.held_s,
                            Reply(rid, answer.action, arrived=arrived)))
        self._inbox.sort(key=lambda item: item[0])
        self._wake.set()

    def poll(self) -> Reply | None:
        """An answer that reached the arena already, even one its loop has not read yet."""
        for i, (_, reply) in enumerate(self._inbox):
            if reply is not None and reply.arrived is not None \
                    and reply.arrived <= trio.current_time():
                return self._inbox.pop(i)[1]
        return None

    async def receive(self, deadline: float) -> Reply | TimedOut | None:
        return await receive_by(deadline, self._next)

    async def _next(self) -> Reply | None:
        await trio.lowlevel.checkpoint()  # as a real channel's receive: cancellable first
        while True:
            if self._inbox:
                at, reply = self._inbox[0]
                if trio.current_time() >= at:
                    self._inbox.pop(0)
                    return reply
                with trio.move_on_at(at):
                    self._wake = trio.Event()
                    await self._wake.wait()
                continue
            self._wake = trio.Event()
            await self._wake.wait()

    async def wait_back(self, grace_s: float) -> bool:
        if grace_s <= 0:
            return False
        if self.back_after_s is None or self.back_after_s > grace_s:
            await trio.sleep(grace_s)
            return False
        await trio.sleep(self.back_after_s)
        return True

    def of(self, kind: type) -> list[object]:
        return [m for m in self.sent if isinstance(m, kind)]


def play(tc: TimeControl, a: ScriptedSeat, b: ScriptedSeat, *, seed: int = 7,
         max_hands: int = 500, lag: Callable[[], float] | None = None) -> MatchResult:
    driver = MatchDriver("t", RULES.with_options(max_hands=max_hands), (a.name, b.name),
                         seed=seed, time_control=tc)
    out: list[MatchResult] = []

    async def main() -> None:
        if lag is None:
            out.append(await run_match(driver, (a, b)))
        else:
            out.append(await run_match(driver, (a, b), lag=lag))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out[0]


def assert_forfeit(result: MatchResult, seat: int, termination: Termination) -> None:
    assert result.termination == termination, result
    assert result.blamed == seat and result.winner == 1 - seat


# ---------------------------------------------------------------------------- timeouts


def test_a_silent_seat_is_defaulted_then_forfeits_after_max_strikes() -> None:
    tc = TimeControl(decision_ms=200, margin_ms=50, max_strikes=2)
    hung = ScriptedSeat("hung", lambda n, r: Answer(silent=True))
    good = ScriptedSeat("good")
    result = play(tc, hung, good)
    assert_forfeit(result, 0, Termination.FORFEIT_TIMEOUT)
    assert result.stats[0].timeouts == 3  # two strikes allowed, the third forfeits
    assert result.stats[0].defaulted == 2
    assert "3 missed decisions" in result.detail
    # each default was announced, and the next request says the previous was defaulted
    defaulted = hung.of(Defaulted)
    assert len(defaulted) == 2
    assert [r.previous_defaulted for r in hung.requests] == [False, True, True]
    assert hung.of(MatchEnded) and good.of(MatchEnded)


def test_the_default_moves_are_the_documented_ones() -> None:
    """Never answering in the draw and discard phases: draw from the stock, then throw back
    the card just drawn; never a knock."""
    tc = TimeControl(decision_ms=100, margin_ms=10, max_strikes=10)
    seen: list[tuple[Phase, Action]] = []

    def script(n: int, request: DecisionRequest) -> Answer:
        return Answer(silent=request.view.phase in (Phase.DRAW, Phase.DISCARD))

    lazy = ScriptedSeat("lazy", script)
    good = ScriptedSeat("good")
    play(tc, lazy, good)
    phases = {r.request_id: r.view.phase for r in lazy.requests}
    for d in lazy.of(Defaulted):
        assert isinstance(d, Defaulted)
        seen.append((phases[d.request_id], d.action))
    assert seen, "nothing was defaulted"
    for phase, action in seen:
        assert phase in (Phase.DRAW, Phase.DISCARD)
        assert isinstance(action, DrawStock if phase is Phase.DRAW else Discard), action
    # a defaulted discard throws back the card the defaulted draw took
    draws = [i for i, (p, _) in enumerate(seen) if p is Phase.DRAW]
    assert any(i + 1 < len(seen) and seen[i + 1][0] is Phase.DISCARD for i in draws)


def test_the_deadline_is_decision_plus_margin_exactly() -> None:
    """On the virtual clock an answer 1 ms inside the deadline counts; 1 ms past it does
    not (it arrives after the default, as a stale reply)."""
    tc = TimeControl(decision_ms=300, margin_ms=40, max_strikes=5)

    def script(n: int, request: DecisionRequest) -> Answer:
        return Answer(delay_s=0.339 if n == 1 else 0.341 if n == 2 else 0.01)

    seat = ScriptedSeat("edge", script)
    result = play(tc, seat, ScriptedSeat("good"), max_hands=3)
    assert result.stats[0].timeouts == 1
    assert seat.requests[1].last_latency_ms == 339  # measured and sent back
    assert seat.requests[2].previous_defaulted
    notices = [m.text for m in seat.of(Notice)]  # type: ignore[attr-defined]
    assert any("ignored" in t for t in notices)
    assert all(r.time_left_ms == 300 for r in seat.requests)


def test_a_bank_pays_for_slow_answers_until_it_is_empty_then_forfeits() -> None:
    tc = TimeControl(decision_ms=100, bank_ms=300, margin_ms=0)
    slow = ScriptedSeat("slow", lambda n, r: Answer(delay_s=0.19))
    result = play(tc, slow, ScriptedSeat("good"))
    # 90 ms over per answer comes off the bank; with 30 left, 190 ms is late
    assert [r.bank_left_ms for r in slow.requests] == [300, 210, 120, 30]
    assert_forfeit(result, 0, Termination.FORFEIT_TIMEOUT)
    assert "time bank exhausted" in result.detail
    assert result.stats[0].decisions == 3


# ---------------------------------------------------------------------------- refusals


def not_held(request: DecisionRequest) -> Action:
    held = set(request.view.hand)
    return Discard(next(c for c in CARDS if c not in held))


def test_refused_answers_are_told_why_with_the_legal_moves_then_defaulted() -> None:
    tc = TimeControl(decision_ms=500, max_rejections=2, max_strikes=5)
    # the first request is answered wrongly three times (the seat's own retries too)
    calls = {"n": 0}

    class Stubborn(ScriptedSeat):
        def send(self, message: Outgoing) -> None:
            if isinstance(message, Rejected) and calls["n"] < 3:
                self.sent.append(message)
                calls["n"] += 1
                self._queue(Answer(action=not_held(self.requests[0])), message.request_id)
                return
            super().send(message)

    def script(n: int, request: DecisionRequest) -> Answer:
        if n == 1:
            calls["n"] += 1
            return Answer(action=not_held(request))
        return Answer()

    seat = Stubborn("stubborn", script)
    result = play(tc, seat, ScriptedSeat("good"))
    rejected = [m for m in seat.of(Rejected) if isinstance(m, Rejected)]
    assert [r.rejections_left for r in rejected] == [1, 0, 0]
    first = rejected[0]
    if seat.requests[0].view.phase is Phase.DISCARD:
        assert first.code == "not_held" and "does not hold" in first.reason
    else:
        assert first.code == "wrong_phase" and "Discard is not allowed" in first.reason
    assert set(first.legal) == set(seat.requests[0].view.legal)
    assert result.stats[0].rejections == 3 and result.stats[0].defaulted == 1
    assert result.termination == Termination.COMPLETED


def test_refused_answers_forfeit_under_the_forfeit_policy() -> None:
    tc = TimeControl(decision_ms=500, max_rejections=1, on_illegal="forfeit")

    class Liar(ScriptedSeat):
        def send(self, message: Outgoing) -> None:
            self.sent.append(message)
            if isinstance(message, DecisionRequest):
                self.requests.append(message)
                self._queue(Answer(action=not_held(message)), message.request_id)
            elif isinstance(message, Rejected):
                self._queue(Answer(action=not_held(self.requests[-1])), message.request_id)

    result = play(tc, Liar("liar"), ScriptedSeat("good"))
    assert_forfeit(result, 0, Termination.FORFEIT_ILLEGAL)
    assert result.stats[0].rejections == 2
    assert "2 refused answers" in result.detail


def test_an_unreadable_answer_is_refused_as_malformed() -> None:
    tc = TimeControl(decision_ms=500, max_rejections=3)

    class Garbled(ScriptedSeat):
        garbled = False

        async def receive(self, deadline: float) -> Reply | TimedOut | None:
            reply = await super().receive(deadline)
            if not self.garbled and isinstance(reply, Reply):
                self.garbled = True
                return Reply(reply.request_id, None, "action: unknown card 'ZZ'")
            return reply

    seat = Garbled("garbled")
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1)
    rejected = [m for m in seat.of(Rejected) if isinstance(m, Rejected)]
    assert rejected and rejected[0].code == "malformed" and "ZZ" in rejected[0].reason
    assert result.stats[0].rejections == 1 and result.stats[0].timeouts == 0


def test_a_stale_request_id_is_ignored_with_a_notice() -> None:
    tc = TimeControl(decision_ms=500)

    def script(n: int, request: DecisionRequest) -> Answer:
        return Answer(request_id=request.request_id - 1 if n == 2 else None)

    class Twice(ScriptedSeat):
        def send(self, message: Outgoing) -> None:
            super().send(message)
            if isinstance(message, DecisionRequest) and len(self.requests) == 2:
                self._queue(Answer(delay_s=0.01, action=self.bot.decide(message.view)),
                            message.request_id)

    seat = Twice("stale", script)
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1)
    notices = [m.text for m in seat.of(Notice)]  # type: ignore[attr-defined]
    assert any(f"waiting for request {seat.requests[1].request_id}" in t for t in notices)
    assert result.stats[0].rejections == 0 and result.stats[0].timeouts == 0


def test_stale_replies_past_the_limit_cost_their_sender() -> None:
    tc = TimeControl(decision_ms=500, max_rejections=1, max_strikes=9)

    class Spammer(ScriptedSeat):
        def send(self, message: Outgoing) -> None:
            super().send(message)
            if isinstance(message, DecisionRequest) and len(self.requests) == 2:
                for _ in range(MAX_STALE + 2):  # old ids, before the real answer
                    self._inbox.insert(0, (trio.current_time(), Reply(
                        message.request_id - 1, None, arrived=trio.current_time())))

    seat = Spammer("spam")
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1)
    waiting = seat.requests[1].request_id
    notices = [m.text for m in seat.of(Notice)]  # type: ignore[attr-defined]
    # one notice per decision, however many stale replies
    assert sum(f"waiting for request {waiting}" in t for t in notices) == 1
    refused = [m for m in seat.of(Rejected) if isinstance(m, Rejected)]
    assert refused and refused[0].code == "stale"
    assert result.stats[0].rejections == 2  # MAX_STALE free, then two refused, then default
    assert result.stats[0].defaulted == 1


# ---------------------------------------------------------------------------- the arena's lag


def test_an_answer_that_arrived_in_time_while_the_loop_was_busy_is_taken() -> None:
    tc = TimeControl(decision_ms=500, margin_ms=0, max_strikes=0)
    # every answer reaches the arena after 10 ms, but its loop reads it 2 s later
    seat = ScriptedSeat("prompt", lambda n, r: Answer(delay_s=0.01, held_s=2.0))
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1)
    assert result.stats[0].timeouts == 0 and result.stats[0].defaulted == 0
    assert result.stats[0].think_ms_max == pytest.approx(10, abs=1)  # charged 10 ms, not 2 s


def test_an_answer_that_arrived_late_is_a_timeout_even_if_read_at_once() -> None:
    tc = TimeControl(decision_ms=500, margin_ms=0, max_strikes=9)
    seat = ScriptedSeat("late", lambda n, r: Answer(delay_s=0.6 if n == 2 else 0.0))
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1)
    assert result.stats[0].timeouts == 1 and result.stats[0].defaulted == 1


def test_the_arenas_own_lag_is_credited_to_the_bot() -> None:
    tc = TimeControl(decision_ms=500, margin_ms=0, max_strikes=0)
    stalls = [(0.3, 1.2)]  # the arena's loop stalled 0.9 s, starting 0.3 s in

    def lag() -> float:  # accumulated stall, as arena.match.lag measures it
        now = trio.current_time()
        return sum(max(0.0, min(now, end) - start) for start, end in stalls)

    # the answer takes 1.3 s of wall time, 0.9 s of which the arena was stalled: 400 ms
    seat = ScriptedSeat("slowed", lambda n, r: Answer(delay_s=1.3 if n == 1 else 0.0))
    result = play(tc, seat, ScriptedSeat("good"), max_hands=1, lag=lag)
    assert result.stats[0].timeouts == 0 and result.termination != Termination.FORFEIT_TIMEOUT
    assert result.stats[0].think_ms_max == pytest.approx(400, abs=1)
    # without the credit the same answer is late
    seat = ScriptedSeat("slowed", lambda n, r: Answer(delay_s=1.3 if n == 1 else 0.0))
    assert_forfeit(play(tc, seat, ScriptedSeat("good"), max_hands=1), 0,
                   Termination.FORFEIT_TIMEOUT)


def test_a_lag_credit_never_turns_silence_into_an_answer() -> None:
    tc = TimeControl(decision_ms=500, margin_ms=0, max_strikes=0)
    stalls = [(0.1, 0.4)]

    def lag() -> float:
        now = trio.current_time()
        return sum(max(0.0, min(now, end) - start) for start, end in stalls)

    seat = ScriptedSeat("hung", lambda n, r: Answer(silent=True))
    result = play(tc, seat, ScriptedSeat("good"), lag=lag)
    assert_forfeit(result, 0, Termination.FORFEIT_TIMEOUT)


# ---------------------------------------------------------------------------- leaving


def test_a_seat_that_leaves_forfeits_after_the_grace() -> None:
    tc = TimeControl(decision_ms=500, reconnect_grace_ms=2000)
    seat = ScriptedSeat("gone", lambda n, r: Answer(leave=n == 3))
    result = play(tc, seat, ScriptedSeat("good"))
    assert_forfeit(result, 0, Termination.DISCONNECT)
    assert "2000 ms" in result.detail


def test_a_seat_that_comes_back_in_time_gets_the_pending_request_again() -> None:
    tc = TimeControl(decision_ms=500, reconnect_grace_ms=2000)
    seat = ScriptedSeat("back", lambda n, r: Answer(leave=n == 3), back_after_s=0.1)
    result = play(tc, seat, ScriptedSeat("good"))
    assert result.termination == Termination.COMPLETED
    again, before = seat.requests[3], seat.requests[2]
    assert again.request_id == before.request_id  # asked again, with the time left
    assert again.view == before.view
    assert (before.time_left_ms, again.time_left_ms) == (500, 400)
    # away 100 ms of a 500 ms decision: the clock ran on, but the answer was in time
    assert result.stats[0].timeouts == 0


def test_the_decision_clock_runs_while_a_seat_is_away() -> None:
    tc = TimeControl(decision_ms=500, margin_ms=0, reconnect_grace_ms=2000, max_strikes=5)
    seat = ScriptedSeat("late", lambda n, r: Answer(leave=n == 3), back_after_s=0.8)
    result = play(tc, seat, ScriptedSeat("good"))
    assert result.stats[0].timeouts == 1  # back after 800 ms: the decision was defaulted
    assert result.termination == Termination.COMPLETED
    # the expired request was not sent again: the next one says the last was defaulted
    assert seat.requests[3].request_id != seat.requests[2].request_id
    assert seat.requests[3].previous_defaulted


def test_with_a_bank_time_away_comes_off_the_bank() -> None:
    tc = TimeControl(decision_ms=500, bank_ms=1000, margin_ms=0, reconnect_grace_ms=5000)
    seat = ScriptedSeat("away", lambda n, r: Answer(leave=n == 3), back_after_s=0.8)
    result = play(tc, seat, ScriptedSeat("good"))
    again = seat.requests[3]
    assert again.request_id == seat.requests[2].request_id
    assert (again.time_left_ms, again.bank_left_ms) == (0, 700)
    assert seat.requests[4].bank_left_ms == 700  # its answer came at once: 300 ms over
    assert result.stats[0].timeouts == 0 and result.termination == Termination.COMPLETED


def test_with_a_bank_an_absence_longer_than_the_bank_forfeits() -> None:
    tc = TimeControl(decision_ms=500, bank_ms=1000, margin_ms=0, reconnect_grace_ms=5000)
    seat = ScriptedSeat("away", lambda n, r: Answer(leave=n == 3), back_after_s=2.0)
    assert_forfeit(play(tc, seat, ScriptedSeat("good")), 0, Termination.FORFEIT_TIMEOUT)
    assert len(seat.requests) == 3  # never asked again: its time had run out


def test_zero_grace_forfeits_at_once() -> None:
    tc = TimeControl(decision_ms=500, reconnect_grace_ms=0)
    seat = ScriptedSeat("gone", lambda n, r: Answer(leave=n == 1), back_after_s=0.0)
    assert_forfeit(play(tc, seat, ScriptedSeat("good")), 0, Termination.DISCONNECT)


# ---------------------------------------------------------------------------- whole matches


def test_a_prompt_match_completes_with_no_faults_and_both_seats_told() -> None:
    a, b = ScriptedSeat("a"), ScriptedSeat("b")
    result = play(TimeControl(decision_ms=100), a, b)
    assert result.termination == Termination.COMPLETED
    assert result.winner in (0, 1) and result.blamed is None
    assert all(s.timeouts == 0 and s.rejections == 0 for s in result.stats)
    for seat in (a, b):
        ends = [m for m in seat.of(MatchEnded) if isinstance(m, MatchEnded)]
        assert len(ends) == 1 and ends[0].result == result
        assert isinstance(seat.sent[-1], MatchEnded)


def test_cancelling_a_match_records_shutdown_and_tells_both_seats() -> None:
    a = ScriptedSeat("a", lambda n, r: Answer(delay_s=0.05))
    b = ScriptedSeat("b", lambda n, r: Answer(delay_s=0.05))
    driver = MatchDriver("t", RULES, ("a", "b"), seed=1, time_control=TimeControl())

    async def main() -> None:
        with trio.move_on_after(1.0):
            await run_match(driver, (a, b))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert driver.result is not None
    assert driver.result.termination == Termination.SHUTDOWN
    assert driver.result.winner is None and driver.result.blamed is None
    for seat in (a, b):
        assert isinstance(seat.sent[-1], MatchEnded)
    assert driver.record[-1]["termination"] == "shutdown"
