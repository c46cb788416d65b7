"""Rule errors: one base, two kinds.

``MalformedError``: the input is not well formed whatever the position (an unknown card,
cards that are not a meld, a bad option). ``IllegalActionError``: well formed, but not
allowed now (not your turn, a card you don't hold, knocking over the limit, throwing back
the card just taken). Both subclass ``ValueError`` and carry a stable ``code``; errors
raised by ``apply`` also carry the seat, the phase, the action and the legal alternatives.
The state is never changed by a call that raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class Code(StrEnum):
    """Stable error codes (the protocol sends these strings)."""

    BAD_CARD = "bad_card"
    DUPLICATE_CARD = "duplicate_card"
    NOT_A_MELD = "not_a_meld"
    BAD_DECK = "bad_deck"
    BAD_OPTION = "bad_option"
    BAD_ACTION = "bad_action"
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    NOT_HELD = "not_held"
    TAKEN_CARD_BACK = "taken_card_back"
    OVER_KNOCK_LIMIT = "over_knock_limit"
    NOT_GIN = "not_gin"
    BAD_LAYOFF = "bad_layoff"
    VARIANT_OFF = "variant_off"
    EMPTY_STOCK = "empty_stock"
    EMPTY_DISCARD = "empty_discard"
    HAND_OVER = "hand_over"
    GAME_OVER = "game_over"


class RuleError(ValueError):
    """Base of every rules error."""

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        seat: int | None = None,
        phase: Any = None,
        action: Any = None,
        legal: Sequence[Any] = (),
    ) -> None:
        self.code = code
        self.message = message
        self.seat = seat
        self.phase = phase
        self.action = action
        self.legal: tuple[Any, ...] = tuple(legal)
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"[{self.code}] {self.message}"]
        if self.seat is not None:
            parts.append(f"seat {self.seat}")
        if self.phase is not None:
            parts.append(f"phase {getattr(self.phase, 'name', self.phase)}")
        if self.action is not None:
            try:
                shown = str(self.action)
            except Exception:  # a malformed action may not print: show its repr
                shown = repr(self.action)
            parts.append(f"action {shown}")
        text = "; ".join(parts)
        if self.legal:
            shown = ", ".join(str(a) for a in self.legal[:24])
            more = f" (+{len(self.legal) - 24} more)" if len(self.legal) > 24 else ""
            text += f"; legal: {shown}{more}"
        return text

    def with_context(
        self, *, seat: int | None, phase: Any, action: Any, legal: Sequence[Any]
    ) -> RuleError:
        """The same error, re-raised with the position it happened in."""
        return type(self)(
            self.code, self.message, seat=seat, phase=phase, action=action, legal=legal
        )


class MalformedError(RuleError):
    """The input is not well formed (whatever the position)."""


class IllegalActionError(RuleError):
    """Well formed, but not allowed in this position."""
