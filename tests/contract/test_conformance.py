"""One bot contract, one suite: the same cases against every way a bot is seated.

Each case is a bot (a GreedyBot with one fault switched on) and what must follow from it:
the hooks it is given, the counts in the result, how the match ends. Every seating (in
process, the SDK over real gRPC, a raw protobuf client over real gRPC) must pass every case
the same way; the hook records of a clean match must be equal, call for call.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from gin_arena_core.protocol.records import (
    MatchOutcome,
    MatchStarted,
    MoveDefaulted,
    Notice,
    OpponentActed,
)
from gin_arena_core.rules import Action, Discard, HandResult, PlayerView, RulesConfig, preset
from gin_arena_core.rules.cards import CARDS

from arena.match.messages import MatchResult, Termination, TimeControl
from sample_bots import GreedyBot
from tests.contract.seatings import SEATINGS, InProcess, Seating

pytestmark = pytest.mark.timeout(90)

TC = TimeControl(decision_ms=1000, margin_ms=50, max_strikes=3, max_rejections=2,
                 reconnect_grace_ms=2000)


class Subject(GreedyBot):
    """A GreedyBot that records every hook call, with faults to switch on."""

    def __init__(self, *, raise_at: int = 0, answer_at: tuple[int, Any] | None = None,
                 illegal: bool = False, slow_at: int = 0, slow_s: float = 0.0,
                 hook_raises: bool = False) -> None:
        super().__init__()
        self.name = "subject"
        self.calls: list[tuple[str, Any]] = []
        self.decisions = 0
        self.raise_at, self.answer_at, self.illegal = raise_at, answer_at, illegal
        self.slow_at, self.slow_s, self.hook_raises = slow_at, slow_s, hook_raises

    def decide(self, view: PlayerView) -> Action:
        self.decisions += 1
        self.calls.append(("decide", view))
        n = self.decisions
        if n == self.raise_at:
            raise RuntimeError("boom")
        if self.answer_at is not None and n == self.answer_at[0]:
            return self.answer_at[1]  # type: ignore[no-any-return]
        if n == self.slow_at:
            time.sleep(self.slow_s)
        if self.illegal:
            return Discard(next(c for c in CARDS if c not in view.hand))
        return super().decide(view)

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Action | None:
        self.calls.append(("on_rejected", code))
        if self.illegal:
            return Discard(next(c for c in CARDS if c not in view.hand))
        return None

    def on_match_start(self, info: MatchStarted) -> None:
        self.calls.append(("on_match_start", info))
        super().on_match_start(info)

    def on_event(self, event: Any) -> None:
        self.calls.append(("on_event", event))

    def on_hand_end(self, result: HandResult, scores: tuple[int, int]) -> None:
        self.calls.append(("on_hand_end", (result, scores)))
        if self.hook_raises:
            raise KeyError("hook")

    def on_match_end(self, result: MatchOutcome) -> None:
        self.calls.append(("on_match_end", result))

    def of(self, hook: str) -> list[Any]:
        return [arg for name, arg in self.calls if name == hook]


def play(seating: Seating, bot: Subject, tc: TimeControl = TC,
         rules: RulesConfig | None = None) -> MatchResult:
    return seating.play(bot, tc, rules or RulesConfig())


def normalised(calls: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The calls with what differs by design between seatings taken out: the match id
    (the arena's) and the arena's notices."""
    out = []
    for name, arg in calls:
        if isinstance(arg, MatchStarted | MatchOutcome):
            arg = type(arg)(*(("M" if f == "match_id" else getattr(arg, f))
                              for f in arg.__dataclass_fields__))
        if isinstance(arg, Notice):
            continue
        out.append((name, arg))
    return out


ids = [s.name for s in SEATINGS]
BASELINE: dict[str, list[tuple[str, Any]]] = {}


def baseline(rules_name: str) -> list[tuple[str, Any]]:
    if rules_name not in BASELINE:
        bot = Subject()
        play(InProcess(), bot, rules=preset(rules_name))
        BASELINE[rules_name] = normalised(bot.calls)
    return BASELINE[rules_name]


@pytest.mark.parametrize("rules_name", ["standard", "oklahoma"])
@pytest.mark.parametrize("seating", SEATINGS[1:], ids=ids[1:])
def test_every_hook_gets_the_same_records_as_in_process(seating: Seating,
                                                        rules_name: str) -> None:
    bot = Subject()
    result = play(seating, bot, rules=preset(rules_name))
    assert result.termination is Termination.COMPLETED
    assert result.stats[0].errors == 0
    want, got = baseline(rules_name), normalised(bot.calls)
    assert [n for n, _ in got] == [n for n, _ in want]
    for (name, mine), (_, theirs) in zip(got, want, strict=True):
        assert mine == theirs, name
    kinds = {type(arg) for name, arg in got if name == "on_event"}
    assert kinds == {OpponentActed}
    assert isinstance(bot.of("on_match_start")[0].rules, RulesConfig)


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_a_raising_decide_is_a_counted_bot_error_and_play_goes_on(seating: Seating) -> None:
    bot = Subject(raise_at=3)
    result = play(seating, bot)
    assert result.termination is Termination.COMPLETED
    stats = result.stats[0]
    assert (stats.errors, stats.rejections, stats.defaulted) == (1, 0, 0)
    assert stats.first_error.startswith("decide() raised RuntimeError: boom")
    assert bot.of("on_rejected") == ["bot_error"]  # asked again, as for an illegal move


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_an_answer_that_is_not_a_move_is_a_bot_error(seating: Seating) -> None:
    bot = Subject(answer_at=(2, "discard TD"))
    result = play(seating, bot)
    assert result.termination is Termination.COMPLETED
    assert (result.stats[0].errors, result.stats[0].rejections) == (1, 0)
    assert result.stats[0].first_error.startswith("decide() returned str")
    assert bot.of("on_rejected") == ["bot_error"]


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_a_raising_hook_is_counted_and_the_match_goes_on(seating: Seating) -> None:
    bot = Subject(hook_raises=True)
    result = play(seating, bot)
    assert result.termination is Termination.COMPLETED
    hands = len(result.hands)
    assert hands > 1 and len(bot.of("on_hand_end")) == hands
    # every hand's error is counted but the last one's, which comes after the match's end
    assert result.stats[0].errors == hands - 1
    assert result.stats[0].first_error.startswith("on_hand_end() raised KeyError: 'hook'")
    assert result.stats[0].rejections == 0


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_illegal_moves_forfeit_under_the_forfeit_policy(seating: Seating) -> None:
    tc = TimeControl(decision_ms=1000, max_rejections=2, on_illegal="forfeit")
    bot = Subject(illegal=True)
    result = play(seating, bot, tc)
    assert result.termination is Termination.FORFEIT_ILLEGAL and result.blamed == 0
    assert result.stats[0].rejections == tc.max_rejections + 1
    refused = bot.of("on_rejected")
    assert len(refused) == tc.max_rejections and set(refused) <= {"not_held", "wrong_phase"}
    assert bot.of("on_match_end")[0].reason == "forfeit_illegal"


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_illegal_moves_are_defaulted_with_a_strike_then_forfeit(seating: Seating) -> None:
    tc = TimeControl(decision_ms=1000, max_rejections=1, max_strikes=2, on_illegal="default")
    bot = Subject(illegal=True)
    result = play(seating, bot, tc)
    assert result.termination is Termination.FORFEIT_ILLEGAL
    assert result.stats[0].defaulted == tc.max_strikes
    assert result.stats[0].rejections == (tc.max_rejections + 1) * (tc.max_strikes + 1)
    # told only while another answer is wanted: max_rejections times per decision
    assert len(bot.of("on_rejected")) == tc.max_rejections * (tc.max_strikes + 1)
    defaulted = [e for e in bot.of("on_event") if isinstance(e, MoveDefaulted)]
    assert [e.reason for e in defaulted] == ["2 refused answers"] * tc.max_strikes


@pytest.mark.parametrize("seating", SEATINGS, ids=ids)
def test_a_slow_answer_is_a_timeout_with_a_strike(seating: Seating) -> None:
    tc = TimeControl(decision_ms=150, margin_ms=50, max_strikes=3, reconnect_grace_ms=2000)
    bot = Subject(slow_at=2, slow_s=0.5)
    result = play(seating, bot, tc)
    assert result.termination is Termination.COMPLETED
    # 0.5 s on a 0.2 s budget: that decision is played by default, and as the bot is still
    # busy when its next request comes (the same seat discards after a defaulted draw), the
    # rest of its overrun makes that one late too
    assert (result.stats[0].timeouts, result.stats[0].defaulted) == (2, 2)
    defaulted = [e for e in bot.of("on_event") if isinstance(e, MoveDefaulted)]
    assert [e.reason for e in defaulted] == ["no answer within 150 ms"] * 2
