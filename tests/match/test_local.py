"""In-process play (``play_local``): rules enforced, bot faults judged as over gRPC.

The same cases against every way of seating a bot are in tests/contract/."""

from __future__ import annotations

from typing import Any

from gin_arena_core.rules import Action, Discard, PlayerView, RulesConfig
from gin_arena_core.rules.cards import CARDS

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import Termination
from sample_bots import GreedyBot


class Raiser(GreedyBot):
    """Plays greedy until its 5th decision, then raises."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, view: PlayerView) -> Action:
        self.calls += 1
        if self.calls == 5:
            raise RuntimeError("boom")
        return super().decide(view)


class Liar(GreedyBot):
    """Answers its 3rd decision with things that are not legal actions."""

    def __init__(self) -> None:
        self.calls = 0
        self.refused: list[str] = []

    def decide(self, view: PlayerView) -> Any:
        self.calls += 1
        if self.calls == 3:
            return "discard TD"
        return super().decide(view)

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Any:
        self.refused.append(code)
        if len(self.refused) == 1:
            held = set(view.hand)
            return Discard(next(c for c in CARDS if c not in held))
        return None  # then the first legal move


def driver() -> MatchDriver:
    return MatchDriver("local", RulesConfig(), ("a", "b"), seed=3)


def test_a_bot_that_raises_has_that_answer_refused_as_a_bot_error_and_plays_on() -> None:
    d = driver()
    result = play_local(d, (GreedyBot(), Raiser()))
    assert result.termination in (Termination.COMPLETED, Termination.CAPPED)
    stats = result.stats[1]
    assert stats.errors == 1 and stats.rejections == 0
    assert stats.first_error.startswith("decide() raised RuntimeError: boom at test_local.py:")
    assert stats.first_error.endswith(" in decide")
    refused = [e for e in d.record if e["type"] == "rejected"]
    assert refused[0]["error"].startswith("bot_error: decide() raised RuntimeError: boom")


def test_a_hook_that_raises_is_counted_and_the_match_goes_on() -> None:
    class Noisy(GreedyBot):
        def on_hand_end(self, result: Any, scores: tuple[int, int]) -> None:
            raise KeyError("oops")

    result = play_local(driver(), (Noisy(), GreedyBot()))
    assert result.termination in (Termination.COMPLETED, Termination.CAPPED)
    assert result.stats[0].errors == len(result.hands) - 1 > 0  # the last: after the end
    assert result.stats[0].first_error.startswith("on_hand_end() raised KeyError: 'oops' at ")


def test_answers_that_are_not_legal_actions_are_refused_and_the_match_goes_on() -> None:
    liar = Liar()
    result = play_local(driver(), (liar, GreedyBot()))
    assert liar.refused[:2] == ["bot_error", "not_held"]
    assert result.stats[0].rejections == 1 and result.stats[0].errors == 1
    assert result.stats[0].first_error == ("decide() returned str 'discard TD', not a move "
                                           "(return one of view.legal, e.g. Discard(card))")
    assert result.termination in (Termination.COMPLETED, Termination.CAPPED)
