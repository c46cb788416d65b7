"""Gin Rummy as a PettingZoo AEC environment: one whole game (a match) per episode.

Built on the arena's own ``MatchDriver``: the same seeded deals, rules (every preset and
option), scoring and game end as a contest, and every observation comes from
``gin_arena_core.rules.observe`` for the seat, through ``arena.rl.encode`` (nothing hidden leaks
into training). Agents are ``player_0`` and ``player_1`` (the seats). Each observation is
``{"observation": float32[OBS_SIZE], "action_mask": int8[N_ACTIONS]}``; the acting agent's
mask marks its legal moves, the other's is all zero. ``info["view"]`` holds the
``PlayerView`` itself, for code that wants the records. Rewards: ``"game"`` (+1 / -1 to the
winner / loser when the game ends, 0 for a draw) or ``"hand"`` (each hand's points, per
100, to its winner and against its loser, zero-sum). ``reset(seed=...)`` reproduces an
episode exactly.

    from arena.rl.env import GinRummyEnv
    env = GinRummyEnv(rules="oklahoma")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, done, truncated, info = env.last()
        env.step(None if done or truncated else policy(obs))
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gin_arena_core.rules import PlayerView, RulesConfig, observe, preset
from gymnasium import spaces
from pettingzoo import AECEnv

from arena.match.driver import MatchDriver, derive_seed
from arena.match.messages import HandFinished, TimeControl
from arena.rl.encode import N_ACTIONS, OBS_SIZE, action_mask, action_of, encode

AGENTS = ("player_0", "player_1")
REWARDS = ("game", "hand")


class GinRummyEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """Two seats, one game per episode (see the module's doc)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "gin_rummy_arena_v0",
                                          "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, rules: str | RulesConfig = "standard", reward: str = "game",
                 render_mode: str | None = None) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.rules = preset(rules) if isinstance(rules, str) else rules
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        })
        self._act_space = spaces.Discrete(N_ACTIONS)
        self._driver: MatchDriver | None = None
        self._episode = 0
        self._base_seed = ""

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    # ---------------------------------------------------------------- episodes

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. With ``seed`` the episode (deals, first dealer) is reproduced exactly;
        without, the next episode of the last seed's sequence."""
        if seed is not None:
            self._base_seed, self._episode = str(seed), 0
        elif not self._base_seed:
            self._base_seed = str(np.random.SeedSequence().entropy)
        match_seed = derive_seed(self._base_seed, f"episode:{self._episode}")
        self._episode += 1
        self._driver = MatchDriver(f"rl-{self._episode}", self.rules, AGENTS, seed=match_seed,
                                   first_dealer=int(match_seed, 16) % 2,
                                   time_control=TimeControl())
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._skip_agent_selection = None
        self._ask()

    def _ask(self) -> None:
        """Deal if needed and select the seat to act."""
        driver = self._driver
        assert driver is not None
        request = driver.next_request()  # deals a new hand first if one is due
        seat = driver.pending[0]
        self.agent_selection = AGENTS[seat]
        self.infos[AGENTS[seat]]["view"] = request.view
        self.infos[AGENTS[1 - seat]]["view"] = self.view(1 - seat)

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may see now (``gin_arena_core.rules.observe``, as the arena sends it)."""
        driver = self._driver
        assert driver is not None
        game = driver.game
        assert game.hand is not None
        return observe(game.hand, seat, scores=game.scores, hand_number=game.hand_number,
                       sheets=game.sheets)

    def observe(self, agent: str) -> dict[str, Any]:
        view = self.infos[agent]["view"]
        return {"observation": encode(view), "action_mask": action_mask(view)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        driver = self._driver
        assert driver is not None
        if action is None:
            raise ValueError(f"{agent} is to act: give an action index (its action_mask "
                             "marks the legal ones)")
        seat = AGENTS.index(agent)
        self._cumulative_rewards[agent] = 0.0
        driver.submit(action_of(self.infos[agent]["view"], action))
        rewards = dict.fromkeys(AGENTS, 0.0)
        for to, message in driver.drain():
            if isinstance(message, HandFinished) and to == seat:
                result = message.result
                for a in AGENTS:
                    self.infos[a]["hand_result"] = result
                if self.reward_kind == "hand" and result.winner is not None:
                    rewards[AGENTS[result.winner]] += result.points / 100
                    rewards[AGENTS[1 - result.winner]] -= result.points / 100
        if driver.result is not None:
            outcome = driver.result
            if self.reward_kind == "game" and outcome.winner is not None:
                rewards[AGENTS[outcome.winner]] += 1.0
                rewards[AGENTS[1 - outcome.winner]] -= 1.0
            for a in AGENTS:
                self.terminations[a] = True
                self.infos[a]["result"] = outcome
                self.infos[a]["view"] = self.view(AGENTS.index(a))  # the hand over: no moves
        else:
            self._ask()
        self.rewards = rewards
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The acting seat's view as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._driver is None:
            return None
        view: PlayerView = self.infos[self.agent_selection]["view"]
        hand = " ".join(str(c) for c in view.hand)
        top = view.discard_top
        return (f"{self.agent_selection} {view.phase.name} hand {hand} | discard "
                f"{top if top is not None else '-'} | stock {view.stock_count} | scores "
                f"{view.scores[0]}-{view.scores[1]}")

    def close(self) -> None:
        self._driver = None


def env(**kwargs: Any) -> GinRummyEnv:
    """PettingZoo's usual constructor name."""
    return GinRummyEnv(**kwargs)


__all__ = ["AGENTS", "GinRummyEnv", "env"]
