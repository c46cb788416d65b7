"""Test-wide settings.

Hypothesis runs derandomized by default, so a test run (and CI) is reproducible: the same
code gives the same examples. ``HYPOTHESIS_PROFILE=explore`` draws fresh examples each run,
for hunting new counterexamples locally (``pytest tests/rules --hypothesis-seed=N`` too).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a test's store is: a SQLite file, or a fresh schema of the test PostgreSQL
    (skipped with the reason where none answers, except under CI=true)."""
    from tests.store.conftest import drop_schema, postgres_or_skip

    if request.param == "sqlite":
        yield str(tmp_path / "store.sqlite")
        return
    url = postgres_or_skip()
    try:
        yield url
    finally:
        drop_schema(url)
