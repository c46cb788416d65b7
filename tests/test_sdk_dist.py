"""The SDK installs alone: ``pip install ./sdk`` in a fresh virtual environment gives a bot
author the SDK with grpcio and protobuf only (the .proto file and py.typed included, no
arena, no trio), and a bot written against it plays a match over real gRPC."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import venv
import zipfile
from pathlib import Path

import pytest
import trio
from gin_arena_core.rules import preset
from gin_arena_sdk import run

from arena.match.driver import MatchDriver
from arena.match.messages import Termination, TimeControl
from arena.server.arena import Arena, start_arena
from sample_bots import GreedyBot

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]

AUTHOR_BOT = """
from gin_arena_sdk import Bot, Discard, Gin, Knock, min_deadwood


class Mine(Bot):
    name = "mine"

    def discard(self, view):
        for kind in (Gin, Knock):
            for action in view.legal:
                if isinstance(action, kind):
                    return action
        discards = [a for a in view.legal if isinstance(a, Discard)]
        return min(discards, key=lambda a: min_deadwood([c for c in view.hand if c != a.card]))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SDK's wheel, built from a copy of ``sdk/`` (a build leaves files behind)."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "sdk"
    shutil.copytree(ROOT / "sdk", source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(source)],
                   check=True, capture_output=True, timeout=240)
    (found,) = out.glob("gin_arena_sdk-*.whl")
    return found


def test_the_wheel_holds_the_sdk_and_the_core_and_needs_grpcio_and_protobuf_only(
        wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = next(z.read(n).decode() for n in names if n.endswith("/METADATA"))
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"gin_arena_sdk", "gin_arena_core"}  # no `arena`, no `sdk`: no clash
    for needed in ("gin_arena_sdk/py.typed", "gin_arena_core/py.typed",
                   "gin_arena_core/protocol/_gen/arena.proto", "gin_arena_sdk/launch.py",
                   "gin_arena_core/rules/melds.py"):
        assert needed in names, needed
    needs = sorted(line.split(":", 1)[1].split()[0].split(">")[0].split("<")[0].strip()
                   for line in meta.splitlines() if line.startswith("Requires-Dist:"))
    assert needs == ["grpcio", "protobuf"], meta


def test_a_bot_on_the_sdk_installed_alone_plays_a_match(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "author-venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, timeout=240, cwd=tmp_path)
    check = subprocess.run(
        [str(python), "-c", "import sys, gin_arena_sdk, gin_arena_sdk.launch; "
         "import importlib.util as u; "
         "print(sorted(m for m in ('arena', 'trio', 'structlog', 'sample_bots') "
         "if u.find_spec(m) is not None))"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env={"PATH": "/usr/bin"})
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == "[]"  # none of the arena's side is there
    (tmp_path / "mine.py").write_text(AUTHOR_BOT)
    results = []

    async def main() -> None:
        with trio.fail_after(120):
            arena = Arena(hello_timeout_s=60)
            async with trio.open_nursery() as nursery:
                port = await start_arena(nursery, arena)
                address = f"127.0.0.1:{port}"
                author = await trio.to_thread.run_sync(lambda: subprocess.Popen(
                    [str(python), "-m", "gin_arena_sdk.launch", "mine.py", "--address",
                     address], cwd=tmp_path, env={"PATH": "/usr/bin"},
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
                opponent = GreedyBot()
                opponent.name = "greedy"
                thread = threading.Thread(target=run, args=(opponent, address),
                                          kwargs={"matches": 1}, daemon=True)
                thread.start()
                driver = MatchDriver("dist", preset("standard"), ("mine", "greedy"),
                                     seed="sdk-dist", time_control=TimeControl(
                                         decision_ms=5000, hello_timeout_ms=60_000))
                results.append(await arena.play(driver, ("mine", "greedy"), show_up_s=60))
                arena.close_lobby()
                out, _ = await trio.to_thread.run_sync(author.communicate, None, 30)
                results.append(out)
                nursery.cancel_scope.cancel()

    trio.run(main)
    result, log = results
    assert result.termination is Termination.COMPLETED, log
    assert result.stats[0].errors == 0 and result.stats[0].rejections == 0, log
