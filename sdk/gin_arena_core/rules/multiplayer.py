"""Three players and partnerships, built from two-player hands (seeds 000, 001, 004).

Three players (seed 001; seed 004 calls it captain's play): the dealer deals to the other
two and sits out; the loser of each hand deals the next, which is therefore played between
the winner and the previous dealer. A void hand is dealt again by the same dealer.

Partnerships (seeds 001, 004): each player of a team plays a two-player hand against one
opponent. A round's hands are combined: if one team won both, it scores the total; if each
team won one, the team with more points scores the difference (seed 004's example: win 30,
partner loses 29 -> the team wins 1). Void hands count nothing. Targets: 125 (seed 001),
300 for four players and 350 for six (seed 004). Opponents rotate every round (seed 001) or
stay fixed (seed 004).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gin_arena_core.rules.errors import Code, MalformedError
from gin_arena_core.rules.hand import HandResult


@dataclass(frozen=True, slots=True)
class ThreePlayerState:
    """Whose hand is next among players 0, 1, 2, and each player's cumulative points."""

    dealer: int = 0
    points: tuple[int, int, int] = (0, 0, 0)
    target: int = 100

    @property
    def players(self) -> tuple[int, int]:
        """The two who play the next hand: (non-dealer's seat 0 player, ...) in seat order."""
        a, b = (p for p in range(3) if p != self.dealer)
        return a, b

    @property
    def winner(self) -> int | None:
        best = max(range(3), key=lambda p: self.points[p])
        return best if self.points[best] >= self.target else None


def three_player_next(state: ThreePlayerState, result: HandResult) -> ThreePlayerState:
    """Enter a hand played by ``state.players`` (seat 0 = players[0], seat 1 = players[1]).

    The loser deals the next hand; the next hand is between the winner and the old dealer.
    """
    if result.winner is None:
        return state
    seats = state.players
    winner = seats[result.winner]
    loser = seats[1 - result.winner]
    points = list(state.points)
    points[winner] += result.points
    return ThreePlayerState(loser, (points[0], points[1], points[2]), state.target)


@dataclass(frozen=True, slots=True)
class TeamRound:
    """The combined result of one partnership round."""

    team: int | None  # the team that scores, None when the round is even
    points: int


def partnership_round(hands: Sequence[tuple[int, HandResult]]) -> TeamRound:
    """Combine a round: ``hands`` is (team of the player in seat 0, result) per table.

    Each table's seat 0 belongs to the given team and seat 1 to the other team.
    """
    net = 0  # positive: team 0 ahead
    for team_of_seat0, result in hands:
        if team_of_seat0 not in (0, 1):
            raise MalformedError(Code.BAD_OPTION, f"team must be 0 or 1, not {team_of_seat0!r}")
        if result.winner is None:
            continue
        winning_team = team_of_seat0 if result.winner == 0 else 1 - team_of_seat0
        net += result.points if winning_team == 0 else -result.points
    if net == 0:
        return TeamRound(None, 0)
    return TeamRound(0 if net > 0 else 1, abs(net))


@dataclass(frozen=True, slots=True)
class PartnershipState:
    """A partnership game: each team's cumulative points toward the target (seed 001: the
    first team to reach 125 or more wins; seed 004: 300 for four players, 350 for six)."""

    points: tuple[int, int] = (0, 0)
    target: int = 125
    rounds: int = 0

    @property
    def winner(self) -> int | None:
        """The team that reached the target (the higher one if both did), else None."""
        a, b = self.points
        if max(a, b) < self.target or a == b:
            return None
        return 0 if a > b else 1


def partnership_next(state: PartnershipState, hands: Sequence[tuple[int, HandResult]]
                     ) -> PartnershipState:
    """Enter one round (see ``partnership_round``) into the game."""
    if state.winner is not None:
        raise MalformedError(Code.GAME_OVER, f"team {state.winner} has already won")
    r = partnership_round(hands)
    points = list(state.points)
    if r.team is not None:
        points[r.team] += r.points
    return PartnershipState((points[0], points[1]), state.target, state.rounds + 1)


def partnership_pairings(players_per_team: int, round_index: int, rotate: bool
                         ) -> list[tuple[int, int]]:
    """Which member of team 0 faces which member of team 1 in a round (member indices).

    ``rotate`` (seed 001: players alternate opponents) shifts the pairing each round;
    otherwise (seed 004) opponents stay the same.
    """
    if not 1 <= players_per_team <= 4:
        raise MalformedError(Code.BAD_OPTION, "partnership play is 2 to 8 players (1-4 a team)")
    shift = round_index % players_per_team if rotate else 0
    return [(i, (i + shift) % players_per_team) for i in range(players_per_team)]


def partnership_target(players: int) -> int:
    """Seed 004: 300 for four players, 350 for six (and eight); seed 001 plays 125."""
    return 300 if players <= 4 else 350
