"""Project promises: the README quickstart is what CI runs; the SDK stays thin."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quickstart_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1]
    block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", section, re.S)
    assert block is not None, "the Quickstart section has no code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quickstart_is_exactly_two_commands_and_ci_runs_the_second() -> None:
    commands = quickstart_commands()
    assert len(commands) == 2, commands
    assert "arena play" in commands[0]
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), "'.ci/run' must run the README's test command"


def test_importing_the_sdk_loads_neither_trio_nor_structlog() -> None:
    code = ("import sys, gin_arena_sdk, gin_arena_sdk.client, gin_arena_sdk.launch; "
            "bad = [m for m in ('trio', 'structlog') if m in sys.modules]; "
            "print(','.join(bad)); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"sdk imported {done.stdout.strip()}: {done.stderr}"


HOST_SIDE = ("arena.match", "arena.server", "arena.tournament", "arena.play", "arena.cli",
             "arena.processes", "arena.botspec")


def _imported_after(code: str) -> list[str]:
    """The modules loaded by running ``code`` in a fresh interpreter."""
    probe = (f"import sys; {code}; "
             "print('\\n'.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_sdk_imports_nothing_of_the_host() -> None:
    loaded = _imported_after(
        "import gin_arena_sdk, gin_arena_sdk.client, gin_arena_sdk.launch, gin_arena_sdk.bot")
    host = [m for m in loaded if m == "arena" or m.startswith(("arena.", *HOST_SIDE))]
    assert host == [], f"the SDK imported host modules: {host}"
    assert "gin_arena_core.protocol.records" in loaded  # what its hooks are given


def test_the_host_does_not_import_the_sdk() -> None:
    loaded = _imported_after(
        "import arena.cli, arena.play, arena.processes, arena.botspec, arena.server.arena, "
        "arena.server.wire, arena.tournament.runner, arena.tournament.ladder, "
        "arena.series.inproc, arena.series.worker, arena.series.coordinator, "
        "arena.tournament.commands, arena.match.local, arena.serve, arena.playreport; "
        "from arena.botspec import resolve_python, SAMPLE_BOTS; "
        "[resolve_python(s) for s in SAMPLE_BOTS]")
    # finding a module's source imports its parent package: sample_bots' own is a lazy index
    sdk_modules = [m for m in loaded
                   if m == "gin_arena_sdk" or m.startswith(("gin_arena_sdk.", "sample_bots."))]
    assert sdk_modules == [], f"the host imported bot-side modules: {sdk_modules}"
    assert "gin_arena_core.rules" in loaded  # the core both sides share


def test_rules_engine_imports_only_the_standard_library() -> None:
    code = ("import sys; before = set(sys.modules); import gin_arena_core.rules; "
            "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
            "bad = sorted(new - set(sys.stdlib_module_names) - {'gin_arena_core'}); "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_rules_engine_has_no_io_clock_randomness_or_logging() -> None:
    forbidden = re.compile(r"^\s*(import|from)\s+(random|time|datetime|logging|structlog|os|io|"
                           r"socket|trio|asyncio|grpc|secrets)\b", re.M)
    for path in (ROOT / "sdk" / "gin_arena_core" / "rules").glob("*.py"):
        match = forbidden.search(path.read_text(encoding="utf-8"))
        assert match is None, f"{path.name}: {match.group(0).strip() if match else ''}"


def test_the_readme_bot_plays_a_legal_match(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(# mybot.py\n.*?)```", text, re.S)
    assert code is not None
    assert len(code.group(1).splitlines()) < 30, "the README promises a bot in under 30 lines"
    path = tmp_path / "mybot.py"
    path.write_text(code.group(1), encoding="utf-8")
    from gin_arena_core.rules import preset
    from gin_arena_sdk import Bot
    from gin_arena_sdk.launch import load_bot_class

    from arena.match.driver import MatchDriver
    from arena.match.local import play_local

    cls = load_bot_class(str(path))
    driver = MatchDriver("readme", preset("standard"), ("mybot", "bot"), seed=3)
    result = play_local(driver, (cls(), Bot()))
    assert result.termination == "completed"
    assert driver.stats[0].rejections == 0 and driver.stats[0].defaulted == 0
