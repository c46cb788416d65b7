"""The CLI commands: tournament, standings (table, CSV, JSON, matrix), register; one-line errors."""

from __future__ import annotations

import csv
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from arena.cli import main

BOTS = "tests.tournament.bots"


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """main() points structlog at this test's captured stderr: undo it afterwards."""
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "cup.sqlite"
    code = main(["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", f"{BOTS}:Crasher",
                 "--seed", "cli", "--deals", "2", "--in-process", "--concurrency", "1",
                 "--db", str(path), "--name", "clicup", "--no-progress"])
    assert code == 0
    structlog.reset_defaults()
    return path


def test_tournament_prints_a_summary_and_the_standings(db: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    code = main(["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", f"{BOTS}:Crasher",
                 "--seed", "cli", "--deals", "2", "--in-process", "--db", str(db),
                 "--name", "clicup", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "0 matches played now (12 already recorded, 12 scheduled)" in out
    assert "Elo [95% CI]" in out and "greedy" in out


def test_standings_exports(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv_path, json_path = tmp_path / "s.csv", tmp_path / "s.json"
    assert main(["standings", str(db), "--csv", str(csv_path), "--json", str(json_path),
                 "--matrix"]) == 0
    out = capsys.readouterr().out
    assert "clicup (tournament" in out and "W-D-L" in out
    assert "cell: row bot's score against the column bot" in out
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["bot"] for r in rows] == ["greedy", "sloppy", "crasher"]
    assert rows[2]["forfeits"] == "8" and rows[0]["games"] == "8"
    assert {"elo", "elo_low", "elo_high", "los_next", "points_per_hand", "gin_rate",
            "undercut_rate", "timeouts", "illegal"} <= set(rows[0])
    data = json.loads(json_path.read_text())
    assert data["matches"] == 12 and data["scope"]["name"] == "clicup"
    assert data["scope"]["config"]["seed"] == "cli"
    pairs = {(m["bot"], m["opponent"]): m for m in data["matrix"]}
    assert pairs[("greedy", "crasher")]["wins"] == 4
    assert pairs[("crasher", "greedy")]["losses"] == 4


def test_register_prints_the_token_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    ladder_db = tmp_path / "ladder.sqlite"
    assert main(["register", str(ladder_db), "alpha"]) == 0
    out = capsys.readouterr().out
    token = out.split("token: ")[1].strip()
    assert len(token) >= 16
    assert main(["register", str(ladder_db), "alpha"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "arena: error: the name 'alpha' is already registered"


@pytest.mark.parametrize(("argv", "message"), [
    (["tournament"], "give a CONFIG.toml or --bots"),
    (["tournament", "missing.toml"], "missing.toml: cannot read"),
    (["tournament", "--bots", "nosuch.module:Bot", "greedy", "--seed", "x"],
     "bot 'Bot': cannot find bot module 'nosuch.module'"),
    (["tournament", "--bots", "greedy", "--seed", "x"], "a tournament needs at least two bots"),
    (["tournament", "--bots", "a:B", "c:D", "--seed", "x", "--format", "sprt", "--deals", "0"],
     "deals must be at least 1"),
    (["standings", "nowhere.sqlite"], "nowhere.sqlite: no such database"),
    (["standings"], "give the database file"),
    (["register", "x.sqlite", "bad name"], "use letters, digits"),
    (["ladder", "--tls-cert", "c.pem"], "TLS needs both --tls-cert and --tls-key"),
    (["tournament", "--bots", "greedy", "no-such-bot-command --fast", "--seed", "x"],
     "is not a sample bot (random, greedy, strong), a module:Class, a file.py, or a command"),
])
def test_errors_are_one_line(argv: list[str], message: str, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena: error: ")
    assert message in err, err


def test_a_port_in_use_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        config = tmp_path / "cup.toml"
        config.write_text(f'[tournament]\nseed = "x"\nport = {port}\n'
                          '[[bots]]\nspec = "greedy"\n[[bots]]\nspec = "random"\n')
        monkeypatch.chdir(tmp_path)
        assert main(["tournament", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena: error: ")
    assert f"cannot serve on 127.0.0.1:{port}" in err, err


def test_export_every_match_and_back_up_the_database(db: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    csv_path, json_path = tmp_path / "m.csv", tmp_path / "m.json"
    assert main(["export", str(db), "--csv", str(csv_path), "--json", str(json_path)]) == 0
    assert "12 matches of clicup@" in capsys.readouterr().out
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 12
    assert {"match_id", "scope", "bot_seat0", "bot_seat1", "deal", "seat_order", "winner",
            "score_seat0", "score_seat1", "hands", "termination", "blamed_seat",
            "voided"} <= set(rows[0])
    crashed = [r for r in rows if "crasher" in (r["bot_seat0"], r["bot_seat1"])]
    assert all(r["blamed"] == "crasher" and r["winner"] != "crasher" for r in crashed)
    data = json.loads(json_path.read_text())
    assert [m["match_id"] for m in data["matches"]] == [r["match_id"] for r in rows]
    copy = tmp_path / "copy.sqlite"
    assert main(["backup", str(db), str(copy)]) == 0
    assert main(["export", str(copy), "--json", str(tmp_path / "again.json")]) == 0
    assert json.loads((tmp_path / "again.json").read_text()) == data
    assert main(["backup", str(db), str(copy)]) == 2  # never overwrites
    assert "already exists" in capsys.readouterr().err


def test_a_new_name_on_the_same_seed_records_its_own_matches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the arena advises when a bot changed: a new --name, same seed, same database."""
    db = tmp_path / "twice.sqlite"
    args = ["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", "--seed",
            "same-seed-0123456789", "--deals", "2", "--in-process", "--db", str(db),
            "--no-progress"]
    assert main([*args, "--name", "first"]) == 0
    assert main([*args, "--name", "second"]) == 0
    out = capsys.readouterr().out
    assert out.count("4 matches played now (0 already recorded, 4 scheduled)") == 2
    import sqlite3

    with sqlite3.connect(db) as conn:
        counts = dict(conn.execute("SELECT s.name, COUNT(*) FROM matches m JOIN scopes s "
                                   "ON s.scope = m.scope GROUP BY s.name").fetchall())
    assert counts == {"first": 4, "second": 4}


def test_a_tournament_without_a_seed_makes_one_and_reuses_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "seedless.sqlite"
    args = ["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", "--deals", "1",
            "--in-process", "--db", str(db), "--name", "seedless", "--no-progress"]
    assert main(args) == 0
    first = capsys.readouterr()
    seed = first.out.split("; seed ")[1].split()[0]
    assert len(seed) == 32 and int(seed, 16) >= 0 and "(new: made now and stored)" in first.out
    assert "warning" not in first.err
    assert main(args) == 0  # the same command again resumes on the stored seed
    again = capsys.readouterr().out
    assert f"seed {seed} (read from the database)" in again
    assert "0 matches played now (2 already recorded, 2 scheduled)" in again


def test_a_guessable_seed_is_warned_about(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", "--deals", "1",
                 "--seed", "2026-spring", "--in-process", "--db", str(tmp_path / "w.sqlite"),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "warning: the seed '2026-spring' is easy to guess" in err
    assert "keyed with this tournament's secret" in err


def test_an_sprts_numbers_are_in_the_table_and_the_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "h2h.sqlite"
    assert main(["tournament", "--bots", f"{BOTS}:Greedy", f"{BOTS}:Sloppy", "--format", "sprt",
                 "--in-process", "--db", str(db), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "SPRT:" in out and "pentanomial (deals scoring A 0, 1/4, 1/2, 3/4, 1):" in out
    json_path = tmp_path / "h2h.json"
    assert main(["standings", str(db), "--json", str(json_path)]) == 0
    sprt = json.loads(json_path.read_text())["sprt"]
    assert sprt["bots"] == ["greedy", "sloppy"] and sprt["status"] in ("accept_h1", "accept_h0")
    assert sprt["lower"] < 0 < sprt["upper"] and (sprt["elo0"], sprt["elo1"]) == (0.0, 30.0)
    assert len(sprt["pentanomial"]) == 5 and sum(sprt["pentanomial"]) == sprt["deals"]
    assert (sprt["llr"] >= sprt["upper"]) == (sprt["status"] == "accept_h1")
