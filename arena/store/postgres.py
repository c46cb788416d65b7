"""``PostgresStore``: the ``Store`` on a PostgreSQL server, shared by workers on many hosts.

The same tables as the SQLite store (``scopes``, ``bots``, ``matches``, ``hands``,
``results``, ``scope_bots``, ``ratings``, ``queue``, ``meta``), created if missing when the
store opens; a database whose schema is newer than this arena's is refused. Every write is
one transaction on one connection (used under a lock: the store is called from worker
threads), in PostgreSQL's default READ COMMITTED isolation:

* **Claims** lock queue rows with ``FOR UPDATE SKIP LOCKED``: workers on any number of hosts
  claim at once and never get the same match while its lease runs.
* **Recording** first locks the scope's row, so a scope's matches are committed one at a
  time in the order of their ``seq`` (a watcher reading ``matches_since`` can never skip one
  that commits late), then inserts the match with ``ON CONFLICT DO NOTHING`` (whoever
  inserts it first records it; the others get False), then its hands, results, the two
  bots' ratings (read ``FOR UPDATE``, in name order, then ``rate`` of them written) and its
  queue entry's end.
* **Time** is the server's clock (``clock_timestamp()``, seconds since the epoch) for every
  lease, coordinator lease and timestamp, so the hosts' own clocks never matter.

Errors: a lost or refused connection, a serialization failure, a deadlock, a lock timeout
or a server starting up or shutting down is a ``StoreBusy`` (the caller retries); the next
call connects again by itself (a read, or a write whose connection turned out dead before
it began, is retried once at once on a new connection). If a connection is lost while a
transaction commits, the commit may or may not have happened: a retried ``record`` then
returns False, never counts twice. Any other refusal is a ``StoreError`` of one line.
Messages and ``label`` never show a password.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import psycopg.errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo

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

SCHEMA_VERSION = 1  # this store's own numbering (the SQLite file has its own)

NOW = "EXTRACT(EPOCH FROM clock_timestamp())::float8"
"""The server's clock in seconds since the epoch: every host compares leases with it."""

CONNECT_TIMEOUT_S = 5
LOCK_TIMEOUT_S = 10.0  # a write waiting longer for a row lock is StoreBusy
IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000  # a client frozen mid-transaction lets its locks go

_SCHEMA_LOCK = int.from_bytes(b"ginarena", "big")  # advisory lock: one schema creator

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scopes (
    scope TEXT PRIMARY KEY,
    seq BIGSERIAL NOT NULL UNIQUE,   -- creation order
    kind TEXT NOT NULL,              -- 'tournament', 'ladder', 'play'
    name TEXT NOT NULL,
    config TEXT NOT NULL,            -- JSON
    created_at DOUBLE PRECISION NOT NULL,
    secret TEXT NOT NULL,            -- keys deal seeds and match ids; never sent to a bot
    verdict TEXT NOT NULL DEFAULT '',
    coordinator TEXT NOT NULL DEFAULT '',
    coordinator_until DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL DEFAULT '',
    token_hash TEXT UNIQUE,          -- ladder: sha256 of the secret token; never the token
    created_at DOUBLE PRECISION NOT NULL,
    revoked_at DOUBLE PRECISION      -- ladder: the token was revoked (NULL: valid)
);
CREATE UNIQUE INDEX IF NOT EXISTS bots_name_nocase ON bots (lower(name));
CREATE TABLE IF NOT EXISTS matches (
    scope TEXT NOT NULL REFERENCES scopes(scope),
    match_id TEXT NOT NULL,
    seq BIGSERIAL NOT NULL UNIQUE,   -- recording order (commit order within a scope)
    bot0 TEXT NOT NULL,              -- the bot in seat 0
    bot1 TEXT NOT NULL,
    deal BIGINT NOT NULL,
    seat_order BIGINT NOT NULL,
    seed TEXT NOT NULL,
    winner BIGINT,                   -- seat; NULL = no winner (draw or void)
    termination TEXT NOT NULL,
    blamed BIGINT,
    score0 BIGINT NOT NULL,
    score1 BIGINT NOT NULL,
    hands BIGINT NOT NULL,
    voided BOOLEAN NOT NULL,         -- the arena's own fault: not rated, not counted
    detail TEXT NOT NULL,
    finished_at DOUBLE PRECISION NOT NULL,
    after_verdict BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (scope, match_id)
);
CREATE INDEX IF NOT EXISTS matches_feed ON matches (scope, seq);
CREATE TABLE IF NOT EXISTS hands (
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
    hand BIGINT NOT NULL,
    kind TEXT NOT NULL,              -- knock, gin, big_gin, undercut, wall, cap
    winner BIGINT,
    points BIGINT NOT NULL,
    knocker BIGINT,
    deadwood0 BIGINT NOT NULL,
    deadwood1 BIGINT NOT NULL,
    PRIMARY KEY (scope, match_id, hand),
    FOREIGN KEY (scope, match_id) REFERENCES matches(scope, match_id)
);
CREATE TABLE IF NOT EXISTS results (
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
    seat BIGINT NOT NULL,
    bot TEXT NOT NULL,
    opponent TEXT NOT NULL,
    outcome TEXT NOT NULL,           -- win, loss, draw, void
    score DOUBLE PRECISION,          -- 1, 0.5, 0; NULL when void
    points BIGINT NOT NULL,          -- the match's final net score for this seat
    hand_points BIGINT NOT NULL,     -- net points over its hands
    hands BIGINT NOT NULL,
    hands_won BIGINT NOT NULL,
    gins BIGINT NOT NULL,
    undercuts BIGINT NOT NULL,
    timeouts BIGINT NOT NULL,
    illegal BIGINT NOT NULL,
    forfeit BOOLEAN NOT NULL,
    errors BIGINT NOT NULL,
    first_error TEXT NOT NULL,
    PRIMARY KEY (scope, match_id, seat),
    FOREIGN KEY (scope, match_id) REFERENCES matches(scope, match_id)
);
CREATE INDEX IF NOT EXISTS results_by_bot ON results (bot);
CREATE TABLE IF NOT EXISTS scope_bots (
    scope TEXT NOT NULL REFERENCES scopes(scope),
    bot TEXT NOT NULL,
    spec TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (scope, bot)
);
CREATE TABLE IF NOT EXISTS ratings (
    scope TEXT NOT NULL,
    bot TEXT NOT NULL,
    mu DOUBLE PRECISION NOT NULL,
    sigma DOUBLE PRECISION NOT NULL,
    games BIGINT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, bot)
);
CREATE TABLE IF NOT EXISTS queue (
    seq BIGSERIAL PRIMARY KEY,       -- claim order (earliest scheduled first)
    scope TEXT NOT NULL REFERENCES scopes(scope),
    match_id TEXT NOT NULL,
    bot_a TEXT NOT NULL,             -- the pair, in canonical order
    bot_b TEXT NOT NULL,
    deal BIGINT NOT NULL,
    seat_order BIGINT NOT NULL,
    seed TEXT NOT NULL,
    state TEXT NOT NULL,             -- queued, claimed, done, cancelled, skipped
    worker TEXT NOT NULL DEFAULT '',
    lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,  -- server clock
    attempts BIGINT NOT NULL DEFAULT 0,
    UNIQUE (scope, match_id)
);
-- the open rows only, in claim order: a claim never walks past recorded matches
CREATE INDEX IF NOT EXISTS queue_open ON queue (seq) WHERE state IN ('queued', 'claimed');
CREATE INDEX IF NOT EXISTS queue_open_by_scope ON queue (scope, seq)
    WHERE state IN ('queued', 'claimed');
CREATE TABLE IF NOT EXISTS ladder_waiting (
    scope TEXT NOT NULL,
    frontend TEXT NOT NULL,          -- a ladder front end's id
    address TEXT NOT NULL,           -- where bots reach it
    bot TEXT NOT NULL,
    sessions BIGINT NOT NULL,        -- its waiting sessions of this bot
    free BIGINT NOT NULL,            -- matches it can start now
    seen BIGINT NOT NULL,            -- the last pairing it had read
    updated_at DOUBLE PRECISION NOT NULL,  -- server clock
    PRIMARY KEY (scope, frontend, bot)
);
CREATE TABLE IF NOT EXISTS ladder_pairings (
    seq BIGSERIAL PRIMARY KEY,
    scope TEXT NOT NULL,
    match_id TEXT NOT NULL,
    bot_a TEXT NOT NULL,
    bot_b TEXT NOT NULL,
    deal BIGINT NOT NULL,
    seat_order BIGINT NOT NULL,
    seed TEXT NOT NULL,
    host TEXT NOT NULL,
    host_address TEXT NOT NULL,
    guest TEXT NOT NULL,
    guest_bot TEXT NOT NULL,
    seat_key TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    state TEXT NOT NULL DEFAULT ''   -- the guest front end's: redirected, void
);
CREATE INDEX IF NOT EXISTS ladder_pairings_by_scope ON ladder_pairings (scope, seq);
"""

# SQLSTATEs that mean "not now": connection lost or refused (class 08), transaction
# rollbacks (40001 serialization failure, 40P01 deadlock), lock and statement timeouts,
# too many connections, a server shutting down, crashing or starting up.
_BUSY_CLASSES = ("08", "40")
_BUSY_STATES = frozenset({"55P03", "57014", "53300", "57P01", "57P02", "57P03"})

# A refused connection (no SQLSTATE) is busy unless the server turned us down for good.
_CONNECT_REFUSALS = ("does not exist", "authentication failed", "pg_hba.conf",
                     "permission denied", "password", "ssl", "invalid")

T = TypeVar("T")


def redact(url: str) -> str:
    """``url`` (a URL or a ``key=value`` connection string) without its password."""
    if "://" in url:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            netloc = f"{userinfo.split(':', 1)[0]}@{host}"
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                 if k != "password"]
        return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:
        return "a PostgreSQL database"
    params.pop("password", None)
    return make_conninfo("", **{k: v for k, v in params.items() if v is not None})


def is_busy(error: psycopg.Error) -> bool:
    """True if ``error`` means "try again later" rather than "refused"."""
    state = error.sqlstate
    if state is None:  # no answer from the server: a connection failed or was lost
        return isinstance(error, psycopg.OperationalError | psycopg.InterfaceError)
    return state[:2] in _BUSY_CLASSES or state in _BUSY_STATES


def _is_refused_connection(error: psycopg.Error) -> bool:
    """A connection attempt the server turned down for good (a wrong database, user or
    password), not one to retry."""
    text = str(error).lower()
    return "fatal" in text and any(word in text for word in _CONNECT_REFUSALS)


class PostgresStore:
    """``Store`` on a PostgreSQL database: one connection, used under a lock, made again
    by the next call after it is lost."""

    def __init__(self, url: str, *, lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
        """Connect to ``url`` and create the tables if missing. ``StoreBusy`` if the server
        is out of reach, ``StoreError`` if it refuses us or holds another schema. A write
        that waits longer than ``lock_timeout_s`` for another's lock is ``StoreBusy``."""
        self.label = redact(url)
        self._lock_timeout_ms = max(1, round(lock_timeout_s * 1000))
        try:
            given = conninfo_to_dict(url)
        except psycopg.Error as e:
            raise StoreError(f"{self.label}: not a PostgreSQL URL: "
                             f"{' '.join(str(e).split())}") from None
        self._password = str(given.get("password") or "")
        params: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S,
                                  "application_name": "gin-arena"}
        params.update({k: v for k, v in given.items() if v is not None})
        self._conninfo = make_conninfo("", **params)
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._closed = False
        with self._lock:
            try:
                self._migrate(self._connection())
            except StoreError:
                self._drop()  # refused: the caller gets no store to close
                raise

    # ------------------------------------------------------------------ connection

    def _line(self, error: BaseException) -> str:
        """``error`` as one line, without the password."""
        text = " ".join(str(error).split())
        if self._password:
            text = text.replace(self._password, "***")
        return text

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        """The open connection, made anew if there is none or it was lost."""
        if self._closed:
            raise StoreError(f"{self.label}: the store is closed")
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._drop()
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.Error as e:
            if _is_refused_connection(e) or not is_busy(e):
                raise StoreError(f"{self.label}: cannot connect: {self._line(e)}") from None
            raise StoreBusy(f"{self.label}: out of reach: {self._line(e)}") from None
        try:
            conn.execute(f"SET lock_timeout = {self._lock_timeout_ms}")
            conn.execute("SET idle_in_transaction_session_timeout = "
                         f"{IDLE_IN_TRANSACTION_TIMEOUT_MS}")
        except psycopg.Error as e:
            conn.close()
            raise StoreBusy(f"{self.label}: out of reach: {self._line(e)}") from None
        self._conn = conn
        return conn

    def _drop(self) -> None:
        """Forget the connection (closing it if it is still open)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def _migrate(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        """Create the tables if missing; refuse a newer or a foreign schema."""
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, "
                             "value TEXT NOT NULL)")
                row = conn.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                version = int(row[0]) if row is not None else None
                if version is not None and version > SCHEMA_VERSION:
                    raise StoreError(f"{self.label}: schema version {version} is newer than "
                                     f"this arena's ({SCHEMA_VERSION})")
                if version is None and conn.execute(
                        "SELECT to_regclass('matches')").fetchone() != (None,):
                    raise StoreError(f"{self.label}: not a usable arena database: it has a "
                                     "matches table but no schema version")
                conn.execute(_SCHEMA)  # every statement is IF NOT EXISTS
                conn.execute("INSERT INTO meta VALUES ('schema_version', %s) ON CONFLICT "
                             "(key) DO UPDATE SET value = excluded.value",
                             (str(SCHEMA_VERSION),))
                conn.execute("INSERT INTO meta VALUES ('token_epoch', '0') "
                             "ON CONFLICT (key) DO NOTHING")
        except psycopg.Error as e:
            self._fail(e, conn)

    def _fail(self, error: psycopg.Error, conn: psycopg.Connection[tuple[Any, ...]],
              what: str = "") -> NoReturn:
        """Raise ``error`` as ``StoreBusy`` or ``StoreError`` (forgetting a lost
        connection)."""
        if conn.closed or conn.broken:
            self._drop()
        prefix = f"{self.label}: {what}: " if what else f"{self.label}: "
        if is_busy(error):
            raise StoreBusy(f"{prefix}database busy or out of reach "
                            f"({self._line(error)})") from None
        raise StoreError(f"{prefix}{self._line(error)}") from None

    def _run(self, fn: Callable[[psycopg.Connection[tuple[Any, ...]]], T], *,
             write: bool = True, what: str = "") -> T:
        """``fn`` on the connection under the lock: in one transaction if ``write``, else
        each statement on its own. A connection found lost before ``fn`` began (any read;
        a write whose BEGIN failed) is made again and ``fn`` retried once."""
        with self._lock:
            for attempt in (1, 2):
                conn = self._connection()
                began = False
                try:
                    if not write:
                        began = True
                        return fn(conn)
                    with conn.transaction():
                        began = True
                        return fn(conn)
                except psycopg.Error as e:
                    lost = conn.closed or conn.broken
                    if attempt == 1 and lost and (not write or not began):
                        self._drop()
                        continue
                    self._fail(e, conn, what)
            raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ scopes, bots

    def open_scope(self, scope: str, kind: str, name: str, config: str,
                   secret: str = "") -> str:
        """Create ``scope`` (with ``secret``, or a fresh one), or update its stored config to
        this run's; return its secret."""

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> str:
            row = db.execute(
                "INSERT INTO scopes (scope, kind, name, config, created_at, secret) "
                f"VALUES (%s, %s, %s, %s, {NOW}, %s) ON CONFLICT (scope) DO NOTHING "
                "RETURNING secret", (scope, kind, name, config, secret or new_secret())
            ).fetchone()
            if row is not None:
                return str(row[0])
            kept = db.execute("SELECT secret FROM scopes WHERE scope = %s FOR NO KEY UPDATE",
                              (scope,)).fetchone()
            assert kept is not None  # scopes are never deleted
            if secret and secret != kept[0]:
                raise StoreError(f"{self.label}: {scope!r} was played with another secret; "
                                 "leave the secret out to resume it")
            db.execute("UPDATE scopes SET config = %s WHERE scope = %s", (config, scope))
            return str(kept[0])

        return self._run(go)

    def scope_bots(self, scope: str) -> dict[str, tuple[str, str]]:
        """bot -> (spec, fingerprint) as recorded for ``scope``."""
        rows = self._run(lambda db: db.execute(
            "SELECT bot, spec, fingerprint FROM scope_bots WHERE scope = %s", (scope,))
            .fetchall(), write=False)
        return {r[0]: (r[1], r[2]) for r in rows}

    def set_scope_bots(self, scope: str, bots: Iterable[tuple[str, str, str]]) -> None:
        """Record (bot, spec, fingerprint) for ``scope``, replacing what was there."""
        rows = [(scope, b, s, f) for b, s, f in bots]
        self._run(lambda db: db.cursor().executemany(
            "INSERT INTO scope_bots VALUES (%s, %s, %s, %s) ON CONFLICT (scope, bot) DO "
            "UPDATE SET spec = excluded.spec, fingerprint = excluded.fingerprint", rows))

    def scopes(self) -> list[ScopeInfo]:
        rows = self._run(lambda db: db.execute(
            "SELECT s.scope, s.kind, s.name, s.config, s.created_at, "
            "(SELECT COUNT(*) FROM matches m WHERE m.scope = s.scope) "
            "FROM scopes s ORDER BY s.seq").fetchall(), write=False)
        return [ScopeInfo(*r) for r in rows]

    def add_bots(self, bots: Iterable[tuple[str, str]]) -> None:
        rows = [(n, s) for n, s in bots]
        self._run(lambda db: db.cursor().executemany(
            f"INSERT INTO bots (name, spec, created_at) VALUES (%s, %s, {NOW}) "
            "ON CONFLICT DO NOTHING", rows))

    def register_bot(self, name: str, token_hash: str) -> None:
        def go(db: psycopg.Connection[tuple[Any, ...]]) -> None:
            taken = db.execute("SELECT name FROM bots WHERE lower(name) = lower(%s)",
                               (name,)).fetchone()
            if taken is not None:
                same = "" if taken[0] == name else f" (as {taken[0]!r})"
                raise StoreError(f"the name {name!r} is already registered{same}")
            try:
                db.execute("INSERT INTO bots (name, spec, token_hash, created_at) "
                           f"VALUES (%s, '', %s, {NOW})", (name, token_hash))
            except psycopg.errors.UniqueViolation as e:
                if e.diag.constraint_name == "bots_token_hash_key":
                    raise StoreError("that token is already in use; choose another") \
                        from None
                # another host registered the same name between our look and our insert
                raise StoreError(f"the name {name!r} is already registered") from None

        self._run(go)

    def set_token(self, name: str, token_hash: str | None) -> None:
        def go(db: psycopg.Connection[tuple[Any, ...]]) -> None:
            row = db.execute("SELECT token_hash FROM bots WHERE name = %s FOR UPDATE",
                             (name,)).fetchone()
            if row is None or row[0] is None:
                raise StoreError(f"no ladder bot named {name!r} is registered")
            try:
                if token_hash is None:
                    db.execute(f"UPDATE bots SET revoked_at = {NOW} WHERE name = %s", (name,))
                else:
                    db.execute("UPDATE bots SET token_hash = %s, revoked_at = NULL "
                               "WHERE name = %s", (token_hash, name))
            except psycopg.errors.UniqueViolation:
                raise StoreError("that token is already in use; choose another") from None
            db.execute("UPDATE meta SET value = (value::bigint + 1)::text "
                       "WHERE key = 'token_epoch'")

        self._run(go)

    def bot_for_token_hash(self, token_hash: str) -> str | None:
        row = self._run(lambda db: db.execute(
            "SELECT name FROM bots WHERE token_hash = %s AND revoked_at IS NULL",
            (token_hash,)).fetchone(), write=False)
        return None if row is None else str(row[0])

    def registered_bots(self) -> list[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT name FROM bots WHERE token_hash IS NOT NULL ORDER BY created_at, name")
            .fetchall(), write=False)
        return [r[0] for r in rows]

    def token_epoch(self) -> int:
        row = self._run(lambda db: db.execute(
            "SELECT value FROM meta WHERE key = 'token_epoch'").fetchone(), write=False)
        return int(row[0]) if row is not None else 0

    # ------------------------------------------------------------------ matches

    def finished_ids(self, scope: str) -> set[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT match_id FROM matches WHERE scope = %s", (scope,)).fetchall(),
            write=False)
        return {r[0] for r in rows}

    def record(self, scope: str, spec: MatchSpec, result: MatchResult,
               rate: Rate | None = None) -> bool:
        seats = spec.seats
        void = is_void(result)

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> bool:
            # the scope's row lock: its matches commit one at a time, in seq order, and a
            # verdict set meanwhile is seen
            row = db.execute("SELECT verdict FROM scopes WHERE scope = %s FOR NO KEY UPDATE",
                             (scope,)).fetchone()
            after_verdict = bool(row and row[0])
            inserted = db.execute(
                "INSERT INTO matches (scope, match_id, bot0, bot1, deal, seat_order, seed, "
                "winner, termination, blamed, score0, score1, hands, voided, detail, "
                "finished_at, after_verdict) VALUES "
                f"(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {NOW}, %s) "
                "ON CONFLICT (scope, match_id) DO NOTHING RETURNING finished_at",
                (scope, spec.match_id, seats[0], seats[1], spec.deal, spec.order,
                 spec.seed, result.winner, str(result.termination), result.blamed,
                 result.scores[0], result.scores[1], len(result.hands), void,
                 result.detail, after_verdict)).fetchone()
            if inserted is None:
                return False  # already recorded: nothing written
            now = inserted[0]
            cursor = db.cursor()
            if result.hands:
                cursor.executemany(
                    "INSERT INTO hands VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(scope, spec.match_id, i + 1, h.kind, h.winner, h.points, h.knocker,
                      h.deadwood[0], h.deadwood[1]) for i, h in enumerate(result.hands)])
            cursor.executemany(
                "INSERT INTO results VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s, %s, %s, %s, %s)",
                [(scope, spec.match_id, seat, bot, opp, kind, score, points, hand_points,
                  hands, won, gins, undercuts, timeouts, illegal, bool(forfeit), errors,
                  first_error)
                 for (seat, bot, opp, kind, score, points, hand_points, hands, won, gins,
                      undercuts, timeouts, illegal, forfeit, errors, first_error)
                 in result_rows(result, seats)])
            if rate is not None:
                stored = {r[0]: Rating(r[1], r[2], r[3]) for r in db.execute(
                    "SELECT bot, mu, sigma, games FROM ratings WHERE scope = %s AND "
                    "bot = ANY(%s) ORDER BY bot FOR UPDATE",
                    (scope, sorted(set(spec.pair)))).fetchall()}
                new = sorted(rate(stored).items())
                if new:
                    cursor.executemany(
                        "INSERT INTO ratings VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT "
                        "(scope, bot) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
                        "games = excluded.games, updated_at = excluded.updated_at",
                        [(scope, bot, r.mu, r.sigma, r.games, now) for bot, r in new])
            db.execute("UPDATE queue SET state = 'done' WHERE scope = %s AND match_id = %s",
                       (scope, spec.match_id))
            return True

        return self._run(go, what=f"could not record match {spec.match_id} of {scope!r}")

    def wins(self, scope: str) -> dict[str, int]:
        """Matches won per bot in ``scope``."""
        rows = self._run(lambda db: db.execute(
            "SELECT bot, COUNT(*) FILTER (WHERE outcome = 'win') FROM results "
            "WHERE scope = %s GROUP BY bot", (scope,)).fetchall(), write=False)
        return {r[0]: int(r[1]) for r in rows}

    def ratings(self, scope: str) -> dict[str, Rating]:
        rows = self._run(lambda db: db.execute(
            "SELECT bot, mu, sigma, games FROM ratings WHERE scope = %s", (scope,))
            .fetchall(), write=False)
        return {r[0]: Rating(r[1], r[2], r[3]) for r in rows}

    def matches(self, scope: str) -> list[MatchRow]:
        rows = self._run(lambda db: db.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE scope = %s ORDER BY seq",
            (scope,)).fetchall(), write=False)
        return [_match_row(r) for r in rows]

    def matches_since(self, scope: str, seq: int, limit: int = 1000) -> list[MatchRow]:
        rows = self._run(lambda db: db.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE scope = %s AND seq > %s "
            "ORDER BY seq LIMIT %s", (scope, seq, limit)).fetchall(), write=False)
        return [_match_row(r) for r in rows]

    def results(self, scope: str) -> list[ResultRow]:
        rows = self._run(lambda db: db.execute(
            "SELECT r.match_id, r.seat, r.bot, r.opponent, r.outcome, r.points, "
            "r.hand_points, r.hands, r.hands_won, r.gins, r.undercuts, r.timeouts, "
            "r.illegal, r.forfeit, r.errors, r.first_error "
            "FROM results r JOIN matches m ON m.scope = r.scope AND m.match_id = r.match_id "
            "WHERE r.scope = %s ORDER BY m.seq, r.seat", (scope,)).fetchall(), write=False)
        return [ResultRow(*r) for r in rows]

    def scope_config(self, scope: str) -> dict[str, object]:
        row = self._run(lambda db: db.execute(
            "SELECT config FROM scopes WHERE scope = %s", (scope,)).fetchone(), write=False)
        if row is None:
            raise StoreError(f"no scope {scope!r} in {self.label}")
        data = json.loads(row[0])
        return data if isinstance(data, dict) else {}

    # ------------------------------------------------------------------ the queue

    def enqueue(self, scope: str, specs: Iterable[MatchSpec]) -> int:
        unique: dict[str, MatchSpec] = {}
        for s in specs:  # one row per match (the first), as scheduling it twice would do
            unique.setdefault(s.match_id, s)
        if not unique:
            return 0
        columns: list[list[object]] = [[], [], [], [], [], []]
        for s in unique.values():
            for column, value in zip(columns, (s.match_id, s.pair[0], s.pair[1], s.deal,
                                               s.order, s.seed), strict=True):
                column.append(value)

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> int:
            cursor = db.execute(
                "INSERT INTO queue (scope, match_id, bot_a, bot_b, deal, seat_order, seed, "
                "state) SELECT %s, n.match_id, n.bot_a, n.bot_b, n.deal, n.seat_order, "
                "n.seed, 'queued' FROM unnest(%s::text[], %s::text[], %s::text[], "
                "%s::bigint[], %s::bigint[], %s::text[]) WITH ORDINALITY "
                "AS n(match_id, bot_a, bot_b, deal, seat_order, seed, i) "
                "WHERE NOT EXISTS (SELECT 1 FROM matches m WHERE m.scope = %s "
                "AND m.match_id = n.match_id) ORDER BY n.i "
                "ON CONFLICT (scope, match_id) DO UPDATE SET state = 'queued' "
                "WHERE queue.state = 'skipped'", (scope, *columns, scope))
            return max(cursor.rowcount, 0)

        return self._run(go)

    def claim(self, worker: str, *, lease_s: float, scopes: Sequence[str] | None = None,
              limit: int = 1) -> list[Claim]:
        if scopes is not None and not scopes:
            return []
        # one scope (a worker's usual claim) as an equality, so the plan is an ordered scan
        # of that scope's open rows whatever the table's statistics say
        only = ("" if scopes is None else "AND q.scope = %(one)s " if len(scopes) == 1
                else "AND q.scope = ANY(%(scopes)s) ")

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> list[Claim]:
            rows = db.execute(
                f"WITH now AS (SELECT {NOW} AS t), picked AS ("
                "SELECT q.seq FROM queue q, now "
                "WHERE q.state IN ('queued', 'claimed') "
                "AND (q.state = 'queued' OR q.lease_until < now.t) "
                "AND q.scope NOT IN (SELECT scope FROM scopes WHERE verdict <> '') "
                f"{only}ORDER BY q.seq LIMIT %(limit)s FOR UPDATE OF q SKIP LOCKED) "
                "UPDATE queue q SET state = 'claimed', worker = %(worker)s, "
                "lease_until = now.t + %(lease)s, attempts = q.attempts + 1 "
                "FROM picked, now WHERE q.seq = picked.seq "
                "RETURNING q.seq, q.scope, q.match_id, q.bot_a, q.bot_b, q.deal, "
                "q.seat_order, q.seed, q.attempts, q.lease_until",
                {"worker": worker, "lease": float(lease_s), "limit": limit,
                 "one": scopes[0] if scopes else "", "scopes": list(scopes or ())}).fetchall()
            return [Claim(r[1], MatchSpec(r[2], (r[3], r[4]), r[5], r[6], r[7]), worker,
                          r[8], r[9]) for r in sorted(rows)]

        return self._run(go)

    def renew(self, worker: str, held: Sequence[tuple[str, str]], lease_s: float
              ) -> set[tuple[str, str]]:
        keys = sorted(set(held))
        if not keys:
            return set()

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> set[tuple[str, str]]:
            rows = db.execute(
                f"UPDATE queue q SET lease_until = {NOW} + %s "
                "FROM unnest(%s::text[], %s::text[]) AS h(scope, match_id) "
                "WHERE q.scope = h.scope AND q.match_id = h.match_id "
                "AND q.state = 'claimed' AND q.worker = %s RETURNING q.scope, q.match_id",
                (float(lease_s), [k[0] for k in keys], [k[1] for k in keys], worker)
            ).fetchall()
            return set(keys) - {(r[0], r[1]) for r in rows}

        return self._run(go)

    def release(self, worker: str, held: Sequence[tuple[str, str]], *,
                skip: bool = False) -> None:
        keys = sorted(set(held))
        if not keys:
            return
        self._run(lambda db: db.execute(
            "UPDATE queue q SET state = CASE WHEN s.verdict <> '' THEN 'cancelled' ELSE %s "
            "END, worker = '', lease_until = 0 "
            "FROM unnest(%s::text[], %s::text[]) AS h(scope, match_id), scopes s "
            "WHERE q.scope = h.scope AND q.match_id = h.match_id AND s.scope = q.scope "
            "AND q.state = 'claimed' AND q.worker = %s",
            ("skipped" if skip else "queued", [k[0] for k in keys], [k[1] for k in keys],
             worker)))

    def claimable_scopes(self) -> list[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT q.scope, MIN(q.seq) FROM queue q JOIN scopes s ON s.scope = q.scope "
            f"WHERE (q.state = 'queued' OR (q.state = 'claimed' AND q.lease_until < {NOW})) "
            "AND s.verdict = '' GROUP BY q.scope ORDER BY 2").fetchall(), write=False)
        return [str(r[0]) for r in rows]

    def holders(self, scope: str) -> list[str]:
        rows = self._run(lambda db: db.execute(
            "SELECT DISTINCT worker FROM queue WHERE scope = %s AND state = 'claimed' "
            "ORDER BY worker", (scope,)).fetchall(), write=False)
        return [str(r[0]) for r in rows]

    def reclaim(self, scope: str, worker: str) -> int:
        return int(self._run(lambda db: db.execute(
            "UPDATE queue SET state = 'queued', worker = '', lease_until = 0 "
            "WHERE scope = %s AND worker = %s AND state = 'claimed'",
            (scope, worker)).rowcount))

    def queue_counts(self, scope: str) -> QueueCounts:
        rows = self._run(lambda db: db.execute(
            f"SELECT CASE WHEN q.state = 'claimed' AND q.lease_until < {NOW} THEN "
            "(CASE WHEN s.verdict <> '' THEN 'cancelled' ELSE 'expired' END) "
            "WHEN q.state = 'queued' AND s.verdict <> '' THEN 'cancelled' ELSE q.state END, "
            "COUNT(*) FROM queue q JOIN scopes s ON s.scope = q.scope WHERE q.scope = %s "
            "GROUP BY 1", (scope,)).fetchall(), write=False)
        return QueueCounts(**{str(r[0]): int(r[1]) for r in rows})

    def stop_scope(self, scope: str, verdict: str, after_seq: int = -1) -> None:
        def go(db: psycopg.Connection[tuple[Any, ...]]) -> None:
            db.execute("UPDATE scopes SET verdict = %s WHERE scope = %s",
                       (verdict or "stopped", scope))
            if after_seq >= 0:
                db.execute("UPDATE matches SET after_verdict = TRUE WHERE scope = %s AND "
                           "seq > %s", (scope, after_seq))
            db.execute("UPDATE queue SET state = 'cancelled' WHERE scope = %s AND "
                       "state = 'queued'", (scope,))

        self._run(go)

    def scope_verdict(self, scope: str) -> str:
        row = self._run(lambda db: db.execute(
            "SELECT verdict FROM scopes WHERE scope = %s", (scope,)).fetchone(), write=False)
        return "" if row is None else str(row[0])

    def take_coordinator(self, scope: str, owner: str, lease_s: float, *,
                         replacing: str = "") -> str:
        def go(db: psycopg.Connection[tuple[Any, ...]]) -> str:
            row = db.execute(
                f"SELECT coordinator, coordinator_until, {NOW} FROM scopes WHERE scope = %s "
                "FOR NO KEY UPDATE", (scope,)).fetchone()
            if row is None:
                raise StoreError(f"no scope {scope!r} in {self.label}")
            holder, until, now = row
            if holder and holder not in (owner, replacing) and until >= now:
                return str(holder)
            db.execute("UPDATE scopes SET coordinator = %s, coordinator_until = %s "
                       "WHERE scope = %s", (owner, now + lease_s, scope))
            return ""

        return self._run(go)

    def drop_coordinator(self, scope: str, owner: str) -> None:
        self._run(lambda db: db.execute(
            "UPDATE scopes SET coordinator = '', coordinator_until = 0 WHERE scope = %s "
            "AND coordinator = %s", (scope, owner)))


    # ---------------------------------------------------------------- ladder matchmaking

    def set_waiting(self, scope: str, frontend: str, address: str, free: int, seen: int,
                    sessions: Mapping[str, int]) -> None:
        rows = [(bot, n) for bot, n in sorted(sessions.items()) if n > 0] or [("", 0)]

        def go(db: psycopg.Connection[tuple[Any, ...]]) -> None:
            db.execute("DELETE FROM ladder_waiting WHERE scope = %s AND frontend = %s",
                       (scope, frontend))
            db.cursor().executemany(
                "INSERT INTO ladder_waiting VALUES (%s, %s, %s, %s, %s, %s, %s, "
                f"{NOW})", [(scope, frontend, address, bot, n, free, seen) for bot, n in rows])

        self._run(go)

    def waiting(self, scope: str, fresh_s: float) -> list[Waiting]:
        rows = self._run(lambda db: db.execute(
            f"SELECT frontend, address, bot, sessions, free, seen, {NOW} - updated_at "
            f"FROM ladder_waiting WHERE scope = %s AND updated_at >= {NOW} - %s "
            "ORDER BY frontend, bot", (scope, float(fresh_s))).fetchall(), write=False)
        return [Waiting(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), float(r[6]))
                for r in rows]

    def add_pairings(self, scope: str, pairings: Sequence[Pairing], leader: str
                     ) -> list[Pairing]:
        def go(db: psycopg.Connection[tuple[Any, ...]]) -> list[Pairing]:
            out: list[Pairing] = []
            holds = db.execute(
                f"SELECT 1 FROM scopes WHERE scope = %s AND coordinator = %s AND "
                f"coordinator_until >= {NOW} FOR SHARE", (scope, leader)).fetchone()
            if holds is None:
                return out
            for p in pairings:
                sp = p.spec
                row = db.execute(
                    "INSERT INTO ladder_pairings (scope, match_id, bot_a, bot_b, deal, "
                    "seat_order, seed, host, host_address, guest, guest_bot, seat_key, "
                    "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                    f"{NOW}) RETURNING seq",
                    (scope, sp.match_id, sp.pair[0], sp.pair[1], sp.deal, sp.order, sp.seed,
                     p.host, p.host_address, p.guest, p.guest_bot, p.seat_key)).fetchone()
                out.append(dataclasses.replace(p, seq=int(row[0]) if row else 0))
            return out

        return self._run(go)

    def pairings_since(self, scope: str, frontend: str, seq: int) -> list[Pairing]:
        rows = self._run(lambda db: db.execute(
            "SELECT match_id, bot_a, bot_b, deal, seat_order, seed, host, host_address, guest, "
            "guest_bot, seat_key, seq FROM ladder_pairings WHERE scope = %(scope)s AND "
            "seq > %(seq)s AND (%(fe)s = '' OR host = %(fe)s OR guest = %(fe)s) ORDER BY seq",
            {"scope": scope, "seq": seq, "fe": frontend}).fetchall(), write=False)
        return [Pairing(MatchSpec(r[0], (r[1], r[2]), int(r[3]), int(r[4]), r[5]), r[6], r[7],
                        r[8], r[9], r[10], int(r[11])) for r in rows]

    def mark_pairing(self, scope: str, seq: int, state: str) -> None:
        self._run(lambda db: db.execute(
            "UPDATE ladder_pairings SET state = %s WHERE scope = %s AND seq = %s",
            (state, scope, seq)))

    def pairing_state(self, scope: str, seq: int) -> str:
        row = self._run(lambda db: db.execute(
            "SELECT state FROM ladder_pairings WHERE scope = %s AND seq = %s",
            (scope, seq)).fetchone(), write=False)
        return "" if row is None else str(row[0])

    def last_pairing(self, scope: str) -> int:
        row = self._run(lambda db: db.execute(
            "SELECT MAX(seq) FROM ladder_pairings WHERE scope = %s", (scope,)).fetchone(),
            write=False)
        return int(row[0] or 0) if row else 0

    def meetings(self, scope: str) -> dict[tuple[str, str], int]:
        rows = self._run(lambda db: db.execute(
            "SELECT a, b, MAX(k) FROM ("
            "SELECT CASE WHEN seat_order = 0 THEN bot0 ELSE bot1 END AS a, "
            "CASE WHEN seat_order = 0 THEN bot1 ELSE bot0 END AS b, "
            "2 * deal + seat_order + 1 AS k FROM matches WHERE scope = %(scope)s "
            "UNION ALL SELECT bot_a, bot_b, 2 * deal + seat_order + 1 FROM ladder_pairings "
            "WHERE scope = %(scope)s) AS m GROUP BY a, b", {"scope": scope}).fetchall(),
            write=False)
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}


_MATCH_COLUMNS = ("match_id, bot0, bot1, deal, seat_order, seed, winner, termination, blamed, "
                  "score0, score1, hands, voided, finished_at, detail, after_verdict, seq")


def _match_row(r: Any) -> MatchRow:
    return MatchRow(r[0], (r[1], r[2]), r[3], r[4], r[5], r[6], r[7], r[8], (r[9], r[10]),
                    r[11], r[12], r[13], r[14], r[15], r[16])


__all__ = ["PostgresStore", "is_busy", "redact"]
