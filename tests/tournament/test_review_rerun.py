"""Review finding (branch review): a rerun refused because a bot changed has already
must not replace the plan stored with the scope, which is what every ``arena worker``
reads: it did (``open_scope`` came before ``_check_same_bots``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.match.spec import MatchSpec
from arena.series import inproc
from arena.series.worker import stored_plan
from arena.store.sqlite import SqliteStore
from arena.tournament.config import ConfigError, load_config
from arena.tournament.runner import run_tournament

pytestmark = pytest.mark.timeout(60)

BOTS = "tests.tournament.bots"


def test_a_refused_rerun_with_a_changed_bot_leaves_the_stored_plan_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine, other = tmp_path / "mine.py", tmp_path / "other.py"
    for path, base in ((mine, "Greedy"), (other, "Sloppy")):
        path.write_text(f"from tests.tournament.bots import {base}\n\n\n"
                        f"class Mine({base}):\n    name = 'mine'\n")

    def cfg(spec: Path) -> Any:
        return load_config(None, tournament={
            "seed": "patch", "deals": 2, "mode": "in_process", "concurrency": 1,
            "database": str(tmp_path / "p.sqlite")},
            bots=[f"{spec}:Mine", f"{BOTS}:Sloppy"])

    first = cfg(mine)
    real = inproc.InProcessPlayer.play
    played: list[str] = []

    def ctrl_c_at_the_third(self: inproc.InProcessPlayer, spec: MatchSpec) -> Any:
        if len(played) == 2:
            raise KeyboardInterrupt
        played.append(spec.match_id)
        return real(self, spec)

    monkeypatch.setattr(inproc.InProcessPlayer, "play", ctrl_c_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(first)
    monkeypatch.setattr(inproc.InProcessPlayer, "play", real)

    changed = cfg(other)
    assert changed.scope == first.scope  # the bots are not part of the scope
    with pytest.raises(ConfigError, match="'mine' is not the bot that played"):
        run_tournament(changed)
    with SqliteStore(first.database) as store:
        assert store.queue_counts(first.scope).open == 2  # left for any worker to play
        specs = {b.name: b.spec for b in stored_plan(store, first.scope).bots}
    # what `arena worker --db p.sqlite` would launch as 'mine' for the last two matches:
    assert specs["mine"] == f"{mine}:Mine", f"the refused bot: {specs['mine']}"
