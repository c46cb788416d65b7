"""How late the arena's own loops run, so a bot is never charged for the arena's stalls.

A loop that is free wakes a periodic ticker on time; a loop that is stalled (a blocking
call, a GC pause, the machine swapping, a flood of work) wakes it late. ``LagTracker``
turns those wake-ups into two figures:

* ``stalled_s(now)``: the total time the loop has run late beyond a small tolerance since
  it started, counting a stall still in progress (the ticker is overdue). The match runner
  takes the growth of this figure over a decision as the arena's lag and credits it back
  to the bot's clock (``run_match(..., lag=...)``), as lichess compensates lag.
* ``recent_ms``: the worst lateness over the last second: what the Status RPC reports.
* ``typical_ms``: the median lateness of the last second's ticks: what admission control
  follows. A loop that cannot keep up is late on most ticks; a single stall (a garbage
  collection, another process on the core) makes one tick late, which the lag credit
  covers and fewer matches would not prevent.

The tracker is pure (times in, figures out); ``watch`` drives it from a trio task and the
gRPC bridge drives another from its asyncio loop. Reading it from another thread is safe:
it only reads floats the ticking thread writes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

import trio

TICK_S = 0.02  # how often the ticker asks to wake
TOLERANCE_S = 0.01  # lateness up to this is scheduling noise, not a stall


class LagTracker:
    """Lateness of one loop's ticker (see the module docstring). Times in seconds on one
    monotonic clock of the caller's choosing."""

    def __init__(self, now: float = 0.0, *, tick_s: float = TICK_S,
                 tolerance_s: float = TOLERANCE_S) -> None:
        """``now``: when the ticker starts (``start`` may set it later)."""
        self.tick_s = tick_s
        self.tolerance_s = tolerance_s
        self._due = now + tick_s  # when the ticker should wake next
        self._stalled = 0.0
        self._recent: deque[tuple[float, float]] = deque()  # (when, lateness) of the last ~1 s
        self.recent_ms = 0.0
        self.typical_ms = 0.0

    def start(self, now: float) -> None:
        """The ticker starts (again) at ``now``: time before is not lag."""
        self._due = now + self.tick_s

    def tick(self, now: float) -> None:
        """The ticker woke at ``now``; it asks to wake again ``tick_s`` later."""
        late = max(0.0, now - self._due)
        if late > self.tolerance_s:
            self._stalled += late - self.tolerance_s
        recent = self._recent
        recent.append((now, late))
        while recent and recent[0][0] < now - 1.0:
            recent.popleft()
        self.recent_ms = max(x for _, x in recent) * 1000
        lates = sorted(x for _, x in recent)
        self.typical_ms = lates[len(lates) // 2] * 1000
        self._due = now + self.tick_s

    def stalled_s(self, now: float) -> float:
        """Total lateness beyond the tolerance so far, including a stall in progress."""
        overdue = now - self._due - self.tolerance_s
        return self._stalled + overdue if overdue > 0 else self._stalled

    def lag_ms(self, now: float) -> float:
        """The worst lateness over the last second, or the current one if the ticker is
        overdue by more."""
        return max(self.recent_ms, (now - self._due) * 1000)

    def typical_lag_ms(self, now: float) -> float:
        """The median lateness over the last second, or the current one if the ticker is
        overdue by more than that second (a loop stuck that long has no recent ticks to
        take a median of; a shorter stall is one late tick, like any other)."""
        overdue = now - self._due
        return max(self.typical_ms, overdue * 1000 if overdue > 1.0 else 0.0)


class DelayAverage:
    """A moving average of a delay measured once per event (for instance how long a
    message waited between the match loop and the network). An idle arena has no delay:
    after ``stale_s`` without events the average starts again from 0. Each event counts
    at most ``clip_s``, so a few events that waited for a reason of their own (a bot that
    stopped reading) move it little. One thread writes, any thread reads."""

    def __init__(self, *, weight: float = 0.002, stale_s: float = 1.0,
                 clip_s: float = 0.25) -> None:
        self.weight = weight
        self.stale_s = stale_s
        self.clip_s = clip_s
        self._average = 0.0
        self._last = -math.inf

    def record(self, now: float, delay: float) -> None:
        """An event at ``now`` waited ``delay`` seconds."""
        if now - self._last > self.stale_s:
            self._average = 0.0
        self._average += self.weight * (min(delay, self.clip_s) - self._average)
        self._last = now

    def average_ms(self, now: float) -> float:
        """The average delay (milliseconds); 0 if nothing happened for ``stale_s``."""
        return self._average * 1000 if now - self._last <= self.stale_s else 0.0


async def watch(tracker: LagTracker, on_tick: Callable[[], None] | None = None) -> None:
    """Tick ``tracker`` from this trio loop forever (``trio.current_time`` clock); run
    ``on_tick()`` after each tick. Cancellation ends it."""
    tracker.start(trio.current_time())
    while True:
        await trio.sleep(tracker.tick_s)
        tracker.tick(trio.current_time())
        if on_tick is not None:
            on_tick()


__all__ = ["TICK_S", "TOLERANCE_S", "DelayAverage", "LagTracker", "watch"]
