"""Tables stay aligned and inside the terminal for any bot name: wide (CJK) and combining
characters, 64-character names, more columns than the terminal holds."""

from __future__ import annotations

import pytest

from arena.texttable import cells, fold, render

NAMES = ["Greedy", "強いボット", "Cafe\u0301-bot", "x" * 64, "α-β pruner"]
HEAD = ("#", "bot", "Elo [95% CI]", "LOS", "games", "W-D-L", "score [95% CI]", "pts/hand",
        "gin%", "undercut%", "timeouts", "illegal", "forfeits")


def _rows() -> list[tuple[str, ...]]:
    return [(str(i), name, "+12 [-30, +54]", "71.0%", "40", "21-0-19", "52.5% [37.5%, 67.1%]",
             "+0.42", "9.1%", "2.0%", "0", "0", "0") for i, name in enumerate(NAMES, 1)]


def _column_starts(line: str, texts: list[str]) -> list[int]:
    """The terminal cell at which each of ``texts`` starts in ``line`` (found in order)."""
    starts, pos = [], 0
    for t in texts:
        at = line.index(t, pos)
        starts.append(cells(line[:at]))
        pos = at + len(t)
    return starts


@pytest.mark.parametrize("width", [60, 80, 120, 400])
def test_no_line_is_wider_than_the_terminal_and_every_cell_is_shown(width: int) -> None:
    out = render(HEAD, _rows(), left={1}, keep=2, width=width)
    lines = out.splitlines()
    assert max(cells(line) for line in lines) <= width
    for head in HEAD:
        assert head in out
    # every block lists every bot, so the rank column shows up once per row per block
    blocks = out.split("\n\n")
    assert (len(blocks) == 1) == (width == 400)
    for block in blocks:
        assert [b.split()[0] for b in block.splitlines()[2:] if b[:1].strip()] == \
            ["1", "2", "3", "4", "5"]


def test_wide_and_combining_characters_keep_the_columns_aligned() -> None:
    out = render(HEAD[:6], [r[:6] for r in _rows()], left={1}, keep=2, width=400)
    lines = [line for line in out.splitlines()[2:] if "xxxx" not in line]
    starts = {tuple(_column_starts(line, ["+12", "71.0%", "21-0-19"])) for line in lines}
    assert len(starts) == 1, out


def test_a_long_name_folds_inside_its_column() -> None:
    out = render(HEAD[:3], [r[:3] for r in _rows()], left={1}, keep=2, width=400, max_cell=24)
    lines = out.splitlines()
    assert max(cells(line) for line in lines) <= 1 + 2 + 24 + 2 + len("+12 [-30, +54]")
    long = [line for line in lines if "xxx" in line]
    assert len(long) == 3 and sum(line.count("x") for line in long) == 64
    assert _column_starts(long[0], ["x"]) == _column_starts(long[2], ["x"])


def test_fold_keeps_a_combining_mark_with_its_letter_and_never_splits_a_wide_one() -> None:
    assert fold("Cafe\u0301" * 3, 4) == ["Cafe\u0301", "Cafe\u0301", "Cafe\u0301"]
    assert fold("強いボット", 3) == ["強", "い", "ボ", "ッ", "ト"]
    assert all(cells(p) <= 3 for p in fold("強いボット", 3))


def test_a_row_with_the_wrong_number_of_cells_is_refused() -> None:
    with pytest.raises(ValueError, match="one cell per column"):
        render(("a", "b"), [("1",)])
