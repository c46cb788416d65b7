"""Property tests (Hypothesis) for the rules engine.

Each property is checked against an independent reference written here rather than the
engine's own helpers: deadwood and layoffs by brute force, card accounting by counting,
redaction by replaying the same actions on a deck whose hidden cards are shuffled.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from functools import cache
from itertools import combinations

import pytest
from gin_arena_core.rules import (
    CARDS,
    PHASE_ACTIONS,
    PRESETS,
    Action,
    BigGin,
    Card,
    Code,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    GameState,
    Gin,
    HandState,
    IllegalActionError,
    Knock,
    KnockScore,
    MalformedError,
    Meld,
    NextDealer,
    Pass,
    Phase,
    PlayerView,
    PublicEvent,
    RuleError,
    RulesConfig,
    Shutout,
    TakeUpcard,
    apply,
    apply_action,
    best_melds,
    deal,
    deal_hand,
    game_outcome,
    is_legal,
    layoff_cards,
    legal_actions,
    min_deadwood,
    new_game,
    observe,
    parse_action,
    parse_cards,
    preset,
)
from gin_arena_core.rules.melds import best_defence, deadwood_after_discard
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

PRESET_NAMES = sorted(PRESETS)
HAND_CAP = 400  # rules.hand.MAX_ACTIONS_PER_HAND, restated: the cap is a documented rule


def check_capped_length(log: tuple[tuple[int, Action], ...]) -> None:
    """A capped hand ends at the first turn boundary at or past the cap: its last action is a
    discard, and the boundary before it (two actions earlier) was still under the cap."""
    assert HAND_CAP <= len(log) <= HAND_CAP + 1, len(log)
    assert isinstance(log[-1][1], Discard)
SEEDS = st.integers(0, 2**32 - 1)

# ============================================================== independent references


def value(card: int) -> int:
    """Deadwood value: ace 1, pips at face, T J Q K 10."""
    return min(card % 13 + 1, 10)


def total(cards: Iterable[int]) -> int:
    return sum(value(c) for c in cards)


def kind_of(cards: Iterable[int], runs_only: bool = False) -> str | None:
    """'set', 'run' or None, straight from the definition (ace low only)."""
    cs = sorted(cards)
    if len(cs) < 3:
        return None
    suits = {c // 13 for c in cs}
    ranks = [c % 13 for c in cs]
    if len(suits) == 1 and ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return "run"
    if not runs_only and len(cs) <= 4 and len(set(ranks)) == 1:
        return "set"
    return None


def all_melds(cards: Iterable[int], runs_only: bool) -> list[frozenset[int]]:
    """Every subset of ``cards`` that is a meld (sub-melds included)."""
    cs = sorted(cards)
    return [
        frozenset(sub)
        for k in range(3, len(cs) + 1)
        for sub in combinations(cs, k)
        if kind_of(sub, runs_only)
    ]


def brute_min_deadwood(cards: Iterable[int], runs_only: bool) -> int:
    """Least deadwood over every set of disjoint melds: decide the lowest card, recurse."""
    melds = all_melds(cards, runs_only)

    @cache
    def best(left: frozenset[int]) -> int:
        if not left:
            return 0
        c = min(left)
        result = value(c) + best(left - {c})
        for m in melds:
            if c in m and m <= left:
                result = min(result, best(left - m))
        return result

    return best(frozenset(cards))


def arrangements(cards: Iterable[int], runs_only: bool) -> Iterator[frozenset[int]]:
    """The union of every collection of disjoint melds of ``cards`` (empty one included)."""
    melds = all_melds(cards, runs_only)
    seen: set[frozenset[int]] = set()

    def walk(start: int, used: frozenset[int]) -> Iterator[frozenset[int]]:
        if used not in seen:
            seen.add(used)
            yield used
        for j in range(start, len(melds)):
            if not melds[j] & used:
                yield from walk(j + 1, used | melds[j])

    yield from walk(0, frozenset())


def extends(meld: frozenset[int], card: int) -> bool:
    """Can ``card`` be laid off on the meld as it stands (4th of a set, either end of a run)?"""
    if card in meld:
        return False
    ranks = {c % 13 for c in meld}
    if len(ranks) == 1:  # a set
        return len(meld) == 3 and card % 13 in ranks
    suit = next(iter(meld)) // 13
    return card // 13 == suit and card % 13 in (min(ranks) - 1, max(ranks) + 1)


def brute_max_layoff(free: Iterable[int], targets: list[frozenset[int]]) -> int:
    """Most value that can be laid off, over every order and choice of target meld."""

    @cache
    def best(free_: frozenset[int], melds: tuple[frozenset[int], ...]) -> int:
        out = 0
        for c in free_:
            for i, m in enumerate(melds):
                if extends(m, c):
                    grown = (*melds[:i], m | {c}, *melds[i + 1:])
                    out = max(out, value(c) + best(free_ - {c}, grown))
        return out

    return best(frozenset(free), tuple(targets))


def brute_defence(hand: Iterable[int], targets: list[frozenset[int]], runs_only: bool,
                  may_lay_off: bool) -> int:
    """The defender's least deadwood: own melds and layoffs chosen together."""
    cards = frozenset(hand)
    best = total(cards)
    for used in arrangements(cards, runs_only):
        rest = cards - used
        laid = brute_max_layoff(rest, targets) if may_lay_off and targets else 0
        best = min(best, total(rest) - laid)
    return best


def sequence_bonus(melds: Iterable[Meld]) -> int:
    """Seed 003: +1 a card of a run of 6+, +1 a face card (J Q K) in a run."""
    bonus = 0
    for m in melds:
        ranks = [c % 13 for c in m.cards]
        if kind_of(m.cards) == "run":
            bonus += len(ranks) if len(ranks) >= 6 else 0
            bonus += sum(1 for r in ranks if r >= 10)
    return bonus


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


# ============================================================== strategies


@st.composite
def card_sets(draw: st.DrawFn, min_size: int = 3, max_size: int = 11) -> list[Card]:
    """Distinct cards; half the time from a narrow window of ranks and suits so melds,
    overlapping sets and runs, and long runs are common."""
    n = draw(st.integers(min_size, max_size))
    pool: list[int] = list(range(52))
    if draw(st.booleans()):
        lo = draw(st.integers(0, 9))
        width = draw(st.integers(3, 7))
        suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
        window = [13 * s + r for s in suits for r in range(lo, min(13, lo + width))]
        if len(window) >= n:
            pool = window
    picked = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n, unique=True))
    return [CARDS[c] for c in picked]


@dataclass
class Policy:
    """Chooses among the listed legal actions only.

    Each turn, with chance ``greed``, it plays well: takes the discard when that lowers its
    deadwood, goes gin with chance ``gin`` (big gin when it can), knocks with chance
    ``go_out`` (low values play on for gin), discards what leaves the least deadwood, takes
    the last discard at the wall when it may. Otherwise it picks uniformly, drawing from
    the stock with chance ``stock``. ``swap``: always take the discard and throw another
    card, never go out (the pathological hand the turn cap is for).
    """

    rnd: random.Random
    greed: float
    go_out: float
    stock: float
    gin: float = 1.0
    swap: bool = False

    def choose(self, state: HandState, acts: list[Action]) -> Action:
        r = self.rnd
        if len(acts) == 1:
            return acts[0]
        if self.swap:
            if DrawDiscard() in acts:
                return DrawDiscard()
            return r.choice([a for a in acts if isinstance(a, Discard | Pass)])
        greedy = r.random() < self.greed
        if state.phase is Phase.DRAW:
            if greedy and self._discard_helps(state):
                return DrawDiscard()
            return DrawStock() if r.random() < self.stock else DrawDiscard()
        if greedy:
            gins = [a for a in acts if isinstance(a, Gin | BigGin)]
            if gins and r.random() < self.gin:
                return BigGin() if BigGin() in gins else r.choice(gins)
            knocks = [a for a in acts if isinstance(a, Knock)]
            if knocks and r.random() < self.go_out:
                return r.choice(knocks)
            discards = [a for a in acts if isinstance(a, Discard)]
            if discards:
                after = deadwood_after_discard(state.hands[state.turn], state.config.runs_only)
                return min(discards, key=lambda a: (after[a.card], r.random()))
            if DrawDiscard() in acts:
                return DrawDiscard()
        return r.choice(acts)

    @staticmethod
    def _discard_helps(state: HandState) -> bool:
        mask = state.hands[state.turn]
        top = state.discard[-1]
        now = min_deadwood(state.hand(state.turn), runs_only=state.config.runs_only)
        after = deadwood_after_discard(mask | 1 << top, state.config.runs_only)
        return min(dw for c, dw in after.items() if c != top) < now


@st.composite
def policies(draw: st.DrawFn, stock: tuple[float, ...] = (0.02, 0.5, 0.9)) -> Policy:
    rnd = random.Random(draw(SEEDS))
    if draw(st.integers(0, 3)) == 0:
        # plays well but never goes out: hands reach the wall with low counts, so the
        # last discard is often taken there (wall_take_discard rules)
        return Policy(rnd, greed=1.0, go_out=0.0, stock=0.9, gin=0.0)
    return Policy(
        rnd,
        greed=draw(st.sampled_from([0.0, 0.5, 0.9, 1.0])),
        go_out=draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])),
        stock=draw(st.sampled_from(stock)),
        gin=draw(st.sampled_from([0.3, 1.0])),
    )


# Hands that reach the turn cap are 400 actions long; the per-step checks are quadratic in
# the hand's length, so the whole-game test keeps to ordinary hands and the cap has its own.
ORDINARY = policies(stock=(0.3, 0.6, 0.9))


def shuffled_deck(rnd: random.Random) -> list[Card]:
    deck = list(CARDS)
    rnd.shuffle(deck)
    return deck


def knock_card_for(cfg: RulesConfig, rnd: random.Random) -> Card | None:
    return rnd.choice(CARDS) if cfg.knock_deck else None


def play_hand(cfg: RulesConfig, policy: Policy, dealer: int | None = None
              ) -> tuple[list[HandState], list[tuple[int, Action]]]:
    """One hand to its end: every state and every (seat, action)."""
    rnd = policy.rnd
    state = deal(cfg, shuffled_deck(rnd), rnd.randrange(2) if dealer is None else dealer,
                 knock_card_for(cfg, rnd))
    states = [state]
    moves: list[tuple[int, Action]] = []
    while not state.is_over:
        seat = state.turn
        action = policy.choose(state, legal_actions(state, seat))
        state = apply(state, seat, action)
        states.append(state)
        moves.append((seat, action))
    return states, moves


# ============================================================== checks used by several tests


def check_accounting(state: HandState) -> None:
    """Every card is in exactly one place: a hand, the pile, the stock, the knock discard."""
    places: list[int] = cards_of(state.hands[0]) + cards_of(state.hands[1])
    places += list(state.discard) + list(state.stock())
    if state.knock is not None and state.knock.discard is not None:
        places.append(state.knock.discard)
    assert sorted(places) == list(range(52)), state
    assert state.stock_count == 52 - state.stock_pos >= 2


def view_cards(view: PlayerView) -> set[int]:
    """Every card named anywhere in a view."""
    out: set[int] = set(view.hand) | set(view.discard_pile) | set(view.opponent_known)
    out |= set(view.known[0]) | set(view.known[1])
    out |= {e.card for e in view.history if e.card is not None}
    if view.upcard is not None:
        out.add(view.upcard)
    if view.taken is not None:
        out.add(view.taken)
    if view.knock is not None:
        out |= {c for m in view.knock.melds for c in m.cards} | set(view.knock.deadwood_cards)
        if view.knock.discard is not None:
            out.add(view.knock.discard)
    if view.result is not None:
        r = view.result
        out |= {c for seat in (0, 1) for m in r.melds[seat] for c in m.cards}
        out |= {c for seat in (0, 1) for c in r.deadwood_cards[seat]}
        out |= {c for c, _ in r.layoffs}
    for a in view.legal:
        if isinstance(a, Discard | Knock | Gin):
            out.add(a.card)
    return out


def replay_pile(state: HandState
                ) -> tuple[tuple[tuple[Card, ...], tuple[Card, ...]], list[Card | None]]:
    """Rebuilt from the action log by replaying the pile, independently of the engine's own
    bookkeeping: per seat, the cards it was seen to take from the pile and still holds; and
    per action, the card everyone saw move face up (None for stock draws, knocks, passes)."""
    pile: list[Card] = [] if state.upcard is None else [state.upcard]
    known: list[set[Card]] = [set(), set()]
    shown: list[Card | None] = []
    for seat, action in state.log:
        card: Card | None = None
        if isinstance(action, TakeUpcard | DrawDiscard):
            card = pile.pop()
            known[seat].add(card)
        elif isinstance(action, Discard):
            card = action.card
            pile.append(card)
            known[seat].discard(card)
        elif isinstance(action, Knock | Gin):
            known[seat].discard(action.card)
        shown.append(card)
    assert tuple(pile) == state.discard
    return (tuple(sorted(known[0])), tuple(sorted(known[1]))), shown


def check_views(state: HandState) -> None:
    """Redaction at one position, for both seats and a spectator."""
    knocker_shown: set[int] = set()
    if state.knock is not None:
        knocker_shown = ({c for m in state.knock.melds for c in m.cards}
                         | set(state.knock.deadwood_cards))
    stock = set(state.stock())
    known, shown = replay_pile(state)
    for seat in (0, 1, None):
        view = observe(state, seat)
        seen = view_cards(view)
        assert not seen & stock, f"seat {seat} sees stock cards {seen & stock}"
        if view.knock is not None:
            assert view.knock.discard is None, "the knock discard is face down"
        pile = state.discard if state.config.discard_pile_visible else state.discard[-1:]
        assert view.discard_pile == pile
        assert view.hand_sizes == (state.hands[0].bit_count(), state.hands[1].bit_count())
        assert view.known == known
        assert [e.card for e in view.history] == shown
        assert [e.seat for e in view.history] == [seat_ for seat_, _ in state.log]
        if seat is None:
            assert view.hand == () and view.legal == () and view.taken is None
            assert view.opponent_known == ()
            hidden = set(cards_of(state.hands[0] | state.hands[1]))
            allowed = set(known[0]) | set(known[1]) | knocker_shown
        else:
            assert view.hand == tuple(sorted(state.hand(seat)))
            assert view.legal == tuple(legal_actions(state, seat))
            assert view.opponent_known == known[1 - seat]
            hidden = set(cards_of(state.hands[1 - seat]))
            allowed = set(known[1 - seat])
            if state.knock is not None and state.knock.knocker != seat:
                allowed |= knocker_shown
        if state.result is None:
            leaked = (seen & hidden) - allowed
            assert not leaked, f"view of seat {seat} shows hidden cards {leaked}"


def check_result(state: HandState) -> None:
    """A finished hand's result is consistent with the spreads and the scoring options."""
    r = state.result
    assert r is not None and state.phase is Phase.HAND_OVER
    cfg = state.config
    assert legal_actions(state, 0) == [] and legal_actions(state, 1) == []
    if r.is_void:
        assert r.kind in ("wall", "cap") and r.points == 0 and state.knock is None
        if r.kind == "cap":
            check_capped_length(state.log)
        return
    knock = state.knock
    assert knock is not None and r.knocker == knock.knocker
    k = knock.knocker
    d = 1 - k
    # each seat's spread accounts for exactly its cards
    laid = {c for c, _ in r.layoffs}
    for seat in (0, 1):
        melded = [c for m in r.melds[seat] for c in m.cards]
        for m in r.melds[seat]:
            assert kind_of(m.cards, cfg.runs_only), m
        spread = melded + list(r.deadwood_cards[seat]) + (list(laid) if seat == d else [])
        assert sorted(spread) == cards_of(state.hands[seat])
        assert r.deadwood[seat] == total(r.deadwood_cards[seat])
    assert r.deadwood[k] <= state.knock_limit
    assert (knock.kind in ("gin", "big_gin")) == (r.deadwood[k] == 0)
    if knock.kind != "knock":
        assert not r.layoffs
    # layoffs replay one by one onto the knocker's melds
    targets = [frozenset(m.cards) for m in knock.melds]
    for c, i in r.layoffs:
        assert extends(targets[i], c), (c, targets[i])
        targets[i] = targets[i] | {c}
    mult = r.multiplier
    assert mult == (2 if cfg.oklahoma and cfg.oklahoma_spade_doubles and state.upcard is not None
                    and state.upcard.suit == 3 else 1)
    assert r.winner is not None
    bonus = sequence_bonus(r.melds[r.winner]) if cfg.sequence_bonuses else 0
    assert r.bonus == bonus * mult
    kd, dd = r.deadwood[k], r.deadwood[d]
    if knock.kind == "gin":
        assert (r.kind, r.winner, r.points) == ("gin", k, (cfg.gin_bonus + dd + bonus) * mult)
    elif knock.kind == "big_gin":
        assert (r.kind, r.winner) == ("big_gin", k)
        assert r.points == (cfg.big_gin_bonus + dd + bonus) * mult
    elif kd < dd:
        base = dd if cfg.knock_score is KnockScore.DEFENDER_DEADWOOD else dd - kd
        assert (r.kind, r.winner, r.points) == ("knock", k, (base + bonus) * mult)
    else:
        assert (r.kind, r.winner) == ("undercut", d)
        assert r.points == (kd - dd + cfg.undercut_bonus + bonus) * mult


# ============================================================== melds and deadwood


@settings(max_examples=200, deadline=None)
@given(cards=card_sets(), runs_only=st.booleans())
def test_min_deadwood_equals_brute_force_and_best_melds_reach_it(
    cards: list[Card], runs_only: bool
) -> None:
    expected = brute_min_deadwood(cards, runs_only)
    assert min_deadwood(cards, runs_only=runs_only) == expected
    # the text form gives the same answer
    assert min_deadwood(" ".join(str(c) for c in cards), runs_only=runs_only) == expected
    melds = best_melds(cards, runs_only=runs_only)
    used: set[int] = set()
    for m in melds:
        assert isinstance(m, Meld)
        kind = kind_of(m.cards, runs_only)
        assert kind is not None, f"{m} is not a meld"
        assert m.is_run == (kind == "run")
        assert list(m.cards) == sorted(m.cards)
        assert not used & set(m.cards), "melds overlap"
        used |= set(m.cards)
        assert Meld.of(m.cards, runs_only=runs_only) == m
    assert used <= set(cards)
    assert total(set(cards) - used) == expected


@settings(max_examples=150, deadline=None)
@given(cards=card_sets(11, 11), runs_only=st.booleans())
def test_deadwood_after_discard_equals_min_deadwood_of_the_rest(
    cards: list[Card], runs_only: bool
) -> None:
    after = deadwood_after_discard(mask_of(cards), runs_only)
    assert set(after) == set(cards)
    for c in cards:
        rest = [x for x in cards if x != c]
        assert after[c] == min_deadwood(rest, runs_only=runs_only), c
    # and one of them against the brute force directly
    c = cards[0]
    assert after[c] == brute_min_deadwood([x for x in cards if x != c], runs_only)


@st.composite
def knocker_melds(draw: st.DrawFn, runs_only: bool) -> list[frozenset[int]]:
    """One to three disjoint melds, as a knocker might spread them."""
    melds: list[frozenset[int]] = []
    used: set[int] = set()
    for _ in range(draw(st.integers(1, 3))):
        if runs_only or draw(st.booleans()):
            suit = draw(st.integers(0, 3))
            length = draw(st.integers(3, 5))
            start = draw(st.integers(0, 13 - length))
            meld = frozenset(13 * suit + r for r in range(start, start + length))
        else:
            rank = draw(st.integers(0, 12))
            suits = draw(st.lists(st.integers(0, 3), min_size=3, max_size=4, unique=True))
            meld = frozenset(13 * s + rank for s in suits)
        if not meld & used:
            melds.append(meld)
            used |= meld
    return melds


@settings(max_examples=150, deadline=None)
@given(data=st.data(), runs_only=st.booleans(), gin=st.booleans())
def test_best_defence_and_layoff_cards_equal_brute_force(
    data: st.DataObject, runs_only: bool, gin: bool
) -> None:
    targets = data.draw(knocker_melds(runs_only))
    taken = set().union(*targets)
    # the defender's cards come from near the knocker's melds, so layoffs and chains happen
    near = sorted({c + d for c in taken for d in (-2, -1, 1, 2, 13, 26, 39, -13, -26, -39)
                   if 0 <= c + d < 52} - taken)
    pool = near if len(near) >= 10 else sorted(set(range(52)) - taken)
    hand = data.draw(st.lists(st.sampled_from(pool), min_size=10, max_size=10, unique=True))
    knocker = [(mask_of(m), kind_of(m) == "run") for m in targets]
    dw, own, plan = best_defence(mask_of(hand), knocker, runs_only, not gin)
    assert dw == brute_defence(hand, targets, runs_only, not gin)
    # the spread it returns is a real one reaching that count
    used: set[int] = set()
    for m in own:
        cs = set(cards_of(m))
        assert kind_of(cs, runs_only) and not cs & used and cs <= set(hand)
        used |= cs
    current = list(targets)
    for c, i in plan:
        assert c in hand and c not in used and extends(current[i], c)
        current[i] = current[i] | {c}
        used.add(c)
    assert gin is False or plan == []
    assert total(set(hand) - used) == dw
    # the bot authors' helper lays off as much as possible of any cards
    helper = layoff_cards([CARDS[c] for c in hand],
                          [Meld.of([CARDS[c] for c in sorted(m)]) for m in targets])
    current = list(targets)
    for c, i in helper:
        assert extends(current[i], c)
        current[i] = current[i] | {c}
    assert total(c for c, _ in helper) == brute_max_layoff(hand, targets)


# ============================================================== random legal games


def check_position(state: HandState, thorough: bool = True) -> None:
    """Accounting, the legal list (non-empty, only for the seat to act, every entry applies,
    and, if ``thorough``, complete), the views; the result once the hand is over."""
    check_accounting(state)
    if state.is_over:
        check_result(state)
        return
    seat = state.turn
    acts = legal_actions(state, seat)
    assert acts, f"no legal action for seat {seat} in {state.phase.name}"
    assert legal_actions(state, 1 - seat) == []
    assert len(set(acts)) == len(acts), "an action is listed twice"
    for a in acts:
        assert isinstance(a, PHASE_ACTIONS[state.phase])
        after = apply(state, seat, a)  # must not raise
        assert len(after.log) == len(state.log) + 1
        assert after.public[-1] == expected_event(state, seat, a)
    check_views(state)
    if not thorough:
        return
    # the list is complete: nothing of the simple forms is legal without being listed
    universe: list[Action] = [TakeUpcard(), Pass(), DrawStock(), DrawDiscard(), BigGin(),
                              Defend()]
    for c in state.hand(seat):
        universe += [Discard(c), Knock(c), Gin(c)]
    for a in universe:
        listed = a in acts or (isinstance(a, Knock) and Gin(a.card) in acts)
        assert is_legal(state, seat, a) == listed, a


def expected_event(state: HandState, seat: int, action: Action) -> PublicEvent:
    """How everyone sees an action: the card that moves face up, nothing else."""
    kind = {TakeUpcard: "take_upcard", Pass: "pass", DrawStock: "draw_stock",
            DrawDiscard: "draw_discard", Discard: "discard", Knock: "knock", Gin: "gin",
            BigGin: "big_gin", Defend: "defend"}[type(action)]
    card: Card | None = None
    if isinstance(action, TakeUpcard | DrawDiscard):
        card = state.discard[-1]
    elif isinstance(action, Discard):
        card = action.card
    return PublicEvent(seat, kind, card)


@pytest.mark.parametrize("name", PRESET_NAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=ORDINARY, max_hands=st.integers(1, 3), first_dealer=st.integers(0, 1))
def test_random_legal_games_end_within_the_caps_and_keep_every_card(
    name: str, policy: Policy, max_hands: int, first_dealer: int
) -> None:
    cfg = preset(name).with_options(max_hands=max_hands)
    game = new_game(cfg, first_dealer)
    rnd = policy.rnd
    while not game.is_over:
        assert game.hand_number < max_hands
        dealer = game.dealer
        game = deal_hand(game, shuffled_deck(rnd), knock_card_for(cfg, rnd))
        hand = game.hand
        assert hand is not None and hand.dealer == dealer
        size = (11 if cfg.eleven_card_deal else 10, 10)
        assert (hand.hands[1 - dealer].bit_count(), hand.hands[dealer].bit_count()) == size
        known: list[set[int]] = [set(), set()]  # cards each seat was seen to take
        while not hand.is_over:
            check_position(hand, thorough=rnd.random() < 0.2)
            assert len(hand.log) < HAND_CAP or hand.phase is not Phase.DRAW
            view = observe(hand, None)
            assert view.known == (tuple(sorted(known[0])), tuple(sorted(known[1])))
            seat = hand.turn
            action = policy.choose(hand, legal_actions(hand, seat))
            before = hand
            game = apply_action(game, seat, action)
            hand = game.hand
            assert hand is not None
            if isinstance(action, TakeUpcard | DrawDiscard):
                known[seat].add(before.discard[-1])
            elif isinstance(action, Discard | Knock | Gin):
                known[seat].discard(action.card)
            if isinstance(action, Knock | Gin | BigGin) and hand.knock is not None:
                check_explicit_spread(before, seat, action, hand)
            if isinstance(action, Defend) and hand.knock is not None:
                check_defence(before, hand)
        check_position(hand)
        result = hand.result
        assert result is not None and game.results[-1] == result
        # a knock as the first action past the cap is still defended: 2 more at most
        assert len(hand.log) <= HAND_CAP + 2
        # who deals next: the loser, or alternate; a void hand is dealt again by the same dealer
        if result.winner is None:
            assert game.dealer == dealer
        elif cfg.next_dealer is NextDealer.LOSER:
            assert game.dealer == 1 - result.winner
        else:
            assert game.dealer == 1 - dealer
    assert game.hand_number <= max_hands
    check_sheets(game)


def check_explicit_spread(before: HandState, seat: int, action: Action, after: HandState
                          ) -> None:
    """A listed knock spreads the least deadwood; naming that spread is the same move,
    and its text form reads back."""
    knock = after.knock
    assert knock is not None
    rest = cards_of(after.hands[seat])
    assert knock.deadwood == brute_min_deadwood(rest, before.config.runs_only)
    explicit: Action
    if isinstance(action, BigGin):
        explicit = BigGin(knock.melds)
    elif isinstance(action, Gin):
        explicit = Gin(action.card, knock.melds)
    else:
        assert isinstance(action, Knock)
        explicit = Knock(action.card, knock.melds)
    assert parse_action(str(explicit), runs_only=before.config.runs_only) == explicit
    assert apply(before, seat, explicit) == after._replace(log=(*before.log, (seat, explicit)))


def check_defence(before: HandState, after: HandState) -> None:
    """The default defence reaches the brute-force optimum; naming it is the same move."""
    knock = after.knock
    result = after.result
    assert knock is not None and result is not None
    defender = 1 - knock.knocker
    targets = [frozenset(int(c) for c in m.cards) for m in knock.melds]
    best = brute_defence(cards_of(after.hands[defender]), targets, before.config.runs_only,
                         knock.kind == "knock")
    assert result.deadwood[defender] == best
    explicit = Defend(result.melds[defender], result.layoffs)
    assert parse_action(str(explicit), runs_only=before.config.runs_only) == explicit
    again = apply(before, defender, explicit)
    assert again.result == result


def check_sheets(game: GameState) -> None:
    cfg = game.config
    outcome = game_outcome(game)
    assert outcome.net[0] == -outcome.net[1]
    assert game.capped == (not all(s.is_closed for s in game.sheets))
    if not cfg.hollywood:
        (sheet,) = game.sheets
        for seat in (0, 1):
            won = [r for r in game.results if r.winner == seat]
            assert sheet.wins[seat] == len(won)
            assert sheet.points[seat] == sum(r.points for r in won)
        if sheet.winner is not None:
            assert sheet.points[sheet.winner] >= cfg.target
            t = outcome.sheets[0]
            assert t is not None
            w = sheet.winner
            shutout = sheet.wins[1 - w] == 0
            bonus = cfg.game_bonus * (2 if shutout and cfg.shutout is Shutout.DOUBLE_GAME_BONUS
                                      else 1)
            mine = sheet.points[w] + bonus
            if shutout and cfg.shutout is Shutout.DOUBLE_ALL:
                mine *= 2
            boxes = [cfg.box_bonus * (sheet.wins[s] + sheet.extra_boxes[s]) for s in (0, 1)]
            assert t.totals[w] == mine + boxes[w]
            assert t.totals[1 - w] == sheet.points[1 - w] + boxes[1 - w]
    else:
        assert len(game.sheets) == 3
        points = [[r.points for r in game.results if r.winner == seat] for seat in (0, 1)]
        for sheet in game.sheets:
            for seat in (0, 1):
                assert sheet.wins[seat] <= len(points[seat])
                assert sheet.points[seat] <= sum(points[seat])
            if sheet.winner is not None:
                assert sheet.points[sheet.winner] >= cfg.target
        # each seat's first win always counts in the first game
        for seat in (0, 1):
            if points[seat] and game.sheets[0].wins[seat]:
                assert game.sheets[0].points[seat] >= points[seat][0]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), name=st.sampled_from(PRESET_NAMES))
def test_discard_swapping_hands_stop_at_the_turn_cap(policy: Policy, name: str) -> None:
    """Both seats always take the discard: the hand is void at the cap, never endless."""
    policy.swap = True
    states, _ = play_hand(preset(name), policy)
    last = states[-1]
    check_capped_length(last.log)
    assert len(states) - 1 == len(last.log)
    assert last.result is not None and last.result.kind == "cap"
    check_accounting(last)
    check_result(last)


@st.composite
def big_gin_deals(draw: st.DrawFn) -> tuple[list[int], int]:
    """Ten cards in melds and an 11th that extends one of them (a run end or a set's 4th)."""
    melds: list[frozenset[int]] = []
    used: set[int] = set()
    for size in draw(st.sampled_from([(3, 3, 4), (5, 5), (4, 6), (3, 7), (3, 3, 4)])):
        if size <= 4 and draw(st.booleans()):
            rank = draw(st.integers(0, 12))
            suits = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size, unique=True))
            meld = frozenset(13 * s + rank for s in suits)
        else:
            suit = draw(st.integers(0, 3))
            start = draw(st.integers(0, 13 - size))
            meld = frozenset(13 * suit + r for r in range(start, start + size))
        assume(not meld & used)
        melds.append(meld)
        used |= meld
    extenders = sorted({c for m in melds for c in range(52) if c not in used and extends(m, c)})
    assume(extenders)
    return sorted(used), draw(st.sampled_from(extenders))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(deal_=big_gin_deals(), seed=SEEDS,
       name=st.sampled_from(["big_gin", "standard", "eleven_card"]))
def test_big_gin_only_where_played_and_scored_as_such(
    deal_: tuple[list[int], int], seed: int, name: str
) -> None:
    hand, extra = deal_
    rnd = random.Random(seed)
    rest = [c for c in range(52) if c not in hand and c != extra]
    rnd.shuffle(rest)
    cfg = preset(name)
    eleven = cfg.eleven_card_deal
    order = [x for pair in zip(hand, rest[:10], strict=True) for x in pair]
    order += [extra, *rest[10:]] if eleven else [rest[10], extra, *rest[11:]]
    dealer = rnd.randrange(2)
    state = deal(cfg, [CARDS[c] for c in order], dealer)
    seat = 1 - dealer
    if not eleven:
        state = apply(apply(state, seat, Pass()), dealer, Pass())
        state = apply(state, seat, DrawStock())
    assert state.phase is Phase.DISCARD and state.turn == seat
    acts = legal_actions(state, seat)
    assert Gin(CARDS[extra]) in acts  # throwing the 11th back is always a gin
    if eleven:  # the 11-card deal's first turn draws nothing: gin yes, big gin never
        first = state._replace(config=cfg.with_options(big_gin=True))
        assert BigGin() not in legal_actions(first, seat)
        check_refused(first, seat, BigGin(), Code.WRONG_PHASE)
        return
    if not cfg.big_gin:
        assert BigGin() not in acts
        check_refused(state, seat, BigGin(), Code.VARIANT_OFF)
        cfg = cfg.with_options(big_gin=True)
        state = state._replace(config=cfg)
        acts = legal_actions(state, seat)
    assert BigGin() in acts
    over = apply(apply(state, seat, BigGin()), dealer, Defend())
    check_accounting(over)
    check_result(over)
    assert over.result is not None and over.result.kind == "big_gin"
    assert over.result.points == cfg.big_gin_bonus + over.result.deadwood[dealer]


# ============================================================== replay


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), name=st.sampled_from(PRESET_NAMES), max_hands=st.integers(1, 4),
       first_dealer=st.integers(0, 1))
def test_a_recorded_game_replays_to_the_same_end(
    policy: Policy, name: str, max_hands: int, first_dealer: int
) -> None:
    cfg = preset(name).with_options(max_hands=max_hands)
    rnd = policy.rnd
    game = new_game(cfg, first_dealer)
    record: list[tuple[list[str], str | None, list[tuple[int, str]]]] = []
    while not game.is_over:
        deck, kc = shuffled_deck(rnd), knock_card_for(cfg, rnd)
        game = deal_hand(game, deck, kc)
        moves: list[tuple[int, str]] = []
        assert game.hand is not None
        while not game.hand.is_over:
            seat = game.hand.turn
            action = policy.choose(game.hand, legal_actions(game.hand, seat))
            moves.append((seat, str(action)))
            game = apply_action(game, seat, action)
            assert game.hand is not None
        record.append(([str(c) for c in deck], None if kc is None else str(kc), moves))
    # the record survives JSON, and replays from text alone
    record = json.loads(json.dumps(record))
    again = new_game(RulesConfig.from_json(cfg.to_json()), first_dealer)
    for deck_text, kc_text, moves in record:
        again = deal_hand(again, deck_text, kc_text)
        for seat, text in moves:
            again = apply_action(again, seat, parse_action(text, runs_only=cfg.runs_only))
    assert again == game
    assert game_outcome(again) == game_outcome(game)


# ============================================================== redaction


def hidden_permuted_deck(deck: tuple[Card, ...], seen: set[int], rnd: random.Random
                         ) -> list[Card]:
    """The same deck with every card not in ``seen`` shuffled among the unseen positions."""
    positions = [i for i, c in enumerate(deck) if c not in seen]
    cards = [deck[i] for i in positions]
    rnd.shuffle(cards)
    out = list(deck)
    for i, c in zip(positions, cards, strict=True):
        out[i] = c
    return out


@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), name=st.sampled_from(PRESET_NAMES),
       observer=st.sampled_from([0, 1, None]), cut=st.floats(0, 1))
def test_what_a_seat_cannot_see_does_not_change_its_view(
    policy: Policy, name: str, observer: int | None, cut: float
) -> None:
    cfg = preset(name)
    states, moves = play_hand(cfg, policy)
    k = round(cut * len(moves))
    views = [observe(s, observer) for s in states[: k + 1]]
    seen: set[int] = set().union(*(view_cards(v) for v in views))
    if observer is not None:
        seen |= set().union(*(set(s.hand(observer)) for s in states[: k + 1]))
    first = states[0]
    other = deal(cfg, hidden_permuted_deck(first.deck, seen, policy.rnd), first.dealer,
                 first.knock_card)
    assert observe(other, observer) == views[0]
    for i in range(k):
        seat, action = moves[i]
        try:
            other = apply(other, seat, action)
        except RuleError:
            # only a spread can depend on cards the observer never saw
            assert seat != observer and isinstance(action, Knock | Gin | BigGin), action
            break
        assert observe(other, observer) == views[i + 1], f"after {seat}: {action}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=ORDINARY, name=st.sampled_from(PRESET_NAMES))
def test_views_never_show_hidden_cards(policy: Policy, name: str) -> None:
    states, _ = play_hand(preset(name), policy)
    for state in states:
        check_views(state)


# ============================================================== illegal actions


def action_pool(state: HandState, rnd: random.Random) -> list[Action]:
    """A few actions of every kind, most of them wrong now."""
    cards = rnd.sample(CARDS, 6)
    pool: list[Action] = [TakeUpcard(), Pass(), DrawStock(), DrawDiscard(), BigGin(), Defend()]
    pool += [Discard(c) for c in cards] + [Knock(c) for c in cards[:3]]
    pool += [Gin(c) for c in cards[3:]]
    held = state.hand(state.turn)
    if held:
        c = rnd.choice(held)
        pool += [Discard(c), Knock(c), Gin(c)]
        pool.append(Defend((), ((c, rnd.randrange(4)),)))
    if state.taken is not None:
        pool += [Discard(state.taken), Knock(state.taken)]
    return pool


def check_refused(state: HandState, seat: int, action: object, code: Code | None = None
                  ) -> RuleError:
    before = copy.deepcopy(state)
    with pytest.raises(RuleError) as info:
        apply(state, seat, action)  # type: ignore[arg-type]
    err = info.value
    assert isinstance(err, MalformedError | IllegalActionError) and isinstance(err, ValueError)
    assert err.code in set(Code) and f"[{err.code}]" in str(err)
    if code is not None:
        assert err.code == code, err
    assert err.seat == seat and err.phase == state.phase and err.action == action
    assert err.legal == tuple(legal_actions(state, seat) if seat in (0, 1) else ())
    assert state == before, "a refused action changed the state"
    assert not is_legal(state, seat, action)  # type: ignore[arg-type]
    return err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=ORDINARY, name=st.sampled_from(PRESET_NAMES), cut=st.floats(0, 1))
def test_illegal_actions_raise_with_context_and_change_nothing(
    policy: Policy, name: str, cut: float
) -> None:
    states, _ = play_hand(preset(name), policy)
    state = states[round(cut * (len(states) - 1))]
    rnd = policy.rnd
    if state.is_over:
        for seat in (0, 1):
            check_refused(state, seat, rnd.choice(action_pool(state, rnd)), Code.HAND_OVER)
        return
    seat = state.turn
    legal = legal_actions(state, seat)
    # the seat not to act
    for action in rnd.sample(action_pool(state, rnd), 4):
        check_refused(state, 1 - seat, action, Code.NOT_YOUR_TURN)
    # no such seat, no such action
    check_refused(state, 2, legal[0], Code.BAD_ACTION)
    check_refused(state, seat, "discard " + str(state.hand(seat)[0]), Code.BAD_ACTION)
    # an action of another phase
    for action in action_pool(state, rnd):
        if not isinstance(action, PHASE_ACTIONS[state.phase]):
            check_refused(state, seat, action, Code.WRONG_PHASE)
    # a card not held
    if state.phase is Phase.DISCARD:
        missing = [c for c in CARDS if not state.hands[seat] >> c & 1]
        c = rnd.choice(missing)
        for action in (Discard(c), Knock(c), Gin(c)):
            check_refused(state, seat, action, Code.NOT_HELD)
    # anything else: refused with context, or legal (listed, or a spread the engine accepts)
    for action in action_pool(state, rnd):
        assert parse_action(str(action), runs_only=state.config.runs_only) == action
        if action in legal:
            assert is_legal(state, seat, action)
            continue
        try:
            apply(state, seat, action)
        except RuleError:
            check_refused(state, seat, action)
        else:
            # knocking with no deadwood is a gin (listed as Gin); a chosen spread is checked
            assert (isinstance(action, Knock) and Gin(action.card) in legal) or (
                isinstance(action, Defend) and action.melds is not None), action


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), name=st.sampled_from(PRESET_NAMES), cut=st.floats(0, 1))
def test_game_level_refusals_leave_the_game_unchanged(
    policy: Policy, name: str, cut: float
) -> None:
    cfg = preset(name)
    rnd = policy.rnd
    game = deal_hand(new_game(cfg, rnd.randrange(2)), shuffled_deck(rnd), knock_card_for(cfg, rnd))
    steps = round(cut * 60)
    assert game.hand is not None
    while steps and not game.hand.is_over:
        seat = game.hand.turn
        game = apply_action(game, seat, policy.choose(game.hand, legal_actions(game.hand, seat)))
        assert game.hand is not None
        steps -= 1
    hand = game.hand
    assert hand is not None
    before = copy.deepcopy(game)
    with pytest.raises(RuleError):
        apply_action(game, 1 - hand.turn, rnd.choice(action_pool(hand, rnd)))
    if not hand.is_over:
        with pytest.raises(RuleError) as info:
            deal_hand(game, shuffled_deck(rnd), knock_card_for(cfg, rnd))
        assert info.value.code == Code.WRONG_PHASE
    if not game.is_over:
        with pytest.raises(MalformedError) as bad:
            deal_hand(game._replace(hand=None), [*CARDS[:51], CARDS[0]],
                      knock_card_for(cfg, rnd))
        assert bad.value.code == Code.BAD_DECK
    assert game == before


# ============================================================== configuration


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_round_trips_through_json(name: str) -> None:
    cfg = preset(name)
    assert cfg.preset == name
    text = cfg.to_json()
    assert json.loads(text) == cfg.to_dict()
    assert RulesConfig.from_json(text) == cfg
    assert RulesConfig.from_spec(name) == cfg
    assert RulesConfig.from_spec({"preset": name}) == cfg
    assert set(cfg.to_dict()) == {f.name for f in fields(RulesConfig)}


_INT_RANGES = {
    "knock_limit": (0, 100), "target": (1, 1000), "max_hands": (1, 1000),
}
_ENUM_TYPES = {"KnockScore": KnockScore, "Shutout": Shutout, "NextDealer": NextDealer}


@st.composite
def overrides(draw: st.DrawFn) -> tuple[str, object]:
    field = draw(st.sampled_from([f for f in fields(RulesConfig) if f.name != "preset"]))
    t = str(field.type)
    if t == "bool":
        return field.name, draw(st.booleans())
    if t == "int":
        lo, hi = _INT_RANGES.get(field.name, (0, 500))
        return field.name, draw(st.integers(lo, hi))
    enum = _ENUM_TYPES[t]
    return field.name, draw(st.sampled_from([e.value for e in enum]))


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(PRESET_NAMES), changes=st.lists(overrides(), max_size=3))
def test_preset_with_overrides_round_trips(name: str, changes: list[tuple[str, object]]) -> None:
    spec: dict[str, object] = {"preset": name, **dict(changes)}
    try:
        cfg = RulesConfig.from_spec(spec)
    except MalformedError as err:
        # only the documented incompatible combinations are refused
        assert err.code == Code.BAD_OPTION
        merged = {**preset(name).to_dict(), **dict(changes)}
        assert ((merged["oklahoma"] and merged["knock_deck"])
                or (merged["oklahoma"] and merged["eleven_card_deal"])
                or ((merged["oklahoma"] or merged["knock_deck"])
                    and merged["knock_limit"] != preset("standard").knock_limit)
                or (merged["wall_take_back"] and not merged["wall_take_discard"])), str(err)
        return
    assert cfg.preset == name
    data = cfg.to_dict()
    base = preset(name).to_dict()
    for key in data:
        assert data[key] == (dict(changes)[key] if key in dict(changes) else base[key]), key
    assert RulesConfig.from_json(cfg.to_json()) == cfg
    assert RulesConfig.from_spec(json.loads(cfg.to_json())) == cfg


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(PRESET_NAMES),
       option=st.from_regex(r"[a-z][a-z_0-9]{0,20}", fullmatch=True).filter(
           lambda s: s not in {f.name for f in fields(RulesConfig)}))
def test_unknown_options_are_refused_by_name(name: str, option: str) -> None:
    attempts: list[Callable[[], RulesConfig]] = [
        lambda: RulesConfig.from_spec({"preset": name, option: 1}),
        lambda: RulesConfig.from_json(json.dumps({"preset": name, option: True})),
        lambda: preset(name).with_options(**{option: 0}),
    ]
    for attempt in attempts:
        with pytest.raises(MalformedError) as info:
            attempt()
        assert info.value.code == Code.BAD_OPTION
        assert option in str(info.value)


def test_bad_values_and_presets_are_refused_by_name() -> None:
    for spec, word in (
        ({"preset": "no_such_rules"}, "no_such_rules"),
        ({"target": "100"}, "target"),
        ({"oklahoma": 1}, "oklahoma"),
        ({"knock_limit": True}, "knock_limit"),
        ({"shutout": "triple"}, "shutout"),
        ({"knock_limit": 101}, "knock_limit"),
        ({"max_hands": 0}, "max_hands"),
    ):
        with pytest.raises(MalformedError) as info:
            RulesConfig.from_spec(spec)
        assert info.value.code == Code.BAD_OPTION
        assert word in str(info.value), (spec, str(info.value))
    for text in ("[1, 2]", "{not json"):
        with pytest.raises(MalformedError):
            RulesConfig.from_json(text)



# ============================================================== engine bugs found by these tests


def deck_dealing(non_dealer: str, dealer: str, then: str) -> list[Card]:
    """A deck dealing these 10-card hands (one at a time, non-dealer first), then ``then``
    (the upcard and the top of the stock), then the rest in index order."""
    nd, de = parse_cards(non_dealer), parse_cards(dealer)
    order = [x for pair in zip(nd, de, strict=True) for x in pair] + list(parse_cards(then))
    return order + [c for c in CARDS if c not in set(order)]


@pytest.mark.parametrize(("knocker", "defender", "whole_run"), [
    # the defender's 2H-7H is split 2H-4H | 5H-7H: 24 points instead of 30
    ("AC 2C 3C 4C 5D 6D 7D 8D 2S 3S", "2H 3H 4H 5H 6H 7H 8C 9C TC AS", "2H 3H 4H 5H 6H 7H"),
    # the defender's 5H-TH is laid off on the knocker's 2H-4H: 26 points instead of 32
    ("AC 2C 3C 4C 2H 3H 4H 2D 2S 3S", "5H 6H 7H 8H 9H TH 8C 9C TC AS", "5H 6H 7H 8H 9H TH"),
])
def test_sequence_gin_default_defence_keeps_the_undercutters_long_run(
    knocker: str, defender: str, whole_run: str
) -> None:
    cfg = preset("sequence")
    state = deal(cfg, deck_dealing(knocker, defender, "JD KH"), 0)  # JD: knock limit 10
    state = apply(apply(apply(state, 1, Pass()), 0, Pass()), 1, DrawStock())
    state = apply(state, 1, Knock(parse_cards("KH")[0]))
    default = apply(state, 0, Defend()).result
    assert default is not None and default.kind == "undercut"
    run = Meld.of(whole_run, runs_only=True)
    rest = Meld.of("8C 9C TC", runs_only=True)
    chosen = apply(state, 0, Defend((run, rest))).result
    assert chosen is not None and chosen.deadwood == default.deadwood
    assert chosen.bonus == 6
    # the default spread is "the best": it should score what the natural spread scores
    assert default.points == chosen.points


def test_a_knock_listed_as_the_last_action_before_the_cap_is_scored() -> None:
    core = set(parse_cards("AC 2C 3C 4D 5D 6D 7H 8H 9H"))
    deck = deck_dealing("AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "2S 4S 6S 8S TS QS 3H 5H JH KH", "JD")
    state = deal(preset("standard"), deck, 0)
    state = apply(apply(apply(state, 1, Pass()), 0, Pass()), 1, DrawStock())
    # both seats take each other's discard for ever; seat 1 keeps its three melds
    while len(state.log) < HAND_CAP - 1:
        seat = state.turn
        if state.phase is Phase.DRAW:
            state = apply(state, seat, DrawDiscard())
        else:
            keep = core if seat == 1 else set()
            card = next(c for c in state.hand(seat) if c != state.taken and c not in keep)
            state = apply(state, seat, Discard(card))
    assert state.turn == 1 and state.phase is Phase.DISCARD
    knock = next(a for a in legal_actions(state, 1) if isinstance(a, Knock | Gin))
    after = apply(state, 1, knock)
    assert after.phase is Phase.DEFEND, after.result


def test_a_config_renamed_with_with_options_round_trips() -> None:
    cfg = preset("gin20").with_options(preset="house", target=150)
    assert RulesConfig.from_json(cfg.to_json()) == cfg
