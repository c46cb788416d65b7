"""A worker: claims a scope's queued matches from the store, plays them, commits each result.

However a series runs (``arena play``, a tournament, ``arena worker`` on another host), its
matches are played by workers running ``work``: claim a match (a lease, renewed while the
match is played and its result committed), play it on the worker's executor (its own arena
with the bots launched beside it, or the bots called in-process), and hand the result to
the one commit path (``arena.series.commit``). A worker killed in the middle of a match
simply stops renewing: its lease runs out and another worker plays that match from the
start with the same deal; whichever result is recorded first counts, once. A match the
worker could not play (it was stopped, or neither bot came) is released, to be played
again. A worker that loses its database keeps its finished results queued and commits
them when the database is back.

``python -m arena.series.worker --db TARGET [--scope SCOPE]`` runs one as a process (the
coordinator starts its local workers so; ``arena worker`` is the same on any host).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import structlog
import trio

from arena.match.messages import MatchResult, Termination
from arena.match.spec import MatchSpec
from arena.series.commit import Committer, Finished
from arena.series.plan import Plan, PlanError
from arena.store.base import Claim, Store, StoreBusy, StoreError

log = structlog.get_logger("arena.worker")

LEASE_S = 30.0  # a claim's lease; renewed every third of it while its match is played
POLL_S = 1.0  # with nothing to claim, look again this often (other workers' leases may run
# out; a store shared by processes and hosts has no cheaper way to say "work is here")


class Executor(Protocol):
    """Where a worker plays its matches (``inproc.InProcessExecutor``,
    ``network.NetworkExecutor``)."""

    slots: int  # matches at once
    claim_batch: int  # matches claimed at once (fewer transactions for short matches)

    async def play(self, spec: MatchSpec) -> tuple[MatchResult, list[dict[str, Any]] | None]:
        """Play ``spec`` to its end; its result and record (None: not kept)."""


def worker_id() -> str:
    """A name for this worker that no other will have: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


def is_gone(worker: str) -> bool:
    """True if ``worker`` (an id from ``worker_id``, perhaps with a suffix) ran on this host
    in a process that no longer runs. A worker elsewhere is never judged gone here: its
    lease says when. (A reused pid makes a gone worker look alive: then its lease decides
    too.)"""
    host, _, rest = worker.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def is_unplayed(result: MatchResult) -> bool:
    """The match was not played (the worker stopped, or neither bot came): released rather
    than recorded."""
    return result.termination is Termination.SHUTDOWN or is_no_show(result)


def is_no_show(result: MatchResult) -> bool:
    """Neither bot came: set aside until the series is run again."""
    return result.termination is Termination.NO_SHOW and result.winner is None


@dataclass
class WorkerStats:
    claimed: int = 0
    recorded: int = 0  # new results written
    duplicates: int = 0  # finished, but another worker had recorded the match first
    released: int = 0  # given back unplayed
    skipped: int = 0  # set aside: neither bot came


async def _retrying(fn: Callable[[], Any]) -> Any:
    """``fn()`` on a worker thread, retried while the store is busy or out of reach."""
    wait = 0.05
    warned = time.monotonic()
    while True:
        try:
            return await trio.to_thread.run_sync(fn)
        except StoreBusy as e:
            if time.monotonic() - warned > 5.0:
                warned = time.monotonic()
                log.warning("store_unavailable", detail=str(e))
            await trio.sleep(wait)
            wait = min(wait * 2, 2.0)


async def work(store: Store, scope: str, plan: Plan, executor: Executor, *, worker: str,
               lease_s: float = LEASE_S, replays: Path | None = None,
               stats: WorkerStats | None = None,
               on_stored: Callable[[Finished, bool], None] | None = None) -> WorkerStats:
    """Play ``scope``'s queued matches on ``executor`` until none is left open (queued,
    or claimed by a worker whose lease may still run out); returns what it did.
    Cancellation: the claims in play are released, the finished results committed."""
    stats = stats or WorkerStats()
    held: dict[str, Claim] = {}  # match id -> claim, until its result is written
    submitted: set[str] = set()

    def stored(item: Finished, is_new: bool) -> None:
        held.pop(item.spec.match_id, None)
        submitted.discard(item.spec.match_id)
        if is_new:
            stats.recorded += 1
        else:
            stats.duplicates += 1
        if on_stored is not None:
            on_stored(item, is_new)

    committer = Committer(store, scope, replays=replays, rated=plan.rated, on_stored=stored)

    ahead: deque[Claim] = deque()  # claimed together, not yet started (held all the same)
    batch = max(1, getattr(executor, "claim_batch", 1))

    async def next_claim() -> Claim | None:
        while True:
            if ahead:
                return ahead.popleft()
            claims: list[Claim] = await _retrying(
                lambda: store.claim(worker, lease_s=lease_s, scopes=[scope], limit=batch))
            for c in claims:
                held[c.spec.match_id] = c
            if claims:
                ahead.extend(claims[1:])
                return claims[0]
            counts = await _retrying(lambda: store.queue_counts(scope))
            if counts.open == 0:
                return None
            await trio.sleep(POLL_S)

    async def player() -> None:
        while (claim := await next_claim()) is not None:
            key = claim.spec.match_id
            held[key] = claim
            stats.claimed += 1
            if claim.attempt > 1:
                log.warning("match_reclaimed", match_id=key, attempt=claim.attempt,
                            detail="an earlier worker's lease ran out; played from the start")
            result, record = await executor.play(claim.spec)
            if is_unplayed(result):
                held.pop(key, None)
                skip = is_no_show(result)
                stats.skipped += skip
                stats.released += not skip
                await _retrying(partial(store.release, worker, [(scope, key)], skip=skip))
                continue
            submitted.add(key)
            committer.submit(claim.spec, result, record)

    async def renew_leases() -> None:
        while True:
            await trio.sleep(lease_s / 3)
            keys = [(scope, k) for k in held]
            if not keys:
                continue
            try:
                lost = await trio.to_thread.run_sync(store.renew, worker, keys, lease_s)
            except StoreBusy:
                continue  # the next round tries again; a result waits in the committer
            for _, match_id in lost:  # recorded or given back meanwhile is no loss
                if match_id in held and match_id not in submitted:
                    log.warning("lease_lost", match_id=match_id, detail="another worker may "
                                "play this match too; the first result recorded counts")

    try:
        async with trio.open_nursery() as outer:
            outer.start_soon(committer.run)
            outer.start_soon(renew_leases)
            try:
                async with trio.open_nursery() as players:
                    for _ in range(executor.slots):
                        players.start_soon(player)
            finally:
                committer.close()
            await committer.wait_idle()
            outer.cancel_scope.cancel()
    finally:
        unplayed = [(scope, k) for k in held if k not in submitted]
        if unplayed:
            with trio.CancelScope(shield=True), contextlib.suppress(StoreError):
                await trio.to_thread.run_sync(store.release, worker, unplayed)
                stats.released += len(unplayed)
    return stats


@contextlib.asynccontextmanager
async def open_executor(plan: Plan, slots: int, replays: Path | None
                        ) -> AsyncIterator[Executor]:
    """The executor ``plan`` asks for, for the body (in-process, or an arena with the bots
    launched beside it)."""
    if plan.in_process:
        from arena.series.inproc import InProcessExecutor

        yield InProcessExecutor(plan, want_record=replays is not None)
        return
    from arena.series.network import open_network_executor

    logs = replays / "bot-logs" if replays is not None else None
    async with open_network_executor(plan, slots, logs) as executor:
        yield executor


def stored_plan(store: Store, scope: str) -> Plan:
    """The plan stored with ``scope`` (``PlanError`` if it has none)."""
    config = store.scope_config(scope)
    data = config.get("plan")
    if not isinstance(data, dict):
        raise PlanError(f"scope {scope!r} has no plan: it was not made to be played by "
                        "workers")
    return Plan.from_dict(data)


def _others_hold(store: Store, scopes: Sequence[str] | None, skipped: set[str]) -> bool:
    """True while another worker holds a match of a scope this one may play: its lease may
    run out, and then this worker plays it. A scope this worker would skip (no plan, remote
    bots, other bots here) is added to ``skipped`` instead of waited for."""
    for info in store.scopes():
        if info.scope in skipped or (scopes is not None and info.scope not in scopes
                                     and info.name not in scopes):
            continue
        if not store.queue_counts(info.scope).open:
            continue
        try:
            plan = stored_plan(store, info.scope)
        except StoreBusy:
            raise  # not a reason to skip: the caller tries again
        except (PlanError, StoreError):
            skipped.add(info.scope)
            continue
        if plan.has_remote or changed_bots(store, info.scope, plan):
            skipped.add(info.scope)
            continue
        return True
    return False


def changed_bots(store: Store, scope: str, plan: Plan) -> list[str]:
    """The plan's bots whose spec, on this host, is not what the scope recorded when it
    was started (another file at that path, or none): a worker must not play them."""
    from arena.processes import spec_fingerprint

    recorded = store.scope_bots(scope)
    return [b.name for b in plan.bots
            if b.spec and b.name in recorded and recorded[b.name][1]
            and spec_fingerprint(b.spec) != recorded[b.name][1]]


async def serve(store: Store, *, scopes: Sequence[str] | None, slots: int, worker: str,
                replays: Path | None, lease_s: float = LEASE_S, until_idle: bool = True
                ) -> WorkerStats:
    """Play the queued matches of ``scopes`` (scope keys or tournament names; None: any
    scope that a worker here can play), one scope at a time, until none is left
    (``until_idle``) or forever."""
    stats = WorkerStats()
    skipped: set[str] = set()
    while True:
        open_scopes = await _retrying(store.claimable_scopes)
        if scopes is not None:  # a scope key, or a tournament's name
            named = {i.scope for i in await _retrying(store.scopes) if i.name in scopes}
            open_scopes = [s for s in open_scopes if s in scopes or s in named]
        todo = [s for s in open_scopes if s not in skipped]
        for scope in todo:
            try:  # a busy store is tried again, never a reason to skip the scope
                plan = await _retrying(partial(stored_plan, store, scope))
            except (PlanError, StoreError) as e:
                log.warning("scope_skipped", scope=scope, detail=str(e))
                skipped.add(scope)
                continue
            if plan.has_remote:  # its bots connect to the coordinator's own worker
                log.warning("scope_skipped", scope=scope, detail="it has remote bots, which "
                            "connect to its coordinator's own worker: only that one plays it")
                skipped.add(scope)
                continue
            differ: list[str] = await _retrying(partial(changed_bots, store, scope, plan))
            if differ:  # not the bots the tournament was started with
                log.warning("scope_skipped", scope=scope, detail=f"bot {differ[0]!r} here is "
                            "not the one its tournament registered (its file is missing here "
                            "or its code differs): this worker does not play it")
                skipped.add(scope)
                continue
            where = replays or (Path(plan.replays) if plan.replays else None)
            log.info("worker_scope", scope=scope, worker=worker)
            async with open_executor(plan, slots, where) as executor:
                await work(store, scope, plan, executor, worker=worker, lease_s=lease_s,
                           replays=where, stats=stats)
            break
        else:
            if until_idle and not await _retrying(partial(_others_hold, store, scopes, skipped)):
                return stats
            await trio.sleep(POLL_S)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.series.worker",
                                 description="Play a store's queued matches.")
    ap.add_argument("--db", required=True, help="SQLite file or postgresql:// URL")
    ap.add_argument("--scope", action="append", help="only this scope (repeatable)")
    ap.add_argument("--slots", type=int, default=4, help="matches at once")
    ap.add_argument("--replays", type=Path, help="directory for replays and bot logs")
    ap.add_argument("--lease-s", type=float, default=LEASE_S)
    ap.add_argument("--worker-id", default="")
    ap.add_argument("--quiet", action="store_true", help="no summary at the end")
    ap.add_argument("--forever", action="store_true",
                    help="keep waiting for new work instead of exiting when none is left")
    args = ap.parse_args(argv)
    from arena.logs import configure
    from arena.store import is_url, open_store

    configure(json=False, level="warning")
    if not is_url(args.db) and not Path(args.db).is_file():  # a typo: never make a new one
        print(f"arena worker: error: --db {args.db}: no such database (a worker plays what "
              "a tournament queued in an existing one)", file=sys.stderr)
        return 2
    try:
        store = open_store(args.db)
    except StoreError as e:  # foreign, newer, locked: one line
        print(f"arena worker: error: {e}", file=sys.stderr)
        return 2

    async def run() -> WorkerStats:
        async with trio.open_nursery() as nursery:
            done: list[WorkerStats] = []

            async def go() -> None:
                done.append(await serve(store, scopes=args.scope, slots=max(1, args.slots),
                                        worker=args.worker_id or worker_id(),
                                        replays=args.replays, lease_s=args.lease_s,
                                        until_idle=not args.forever))
                nursery.cancel_scope.cancel()

            nursery.start_soon(go)
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break
        return done[0] if done else WorkerStats()

    try:
        stats = trio.run(run)
    finally:
        store.close()
    if not args.quiet:
        print(f"worker: {stats.recorded} matches recorded, {stats.duplicates} recorded "
              f"first by another worker, {stats.released} given back unplayed",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
