"""The names ``arena play`` gives its entrants: what the bot calls itself, or its script's."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.botspec import bot_name, command_name
from arena.play import make_entrants
from arena.tournament.config import load_config

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(("spec", "name"), [
    ("python3 mybot.py", "mybot"),
    ("python3 -u mybot.py --level 3", "mybot"),
    ("node bot.js --fast", "bot"),
    ("java -jar bots/champ.jar", "champ"),
    ("./target/release/mybot", "mybot"),
    ("mybot --level 3", "mybot"),
])
def test_a_command_is_named_by_its_script_else_its_program(spec: str, name: str) -> None:
    assert command_name(spec) == name


def test_python_bots_are_named_by_their_name_line_and_clashes_are_numbered(
        tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from gin_arena_sdk import Bot\n\nclass A(Bot):\n    name = 'ace'\n")
    (tmp_path / "b.py").write_text("from gin_arena_sdk import Bot\n\nclass Plain(Bot):\n    pass\n")
    names = [e.name for e in make_entrants(
        [str(tmp_path / "a.py"), str(tmp_path / "b.py"), "greedy", "greedy", "python3 x.py"])]
    assert names == ["ace", "Plain", "greedy", "greedy-2", "x"]


def test_a_tournament_names_its_bots_by_the_same_rule(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from gin_arena_sdk import Bot\n\nclass A(Bot):\n    name = 'ace'\n")
    specs = [str(tmp_path / "a.py"), "greedy", "sample_bots.strong:StrongBot",
             "python3 x.py"]
    cfg = load_config(None, tournament={"seed": "s", "database": str(tmp_path / "t.sqlite")},
                      bots=specs)
    assert [b.name for b in cfg.bots] == [bot_name(s) for s in specs] == [
        "ace", "greedy", "strong", "x"]
    assert [e.name for e in make_entrants(specs)] == ["ace", "greedy", "strong", "x"]
