"""RandomBot: plays a uniformly random legal move at every decision (a baseline)."""

from __future__ import annotations

import random

from gin_arena_core.rules import Action, PlayerView
from gin_arena_sdk.bot import Bot


class RandomBot(Bot):
    """Uniformly random among ``view.legal``; ``seed`` makes it repeatable."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def decide(self, view: PlayerView) -> Action:
        return self._rng.choice(view.legal)


if __name__ == "__main__":
    from sample_bots import main

    main(RandomBot())
