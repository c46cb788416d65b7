"""Where results live: a ``Store`` protocol and ``SqliteStore`` (one file, no server).

Schema: ``scopes`` (a tournament config or a ladder season, with its deal secret),
``bots`` (names, specs, hashed ladder tokens), ``matches``, ``hands``, ``results`` (one row
per seat) and ``ratings`` (live openskill ratings per scope). Every finished match is
written in ONE transaction: the match row, its hand rows, both result rows and both bots'
new ratings. A match is keyed by (scope, match id), so writing a match twice changes
nothing (``record`` returns False) and two scopes never collide: a resumed run skips what
is already there and can never count a match twice. Any other refused write is a
``StoreError``; a busy or locked database is a ``StoreBusy`` (the caller retries). WAL mode
with ``synchronous=FULL``: a committed match survives a kill -9 (and a power cut).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from arena.match.messages import MatchResult, Termination
from arena.tournament.formats import MatchSpec

SCHEMA_VERSION = 3

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
    created_at REAL NOT NULL,
    secret TEXT NOT NULL DEFAULT ''  -- keys deal seeds and match ids; never sent to a bot
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL DEFAULT '',
    token_hash TEXT UNIQUE,          -- ladder: sha256 of the secret token; never the token
    created_at REAL NOT NULL,
    revoked_at REAL                  -- ladder: the token was revoked (NULL: valid)
);
CREATE TABLE IF NOT EXISTS matches (
    scope TEXT NOT NULL REFERENCES scopes(scope),
    match_id TEXT NOT NULL,
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
    finished_at REAL NOT NULL,
    PRIMARY KEY (scope, match_id)
);
CREATE TABLE IF NOT EXISTS hands (
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
    hand INTEGER NOT NULL,
    kind TEXT NOT NULL,              -- knock, gin, big_gin, undercut, wall, cap
    winner INTEGER,
    points INTEGER NOT NULL,
    knocker INTEGER,
    deadwood0 INTEGER NOT NULL,
    deadwood1 INTEGER NOT NULL,
    PRIMARY KEY (scope, match_id, hand),
    FOREIGN KEY (scope, match_id) REFERENCES matches(scope, match_id)
);
CREATE TABLE IF NOT EXISTS results (
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
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
    errors INTEGER NOT NULL DEFAULT 0,      -- bot errors (its code raised, or not a move)
    first_error TEXT NOT NULL DEFAULT '',   -- the first one, in a line
    PRIMARY KEY (scope, match_id, seat),
    FOREIGN KEY (scope, match_id) REFERENCES matches(scope, match_id)
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

# Schema 1 keyed matches by their id alone (a second scope with the same ids could not
# record anything) and had no scope secret or token revocation: rebuild those tables.
_MIGRATE_1_TO_2 = """
ALTER TABLE scopes ADD COLUMN secret TEXT NOT NULL DEFAULT '';
ALTER TABLE bots ADD COLUMN revoked_at REAL;
ALTER TABLE matches RENAME TO matches_v1;
ALTER TABLE hands RENAME TO hands_v1;
ALTER TABLE results RENAME TO results_v1;
DROP INDEX IF EXISTS matches_by_scope;
DROP INDEX IF EXISTS results_by_bot;
"""
_COPY_1_TO_2 = """
INSERT INTO matches SELECT scope, match_id, bot0, bot1, deal, seat_order, seed, winner,
    termination, blamed, score0, score1, hands, voided, detail, finished_at FROM matches_v1;
INSERT INTO hands SELECT m.scope, h.match_id, h.hand, h.kind, h.winner, h.points, h.knocker,
    h.deadwood0, h.deadwood1 FROM hands_v1 h JOIN matches_v1 m ON m.match_id = h.match_id;
INSERT INTO results SELECT m.scope, r.match_id, r.seat, r.bot, r.opponent, r.outcome, r.score,
    r.points, r.hand_points, r.hands, r.hands_won, r.gins, r.undercuts, r.timeouts,
    r.illegal, r.forfeit, 0, '' FROM results_v1 r JOIN matches_v1 m ON m.match_id = r.match_id;
DROP TABLE results_v1;
DROP TABLE hands_v1;
DROP TABLE matches_v1;
"""

# Schema 3 counts bot errors apart from illegal moves (issue 13).
_MIGRATE_2_TO_3 = """
ALTER TABLE results ADD COLUMN errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN first_error TEXT NOT NULL DEFAULT '';
"""


class StoreError(Exception):
    """The database cannot be used (not ours, a newer schema, unreadable), or it refused a
    write for another reason than "this scope already has this match"."""


class StoreBusy(StoreError):
    """The database is busy or locked by another connection: try again later."""


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
    finished_at: float = 0.0
    detail: str = ""

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


class Store(Protocol):
    """What tournaments and the ladder need from persistence. Methods may be called from
    any one thread at a time (the runners write from a worker thread)."""

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

    def finished_ids(self, scope: str) -> set[str]:
        """Ids of the matches already recorded in ``scope``."""

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               ratings: Mapping[str, Rating]) -> bool:
        """Write a finished match and the new ratings atomically; False if ``scope`` already
        has this match. ``StoreBusy`` if the database is locked (nothing was written),
        ``StoreError`` if it refused the write for any other reason."""

    def ratings(self, scope: str) -> dict[str, Rating]:
        """The live ratings of ``scope``."""

    def matches(self, scope: str) -> list[MatchRow]:
        """The recorded matches of ``scope``, oldest first."""

    def results(self, scope: str) -> list[ResultRow]:
        """Per-seat result rows of ``scope``."""

    def scopes(self) -> list[ScopeInfo]:
        """Every scope, oldest first."""

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


def _statements(script: str) -> list[str]:
    """The SQL statements of ``script`` (its comments may hold semicolons)."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    return [s for s in out if s.strip(" ;\n")]


def new_secret() -> str:
    """A fresh scope secret: 128 random bits."""
    return secrets.token_hex(16)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


T = TypeVar("T")


class SqliteStore:
    """``Store`` on one SQLite file. Thread-safe (one connection, used under a lock), so
    a runner may write from a worker thread while its loop reads; other processes may
    read or register bots at the same time (WAL, busy timeout)."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 5.0) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None,
                                       timeout=busy_timeout_s, check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout = {round(busy_timeout_s * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.OperationalError as e:
            if _is_busy(e):
                raise StoreBusy(f"{path}: the database is locked by another program") \
                    from None
            raise StoreError(f"{path}: not a usable arena database: {e}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a usable arena database: {e}") from None

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, "
                       "value TEXT NOT NULL)")
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row is not None else None
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: schema version {version} is newer than this "
                                 f"arena's ({SCHEMA_VERSION})")
            if version is None and db.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'matches'").fetchone():
                raise StoreError(f"{self.path}: not a usable arena database: it has a "
                                 "matches table but no schema version")
            if version == 1:
                db.execute("PRAGMA defer_foreign_keys = ON")
                for statement in _statements(_MIGRATE_1_TO_2):
                    db.execute(statement)
            if version == 2:
                for statement in _statements(_MIGRATE_2_TO_3):
                    db.execute(statement)
            for statement in _statements(_SCHEMA):  # every statement is IF NOT EXISTS
                db.execute(statement)
            if version == 1:
                for statement in _statements(_COPY_1_TO_2):
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT (key) "
                       "DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('token_epoch', '0')")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _atomic(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``_run`` with ``fn`` in one write transaction (rolled back if it raises)."""

        def go(db: sqlite3.Connection) -> T:
            db.execute("BEGIN IMMEDIATE")
            try:
                out = fn(db)
                if db.in_transaction:
                    db.execute("COMMIT")
                return out
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

        return self._run(go)

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection under the lock; a locked database is StoreBusy."""
        with self._lock:
            try:
                return fn(self._db)
            except sqlite3.OperationalError as e:
                if _is_busy(e):
                    raise StoreBusy(f"{self.path}: database is busy ({e})") from None
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def journal_mode(self) -> str:
        return str(self._run(lambda db: db.execute("PRAGMA journal_mode").fetchone()[0]))

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, target: Path) -> None:
        """Copy the whole database to ``target`` as one consistent snapshot, even while
        other connections write (SQLite's online backup)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        out = sqlite3.connect(str(target))
        try:
            self._run(lambda db: db.backup(out))
        finally:
            out.close()

    # ------------------------------------------------------------------ scopes, bots

    def open_scope(self, scope: str, kind: str, name: str, config: str,
                   secret: str = "") -> str:
        """Create ``scope`` (with ``secret``, or a fresh one), or update its stored config to
        this run's (the bots may grow); return its secret."""

        def go(db: sqlite3.Connection) -> str:
            row = db.execute("SELECT secret FROM scopes WHERE scope = ?", (scope,)).fetchone()
            if row is None:
                kept = secret or new_secret()
                db.execute("INSERT INTO scopes VALUES (?, ?, ?, ?, ?, ?)",
                           (scope, kind, name, config, time.time(), kept))
                return kept
            kept = str(row[0])
            if not kept:  # a scope from schema 1: it gets one now
                kept = secret or new_secret()
                db.execute("UPDATE scopes SET secret = ? WHERE scope = ?", (kept, scope))
            elif secret and secret != kept:
                raise StoreError(f"{self.path}: {scope!r} was played with another secret; "
                                 "leave the secret out to resume it")
            db.execute("UPDATE scopes SET config = ? WHERE scope = ?", (config, scope))
            return kept

        return self._atomic(go)

    def scope_bots(self, scope: str) -> dict[str, tuple[str, str]]:
        """bot -> (spec, fingerprint) as recorded for ``scope``."""
        rows = self._run(lambda db: db.execute(
            "SELECT bot, spec, fingerprint FROM scope_bots WHERE scope = ?", (scope,))
            .fetchall())
        return {r[0]: (r[1], r[2]) for r in rows}

    def set_scope_bots(self, scope: str, bots: Iterable[tuple[str, str, str]]) -> None:
        """Record (bot, spec, fingerprint) for ``scope``, replacing what was there."""
        rows = [(scope, b, s, f) for b, s, f in bots]
        self._run(lambda db: db.executemany(
            "INSERT INTO scope_bots VALUES (?, ?, ?, ?) ON CONFLICT (scope, bot) DO UPDATE "
            "SET spec = excluded.spec, fingerprint = excluded.fingerprint", rows))

    def scopes(self) -> list[ScopeInfo]:
        rows = self._run(lambda db: db.execute(
            "SELECT s.scope, s.kind, s.name, s.config, s.created_at, "
            "(SELECT COUNT(*) FROM matches m WHERE m.scope = s.scope) "
            "FROM scopes s ORDER BY s.created_at, s.rowid").fetchall())
        return [ScopeInfo(*r) for r in rows]

    def add_bots(self, bots: Iterable[tuple[str, str]]) -> None:
        now = time.time()
        rows = [(n, s, now) for n, s in bots]
        self._run(lambda db: db.executemany(
            "INSERT OR IGNORE INTO bots (name, spec, created_at) VALUES (?, ?, ?)", rows))

    def register_bot(self, name: str, token_hash: str) -> None:
        def go(db: sqlite3.Connection) -> None:
            taken = db.execute("SELECT name FROM bots WHERE name = ? COLLATE NOCASE",
                               (name,)).fetchone()
            if taken is not None:
                same = "" if taken[0] == name else f" (as {taken[0]!r})"
                raise StoreError(f"the name {name!r} is already registered{same}")
            try:
                db.execute("INSERT INTO bots (name, spec, token_hash, created_at) "
                           "VALUES (?, '', ?, ?)", (name, token_hash, time.time()))
            except sqlite3.IntegrityError:
                raise StoreError("that token is already in use; choose another") from None

        self._atomic(go)

    def set_token(self, name: str, token_hash: str | None) -> None:
        def go(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT token_hash FROM bots WHERE name = ?", (name,)).fetchone()
            if row is None or row[0] is None:
                raise StoreError(f"no ladder bot named {name!r} is registered")
            try:
                if token_hash is None:
                    db.execute("UPDATE bots SET revoked_at = ? WHERE name = ?",
                               (time.time(), name))
                else:
                    db.execute("UPDATE bots SET token_hash = ?, revoked_at = NULL "
                               "WHERE name = ?", (token_hash, name))
            except sqlite3.IntegrityError:
                raise StoreError("that token is already in use; choose another") from None
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                       "WHERE key = 'token_epoch'")

        self._atomic(go)

    def bot_for_token_hash(self, token_hash: str) -> str | None:
        row = self._run(lambda db: db.execute(
            "SELECT name FROM bots WHERE token_hash = ? AND revoked_at IS NULL",
            (token_hash,)).fetchone())
        return None if row is None else str(row[0])

    def registered_bots(self) -> list[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT name FROM bots WHERE token_hash IS NOT NULL ORDER BY created_at, name")
            .fetchall())
        return [r[0] for r in rows]

    def token_epoch(self) -> int:
        row = self._run(lambda db: db.execute(
            "SELECT value FROM meta WHERE key = 'token_epoch'").fetchone())
        return int(row[0]) if row is not None else 0

    # ------------------------------------------------------------------ matches

    def finished_ids(self, scope: str) -> set[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT match_id FROM matches WHERE scope = ?", (scope,)).fetchall())
        return {r[0] for r in rows}

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               ratings: Mapping[str, Rating]) -> bool:
        seats = spec.seats
        void = is_void(result)
        now = time.time()
        key = (scope, spec.match_id)

        def go(db: sqlite3.Connection) -> bool:
            if db.execute("SELECT 1 FROM matches WHERE scope = ? AND match_id = ?",
                          key).fetchone():
                return False  # nothing written: the transaction commits empty
            db.execute(
                "INSERT INTO matches VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope, spec.match_id, seats[0], seats[1], spec.deal, spec.order,
                 spec.seed, result.winner, str(result.termination), result.blamed,
                 result.scores[0], result.scores[1], len(result.hands), int(void),
                 result.detail, now))
            db.executemany(
                "INSERT INTO hands VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(scope, spec.match_id, i + 1, h.kind, h.winner, h.points, h.knocker,
                  h.deadwood[0], h.deadwood[1]) for i, h in enumerate(result.hands)])
            for seat in (0, 1):
                outcome, score = _outcome(result, seat)
                won = [h for h in result.hands if h.winner == seat]
                lost_points = sum(h.points for h in result.hands
                                  if h.winner is not None and h.winner != seat)
                db.execute(
                    "INSERT INTO results VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope, spec.match_id, seat, seats[seat], seats[1 - seat], outcome,
                     score, result.scores[seat], sum(h.points for h in won) - lost_points,
                     len(result.hands), len(won),
                     sum(h.kind in ("gin", "big_gin") for h in won),
                     sum(h.kind == "undercut" for h in won),
                     result.stats[seat].timeouts, result.stats[seat].rejections,
                     int(result.blamed == seat), result.stats[seat].errors,
                     result.stats[seat].first_error))
            for bot, r in ratings.items():
                db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, bot) "
                    "DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
                    "games = excluded.games, updated_at = excluded.updated_at",
                    (scope, bot, r.mu, r.sigma, r.games, now))
            return True

        try:
            return self._atomic(go)
        except sqlite3.DatabaseError as e:  # StoreBusy is raised by _run, not caught here
            raise StoreError(f"{self.path}: could not record match {spec.match_id} of "
                             f"{scope!r}: {e}") from e

    def wins(self, scope: str) -> dict[str, int]:
        """Matches won per bot in ``scope``."""
        rows = self._run(lambda db: db.execute(
            "SELECT bot, SUM(outcome = 'win') FROM results WHERE scope = ? GROUP BY bot",
            (scope,)).fetchall())
        return {r[0]: int(r[1]) for r in rows}

    def ratings(self, scope: str) -> dict[str, Rating]:
        rows = self._run(lambda db: db.execute(
            "SELECT bot, mu, sigma, games FROM ratings WHERE scope = ?", (scope,)).fetchall())
        return {r[0]: Rating(r[1], r[2], r[3]) for r in rows}

    def matches(self, scope: str) -> list[MatchRow]:
        rows = self._run(lambda db: db.execute(
            "SELECT match_id, bot0, bot1, deal, seat_order, seed, winner, termination, "
            "blamed, score0, score1, hands, voided, finished_at, detail FROM matches "
            "WHERE scope = ? ORDER BY rowid", (scope,)).fetchall())
        return [MatchRow(r[0], (r[1], r[2]), r[3], r[4], r[5], r[6], r[7], r[8],
                         (r[9], r[10]), r[11], bool(r[12]), r[13], r[14]) for r in rows]

    def results(self, scope: str) -> list[ResultRow]:
        rows = self._run(lambda db: db.execute(
            "SELECT r.match_id, r.seat, r.bot, r.opponent, r.outcome, r.points, r.hand_points, "
            "r.hands, r.hands_won, r.gins, r.undercuts, r.timeouts, r.illegal, r.forfeit, "
            "r.errors, r.first_error "
            "FROM results r JOIN matches m ON m.scope = r.scope AND m.match_id = r.match_id "
            "WHERE r.scope = ? ORDER BY m.rowid, r.seat", (scope,)).fetchall())
        return [ResultRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                          r[12], bool(r[13]), r[14], r[15]) for r in rows]

    def scope_config(self, scope: str) -> dict[str, object]:
        row = self._run(lambda db: db.execute(
            "SELECT config FROM scopes WHERE scope = ?", (scope,)).fetchone())
        if row is None:
            raise StoreError(f"no scope {scope!r} in {self.path}")
        data = json.loads(row[0])
        return data if isinstance(data, dict) else {}


__all__ = ["MatchRow", "Rating", "ResultRow", "ScopeInfo", "SqliteStore", "Store", "StoreBusy",
           "StoreError", "is_void", "new_secret"]
