"""Duplicate deals on real replays: each bot holds each hand's cards once, every hand."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from gin_arena_core.rules import PRESETS

from arena.tournament.config import load_config
from arena.tournament.runner import run_tournament

BOTS = "tests.tournament.bots"


def dealt(deck: list[str], dealer: int) -> tuple[frozenset[str], frozenset[str]]:
    """The ten cards each seat is dealt (one at a time, the non-dealer first)."""
    seats: list[set[str]] = [set(), set()]
    for i in range(20):
        seats[1 - dealer if i % 2 == 0 else dealer].add(deck[i])
    return frozenset(seats[0]), frozenset(seats[1])


def hands_by_bot(path: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """The replay's header, and per hand: each bot's ten cards, the rest of the deck, who
    dealt."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    head = lines[0]
    names = head["names"]
    hands = {}
    for item in lines:
        if item["type"] == "deal":
            seat_cards = dealt(item["deck"], item["dealer"])
            hands[item["hand"]] = {"cards": {names[s]: seat_cards[s] for s in (0, 1)},
                                   "rest": item["deck"][20:], "dealer": names[item["dealer"]]}
    return head, hands


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_bot_holds_each_hand_once_in_every_hand(tmp_path: Path, preset: str) -> None:
    replays = tmp_path / "replays"
    cfg = load_config(None, tournament={
        "seed": f"dup-{preset}", "deals": 4, "mode": "in_process", "concurrency": 1,
        "database": str(tmp_path / "d.sqlite"), "replays": str(replays),
        "secret": "d0" * 16},  # the same deals on every run
        rules={"preset": preset}, bots=[f"{BOTS}:Greedy", f"{BOTS}:Sloppy"])
    summary = run_tournament(cfg)
    assert summary.played == 8
    by_deal: dict[int, dict[int, dict[int, dict[str, Any]]]] = defaultdict(dict)
    for path in replays.glob("*.jsonl"):
        head, hands = hands_by_bot(path)
        by_deal[head["deal"]][head["seat_order"]] = hands
    compared = same_dealer = 0
    for deal, matches in by_deal.items():
        first, second = matches[0], matches[1]
        for k in sorted(set(first) & set(second)):
            a, b = first[k], second[k]
            # the same stock and upcard (or eleventh card), and each bot gets the cards the
            # other bot got in the other match
            assert a["rest"] == b["rest"], (deal, k)
            assert a["cards"]["greedy"] == b["cards"]["sloppy"], (preset, deal, k)
            assert a["cards"]["sloppy"] == b["cards"]["greedy"], (preset, deal, k)
            compared += 1
            same_dealer += a["dealer"] == b["dealer"]
    assert compared > len(by_deal)  # later hands too, not only the first of each deal
    if cfg.rules.next_dealer.value == "loser":
        # the case that dealing by dealer position got wrong: the same bot deals a hand in
        # both matches of its deal
        assert same_dealer > 0
