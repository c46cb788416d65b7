"""Playing matches by calling Python bots directly, in this process or a pool worker.

Kept light (no gRPC, no trio) so pool workers start fast. An exception raised by a bot
forfeits its seat (``disconnect``, "bot crashed"); any other exception is the arena's own
fault and voids the match (``arena_error``). Time is not enforced: a bot that never
returns stalls its worker (use process mode for untrusted bots).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, cast

from arena.match.driver import MatchDriver
from arena.match.local import play_local
from arena.match.messages import MatchResult, Termination, TimeControl
from arena.rules import Action, RulesConfig
from arena.rules.actions import ACTION_TYPES
from arena.tournament.formats import MatchSpec


class BotCrashed(Exception):
    """An in-process bot raised: its seat forfeits."""

    def __init__(self, seat: int, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.seat = seat


class _Guard:
    """An in-process bot seen through ``play_local``: its exceptions become BotCrashed."""

    def __init__(self, bot: Any, seat: int) -> None:
        self._bot = bot
        self._seat = seat
        self.name: str = bot.name

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._bot, method)(*args)
        except Exception as e:
            raise BotCrashed(self._seat, e) from e

    def decide(self, view: Any) -> Action:
        action = self._call("decide", view)
        # anything but an action becomes None, which play_local refuses like a bad move
        return cast(Action, action if isinstance(action, ACTION_TYPES) else None)

    def on_match_start(self, info: Any) -> None:
        self._call("on_match_start", info)

    def on_event(self, event: Any) -> None:
        self._call("on_event", event)

    def on_hand_end(self, result: Any, scores: tuple[int, int]) -> None:
        self._call("on_hand_end", result, scores)

    def on_match_end(self, result: Any) -> None:
        self._call("on_match_end", result)

    def on_rejected(self, view: Any, code: str, reason: str) -> Action | None:
        action = self._call("on_rejected", view, code, reason)
        return cast(Action, action) if isinstance(action, ACTION_TYPES) else None


class InProcessPlayer:
    """Plays matches by calling Python bots directly (one instance per bot, reused)."""

    def __init__(self, specs: dict[str, str], rules: RulesConfig, time_control: TimeControl,
                 want_record: bool) -> None:
        from sdk.launch import load_bot_class

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
            bots = (_Guard(self._bot(spec.seats[0]), 0), _Guard(self._bot(spec.seats[1]), 1))
            result = play_local(driver, bots)
        except BotCrashed as crash:
            result = driver.forfeit(crash.seat, Termination.DISCONNECT,
                                    f"bot crashed: {crash}")
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


__all__ = ["BotCrashed", "InProcessPlayer", "init_worker", "play_in_worker"]
