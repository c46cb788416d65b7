"""gin-arena SDK: write a bot as a small class, run it against an arena.

    from gin_arena_sdk import Bot, Discard, run

    class MyBot(Bot):
        name = "mine"
        def discard(self, view): ...

    run(MyBot(), "127.0.0.1:50051")

Thin on purpose: importing it loads the rules helpers and the protocol's records only
(no trio, no structlog, nothing of the arena's host side). Card and meld logic comes from
``gin_arena_core.rules`` and the records a bot's hooks are given from
``gin_arena_core.protocol.records``; both are re-exported here.
"""

from gin_arena_core.protocol.records import (
    BotEvent,
    MatchOutcome,
    MatchStarted,
    MoveDefaulted,
    Notice,
    OpponentActed,
    TimeControl,
)
from gin_arena_core.rules import (
    CARDS,
    Action,
    BigGin,
    Card,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    HandResult,
    Knock,
    Meld,
    Pass,
    Phase,
    PlayerView,
    PublicEvent,
    TakeUpcard,
    best_melds,
    can_lay_off,
    layoff_cards,
    min_deadwood,
    parse_card,
    parse_cards,
)
from gin_arena_core.rules.melds import deadwood_after_discard

from gin_arena_sdk.bot import Bot

__all__ = [
    "CARDS", "Action", "BigGin", "Bot", "BotEvent", "Card", "Defend", "Discard", "DrawDiscard",
    "DrawStock", "Gin", "HandResult", "Knock", "MatchOutcome", "MatchStarted", "Meld",
    "MoveDefaulted", "Notice", "OpponentActed", "Pass", "Phase", "PlayerView", "PublicEvent",
    "TakeUpcard", "TimeControl", "best_melds", "can_lay_off", "deadwood_after_discard",
    "layoff_cards", "min_deadwood", "parse_card", "parse_cards", "run",
]


def run(bot: Bot, address: str, *, token: str = "", matches: int = 0,
        tls: bool = False, tls_ca: bytes | None = None) -> int:
    """Connect to the arena at ``address`` and play until it has no more matches for this bot
    (or ``matches`` matches, if > 0). Returns the number of matches played. ``tls=True``
    connects over TLS trusting the system's CAs; ``tls_ca`` (PEM bytes) trusts that CA."""
    from gin_arena_sdk.client import run as _run

    return _run(bot, address, token=token, matches=matches, tls=tls, tls_ca=tls_ca)
