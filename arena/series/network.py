"""Playing matches over gRPC: the worker's own arena, with the plan's bots launched beside it.

``open_network_executor`` serves an arena on the plan's host and port (a free loopback port
by default), launches each bot with a spec as ``slots`` processes that connect to it with
tokens made for them (so the arena seats exactly them), and waits for them to say Hello;
remote bots connect themselves with their token, each with at most ``sessions`` matches
at once. Time limits and the fault policy apply: a bot that stalls or crashes loses its
games and the series goes on; a bot process that keeps exiting forfeits the rest at once.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.match.driver import MatchDriver
from arena.match.messages import MatchResult
from arena.match.spec import MatchSpec
from arena.processes import BotPool, BotProcess, launched, play_seated
from arena.series.plan import Plan
from arena.server.arena import Arena, start_arena
from arena.server.bridge import format_address

log = structlog.get_logger("arena.series")


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


class NetworkExecutor:
    """Plays a plan's matches on one arena between its launched (or remote) bots."""

    def __init__(self, plan: Plan, arena: Arena, seats: dict[str, BotPool | str],
                 slots: int) -> None:
        self.plan = plan
        self.arena = arena
        self.seats = seats
        self.slots = slots
        self.claim_batch = 1  # a match takes seconds: one at a time spreads them evenly
        self.address = ""
        # a remote bot plays as many matches at once as it has sessions (default one)
        self._limits = {b.name: trio.Semaphore(b.sessions) for b in plan.bots if b.is_remote}

    async def play(self, spec: MatchSpec) -> tuple[MatchResult, list[dict[str, Any]] | None]:
        """Play ``spec``; returns its result and record. Cancellation ends the match as
        ``shutdown``."""
        plan = self.plan
        driver = MatchDriver(spec.match_id, plan.rules, spec.seats, seed=spec.seed,
                             time_control=plan.time_control,
                             meta={"deal": spec.deal, "seat_order": spec.order})
        async with contextlib.AsyncExitStack() as held:
            for name in sorted(set(spec.seats) & set(self._limits)):  # one order: no
                await held.enter_async_context(self._limits[name])  # deadlock
            result = await play_seated(self.arena, driver,
                                       (self.seats[spec.seats[0]], self.seats[spec.seats[1]]),
                                       plan.show_up_s)
        return result, driver.record


@contextlib.asynccontextmanager
async def open_network_executor(plan: Plan, slots: int, logs_dir: Path | None
                                ) -> AsyncIterator[NetworkExecutor]:
    """Serve an arena and launch the plan's bots (``slots`` processes each) for the body;
    afterwards the lobby closes and the bots are stopped."""
    tc = plan.time_control
    tokens: dict[str, str] = {}  # token -> bot name: only these may play
    for b in plan.bots:
        if b.is_remote:
            tokens[b.token] = b.name
    arena = Arena(tokens=tokens, hello_timeout_s=tc.hello_timeout_ms / 1000)
    async with trio.open_nursery() as root:
        port = await start_arena(root, arena, host=plan.host, port=plan.port)
        address = format_address(plan.host, port)
        log.info("worker_arena", address=address)
        seats: dict[str, BotPool | str] = {b.name: b.token for b in plan.bots if b.is_remote}
        for b in plan.bots:
            if b.is_remote:
                continue
            processes = []
            for i in range(slots):
                token = secrets.token_hex(16)
                tokens[token] = b.name
                log_path = logs_dir / f"{b.name}-{i}.log" if logs_dir is not None else None
                processes.append(BotProcess(b.name, i, token, b.spec, address, log_path))
            seats[b.name] = BotPool(processes)
        pools = [pool for pool in seats.values() if isinstance(pool, BotPool)]
        # with no remote bot, a session refused for its token is a launched bot without it
        strict = not plan.has_remote and is_loopback(plan.host)
        executor = NetworkExecutor(plan, arena, seats, slots)
        executor.address = address
        async with launched(arena, pools, plan.show_up_s, strict_tokens=strict):
            yield executor
        root.cancel_scope.cancel()


__all__ = ["NetworkExecutor", "is_loopback", "open_network_executor"]
