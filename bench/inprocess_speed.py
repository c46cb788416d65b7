"""In-process play speed: whole matches between Python bots called directly (no network).

    python -m bench.inprocess_speed [--matches 100] [--bots greedy,greedy] [--preset standard]
                                    [--pool-games 1000]

First pinned to one core: hands/s and decisions/s, and the time per decision split
between the bots' own code and the arena (engine, views, records, policy); then, on the
same core, what the server adds per decision to turn that into gRPC messages and back
(the request with its events written as the server writes them, the answer parsed), and
what the match runner (its deadline timer, mailbox and task switch per decision, as the
gRPC seats wait) costs under trio, with 64 matches between in-memory seats that answer
at once. Then what
``arena play A B --in-process`` does on the whole machine (a pool of one worker per CPU,
replays off): its hands/s over ``--pool-games`` games.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import trio
from gin_arena_core.protocol import pb
from gin_arena_core.protocol.convert import action_from_pb, action_to_pb
from gin_arena_core.rules import Action, BigGin, Gin, Knock, preset

from arena.botspec import load_bot_class
from arena.logs import configure as configure_logs
from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import DecisionRequest, Outgoing, Reply
from arena.match.runner import run_match
from arena.match.timers import Mailbox, TimedOut, TimerService
from arena.server.wire import (
    encode_event,
    encode_request,
    is_move_event,
)


def timed(cls: type[Any], clock: list[float]) -> Any:
    class Timed(cls):  # type: ignore[misc, valid-type]
        def decide(self, view: Any) -> Action:
            t = time.perf_counter()
            try:
                return super().decide(view)  # type: ignore[no-any-return]
            finally:
                clock[0] += time.perf_counter() - t

    return Timed()


def wire_cost(rules: Any, bots: tuple[type[Any], type[Any]], matches: int) -> tuple[float, int]:
    """Seconds spent in the server's protobuf conversions over ``matches`` matches, and the
    decisions they made: per request its bytes as the server writes them
    (``encode_request``, with the move events that ride in it), per answer parsing the
    bytes and ``action_from_pb``."""
    spent, decisions = 0.0, 0
    for i in range(matches):
        driver = MatchDriver(f"w{i}", rules, ("a", "b"), seed=i, first_dealer=i % 2)
        players = (bots[0](), bots[1]())
        events: list[list[bytes]] = [[], []]
        while not driver.is_over:
            seat = driver.seat_to_act()
            request = driver.next_request(5000, 0)
            t = time.perf_counter()
            for to, message in driver.drain():
                if is_move_event(message):
                    events[to].append(encode_event(message))  # type: ignore[arg-type]
            encode_request(request, events[seat])
            events[seat] = []
            spent += time.perf_counter() - t
            action = players[seat].decide(request.view)
            answer = pb.BotMessage(action=pb.ActionReply(
                request_id=request.request_id, action=action_to_pb(action))).SerializeToString()
            t = time.perf_counter()
            action_from_pb(pb.BotMessage.FromString(answer).action.action)
            spent += time.perf_counter() - t
            driver.submit(action)
            decisions += 1
    return spent, decisions


def _quick_move(legal: tuple[Action, ...]) -> Action:
    """What bench.arena_speed's bots play: gin or knock when legal, else the first move."""
    return next((a for a in legal if isinstance(a, Gin | Knock | BigGin)), legal[0])


class _InstantSeat:
    """A runner seat answering each request at once with ``_quick_move``, waited for as
    the gRPC seats are (a mailbox with a deadline of a shared ``TimerService``)."""

    def __init__(self, name: str, timers: TimerService) -> None:
        self.name = name
        self._inbox = Mailbox[Reply](timers)

    def send(self, message: Outgoing) -> None:
        if isinstance(message, DecisionRequest):
            self._inbox.put(Reply(message.request_id, _quick_move(message.view.legal)))

    async def receive(self, deadline: float) -> Reply | TimedOut | None:
        return await self._inbox.get(deadline)

    async def wait_back(self, grace_s: float) -> bool:
        return False


def runner_cost(rules: Any, matches: int, seconds: float) -> tuple[float, float]:
    """µs a decision of ``run_match`` with ``matches`` at once between instant seats, and
    of the driver alone making the same kind of moves."""
    decisions = [0]
    timers = TimerService()

    async def one(i: int, stop: float) -> None:
        k = 0
        while time.perf_counter() < stop:
            driver = MatchDriver(f"r{i}-{k}", rules, ("a", "b"), seed=i * 10_000 + k)
            await run_match(driver, (_InstantSeat("a", timers), _InstantSeat("b", timers)))
            decisions[0] += sum(s.decisions for s in driver.stats)
            k += 1

    async def all_matches() -> float:
        start = time.perf_counter()
        async with trio.open_nursery() as service:
            service.start_soon(timers.run)
            async with trio.open_nursery() as nursery:
                for i in range(matches):
                    nursery.start_soon(one, i, start + seconds)
            service.cancel_scope.cancel()
        return time.perf_counter() - start

    elapsed = trio.run(all_matches)
    with_runner = elapsed / decisions[0] * 1e6
    start, alone = time.perf_counter(), 0
    for k in range(50):
        driver = MatchDriver(f"d{k}", rules, ("a", "b"), seed=k)
        while not driver.is_over:
            request = driver.next_request()
            driver.drain()
            driver.submit(_quick_move(request.view.legal))
            alone += 1
    return with_runner, (time.perf_counter() - start) / alone * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--matches", type=int, default=100)
    ap.add_argument("--bots", default="greedy,greedy")
    ap.add_argument("--preset", default="standard")
    ap.add_argument("--pool-games", type=int, default=1000)
    ap.add_argument("--runner-seconds", type=float, default=4.0,
                    help="how long to run the run_match-under-trio measurement")
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
    spent, wired = wire_cost(rules, (a, b), max(1, args.matches // 2))
    print(f"protobuf per decision on the server (request built and serialised, answer parsed): "
          f"{spent / wired * 1e6:.1f} µs ({wired} decisions)")
    configure_logs(json=False, level="warning")  # no match_end lines
    with_runner, alone = runner_cost(rules, 64, args.runner_seconds)
    print(f"run_match under trio, 64 matches between instant seats: {with_runner:.1f} µs a "
          f"decision (the driver alone, same moves: {alone:.1f} µs)")
    if cpus is not None:
        os.sched_setaffinity(0, cpus)
    if args.pool_games:
        from arena.play import PlayOptions, prepare_play, run_play

        opts = PlayOptions(specs=args.bots.split(","), games=args.pool_games, rules=rules,
                           seed="bench", in_process=True, progress=False)
        run = run_play(prepare_play(opts))
        games, seconds, pool_hands = len(run.matches), run.elapsed, run.hands
        print(f"arena play --in-process, {os.cpu_count()} CPUs, {opts.local_workers} "
              f"workers ({games} games, {pool_hands} hands, replays off): "
              f"{pool_hands / seconds:,.0f} hands/s")


if __name__ == "__main__":
    main()
