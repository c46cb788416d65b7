"""Replay files: a match's record kept as JSON lines, read back and checked by re-simulation.

A record (written for every match by ``write_replay``) holds the rules, every deck order
and knock card, every action with its timing, and each result. ``verify`` replays the
actions on the dealt decks and checks each hand's result and the match's end against the
record (``arena replay``); ``arena.match.show`` prints one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gin_arena_core.rules import (
    GameState,
    RuleError,
    RulesConfig,
    apply_action,
    deal_hand,
    game_outcome,
    new_game,
    parse_action,
)


def write_replay(path: Path, record: list[dict[str, Any]]) -> None:
    """Write a match record as JSON lines (atomically: a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for item in record:
            f.write(json.dumps(item, separators=(",", ":")) + "\n")
    tmp.replace(path)



class ReplayError(ValueError):
    """The file is not a readable match record."""


def load_record(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ReplayError(f"{path}: cannot read: {e.strerror}") from None
    items = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReplayError(f"{path}:{n}: not JSON: {e.msg}") from None
        if not isinstance(item, dict) or "type" not in item:
            raise ReplayError(f"{path}:{n}: not a record line (no 'type')")
        items.append(item)
    if not items or items[0].get("type") != "match":
        raise ReplayError(f"{path}: not a match record (first line must be type 'match')")
    return items


@dataclass
class ReplayReport:
    match_id: str
    hands: int = 0
    actions: int = 0
    mismatches: list[str] = field(default_factory=list)
    final: GameState | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches


def verify(record: list[dict[str, Any]]) -> ReplayReport:
    """Re-simulate ``record`` and list every difference from what it says happened."""
    head = record[0]
    report = ReplayReport(str(head.get("match_id", "?")))
    try:
        rules = RulesConfig.from_spec(head["rules"])
        game = new_game(rules, int(head["first_dealer"]))
    except (KeyError, TypeError, RuleError) as e:
        report.mismatches.append(f"bad header: {e}")
        return report
    ended = False
    for n, item in enumerate(record[1:], start=2):
        kind = item["type"]
        if ended:
            report.mismatches.append(f"line {n}: a {kind!r} line after the match's end")
            break
        try:
            if kind == "deal":
                game = deal_hand(game, item["deck"], item.get("knock_card"))
                report.hands += 1
            elif kind == "action":
                action = parse_action(item["action"], runs_only=rules.runs_only)
                assert game.hand is not None
                game = apply_action(game, int(item["seat"]), action)
                report.actions += 1
            elif kind == "hand_result":
                last = game.results[-1] if game.results else None
                got = (last.kind, last.winner, last.points) if last else None
                want = (item["kind"], item["winner"], item["points"])
                if got != want or list(game.scores) != item["scores"]:
                    report.mismatches.append(
                        f"hand {item['hand']}: recorded {want} scores {item['scores']}, "
                        f"replayed {got} scores {list(game.scores)}")
            elif kind == "end":
                ended = True
                if "hands" in item and item["hands"] != len(game.results):
                    report.mismatches.append(
                        f"end: recorded {item['hands']} hands played, the record plays "
                        f"{len(game.results)}")
            if kind == "end" and item["termination"] in ("completed", "capped"):
                out = game_outcome(game)
                if out.winner != item["winner"] or list(out.net) != item["scores"]:
                    report.mismatches.append(
                        f"end: recorded winner {item['winner']} scores {item['scores']}, "
                        f"replayed winner {out.winner} scores {list(out.net)}")
        except (RuleError, KeyError, TypeError, ValueError, AssertionError) as e:
            report.mismatches.append(f"line {kind} {item}: {e}")
            break
    else:
        if not ended:
            tail = record[-1].get("type", "?") if len(record) > 1 else "match"
            report.mismatches.append(
                f"truncated: no 'end' line (the record stops after {len(record)} lines, the "
                f"last of type {tail!r}); a match record ends with its result")
    report.final = game
    return report


__all__ = ["ReplayError", "ReplayReport", "load_record", "verify", "write_replay"]
