"""The SQLite store: one transaction per match, idempotent writes, safe reopening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.match.messages import MatchResult, SeatStats, Termination
from arena.rules import HandResult
from arena.tournament.formats import MatchSpec
from arena.tournament.store import Rating, SqliteStore, StoreError, is_void

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
        with pytest.raises(sqlite3.IntegrityError):
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
