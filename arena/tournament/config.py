"""Tournament configuration: a TOML file (or the same fields from flags), checked up front.

Every problem is one line naming the file, the table and the key (``ConfigError``), so a
typo never starts a run. The parts that decide what a match *is* (seed, rules, time
control) make the config hash and with the name the scope; matches are keyed by the scope,
so rerunning the same config resumes instead of starting over, and a changed config never
mixes with old results. A config without a seed gets one when it first runs (see
``arena.tournament.runner``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from gin_arena_core.rules import RuleError, RulesConfig

from arena.botspec import entrant_names
from arena.match.messages import TimeControl
from arena.series.coordinator import default_workers
from arena.series.plan import NAME_RE
from arena.store import is_url


class ConfigError(ValueError):
    """A bad tournament config: the message is one line saying where and what."""


class Format(StrEnum):
    ROUND_ROBIN = "round_robin"  # every pair meets
    GAUNTLET = "gauntlet"  # one challenger against each bot of a field
    SPRT = "sprt"  # two bots until a sequential test decides


class Mode(StrEnum):
    PROCESS = "process"  # bots are processes (or remote) and play over gRPC
    IN_PROCESS = "in_process"  # Python bots are called directly: no network, no time limits


E = TypeVar("E", bound=StrEnum)

SECRET_RE = re.compile(r"^[0-9a-f]{32,128}$")


def weak_seed(seed: str) -> str:
    """Why ``seed`` is easy to guess ("" if it looks random): fewer than 16 characters, or
    fewer than 10 distinct ones."""
    if len(seed) < 16:
        return f"it has {len(seed)} characters (fewer than 16)"
    if len(set(seed)) < 10:
        return f"it has only {len(set(seed))} distinct characters"
    return ""


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A tournament entrant. ``spec`` empty means a remote bot that connects with ``token``."""

    name: str
    spec: str = ""
    token: str = ""
    sessions: int = 1  # remote bots: matches it plays at once (its open sessions)

    @property
    def is_remote(self) -> bool:
        return not self.spec


@dataclass(frozen=True, slots=True)
class SprtConfig:
    """H0: A is ``elo0`` stronger than B; H1: at least ``elo1``; error rates alpha, beta."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    max_deals: int = 2000  # stop undecided after this many duplicate deals

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ConfigError(f"[sprt] elo1 ({self.elo1}) must be greater than elo0 "
                              f"({self.elo0})")
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if not 0 < value < 0.5:
                raise ConfigError(f"[sprt] {key} must be between 0 and 0.5, not {value}")
        if self.max_deals < 1:
            raise ConfigError(f"[sprt] max_deals must be at least 1, not {self.max_deals}")


def default_concurrency(mode: Mode) -> int:
    """Matches at once that fit this machine."""
    cpus = os.cpu_count() or 2
    return cpus if mode is Mode.IN_PROCESS else max(1, min(8, cpus * 2))


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    name: str
    format: Format
    bots: tuple[BotEntry, ...]
    seed: str  # "": made (or, resuming, read from the store) when the tournament runs
    deals: int = 10  # duplicate deals per pairing (each played twice, seats swapped)
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    mode: Mode = Mode.PROCESS
    concurrency: int = 0  # matches at once in all; 0: fits the machine
    workers: int = -1  # local worker processes; -1: fits the machine; 0: none (the matches
    # are played by `arena worker` processes on other hosts)
    database: str = "tournament.sqlite"  # a SQLite file or a postgresql:// URL
    replays: Path | None = None
    show_up_s: float = 30.0  # how long a match waits for a bot to connect
    host: str = "127.0.0.1"  # where the embedded arena listens (process mode)
    port: int = 0  # 0: any free port (remote bots need a fixed one)
    challenger: str = ""  # gauntlet: the one bot that meets the field
    sprt: SprtConfig = field(default_factory=SprtConfig)
    secret: str = ""  # deal secret; "": made for a new scope and kept in the store

    def __post_init__(self) -> None:
        names = [b.name for b in self.bots]
        if len(names) < 2:
            raise ConfigError("a tournament needs at least two bots")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"bot name {dupes[0]!r} is used twice")
        if self.deals < 1:
            raise ConfigError(f"deals must be at least 1, not {self.deals}")
        if self.concurrency < 0:
            raise ConfigError(f"concurrency must be >= 0, not {self.concurrency}")
        if self.workers < -1:
            raise ConfigError(f"workers must be >= 0, not {self.workers}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be 0..65535, not {self.port}")
        if self.show_up_s <= 0:
            raise ConfigError(f"show_up_s must be > 0, not {self.show_up_s}")
        if self.format is Format.GAUNTLET and self.challenger not in names:
            raise ConfigError(f"gauntlet: challenger {self.challenger!r} is not one of the "
                              f"bots ({', '.join(names)})")
        if self.format is Format.SPRT and len(names) != 2:
            raise ConfigError(f"sprt compares exactly two bots, not {len(names)}")
        if self.secret and not SECRET_RE.match(self.secret):
            raise ConfigError("secret: 32 to 128 hex digits (e.g. from a database's "
                              "earlier run), or leave it out for a fresh one")
        folded = [n.casefold() for n in names]
        clash = sorted({n for n in names if folded.count(n.casefold()) > 1})
        if clash:
            raise ConfigError(f"bot names {clash[0]!r} and {clash[1]!r} differ only in case")
        if self.mode is Mode.IN_PROCESS:
            remote = [b.name for b in self.bots if b.is_remote]
            if remote:
                raise ConfigError(f"mode in_process cannot have remote bot {remote[0]!r}")
        remote = [b.name for b in self.bots if b.is_remote]
        if remote and self.workers == 0:
            raise ConfigError(f"workers = 0 cannot play remote bot {remote[0]!r}: remote bots "
                              "connect to this machine's one worker, on host:port")

    @property
    def local_workers(self) -> int:
        """Worker processes on this machine (the configured number, or what fits it; in
        process, one per match at once)."""
        if self.workers >= 0:
            return self.workers
        if self.mode is Mode.IN_PROCESS:
            return self.concurrency or default_workers(in_process=True)
        return default_workers(in_process=False)

    @property
    def slots(self) -> int:
        """Matches at once per worker."""
        if self.mode is Mode.IN_PROCESS:
            return 1
        total = self.concurrency or default_concurrency(self.mode)
        return max(1, -(-total // max(1, self.local_workers)))

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]

    def identity(self) -> dict[str, Any]:
        """What decides a match's deals and conditions (hashed into every match id); for
        an SPRT also the pair it tests, so another pair never inherits its verdict."""
        tc = self.time_control.to_dict()
        out: dict[str, Any] = {"seed": self.seed, "rules": self.rules.to_dict(),
                               "time_control": tc}
        if self.format is Format.SPRT:
            out["sprt_pair"] = self.names
        return out

    @property
    def config_hash(self) -> str:
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def scope(self) -> str:
        """This tournament's key in the store: its name and config hash."""
        return f"{self.name}@{self.config_hash[:12]}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description (stored with the results)."""
        return {
            "name": self.name, "format": str(self.format), "seed": self.seed,
            "deals": self.deals, "mode": str(self.mode), "challenger": self.challenger,
            "bots": [{"name": b.name, "spec": b.spec, "remote": b.is_remote,
                      **({"sessions": b.sessions} if b.is_remote else {})}
                     for b in self.bots],
            "sprt": {f.name: getattr(self.sprt, f.name) for f in fields(self.sprt)},
            **self.identity(),
        }


# ---------------------------------------------------------------- reading TOML

_TOP = {"tournament", "rules", "time_control", "bots", "gauntlet", "sprt"}
_TOURNAMENT_KEYS = {"name", "format", "seed", "deals", "mode", "concurrency", "workers",
                    "database", "replays", "show_up_s", "host", "port", "secret"}
_TC_KEYS = set(TimeControl.__slots__)
_SPRT_KEYS = {f.name for f in fields(SprtConfig)}


def load_config(path: Path | None, *, tournament: Mapping[str, Any] | None = None,
                rules: Mapping[str, Any] | None = None,
                time_control: Mapping[str, Any] | None = None,
                bots: Sequence[str] | None = None,
                challenger: str | None = None) -> TournamentConfig:
    """Read and check a TOML config (or none: flags only); the keyword arguments (from
    flags) replace keys of its tables, ``bots`` (specs) replaces its [[bots]]."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML: {e}") from None
    for section, values in (("tournament", tournament), ("rules", rules),
                            ("time_control", time_control)):
        if values:
            table = data.get(section, {})
            if not isinstance(table, dict):
                table = {}
            data[section] = {**table, **{k: v for k, v in values.items() if v is not None}}
    if bots:
        data["bots"] = [{"spec": spec} for spec in bots]
    if challenger:
        gauntlet = data.get("gauntlet", {})
        data["gauntlet"] = {**(gauntlet if isinstance(gauntlet, dict) else {}),
                            "challenger": challenger}
    where = f"{path}: " if path is not None else ""
    try:
        return config_from_dict(data, base=path.parent if path is not None else Path("."),
                                default_name=path.stem if path is not None else "tournament")
    except ConfigError as e:
        raise ConfigError(f"{where}{e}") from None


def config_from_dict(data: Mapping[str, Any], *, base: Path = Path("."),
                     default_name: str = "tournament") -> TournamentConfig:
    """Build a config from parsed TOML (paths relative to ``base``); ``ConfigError`` if bad."""
    _known("the file", data, _TOP, "tables")
    t = dict(_table(data, "tournament"))
    _known("[tournament]", t, _TOURNAMENT_KEYS, "keys")
    name = _str(t, "tournament", "name", default_name)
    if not NAME_RE.match(name):
        raise ConfigError(f"[tournament] name {name!r}: use letters, digits and _.+- "
                          "(at most 64)")
    fmt = _enum(Format, t, "tournament", "format", Format.ROUND_ROBIN)
    mode = _enum(Mode, t, "tournament", "mode", Mode.PROCESS)
    seed = _str(t, "tournament", "seed", "")
    database = _str(t, "tournament", "database", f"{name}.sqlite")
    replays = _str(t, "tournament", "replays", "")

    rules_spec = dict(_table(data, "rules"))
    try:
        rules = RulesConfig.from_spec(rules_spec)
    except RuleError as e:
        raise ConfigError(f"[rules] {e.message}") from None

    tc_spec = dict(_table(data, "time_control"))
    _known("[time_control]", tc_spec, _TC_KEYS, "keys")
    try:
        tc = TimeControl(**tc_spec)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"[time_control] {e}") from None

    sprt_spec = dict(_table(data, "sprt"))
    _known("[sprt]", sprt_spec, _SPRT_KEYS, "keys")
    for key, value in sprt_spec.items():
        if key == "max_deals":
            _check_int(value, "sprt", key)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"[sprt] {key}: must be a number, not {value!r}")
    sprt = SprtConfig(**sprt_spec)

    gauntlet = _table(data, "gauntlet")
    _known("[gauntlet]", gauntlet, {"challenger"}, "keys")
    raw_bots = data.get("bots", [])
    if not isinstance(raw_bots, list) or not all(isinstance(b, dict) for b in raw_bots):
        raise ConfigError("[[bots]]: must be an array of tables ([[bots]] name = ..., "
                          "spec = ...)")
    bots = _bots(raw_bots)
    challenger = _str(gauntlet, "gauntlet", "challenger", bots[0].name if bots else "")

    return TournamentConfig(
        name=name, format=fmt, bots=tuple(bots), seed=seed,
        deals=_int(t, "tournament", "deals", 10),
        rules=rules, time_control=tc, mode=mode,
        concurrency=_int(t, "tournament", "concurrency", 0),
        workers=_int(t, "tournament", "workers", -1),
        database=database if is_url(database) or Path(database).is_absolute()
        else str(base / database),
        replays=None if not replays else (base / replays if not Path(replays).is_absolute()
                                          else Path(replays)),
        show_up_s=_float(t, "tournament", "show_up_s", 30.0),
        host=_str(t, "tournament", "host", "127.0.0.1"),
        port=_int(t, "tournament", "port", 0),
        challenger=challenger, sprt=sprt, secret=_str(t, "tournament", "secret", ""),
    )


def _bots(raw: list[dict[str, Any]]) -> list[BotEntry]:
    out: list[BotEntry] = []
    for i, b in enumerate(raw, 1):
        where = f"[[bots]] #{i}"
        _known(where, b, {"name", "spec", "token", "sessions"}, "keys")
        spec = _str(b, "", "spec", "", where=where).strip()
        token = _str(b, "", "token", "", where=where)
        name = _str(b, "", "name", "", where=where)
        if not spec and not token:
            raise ConfigError(f"{where}: give a spec (a bot to launch) or a token (a remote "
                              "bot that connects itself)")
        if not spec and not name:
            raise ConfigError(f"{where}: a remote bot needs a name")
        if token and len(token) < 8:
            raise ConfigError(f"{where} token: use at least 8 characters")
        sessions = b.get("sessions", 1)
        if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 1:
            raise ConfigError(f"{where} sessions: a whole number >= 1, not {sessions!r}")
        if spec and "sessions" in b:
            raise ConfigError(f"{where} sessions: only for a remote bot (no spec); launched "
                              "bots get as many processes as they need")
        if name and not NAME_RE.match(name):
            raise ConfigError(f"{where} name {name!r}: use letters, digits and _.+- "
                              "(at most 64)")
        out.append(BotEntry(name, spec, token, sessions))
    names = entrant_names([b.spec for b in out], [b.name for b in out])
    return [dataclasses.replace(b, name=n) for b, n in zip(out, names, strict=True)]


# ---------------------------------------------------------------- small checks


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{key}]: must be a table, not {type(value).__name__}")
    return value


def _known(where: str, table: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown {what[:-1]} {unknown[0]!r}; known: "
                          f"{', '.join(sorted(allowed))}")


def _str(table: Mapping[str, Any], section: str, key: str, default: str, *,
         where: str = "") -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"{where or f'[{section}]'} {key}: must be a string, not {value!r}")
    return value


def _check_int(value: Any, section: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"[{section}] {key}: must be a whole number, not {value!r}")
    return value


def _int(table: Mapping[str, Any], section: str, key: str, default: int) -> int:
    return _check_int(table.get(key, default), section, key)


def _float(table: Mapping[str, Any], section: str, key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"[{section}] {key}: must be a number, not {value!r}")
    return float(value)


def _enum(cls: type[E], table: Mapping[str, Any], section: str, key: str,
                      default: E) -> E:
    value = table.get(key, str(default))
    try:
        return cls(value)
    except ValueError:
        choices = ", ".join(str(m) for m in cls)
        raise ConfigError(f"[{section}] {key}: must be one of {choices}, not {value!r}") \
            from None


__all__ = ["BotEntry", "ConfigError", "Format", "Mode", "SprtConfig", "TournamentConfig",
           "config_from_dict", "load_config", "weak_seed"]
