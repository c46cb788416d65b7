"""Ladder bots' names and tokens: register, revoke, rotate; only a token's hash is stored."""

from __future__ import annotations

import hashlib
import secrets

from arena.series.plan import NAME_RE
from arena.store.base import Store, StoreError

MIN_TOKEN = 16


class RegistrationError(ValueError):
    """A name or token that cannot be registered (one line)."""


def hash_token(token: str) -> str:
    """How a token is stored: its SHA-256 (tokens are long and random, so no salt is
    needed to make guessing useless; a lookup by hash stays a single index probe)."""
    return hashlib.sha256(token.encode()).hexdigest()


def register(store: Store, name: str, token: str | None = None) -> str:
    """Register ``name`` and return its token (made up if not given; shown only now).
    Names are unique whatever their case."""
    if not NAME_RE.match(name):
        raise RegistrationError(f"bot name {name!r}: use letters, digits and _.+- "
                                "(at most 64)")
    token = _token(token)
    try:
        store.register_bot(name, hash_token(token))
    except StoreError as e:
        raise RegistrationError(str(e)) from None
    return token


def _token(token: str | None) -> str:
    """The token given (long enough, else RegistrationError) or a new random one."""
    token = token if token is not None else secrets.token_hex(24)  # never starts with "-"
    if len(token) < MIN_TOKEN:
        raise RegistrationError(f"a token needs at least {MIN_TOKEN} characters")
    return token


def revoke(store: Store, name: str) -> None:
    """Revoke ``name``'s token: it connects no more (a running ladder notices within a
    second). ``RegistrationError`` if no such bot is registered."""
    try:
        store.set_token(name, None)
    except StoreError as e:
        raise RegistrationError(str(e)) from None


def rotate(store: Store, name: str, token: str | None = None) -> str:
    """Give ``name`` a new token (made up if not given) and return it; the old one stops
    working (a running ladder notices within a second)."""
    token = _token(token)
    try:
        store.set_token(name, hash_token(token))
    except StoreError as e:
        raise RegistrationError(str(e)) from None
    return token



__all__ = ["MIN_TOKEN", "RegistrationError", "hash_token", "register", "revoke", "rotate"]
