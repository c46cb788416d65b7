"""Running tournaments: totals, reproducibility, resume, faults, voids, over gRPC too."""

from __future__ import annotations

import dataclasses
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from gin_arena_sdk.client import run as run_bot

from arena.match.messages import MatchResult, Termination
from arena.match.spec import MatchSpec
from arena.series import inproc
from arena.store.base import MatchRow
from arena.store.sqlite import SqliteStore
from arena.tournament.config import ConfigError, TournamentConfig, config_from_dict, load_config
from arena.tournament.formats import tournament_schedule
from arena.tournament.report import pick_scope, standings
from arena.tournament.runner import RunError, run_tournament
from tests.tournament.bots import Sloppy

BOTS = "tests.tournament.bots"
SECRET = "5ec2e7" * 6  # a fixed deal secret: runs in different databases deal alike


def config(tmp_path: Path, db: str, bots: list[str], **tournament: Any) -> TournamentConfig:
    return load_config(None, tournament={"seed": "run-1", "deals": 4, "mode": "in_process",
                                         "concurrency": 1, "database": str(tmp_path / db),
                                         "secret": SECRET, **tournament},
                       bots=[f"{BOTS}:{b.capitalize()}" for b in bots])


def outcomes(cfg: TournamentConfig) -> dict[str, tuple[Any, ...]]:
    with SqliteStore(cfg.database) as store:
        return {m.match_id: (m.bots, m.winner, m.termination, m.scores, m.hands, m.voided)
                for m in store.matches(cfg.scope)}


def test_round_robin_in_process_totals(tmp_path: Path) -> None:
    cfg = config(tmp_path, "rr.sqlite", ["greedy", "sloppy", "crasher"])
    summary = run_tournament(cfg)
    assert summary.scheduled == summary.played == 3 * 4 * 2 and summary.voided == 0
    # a bot whose every answer is a bot error loses by the refusal policy; the rest goes on
    assert summary.forfeits == {"crasher": 16}
    with SqliteStore(cfg.database) as store:
        ratings = store.ratings(cfg.scope)
        assert {b: r.games for b, r in ratings.items()} == {"greedy": 16, "sloppy": 16,
                                                           "crasher": 16}
        st = standings(store, pick_scope(store))
    assert [r.stats.bot for r in st.rows] == ["greedy", "sloppy", "crasher"]
    crasher = st.rows[2].stats
    assert crasher.forfeits == 16 and crasher.losses == 16 and crasher.illegal == 0
    assert crasher.errors > 16 and crasher.first_error.startswith(
        "decide() raised RuntimeError: crasher always crashes at bots.py:")
    assert st.matrix[("greedy", "sloppy")][0] > st.matrix[("greedy", "sloppy")][2]


def test_same_config_and_seed_reproduce_the_results_at_any_concurrency(tmp_path: Path) -> None:
    one = config(tmp_path, "one.sqlite", ["greedy", "sloppy"], deals=3)
    two = dataclasses.replace(one, concurrency=2, database=str(tmp_path / "two.sqlite"))
    run_tournament(one)
    run_tournament(two)
    assert one.scope == two.scope
    assert outcomes(one) == outcomes(two)
    assert len(outcomes(one)) == 6


def test_interrupted_run_resumes_without_loss_or_double_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(tmp_path, "resume.sqlite", ["greedy", "sloppy", "crasher"], deals=3)
    real = inproc.InProcessPlayer.play
    played: list[str] = []

    def ctrl_c_at_the_eighth(self: inproc.InProcessPlayer, spec: MatchSpec) -> Any:
        if len(played) == 7:
            raise KeyboardInterrupt
        played.append(spec.match_id)
        return real(self, spec)

    monkeypatch.setattr(inproc.InProcessPlayer, "play", ctrl_c_at_the_eighth)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg)
    monkeypatch.setattr(inproc.InProcessPlayer, "play", real)
    saved = len(outcomes(cfg))  # every match that finished before the interrupt
    assert saved == 7 and set(outcomes(cfg)) == set(played)
    summary = run_tournament(cfg)
    assert summary.already == saved and summary.played == summary.scheduled - saved
    clean = dataclasses.replace(cfg, database=str(tmp_path / "clean.sqlite"))
    run_tournament(clean)
    assert outcomes(cfg) == outcomes(clean)
    assert set(outcomes(cfg)) == {s.match_id for s in tournament_schedule(cfg, SECRET)}
    with SqliteStore(cfg.database) as a, SqliteStore(clean.database) as b:
        assert a.ratings(cfg.scope) == b.ratings(cfg.scope)  # same order, same live ratings


def test_an_arena_fault_voids_the_match_and_it_is_not_rated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(tmp_path, "void.sqlite", ["greedy", "sloppy"], deals=2)
    victim = next(iter(tournament_schedule(cfg, SECRET))).match_id
    real = inproc.play_local

    def faulty(driver: Any, bots: Any) -> MatchResult:
        if driver.match_id == victim:
            raise RuntimeError("the arena broke")
        return real(driver, bots)

    monkeypatch.setattr(inproc, "play_local", faulty)
    summary = run_tournament(cfg)
    assert summary.voided == 1 and summary.played == 4
    rows = outcomes(cfg)
    assert rows[victim][2] == Termination.ARENA_ERROR and rows[victim][5] is True
    with SqliteStore(cfg.database) as store:
        assert {r.games for r in store.ratings(cfg.scope).values()} == {3}
        st = standings(store, pick_scope(store))
    assert st.voided == 1 and all(r.stats.games == 3 and r.stats.voids == 1 for r in st.rows)
    monkeypatch.setattr(inproc, "play_local", real)
    assert run_tournament(cfg).played == 0  # a void is finished: not replayed


def test_faulty_bots_over_grpc_lose_and_the_tournament_goes_on(tmp_path: Path) -> None:
    cfg = load_config(None, tournament={
        "seed": "faults", "deals": 1, "concurrency": 2, "database": str(tmp_path / "f.sqlite"),
        "show_up_s": 20},
        time_control={"decision_ms": 300, "max_strikes": 0, "reconnect_grace_ms": 200,
                      "hello_timeout_ms": 20000},
        bots=[f"{BOTS}:Greedy", f"{BOTS}:Staller", f"{BOTS}:Exiter"])
    summary = run_tournament(cfg)
    assert summary.played == summary.scheduled == 6
    rows = outcomes(cfg)
    for bots, winner, termination, _, _, voided in rows.values():
        assert not voided
        if "greedy" in bots:
            assert bots[winner] == "greedy", (bots, termination)
    with SqliteStore(cfg.database) as store:
        st = {r.stats.bot: r.stats for r in standings(store, pick_scope(store)).rows}
    assert st["greedy"].wins == 4
    assert st["staller"].timeouts >= 1 and st["staller"].forfeits >= 2
    assert st["exiter"].forfeits >= 2
    terminations = {t for _, _, t, *_ in rows.values()}
    assert Termination.FORFEIT_TIMEOUT in terminations
    assert Termination.DISCONNECT in terminations


def test_a_locked_database_stalls_no_match_and_loses_no_result(tmp_path: Path) -> None:
    """Another program holds the database locked for 3 s mid-run (longer than the store's
    busy timeout): matches go on at 300 ms a decision without a timeout, the finished ones
    wait in the committer, and every result is recorded once the lock is gone."""
    cfg = load_config(None, tournament={
        "seed": "locked", "deals": 3, "concurrency": 2, "database": str(tmp_path / "l.sqlite"),
        "secret": SECRET},
        time_control={"decision_ms": 300, "max_strikes": 0, "hello_timeout_ms": 20000},
        bots=[f"{BOTS}:Greedy", f"{BOTS}:Sloppy"])
    locker: list[threading.Thread] = []
    held, released = threading.Event(), threading.Event()
    stored_after: list[bool] = []

    def lock_for_3_s() -> None:
        other = sqlite3.connect(cfg.database, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        held.set()
        time.sleep(3.0)
        other.execute("ROLLBACK")
        other.close()
        released.set()

    def first(row: MatchRow) -> None:
        stored_after.append(released.is_set())
        if not locker:
            locker.append(threading.Thread(target=lock_for_3_s))
            locker[0].start()
            held.wait(5)

    store = SqliteStore(cfg.database, busy_timeout_s=0.2)
    try:
        summary = run_tournament(cfg, store, on_recorded=first)
    finally:
        store.close()
        for t in locker:
            t.join()
    assert summary.played == summary.scheduled == 6
    rows = outcomes(cfg)
    assert len(rows) == 6
    assert all(t == Termination.COMPLETED for _, _, t, *_ in rows.values())
    with sqlite3.connect(cfg.database) as db:
        assert db.execute("SELECT SUM(timeouts) FROM results").fetchone() == (0,)
    # the lock was really held while the run went on: the later results waited for it
    assert held.is_set() and stored_after[0] is False and stored_after[-1] is True


def test_a_bot_that_ends_its_worker_process_stops_the_run_cleanly(tmp_path: Path) -> None:
    cfg = config(tmp_path, "broken.sqlite", ["greedy", "exiter"], deals=1, concurrency=2)
    with pytest.raises(RunError, match="in-process worker died"):
        run_tournament(cfg)


def test_a_remote_bot_connects_with_its_token(tmp_path: Path) -> None:
    port = free_port()
    token = "remote-secret-token"
    cfg = config_from_dict({
        "tournament": {"seed": "remote", "deals": 1, "concurrency": 1, "port": port,
                       "database": str(tmp_path / "r.sqlite"), "show_up_s": 30},
        "bots": [{"spec": f"{BOTS}:Greedy"}, {"name": "visitor", "token": token}]})
    played: list[int] = []

    def visitor() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                played.append(run_bot(Sloppy(), f"127.0.0.1:{port}", token=token, matches=2))
                return
            except grpc.RpcError:
                time.sleep(0.2)  # the arena is not up yet

    thread = threading.Thread(target=visitor, daemon=True)
    thread.start()
    summary = run_tournament(cfg)
    thread.join(10)
    assert summary.played == 2 and played == [2]
    rows = outcomes(cfg)
    assert all("visitor" in bots and termination == Termination.COMPLETED
               for bots, _, termination, *_ in rows.values())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PacedSloppy(Sloppy):
    """Sloppy, thinking 20 ms per decision (so its matches overlap in time)."""

    def decide(self, view: Any) -> Any:
        time.sleep(0.02)
        return super().decide(view)


def test_a_remote_bot_plays_one_match_at_a_time_and_never_forfeits_for_it(
        tmp_path: Path) -> None:
    """Its one session cannot be in two matches: with 3 matches at once and a short show-up
    wait, a remote bot scheduled twice at once would lose one by no-show."""
    port = free_port()
    token = "remote-secret-token"
    cfg = config_from_dict({
        "tournament": {"seed": "one-at-a-time", "deals": 1, "concurrency": 3, "port": port,
                       "database": str(tmp_path / "r.sqlite"), "show_up_s": 2},
        "bots": [{"spec": f"{BOTS}:Greedy"}, {"spec": f"{BOTS}:Sloppy"},
                 {"name": "visitor", "token": token}]})
    played: list[int] = []

    def visitor() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:  # wait for the arena
            grpc.channel_ready_future(channel).result(timeout=30)
        played.append(run_bot(PacedSloppy(), f"127.0.0.1:{port}", token=token, matches=4))

    thread = threading.Thread(target=visitor, daemon=True)
    thread.start()
    summary = run_tournament(cfg)
    thread.join(10)
    assert summary.played == 6 and played == [4]
    terminations = [t for bots, _, t, *_ in outcomes(cfg).values() if "visitor" in bots]
    assert terminations == [Termination.COMPLETED] * 4


def test_matches_no_bot_came_to_are_not_recorded_and_a_rerun_plays_them(tmp_path: Path) -> None:
    cfg = config_from_dict({
        "tournament": {"seed": "absent", "deals": 1, "concurrency": 2, "port": 0,
                       "database": str(tmp_path / "a.sqlite"), "show_up_s": 0.3},
        "bots": [{"name": "ghost1", "token": "ghost-token-1"},
                 {"name": "ghost2", "token": "ghost-token-2"}]})
    first = run_tournament(cfg)
    assert (first.played, first.unplayed) == (0, 2)
    assert outcomes(cfg) == {}
    again = run_tournament(cfg)
    assert (again.already, again.unplayed) == (0, 2)  # still to play, not voided for good


def test_a_changed_bot_cannot_resume_a_tournament_it_did_not_play(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text("from tests.tournament.bots import Greedy\n\n\n"
                    "class Mine(Greedy):\n    name = 'mine'\n")
    cfg = load_config(None, tournament={"seed": "patch", "deals": 1, "mode": "in_process",
                                        "concurrency": 1, "database": str(tmp_path / "p.sqlite")},
                      bots=[f"{mine}:Mine", f"{BOTS}:Sloppy"])
    assert run_tournament(cfg).played == 2
    assert run_tournament(cfg).played == 0  # the same bots: resumed, nothing left
    mine.write_text(mine.read_text() + "\n# a patch\n")
    with pytest.raises(ConfigError, match=r"'mine' is not the bot that played.*its code changed"):
        run_tournament(cfg)
    with SqliteStore(cfg.database) as store:
        assert len(store.matches(cfg.scope)) == 2  # the old results are untouched


def test_an_sprt_of_another_pair_never_inherits_a_verdict(tmp_path: Path) -> None:
    def sprt(bots: list[str]) -> TournamentConfig:
        return load_config(None, tournament={
            "seed": "h2h", "format": "sprt", "mode": "in_process", "concurrency": 1,
            "database": str(tmp_path / "h.sqlite"), "name": "h2h"},
            bots=[f"{BOTS}:{b.capitalize()}" for b in bots],
        )

    first = sprt(["greedy", "crasher"])
    decided = run_tournament(dataclasses.replace(
        first, sprt=dataclasses.replace(first.sprt, elo1=400, max_deals=60)))
    assert decided.sprt is not None and decided.played > 0
    other = sprt(["greedy", "sloppy"])
    assert other.scope != first.scope
    fresh = run_tournament(dataclasses.replace(
        other, sprt=dataclasses.replace(other.sprt, max_deals=2)))
    assert fresh.already == 0 and fresh.played == 4
