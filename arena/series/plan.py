"""What a worker needs to play a scope's matches: rules, time control, bots, how to seat them.

A front end (a tournament, ``arena play``) writes its ``Plan`` into the scope's stored
config (key ``plan``), so any worker on any host that can reach the store reads it and
plays that scope's queued matches the same way. A bot with a spec is launched by the
worker that hosts its match (or called in-process); a bot without one is *remote*: it
connects itself with its token to the coordinator's own worker, so a plan with remote
bots is played there only, and the tokens never reach the store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gin_arena_core.rules import RulesConfig

from arena.match.messages import TimeControl

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
"""A bot's name: it names files (logs) and appears in every table."""


class PlanError(ValueError):
    """A stored plan that cannot be read (one line)."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot of the plan. ``spec`` empty: remote, connecting with ``token``."""

    name: str
    spec: str = ""
    token: str = ""  # remote bots only; never stored
    sessions: int = 1  # remote bots: matches it plays at once (its open sessions)

    @property
    def is_remote(self) -> bool:
        return not self.spec


@dataclass(frozen=True, slots=True)
class Plan:
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    bots: tuple[Entrant, ...] = ()
    in_process: bool = False  # call trusted Python bots directly, no network
    show_up_s: float = 30.0  # how long a match waits for a bot to connect
    rated: bool = True  # keep live ratings
    host: str = "127.0.0.1"  # where the hosting worker's arena listens
    port: int = 0  # 0: any free port (remote bots need a fixed one)
    replays: str = ""  # directory for replays ("" : none); a worker may override it

    @property
    def has_remote(self) -> bool:
        return any(b.is_remote for b in self.bots)

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON, without remote bots' tokens."""
        return {
            "rules": self.rules.to_dict(), "time_control": self.time_control.to_dict(),
            "bots": [{"name": b.name, "spec": b.spec, "sessions": b.sessions}
                     for b in self.bots],
            "in_process": self.in_process, "show_up_s": self.show_up_s, "rated": self.rated,
            "host": self.host, "port": self.port, "replays": self.replays,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """``PlanError`` naming what is wrong."""
        bots = data.get("bots") if isinstance(data, Mapping) else None
        for b in bots if isinstance(bots, list) else []:
            name = b.get("name") if isinstance(b, Mapping) else None
            if not isinstance(name, str) or not NAME_RE.match(name):
                raise PlanError(f"the scope's stored plan names a bot {name!r}: letters, "
                                "digits and _.+- only")
        try:
            return cls(
                rules=RulesConfig.from_spec(data["rules"]),
                time_control=TimeControl(**data["time_control"]),
                bots=tuple(Entrant(str(b["name"]), str(b.get("spec", "")),
                                   sessions=int(b.get("sessions", 1))) for b in data["bots"]),
                in_process=bool(data.get("in_process", False)),
                show_up_s=float(data.get("show_up_s", 30.0)),
                rated=bool(data.get("rated", True)), host=str(data.get("host", "127.0.0.1")),
                port=int(data.get("port", 0)), replays=str(data.get("replays", "")))
        except (KeyError, TypeError, ValueError) as e:
            raise PlanError(f"the scope's stored plan is not readable: {e!r}") from None


__all__ = ["NAME_RE", "Entrant", "Plan", "PlanError"]
