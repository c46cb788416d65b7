"""The SQLite store: one transaction per match, idempotent writes, safe reopening."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path

import pytest

from arena.match.messages import MatchResult, SeatStats, Termination
from arena.rules import HandResult
from arena.tournament.formats import MatchSpec
from arena.tournament.store import Rating, SqliteStore, StoreBusy, StoreError, is_void

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


def test_record_writes_everything_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", "{}")
        new = {"a": Rating(27.0, 8.0, 1), "b": Rating(23.0, 8.0, 1)}
        assert store.record("t", SPEC, RESULT, new) is True
        assert counts(path) == (1, 3, 2, 2)
        # the same match again: nothing changes (a resumed run never double counts)
        assert store.record("t", SPEC, RESULT, {"a": Rating(99.0, 1.0, 2)}) is False
        assert counts(path) == (1, 3, 2, 2)
        assert store.ratings("t")["a"] == Rating(27.0, 8.0, 1)
        assert store.finished_ids("t") == {SPEC.match_id}
        (row,) = store.matches("t")
        assert row.pair == ("a", "b") and row.score_of("a") == 1.0 and row.score_of("b") == 0.0
        a, b = store.results("t")
        assert (a.bot, a.outcome, a.hands_won, a.gins, a.undercuts, a.timeouts) == \
            ("a", "win", 2, 0, 1, 1)
        assert (b.bot, b.outcome, b.gins, b.illegal, b.hand_points) == ("b", "loss", 1, 2, -2)
        assert a.hand_points == 12 + 30 - 40
        assert store.wins("t") == {"a": 1, "b": 0}


def test_a_failing_write_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", "{}")
        broken = {"a": Rating(None, 1.0, 1)}  # type: ignore[arg-type]  # NOT NULL fails last
        # refused for another reason than "already there": an error naming the match
        with pytest.raises(StoreError, match=re.escape(
                "could not record match h:a:b:0:0 of 't': NOT NULL constraint failed: "
                "ratings.mu")):
            store.record("t", SPEC, RESULT, broken)
        assert counts(path) == (0, 0, 0, 0)
        assert store.record("t", SPEC, RESULT, {"a": Rating(26.0, 8.0, 1)}) is True
        assert counts(path) == (1, 3, 2, 1)


def test_void_and_draw_outcomes(tmp_path: Path) -> None:
    void = MatchResult("v", None, Termination.ARENA_ERROR, detail="boom")
    no_show = MatchResult("n", None, Termination.NO_SHOW)
    draw = MatchResult("d", None, Termination.CAPPED)
    forfeit = MatchResult("f", 1, Termination.FORFEIT_TIMEOUT, blamed=0)
    assert is_void(void) and is_void(no_show)
    assert not is_void(draw) and not is_void(forfeit)
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.open_scope("t", "tournament", "t", "{}")
        for i, r in enumerate((void, draw, forfeit)):
            store.record("t", MatchSpec(f"m{i}", ("a", "b"), i, 0, "s"), r, {})
        rows = store.matches("t")
        assert [r.voided for r in rows] == [True, False, False]
        assert [r.score_of("a") for r in rows] == [None, 0.5, 0.0]
        outcomes = [(r.bot, r.outcome, r.forfeit) for r in store.results("t")]
        assert outcomes[:2] == [("a", "void", False), ("b", "void", False)]
        assert ("a", "loss", True) in outcomes and ("b", "win", False) in outcomes


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


def test_match_ids_are_unique_per_scope_not_globally(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite") as store:
        for scope in ("t1", "t2"):
            store.open_scope(scope, "tournament", scope, "{}")
            assert store.record(scope, SPEC, RESULT, {}) is True  # the same id, two scopes
        assert store.record("t1", SPEC, RESULT, {}) is False
        assert [len(store.matches(s)) for s in ("t1", "t2")] == [1, 1]
        assert [len(store.results(s)) for s in ("t1", "t2")] == [2, 2]
        assert store.wins("t2") == {"a": 1, "b": 0}


def test_each_scope_keeps_its_secret(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite") as store:
        first = store.open_scope("t", "tournament", "t", "{}")
        assert len(first) == 32 and int(first, 16) >= 0
        assert store.open_scope("t", "tournament", "t", "{}") == first
        assert store.open_scope("u", "tournament", "u", "{}") != first
        assert store.open_scope("v", "tournament", "v", "{}", "ab" * 16) == "ab" * 16
        with pytest.raises(StoreError, match="played with another secret"):
            store.open_scope("t", "tournament", "t", "{}", "cd" * 16)


def test_a_locked_database_is_busy_not_broken(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteStore(path, busy_timeout_s=0.05) as store:
        store.open_scope("t", "tournament", "t", "{}")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreBusy):
                store.record("t", SPEC, RESULT, {})
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.record("t", SPEC, RESULT, {}) is True  # nothing half-written before


def test_ladder_names_are_unique_whatever_the_case_and_tokens_can_be_revoked(
        tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.register_bot("Alpha", "h1")
        with pytest.raises(StoreError, match="'alpha' is already registered \\(as 'Alpha'\\)"):
            store.register_bot("alpha", "h2")
        epoch = store.token_epoch()
        assert store.bot_for_token_hash("h1") == "Alpha"
        store.set_token("Alpha", None)  # revoke
        assert store.bot_for_token_hash("h1") is None and store.token_epoch() == epoch + 1
        store.set_token("Alpha", "h3")  # rotate
        assert store.bot_for_token_hash("h3") == "Alpha" and store.bot_for_token_hash("h1") is None
        assert store.token_epoch() == epoch + 2
        with pytest.raises(StoreError, match="no ladder bot named 'beta'"):
            store.set_token("beta", "h4")


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
        assert store.record("t", SPEC, RESULT, {}) is True
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                          ).fetchone() == ("3",)
        assert db.execute("SELECT COUNT(*) FROM hands").fetchone() == (4,)


def test_a_schema_2_database_gains_the_bot_error_columns(tmp_path: Path) -> None:
    path = tmp_path / "two.sqlite"
    with SqliteStore(path) as store:
        store.open_scope("t", "tournament", "t", "{}")
        store.record("t", SPEC, RESULT, {})
    with sqlite3.connect(path) as db:  # as schema 2 wrote it
        db.execute("ALTER TABLE results DROP COLUMN errors")
        db.execute("ALTER TABLE results DROP COLUMN first_error")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    stats = (SeatStats(), SeatStats(errors=2, first_error="decide() raised KeyError: 'x'"))
    second = MatchSpec("h:b:a:0:1", ("b", "a"), 0, 1, "seed:1")
    with SqliteStore(path) as store:
        assert [r.errors for r in store.results("t")] == [0, 0]  # kept, counted as none
        store.record("t", second, dataclasses.replace(RESULT, match_id=second.match_id,
                                                      stats=stats), {})
        rows = store.results("t")
    assert [(r.errors, r.first_error) for r in rows[2:]] == [
        (0, ""), (2, "decide() raised KeyError: 'x'")]


def test_backup_is_one_consistent_file(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.open_scope("t", "tournament", "t", "{}")
        store.record("t", SPEC, RESULT, {})
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
