"""Load: N raw grpc.aio bots against one ``arena serve``, beside a plain grpc.aio server.

    python -m bench.arena_load                        # 2,000 bots, both modes, ~5 min
    python -m bench.arena_load --bots 1500 --modes shared --servers arena
    python -m bench.arena_load --bots 20 --target 10 --json   # what the test runs

As an organiser would try it: an ``arena serve`` process (``--decision-ms``, games to
``--target``, replays into a temporary directory) and one client process with N bots as
raw grpc.aio streams (the generated stubs, no SDK). Each bot opens Arena.Play, says Hello
(protocol 1, a unique name), answers every DecisionRequest at once (gin or knock when
legal, else the first legal move, so games end) and reads until its stream ends. Modes:
``per-bot`` (one channel, so one TCP connection, per bot) and ``shared`` (``--channels``
channels, 8 by default, shared by all bots, as behind a gRPC proxy); each channel has its
own ``grpc.channel_id`` argument so grpc does not merge them, and the connections to the
server are counted with ``ss``.

In the same run, with the same client and modes, a plain grpc.aio server for the same
Play method (``baseline``: reads the Hello, holds the stream 5-10 s, sends ``match_end``,
ends OK) shows what gRPC and the client manage on their own.

Reported per mode and server:

* streams: by final gRPC status (client side), how many ended before any message
  arrived, how many ended OK after ``match_end`` (served), and the most TCP connections
  to the server seen at once;
* matches completed (client: ``match_end`` with reason ``completed``; arena: its replays
  by termination), matches/s and decisions/s over the client's wall time;
* decision latency p50/p99 two ways. *Bot round trip*: on the client, from a bot writing
  its answer to the next request of that match being read (by either of its two bots, both
  are in this process), so it holds the arena's turnaround and both network legs.
  *Arena charged*: what the arena's clock charged (request sent to answer received; the
  replays' ``ms``, defaulted moves included);
* defaulted moves (replays) and timeouts (the arena's ``timeout`` log lines), forfeits;
* the arena's log lines by event (``waiting``, ``session_refused`` ...);
* server peak RSS (VmHWM) and CPU per decision, trio's thread and the rest (/proc; Linux);
* health: grpc.health.v1 Check on the server every 0.5 s from this (parent) process
  during the run, counting answers that were not SERVING or failed.

Every wait is bounded (``--timeout`` is also each stream's deadline), and the processes
this script starts are killed when it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from gin_arena_core.protocol import PROTOCOL_VERSION, pb, pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.arena_speed import choose, free_port, server_cpu
from bench.raw_grpc_pingpong import percentile, pin
from bench.spawn import python_module

ROOT = Path(__file__).resolve().parents[1]
MODES = ("per-bot", "shared")
SERVERS = ("arena", "baseline")
START_TIMEOUT = 30.0  # seconds for a server to say it listens
STOP_TIMEOUT = 30.0  # seconds for a server to exit after SIGTERM before it is killed
HEALTH_EVERY = 0.5  # seconds between health checks
HEALTH_TIMEOUT = 1.0  # deadline of one health check
CLIENT_STALL_S = 0.25  # a client loop this late delays its bots' answers noticeably
HOLD_S = (5.0, 10.0)  # the baseline holds each stream this long

_started: list[subprocess.Popen[Any]] = []  # killed on exit, whatever ends the script


def _kill_started() -> None:
    for proc in _started:
        if proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)


# ------------------------------------------------------------------------------ client


class Tally:
    """What the bots saw, for one client run."""

    def __init__(self) -> None:
        self.status: Counter[str] = Counter()  # final gRPC status by name
        self.silent: Counter[str] = Counter()  # the same, for streams that got no message
        self.ends: Counter[str] = Counter()  # match_end reasons
        self.served = 0  # ended OK after a match_end
        self.decisions = 0  # requests answered
        self.told_defaulted = 0  # requests saying the previous decision was defaulted
        self.round_trips: list[int] = []  # ns: an answer written -> the match's next request
        self.first_message: list[float] = []  # s: stream opened -> its first message
        self.answered: dict[str, int] = {}  # match id -> when its last answer was written


async def bot(stub: Any, name: str, deadline: float, tally: Tally) -> None:
    """One bot: one stream, Hello, answer every request at once, read to the end."""
    clock = time.perf_counter_ns
    opened = time.perf_counter()
    call = stub.Play(timeout=deadline)
    match_id = ""
    got = 0
    ended = False  # match_end arrived
    code: grpc.StatusCode | None = None
    try:
        await call.write(pb.BotMessage(hello=pb.Hello(name=name,
                                                      protocol_version=PROTOCOL_VERSION)))
        while (msg := await call.read()) is not grpc.aio.EOF:
            if not got:
                tally.first_message.append(time.perf_counter() - opened)
            got += 1
            kind = msg.WhichOneof("kind")
            if kind == "request":
                now = clock()
                sent = tally.answered.get(match_id)
                if sent is not None:
                    tally.round_trips.append(now - sent)
                req = msg.request
                tally.decisions += 1
                tally.told_defaulted += req.previous_defaulted
                reply = pb.BotMessage(action=pb.ActionReply(request_id=req.request_id,
                                                            action=choose(req)))
                tally.answered[match_id] = clock()
                await call.write(reply)
            elif kind == "match_start":
                match_id = msg.match_start.match_id
            elif kind == "match_end":
                ended = True
                tally.ends[msg.match_end.reason] += 1
        code = await call.code()
    except grpc.aio.AioRpcError as e:
        code = e.code()
    except Exception:  # e.g. a write after the call ended (InvalidStateError)
        with contextlib.suppress(Exception):
            code = await asyncio.wait_for(call.code(), 5)
    finally:
        tally.answered.pop(match_id, None)
        call.cancel()
    name_ = code.name if code is not None else "UNKNOWN"
    tally.status[name_] += 1
    if not got:
        tally.silent[name_] += 1
    if code == grpc.StatusCode.OK and ended:
        tally.served += 1


async def run_client(port: int, bots: int, mode: str, channels: int, deadline: float
                     ) -> dict[str, Any]:
    """Run ``bots`` bots against 127.0.0.1:``port``; what they saw, as a dict."""
    tally = Tally()
    count = bots if mode == "per-bot" else channels
    # a distinct argument per channel: grpc shares one subchannel (TCP connection) between
    # channels with identical arguments
    chans = [grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.channel_id", i)])
             for i in range(count)]
    stubs = [pb_grpc.ArenaStub(c) for c in chans]  # type: ignore[no-untyped-call]
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    lags: list[float] = []  # s: how late each of this loop's 20 ms ticks woke
    ticker = asyncio.create_task(tick_lag(lags))
    tasks = [asyncio.create_task(bot(stubs[i % count], f"load-{i:05d}", deadline, tally))
             for i in range(bots)]
    _, pending = await asyncio.wait(tasks, timeout=deadline + 15)
    elapsed = time.perf_counter() - t0
    for t in pending:
        t.cancel()
    if pending:
        tally.status["CLIENT_GAVE_UP"] += len(pending)
        await asyncio.wait(pending, timeout=10)
    cpu = time.process_time() - cpu0
    ticker.cancel()
    await asyncio.gather(*(c.close() for c in chans), return_exceptions=True)
    rts = sorted(tally.round_trips)
    first = sorted(tally.first_message)
    return {
        "elapsed_s": elapsed, "client_cpu_s": cpu, "status": dict(tally.status),
        "silent": dict(tally.silent), "ends": dict(tally.ends), "served": tally.served,
        "decisions": tally.decisions, "told_defaulted": tally.told_defaulted,
        "rt_samples": len(rts),
        "rt_p50_ms": percentile(rts, 0.5) / 1e6 if rts else None,
        "rt_p99_ms": percentile(rts, 0.99) / 1e6 if rts else None,
        "first_p50_s": percentile(first, 0.5) if first else None,
        "first_max_s": first[-1] if first else None,
        "client_lag_max_ms": max(lags, default=0.0) * 1000,
        "client_stalls": sum(1 for x in lags if x > CLIENT_STALL_S),
    }


async def tick_lag(lags: list[float]) -> None:
    """How late this (client) loop runs: a late client is slow bots, not a slow arena."""
    loop = asyncio.get_running_loop()
    due = loop.time() + 0.02
    while True:
        await asyncio.sleep(max(0.0, due - loop.time()))
        now = loop.time()
        lags.append(max(0.0, now - due))
        due = now + 0.02


# ---------------------------------------------------------------------------- baseline


class HoldServicer(pb_grpc.ArenaServicer):
    """The plain grpc.aio baseline: read the Hello, hold 5-10 s, send match_end, end OK."""

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        hello = await context.read()
        if hello is grpc.aio.EOF:
            return
        await asyncio.sleep(random.uniform(*HOLD_S))
        await context.write(pb.ServerMessage(match_end=pb.MatchEnd(
            match_id="hold", winner=-1, reason="completed", blamed_seat=-1)))


async def serve_baseline() -> None:
    """Serve the baseline on a free port of 127.0.0.1 (printed) until SIGTERM or stdin EOF."""
    from grpc_health.v1 import health

    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    pb_grpc.add_ArenaServicer_to_server(HoldServicer(), server)  # type: ignore[no-untyped-call]
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"baseline listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    threading.Thread(  # stdin is a pipe from the parent: EOF means it is gone
        target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True
    ).start()
    await stop.wait()
    await server.stop(1.0)


# ------------------------------------------------------------------------------ parent


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident set size of ``pid`` (VmHWM, Linux), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def start_server(kind: str, args: argparse.Namespace, replays: Path, log: Path
                 ) -> tuple[subprocess.Popen[str], int]:
    """Start the arena or the baseline on a free port of 127.0.0.1; (process, port)."""
    root = Path(args.arena_root).resolve() if kind == "arena" else ROOT
    if kind == "arena":
        port = free_port()
        argv = ["--log-json", "serve", "--host", "127.0.0.1", "--port", str(port),
                "--replays", str(replays), "--decision-ms", str(args.decision_ms),
                "--set", f"target={args.target}", *args.serve_args]
        if args.hello_ms is not None:
            argv += ["--hello-ms", str(args.hello_ms)]
        cmd = python_module("arena.cli", *argv, cpu=0 if args.pin else None)
    else:
        cmd = python_module("bench.arena_load", "--serve-baseline",
                            cpu=0 if args.pin else None)
    env = dict(os.environ, PYTHONPATH=str(root))
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True)
    _started.append(proc)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""
    if " listening on " not in line:
        proc.kill()
        raise RuntimeError(f"{kind} server did not start (said {line!r}; log {log})")
    return proc, int(line.split(" listening on ")[1].split()[0].rsplit(":", 1)[1])


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


async def watch_health(port: int, stop: asyncio.Event, arena: bool) -> dict[str, Any]:
    """Check the server's health every HEALTH_EVERY s until ``stop``; counts by outcome.
    For the arena, also sample its Status (matches running, sessions waiting, each loop's
    lag, whether it admits new matches): the timeline of admission."""
    outcomes: Counter[str] = Counter()
    slowest = 0.0
    samples: list[list[float]] = []
    t_start = time.perf_counter()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        arena_stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
        while not stop.is_set():
            if arena:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    st = await arena_stub.Status(pb.StatusRequest(), timeout=HEALTH_TIMEOUT)
                    samples.append([round(time.perf_counter() - t_start, 2), st.matches_running,
                                    st.sessions_waiting, round(st.loop_lag_ms),
                                    round(st.grpc_loop_lag_ms), int(st.admitting),
                                    st.admission_window])
            t0 = time.perf_counter()
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""),
                                         timeout=HEALTH_TIMEOUT)
                outcomes[health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)] += 1
            except grpc.aio.AioRpcError as e:
                outcomes[e.code().name] += 1
            slowest = max(slowest, time.perf_counter() - t0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), HEALTH_EVERY)
    bad = sum(n for k, n in outcomes.items() if k != "SERVING")
    result: dict[str, Any] = {"checks": sum(outcomes.values()), "bad": bad,
                              "outcomes": dict(outcomes), "slowest_ms": slowest * 1000}
    if samples:
        result["status"] = {
            "samples": len(samples),
            "running_max": max(x[1] for x in samples),
            "waiting_max": max(x[2] for x in samples),
            "lag_p50_ms": percentile(sorted(x[3] for x in samples), 0.5),
            "lag_max_ms": max(x[3] for x in samples),
            "grpc_lag_p50_ms": percentile(sorted(x[4] for x in samples), 0.5),
            "grpc_lag_max_ms": max(x[4] for x in samples),
            "admitting_share": sum(x[5] for x in samples) / len(samples),
            # [s, running, waiting, lag ms, grpc lag ms, admitting, window]
            "timeline": samples,
        }
    return result


async def count_connections(port: int) -> int | None:
    """Established TCP connections to 127.0.0.1:``port`` (client ends, by ``ss``)."""
    if shutil.which("ss") is None:
        return None
    proc = await asyncio.create_subprocess_exec(
        "ss", "-Htn", "state", "established", f"( dport = :{port} )",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 10)
    except TimeoutError:
        proc.kill()
        return None
    return sum(1 for line in out.decode().splitlines() if line.strip())


async def watch_connections(port: int, stop: asyncio.Event) -> int | None:
    """The most connections to ``port`` seen at once, sampled until ``stop`` (every 0.2 s
    for the first 5 s, while the bots connect, then every 2 s)."""
    most: int | None = None
    t0 = time.perf_counter()
    while not stop.is_set():
        n = await count_connections(port)
        if n is not None:
            most = max(most or 0, n)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.2 if time.perf_counter() - t0 < 5 else 2.0)
    return most


async def drive(kind: str, args: argparse.Namespace, mode: str, port: int,
                server_pid: int) -> dict[str, Any]:
    """Run the client process against the server while watching health and connections."""
    stop = asyncio.Event()
    health = asyncio.create_task(watch_health(port, stop, kind == "arena"))
    conns = asyncio.create_task(watch_connections(port, stop))
    cpu0 = server_cpu(server_pid)
    cmd = [sys.executable, "-m", "bench.arena_load", "--client", "--port", str(port),
           "--bots", str(args.bots), "--modes", mode, "--channels", str(args.channels),
           "--timeout", str(args.timeout)]
    if args.pin:
        cmd.append("--pin")
    client = await asyncio.create_subprocess_exec(
        *cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(client.communicate(), args.timeout + 60)
    except TimeoutError:
        client.kill()
        await client.wait()
        raise RuntimeError(
            f"the {mode} client did not finish within {args.timeout + 60} s") from None
    finally:
        stop.set()
        result_h, most = await health, await conns
    cpu1 = server_cpu(server_pid)
    lines = out.decode().strip().splitlines()
    if client.returncode != 0 or not lines:
        raise RuntimeError(f"the client failed ({client.returncode}): "
                           f"{err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["health"] = result_h
    result["connections"] = None if most is None else most - 1  # less the health checks
    if cpu0 and cpu1:
        result["server_cpu_s"] = cpu1["all_s"] - cpu0["all_s"]
        result["server_trio_s"] = cpu1["trio_s"] - cpu0["trio_s"]
    return result


def read_replays(replays: Path) -> dict[str, Any]:
    """Decisions, charged times, defaults and terminations from the arena's replays."""
    ms: list[float] = []
    defaulted: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    for f in replays.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            item = json.loads(line)
            if item["type"] == "action":
                ms.append(item["ms"])
                if "defaulted" in item:
                    defaulted["timeout" if item["defaulted"].startswith("no answer")
                              else "refused"] += 1
            elif item["type"] == "end":
                ends[item["termination"]] += 1
    ms.sort()
    return {"decisions": len(ms), "terminations": dict(ends), "defaulted": dict(defaulted),
            "charged_p50_ms": percentile(ms, 0.5) if ms else None,
            "charged_p99_ms": percentile(ms, 0.99) if ms else None}


def read_log(log: Path) -> dict[str, Any]:
    """The arena's JSON log lines by event (session_refused split by status)."""
    events: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            events["(not json)"] += 1
            continue
        event = str(item.get("event", "?"))
        if event == "session_refused":
            event += f" {item.get('status')}"
        if item.get("level") in ("warning", "error", "critical"):
            event += f" [{item['level']}]"
        events[event] += 1
    return dict(events)


def run_one(kind: str, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """One server, one client run in ``mode``; every figure of it as a dict."""
    with tempfile.TemporaryDirectory(prefix="arena-load-") as tmp:
        replays, log = Path(tmp) / "replays", Path(tmp) / "server.log"
        proc, port = start_server(kind, args, replays, log)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.hog)]
        _started.extend(hogs)
        try:
            result = asyncio.run(drive(kind, args, mode, port, proc.pid))
            result["rss_mb"] = peak_rss_mb(proc.pid)
        finally:
            for h in hogs:
                h.kill()
                h.wait(timeout=10)
            stop_server(proc)
        result.update(server=kind, mode=mode, bots=args.bots, port=port)
        if kind == "arena":
            result["arena"] = read_replays(replays)
            result["log"] = read_log(log)
            if args.keep_logs:
                keep = Path(args.keep_logs)
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(log, keep / f"arena-{mode}-{args.bots}.log")
    return result


# ------------------------------------------------------------------------------ report


def _f(value: Any, fmt: str = ",.0f") -> str:
    return "-" if value is None else format(value, fmt)


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])
                     ) or "-"


def rows(r: dict[str, Any]) -> dict[str, str]:
    """The printed figures of one run, by row name."""
    lost = {k: v for k, v in r["status"].items() if k != "OK"}
    lost_ok = sum(r["status"].values()) - sum(lost.values()) - r["served"]
    a = r.get("arena", {})
    decisions = a.get("decisions", r["decisions"])
    completed = r["ends"].get("completed", 0) // 2  # both bots of a match see its end
    cpu = r.get("server_cpu_s")
    trio_s = r.get("server_trio_s")
    per = None if not decisions or cpu is None else cpu / decisions * 1e6
    per_trio = None if not decisions or trio_s is None else trio_s / decisions * 1e6
    h = r["health"]
    timeouts = sum(v for k, v in r.get("log", {}).items() if k.split()[0] == "timeout")
    st = h.get("status")
    return {
        "streams served (OK after match_end)": f"{r['served']:,} of {r['bots']:,}",
        "streams lost, by status": _counts(lost) + (f"; OK without match_end {lost_ok:,}"
                                                     if lost_ok else ""),
        "  of them before any message": _counts({k: v for k, v in r["silent"].items()
                                                 if k != "OK"}),
        "client TCP connections (most at once)": _f(r["connections"]),
        "wall time s": _f(r["elapsed_s"], ".1f"),
        "matches completed (client / arena)": (
            f"{completed:,} / " + (f"{a['terminations'].get('completed', 0):,}" if a else "-")),
        "matches/s": _f(completed / r["elapsed_s"], ".1f"),
        "decisions/s": _f(decisions / r["elapsed_s"]),
        "bot round trip p50 / p99 ms": (f"{_f(r['rt_p50_ms'], '.1f')} / "
                                        f"{_f(r['rt_p99_ms'], '.1f')}"),
        "arena charged p50 / p99 ms": (f"{_f(a.get('charged_p50_ms'), '.1f')} / "
                                       f"{_f(a.get('charged_p99_ms'), '.1f')}"),
        "client loop late: most ms; ticks > 250 ms": (
            f"{_f(r.get('client_lag_max_ms'))}; {_f(r.get('client_stalls'))}"),
        "first message p50 / max s": (f"{_f(r['first_p50_s'], '.2f')} / "
                                      f"{_f(r['first_max_s'], '.2f')}"),
        "defaulted moves (timeouts)": (f"{sum(a.get('defaulted', {}).values()):,} "
                                       f"({timeouts:,})" if a else "-"),
        "arena terminations": _counts(a.get("terminations", {})) if a else "-",
        "arena log lines": _counts(r.get("log", {})) if a else "-",
        "server peak RSS MB": _f(r.get("rss_mb")),
        "server CPU µs/decision (trio)": (f"{_f(per)} ({_f(per_trio)})" if per is not None
                                          else "-"),
        "server CPU s / client CPU s": f"{_f(cpu, '.1f')} / {_f(r['client_cpu_s'], '.1f')}",
        "health checks bad / all": (f"{h['bad']} / {h['checks']} (slowest "
                                    f"{h['slowest_ms']:.0f} ms)"),
        "matches running / waiting, most": (f"{st['running_max']:,} / {st['waiting_max']:,}"
                                            if st else "-"),
        "loop lag p50 / max ms (trio; grpc)": (
            f"{_f(st['lag_p50_ms'])} / {_f(st['lag_max_ms'])}; {_f(st['grpc_lag_p50_ms'])} / "
            f"{_f(st['grpc_lag_max_ms'])}" if st else "-"),
        "admitting new matches, share of time": (f"{st['admitting_share']:.0%}" if st else "-"),
    }


LONG_ROWS = ("streams lost, by status", "  of them before any message", "arena terminations",
             "arena log lines")
LABEL = {"arena": "arena", "baseline": "plain grpc.aio"}


def report(results: Sequence[dict[str, Any]]) -> None:
    """Print each mode's runs side by side (long rows one run per line, after the table)."""
    by: dict[tuple[str, str], dict[str, Any]] = {(r["mode"], r["server"]): r for r in results}
    for mode in dict.fromkeys(r["mode"] for r in results):
        table = [(s, rows(by[(mode, s)])) for s in SERVERS if (mode, s) in by]
        print(f"\n{by[(mode, table[0][0])]['bots']:,} bots, {mode} connections")
        names = [n for n in table[0][1] if n not in LONG_ROWS]
        width = max(len(n) for n in [*names, *LONG_ROWS])
        print(f"{'':<{width}}  " + "  ".join(f"{LABEL[s]:<24}" for s, _ in table))
        for n in names:
            print(f"{n:<{width}}  " + "  ".join(f"{t[n]:<24}" for _, t in table))
        for n in LONG_ROWS:
            for s, t in table:
                if t[n] != "-":
                    print(f"{n:<{width}}  {LABEL[s]}: {t[n]}")


# -------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.arena_load",
                                 description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--bots", type=int, default=2000, help="bots (even; default %(default)s)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="per-bot and/or shared (default %(default)s)")
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="arena and/or baseline (default %(default)s)")
    ap.add_argument("--channels", type=int, default=8, help="channels in shared mode")
    ap.add_argument("--decision-ms", type=int, default=1000)
    ap.add_argument("--target", type=int, default=100, help="game target (points)")
    ap.add_argument("--hello-ms", type=int, default=None, help="the arena's hello timeout")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds: each stream's deadline; a run is given this + 60 s")
    ap.add_argument("--pin", action="store_true",
                    help="pin the server to CPU 0 and the client to CPU 1")
    ap.add_argument("--hog", type=int, default=0,
                    help="busy-loop processes during each run (a busy machine)")
    ap.add_argument("--arena-root", default=str(ROOT),
                    help="the checkout whose arena is served (default: this one)")
    ap.add_argument("--serve-args", nargs="*", default=[],
                    help="more arguments for arena serve (e.g. --max-matches 200)")
    ap.add_argument("--keep-logs", default="", help="copy the arena's logs into this directory")
    ap.add_argument("--json", action="store_true", help="also print one JSON line per run")
    ap.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--serve-baseline", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.serve_baseline:
        asyncio.run(serve_baseline())
        return 0
    if args.client:
        if args.pin:
            pin(1)
        with contextlib.suppress(ValueError, OSError):  # one socket per channel
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        result = asyncio.run(run_client(args.port, args.bots, args.modes, args.channels,
                                        args.timeout))
        print(json.dumps(result))
        return 0

    modes = [m for m in args.modes.split(",") if m]
    servers = [s for s in args.servers.split(",") if s]
    if args.bots < 2 or args.bots % 2 or not set(modes) <= set(MODES) or not modes \
            or not set(servers) <= set(SERVERS) or not servers:
        ap.error("--bots must be even and >= 2; --modes from per-bot,shared; "
                 "--servers from arena,baseline")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.perf_counter()
    results = []
    try:
        for mode in modes:
            for kind in servers:
                r = run_one(kind, mode, args)
                results.append(r)
                if args.json:
                    print(json.dumps(r), flush=True)
    finally:
        _kill_started()
    print(f"arena_load: {args.bots:,} bots, decision {args.decision_ms} ms, target "
          f"{args.target}, {os.cpu_count()} cores, grpcio {grpc.__version__}"
          f"{', pinned' if args.pin else ''}{f', {args.hog} hogs' if args.hog else ''}; "
          f"{time.perf_counter() - t0:.0f} s in all")
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
