"""Tournament configs: a full example loads; every mistake is one line saying where."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament.config import ConfigError, Format, Mode, load_config

FULL = """
[tournament]
name = "spring-cup"
format = "gauntlet"
seed = "2026-spring"
deals = 25
mode = "process"
concurrency = 4
database = "results/cup.sqlite"
replays = "runs/cup"
show_up_s = 20
port = 50999

[rules]
preset = "oklahoma"
target = 150

[time_control]
decision_ms = 500
bank_ms = 5000
max_strikes = 2

[gauntlet]
challenger = "mine"

[[bots]]
name = "mine"
spec = "bots/mine.py"

[[bots]]
spec = "greedy"

[[bots]]
spec = "greedy"

[[bots]]
name = "remote-1"
token = "a-long-secret-token"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cup.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_example(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, FULL))
    assert cfg.name == "spring-cup" and cfg.format is Format.GAUNTLET
    assert cfg.mode is Mode.PROCESS and cfg.concurrency == 4 and cfg.workers == -1
    assert cfg.local_workers >= 1 and cfg.slots * cfg.local_workers >= 4
    assert cfg.rules.preset == "oklahoma" and cfg.rules.target == 150 and cfg.rules.oklahoma
    assert cfg.time_control.decision_ms == 500 and cfg.time_control.bank_ms == 5000
    assert cfg.database == str(tmp_path / "results/cup.sqlite")
    assert cfg.replays == tmp_path / "runs/cup"
    assert cfg.names == ["mine", "greedy", "greedy-2", "remote-1"]
    assert cfg.bots[3].is_remote and cfg.bots[3].token == "a-long-secret-token"
    assert cfg.challenger == "mine" and cfg.port == 50999


def test_hash_covers_what_decides_a_match(tmp_path: Path) -> None:
    base = load_config(write(tmp_path, FULL))
    same = load_config(write(tmp_path, FULL.replace("concurrency = 4", "concurrency = 1")))
    assert same.config_hash == base.config_hash  # how fast it runs changes no match
    for old, new in (('seed = "2026-spring"', 'seed = "other"'),
                     ("target = 150", "target = 100"),
                     ("decision_ms = 500", "decision_ms = 600")):
        changed = load_config(write(tmp_path, FULL.replace(old, new)))
        assert changed.config_hash != base.config_hash, old
        assert changed.scope != base.scope


def test_flags_only_and_overrides(tmp_path: Path) -> None:
    cfg = load_config(None, tournament={"seed": "s", "deals": 3, "mode": "in_process"},
                      bots=["greedy", "random"])
    assert cfg.names == ["greedy", "random"] and cfg.deals == 3
    assert cfg.format is Format.ROUND_ROBIN
    cfg = load_config(write(tmp_path, FULL), tournament={"deals": 7, "format": "round_robin"},
                      rules={"preset": "standard"}, time_control={"decision_ms": 900})
    assert cfg.deals == 7 and cfg.format is Format.ROUND_ROBIN
    assert cfg.rules.preset == "standard" and cfg.time_control.decision_ms == 900
    assert cfg.time_control.bank_ms == 5000  # the file's other keys stay


BAD = [
    ("[tournament]\nseed = 's'\nformat = 'swiss'\n",
     "[tournament] format: must be one of round_robin, gauntlet, sprt, not 'swiss'"),
    ("[tournament]\nseed = 's'\ndeals = 'ten'\n", "[tournament] deals: must be a whole number"),
    ("[tournament]\nseed = 's'\ndeals = 0\n", "deals must be at least 1"),
    ("[tournament]\nseed = 's'\nrounds = 3\n", "[tournament]: unknown key 'rounds'"),
    ("[tournament]\nseed = \"s\"\nsecret = \"not-hex\"\n", "secret: 32 to 128 hex digits"),
    ("[tourney]\nseed = 's'\n", "unknown table 'tourney'"),
    ("[tournament]\nseed = 's'\n[rules]\npreset = 'klondike'\n",
     "[rules] unknown rules preset 'klondike'"),
    ("[tournament]\nseed = 's'\n[rules]\ntarget = 0\n", "[rules] bad rules: target must be"),
    ("[tournament]\nseed = 's'\n[rules]\ntrget = 10\n", "unknown rules option(s) trget"),
    ("[tournament]\nseed = 's'\n[time_control]\ndecision_ms = -1\n",
     "[time_control] time control decision_ms must be a whole number >= 0"),
    ("[tournament]\nseed = 's'\n[time_control]\nthink_ms = 1\n",
     "[time_control]: unknown key 'think_ms'"),
    ("[tournament]\nseed = 's'\nformat = 'sprt'\n[sprt]\nelo0 = 10\nelo1 = 5\n",
     "[sprt] elo1 (5) must be greater than elo0 (10)"),
    ("[tournament]\nseed = 's'\n[sprt]\nalpha = 0.7\n", "[sprt] alpha must be between 0 and 0.5"),
    ("[tournament]\nseed = 's'\nformat = 'sprt'\n", "sprt compares exactly two bots, not 3"),
    ("[tournament]\nseed = 's'\nformat = 'gauntlet'\n[gauntlet]\nchallenger = 'zed'\n",
     "gauntlet: challenger 'zed' is not one of the bots"),
    ("[tournament]\nseed = 's'\nmode = 'in_process'\n[[bots]]\nname = 'r'\n"
     "token = '12345678'\n", "mode in_process cannot have remote bot 'r'"),
    ("[tournament]\nseed = 's'\n[[bots]]\nname = 'x'\n", "give a spec (a bot to launch)"),
    ("[tournament]\nseed = 's'\n[[bots]]\nname = 'a b'\nspec = 'greedy'\n",
     "name 'a b': use letters"),
    ("[tournament]\nseed = 's'\n[[bots]]\nname = 'greedy'\nspec = 'random'\n",
     "bot name 'greedy' is used twice"),
    ("[tournament\nseed = 's'\n", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_errors_are_one_line_with_the_place(tmp_path: Path, text: str, message: str) -> None:
    bots = "" if "[[bots]]" in text else (
        "\n[[bots]]\nspec = 'greedy'\n[[bots]]\nspec = 'random'\n[[bots]]\nspec = 'strong'\n")
    if "name = 'greedy'" in text:
        bots = "\n[[bots]]\nspec = 'greedy'\n"
    elif "[[bots]]" in text and "used twice" not in message:
        bots = "\n[[bots]]\nspec = 'greedy'\n[[bots]]\nspec = 'random'\n"
    path = write(tmp_path, text + bots)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text_of = str(info.value)
    assert "\n" not in text_of
    assert text_of.startswith(f"{path}: ")
    assert message in text_of, text_of


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.toml")
