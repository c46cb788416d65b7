"""Run a series: queue its schedule, start its local workers, follow its results to the end.

The front ends (``arena play``, tournaments) describe a series as a scope in a store, a
``Plan`` and a schedule of ``MatchSpec``; ``run_series`` does the rest, the same way for
all of them: it becomes the scope's one coordinator (a second one is refused while the
first's lease runs), queues the schedule (queueing it again changes nothing), starts
``workers`` local workers (0: none, the matches are played by ``arena worker`` processes
on other hosts; 1: inside this process; more: as processes of their own, each with its
own arena and bots, so every core plays), and follows the results as the store records
them, handing each new batch to ``watch``. A watch that returns a verdict (an SPRT that
decided) stops the scope: nothing more is claimed, and results that arrive later are
kept, marked as after the verdict. It returns when no match of the scope is open.
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import structlog
import trio

from arena.match.spec import MatchSpec
from arena.processes import ChildProcess, module_command, python_path
from arena.series.plan import Plan
from arena.series.worker import (
    LEASE_S,
    WorkerStats,
    is_gone,
    open_executor,
    work,
    worker_id,
)
from arena.store.base import MatchRow, Store, StoreBusy

log = structlog.get_logger("arena.series")

WATCH_S = 0.25  # how often the coordinator reads new results (the store may be on
# another host; results are recorded by other processes)
NUDGED_S = 0.05  # after a local worker's nudge, wait this long for more before reading
COORDINATOR_LEASE_S = 30.0


class SeriesError(Exception):
    """The series cannot run or go on (one line); what finished is saved."""


Watch = Callable[[Sequence[MatchRow]], str | None]
"""Called with each batch of newly recorded matches; returns a verdict to stop the scope."""


def default_workers(*, in_process: bool) -> int:
    """Local workers that fit this machine: one per CPU to call bots in-process; one per
    two CPUs over gRPC (each worker's arena takes up to a core, its bots the rest)."""
    cpus = os.cpu_count() or 1
    return cpus if in_process else max(1, cpus // 2)


@dataclass
class SeriesOutcome:
    scheduled: int = 0  # matches in the schedule
    queued: int = 0  # of those, new to the queue this time
    recorded: int = 0  # new results seen while this run followed the scope
    verdict: str = ""
    open: int = 0  # matches neither recorded nor cancelled when it returned (interrupted)
    skipped: int = 0  # set aside: neither bot came (queued again by the next run)
    nudge: trio.Event = field(default_factory=trio.Event)  # set when a local worker records


async def run_series(store: Store, scope: str, plan: Plan, schedule: Sequence[MatchSpec], *,
                     db: str, workers: int, slots: int, replays: Path | None,
                     watch: Watch | None = None, lease_s: float = LEASE_S,
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                     ) -> SeriesOutcome:
    """Play ``schedule`` (see the module docstring). ``db``: how worker processes reach
    the store (its file or URL). ``slots``: matches at once per worker. Reports started
    once its workers are up. Cancellation: local workers release the matches in play and
    commit what finished; the queue stays for a rerun (or other workers)."""
    owner = worker_id()
    other = await trio.to_thread.run_sync(store.take_coordinator, scope, owner,
                                          COORDINATOR_LEASE_S)
    if other and is_gone(other):  # killed on this host: no need to wait for its lease
        other = await trio.to_thread.run_sync(partial(
            store.take_coordinator, scope, owner, COORDINATOR_LEASE_S, replacing=other))
    if other:
        raise SeriesError(f"{scope!r} is already being run by {other}: watch it with arena "
                          "standings, or wait for that run to end")
    for holder in await trio.to_thread.run_sync(store.holders, scope):
        if is_gone(holder):
            n = await trio.to_thread.run_sync(store.reclaim, scope, holder)
            log.info("claims_reclaimed", scope=scope, worker=holder, matches=n,
                     detail="its process on this host is gone")
    outcome = SeriesOutcome(scheduled=len(schedule))
    try:
        outcome.queued = await trio.to_thread.run_sync(store.enqueue, scope, schedule)
        if plan.has_remote and workers > 1:
            log.warning("one_worker", detail="remote bots connect to one address: this "
                        "series runs on one worker")
            workers = 1
        async with trio.open_nursery() as nursery:
            if workers == 1:
                nursery.start_soon(_local_worker, store, scope, plan, slots, replays, lease_s,
                                   owner, outcome)
            elif workers > 1:
                for i in range(workers):
                    nursery.start_soon(_worker_process, db, scope, slots, replays, lease_s,
                                       f"{owner}/{i}")
            task_status.started()
            await _follow(store, scope, owner, watch, outcome)
            nursery.cancel_scope.deadline = trio.current_time() + 30  # workers end at once:
            # the queue is empty; a stuck one is stopped
    finally:
        with trio.CancelScope(shield=True):
            try:
                counts = await trio.to_thread.run_sync(store.queue_counts, scope)
                outcome.open, outcome.skipped = counts.open, counts.skipped
                await trio.to_thread.run_sync(store.drop_coordinator, scope, owner)
            except StoreBusy:
                pass
    return outcome


async def _follow(store: Store, scope: str, owner: str, watch: Watch | None,
                  outcome: SeriesOutcome) -> None:
    """Read new results as they are recorded until no match is open; stop the scope on a
    verdict; keep the coordinator's lease. Wakes every ``WATCH_S``, or at once when a
    worker of this process records a match (``outcome.nudge``)."""
    seq = 0
    nudge = outcome.nudge
    renewed = trio.current_time()
    while True:
        try:
            # counted before the results are read: the results read then include every
            # match recorded by the time nothing was open
            counts = await trio.to_thread.run_sync(store.queue_counts, scope)
            while rows := await trio.to_thread.run_sync(store.matches_since, scope, seq):
                seq = rows[-1].seq
                outcome.recorded += len(rows)
                for row in rows:  # one at a time: the match that decided is known
                    verdict = watch([row]) if watch is not None else None
                    if verdict and not outcome.verdict:
                        outcome.verdict = verdict
                        await trio.to_thread.run_sync(store.stop_scope, scope, verdict,
                                                      row.seq)
                        log.info("series_stopped", scope=scope, verdict=verdict)
            if counts.open == 0:
                return
            if trio.current_time() - renewed > COORDINATOR_LEASE_S / 3:
                await trio.to_thread.run_sync(store.take_coordinator, scope, owner,
                                              COORDINATOR_LEASE_S)
                renewed = trio.current_time()
        except StoreBusy as e:
            log.warning("store_unavailable", detail=str(e))
        with trio.move_on_after(WATCH_S):
            await nudge.wait()
            await trio.sleep(NUDGED_S)  # a burst of results is read at once
        nudge = outcome.nudge = trio.Event()


async def _local_worker(store: Store, scope: str, plan: Plan, slots: int,
                        replays: Path | None, lease_s: float, owner: str,
                        outcome: SeriesOutcome) -> None:
    """One worker inside this process (its arena on this trio loop); each match it
    records wakes the coordinator."""
    async with open_executor(plan, slots, replays) as executor:
        await work(store, scope, plan, executor, worker=f"{owner}/0", lease_s=lease_s,
                   replays=replays, stats=WorkerStats(),
                   on_stored=lambda item, is_new: outcome.nudge.set())


async def _worker_process(db: str, scope: str, slots: int, replays: Path | None,
                          lease_s: float, name: str) -> None:
    """One worker as a process of its own, until it exits (when the scope has no open
    match). It dies with this process (kill -9 included); on cancellation it is asked to
    stop (SIGTERM: it releases what it plays and commits what finished), then killed after
    10 s."""
    args = ["--db", db, "--scope", scope, "--slots", str(slots), "--lease-s", str(lease_s),
            "--quiet"]  # its id names its own process, so a rerun can tell it is gone
    if replays is not None:
        args += ["--replays", str(replays)]
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path(env)
    child = ChildProcess(module_command("arena.series.worker", *args), env, None)
    try:
        code = await child.wait()
    finally:
        if child.returncode is None:
            child.terminate()
            with trio.CancelScope(shield=True):
                with trio.move_on_after(10):
                    await child.wait()
                if child.returncode is None:
                    child.kill()
                    await child.wait()
    if code not in (0, -signal.SIGTERM, -signal.SIGINT, 130):
        raise SeriesError(f"worker {name} exited with code {code} (its output is above); "
                          "the finished matches are saved: rerun to resume")


def per_worker(concurrency: int, workers: int) -> int:
    """Matches at once per worker for ``concurrency`` in all."""
    return max(1, math.ceil(concurrency / max(1, workers)))


__all__ = ["SeriesError", "SeriesOutcome", "Watch", "default_workers", "per_worker",
           "run_series"]
