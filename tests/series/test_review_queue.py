"""Review findings on the queue and the coordinator (branch review): what happens to a
scope's open matches once an SPRT verdict has stopped it, and what ``arena worker`` says
about a bad ``--db``. Real SQLite files, in-process bots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio
from gin_arena_core.rules import preset

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import MatchResult, TimeControl
from arena.match.spec import MatchSpec
from arena.series.coordinator import SeriesOutcome, run_series
from arena.store.sqlite import SqliteStore
from tests.series.test_workers import env, in_process_plan, queue_scope
from tests.tournament.bots import Greedy

pytestmark = pytest.mark.timeout(60)


def played(spec: MatchSpec) -> MatchResult:
    driver = MatchDriver(spec.match_id, preset("standard"), spec.seats, seed=spec.seed,
                         time_control=TimeControl(decision_ms=5000))
    return play_local(driver, (Greedy(), Greedy()))


@pytest.mark.parametrize("how", ["released", "lease_ran_out"])
def test_a_claim_left_open_after_a_verdict_does_not_hang_the_series(
        tmp_path: Path, how: str) -> None:
    """An SPRT decides while a worker elsewhere holds a second match. That worker is then
    stopped (SIGTERM: it gives the claim back) or killed (its lease runs out). Either way
    the match can never be claimed again (the scope is stopped) nor is it cancelled, so it
    stays "open" and the coordinator waits for it forever."""
    store = SqliteStore(tmp_path / "s.sqlite")
    plan = in_process_plan()
    specs = queue_scope(store, "v", plan, deals=2)
    outcomes: list[SeriesOutcome] = []
    hung: list[bool] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            async def coordinate(task_status: trio.TaskStatus[None]) -> None:
                outcomes.append(await run_series(
                    store, "v", plan, specs, db=str(store.path), workers=0, slots=1,
                    replays=None, watch=lambda rows: "H1", task_status=task_status))

            await nursery.start(coordinate)
            lease = 30.0 if how == "released" else 0.5
            first, second = await trio.to_thread.run_sync(
                lambda: store.claim("elsewhere:1:w", lease_s=lease, scopes=["v"], limit=2))
            await trio.to_thread.run_sync(store.record, "v", first.spec, played(first.spec))
            with trio.fail_after(5):
                while await trio.to_thread.run_sync(store.scope_verdict, "v") != "H1":
                    await trio.sleep(0.05)
            if how == "released":  # the worker is stopped: it gives its claim back
                await trio.to_thread.run_sync(
                    lambda: store.release("elsewhere:1:w", [("v", second.spec.match_id)]))
            # else: the worker was killed; its lease runs out in 0.5 s
            with trio.move_on_after(5) as waited:
                while not outcomes:
                    await trio.sleep(0.05)
            hung.append(waited.cancelled_caught)
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
        counts = store.queue_counts("v")
    finally:
        store.close()
    # the one given back or run out is never claimable again: cancelled, like the queued
    assert counts.open == 0 and counts.done == 1 and counts.cancelled == len(specs) - 1
    assert hung == [False], f"the coordinator still waits for it ({counts})"


def arena_worker(cwd: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", "worker", *args], cwd=cwd,
                          env=env(), capture_output=True, text=True, timeout=timeout)


def test_arena_worker_refuses_a_database_that_is_not_there(tmp_path: Path) -> None:
    """A mistyped --db is made as a new empty database (parent folders too), and the
    worker exits 0 having found nothing to do."""
    run = arena_worker(tmp_path, "--db", "typo/cup.sqlite")
    assert not (tmp_path / "typo").exists(), "a new database was made"
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "typo/cup.sqlite" in run.stderr


@pytest.mark.parametrize("what", ["not_sqlite", "newer_schema"])
def test_arena_worker_says_in_one_line_why_a_database_is_refused(
        tmp_path: Path, what: str) -> None:
    db = tmp_path / "cup.sqlite"
    if what == "not_sqlite":
        db.write_text("not a database\n")
    else:
        SqliteStore(db).close()
        import sqlite3
        with sqlite3.connect(db) as raw:
            raw.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    run = arena_worker(tmp_path, "--db", str(db))
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr


def test_arena_worker_says_why_it_leaves_a_scope_with_remote_bots(tmp_path: Path) -> None:
    """A scope whose bots connect themselves is played by its coordinator's own worker
    only; a worker asked for it by name must say so, not report 0 matches and exit 0."""
    from arena.series.plan import Entrant, Plan

    db = tmp_path / "cup.sqlite"
    plan = Plan(bots=(Entrant("here", "random"), Entrant("far", "", token="t" * 16)))
    with SqliteStore(db) as store:
        queue_scope(store, "cup", plan, deals=1)
    run = arena_worker(tmp_path, "--db", str(db), "--scope", "cup")
    assert "remote" in run.stderr, run.stderr
