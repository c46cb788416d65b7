"""Workers and coordinators as separate processes, with real bots: kill -9, no local
workers, two coordinators. Several worker processes on this machine (each with its own
arena on its own loopback port) stand in for several hosts; each store test runs on SQLite
and, where one answers, on PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
from gin_arena_core.rules import preset

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import TimeControl
from arena.series.coordinator import SeriesError, run_series
from arena.series.plan import Entrant, Plan
from arena.series.schedule import schedule
from arena.store import open_store
from arena.store.base import Store
from arena.store.sqlite import SqliteStore
from tests.tournament.bots import Greedy, Slow

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
BOTS = "tests.tournament.bots"
SECRET = "7e57" * 8


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))



def worker(db: str, name: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.series.worker", "--db", db, "--worker-id", name,
         *extra], cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def wait_until(check: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def in_process_plan() -> Plan:
    return Plan(rules=preset("standard"), time_control=TimeControl(decision_ms=5000),
                bots=(Entrant("greedy", f"{BOTS}:Greedy"), Entrant("slow", f"{BOTS}:Slow")),
                in_process=True)


def queue_scope(store: Store, scope: str, plan: Plan, deals: int) -> list:  # type: ignore[type-arg]
    store.open_scope(scope, "tournament", scope, json.dumps({"plan": plan.to_dict()}), SECRET)
    specs = list(schedule([("greedy", "slow")], deals, seed="w", secret=SECRET, scope=scope))
    store.enqueue(scope, specs)
    return specs


def test_a_killed_workers_match_runs_out_its_lease_and_another_plays_it_once(db: str) -> None:
    store = open_store(db)
    try:
        specs = queue_scope(store, "k", in_process_plan(), deals=2)
        # worker A, "on another host" (so nothing can tell it is gone but its lease)
        a = worker(db, "elsewhere-a:1:aa", "--scope", "k", "--slots", "1", "--lease-s", "2")
        try:
            wait_until(lambda: store.holders("k") == ["elsewhere-a:1:aa"], "A's first claim")
            time.sleep(0.5)  # in the middle of the match
            assert store.finished_ids("k") == set()
            a.send_signal(signal.SIGKILL)
            a.wait(10)
        finally:
            a.kill()
            a.communicate()
        held = store.queue_counts("k")  # A claims a few at a time (in-process matches)
        assert held.claimed + held.expired >= 1 and held.done == 0
        assert held.claimed + held.expired + held.queued == len(specs)
        b = worker(db, "elsewhere-b:2:bb", "--scope", "k", "--slots", "1", "--lease-s", "2")
        _, err = b.communicate(timeout=100)
        assert b.returncode == 0, err
        assert "match_reclaimed" in err and "attempt=2" in err  # after A's lease ran out
        assert "4 matches recorded" in err
        rows = store.matches("k")
        assert sorted(m.match_id for m in rows) == sorted(s.match_id for s in specs)  # once
        assert sum(r.games for r in store.ratings("k").values()) == 2 * len(specs)
        # played from the start with the same deal: what a clean run of each match gives
        bots = {"greedy": Greedy(), "slow": Greedy()}  # Slow plays as Greedy, only slower
        for spec, row in zip(sorted(specs, key=lambda s: s.match_id),
                             sorted(rows, key=lambda m: m.match_id), strict=True):
            driver = MatchDriver(spec.match_id, preset("standard"), spec.seats, seed=spec.seed,
                                 time_control=TimeControl(decision_ms=5000))
            clean = play_local(driver, (bots[spec.seats[0]], bots[spec.seats[1]]))
            assert (row.winner, row.scores, row.hands) == (clean.winner, clean.scores,
                                                           len(clean.hands))
    finally:
        store.close()
    assert issubclass(Slow, Greedy)


def test_workers_on_other_hosts_play_a_tournament_started_with_no_local_workers(
        db: str, tmp_path: Path) -> None:
    cfg = tmp_path / "cup.toml"
    cfg.write_text(f"""
[tournament]
name = "cup"
seed = "far-away"
deals = 2
workers = 0
database = "{db}"

[time_control]
decision_ms = 3000

[[bots]]
spec = "{BOTS}:Slow"
[[bots]]
spec = "{BOTS}:Sloppy"
[[bots]]
spec = "random"
""")  # Slow thinks 30 ms a decision: a match lasts seconds, so both workers get some
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", str(cfg), "--no-progress"],
        cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[subprocess.Popen[str]] = []
    try:
        with open_store(db) as store:  # type: ignore[attr-defined]
            wait_until(lambda: any(s.name == "cup" for s in store.scopes()), "the schedule")
            (scope,) = [s.scope for s in store.scopes() if s.name == "cup"]
            wait_until(lambda: store.queue_counts(scope).queued == 12, "the queue")
            time.sleep(0.5)
            assert store.finished_ids(scope) == set()  # nobody plays here
        # two workers, each with its own arena on its own port and its own bot processes
        workers = [subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "worker", "--db", db, "--slots", "2"],
            cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True) for _ in range(2)]
        out, err = coordinator.communicate(timeout=100)
        assert coordinator.returncode == 0, err
        assert "12 matches played now (0 already recorded, 12 scheduled)" in out
        done = [w.communicate(timeout=30) for w in workers]
        assert all(w.returncode == 0 for w in workers), done
        recorded = [int(e.split("worker: ")[1].split()[0]) for _, e in done]
        assert sum(recorded) == 12 and all(n > 0 for n in recorded), recorded  # both played
        standings = subprocess.run(
            [sys.executable, "-m", "arena.cli", "standings", db], cwd=tmp_path, env=env(),
            capture_output=True, text=True, timeout=60)
        assert standings.returncode == 0, standings.stderr
        assert "cup (tournament" in standings.stdout and "12 matches" in standings.stdout
    finally:
        for p in (coordinator, *workers):
            if p.poll() is None:
                p.kill()
                p.communicate()


def test_a_second_coordinator_of_a_running_series_is_refused(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite")
    plan = in_process_plan()
    specs = queue_scope(store, "two", plan, deals=1)
    refused: list[str] = []

    async def main() -> None:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                # the first coordinates with no local worker: it follows the queue forever
                await nursery.start(lambda task_status: run_series(
                    store, "two", plan, specs, db=str(store.path), workers=0, slots=1,
                    replays=None, task_status=task_status))
                try:
                    await run_series(store, "two", plan, specs, db=str(store.path), workers=1,
                                     slots=1, replays=None)
                except SeriesError as e:
                    refused.append(str(e))
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        store.close()
    assert len(refused) == 1 and "'two' is already being run by" in refused[0]
    with SqliteStore(tmp_path / "s.sqlite") as again:
        assert again.finished_ids("two") == set()  # the refused one played nothing
        assert again.queue_counts("two").queued == len(specs)  # scheduled once


def cut_off(db: str, seconds: float) -> None:
    """Take the database away from everyone else for ``seconds``: an exclusive lock on a
    SQLite file; on PostgreSQL, every other connection killed, again and again."""
    if not db.startswith("postgresql"):
        import sqlite3

        locker = sqlite3.connect(db, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        time.sleep(seconds)
        locker.execute("ROLLBACK")
        locker.close()
        return
    import psycopg

    from tests.store.conftest import POSTGRES_URL

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                         "datname = current_database() AND pid <> pg_backend_pid()")
            time.sleep(0.2)


def test_a_worker_that_loses_its_database_keeps_its_results_and_commits_them_later(
        db: str) -> None:
    store = open_store(db)
    try:
        specs = queue_scope(store, "lost", in_process_plan(), deals=2)
        w = worker(db, "here:1:ww", "--scope", "lost", "--slots", "1", "--lease-s", "60")
        try:
            wait_until(lambda: len(store.finished_ids("lost")) >= 1, "a first result")
            store.close()  # ours would be cut off too
            cut_off(db, 4.0)  # meanwhile the worker finishes at least one more match
            _, err = w.communicate(timeout=100)
        finally:
            if w.poll() is None:
                w.kill()
                w.communicate()
        assert w.returncode == 0, err
        assert "4 matches recorded" in err
        store = open_store(db)
        assert sorted(store.finished_ids("lost")) == sorted(s.match_id for s in specs)
        assert sum(r.games for r in store.ratings("lost").values()) == 2 * len(specs)
    finally:
        store.close()


def test_a_worker_does_not_play_a_tournament_whose_bot_differs_here(tmp_path: Path) -> None:
    """The tournament recorded each bot's fingerprint (its spec and main file) when it
    started; a worker whose copy differs (or is missing) leaves it alone and says so."""
    mine = tmp_path / "mine.py"
    mine.write_text("from tests.tournament.bots import Greedy\n\n\nclass Mine(Greedy):\n"
                    "    name = 'mine'\n")
    db = str(tmp_path / "s.sqlite")
    store = SqliteStore(db)
    plan = Plan(rules=preset("standard"), time_control=TimeControl(decision_ms=5000),
                bots=(Entrant("greedy", f"{BOTS}:Greedy"), Entrant("mine", f"{mine}:Mine")),
                in_process=True)
    from arena.processes import spec_fingerprint

    try:
        store.open_scope("fp", "tournament", "fp", json.dumps({"plan": plan.to_dict()}),
                         SECRET)
        store.set_scope_bots("fp", [(b.name, b.spec, spec_fingerprint(b.spec))
                                    for b in plan.bots])
        store.enqueue("fp", list(schedule([("greedy", "mine")], 1, seed="f", secret=SECRET,
                                          scope="fp")))
        mine.write_text(mine.read_text() + "\n# changed on this host\n")
        w = worker(db, "w:1:x", "--scope", "fp")
        _, err = w.communicate(timeout=60)
        assert w.returncode == 0, err
        assert "bot 'mine' here is not the one its tournament registered" in err
        assert store.finished_ids("fp") == set() and store.queue_counts("fp").queued == 2
    finally:
        store.close()
