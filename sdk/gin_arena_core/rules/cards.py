"""Cards: two-character notation, values, and 52-bit masks.

A card is an ``int`` 0..51 (``suit * 13 + rank - 1``) with a readable face: ``"TD"``,
``"AS"``, ``"KH"``. Ranks ``A23456789TJQK`` (ace low only), suits ``CDHS``. Sets of cards
are kept as 52-bit integer masks inside the engine; everything public takes and returns
``Card`` objects or strings.
"""

from __future__ import annotations

from collections.abc import Iterable

from gin_arena_core.rules.errors import Code, MalformedError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
FULL_MASK = (1 << 52) - 1


class Card(int):
    """One card. Compare, hash and sort as its index; print as ``"TD"``."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        """``Card(0)`` .. ``Card(51)``; anything else is ``MalformedError`` (``bad_card``).
        Prefer ``parse_card("TD")`` or ``CARDS[i]``."""
        if type(index) is not int or not 0 <= index < 52:
            if isinstance(index, Card):
                return index
            raise MalformedError(Code.BAD_CARD, f"Card({index!r}): a card index is 0..51")
        return super().__new__(cls, index)

    @property
    def rank(self) -> int:
        """1 (ace) .. 13 (king)."""
        return int(self) % 13 + 1

    @property
    def suit(self) -> int:
        """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return int(self) // 13

    @property
    def value(self) -> int:
        """Deadwood value: ace 1, pips at face, T J Q K 10."""
        return VALUES[self]

    @property
    def mask(self) -> int:
        return 1 << int(self)

    def __str__(self) -> str:
        return NAMES[self]

    def __repr__(self) -> str:
        return f"Card({NAMES[self]!r})"


NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(52))
VALUES: tuple[int, ...] = tuple(min(i % 13 + 1, 10) for i in range(52))
_BY_NAME: dict[str, Card] = {n: CARDS[i] for i, n in enumerate(NAMES)}
# Accept "10D" as a courtesy spelling of "TD" and lower case; output is always canonical.
_BY_NAME.update({n.lower(): c for n, c in list(_BY_NAME.items())})
for _s in SUITS:
    _BY_NAME["10" + _s] = _BY_NAME["T" + _s]
    _BY_NAME["10" + _s.lower()] = _BY_NAME["T" + _s]

CardLike = Card | str


def parse_card(text: CardLike) -> Card:
    """The card named by ``text`` (``"TD"``); a ``Card`` is returned as is.

    Raises ``MalformedError`` (code ``bad_card``) naming the text if it is not a card.
    """
    if isinstance(text, Card):
        return text
    if isinstance(text, str):
        card = _BY_NAME.get(text.strip())
        if card is not None:
            return card
    raise MalformedError(
        Code.BAD_CARD,
        f"{text!r} is not a card: use rank {RANKS} + suit {SUITS}, e.g. 'TD', 'AS'",
    )


def parse_cards(items: Iterable[CardLike] | str) -> tuple[Card, ...]:
    """Cards from strings or ``Card`` objects; a single string may hold several ("AS 2S 3S")."""
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    return tuple(parse_card(x) for x in items)


def to_mask(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# Per-suit lookup tables: 13-bit suit pattern -> its cards / their total value.
_SUIT_CARDS: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(tuple(CARDS[13 * s + r] for r in range(13) if bits >> r & 1) for bits in range(8192))
    for s in range(4)
)
_SUIT_VALUE: tuple[int, ...] = tuple(
    sum(min(r + 1, 10) for r in range(13) if bits >> r & 1) for bits in range(8192)
)


def from_mask(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, in index order (suit, then rank)."""
    return (
        _SUIT_CARDS[0][mask & 0x1FFF]
        + _SUIT_CARDS[1][(mask >> 13) & 0x1FFF]
        + _SUIT_CARDS[2][(mask >> 26) & 0x1FFF]
        + _SUIT_CARDS[3][(mask >> 39) & 0x1FFF]
    )


def mask_value(mask: int) -> int:
    """Total deadwood value of the cards of a mask."""
    v = _SUIT_VALUE
    return (v[mask & 0x1FFF] + v[(mask >> 13) & 0x1FFF] + v[(mask >> 26) & 0x1FFF]
            + v[(mask >> 39) & 0x1FFF])


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(NAMES[c] for c in cards)


def sorted_for_display(cards: Iterable[int]) -> list[Card]:
    """By suit then rank (the natural way to fan a hand)."""
    return sorted(CARDS[c] for c in cards)
