"""The bot base class: one method per decision, each given the seat's view.

Override what you need; the defaults are legal and simple. ``decide(view)`` dispatches by
phase, so a bot may instead override ``decide`` alone. A view is
``gin_arena_core.rules.PlayerView``: your hand as ``Card`` objects, the discard pile, what
you know of the opponent's hand, the public history, and ``view.legal`` (every legal move;
knock and gin listed with their discard). Return an action from ``gin_arena_sdk``
(``Discard(card)``, ``Knock(card)``, ...).

The hooks are given the same records however the bot is seated (in-process or over gRPC):
``MatchStarted``, ``OpponentActed`` / ``MoveDefaulted`` / ``Notice``, ``HandResult``,
``MatchOutcome``. If your code raises, or ``decide`` returns something that is not a move,
that is a *bot error*: the answer is refused with code ``bot_error`` (``on_rejected`` is
called, as for an illegal move), a raising hook is counted and play goes on; either way
the arena counts it and shows the first one with the line it came from (docs/protocol.md,
"The bot contract").
"""

from __future__ import annotations

from gin_arena_core.protocol.records import BotEvent, MatchOutcome, MatchStarted
from gin_arena_core.rules import (
    Action,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    HandResult,
    Pass,
    Phase,
    PlayerView,
    TakeUpcard,
)


class Bot:
    """Subclass and override; ``name`` is what the arena shows."""

    name: str = "bot"

    # ---------------------------------------------------------------- decisions

    def decide(self, view: PlayerView) -> Action:
        """The answer to one decision request (dispatches to the methods below)."""
        phase = view.phase
        if phase is Phase.UPCARD_OFFER:
            return TakeUpcard() if self.take_upcard(view) else Pass()
        if phase is Phase.DRAW:
            if DrawDiscard() in view.legal and self.draw_discard(view):
                return DrawDiscard()
            return DrawStock()
        if phase is Phase.DISCARD:
            return self.discard(view)
        if phase is Phase.WALL_OFFER:
            return DrawDiscard() if DrawDiscard() in view.legal and self.take_at_wall(view) \
                else Pass()
        if phase is Phase.WALL_DISCARD:
            return self.knock_at_wall(view)
        return self.defend(view)

    def take_upcard(self, view: PlayerView) -> bool:
        """First turn: take the upcard? (default: no)"""
        return False

    def draw_discard(self, view: PlayerView) -> bool:
        """Take the top discard rather than the stock? (default: no)"""
        return False

    def discard(self, view: PlayerView) -> Action:
        """After drawing: ``Discard(card)``, ``Knock(card)``, ``Gin(card)`` or ``BigGin()``.
        Default: discard the first legal card."""
        return next(a for a in view.legal if isinstance(a, Discard))

    def take_at_wall(self, view: PlayerView) -> bool:
        """Wall variant: take the last discard to knock or gin? (default: yes if legal)"""
        return True

    def knock_at_wall(self, view: PlayerView) -> Action:
        """Wall variant, after taking: which knock or gin (default: the first listed)."""
        return view.legal[0]

    def defend(self, view: PlayerView) -> Action:
        """After the opponent knocks: your melds and layoffs (default: the best)."""
        return Defend()

    # ---------------------------------------------------------------- notifications

    def on_match_start(self, info: MatchStarted) -> None:
        """A match begins: ``info.match_id``, ``.seat``, ``.rules`` (a ``RulesConfig``),
        ``.time_control``, ``.opponent``."""

    def on_event(self, event: BotEvent) -> None:
        """The opponent moved (``OpponentActed``), the arena played a move for you
        (``MoveDefaulted``: a timeout or too many refused answers), or the arena says
        something (``Notice``)."""

    def on_hand_end(self, result: HandResult, scores: tuple[int, int]) -> None:
        """A hand ended; ``result`` reveals both hands; ``scores``: the game so far."""

    def on_match_end(self, result: MatchOutcome) -> None:
        """The match ended: ``result.winner`` (a seat, or None), ``.scores``, ``.reason``."""

    def on_rejected(self, view: PlayerView, code: str, reason: str) -> Action | None:
        """Your answer was refused (``code``, ``reason``; code ``bot_error`` if your own code
        failed) and another is wanted. Return another action, or None to play the first
        legal move. The default reports it on stderr and returns None."""
        import sys

        print(f"[{self.name}] move refused: {code}: {reason}", file=sys.stderr)
        return None
