"""Test-wide settings.

Hypothesis runs derandomized by default, so a test run (and CI) is reproducible: the same
code gives the same examples. ``HYPOTHESIS_PROFILE=explore`` draws fresh examples each run,
for hunting new counterexamples locally (``pytest tests/rules --hypothesis-seed=N`` too).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
