"""Units around running bots: the process pool, run directories, exit codes, the SDK's
resume loop (with a scripted stub: no network)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import types
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gin_arena_sdk.client as client
import grpc
import pytest
import trio
import trio.testing
from gin_arena_core.protocol import pb
from gin_arena_core.rules import RulesConfig

from arena.cli import UsageError, _exit_code, _link_latest, _run_dir
from arena.processes import BotPool, BotProcess

ROOT = Path(__file__).resolve().parents[1]


def process(index: int, *, dead: bool = False) -> BotProcess:
    p = BotProcess("bot", index, f"tok{index}", "greedy", "127.0.0.1:1", None)
    p.is_dead = dead
    return p


def test_a_pool_never_hands_out_a_dead_process_while_a_live_one_is_busy() -> None:
    live, dead = process(0), process(1, dead=True)
    pool = BotPool([live, dead])
    got: list[object] = []

    async def main() -> None:
        first = await pool.take()
        assert first is live
        async with trio.open_nursery() as nursery:
            async def second() -> None:
                got.append(await pool.take())  # only the dead one is free: wait

            nursery.start_soon(second)
            await trio.sleep(5)
            assert got == []
            pool.give_back(live)
        assert got == [live]
        live.is_dead = True
        pool.give_back(live)
        assert await pool.take() is None  # every process dead: the bot forfeits at once

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_run_directories_never_mix_and_latest_follows(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first, second = _run_dir(None, "seed1234"), _run_dir(None, "seed1234")
    assert first is not None and second is not None
    assert first != second and first.is_dir() and second.is_dir()
    assert not (tmp_path / "runs" / "latest").exists()  # a run not yet played moves nothing
    _link_latest(second)
    assert (tmp_path / "runs" / "latest").resolve() == second.resolve()
    assert _run_dir("", "x") is None and _run_dir("mine", "x") == Path("mine")
    assert not list((tmp_path / "runs").glob(".latest-*"))


def test_only_a_group_of_user_errors_is_a_one_line_error(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert _exit_code(ExceptionGroup("g", [UsageError("bad flag")])) == 2
    assert capsys.readouterr().err == "arena: error: bad flag\n"
    assert _exit_code(ExceptionGroup("g", [UsageError("bad"), RuntimeError("bug")])) is None
    assert _exit_code(BaseExceptionGroup("g", [KeyboardInterrupt()])) == 130
    assert _exit_code(RuntimeError("bug")) is None


class _Drop(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE


def test_the_sdk_resumes_every_drop_of_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropped three times, each time after playing on for longer than the retry window:
    every drop is resumed with the seat's key, and the match is finished."""
    hellos: list[str] = []

    class Responses:
        def __init__(self, messages: Iterator[pb.ServerMessage]) -> None:
            self.messages = messages

        def __iter__(self) -> Iterator[pb.ServerMessage]:
            return self.messages

        def cancel(self) -> None:
            pass

    def play(requests: Iterator[pb.BotMessage]) -> Responses:
        hellos.append(next(requests).hello.resume)
        n = len(hellos)

        def stream() -> Iterator[pb.ServerMessage]:
            if n == 1:
                yield pb.ServerMessage(match_start=pb.MatchStart(
                    match_id="m", resume_key="K", rules_json=RulesConfig().to_json(),
                    time_control=pb.TimeControl(decision_ms=1000)))
            if n <= 3:
                yield pb.ServerMessage(event=pb.Event())
                time.sleep(0.15)  # longer than retry_s below
                raise _Drop()
            yield pb.ServerMessage(match_end=pb.MatchEnd(match_id="m"))

        return Responses(stream())

    monkeypatch.setattr(client.pb_grpc, "ArenaStub",
                        lambda channel: types.SimpleNamespace(Play=play))
    monkeypatch.setattr(client.grpc, "channel_ready_future",
                        lambda channel: types.SimpleNamespace(result=lambda timeout: None))
    ended: list[object] = []

    class Bot(client.Bot):
        def on_match_end(self, result: Any) -> None:
            ended.append(result)

    assert client.run(Bot(), "127.0.0.1:1", matches=1, retry_s=0.1) == 1
    assert hellos == ["", "K", "K", "K"] and len(ended) == 1


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody reaped counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_killing_a_bot_kills_what_it_started(tmp_path: Path) -> None:
    """A bot command that starts a child (a shell running the real bot, say): stopping the
    bot stops the child too, so nothing outlives the arena."""
    pidfile = tmp_path / "child.pid"
    spec = f"sh -c 'sleep 60 & echo $! > {pidfile}; wait'"
    bot = BotProcess("shell", 0, "tok", spec, "127.0.0.1:1", None)
    arena = types.SimpleNamespace(closed=False)

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.supervise, arena)
            with trio.fail_after(10):
                while not pidfile.exists() or not pidfile.read_text().strip():
                    await trio.sleep(0.02)
            child = int(pidfile.read_text())
            assert _alive(child)
            nursery.cancel_scope.cancel()
        return child

    child = trio.run(main)
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_launched_bots_die_with_an_arena_killed_during_start_up(tmp_path: Path) -> None:
    """kill -9 ``arena play`` while it waits for its bots to say Hello: the bot processes
    (here a command that never connects) do not outlive it."""
    marker = f"pdeathsig-{uuid.uuid4().hex}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), ARENA_TEST_MARKER=marker)
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "play", "sleep 300", "greedy",
                             "--games", "2", "--replays", str(tmp_path / "runs")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_with_marker(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        bots = _with_marker(marker)
        assert len(bots) >= 2, "the bots did not start"
        proc.kill()  # SIGKILL: the arena can clean up nothing itself
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in bots) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in bots if _alive(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _with_marker(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _with_marker(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (the arena's children), but the arena."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ and b"arena.cli" not in cmdline:
            out.append(int(proc.name))
    return out
