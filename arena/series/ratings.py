"""Live ratings: openskill updates per recorded match, for watching a run and the ladder.

Every counted match updates both bots' openskill (Weng-Lin Plackett-Luce) rating
``(mu, sigma)``; a draw is a tie; a voided match changes nothing. Live ratings depend on the
order matches were recorded in; standings use a batch fit instead
(``arena.tournament.ratings``). ``rate_match`` gives the update a store applies inside the
transaction that records the match, so workers on many hosts never lose one.
"""

from __future__ import annotations

from collections.abc import Mapping

from openskill.models import PlackettLuce

from arena.store.base import Rate, Rating


class LiveRatings:
    """Openskill ratings of a set of bots, updated one match at a time."""

    def __init__(self, ratings: Mapping[str, Rating] | None = None) -> None:
        self._model = PlackettLuce()
        self._ratings: dict[str, Rating] = dict(ratings or {})

    @property
    def initial(self) -> Rating:
        return Rating(self._model.mu, self._model.sigma, 0)

    def get(self, bot: str) -> Rating:
        return self._ratings.get(bot, self.initial)

    def all(self) -> dict[str, Rating]:
        return dict(self._ratings)

    def after(self, a: str, b: str, score_a: float) -> dict[str, Rating]:
        """Both bots' ratings after a match in which ``a`` scored ``score_a`` (1, 0.5, 0)."""
        ra, rb = self.get(a), self.get(b)
        pa = self._model.create_rating([ra.mu, ra.sigma], name=a)
        pb = self._model.create_rating([rb.mu, rb.sigma], name=b)
        ranks = [0.0, 0.0] if score_a == 0.5 else ([0.0, 1.0] if score_a > 0.5 else [1.0, 0.0])
        [[na], [nb]] = self._model.rate([[pa], [pb]], ranks=ranks)
        return {a: Rating(na.mu, na.sigma, ra.games + 1), b: Rating(nb.mu, nb.sigma,
                                                                     rb.games + 1)}

    def apply(self, new: Mapping[str, Rating]) -> None:
        self._ratings.update(new)

    def win_probability(self, a: str, b: str) -> float:
        """Openskill's predicted chance that ``a`` beats ``b``."""
        ra, rb = self.get(a), self.get(b)
        pa = self._model.create_rating([ra.mu, ra.sigma], name=a)
        pb = self._model.create_rating([rb.mu, rb.sigma], name=b)
        return float(self._model.predict_win([[pa], [pb]])[0])


def rate_match(a: str, b: str, score_a: float) -> Rate:
    """The update for a match in which ``a`` scored ``score_a`` against ``b``."""

    def rate(stored: Mapping[str, Rating]) -> Mapping[str, Rating]:
        return LiveRatings(stored).after(a, b, score_a)

    return rate


def ordinal(r: Rating) -> float:
    """A conservative single number for ranking: mu - 3 sigma."""
    return r.mu - 3 * r.sigma


__all__ = ["LiveRatings", "ordinal", "rate_match"]
