"""Game scoring: the running total, bonuses, boxes, shutouts, dealers, Hollywood, presets."""

from __future__ import annotations

import json
import random

import pytest
from gin_arena_core.rules import (
    CARDS,
    PRESETS,
    HandResult,
    MalformedError,
    RulesConfig,
    apply_action,
    deal_hand,
    enter_result,
    game_outcome,
    legal_actions,
    new_game,
    preset,
)
from gin_arena_core.rules.multiplayer import (
    ThreePlayerState,
    partnership_pairings,
    three_player_next,
)

WALL = HandResult("wall", None, 0)


def won(seat: int, points: int, kind: str = "knock") -> HandResult:
    return HandResult(kind, seat, points, knocker=seat)


def play(cfg: RulesConfig, results: list[HandResult], first_dealer: int = 0):  # type: ignore[no-untyped-def]
    game = new_game(cfg, first_dealer)
    dealers = []
    for r in results:
        dealers.append(game.dealer)
        game = enter_result(game, r)
    return game, dealers


def test_running_total_seed000_11_then_14_is_25() -> None:
    game, _ = play(preset("standard"), [won(0, 11), won(0, 14)])
    assert game.scores == (25, 0) and game.sheets[0].wins == (2, 0)


def test_loser_deals_next_and_a_wall_is_redealt_by_the_same_dealer() -> None:
    _, dealers = play(preset("standard"), [won(0, 5), WALL, won(1, 5), won(1, 5)], first_dealer=0)
    assert dealers == [0, 1, 1, 0]


def test_deal_alternates_in_seed001() -> None:
    _, dealers = play(preset("gin25"), [won(0, 5), won(0, 5), WALL, won(1, 5)], first_dealer=1)
    assert dealers == [1, 0, 1, 1]


def test_game_bonus_boxes_and_shutout_doubles_everything_seed000() -> None:
    game, _ = play(preset("standard"), [won(0, 60), won(0, 45)])
    out = game_outcome(game)
    total = out.sheets[0]
    assert total is not None and total.shutout and total.winner == 0
    # (105 + 100) doubled, then 2 boxes of 25 are added
    assert total.totals == ((105 + 100) * 2 + 50, 0)
    assert out.net == (460, -460) and out.winner == 0


def test_shutout_doubles_only_the_game_bonus_seed002() -> None:
    game, _ = play(preset("gin20"), [won(0, 60), won(0, 45)])
    total = game_outcome(game).sheets[0]
    assert total is not None and total.game_bonus == 200
    assert total.totals == (105 + 200 + 2 * 20, 0)


def test_boxes_do_not_count_toward_the_target_and_extra_boxes() -> None:
    cfg = preset("standard").with_options(gin_extra_boxes=1, undercut_extra_boxes=2)
    game, _ = play(cfg, [won(1, 30, "gin"), won(0, 50, "undercut"), won(0, 60)])
    assert game.is_over
    total = game_outcome(game).sheets[0]
    assert total is not None and not total.shutout
    assert total.boxes == (25 * (2 + 2), 25 * (1 + 1))
    assert total.totals == (110 + 100 + 100, 30 + 50)
    assert total.margin == 310 - 80


def test_hollywood_three_games_seed000() -> None:
    game, _ = play(preset("hollywood"), [won(0, 10), won(0, 20), won(1, 5), won(0, 30)])
    s1, s2, s3 = game.sheets
    assert s1.points == (60, 5)  # every win of seat 0 counts in game 1; seat 1's first too
    assert s2.points == (50, 0)  # seat 0's 2nd and later wins
    assert s3.points == (30, 0)  # seat 0's 3rd and later
    # game 1 closes at 100; later wins go to games 2 and 3 only
    game = enter_result(game, won(0, 45))
    assert game.sheets[0].winner == 0 and game.sheets[0].points == (105, 5)
    game = enter_result(game, won(0, 10))
    assert game.sheets[0].points == (105, 5)
    assert game.sheets[1].points == (105, 0) and game.sheets[1].winner == 0
    assert game.sheets[2].points == (85, 0) and not game.is_over
    # seat 1 was shut out of game 2; its next win enters game 3, the one still open
    game = enter_result(game, won(1, 7))
    assert game.sheets[2].points == (85, 7)


def test_max_hands_caps_a_game() -> None:
    cfg = preset("standard").with_options(max_hands=3)
    game = new_game(cfg, 0)
    rng = random.Random(7)
    while not game.is_over:
        deck = list(CARDS)
        rng.shuffle(deck)
        game = deal_hand(game, deck)
        assert game.hand is not None
        while not game.hand.is_over:
            seat = game.hand.turn
            game = apply_action(game, seat, rng.choice(legal_actions(game.hand, seat)))
    assert game.hand_number <= 3
    out = game_outcome(game)
    assert out.capped == (game.sheets[0].winner is None)


def test_three_players_loser_deals_winner_meets_old_dealer() -> None:
    st = ThreePlayerState(dealer=2, target=100)
    assert st.players == (0, 1)
    st = three_player_next(st, won(1, 30))  # player 1 beat player 0
    assert st.dealer == 0 and st.players == (1, 2) and st.points == (0, 30, 0)
    st = three_player_next(st, WALL)
    assert st.dealer == 0
    st = three_player_next(st, won(1, 80))  # seat 1 of (1, 2) is player 2
    assert st.points == (0, 30, 80) and st.dealer == 1


def test_partnership_pairings_rotate_or_stay() -> None:
    assert partnership_pairings(2, 1, rotate=True) == [(0, 1), (1, 0)]
    assert partnership_pairings(2, 1, rotate=False) == [(0, 0), (1, 1)]
    with pytest.raises(MalformedError):
        partnership_pairings(5, 0, rotate=True)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips_through_json(name: str) -> None:
    cfg = preset(name)
    assert RulesConfig.from_json(cfg.to_json()) == cfg
    tweaked = RulesConfig.from_spec({"preset": name, "target": 250})
    assert tweaked.target == 250 and tweaked.preset == name
    assert RulesConfig.from_json(json.dumps(tweaked.to_dict())) == tweaked


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"preset": "nope"}, "unknown rules preset 'nope'"),
        ({"knock_limt": 5}, "unknown rules option(s) knock_limt"),
        ({"target": "100"}, "expected int"),
        ({"big_gin": 1}, "expected bool"),
        ({"shutout": "triple"}, "expected one of double_all"),
        ({"oklahoma": True, "knock_deck": True}, "choose one"),
        ({"knock_limit": -1}, "knock_limit must be"),
    ],
)
def test_bad_rules_are_refused_with_a_clear_message(spec: dict[str, object], message: str) -> None:
    with pytest.raises(MalformedError) as info:
        RulesConfig.from_spec(spec)
    assert message in str(info.value)
