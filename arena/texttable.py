"""Aligned text tables that stay readable at any terminal width and with any bot name.

One place lays out every table the command line prints (``arena play``, standings, the
pairwise matrix, the leaderboard). Widths are measured in terminal cells, not characters
(``wcwidth``: a CJK name takes two cells a character, a combining accent none), so names
from anywhere keep the columns aligned. A cell wider than ``max_cell`` (a 64-character bot
name) folds onto continuation lines inside its column instead of pushing every row wider,
and when the table is still wider than the terminal its columns are split into blocks
printed one under the other, each repeating the first ``keep`` columns (rank and bot) so
every line still says whose numbers it holds.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Collection, Sequence

from wcwidth import wcswidth, wcwidth

GAP = "  "
DEFAULT_WIDTH = 120  # when neither COLUMNS nor a terminal says otherwise


def terminal_width() -> int:
    """COLUMNS if set, else the terminal's width, else 120 (a pipe or a file)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes."""
    n = wcswidth(text)
    return n if n >= 0 else sum(max(wcwidth(c), 0) for c in text)


def fold(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` cells, a combining mark kept with the
    character it marks."""
    pieces: list[str] = []
    cur, used = "", 0
    for c in text:
        w = max(wcwidth(c), 0)
        if cur and used + w > limit:
            pieces.append(cur)
            cur, used = "", 0
        cur += c
        used += w
    return [*pieces, cur]


def _pad(text: str, width: int, left: bool) -> str:
    space = " " * (width - cells(text))
    return text + space if left else space + text


def _lines(row: Sequence[list[str]], cols: Sequence[int], widths: dict[int, int],
           left: Collection[int]) -> list[str]:
    height = max(len(row[i]) for i in cols)
    return [GAP.join(_pad(row[i][k] if k < len(row[i]) else "", widths[i], i in left)
                     for i in cols).rstrip() for k in range(height)]


def render(head: Sequence[str], rows: Sequence[Sequence[str]], *,
           left: Collection[int] = (), keep: int = 1, width: int | None = None,
           max_cell: int = 24) -> str:
    """``rows`` under ``head`` as aligned text no wider than ``width`` cells (the terminal's
    by default) where the columns allow: columns in ``left`` are left-aligned, the others
    right-aligned; the first ``keep`` columns are repeated in every block."""
    if any(len(r) != len(head) for r in rows):
        raise ValueError("every row needs one cell per column")
    limit = terminal_width() if width is None else width
    top, *body = [[fold(c, max_cell) if cells(c) > max_cell else [c] for c in r]
                  for r in [head, *rows]]
    widths = {i: max(cells(p) for r in [top, *body] for p in r[i]) for i in range(len(head))}
    key = list(range(min(keep, len(head))))
    base = sum(widths[i] for i in key) + len(GAP) * max(len(key) - 1, 0)
    blocks: list[list[int]] = []
    cur: list[int] = []
    used = base
    for i in range(len(key), len(head)):
        if cur and used + len(GAP) + widths[i] > limit:
            blocks.append(cur)
            cur, used = [], base
        cur.append(i)
        used += len(GAP) + widths[i]
    blocks.append(cur)
    out: list[str] = []
    for n, block in enumerate(blocks):
        cols = [*key, *block]
        if n:
            out.append("")
        out.extend(_lines(top, cols, widths, left))
        out.append(GAP.join("-" * widths[i] for i in cols))
        for r in body:
            out.extend(_lines(r, cols, widths, left))
    return "\n".join(out)


def wrap(text: str, width: int | None = None) -> str:
    """A note below a table, wrapped to the same width."""
    return textwrap.fill(text, terminal_width() if width is None else width,
                         break_on_hyphens=False)
