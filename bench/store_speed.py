"""Store throughput: recorded matches and claims per second, on PostgreSQL and SQLite.

    python -m bench.store_speed [--seconds 5] [--db postgresql://postgres@127.0.0.1/test]

Each ``record`` is a real commit: a 3-hand match with its hands, both result rows, the two
bots' live openskill update read and written inside the transaction, and its queue entry's
end. Figures: PostgreSQL from 1 connection, from 4 connections in parallel threads into one
scope (a scope's matches commit one at a time, so its feed keeps their order) and into 4
scopes; SQLite (``synchronous=FULL``, WAL) from 1 connection. Claims: ``claim(limit=1)``
from 1 and from 4 connections over a queue filled beforehand, until it is empty (the
claimed rows pile up, as when a tournament's matches are handed out faster than they
finish). The PostgreSQL runs use a schema of their own, dropped after; where no server
answers, only SQLite is measured.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from gin_arena_core.rules import HandResult

from arena.match.messages import MatchResult, Termination
from arena.match.spec import MatchSpec
from arena.series.ratings import rate_match
from arena.store import open_store
from arena.store.base import Store, StoreBusy
from arena.store.sqlite import SqliteStore

HANDS = (HandResult("knock", 0, 12, knocker=0, deadwood=(3, 15)),
         HandResult("gin", 1, 40, knocker=1, deadwood=(20, 0)),
         HandResult("undercut", 0, 30, knocker=1, deadwood=(4, 6)))
PAIRS = tuple(itertools.combinations(("alpha", "beta", "gamma", "delta"), 2))


def spec_of(tag: str, i: int) -> MatchSpec:
    """The ``i``th match of a 4-bot round robin (the pairs in turn, each deal twice)."""
    return MatchSpec(f"{tag}:{i:07d}", PAIRS[i // 2 % len(PAIRS)], i // 2, i % 2,
                     f"seed:{i // 2}")


def result_of(spec: MatchSpec) -> MatchResult:
    return MatchResult(spec.match_id, 0, Termination.COMPLETED, None, (110, -110), "", HANDS)


def in_threads(stores: Sequence[Store], seconds: float,
               step: Callable[[Store, int, int], bool]) -> tuple[int, float]:
    """Run ``step(store, thread, i)`` on each store in its own thread until ``seconds``
    pass or a step returns False; returns how many steps returned True, and the time."""
    counts = [0] * len(stores)
    errors: list[BaseException] = []
    start = threading.Barrier(len(stores) + 1)
    deadline = [0.0]

    def run(k: int) -> None:
        start.wait()
        i = 0
        try:
            while time.perf_counter() < deadline[0]:
                try:
                    if not step(stores[k], k, i):
                        return
                except StoreBusy:
                    continue  # a retry, as a worker does
                counts[k] += 1
                i += 1
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(stores))]
    for t in threads:
        t.start()
    deadline[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return sum(counts), time.perf_counter() - began


def records(stores: Sequence[Store], seconds: float, scopes: Sequence[str]) -> float:
    """Commits per second of ``record`` from each store in a thread of its own, thread k
    writing to ``scopes[k % len(scopes)]``."""
    run = uuid.uuid4().hex[:6]

    def step(store: Store, k: int, i: int) -> bool:
        spec = spec_of(f"{run}:{k}", i)
        a, b = spec.pair
        return store.record(scopes[k % len(scopes)], spec, result_of(spec),
                            rate_match(a, b, 1.0 if spec.order == 0 else 0.0))

    done, took = in_threads(stores, seconds, step)
    return done / took


def claims(stores: Sequence[Store], seconds: float, scope: str, queued: int) -> float:
    """Claims per second (one match a claim) from each store in a thread of its own."""
    tag = uuid.uuid4().hex[:6]
    stores[0].enqueue(scope, [spec_of(tag, i) for i in range(queued)])

    def step(store: Store, k: int, i: int) -> bool:
        return bool(store.claim(f"w{k}", lease_s=600, scopes=[scope], limit=1))

    done, took = in_threads(stores, seconds, step)
    return done / took


def measure(open_one: Callable[[], Store], seconds: float, queue: int, parallel: bool
            ) -> list[tuple[str, float, str]]:
    """The figures for one kind of store: (what, rate, unit)."""
    out: list[tuple[str, float, str]] = []
    stores = [open_one() for _ in range(4 if parallel else 1)]
    try:
        for s in ("r0", "r1", "r2", "r3", "c"):
            stores[0].open_scope(s, "tournament", s, "{}")
        out.append(("record, 1 connection", records(stores[:1], seconds, ["r0"]), "commits/s"))
        if parallel:
            out.append(("record, 4 connections, 1 scope",
                        records(stores, seconds, ["r1"]), "commits/s"))
            out.append(("record, 4 connections, 4 scopes",
                        records(stores, seconds, ["r0", "r1", "r2", "r3"]), "commits/s"))
        out.append(("claim, 1 connection", claims(stores[:1], seconds, "c", queue), "claims/s"))
        if parallel:
            out.append(("claim, 4 connections", claims(stores, seconds, "c", queue),
                        "claims/s"))
    finally:
        for store in stores:
            store.close()
    return out


def postgres(url: str) -> tuple[Callable[[], Store], Callable[[], None], str] | str:
    """(open a store on a fresh schema, drop it, what the server is), or why not."""
    try:
        import psycopg
    except ImportError as e:
        return f"psycopg is not installed ({e})"
    try:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            conn.execute(f"CREATE SCHEMA {schema}")
            settings = {name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
                        for name in ("server_version", "fsync", "synchronous_commit",
                                     "wal_sync_method")}
    except psycopg.OperationalError as e:
        return f"no PostgreSQL at {url}: {' '.join(str(e).split())[:200]}"
    sep = "&" if "?" in url else "?"
    target = f"{url}{sep}options=-csearch_path%3D{schema}"

    def drop() -> None:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")

    about = ("PostgreSQL " + settings["server_version"].split()[0] + " (fsync "
             f"{settings['fsync']}, synchronous_commit {settings['synchronous_commit']}, "
             f"wal_sync_method {settings['wal_sync_method']}), over 127.0.0.1 TCP"
             if "127.0.0.1" in url or "localhost" in url else
             "PostgreSQL " + settings["server_version"].split()[0])
    return (lambda: open_store(target)), drop, about


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0, help="per figure")
    ap.add_argument("--queue", type=int, default=2000,
                    help="matches queued before each claims run (claimed until none is left "
                    "or the time is up)")
    ap.add_argument("--db", default=os.environ.get(
        "ARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"),
        help="a PostgreSQL server to measure (a schema is made and dropped)")
    args = ap.parse_args()
    rows: list[tuple[str, str, float, str]] = []
    notes: list[str] = []
    pg = postgres(args.db)
    if isinstance(pg, str):
        notes.append(f"PostgreSQL not measured: {pg}")
    else:
        open_pg, drop, about = pg
        notes.append(about)
        try:
            rows += [("PostgreSQL", *r) for r in measure(open_pg, args.seconds, args.queue,
                                                        parallel=True)]
        finally:
            drop()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        rows += [("SQLite", *r) for r in measure(lambda: SqliteStore(path), args.seconds,
                                                 args.queue, parallel=False)]
    notes.append(f"SQLite {sqlite3.sqlite_version} (WAL, synchronous=FULL) in "
                 f"{tempfile.gettempdir()}")
    today = datetime.date.today().isoformat()
    machine = platform.processor() or platform.machine()
    print(f"{today}, {machine}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{args.seconds:g} s per figure; a record is a 3-hand match with its openskill update")
    for note in notes:
        print(f"  {note}")
    for store, what, rate, unit in rows:
        print(f"  {store:<11} {what:<34} {rate:>9,.0f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
