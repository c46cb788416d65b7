"""The rules of Gin Rummy: pure, deterministic, no I/O, no clock, no randomness.

The deck order comes in; ``deal`` -> ``legal_actions`` / ``apply`` -> ``HandResult``;
``observe`` is the one place that decides what a seat may see. See docs/rules.md.
"""

from gin_arena_core.rules.actions import (
    Action,
    BigGin,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    Knock,
    Pass,
    TakeUpcard,
    parse_action,
)
from gin_arena_core.rules.cards import CARDS, Card, parse_card, parse_cards
from gin_arena_core.rules.config import (
    PRESETS,
    KnockScore,
    NextDealer,
    RulesConfig,
    Shutout,
    preset,
)
from gin_arena_core.rules.errors import Code, IllegalActionError, MalformedError, RuleError
from gin_arena_core.rules.game import (
    GameOutcome,
    GameState,
    Sheet,
    SheetTotal,
    apply_action,
    deal_hand,
    enter_result,
    game_outcome,
    new_game,
    total_sheet,
)
from gin_arena_core.rules.hand import (
    PHASE_ACTIONS,
    HandResult,
    HandState,
    KnockInfo,
    Phase,
    PublicEvent,
    apply,
    deal,
    is_legal,
    legal_actions,
)
from gin_arena_core.rules.helpers import layoff_cards
from gin_arena_core.rules.melds import Meld, best_melds, can_lay_off, min_deadwood
from gin_arena_core.rules.view import PlayerView, observe

__all__ = [
    "CARDS", "PHASE_ACTIONS", "PRESETS", "Action", "BigGin", "Card", "Code", "Defend",
    "Discard", "DrawDiscard", "DrawStock", "GameOutcome", "GameState", "Gin", "HandResult",
    "HandState", "IllegalActionError", "Knock", "KnockInfo", "KnockScore", "MalformedError",
    "Meld", "NextDealer", "Pass", "Phase", "PlayerView", "PublicEvent", "RuleError",
    "RulesConfig", "Sheet", "SheetTotal", "Shutout", "TakeUpcard", "apply", "apply_action",
    "best_melds", "can_lay_off", "deal", "deal_hand", "enter_result", "game_outcome", "is_legal",
    "layoff_cards", "legal_actions", "min_deadwood", "new_game", "observe", "parse_action",
    "parse_card", "parse_cards", "preset", "total_sheet",
]
