"""The timer service and the mailbox the gRPC seats wait in, on trio's virtual clock.

``autojump_clock`` makes every deadline exact: a timer must fire when trio's clock reads
its deadline, never before, and a wait must end at its deadline to the tick.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from arena.match.timers import TIMED_OUT, Mailbox, TimedOut, TimerService, receive_by

pytestmark = pytest.mark.timeout(60)


def run(main: Callable[[], Awaitable[None]]) -> None:
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def with_service(body: Callable[[TimerService], Awaitable[None]]) -> None:
    """Run ``body(service)`` while ``service`` runs."""
    service = TimerService()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(service.run)
        await body(service)
        nursery.cancel_scope.cancel()


def test_timers_fire_at_their_deadlines_in_order() -> None:
    fired: list[tuple[str, float]] = []

    async def body(service: TimerService) -> None:
        start = trio.current_time()
        for name, after in [("c", 3.0), ("a", 1.0), ("b", 2.0), ("a2", 1.0)]:
            service.call_at(start + after,
                            lambda name=name: fired.append((name, trio.current_time() - start)))
        assert len(service) == 4
        await trio.sleep(5)
        assert len(service) == 0

    run(lambda: with_service(body))
    assert fired == [("a", 1.0), ("a2", 1.0), ("b", 2.0), ("c", 3.0)]


def test_a_cancelled_timer_never_fires() -> None:
    fired: list[str] = []

    async def body(service: TimerService) -> None:
        now = trio.current_time()
        keep = service.call_at(now + 2, lambda: fired.append("keep"))
        drop = service.call_at(now + 1, lambda: fired.append("drop"))
        drop.cancel()
        drop.cancel()  # idempotent
        assert len(service) == 1 and not drop.is_pending and keep.is_pending
        await trio.sleep(3)
        assert not keep.is_pending
        keep.cancel()  # a no-op once fired
        assert len(service) == 0

    run(lambda: with_service(body))
    assert fired == ["keep"]


def test_an_earlier_deadline_wakes_the_sleeping_service() -> None:
    """The service sleeps until its earliest timer; one added earlier still fires on time."""
    fired: list[float] = []

    async def body(service: TimerService) -> None:
        start = trio.current_time()
        service.call_at(start + 100, lambda: fired.append(trio.current_time() - start))
        await trio.sleep(1)  # the service now sleeps until start + 100
        service.call_at(start + 2, lambda: fired.append(trio.current_time() - start))
        await trio.sleep(200)

    run(lambda: with_service(body))
    assert fired == [2.0, 100.0]


def test_many_timers_fire_on_time_and_cancelled_ones_are_dropped() -> None:
    """Thousands of timers, most cancelled before they fall due (as a match's are: its bots
    answer first): each kept one fires once at its deadline, the heap does not keep the
    cancelled ones, and timers added while others fire still fire on time."""
    rng = random.Random(5)
    fired: dict[int, float] = {}
    kept: dict[int, float] = {}

    async def body(service: TimerService) -> None:
        for i in range(5000):
            deadline = trio.current_time() + rng.uniform(0.001, 50)
            timer = service.call_at(deadline, lambda i=i: fired.setdefault(
                i, trio.current_time()))
            if rng.random() < 0.9:
                timer.cancel()
            else:
                kept[i] = deadline
            if i % 100 == 0:
                await trio.sleep(0.01)
        assert len(service) <= len(kept)
        assert len(service._heap) <= 2 * len(service) + 512  # cancelled ones are dropped
        await trio.sleep(60)

    run(lambda: with_service(body))
    assert fired == kept


def test_a_timer_added_by_a_firing_one_fires_too() -> None:
    fired: list[float] = []

    async def body(service: TimerService) -> None:
        start = trio.current_time()

        def again() -> None:
            fired.append(trio.current_time() - start)
            if len(fired) < 3:
                service.call_at(trio.current_time() + 1, again)

        service.call_at(start + 1, again)
        await trio.sleep(10)

    run(lambda: with_service(body))
    assert fired == [1.0, 2.0, 3.0]


# ------------------------------------------------------------------------------- mailbox


def test_a_wait_with_nothing_arriving_times_out_at_its_deadline() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[str](service)
        start = trio.current_time()
        assert await box.get(start + 1.5) is TIMED_OUT
        assert trio.current_time() == start + 1.5
        assert len(service) == 0
        assert await box.get(start) is TIMED_OUT  # a deadline already past: at once
        assert trio.current_time() == start + 1.5

    run(lambda: with_service(body))


def test_an_item_arriving_before_the_deadline_is_returned_and_its_timer_cancelled() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[str](service)
        start = trio.current_time()

        async def later() -> None:
            await trio.sleep(0.5)
            box.put("answer")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(later)
            assert await box.get(start + 1) == "answer"
        assert trio.current_time() == start + 0.5
        assert len(service) == 0
        box.put("ready")  # already there: returned at once
        assert await box.get(start + 1) == "ready"
        assert trio.current_time() == start + 0.5

    run(lambda: with_service(body))


def test_items_come_in_order_then_none_after_the_end() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[int](service)
        for i in range(3):
            box.put(i)
        box.end()
        box.end()
        with pytest.raises(trio.ClosedResourceError):
            box.put(9)
        assert len(box) == 3
        assert [await box.get(trio.current_time() + 1) for _ in range(3)] == [0, 1, 2]
        assert await box.get(trio.current_time() + 1) is None
        assert box.get_nowait() is None

    run(lambda: with_service(body))


def test_the_end_wakes_a_waiting_reader() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[int](service)
        start = trio.current_time()

        async def end_later() -> None:
            await trio.sleep(0.25)
            box.end()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(end_later)
            assert await box.get(start + 5) is None
        assert trio.current_time() == start + 0.25 and len(service) == 0

    run(lambda: with_service(body))


def test_closing_raises_for_a_waiting_reader_and_for_later_ones() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[int](service)
        box.put(1)
        box.get_nowait()

        async def close_later() -> None:
            await trio.sleep(0.1)
            box.close()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(close_later)
            with pytest.raises(trio.ClosedResourceError):
                await box.get(trio.current_time() + 5)
        assert len(service) == 0
        with pytest.raises(trio.ClosedResourceError):
            box.get_nowait()
        with pytest.raises(trio.ClosedResourceError):
            await box.get()

    run(lambda: with_service(body))


def test_cancelling_a_wait_loses_nothing_and_cancels_its_timer() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[str](service)
        start = trio.current_time()
        with trio.move_on_after(0.5):
            await box.get(start + 2)
        assert trio.current_time() == start + 0.5 and len(service) == 0
        box.put("late")
        assert await box.get(start + 2) == "late"

    run(lambda: with_service(body))


def test_one_reader_at_a_time() -> None:
    async def body(service: TimerService) -> None:
        box = Mailbox[int](service)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(box.get)
            await trio.sleep(0.1)
            with pytest.raises(trio.BusyResourceError):
                await box.get()
            box.put(1)

    run(lambda: with_service(body))


def test_receive_by_times_out_a_plain_receive() -> None:
    async def main() -> None:
        send, receive = trio.open_memory_channel[int](1)
        start = trio.current_time()
        got: int | TimedOut = await receive_by(start + 1, receive.receive)
        assert got is TIMED_OUT and trio.current_time() == start + 1
        send.send_nowait(7)
        assert await receive_by(start + 5, receive.receive) == 7

    run(main)
