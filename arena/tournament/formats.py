"""Tournament formats: who meets whom (round robin, gauntlet, head to head), on how many deals.

``arena.series.schedule`` makes the matches of those pairings; a head-to-head (SPRT) takes
up to ``max_deals`` deals and stops when ``arena.tournament.sprt`` decides.
"""

from __future__ import annotations

from collections.abc import Iterator

from arena.match.spec import MatchSpec
from arena.series.schedule import round_robin, schedule
from arena.tournament.config import Format, TournamentConfig


def pairings(cfg: TournamentConfig) -> list[tuple[str, str]]:
    """Who meets whom under the config's format."""
    names = cfg.names
    if cfg.format is Format.GAUNTLET:
        return [(cfg.challenger, n) for n in names if n != cfg.challenger]
    return round_robin(names)


def deals_for(cfg: TournamentConfig) -> int:
    """Deals per pairing (for SPRT, the most it may take)."""
    return cfg.sprt.max_deals if cfg.format is Format.SPRT else cfg.deals


def tournament_schedule(cfg: TournamentConfig, secret: str) -> Iterator[MatchSpec]:
    """The config's full schedule (for SPRT, up to ``max_deals``: it stops earlier), keyed
    with the scope's ``secret``."""
    return schedule(pairings(cfg), deals_for(cfg), seed=cfg.seed, secret=secret,
                    scope=cfg.scope)


__all__ = ["deals_for", "pairings", "tournament_schedule"]
