"""Each phase, each error, each variant of a hand."""

from __future__ import annotations

import pytest
from gin_arena_core.rules import (
    BigGin,
    Card,
    Code,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    HandState,
    Knock,
    MalformedError,
    Meld,
    Pass,
    Phase,
    RuleError,
    TakeUpcard,
    apply,
    deal,
    legal_actions,
    observe,
    parse_action,
    parse_card,
    preset,
)

from tests.rules.decks import deck_for

STANDARD = preset("standard")
DEALER, ND = 0, 1
ND_HAND = "AS 2S 3S 7H 7D 7C KC KD KH 6C"
D_HAND = "5D 5H 5S 8D 9D TD JD QD 4H 2C"


def c(text: str):  # type: ignore[no-untyped-def]
    return parse_card(text)


def start(config=STANDARD, nd=ND_HAND, d=D_HAND, up="AD", stock="QS 9S 9C", **kw):  # type: ignore[no-untyped-def]
    return deal(config, deck_for(nd, d, up, stock), DEALER, **kw)


def expect_error(state: HandState, seat: int, action, code: Code) -> RuleError:  # type: ignore[no-untyped-def]
    with pytest.raises(RuleError) as info:
        apply(state, seat, action)
    err = info.value
    assert err.code == code, str(err)
    assert err.seat == seat and err.phase == state.phase and err.action == action
    assert tuple(legal_actions(state, seat)) == err.legal
    return err


# ---------------------------------------------------------------- the deal and first turn


def test_deal_ten_each_opponent_first_21st_is_upcard() -> None:
    s = start()
    assert {str(x) for x in s.hand(ND)} == set(ND_HAND.split())
    assert {str(x) for x in s.hand(DEALER)} == set(D_HAND.split())
    assert str(s.upcard) == "AD" and s.discard == (c("AD"),)
    assert s.stock_count == 31 and str(s.stock()[0]) == "QS"
    assert (s.phase, s.turn) == (Phase.UPCARD_OFFER, ND)


def test_first_turn_offer_goes_non_dealer_then_dealer_then_stock() -> None:
    s = start()
    assert legal_actions(s, ND) == [TakeUpcard(), Pass()]
    assert legal_actions(s, DEALER) == []
    s = apply(s, ND, Pass())
    assert (s.phase, s.turn) == (Phase.UPCARD_OFFER, DEALER)
    s = apply(s, DEALER, Pass())
    assert (s.phase, s.turn) == (Phase.DRAW, ND)
    assert legal_actions(s, ND) == [DrawStock()]
    expect_error(s, ND, DrawDiscard(), Code.WRONG_PHASE)
    s = apply(s, ND, DrawStock())
    assert c("QS") in s.hand(ND) and s.phase is Phase.DISCARD


def test_dealer_may_take_the_upcard_after_a_pass() -> None:
    s = apply(start(), ND, Pass())
    s = apply(s, DEALER, TakeUpcard())
    assert c("AD") in s.hand(DEALER) and s.turn == DEALER and s.phase is Phase.DISCARD
    expect_error(s, DEALER, Discard(c("AD")), Code.TAKEN_CARD_BACK)
    s = apply(s, DEALER, Discard(c("QD")))
    assert (s.phase, s.turn, s.discard[-1]) == (Phase.DRAW, ND, c("QD"))


def test_taking_back_the_taken_card_is_a_variant() -> None:
    s = apply(start(STANDARD.with_options(allow_take_back=True)), ND, TakeUpcard())
    assert Discard(c("AD")) in legal_actions(s, ND)
    s = apply(s, ND, Discard(c("AD")))
    assert s.discard[-1] == c("AD")


# ---------------------------------------------------------------- errors leave the state alone


def test_errors_carry_context_and_leave_state_unchanged() -> None:
    s = start()
    before = s
    expect_error(s, DEALER, Pass(), Code.NOT_YOUR_TURN)
    expect_error(s, ND, DrawStock(), Code.WRONG_PHASE)
    s = apply(apply(apply(s, ND, Pass()), DEALER, Pass()), ND, DrawStock())
    snapshot = s
    expect_error(s, ND, Discard(c("QH")), Code.NOT_HELD)
    expect_error(s, ND, Knock(c("7H")), Code.OVER_KNOCK_LIMIT)
    expect_error(s, ND, Gin(c("QS")), Code.NOT_GIN)
    expect_error(s, ND, BigGin(), Code.VARIANT_OFF)
    err = expect_error(s, ND, Knock(c("QS"), (Meld.of("AS 2S 3S"),)), Code.OVER_KNOCK_LIMIT)
    assert "limit is 10" in str(err) and "legal:" in str(err)
    assert s == snapshot and before == start()


def test_malformed_inputs_name_what_is_wrong() -> None:
    with pytest.raises(MalformedError, match="'ZZ' is not a card"):
        parse_card("ZZ")
    with pytest.raises(MalformedError) as info:
        Meld.of("AS 2S 4S")
    assert info.value.code is Code.NOT_A_MELD
    with pytest.raises(MalformedError, match="52 distinct"):
        deal(STANDARD, ["AS"] * 52, 0)
    with pytest.raises(MalformedError, match="cannot read action"):
        parse_action("discard")
    assert parse_action("knock 5C [AS 2S 3S | 7H 7D 7C]") == Knock(
        c("5C"), (Meld.of("AS 2S 3S"), Meld.of("7C 7D 7H"))
    )
    assert str(parse_action("defend [AS 2S 3S] layoff 4S>0")) == "defend [AS 2S 3S] layoff 4S>0"


@pytest.mark.parametrize(("action", "code"), [
    (Discard("TD"), Code.BAD_CARD),  # type: ignore[arg-type]
    (Discard(None), Code.BAD_CARD),  # type: ignore[arg-type]
    (Discard(True), Code.BAD_CARD),  # type: ignore[arg-type]
    (Discard(12), Code.BAD_CARD),  # type: ignore[arg-type]
    (Knock("QS"), Code.BAD_CARD),  # type: ignore[arg-type]
    (Knock(parse_card("QS"), (Meld(("AS", "2S", "3S"), True),)), Code.BAD_CARD),  # type: ignore[arg-type]
    (Knock(parse_card("QS"), "AS 2S 3S"), Code.NOT_A_MELD),  # type: ignore[arg-type]
    (Gin(parse_card("QS"), (1, 2)), Code.NOT_A_MELD),  # type: ignore[arg-type]
    (BigGin(([parse_card("AS")],)), Code.NOT_A_MELD),  # type: ignore[arg-type]
], ids=repr)
def test_hand_built_actions_of_the_wrong_shape_are_refused_as_malformed(action, code) -> None:  # type: ignore[no-untyped-def]
    """In-process bots build actions in Python: a wrong type is refused like a bad wire
    message (malformed, with the legal moves), never a crash and never a wrong card."""
    s = drawn()
    err = expect_error(s, ND, action, code)
    assert isinstance(err, MalformedError)
    assert s == drawn()


def test_hand_built_layoffs_of_the_wrong_shape_are_refused_as_malformed() -> None:
    s = apply(drawn(), ND, Knock(c("QS")))
    for layoffs in ((("4H", 0),), ((c("4H"), "0"),), ((c("4H"), True),), ((c("4H"),),)):
        with pytest.raises(MalformedError) as info:
            apply(s, DEALER, Defend((), layoffs))  # type: ignore[arg-type]
        assert info.value.code in (Code.BAD_LAYOFF, Code.BAD_CARD)


def test_card_objects_are_always_real_cards() -> None:
    for bad in (52, -1, True, "TD", 3.0):
        with pytest.raises(MalformedError, match=r"a card index is 0\.\.51"):
            Card(bad)  # type: ignore[arg-type]
    assert Card(0) == c("AC") and str(Card(51)) == "KS"


def test_card_notation() -> None:
    assert [str(c(x)) for x in ("TD", "AS", "KH", "10c", "2s")] == ["TD", "AS", "KH", "TC", "2S"]
    assert c("TD").value == 10 and c("AS").value == 1 and c("7H").rank == 7
    for bad in ("", "1S", "AX", "ASS", "T", None, 12):
        with pytest.raises(MalformedError):
            parse_card(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- knocking


def drawn(config=STANDARD, **kw):  # type: ignore[no-untyped-def]
    s = start(config, **kw)
    return apply(apply(apply(s, ND, Pass()), DEALER, Pass()), ND, DrawStock())


def test_knock_lists_and_best_arrangement() -> None:
    s = drawn()
    legal = legal_actions(s, ND)
    assert Knock(c("QS")) in legal and Knock(c("6C")) in legal
    assert not any(isinstance(a, Gin) for a in legal)
    s = apply(s, ND, Knock(c("QS")))
    assert s.knock is not None and s.knock.deadwood == 6 and s.phase is Phase.DEFEND
    assert s.turn == DEALER and legal_actions(s, DEALER) == [Defend()]


def test_knocker_may_choose_any_arrangement_within_the_limit() -> None:
    s = drawn(nd="2C 3C 4C 5C 7H 7D 7C KC KD KH", d="5D 5H 5S 8D 9D TD JD QD 4H 6S")
    # spreading 3-4-5 and keeping 2C out is a worse but legal arrangement (deadwood 2)
    melds = (Meld.of("3C 4C 5C"), Meld.of("7H 7D 7C"), Meld.of("KC KD KH"))
    done = apply(s, ND, Knock(c("QS"), melds))
    assert done.knock is not None and done.knock.kind == "knock"
    assert done.knock.deadwood == 2 and done.knock.deadwood_cards == (c("2C"),)
    # the best arrangement would have been gin
    assert Gin(c("QS")) in legal_actions(s, ND)
    # leaving the kings out is over the limit, even though a legal arrangement exists
    expect_error(s, ND, Knock(c("QS"), melds[:2]), Code.OVER_KNOCK_LIMIT)


def test_defender_chooses_melds_and_chained_layoffs() -> None:
    # knocker spreads 5H 6H 7H; the defender lays 8H then 9H on top of it (a chain)
    nd = "5H 6H 7H KC KD KS 2C 2D 2S AC"
    d = "8H 9H 4C 4D 4S JC QC TD TS 3H"
    s = drawn(nd=nd, d=d, up="AD", stock="QH")
    s = apply(s, ND, Knock(c("QH")))
    assert s.knock is not None and s.knock.deadwood == 1
    run = next(i for i, m in enumerate(s.knock.melds) if m.is_run)
    bad = Defend((Meld.of("4C 4D 4S"),), ((c("9H"), run),))
    expect_error(s, DEALER, bad, Code.BAD_LAYOFF)  # 9H does not touch 5-6-7
    good = Defend((Meld.of("4C 4D 4S"),), ((c("8H"), run), (c("9H"), run)))
    done = apply(s, DEALER, good)
    assert done.result is not None and done.result.deadwood[DEALER] == 10 + 10 + 10 + 10 + 3
    best = apply(s, DEALER, Defend()).result
    assert best is not None and best.deadwood[DEALER] == done.result.deadwood[DEALER]


def test_no_layoff_on_gin_and_set_layoff_takes_the_fourth() -> None:
    nd = "AS 2S 3S 4S 7H 7D 7C QC QD QH"
    d = "7S 5S 4D 5D 6D 9C 9D 9S KS 8H"
    s = apply(drawn(nd=nd, d=d, up="2C", stock="9H"), ND, Gin(c("9H")))
    expect_error(s, DEALER, Defend((), ((c("7S"), 1),)), Code.BAD_LAYOFF)
    r = apply(s, DEALER, Defend()).result
    assert r is not None and r.kind == "gin" and r.layoffs == ()
    # as a knock (not gin), 7S and 5S lay off on the 7s and the spade run
    knocker = "AS 2S 3S 4S 7H 7D 7C 2H 3H 2D"  # best: run + set, deadwood 2H 3H 2D = 7
    s2 = apply(drawn(nd=knocker, d=d, up="2C", stock="9H"), ND, Knock(c("9H")))
    assert s2.knock is not None and s2.knock.deadwood == 7
    r2 = apply(s2, DEALER, Defend()).result
    assert r2 is not None and {str(x) for x, _ in r2.layoffs} == {"7S", "5S"}


# ---------------------------------------------------------------- the wall


def play_to_wall(config):  # type: ignore[no-untyped-def]
    s = start(config)
    s = apply(apply(s, ND, Pass()), DEALER, Pass())
    while True:
        s = apply(s, s.turn, DrawStock())
        drawn_card = s.deck[s.stock_pos - 1]
        if s.stock_count == 2:
            return s, drawn_card
        s = apply(s, s.turn, Discard(drawn_card))


def test_wall_voids_the_hand() -> None:
    s, last = play_to_wall(STANDARD)
    assert s.stock_count == 2
    assert DrawStock() not in legal_actions(s, s.turn)
    s = apply(s, s.turn, Discard(last))
    assert s.result is not None and s.result.kind == "wall" and s.result.winner is None


GAME_COLONY_WALL = preset("gin20").with_options(wall_take_discard=True, wall_take_back=True)


def test_gin20_is_seed_002s_main_rule_the_wall_voids() -> None:
    s, last = play_to_wall(preset("gin20"))
    s = apply(s, s.turn, Discard(last))
    assert s.result is not None and s.result.kind == "wall"


def test_wall_variant_other_player_may_take_only_to_knock() -> None:
    cfg = GAME_COLONY_WALL
    s, last = play_to_wall(cfg)
    taker = 1 - s.turn
    s = apply(s, s.turn, Discard(last))
    assert s.phase is Phase.WALL_OFFER and s.turn == taker
    legal = legal_actions(s, taker)
    assert Pass() in legal
    if DrawDiscard() not in legal:
        expect_error(s, taker, DrawDiscard(), Code.WRONG_PHASE)
    r = apply(s, taker, Pass()).result
    assert r is not None and r.kind == "wall"


def wall_offer(config):  # type: ignore[no-untyped-def]
    """Both players draw and throw back until the wall; the third-last stock card is 7D,
    which would extend the dealer's 8D-QD run (dealer deadwood 4H 2C = 6)."""
    deck = deck_for(ND_HAND, D_HAND, "AD", "QS 9S 9C")
    i = deck.index(c("7D"))
    deck[i], deck[49] = deck[49], deck[i]
    s = deal(config, deck, DEALER)
    s = apply(apply(s, ND, Pass()), DEALER, Pass())
    while s.stock_count > 2:
        s = apply(s, s.turn, DrawStock())
        s = apply(s, s.turn, Discard(s.deck[s.stock_pos - 1]))
    return s


def test_wall_take_to_knock_same_card_back_allowed_seed002() -> None:
    s = wall_offer(GAME_COLONY_WALL)
    assert s.phase is Phase.WALL_OFFER and s.turn == DEALER and s.discard[-1] == c("7D")
    assert legal_actions(s, DEALER) == [DrawDiscard(), Pass()]
    s = apply(s, DEALER, DrawDiscard())
    assert s.phase is Phase.WALL_DISCARD
    legal = legal_actions(s, DEALER)
    assert Knock(c("7D")) in legal and Knock(c("4H")) in legal
    assert not any(isinstance(a, Discard) for a in legal)
    expect_error(s, DEALER, Discard(c("4H")), Code.WRONG_PHASE)
    s = apply(s, DEALER, Knock(c("4H")))
    assert s.knock is not None and s.knock.deadwood == 2 and s.phase is Phase.DEFEND


def test_wall_take_must_discard_another_card_seed004() -> None:
    cfg = STANDARD.with_options(wall_take_discard=True)
    s = apply(wall_offer(cfg), DEALER, DrawDiscard())
    expect_error(s, DEALER, Knock(c("7D")), Code.TAKEN_CARD_BACK)
    assert apply(s, DEALER, Knock(c("4H"))).knock is not None


def test_wall_take_refused_when_it_cannot_knock() -> None:
    cfg = STANDARD.with_options(wall_take_discard=True, knock_limit=1)
    s = wall_offer(cfg)  # with 7D the dealer's best is 2C = 2 > 1
    assert legal_actions(s, DEALER) == [Pass()]
    expect_error(s, DEALER, DrawDiscard(), Code.WRONG_PHASE)
    assert apply(s, DEALER, Pass()).result == apply(s, DEALER, Pass()).result


# ---------------------------------------------------------------- variants


def test_oklahoma_upcard_sets_limit_and_spade_doubles() -> None:
    okl = preset("oklahoma")
    assert start(okl, up="7S").knock_limit == 7
    assert start(okl, up="7S").multiplier == 2
    assert start(okl, up="QC").knock_limit == 10
    assert start(okl, up="AD").knock_limit == 0  # ace: gin only (seeds 001, 004)
    assert start(okl.with_options(oklahoma_ace_gin_only=False), up="AD").knock_limit == 1
    s = drawn(okl, up="5C")  # ND deadwood after QS discard is 6 > 5
    assert not any(isinstance(a, Knock) for a in legal_actions(s, ND))
    expect_error(s, ND, Knock(c("QS")), Code.OVER_KNOCK_LIMIT)
    s = apply(drawn(okl, up="8S", d="5D 5H 5S 9D TD JD 8C 4H 3D 2C"), ND, Knock(c("QS")))
    r = apply(s, DEALER, Defend()).result  # knock 6 against 17, a spade upcard doubles
    assert r is not None and (r.kind, r.multiplier, r.points) == ("knock", 2, 22)


def test_knock_deck_card_sets_the_limit() -> None:
    cfg = preset("knock_deck")
    s = deal(cfg, deck_for(ND_HAND + " QS", D_HAND), DEALER, knock_card="6H")
    assert s.knock_limit == 6 and s.upcard is None and s.phase is Phase.DISCARD
    assert len(s.hand(ND)) == 11 and s.turn == ND
    assert Knock(c("QS")) in legal_actions(s, ND)  # 11-card start: knock before discarding
    with pytest.raises(MalformedError, match="knock card"):
        deal(cfg, deck_for(ND_HAND + " QS", D_HAND), DEALER)
    assert deal(cfg, deck_for(ND_HAND + " QS", D_HAND), DEALER, knock_card="AC").knock_limit == 0


def test_eleven_card_start() -> None:
    s = deal(preset("eleven_card"), deck_for(ND_HAND + " QS", D_HAND), DEALER)
    assert s.discard == () and len(s.hand(ND)) == 11
    s = apply(s, ND, Discard(c("QS")))
    assert s.turn == DEALER and legal_actions(s, DEALER) == [DrawStock(), DrawDiscard()]


def test_big_gin() -> None:
    cfg = preset("big_gin")
    s = drawn(cfg, nd="AS 2S 3S 4S 7H 7D 7C QC QD QH", d="7S 4D 5D 6D 9C 9D 9S KS 8H 2H",
              up="2C", stock="5S")
    assert BigGin() in legal_actions(s, ND)
    s = apply(s, ND, BigGin())
    r = apply(s, DEALER, Defend()).result
    assert r is not None and r.kind == "big_gin" and r.points == 31 + r.deadwood[DEALER]


def test_sequence_gin_runs_only_and_bonuses() -> None:
    cfg = preset("sequence")
    with pytest.raises(MalformedError):
        Meld.of("7H 7D 7C", runs_only=True)
    # 6-card run with J Q K: +6 long-run bonus, +3 face cards
    nd = "8S 9S TS JS QS KS AH 2H 3H 6C"
    s = drawn(cfg, nd=nd, up="9C", stock="QH")
    assert s.knock_limit == 9
    s = apply(s, ND, Knock(c("QH")))
    r = apply(s, DEALER, Defend()).result
    # dealer: 8D-QD run; 5D 5H 5S are no meld here; 4H then 5H lay off on AH-3H: 5+5+2 = 12
    assert r is not None and r.kind == "knock" and r.deadwood == (12, 6)
    assert [str(x) for x, _ in r.layoffs] == ["4H", "5H"]
    assert (r.bonus, r.points) == (9, 12 + 9)  # seed 003 Oklahoma: the opponent's whole count


# ---------------------------------------------------------------- redaction


def test_observe_hides_what_a_seat_must_not_see() -> None:
    s = apply(apply(start(), ND, Pass()), DEALER, TakeUpcard())
    v = observe(s, ND)
    assert set(v.hand) == set(s.hand(ND))
    assert v.opponent_known == (c("AD"),) and v.hand_sizes == (11, 10)
    assert v.legal == () and v.turn == DEALER
    spectator = observe(s, None)
    assert spectator.hand == () and spectator.legal == () and spectator.opponent_known == ()
    s = apply(s, DEALER, Discard(c("QD")))
    s = apply(s, ND, DrawStock())
    v0 = observe(s, DEALER)
    assert v0.history[-1].card is None and v0.history[-1].kind == "draw_stock"
    hidden = observe(s._replace(config=s.config.with_options(discard_pile_visible=False)), DEALER)
    assert hidden.discard_pile == (c("QD"),)
    s = apply(s, ND, Knock(c("QS")))
    v = observe(s, DEALER)
    assert v.knock is not None and v.knock.discard is None  # the face-down card stays hidden
