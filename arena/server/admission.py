"""Admission: when one more match may start on this arena, by its measured lag.

``Admission`` decides when one more match may start: fewer than ``max_matches`` running
(0: no fixed cap), fewer than its window, and neither of the arena's loops lagging more
than ``max_lag_ms`` (a saturated arena would make every match slower; past capacity, new
matches wait instead), at most ``burst`` new matches per lag tick. The window follows
the measured lag, growing while the loops keep up and shrinking when they fall behind
(``Admission.tick``): a lag figure trails the load a match adds, so a gate on the lag
alone let a long lobby flood in during any lull (968 matches at once, with 2,000 bots on
2 cores where about 250 keep up; issue 17).
"""

from __future__ import annotations

from collections.abc import Callable

import trio

HOLD_TICKS = 50  # ticks (1 s) after a shrink of the admission window before the next
UNLIMITED = 1_000_000  # ``Admission.free`` when nothing limits the matches


class Admission:
    """When another match may start (see the module docstring). Trio thread only;
    ``tick()`` is called on every lag tick (every 20 ms)."""

    def __init__(self, *, max_matches: int = 0, max_lag_ms: float = 0.0,
                 lag_ms: Callable[[], float] = lambda: 0.0, burst: int = 8,
                 initial_window: int = 16) -> None:
        self.max_matches = max_matches
        self.max_lag_ms = max_lag_ms
        self.running = 0
        self.started = 0
        self._lag_ms = lag_ms
        self._burst = burst
        self._started_this_tick = 0
        self._changed = trio.Event()
        # the window: how many matches may run at once by the measured lag (0: no limit)
        self._initial = initial_window
        self.window = initial_window if max_lag_ms else 0
        self._hold = 0  # ticks left before the window may shrink again

    @property
    def is_full(self) -> bool:
        """True at capacity: ``max_matches`` running, the window full, or a loop lagging
        past ``max_lag_ms``."""
        if self.max_matches and self.running >= self.max_matches:
            return True
        if not self.max_lag_ms:
            return False
        return self.running >= self.window or self._lag_ms() > self.max_lag_ms

    @property
    def is_open(self) -> bool:
        """True if a match may start now (not full, and this tick's burst not used up)."""
        if self._burst and self._started_this_tick >= self._burst:
            return False
        return not self.is_full

    @property
    def free(self) -> int:
        """How many more matches may start now (``UNLIMITED`` with no limit at all)."""
        if not self.is_open:
            return 0
        room = [UNLIMITED]
        if self.max_matches:
            room.append(self.max_matches - self.running)
        if self.max_lag_ms:
            room.append(self.window - self.running)
        if self._burst:
            room.append(self._burst - self._started_this_tick)
        return max(0, min(room))

    async def acquire(self) -> None:
        """Wait until a match may start, and count it as running. Cancellation: nothing
        is counted."""
        while not self.is_open:
            await self._changed.wait()
        self.running += 1
        self.started += 1
        self._started_this_tick += 1

    def try_acquire(self) -> bool:
        """Count a match as running if one may start now; False (nothing counted) if not."""
        if not self.is_open:
            return False
        self.running += 1
        self.started += 1
        self._started_this_tick += 1
        return True

    def release(self) -> None:
        """A match counted by ``acquire`` ended."""
        self.running -= 1
        self._wake()

    def tick(self) -> None:
        """The lag was measured again: adjust the window; a new burst may start.

        Additive increase, multiplicative decrease (as TCP paces a connection): while the
        worst lag of the last second is under half the limit and the window is in use, it
        grows by one match a tick (it stops between half the limit and the limit); when
        the lag passes the limit it shrinks to 3/4 of the matches running, then holds a
        second (the lag figure looks a second back) before it may shrink again, and
        shrinks again only once the matches running are within it (until then none start
        anyway). A momentary lull never lets a long lobby flood in: at most one more match
        per tick than were running."""
        self._started_this_tick = 0
        if self.max_lag_ms:
            lag = self._lag_ms()
            if self._hold:
                self._hold -= 1
            if lag > self.max_lag_ms:
                if not self._hold and self.running <= self.window:
                    self.window = max(1, min(self.window, self.running) * 3 // 4)
                    self._hold = HOLD_TICKS
            elif lag < self.max_lag_ms / 2 and self.window - 1 <= self.running <= self.window:
                self.window += 1
        self._wake()

    async def wait_change(self) -> None:
        """Wait until a match ends or the lag is measured again."""
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


__all__ = ["HOLD_TICKS", "UNLIMITED", "Admission"]
