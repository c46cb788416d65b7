"""The stores every store test runs against: SQLite always; PostgreSQL where one answers.

PostgreSQL is the one on 127.0.0.1:5432 (user postgres, database test), or
``ARENA_TEST_POSTGRES`` (a URL); each test gets a schema of its own, dropped after. Where
none answers the PostgreSQL cases are skipped with the reason, except under ``CI=true``,
where they fail: CI must run them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.store.base import Store
from arena.store.sqlite import SqliteStore

POSTGRES_URL = os.environ.get("ARENA_TEST_POSTGRES",
                              "postgresql://postgres@127.0.0.1:5432/test")

OpenStore = Callable[[], Store]
"""Opens (another connection to) the test's store."""


def postgres_or_skip() -> str:
    """A URL of a fresh schema on the test PostgreSQL (dropped by the caller), or skip."""
    try:
        import psycopg
    except ImportError as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"psycopg is not installed ({e})")
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3, autocommit=True) as conn:
            schema = f"t_{uuid.uuid4().hex[:12]}"
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no PostgreSQL at {POSTGRES_URL}: {str(e).strip()[:200]}")
    sep = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{sep}options=-csearch_path%3D{schema}"


def drop_schema(url: str) -> None:
    import psycopg

    schema = url.rsplit("%3D", 1)[1]
    with psycopg.connect(POSTGRES_URL, connect_timeout=3, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens the test's store (each call a new connection); every one is closed after."""
    opened: list[Store] = []
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite"

        def make() -> Store:
            store = SqliteStore(path)
            opened.append(store)
            return store

        yield make
    else:
        url = postgres_or_skip()
        from arena.store import open_store as open_url

        def make() -> Store:
            store = open_url(url)
            opened.append(store)
            return store

        try:
            yield make
        finally:
            for store in opened:
                store.close()
            drop_schema(url)
        return
    for store in opened:
        store.close()
