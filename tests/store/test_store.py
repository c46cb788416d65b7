"""One store suite, run against every store (SQLite, and PostgreSQL where one answers).

Results: one transaction per match, idempotent writes, ratings updated inside the write.
The queue: claims never given twice, leases that run out are claimed again, a stopped
scope is claimed no more and what arrives after its verdict is marked, one coordinator.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping

import pytest
from gin_arena_core.rules import HandResult

from arena.match.messages import MatchResult, SeatStats, Termination
from arena.match.spec import MatchSpec
from arena.store.base import Rating, StoreError, is_void
from tests.store.conftest import OpenStore

pytestmark = pytest.mark.timeout(60)

SPEC = MatchSpec("h:a:b:0:0", ("a", "b"), 0, 0, "seed:0")
HANDS = (HandResult("knock", 0, 12, knocker=0, deadwood=(3, 15)),
         HandResult("gin", 1, 40, knocker=1, deadwood=(20, 0)),
         HandResult("undercut", 0, 30, knocker=1, deadwood=(4, 6)))
RESULT = MatchResult(SPEC.match_id, 0, Termination.COMPLETED, None, (110, -110), "", HANDS,
                     (SeatStats(timeouts=1), SeatStats(rejections=2)))


def fixed(new: Mapping[str, Rating]):  # type: ignore[no-untyped-def]
    """A rating update that sets ``new`` whatever is stored."""
    return lambda stored: new


def specs(n: int, scope_tag: str = "") -> list[MatchSpec]:
    return [MatchSpec(f"m{scope_tag}{i:03d}", ("a", "b"), i // 2, i % 2, f"s{i // 2}")
            for i in range(n)]


def result_for(spec: MatchSpec) -> MatchResult:
    return MatchResult(spec.match_id, 0, Termination.COMPLETED, None, (100, -100), "", HANDS[:1])


# ------------------------------------------------------------------------------ results


def test_record_writes_everything_once(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    new = {"a": Rating(27.0, 8.0, 1), "b": Rating(23.0, 8.0, 1)}
    assert store.record("t", SPEC, RESULT, fixed(new)) is True
    # the same match again: nothing changes (a resumed run never double counts)
    assert store.record("t", SPEC, RESULT, fixed({"a": Rating(99.0, 1.0, 2)})) is False
    assert store.ratings("t") == new
    assert store.finished_ids("t") == {SPEC.match_id}
    (row,) = store.matches("t")
    assert row.pair == ("a", "b") and row.score_of("a") == 1.0 and row.score_of("b") == 0.0
    assert row.hands == 3 and not row.after_verdict
    a, b = store.results("t")
    assert (a.bot, a.outcome, a.hands_won, a.gins, a.undercuts, a.timeouts) == \
        ("a", "win", 2, 0, 1, 1)
    assert (b.bot, b.outcome, b.gins, b.illegal, b.hand_points) == ("b", "loss", 1, 2, -2)
    assert a.hand_points == 12 + 30 - 40
    assert store.wins("t") == {"a": 1, "b": 0}


def test_the_rating_update_reads_what_is_stored_inside_the_write(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    seen: list[dict[str, Rating]] = []

    def bump(stored: Mapping[str, Rating]) -> dict[str, Rating]:
        seen.append(dict(stored))
        return {bot: Rating(stored.get(bot, Rating(0.0, 1.0)).mu + 1, 1.0,
                            stored.get(bot, Rating(0.0, 1.0)).games + 1) for bot in "ab"}

    for spec in specs(3):
        assert store.record("t", spec, result_for(spec), bump)
    assert seen[0] == {} and seen[2]["a"] == Rating(2.0, 1.0, 2)
    assert store.ratings("t") == {"a": Rating(3.0, 1.0, 3), "b": Rating(3.0, 1.0, 3)}


def test_a_failing_write_leaves_nothing_behind(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.enqueue("t", [SPEC])
    broken = fixed({"a": Rating(None, 1.0, 1)})  # type: ignore[arg-type]  # NOT NULL, last
    # refused for another reason than "already there": an error naming the match
    with pytest.raises(StoreError, match=re.escape("could not record match h:a:b:0:0 of 't'")):
        store.record("t", SPEC, RESULT, broken)
    assert store.matches("t") == [] and store.results("t") == [] and store.ratings("t") == {}
    assert store.queue_counts("t").queued == 1  # its queue entry is not marked done either
    assert store.record("t", SPEC, RESULT, fixed({"a": Rating(26.0, 8.0, 1)})) is True
    assert len(store.results("t")) == 2 and store.queue_counts("t").done == 1


def test_void_and_draw_outcomes(open_store: OpenStore) -> None:
    void = MatchResult("v", None, Termination.ARENA_ERROR, detail="boom")
    no_show = MatchResult("n", None, Termination.NO_SHOW)
    draw = MatchResult("d", None, Termination.CAPPED)
    forfeit = MatchResult("f", 1, Termination.FORFEIT_TIMEOUT, blamed=0)
    assert is_void(void) and is_void(no_show)
    assert not is_void(draw) and not is_void(forfeit)
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    for i, r in enumerate((void, draw, forfeit)):
        store.record("t", MatchSpec(f"m{i}", ("a", "b"), i, 0, "s"), r)
    rows = store.matches("t")
    assert [r.voided for r in rows] == [True, False, False]
    assert [r.score_of("a") for r in rows] == [None, 0.5, 0.0]
    outcomes = [(r.bot, r.outcome, r.forfeit) for r in store.results("t")]
    assert outcomes[:2] == [("a", "void", False), ("b", "void", False)]
    assert ("a", "loss", True) in outcomes and ("b", "win", False) in outcomes


def test_match_ids_are_unique_per_scope_not_globally(open_store: OpenStore) -> None:
    store = open_store()
    for scope in ("t1", "t2"):
        store.open_scope(scope, "tournament", scope, "{}")
        assert store.record(scope, SPEC, RESULT) is True  # the same id, two scopes
    assert store.record("t1", SPEC, RESULT) is False
    assert [len(store.matches(s)) for s in ("t1", "t2")] == [1, 1]
    assert [len(store.results(s)) for s in ("t1", "t2")] == [2, 2]
    assert store.wins("t2") == {"a": 1, "b": 0}


def test_each_scope_keeps_its_secret_and_config(open_store: OpenStore) -> None:
    store = open_store()
    first = store.open_scope("t", "tournament", "t", '{"x": 1}')
    assert len(first) == 32 and int(first, 16) >= 0
    assert store.open_scope("t", "tournament", "t", '{"x": 2}') == first
    assert store.scope_config("t") == {"x": 2}
    assert store.open_scope("u", "tournament", "u", "{}") != first
    assert store.open_scope("v", "tournament", "v", "{}", "ab" * 16) == "ab" * 16
    with pytest.raises(StoreError, match="played with another secret"):
        store.open_scope("t", "tournament", "t", "{}", "cd" * 16)
    assert [s.scope for s in store.scopes()] == ["t", "u", "v"]
    with pytest.raises(StoreError, match="no scope 'w'"):
        store.scope_config("w")
    again = open_store()  # another connection sees it all
    assert again.open_scope("t", "tournament", "t", '{"x": 2}') == first


def test_matches_since_feeds_a_watcher_in_recording_order(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    for spec in specs(5):
        store.record("t", spec, result_for(spec))
    first = store.matches_since("t", 0, limit=2)
    assert [m.match_id for m in first] == ["m000", "m001"]
    rest = store.matches_since("t", first[-1].seq)
    assert [m.match_id for m in rest] == ["m002", "m003", "m004"]
    assert store.matches_since("t", rest[-1].seq) == []


def test_ladder_names_are_unique_whatever_the_case_and_tokens_can_be_revoked(
        open_store: OpenStore) -> None:
    store = open_store()
    store.register_bot("Alpha", "h1")
    with pytest.raises(StoreError, match="'alpha' is already registered \\(as 'Alpha'\\)"):
        store.register_bot("alpha", "h2")
    with pytest.raises(StoreError, match="that token is already in use"):
        store.register_bot("Beta", "h1")
    epoch = store.token_epoch()
    assert store.bot_for_token_hash("h1") == "Alpha"
    store.set_token("Alpha", None)  # revoke
    assert store.bot_for_token_hash("h1") is None and store.token_epoch() == epoch + 1
    store.set_token("Alpha", "h3")  # rotate
    assert store.bot_for_token_hash("h3") == "Alpha" and store.bot_for_token_hash("h1") is None
    assert store.token_epoch() == epoch + 2
    with pytest.raises(StoreError, match="no ladder bot named 'beta'"):
        store.set_token("beta", "h4")
    assert store.registered_bots() == ["Alpha"]
    store.add_bots([("greedy", "greedy"), ("Alpha", "x")])
    assert store.registered_bots() == ["Alpha"]  # bots without a token are not ladder bots


def test_scope_bots_are_replaced_per_scope(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.set_scope_bots("t", [("a", "greedy", "f1"), ("b", "random", "f2")])
    store.set_scope_bots("t", [("a", "strong", "f3")])
    assert store.scope_bots("t") == {"a": ("strong", "f3"), "b": ("random", "f2")}


# ------------------------------------------------------------------------------ the queue


def test_queued_matches_are_claimed_in_order_once_each(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    assert store.enqueue("t", specs(5)) == 5
    assert store.enqueue("t", specs(5)) == 0  # scheduling twice changes nothing
    first = store.claim("w1", lease_s=30, limit=2)
    assert [c.spec.match_id for c in first] == ["m000", "m001"]
    assert first[0].spec == specs(1)[0] and first[0].attempt == 1 and first[0].worker == "w1"
    second = store.claim("w2", lease_s=30, scopes=["t"], limit=10)
    assert [c.spec.match_id for c in second] == ["m002", "m003", "m004"]
    assert store.claim("w3", lease_s=30) == []
    counts = store.queue_counts("t")
    assert (counts.queued, counts.claimed, counts.open) == (0, 5, 5)
    for c in first:
        store.record("t", c.spec, result_for(c.spec))
    assert store.queue_counts("t").done == 2
    assert store.enqueue("t", specs(5)) == 0  # a recorded match is never queued again


def test_a_lease_that_runs_out_is_claimed_again_and_the_first_result_counts(
        open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.enqueue("t", specs(1))
    (mine,) = store.claim("w1", lease_s=0.2)
    assert store.claim("w2", lease_s=30) == []  # held
    time.sleep(0.4)
    assert store.queue_counts("t").expired == 1
    assert store.claimable_scopes() == ["t"]
    (theirs,) = store.claim("w2", lease_s=30)
    assert theirs.spec == mine.spec and theirs.attempt == 2
    assert store.renew("w1", [("t", mine.spec.match_id)], 30) == {("t", mine.spec.match_id)}
    assert store.renew("w2", [("t", mine.spec.match_id)], 30) == set()
    assert store.record("t", theirs.spec, result_for(theirs.spec)) is True
    assert store.record("t", mine.spec, result_for(mine.spec)) is False  # counted once
    assert len(store.matches("t")) == 1 and store.queue_counts("t").open == 0


def test_released_matches_are_queued_again_and_skipped_ones_wait_for_the_next_run(
        open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.enqueue("t", specs(2))
    a, b = store.claim("w1", lease_s=30, limit=2)
    store.release("w2", [("t", a.spec.match_id)])  # not its claim: nothing happens
    assert store.queue_counts("t").claimed == 2
    store.release("w1", [("t", a.spec.match_id)])
    store.release("w1", [("t", b.spec.match_id)], skip=True)
    counts = store.queue_counts("t")
    assert (counts.queued, counts.skipped, counts.open) == (1, 1, 1)
    assert [c.spec.match_id for c in store.claim("w1", lease_s=30, limit=5)] == ["m000"]
    assert store.enqueue("t", specs(2)) == 1  # the next run: the skipped one is back
    assert [c.spec.match_id for c in store.claim("w1", lease_s=30, limit=5)] == ["m001"]


def test_a_stopped_scope_is_claimed_no_more_and_later_results_are_marked(
        open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.open_scope("u", "tournament", "u", "{}")
    store.enqueue("t", specs(4))
    store.enqueue("u", specs(1, "u"))
    (early,) = store.claim("w1", lease_s=30, scopes=["t"])
    store.record("t", early.spec, result_for(early.spec))
    (late,) = store.claim("w1", lease_s=30, scopes=["t"])
    assert store.scope_verdict("t") == ""
    store.stop_scope("t", "accept_h1")
    assert store.scope_verdict("t") == "accept_h1"
    assert store.claim("w2", lease_s=30, scopes=["t"]) == []
    assert store.claimable_scopes() == ["u"]
    assert store.record("t", late.spec, result_for(late.spec)) is True  # kept, but marked
    assert [m.after_verdict for m in store.matches("t")] == [False, True]
    counts = store.queue_counts("t")
    assert (counts.done, counts.cancelled, counts.open) == (2, 2, 0)
    assert store.enqueue("t", specs(4)) == 0  # a rerun does not undo the verdict


def test_one_coordinator_per_scope(open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    assert store.take_coordinator("t", "one", 0.3) == ""
    assert store.take_coordinator("t", "one", 0.3) == ""  # renewing
    assert store.take_coordinator("t", "two", 30) == "one"
    time.sleep(0.5)
    assert store.take_coordinator("t", "two", 30) == ""  # the first one's lease ran out
    store.drop_coordinator("t", "one")  # not its to drop
    assert store.take_coordinator("t", "one", 30) == "two"
    store.drop_coordinator("t", "two")
    assert store.take_coordinator("t", "one", 30) == ""


def test_workers_on_many_connections_never_get_the_same_match(open_store: OpenStore) -> None:
    setup = open_store()
    setup.open_scope("t", "tournament", "t", "{}")
    n = 60
    setup.enqueue("t", specs(n))
    got: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        store = open_store()
        mine = got.setdefault(name, [])
        try:
            while claims := store.claim(name, lease_s=30, limit=2):
                for c in claims:
                    mine.append(c.spec.match_id)
                    store.record("t", c.spec, result_for(c.spec),
                                 fixed({"a": Rating(1.0, 1.0, 1)}))
        except BaseException as e:  # a thread's failure must fail the test
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    assert errors == []
    claimed = [m for ids in got.values() for m in ids]
    assert sorted(claimed) == [s.match_id for s in specs(n)]  # each exactly once
    assert len(setup.matches("t")) == n and setup.queue_counts("t").done == n


def test_a_gone_workers_claims_are_reclaimed_and_a_gone_coordinator_replaced(
        open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    store.enqueue("t", specs(3))
    store.claim("dead", lease_s=300, limit=2)
    store.claim("alive", lease_s=300, limit=1)
    assert store.holders("t") == ["alive", "dead"]
    assert store.reclaim("t", "dead") == 2  # no need to wait 300 s for its leases
    assert store.holders("t") == ["alive"]
    assert [c.spec.match_id for c in store.claim("next", lease_s=30, limit=5)] == [
        "m000", "m001"]
    assert store.take_coordinator("t", "old", 300) == ""
    assert store.take_coordinator("t", "new", 300) == "old"
    assert store.take_coordinator("t", "new", 300, replacing="someone-else") == "old"
    assert store.take_coordinator("t", "new", 300, replacing="old") == ""


def test_stopping_marks_what_was_recorded_after_the_deciding_match(
        open_store: OpenStore) -> None:
    store = open_store()
    store.open_scope("t", "tournament", "t", "{}")
    for spec in specs(4):
        store.record("t", spec, result_for(spec))
    deciding = store.matches("t")[1]
    store.stop_scope("t", "accept_h0", deciding.seq)
    assert [m.after_verdict for m in store.matches("t")] == [False, False, True, True]


def test_front_ends_publish_their_lobbies_and_read_the_pairings_made_for_them(
        open_store: OpenStore) -> None:
    from arena.store.base import Pairing

    store = open_store()
    store.open_scope("ladder", "ladder", "ladder", "{}")
    store.set_waiting("ladder", "fe1", "h1:1", 5, 0, {"a": 2, "b": 1})
    store.set_waiting("ladder", "fe2", "h2:2", 0, 0, {})
    store.set_waiting("ladder", "fe1", "h1:1", 4, 0, {"a": 1})  # replaces fe1's rows
    rows = store.waiting("ladder", fresh_s=10)
    assert [(w.frontend, w.bot, w.sessions, w.free) for w in rows] == [
        ("fe1", "a", 1, 4), ("fe2", "", 0, 0)]
    assert all(0 <= w.age_s < 5 for w in rows)
    time.sleep(0.3)
    assert store.waiting("ladder", fresh_s=0.1) == []  # nobody published since: gone
    assert store.last_pairing("ladder") == 0
    one = MatchSpec("x1", ("a", "b"), 0, 0, "s")
    two = MatchSpec("x2", ("a", "b"), 0, 1, "s")
    both = [Pairing(one, "fe1", "h1:1", "fe2", "b", "k1"),
            Pairing(two, "fe2", "h2:2", "fe2", "b", "k2")]
    assert store.add_pairings("ladder", both, "fe1") == []  # fe1 does not lead: not stored
    assert store.take_coordinator("ladder", "fe1", 30) == ""
    made = store.add_pairings("ladder", both, "fe1")
    assert [p.seq for p in made] == sorted(p.seq for p in made) and made[0].seq > 0
    assert store.last_pairing("ladder") == made[1].seq
    assert store.pairings_since("ladder", "fe1", 0) == [made[0]]
    assert store.pairings_since("ladder", "fe2", 0) == made
    assert store.pairings_since("ladder", "fe2", made[0].seq) == [made[1]]
    assert store.pairings_since("ladder", "", 0) == made
    assert store.meetings("ladder") == {("a", "b"): 2}
    assert store.pairing_state("ladder", made[0].seq) == ""
    store.mark_pairing("ladder", made[0].seq, "redirected")
    assert store.pairing_state("ladder", made[0].seq) == "redirected"
