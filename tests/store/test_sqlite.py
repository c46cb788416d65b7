"""What only the SQLite store does: a file reopened or refused, locks, migrations, backup.

(Everything every store does is in test_store.py, run against SQLite too.)
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from gin_arena_core.rules import HandResult

from arena.match.messages import MatchResult, SeatStats, Termination
from arena.match.spec import MatchSpec
from arena.store.base import StoreBusy, StoreError
from arena.store.sqlite import SqliteStore

SPEC = MatchSpec("h:a:b:0:0", ("a", "b"), 0, 0, "seed:0")
HANDS = (HandResult("knock", 0, 12, knocker=0, deadwood=(3, 15)),
         HandResult("gin", 1, 40, knocker=1, deadwood=(20, 0)),
         HandResult("undercut", 0, 30, knocker=1, deadwood=(4, 6)))
RESULT = MatchResult(SPEC.match_id, 0, Termination.COMPLETED, None, (110, -110), "", HANDS,
                     (SeatStats(timeouts=1), SeatStats(rejections=2)))


def counts(path: Path) -> tuple[int, int, int, int]:
    db = sqlite3.connect(path)
    try:
        return tuple(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
                     for t in ("matches", "hands", "results", "ratings"))
    finally:
        db.close()


def test_reopen_and_refuse_foreign_files(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", '{"x": 1}')
    with SqliteStore(path) as store:  # the schema is created once, kept after
        assert [s.scope for s in store.scopes()] == ["t"]
        assert store.scope_config("t") == {"x": 1}
        assert store.journal_mode() == "wal"
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable arena database"):
        SqliteStore(junk)


def test_a_locked_database_is_busy_not_broken(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteStore(path, busy_timeout_s=0.05) as store:
        store.open_scope("t", "tournament", "t", "{}")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreBusy):
                store.record("t", SPEC, RESULT)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.record("t", SPEC, RESULT) is True  # nothing half-written before


def test_a_schema_1_database_is_migrated_keeping_everything(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute("INSERT INTO scopes VALUES ('t', 'tournament', 't', '{}', 1.0)")
    db.execute("INSERT INTO bots VALUES ('a', 'greedy', NULL, 1.0)")
    db.execute("INSERT INTO matches VALUES ('x:a:b:0:0', 't', 'a', 'b', 0, 0, 's', 0, "
               "'completed', NULL, 110, -110, 1, 0, '', 2.0)")
    db.execute("INSERT INTO hands VALUES ('x:a:b:0:0', 1, 'knock', 0, 12, 0, 3, 15)")
    for seat, bot, opp, out in ((0, "a", "b", "win"), (1, "b", "a", "loss")):
        db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0)",
                   ("x:a:b:0:0", seat, bot, opp, out))
    db.commit()
    db.close()
    with SqliteStore(path) as store:
        (row,) = store.matches("t")
        assert row.match_id == "x:a:b:0:0" and row.scores == (110, -110)
        assert [r.outcome for r in store.results("t")] == ["win", "loss"]
        assert len(store.open_scope("t", "tournament", "t", "{}")) == 32  # a secret now
        assert store.record("t", SPEC, RESULT) is True
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                          ).fetchone() == ("4",)
        assert db.execute("SELECT COUNT(*) FROM hands").fetchone() == (4,)


def test_a_schema_2_database_gains_the_bot_error_columns(tmp_path: Path) -> None:
    path = tmp_path / "two.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", "{}")
        store.record("t", SPEC, RESULT)
    with sqlite3.connect(path) as db:  # as schema 2 wrote it
        as_schema_3(db)
        db.execute("ALTER TABLE results DROP COLUMN errors")
        db.execute("ALTER TABLE results DROP COLUMN first_error")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    stats = (SeatStats(), SeatStats(errors=2, first_error="decide() raised KeyError: 'x'"))
    second = MatchSpec("h:b:a:0:1", ("b", "a"), 0, 1, "seed:1")
    with SqliteStore(path) as store:
        assert [r.errors for r in store.results("t")] == [0, 0]  # kept, counted as none
        store.record("t", second, dataclasses.replace(RESULT, match_id=second.match_id,
                                                      stats=stats))
        rows = store.results("t")
    assert [(r.errors, r.first_error) for r in rows[2:]] == [
        (0, ""), (2, "decide() raised KeyError: 'x'")]


def as_schema_3(db: sqlite3.Connection) -> None:
    """Take out what schema 4 added (the queue, verdicts, coordinators)."""
    for table in ("queue", "ladder_waiting", "ladder_pairings"):
        db.execute(f"DROP TABLE {table}")
    for table, column in (("scopes", "verdict"), ("scopes", "coordinator"),
                          ("scopes", "coordinator_until"), ("matches", "after_verdict")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def test_a_schema_3_database_gains_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "three.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", "{}")
        store.record("t", SPEC, RESULT)
    with sqlite3.connect(path) as db:
        as_schema_3(db)
    with SqliteStore(path) as store:
        (row,) = store.matches("t")
        assert row.match_id == SPEC.match_id and not row.after_verdict
        assert store.enqueue("t", [MatchSpec("next", ("a", "b"), 1, 0, "s1")]) == 1
        assert [c.spec.match_id for c in store.claim("w", lease_s=5)] == ["next"]
        assert store.scope_verdict("t") == ""


def test_backup_is_one_consistent_file(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.open_scope("t", "tournament", "t", "{}")
        store.record("t", SPEC, RESULT)
        store.backup(tmp_path / "copy.sqlite")
    with SqliteStore(tmp_path / "copy.sqlite") as copy:
        assert len(copy.matches("t")) == 1


# the schema of stores written before (scopes keyed matches by id alone)
SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE scopes (scope TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,
    config TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE bots (name TEXT PRIMARY KEY, spec TEXT NOT NULL DEFAULT '',
    token_hash TEXT UNIQUE, created_at REAL NOT NULL);
CREATE TABLE matches (match_id TEXT PRIMARY KEY, scope TEXT NOT NULL REFERENCES scopes(scope),
    bot0 TEXT NOT NULL, bot1 TEXT NOT NULL, deal INTEGER NOT NULL, seat_order INTEGER NOT NULL,
    seed TEXT NOT NULL, winner INTEGER, termination TEXT NOT NULL, blamed INTEGER,
    score0 INTEGER NOT NULL, score1 INTEGER NOT NULL, hands INTEGER NOT NULL,
    voided INTEGER NOT NULL, detail TEXT NOT NULL, finished_at REAL NOT NULL);
CREATE INDEX matches_by_scope ON matches(scope);
CREATE TABLE hands (match_id TEXT NOT NULL REFERENCES matches(match_id), hand INTEGER NOT NULL,
    kind TEXT NOT NULL, winner INTEGER, points INTEGER NOT NULL, knocker INTEGER,
    deadwood0 INTEGER NOT NULL, deadwood1 INTEGER NOT NULL, PRIMARY KEY (match_id, hand));
CREATE TABLE results (match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL, bot TEXT NOT NULL, opponent TEXT NOT NULL, outcome TEXT NOT NULL,
    score REAL, points INTEGER NOT NULL, hand_points INTEGER NOT NULL, hands INTEGER NOT NULL,
    hands_won INTEGER NOT NULL, gins INTEGER NOT NULL, undercuts INTEGER NOT NULL,
    timeouts INTEGER NOT NULL, illegal INTEGER NOT NULL, forfeit INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat));
CREATE INDEX results_by_bot ON results(bot);
CREATE TABLE scope_bots (scope TEXT NOT NULL REFERENCES scopes(scope), bot TEXT NOT NULL,
    spec TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (scope, bot));
CREATE TABLE ratings (scope TEXT NOT NULL, bot TEXT NOT NULL, mu REAL NOT NULL,
    sigma REAL NOT NULL, games INTEGER NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (scope, bot));
"""
