"""A game: hands dealt in turn, cumulative scores to a target, bonuses at the end.

``new_game(config, first_dealer)`` then, for every hand, ``deal_hand(game, deck)`` and
``apply_action(game, seat, action)`` until ``game.is_over``. Who deals first is an input;
after that the loser of a hand deals (seeds 000, 004) or the deal alternates (seeds 001,
002); a void hand is dealt again by the same dealer. Hollywood scoring (seed 000) keeps
three score sheets at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from gin_arena_core.rules.actions import Action
from gin_arena_core.rules.cards import CardLike
from gin_arena_core.rules.config import NextDealer, RulesConfig, Shutout
from gin_arena_core.rules.errors import Code, IllegalActionError, MalformedError
from gin_arena_core.rules.hand import HandResult, HandState, apply, deal


@dataclass(frozen=True, slots=True)
class Sheet:
    """One game's score column: points toward the target, hands won, extra boxes."""

    points: tuple[int, int] = (0, 0)
    wins: tuple[int, int] = (0, 0)
    extra_boxes: tuple[int, int] = (0, 0)
    winner: int | None = None  # set when a seat reaches the target

    @property
    def is_closed(self) -> bool:
        return self.winner is not None

    def has_scored(self, seat: int) -> bool:
        return self.wins[seat] > 0


@dataclass(frozen=True, slots=True)
class SheetTotal:
    """A closed sheet's final account (seed 000 order: game bonus, shutout, then boxes)."""

    winner: int
    points: tuple[int, int]
    game_bonus: int
    shutout: bool
    boxes: tuple[int, int]
    totals: tuple[int, int]

    @property
    def margin(self) -> int:
        """What the winner wins: the difference of the totals."""
        return self.totals[self.winner] - self.totals[1 - self.winner]


class GameState(NamedTuple):
    """A game in progress. Immutable (a NamedTuple: it is copied on every action)."""

    config: RulesConfig
    dealer: int  # who deals the current / next hand
    sheets: tuple[Sheet, ...]
    hand: HandState | None = None
    hand_number: int = 0  # hands dealt so far, walls included
    results: tuple[HandResult, ...] = ()
    capped: bool = False  # ended by max_hands with a sheet still open

    @property
    def is_over(self) -> bool:
        return self.capped or all(s.is_closed for s in self.sheets)

    @property
    def scores(self) -> tuple[int, int]:
        """Points toward the target on the first open sheet (the last sheet when all closed)."""
        for s in self.sheets:
            if not s.is_closed:
                return s.points
        return self.sheets[-1].points


def new_game(config: RulesConfig, first_dealer: int) -> GameState:
    if first_dealer not in (0, 1):
        raise MalformedError(Code.BAD_OPTION, f"first dealer must be 0 or 1, not {first_dealer!r}")
    return GameState(config, first_dealer, tuple(Sheet() for _ in range(3 if config.hollywood
                                                                          else 1)))


def deal_hand(
    game: GameState, deck: Iterable[CardLike], knock_card: CardLike | None = None
) -> GameState:
    """Start the next hand from ``deck`` (and the knock card, with ``knock_deck`` rules)."""
    if game.is_over:
        raise IllegalActionError(Code.GAME_OVER, "the game is over")
    if game.hand is not None and not game.hand.is_over:
        raise IllegalActionError(Code.WRONG_PHASE, "the current hand is not over")
    hand = deal(game.config, deck, game.dealer, knock_card)
    return game._replace(hand=hand, hand_number=game.hand_number + 1)


def apply_action(game: GameState, seat: int, action: Action) -> GameState:
    """Apply ``action`` to the current hand; when the hand ends, score it."""
    if game.hand is None:
        raise IllegalActionError(Code.WRONG_PHASE, "no hand has been dealt")
    hand = apply(game.hand, seat, action)
    new = _new_game(GameState, (game[0], game[1], game[2], hand, game[4], game[5], game[6]))
    if hand.result is None:
        return new
    return enter_result(new, hand.result)


# A game is copied on every action: build it directly (fields: config, dealer, sheets,
# hand, hand_number, results, capped) rather than through NamedTuple._replace.
_new_game: Callable[[type[GameState], tuple[Any, ...]], GameState] = tuple.__new__
assert GameState._fields[3] == "hand" and len(GameState._fields) == 7


def enter_result(game: GameState, result: HandResult) -> GameState:
    """Score a finished hand: sheets, hands won, the next dealer, the max_hands cap."""
    cfg = game.config
    sheets = game.sheets
    dealer = game.dealer
    if result.winner is not None:
        sheets = _enter(cfg, sheets, result)
        loser = 1 - result.winner
        dealer = loser if cfg.next_dealer is NextDealer.LOSER else 1 - game.dealer
    new = game._replace(sheets=sheets, dealer=dealer, results=(*game.results, result))
    if not new.is_over and new.hand_number >= cfg.max_hands:
        new = new._replace(capped=True)
    return new


def _enter(cfg: RulesConfig, sheets: tuple[Sheet, ...], result: HandResult) -> tuple[Sheet, ...]:
    """Enter a won hand. Hollywood (seed 000): a win goes into every open game up to and
    including the first open game in which the winner has not yet scored."""
    w = result.winner
    assert w is not None
    out = list(sheets)
    for i, sheet in enumerate(sheets):
        if sheet.is_closed:
            continue
        points = list(sheet.points)
        wins = list(sheet.wins)
        boxes = list(sheet.extra_boxes)
        first_here = wins[w] == 0
        points[w] += result.points
        wins[w] += 1
        if result.kind in ("gin", "big_gin"):
            boxes[w] += cfg.gin_extra_boxes
        elif result.kind == "undercut":
            boxes[w] += cfg.undercut_extra_boxes
        winner = w if points[w] >= cfg.target else None
        out[i] = Sheet((points[0], points[1]), (wins[0], wins[1]), (boxes[0], boxes[1]), winner)
        if first_here:
            break
    return tuple(out)


def total_sheet(cfg: RulesConfig, sheet: Sheet) -> SheetTotal:
    """The final account of a closed sheet."""
    if sheet.winner is None:
        raise IllegalActionError(Code.WRONG_PHASE, "the game on this sheet is not decided")
    w = sheet.winner
    shutout = sheet.wins[1 - w] == 0
    totals = list(sheet.points)
    bonus = cfg.game_bonus
    if shutout and cfg.shutout is Shutout.DOUBLE_GAME_BONUS:
        bonus *= 2
    totals[w] += bonus
    if shutout and cfg.shutout is Shutout.DOUBLE_ALL:
        totals[w] *= 2
    boxes = tuple(cfg.box_bonus * (sheet.wins[s] + sheet.extra_boxes[s]) for s in (0, 1))
    totals = [totals[s] + boxes[s] for s in (0, 1)]
    return SheetTotal(w, sheet.points, bonus, shutout, (boxes[0], boxes[1]),
                      (totals[0], totals[1]))


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """The end of a game: per-sheet accounts, net margin per seat, and the winner."""

    sheets: tuple[SheetTotal | None, ...]
    net: tuple[int, int]  # what each seat wins (positive) or pays (negative), all sheets
    winner: int | None  # None when the margin is zero or the game was capped undecided
    capped: bool


def game_outcome(game: GameState) -> GameOutcome:
    if not game.is_over:
        raise IllegalActionError(Code.WRONG_PHASE, "the game is not over")
    totals = tuple(total_sheet(game.config, s) if s.is_closed else None for s in game.sheets)
    net = [0, 0]
    for t in totals:
        if t is not None:
            net[t.winner] += t.margin
            net[1 - t.winner] -= t.margin
    winner: int | None = None
    if net[0] != net[1]:
        winner = 0 if net[0] > net[1] else 1
    if game.capped and any(t is None for t in totals):
        winner = None
    return GameOutcome(totals, (net[0], net[1]), winner, game.capped)
