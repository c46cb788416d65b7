"""Arena throughput and decision round trip, beside raw grpc.aio and the bridge alone.

    python -m bench.arena_speed [--matches 1,16,64] [--duration 6] [--rounds 3]

For each count N: an ``arena serve`` process (pinned to CPU 0) pairs 2N connecting bots;
this process (pinned to CPU 1) runs them as grpc.aio streams that answer at once (gin or
knock when legal, else the first legal move), so the figures measure the arena, not a bot.
Reported: the decision round trip p50/p99 timed on the client as raw's is (an answer
written to the match's next request read), the p50 of what the arena charges a bot's
clock (request sent to answer received, from the replays), decisions/s and hands/s, and
(Linux, from /proc) the server's CPU time per decision, split between trio's thread (the
match logic and message building) and the rest (the grpc.aio loop, grpc's poller and event
engine), with its context switches per decision.

Right after each arena run, with as many streams as the arena has matches: the raw
baseline (bench.raw_grpc_pingpong: the same messages, no trio, no match logic), then the
same ping-pong served through the arena's bridge with no match logic (``--bridge``), which
shows what the bridge alone costs. The set is repeated ``--rounds`` times: this machine's
speed drifts by tens of percent from minute to minute, so only neighbouring runs compare.
Printed: each round, then per count the medians and the range of the per-round ratios,
and the figure issue 9 point 8 sets a target for: the arena's server CPU per decision
against raw grpc.aio's server CPU per round trip (``CPU ×``), at most 1.5×.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc

from bench.raw_grpc_pingpong import RPC_TIMEOUT, pin, server_cpu_seconds
from bench.spawn import python_module

ROOT = Path(__file__).resolve().parents[1]
CPU_RATIO_TARGET = 1.5
"""Issue 9 point 8: the arena's server CPU per decision at most this many times raw
grpc.aio's server CPU per round trip, measured in the same run."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def choose(req: pb.DecisionRequest) -> pb.Action:
    legal: list[pb.Action] = list(req.legal)
    for a in legal:
        if a.WhichOneof("kind") in ("gin", "knock", "big_gin"):
            return a
    return legal[0]


async def bot(stub: Any, name: str, stop_at: float, counts: dict[str, int],
              answered: dict[str, int], samples: list[int], window: list[bool]) -> None:
    """One bot: play matches until ``stop_at``, answering each request at once. A round trip
    is timed as raw's is, on the client: from writing an answer (``answered``, per match) to
    reading the match's next request, whichever of its two bots that goes to."""
    clock = time.perf_counter_ns
    hello = pb.BotMessage(hello=pb.Hello(name=name, protocol_version=PROTOCOL_VERSION))
    while time.perf_counter() < stop_at:
        call = stub.Play(timeout=RPC_TIMEOUT)
        match_id = ""
        try:
            await call.write(hello)
            while (msg := await call.read()) is not grpc.aio.EOF:
                kind = msg.WhichOneof("kind")
                if kind == "request":
                    now = clock()
                    sent = answered.get(match_id)
                    if sent is not None and window[0]:
                        samples.append(now - sent)
                    counts["decisions"] += 1
                    reply = pb.BotMessage(action=pb.ActionReply(
                        request_id=msg.request.request_id, action=choose(msg.request)))
                    answered[match_id] = clock()
                    await call.write(reply)
                elif kind == "match_start":
                    match_id = msg.match_start.match_id
                elif kind == "event" and msg.event.WhichOneof("kind") == "hand_result":
                    counts["hand_events"] += 1
                elif kind == "match_end":
                    break
                if time.perf_counter() > stop_at:
                    break
        except grpc.aio.AioRpcError:
            pass
        finally:
            answered.pop(match_id, None)
            call.cancel()


def server_cpu(pid: int) -> dict[str, float]:
    """Process ``pid`` so far, from /proc (empty where it is missing): CPU seconds of the
    whole process (threads that ended included) and of trio's thread (the main one), and
    each live thread's context switches by thread id."""
    all_s, trio_s = server_cpu_seconds(pid), server_cpu_seconds(pid, pid)
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    if all_s is None or trio_s is None:
        return {}
    out = {"all_s": all_s, "trio_s": trio_s}
    for tid in tids:
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        out[f"switches {tid}"] = sum(int(line.split()[1]) for line in status.splitlines()
                                     if "ctxt_switches:" in line)
    return out


async def drive(port: int, matches: int, warmup: float, duration: float,
                server_pid: int = 0) -> dict[str, float]:
    counts = {"decisions": 0, "hand_events": 0}
    answered: dict[str, int] = {}
    samples: list[int] = []
    window = [False]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        await channel.channel_ready()
        stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        start = time.perf_counter()
        stop_at = start + warmup + duration
        tasks = [asyncio.create_task(bot(stub, f"b{i}", stop_at, counts, answered, samples,
                                         window))
                 for i in range(2 * matches)]
        await asyncio.sleep(warmup)
        base = dict(counts)
        window[0] = True
        cpu0 = server_cpu(server_pid) if server_pid else {}
        t0 = time.perf_counter()
        await asyncio.sleep(duration)
        elapsed = time.perf_counter() - t0
        cpu1 = server_cpu(server_pid) if server_pid else {}
        window[0] = False
        measured = {k: counts[k] - base[k] for k in counts}
        await asyncio.gather(*tasks, return_exceptions=True)
    result = {"decisions_per_s": measured["decisions"] / elapsed,
              "hands_per_s": measured["hand_events"] / 2 / elapsed}
    if samples:
        samples.sort()
        result["p50_us"] = samples[len(samples) // 2] / 1e3
        result["p99_us"] = samples[int(len(samples) * 0.99)] / 1e3
    if cpu0 and cpu1 and measured["decisions"]:
        per = 1e6 / measured["decisions"]
        all_s, trio_s = cpu1["all_s"] - cpu0["all_s"], cpu1["trio_s"] - cpu0["trio_s"]
        result["trio_us"] = trio_s * per
        result["other_us"] = (all_s - trio_s) * per
        result["server_cpu"] = all_s / elapsed
        # threads alive at the end; one that ended inside the window is left out
        result["switches"] = sum(v - cpu0.get(k, 0) for k, v in cpu1.items()
                                 if k.startswith("switches")) * per / 1e6
    return result


def round_trips(replays: Path) -> list[float]:
    out = []
    for f in replays.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            item = json.loads(line)
            if item["type"] == "action" and "defaulted" not in item:
                out.append(item["ms"])
    return out


def run_level(matches: int, warmup: float, duration: float) -> dict[str, float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = python_module("arena.cli", "--log-json", "serve", "--port", str(port),
                            "--replays", tmp, "--decision-ms", "10000", "--hello-ms", "30000",
                            cpu=0)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            server.stdout.readline()  # "arena listening on ..."
            result = asyncio.run(drive(port, matches, warmup, duration, server.pid))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
        rts = sorted(round_trips(Path(tmp)))
    if rts:
        result["charged_us"] = statistics.median(rts) * 1000
    return result


def run_raw(streams: int, warmup: float, duration: float, *, bridge: bool = False
            ) -> dict[str, float]:
    """One raw grpc.aio ping-pong run (its own server process; ``bridge``: served through
    the arena's bridge), as a dict."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.raw_grpc_pingpong", "--streams", str(streams), "--json",
         "--duration", str(duration), "--warmup", str(warmup), *(["--bridge"] if bridge else [])],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        check=True, timeout=120)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--matches", default="1,16,64")
    ap.add_argument("--duration", type=float, default=6.0)
    ap.add_argument("--warmup", type=float, default=1.5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-raw", action="store_true", help="skip the raw and bridge baselines")
    args = ap.parse_args()
    pin(1)
    levels = [int(x) for x in args.matches.split(",")]
    nan = float("nan")
    print(f"arena vs raw grpc.aio vs the bridge alone ({os.cpu_count()} cores; servers on "
          f"CPU 0, bots on CPU 1; grpcio {grpc.__version__}); times in µs")
    print(f"{'matches':>7} {'p50':>6} {'p99':>6} {'charged':>7} {'dec/s':>6} {'hands/s':>7} "
          f"{'CPU':>4} {'trio/d':>6} {'rest/d':>6} {'sw/d':>5} | {'raw p50':>7} {'rt/s':>5} "
          f"{'µs/rt':>5} | {'bridge p50':>10} {'rt/s':>5} | {'p50 ×':>5} {'thr %':>5} "
          f"{'bridge %':>8} {'CPU ×':>5}")
    Row = tuple[dict[str, float], dict[str, float], dict[str, float]]
    summary: dict[int, list[Row]] = {n: [] for n in levels}
    for _ in range(args.rounds):
        for n in levels:
            a = run_level(n, args.warmup, args.duration)
            short = min(args.duration, 5.0)
            r = {} if args.no_raw else run_raw(n, args.warmup, short)
            b = {} if args.no_raw else run_raw(n, args.warmup, short, bridge=True)
            summary[n].append((a, r, b))
            raw_rate = r.get("rt_per_s", nan)
            print(f"{n:>7} {a.get('p50_us', nan):>6.0f} {a.get('p99_us', nan):>6.0f}"
                  f" {a.get('charged_us', nan):>7.0f} {a['decisions_per_s']:>6.0f}"
                  f" {a['hands_per_s']:>7.1f} {a.get('server_cpu', nan):>4.0%}"
                  f" {a.get('trio_us', nan):>6.0f} {a.get('other_us', nan):>6.0f}"
                  f" {a.get('switches', nan):>5.1f} | {r.get('p50_us', nan):>7.0f}"
                  f" {raw_rate:>5.0f} {r.get('server_cpu_us_per_rt') or nan:>5.0f} |"
                  f" {b.get('p50_us', nan):>10.0f} {b.get('rt_per_s', nan):>5.0f} |"
                  f" {a.get('p50_us', nan) / r.get('p50_us', nan):>5.2f}"
                  f" {a['decisions_per_s'] / raw_rate * 100:>5.0f}"
                  f" {b.get('rt_per_s', nan) / raw_rate * 100:>8.0f}"
                  f" {cpu_ratio(a, r):>5.2f}", flush=True)
    if not args.no_raw:
        print("server CPU per decision, arena vs raw grpc.aio (medians over the rounds; "
              "issue 9 point 8):")
        for n in levels:
            rows = summary[n]
            trio_us = med([a.get("trio_us", nan) for a, _, _ in rows])
            rest_us = med([a.get("other_us", nan) for a, _, _ in rows])
            arena_cpu = med([a.get("trio_us", nan) + a.get("other_us", nan)
                             for a, _, _ in rows])
            raw_cpu = med([r.get("server_cpu_us_per_rt") or nan for _, r, _ in rows])
            ratios = [cpu_ratio(a, r) for a, r, _ in rows]
            verdict = "met" if med(ratios) <= CPU_RATIO_TARGET else "not met"
            print(f"{n:>7} matches: arena {arena_cpu:.0f} µs a decision (trio {trio_us:.0f} + "
                  f"rest {rest_us:.0f}) vs raw {raw_cpu:.0f} µs a round trip: CPU ratio "
                  f"{med(ratios):.2f}× (median of the rounds; rounds {spread(ratios, '.2f')}×); "
                  f"target ≤ {CPU_RATIO_TARGET}×: {verdict}")
    print("medians over the rounds (ratio of medians; per-round ratios' range):")

    for n in levels:
        rows = summary[n]
        arena_p50 = med([a.get("p50_us", nan) for a, _, _ in rows])
        arena_rate = med([a["decisions_per_s"] for a, _, _ in rows])
        if args.no_raw:
            print(f"{n:>7} matches: p50 {arena_p50:.0f} µs, {arena_rate:,.0f} decisions/s")
            continue
        raw_p50 = med([r["p50_us"] for _, r, _ in rows])
        raw_rate = med([r["rt_per_s"] for _, r, _ in rows])
        bridge_p50 = med([b["p50_us"] for _, _, b in rows])
        bridge_rate = med([b["rt_per_s"] for _, _, b in rows])
        p50x = [a.get("p50_us", nan) / r["p50_us"] for a, r, _ in rows]
        thr = [a["decisions_per_s"] / r["rt_per_s"] * 100 for a, r, _ in rows]
        bthr = [b["rt_per_s"] / r["rt_per_s"] * 100 for _, r, b in rows]
        print(f"{n:>7} matches: p50 {arena_p50:.0f} µs vs raw {raw_p50:.0f} "
              f"({arena_p50 / raw_p50:.2f}×; rounds {spread(p50x, '.2f')}×); "
              f"{arena_rate:,.0f} decisions/s vs raw {raw_rate:,.0f} rt/s "
              f"({arena_rate / raw_rate * 100:.0f}%; rounds {spread(thr, '.0f')}%); "
              f"bridge alone p50 {bridge_p50:.0f} µs, {bridge_rate:,.0f} rt/s "
              f"({bridge_rate / raw_rate * 100:.0f}%; rounds {spread(bthr, '.0f')}%)")
    return 0


def med(values: list[float]) -> float:
    """The median of the known values (NaN if none)."""
    nan = float("nan")
    known = [v for v in values if not math.isnan(v)]
    return statistics.median(known) if known else nan


def spread(values: list[float], fmt: str) -> str:
    """The known values' range as "low-high", or "-" if none."""
    known = [v for v in values if not math.isnan(v)]
    return f"{min(known):{fmt}}-{max(known):{fmt}}" if known else "-"


def cpu_ratio(arena: dict[str, float], raw: dict[str, float]) -> float:
    """The arena's server CPU per decision over raw's server CPU per round trip (NaN if
    either is unknown)."""
    nan = float("nan")
    arena_us = arena.get("trio_us", nan) + arena.get("other_us", nan)
    return arena_us / (raw.get("server_cpu_us_per_rt") or nan)


if __name__ == "__main__":
    sys.exit(main())
