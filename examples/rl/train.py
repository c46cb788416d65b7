"""Train a small policy on the arena's own environment, then enter it with ``arena play``.

    pip install -e '.[rl]'
    python examples/rl/train.py --minutes 3            # writes examples/rl/policy.npz
    arena play examples/rl/policy_bot.py random --games 20

A linear softmax policy over ``arena.rl.encode``'s observation, trained by REINFORCE with a
running baseline, one hand's points as the return of that hand's decisions, against the
sample GreedyBot (or ``--opponent random``). Numpy only, CPU, minutes: a demonstration of
the loop (train on the exact view the arena gives, save, play through the SDK unchanged),
not a strong bot.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from gin_arena_sdk import MatchStarted, TimeControl

from arena.rl.encode import N_ACTIONS, OBS_SIZE, action_index
from arena.rl.env import AGENTS, GinRummyEnv
from sample_bots import GreedyBot, RandomBot

HERE = Path(__file__).resolve().parent


class Policy:
    """logits = W @ obs + b over the legal moves."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.W = rng.normal(0.0, 0.01, (N_ACTIONS, OBS_SIZE)).astype(np.float32)
        self.b = np.zeros(N_ACTIONS, dtype=np.float32)

    def probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = self.W @ obs + self.b
        logits = np.where(mask > 0, logits, -np.inf)
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def save(self, path: Path) -> None:
        np.savez(path, W=self.W, b=self.b)


def train(minutes: float, episodes: int, opponent: str, seed: int, out: Path,
          rules: str = "standard") -> dict[str, float]:
    rng = np.random.default_rng(seed)
    policy = Policy(rng)
    env = GinRummyEnv(rules=rules, reward="hand")
    env.reset(seed=seed)
    other = GreedyBot() if opponent == "greedy" else RandomBot()
    lr, baseline = 0.02, 0.0
    deadline = time.monotonic() + minutes * 60
    played = won = 0
    while played < episodes and time.monotonic() < deadline:
        env.reset()
        learner = AGENTS[played % 2]  # both seats, in turn
        other.on_match_start(MatchStarted("train", 1 - AGENTS.index(learner), env.rules,
                                          TimeControl(), "learner"))
        trajectory: list[tuple[np.ndarray, np.ndarray, int]] = []
        for agent in env.agent_iter():
            obs, reward, done, truncated, info = env.last()
            if agent == learner and reward and trajectory:
                # the hand just scored: push its decisions toward (or away from) their moves
                advantage = reward - baseline
                baseline += 0.05 * (reward - baseline)
                grad_w = np.zeros_like(policy.W)
                grad_b = np.zeros_like(policy.b)
                for x, mask, a in trajectory:
                    p = policy.probs(x, mask)
                    g = -p
                    g[a] += 1.0
                    grad_w += np.outer(g, x)
                    grad_b += g
                policy.W += lr * advantage * grad_w / len(trajectory)
                policy.b += lr * advantage * grad_b / len(trajectory)
                trajectory = []
            if done or truncated:
                env.step(None)
                continue
            if agent == learner:
                p = policy.probs(obs["observation"], obs["action_mask"])
                a = int(rng.choice(N_ACTIONS, p=p))
                trajectory.append((obs["observation"], obs["action_mask"], a))
                env.step(a)
            else:
                env.step(action_index(other.decide(info["view"])))
        result = env.infos.get(learner, {}).get("result") if env.infos else None
        played += 1
        won += result is not None and result.winner == AGENTS.index(learner)
    policy.save(out)
    return {"episodes": played, "win_rate": won / max(1, played)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    ap.add_argument("--episodes", type=int, default=10**9, help="at most this many games")
    ap.add_argument("--opponent", choices=("greedy", "random"), default="greedy")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=HERE / "policy.npz")
    args = ap.parse_args()
    stats = train(args.minutes, args.episodes, args.opponent, args.seed, args.out)
    print(f"{stats['episodes']:.0f} games, won {stats['win_rate']:.1%} while training; "
          f"policy in {args.out}")


if __name__ == "__main__":
    main()
