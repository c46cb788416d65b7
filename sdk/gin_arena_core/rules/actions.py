"""Actions: frozen, self-describing records of every move a seat can make.

``str(action)`` is a short text form (``"discard TD"``, ``"knock 5C"``) and
``parse_action`` reads it back, so logs, replays and tests stay readable.
"""

from __future__ import annotations

from dataclasses import dataclass

from gin_arena_core.rules.cards import Card, parse_card
from gin_arena_core.rules.errors import Code, MalformedError
from gin_arena_core.rules.melds import Meld


@dataclass(frozen=True, slots=True)
class TakeUpcard:
    """First turn: take the upcard (then discard)."""

    def __str__(self) -> str:
        return "take_upcard"


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline the offered card: the upcard on the first turn, or the last discard at the wall."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class DrawStock:
    def __str__(self) -> str:
        return "draw_stock"


@dataclass(frozen=True, slots=True)
class DrawDiscard:
    """Take the top card of the discard pile."""

    def __str__(self) -> str:
        return "draw_discard"


@dataclass(frozen=True, slots=True)
class Discard:
    card: Card

    def __str__(self) -> str:
        return f"discard {self.card}"


@dataclass(frozen=True, slots=True)
class Knock:
    """Discard ``card`` face down and spread. ``melds=None``: the best arrangement. (Every
    move that discards a card names it ``card``: ``Discard``, ``Knock``, ``Gin``.)"""

    card: Card
    melds: tuple[Meld, ...] | None = None

    def __str__(self) -> str:
        return f"knock {self.card}" + _melds_text(self.melds)


@dataclass(frozen=True, slots=True)
class Gin:
    """Knock with no deadwood, discarding ``card``. ``melds=None``: the engine arranges the
    ten cards."""

    card: Card
    melds: tuple[Meld, ...] | None = None

    def __str__(self) -> str:
        return f"gin {self.card}" + _melds_text(self.melds)


@dataclass(frozen=True, slots=True)
class BigGin:
    """All eleven cards melded after the draw; no discard (variant ``big_gin``)."""

    melds: tuple[Meld, ...] | None = None

    def __str__(self) -> str:
        return "big_gin" + _melds_text(self.melds)


@dataclass(frozen=True, slots=True)
class Defend:
    """The defender's spread. ``melds=None``: the engine's best melds and layoffs together.

    ``layoffs`` are (card, index of the knocker's meld) applied in order, so a laid-off
    card may itself be extended by a later one.
    """

    melds: tuple[Meld, ...] | None = None
    layoffs: tuple[tuple[Card, int], ...] = ()

    def __str__(self) -> str:
        if self.melds is None:
            return "defend"
        text = "defend" + _melds_text(self.melds)
        if self.layoffs:
            text += " layoff " + " ".join(f"{c}>{i}" for c, i in self.layoffs)
        return text


Action = TakeUpcard | Pass | DrawStock | DrawDiscard | Discard | Knock | Gin | BigGin | Defend
ACTION_TYPES: tuple[type, ...] = (
    TakeUpcard, Pass, DrawStock, DrawDiscard, Discard, Knock, Gin, BigGin, Defend,
)


def _melds_text(melds: tuple[Meld, ...] | None) -> str:
    if melds is None:
        return ""
    return " [" + " | ".join(str(m) for m in melds) + "]"


def parse_action(text: str, *, runs_only: bool = False) -> Action:
    """Read the text form back: ``"discard TD"``, ``"knock 5C [AS 2S 3S | 7H 7D 7C]"``,
    ``"defend [..] layoff 4S>0"``. ``MalformedError`` (``bad_action``) otherwise."""
    head, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    simple: dict[str, Action] = {
        "take_upcard": TakeUpcard(), "pass": Pass(),
        "draw_stock": DrawStock(), "draw_discard": DrawDiscard(),
    }
    if head in simple and not rest:
        return simple[head]
    melds: tuple[Meld, ...] | None = None
    layoff_text = ""
    if "[" in rest:
        before, _, after = rest.partition("[")
        inner, _, tail = after.partition("]")
        groups = [g.split() for g in inner.split("|") if g.strip()]
        melds = tuple(Meld.of(g, runs_only=runs_only) for g in groups)
        rest = before.strip()
        layoff_text = tail.strip()
    if head == "discard" and rest:
        return Discard(parse_card(rest))
    if head == "knock" and rest:
        return Knock(parse_card(rest), melds)
    if head == "gin" and rest:
        return Gin(parse_card(rest), melds)
    if head == "big_gin" and not rest:
        return BigGin(melds)
    if head == "defend":
        if rest.startswith("layoff"):
            layoff_text, rest = rest, ""
        layoffs: list[tuple[Card, int]] = []
        if layoff_text:
            word, _, items = layoff_text.partition(" ")
            if word != "layoff":
                raise MalformedError(Code.BAD_ACTION, f"cannot read action {text!r}")
            for item in items.split():
                card, _, idx = item.partition(">")
                if not idx.isdigit():
                    raise MalformedError(Code.BAD_ACTION, f"bad layoff {item!r} in {text!r}")
                layoffs.append((parse_card(card), int(idx)))
        if melds is None and layoffs:
            melds = ()
        return Defend(melds, tuple(layoffs))
    raise MalformedError(Code.BAD_ACTION, f"cannot read action {text!r}")
