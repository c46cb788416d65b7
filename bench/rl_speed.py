"""Steps per second of the training environment, beside OpenSpiel's and RLCard's gin rummy.

    python -m bench.rl_speed [--seconds 10]

Each plays random legal moves through its own public API for the given time (after a short
warm-up), one core, and counts the decisions taken by agents (chance nodes and the
arena's own dealing are not counted as steps):

- gin-arena: ``arena.rl.env.GinRummyEnv`` (PettingZoo AEC: ``last`` with the observation
  vector and mask, then ``step``), standard rules;
- OpenSpiel: ``pyspiel.load_game("gin_rummy")``, ``legal_actions`` and ``apply_action``,
  with ``observation_tensor`` read before each decision as a learner would (C++ engine
  through pybind11);
- RLCard: ``rlcard.make("gin-rummy")``, ``step`` with its state dict (pure Python).

Games do not have the same length in the three (OpenSpiel and RLCard play one hand per
episode, the arena a whole game to 100), so the figure is steps per second, not games.
A baseline that is not installed is reported as missing (``pip install open_spiel rlcard``).
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable

import numpy as np


def arena_steps(seconds: float) -> tuple[int, float]:
    from arena.rl.env import GinRummyEnv

    env = GinRummyEnv()
    env.reset(seed=1)
    pick = random.Random(1)
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        env.reset()
        for _ in env.agent_iter():
            obs, _, done, truncated, _ = env.last()
            if done or truncated:
                env.step(None)
                continue
            env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
            if steps % 256 == 0 and time.perf_counter() > deadline:
                break
    return steps, time.perf_counter() - start


def openspiel_steps(seconds: float) -> tuple[int, float]:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    pick = random.Random(1)
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(pick.choice(outcomes)[0])
                continue
            state.observation_tensor(state.current_player())
            state.apply_action(pick.choice(state.legal_actions()))
            steps += 1
    return steps, time.perf_counter() - start


def rlcard_steps(seconds: float) -> tuple[int, float]:
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": 1})
    pick = random.Random(1)
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(pick.choice(list(state["legal_actions"])))
            steps += 1
    return steps, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{args.seconds:g} s each, random legal moves, one core")
    runs: list[tuple[str, Callable[[float], tuple[int, float]]]] = [
        ("gin-arena GinRummyEnv (PettingZoo AEC)", arena_steps),
        ("OpenSpiel gin_rummy (C++ via pybind11)", openspiel_steps),
        ("RLCard gin-rummy (Python)", rlcard_steps),
    ]
    for name, run in runs:
        try:
            run(min(1.0, args.seconds / 5))  # warm-up
            steps, took = run(args.seconds)
        except ImportError as e:
            print(f"  {name:42} missing ({e.name}: pip install open_spiel rlcard)")
            continue
        print(f"  {name:42} {steps / took:10,.0f} steps/s  ({steps:,} steps)")


if __name__ == "__main__":
    main()
