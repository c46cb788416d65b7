"""Baseline: raw grpc.aio bidi ping-pong with the real gin_arena.v1 messages, no trio.

The server (a subprocess, pinned to CPU 0 where possible) answers a bot's Hello with a
DecisionRequest, and every ActionReply with the next one; the client (this process, pinned
to CPU 1) runs N concurrent Play streams that answer at once. A round trip is measured on
the client from writing a reply to reading the next request. This is the ceiling the arena
(grpc.aio + trio bridge + match logic) is compared against.

Run from the repository root::

    python -m bench.raw_grpc_pingpong                      # 1, 16, 64 streams, ~20 s
    python -m bench.raw_grpc_pingpong --streams 1,128 --duration 3 --warmup 0.5 --json
    python -m bench.raw_grpc_pingpong --bridge             # the same through the arena's bridge

``--bridge`` serves the same ping-pong from a trio handler through the arena's own
grpc.aio-in-a-thread bridge (arena.server.bridge.serve_grpc) instead of a grpc.aio
servicer: no match logic, so it measures what the bridge alone costs.

Prints, per stream count: p50 / p99 round trip in µs, round trips per second, and the
server's and the client's CPU time per round trip (from /proc, Linux only; a client near
1e6 / (rt/s) µs per round trip is saturated, and the result is then client-bound).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc

ROOT = Path(__file__).resolve().parents[1]
SERVER_CPU = 0
CLIENT_CPU = 1
SERVER_START_TIMEOUT = 30.0  # seconds
RPC_TIMEOUT = 120.0  # seconds: a deadline on every stream, so nothing outlives a hang

HAND = ["AS", "2S", "3S", "7D", "7H", "7C", "TD", "JD", "KC", "QH"]
PILE = ["4C", "9H", "2D", "JS", "5H", "8C", "AD", "6S"]


def make_view() -> pb.View:
    """A mid-hand view of a typical size: 10 cards, a short pile, some history."""
    history = [
        f"{i % 2} draw_stock" if i % 3 else f"{i % 2} discard {PILE[i % len(PILE)]}"
        for i in range(16)
    ]
    return pb.View(
        seat=0,
        phase=pb.PHASE_DISCARD,
        turn=0,
        dealer=1,
        hand=[*HAND, "5D"],
        opponent_hand_size=10,
        opponent_known=["9H"],
        discard_pile=PILE,
        stock_count=21,
        knock_limit=10,
        upcard="4C",
        history=history,
        scores=[25, 40],
        hand_number=3,
    )


VIEW = make_view()
LEGAL = [pb.Action(discard=pb.CardMove(card=card)) for card in [*HAND, "5D"]]


def make_request(request_id: int) -> pb.ServerMessage:
    """A DecisionRequest as the arena would send it (built fresh, as the arena does)."""
    return pb.ServerMessage(
        request=pb.DecisionRequest(
            request_id=request_id, view=VIEW, legal=LEGAL, time_left_ms=5000, bank_left_ms=60000
        )
    )


def make_reply(request_id: int) -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.ActionReply(
            request_id=request_id, action=pb.Action(discard=pb.CardMove(card="KC"))
        )
    )


def pin(cpu: int) -> bool:
    """Pin this process to ``cpu`` if the OS allows and the CPU exists."""
    if not hasattr(os, "sched_setaffinity") or cpu >= (os.cpu_count() or 1):
        return False
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return False
    return True


# ------------------------------------------------------------------------------- server


class PingPongServicer(pb_grpc.ArenaServicer):
    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        hello = await context.read()
        if hello is grpc.aio.EOF:
            return
        request_id = 0
        while True:
            request_id += 1
            await context.write(make_request(request_id))
            message = await context.read()
            if message is grpc.aio.EOF:
                return


async def serve(port: int) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    pb_grpc.add_ArenaServicer_to_server(PingPongServicer(), server)  # type: ignore[no-untyped-call]
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(bound, flush=True)  # the parent reads the port from our first line
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # stdin is a pipe from the parent: EOF means the parent is gone, so stop too
    threading.Thread(
        target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True
    ).start()
    await stop.wait()  # not wait_for_termination(): see the grpc-trio note, pitfall 1
    await server.stop(0.5)


def serve_bridge(port: int) -> None:
    """The same ping-pong as a trio handler behind the arena's bridge (design f)."""
    import trio

    from arena.logs import configure
    from arena.server.bridge import Connection, serve_grpc

    configure(json=True, level="warning")  # stdout carries only the port

    async def handler(conn: Connection) -> None:
        if await conn.receive() is None:  # the Hello
            return
        request_id = 0
        while True:
            request_id += 1
            conn.send(make_request(request_id))
            if await conn.receive() is None:
                return

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(functools.partial(
                serve_grpc, handler, host="127.0.0.1", port=port, grace=0.5))
            print(bound, flush=True)  # the parent reads the port from our first line

            async def parent_gone() -> None:  # stdin is a pipe from the parent
                await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
                nursery.cancel_scope.cancel()

            nursery.start_soon(parent_gone)
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    break
            nursery.cancel_scope.cancel()

    trio.run(main)


# ------------------------------------------------------------------------------- client


@dataclass(frozen=True, slots=True)
class Result:
    streams: int
    round_trips: int
    p50_us: float
    p99_us: float
    rt_per_s: float
    server_cpu_us_per_rt: float | None
    client_cpu_us_per_rt: float | None


async def one_stream(stub: Any, record_from: float, stop_at: float, samples: list[int]) -> None:
    """Ping-pong until ``stop_at``; record round trips that start after ``record_from``."""
    call = stub.Play(timeout=RPC_TIMEOUT)
    await call.write(pb.BotMessage(hello=pb.Hello(name="bench", protocol_version=PROTOCOL_VERSION)))
    message = await call.read()
    clock = time.perf_counter_ns
    record_from_ns, stop_ns = int(record_from * 1e9), int(stop_at * 1e9)
    while True:
        t0 = clock()
        await call.write(make_reply(message.request.request_id))
        message = await call.read()
        t1 = clock()
        if t0 >= record_from_ns:
            samples.append(t1 - t0)
        if t1 >= stop_ns:
            break
    await call.done_writing()
    while await call.read() is not grpc.aio.EOF:
        pass


def server_cpu_seconds(pid: int, thread: int | None = None) -> float | None:
    """User + system CPU time of process ``pid`` (threads that ended included), or of one
    of its threads (Linux /proc), or None."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    try:
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    index = min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))
    return float(sorted_values[index])


async def run_phase(
    port: int, streams: int, warmup: float, duration: float, server_pid: int
) -> Result:
    samples: list[int] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        start = time.perf_counter()
        record_from, stop_at = start + warmup, start + warmup + duration
        cpu_task = asyncio.create_task(_cpu_during(server_pid, record_from, stop_at))
        client_cpu_task = asyncio.create_task(_cpu_during(os.getpid(), record_from, stop_at))
        await asyncio.gather(
            *(one_stream(stub, record_from, stop_at, samples) for _ in range(streams))
        )
        cpu, client_cpu = await cpu_task, await client_cpu_task
    samples.sort()
    count = len(samples)
    return Result(
        streams=streams,
        round_trips=count,
        p50_us=percentile(samples, 0.50) / 1e3 if count else float("nan"),
        p99_us=percentile(samples, 0.99) / 1e3 if count else float("nan"),
        rt_per_s=count / duration,
        server_cpu_us_per_rt=cpu / count * 1e6 if cpu is not None and count else None,
        client_cpu_us_per_rt=(
            client_cpu / count * 1e6 if client_cpu is not None and count else None
        ),
    )


async def _cpu_during(pid: int, start: float, stop: float) -> float | None:
    await asyncio.sleep(max(0.0, start - time.perf_counter()))
    before = server_cpu_seconds(pid)
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))
    after = server_cpu_seconds(pid)
    return None if before is None or after is None else after - before


def start_server(pin_cpu: bool, bridge: bool = False) -> tuple[subprocess.Popen[str], int]:
    args = [sys.executable, "-m", "bench.raw_grpc_pingpong", "--serve"]
    if not pin_cpu:
        args.append("--no-pin")
    if bridge:
        args.append("--bridge")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], SERVER_START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""
    if not line.strip().isdigit():
        proc.kill()
        raise RuntimeError(f"bench server did not start (said {line!r})")
    return proc, int(line)


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.raw_grpc_pingpong",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--streams", default="1,16,64", help="stream counts (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per count")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds not measured per count")
    parser.add_argument("--no-pin", action="store_true", help="do not pin server/client to CPUs")
    parser.add_argument("--json", action="store_true", help="print one JSON object per count")
    parser.add_argument("--bridge", action="store_true",
                        help="serve through the arena's trio bridge instead of plain grpc.aio")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.serve:
        if not args.no_pin:
            pin(SERVER_CPU)
        if args.bridge:
            serve_bridge(args.port)
        else:
            asyncio.run(serve(args.port))
        return 0

    counts = [int(n) for n in args.streams.split(",")]
    pinned = not args.no_pin and pin(CLIENT_CPU)
    proc, port = start_server(pin_cpu=not args.no_pin, bridge=args.bridge)
    try:
        if not args.json:
            where = (
                f"server on CPU {SERVER_CPU}, client on CPU {CLIENT_CPU}" if pinned else "unpinned"
            )
            what = "through the arena's trio bridge" if args.bridge else "raw grpc.aio"
            print(
                f"{what} ping-pong, grpcio {grpc.__version__}, {where}, "
                f"{args.duration:g} s per count after {args.warmup:g} s warm-up"
            )
            print(
                f"{'streams':>7} {'p50 µs':>8} {'p99 µs':>8} {'rt/s':>8} "
                f"{'srv µs/rt':>9} {'cli µs/rt':>9} {'rts':>8}"
            )
        for streams in counts:
            result = asyncio.run(run_phase(port, streams, args.warmup, args.duration, proc.pid))
            if args.json:
                print(json.dumps(asdict(result)))
            else:
                print(
                    f"{result.streams:>7} {result.p50_us:>8.0f} {result.p99_us:>8.0f} "
                    f"{result.rt_per_s:>8.0f} {_us(result.server_cpu_us_per_rt):>9} "
                    f"{_us(result.client_cpu_us_per_rt):>9} {result.round_trips:>8}"
                )
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
