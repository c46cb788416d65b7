"""The lobby: sessions that said Hello and wait for a match, oldest first.

``Lobby`` keeps waiting sessions in arrival order and by entrant key (a token, or a name
where none is required), so seating the oldest pair (``pop_two``), the next session of an
entrant (``pop_key``) or one of each of two entrants (``take_two``) costs about O(1) per
session seated, whatever the number waiting. A session leaves the lobby by being seated
or by ``remove`` (its stream ended); either way it is marked, and the queues drop it
lazily.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

import trio


class Waiting(Protocol):
    """What the lobby needs of a waiting session."""

    key: str
    in_lobby: bool

    @property
    def is_gone(self) -> bool:
        """The session's stream has ended."""


E = TypeVar("E", bound=Waiting)


class Lobby(Generic[E]):
    """Waiting sessions (see the module docstring). Trio thread only."""

    def __init__(self) -> None:
        self._order: deque[E] = deque()  # every session in the lobby, oldest first (lazy)
        self._by_key: dict[str, deque[E]] = {}
        self._count = 0  # sessions in the lobby (in_lobby), gone or not
        self._changed = trio.Event()

    def __len__(self) -> int:
        return self._count

    def add(self, entry: E) -> None:
        """A new session waits (at the back)."""
        entry.in_lobby = True
        self._order.append(entry)
        self._by_key.setdefault(entry.key, deque()).append(entry)
        self._count += 1
        self._wake()

    def put_back(self, entry: E) -> None:
        """A session taken for a match that did not start waits again, at the front."""
        entry.in_lobby = True
        self._order.appendleft(entry)
        self._by_key.setdefault(entry.key, deque()).appendleft(entry)
        self._count += 1
        self._wake()

    def remove(self, entry: E) -> None:
        """The session leaves (its stream ended); a no-op if it is not waiting."""
        if entry.in_lobby:
            self._leave(entry)
            self._compact()

    def pop_key(self, key: str) -> E | None:
        """The oldest live session of entrant ``key``, taken out; None if it has none."""
        queue = self._by_key.get(key)
        while queue:
            entry = queue.popleft()
            if entry.in_lobby and not entry.is_gone:
                self._leave(entry)
                return entry
        return None

    def pop_two(self) -> tuple[E, E] | None:
        """The two oldest live sessions, taken out; None (nothing taken) if fewer wait."""
        found: list[E] = []
        for entry in self._live():
            found.append(entry)
            if len(found) == 2:
                for e in found:
                    self._leave(e)
                self._compact()
                return (found[0], found[1])
        return None

    def take_two(self, keys: tuple[str, str]) -> tuple[E, E] | None:
        """The oldest live session of each of ``keys``, taken out; None (nothing taken)
        if either has none."""
        found: list[E] = []
        for key in keys:
            entry = next((e for e in self._by_key.get(key, ())
                          if e.in_lobby and not e.is_gone and e not in found), None)
            if entry is None:
                return None
            found.append(entry)
        for e in found:
            self._leave(e)
        self._compact()
        return (found[0], found[1])

    def live(self) -> list[E]:
        """Every live waiting session, oldest first."""
        return list(self._live())

    def place(self, entry: E) -> int:
        """``entry``'s place among the live waiting sessions (1 = next), 0 if not waiting."""
        for n, e in enumerate(self._live(), 1):
            if e is entry:
                return n
        return 0

    async def wait_change(self) -> None:
        """Wait until a session joins (or returns to) the lobby. Cancellation: just stops."""
        await self._changed.wait()

    # ------------------------------------------------------------------ inside

    def _live(self) -> Iterator[E]:
        order = self._order
        while order and not order[0].in_lobby:  # drop what left from the front
            order.popleft()
        return (e for e in order if e.in_lobby and not e.is_gone)

    def _leave(self, entry: E) -> None:
        entry.in_lobby = False
        self._count -= 1

    def _compact(self) -> None:
        """Rebuild the queues when most of what they hold has left (keeps them O(live))."""
        if len(self._order) > 2 * self._count + 64:
            self._order = deque(e for e in self._order if e.in_lobby)
            by_key: dict[str, deque[E]] = {}
            for e in self._order:
                by_key.setdefault(e.key, deque()).append(e)
            self._by_key = by_key

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


__all__ = ["Lobby", "Waiting"]
