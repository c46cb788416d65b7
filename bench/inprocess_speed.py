"""In-process play speed: whole matches between Python bots called directly (no network).

    python -m bench.inprocess_speed [--matches 100] [--bots greedy,greedy] [--preset standard]
                                    [--pool-games 1000]

First pinned to one core: hands/s and decisions/s, and the time per decision split
between the bots' own code and the arena (engine, views, records, policy). Then what
``arena play A B --in-process`` does on the whole machine (a pool of one worker per CPU,
replays off): its hands/s over ``--pool-games`` games.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.rules import Action, preset
from sdk.launch import load_bot_class


def timed(cls: type[Any], clock: list[float]) -> Any:
    class Timed(cls):  # type: ignore[misc, valid-type]
        def decide(self, view: Any) -> Action:
            t = time.perf_counter()
            try:
                return super().decide(view)  # type: ignore[no-any-return]
            finally:
                clock[0] += time.perf_counter() - t

    return Timed()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--matches", type=int, default=100)
    ap.add_argument("--bots", default="greedy,greedy")
    ap.add_argument("--preset", default="standard")
    ap.add_argument("--pool-games", type=int, default=1000)
    args = ap.parse_args()
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    a, b = (load_bot_class(s) for s in args.bots.split(","))
    rules = preset(args.preset)
    clock = [0.0]
    hands = decisions = 0
    start = time.perf_counter()
    for i in range(args.matches):
        driver = MatchDriver(f"m{i}", rules, ("a", "b"), seed=i, first_dealer=i % 2)
        result = play_local(driver, (timed(a, clock), timed(b, clock)))
        hands += len(result.hands)
        decisions += sum(s.decisions for s in driver.stats)
    elapsed = time.perf_counter() - start
    arena = elapsed - clock[0]
    print(f"in-process {args.bots} ({args.preset}), one core: {hands / elapsed:,.0f} hands/s, "
          f"{decisions / elapsed:,.0f} decisions/s ({hands} hands, {decisions / hands:.1f} "
          f"decisions/hand); per decision: arena {arena / decisions * 1e6:.1f} µs, "
          f"bots {clock[0] / decisions * 1e6:.1f} µs")
    if cpus is not None:
        os.sched_setaffinity(0, cpus)
    if args.pool_games:
        from arena.play import PlayOptions, run_play

        opts = PlayOptions(specs=args.bots.split(","), games=args.pool_games, rules=rules,
                           seed="bench", in_process=True, progress=False)
        _, results, seconds = run_play(opts)
        pool_hands = sum(len(r.hands) for _, r in results)
        print(f"arena play --in-process, {os.cpu_count()} CPUs ({len(results)} games, "
              f"{pool_hands} hands, replays off): {pool_hands / seconds:,.0f} hands/s")


if __name__ == "__main__":
    main()
