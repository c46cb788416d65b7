"""A trained policy (examples/rl/train.py) as an ordinary SDK bot: ``arena play
examples/rl/policy_bot.py random``. It encodes the view it is given exactly as the training
environment did and plays the most likely legal move. ``POLICY`` names the weights file
(default: policy.npz beside this file)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from gin_arena_sdk import Action, Bot, PlayerView

from arena.rl.encode import action_mask, action_of, encode


class PolicyBot(Bot):
    name = "policy"

    def __init__(self) -> None:
        path = os.environ.get("POLICY") or Path(__file__).resolve().parent / "policy.npz"
        weights = np.load(path)
        self.W, self.b = weights["W"], weights["b"]

    def decide(self, view: PlayerView) -> Action:
        logits = self.W @ encode(view) + self.b
        logits = np.where(action_mask(view) > 0, logits, -np.inf)
        return action_of(view, int(np.argmax(logits)))
