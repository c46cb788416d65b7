"""The ladder over real gRPC on 127.0.0.1: registration, tokens, pairing, ratings,
the Leaderboard RPC, restarts, TLS."""

from __future__ import annotations

import dataclasses
import queue
import random
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from gin_arena_core.rules import RulesConfig
from gin_arena_sdk.client import run as run_bot

from arena.match.messages import TimeControl
from arena.store.base import Rating
from arena.store.sqlite import SqliteStore
from arena.tournament.ladder import Ladder, LadderError, LadderOptions
from arena.tournament.matchmaker import Candidate, choose_pairs, spec_for
from arena.tournament.registry import RegistrationError, hash_token, register, revoke, rotate
from tests.tournament.bots import Greedy, Sloppy

HOST = "127.0.0.1"
FAST = LadderOptions(time_control=TimeControl(decision_ms=2000, hello_timeout_ms=5000),
                     seed="ladder-test", settle_s=0.05)


def _hello_status(address: str, token: str) -> grpc.StatusCode:
    """Open a Play stream with this token; the status the arena ends it with."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        hello = pb.BotMessage(hello=pb.Hello(name="x", protocol_version=PROTOCOL_VERSION,
                                             token=token))
        try:
            for _ in stub.Play(iter([hello]), timeout=10):
                pass
        except grpc.RpcError as e:
            return e.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _leaderboard(address: str, creds: grpc.ChannelCredentials | None = None
                 ) -> list[pb.LeaderboardEntry]:
    channel = (grpc.secure_channel(address, creds) if creds is not None
               else grpc.insecure_channel(address))
    with channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        reply = stub.Leaderboard(pb.LeaderboardRequest(limit=0), timeout=10)
    return list(reply.entries)


def test_register_rules(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "l.sqlite") as store:
        token = register(store, "alpha")
        assert len(token) >= 16
        assert store.bot_for_token_hash(hash_token(token)) == "alpha"
        assert token not in (tmp_path / "l.sqlite").read_bytes().decode("latin-1")
        with pytest.raises(RegistrationError, match="already registered"):
            register(store, "alpha")
        with pytest.raises(RegistrationError, match="already in use"):
            register(store, "beta", token)
        with pytest.raises(RegistrationError, match="at least 16"):
            register(store, "gamma", "short")
        with pytest.raises(RegistrationError, match="letters, digits"):
            register(store, "bad name")


def test_choose_pairs_prefers_new_bots_near_ratings_and_variety() -> None:
    rng = random.Random(1)
    ratings = {"old": Rating(40, 2, 100), "mid": Rating(30, 3, 50), "low": Rating(10, 3, 50),
               "new": Rating(25, 8.3, 0)}
    waiting = [Candidate(b, b, 1) for b in ("old", "mid", "low", "new")]
    pairs = choose_pairs(waiting, ratings, {}, rng)
    # the newcomer goes first and meets the nearest rating (mid: 30 vs low: 10, old: 40)
    assert next((a.bot, b.bot) for a, b in pairs) == ("new", "mid")
    assert {(a.bot, b.bot) for a, b in pairs} == {("new", "mid"), ("low", "old")}
    # odd number waiting: the most experienced bot sits out
    pairs = choose_pairs(waiting[:3], ratings, {}, rng)
    assert [(a.bot, b.bot) for a, b in pairs] == [("mid", "low")]
    # a recent repeat is avoided when the ratings are close
    ratings2 = {"a": Rating(25, 3, 5), "b": Rating(25.5, 3, 6), "c": Rating(26, 3, 6),
                "d": Rating(50, 3, 6)}
    four = [Candidate(b, b, 1) for b in ("a", "b", "c", "d")]
    pairs = choose_pairs(four, ratings2, {"a": ["b", "b"]}, rng)
    assert [(a.bot, b.bot) for a, b in pairs] == [("a", "c"), ("b", "d")]
    pairs = choose_pairs(four, ratings2, {}, rng)
    assert next((a.bot, b.bot) for a, b in pairs) == ("a", "b")
    # a bot with one session is never paired twice; nobody meets itself
    assert choose_pairs([Candidate("solo", "k", 3)], {}, {}, rng) == []


def test_ladder_end_to_end_and_restart(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as store:
        tok_a = register(store, "alpha")
        tok_b = register(store, "beta")
    seen: dict[str, object] = {}

    async def first_life() -> None:
        store = SqliteStore(db)
        ladder = Ladder(store, FAST)
        with trio.fail_after(45):
            async with trio.open_nursery() as nursery:
                port: int = await nursery.start(ladder.serve)
                address = f"{HOST}:{port}"
                seen["wrong"] = await trio.to_thread.run_sync(_hello_status, address, "nope")
                seen["empty"] = await trio.to_thread.run_sync(_hello_status, address, "")
                # a bot registered while the ladder runs is known at once
                tok_c = register(SqliteStore(db), "gamma")
                seen["gamma_hash"] = hash_token(tok_c)
                async with trio.open_nursery() as bots:
                    bots.start_soon(trio.to_thread.run_sync,
                                    lambda: run_bot(Greedy(), address, token=tok_a, matches=2))
                    bots.start_soon(trio.to_thread.run_sync,
                                    lambda: run_bot(Sloppy(), address, token=tok_b, matches=2))
                seen["board"] = await trio.to_thread.run_sync(_leaderboard, address)
                nursery.cancel_scope.cancel()
        store.close()

    trio.run(first_life)
    assert seen["wrong"] == grpc.StatusCode.UNAUTHENTICATED
    assert seen["empty"] == grpc.StatusCode.UNAUTHENTICATED
    board = seen["board"]
    assert isinstance(board, list)
    by_name = {e.bot: e for e in board}
    assert set(by_name) == {"alpha", "beta", "gamma"}
    assert by_name["alpha"].games == 2 and by_name["beta"].games == 2
    assert by_name["gamma"].games == 0
    assert by_name["alpha"].wins + by_name["beta"].wins == 2
    assert by_name["alpha"].rating != by_name["beta"].rating

    with SqliteStore(db) as store:
        matches = store.matches("ladder")
        assert len(matches) == 2
        # the two meetings are one duplicate deal: same seed, seats swapped
        assert matches[0].seed == matches[1].seed
        assert matches[0].bots == tuple(reversed(matches[1].bots))
        ratings = store.ratings("ladder")
        assert ratings["alpha"].games == 2

        # a restart keeps registrations, ratings and history, and goes on numbering
        ladder = Ladder(store, FAST)
        entries = {e.bot: e for e in ladder.leaderboard_entries()}
        assert entries["alpha"].rating == pytest.approx(by_name["alpha"].rating)
        assert entries["alpha"].games == 2 and entries["gamma"].games == 0
        assert trio.run(ladder.authenticate, tok_a) == "alpha"
        assert trio.run(ladder.authenticate, "nope") is None
        met = store.meetings("ladder")
        assert met == {("alpha", "beta"): 2}  # two pairings made, both played
        nxt = spec_for("ladder", ladder.secret, ladder.seed, "alpha", "beta",
                       met[("alpha", "beta")])
        assert nxt.deal == 1 and nxt.order == 0
        # an opaque id: nothing of the pair, the deal or the seed shows
        assert nxt.match_id not in {m.match_id for m in matches}
        assert "alpha" not in nxt.match_id and ":" not in nxt.match_id


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_ladder_leaderboard_over_tls(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    with SqliteStore(tmp_path / "l.sqlite") as store:
        tok_a = register(store, "alpha")
        tok_b = register(store, "beta")
    got: dict[str, object] = {}
    ca = cert.read_bytes()

    async def main() -> None:
        store = SqliteStore(tmp_path / "l.sqlite")
        ladder = Ladder(store, FAST)
        with trio.fail_after(40):
            async with trio.open_nursery() as nursery:
                port: int = await nursery.start(
                    lambda task_status: ladder.serve(port=0, tls=(key.read_bytes(), ca),
                                                     task_status=task_status))
                address = f"{HOST}:{port}"
                # a plaintext client cannot talk to a TLS ladder, and the SDK says why
                got["plain"] = await trio.to_thread.run_sync(_hello_status, address, tok_a)

                def plain_sdk() -> str:
                    try:
                        run_bot(Greedy(), address, token=tok_a, matches=1)
                    except SystemExit as e:
                        return str(e)
                    return "played"

                got["sdk_plain"] = await trio.to_thread.run_sync(plain_sdk)
                # SDK bots over TLS play their matches
                async with trio.open_nursery() as bots:
                    for bot, tok in ((Greedy(), tok_a), (Sloppy(), tok_b)):
                        bots.start_soon(trio.to_thread.run_sync, partial(
                            run_bot, bot, address, token=tok, matches=1, tls_ca=ca))
                creds = grpc.ssl_channel_credentials(ca)
                got["board"] = await trio.to_thread.run_sync(_leaderboard, address, creds)
                nursery.cancel_scope.cancel()
        store.close()

    trio.run(main)
    assert got["plain"] == grpc.StatusCode.UNAVAILABLE
    assert "expects TLS: connect with --tls-ca" in str(got["sdk_plain"])
    board = got["board"]
    assert isinstance(board, list) and sorted(e.bot for e in board) == ["alpha", "beta"]
    assert all(e.games == 1 for e in board)


def test_a_ladder_keeps_one_meaning_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as store:
        first = Ladder(store, FAST)
        again = Ladder(store, FAST)  # the same options: the same scope, seed and secret
        assert (again.seed, again.secret) == (first.seed, first.secret)
        other = LadderOptions(rules=RulesConfig.from_spec({"preset": "oklahoma"}),
                              time_control=FAST.time_control)
        with pytest.raises(LadderError, match=r"another rules .*rules standard.* --season"):
            Ladder(store, other)
        slower = LadderOptions(time_control=TimeControl(decision_ms=5000))
        with pytest.raises(LadderError, match=r"another time control .*decision_ms 2000"):
            Ladder(store, slower)
        with pytest.raises(LadderError, match="another seed"):
            Ladder(store, LadderOptions(time_control=FAST.time_control, seed="other-seed"))
        season = Ladder(store, dataclasses.replace(other, season="okla"))
        assert season.scope == "ladder:okla" and season.secret != first.secret
        assert {s.scope for s in store.scopes()} == {"ladder", "ladder:okla"}


def test_a_revoked_token_ends_its_waiting_session_on_the_running_ladder(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as store:
        tok = register(store, "Alpha")
        with pytest.raises(RegistrationError, match="already registered"):
            register(store, "ALPHA")
    got: dict[str, object] = {}

    async def main() -> None:
        store = SqliteStore(db)
        ladder = Ladder(store, FAST)
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                port: int = await nursery.start(ladder.serve)
                address = f"{HOST}:{port}"
                waiter = await trio.to_thread.run_sync(
                    lambda: _open_waiting(address, tok))
                while not ladder.arena.waiting():
                    await trio.sleep(0.02)
                with SqliteStore(db) as other:  # as `arena ladder revoke` does
                    revoke(other, "Alpha")
                got["revoked"] = await trio.to_thread.run_sync(waiter)
                got["again"] = await trio.to_thread.run_sync(_hello_status, address, tok)
                with SqliteStore(db) as other:
                    fresh = rotate(other, "Alpha")
                got["rotated"] = await ladder.authenticate(fresh)
                nursery.cancel_scope.cancel()
        store.close()

    trio.run(main)
    assert got["revoked"] == grpc.StatusCode.UNAUTHENTICATED
    assert got["again"] == grpc.StatusCode.UNAUTHENTICATED
    assert got["rotated"] == "Alpha"


def _open_waiting(address: str, token: str) -> Any:
    """Say Hello and wait in the lobby; returns a function that waits for the status."""
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
    hello = pb.BotMessage(hello=pb.Hello(name="x", protocol_version=PROTOCOL_VERSION,
                                         token=token))
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
    outbox.put(hello)
    call = stub.Play(iter(outbox.get, None), timeout=20)

    def status() -> grpc.StatusCode:
        try:
            for _ in call:
                pass
        except grpc.RpcError as e:
            return e.code()  # type: ignore[no-any-return]
        finally:
            outbox.put(None)
            channel.close()
        return grpc.StatusCode.OK

    return status


def test_leaderboard_unimplemented_without_a_ladder() -> None:
    from arena.server.arena import Arena, start_arena

    got: dict[str, object] = {}

    async def main() -> None:
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, Arena())

                def ask() -> grpc.StatusCode:
                    try:
                        _leaderboard(f"{HOST}:{port}")
                    except grpc.RpcError as e:
                        return e.code()  # type: ignore[no-any-return]
                    return grpc.StatusCode.OK

                got["code"] = await trio.to_thread.run_sync(ask)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert got["code"] == grpc.StatusCode.UNIMPLEMENTED


def test_ladder_command_serves_stops_on_sigterm_and_restarts(tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import sys

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    db = tmp_path / "ladder.sqlite"
    with SqliteStore(db) as store:
        register(store, "alpha")
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    cli = [sys.executable, "-m", "arena.cli"]
    for life in (1, 2):
        server = subprocess.Popen([*cli, "ladder", "--db", str(db), "--port", str(port)],
                                  cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert f"ladder listening on {HOST}:{port}" in line, (life, line)
            board = subprocess.run([*cli, "standings", "--remote", f"{HOST}:{port}"],
                                   env=env, capture_output=True, text=True, timeout=30)
            assert board.returncode == 0, board.stderr
            assert "alpha" in board.stdout and "mu-3sigma" in board.stdout
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=20) == 0
        finally:
            server.kill()
            server.wait()
            if server.stdout:
                server.stdout.close()
