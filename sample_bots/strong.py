"""StrongBot: counts cards, reads the opponent, weighs every draw, discard and knock.

What it remembers (per hand, rebuilt from ``view.history``, which lists every face-up card
even when the rules hide the pile): the pile, the cards the opponent took, threw and passed
on, and so the *unseen* cards (the stock and the opponent's unknown cards), each with a
chance of being in the opponent's hand (higher next to cards it took, lower next to cards it
let go).

- A ten-card hand is valued by its deadwood less its *potential*: the expected drop in
  deadwood from the next stock card and the chances that card lets us knock or gin. Cards
  that meld with the hand are searched exactly (table-driven deadwood, a few microseconds a
  hand); any other card just replaces the card whose discard saves most. As the opponent
  draws, deadwood weighs more (its knock nears) and potential less (fewer draws remain).
- A discard costs the value of the hand it leaves plus its *danger*: the chance the opponent
  holds two cards that make a meld with it (cards it took count as held; cards in the pile
  or in our hand cannot be), weighing more as the hand goes on.
- Draws: the top discard is taken when the best hand after taking it beats the expected hand
  after a stock draw by a margin.
- Going out: big gin or gin at once. A knock is made unless its count is tiny and an estimate
  (gin chance and bonus, the opponent's likely count and knock hazard, the undercut risk)
  says playing on for gin is worth more; the knock spreads the melds that leave the
  opponent least to lay off.

All card sets are 52-bit masks; a decision takes well under a millisecond on average.
"""

from __future__ import annotations

from gin_arena_core.rules import (
    CARDS,
    Action,
    BigGin,
    Discard,
    Gin,
    HandResult,
    Knock,
    KnockScore,
    PlayerView,
    RulesConfig,
)
from gin_arena_core.rules.melds import best_melds_of_mask
from gin_arena_sdk import Bot, MatchStarted

from sample_bots.greedy import card_key, hand_mask

_SUIT = 0x1FFF
_FULL = (1 << 52) - 1
VALUE = tuple(min(i % 13 + 1, 10) for i in range(52))


def _every_suit(bits: int) -> int:
    return bits | bits << 13 | bits << 26 | bits << 39


_RANK_LE_11 = _every_suit(0x0FFF)  # ranks A..Q: a card one rank up exists
_RANK_LE_10 = _every_suit(0x07FF)  # ranks A..J: two ranks up exist
_RANK_GE_1 = _every_suit(0x1FFE)  # ranks 2..K: one rank down exists


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _run_table() -> tuple[list[int], list[int]]:
    """Per 13-bit suit pattern: the least deadwood using runs of that suit only, and the
    least after removing one of its cards (999 for an empty suit)."""
    vals = [min(r + 1, 10) for r in range(13)]
    table = [0] * 8192
    for bits in range(8192):
        dp = [0] * 14
        for i in range(12, -1, -1):
            if not bits >> i & 1:
                dp[i] = dp[i + 1]
                continue
            best = dp[i + 1] + vals[i]
            j = i
            while j <= 12 and bits >> j & 1:
                if j - i >= 2 and dp[j + 1] < best:
                    best = dp[j + 1]
                j += 1
            dp[i] = best
        table[bits] = dp[0]
    less = [min((table[b ^ (1 << r)] for r in range(13) if b >> r & 1), default=999)
            for b in range(8192)]
    return table, less


_RUN_DW, _RUN_DW_LESS = _run_table()


def _set_choices(h: int) -> list[int]:
    """The cards of every choice of sets in ``h`` (0: no set), as union masks."""
    a, b, c, d = h & _SUIT, (h >> 13) & _SUIT, (h >> 26) & _SUIT, (h >> 39) & _SUIT
    three = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
    choices = [0]
    while three:
        low = three & -three
        three ^= low
        r = low.bit_length() - 1
        full = _every_suit(low) & h
        options = [full]
        if full.bit_count() == 4:
            options += [full & ~(1 << (r + 13 * s)) for s in range(4)]
        choices = [u | o for u in choices for o in (0, *options)]
    return choices


def least_deadwood(h: int, runs_only: bool = False) -> int:
    """Least deadwood of exactly the cards of ``h`` (as ``min_deadwood``, from tables)."""
    t = _RUN_DW
    s0, s1, s2, s3 = h & _SUIT, (h >> 13) & _SUIT, (h >> 26) & _SUIT, (h >> 39) & _SUIT
    if runs_only or not (s0 & s1 & (s2 | s3) | (s0 | s1) & s2 & s3):
        return t[s0] + t[s1] + t[s2] + t[s3]
    best = 999
    for used in _set_choices(h):
        m = h & ~used
        v = t[m & _SUIT] + t[(m >> 13) & _SUIT] + t[(m >> 26) & _SUIT] + t[(m >> 39) & _SUIT]
        if v < best:
            best = v
    return best


def least_after_discard(h: int, runs_only: bool = False) -> int:
    """Least deadwood of ``h`` minus its best card to discard."""
    t, t1 = _RUN_DW, _RUN_DW_LESS
    s0, s1, s2, s3 = h & _SUIT, (h >> 13) & _SUIT, (h >> 26) & _SUIT, (h >> 39) & _SUIT
    if runs_only or not (s0 & s1 & (s2 | s3) | (s0 | s1) & s2 & s3):
        a, b, c, d = t[s0], t[s1], t[s2], t[s3]
        return a + b + c + d - max(a - t1[s0], b - t1[s1], c - t1[s2], d - t1[s3])
    best = 999
    for used in _set_choices(h):
        m = h & ~used
        s0, s1, s2, s3 = m & _SUIT, (m >> 13) & _SUIT, (m >> 26) & _SUIT, (m >> 39) & _SUIT
        a, b, c, d = t[s0], t[s1], t[s2], t[s3]
        v = a + b + c + d - max(a - t1[s0], b - t1[s1], c - t1[s2], d - t1[s3])
        if v < best:
            best = v
    return best


def _partner_pairs(runs_only: bool) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per card: the pairs of other cards that make a three-card meld with it."""
    table = []
    for c in range(52):
        r, s = c % 13, c // 13
        pairs: list[tuple[int, int]] = []
        for lo in (r - 2, r - 1, r):
            if lo >= 0 and lo + 2 <= 12:
                others = [13 * s + x for x in (lo, lo + 1, lo + 2) if x != r]
                pairs.append((others[0], others[1]))
        if not runs_only:
            mates = [13 * t + r for t in range(4) if t != s]
            pairs += [(mates[0], mates[1]), (mates[0], mates[2]), (mates[1], mates[2])]
        table.append(tuple(pairs))
    return tuple(table)


def _related(runs_only: bool) -> tuple[int, ...]:
    """Per card: the cards that share a three-card meld with it."""
    out = []
    for pairs in _partner_pairs(runs_only):
        m = 0
        for a, b in pairs:
            m |= 1 << a | 1 << b
        out.append(m)
    return tuple(out)


_PAIRS = {ro: _partner_pairs(ro) for ro in (False, True)}
_RELATED = {ro: _related(ro) for ro in (False, True)}


def completions(h: int, runs_only: bool) -> int:
    """Cards not in ``h`` that make a meld with two or more cards of ``h``."""
    two = h & (h >> 1) & _RANK_LE_11  # c and c+1 held
    gap = h & (h >> 2) & _RANK_LE_10  # c and c+2 held
    out = ((two & _RANK_GE_1) >> 1) | ((two & _RANK_LE_10) << 2) | (gap << 1)
    if not runs_only:
        a, b, c, d = h & _SUIT, (h >> 13) & _SUIT, (h >> 26) & _SUIT, (h >> 39) & _SUIT
        pair = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
        out |= _every_suit(pair)
    return out & ~h & _FULL


class _Memory:
    """What StrongBot has seen of one hand."""

    __slots__ = ("hand_number", "opp_discarded", "opp_draws", "opp_passed", "opp_took",
                 "pile", "seen")

    def __init__(self, hand_number: int) -> None:
        self.hand_number = hand_number
        self.seen = 0  # history events processed
        self.pile: list[int] = []
        self.opp_took = 0
        self.opp_discarded = 0
        self.opp_passed = 0
        self.opp_draws = 0


class StrongBot(Bot):
    """Card counting, opponent reading, a potential-weighted hand value."""

    name = "strong"

    # Tuning, in deadwood points; tuned against GreedyBot with bench/bots_eval.py.
    potential_weight = 4.0  # how many draws' worth of potential a hand is credited with...
    potential_fade = 12.0  # ...fading to 30% over this many opponent draws (fewer remain)
    replace_weight = 0.5  # ...counting a lower card replacing a deadwood card at this much
    knock_weight = 15.0  # value of being able to knock after the next draw (against an
    # opponent count of 20; it scales with the count we expect the opponent to have)
    gin_weight = 15.0  # value of a gin after the next draw
    late_weight = 0.08  # deadwood counts this much more per opponent draw (its knock nears)
    danger_cost = 4.0  # cost of a discard the opponent surely melds...
    danger_growth = 0.2  # ...growing by this fraction per opponent draw
    took_weight = 2.0  # an unseen card that melds with one the opponent took is likelier held
    shunned_weight = 0.6  # ...and one that melds with a card it threw or passed on, less
    layoff_weight = 1.0  # knock with the spread that leaves the least to lay off
    take_margin = 2.0  # the top discard must beat a stock draw by this much
    prune = 12  # discards leaving more than best + prune deadwood are not searched
    hold_max = 4  # never play on with a knock of more than this
    opp_start = 45.0  # the opponent's count at the deal...
    opp_drop = 5.0  # ...falls this much per draw...
    opp_floor = 18.0  # ...to about this
    opp_hazard = 0.022  # chance per draw (times draws so far) that the opponent knocks
    undercut_risk = 0.001  # chance of being undercut, per point of our count per draw

    def __init__(self) -> None:
        self.rules = RulesConfig()
        self.runs_only = False
        self._mem = _Memory(-1)
        self._unseen = 0
        self._p_stock: dict[int, float] = {}
        self._p_opp: dict[int, float] = {}
        self._stock_n = 1.0
        self._dw_factor = 1.0
        self._danger_w = self.danger_cost
        self._knock_w = self.knock_weight
        self._potential_w = self.potential_weight
        self._below: list[float] = []
        self._upto: list[float] = []
        self._limit = 10
        self._eval_cache: dict[int, tuple[float, int, float, float]] = {}

    def on_match_start(self, info: MatchStarted) -> None:
        self.rules = info.rules
        self.runs_only = self.rules.runs_only

    def on_hand_end(self, result: HandResult, scores: tuple[int, int]) -> None:
        self._mem = _Memory(-1)

    # ---------------------------------------------------------------- memory

    def _update(self, view: PlayerView) -> None:
        mem = self._mem
        history = view.history
        if mem.hand_number != view.hand_number or len(history) < mem.seen:
            mem = self._mem = _Memory(view.hand_number)
            if view.upcard is not None:
                mem.pile.append(view.upcard)
        me = view.seat
        for i in range(mem.seen, len(history)):
            ev = history[i]
            kind = ev.kind
            theirs = ev.seat != me
            if kind == "discard" and ev.card is not None:
                mem.pile.append(ev.card)
                if theirs:
                    mem.opp_discarded |= 1 << ev.card
            elif kind in ("take_upcard", "draw_discard"):
                if mem.pile:
                    mem.pile.pop()
                if theirs and ev.card is not None:
                    mem.opp_took |= 1 << ev.card
                    mem.opp_draws += 1
            elif kind in ("draw_stock", "pass") and theirs:
                if mem.pile:
                    mem.opp_passed |= 1 << mem.pile[-1]
                if kind == "draw_stock":
                    mem.opp_draws += 1
        mem.seen = len(history)
        self._estimate(view)

    def _estimate(self, view: PlayerView) -> None:
        """Unseen cards and, for each, the chance it is in the stock rather than held."""
        mem = self._mem
        own = hand_mask(view)
        opp_known = 0
        for c in view.opponent_known:
            opp_known |= 1 << c
        pile = 0
        for card in mem.pile:
            pile |= 1 << card
        unseen = _FULL & ~own & ~pile & ~opp_known
        self._unseen = unseen
        cards = _bits(unseen)
        seat = view.seat if view.seat is not None else 0
        opp_unknown = max(0, view.hand_sizes[1 - seat] - len(view.opponent_known))
        related = _RELATED[self.runs_only]
        took, shunned = mem.opp_took, mem.opp_discarded | mem.opp_passed
        weights = []
        for x in cards:
            w = 1.0
            rel = related[x]
            if rel & took:
                w *= self.took_weight
            if rel & shunned:
                w *= self.shunned_weight
            weights.append(w)
        total = sum(weights) or 1.0
        scale = opp_unknown / total
        p_opp = {x: min(0.95, w * scale) for x, w in zip(cards, weights, strict=True)}
        for c in view.opponent_known:
            p_opp[c] = 1.0
        self._p_opp = p_opp
        p_stock = {x: 1.0 - p_opp[x] for x in cards}
        self._p_stock = p_stock
        self._stock_n = max(1.0, sum(p_stock.values()))
        # below[v]: sum over unseen x of P(stock) * max(0, v - value(x)), v = 0..10
        counts = [0.0] * 11
        for x in cards:
            counts[VALUE[x]] += p_stock[x]
        self._below = [sum(counts[u] * (v - u) for u in range(1, v)) for v in range(11)]
        # upto[v]: sum over unseen x of P(stock) for value(x) <= v, v = 0..10
        self._upto = [sum(counts[: v + 1]) for v in range(11)]
        self._limit = view.knock_limit
        self._eval_cache = {}
        t = mem.opp_draws
        self._dw_factor = 1.0 + self.late_weight * t
        self._danger_w = self.danger_cost * (1.0 + self.danger_growth * t)
        self._knock_w = self.knock_weight * max(0.5, self._opp_deadwood(t) / 20.0)
        self._potential_w = self.potential_weight * max(0.3, 1.0 - t / self.potential_fade)

    # ---------------------------------------------------------------- evaluation

    def _eval(self, h: int) -> tuple[float, int, float, float]:
        """(value, deadwood, chance the next stock card is gin, expected drop from one draw)
        of a ten-card hand; lower value is better."""
        hit = self._eval_cache.get(h)
        if hit is not None:
            return hit
        ro = self.runs_only
        dw = least_deadwood(h, ro)
        spare = dw - least_after_discard(h, ro)  # the most one discard takes off
        limit = self._limit
        rw = self.replace_weight
        gain = self._below[spare] * rw
        # A stock card that makes no meld just replaces the card worth ``spare``; it lets us
        # knock if it is low enough. Cards that meld are searched exactly below.
        if dw <= limit:
            knock = self._stock_n
        else:
            need = limit - dw + spare
            knock = self._upto[need] if need >= 0 else 0.0
        gin = 0.0
        p_stock = self._p_stock
        for x in _bits(completions(h, ro) & self._unseen):
            p = p_stock[x]
            v = VALUE[x]
            if v < spare:
                gain -= p * (spare - v) * rw
                if dw > limit and v <= limit - dw + spare:
                    knock -= p
            after = least_after_discard(h | 1 << x, ro)
            if after == 0:
                gin += p
            if after < dw:
                gain += p * (dw - after)
                if dw > limit and after <= limit:
                    knock += p
        n = self._stock_n
        one = gain / n
        value = (dw * self._dw_factor
                 - self._potential_w * one - self._knock_w * knock / n
                 - self.gin_weight * gin / n)
        result = (value, dw, gin / n, one)
        self._eval_cache[h] = result
        return result

    def _danger(self, card: int) -> float:
        """Chance the opponent holds two cards making a meld with ``card``."""
        p = self._p_opp
        safe = 1.0
        for a, b in _PAIRS[self.runs_only][card]:
            pa = p.get(a)
            if pa is None:
                continue
            pb = p.get(b)
            if pb is None:
                continue
            safe *= 1.0 - pa * pb
        return 1.0 - safe

    def _choose_discard(self, h: int, allowed: list[int]) -> tuple[int, float]:
        """The best card to throw from eleven cards ``h`` and the value of what is left."""
        ro = self.runs_only
        dwa = {c: least_deadwood(h & ~(1 << c), ro) for c in allowed}
        floor = min(dwa.values())
        best_card, best_score = allowed[0], float("inf")
        for c in allowed:
            if dwa[c] > floor + self.prune:
                continue
            score = self._eval(h & ~(1 << c))[0] + self._danger_w * self._danger(c)
            if score < best_score or (score == best_score and card_key(c) > card_key(best_card)):
                best_card, best_score = c, score
        return best_card, best_score

    # ---------------------------------------------------------------- drawing

    def _take_value(self, view: PlayerView) -> bool:
        card = view.discard_top
        if card is None:
            return False
        self._update(view)
        h = hand_mask(view)
        if len(view.hand) != 10:
            return False
        h2 = h | 1 << card
        allowed = _bits(h)  # the taken card may not go straight back
        _, take = self._choose_discard(h2, allowed)
        value, _, _, one = self._eval(h)
        return take + self.take_margin < value - one

    def take_upcard(self, view: PlayerView) -> bool:
        return self._take_value(view)

    def draw_discard(self, view: PlayerView) -> bool:
        return self._take_value(view)

    # ---------------------------------------------------------------- discarding

    def discard(self, view: PlayerView) -> Action:
        self._update(view)
        legal = view.legal
        gins: list[Gin] = []
        knocks: list[Knock] = []
        allowed: list[int] = []
        for a in legal:
            if isinstance(a, BigGin):
                return a
            if isinstance(a, Gin):
                gins.append(a)
            elif isinstance(a, Knock):
                knocks.append(a)
            elif isinstance(a, Discard):
                allowed.append(a.card)
        if gins:
            return max(gins, key=lambda a: card_key(a.card))
        h = hand_mask(view)
        if knocks:
            ro = self.runs_only
            dwk = {a.card: least_deadwood(h & ~(1 << a.card), ro) for a in knocks}
            cost = {c: d + self._layoffs(h & ~(1 << c)) for c, d in dwk.items()}
            knock = min(knocks, key=lambda a: (cost[a.card], -VALUE[a.card]))
            if self._should_knock(view, h & ~(1 << knock.card), dwk[knock.card]):
                return knock
        card, _ = self._choose_discard(h, allowed)
        return Discard(CARDS[card])

    def _layoffs(self, rest: int) -> float:
        """Expected count the opponent lays off on the melds we would spread from ``rest``."""
        if not self.layoff_weight:
            return 0.0
        p = self._p_opp
        total = 0.0
        for m in best_melds_of_mask(rest, self.runs_only):
            low = (m & -m).bit_length() - 1
            if m >> (low + 1) & 1:  # a run: one card past either end
                high = m.bit_length() - 1
                ends = [c for c in (low - 1, high + 1) if c // 13 == low // 13 and c >= 0]
            elif m.bit_count() == 3:  # a set of three: the fourth card
                ends = [c for c in range(low % 13, 52, 13) if not m >> c & 1]
            else:
                ends = []
            total += sum(p.get(c, 0.0) * VALUE[c] for c in ends)
        return self.layoff_weight * total

    def _should_knock(self, view: PlayerView, rest: int, deadwood: int) -> bool:
        """Knock now, or play on for gin? Compares rough expected points of the two."""
        if view.stock_count <= 4 or deadwood > self.hold_max:
            return True  # no draw of ours left after this one, or too much to sit on
        t = self._mem.opp_draws
        gin = self._eval(rest)[2]  # chance the next stock card is gin
        if gin == 0.0:
            return True
        rules = self.rules
        d = deadwood
        knock_now = self._knock_points(d, t)
        knock_next = self._knock_points(d, t + 1)
        hazard = min(0.4, self.opp_hazard * (t + 1))
        # the opponent knocks (count 1..limit, evenly) while we sit at d: undercut or lose
        limit = max(1, self._limit)
        u = rules.undercut_bonus
        caught = sum(u + od - d if od >= d else od - d for od in range(1, limit + 1)) / limit
        hold = (gin * (rules.gin_bonus + self._opp_deadwood(t))
                + (1.0 - gin) * (hazard * caught + (1.0 - hazard) * knock_next))
        return knock_now >= hold

    def _opp_deadwood(self, t: int) -> float:
        """The opponent's likely count (after layoffs) once it has drawn ``t`` times."""
        return max(self.opp_floor, self.opp_start - self.opp_drop * t)

    def _knock_points(self, d: int, t: int) -> float:
        """Rough expected points of knocking with ``d`` after ``t`` opponent draws."""
        opp = self._opp_deadwood(t)
        rules = self.rules
        win = opp if rules.knock_score is KnockScore.DEFENDER_DEADWOOD else opp - d
        risk = min(0.5, self.undercut_risk * d * (t + 1))
        return (1.0 - risk) * win - risk * rules.undercut_bonus

    def knock_at_wall(self, view: PlayerView) -> Action:
        best: Action = view.legal[0]
        best_key = (9, 0)
        h = hand_mask(view)
        for a in view.legal:
            if isinstance(a, BigGin):
                return a
            if isinstance(a, Gin):
                key = (0, 0)
            elif isinstance(a, Knock):
                key = (1, least_deadwood(h & ~(1 << a.card), self.runs_only))
            else:
                continue
            if key < best_key:
                best, best_key = a, key
        return best


if __name__ == "__main__":
    from sample_bots import main

    main(StrongBot())
