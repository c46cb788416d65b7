"""Schedules of duplicate deals: every pairing on the same deals, each deal in both seat orders.

A *deal* is one seed for a whole match: every hand's deck order follows from (seed, deal,
hand number) only, never from play, and each seat is dealt the same ten cards whoever
deals (``arena.match.driver.SeededDecks``). Each deal is played twice with the seats
swapped, so each bot holds each hand once: a lucky deal helps both equally, and the two
matches of a deal are one paired observation. Every pairing sees the same deals (deal
``d`` of A-B is deal ``d`` of A-C), so results against different opponents compare on the
same cards.

Deal seeds and match ids are keyed hashes with the scope's *secret* (128 random bits kept
in the store, never sent to a bot), so no bot can test guesses of the series' seed
against anything it is told, and a known seed string alone does not give the deals. The
same scope (seed and secret) always names the same matches: that is what makes resuming
safe, and scheduling twice harmless.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence

from arena.match.spec import MatchSpec, canonical


def keyed(secret: str, *parts: object) -> str:
    """A hex digest of ``parts`` keyed with ``secret`` (HMAC-SHA256)."""
    text = "\x1f".join(str(p) for p in parts)
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def match_id(secret: str, scope: str, pair: tuple[str, str], deal: int, order: int) -> str:
    """An opaque id for a match of ``scope``: no bot can tell its deal, its partner match
    or anything of the seed from it."""
    return "m" + keyed(secret, "match", scope, pair[0], pair[1], deal, order)[:19]


def deal_seed(seed: str, secret: str, deal: int) -> str:
    """The seed of deal ``deal``: a keyed hash of the run's seed and deal index with the
    scope's secret, so a match record (which holds its deal's seed and decks) reveals no
    other deal, and knowing the seed string gives no deal without the secret."""
    return keyed(secret, "deal", seed, deal)[:32]


def round_robin(names: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of ``names`` once."""
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


def schedule(pairs: Sequence[tuple[str, str]], deals: int, *, seed: str, secret: str,
             scope: str, games: int | None = None) -> Iterator[MatchSpec]:
    """Every pairing on deals ``0..deals-1``, deal by deal, each deal in both seat orders;
    ``games`` (at most ``2 * deals``): stop each pairing after that many matches, so an
    odd number plays the last deal once, with ``pair[0]`` in seat 0.

    Deal-major order means a run stopped half way has played every pairing about equally.
    """
    canon = [canonical(a, b) for a, b in pairs]
    limit = 2 * deals if games is None else games
    for deal in range(deals):
        dseed = deal_seed(seed, secret, deal)
        for pair in canon:
            for order in (0, 1):
                if 2 * deal + order < limit:
                    yield MatchSpec(match_id(secret, scope, pair, deal, order), pair, deal,
                                    order, dseed)


__all__ = ["deal_seed", "keyed", "match_id", "round_robin", "schedule"]
