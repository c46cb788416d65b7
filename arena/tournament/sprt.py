"""The sequential probability ratio test of a head-to-head, over duplicate deals' scores.

A generalised SPRT on the pentanomial distribution of deal scores (each deal's two
matches, seats swapped, score A 0, 1/4, 1/2, 3/4 or 1), as fastchess and fishtest do it:
it stops as soon as the evidence says A is at least ``elo1`` stronger (H1) or at most
``elo0`` (H0), with error rates ``alpha`` and ``beta``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum


class SprtStatus(StrEnum):
    RUNNING = "running"
    H1 = "accept_h1"  # A is at least elo1 stronger than B
    H0 = "accept_h0"  # it is not (A is at most elo0 stronger)
    UNDECIDED = "undecided"  # max_deals reached with no decision


@dataclass(frozen=True, slots=True)
class SprtVerdict:
    status: SprtStatus
    llr: float
    lower: float
    upper: float
    deals: int  # complete deals counted
    score: float  # A's mean score per match over those deals (0..1)
    counts: tuple[int, int, int, int, int]  # deals scoring 0, 1/4, 1/2, 3/4, 1 for A

    @property
    def is_decided(self) -> bool:
        return self.status is not SprtStatus.RUNNING

    def describe(self, a: str, b: str, elo0: float, elo1: float) -> str:
        what = {
            SprtStatus.H1: f"{a} is stronger than {b} by at least {elo1:g} Elo (H1 accepted)",
            SprtStatus.H0: f"{a} is not stronger than {b} by {elo1:g} Elo "
                           f"(H0 elo <= {elo0:g} accepted)",
            SprtStatus.UNDECIDED: "undecided: max_deals reached",
            SprtStatus.RUNNING: "running",
        }[self.status]
        return (f"SPRT: {what}; LLR {self.llr:.2f} in [{self.lower:.2f}, {self.upper:.2f}] "
                f"after {self.deals} duplicate deals; {a} scored {self.score:.1%}")


def elo_to_score(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger (logistic Elo)."""
    return 1 / (1 + 10 ** (-elo / 400))


_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _constrained_mle(phat: Sequence[float], s: float) -> list[float]:
    """The distribution over ``_VALUES`` nearest ``phat`` (max likelihood) with mean ``s``."""
    d = [x - s for x in _VALUES]
    # p_i = phat_i / (1 + lam * d_i); lam solves sum phat_i d_i / (1 + lam d_i) = 0 (it is
    # decreasing in lam) on the interval where every denominator stays positive.
    lo = -1 / max(d) + 1e-12
    hi = -1 / min(d) - 1e-12

    def g(lam: float) -> float:
        return sum(p * di / (1 + lam * di) for p, di in zip(phat, d, strict=True))

    for _ in range(100):
        mid = (lo + hi) / 2
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    lam = (lo + hi) / 2
    p = [pi / (1 + lam * di) for pi, di in zip(phat, d, strict=True)]
    total = sum(p)
    return [x / total for x in p]


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """Generalised SPRT log-likelihood ratio of H1 (elo1) over H0 (elo0) for deal scores.

    ``counts[i]`` is how many duplicate deals gave A the score ``_VALUES[i]`` (mean of its
    two matches). Each hypothesis is the most likely distribution of deal scores with the
    hypothesised mean; a tiny prior count keeps the estimate finite on short, one-sided
    samples.
    """
    n = sum(counts)
    if n == 0:
        return 0.0
    reg = [c + 1e-3 for c in counts]
    total = sum(reg)
    phat = [c / total for c in reg]
    p0 = _constrained_mle(phat, elo_to_score(elo0))
    p1 = _constrained_mle(phat, elo_to_score(elo1))
    return n * sum(p * math.log(a / b) for p, a, b in zip(phat, p1, p0, strict=True))


class SprtTracker:
    """The test's state over the complete deals, taken in deal order.

    ``add(deal, score)`` gives A's mean score over deal ``deal``'s two matches, or None if
    a match of it was voided (the deal is left out). Deals are counted in index order only:
    a missing deal holds the later ones back. So the verdict does not depend on which match
    happened to finish first, and the same seed gives the same verdict at any concurrency.
    """

    def __init__(self, *, elo0: float, elo1: float, alpha: float, beta: float,
                 max_deals: int) -> None:
        self.elo0, self.elo1, self.max_deals = elo0, elo1, max_deals
        self.lower = math.log(beta / (1 - alpha))
        self.upper = math.log((1 - beta) / alpha)
        self._pending: dict[int, float | None] = {}
        self._next = 0  # the first deal not counted yet
        self._counts = [0] * len(_VALUES)
        self._llr = 0.0
        self.status = SprtStatus.RUNNING

    def add(self, deal: int, score: float | None) -> SprtStatus:
        if self.status is not SprtStatus.RUNNING or deal < self._next:
            return self.status
        self._pending[deal] = score
        while self.status is SprtStatus.RUNNING and self._next in self._pending:
            value = self._pending.pop(self._next)
            self._next += 1
            if value is not None:
                self._counts[round(value * 4)] += 1
                self._llr = llr(self._counts, self.elo0, self.elo1)
                if self._llr >= self.upper:
                    self.status = SprtStatus.H1
                elif self._llr <= self.lower:
                    self.status = SprtStatus.H0
            if self.status is SprtStatus.RUNNING and self._next >= self.max_deals:
                self.status = SprtStatus.UNDECIDED
        return self.status

    @property
    def decided_at(self) -> int:
        """Deals consumed (counted or voided) when the verdict came, or so far."""
        return self._next

    def verdict(self) -> SprtVerdict:
        counts = self._counts
        n = sum(counts)
        mean = sum(c * v for c, v in zip(counts, _VALUES, strict=True)) / n if n else 0.5
        c = (counts[0], counts[1], counts[2], counts[3], counts[4])
        return SprtVerdict(self.status, self._llr, self.lower, self.upper, n, mean, c)


def sprt_verdict(deal_scores: Mapping[int, float | None], *, elo0: float, elo1: float,
                 alpha: float, beta: float, max_deals: int) -> SprtVerdict:
    """The verdict over ``deal_scores`` (deal -> A's mean score, None = voided)."""
    tracker = SprtTracker(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_deals=max_deals)
    for deal in sorted(deal_scores):
        tracker.add(deal, deal_scores[deal])
    return tracker.verdict()


__all__ = ["SprtStatus", "SprtTracker", "SprtVerdict", "elo_to_score", "llr", "sprt_verdict"]
