"""Standings from a store: the batch fit, per-bot statistics, and their outputs.

``standings(store, scope)`` fits the ratings over every counted match of the scope and
gathers each bot's statistics; ``format_table`` prints it for a terminal, ``to_csv`` and
``to_json`` export it, ``format_matrix`` prints the pairwise results.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from arena import texttable
from arena.series.ratings import ordinal
from arena.series.tally import Tally, crosstable, tally
from arena.store.base import Rating, ScopeInfo, Store, StoreError
from arena.tournament.ratings import Fit, standings_fit, units_from_matches
from arena.tournament.sprt import SprtVerdict, sprt_verdict


@dataclass(frozen=True)
class Row:
    rank: int
    fit: Fit
    stats: Tally
    live: Rating


@dataclass
class Standings:
    scope: ScopeInfo
    rows: list[Row]
    matches: int  # recorded
    voided: int
    # (bot, opponent) -> [wins, draws, losses] of bot against opponent
    matrix: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    sprt: str = ""
    sprt_fields: dict[str, Any] | None = None  # the SPRT's numbers, for --json
    unpaired: int = 0  # counted matches whose deal partner is missing: not in the Elo fit
    after_verdict: int = 0  # recorded after an SPRT decided: not in the test

    @property
    def bots(self) -> list[str]:
        return [r.stats.bot for r in self.rows]


def pick_scope(store: Store, wanted: str | None = None) -> ScopeInfo:
    """The scope named ``wanted`` (a scope key or a tournament name; the latest of that
    name), or else the latest scope with matches."""
    scopes = store.scopes()
    if not scopes:
        raise StoreError(f"{store.label}: no tournament or ladder results")
    if wanted:
        hits = [s for s in scopes if wanted in (s.scope, s.name)]
        if not hits:
            known = ", ".join(sorted({s.name for s in scopes}))
            raise StoreError(f"{store.label}: no scope {wanted!r} (known: {known})")
        return hits[-1]
    with_matches = [s for s in scopes if s.matches]
    return (with_matches or scopes)[-1]


def standings(store: Store, scope: ScopeInfo) -> Standings:
    """Fit and gather everything the outputs show, for one scope."""
    matches = store.matches(scope.scope)
    results = store.results(scope.scope)
    live = store.ratings(scope.scope)
    config = store.scope_config(scope.scope)
    bots: list[str] = []
    listed = config.get("bots")
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            bots.append(entry["name"])
    for m in matches:
        for b in m.bots:
            if b not in bots:
                bots.append(b)
    stats = tally(results, bots)
    matrix = crosstable(results)
    units = units_from_matches(matches)
    fits = standings_fit(bots, units) if bots else []
    default = Rating(25.0, 25 / 3, 0)
    rows = [Row(i + 1, f, stats[f.bot], live.get(f.bot, default)) for i, f in enumerate(fits)]
    out = Standings(scope, rows, len(matches), sum(m.voided for m in matches), matrix,
                    unpaired=sum(u.games == 1 for u in units),
                    after_verdict=sum(m.after_verdict for m in matches))
    sprt = config.get("sprt")
    if config.get("format") == "sprt" and isinstance(sprt, dict) and len(bots) == 2:
        out.sprt, out.sprt_fields = _sprt(sprt, matches, bots)
    return out


def _sprt(sprt: dict[str, Any], matches: list[Any], bots: list[str]
          ) -> tuple[str, dict[str, Any]]:
    """The SPRT's verdict over the stored matches: a line for the table (with the
    pentanomial counts, as fastchess prints them) and its numbers for JSON."""
    a, b = bots[0], bots[1]
    by_deal: dict[int, dict[int, float | None]] = defaultdict(dict)
    for m in matches:
        if set(m.bots) == {a, b} and not m.after_verdict:  # the test stopped before these
            by_deal[m.deal][m.order] = m.score_of(a)
    scores: dict[int, float | None] = {}
    for deal, got in by_deal.items():
        if len(got) == 2:
            s0, s1 = got[0], got[1]
            scores[deal] = None if s0 is None or s1 is None else (s0 + s1) / 2
    elo0, elo1 = float(sprt["elo0"]), float(sprt["elo1"])
    verdict: SprtVerdict = sprt_verdict(
        scores, elo0=elo0, elo1=elo1, alpha=float(sprt["alpha"]), beta=float(sprt["beta"]),
        max_deals=int(sprt["max_deals"]))
    text = (verdict.describe(a, b, elo0, elo1) + "; pentanomial (deals scoring A 0, 1/4, "
            f"1/2, 3/4, 1): {', '.join(map(str, verdict.counts))}")
    fields = {"bots": [a, b], "status": str(verdict.status), "llr": round(verdict.llr, 4),
              "lower": round(verdict.lower, 4), "upper": round(verdict.upper, 4),
              "elo0": elo0, "elo1": elo1, "alpha": float(sprt["alpha"]),
              "beta": float(sprt["beta"]), "deals": verdict.deals,
              "score": round(verdict.score, 4), "pentanomial": list(verdict.counts),
              "text": text}
    return text, fields


# ---------------------------------------------------------------- outputs

_COLUMNS = ("rank", "bot", "elo", "elo_low", "elo_high", "los_next", "games", "wins", "draws",
            "losses", "score_rate", "score_low", "score_high", "points_per_hand", "hands",
            "gin_rate", "undercut_rate", "timeouts", "illegal", "errors", "forfeits", "voids",
            "live_mu", "live_sigma")


def _record(row: Row) -> dict[str, Any]:
    s, f = row.stats, row.fit
    lo, hi = s.score_interval
    return {
        "rank": row.rank, "bot": s.bot, "elo": round(f.elo, 1), "elo_low": round(f.low, 1),
        "elo_high": round(f.high, 1),
        "los_next": None if f.los_next is None else round(f.los_next, 4),
        "games": s.games, "wins": s.wins, "draws": s.draws, "losses": s.losses,
        "score_rate": round(s.score_rate, 4), "score_low": round(lo, 4),
        "score_high": round(hi, 4), "points_per_hand": round(s.points_per_hand, 3),
        "hands": s.hands, "gin_rate": round(s.gin_rate, 4),
        "undercut_rate": round(s.undercut_rate, 4), "timeouts": s.timeouts,
        "illegal": s.illegal, "errors": s.errors, "forfeits": s.forfeits, "voids": s.voids,
        "live_mu": round(row.live.mu, 3), "live_sigma": round(row.live.sigma, 3),
    }


def format_table(st: Standings, width: int | None = None) -> str:
    """The standings as an aligned text table no wider than ``width`` (the terminal's by
    default), with a title line and notes."""
    head = ("#", "bot", "Elo [95% CI]", "LOS", "games", "W-D-L", "score [95% CI]", "pts/hand",
            "gin%", "undercut%", "timeouts", "illegal", "errors", "forfeits", "live mu±sigma")
    rows = []
    for row in st.rows:
        s, f = row.stats, row.fit
        lo, hi = s.score_interval
        rows.append((
            str(row.rank), s.bot, f"{round(f.elo):+d} [{round(f.low):+d}, {round(f.high):+d}]",
            "" if f.los_next is None else f"{f.los_next:.1%}", str(s.games),
            f"{s.wins}-{s.draws}-{s.losses}", f"{s.score_rate:.1%} [{lo:.1%}, {hi:.1%}]",
            f"{s.points_per_hand:+.2f}", f"{s.gin_rate:.1%}", f"{s.undercut_rate:.1%}",
            str(s.timeouts), str(s.illegal), str(s.errors), str(s.forfeits),
            f"{row.live.mu:.1f}±{row.live.sigma:.1f}"))
    title = (f"{st.scope.name} ({st.scope.kind}, {st.scope.scope}): {st.matches} matches"
             + (f", {st.voided} voided (not counted)" if st.voided else ""))
    notes = ["Elo: Bradley-Terry fit over the duplicate deals (both matches of a deal "
             "counted), centred on the field mean; 95% CI and LOS (likelihood the bot is "
             "stronger than the next one down) from the fit's curvature with the dispersion "
             "of the deals (docs/tournaments.md)."]
    if st.unpaired:
        notes.append(f"{st.unpaired} matches whose deal partner was not played or was voided "
                     "are not in the Elo fit (they count in the other columns).")
    extreme = [r.stats.bot for r in st.rows
               if r.stats.games and r.stats.score_rate in (0.0, 1.0)]
    if extreme:
        notes.append(f"{', '.join(extreme)}: all wins or all losses, so the Elo is set by the "
                     "fit's prior (one virtual draw) and the interval says little.")
    for r in st.rows:
        if r.stats.errors:
            notes.append(f"{r.stats.bot}: {r.stats.errors} bot error"
                         f"{'s' if r.stats.errors != 1 else ''} (its code raised, or answered "
                         f"with something not a move); first: {r.stats.first_error}")
    if st.after_verdict:
        notes.append(f"{st.after_verdict} matches finished after the SPRT's verdict: kept and "
                     "counted here, left out of the test (as fishtest does).")
    if st.sprt:
        notes.insert(0, st.sprt)
    table = texttable.render(head, rows, left={1}, keep=2, width=width)
    return "\n".join([title, table, *(texttable.wrap(n, width) for n in notes)])


def format_matrix(st: Standings, width: int | None = None) -> str:
    """Pairwise results: each cell is the row bot's score against the column bot; past the
    terminal's width the columns continue in blocks below."""
    bots = st.bots
    cells: list[list[str]] = []
    for a in bots:
        line = [a]
        for b in bots:
            if a == b:
                line.append("-")
                continue
            w, d, lo = st.matrix.get((a, b), [0, 0, 0])
            n = w + d + lo
            line.append(f"{(w + d / 2) / n:.0%} {w}-{d}-{lo}" if n else ".")
        cells.append(line)
    table = texttable.render(["vs", *bots], cells, left={0}, keep=1, width=width)
    return table + "\ncell: row bot's score against the column bot, then W-D-L"


def to_csv(st: Standings) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in st.rows:
        writer.writerow(_record(row))
    return buf.getvalue()


def to_json(st: Standings) -> dict[str, Any]:
    return {
        "scope": asdict(st.scope) | {"config": json.loads(st.scope.config)},
        "matches": st.matches, "voided": st.voided, "unpaired": st.unpaired,
        "after_verdict": st.after_verdict,
        "sprt": st.sprt_fields,
        "standings": [_record(r) for r in st.rows],
        "matrix": [{"bot": a, "opponent": b, "wins": v[0], "draws": v[1], "losses": v[2]}
                   for (a, b), v in sorted(st.matrix.items())],
    }


def leaderboard_rows(ratings: dict[str, Rating]) -> list[tuple[str, Rating]]:
    """Live ratings, best first by the conservative ordinal (mu - 3 sigma)."""
    return sorted(ratings.items(), key=lambda kv: (-ordinal(kv[1]), kv[0]))


__all__ = ["Row", "Standings", "format_matrix", "format_table", "leaderboard_rows",
           "pick_scope", "standings", "to_csv", "to_json"]
