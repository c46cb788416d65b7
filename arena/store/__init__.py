"""Where results live: the ``Store`` protocol (``base``), on SQLite or PostgreSQL.

``open_store(target)`` opens the store a path (SQLite) or a ``postgresql://`` URL names.
"""

from __future__ import annotations

from pathlib import Path

from arena.store.base import Store, StoreError


def is_url(target: str | Path) -> bool:
    """True if ``target`` names a database server rather than a file."""
    return str(target).startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path, *, durable: bool = True) -> Store:
    """The store at ``target``: a PostgreSQL URL, else a SQLite file (made if new).
    ``StoreError`` (one line) if it cannot be opened."""
    if is_url(target):
        try:
            from arena.store.postgres import PostgresStore
        except ImportError as e:  # psycopg is an optional extra
            raise StoreError(f"a PostgreSQL store needs psycopg: pip install "
                             f"'gin-arena[postgres]' ({e})") from None
        return PostgresStore(str(target))
    from arena.store.sqlite import SqliteStore

    return SqliteStore(target, durable=durable)


__all__ = ["is_url", "open_store"]
