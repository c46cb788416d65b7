"""``SqliteStore``: the ``Store`` on one SQLite file, with no server to install.

Schema: ``scopes`` (a tournament config, a ladder season or a play run, with its deal
secret, its verdict once stopped and its coordinator's lease), ``bots`` (names, specs,
hashed ladder tokens), ``matches``, ``hands``, ``results`` (one row per seat), ``ratings``
(live ratings per scope) and ``queue`` (scheduled matches and who holds them until when).
Every finished match is written in ONE transaction: the match row, its hand rows, both
result rows, both bots' new ratings and its queue entry's end. A match is keyed by (scope,
match id), so writing a match twice changes nothing (``record`` returns False) and two
scopes never collide: a resumed run skips what is already there and can never count a
match twice. Writers on several processes take turns (``BEGIN IMMEDIATE``): one
transaction at a time, so a claim is never given twice. Any other refused write is a
``StoreError``; a busy or locked database is a ``StoreBusy`` (the caller retries). WAL
mode with ``synchronous=FULL`` (or ``NORMAL`` with ``durable=False``, for a run's
throw-away store): a committed match survives a kill -9.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from arena.match.messages import MatchResult
from arena.match.spec import MatchSpec
from arena.store.base import (
    Claim,
    MatchRow,
    Pairing,
    QueueCounts,
    Rate,
    Rating,
    ResultRow,
    ScopeInfo,
    StoreBusy,
    StoreError,
    Waiting,
    is_void,
    new_secret,
    result_rows,
)

SCHEMA_VERSION = 4

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

# Schema 4 queues scheduled matches for workers (claims with a lease), stops a scope on a
# verdict and marks what is recorded after it, and gives each scope one coordinator.
_MIGRATE_3_TO_4 = """
ALTER TABLE scopes ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE scopes ADD COLUMN coordinator TEXT NOT NULL DEFAULT '';
ALTER TABLE scopes ADD COLUMN coordinator_until REAL NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN after_verdict INTEGER NOT NULL DEFAULT 0;
CREATE TABLE queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- claim order (earliest scheduled first)
    scope TEXT NOT NULL REFERENCES scopes(scope),
    match_id TEXT NOT NULL,
    bot_a TEXT NOT NULL,             -- the pair, in canonical order
    bot_b TEXT NOT NULL,
    deal INTEGER NOT NULL,
    seat_order INTEGER NOT NULL,
    seed TEXT NOT NULL,
    state TEXT NOT NULL,             -- queued, claimed, done, cancelled
    worker TEXT NOT NULL DEFAULT '',
    lease_until REAL NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    UNIQUE (scope, match_id)
);
CREATE INDEX queue_open ON queue(state, seq);
CREATE TABLE ladder_waiting (
    scope TEXT NOT NULL,
    frontend TEXT NOT NULL,          -- a ladder front end's id
    address TEXT NOT NULL,           -- where bots reach it
    bot TEXT NOT NULL,
    sessions INTEGER NOT NULL,       -- its waiting sessions of this bot
    free INTEGER NOT NULL,           -- matches it can start now
    seen INTEGER NOT NULL,           -- the last pairing it had read
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, frontend, bot)
);
CREATE TABLE ladder_pairings (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
    bot_a TEXT NOT NULL,
    bot_b TEXT NOT NULL,
    deal INTEGER NOT NULL,
    seat_order INTEGER NOT NULL,
    seed TEXT NOT NULL,
    host TEXT NOT NULL,
    host_address TEXT NOT NULL,
    guest TEXT NOT NULL,
    guest_bot TEXT NOT NULL,
    seat_key TEXT NOT NULL,
    created_at REAL NOT NULL,
    state TEXT NOT NULL DEFAULT ''   -- the guest front end's: redirected, void
);
CREATE INDEX ladder_pairings_by_scope ON ladder_pairings(scope, seq);
"""


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


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


T = TypeVar("T")


class SqliteStore:
    """``Store`` on one SQLite file. Thread-safe (one connection, used under a lock), so
    a runner may write from a worker thread while its loop reads; other processes may
    read or register bots at the same time (WAL, busy timeout)."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 5.0,
                 durable: bool = True) -> None:
        """``durable=False``: commits survive the process (kill -9) but not a power cut
        (``synchronous=NORMAL``), for a run's own throw-away store."""
        self.path = Path(path)
        self.label = str(path)
        self._busy_timeout_s = busy_timeout_s
        self._lock = threading.RLock()
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None,
                                       timeout=busy_timeout_s, check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout = {round(busy_timeout_s * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
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
            if version is None or version < 4:
                for statement in _statements(_MIGRATE_3_TO_4):
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
            self._begin(db)
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

    def _begin(self, db: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, waiting for another writer in short steps (a few hundred
        microseconds, growing to 10 ms) for up to the busy timeout: SQLite's own busy
        handler sleeps far longer between tries, which made workers on one file wait for
        each other's short transactions (half the throughput of two in-process workers)."""
        deadline = time.monotonic() + self._busy_timeout_s
        pause = 0.0002
        db.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if not _is_busy(e) or time.monotonic() >= deadline:
                        raise
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
        finally:
            db.execute(f"PRAGMA busy_timeout = {round(self._busy_timeout_s * 1000)}")

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
                db.execute("INSERT INTO scopes (scope, kind, name, config, created_at, "
                           "secret) VALUES (?, ?, ?, ?, ?, ?)",
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
               rate: Rate | None = None) -> bool:
        seats = spec.seats
        void = is_void(result)
        now = time.time()
        key = (scope, spec.match_id)

        def go(db: sqlite3.Connection) -> bool:
            if db.execute("SELECT 1 FROM matches WHERE scope = ? AND match_id = ?",
                          key).fetchone():
                return False  # nothing written: the transaction commits empty
            verdict = db.execute("SELECT verdict FROM scopes WHERE scope = ?",
                                 (scope,)).fetchone()
            db.execute(
                "INSERT INTO matches (scope, match_id, bot0, bot1, deal, seat_order, seed, "
                "winner, termination, blamed, score0, score1, hands, voided, detail, "
                "finished_at, after_verdict) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope, spec.match_id, seats[0], seats[1], spec.deal, spec.order,
                 spec.seed, result.winner, str(result.termination), result.blamed,
                 result.scores[0], result.scores[1], len(result.hands), int(void),
                 result.detail, now, int(bool(verdict and verdict[0]))))
            db.executemany(
                "INSERT INTO hands VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(scope, spec.match_id, i + 1, h.kind, h.winner, h.points, h.knocker,
                  h.deadwood[0], h.deadwood[1]) for i, h in enumerate(result.hands)])
            db.executemany(
                "INSERT INTO results VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(scope, spec.match_id, *row) for row in result_rows(result, seats)])
            if rate is not None:
                marks = ", ".join("?" for _ in spec.pair)
                stored = {r[0]: Rating(r[1], r[2], r[3]) for r in db.execute(
                    f"SELECT bot, mu, sigma, games FROM ratings WHERE scope = ? AND bot IN "
                    f"({marks})", (scope, *spec.pair))}
                for bot, r in rate(stored).items():
                    db.execute(
                        "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, "
                        "bot) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
                        "games = excluded.games, updated_at = excluded.updated_at",
                        (scope, bot, r.mu, r.sigma, r.games, now))
            db.execute("UPDATE queue SET state = 'done' WHERE scope = ? AND match_id = ?",
                       key)
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
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE scope = ? ORDER BY rowid",
            (scope,)).fetchall())
        return [_match_row(r) for r in rows]

    def matches_since(self, scope: str, seq: int, limit: int = 1000) -> list[MatchRow]:
        rows = self._run(lambda db: db.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE scope = ? AND rowid > ? "
            "ORDER BY rowid LIMIT ?", (scope, seq, limit)).fetchall())
        return [_match_row(r) for r in rows]

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


    # ------------------------------------------------------------------ the queue

    def enqueue(self, scope: str, specs: Iterable[MatchSpec]) -> int:
        rows = [(scope, s.match_id, s.pair[0], s.pair[1], s.deal, s.order, s.seed)
                for s in specs]

        def go(db: sqlite3.Connection) -> int:
            before = db.total_changes
            db.executemany(
                "INSERT INTO queue (scope, match_id, bot_a, bot_b, deal, seat_order, seed, "
                "state) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued' WHERE NOT EXISTS "
                "(SELECT 1 FROM matches WHERE scope = ?1 AND match_id = ?2) "
                "ON CONFLICT (scope, match_id) DO UPDATE SET state = 'queued' "
                "WHERE queue.state = 'skipped'", rows)
            return db.total_changes - before

        return self._atomic(go)

    def claim(self, worker: str, *, lease_s: float, scopes: Sequence[str] | None = None,
              limit: int = 1) -> list[Claim]:
        def go(db: sqlite3.Connection) -> list[Claim]:
            now = time.time()
            where = ""
            args: list[object] = [now]
            if scopes is not None:
                if not scopes:
                    return []
                where = f"AND q.scope IN ({', '.join('?' for _ in scopes)}) "
                args += list(scopes)
            rows = db.execute(
                "SELECT q.seq, q.scope, q.match_id, q.bot_a, q.bot_b, q.deal, q.seat_order, "
                "q.seed, q.attempts FROM queue q JOIN scopes s ON s.scope = q.scope "
                "WHERE (q.state = 'queued' OR (q.state = 'claimed' AND q.lease_until < ?)) "
                f"AND s.verdict = '' {where}ORDER BY q.seq LIMIT ?",
                (*args, limit)).fetchall()
            until = now + lease_s
            db.executemany(
                "UPDATE queue SET state = 'claimed', worker = ?, lease_until = ?, "
                "attempts = attempts + 1 WHERE seq = ?", [(worker, until, r[0]) for r in rows])
            return [Claim(r[1], MatchSpec(r[2], (r[3], r[4]), r[5], r[6], r[7]), worker,
                          r[8] + 1, until) for r in rows]

        return self._atomic(go)

    def renew(self, worker: str, held: Sequence[tuple[str, str]], lease_s: float
              ) -> set[tuple[str, str]]:
        def go(db: sqlite3.Connection) -> set[tuple[str, str]]:
            until = time.time() + lease_s
            lost: set[tuple[str, str]] = set()
            for scope, match_id in held:
                cursor = db.execute(
                    "UPDATE queue SET lease_until = ? WHERE scope = ? AND match_id = ? "
                    "AND state = 'claimed' AND worker = ?", (until, scope, match_id, worker))
                if cursor.rowcount == 0:
                    lost.add((scope, match_id))
            return lost

        return self._atomic(go)

    def release(self, worker: str, held: Sequence[tuple[str, str]], *,
                skip: bool = False) -> None:
        state = "skipped" if skip else "queued"
        self._atomic(lambda db: db.executemany(
            "UPDATE queue SET state = CASE WHEN (SELECT verdict FROM scopes s WHERE "
            "s.scope = queue.scope) <> '' THEN 'cancelled' ELSE ? END, worker = '', "
            "lease_until = 0 WHERE scope = ? AND match_id = ? AND state = 'claimed' AND "
            "worker = ?", [(state, scope, match_id, worker) for scope, match_id in held]))

    def claimable_scopes(self) -> list[str]:
        now = time.time()
        rows = self._run(lambda db: db.execute(
            "SELECT q.scope, MIN(q.seq) FROM queue q JOIN scopes s ON s.scope = q.scope "
            "WHERE (q.state = 'queued' OR (q.state = 'claimed' AND q.lease_until < ?)) "
            "AND s.verdict = '' GROUP BY q.scope ORDER BY 2", (now,)).fetchall())
        return [str(r[0]) for r in rows]

    def holders(self, scope: str) -> list[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT DISTINCT worker FROM queue WHERE scope = ? AND state = 'claimed' "
            "ORDER BY worker", (scope,)).fetchall())
        return [str(r[0]) for r in rows]

    def reclaim(self, scope: str, worker: str) -> int:
        return int(self._atomic(lambda db: db.execute(
            "UPDATE queue SET state = 'queued', worker = '', lease_until = 0 "
            "WHERE scope = ? AND worker = ? AND state = 'claimed'", (scope, worker)).rowcount))

    def queue_counts(self, scope: str) -> QueueCounts:
        now = time.time()
        rows = self._run(lambda db: db.execute(
            "SELECT CASE WHEN state = 'claimed' AND lease_until < ?1 THEN "
            "(CASE WHEN s.verdict <> '' THEN 'cancelled' ELSE 'expired' END) "
            "WHEN state = 'queued' AND s.verdict <> '' THEN 'cancelled' ELSE state END, "
            "COUNT(*) FROM queue q JOIN scopes s ON s.scope = q.scope WHERE q.scope = ?2 "
            "GROUP BY 1", (now, scope)).fetchall())
        return QueueCounts(**{str(r[0]): int(r[1]) for r in rows})

    def stop_scope(self, scope: str, verdict: str, after_seq: int = -1) -> None:
        def go(db: sqlite3.Connection) -> None:
            db.execute("UPDATE scopes SET verdict = ? WHERE scope = ?",
                       (verdict or "stopped", scope))
            if after_seq >= 0:
                db.execute("UPDATE matches SET after_verdict = 1 WHERE scope = ? AND "
                           "rowid > ?", (scope, after_seq))
            db.execute("UPDATE queue SET state = 'cancelled' WHERE scope = ? AND state = "
                       "'queued'", (scope,))

        self._atomic(go)

    def scope_verdict(self, scope: str) -> str:
        row = self._run(lambda db: db.execute(
            "SELECT verdict FROM scopes WHERE scope = ?", (scope,)).fetchone())
        return "" if row is None else str(row[0])

    def take_coordinator(self, scope: str, owner: str, lease_s: float, *,
                         replacing: str = "") -> str:
        def go(db: sqlite3.Connection) -> str:
            now = time.time()
            row = db.execute("SELECT coordinator, coordinator_until FROM scopes "
                             "WHERE scope = ?", (scope,)).fetchone()
            if row is None:
                raise StoreError(f"no scope {scope!r} in {self.path}")
            if row[0] and row[0] not in (owner, replacing) and row[1] >= now:
                return str(row[0])
            db.execute("UPDATE scopes SET coordinator = ?, coordinator_until = ? "
                       "WHERE scope = ?", (owner, now + lease_s, scope))
            return ""

        return self._atomic(go)

    def drop_coordinator(self, scope: str, owner: str) -> None:
        self._atomic(lambda db: db.execute(
            "UPDATE scopes SET coordinator = '', coordinator_until = 0 WHERE scope = ? "
            "AND coordinator = ?", (scope, owner)))


    # ------------------------------------------------------------------ ladder matchmaking

    def set_waiting(self, scope: str, frontend: str, address: str, free: int, seen: int,
                    sessions: Mapping[str, int]) -> None:
        now = time.time()
        rows = [(scope, frontend, address, bot, n, free, seen, now)
                for bot, n in sessions.items() if n > 0]
        if not rows:  # nobody waits: still say the front end is alive, and its capacity
            rows = [(scope, frontend, address, "", 0, free, seen, now)]

        def go(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM ladder_waiting WHERE scope = ? AND frontend = ?",
                       (scope, frontend))
            db.executemany("INSERT INTO ladder_waiting VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

        self._atomic(go)

    def waiting(self, scope: str, fresh_s: float) -> list[Waiting]:
        now = time.time()
        rows = self._run(lambda db: db.execute(
            "SELECT frontend, address, bot, sessions, free, seen, updated_at FROM "
            "ladder_waiting WHERE scope = ? AND updated_at >= ? ORDER BY frontend, bot",
            (scope, now - fresh_s)).fetchall())
        return [Waiting(r[0], r[1], r[2], r[3], r[4], r[5], now - r[6]) for r in rows]

    def add_pairings(self, scope: str, pairings: Sequence[Pairing], leader: str
                     ) -> list[Pairing]:
        def go(db: sqlite3.Connection) -> list[Pairing]:
            out: list[Pairing] = []
            now = time.time()
            holds = db.execute("SELECT 1 FROM scopes WHERE scope = ? AND coordinator = ? "
                               "AND coordinator_until >= ?", (scope, leader, now)).fetchone()
            if holds is None:
                return out
            for p in pairings:
                s = p.spec
                cursor = db.execute(
                    "INSERT INTO ladder_pairings (scope, match_id, bot_a, bot_b, deal, "
                    "seat_order, seed, host, host_address, guest, guest_bot, seat_key, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope, s.match_id, s.pair[0], s.pair[1], s.deal, s.order, s.seed, p.host,
                     p.host_address, p.guest, p.guest_bot, p.seat_key, now))
                out.append(dataclasses.replace(p, seq=int(cursor.lastrowid or 0)))
            return out

        return self._atomic(go)

    def pairings_since(self, scope: str, frontend: str, seq: int) -> list[Pairing]:
        rows = self._run(lambda db: db.execute(
            "SELECT match_id, bot_a, bot_b, deal, seat_order, seed, host, host_address, guest, "
            "guest_bot, seat_key, seq FROM ladder_pairings WHERE scope = ?1 AND seq > ?2 AND "
            "(?3 = '' OR host = ?3 OR guest = ?3) ORDER BY seq",
            (scope, seq, frontend)).fetchall())
        return [Pairing(MatchSpec(r[0], (r[1], r[2]), r[3], r[4], r[5]), r[6], r[7], r[8], r[9],
                        r[10], r[11]) for r in rows]

    def mark_pairing(self, scope: str, seq: int, state: str) -> None:
        self._atomic(lambda db: db.execute(
            "UPDATE ladder_pairings SET state = ? WHERE scope = ? AND seq = ?",
            (state, scope, seq)))

    def pairing_state(self, scope: str, seq: int) -> str:
        row = self._run(lambda db: db.execute(
            "SELECT state FROM ladder_pairings WHERE scope = ? AND seq = ?",
            (scope, seq)).fetchone())
        return "" if row is None else str(row[0])

    def last_pairing(self, scope: str) -> int:
        row = self._run(lambda db: db.execute(
            "SELECT MAX(seq) FROM ladder_pairings WHERE scope = ?", (scope,)).fetchone())
        return int(row[0] or 0)

    def meetings(self, scope: str) -> dict[tuple[str, str], int]:
        rows = self._run(lambda db: db.execute(
            "SELECT a, b, MAX(k) FROM ("
            "SELECT CASE WHEN seat_order = 0 THEN bot0 ELSE bot1 END AS a, "
            "CASE WHEN seat_order = 0 THEN bot1 ELSE bot0 END AS b, "
            "2 * deal + seat_order + 1 AS k FROM matches WHERE scope = ?1 "
            "UNION ALL SELECT bot_a, bot_b, 2 * deal + seat_order + 1 FROM ladder_pairings "
            "WHERE scope = ?1) GROUP BY a, b", (scope,)).fetchall())
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}


_MATCH_COLUMNS = ("match_id, bot0, bot1, deal, seat_order, seed, winner, termination, blamed, "
                  "score0, score1, hands, voided, finished_at, detail, after_verdict, rowid")


def _match_row(r: Any) -> MatchRow:
    return MatchRow(r[0], (r[1], r[2]), r[3], r[4], r[5], r[6], r[7], r[8], (r[9], r[10]),
                    r[11], bool(r[12]), r[13], r[14], bool(r[15]), r[16])


__all__ = ["SqliteStore"]
