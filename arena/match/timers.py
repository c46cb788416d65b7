"""Deadlines for many waiting tasks from one trio task, and a mailbox that waits with one.

A match waits for every decision's answer with a deadline. A trio cancel scope per wait
costs more than the wait itself (entering and leaving one was about a quarter of the match
runner's time), so the gRPC seats wait in a ``Mailbox`` whose deadline is a ``Timer`` of
one ``TimerService`` per server instead: registering a deadline is a heap push, a wait
that ends first cancels it in place, and one task sleeps until the earliest live one.
A deadline fires at its time, give or take one pass of trio's scheduler.

Seats without a mailbox of their own wait with ``receive_by`` (a cancel scope).
"""

from __future__ import annotations

import enum
import heapq
import itertools
import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final, Generic, TypeVar

import outcome
import trio

__all__ = ["TIMED_OUT", "Mailbox", "TimedOut", "Timer", "TimerService", "receive_by"]

T = TypeVar("T")


class TimedOut(enum.Enum):
    """The type of ``TIMED_OUT``."""

    TIMED_OUT = "timed out"


TIMED_OUT: Final = TimedOut.TIMED_OUT
"""What a wait returns when its deadline passed before anything arrived."""


class Timer:
    """One deadline of a ``TimerService``; ``cancel`` it if it is no longer wanted."""

    __slots__ = ("_callback", "_service", "deadline")

    def __init__(self, service: TimerService, deadline: float,
                 callback: Callable[[], object]) -> None:
        self._service = service
        self.deadline = deadline
        self._callback: Callable[[], object] | None = callback

    @property
    def is_pending(self) -> bool:
        """True until it fires or is cancelled."""
        return self._callback is not None

    def cancel(self) -> None:
        """It will not fire (a no-op once it fired or was cancelled)."""
        if self._callback is not None:
            self._callback = None
            self._service._cancelled()


_COMPACT_AT: Final = 256
"""Past this many timers in the heap, drop the cancelled ones once they are the majority."""


class TimerService:
    """Calls a function at a deadline on trio's clock, for any number of deadlines, from one
    task (``run``). Timers are called in deadline order, each from ``run``'s task, at the
    earliest when trio's clock reaches its deadline; a callback must not block or raise.
    Only the trio thread may use it."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timer]] = []
        self._order = itertools.count()
        self._dead = 0  # cancelled timers still in the heap
        self._sleep: trio.CancelScope | None = None  # run's sleep, while it sleeps

    def __len__(self) -> int:
        """Timers pending (neither fired nor cancelled)."""
        return len(self._heap) - self._dead

    def call_at(self, deadline: float, callback: Callable[[], object]) -> Timer:
        """Call ``callback()`` once trio's clock reaches ``deadline`` (see the class)."""
        timer = Timer(self, deadline, callback)
        heapq.heappush(self._heap, (deadline, next(self._order), timer))
        sleep = self._sleep
        if sleep is not None and deadline < sleep.deadline:
            sleep.deadline = deadline
        return timer

    def _cancelled(self) -> None:
        self._dead += 1
        heap = self._heap
        if len(heap) > _COMPACT_AT and self._dead * 2 > len(heap):
            heap[:] = [entry for entry in heap if entry[2]._callback is not None]
            heapq.heapify(heap)  # in place: run() may be holding this list
            self._dead = 0

    async def run(self) -> None:
        """Fire the timers as they fall due, forever. Cancellation ends it; the timers
        pending then never fire."""
        heap, heap_pop, now = self._heap, heapq.heappop, trio.current_time
        while True:
            while heap and (heap[0][2]._callback is None or heap[0][0] <= now()):
                timer = heap_pop(heap)[2]
                callback = timer._callback
                if callback is None:
                    self._dead -= 1
                    continue
                timer._callback = None
                callback()
            with trio.CancelScope(deadline=heap[0][0] if heap else math.inf) as sleep:
                self._sleep = sleep
                try:
                    await trio.sleep_forever()
                finally:
                    self._sleep = None


async def receive_by(deadline: float, receive: Callable[[], Awaitable[T]]) -> T | TimedOut:
    """``await receive()``, or ``TIMED_OUT`` if trio's clock reaches ``deadline`` first
    (``receive`` is cancelled then, and must lose nothing by it)."""
    with trio.move_on_at(deadline):
        return await receive()
    return TIMED_OUT


class Mailbox(Generic[T]):
    """An unbounded FIFO with one reader, which may wait with a deadline (of a
    ``TimerService``). Trio thread only.

    ``put`` adds without blocking; ``end`` means no more will come (the reader gets None
    once the items are read); ``close`` is the reader's side giving up: items are dropped
    and reading raises ``trio.ClosedResourceError``, also for a reader waiting then.
    """

    def __init__(self, timers: TimerService | None = None) -> None:
        """``timers``: what ``get`` waits with when it has a deadline."""
        self._timers = timers
        self._items: deque[T] = deque()
        self._reader: trio.lowlevel.Task | None = None
        self._timer: Timer | None = None
        self._is_ended = False
        self._is_closed = False
        self._on_deadline = self._expire  # bound once: a wait registers it every time
        self._on_abort = self._abort

    def __len__(self) -> int:
        """Items waiting to be read."""
        return len(self._items)

    def put(self, item: T) -> None:
        """Add ``item`` (handed straight to a waiting reader); ``trio.ClosedResourceError``
        after ``end`` or ``close``."""
        if self._is_ended or self._is_closed:
            raise trio.ClosedResourceError("put() after end() or close()")
        reader = self._reader
        if reader is None:
            self._items.append(item)
            return
        self._wake(reader, outcome.Value(item))

    def end(self) -> None:
        """No more items: once those waiting are read, reading gives None. Idempotent."""
        self._is_ended = True
        reader = self._reader
        if reader is not None:
            self._wake(reader, outcome.Value(None))

    def close(self) -> None:
        """Stop reading: drop the items; reading raises ``trio.ClosedResourceError`` (a
        reader waiting now too). Idempotent."""
        self._is_closed = True
        self._items.clear()
        reader = self._reader
        if reader is not None:
            self._wake(reader, outcome.Error(trio.ClosedResourceError("the mailbox was closed")))

    def get_nowait(self) -> T | None:
        """The next item if there is one, else None, at once."""
        if self._is_closed:
            raise trio.ClosedResourceError("the mailbox is closed")
        return self._items.popleft() if self._items else None

    async def get(self, deadline: float = math.inf) -> T | TimedOut | None:
        """The next item, waiting for it until trio's clock reaches ``deadline``; None once
        ``end`` was called and every item is read; ``TIMED_OUT`` if the deadline passes
        first (also when it had passed already). Cancelling it loses nothing. A checkpoint
        when it waits; when an item is ready, only if cancelled.
        ``trio.BusyResourceError`` if another task is reading."""
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._is_closed:
            raise trio.ClosedResourceError("the mailbox is closed")
        if self._reader is not None:
            raise trio.BusyResourceError("another task is reading this mailbox")
        if deadline != math.inf and trio.current_time() >= deadline:
            return TIMED_OUT
        if self._items:
            return self._items.popleft()
        if self._is_ended:
            return None
        if deadline != math.inf:
            if self._timers is None:
                raise RuntimeError("a mailbox without a TimerService waits without a deadline")
            self._timer = self._timers.call_at(deadline, self._on_deadline)
        self._reader = trio.lowlevel.current_task()
        got: T | TimedOut | None = await trio.lowlevel.wait_task_rescheduled(self._on_abort)
        return got

    def _abort(self, _: object) -> trio.lowlevel.Abort:
        """The waiting reader was cancelled: it is no longer waiting."""
        self._reader = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _expire(self) -> None:
        self._timer = None
        reader = self._reader
        if reader is not None:
            self._reader = None
            trio.lowlevel.reschedule(reader, outcome.Value(TIMED_OUT))

    def _wake(self, reader: trio.lowlevel.Task, result: outcome.Outcome[object]) -> None:
        self._reader = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        trio.lowlevel.reschedule(reader, result)
