"""A seat's view as a vector, the moves as a fixed discrete space, and back.

Everything here is a function of the ``PlayerView`` alone (the arena's one redaction,
``gin_arena_core.rules.observe``), so nothing hidden can reach a policy: the environment and a bot
playing a trained policy over the SDK encode the same way. Needs numpy.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from gin_arena_core.rules import (
    Action,
    BigGin,
    Defend,
    Discard,
    DrawDiscard,
    DrawStock,
    Gin,
    Knock,
    Pass,
    Phase,
    PlayerView,
    TakeUpcard,
)

# ---------------------------------------------------------------- the action space

_DISCARD, _KNOCK, _GIN = 4, 56, 108
BIG_GIN, DEFEND = 160, 161
N_ACTIONS = 162
"""0 take_upcard, 1 pass, 2 draw_stock, 3 draw_discard, 4-55 discard a card, 56-107 knock
discarding a card, 108-159 gin discarding a card, 160 big gin, 161 defend (cards index as
``gin_arena_core.rules.CARDS``; knock, gin, big gin and defend with the best arrangement)."""


def action_index(action: Action) -> int:
    """The index of ``action`` in the discrete space (melds given explicitly are dropped:
    the space holds the best arrangement of each)."""
    if isinstance(action, TakeUpcard):
        return 0
    if isinstance(action, Pass):
        return 1
    if isinstance(action, DrawStock):
        return 2
    if isinstance(action, DrawDiscard):
        return 3
    if isinstance(action, Discard):
        return _DISCARD + action.card
    if isinstance(action, Gin):
        return _GIN + action.card
    if isinstance(action, Knock):
        return _KNOCK + action.card
    if isinstance(action, BigGin):
        return BIG_GIN
    if isinstance(action, Defend):
        return DEFEND
    raise TypeError(f"not an action: {action!r}")


def legal_by_index(view: PlayerView) -> dict[int, Action]:
    """The legal moves of ``view`` by index (the first listed for an index wins)."""
    out: dict[int, Action] = {}
    for action in view.legal:
        out.setdefault(action_index(action), action)
    return out


def action_mask(view: PlayerView) -> npt.NDArray[np.int8]:
    """1 for each legal index, 0 elsewhere (all 0 when the seat is not to act)."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    for action in view.legal:
        mask[action_index(action)] = 1
    return mask


def action_of(view: PlayerView, index: int) -> Action:
    """The legal move ``index`` stands for in ``view``; ValueError naming the legal indexes
    if it is not legal now."""
    found = legal_by_index(view).get(int(index))
    if found is None:
        raise ValueError(f"action {index} is not legal now (legal: "
                         f"{sorted(legal_by_index(view))})")
    return found


# ---------------------------------------------------------------- the observation

_PHASES = list(Phase)
OBS_SIZE = 52 * 8 + len(_PHASES) + 7
"""Eight card planes (own hand, the opponent's cards known to be held, the visible discard
pile, its top, the upcard, the card taken this turn, a knocker's melded cards and his
deadwood), the phase one-hot, then the stock count, knock limit, multiplier, both scores,
the opponent's hand size and whether this seat dealt, each scaled to about 0-1."""


def encode(view: PlayerView) -> npt.NDArray[np.float32]:
    """``view`` as a vector of OBS_SIZE numbers, from this seat's point of view."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    seat = view.seat or 0
    out[list(view.hand)] = 1.0
    if view.opponent_known:
        out[[52 + c for c in view.opponent_known]] = 1.0
    if view.discard_pile:
        out[[104 + c for c in view.discard_pile]] = 1.0
        out[156 + view.discard_pile[-1]] = 1.0
    if view.upcard is not None:
        out[208 + view.upcard] = 1.0
    if view.taken is not None:
        out[260 + view.taken] = 1.0
    if view.knock is not None:
        melded = [c for m in view.knock.melds for c in m.cards]
        if melded:
            out[[312 + c for c in melded]] = 1.0
        if view.knock.deadwood_cards:
            out[[364 + c for c in view.knock.deadwood_cards]] = 1.0
    out[416 + _PHASES.index(view.phase)] = 1.0
    base = 416 + len(_PHASES)
    out[base:base + 7] = (
        view.stock_count / 52, view.knock_limit / 10, view.multiplier / 4,
        view.scores[seat] / 100, view.scores[1 - seat] / 100,
        view.hand_sizes[1 - seat] / 11, float(view.dealer == seat))
    return out


__all__ = ["BIG_GIN", "DEFEND", "N_ACTIONS", "OBS_SIZE", "action_index", "action_mask",
           "action_of", "encode", "legal_by_index"]
