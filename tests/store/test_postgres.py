"""What only the PostgreSQL store does: reconnecting, races between hosts, lock waits,
redacted passwords, refused and newer schemas.

(Everything every store does is in test_store.py, run against PostgreSQL too.) Each test
has a schema of its own on the test server; skipped where none answers, except under CI.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from gin_arena_core.rules import HandResult

from arena.match.messages import MatchResult, Termination
from arena.match.spec import MatchSpec
from arena.store import open_store
from arena.store.base import Rating, StoreBusy, StoreError
from tests.store.conftest import drop_schema, postgres_or_skip

if os.environ.get("CI") != "true":  # under CI a missing driver must fail, not skip
    pytest.importorskip("psycopg", reason="psycopg is not installed")

pytestmark = pytest.mark.timeout(30)

HANDS = (HandResult("knock", 0, 12, knocker=0, deadwood=(3, 15)),
         HandResult("gin", 1, 40, knocker=1, deadwood=(20, 0)),
         HandResult("undercut", 0, 30, knocker=1, deadwood=(4, 6)))


def spec(i: int) -> MatchSpec:
    return MatchSpec(f"m{i:04d}", ("a", "b"), i // 2, i % 2, f"s{i // 2}")


def result_for(s: MatchSpec) -> MatchResult:
    return MatchResult(s.match_id, 0, Termination.COMPLETED, None, (100, -100), "", HANDS)


def bump(stored: Any) -> dict[str, Rating]:
    return {bot: Rating(stored.get(bot, Rating(0.0, 1.0)).mu + 1, 1.0,
                        stored.get(bot, Rating(0.0, 1.0)).games + 1) for bot in "ab"}


@pytest.fixture
def url() -> Iterator[str]:
    """A URL of a fresh schema on the test server (dropped after)."""
    made = postgres_or_skip()
    try:
        yield made
    finally:
        drop_schema(made)


def admin() -> Any:
    """A plain connection to the test server, to look at or kill the store's."""
    import psycopg

    from tests.store.conftest import POSTGRES_URL

    return psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3)


def named(url: str) -> tuple[str, str]:
    """``url`` with an application name of its own, and that name."""
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    return f"{url}&application_name={name}", name


def kill(name: str) -> int:
    """Terminate every backend of application ``name``; how many there were."""
    with admin() as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE application_name = %s", (name,)).fetchall()
    return len(rows)


def backend_pids(name: str) -> set[int]:
    with admin() as conn:
        return {r[0] for r in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,))}


# ------------------------------------------------------------------------- losing the server


def test_a_connection_killed_by_the_server_is_made_again(url: str) -> None:
    target, name = named(url)
    store = open_store(target)
    try:
        store.open_scope("t", "tournament", "t", "{}")
        (before,) = backend_pids(name)
        assert kill(name) == 1
        # the next call is busy, or finds the connection dead before it began and makes a
        # new one; either way the one after that works, and nothing is lost or doubled
        try:
            first = store.record("t", spec(0), result_for(spec(0)), bump)
        except StoreBusy as e:
            assert "\n" not in str(e)
            first = False  # nothing written
        assert store.record("t", spec(1), result_for(spec(1)), bump) is True
        assert backend_pids(name) - {before}
        recorded = {"m0000", "m0001"} if first else {"m0001"}
        assert store.finished_ids("t") == recorded
        assert store.ratings("t")["a"].games == len(recorded)
        assert kill(name) == 1
        assert store.finished_ids("t") == recorded  # a read is retried at once
    finally:
        store.close()


def test_a_connection_lost_inside_a_write_is_busy_and_writes_nothing(url: str) -> None:
    from arena.store.postgres import PostgresStore

    target, name = named(url)
    store = PostgresStore(target)
    try:
        store.open_scope("t", "tournament", "t", "{}")
        store.enqueue("t", [spec(0)])
        outcome: list[object] = []
        with admin() as holder:
            holder.execute("SET search_path = " + url.rsplit("%3D", 1)[1])
            with holder.transaction():  # another host holds the scope's row
                holder.execute("SELECT 1 FROM scopes WHERE scope = 't' FOR UPDATE")

                def write() -> None:
                    try:
                        outcome.append(store.record("t", spec(0), result_for(spec(0)), bump))
                    except StoreBusy as e:
                        outcome.append(e)

                thread = threading.Thread(target=write)
                thread.start()
                with admin() as watcher:
                    deadline = time.monotonic() + 5
                    while not watcher.execute(
                            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s AND "
                            "wait_event_type = 'Lock'", (name,)).fetchone():
                        assert time.monotonic() < deadline, "the write never waited"
                        time.sleep(0.02)
                assert kill(name) == 1  # cut off mid-transaction
                thread.join(5)
        (busy,) = outcome
        assert isinstance(busy, StoreBusy) and "could not record match m0000 of 't'" in str(busy)
        assert "\n" not in str(busy)
        assert store.matches("t") == [] and store.queue_counts("t").queued == 1
        assert store.record("t", spec(0), result_for(spec(0)), bump) is True  # kept, then in
        assert store.queue_counts("t").done == 1
    finally:
        store.close()


class Proxy:
    """A TCP relay to the test server that can be cut (connections dropped, new ones
    refused) and put back on the same port: a database out of reach for a while."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            if self._listener is not None:  # shutdown wakes the accept() blocked on it
                with contextlib.suppress(OSError):
                    self._listener.shutdown(socket.SHUT_RDWR)
                self._listener.close()
                self._listener = None
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target, timeout=3)
            server.settimeout(None)
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)


def test_results_wait_while_the_server_is_out_of_reach_and_go_in_when_it_is_back(
        url: str) -> None:
    parts = urlsplit(url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    user = f"{parts.username}@" if parts.username else ""
    via = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{proxy.port}"))
    store = open_store(via)
    try:
        store.open_scope("t", "tournament", "t", "{}")
        store.enqueue("t", [spec(0), spec(1)])
        (claim,) = store.claim("w", lease_s=30)
        proxy.cut()
        for _ in range(3):  # a worker keeps its result and retries
            with pytest.raises(StoreBusy, match=f"127.0.0.1.*{proxy.port}"):
                store.record("t", claim.spec, result_for(claim.spec), bump)
        with pytest.raises(StoreBusy):
            store.queue_counts("t")
        proxy.restore()
        assert store.record("t", claim.spec, result_for(claim.spec), bump) is True
        assert store.queue_counts("t").done == 1 and len(store.results("t")) == 2
    finally:
        proxy.cut()
        store.close()


def test_a_lock_held_too_long_elsewhere_is_busy_not_an_error(url: str) -> None:
    from arena.store.postgres import PostgresStore

    store = PostgresStore(url, lock_timeout_s=0.2)
    try:
        store.open_scope("t", "tournament", "t", "{}")
        with admin() as holder:
            holder.execute("SET search_path = " + url.rsplit("%3D", 1)[1])
            with holder.transaction():
                holder.execute("SELECT 1 FROM scopes WHERE scope = 't' FOR UPDATE")
                with pytest.raises(StoreBusy, match="could not record match m0000"):
                    store.record("t", spec(0), result_for(spec(0)))
                with pytest.raises(StoreBusy):
                    store.take_coordinator("t", "me", 30)
        assert store.record("t", spec(0), result_for(spec(0))) is True
    finally:
        store.close()


# ------------------------------------------------------------------------- many hosts at once


def test_two_hosts_recording_the_same_match_count_it_once(url: str) -> None:
    stores = [open_store(url) for _ in range(2)]
    try:
        stores[0].open_scope("t", "tournament", "t", "{}")
        n = 25
        stores[0].enqueue("t", [spec(i) for i in range(n)])
        wins: list[list[bool]] = [[], []]
        errors: list[BaseException] = []
        barrier = threading.Barrier(2)

        def host(k: int) -> None:
            try:
                for i in range(n):
                    barrier.wait(5)
                    wins[k].append(stores[k].record("t", spec(i), result_for(spec(i)), bump))
            except BaseException as e:
                errors.append(e)
                barrier.abort()

        threads = [threading.Thread(target=host, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert errors == []
        assert [a + b for a, b in zip(*wins, strict=True)] == [1] * n  # exactly one True each
        assert len(stores[1].matches("t")) == n and len(stores[1].results("t")) == 2 * n
        assert stores[1].ratings("t")["a"] == Rating(n, 1.0, n)  # every update read the last
        assert stores[1].queue_counts("t").done == n
    finally:
        for s in stores:
            s.close()


def test_four_hosts_claim_two_hundred_matches_once_each(url: str) -> None:
    setup = open_store(url)
    stores = [open_store(url) for _ in range(4)]
    try:
        setup.open_scope("t", "tournament", "t", "{}")
        n = 200
        setup.enqueue("t", [spec(i) for i in range(n)])
        got: list[list[str]] = [[] for _ in stores]
        errors: list[BaseException] = []

        def host(k: int) -> None:
            try:
                while claims := stores[k].claim(f"w{k}", lease_s=30, limit=3):
                    got[k] += [c.spec.match_id for c in claims]
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=host, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert errors == []
        claimed = sorted(m for ids in got for m in ids)
        assert claimed == [spec(i).match_id for i in range(n)]
        assert all(got), "every host got some work"
        assert setup.queue_counts("t").claimed == n
    finally:
        setup.close()
        for s in stores:
            s.close()


def test_a_watcher_never_skips_a_match_recorded_by_many_hosts(url: str) -> None:
    stores = [open_store(url) for _ in range(4)]
    watcher = open_store(url)
    try:
        stores[0].open_scope("t", "tournament", "t", "{}")
        n = 80
        errors: list[BaseException] = []

        def host(k: int) -> None:
            try:
                for i in range(k, n, 4):
                    stores[k].record("t", spec(i), result_for(spec(i)), bump)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=host, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        seen: list[str] = []
        seq = 0
        while True:  # a watcher's feed, read while the hosts write
            finished = not any(t.is_alive() for t in threads)
            rows = watcher.matches_since("t", seq, limit=7)
            seen += [row.match_id for row in rows]
            seq = rows[-1].seq if rows else seq
            if finished and not rows:
                break
        assert errors == []
        assert sorted(seen) == [spec(i).match_id for i in range(n)]  # none skipped or twice
    finally:
        watcher.close()
        for s in stores:
            s.close()


def test_many_hosts_opening_a_new_database_at_once_make_one_schema(url: str) -> None:
    opened: list[Any] = []
    errors: list[BaseException] = []

    def host() -> None:
        try:
            opened.append(open_store(url))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=host) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    try:
        assert errors == [] and len(opened) == 4
        opened[0].register_bot("Alpha", "h1")
        assert opened[3].bot_for_token_hash("h1") == "Alpha"
    finally:
        for s in opened:
            s.close()


# ------------------------------------------------------------------------- refusals, secrets


def test_a_password_never_shows_in_the_label_or_a_message(url: str) -> None:
    from arena.store.postgres import redact

    secret = "s3cr3t-Pw"
    parts = urlsplit(url)
    with_pw = urlunsplit(parts._replace(netloc=f"{parts.username}:{secret}@{parts.hostname}:"
                                        f"{parts.port or 5432}"))
    store = open_store(with_pw)  # trust auth takes any password
    try:
        assert secret not in store.label and store.label.startswith("postgresql://")
        with pytest.raises(StoreError) as refused:
            store.scope_config("nope")
        assert secret not in str(refused.value)
        store.open_scope("t", "tournament", "t", "{}")
        with pytest.raises(StoreError) as failed:
            store.record("t", spec(0), result_for(spec(0)),
                         lambda stored: {"a": Rating(None, 1.0, 1)})  # type: ignore[arg-type]
        assert secret not in str(failed.value) and "could not record match" in str(failed.value)
    finally:
        store.close()
    unreachable = f"postgresql://someone:{secret}@127.0.0.1:1/test?password={secret}"
    with pytest.raises(StoreError) as out_of_reach:
        open_store(unreachable)
    assert secret not in str(out_of_reach.value)
    assert sorted(redact(f"host=db user=u password={secret} dbname=x").split()) == \
        ["dbname=x", "host=db", "user=u"]
    assert secret not in redact(unreachable)


def test_an_unreachable_server_is_one_line_naming_the_host() -> None:
    # no server needed: nothing listens on port 1
    with pytest.raises(StoreBusy) as e:
        open_store("postgresql://postgres@127.0.0.1:1/test")
    message = str(e.value)
    assert "\n" not in message and "127.0.0.1" in message and "port 1" in message
    assert message.startswith("postgresql://postgres@127.0.0.1:1/test: ")


def test_a_missing_database_is_refused_not_busy(url: str) -> None:
    missing = urlsplit(url)._replace(path="/no_such_db_for_arena", query="")
    with pytest.raises(StoreError) as e:
        open_store(urlunsplit(missing))
    assert not isinstance(e.value, StoreBusy) and "does not exist" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_newer_or_foreign_schema_is_refused(url: str) -> None:
    open_store(url).close()
    schema = url.rsplit("%3D", 1)[1]
    with admin() as conn:
        conn.execute(f"UPDATE {schema}.meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 99 is newer than this arena's"):
        open_store(url)
    with admin() as conn:
        conn.execute(f"DROP TABLE {schema}.meta")
    with pytest.raises(StoreError, match="not a usable arena database"):
        open_store(url)


def test_a_claim_over_several_scopes_takes_the_earliest_scheduled_first(url: str) -> None:
    store = open_store(url)
    try:
        for scope in ("t", "u", "v"):
            store.open_scope(scope, "tournament", scope, "{}")
        store.enqueue("u", [spec(0)])
        store.enqueue("t", [spec(1)])
        store.enqueue("v", [spec(2)])
        store.stop_scope("v", "done")
        got = store.claim("w", lease_s=30, scopes=["t", "u", "v"], limit=5)
        assert [(c.scope, c.spec.match_id) for c in got] == [("u", "m0000"), ("t", "m0001")]
        assert store.claim("w", lease_s=30, scopes=["t", "u", "v"]) == []
        assert all(c.lease_until > time.time() + 20 for c in got)  # the server's clock
    finally:
        store.close()
