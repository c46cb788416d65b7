"""Review 2: the SDK installed alone (``pip install ./sdk``) has no sample bots."""

from __future__ import annotations

import pytest
from gin_arena_sdk import launch


def test_a_sample_bot_name_without_the_arena_says_where_the_samples_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m gin_arena_sdk.launch greedy`` (as its help offers) in a fresh venv
    with only gin-arena-sdk said "No module named 'sample_bots'"."""
    monkeypatch.setitem(launch.SAMPLE_BOTS, "greedy", "no_such_samples.greedy:GreedyBot")
    with pytest.raises(launch.SpecError, match="come with the arena, not with gin-arena-sdk"):
        launch.load_bot_class("greedy")
