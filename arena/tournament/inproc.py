"""Playing matches by calling Python bots directly, in this process or a pool worker.

Kept light (no gRPC, no trio) so pool workers start fast. A bot's own failures are judged
by ``play_local`` as over gRPC (bot errors, refusals, time after the fact); any exception
that escapes it is the arena's own fault and voids the match (``arena_error``). A bot that
never returns stalls its worker: trusted bots only (process mode for the others).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.rules import RulesConfig
from arena.tournament.formats import MatchSpec


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


_WORKER: InProcessPlayer | None = None


def init_worker(specs: dict[str, str], rules: RulesConfig, tc: TimeControl, want_record: bool,
                 parent: int, path: list[str]) -> None:
    global _WORKER
    sys.path[:] = path
    _WORKER = InProcessPlayer(specs, rules, tc, want_record)

    def watch_parent() -> None:  # a killed runner must not leave its workers behind
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()


def play_in_worker(spec: MatchSpec) -> tuple[MatchResult, list[dict[str, Any]] | None]:
    assert _WORKER is not None
    return _WORKER.play(spec)


def play_batch_in_worker(specs: list[MatchSpec]
                         ) -> list[tuple[MatchResult, list[dict[str, Any]] | None]]:
    """Several matches in one round trip to the worker (less pickling and waking)."""
    assert _WORKER is not None
    return [_WORKER.play(spec) for spec in specs]


__all__ = ["InProcessPlayer", "init_worker", "play_batch_in_worker", "play_in_worker"]
