"""``arena serve``: pair whichever bots connect, two at a time, and keep each match's replay.

Open play for a server anyone may join: whenever admission allows another match
(``arena.server.lobby.Admission``) the two oldest waiting bots are seated; each match gets
a fresh deal from the server's seed, and its replay goes through the one commit path
(``arena.series.commit``). One match failing never stops the others.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import grpc
import structlog
import trio
from gin_arena_core.rules import RulesConfig

from arena.match.driver import MatchDriver, derive_seed, new_seed
from arena.match.messages import TimeControl
from arena.match.spec import MatchSpec
from arena.series.commit import Committer
from arena.server.arena import Arena, GrpcSeat

log = structlog.get_logger("arena.serve")


async def serve_open(arena: Arena, rules: RulesConfig, time_control: TimeControl,
                     seed: int | str | None = None, *, replays: Path | None = None) -> None:
    """Pair the two oldest waiting bots and play a match whenever admission allows
    another, forever; replays (if ``replays``) are written as matches end. Cancellation
    ends the matches in play as ``shutdown``."""
    base = str(seed) if seed is not None else new_seed()
    arena.paced = True
    committer = Committer(None, "serve", replays=replays, rated=False)
    was_open = True
    async with trio.open_nursery() as nursery:
        nursery.start_soon(committer.run)
        for n in itertools.count(1):
            await arena.admission.acquire()
            try:
                a, b = await arena.any_two(rules.runs_only)
            except BaseException:
                arena.admission.release()
                raise
            spec = MatchSpec(f"m{n:05d}", (a.name, b.name), n, 0,
                             derive_seed(base, f"match:{n}"))
            driver = MatchDriver(spec.match_id, rules, spec.seats, seed=spec.seed,
                                 first_dealer=n % 2, time_control=time_control)
            nursery.start_soon(_play, arena, committer, spec, driver, (a, b))
            is_open = not arena.admission.is_full
            if was_open and not is_open:  # at capacity now: tell who waits, once
                arena.tell_capacity()
            was_open = is_open


async def _play(arena: Arena, committer: Committer, spec: MatchSpec, driver: MatchDriver,
                seats: tuple[GrpcSeat, GrpcSeat]) -> None:
    """One match, guarded: an error is logged, never raised into the server."""
    try:
        result = await arena.run_seated(driver, seats)
        committer.submit(spec, result, driver.record)
    except trio.Cancelled:  # shutdown: the match ended as such; keep its replay
        if driver.result is not None:
            await committer.write_now(spec, driver.result, driver.record)
        raise
    except Exception:
        log.exception("match_task_failed", match_id=driver.match_id)
        for seat in seats:
            seat.entry.conn.abort(grpc.StatusCode.INTERNAL, "internal error")
            seat.entry.done.set()
    finally:
        arena.admission.release()


__all__ = ["serve_open"]
