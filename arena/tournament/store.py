"""Where results live: a ``Store`` protocol and ``SqliteStore`` (one file, no server).

Schema: ``scopes`` (a tournament config or the ladder), ``bots`` (names, specs, hashed
ladder tokens), ``matches``, ``hands``, ``results`` (one row per seat) and ``ratings``
(live openskill ratings per scope). Every finished match is written in ONE transaction:
the match row, its hand rows, both result rows and both bots' new ratings. The match id is
the primary key, so writing a match twice changes nothing (``record`` returns False): a
resumed run skips what is already there and can never count a match twice. WAL mode with
``synchronous=FULL``: a committed match survives a kill -9 (and a power cut).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arena.match.messages import MatchResult, Termination
from arena.tournament.formats import MatchSpec

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS scopes (
    scope TEXT PRIMARY KEY,
    kind TEXT NOT NULL,              -- 'tournament' or 'ladder'
    name TEXT NOT NULL,
    config TEXT NOT NULL,            -- JSON
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL DEFAULT '',
    token_hash TEXT UNIQUE,          -- ladder: sha256 of the secret token; never the token
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL REFERENCES scopes(scope),
    bot0 TEXT NOT NULL,              -- the bot in seat 0
    bot1 TEXT NOT NULL,
    deal INTEGER NOT NULL,
    seat_order INTEGER NOT NULL,
    seed TEXT NOT NULL,
    winner INTEGER,                  -- seat; NULL = no winner (draw or void)
    termination TEXT NOT NULL,
    blamed INTEGER,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    hands INTEGER NOT NULL,
    voided INTEGER NOT NULL,         -- 1: the arena's own fault; not rated, not counted
    detail TEXT NOT NULL,
    finished_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_scope ON matches(scope);
CREATE TABLE IF NOT EXISTS hands (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    hand INTEGER NOT NULL,
    kind TEXT NOT NULL,              -- knock, gin, big_gin, undercut, wall, cap
    winner INTEGER,
    points INTEGER NOT NULL,
    knocker INTEGER,
    deadwood0 INTEGER NOT NULL,
    deadwood1 INTEGER NOT NULL,
    PRIMARY KEY (match_id, hand)
);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    opponent TEXT NOT NULL,
    outcome TEXT NOT NULL,           -- win, loss, draw, void
    score REAL,                      -- 1, 0.5, 0; NULL when void
    points INTEGER NOT NULL,         -- the match's final net score for this seat
    hand_points INTEGER NOT NULL,    -- net points over its hands
    hands INTEGER NOT NULL,
    hands_won INTEGER NOT NULL,
    gins INTEGER NOT NULL,
    undercuts INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    illegal INTEGER NOT NULL,
    forfeit INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX IF NOT EXISTS results_by_bot ON results(bot);
CREATE TABLE IF NOT EXISTS scope_bots (
    scope TEXT NOT NULL REFERENCES scopes(scope),
    bot TEXT NOT NULL,
    spec TEXT NOT NULL,
    fingerprint TEXT NOT NULL,       -- hash of the spec and its main file: a changed bot shows
    PRIMARY KEY (scope, bot)
);
CREATE TABLE IF NOT EXISTS ratings (
    scope TEXT NOT NULL,
    bot TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, bot)
);
"""


class StoreError(Exception):
    """The database cannot be used (not ours, a newer schema, unreadable)."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float
    games: int = 0


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


class Store(Protocol):
    """What tournaments and the ladder need from persistence."""

    def open_scope(self, scope: str, kind: str, name: str, config: str) -> None:
        """Create the scope if new (a no-op if it exists)."""

    def add_bots(self, bots: Iterable[tuple[str, str]]) -> None:
        """Note (name, spec) pairs (existing names keep their row)."""

    def scope_bots(self, scope: str) -> dict[str, tuple[str, str]]:
        """bot -> (spec, fingerprint) as recorded for ``scope``."""

    def set_scope_bots(self, scope: str, bots: Iterable[tuple[str, str, str]]) -> None:
        """Record (bot, spec, fingerprint) for ``scope``, replacing what was there."""

    def finished_ids(self, scope: str) -> set[str]:
        """Ids of the matches already recorded in ``scope``."""

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               ratings: Mapping[str, Rating]) -> bool:
        """Write a finished match and the new ratings atomically; False if already there."""

    def ratings(self, scope: str) -> dict[str, Rating]:
        """The live ratings of ``scope``."""

    def matches(self, scope: str) -> list[MatchRow]:
        """The recorded matches of ``scope``, oldest first."""

    def results(self, scope: str) -> list[ResultRow]:
        """Per-seat result rows of ``scope``."""

    def scopes(self) -> list[ScopeInfo]:
        """Every scope, oldest first."""

    def register_bot(self, name: str, token_hash: str) -> None:
        """Add a ladder bot (``StoreError`` if the name or token is taken)."""

    def bot_for_token_hash(self, token_hash: str) -> str | None:
        """The ladder bot with this token hash, if any."""

    def registered_bots(self) -> list[str]:
        """Names of the bots registered with a token, oldest first."""

    def wins(self, scope: str) -> dict[str, int]:
        """Matches won per bot in ``scope``."""

    def scope_config(self, scope: str) -> dict[str, object]:
        """The JSON config stored with ``scope`` (``StoreError`` if there is no such scope)."""

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


def _outcome(result: MatchResult, seat: int) -> tuple[str, float | None]:
    if is_void(result):
        return "void", None
    if result.winner is None:
        return "draw", 0.5
    return ("win", 1.0) if result.winner == seat else ("loss", 0.0)


class SqliteStore:
    """``Store`` on one SQLite file. Use from one thread; other processes may read or
    register bots at the same time (WAL, busy timeout)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA busy_timeout = 30000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a usable arena database: {e}") from None

    def _migrate(self) -> None:
        db = self._db
        db.executescript(_SCHEMA)  # every statement is IF NOT EXISTS
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: schema version {row[0]} is newer than this "
                                 f"arena's ({SCHEMA_VERSION})")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def journal_mode(self) -> str:
        return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ scopes, bots

    def open_scope(self, scope: str, kind: str, name: str, config: str) -> None:
        """Create ``scope``, or update its stored config to this run's (the bots may grow)."""
        self._db.execute("INSERT INTO scopes VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope) "
                         "DO UPDATE SET config = excluded.config",
                         (scope, kind, name, config, time.time()))

    def scope_bots(self, scope: str) -> dict[str, tuple[str, str]]:
        """bot -> (spec, fingerprint) as recorded for ``scope``."""
        return {r[0]: (r[1], r[2]) for r in self._db.execute(
            "SELECT bot, spec, fingerprint FROM scope_bots WHERE scope = ?", (scope,))}

    def set_scope_bots(self, scope: str, bots: Iterable[tuple[str, str, str]]) -> None:
        """Record (bot, spec, fingerprint) for ``scope``, replacing what was there."""
        self._db.executemany(
            "INSERT INTO scope_bots VALUES (?, ?, ?, ?) ON CONFLICT (scope, bot) DO UPDATE "
            "SET spec = excluded.spec, fingerprint = excluded.fingerprint",
            [(scope, b, s, f) for b, s, f in bots])

    def scopes(self) -> list[ScopeInfo]:
        rows = self._db.execute(
            "SELECT s.scope, s.kind, s.name, s.config, s.created_at, "
            "(SELECT COUNT(*) FROM matches m WHERE m.scope = s.scope) "
            "FROM scopes s ORDER BY s.created_at, s.rowid").fetchall()
        return [ScopeInfo(*r) for r in rows]

    def add_bots(self, bots: Iterable[tuple[str, str]]) -> None:
        now = time.time()
        self._db.executemany("INSERT OR IGNORE INTO bots (name, spec, created_at) "
                             "VALUES (?, ?, ?)", [(n, s, now) for n, s in bots])

    def register_bot(self, name: str, token_hash: str) -> None:
        try:
            self._db.execute("INSERT INTO bots (name, spec, token_hash, created_at) "
                             "VALUES (?, '', ?, ?)", (name, token_hash, time.time()))
        except sqlite3.IntegrityError:
            taken = self._db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone()
            raise StoreError(f"the name {name!r} is already registered" if taken
                             else "that token is already in use; choose another") from None

    def bot_for_token_hash(self, token_hash: str) -> str | None:
        row = self._db.execute("SELECT name FROM bots WHERE token_hash = ?",
                               (token_hash,)).fetchone()
        return None if row is None else str(row[0])

    def registered_bots(self) -> list[str]:
        return [r[0] for r in self._db.execute(
            "SELECT name FROM bots WHERE token_hash IS NOT NULL ORDER BY created_at, name")]

    # ------------------------------------------------------------------ matches

    def finished_ids(self, scope: str) -> set[str]:
        return {r[0] for r in self._db.execute(
            "SELECT match_id FROM matches WHERE scope = ?", (scope,))}

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               ratings: Mapping[str, Rating]) -> bool:
        db = self._db
        seats = spec.seats
        void = is_void(result)
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            try:
                db.execute(
                    "INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (spec.match_id, scope, seats[0], seats[1], spec.deal, spec.order,
                     spec.seed, result.winner, str(result.termination), result.blamed,
                     result.scores[0], result.scores[1], len(result.hands), int(void),
                     result.detail, now))
            except sqlite3.IntegrityError:
                db.execute("ROLLBACK")
                return False
            db.executemany(
                "INSERT INTO hands VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(spec.match_id, i + 1, h.kind, h.winner, h.points, h.knocker, h.deadwood[0],
                  h.deadwood[1]) for i, h in enumerate(result.hands)])
            for seat in (0, 1):
                outcome, score = _outcome(result, seat)
                won = [h for h in result.hands if h.winner == seat]
                lost_points = sum(h.points for h in result.hands
                                  if h.winner is not None and h.winner != seat)
                db.execute(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (spec.match_id, seat, seats[seat], seats[1 - seat], outcome, score,
                     result.scores[seat], sum(h.points for h in won) - lost_points,
                     len(result.hands), len(won),
                     sum(h.kind in ("gin", "big_gin") for h in won),
                     sum(h.kind == "undercut" for h in won),
                     result.stats[seat].timeouts, result.stats[seat].rejections,
                     int(result.blamed == seat)))
            for bot, r in ratings.items():
                db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, bot) "
                    "DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
                    "games = excluded.games, updated_at = excluded.updated_at",
                    (scope, bot, r.mu, r.sigma, r.games, now))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return True

    def wins(self, scope: str) -> dict[str, int]:
        """Matches won per bot in ``scope``."""
        return {r[0]: int(r[1]) for r in self._db.execute(
            "SELECT r.bot, SUM(r.outcome = 'win') FROM results r JOIN matches m "
            "ON m.match_id = r.match_id WHERE m.scope = ? GROUP BY r.bot", (scope,))}

    def ratings(self, scope: str) -> dict[str, Rating]:
        return {r[0]: Rating(r[1], r[2], r[3]) for r in self._db.execute(
            "SELECT bot, mu, sigma, games FROM ratings WHERE scope = ?", (scope,))}

    def matches(self, scope: str) -> list[MatchRow]:
        rows = self._db.execute(
            "SELECT match_id, bot0, bot1, deal, seat_order, seed, winner, termination, "
            "blamed, score0, score1, hands, voided FROM matches WHERE scope = ? "
            "ORDER BY rowid", (scope,)).fetchall()
        return [MatchRow(r[0], (r[1], r[2]), r[3], r[4], r[5], r[6], r[7], r[8],
                         (r[9], r[10]), r[11], bool(r[12])) for r in rows]

    def results(self, scope: str) -> list[ResultRow]:
        rows = self._db.execute(
            "SELECT r.match_id, r.seat, r.bot, r.opponent, r.outcome, r.points, r.hand_points, "
            "r.hands, r.hands_won, r.gins, r.undercuts, r.timeouts, r.illegal, r.forfeit "
            "FROM results r JOIN matches m ON m.match_id = r.match_id WHERE m.scope = ? "
            "ORDER BY m.rowid, r.seat", (scope,)).fetchall()
        return [ResultRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                          r[12], bool(r[13])) for r in rows]

    def scope_config(self, scope: str) -> dict[str, object]:
        row = self._db.execute("SELECT config FROM scopes WHERE scope = ?", (scope,)).fetchone()
        if row is None:
            raise StoreError(f"no scope {scope!r} in {self.path}")
        data = json.loads(row[0])
        return data if isinstance(data, dict) else {}


__all__ = ["MatchRow", "Rating", "ResultRow", "ScopeInfo", "SqliteStore", "Store", "StoreError",
           "is_void"]
