"""Tournament throughput: a 4-bot round robin to N hands, in process and over gRPC.

    python -m bench.tournament_speed [--hands 10000] [--net-hands 1000]
                                     [--bots A,B,C,D] [--concurrency N]

Each run is a real tournament (duplicate deals, every match committed to a fresh SQLite
file with its live openskill update), so the figures include the store and the ratings,
not only the games. The first run grows its number of deals until it passes --hands
(each step resumes the previous one's matches, as any rerun does), so it ends a little
past the target; the pool plays the same deals, the networked run a proportional number.
Reported per run: matches, hands, seconds, hands/s and the time --hands would take at
that rate. The networked run (each bot as ``concurrency`` processes over gRPC on
127.0.0.1, time limits on) includes starting the bot processes.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.logs import configure
from arena.store.sqlite import SqliteStore
from arena.tournament.config import TournamentConfig, load_config
from arena.tournament.runner import run_tournament

DEFAULT_BOTS = ("random,greedy,tests.tournament.bots:Greedy,tests.tournament.bots:Sloppy")


@dataclasses.dataclass
class Figure:
    label: str
    matches: int
    hands: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0


def run_to(target: int, cfg: TournamentConfig) -> tuple[Figure, int]:
    """Play ``cfg``'s round robin, deal by deal in growing steps, until at least ``target``
    hands; time all of it. Returns the figure and the deals it took."""
    started = time.perf_counter()
    deals, hands = 1, 0
    while True:
        summary = run_tournament(dataclasses.replace(cfg, deals=deals))
        hands += summary.hands
        if hands >= target:
            break
        deals = max(deals + 1, math.ceil(deals * target / max(hands, 1) * 1.05))
    return _figure(cfg, time.perf_counter() - started), deals


def run_deals(deals: int, cfg: TournamentConfig) -> Figure:
    started = time.perf_counter()
    run_tournament(dataclasses.replace(cfg, deals=deals))
    return _figure(cfg, time.perf_counter() - started)


def _figure(cfg: TournamentConfig, seconds: float) -> Figure:
    with SqliteStore(cfg.database) as store:
        matches = store.matches(cfg.scope)
    return Figure("", len(matches), sum(m.hands for m in matches), seconds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tournament_speed",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=10_000)
    ap.add_argument("--net-hands", type=int, default=10_000)
    ap.add_argument("--bots", default=DEFAULT_BOTS, help="four bot specs, comma-separated")
    ap.add_argument("--concurrency", type=int, default=0, help="0: what fits the machine")
    ap.add_argument("--seed", default="bench")
    ap.add_argument("--skip-net", action="store_true")
    args = ap.parse_args(argv)
    configure(json=False, level="error")
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        def cfg(name: str, mode: str, concurrency: int, decision_ms: int = 1000
                ) -> TournamentConfig:
            return load_config(None, tournament={
                "name": name, "seed": args.seed, "mode": mode, "concurrency": concurrency,
                "database": str(Path(tmp) / f"{name}.sqlite")},
                time_control={"decision_ms": decision_ms}, bots=bots)

        print(f"running: in-process, 1 at a time, to {args.hands} hands ...",
              file=sys.stderr, flush=True)
        first, deals = run_to(args.hands, cfg("seq", "in_process", 1))
        first.label = "in-process, 1 at a time"
        figures.append(first)
        pool = cfg("pool", "in_process", args.concurrency)
        print(f"running: in-process, pool of {pool.workers}, {deals} deals ...",
              file=sys.stderr, flush=True)
        figures.append(run_deals(deals, pool))
        figures[-1].label = f"in-process, pool of {pool.workers}"
        if not args.skip_net:
            net = cfg("net", "process", args.concurrency)
            net_deals = max(1, math.ceil(deals * args.net_hands / max(first.hands, 1)))
            print(f"running: over gRPC, {net.workers} at once, {net_deals} deals ...",
                  file=sys.stderr, flush=True)
            figures.append(run_deals(net_deals, net))
            figures[-1].label = f"over gRPC, {net.workers} at once"
    print(f"4-bot round robin ({', '.join(bots)}); python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'run':<34} {'matches':>8} {'hands':>8} {'seconds':>8} {'hands/s':>8} "
          f"{'s per ' + str(args.hands):>12}")
    for f in figures:
        print(f"{f.label:<34} {f.matches:>8} {f.hands:>8} {f.seconds:>8.1f} {f.rate:>8.0f} "
              f"{args.hands / f.rate if f.rate else 0:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
