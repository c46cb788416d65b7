"""One match as a state machine: deals, asks, applies, tells, records. No I/O, no clock.

``MatchDriver`` owns the game and the seeded deck source. The runner that drives it (the
trio runner with its time policy, or the synchronous in-process loop) asks it what to
request next, hands it each answer, and delivers what it queues in ``outbox``. Every
message a seat gets is built here from ``observe`` for that seat, so redaction stays in
the rules' one function. ``record`` is the replay: deck orders, every action, results.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from dataclasses import dataclass
from typing import Any

from gin_arena_core.rules import (
    CARDS,
    Action,
    Card,
    Defend,
    Discard,
    DrawStock,
    GameState,
    HandState,
    Pass,
    Phase,
    RuleError,
    RulesConfig,
    apply_action,
    deal_hand,
    game_outcome,
    legal_actions,
    new_game,
    observe,
)

from arena.match.messages import (
    DecisionRequest,
    Defaulted,
    HandFinished,
    MatchEnded,
    MatchResult,
    MatchStarted,
    OpponentActed,
    Outgoing,
    SeatStats,
    Termination,
    TimeControl,
)

RECORD_VERSION = 1


def new_seed() -> str:
    """A fresh run seed: 128 random bits, so no bot can guess it from the cards it sees."""
    return secrets.token_hex(16)


def derive_seed(secret: str, label: str) -> str:
    """The seed of one deal or match of a run: a keyed hash of the run's seed, so a match
    record (which holds its own seed and decks) reveals no other match's cards."""
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Deal:
    deck: tuple[Card, ...]
    knock_card: Card | None


class SeededDecks:
    """Deck orders from a seed, dealt by seat: hand k's deck depends only on (seed, k),
    never on play, and each seat gets the same ten cards whoever deals that hand. So the
    two matches of a duplicate deal (seats swapped) hand every hand's cards to the other
    bot, even when the next dealer depends on play (the loser deals). The upcard (or the
    non-dealer's eleventh card) and the stock order are the same in both. With
    ``knock_deck`` rules a separate knock deck is shuffled per game; a void hand keeps its
    knock card (seed 004)."""

    def __init__(self, seed: int | str) -> None:
        self.seed = seed
        rng = random.Random(f"{seed}:knock")
        self._knock = list(CARDS)
        rng.shuffle(self._knock)

    def deal(self, deal_index: int, knock_index: int, dealer: int = 0) -> Deal:
        """The deck of hand ``deal_index`` (0-based) for a hand ``dealer`` deals."""
        rng = random.Random(f"{self.seed}:{deal_index}")
        deck = list(CARDS)
        rng.shuffle(deck)
        if dealer == 1:
            # The engine deals one at a time, the non-dealer first (positions 0, 2, ...):
            # with seat 1 dealing, swap each pair so that seat 0 still gets the odd
            # positions of the shuffled order and seat 1 the even ones.
            for i in range(0, 20, 2):
                deck[i], deck[i + 1] = deck[i + 1], deck[i]
        return Deal(tuple(deck), self._knock[knock_index % 52])


def default_action(state: HandState, seat: int) -> Action:
    """The move played for a seat that did not answer in time (documented policy): pass the
    upcard, draw from the stock, discard the card just drawn (else the highest legal card),
    never knock; at the wall, pass; after taking at the wall, the first knock; the
    defender's best spread."""
    legal = legal_actions(state, seat)
    phase = state.phase
    if phase in (Phase.UPCARD_OFFER, Phase.WALL_OFFER):
        return Pass()
    if phase is Phase.DRAW:
        return DrawStock()
    if phase is Phase.DEFEND:
        return Defend()
    if phase is Phase.DISCARD:
        discards = [a for a in legal if isinstance(a, Discard)]
        last = state.log[-1][1] if state.log else None
        if isinstance(last, DrawStock):
            drawn = state.deck[state.stock_pos - 1]
            if Discard(drawn) in discards:
                return Discard(drawn)
        return max(discards, key=lambda a: (a.card.value, a.card))
    return legal[0]  # WALL_DISCARD: some knock is always legal here


class MatchDriver:
    """The match between seat 0 and seat 1. Not thread-safe; one task drives it."""

    def __init__(
        self,
        match_id: str,
        rules: RulesConfig,
        names: tuple[str, str],
        *,
        seed: int | str,
        first_dealer: int = 0,
        time_control: TimeControl | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.match_id = match_id
        self.rules = rules
        self.names = names
        self.seed = seed
        self.first_dealer = first_dealer
        self.time_control = time_control or TimeControl()
        self.decks = SeededDecks(seed)
        self.game: GameState = new_game(rules, first_dealer)
        self.outbox: list[tuple[int, Outgoing]] = []
        self.record: list[dict[str, Any]] = []
        self.stats = (SeatStats(), SeatStats())
        self.result: MatchResult | None = None
        self._request_id = 0
        self._pending: tuple[int, int] | None = None  # (seat, request id)
        self._knock_index = 0
        self._defaulted = [False, False]
        self._latency = [0, 0]
        self.record.append({
            "type": "match", "version": RECORD_VERSION, "match_id": match_id,
            "rules": rules.to_dict(), "names": list(names), "seed": str(seed),
            "first_dealer": first_dealer, "time_control": self.time_control.to_dict(),
            **(meta or {}),
        })
        for seat in (0, 1):
            self.outbox.append((seat, MatchStarted(match_id, seat, rules, self.time_control,
                                                   names[1 - seat])))

    # ------------------------------------------------------------------ asking

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def hand(self) -> HandState:
        assert self.game.hand is not None
        return self.game.hand

    def seat_to_act(self) -> int:
        """The seat whose decision comes next (dealing a new hand first if needed)."""
        assert self.result is None, "the match is over"
        hand = self.game.hand
        if hand is None or hand.phase is Phase.HAND_OVER:
            self._deal()
            hand = self.game.hand
            assert hand is not None
        return hand.turn

    def next_request(self, time_left_ms: int = 0, bank_left_ms: int = 0) -> DecisionRequest:
        """The request for the seat to act (dealing a new hand first if needed)."""
        seat = self.seat_to_act()
        state = self.game.hand
        assert state is not None
        self._request_id += 1
        self._pending = (seat, self._request_id)
        game = self.game
        view = observe(state, seat, scores=game.scores, hand_number=game.hand_number,
                       sheets=game.sheets)
        req = DecisionRequest(self._request_id, view, time_left_ms, bank_left_ms,
                              self._latency[seat], self._defaulted[seat])
        self._defaulted[seat] = False
        return req

    @property
    def pending(self) -> tuple[int, int]:
        """(seat, request id) of the decision being waited for."""
        assert self._pending is not None
        return self._pending

    def _deal(self) -> None:
        index = self.game.hand_number
        d = self.decks.deal(index, self._knock_index, self.game.dealer)
        knock = d.knock_card if self.rules.knock_deck else None
        self.game = deal_hand(self.game, d.deck, knock)
        self.record.append({
            "type": "deal", "hand": self.game.hand_number, "dealer": self.game.dealer,
            "deck": [str(c) for c in d.deck],
            "knock_card": str(knock) if knock is not None else None,
        })

    # ------------------------------------------------------------------ answering

    def submit(self, action: Action, *, elapsed_ms: float = 0.0, defaulted: str = "") -> None:
        """Apply the pending seat's ``action``; ``RuleError`` (state unchanged) if illegal."""
        pending = self._pending
        assert pending is not None, "no decision is pending"
        seat, request_id = pending
        self.game = game = apply_action(self.game, seat, action)  # RuleError: game unchanged
        self._pending = None
        stats = self.stats[seat]
        stats.decisions += 1
        stats.think_ms_total += elapsed_ms
        stats.think_ms_max = max(stats.think_ms_max, elapsed_ms)
        self._latency[seat] = max(0, round(elapsed_ms))
        entry: dict[str, Any] = {"type": "action", "hand": game.hand_number, "seat": seat,
                                 "action": str(action), "ms": round(elapsed_ms, 3)}
        hand = game.hand
        assert hand is not None
        public = hand.public[-1]
        if defaulted:
            entry["defaulted"] = defaulted
            stats.defaulted += 1
            self._defaulted[seat] = True
            self.outbox.append((seat, Defaulted(request_id, action, defaulted, public)))
        self.record.append(entry)
        self.outbox.append((1 - seat, OpponentActed(public)))
        if hand.result is not None:
            r = hand.result
            self.record.append({"type": "hand_result", "hand": self.game.hand_number,
                                "kind": r.kind, "winner": r.winner, "points": r.points,
                                "scores": list(self.game.scores)})
            if r.winner is not None:
                self._knock_index += 1
            for s in (0, 1):
                self.outbox.append((s, HandFinished(self.game.hand_number, r, self.game.scores)))
            if self.game.is_over:
                self._complete()

    def default_action(self) -> Action:
        seat, _ = self.pending
        return default_action(self.hand, seat)

    def note_rejection(self, seat: int, action: Action | None, error: str, *,
                       illegal: bool = True) -> None:
        """A refused answer of ``seat``, recorded; counted as an illegal answer unless it was
        a bot error (``illegal=False``: counted by ``note_error`` instead)."""
        if illegal:
            self.stats[seat].rejections += 1
        self.record.append({"type": "rejected", "hand": self.game.hand_number, "seat": seat,
                            "action": str(action) if action is not None else None,
                            "error": error})

    def note_error(self, seat: int, error: str) -> None:
        """A bot error of ``seat`` (its code raised, or did not answer with a move): counted,
        the first one kept, every one in the record. Once the match is over nothing more
        counts (over the network, nothing is listening by then)."""
        if self.result is not None:
            return
        stats = self.stats[seat]
        stats.errors += 1
        if not stats.first_error:
            stats.first_error = error
        self.record.append({"type": "bot_error", "hand": self.game.hand_number, "seat": seat,
                            "error": error})

    def note_timeout(self, seat: int) -> None:
        self.stats[seat].timeouts += 1

    # ------------------------------------------------------------------ ending

    def _complete(self) -> None:
        out = game_outcome(self.game)
        term = Termination.CAPPED if out.capped and out.winner is None else Termination.COMPLETED
        self._finish(out.winner, term, None, out.net, "")

    def forfeit(self, blamed: int, termination: Termination, detail: str) -> MatchResult:
        """End the match against ``blamed``: the other seat wins."""
        return self._finish(1 - blamed, termination, blamed, self._net_so_far(), detail)

    def abort(self, termination: Termination, detail: str) -> MatchResult:
        """End the match with no winner (shutdown, our own error): void, not rated."""
        return self._finish(None, termination, None, self._net_so_far(), detail)

    def _net_so_far(self) -> tuple[int, int]:
        a, b = self.game.scores
        return (a - b, b - a)

    def _finish(self, winner: int | None, termination: Termination, blamed: int | None,
                scores: tuple[int, int], detail: str) -> MatchResult:
        if self.result is not None:
            return self.result
        result = MatchResult(self.match_id, winner, termination, blamed, scores, detail,
                             self.game.results, self.stats)
        self.result = result
        self._pending = None
        self.record.append({"type": "end", "winner": winner, "termination": str(termination),
                            "blamed": blamed, "scores": list(scores), "detail": detail,
                            "hands": len(self.game.results)})
        for s in (0, 1):
            self.outbox.append((s, MatchEnded(result)))
        return result

    def drain(self) -> list[tuple[int, Outgoing]]:
        out, self.outbox = self.outbox, []
        return out


__all__ = ["Deal", "MatchDriver", "RuleError", "SeededDecks", "default_action", "derive_seed",
           "new_seed"]
