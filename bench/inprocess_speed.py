"""In-process play speed: whole matches between Python bots called directly (no network).

    python -m bench.inprocess_speed [--matches 100] [--bots greedy,greedy] [--preset standard]

Pinned to one core. Reports hands/s and decisions/s, and splits the time per decision
between the bots' own code and the arena (engine, views, records, policy).
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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
