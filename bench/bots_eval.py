"""Sample bots against each other, in process: StrongBot vs GreedyBot, GreedyBot vs RandomBot
(and GreedyBot vs itself, for the in-process speed).

    python -m bench.bots_eval [--hands 2000] [--preset standard]

Whole games with ``MatchDriver`` + ``play_local``. Duplicate deals: seed k is played twice,
first with bot A in seat 0, then with the seats swapped (seat 0 deals first both times, so
each bot is dealt the other's cards and the first deal alternates); seeds 0, 1, 2, ... are
played until at least ``--hands`` hands are done. Win rates are over hands (or games) with a
winner, with a 95% Wilson interval; points per hand is A's hand points minus B's over every
hand played (walls included), before game, box and shutout bonuses.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gin_arena_core.rules import preset

from arena.match.driver import MatchDriver
from arena.match.local import LocalBot, play_local
from arena.series.tally import wilson
from sample_bots import GreedyBot, RandomBot, StrongBot

BotFactory = Callable[[int], LocalBot]


@dataclass(slots=True)
class Tally:
    """Totals from bot A's side over many matches (index 0 = A, 1 = B where paired)."""

    hands: int = 0
    decided: int = 0
    wins: int = 0
    points: int = 0
    games: int = 0
    games_decided: int = 0
    game_wins: int = 0
    gins: list[int] = field(default_factory=lambda: [0, 0])
    undercuts: list[int] = field(default_factory=lambda: [0, 0])  # undercuts won by A / B
    knocks: list[int] = field(default_factory=lambda: [0, 0])
    rejections: int = 0
    defaulted: int = 0
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    think_ms: list[float] = field(default_factory=lambda: [0.0, 0.0])
    seconds: float = 0.0


def play_pair(make_a: BotFactory, make_b: BotFactory, preset_name: str, hands: int) -> Tally:
    """Duplicate games between A and B until at least ``hands`` hands are played."""
    rules = preset(preset_name)
    t = Tally()
    seed = 0
    start = time.perf_counter()
    while t.hands < hands:
        for a_seat in (0, 1):
            a, b = make_a(2 * seed + a_seat), make_b(2 * seed + a_seat + 1)
            bots = (a, b) if a_seat == 0 else (b, a)
            names = (bots[0].name, bots[1].name)
            driver = MatchDriver(f"eval-{seed}-{a_seat}", rules, names, seed=seed,
                                 first_dealer=0)
            result = play_local(driver, bots)
            _count(t, result.hands, a_seat)
            t.games += 1
            if result.winner is not None:
                t.games_decided += 1
                t.game_wins += result.winner == a_seat
            for who, seat in ((0, a_seat), (1, 1 - a_seat)):
                st = driver.stats[seat]
                t.rejections += st.rejections
                t.defaulted += st.defaulted
                t.decisions[who] += st.decisions
                t.think_ms[who] += st.think_ms_total
        seed += 1
    t.seconds = time.perf_counter() - start
    return t


def _count(t: Tally, results: tuple[object, ...], a_seat: int) -> None:
    from gin_arena_core.rules import HandResult

    for r in results:
        assert isinstance(r, HandResult)
        t.hands += 1
        if r.winner is None:
            continue
        t.decided += 1
        who = 0 if r.winner == a_seat else 1
        t.wins += who == 0
        t.points += r.points if who == 0 else -r.points
        if r.kind in ("gin", "big_gin"):
            t.gins[who] += 1
        elif r.kind == "undercut":
            t.undercuts[who] += 1
        if r.knocker is not None and r.kind in ("knock", "undercut"):
            t.knocks[0 if r.knocker == a_seat else 1] += 1


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(rows: list[tuple[str, Tally]], preset_name: str) -> str:
    head = (f"{'A vs B':<18} {'hands':>6} {'games':>5}  {'hand win A':>10} {'95% CI':>13}  "
            f"{'pts/hand':>8}  {'game win A':>10} {'95% CI':>13}  {'gin A/B':>11}  "
            f"{'undercut A/B':>12}  {'ms/dec A/B':>11}  {'hands/s':>7}")
    lines = [f"preset {preset_name}; duplicate deals (each seed twice, seats swapped)", head,
             "-" * len(head)]
    for label, t in rows:
        hw = t.wins / t.decided if t.decided else 0.0
        hlo, hhi = wilson(t.wins, t.decided)
        gw = t.game_wins / t.games_decided if t.games_decided else 0.0
        glo, ghi = wilson(t.game_wins, t.games_decided)
        ms = [t.think_ms[i] / t.decisions[i] if t.decisions[i] else 0.0 for i in (0, 1)]
        lines.append(
            f"{label:<18} {t.hands:>6} {t.games:>5}  {_pct(hw):>10} "
            f"{f'[{_pct(hlo)},{_pct(hhi)}]':>13}  {t.points / max(t.hands, 1):>+8.2f}  "
            f"{_pct(gw):>10} {f'[{_pct(glo)},{_pct(ghi)}]':>13}  "
            f"{_pct(t.gins[0] / t.hands) + '/' + _pct(t.gins[1] / t.hands):>11}  "
            f"{_pct(t.undercuts[0] / t.hands) + '/' + _pct(t.undercuts[1] / t.hands):>12}  "
            f"{f'{ms[0]:.2f}/{ms[1]:.2f}':>11}  {t.hands / t.seconds:>7.0f}"
        )
    bad = sum(t.rejections + t.defaulted for _, t in rows)
    lines.append(f"rejected or defaulted moves: {bad}")
    lines.append("gin and undercut: % of all hands won that way by A / by B; "
                 "ms/dec: mean think time per decision")
    return "\n".join(lines)


PAIRINGS: dict[str, tuple[BotFactory, BotFactory]] = {
    "strong vs greedy": (lambda s: StrongBot(), lambda s: GreedyBot()),
    "greedy vs random": (lambda s: GreedyBot(), lambda s: RandomBot(seed=s)),
    "greedy vs greedy": (lambda s: GreedyBot(), lambda s: GreedyBot()),
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000, help="at least this many hands per pairing")
    ap.add_argument("--preset", default="standard")
    ap.add_argument("--only", choices=sorted(PAIRINGS), action="append",
                    help="run only this pairing (repeatable)")
    args = ap.parse_args(argv)
    rows = []
    for label, (make_a, make_b) in PAIRINGS.items():
        if args.only and label not in args.only:
            continue
        rows.append((label, play_pair(make_a, make_b, args.preset, args.hands)))
    print(report(rows, args.preset))


if __name__ == "__main__":
    main()
