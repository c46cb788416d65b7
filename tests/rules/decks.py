"""Build deck orders that deal chosen hands (the engine deals from the order given)."""

from __future__ import annotations

from gin_arena_core.rules import CARDS, Card, parse_cards


def deck_for(
    non_dealer: str, dealer: str, upcard: str | None = None, stock: str = ""
) -> list[Card]:
    """A 52-card order dealing these hands: the dealer deals one at a time, opponent first.

    ``non_dealer`` may hold 11 cards (the 11-card deal: its 11th card is the 21st card).
    ``stock`` lists the top of the stock in drawing order; the rest follows in index order.
    """
    nd = list(parse_cards(non_dealer))
    de = list(parse_cards(dealer))
    assert len(nd) in (10, 11) and len(de) == 10
    order: list[Card] = []
    for i in range(10):
        order += [nd[i], de[i]]
    if len(nd) == 11:
        assert upcard is None
        order.append(nd[10])
    else:
        assert upcard is not None
        order.append(parse_cards(upcard)[0])
    order += parse_cards(stock)
    assert len(set(order)) == len(order), "a card is used twice"
    order += [c for c in CARDS if c not in set(order)]
    return order
