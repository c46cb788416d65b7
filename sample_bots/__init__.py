"""Sample bots: ``RandomBot`` (a baseline), ``GreedyBot`` (least deadwood now, out at the first
chance) and ``StrongBot`` (tracks the cards, avoids feeding the opponent, weighs knock vs gin).

``BOTS`` maps the names ``arena play`` and ``gin_arena_sdk.launch`` use to the classes. Each
module also runs as a process: ``python -m sample_bots.greedy [HOST:PORT]`` (else
``ARENA_ADDRESS``; the token from ``ARENA_TOKEN``). The classes load on first use, so
running a module that way does not import it twice.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gin_arena_sdk.bot import Bot

    from sample_bots.greedy import GreedyBot
    from sample_bots.random_bot import RandomBot
    from sample_bots.strong import StrongBot

    BOTS: dict[str, type[Bot]]

__all__ = ["BOTS", "GreedyBot", "RandomBot", "StrongBot", "main"]

_MODULES = {
    "RandomBot": "sample_bots.random_bot",
    "GreedyBot": "sample_bots.greedy",
    "StrongBot": "sample_bots.strong",
}
_NAMES = {"random": "RandomBot", "greedy": "GreedyBot", "strong": "StrongBot"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name]), name)
    if name == "BOTS":
        bots = {key: __getattr__(cls) for key, cls in _NAMES.items()}
        globals()["BOTS"] = bots
        return bots
    raise AttributeError(f"module 'sample_bots' has no attribute {name!r}")


def main(bot: Bot, argv: list[str] | None = None) -> None:
    """Play ``bot`` at the arena named by ``argv[1]`` or ``ARENA_ADDRESS`` (token from
    ``ARENA_TOKEN``) until the arena has no more matches for it."""
    import os
    import sys

    from gin_arena_sdk import run

    args = sys.argv if argv is None else argv
    address = args[1] if len(args) > 1 else os.environ.get("ARENA_ADDRESS", "")
    if not address:
        raise SystemExit(f"usage: python {args[0] if args else 'BOT.py'} HOST:PORT "
                         "(or set ARENA_ADDRESS)")
    run(bot, address, token=os.environ.get("ARENA_TOKEN", ""))
