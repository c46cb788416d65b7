"""The store benchmark still runs and prints its figures (tiny settings; no timing judged)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(60)
def test_store_speed_prints_commits_and_claims_per_second() -> None:
    out = subprocess.run([sys.executable, "-m", "bench.store_speed", "--seconds", "0.2",
                          "--queue", "40"], cwd=ROOT, capture_output=True, text=True,
                         timeout=50, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SQLite      record, 1 connection" in out.stdout and "claims/s" in out.stdout
    assert "PostgreSQL  record, 4 connections, 4 scopes" in out.stdout \
        or "PostgreSQL not measured" in out.stdout
