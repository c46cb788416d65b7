"""What ``arena play`` prints and keeps: its table, crosstable, problems and ``summary.json``.

Every figure is read from the run's store (``arena.play.PlayRun``): the same per-seat
results and the same tally (``arena.series.tally``) as the standings of tournaments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena import texttable
from arena.play import PlayRun
from arena.series.tally import Tally, crosstable


def format_table(tallies: Sequence[Tally], width: int | None = None) -> str:
    head = ("bot", "games", "W-D-L", "score [95% CI]", "points", "pts/hand", "hands won",
            "gins", "undercuts", "timeouts", "illegal", "errors", "forfeits")
    rows = []
    for t in tallies:
        lo, hi = t.score_interval
        rows.append((t.bot, str(t.games), f"{t.wins}-{t.draws}-{t.losses}",
                     f"{t.score_rate:.1%} [{lo:.1%}, {hi:.1%}]",
                     str(t.points), f"{t.points_per_hand:.2f}" if t.hands else "-",
                     f"{t.hands_won}/{t.hands}", str(t.gins), str(t.undercuts),
                     str(t.timeouts), str(t.illegal), str(t.errors), str(t.forfeits)))
    return texttable.render(head, rows, left={0}, keep=1, width=width)


def format_problems(tallies: Sequence[Tally], logs_dir: Path | None) -> str:
    """What went wrong with each bot's code, after the table ("" if nothing did): how many
    bot errors, the first one with the line it came from, and where the bot's log is."""
    lines = []
    for t in tallies:
        if not t.errors:
            continue
        log = (f"; its log: {logs_dir / t.bot}-*.log" if logs_dir is not None
               else "; in-process: the bot's output went to this terminal")
        lines.append(f"  {t.bot}: {t.errors} bot error{'s' if t.errors != 1 else ''}; "
                     f"first: {t.first_error}{log}")
    if not lines:
        return ""
    return "\n".join(["problems (docs/protocol.md, \"The bot contract\"):", *lines])


def format_crosstable(run: PlayRun, width: int | None = None) -> str:
    """Each bot's results against each other bot (row against column), as W-D-L."""
    names = run.names
    cells = crosstable(run.results)
    rows = [[a, *("-" if a == b else "{}-{}-{}".format(*cells.get((a, b), [0, 0, 0]))
                  for b in names)] for a in names]
    table = texttable.render(["vs", *names], rows, left={0}, keep=1, width=width)
    return table + "\ncell: the row bot's wins-draws-losses against the column bot"


def odd_games_note(run: PlayRun) -> str:
    """What an odd ``--games`` means for fairness ("" if it is even)."""
    games = run.opts.games
    if games % 2 == 0:
        return ""
    last = (games - 1) // 2
    firsts = sorted({s.seats[0] for s in run.specs if s.deal == last})
    return (f"note: --games {games} is odd, so the last deal of each pairing is played once "
            f"instead of twice with the seats swapped; in it seat 0 (the first dealer) went "
            f"to {', '.join(firsts)}. Use an even --games for duplicate fairness.")


def summary(run: PlayRun) -> dict[str, Any]:
    """The run as JSON: what was asked, how far it got, each bot's tally."""
    opts = run.opts
    played = len(run.matches)
    return {
        "seed": opts.seed, "rules": opts.rules.to_dict(),
        "time_control": opts.time_control.to_dict(),
        "in_process": opts.in_process, "games_per_pair": opts.games,
        "workers": opts.local_workers,
        "bots": [{"name": e.name, "spec": e.spec} for e in run.entrants],
        "scheduled": len(run.specs), "played": played,
        "complete": played == len(run.specs) and not run.interrupted,
        "interrupted": run.interrupted, "seconds": round(run.elapsed, 3),
        "hands": run.hands,
        "tallies": [{"name": t.bot, **{k: v for k, v in dataclasses.asdict(t).items()
                                       if k != "bot"}} for t in run.tallies()],
    }


__all__ = ["format_crosstable", "format_problems", "format_table", "odd_games_note",
           "summary"]
