"""Ratings on synthetic results: the batch fit, bootstrap intervals, LOS, live openskill."""

from __future__ import annotations

import math
import random

import pytest

from arena.tournament.ratings import (
    LiveRatings,
    Unit,
    fit_bradley_terry,
    ordinal,
    standings_fit,
    to_elo,
)

TRUE = {"a": 200.0, "b": 100.0, "c": 0.0, "d": -300.0}


def synthetic(deals: int, seed: int = 5) -> list[Unit]:
    rng = random.Random(seed)
    units = []
    bots = list(TRUE)
    for i, x in enumerate(bots):
        for y in bots[i + 1:]:
            p = 1 / (1 + 10 ** (-(TRUE[x] - TRUE[y]) / 400))
            for _ in range(deals):
                units.append(Unit((x, y), sum(rng.random() < p for _ in range(2)), 2))
    return units


def test_two_players_match_the_closed_form() -> None:
    # with only two players, the MLE odds are the score ratio (plus the prior's half game)
    elo = to_elo(fit_bradley_terry(2, {(0, 1): 30, (1, 0): 10}))
    diff = elo[0] - elo[1]
    assert diff == pytest.approx(400 * math.log10(30.5 / 10.5), abs=5)
    assert elo[0] == pytest.approx(-elo[1])


def test_perfect_record_stays_finite() -> None:
    elo = to_elo(fit_bradley_terry(2, {(0, 1): 30}))
    assert math.isfinite(elo[0]) and elo[0] > 300


def test_fit_recovers_the_truth_within_its_intervals() -> None:
    fits = standings_fit(list(TRUE), synthetic(200), samples=300, seed=1)
    assert [f.bot for f in fits] == ["a", "b", "c", "d"]
    mean = sum(TRUE.values()) / len(TRUE)
    for f in fits:
        truth = TRUE[f.bot] - mean
        assert f.low <= f.elo <= f.high
        assert f.low - 10 <= truth <= f.high + 10, (f, truth)
        assert 15 < f.high - f.low < 80
    assert fits[0].los_next is not None and fits[0].los_next > 0.99
    assert fits[-1].los_next is None


def test_more_data_narrows_the_intervals_and_close_bots_have_middling_los() -> None:
    small = {f.bot: f for f in standings_fit(list(TRUE), synthetic(20), samples=300, seed=2)}
    large = {f.bot: f for f in standings_fit(list(TRUE), synthetic(300), samples=300, seed=2)}
    for bot in TRUE:
        assert large[bot].high - large[bot].low < small[bot].high - small[bot].low
    rng = random.Random(9)
    even = [Unit(("x", "y"), rng.choice([0, 1, 1, 2]), 2) for _ in range(100)]
    (top, _) = standings_fit(["x", "y"], even, samples=300, seed=3)
    assert top.los_next is not None and 0.1 < top.los_next < 0.999


def test_bootstrap_is_reproducible_with_its_seed() -> None:
    units = synthetic(30)
    assert standings_fit(list(TRUE), units, samples=100, seed=7) == \
        standings_fit(list(TRUE), units, samples=100, seed=7)


def test_live_openskill_updates() -> None:
    live = LiveRatings()
    start = live.get("a")
    new = live.after("a", "b", 1.0)
    assert new["a"].mu > start.mu > new["b"].mu
    assert new["a"].sigma < start.sigma and new["a"].games == 1
    live.apply(new)
    assert live.win_probability("a", "b") > 0.5
    draw = live.after("a", "b", 0.5)
    assert draw["a"].mu < live.get("a").mu  # the favourite loses ground in a draw
    assert ordinal(live.get("a")) == pytest.approx(live.get("a").mu - 3 * live.get("a").sigma)
