"""Commit finished matches off the match loop, in order, through a busy or lost database.

The one commit path: whoever plays a match (a worker, the ladder, ``arena serve``) hands it
to ``Committer.submit``, which never blocks: one writer task takes them in order and writes
each (its replay file, then the match with its score and live rating update in one
transaction) on a worker thread, so a slow disk or a database locked by another program
never stalls the matches in play. A busy or locked
database is retried with backoff for as long as it takes (a warning every few seconds says
how many results wait); nothing finished is dropped. Any other refused write stops the run
with one line (``CommitError``). When the run ends or is interrupted, the writer first
flushes what is queued (up to ``flush_s``), so an interrupted run loses no finished match
unless the database stays locked that long; the log then says how many were not saved
(a resumed run plays them again).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.match.messages import MatchResult
from arena.match.replay import write_replay
from arena.match.spec import MatchSpec
from arena.series.ratings import rate_match
from arena.store.base import Rate, Store, StoreBusy, StoreError, is_void

log = structlog.get_logger("arena.commit")

BACKOFF_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)  # waits between retries of a busy database
WARN_EVERY_S = 5.0


class CommitError(Exception):
    """The store refused a finished match for good (one line; the run stops)."""


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished match waiting to be written."""

    spec: MatchSpec
    result: MatchResult
    record: list[dict[str, Any]] | None


def score_of(result: MatchResult, seats: tuple[str, str], bot: str) -> float | None:
    """1, 0.5 or 0 for ``bot``; None for a void match."""
    if is_void(result):
        return None
    if result.winner is None:
        return 0.5
    return 1.0 if seats[result.winner] == bot else 0.0


def rating_update(spec: MatchSpec, result: MatchResult) -> Rate | None:
    """The live rating update of a finished match (None for a void one: not rated)."""
    a, b = spec.pair
    score_a = score_of(result, spec.seats, a)
    return None if score_a is None else rate_match(a, b, score_a)


class Committer:
    """The one writer of a run's finished matches (see the module docstring)."""

    def __init__(self, store: Store | None, scope: str, *, replays: Path | None = None,
                 rated: bool = True,
                 on_stored: Callable[[Finished, bool], None] | None = None,
                 flush_s: float = 60.0) -> None:
        """``store`` None: replays only (``arena serve``). ``rated``: update the scope's
        live ratings with each match. ``on_stored(item, is_new)`` runs on the trio thread
        after each write (``is_new`` False: the scope already had that match)."""
        self.store = store
        self.scope = scope
        self.rated = rated
        self.replays = replays
        self.on_stored = on_stored
        self.flush_s = flush_s
        self._send, self._receive = trio.open_memory_channel[Finished](math.inf)
        self.pending = 0  # submitted, not yet written
        self.busy_s = 0.0  # total time spent waiting for a busy database
        self._in_hand: Finished | None = None
        self._idle = trio.Event()
        self._idle.set()

    def submit(self, spec: MatchSpec, result: MatchResult,
               record: list[dict[str, Any]] | None = None) -> None:
        """Queue a finished match for writing; never blocks. Call from the trio thread."""
        self.pending += 1
        self._idle = trio.Event() if self._idle.is_set() else self._idle
        self._send.send_nowait(Finished(spec, result, record))

    async def write_now(self, spec: MatchSpec, result: MatchResult,
                        record: list[dict[str, Any]] | None = None) -> None:
        """Write one match at once, past the queue and shielded from cancellation (a
        match cut short by a shutdown, while the writer itself is being stopped). A
        database that is busy or gone loses it (it was not played out anyway)."""
        with trio.CancelScope(shield=True):
            try:
                await trio.to_thread.run_sync(self._write_sync, Finished(spec, result, record))
            except StoreError as e:
                log.warning("not_saved", scope=self.scope, match_id=spec.match_id,
                            detail=str(e))

    def close(self) -> None:
        """No more submissions: ``run`` returns once the queue is written."""
        self._send.close()

    async def wait_idle(self) -> None:
        """Wait until everything submitted so far is written."""
        await self._idle.wait()

    async def run(self) -> None:
        """Write what is submitted until ``close``. Cancellation: the queue is flushed first
        (shielded, at most ``flush_s``), then Cancelled propagates. ``CommitError`` if a
        write is refused for another reason than a busy database or a duplicate."""
        failed = False
        async with self._receive:
            try:
                async for item in self._receive:
                    self._in_hand = item  # taken from the queue: written, or flushed below
                    await self._write(item)
                    self._in_hand = None
            except CommitError:
                failed = True
                raise
            finally:
                if not failed:
                    await self._flush()

    async def _flush(self) -> None:
        """Write what is still queued (shielded, at most ``flush_s``)."""
        with trio.CancelScope(shield=True) as flush:
            flush.deadline = trio.current_time() + self.flush_s
            if self._in_hand is not None:  # cancelled while writing it
                await self._write(self._in_hand)
                self._in_hand = None
            while True:
                try:
                    item = self._receive.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
                await self._write(item)
        if self.pending:
            log.error("results_not_saved", count=self.pending, scope=self.scope,
                      detail=f"the database stayed busy for {self.flush_s:g} s after the run "
                      "ended; a resumed run plays these matches again")

    async def _write(self, item: Finished) -> None:
        started = time.monotonic()
        warned = started
        attempt = 0
        while True:
            try:
                is_new = await trio.to_thread.run_sync(self._write_sync, item)
                break
            except StoreBusy as e:
                now = time.monotonic()
                if now - warned >= WARN_EVERY_S:
                    warned = now
                    log.warning("database_busy", scope=self.scope, waiting=self.pending,
                                for_s=round(now - started, 1), detail=str(e))
                await trio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
                attempt += 1
            except StoreError as e:
                raise CommitError(str(e)) from None
        self.busy_s += time.monotonic() - started if attempt else 0.0
        if attempt:
            log.info("database_free_again", scope=self.scope, match_id=item.spec.match_id,
                     waited_s=round(time.monotonic() - started, 2))
        self.pending -= 1
        if not is_new:
            log.warning("already_recorded", scope=self.scope, match_id=item.spec.match_id,
                        detail="another run recorded this match first; this result is not "
                        "counted twice")
        if self.on_stored is not None:
            self.on_stored(item, is_new)
        if self.pending == 0:
            self._idle.set()

    def _write_sync(self, item: Finished) -> bool:
        """On a worker thread: the match (one transaction), then, if it is new, its replay
        (a match another worker recorded first keeps that worker's replay)."""
        is_new = True
        if self.store is not None:
            rate = rating_update(item.spec, item.result) if self.rated else None
            is_new = self.store.record(self.scope, item.spec, item.result, rate)
        if is_new and item.record is not None and self.replays is not None:
            path = self.replays / f"{item.spec.match_id.replace(':', '_')}.jsonl"
            try:
                write_replay(path, item.record)
            except OSError as e:  # a full disk must not cost the result
                log.error("replay_write_failed", match_id=item.spec.match_id, error=str(e))
        return is_new


__all__ = ["CommitError", "Committer", "Finished", "rating_update", "score_of"]
