"""Per-match exports of a scope: one row per match, as CSV or JSON, for organisers."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from arena.store.base import MatchRow

COLUMNS = ("match_id", "scope", "bot_seat0", "bot_seat1", "deal", "seat_order", "winner_seat",
           "winner", "score_seat0", "score_seat1", "hands", "termination", "blamed_seat",
           "blamed", "voided", "detail", "finished_at")


def match_record(scope: str, m: MatchRow) -> dict[str, Any]:
    """One match as a flat record (seats 0 and 1; winner and blamed as seat and name)."""
    return {
        "match_id": m.match_id, "scope": scope, "bot_seat0": m.bots[0], "bot_seat1": m.bots[1],
        "deal": m.deal, "seat_order": m.order, "winner_seat": m.winner,
        "winner": None if m.winner is None else m.bots[m.winner],
        "score_seat0": m.scores[0], "score_seat1": m.scores[1], "hands": m.hands,
        "termination": m.termination, "blamed_seat": m.blamed,
        "blamed": None if m.blamed is None else m.bots[m.blamed], "voided": m.voided,
        "detail": m.detail, "finished_at": round(m.finished_at, 3),
    }


def matches_csv(scope: str, rows: Sequence[MatchRow]) -> str:
    """Every match of ``scope`` as CSV (empty cells for no winner / no one blamed)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for m in rows:
        writer.writerow({k: "" if v is None else v for k, v in match_record(scope, m).items()})
    return buf.getvalue()


def matches_json(scope: str, rows: Sequence[MatchRow]) -> dict[str, Any]:
    """Every match of ``scope`` as a JSON-able object."""
    return {"scope": scope, "matches": [match_record(scope, m) for m in rows]}


__all__ = ["COLUMNS", "match_record", "matches_csv", "matches_json"]
