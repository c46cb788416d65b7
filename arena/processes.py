"""Child processes the arena launches and supervises: bots (and the series' workers).

A bot spec is a sample bot name, ``module:Class``, ``file.py[:Class]`` (run through
``python -m gin_arena_sdk.launch``) or any command line (run as given, with ``ARENA_ADDRESS``,
``ARENA_TOKEN`` and ``ARENA_NAME`` in its environment). Each process has a token of its
own, so the arena seats exactly it. ``BotProcess.supervise`` keeps it running (restarting
it when it exits, a few times in a row at most); ``play_seated`` plays one match between
two pools of such processes (or remote bots known by their token).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import structlog
import trio

from arena.botspec import SAMPLE_BOTS, SpecError, is_python_spec, resolve_python
from arena.match.driver import MatchDriver
from arena.match.messages import MatchResult, Termination
from arena.server.arena import Arena

log = structlog.get_logger("arena.processes")
ROOT = Path(__file__).resolve().parents[1]
MAX_RESTARTS = 3  # quick exits in a row, per process, before its bot's matches are forfeited
STEADY_S = 60.0  # a process that ran this long before exiting gets a fresh restart budget


def check_spec(spec: str) -> None:
    """``SpecError`` saying what is wrong if ``spec`` cannot be launched: a Python bot whose
    source does not name a bot class (read, not run), or a command whose program is not
    found."""
    if not spec.strip():
        raise SpecError("an empty bot spec")
    if is_python_spec(spec):
        resolve_python(spec)
        return
    try:
        argv = shlex.split(spec)
    except ValueError as e:
        raise SpecError(f"bot command {spec!r}: {e}") from None
    program = argv[0]
    if os.sep in program:
        if not (Path(program).is_file() and os.access(program, os.X_OK)):
            raise SpecError(f"bot command {spec!r}: {program} is not an executable file")
    elif shutil.which(program) is None:
        raise SpecError(
            f"bot {spec!r} is not a sample bot (random, greedy, strong), a module:Class, a "
            f"file.py, or a command on PATH")


def spec_fingerprint(spec: str) -> str:
    """A hash of what ``spec`` runs: the spec text and the bytes of its main file (the .py
    file, the module's source, or the command's program), so a changed bot is noticed. Its
    other files are not read. Empty for a remote bot (no spec)."""
    if not spec:
        return ""
    h = hashlib.sha256(spec.encode())
    target = SAMPLE_BOTS.get(spec, spec)
    path: str | None = None
    if is_python_spec(spec):
        head = target.partition(":")[0]
        if head.endswith(".py"):
            path = head
        else:
            try:
                found = importlib.util.find_spec(head)
            except (ImportError, ValueError):
                found = None
            path = found.origin if found is not None else None
    else:
        try:
            program = shlex.split(spec)[0]
        except (ValueError, IndexError):
            program = ""
        path = program if os.sep in program else shutil.which(program) if program else None
    if path is not None:
        with contextlib.suppress(OSError):
            h.update(Path(path).read_bytes())
    return h.hexdigest()[:16]


# Run first in every launched bot's process (Linux): ask the kernel to SIGKILL it when the
# arena's thread that started it goes (``ChildProcess`` starts bots on the trio thread, which
# lives as long as the run), however the arena ends (a kill -9 during start-up included),
# then become the bot. It runs after exec in the bot's own interpreter, not in a
# preexec_fn (forking a process with gRPC threads and running Python there is unsafe).
_GUARD = """\
import ctypes, os, runpy, signal, sys
parent, kind = int(sys.argv[1]), sys.argv[2]
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (AttributeError, OSError):
    pass
if os.getppid() != parent:  # the arena went before the guard was set
    os._exit(1)
if kind == "module":
    sys.argv = sys.argv[3:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    try:
        os.execvp(sys.argv[3], sys.argv[3:])
    except OSError as e:
        sys.exit(f"cannot run {sys.argv[3]!r}: {e.strerror}")
"""
_DIES_WITH_ARENA: Final = sys.platform.startswith("linux")


def module_command(module: str, *args: str) -> list[str]:
    """``python -m module args``, dying with this process on Linux (see ``_GUARD``); start
    it with ``ChildProcess`` so that the kernel ties it to the trio thread."""
    if _DIES_WITH_ARENA:
        return [sys.executable, "-c", _GUARD, str(os.getpid()), "module", module, *args]
    return [sys.executable, "-m", module, *args]


def bot_command(spec: str, address: str, token: str, name: str) -> list[str]:
    """How a bot with ``spec`` is launched to connect to ``address``. On Linux it dies with
    the arena (see ``_GUARD``)."""
    if is_python_spec(spec):
        target = resolve_python(spec).target
        return module_command("gin_arena_sdk.launch", target, "--address", address,
                              "--token", token, "--name", name)
    argv = shlex.split(spec)
    if _DIES_WITH_ARENA:
        return [sys.executable, "-c", _GUARD, str(os.getpid()), "exec", *argv]
    return argv


def python_path(env: dict[str, str]) -> str:
    """``PYTHONPATH`` for a child process: this checkout (the arena, and the SDK's
    distribution in ``sdk/``) first, so it runs the same code as the arena."""
    return os.pathsep.join(p for p in (str(ROOT), str(ROOT / "sdk"), env.get("PYTHONPATH", ""))
                           if p)


def bot_environment(address: str, token: str, name: str) -> dict[str, str]:
    """The environment a bot process starts with (the repository importable)."""
    env = dict(os.environ, ARENA_ADDRESS=address, ARENA_TOKEN=token, ARENA_NAME=name)
    env["PYTHONPATH"] = python_path(env)
    return env


class BotProcess:
    """One process of a launched bot, with its own token."""

    def __init__(self, bot: str, index: int, token: str, spec: str, address: str,
                 log_path: Path | None) -> None:
        self.bot, self.index, self.token = bot, index, token
        self.is_sdk = is_python_spec(spec)  # launched through gin_arena_sdk.launch: sends its token
        self.cmd = bot_command(spec, address, token, bot)
        self.env = bot_environment(address, token, bot)
        self.log_path = log_path
        self.is_dead = False  # exited too often: its matches are forfeited at once
        self.last_returncode: int | None = None
        self._proc: ChildProcess | None = None
        self._killed = False

    def describe_death(self) -> str:
        where = f"; its output: {self.log_path}" if self.log_path is not None else ""
        return (f"bot {self.bot!r} keeps exiting (exit code {self.last_returncode}, "
                f"{MAX_RESTARTS + 1} times in a row){where}")

    async def supervise(self, arena: Arena) -> None:
        """Keep the process running until the arena's lobby closes; restart it when it
        exits (at most ``MAX_RESTARTS`` quick exits in a row unless we killed it).
        Cancellation kills it."""
        restarts = 0
        sink: Any = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            sink = self.log_path.open("ab")
        try:
            while not arena.closed:
                started = time.monotonic()
                self._killed = False
                proc = self._proc = ChildProcess(self.cmd, self.env, sink)
                try:
                    await proc.wait()
                finally:
                    if proc.returncode is None:
                        _kill(proc)
                        with trio.CancelScope(shield=True):
                            await proc.wait()
                    _kill_group(proc)  # what it started dies with it
                self.last_returncode = proc.returncode
                if arena.closed:
                    return
                if self._killed or time.monotonic() - started > STEADY_S:
                    restarts = 0  # we stopped it, or it ran for a while: a fresh budget
                else:
                    restarts += 1
                    log.info("bot_exited", bot=self.bot, slot=self.index,
                             returncode=proc.returncode, restarts=restarts)
                if restarts > MAX_RESTARTS:
                    log.warning("bot_dead", bot=self.bot, slot=self.index,
                                detail=self.describe_death())
                    self.is_dead = True
                    return
                await trio.sleep(min(0.25 * 2 ** restarts, 5.0) if restarts else 0)
        finally:
            if sink is not None:
                sink.close()

    def restart(self) -> None:
        """Kill the process (it is stuck); the supervisor starts a fresh one."""
        if self._proc is not None and self._proc.returncode is None:
            self._killed = True
            _kill(self._proc)


_OWN_GROUP: Final = os.name == "posix"
"""Each bot process leads its own process group (and session), so killing a bot kills
what it started too (a shell's children, a JVM a script ran), and the terminal's Ctrl-C
reaches the arena only: the arena then stops the bots itself."""


class ChildProcess:
    """A child process (a bot, a worker), started on the calling (trio) thread rather than
    a worker thread as
    ``trio.lowlevel.open_process`` does: the kernel's parent-death signal (``_GUARD``)
    follows the thread that forked, and trio's worker threads exit when idle, which would
    kill the bot with them. Starting a process takes a few milliseconds."""

    def __init__(self, cmd: list[str], env: dict[str, str], sink: Any) -> None:
        self._popen = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                       stderr=sink, start_new_session=_OWN_GROUP)
        self.pid = self._popen.pid
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # Linux 5.3+: wait on a pidfd
            self._pidfd = os.pidfd_open(self.pid)

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        """Wait for the process to exit; its exit code. Cancellation: stops waiting."""
        if self._pidfd is not None:
            try:
                await trio.lowlevel.wait_readable(self._pidfd)
            finally:
                if self._popen.poll() is not None:
                    self._close()
        else:
            await trio.to_thread.run_sync(self._popen.wait, abandon_on_cancel=True)
        return self._popen.wait()

    def kill(self) -> None:
        self._popen.kill()

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM)."""
        with contextlib.suppress(ProcessLookupError):
            self._popen.terminate()

    def _close(self) -> None:
        if self._pidfd is not None:
            fd, self._pidfd = self._pidfd, None
            trio.lowlevel.notify_closing(fd)
            os.close(fd)


def _kill(proc: ChildProcess) -> None:
    """SIGKILL the bot process and its whole process group."""
    _kill_group(proc)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _kill_group(proc: ChildProcess) -> None:
    """SIGKILL whatever is left in the process group ``proc`` leads (a no-op if empty).

    After ``proc`` was reaped its pid stays reserved while its group has members, so this
    reaches the right group; with the group empty it fails with ESRCH, unless the pid was
    reused meanwhile by a new group leader of this user (it is called right after the reap,
    so that needs the pid counter to wrap around in between)."""
    if _OWN_GROUP:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


class BotPool:
    """The processes of one launched bot; a match takes a free one and gives it back.
    There are as many as matches of this bot can run at once, so one is always free."""

    def __init__(self, processes: list[BotProcess]) -> None:
        self.all = processes
        self.free = list(processes)
        self._given_back = trio.Event()

    async def take(self) -> BotProcess | None:
        """A free live process, waiting for one to be given back if the free ones are dead;
        None once every process of the bot is dead."""
        while True:
            if all(p.is_dead for p in self.all):
                return None
            live = [p for p in self.free if not p.is_dead]
            if live:
                self.free.remove(live[0])
                return live[0]
            with trio.move_on_after(0.25):  # deaths are not signalled: look again soon
                await self._given_back.wait()

    def give_back(self, process: BotProcess) -> None:
        self.free.append(process)
        self._given_back.set()
        self._given_back = trio.Event()


class LaunchError(Exception):
    """The launched bots cannot play (one line): e.g. one connects without its token."""


async def wait_ready(arena: Arena, pools: list[BotPool], timeout_s: float, *,
                     strict_tokens: bool = False) -> list[str]:
    """Wait until every process of ``pools`` has said Hello (or died), at most
    ``timeout_s``, so the first matches do not forfeit a bot that is still starting.
    Returns the bots with a process still missing. ``strict_tokens``: only launched bots
    may connect, so a session refused for its token means a launched bot does not send the
    token it was given: ``LaunchError`` at once, naming who is still missing."""
    refused: list[tuple[str, str]] = []
    changed = trio.Event()

    def note(peer: str, name: str, why: str) -> None:
        if why == "bad_token":
            refused.append((peer, name))
            changed.set()

    def missing() -> list[str]:
        waiting = {key for key, _ in arena.waiting()}
        return sorted({p.bot for pool in pools for p in pool.all
                       if not p.is_dead and p.token not in waiting})

    if strict_tokens:
        arena.on_refused = note
    try:
        with trio.move_on_after(timeout_s):
            while missing():
                if refused:
                    peer, name = refused[0]
                    late = missing()
                    commands = sorted({p.bot for pool in pools for p in pool.all
                                       if p.bot in late and not p.is_sdk})
                    late = commands or late  # SDK bots always send theirs
                    who = f"bot {late[0]!r}" if len(late) == 1 else \
                        f"one of the bots {', '.join(map(repr, late))}"
                    raise LaunchError(
                        f"{who} connected without its token (its Hello named itself {name!r}, "
                        f"from {peer}): a command bot must send the ARENA_TOKEN it was "
                        "started with as Hello.token (docs/protocol.md)")
                with trio.move_on_after(0.25):  # also notice deaths, which are not arrivals
                    async with trio.open_nursery() as either:
                        async def first(fn: Any) -> None:
                            await fn()
                            either.cancel_scope.cancel()

                        either.start_soon(first, arena.wait_arrival)
                        either.start_soon(first, changed.wait)
    finally:
        if strict_tokens:
            arena.on_refused = None
    return missing()


@contextlib.asynccontextmanager
async def launched(arena: Arena, pools: list[BotPool], show_up_s: float, *,
                   strict_tokens: bool = False) -> AsyncIterator[None]:
    """Run the processes of ``pools`` for the body (once all said Hello, or ``show_up_s``
    passed); afterwards close the lobby, give them 10 s to leave, then kill the rest.
    ``strict_tokens``: see ``wait_ready``."""
    async with trio.open_nursery() as bots:
        for pool in pools:
            for process in pool.all:
                bots.start_soon(process.supervise, arena)
        late = await wait_ready(arena, pools, show_up_s, strict_tokens=strict_tokens)
        if late:
            log.warning("bots_not_ready", bots=late, waited_s=show_up_s)
        yield
        arena.close_lobby()
        with trio.move_on_after(10):  # bots leave when the lobby closes
            while bots.child_tasks:
                await trio.sleep(0.05)
        bots.cancel_scope.cancel()


async def play_seated(arena: Arena, driver: MatchDriver, seats: tuple[BotPool | str, ...],
                      show_up_s: float) -> MatchResult:
    """Play ``driver``'s match between two launched bots (a ``BotPool``) or remote bots
    (their token). A bot whose processes all died forfeits at once (``no_show``); a process
    that timed out is restarted afterwards (it may still be thinking)."""
    taken: list[BotProcess | None] = [None, None]
    keys = ["", ""]
    dead = ["", ""]
    for seat, who in enumerate(seats):
        if isinstance(who, str):
            keys[seat] = who
            continue
        process = taken[seat] = await who.take()
        if process is None:
            dead[seat] = who.all[0].describe_death()
        else:
            keys[seat] = process.token
    try:
        if dead[0] and dead[1]:
            return driver.abort(Termination.NO_SHOW, f"{dead[0]}; {dead[1]}")
        for seat in (0, 1):
            if dead[seat]:
                return driver.forfeit(seat, Termination.NO_SHOW, dead[seat])
        result = await arena.play(driver, (keys[0], keys[1]), show_up_s=show_up_s)
        if result.blamed is not None and result.termination is Termination.FORFEIT_TIMEOUT:
            stuck = taken[result.blamed]
            if stuck is not None:
                stuck.restart()
        return result
    finally:
        for seat, process in enumerate(taken):
            pool = seats[seat]
            if process is not None and isinstance(pool, BotPool):
                pool.give_back(process)


__all__ = [
    "MAX_RESTARTS",
    "BotPool",
    "BotProcess",
    "ChildProcess",
    "LaunchError",
    "bot_command",
    "bot_environment",
    "check_spec",
    "launched",
    "module_command",
    "play_seated",
    "python_path",
    "spec_fingerprint",
    "wait_ready",
]
