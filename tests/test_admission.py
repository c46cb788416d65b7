"""Admission: the window follows the measured lag, and a lull never floods the arena."""

from __future__ import annotations

import pytest

from arena.server.admission import HOLD_TICKS, Admission


def fill(a: Admission, lag: list[float], ticks: int, *, load_ms: float = 0.0,
         lasts: int = 0) -> list[int]:
    """Start matches whenever admission allows, for ``ticks`` ticks; the lag follows the
    load (``load_ms`` per running match, as on a saturated loop); with ``lasts``, one in
    ``lasts`` of the running matches ends each tick. Matches running each tick."""
    seen = []
    for _ in range(ticks):
        for _ in range(a.running // lasts if lasts else 0):
            a.release()
        while a.try_acquire():
            lag[0] = a.running * load_ms
        lag[0] = a.running * load_ms
        a.tick()
        seen.append(a.running)
    return seen


@pytest.mark.timeout(10)
def test_the_window_grows_while_the_loops_keep_up() -> None:
    lag = [0.0]
    a = Admission(max_lag_ms=100, lag_ms=lambda: lag[0], burst=8, initial_window=16)
    seen = fill(a, lag, 50)
    assert seen[0] == 8  # the burst per tick
    assert seen[1] == 16  # the initial window
    assert seen[2] == 17 and seen[-1] == 16 + 48  # then one more per tick while in use


@pytest.mark.timeout(10)
def test_the_window_settles_where_the_lag_is_under_the_limit() -> None:
    lag = [0.0]
    a = Admission(max_lag_ms=100, lag_ms=lambda: lag[0])
    seen = fill(a, lag, 3000, load_ms=0.4, lasts=100)  # 100 ms at 250 matches running
    assert max(seen) <= 251
    late = seen[1000:]
    assert min(late) >= 100  # it holds between half the limit and the limit
    assert max(late) <= 251


@pytest.mark.timeout(10)
def test_a_lull_in_the_lag_never_lets_a_long_lobby_flood_in() -> None:
    """The lag figure may dip below the limit for a moment (a quiet second) while many
    matches run: at most one more match a tick may start, not a burst per tick."""
    lag = [500.0]
    a = Admission(max_lag_ms=100, lag_ms=lambda: lag[0], burst=8)
    a.window = 300
    a.running = 300
    a.tick()  # the lag is over the limit: the window shrinks to 3/4 of those running
    assert a.window == 225 and not a.try_acquire()
    lag[0] = 10.0  # a lull
    started = 0
    for _ in range(10):
        while a.try_acquire():
            started += 1
        a.tick()
    assert started == 0  # 300 still run, above the window of 225+10
    assert a.window == 225  # the window grows only while it is full, not over full


@pytest.mark.timeout(10)
def test_the_window_shrinks_at_most_once_a_second() -> None:
    lag = [500.0]
    a = Admission(max_lag_ms=100, lag_ms=lambda: lag[0])
    a.window = a.running = 400
    a.tick()
    assert a.window == 300
    for _ in range(HOLD_TICKS - 1):
        a.tick()
    assert a.window == 300
    a.tick()
    assert a.window == 300  # a second later, still lagging, but 400 run: none start anyway
    a.running = 200
    for _ in range(HOLD_TICKS):
        a.tick()
    assert a.window == 150  # within the window and still lagging: min(300, 200) * 3 // 4


@pytest.mark.timeout(10)
def test_no_lag_limit_means_no_window_and_max_matches_still_caps() -> None:
    a = Admission(max_matches=3, lag_ms=lambda: 1e9, burst=0)
    assert a.window == 0
    assert [a.try_acquire() for _ in range(4)] == [True, True, True, False]
    a.release()
    assert a.try_acquire()


@pytest.mark.timeout(10)
def test_the_typical_lag_ignores_one_stall_but_not_a_loop_that_cannot_keep_up() -> None:
    from arena.match.lag import LagTracker

    one_stall = LagTracker(0.0, tick_s=0.02)
    now = 0.0
    for i in range(50):  # a second of ticks, one of them 200 ms late (a GC pause)
        now += 0.02 + (0.2 if i == 25 else 0.0)
        one_stall.tick(now)
    assert one_stall.recent_ms == pytest.approx(200)
    assert one_stall.typical_ms == 0.0

    behind = LagTracker(0.0, tick_s=0.02)
    now = 0.0
    for _ in range(20):  # every tick 60 ms late
        now += 0.08
        behind.tick(now)
    assert behind.typical_ms == pytest.approx(60)
    assert behind.typical_lag_ms(now + 0.5) == pytest.approx(60)  # one late tick, so far
    assert behind.typical_lag_ms(now + 1.5) == pytest.approx(1480)  # stuck past the window


@pytest.mark.timeout(10)
def test_a_few_held_up_writes_barely_move_the_arenas_delay() -> None:
    """Writes held up by bots that stopped reading (3 s each) among an arena's prompt ones
    (5 ms): each counts at most clip_s, so ten of them move the average by a few ms."""
    from arena.match.lag import DelayAverage

    avg = DelayAverage()
    now = 0.0
    for i in range(2000):
        now += 0.001
        avg.record(now, 3.0 if i % 100 == 50 else 0.005)
    assert avg.average_ms(now) < 12  # unclipped: ~60 ms
    assert avg.average_ms(now + 2.0) == 0.0  # idle: no delay

    fresh = DelayAverage()
    fresh.record(0.0, 3.0)  # one event after idling starts from 0, not from its delay
    assert fresh.average_ms(0.0) == pytest.approx(0.5)
