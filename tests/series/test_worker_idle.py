"""Review 2: an ``arena worker`` (until idle) with nothing it can play must exit, even
while another worker holds matches of a scope this one would skip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from gin_arena_core.rules import preset

from arena.match.messages import TimeControl
from arena.series.plan import Entrant, Plan
from arena.series.schedule import schedule
from arena.series.worker import serve
from arena.store.base import StoreBusy
from arena.store.sqlite import SqliteStore

pytestmark = pytest.mark.timeout(60)
SECRET = "7e57" * 8


def test_a_worker_does_not_wait_for_a_remote_bot_scope_it_can_never_play(
        tmp_path: Path) -> None:
    """A tournament with remote bots is played only by its coordinator's own worker,
    which holds all its remaining matches; ``_others_hold`` counted them, so ``arena
    worker`` polled until that tournament ended (hours) instead of exiting."""
    store = SqliteStore(tmp_path / "w.sqlite")
    plan = Plan(rules=preset("standard"), time_control=TimeControl(),
                bots=(Entrant("remote", ""), Entrant("greedy", "tests.tournament.bots:Greedy")))
    store.open_scope("t", "tournament", "t", json.dumps({"plan": plan.to_dict()}), SECRET)
    store.enqueue("t", list(schedule([("remote", "greedy")], 1, seed="w", secret=SECRET,
                                     scope="t")))
    assert store.claim("coordinators-own:1:x", lease_s=600, scopes=["t"], limit=10)

    async def main() -> None:
        with trio.move_on_after(5) as waited:
            await serve(store, scopes=None, slots=1, worker="w:1:y", replays=None)
        assert not waited.cancelled_caught, "the worker still waits after 5 s"

    try:
        trio.run(main)
    finally:
        store.close()


def test_a_busy_store_does_not_make_a_worker_skip_a_scope(tmp_path: Path) -> None:
    """``StoreBusy`` is a ``StoreError``: reading a scope's plan while the store was busy
    (PostgreSQL out of reach a moment) set the scope aside for good, and with nothing
    else to do the worker exited with the scope's matches unplayed."""
    store = SqliteStore(tmp_path / "w.sqlite")
    plan = Plan(rules=preset("standard"), time_control=TimeControl(),
                bots=(Entrant("greedy", "tests.tournament.bots:Greedy"),
                      Entrant("slow", "tests.tournament.bots:Greedy")), in_process=True)
    store.open_scope("t", "tournament", "t", json.dumps({"plan": plan.to_dict()}), SECRET)
    store.enqueue("t", list(schedule([("greedy", "slow")], 1, seed="w", secret=SECRET,
                                     scope="t")))
    real = store.scope_config
    busy = [2]

    def flaky(scope: str) -> dict:  # type: ignore[type-arg]
        if busy[0]:
            busy[0] -= 1
            raise StoreBusy("busy a moment")
        return real(scope)

    store.scope_config = flaky  # type: ignore[method-assign]

    async def main() -> None:
        with trio.fail_after(30):
            await serve(store, scopes=None, slots=1, worker="w:1:y", replays=None)

    try:
        trio.run(main)
        assert store.queue_counts("t").open == 0, store.queue_counts("t")
    finally:
        store.close()
