"""Playing matches by calling Python bots directly, in the worker's own process.

A bot's own failures are judged by ``play_local`` as over gRPC (bot errors, refusals, time
after the fact); any exception that escapes it is the arena's own fault and voids the match
(``arena_error``). A bot that never returns stalls its worker: trusted bots only (launched
bots for the others).
"""

from __future__ import annotations

from typing import Any

import trio
from gin_arena_core.rules import RulesConfig

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.match.spec import MatchSpec
from arena.series.plan import Plan


class InProcessPlayer:
    """Plays matches by calling Python bots directly (one instance per bot, reused)."""

    def __init__(self, specs: dict[str, str], rules: RulesConfig, time_control: TimeControl,
                 want_record: bool) -> None:
        from arena.botspec import load_bot_class

        self.classes = {name: load_bot_class(spec) for name, spec in specs.items()}
        self.rules = rules
        self.time_control = time_control
        self.want_record = want_record
        self._bots: dict[str, Any] = {}

    def _bot(self, name: str) -> Any:
        bot = self._bots.get(name)
        if bot is None:
            bot = self._bots[name] = self.classes[name]()
            bot.name = name
        return bot

    def play(self, spec: MatchSpec) -> tuple[MatchResult, list[dict[str, Any]] | None]:
        driver = MatchDriver(spec.match_id, self.rules, spec.seats, seed=spec.seed,
                             time_control=self.time_control,
                             meta={"deal": spec.deal, "seat_order": spec.order})
        try:
            result = play_local(driver, (self._bot(spec.seats[0]), self._bot(spec.seats[1])))
        except Exception as e:  # our own fault: void this match only
            result = driver.abort(Termination.ARENA_ERROR, f"{type(e).__name__}: {e}")
        return result, driver.record if self.want_record else None


class InProcessExecutor:
    """Plays one match at a time by calling the plan's Python bots directly, on a thread
    (so the worker's loop keeps committing and renewing leases meanwhile)."""

    slots = 1
    claim_batch = 4  # a match takes milliseconds: claim a few at a time

    def __init__(self, plan: Plan, want_record: bool) -> None:
        self.player = InProcessPlayer({b.name: b.spec for b in plan.bots}, plan.rules,
                                      plan.time_control, want_record)

    async def play(self, spec: MatchSpec) -> tuple[MatchResult, list[dict[str, Any]] | None]:
        """Cancellation: stops waiting; the match's thread runs on to its end unseen."""
        return await trio.to_thread.run_sync(self.player.play, spec, abandon_on_cancel=True)


__all__ = ["InProcessExecutor", "InProcessPlayer"]
