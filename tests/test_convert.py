"""The protobuf translation is exact both ways (the SDK sees what observe built)."""

from __future__ import annotations

import random

import pytest
from gin_arena_core.protocol import pb
from gin_arena_core.protocol.convert import action_from_pb, action_to_pb, view_from_pb, view_to_pb
from gin_arena_core.rules import (
    CARDS,
    PRESETS,
    MalformedError,
    apply,
    deal,
    legal_actions,
    observe,
    preset,
)
from gin_arena_core.rules.actions import parse_action


@pytest.mark.parametrize("text", [
    "take_upcard", "pass", "draw_stock", "draw_discard", "discard TD", "discard AC", "knock 5C",
    "gin 5C [AS 2S 3S | 7H 7D 7C]", "big_gin", "big_gin [AS 2S 3S]", "defend",
    "defend [AS 2S 3S] layoff 4S>0 5S>0",
])
def test_actions_round_trip(text: str) -> None:
    action = parse_action(text)
    assert action_from_pb(action_to_pb(action)) == action


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_views_round_trip_for_every_phase(name: str) -> None:
    cfg = preset(name)
    rng = random.Random(name)
    for g in range(6):
        deck = list(CARDS)
        rng.shuffle(deck)
        s = deal(cfg, deck, g % 2, CARDS[0] if cfg.knock_deck else None)
        while not s.is_over:
            for seat in (0, 1):
                view = observe(s, seat)
                back = view_from_pb(view_to_pb(view), [action_to_pb(a) for a in view.legal],
                                    runs_only=cfg.runs_only)
                assert back._replace(knock=None) == view._replace(knock=None)
                if view.knock is not None:
                    assert back.knock is not None
                    assert (back.knock.melds, back.knock.deadwood, back.knock.kind) == (
                        view.knock.melds, view.knock.deadwood, view.knock.kind)
            s = apply(s, s.turn, rng.choice(legal_actions(s, s.turn)))


@pytest.mark.parametrize(("msg", "message"), [
    (pb.Action(), "empty action"),
    (pb.Action(discard=pb.CardMove(card="1S")), "discard.card: '1S' is not a card"),
    (pb.Action(discard=pb.CardMove()), "discard.card: no card given"),
    (pb.Action(knock=pb.Knock(discard="5C", melds=[pb.Meld(cards=["AS", "3S", "5S"])])),
     "knock.melds[0]: AS 3S 5S is not a meld"),
    (pb.Action(defend=pb.Defend(layoffs=[pb.Layoff(card="XX")])), "defend.layoffs[0].card"),
])
def test_bad_actions_name_the_field(msg: pb.Action, message: str) -> None:
    with pytest.raises(MalformedError) as info:
        action_from_pb(msg)
    assert message in str(info.value)


def test_the_score_sheet_round_trips_with_three_hollywood_games() -> None:
    """A request's view carries every game's sheet (Hollywood: three), public as it is."""
    from arena.match.driver import MatchDriver
    from sample_bots import GreedyBot

    driver = MatchDriver("h", preset("hollywood"), ("a", "b"), seed=4)
    bots = (GreedyBot(), GreedyBot())
    scored = False
    for _ in range(3000):
        if driver.is_over:
            break
        view = driver.next_request().view
        back = view_from_pb(view_to_pb(view), [action_to_pb(a) for a in view.legal])
        assert len(view.sheets) == 3 and back.sheets == view.sheets
        assert back.scores == view.scores == next(
            (s.points for s in view.sheets if s.winner is None), view.sheets[-1].points)
        scored = scored or any(s.points != (0, 0) for s in view.sheets[1:])
        driver.submit(bots[driver.pending[0]].decide(view))
        driver.drain()
    assert scored  # the later games were visible once they had points


def test_a_decision_request_carries_its_view_legal_moves_times_and_events() -> None:
    """What goes on the wire for a request, read back from its bytes, is the seat's view,
    its legal moves, its clocks and the move events that ride along, in order."""
    from arena.match.driver import MatchDriver
    from arena.server.wire import event_to_pb, is_move_event, server_message
    from sample_bots import GreedyBot

    driver = MatchDriver("w", preset("standard"), ("a", "b"), seed=11)
    bots = (GreedyBot(), GreedyBot())
    waiting: list[list[pb.Event]] = [[], []]
    carried = 0
    for n in range(3000):
        if driver.is_over:
            break
        seat = driver.seat_to_act()
        request = driver.next_request(4000 + n, 60000 - n)
        for to, message in driver.drain():
            if is_move_event(message):
                waiting[to].append(event_to_pb(message))  # type: ignore[arg-type]
        sent = pb.ServerMessage.FromString(
            server_message(request, waiting[seat]).SerializeToString()).request
        view = request.view
        assert view_from_pb(sent.view, sent.legal)._replace(knock=None) == view._replace(
            knock=None)
        assert list(sent.legal) == [action_to_pb(a) for a in view.legal]
        assert (sent.request_id, sent.time_left_ms, sent.bank_left_ms) == (
            request.request_id, 4000 + n, 60000 - n)
        assert list(sent.events) == waiting[seat]
        carried += len(waiting[seat])
        waiting[seat] = []
        driver.submit(bots[seat].decide(view))
    assert driver.is_over and carried > 100


def test_a_defaulted_move_names_its_seat_and_card_like_an_opponents_move() -> None:
    from gin_arena_core.rules import Discard, PublicEvent, parse_card

    from arena.match.messages import Defaulted, OpponentActed
    from arena.server.wire import event_to_pb

    card = parse_card("TD")
    event = PublicEvent(1, "discard", card)
    own = event_to_pb(Defaulted(7, Discard(card), "no answer within 100 ms", event))
    theirs = event_to_pb(OpponentActed(event))
    mine, seen = own.own_action_defaulted, theirs.opponent_action
    assert (mine.seat, mine.card) == (seen.seat, seen.card) == (1, "TD")
    assert mine.action.WhichOneof("kind") == seen.action.WhichOneof("kind") == "discard"


@pytest.mark.parametrize(("action", "problem"), [
    (pb.Action(knock=pb.Knock(discard="TD", melds=[pb.Meld(cards=["AS", "2S", "3S"])] * 5)),
     "5 melds"),
    (pb.Action(big_gin=pb.BigGin(melds=[pb.Meld(cards=["AS"] * 12)])), "12 cards"),
    (pb.Action(defend=pb.Defend(layoffs=[pb.Layoff(card="AS", meld_index=0)] * 12)),
     "12 layoffs"),
])
def test_an_action_with_too_many_parts_is_refused_before_it_is_read(
        action: pb.Action, problem: str) -> None:
    with pytest.raises(MalformedError, match=problem):
        action_from_pb(action)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_request_written_directly_is_the_same_bytes_as_the_message_built(name: str) -> None:
    """``encode_request`` (what the server sends) writes exactly what ``server_message``
    would serialise, in every phase of every preset, with the events riding along (an
    opponent's move, a defaulted one) and clocks small, large and zero; also with each
    seat's ``HistoryMemo`` kept from its last request, across hands."""
    from gin_arena_core.protocol.convert import HistoryMemo
    from gin_arena_core.rules import BigGin, Gin, Knock

    from arena.match.driver import MatchDriver
    from arena.match.messages import Defaulted, OpponentActed
    from arena.server.wire import (
        encode_event,
        encode_events,
        encode_request,
        event_to_pb,
        is_move_event,
        server_message,
    )

    rng = random.Random(name)
    requests = revealed = 0
    for seed in range(2):
        driver = MatchDriver("w", preset(name), ("a", "b"), seed=seed)
        waiting: list[list[OpponentActed | Defaulted]] = [[], []]
        memos = (HistoryMemo(), HistoryMemo())
        for _ in range(1500):
            if driver.is_over:
                break
            seat = driver.seat_to_act()
            request = driver.next_request(rng.choice([0, 7, 4000, 200_000]),
                                          rng.choice([0, 60_000, 3_000_000]))
            for to, message in driver.drain():
                if is_move_event(message):
                    waiting[to].append(message)  # type: ignore[arg-type]
            built = server_message(request, [event_to_pb(m) for m in waiting[seat]])
            encoded = [encode_event(m) for m in waiting[seat]]
            assert encode_request(request, encoded) == built.SerializeToString()
            assert encode_request(request, encoded, memos[seat]) == built.SerializeToString()
            assert encode_events(encoded) == [
                pb.ServerMessage(event=event_to_pb(m)).SerializeToString()
                for m in waiting[seat]]
            requests += 1
            revealed += request.view.knock is not None
            waiting[seat] = []
            legal = request.view.legal
            going_out = [a for a in legal if isinstance(a, Knock | Gin | BigGin)]
            action = rng.choice(going_out if going_out and rng.random() < 0.7 else legal)
            if rng.random() < 0.05:  # played for the seat, as on a timeout
                driver.submit(driver.default_action(), defaulted="no answer within 5 ms")
            else:
                driver.submit(action)
    assert requests > 100 and revealed > 0
