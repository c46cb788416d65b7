"""Rules configuration: every option the rule books name, and named presets.

Each option cites the seed document (``shared/seeds/NNN_*.txt``) it comes from; docs/rules.md
lists them all with defaults. ``RulesConfig.from_spec({"preset": "oklahoma", "target": 200})``
builds a preset with overrides; ``to_json`` / ``from_json`` round-trip through plain JSON so
a tournament file can name a rule set.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from gin_arena_core.rules.errors import Code, MalformedError

_DEFAULT_KNOCK_LIMIT = 10


class NextDealer(StrEnum):
    LOSER = "loser"  # seeds 000, 004: the loser of each hand deals next
    ALTERNATE = "alternate"  # seeds 001, 002: the deal alternates


class Shutout(StrEnum):
    DOUBLE_ALL = "double_all"  # seed 000 (and 002's variant): winner's whole score doubles
    DOUBLE_GAME_BONUS = "double_game_bonus"  # seed 002: game bonus 100 becomes 200
    NONE = "none"


class KnockScore(StrEnum):
    DIFFERENCE = "difference"  # seeds 000, 001, 002, 003 (io): knocker scores the difference
    DEFENDER_DEADWOOD = "defender_deadwood"  # seed 003 (Oklahoma Gin): opponent's whole count


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """A complete rule set. Defaults are seed 000 (classic two-player rules)."""

    preset: str = "standard"
    # --- knocking
    knock_limit: int = _DEFAULT_KNOCK_LIMIT  # seed 000: deadwood after a discard at most 10
    oklahoma: bool = False  # seeds 001, 003: the upcard's value sets the knock limit
    oklahoma_ace_gin_only: bool = True  # seeds 001, 004: an ace knock card means gin only
    oklahoma_spade_doubles: bool = True  # seed 001: a spade upcard doubles the hand score
    knock_deck: bool = False  # seed 004: a separate knock card per hand sets the limit
    # --- deal and play
    eleven_card_deal: bool = False  # seeds 001, 002, 004: non-dealer gets 11, no upcard
    allow_take_back: bool = False  # seed 002: GRA rules allow discarding the card just taken
    discard_pile_visible: bool = True  # seed 000: players may look through the discard pile
    wall_take_discard: bool = False  # seeds 002, 004: last discard may be taken to knock/gin
    wall_take_back: bool = False  # seed 002 (Game Colony): ...and that same card thrown back
    runs_only: bool = False  # seed 003: Sequence Gin melds runs only
    big_gin: bool = False  # seed 003: 11 melded cards after the draw, no discard
    # --- hand scoring
    gin_bonus: int = 25  # seed 000 (001: 25; 002/003: 20)
    undercut_bonus: int = 20  # seed 000 (001: 25; 002: 10; 003: 10/20/25)
    big_gin_bonus: int = 31  # seed 003 (25/31/50)
    knock_score: KnockScore = KnockScore.DIFFERENCE
    sequence_bonuses: bool = False  # seed 003: +1 per card of a 6+ run, +1 per face card in runs
    # --- game scoring
    target: int = 100  # seed 000 (150/200/300); 001 Oklahoma 150; 003 100/250/500
    game_bonus: int = 100  # seeds 000, 002
    box_bonus: int = 25  # seed 000 (002: 20); not counted toward the target
    gin_extra_boxes: int = 0  # seed 000: "an extra box or two" for a gin
    undercut_extra_boxes: int = 0  # seed 000: ... or an undercut
    shutout: Shutout = Shutout.DOUBLE_ALL  # seed 000 (002: double the game bonus)
    next_dealer: NextDealer = NextDealer.LOSER  # seed 000, 004 (001, 002: alternate)
    hollywood: bool = False  # seed 000: three games scored at once
    # --- safety
    max_hands: int = 500  # a game ends (undecided) after this many hands, walls included

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not 0 <= self.knock_limit <= 100:
            problems.append("knock_limit must be 0..100 (0 = gin only)")
        if self.oklahoma and self.knock_deck:
            problems.append("oklahoma and knock_deck both set the knock limit: choose one")
        if (self.oklahoma or self.knock_deck) and self.knock_limit != _DEFAULT_KNOCK_LIMIT:
            problems.append("knock_limit has no effect when oklahoma or knock_deck sets the "
                            "limit from a card: leave it out")
        if self.oklahoma and self.eleven_card_deal:
            problems.append("oklahoma needs an upcard; with eleven_card_deal use knock_deck")
        if self.wall_take_back and not self.wall_take_discard:
            problems.append("wall_take_back needs wall_take_discard")
        for name in ("gin_bonus", "undercut_bonus", "big_gin_bonus", "game_bonus",
                     "box_bonus", "gin_extra_boxes", "undercut_extra_boxes"):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0")
        if self.target < 1:
            problems.append("target must be >= 1")
        if self.max_hands < 1:
            problems.append("max_hands must be >= 1")
        if problems:
            raise MalformedError(Code.BAD_OPTION, "bad rules: " + "; ".join(problems))

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> RulesConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise MalformedError(Code.BAD_OPTION, f"rules JSON does not parse: {e}") from None
        if not isinstance(data, dict):
            raise MalformedError(Code.BAD_OPTION, "rules JSON must be an object")
        return RulesConfig.from_spec(data)

    @staticmethod
    def from_spec(spec: dict[str, Any] | str) -> RulesConfig:
        """A preset name, or a dict with an optional ``"preset"`` and overrides."""
        if isinstance(spec, str):
            spec = {"preset": spec}
        spec = dict(spec)
        name = spec.pop("preset", "standard")
        if name not in PRESETS and isinstance(name, str) and set(spec) >= _OPTION_NAMES:
            # a complete configuration under a label of its own (e.g. a house rule set
            # saved with to_json): every option is given, so no preset is needed
            return RulesConfig(preset=name).with_options(**spec)
        base = preset(name)
        return base.with_options(**spec)

    def with_options(self, **options: Any) -> RulesConfig:
        """This config with some options changed; unknown names or bad types are refused."""
        known = {f.name: f for f in fields(self)}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise MalformedError(
                Code.BAD_OPTION,
                f"unknown rules option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
            )
        clean: dict[str, Any] = {}
        for key, value in options.items():
            clean[key] = _coerce(key, known[key].type, value)
        return dataclasses.replace(self, **clean)


_ENUMS: dict[str, type[StrEnum]] = {
    "KnockScore": KnockScore,
    "Shutout": Shutout,
    "NextDealer": NextDealer,
}


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, StrEnum) else value


def _coerce(name: str, type_name: Any, value: Any) -> Any:
    t = str(type_name)
    if t in _ENUMS:
        try:
            return _ENUMS[t](value)
        except ValueError:
            allowed = ", ".join(e.value for e in _ENUMS[t])
            raise MalformedError(
                Code.BAD_OPTION, f"rules option {name}={value!r}: expected one of {allowed}"
            ) from None
    expected: type = {"bool": bool, "int": int, "str": str}[t]
    ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
    if not ok:
        raise MalformedError(
            Code.BAD_OPTION, f"rules option {name}={value!r}: expected {expected.__name__}"
        )
    return value


_STANDARD = RulesConfig()
_OPTION_NAMES = frozenset(f.name for f in fields(RulesConfig)) - {"preset"}

PRESETS: dict[str, tuple[str, RulesConfig]] = {
    "standard": ("seed 000: classic rules, gin 25, undercut 20, box 25, loser deals", _STANDARD),
    "gin25": (
        "seed 001: gin 25, undercut 25, the deal alternates",
        dataclasses.replace(_STANDARD, preset="gin25", undercut_bonus=25,
                            next_dealer=NextDealer.ALTERNATE),
    ),
    "gin20": (
        "seed 002: gin 20, undercut 10, box 20, shutout doubles the game bonus, the deal "
        "alternates (its 'some play' wall variant: wall_take_discard, wall_take_back)",
        dataclasses.replace(_STANDARD, preset="gin20", gin_bonus=20, undercut_bonus=10,
                            box_bonus=20, shutout=Shutout.DOUBLE_GAME_BONUS,
                            next_dealer=NextDealer.ALTERNATE),
    ),
    "oklahoma": (
        "seed 001: upcard sets the knock limit, ace = gin only, spade doubles, to 150",
        dataclasses.replace(_STANDARD, preset="oklahoma", oklahoma=True, target=150,
                            undercut_bonus=25, next_dealer=NextDealer.ALTERNATE),
    ),
    "knock_deck": (
        "seed 004: 11-card deal, separate knock card per hand, loser deals, "
        "last discard may be taken at the wall (not thrown back), only the top discard shows",
        dataclasses.replace(_STANDARD, preset="knock_deck", knock_deck=True,
                            eleven_card_deal=True, wall_take_discard=True,
                            discard_pile_visible=False),
    ),
    "eleven_card": (
        "seeds 001, 002: non-dealer gets 11 cards, no upcard",
        dataclasses.replace(_STANDARD, preset="eleven_card", eleven_card_deal=True),
    ),
    "sequence": (
        "seed 003: Sequence Gin: runs only, long-run and face-card bonuses, upcard knock limit, "
        "gin 20, under-knock 20, knocker scores the opponent's count",
        dataclasses.replace(_STANDARD, preset="sequence", runs_only=True, sequence_bonuses=True,
                            oklahoma=True, oklahoma_spade_doubles=False, gin_bonus=20,
                            knock_score=KnockScore.DEFENDER_DEADWOOD,
                            discard_pile_visible=False),
    ),
    "big_gin": (
        "seed 003 (online rules): gin 25, big gin 31, undercut 10",
        dataclasses.replace(_STANDARD, preset="big_gin", big_gin=True, big_gin_bonus=31,
                            undercut_bonus=10),
    ),
    "hollywood": (
        "seed 000: Hollywood scoring, three games at once",
        dataclasses.replace(_STANDARD, preset="hollywood", hollywood=True),
    ),
}


def preset(name: str) -> RulesConfig:
    """The named preset; ``MalformedError`` listing the names if unknown."""
    try:
        return PRESETS[name][1]
    except KeyError:
        raise MalformedError(
            Code.BAD_OPTION, f"unknown rules preset {name!r}; known: {', '.join(PRESETS)}"
        ) from None
