"""Every way a bot can be seated, behind one call: play a match, return its result.

``InProcess`` calls the bot directly (``play_local``); ``SdkOverGrpc`` runs it with the SDK
against a real arena on 127.0.0.1; ``RawProtobuf`` runs it behind ``raw_client``, a client
written from the proto alone (no SDK), as an author in another language would. The bot
under test takes seat 0; the opponent, a sample GreedyBot through the SDK (or in-process),
seat 1. The conformance suite (test_conformance.py) runs the same cases on all three.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

import gin_arena_sdk as sdk
import trio
from gin_arena_core.rules import RulesConfig

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import MatchResult, TimeControl
from arena.server.arena import Arena, start_arena
from sample_bots import GreedyBot
from tests.contract.raw_client import run_raw

TEST_TIMEOUT_S = 45.0
SEED = "contract-7"


class Seating(Protocol):
    name: str

    def play(self, bot: sdk.Bot, tc: TimeControl, rules: RulesConfig) -> MatchResult: ...


def _driver(tc: TimeControl, rules: RulesConfig) -> MatchDriver:
    return MatchDriver("contract", rules, ("subject", "greedy"), seed=SEED, time_control=tc)


class InProcess:
    name = "in-process"

    def play(self, bot: sdk.Bot, tc: TimeControl, rules: RulesConfig) -> MatchResult:
        opponent = GreedyBot()
        opponent.name = "greedy"
        return play_local(_driver(tc, rules), (bot, opponent))


class _OverGrpc:
    name = ""

    def run_subject(self, bot: sdk.Bot, address: str) -> None:
        raise NotImplementedError

    def play(self, bot: sdk.Bot, tc: TimeControl, rules: RulesConfig) -> MatchResult:
        out: dict[str, Any] = {}
        bot.name = "subject"

        async def main() -> None:
            with trio.fail_after(TEST_TIMEOUT_S):
                arena = Arena(hello_timeout_s=10.0)
                async with trio.open_nursery() as nursery:
                    port = await start_arena(nursery, arena)
                    address = f"127.0.0.1:{port}"
                    opponent = GreedyBot()
                    opponent.name = "greedy"
                    threads = [
                        _thread(partial(self.run_subject, bot, address)),
                        _thread(partial(sdk.run, opponent, address, matches=1)),
                    ]
                    out["result"] = await arena.play(_driver(tc, rules), ("subject", "greedy"),
                                                     show_up_s=20.0)
                    for t in threads:
                        await trio.to_thread.run_sync(t.join, 10.0)
                    nursery.cancel_scope.cancel()

        trio.run(main)
        result: MatchResult = out["result"]
        return result


def _thread(fn: Callable[[], object]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


class SdkOverGrpc(_OverGrpc):
    name = "sdk-over-grpc"

    def run_subject(self, bot: sdk.Bot, address: str) -> None:
        sdk.run(bot, address, matches=1)


class RawProtobuf(_OverGrpc):
    name = "raw-protobuf"

    def run_subject(self, bot: sdk.Bot, address: str) -> None:
        run_raw(bot, address)


SEATINGS: list[Seating] = [InProcess(), SdkOverGrpc(), RawProtobuf()]
