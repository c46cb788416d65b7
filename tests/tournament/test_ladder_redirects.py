"""Review 2 findings on Redirect: what a hostile bot's early Hellos cost the match loop,
and what a network hiccup during a redirected match costs an honest SDK bot."""

from __future__ import annotations

import contextlib
from typing import Any

import grpc
import pytest
import trio
from gin_arena_core.protocol import pb
from gin_arena_sdk import Bot, client

from arena.server.arena import Arena

pytestmark = pytest.mark.timeout(60)


class _Woken(trio.abc.Instrument):
    def __init__(self) -> None:
        self.count = 0

    def task_scheduled(self, task: trio.lowlevel.Task) -> None:
        self.count += 1


def test_keeping_one_seat_wakes_only_the_hellos_that_wait_for_it() -> None:
    """Every Hello with an unknown seat key waits up to SEAT_EARLY_S; a bot (256 streams an
    address, 5,000 in all) keeps thousands waiting, and each seat the host then keeps must
    not wake them all on the match loop (it used to: one broadcast event)."""
    woken = _Woken()

    async def main() -> None:
        arena = Arena()
        async with trio.open_nursery() as nursery:
            for i in range(2000):
                nursery.start_soon(arena._kept_seat, f"junk-{i}")
            await trio.sleep(0.1)  # all of them wait
            trio.lowlevel.add_instrument(woken)
            with trio.move_on_after(0.2):
                await arena.expect("real-key", "beta", 5.0, False)
            trio.lowlevel.remove_instrument(woken)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert woken.count < 50, f"keeping one seat woke {woken.count} tasks"


class _Dropped(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "connection reset"


class _Ready:
    def result(self, timeout: float | None = None) -> None:
        return None


def streams_scripted_by(monkeypatch: pytest.MonkeyPatch, play_stream: Any) -> None:
    """The SDK client's streams answered by ``play_stream`` instead of a network: only
    ``_follow``'s retry logic is under test here."""
    monkeypatch.setattr(client, "_play_stream", play_stream)
    monkeypatch.setattr(client, "open_channel",
                        lambda *a, **k: contextlib.nullcontext(object()))
    monkeypatch.setattr(client.grpc, "channel_ready_future", lambda channel: _Ready())
    monkeypatch.setattr(client.pb_grpc, "ArenaStub", lambda channel: object())


def test_a_redirected_match_is_resumed_after_a_dropped_stream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot redirected to a host plays there; its stream drops mid-match (after
    MatchStart gave it a resume key). Over its own front end the SDK would resume within
    the grace; after a redirect it went "back to the arena" instead, and its seat at the
    host timed out (strikes, then a forfeit) for a hiccup."""
    hellos: list[tuple[str, str]] = []

    def play_stream(bot: Bot, stub: Any, hello: pb.Hello, seen: list[str], heard: list[int]
                    ) -> bool | pb.Redirect:
        hellos.append((hello.seat_key, hello.resume))
        if len(hellos) == 1:
            seen.append("resume-1")
            heard[0] += 5
            raise _Dropped()
        return True

    streams_scripted_by(monkeypatch, play_stream)
    redirect = pb.Redirect(address="127.0.0.1:1", seat_key="seat-1", valid_ms=5000)
    played = client._follow(Bot(), redirect, "token", tls=False, tls_ca=None)
    assert hellos[:2] == [("seat-1", ""), ("", "resume-1")], hellos
    assert played is True


def test_a_redirect_whose_first_dial_fails_is_tried_again_while_the_seat_is_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The host keeps the seat for ``valid_ms``; one refused connection (UNAVAILABLE before
    anything was heard) must not make the bot give its seat up, and then forfeit it as a
    no-show."""
    hellos: list[tuple[str, str]] = []

    def play_stream(bot: Bot, stub: Any, hello: pb.Hello, seen: list[str], heard: list[int]
                    ) -> bool | pb.Redirect:
        hellos.append((hello.seat_key, hello.resume))
        if len(hellos) == 1:
            raise _Dropped()
        return True

    streams_scripted_by(monkeypatch, play_stream)
    redirect = pb.Redirect(address="127.0.0.1:1", seat_key="seat-1", valid_ms=5000)
    assert client._follow(Bot(), redirect, "token", tls=False, tls_ca=None) is True
    assert hellos == [("seat-1", ""), ("seat-1", "")]
