"""What every results store offers: the ``Store`` protocol, its rows and its errors.

A store keeps *scopes* (a tournament, a ladder season, an ``arena play`` run: each with
its config and its deal secret), bots, finished matches with their hands and per-seat
results, live ratings, and the *queue* of a scope's scheduled matches. Workers on any
number of processes and hosts claim queued matches for a while (a lease they renew while
they play), and commit each result with its rating update in one transaction; a claim
whose lease runs out (its worker was killed or cut off) is claimed again, and a match is
recorded at most once whoever finishes it. Implementations: ``arena.store.sqlite`` (one
file, no server) and ``arena.store.postgres`` (many hosts); ``arena.store.open_store``
picks one from a path or a URL.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from arena.match.messages import MatchResult, Termination
from arena.match.spec import MatchSpec


class StoreError(Exception):
    """The database cannot be used (not ours, a newer schema, unreadable), or it refused a
    write for another reason than "this scope already has this match"."""


class StoreBusy(StoreError):
    """The database is busy, locked or out of reach for now: try again later (nothing was
    written)."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float
    games: int = 0


Rate = Callable[[Mapping[str, Rating]], Mapping[str, Rating]]
"""A live rating update: given the stored ratings of a match's two bots (a bot with none
yet is absent), their ratings after the match. Called inside the recording transaction,
perhaps more than once (a retried transaction): it must not have side effects."""


@dataclass(frozen=True, slots=True)
class ScopeInfo:
    scope: str
    kind: str
    name: str
    config: str
    created_at: float
    matches: int


@dataclass(frozen=True, slots=True)
class MatchRow:
    match_id: str
    bots: tuple[str, str]  # seat 0, seat 1
    deal: int
    order: int
    seed: str
    winner: int | None
    termination: str
    blamed: int | None
    scores: tuple[int, int]
    hands: int
    voided: bool
    finished_at: float = 0.0
    detail: str = ""
    after_verdict: bool = False  # recorded after the scope was stopped (an SPRT's verdict)
    seq: int = 0  # the store's order of recording (``matches_since``)

    @property
    def pair(self) -> tuple[str, str]:
        a, b = self.bots
        return (a, b) if self.order == 0 else (b, a)

    def score_of(self, bot: str) -> float | None:
        """1, 0.5 or 0 for ``bot``; None for a void match."""
        if self.voided:
            return None
        if self.winner is None:
            return 0.5
        return 1.0 if self.bots[self.winner] == bot else 0.0


@dataclass(frozen=True, slots=True)
class ResultRow:
    match_id: str
    seat: int
    bot: str
    opponent: str
    outcome: str
    points: int
    hand_points: int
    hands: int
    hands_won: int
    gins: int
    undercuts: int
    timeouts: int
    illegal: int
    forfeit: bool
    errors: int = 0
    first_error: str = ""


@dataclass(frozen=True, slots=True)
class Claim:
    """A queued match taken by a worker until ``lease_until`` (wall clock, seconds)."""

    scope: str
    spec: MatchSpec
    worker: str
    attempt: int  # 1 on the first claim; more when an earlier lease ran out
    lease_until: float


@dataclass(frozen=True, slots=True)
class Waiting:
    """A ladder front end's waiting sessions of one bot, as it last published them."""

    frontend: str  # the front end's id
    address: str  # where bots reach it (host:port)
    bot: str
    sessions: int
    free: int  # matches it can start now (its admission)
    seen: int  # the last pairing it had read when it published this
    age_s: float  # how long ago it published


@dataclass(frozen=True, slots=True)
class Pairing:
    """A match the ladder's matchmaker made: ``host`` plays it; if ``guest`` is another
    front end, that one sends its waiting session of ``guest_bot`` to the host with a
    ``Redirect`` carrying ``seat_key``."""

    spec: MatchSpec
    host: str
    host_address: str
    guest: str  # == host when both bots wait there
    guest_bot: str
    seat_key: str
    seq: int = 0  # the store's number for it (0 until stored)


class QueueState(StrEnum):
    QUEUED = "queued"  # waiting for a worker
    CLAIMED = "claimed"  # a worker holds it (until its lease runs out)
    DONE = "done"  # recorded
    CANCELLED = "cancelled"  # its scope was stopped before anyone claimed it
    SKIPPED = "skipped"  # neither bot came: not played now, queued again by the next run


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """How a scope's scheduled matches stand."""

    queued: int = 0
    claimed: int = 0  # leases still running
    expired: int = 0  # claimed, but the lease ran out: claimable again
    done: int = 0
    cancelled: int = 0
    skipped: int = 0

    @property
    def open(self) -> int:
        """Matches not yet recorded or cancelled."""
        return self.queued + self.claimed + self.expired


class Store(Protocol):
    """What tournaments, ``arena play``, the ladder and workers need from persistence.
    Thread-safe: methods may be called from any thread (runners write from worker
    threads). Every write is one transaction; ``StoreBusy`` means nothing was written."""

    label: str
    """What to call the store in messages: its file, or its URL without a password."""

    # ---------------------------------------------------------------- scopes and bots

    def open_scope(self, scope: str, kind: str, name: str, config: str,
                   secret: str = "") -> str:
        """Create the scope if new (with ``secret``, or a fresh random one), else update its
        stored config; return the scope's secret. ``StoreError`` if ``secret`` is given and
        the scope already has another."""

    def add_bots(self, bots: Iterable[tuple[str, str]]) -> None:
        """Note (name, spec) pairs (existing names keep their row)."""

    def scope_bots(self, scope: str) -> dict[str, tuple[str, str]]:
        """bot -> (spec, fingerprint) as recorded for ``scope``."""

    def set_scope_bots(self, scope: str, bots: Iterable[tuple[str, str, str]]) -> None:
        """Record (bot, spec, fingerprint) for ``scope``, replacing what was there."""

    def scopes(self) -> list[ScopeInfo]:
        """Every scope, oldest first."""

    def scope_config(self, scope: str) -> dict[str, object]:
        """The JSON config stored with ``scope`` (``StoreError`` if there is no such scope)."""

    def register_bot(self, name: str, token_hash: str) -> None:
        """Add a ladder bot (``StoreError`` if the name, in any case, or the token is taken)."""

    def set_token(self, name: str, token_hash: str | None) -> None:
        """Give a registered bot a new token hash, or revoke its token (None)."""

    def bot_for_token_hash(self, token_hash: str) -> str | None:
        """The ladder bot with this valid (not revoked) token hash, if any."""

    def registered_bots(self) -> list[str]:
        """Names of the bots registered with a token, oldest first."""

    def token_epoch(self) -> int:
        """A number that changes whenever a token is revoked or rotated."""

    # ---------------------------------------------------------------- results

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               rate: Rate | None = None) -> bool:
        """Write a finished match, its hands and results, the new ratings (``rate`` applied
        to the stored ones) and its queue entry's end, in one transaction; False (nothing
        written) if ``scope`` already has this match. A match recorded after the scope was
        stopped is kept, marked ``after_verdict``. ``StoreBusy`` if the database is locked
        or out of reach (nothing was written), ``StoreError`` if it refused the write for
        any other reason."""

    def finished_ids(self, scope: str) -> set[str]:
        """Ids of the matches already recorded in ``scope``."""

    def matches(self, scope: str) -> list[MatchRow]:
        """The recorded matches of ``scope``, oldest first."""

    def matches_since(self, scope: str, seq: int, limit: int = 1000) -> list[MatchRow]:
        """The matches of ``scope`` recorded after the one numbered ``seq`` (0: from the
        start), in recording order, at most ``limit``: a watcher's feed."""

    def results(self, scope: str) -> list[ResultRow]:
        """Per-seat result rows of ``scope``."""

    def ratings(self, scope: str) -> dict[str, Rating]:
        """The live ratings of ``scope``."""

    def wins(self, scope: str) -> dict[str, int]:
        """Matches won per bot in ``scope``."""

    # ---------------------------------------------------------------- the queue

    def enqueue(self, scope: str, specs: Iterable[MatchSpec]) -> int:
        """Schedule matches of ``scope`` to be claimed in the order given; a match already
        queued, claimed, recorded or cancelled is left as it is (scheduling twice changes
        nothing), a skipped one is queued again. Returns how many were new."""

    def claim(self, worker: str, *, lease_s: float, scopes: Sequence[str] | None = None,
              limit: int = 1) -> list[Claim]:
        """Take up to ``limit`` matches for ``worker`` until ``lease_s`` from now: queued
        ones, or claimed ones whose lease ran out, the earliest scheduled first; of
        ``scopes`` only (None: any), never of a stopped scope. Two workers never get the
        same match while its lease runs."""

    def renew(self, worker: str, held: Sequence[tuple[str, str]], lease_s: float
              ) -> set[tuple[str, str]]:
        """Extend ``worker``'s leases on ``held`` (scope, match id) to ``lease_s`` from now;
        returns those it no longer holds (recorded, cancelled, or claimed by another after
        its lease ran out)."""

    def release(self, worker: str, held: Sequence[tuple[str, str]], *,
                skip: bool = False) -> None:
        """Give back claims not played: queued again at once (a worker stopping), or with
        ``skip``, set aside until the series is queued again (neither bot came); of a
        stopped scope, cancelled."""

    def claimable_scopes(self) -> list[str]:
        """Scopes with a match a worker could claim now (queued, or its lease ran out),
        earliest scheduled first."""

    def holders(self, scope: str) -> list[str]:
        """The workers holding claims of ``scope`` (whether or not their leases run)."""

    def reclaim(self, scope: str, worker: str) -> int:
        """Queue again every claim ``worker`` holds in ``scope``: it is known to be gone
        (its process on this host no longer runs), so nobody need wait for its leases.
        Returns how many."""

    def queue_counts(self, scope: str) -> QueueCounts:
        """How ``scope``'s scheduled matches stand. Of a stopped scope, what can never be
        claimed again (queued, or a claim whose lease ran out) counts as cancelled."""

    def stop_scope(self, scope: str, verdict: str, after_seq: int = -1) -> None:
        """Stop ``scope``: its queued matches are cancelled and no more are claimed;
        results recorded from now on are kept but marked ``after_verdict``, and so are
        those already recorded after the match numbered ``after_seq`` (the one that
        decided; -1: none)."""

    def scope_verdict(self, scope: str) -> str:
        """The verdict ``scope`` was stopped with ("" while it runs)."""

    def take_coordinator(self, scope: str, owner: str, lease_s: float, *,
                         replacing: str = "") -> str:
        """Become (or stay) ``scope``'s one coordinator for ``lease_s``: returns "" if
        ``owner`` holds it now, else the owner whose lease still runs. ``replacing``: an
        owner known to be gone, whose lease is taken over even while it runs."""

    def drop_coordinator(self, scope: str, owner: str) -> None:
        """``owner`` stops coordinating ``scope`` (a no-op if it does not)."""

    # ---------------------------------------------------------------- ladder matchmaking

    def set_waiting(self, scope: str, frontend: str, address: str, free: int, seen: int,
                    sessions: Mapping[str, int]) -> None:
        """Publish ``frontend``'s waiting sessions (bot -> count), replacing what it
        published before (``free``, ``seen``: see ``Waiting``)."""

    def waiting(self, scope: str, fresh_s: float) -> list[Waiting]:
        """What every front end published within ``fresh_s`` (older: it is gone)."""

    def add_pairings(self, scope: str, pairings: Sequence[Pairing], leader: str
                     ) -> list[Pairing]:
        """Store new pairings made by ``leader``, in the transaction that checks it still
        holds the scope's coordinator lease (else nothing is stored: []); returns them with
        their numbers."""

    def mark_pairing(self, scope: str, seq: int, state: str) -> None:
        """Note what the guest front end did with pairing ``seq``: "redirected" (its bot
        was sent to the host) or "void" (its bot no longer waited)."""

    def pairing_state(self, scope: str, seq: int) -> str:
        """What ``mark_pairing`` noted ("" : nothing yet)."""

    def pairings_since(self, scope: str, frontend: str, seq: int) -> list[Pairing]:
        """The pairings numbered after ``seq`` that ``frontend`` hosts or is guest of
        (``frontend`` "": all of them), in order."""

    def last_pairing(self, scope: str) -> int:
        """The number of the latest pairing of ``scope`` (0: none)."""

    def meetings(self, scope: str) -> dict[tuple[str, str], int]:
        """Per pair (canonical order), how many meetings were made so far: matches
        recorded and pairings made (a pairing is a meeting even if it never played)."""

    def close(self) -> None:
        """Release the database."""


def is_void(result: MatchResult) -> bool:
    """True for a match that is neither counted nor rated: one that failed through the
    arena's own fault, or ended with no winner for another reason than the game (e.g.
    neither bot showed up). A completed or capped game without a winner is a draw."""
    if result.termination is Termination.ARENA_ERROR:
        return True
    return result.winner is None and result.termination not in (Termination.COMPLETED,
                                                                 Termination.CAPPED)


def outcome(result: MatchResult, seat: int) -> tuple[str, float | None]:
    """``seat``'s outcome (win, loss, draw, void) and score (1, 0, 0.5, None)."""
    if is_void(result):
        return "void", None
    if result.winner is None:
        return "draw", 0.5
    return ("win", 1.0) if result.winner == seat else ("loss", 0.0)


def result_rows(result: MatchResult, seats: tuple[str, str]) -> list[tuple[object, ...]]:
    """Both seats' result columns (seat .. first_error) as every store writes them."""
    rows: list[tuple[object, ...]] = []
    for seat in (0, 1):
        kind, score = outcome(result, seat)
        won = [h for h in result.hands if h.winner == seat]
        lost_points = sum(h.points for h in result.hands
                          if h.winner is not None and h.winner != seat)
        stats = result.stats[seat]
        rows.append((seat, seats[seat], seats[1 - seat], kind, score, result.scores[seat],
                     sum(h.points for h in won) - lost_points, len(result.hands), len(won),
                     sum(h.kind in ("gin", "big_gin") for h in won),
                     sum(h.kind == "undercut" for h in won), stats.timeouts,
                     stats.rejections, int(result.blamed == seat), stats.errors,
                     stats.first_error))
    return rows


def new_secret() -> str:
    """A fresh scope secret: 128 random bits."""
    return secrets.token_hex(16)


__all__ = ["Claim", "MatchRow", "Pairing", "QueueCounts", "QueueState", "Rate", "Rating",
           "ResultRow", "ScopeInfo", "Store", "StoreBusy", "StoreError", "Waiting", "is_void",
           "new_secret", "outcome", "result_rows"]
