"""The training environment: PettingZoo's own API test on every preset, reproducible
episodes, observations that are the seat's view only, rewards that add up, and a trained
policy entered with ``arena play`` through the SDK unchanged."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install -e '.[rl]'")

from gin_arena_core.rules import PRESETS, observe
from pettingzoo.test import api_test

from arena.rl.encode import N_ACTIONS, action_index, action_mask, encode
from arena.rl.env import AGENTS, GinRummyEnv

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_pettingzoos_api_test_passes_on_every_preset(name: str) -> None:
    api_test(GinRummyEnv(rules=name), num_cycles=300)


def play(env: GinRummyEnv, seed: int, pick: random.Random) -> list[tuple[str, Any, float]]:
    """One episode with random legal moves: (agent, observation bytes, reward) per turn."""
    env.reset(seed=seed)
    out = []
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, done, truncated, _ = env.last()
        out.append((agent, obs["observation"].tobytes() + obs["action_mask"].tobytes(), reward))
        if done or truncated:
            env.step(None)
        else:
            env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def test_the_same_seed_replays_the_same_episode() -> None:
    a = play(GinRummyEnv(rules="oklahoma"), 11, random.Random(5))
    b = play(GinRummyEnv(rules="oklahoma"), 11, random.Random(5))
    c = play(GinRummyEnv(rules="oklahoma"), 12, random.Random(5))
    assert a == b and a != c


def test_an_observation_is_the_seats_view_and_nothing_hidden() -> None:
    env = GinRummyEnv()
    env.reset(seed=3)
    pick = random.Random(2)
    checked = 0
    for _ in range(400):
        agent = env.agent_selection
        obs, _, done, _, info = env.last()
        if done:
            break
        seat = AGENTS.index(agent)
        driver = env._driver
        assert driver is not None and driver.game.hand is not None
        game, state = driver.game, driver.game.hand
        view = observe(state, seat, scores=game.scores, hand_number=game.hand_number,
                       sheets=game.sheets)
        assert info["view"] == view
        assert np.array_equal(obs["observation"], encode(view))
        # the stock in another order (hidden from both seats): the same observation
        undrawn = list(state.deck[state.stock_pos:])
        shuffled = state._replace(deck=state.deck[:state.stock_pos] + tuple(reversed(undrawn)))
        again = observe(shuffled, seat, scores=game.scores, hand_number=game.hand_number,
                        sheets=game.sheets)
        assert np.array_equal(encode(again), obs["observation"])
        other = env.observe(AGENTS[1 - seat])
        assert not other["action_mask"].any()  # only the seat to act has moves
        checked += 1
        env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked == 400


@pytest.mark.parametrize("reward", ["game", "hand"])
def test_rewards_are_zero_sum_and_the_game_reward_names_the_winner(reward: str) -> None:
    env = GinRummyEnv(reward=reward)
    env.reset(seed=8)
    totals = dict.fromkeys(AGENTS, 0.0)
    greedy_like = random.Random(4)
    for agent in env.agent_iter(max_iter=50_000):
        obs, r, done, truncated, info = env.last()
        totals[agent] += r
        if done or truncated:
            result = info["result"]
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        outs = [a for a in legal if a >= 56]  # knock or gin when it can: games end
        env.step(int(outs[0] if outs else greedy_like.choice(legal)))
    assert abs(totals["player_0"] + totals["player_1"]) < 1e-9
    if reward == "game":
        assert result.winner is not None
        assert totals[AGENTS[result.winner]] == 1.0
    else:
        assert any(totals.values())


def test_an_illegal_index_is_refused_naming_the_legal_ones() -> None:
    env = GinRummyEnv()
    env.reset(seed=1)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="is not legal now"):
        env.step(illegal)
    assert obs["action_mask"].shape == (N_ACTIONS,)


def test_every_legal_move_has_its_own_index() -> None:
    env = GinRummyEnv(rules="big_gin")
    env.reset(seed=5)
    pick = random.Random(9)
    for _ in range(2000):
        obs, _, done, _, info = env.last()
        if done:
            break
        view = info["view"]
        assert sorted(action_index(a) for a in view.legal) == sorted(
            np.flatnonzero(action_mask(view)))
        env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))


def test_a_trained_policy_plays_through_arena_play_unchanged(tmp_path: Path) -> None:
    policy = tmp_path / "policy.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POLICY": str(policy)}
    train = subprocess.run(
        [sys.executable, "examples/rl/train.py", "--episodes", "20", "--out", str(policy)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    assert train.returncode == 0, train.stderr
    assert policy.is_file()
    ran = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "examples/rl/policy_bot.py", "random",
         "--games", "2", "--seed", "rl", "--replays", str(tmp_path / "run")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    assert ran.returncode == 0, ran.stderr
    assert "policy " in ran.stdout and "problems" not in ran.stdout
