"""Schedules of duplicate deals, seeded reproducibility, and the SPRT."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from pathlib import Path

import pytest

from arena.match.driver import SeededDecks
from arena.series.schedule import schedule
from arena.store.sqlite import SqliteStore
from arena.tournament.config import SprtConfig, load_config
from arena.tournament.formats import pairings, tournament_schedule
from arena.tournament.runner import run_tournament
from arena.tournament.sprt import (
    SprtStatus,
    SprtTracker,
    elo_to_score,
    llr,
    sprt_verdict,
)

BOTS = "tests.tournament.bots"
SECRET = "0123456789abcdef" * 2


def test_round_robin_is_every_pair_on_every_deal_both_ways() -> None:
    cfg = load_config(None, tournament={"seed": "s", "deals": 3},
                      bots=["greedy", "random", "strong", f"{BOTS}:Sloppy"])
    specs = list(tournament_schedule(cfg, SECRET))
    assert len(specs) == 6 * 3 * 2
    assert len({s.match_id for s in specs}) == len(specs)
    by_pair = Counter(s.pair for s in specs)
    assert len(by_pair) == 6 and set(by_pair.values()) == {6}
    for deal in range(3):
        same_deal = [s for s in specs if s.deal == deal]
        # every pairing sees the same deal seed, and each seat order once
        assert {s.seed for s in same_deal} == {same_deal[0].seed}
        for pair in by_pair:
            seats = sorted(s.seats for s in same_deal if s.pair == pair)
            assert seats == sorted([pair, pair[::-1]])
    # deal-major order: a run stopped half way has played every pairing about equally
    first = specs[:12]
    assert {s.deal for s in first} == {0} and len({s.pair for s in first}) == 6


def test_duplicate_matches_deal_the_same_hands_with_seats_swapped() -> None:
    cfg = load_config(None, tournament={"seed": "dup", "deals": 1}, bots=["greedy", "random"])
    a, b = list(tournament_schedule(cfg, SECRET))
    assert a.seed == b.seed and a.seats == b.seats[::-1]
    # same seed -> same deck for every hand index, whoever sits where
    assert SeededDecks(a.seed).deal(0, 0) == SeededDecks(b.seed).deal(0, 0)
    assert SeededDecks(a.seed).deal(3, 1) == SeededDecks(b.seed).deal(3, 1)


def test_gauntlet_pairs_the_challenger_with_each_other_bot() -> None:
    cfg = load_config(None, tournament={"seed": "s", "deals": 2, "format": "gauntlet"},
                      bots=["random", "greedy", "strong"], challenger="strong")
    assert pairings(cfg) == [("strong", "random"), ("strong", "greedy")]
    specs = list(tournament_schedule(cfg, SECRET))
    assert len(specs) == 2 * 2 * 2 and all("strong" in s.pair for s in specs)


def test_same_config_same_ids_and_seeds() -> None:
    def ids(seed: str, secret: str = SECRET) -> list[tuple[str, str]]:
        cfg = load_config(None, tournament={"seed": seed, "deals": 4},
                          bots=["greedy", "random", "strong"])
        return [(s.match_id, s.seed) for s in tournament_schedule(cfg, secret)]

    assert ids("x") == ids("x")
    assert ids("x") != ids("y")
    assert not {i for i, _ in ids("x")} & {i for i, _ in ids("y")}
    # the seed alone gives neither the deals nor the ids: the scope's secret keys both
    other = ids("x", "f" * 32)
    assert not {i for i, _ in ids("x")} & {i for i, _ in other}
    assert not {s for _, s in ids("x")} & {s for _, s in other}


def test_schedule_names_are_canonical() -> None:
    specs = list(schedule([("b", "a")], 1, seed="s", secret=SECRET, scope="t@0"))
    assert specs[0].pair == ("a", "b") and specs[0].seats == ("a", "b")
    assert specs[1].seats == ("b", "a")


# ---------------------------------------------------------------- SPRT


def test_llr_signs_and_bounds() -> None:
    assert llr([0, 0, 0, 0, 0], 0, 30) == 0.0
    assert llr([0, 0, 0, 0, 20], 0, 30) > 0  # A won every deal
    assert llr([20, 0, 0, 0, 0], 0, 30) < 0
    assert llr([0, 0, 20, 0, 0], 0, 30) < 0  # even: closer to H0
    assert elo_to_score(0) == 0.5 and elo_to_score(400) == pytest.approx(10 / 11)


def test_sprt_verdict_does_not_depend_on_finishing_order() -> None:
    rng = random.Random(4)
    scores = {d: rng.choice([0.5, 0.75, 1.0, 1.0, 0.25]) for d in range(400)}
    params = {"elo0": 0.0, "elo1": 50.0, "alpha": 0.05, "beta": 0.05, "max_deals": 400}
    expected = sprt_verdict(scores, **params)  # type: ignore[arg-type]
    assert expected.status is SprtStatus.H1
    for seed in range(3):
        order = list(scores)
        random.Random(seed).shuffle(order)
        tracker = SprtTracker(**params)  # type: ignore[arg-type]
        for d in order:
            tracker.add(d, scores[d])
        assert tracker.verdict() == expected
    # a gap holds later deals back; voided deals are skipped
    tracker = SprtTracker(**params)  # type: ignore[arg-type]
    for d in range(1, 50):
        tracker.add(d, 1.0)
    assert tracker.status is SprtStatus.RUNNING and tracker.verdict().deals == 0
    tracker.add(0, None)
    assert tracker.verdict().deals > 0


def test_sprt_undecided_at_max_deals() -> None:
    v = sprt_verdict({d: 0.5 for d in range(5)}, elo0=0, elo1=30, alpha=0.05, beta=0.05,
                     max_deals=5)
    assert v.status is SprtStatus.UNDECIDED and v.deals == 5


def test_sprt_stops_early_on_a_clear_difference(tmp_path: Path) -> None:
    cfg = load_config(None, tournament={
        "seed": "sprt-1", "format": "sprt", "mode": "in_process", "concurrency": 1,
        "database": str(tmp_path / "sprt.sqlite")},
        bots=[f"{BOTS}:Greedy", f"{BOTS}:Sloppy"])
    cfg = dataclasses.replace(cfg, sprt=SprtConfig(elo0=0, elo1=100, max_deals=200))
    summary = run_tournament(cfg)
    assert summary.sprt is not None
    assert summary.sprt.status is SprtStatus.H1
    assert summary.sprt.deals < 40  # far fewer than the 200 allowed
    # what finished after the deciding match is kept, marked, and left out of the test
    assert summary.played - summary.after_verdict == 2 * summary.sprt.deals
    # rerunning the same config changes nothing and gives the same verdict
    again = run_tournament(cfg)
    assert again.played == 0 and again.sprt == summary.sprt
    with SqliteStore(cfg.database) as store:
        rows = store.matches(cfg.scope)
        assert len(rows) == summary.played
        assert sum(m.after_verdict for m in rows) == summary.after_verdict
        assert store.claim("late-worker", lease_s=5, scopes=[cfg.scope]) == []  # stopped
