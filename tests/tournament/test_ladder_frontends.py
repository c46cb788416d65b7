"""Several ladder front ends on one store: matchmaking sees every bot, whichever front end it
reached; a bot is sent to the front end that hosts its match (Redirect), and everything
(bots, tokens, ratings, the leaderboard) is shared. Real gRPC on 127.0.0.1, real SDK bots,
on SQLite and, where one answers, on PostgreSQL."""

from __future__ import annotations

from functools import partial

import grpc
import pytest
import trio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_sdk.client import run as run_bot

from arena.match.messages import TimeControl
from arena.store import open_store
from arena.tournament.ladder import Ladder, LadderOptions
from arena.tournament.registry import register
from tests.tournament.bots import Greedy, Sloppy

pytestmark = pytest.mark.timeout(90)

FAST = LadderOptions(time_control=TimeControl(decision_ms=2000, hello_timeout_ms=5000),
                     seed="frontends", settle_s=0.05)



def leaderboard(address: str) -> dict[str, pb.LeaderboardEntry]:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        reply = stub.Leaderboard(pb.LeaderboardRequest(limit=0), timeout=10)
    return {e.bot: e for e in reply.entries}


def test_bots_at_two_front_ends_are_paired_across_them(db: str) -> None:
    setup = open_store(db)
    tok_a, tok_b = register(setup, "alpha"), register(setup, "beta")
    played: dict[str, int] = {}
    boards: list[dict[str, pb.LeaderboardEntry]] = []
    fronts: list[Ladder] = []

    async def main() -> None:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for _ in range(2):
                    ladder = Ladder(open_store(db), FAST)
                    fronts.append(ladder)
                ports = [await nursery.start(f.serve) for f in fronts]
                first, second = (f"127.0.0.1:{p}" for p in ports)
                async with trio.open_nursery() as bots:  # alone at its front end each
                    bots.start_soon(partial(trio.to_thread.run_sync, lambda: played.update(
                        alpha=run_bot(Greedy(), first, token=tok_a, matches=2))))
                    bots.start_soon(partial(trio.to_thread.run_sync, lambda: played.update(
                        beta=run_bot(Sloppy(), second, token=tok_b, matches=2))))
                for address in (first, second):
                    boards.append(await trio.to_thread.run_sync(leaderboard, address))
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
        assert played == {"alpha": 2, "beta": 2}
        matches = setup.matches("ladder")
        assert len(matches) == 2 and matches[0].seed == matches[1].seed  # one duplicate deal
        assert {m.bots for m in matches} == {("alpha", "beta"), ("beta", "alpha")}
        # every match was hosted by one front end and recorded once, whichever it was
        assert sum(f.matches_played for f in fronts) == 2
        for board in boards:  # either front end's leaderboard shows every game
            assert board["alpha"].games == 2 and board["beta"].games == 2
            assert board["alpha"].wins + board["beta"].wins == 2
    finally:
        for f in fronts:
            f.store.close()
        setup.close()


def test_a_seat_key_is_one_time_and_only_for_its_bot(db: str) -> None:
    """A guessed, used or foreign seat key gets NOT_FOUND: no bot takes another's seat."""
    setup = open_store(db)
    tok_a, tok_b = register(setup, "alpha"), register(setup, "beta")
    codes: dict[str, grpc.StatusCode] = {}

    def hello(address: str, token: str, seat_key: str) -> grpc.StatusCode:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            msg = pb.BotMessage(hello=pb.Hello(name="x", protocol_version=PROTOCOL_VERSION,
                                               token=token, seat_key=seat_key))
            try:
                for _ in stub.Play(iter([msg]), timeout=10):
                    pass
            except grpc.RpcError as e:
                return e.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK

    async def main() -> None:
        with trio.fail_after(30):
            ladder = Ladder(open_store(db), FAST)
            async with trio.open_nursery() as nursery:
                port = await nursery.start(ladder.serve)
                address = f"127.0.0.1:{port}"
                codes["guessed"] = await trio.to_thread.run_sync(hello, address, tok_a, "x" * 24)

                async def keep() -> None:  # a seat kept for beta
                    await ladder.arena.expect("the-key-for-beta", "beta", 5.0, False)

                nursery.start_soon(keep)
                await trio.sleep(0.1)
                codes["alpha"] = await trio.to_thread.run_sync(hello, address, tok_a,
                                                               "the-key-for-beta")
                nursery.cancel_scope.cancel()
            ladder.store.close()

    try:
        trio.run(main)
    finally:
        setup.close()
    assert codes == {"guessed": grpc.StatusCode.NOT_FOUND, "alpha": grpc.StatusCode.NOT_FOUND}
    assert tok_b  # beta never came: its seat simply lapses


def test_a_bot_sent_before_its_seat_is_kept_still_gets_it(db: str) -> None:
    """Its own front end may redirect it before the host has read the pairing: the host
    keeps the early Hello a moment instead of turning it away (it would then count as a
    no-show)."""
    setup = open_store(db)
    token = register(setup, "beta")
    got: list[object] = []

    def early_hello(address: str) -> None:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            msg = pb.BotMessage(hello=pb.Hello(name="beta", protocol_version=PROTOCOL_VERSION,
                                               token=token, seat_key="early-key-" + "k" * 16))
            try:
                for _ in stub.Play(iter([msg]), timeout=10):
                    pass
            except grpc.RpcError as e:
                got.append(e.code())

    async def main() -> None:
        with trio.fail_after(30):
            ladder = Ladder(open_store(db), FAST)
            async with trio.open_nursery() as nursery:
                port = await nursery.start(ladder.serve)
                nursery.start_soon(partial(trio.to_thread.run_sync, early_hello,
                                           f"127.0.0.1:{port}"))
                await trio.sleep(0.5)  # the bot is here first
                seat = await ladder.arena.expect("early-key-" + "k" * 16, "beta", 5.0, False)
                got.append(seat is not None and seat.name == "beta")
                if seat is not None:
                    seat.finish()
                await trio.sleep(0.2)
                nursery.cancel_scope.cancel()
            ladder.store.close()

    try:
        trio.run(main)
    finally:
        setup.close()
    assert got and got[0] is True, got
