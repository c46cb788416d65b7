"""The ``arena`` command as a user runs it: subprocesses from the repository root.

``arena play`` runs two sample bots as processes against an embedded arena over real gRPC
and writes replays; ``arena replay`` re-simulates them (and catches a tampered one);
``arena show`` prints them. Every bad input gets one line on stderr starting
``arena: error:`` and exit code 2, never a traceback. ``arena serve`` is started on a free
port, two SDK bots play a match on it, and SIGTERM (or SIGINT, with the handler reset: a
background job of a non-interactive shell ignores it) stops it with exit code 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import gin_arena_sdk as sdk
import grpc
import pytest
from gin_arena_core.protocol import pb, pb_grpc
from gin_arena_sdk import Action, Bot, Discard, Gin, Knock, PlayerView

from bench.spawn import python_module

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
RUN_TIMEOUT = 60.0  # seconds for one command (never reached when things work)
GAMES = 2

HAS_SAMPLE_BOTS = all((ROOT / "sample_bots" / f).is_file()
                      for f in ("__init__.py", "greedy.py", "random_bot.py"))

# used when sample_bots/ is missing: two tiny bots, written to files a user would pass
FIRST_LEGAL_BOT = '''
from gin_arena_sdk import Action, Bot, Discard, Gin, Knock, PlayerView


class FirstLegal(Bot):
    name = "first"

    def decide(self, view):
        return view.legal[0]
'''
KNOCKER_BOT = '''
from gin_arena_sdk import Bot, Discard, Gin, Knock, min_deadwood


class Knocker(Bot):
    name = "knocker"

    def discard(self, view):
        outs = [a for a in view.legal if isinstance(a, (Gin, Knock))]
        if outs:
            return outs[0]
        return min((a for a in view.legal if isinstance(a, Discard)),
                   key=lambda a: min_deadwood([c for c in view.hand if c != a.card]))
'''


def env() -> dict[str, str]:
    """The user's environment, with the repository importable (and gRPC's own logging at its
    default, whatever the developer running the tests has set)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    out["PYTHONPATH"] = str(ROOT)
    out.pop("PYTHONWARNINGS", None)
    return out


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def arena(*args: str | Path, cwd: Path = ROOT) -> Ran:
    proc = subprocess.run([sys.executable, "-m", "arena.cli", *map(str, args)], cwd=cwd,
                          env=env(), capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          check=False)
    return Ran(proc.returncode, proc.stdout, proc.stderr)


def assert_usage_error(ran: Ran, *needles: str) -> None:
    """One line on stderr, ``arena: error: ...``, exit code 2, no traceback."""
    assert "Traceback" not in ran.err, ran.err[-2000:]
    assert ran.err_lines and ran.err_lines[0].startswith("arena: error:"), ran.err
    assert len(ran.err_lines) == 1, ran.err
    for needle in needles:
        assert needle in ran.err_lines[0], ran.err
    assert ran.code == 2, (ran.code, ran.err)


# ------------------------------------------------------------------------------ play


@dataclass
class Played:
    ran: Ran
    replays: Path
    names: tuple[str, str]


def bot_specs(base: Path) -> tuple[tuple[str, str], tuple[str, str]]:
    """Two bot specs as a user types them, and the names they play under."""
    if HAS_SAMPLE_BOTS:
        return ("greedy", "random"), ("greedy", "random")
    (base / "first.py").write_text(FIRST_LEGAL_BOT)
    (base / "knocker.py").write_text(KNOCKER_BOT)
    return (str(base / "knocker.py"), str(base / "first.py")), ("knocker", "first")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """``arena play A B --games 2`` once, over real gRPC; its replays feed the tests below."""
    base = tmp_path_factory.mktemp("play")
    specs, names = bot_specs(base)
    replays = base / "replays"
    ran = arena("play", *specs, "--games", str(GAMES), "--seed", "cli-e2e",
                "--replays", replays, "--decision-ms", "3000")
    return Played(ran, replays, names)


def test_play_prints_the_table_and_writes_replays(played: Played) -> None:
    ran = played.ran
    assert ran.code == 0, ran.err
    assert "Traceback" not in ran.err
    lines = ran.out.splitlines()
    assert lines[0].startswith(f"{GAMES} games, ")
    assert "seed cli-e2e" in lines[0]
    header = lines[1].split()
    assert header[:3] == ["bot", "games", "W-D-L"] and "errors" in header
    assert set(lines[2]) <= {"-", " "}
    rows = {line.split()[0]: line.split() for line in lines[3:5]}
    assert set(rows) == set(played.names)
    for row in rows.values():
        assert row[1] == str(GAMES)  # each bot played every game
        assert sum(map(int, row[2].split("-"))) == GAMES  # wins, draws, losses
    assert sum(int(row[2].split("-")[0]) for row in rows.values()) <= GAMES
    assert "problems" not in ran.out
    summary = json.loads((played.replays / "summary.json").read_text())
    assert summary["complete"] is True and summary["played"] == GAMES
    assert [t["name"] for t in summary["tallies"]] == list(rows)
    assert (played.replays / "table.txt").read_text() == ran.out[ran.out.index(lines[0]):]
    files = sorted(played.replays.glob("*.jsonl"))
    assert len(files) == GAMES
    for path in files:
        record = [json.loads(line) for line in path.read_text().splitlines()]
        assert record[0]["type"] == "match"
        assert set(record[0]["names"]) == set(played.names)
        assert record[-1]["type"] == "end"
        assert record[-1]["termination"] == "completed"


BUGGY_BOT = '''
from gin_arena_sdk import Bot


class Buggy(Bot):
    name = "buggy"

    def draw_discard(self, view):
        return view.discard_pile[-1].rnak < 5  # the bug: a typo
'''


def table_row(out: str, bot: str) -> dict[str, str]:
    """``bot``'s row of the results table, by column (the table may come in blocks)."""
    row: dict[str, str] = {}
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("bot ") and i + 1 < len(lines) and set(lines[i + 1]) <= {"-", " "}:
            spans = [m.span() for m in re.finditer(r"-+", lines[i + 1])]  # the column widths
            for body in lines[i + 2:]:
                if not body.strip() or body.startswith("bot "):
                    break
                cells = [body[a:b].strip() for a, b in spans]
                if cells[0] == bot:
                    row.update(zip((line[a:b].strip() for a, b in spans), cells, strict=True))
    return row


@pytest.mark.parametrize("mode", ["grpc", "in-process"])
def test_a_bot_bug_is_counted_and_named_with_its_line_in_both_modes(tmp_path: Path,
                                                                   mode: str) -> None:
    (tmp_path / "buggy.py").write_text(BUGGY_BOT)
    other = "greedy" if HAS_SAMPLE_BOTS else str(tmp_path / "knocker.py")
    if not HAS_SAMPLE_BOTS:
        (tmp_path / "knocker.py").write_text(KNOCKER_BOT)
    ran = arena("play", tmp_path / "buggy.py", other, "--games", "4", "--seed", "bug-1",
                "--replays", tmp_path / "run", "--decision-ms", "3000",
                *(["--in-process"] if mode == "in-process" else []))
    assert ran.code == 0, ran.err
    row = table_row(ran.out, "buggy")
    errors = int(row["errors"])
    assert errors > 0 and row["illegal"] == "0"
    [problem] = [line for line in ran.out.splitlines() if line.startswith("  buggy: ")]
    assert problem.startswith(f"  buggy: {errors} bot error")
    assert ("first: decide() raised AttributeError: 'Card' object has no attribute 'rnak' at "
            "buggy.py:9 in draw_discard") in problem
    if mode == "grpc":
        assert f"its log: {tmp_path / 'run' / 'bot-logs' / 'buggy'}-*.log" in problem


def test_three_bots_get_a_crosstable_and_latest_moves_only_to_a_run_that_played(
        tmp_path: Path) -> None:
    specs, _ = bot_specs(tmp_path)
    ran = arena("play", *specs, specs[0], "--games", "2", "--seed", "x3", "--in-process",
                cwd=tmp_path)
    assert ran.code == 0, ran.err
    assert "cell: the row bot's wins-draws-losses against the column bot" in ran.out
    latest = (tmp_path / "runs" / "latest").resolve()
    assert json.loads((latest / "summary.json").read_text())["played"] == 6
    bad = arena("play", specs[0], "no_such_file.py", cwd=tmp_path)
    assert bad.code == 2
    assert (tmp_path / "runs" / "latest").resolve() == latest
    assert len(list((tmp_path / "runs").iterdir())) == 2  # the run and the link: no new dir


def test_an_odd_games_count_says_who_had_the_extra_first_seat(tmp_path: Path) -> None:
    specs, names = bot_specs(tmp_path)
    ran = arena("play", *specs, "--games", "3", "--seed", "odd", "--in-process",
                "--replays", "", cwd=tmp_path)
    assert ran.code == 0, ran.err
    assert (f"note: --games 3 is odd, so the last deal of each pairing is played once "
            f"instead of twice with the seats swapped; in it seat 0 (the first dealer) went "
            f"to {names[0]}.") in ran.err


def test_replay_confirms_every_recorded_result(played: Played) -> None:
    files = sorted(played.replays.glob("*.jsonl"))
    ran = arena("replay", *files)
    assert ran.code == 0, ran.out + ran.err
    assert [line.split(": ")[1][:2] for line in ran.out.splitlines()] == ["OK"] * GAMES
    assert "MISMATCH" not in ran.out


def test_replay_catches_a_tampered_score(played: Played, tmp_path: Path) -> None:
    source = sorted(played.replays.glob("*.jsonl"))[0]
    items = [json.loads(line) for line in source.read_text().splitlines()]
    result = next(i for i in items if i["type"] == "hand_result" and i["winner"] is not None)
    result["points"] += 1  # one recorded value changed
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(i) + "\n" for i in items))
    ran = arena("replay", tampered, source)
    assert ran.code == 1, ran.out + ran.err
    out = ran.out.splitlines()
    assert out[0] == f"{tampered}: MISMATCH"
    assert f"hand {result['hand']}" in ran.out
    assert any(line.startswith(f"{source}: OK") for line in out)  # the other file is fine
    assert "Traceback" not in ran.err


def test_show_prints_both_hands_of_every_hand(played: Played) -> None:
    source = sorted(played.replays.glob("*.jsonl"))[0]
    record = [json.loads(line) for line in source.read_text().splitlines()]
    deals = [i for i in record if i["type"] == "deal"]
    ran = arena("show", source)
    assert ran.code == 0, ran.err
    out = ran.out
    assert out.startswith(f"match {record[0]['match_id']}: ")
    for deal in deals:
        assert f"hand {deal['hand']}: " in out
    first = deals[0]["deck"]
    dealt = set(first[:20])  # the first hand's 20 dealt cards are all printed
    hand_lines = out.split(f"hand {deals[0]['hand']}: ")[1].splitlines()[1:3]
    shown = {tok for line in hand_lines for tok in line.split(":")[1].split()}
    assert shown == dealt
    assert "end: completed" in out


@dataclass
class Interrupted:
    code: int
    out: str
    err: str
    left: list[str]  # command lines of processes started by it still alive after it exited
    replays: Path


def processes_with(marker: str) -> list[str]:
    """Live processes whose environment holds ``marker`` (inherited from a test's child)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in (proc / "environ").read_bytes():
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return out


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    """``arena play`` with many games, interrupted by SIGINT (Ctrl-C) once games finish."""
    base = tmp_path_factory.mktemp("interrupted")
    specs, _ = bot_specs(base)
    replays = base / "replays"
    marker = f"arena-e2e-{uuid.uuid4().hex}"
    proc = subprocess.Popen(
        python_module("arena.cli", "play", *specs, "--games", "500", "--concurrency", "1",
                      "--replays", str(replays), sigint=True),
        cwd=ROOT, env={**env(), "ARENA_E2E_MARKER": marker},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while not list(replays.glob("*.jsonl")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert processes_with(marker)  # the bots are running
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    left: list[str] = []
    deadline = time.monotonic() + 10  # killed children may take a moment to go
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return Interrupted(proc.returncode, out, err, left, replays)


def test_interrupted_play_leaves_no_bot_process_behind(interrupted: Interrupted) -> None:
    assert interrupted.left == []
    assert interrupted.code != 0


def test_interrupted_play_exits_130_without_a_traceback(interrupted: Interrupted) -> None:
    assert "Traceback" not in interrupted.err, interrupted.err[-2000:]
    assert interrupted.code == 130


def test_interrupted_play_prints_and_keeps_the_table_so_far(interrupted: Interrupted) -> None:
    summary = json.loads((interrupted.replays / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["complete"] is False
    played = summary["played"]
    assert 0 < played < summary["scheduled"] == 500
    assert played <= len(list(interrupted.replays.glob("*.jsonl")))
    assert sum(t["games"] for t in summary["tallies"]) == 2 * played
    assert f"interrupted: {played} of 500 games played" in interrupted.err
    table = (interrupted.replays / "table.txt").read_text()
    assert table.startswith(f"{played} games, ") and table in interrupted.out + "\n"


NO_TOKEN_BOT = """
import os, queue, grpc
from gin_arena_core.protocol import pb, pb_grpc
out = queue.Queue()
out.put(pb.BotMessage(hello=pb.Hello(name="forgetful", protocol_version=1)))  # no token
with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as ch:
    try:
        for _ in pb_grpc.ArenaStub(ch).Play(iter(out.get, None), timeout=60):
            pass
    except grpc.RpcError:
        pass
"""


def test_a_command_bot_without_its_token_is_named_at_once(tmp_path: Path) -> None:
    script = tmp_path / "forgetful.py"
    script.write_text(NO_TOKEN_BOT)
    started = time.monotonic()
    ran = arena("play", f"{sys.executable} {script}", "greedy", "--games", "2",
                "--replays", tmp_path / "runs")
    assert_usage_error(ran, "connected without its token", "'forgetful'", "ARENA_TOKEN")
    assert time.monotonic() - started < 25  # not after the 30 s show-up wait


# ------------------------------------------------------------------------------ bad input


BAD_INPUT = {  # what a user typed -> what the one line must mention
    "unknown-flag": (("play", "greedy", "random", "--bogus"), ("--bogus",)),
    "unknown-flag-no-command": (("--bogus",), ()),
    "games-0": (("play", "greedy", "random", "--games", "0"), ("--games",)),
    "rules-nope": (("play", "greedy", "random", "--rules", "nope"), ("nope",)),
    "set-typo": (("play", "greedy", "random", "--set", "knock_limt=5"), ("knock_limt",)),
    "rules-bad-json": (("play", "greedy", "random", "--rules", "{bad json"), ("JSON",)),
    "missing-bot-file": (("play", "/nonexistent/dir/bot.py", "random"),
                         ("/nonexistent/dir/bot.py",)),
    "missing-bot-module": (("play", "no_such_bot_module:Bot", "random"),
                           ("no_such_bot_module",)),
    "decision-ms-0": (("play", "greedy", "random", "--decision-ms", "0"), ("decision_ms",)),
    "replay-not-json": (("replay", "{not_json}"), ("{not_json}", "not JSON")),
    "show-missing-file": (("show", "{missing}"), ("{missing}", "cannot read")),
    "serve-port-text": (("serve", "--port", "abc"), ("--port", "abc")),
    "ladder-port-range": (("ladder", "--port", "70000"), ("--port", "70000")),
    "serve-unknown-host": (("serve", "--host", "no.such.host.invalid", "--port", "5000"),
                           ("no.such.host.invalid",)),
}


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Ran, list[str]]]:
    """Every BAD_INPUT command, run a few at a time (each is a fresh interpreter)."""
    base = tmp_path_factory.mktemp("bad-input")
    not_json = base / "notes.jsonl"
    not_json.write_text("this is not a replay\n")
    paths = {"{not_json}": str(not_json), "{missing}": str(base / "missing.jsonl")}

    def fill(text: str) -> str:
        return paths.get(text, text)

    def one(case: str) -> tuple[Ran, list[str]]:
        args, needles = BAD_INPUT[case]
        return arena(*map(fill, args)), [fill(n) for n in needles]

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(BAD_INPUT, pool.map(one, BAD_INPUT), strict=True))


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_and_exit_2(
        case: str, bad_input_runs: dict[str, tuple[Ran, list[str]]]) -> None:
    ran, needles = bad_input_runs[case]
    assert_usage_error(ran, *needles)


# ------------------------------------------------------------------------------ serve


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(*args: str | Path | int, sigint: bool = False) -> Iterator[subprocess.Popen[str]]:
    """``arena serve ...`` as a child process; killed if the test leaves it running."""
    proc = subprocess.Popen(python_module("arena.cli", "serve", *map(str, args), sigint=sigint),
                            cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def first_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    """The first line ``proc`` prints ("" if it exits or stays silent for ``timeout``)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return line[0].strip() if line else ""


def wait_listening(proc: subprocess.Popen[str]) -> str:
    """The ``arena listening on HOST:PORT ...`` line, or fail."""
    line = first_line(proc)
    assert line.startswith("arena listening on "), f"{line!r}; exit code {proc.poll()}"
    return line


def stop(proc: subprocess.Popen[str], signum: int, timeout: float = 10.0) -> tuple[int, str]:
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err


class Steady(Bot):
    """A legal, decisive SDK bot: knocks as soon as it may, else discards the highest card."""

    def __init__(self, name: str) -> None:
        self.name = name

    def discard(self, view: PlayerView) -> Action:
        outs = [a for a in view.legal if isinstance(a, Gin | Knock)]
        if outs:
            return outs[0]
        return max((a for a in view.legal if isinstance(a, Discard)),
                   key=lambda a: (a.card.value, a.card))


def test_serve_plays_a_match_then_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    replays = tmp_path / "serve-replays"
    with serving("--port", port, "--replays", replays, "--decision-ms", "3000",
                 "--seed", "serve-e2e") as proc:
        line = wait_listening(proc)
        assert line.startswith(f"arena listening on {HOST}:{port}")
        played: list[int] = []
        bots = [threading.Thread(target=lambda n=n: played.append(
            sdk.run(Steady(n), f"{HOST}:{port}", matches=1)), daemon=True)
            for n in ("steady-a", "steady-b")]
        for t in bots:
            t.start()
        for t in bots:
            t.join(RUN_TIMEOUT)
        assert played == [1, 1]
        files = list(replays.glob("*.jsonl"))
        deadline = time.monotonic() + 10  # written just after the bots saw the match end
        while not files and time.monotonic() < deadline:
            time.sleep(0.05)
            files = list(replays.glob("*.jsonl"))
        [path] = files
        end = json.loads(path.read_text().splitlines()[-1])
        assert end["type"] == "end" and end["termination"] == "completed"
        assert proc.poll() is None  # still serving
        code, err = stop(proc, signal.SIGTERM)  # within stop()'s 10 s, or it fails
    assert code == 0, err
    assert "Traceback" not in err


def refused_hello(port: int) -> grpc.StatusCode:
    """Open Play and send an ActionReply first: the arena's session refuses it."""
    first = pb.BotMessage(action=pb.ActionReply(request_id=1))
    with grpc.insecure_channel(f"{HOST}:{port}") as channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(iter([first]), timeout=RUN_TIMEOUT)
        with contextlib.suppress(grpc.RpcError):
            list(call)
        code: grpc.StatusCode = call.code()
        return code


def test_serve_stops_on_sigint_when_the_handler_is_reset(tmp_path: Path) -> None:
    port = free_port()
    with serving("--port", port, "--replays", tmp_path, sigint=True) as proc:
        wait_listening(proc)
        # a session answered: the server runs (and so has set up its signal handling)
        assert refused_hello(port) == grpc.StatusCode.FAILED_PRECONDITION
        code, err = stop(proc, signal.SIGINT)
    assert code == 0, err
    assert "Traceback" not in err


def test_serve_on_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind((HOST, 0))
        held.listen()
        port = held.getsockname()[1]
        ran = arena("serve", "--port", str(port), "--replays", tmp_path)
    assert_usage_error(ran, str(port))


def test_serve_on_a_port_out_of_range_is_refused(tmp_path: Path) -> None:
    port = free_port()
    with serving("--port", 65536 + port, "--replays", tmp_path) as proc:
        line = first_line(proc)
        assert not line.startswith("arena listening on"), line  # it serves on another port
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
        ran = Ran(proc.returncode, line, err)
    assert_usage_error(ran, "--port")


def test_version_names_the_package_the_protocol_and_python() -> None:
    import platform
    from importlib.metadata import version

    from gin_arena_core.protocol import PROTOCOL_VERSION

    ran = arena("--version")
    assert ran.code == 0, ran.err
    assert ran.out.strip() == (f"arena (gin-arena) {version('gin-arena')}, protocol "
                               f"{PROTOCOL_VERSION}, Python {platform.python_version()}")


def test_replay_calls_a_truncated_record_a_failure(played: Played, tmp_path: Path) -> None:
    """A replay cut short (a disk filled, a copy interrupted) replays cleanly as far as it
    goes; it must still fail, not read OK."""
    source = sorted(played.replays.glob("*.jsonl"))[0]
    lines = source.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-3]))
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(lines) + lines[-1])  # a second end line
    ran = arena("replay", cut, extra, source)
    assert ran.code == 1, ran.out + ran.err
    out = ran.out.splitlines()
    assert out[0] == f"{cut}: MISMATCH"
    assert out[1].startswith("  truncated: no 'end' line")
    assert out[2] == f"{extra}: MISMATCH"
    assert "after the match's end" in out[3]
    assert out[4].startswith(f"{source}: OK")


def test_a_match_that_ends_mid_hand_replays_ok(played: Played) -> None:
    """A forfeit in the middle of a hand: the end line counts the hands played to the end,
    and the record is whole."""
    from arena.match.replay import verify

    records = [[json.loads(line) for line in source.read_text().splitlines()]
               for source in sorted(played.replays.glob("*.jsonl"))]
    items = next(r for r in records if sum(x["type"] == "deal" for x in r) >= 2)
    second = next(i for i, x in enumerate(items) if x["type"] == "deal" and x["hand"] == 2)
    head = items[:second + 3]  # the second hand's deal and two actions
    end = {"type": "end", "winner": 0, "termination": "forfeit_timeout", "blamed": 1,
           "scores": [0, 0], "detail": "", "hands": 1}
    assert verify([*head, end]).ok
    assert not verify([*head, {**end, "hands": 2}]).ok
