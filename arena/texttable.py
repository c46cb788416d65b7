"""Aligned text tables that stay readable at any terminal width and with any bot name.

One place lays out every table the command line prints (``arena play``, standings, the
pairwise matrix, the leaderboard), with rich doing the layout: widths in terminal cells (a
CJK name takes two cells a character, a combining accent none), alignment, and a cell
wider than ``max_cell`` (a 64-character bot name) folded onto continuation lines inside its
column instead of pushing every row wider. A table still wider than the terminal has its
columns split into blocks printed one under the other, each repeating the first ``keep``
columns (rank and bot) so every line still says whose numbers it holds. The header is
underlined with dashes, one run per column, so the output reads (and parses) as plain text.
"""

from __future__ import annotations

import io
import shutil
import textwrap
from collections.abc import Collection, Sequence

from rich import box
from rich.cells import cell_len, chop_cells
from rich.console import Console
from rich.table import Table

GAP = 2  # cells between two columns
DEFAULT_WIDTH = 120  # when neither COLUMNS nor a terminal says otherwise
_DASHES = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
"""No frame: only the rule under the header, in dashes, a space where columns meet."""


def terminal_width() -> int:
    """COLUMNS if set, else the terminal's width, else 120 (a pipe or a file)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes."""
    return cell_len(text)


def fold(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` cells, a combining mark kept with the
    character it marks."""
    return chop_cells(text, limit) or [""]


def _block(head: Sequence[str], rows: Sequence[Sequence[str]], cols: Sequence[int],
           left: Collection[int], widths: dict[int, int]) -> str:
    table = Table(box=_DASHES, show_edge=False, pad_edge=False, padding=(0, 1),
                  collapse_padding=True)
    for i in cols:
        table.add_column(head[i], justify="left" if i in left else "right", overflow="fold",
                         min_width=widths[i], max_width=widths[i])
    for row in rows:
        table.add_row(*(row[i] for i in cols))
    out = io.StringIO()
    total = sum(widths[i] for i in cols) + GAP * len(cols)
    Console(file=out, width=total + 1, color_system=None, force_terminal=False,
            highlight=False, emoji=False, markup=False).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def render(head: Sequence[str], rows: Sequence[Sequence[str]], *,
           left: Collection[int] = (), keep: int = 1, width: int | None = None,
           max_cell: int = 24) -> str:
    """``rows`` under ``head`` as aligned text no wider than ``width`` cells (the terminal's
    by default) where the columns allow: columns in ``left`` are left-aligned, the others
    right-aligned; the first ``keep`` columns are repeated in every block."""
    if any(len(r) != len(head) for r in rows):
        raise ValueError("every row needs one cell per column")
    limit = terminal_width() if width is None else width
    widths = {i: min(max(cells(r[i]) for r in [head, *rows]),
                     max(max_cell, max(cells(w) for w in head[i].split() or [""])))
              for i in range(len(head))}
    key = list(range(min(keep, len(head))))
    base = sum(widths[i] + GAP for i in key) - GAP
    blocks: list[list[int]] = []
    cur: list[int] = []
    used = base
    for i in range(len(key), len(head)):
        if cur and used + GAP + widths[i] > limit:
            blocks.append(cur)
            cur, used = [], base
        cur.append(i)
        used += GAP + widths[i]
    blocks.append(cur)
    return "\n\n".join(_block(head, rows, [*key, *block], left, widths) for block in blocks)


def wrap(text: str, width: int | None = None) -> str:
    """A note below a table, wrapped to the same width."""
    return textwrap.fill(text, terminal_width() if width is None else width,
                         break_on_hyphens=False)


__all__ = ["cells", "fold", "render", "terminal_width", "wrap"]
