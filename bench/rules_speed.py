"""Rules engine speed: random-legal self-play hands/s on one core; min_deadwood µs per call.

    python -m bench.rules_speed [--hands 3000] [--calls 20000] [--preset standard]

Each hand: a seeded shuffle, deal, then legal_actions + a random choice + apply until the
hand ends (the same loop OpenSpiel's figure measures). min_deadwood is timed on fresh random
hands with the memo cleared before each call, so no call is served from the cache.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from gin_arena_core.rules import CARDS, apply, deal, legal_actions, min_deadwood, preset
from gin_arena_core.rules import melds as melds_module


def random_hands(n: int, preset_name: str, seed: int = 1) -> tuple[float, float]:
    cfg = preset(preset_name)
    rng = random.Random(seed)
    knock = CARDS[5] if cfg.knock_deck else None
    actions = 0
    start = time.perf_counter()
    for i in range(n):
        deck = list(CARDS)
        rng.shuffle(deck)
        s = deal(cfg, deck, i % 2, knock)
        while not s.is_over:
            seat = s.turn
            s = apply(s, seat, rng.choice(legal_actions(s, seat)))
            actions += 1
    return n / (time.perf_counter() - start), actions / n


def deadwood_us(size: int, calls: int, seed: int = 2) -> tuple[float, float]:
    rng = random.Random(seed)
    hands = [rng.sample(CARDS, size) for _ in range(calls)]
    cache = melds_module._CACHE
    times = []
    for h in hands:
        cache.clear()
        t = time.perf_counter_ns()
        min_deadwood(h)
        times.append(time.perf_counter_ns() - t)
    times.sort()
    return statistics.median(times) / 1000, times[int(len(times) * 0.99)] / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--preset", default="standard")
    ap.add_argument("--runs", type=int, default=3, help="report the median of this many runs")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})  # one core, as the target says
    results = [random_hands(args.hands, args.preset) for _ in range(args.runs)]
    rate = statistics.median(r[0] for r in results)
    print(f"random self-play ({args.preset}): {rate:,.0f} hands/s on one core "
          f"(runs: {', '.join(f'{r[0]:,.0f}' for r in results)}; "
          f"{results[0][1]:.1f} actions/hand)")
    for size in (10, 11):
        p50, p99 = deadwood_us(size, args.calls)
        print(f"min_deadwood, {size} cards: median {p50:.1f} µs, p99 {p99:.1f} µs (uncached)")


if __name__ == "__main__":
    main()
