"""In-process play (``play_local`` / ``play_guarded``): rules enforced, bot faults judged."""

from __future__ import annotations

from typing import Any

from arena.match.driver import MatchDriver
from arena.match.local import play_guarded
from arena.match.messages import Termination
from arena.rules import Action, Discard, PlayerView, RulesConfig
from arena.rules.cards import CARDS
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


def test_a_bot_that_raises_forfeits_its_seat_not_the_arena() -> None:
    d = driver()
    result = play_guarded(d, (GreedyBot(), Raiser()))
    assert result.termination == Termination.DISCONNECT
    assert result.blamed == 1 and result.winner == 0
    assert "bot crashed: RuntimeError: boom" in result.detail


def test_answers_that_are_not_legal_actions_are_refused_and_the_match_goes_on() -> None:
    liar = Liar()
    result = play_guarded(driver(), (liar, GreedyBot()))
    assert liar.refused[:2] == ["malformed", "not_held"]
    assert result.stats[0].rejections == 2
    assert result.termination in (Termination.COMPLETED, Termination.CAPPED)
