"""The rule books' worked examples, played through the engine (seeds 000-004)."""

from __future__ import annotations

import pytest
from gin_arena_core.rules import (
    Defend,
    DrawStock,
    Gin,
    Knock,
    Meld,
    Pass,
    apply,
    best_melds,
    deal,
    min_deadwood,
    preset,
)
from gin_arena_core.rules.multiplayer import partnership_round

from tests.rules.decks import deck_for

STANDARD = preset("standard")
DEALER, NON_DEALER = 0, 1


def knock_after_draw(config, non_dealer, dealer, upcard, drawn, action):
    """Both pass the upcard, the non-dealer draws ``drawn`` and plays ``action``."""
    state = deal(config, deck_for(non_dealer, dealer, upcard, drawn), DEALER)
    state = apply(state, NON_DEALER, Pass())
    state = apply(state, DEALER, Pass())
    state = apply(state, NON_DEALER, DrawStock())
    return apply(state, NON_DEALER, action)


def test_seed000_gin_with_defender_deadwood_k_8_3_a_scores_47() -> None:
    # seed 000: "If the deadwood left is K, 8, 3, A ... 22 ... added to the winner's 25"
    state = knock_after_draw(
        STANDARD,
        non_dealer="AS 2S 3S 4S 7H 7D 7C QC QD QH",
        dealer="4D 5D 6D 9C 9D 9S KS 8H 3C AH",
        upcard="2C", drawn="9H", action=Gin(parse("9H")),
    )
    state = apply(state, DEALER, Defend())
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.points) == ("gin", NON_DEALER, 47)
    assert result.deadwood[DEALER] == 22
    assert result.layoffs == ()  # never on a gin


def test_seed000_layoff_reduces_22_to_6_and_undercut_6_vs_9_scores_23() -> None:
    # seed 000: knocker spreads T-9-8-7 of hearts, four deuces, a 5 and a 4; the opponent's
    # deadwood J, 6, 3, 3 (22) drops to 6 by laying the J and 6 of hearts on the heart run.
    # seed 000: "opponent ... 6, compared with the knocker's count of 9 ... 3 plus 20 = 23"
    state = knock_after_draw(
        STANDARD,
        non_dealer="TH 9H 8H 7H 2C 2D 2H 2S 5C QC",
        dealer="JH 6H 3C 3D KC KD KS 9C 9D 9S",
        upcard="8C", drawn="4D", action=Knock(parse("QC")),
    )
    assert state.knock is not None and state.knock.deadwood == 9
    assert min_deadwood("JH 6H 3C 3D KC KD KS 9C 9D 9S") == 22
    state = apply(state, DEALER, Defend())
    result = state.result
    assert result is not None
    assert result.deadwood == (6, 9)
    assert {str(c) for c, _ in result.layoffs} == {"JH", "6H"}
    assert (result.kind, result.winner, result.points) == ("undercut", DEALER, 23)


def test_seed000_knock_6_against_17_scores_11() -> None:
    state = knock_after_draw(
        STANDARD,
        non_dealer="AS 2S 3S 7H 7D 7C KC KD KH 6C",
        dealer="5D 5H 5S 9D TD JD 8C 4H 3D 2C",
        upcard="AD", drawn="QS", action=Knock(parse("QS")),
    )
    state = apply(state, DEALER, Defend())
    result = state.result
    assert result is not None
    assert result.deadwood == (17, 6)
    assert (result.kind, result.winner, result.points) == ("knock", NON_DEALER, 11)


def test_seed000_equal_counts_are_an_undercut_worth_only_the_bonus() -> None:
    state = knock_after_draw(
        STANDARD,
        non_dealer="AS 2S 3S 7H 7D 7C KC KD KH 6C",
        dealer="5D 5H 5S 8D 9D TD JD QD 4H 2C",
        upcard="AD", drawn="QS", action=Knock(parse("QS")),
    )
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert (result.kind, result.winner, result.points) == ("undercut", DEALER, 20)


@pytest.mark.parametrize(("name", "expected"), [("gin25", 25), ("gin20", 10), ("big_gin", 10)])
def test_undercut_bonus_per_rule_book(name: str, expected: int) -> None:
    # seed 001: undercut 25; seed 002: 10; seed 003 (online rules): 10
    state = knock_after_draw(
        preset(name),
        non_dealer="AS 2S 3S 7H 7D 7C KC KD KH 6C",
        dealer="5D 5H 5S 8D 9D TD JD QD 4H 2C",
        upcard="AD", drawn="QS", action=Knock(parse("QS")),
    )
    result = apply(state, DEALER, Defend()).result
    assert result is not None and result.points == expected


def test_seed003_knock_8_against_10_scores_2() -> None:
    # seed 003: "if a player knocks with 8, and the defender has 10 ... receives 2 points"
    state = knock_after_draw(
        preset("big_gin"),
        non_dealer="AS 2S 3S 7H 7D 7C KC KD KH 8C",
        dealer="5D 5H 5S 8D 9D TD JD QD 4H 6C",
        upcard="AD", drawn="QS", action=Knock(parse("QS")),
    )
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert (result.kind, result.points) == ("knock", 2)


# seed 004's knocker: A-2-3 of hearts, three sevens, J-Q-K of spades and the 5 of clubs
# (a count of 5) after drawing and knocking with the 9 of diamonds
def knock_with_5(dealer: str):  # type: ignore[no-untyped-def]
    return knock_after_draw(STANDARD, non_dealer="AH 2H 3H 7C 7D 7S JS QS KS 5C",
                            dealer=dealer, upcard="6D", drawn="9D", action=Knock(parse("9D")))


def test_seed004_defender_lays_4_and_5_of_hearts_on_the_knockers_ace_2_3() -> None:
    # seed 004: "if the player that knocked had a meld of ace, two, and three of hearts and
    # the player that did not knock had the four and five of hearts, he is permitted to lay
    # off those two cards"
    state = knock_with_5("4H 5H 8C 8D 8H TC TD TH 2C 6S")
    hearts = next(i for i, m in enumerate(state.knock.melds) if "AH" in map(str, m.cards))
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert sorted((str(c), i) for c, i in result.layoffs) == [("4H", hearts), ("5H", hearts)]
    assert result.deadwood == (8, 5)  # 2C + 6S left
    assert (result.kind, result.winner, result.points) == ("knock", NON_DEALER, 3)


def test_seed004_underknock_knock_5_defender_lays_off_3_cards_and_keeps_a_3() -> None:
    # seed 004: "your opponent knocked with 5 points ... a hand consisting of 2 melds of three
    # cards each and 4 unmatched cards ... 3 of your unmatched cards can be laid off ... If
    # you only have a 3 left, then you have successfully underknocked your opponent"
    state = knock_with_5("9C 9S 9H QC QD QH 4H 7H TS 3D")
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert {str(c) for c, _ in result.layoffs} == {"4H", "7H", "TS"}
    assert result.deadwood == (3, 5) and result.deadwood_cards[DEALER] == (parse("3D"),)
    # the underknock is the undercut: the difference plus the bonus
    assert (result.kind, result.winner, result.points) == ("undercut", DEALER, 2 + 20)


def test_seed004_gin_off_laying_off_every_unmatched_card_is_an_undercut_from_zero() -> None:
    # seed 004: "If you are able to lay off all of your unmatched cards on an opponent's
    # knock hand, it establishes what is called a gin off" (3 melds and 1 card laid off). It
    # names no score of its own: the engine scores the undercut from a count of zero.
    state = knock_with_5("9C 9S 9H QC QD QH 2C 3C 4C 4H")
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert [str(c) for c, _ in result.layoffs] == ["4H"] and result.deadwood == (0, 5)
    assert (result.kind, result.winner, result.points) == ("undercut", DEALER, 5 + 20)


def test_seed001_gin_against_a_hand_with_no_unmatched_cards_scores_the_bonus_only() -> None:
    # seed 001: "Even if the other player has no unmatched cards at all, the knocker gets
    # the 25-point bonus the other player scores nothing."
    state = knock_after_draw(
        preset("gin25"),
        non_dealer="AS 2S 3S 4S 7H 7D 7C QC QD QH", dealer="3D 4D 5D 6D 9C 9D 9S KS KH KD",
        upcard="2C", drawn="9H", action=Gin(parse("9H")),
    )
    result = apply(state, DEALER, Defend()).result
    assert result is not None
    assert result.deadwood == (0, 0)
    assert (result.kind, result.winner, result.points) == ("gin", NON_DEALER, 25)


def test_seed001_partnership_game_first_team_to_125_wins() -> None:
    from gin_arena_core.rules import HandResult
    from gin_arena_core.rules.multiplayer import PartnershipState, partnership_next

    game = PartnershipState(target=125)
    won, lost = HandResult("gin", 0, 70), HandResult("knock", 1, 10)
    game = partnership_next(game, [(0, won), (0, lost)])  # team 0: +70 -10 = 60
    assert (game.points, game.winner) == ((60, 0), None)
    # team 0 wins both tables (at the second it sits in seat 1): it scores the total, 80
    game = partnership_next(game, [(0, won), (1, lost)])
    assert (game.points, game.winner, game.rounds) == ((140, 0), 0, 2)


def test_seed004_partnership_win_30_lose_29_team_wins_1() -> None:
    from gin_arena_core.rules import HandResult

    won = HandResult("knock", 0, 30)
    lost = HandResult("knock", 1, 29)
    # both tables have team 0 in seat 0: team 0 won 30 at one and lost 29 at the other
    assert partnership_round([(0, won), (0, lost)]).team == 0
    assert partnership_round([(0, won), (0, lost)]).points == 1
    both = partnership_round([(0, won), (1, lost)])  # team 0 sits in seat 1 at table 2
    assert (both.team, both.points) == (0, 59)
    wall = HandResult("wall", None, 0)
    assert partnership_round([(0, wall), (0, lost)]).points == 29  # only the other hand counts


def test_seed000_usual_gin_shapes() -> None:
    # "one meld of four cards, and two melds of three cards each"; "two sequences of five"
    assert min_deadwood("AS 2S 3S 4S 7H 7D 7C QC QD QH") == 0
    assert min_deadwood("AS 2S 3S 4S 5S 6H 7H 8H 9H TH") == 0
    assert sorted(len(m.cards) for m in best_melds("AS 2S 3S 4S 5S 6H 7H 8H 9H TH")) == [5, 5]


def test_seed004_count_examples() -> None:
    # "if you have a 2 and a 3 that are unmatched, then your count is 5 ... 2, 2, and a 3 ... 7"
    assert min_deadwood("2C 3D") == 5
    assert min_deadwood("2C 2D 3H") == 7
    # a ten, jack, queen or king is 10; an ace is 1
    assert min_deadwood("TC JD QH KS AC") == 41


def test_ace_is_low_only() -> None:
    assert Meld.of("AS 2S 3S").is_run
    with pytest.raises(ValueError, match="not a meld"):
        Meld.of("QS KS AS")
    assert min_deadwood("QS KS AS") == 21


def parse(text: str):  # type: ignore[no-untyped-def]
    from gin_arena_core.rules import parse_card

    return parse_card(text)
