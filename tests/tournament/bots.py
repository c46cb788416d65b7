"""Small deterministic bots for the tournament tests (independent of sample_bots/)."""

from __future__ import annotations

import time

from gin_arena_core.rules import (
    Action,
    Discard,
    Gin,
    Knock,
    PlayerView,
    min_deadwood,
)
from gin_arena_sdk.bot import Bot


def _best_discard(view: PlayerView) -> Action:
    runs_only = False
    hand = list(view.hand)
    gins = [a for a in view.legal if isinstance(a, Gin)]
    if gins:
        return gins[0]
    scored: list[tuple[int, int, Action]] = []
    for a in view.legal:
        if isinstance(a, Discard | Knock):
            card = a.card
            rest = [c for c in hand if c != card]
            dw = min_deadwood(rest, runs_only=runs_only)
            # prefer a knock at equal deadwood, then shedding the higher card
            scored.append((dw, 0 if isinstance(a, Knock) else 1, -card.value, a))  # type: ignore[arg-type]
    scored.sort(key=lambda t: t[:3])
    return scored[0][-1]


class Greedy(Bot):
    """Keeps the least deadwood; takes a discard that lowers it; knocks at once."""

    name = "greedy"

    def take_upcard(self, view: PlayerView) -> bool:
        return self.draw_discard(view)

    def draw_discard(self, view: PlayerView) -> bool:
        top = view.discard_top
        if top is None:
            return False
        now = min_deadwood(view.hand)
        with_top = [*list(view.hand), top]
        after = min(min_deadwood([c for c in with_top if c != d]) for d in view.hand)
        return after < now - 2

    def discard(self, view: PlayerView) -> Action:
        return _best_discard(view)


class Sloppy(Bot):
    """Never draws from the pile, sheds its highest card, knocks when it can."""

    name = "sloppy"

    def discard(self, view: PlayerView) -> Action:
        knocks = [a for a in view.legal if isinstance(a, Gin | Knock)]
        if knocks:
            return knocks[0]
        discards = [a for a in view.legal if isinstance(a, Discard)]
        return max(discards, key=lambda a: (a.card.value, a.card))


class Crasher(Greedy):
    """Raises whenever it is asked for a move, in ``decide`` and in ``on_rejected`` (a bot
    bug): every answer is a bot error, so the refusal policy makes it forfeit."""

    name = "crasher"

    def decide(self, view: PlayerView) -> Action:
        raise RuntimeError("crasher always crashes")

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Action | None:
        raise RuntimeError("crasher crashes again")


class Staller(Greedy):
    """Never answers (sleeps far past any deadline)."""

    name = "staller"

    def decide(self, view: PlayerView) -> Action:
        time.sleep(3600)
        raise AssertionError("unreachable")


class Exiter(Greedy):
    """Its process dies on its first decision (a crash that takes the process down)."""

    name = "exiter"

    def decide(self, view: PlayerView) -> Action:
        import os

        os._exit(3)


class Slow(Greedy):
    """Greedy, thinking 30 ms a decision: a match takes seconds, long enough to be cut."""

    name = "slow"

    def decide(self, view: PlayerView) -> Action:
        time.sleep(0.03)
        return super().decide(view)
