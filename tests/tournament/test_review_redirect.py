"""Review findings on ladder front ends and Redirect (branch review): what a failed
redirect does to an SDK bot, and what a bot that ignores its redirects costs the bot it
was paired with. Real gRPC on 127.0.0.1, a real SQLite file, real SDK bots."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

import grpc
import pytest
import trio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_sdk.client import run as run_bot

from arena.store.base import Pairing
from arena.store.sqlite import SqliteStore
from arena.tournament.ladder import Ladder
from arena.tournament.matchmaker import spec_for
from arena.tournament.registry import register
from tests.tournament.bots import Greedy
from tests.tournament.test_ladder_frontends import FAST

pytestmark = pytest.mark.timeout(90)


def test_a_bot_whose_redirect_fails_waits_at_its_own_front_end_again(tmp_path: Path) -> None:
    """A pairing whose host cannot keep the seat any more (its bot left first, the host
    restarted, or the seat lapsed): the guest is redirected, gets NOT_FOUND there, and
    ``_follow`` says it goes "back to the arena"; it used to return 0 from ``run`` (the bot
    left the ladder) instead."""
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as setup:
        token = register(setup, "alpha")
    returned: list[int] = []
    back: list[bool] = []

    async def main() -> None:
        ladder = Ladder(SqliteStore(db), FAST)
        async with trio.open_nursery() as nursery:
            port = await nursery.start(ladder.serve)
            address = f"127.0.0.1:{port}"
            nursery.start_soon(partial(trio.to_thread.run_sync, lambda: returned.append(
                run_bot(Greedy(), address, token=token, matches=1, connect_timeout_s=10))))
            with trio.fail_after(10):
                while not ladder.arena.waiting() or not ladder.matchmaker.is_leader:
                    await trio.sleep(0.05)
            # a pairing made for alpha, hosted by a front end that no longer keeps its seat
            spec = spec_for(ladder.scope, ladder.secret, ladder.seed, "alpha", "ghost", 0)
            gone = Pairing(spec, "gone:1:x", address, ladder.frontend, "alpha", "k" * 24)
            await trio.to_thread.run_sync(ladder.store.add_pairings, ladder.scope, [gone],
                                          ladder.frontend)
            await trio.sleep(0.5)  # sent off; the host waits SEAT_EARLY_S before refusing
            with trio.move_on_after(3 + 5):
                while not returned and not any(
                        name == "alpha" for _, name in ladder.arena.waiting()):
                    await trio.sleep(0.05)
            back.append(any(name == "alpha" for _, name in ladder.arena.waiting()))
            ladder.arena.close_lobby()  # ends a waiting SDK bot cleanly
            with trio.move_on_after(5):
                while not returned:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        ladder.store.close()

    trio.run(main)
    assert back == [True], f"run() returned {returned} after the failed redirect"


def test_a_bot_that_ignores_its_redirects_stalls_its_opponent_for_free(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """zed waits at front end 2 and, whenever it is redirected to front end 1 to play
    alpha, says Hello at front end 2 again instead. Each time alpha's seat is held for
    ``SEAT_KEPT_S`` (10 s; 2 s here) and nothing is recorded: alpha plays nothing and zed
    loses nothing, as long as zed likes. A no-show should cost the bot that did not come
    (as it does in tournaments), not the one that waited."""
    monkeypatch.setattr("arena.tournament.ladder.SEAT_KEPT_S", 2.0)
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as setup:
        tok_a, tok_z = register(setup, "alpha"), register(setup, "zed")
    stop = threading.Event()
    seen = {"redirects": 0, "matches": 0}
    played: list[int] = []

    def griefer(address: str) -> None:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            while not stop.is_set():
                hello = pb.BotMessage(hello=pb.Hello(name="zed", token=tok_z,
                                                     protocol_version=PROTOCOL_VERSION))
                try:
                    for msg in stub.Play(iter([hello]), timeout=3):
                        kind = msg.WhichOneof("kind")
                        if kind == "redirect":
                            seen["redirects"] += 1
                            break
                        if kind == "match_start":
                            seen["matches"] += 1
                            break
                except grpc.RpcError:
                    pass

    async def main() -> None:
        fronts = [Ladder(SqliteStore(db), FAST) for _ in range(2)]
        async with trio.open_nursery() as nursery:
            ports = [await nursery.start(f.serve) for f in fronts]
            first, second = (f"127.0.0.1:{p}" for p in ports)
            def victim() -> None:
                try:
                    played.append(run_bot(Greedy(), first, token=tok_a, matches=1,
                                          connect_timeout_s=10))
                except grpc.RpcError:  # the front end shut down under its kept seat
                    played.append(0)

            nursery.start_soon(trio.to_thread.run_sync, victim)
            nursery.start_soon(partial(trio.to_thread.run_sync, griefer, second))
            await trio.sleep(7.0)
            stop.set()
            fronts[0].arena.close_lobby()
            with trio.move_on_after(5):
                while not played:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        for f in fronts:
            f.store.close()

    trio.run(main)
    with SqliteStore(db) as after:
        recorded = after.matches("ladder")
        pairings = after.pairings_since("ladder", "", 0)
    # what it cost: each pairing held alpha's seat 2 s (10 s by default), nothing recorded
    assert seen["matches"] == 0 and played == [0]
    assert seen["redirects"] >= 2 and len(pairings) == seen["redirects"]
    assert any(m.blamed is not None and m.bots[m.blamed] == "zed" for m in recorded), \
        f"{len(pairings)} pairings in 7 s, alpha played none, nothing recorded against zed"
