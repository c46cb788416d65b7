"""kill -9 in the middle of a tournament, then the same command again: nothing lost,
nothing counted twice, and the same totals as a run that was never interrupted (played in
process: with deterministic bots and no timeouts, both modes give the same results)."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournament.config import Mode, load_config
from arena.tournament.formats import tournament_schedule
from arena.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[tournament]
name = "killcup"
seed = "kill-9"
deals = {deals}
mode = "{mode}"
concurrency = 2
database = "killcup.sqlite"

[time_control]
decision_ms = 2000

[[bots]]
spec = "tests.tournament.bots:Greedy"
[[bots]]
spec = "tests.tournament.bots:Sloppy"
{third}"""
THIRD = """[[bots]]
name = "s2"
spec = "tests.tournament.bots:Sloppy"
"""
# (mode, deals, bots, matches to wait for before the kill)
CASES = {"in_process": (8, 3, 8), "process": (6, 2, 3)}


def arena_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", "tournament", *args, "--no-progress"]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))


def count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=5)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        conn.close()


def children(pid: int) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to watch the workers")
@pytest.mark.parametrize("mode", list(CASES))
def test_kill_9_then_rerun_resumes_exactly(tmp_path: Path, mode: str) -> None:
    deals, bots, kill_at = CASES[mode]
    cfg_path = tmp_path / "killcup.toml"
    cfg_path.write_text(CONFIG.format(deals=deals, mode=mode,
                                      third=THIRD if bots == 3 else ""), encoding="utf-8")
    db = tmp_path / "killcup.sqlite"
    proc = subprocess.Popen(arena_cmd(str(cfg_path)), cwd=tmp_path, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while count(db) < kill_at:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no matches committed in time"
            workers |= children(proc.pid)
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    # the killed run's workers die with it (and so do the bots): a commit one of them had
    # under way lands first, so count once they are all gone
    deadline = time.monotonic() + 15
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    at_kill = count(db)
    total = bots * (bots - 1) // 2 * deals * 2
    assert kill_at <= at_kill < total, "the run finished before the kill: make it longer"
    rerun = subprocess.run(arena_cmd(str(cfg_path)), cwd=tmp_path, env=env(),
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert f"({at_kill} already recorded, {total} scheduled)" in rerun.stdout

    # meanwhile the pool's workers (or the bot processes) saw their runner go, and exited
    deadline = time.monotonic() + 15
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers and not any(alive(w) for w in workers), "orphaned child processes"

    # a run that was never interrupted (in this process, one match at a time), on the same
    # deals: the killed run's scope secret, given to a fresh database
    cfg = load_config(cfg_path)
    with sqlite3.connect(db) as a:
        (secret,) = a.execute("SELECT secret FROM scopes").fetchone()
    clean_db = tmp_path / "clean.sqlite"
    run_tournament(dataclasses.replace(cfg, database=str(clean_db), concurrency=1,
                                       mode=Mode.IN_PROCESS, secret=secret))

    expected = {s.match_id for s in tournament_schedule(cfg, secret)}
    with sqlite3.connect(db) as a, sqlite3.connect(clean_db) as b:
        ids = [r[0] for r in a.execute("SELECT match_id FROM matches")]
        assert len(ids) == len(set(ids)) == total
        assert set(ids) == expected
        for conn in (a, b):
            assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2 * total
            assert conn.execute("SELECT SUM(hands) FROM matches").fetchone()[0] == \
                conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
            assert conn.execute("SELECT SUM(games) FROM ratings").fetchone()[0] == 2 * total
        query = ("SELECT match_id, bot0, bot1, winner, termination, score0, score1, hands "
                 "FROM matches ORDER BY match_id")
        assert a.execute(query).fetchall() == b.execute(query).fetchall()
        totals = ("SELECT bot, outcome, COUNT(*), SUM(points), SUM(hands), SUM(gins) "
                  "FROM results GROUP BY bot, outcome ORDER BY bot, outcome")
        assert a.execute(totals).fetchall() == b.execute(totals).fetchall()
