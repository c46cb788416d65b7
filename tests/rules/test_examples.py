"""The rule books' worked examples, played through the engine (seeds 000-004)."""

from __future__ import annotations

import pytest

from arena.rules import (
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
from arena.rules.multiplayer import partnership_round
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


def test_seed004_partnership_win_30_lose_29_team_wins_1() -> None:
    from arena.rules import HandResult

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
    from arena.rules import parse_card

    return parse_card(text)
