"""Every core: ``arena play`` with 1 and with 2 worker processes, over gRPC and in process,
beside raw grpc.aio, in one run.

    python -m bench.workers_speed [--games 200] [--workers 1,2] [--concurrency 16]

For each worker count: ``arena play BOT BOT --workers N`` (each worker its own arena on its
own loopback port, its bots launched beside it), timed from the first match recorded to
the last, and the CPU time of every process of the run read from /proc while it runs:
the coordinator (which is also the worker when N = 1), each worker process, and the bot
processes. Figures: hands/s and decisions/s, and CPU microseconds per decision of each
kind of process. The same with the bots called in process (``--in-process``: no gRPC, no
bot processes), where the workers' own CPU is all there is. Then raw grpc.aio
(bench.raw_grpc_pingpong, 64 streams: no trio, no match logic) gives its server's CPU per
round trip and round trips per second on this machine, the ceiling per core. Nothing is
asserted; the machine's speed drifts (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Proc:
    kind: str
    cpu_s: float = 0.0


@dataclass
class Run:
    workers: int
    mode: str
    hands: int = 0
    decisions: int = 0
    seconds: float = 0.0
    procs: dict[int, Proc] = field(default_factory=dict)

    def cpu_per_decision(self, kind: str) -> tuple[int, float]:
        """(how many processes of ``kind``, their mean CPU µs per decision each)."""
        mine = [p for p in self.procs.values() if p.kind == kind]
        if not mine or not self.decisions:
            return len(mine), 0.0
        return len(mine), sum(p.cpu_s for p in mine) / len(mine) / self.decisions * 1e6


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (from /proc)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(c for c, p in parent.items() if p == pid)
    return out


def cpu_and_kind(pid: int, root: int) -> tuple[float, str] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, IndexError):
        return None
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    kind = ("coordinator" if pid == root else "worker" if "arena.series.worker" in cmd
            else "bot" if "gin_arena_sdk.launch" in cmd else "other")
    return cpu, kind


def play(workers: int, games: int, concurrency: int, bots: list[str], in_process: bool) -> Run:
    run = Run(workers, "in process" if in_process else "gRPC")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "play", *bots, "--games", str(games),
             "--workers", str(workers), "--concurrency", str(concurrency), "--seed",
             "bench-workers", "--replays", str(folder), "--decision-ms", "5000",
             "--no-progress", *(["--in-process"] if in_process else [])], cwd=tmp, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None:
            for pid in descendants(proc.pid):
                got = cpu_and_kind(pid, proc.pid)
                if got is not None:
                    cpu, kind = got
                    slot = run.procs.setdefault(pid, Proc(kind))
                    slot.cpu_s = max(slot.cpu_s, cpu)
            time.sleep(0.1)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"arena play failed ({proc.returncode}): {err[-2000:]}")
        db = sqlite3.connect(folder / "results.sqlite")
        first, last, hands = db.execute(
            "SELECT MIN(finished_at), MAX(finished_at), SUM(hands) FROM matches").fetchone()
        db.close()
        run.hands = int(hands)
        run.seconds = max(1e-9, float(last) - float(first))
        run.decisions = sum(
            1 for f in folder.glob("*.jsonl") for line in f.read_text().splitlines()
            if '"type":"action"' in line)
    return run


def raw_baseline(duration: float) -> dict[str, float]:
    """raw grpc.aio at 64 streams: round trips/s and the server's CPU µs per round trip."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.raw_grpc_pingpong", "--streams", "64", "--duration",
         str(duration), "--json"], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"raw baseline failed: {done.stderr[-2000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return {"rt_per_s": float(data["rt_per_s"]),
            "server_us": float(data.get("server_cpu_us_per_rt") or 0.0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.workers_speed", description=__doc__)
    ap.add_argument("--games", type=int, default=200, help="games per run")
    ap.add_argument("--workers", default="1,2", help="worker counts (default: %(default)s)")
    ap.add_argument("--concurrency", type=int, default=16, help="matches at once in all")
    ap.add_argument("--bots", default="greedy,greedy")
    ap.add_argument("--raw-seconds", type=float, default=5.0)
    args = ap.parse_args(argv)
    if not Path("/proc").is_dir():
        raise SystemExit("needs /proc to read each process's CPU time")
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}: {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; arena play {args.bots} --games {args.games} "
          f"--concurrency {args.concurrency}")
    runs = [play(int(n), games, args.concurrency, args.bots.split(","), in_process)
            for in_process, games in ((False, args.games), (True, args.games * 10))
            for n in args.workers.split(",")]
    raw = raw_baseline(args.raw_seconds)
    print(f"{'mode':>10} {'workers':>7} {'hands/s':>8} {'x1':>5} {'decisions/s':>11}  CPU µs a "
          "decision: coordinator, each worker, each bot (count)")
    for r in runs:
        first = next(x for x in runs if x.mode == r.mode)
        base = first.hands / first.seconds
        _, coord = r.cpu_per_decision("coordinator")
        nw, worker = r.cpu_per_decision("worker")
        nb, bot = r.cpu_per_decision("bot")
        print(f"{r.mode:>10} {r.workers:>7} {r.hands / r.seconds:>8,.1f} "
              f"{r.hands / r.seconds / base:>5.2f} "
              f"{r.decisions / r.seconds:>11,.0f}  {coord:,.0f}; "
              f"{f'{worker:,.0f} ({nw})' if nw else '-'}; {bot:,.0f} ({nb})")
    print(f"raw grpc.aio, 64 streams, this machine: {raw['rt_per_s']:,.0f} round trips/s, "
          f"server {raw['server_us']:,.0f} µs CPU a round trip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
