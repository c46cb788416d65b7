"""Melds, deadwood and layoffs.

A meld is a set (3 or 4 cards of one rank) or a run (3+ cards of one suit in sequence,
ace low only). ``min_deadwood(cards)`` is the least total value of the unmelded cards over
all arrangements of exactly the given cards; ``best_melds(cards)`` is one arrangement that
reaches it. Both accept any number of cards (all 11 count when 11 are given). Internally
cards are 52-bit masks and the search runs over every disjoint combination of the melds
present, so the answer is exact (the tests check it against brute force).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gin_arena_core.rules.cards import (
    CARDS,
    VALUES,
    Card,
    CardLike,
    format_cards,
    from_mask,
    mask_value,
    parse_cards,
)
from gin_arena_core.rules.errors import Code, MalformedError

_SUIT = 0x1FFF  # 13 bits


@dataclass(frozen=True, slots=True)
class Meld:
    """A valid meld. ``cards`` are sorted by index (so a run reads low to high)."""

    cards: tuple[Card, ...]
    is_run: bool

    @staticmethod
    def of(cards: Iterable[CardLike], *, runs_only: bool = False) -> Meld:
        """The meld made of ``cards``; ``MalformedError`` (``not_a_meld``) if they are not one."""
        parsed = parse_cards(cards)
        mask = 0
        for c in parsed:
            if mask >> c & 1:
                raise MalformedError(Code.DUPLICATE_CARD, f"{c} appears twice in a meld")
            mask |= 1 << c
        kind = meld_kind(mask, runs_only=runs_only)
        if kind is None:
            what = "a run of 3+ cards of one suit" if runs_only else "a set or a run"
            raise MalformedError(
                Code.NOT_A_MELD, f"{format_cards(sorted(parsed))} is not a meld ({what})"
            )
        return Meld(from_mask(mask), kind == "run")

    @property
    def mask(self) -> int:
        m = 0
        for c in self.cards:
            m |= 1 << c
        return m

    def __str__(self) -> str:
        return format_cards(self.cards)


def meld_kind(mask: int, *, runs_only: bool = False) -> str | None:
    """``"set"``, ``"run"`` or None for the cards of ``mask``."""
    n = mask.bit_count()
    if n < 3:
        return None
    low = (mask & -mask).bit_length() - 1
    suit = low // 13
    bits = (mask >> (13 * suit)) & _SUIT
    if bits << (13 * suit) == mask:
        # all one suit: a run iff the bits are contiguous
        b = bits >> (low % 13)
        if b & (b + 1) == 0:
            return "run"
        return None
    if runs_only or n > 4:
        return None
    rank = low % 13
    same_rank = (1 << rank) | (1 << (rank + 13)) | (1 << (rank + 26)) | (1 << (rank + 39))
    return "set" if mask & ~same_rank == 0 else None


def candidate_melds(mask: int, runs_only: bool = False) -> list[int]:
    """Every meld (as a mask) inside ``mask``, sub-melds included (3-sets of a 4-set,
    every sub-run of a long run)."""
    melds: list[int] = []
    for s in range(4):
        bits = (mask >> (13 * s)) & _SUIT
        if not bits & (bits >> 1) & (bits >> 2):
            continue
        shift = 13 * s
        r = 0
        while r < 13:
            if not bits >> r & 1:
                r += 1
                continue
            end = r
            while end + 1 < 13 and bits >> (end + 1) & 1:
                end += 1
            if end - r >= 2:
                for i in range(r, end - 1):
                    for j in range(i + 2, end + 1):
                        melds.append(((1 << (j - i + 1)) - 1) << (i + shift))
            r = end + 1
    if not runs_only:
        a = mask & _SUIT
        b = (mask >> 13) & _SUIT
        c = (mask >> 26) & _SUIT
        d = (mask >> 39) & _SUIT
        three = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
        while three:
            low = three & -three
            r = low.bit_length() - 1
            three ^= low
            cards = [r + 13 * s for s in range(4) if mask >> (r + 13 * s) & 1]
            full = 0
            for x in cards:
                full |= 1 << x
            melds.append(full)
            if len(cards) == 4:
                for x in cards:
                    melds.append(full & ~(1 << x))
    return melds


_RUN_STARTS = sum(((1 << 11) - 1) << (13 * s) for s in range(4))  # ranks A..J start a run


def meldable_mask(mask: int, runs_only: bool = False) -> int:
    """The cards of ``mask`` that belong to at least one meld inside ``mask``.

    A few bit operations: every other card is deadwood in every arrangement, so
    ``mask_value(mask & ~meldable_mask(mask))`` is a cheap lower bound on the deadwood.
    """
    starts = mask & (mask >> 1) & (mask >> 2) & _RUN_STARTS
    covered = starts | starts << 1 | starts << 2
    if not runs_only:
        a = mask & _SUIT
        b = (mask >> 13) & _SUIT
        c = (mask >> 26) & _SUIT
        d = (mask >> 39) & _SUIT
        three = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
        if three:
            covered |= (three | three << 13 | three << 26 | three << 39) & mask
    return covered


def _arrangements(mask: int, runs_only: bool) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every arrangement of disjoint melds in ``mask`` as (used mask, melded value, melds)."""
    melds = candidate_melds(mask, runs_only)
    out: list[tuple[int, int, tuple[int, ...]]] = [(0, 0, ())]
    if not melds:
        return out
    vals = [mask_value(m) for m in melds]
    n = len(melds)

    def walk(start: int, used: int, value: int, chosen: tuple[int, ...]) -> None:
        for j in range(start, n):
            m = melds[j]
            if m & used:
                continue
            u, v, ch = used | m, value + vals[j], (*chosen, m)
            out.append((u, v, ch))
            walk(j + 1, u, v, ch)

    walk(0, 0, 0, ())
    return out


_CACHE: dict[tuple[int, bool], tuple[int, tuple[int, ...]]] = {}
_CACHE_LIMIT = 1 << 18


def _best(mask: int, runs_only: bool) -> tuple[int, tuple[int, ...]]:
    """(least deadwood, melds achieving it) for exactly the cards of ``mask``."""
    key = (mask, runs_only)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    total = mask_value(mask)
    melds = candidate_melds(mask, runs_only)
    if not melds:
        result: tuple[int, tuple[int, ...]] = (total, ())
    elif len(melds) == 1:
        result = (total - mask_value(melds[0]), (melds[0],))
    else:
        vals = [mask_value(m) for m in melds]
        order = sorted(range(len(melds)), key=lambda i: -vals[i])
        melds = [melds[i] for i in order]
        vals = [vals[i] for i in order]
        n = len(melds)
        best_v = -1
        best_ch: tuple[int, ...] = ()
        # suffix bound: an upper bound on what melds j.. can still add
        stack: list[tuple[int, int, int, tuple[int, ...]]] = [(0, 0, 0, ())]
        # Every disjoint combination; ties go to fewer (so longer) melds, which keeps a
        # long run whole (it matters for Sequence Gin's bonuses and reads naturally).
        while stack:
            start, used, value, chosen = stack.pop()
            if value > best_v or (value == best_v and len(chosen) < len(best_ch)):
                best_v, best_ch = value, chosen
            for j in range(start, n):
                m = melds[j]
                if not m & used:
                    stack.append((j + 1, used | m, value + vals[j], (*chosen, m)))
        result = (total - best_v, best_ch)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = result
    return result


def deadwood_of_mask(mask: int, runs_only: bool = False) -> int:
    return _best(mask, runs_only)[0]


def best_melds_of_mask(mask: int, runs_only: bool = False) -> tuple[int, ...]:
    return _best(mask, runs_only)[1]


def _mask_of(cards: Iterable[CardLike] | str) -> int:
    mask = 0
    for c in parse_cards(cards):
        if mask >> c & 1:
            raise MalformedError(Code.DUPLICATE_CARD, f"{c} appears twice")
        mask |= 1 << c
    return mask


def min_deadwood(cards: Iterable[CardLike] | str, *, runs_only: bool = False) -> int:
    """Least total value of unmelded cards over all arrangements of exactly these cards."""
    return _best(_mask_of(cards), runs_only)[0]


def best_melds(cards: Iterable[CardLike] | str, *, runs_only: bool = False) -> list[Meld]:
    """One arrangement of melds reaching ``min_deadwood(cards)``."""
    return [
        Meld(from_mask(m), meld_kind(m) == "run")
        for m in _best(_mask_of(cards), runs_only)[1]
    ]


_DAD_CACHE: dict[tuple[int, bool], dict[int, int]] = {}
_DAD_CACHE_LIMIT = 1 << 16


def deadwood_after_discard(mask: int, runs_only: bool = False) -> dict[int, int]:
    """For a hand of n cards: card -> least deadwood of the other n-1 cards (a new dict).

    One pass over all arrangements: the best arrangement of ``mask - c`` is the best
    arrangement of ``mask`` that avoids ``c`` (sub-melds are enumerated too). A card in no
    meld is in no arrangement, so the best of the whole hand serves it.
    """
    key = (mask, runs_only)
    hit = _DAD_CACHE.get(key)
    if hit is None:
        hit = _deadwood_after_discard(mask, runs_only)
        if len(_DAD_CACHE) >= _DAD_CACHE_LIMIT:
            _DAD_CACHE.clear()
        _DAD_CACHE[key] = hit
    return dict(hit)


def _deadwood_after_discard(mask: int, runs_only: bool) -> dict[int, int]:
    total = mask_value(mask)
    cards = from_mask(mask)
    nodes = _arrangements(mask, runs_only)
    if len(nodes) == 1:
        return {c: total - VALUES[c] for c in cards}
    overall = max(value for _, value, _ in nodes)
    meldable = meldable_mask(mask, runs_only)
    out: dict[int, int] = {}
    for c in cards:
        bit = 1 << c
        if not meldable & bit:
            out[c] = total - VALUES[c] - overall
            continue
        best = 0
        for used, value, _ in nodes:
            if value > best and not used & bit:
                best = value
        out[c] = total - VALUES[c] - best
    return out


# ------------------------------------------------------------------ layoffs


def _extends(meld_mask: int, is_run: bool, card: int) -> bool:
    """True if ``card`` can be laid off on the meld as it stands."""
    if not is_run:
        return meld_mask.bit_count() == 3 and card % 13 == (
            (meld_mask & -meld_mask).bit_length() - 1
        ) % 13
    suit = ((meld_mask & -meld_mask).bit_length() - 1) // 13
    if card // 13 != suit:
        return False
    bits = (meld_mask >> (13 * suit)) & _SUIT
    r = card % 13
    lo = (bits & -bits).bit_length() - 1
    hi = bits.bit_length() - 1
    return r == lo - 1 or r == hi + 1


def can_lay_off(meld: Meld, card: CardLike) -> bool:
    """True if ``card`` extends ``meld`` as it stands (4th of a set; either end of a run)."""
    c = parse_cards([card])[0]
    return not meld.mask >> c & 1 and _extends(meld.mask, meld.is_run, c)


def max_layoff(
    deadwood: int, knocker_melds: Sequence[tuple[int, bool]]
) -> list[tuple[int, int]]:
    """The largest layoff of ``deadwood`` cards onto the knocker's melds, as an ordered list
    of (card, meld index) that can be applied one by one. Runs are extended at both ends
    as far as the cards allow (a laid-off card may itself be extended); a set of three
    takes its fourth card."""
    plan: list[tuple[int, int]] = []
    left = deadwood
    current = [m for m, _ in knocker_melds]
    progress = True
    while progress and left:
        progress = False
        for i, (_, is_run) in enumerate(knocker_melds):
            if not is_run:
                continue
            m = current[i]
            suit = ((m & -m).bit_length() - 1) // 13
            bits = (m >> (13 * suit)) & _SUIT
            lo = (bits & -bits).bit_length() - 1
            hi = bits.bit_length() - 1
            for r in (lo - 1, hi + 1):
                if 0 <= r < 13:
                    c = 13 * suit + r
                    if left >> c & 1:
                        plan.append((c, i))
                        left &= ~(1 << c)
                        current[i] |= 1 << c
                        progress = True
    for i, (_, is_run) in enumerate(knocker_melds):
        if is_run or current[i].bit_count() != 3:
            continue
        rank = ((current[i] & -current[i]).bit_length() - 1) % 13
        for s in range(4):
            c = 13 * s + rank
            if left >> c & 1:
                plan.append((c, i))
                left &= ~(1 << c)
                current[i] |= 1 << c
                break
    return plan


_FACES = sum(0b111 << (10 + 13 * s) for s in range(4))  # J Q K of every suit


def sequence_bonus(melds: Iterable[int]) -> int:
    """Sequence Gin's bonus for these melds (seed 003): +1 per card of a run of 6 or more,
    +1 per face card in a run."""
    bonus = 0
    for m in melds:
        if meld_kind(m) == "run":
            n = m.bit_count()
            if n >= 6:
                bonus += n
            bonus += (m & _FACES).bit_count()
    return bonus


def best_defence(
    hand: int, knocker_melds: Sequence[tuple[int, bool]], runs_only: bool = False,
    allow_layoff: bool = True, with_bonus: bool = False,
) -> tuple[int, tuple[int, ...], list[tuple[int, int]]]:
    """The defender's best spread: (deadwood value, own melds, layoff plan).

    Chooses own melds and layoffs together (a card may be worth more laid off than kept in
    a meld of one's own), over every arrangement of the defender's cards. Among spreads with
    the same deadwood it prefers, with ``with_bonus`` (Sequence Gin), the largest bonus of
    its own runs, then the fewest melds and layoffs.
    """
    if not allow_layoff or not knocker_melds:
        dw, melds = _best(hand, runs_only)
        return dw, melds, []
    best: tuple[int, tuple[int, ...], list[tuple[int, int]]] | None = None
    best_key: tuple[int, int, int] | None = None
    for used, _value, chosen in _arrangements(hand, runs_only):
        rest = hand & ~used
        plan = max_layoff(rest, knocker_melds)
        laid = 0
        for c, _ in plan:
            laid |= 1 << c
        dw = mask_value(rest & ~laid)
        key = (dw, -sequence_bonus(chosen) if with_bonus else 0, len(chosen) + len(plan))
        if best_key is None or key < best_key:
            best, best_key = (dw, chosen, plan), key
    assert best is not None
    return best


def describe_mask(mask: int) -> str:
    return format_cards(from_mask(mask))


__all__ = [
    "CARDS",
    "Meld",
    "best_defence",
    "best_melds",
    "can_lay_off",
    "candidate_melds",
    "deadwood_after_discard",
    "max_layoff",
    "meld_kind",
    "min_deadwood",
]
